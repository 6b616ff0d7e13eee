//! Cycles across windows: window labels, migrants, and each component's
//! analysis where it lies.
//!
//! Every edge goes to the window of its source (with its steps) and, when it
//! crosses a cut, to the window of its target. Each window then computes,
//! for each of its ops `x`, two labels over the whole graph:
//!
//! * `p(x)`: the earliest window `x` reaches;
//! * `q(x)`: the latest window that reaches `x`.
//!
//! Inside a window both are one pass over the condensation of its own
//! graph (reverse topological order for `p`, topological for `q`), taking
//! the labels of cross-window neighbours as given; the windows then trade
//! the labels that changed across their cut edges, and repeat until no
//! label changes anywhere (a sum over all workers each round). Labels only
//! move one way and are window numbers, so this ends; history graphs point
//! backwards rarely and never far (`shared/spec/distributed.md`), so it
//! ends after a few rounds.
//!
//! Two ops of one strongly connected component reach each other, so they
//! have the same labels, and a component spanning windows `v < w` has
//! `p ≤ v < w ≤ q`. Hence an op whose labels are both its own window
//! ("home") lies in a component inside its window, made of home ops: the
//! window's own Tarjan finds it. Every other op ("migrant") goes, with its
//! out-edges, to the worker of window `p`, which finds the components among
//! the migrants of each `(p, q)` class: every component lies inside one
//! class. Each component is then analysed exactly as a single run does
//! ([`crate::cycles::analyse_scc`], global op ids, the same graph), so its
//! witnesses, explanations and search order are the single run's.

use super::bsp::Bsp;
use super::keys::{DataEdge, Explainer, Ranked};
use super::order::OrderEdge;
use super::window::Window;
use super::DistError;
use crate::anomaly::{rel, Case, Rels, Step, Workload};
use crate::cycles::scc::{self, Adjacency};
use crate::cycles::{self, CycleOptions, SccGraph};
use crate::graph::{Edge, Graph};
use crate::history::{OpId, NONE};
use rustc_hash::FxHashMap;

/// An edge of the whole graph (its data steps are asked of the key owners
/// only if it lies inside a component).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Full {
    /// Source (global).
    pub from: OpId,
    /// Target (global).
    pub to: OpId,
    /// Relationships.
    pub rels: Rels,
    /// `to`'s invocation, for a realtime step.
    pub inv: OpId,
}

impl Full {
    fn merge(&mut self, o: Full) {
        self.rels |= o.rels;
        if self.inv == NONE {
            self.inv = o.inv;
        }
    }
}

/// Per edge (global ends), its data steps (lowest rank kept).
type Steps = FxHashMap<(OpId, OpId), [Option<Ranked>; 3]>;

/// What a window holds of the graph.
pub struct Local {
    /// Out-edges of the window's ops, merged per target, sorted by source
    /// then target (compressed rows: [`Local::out`]).
    edges_by_source: Vec<Full>,
    /// Per local op, where its out-edges start in `edges_by_source` (one
    /// more entry than ops).
    starts: Vec<u32>,
    /// Cross-window in-edges: (global source, local target).
    pub ins: Vec<(OpId, u32)>,
    /// Edges in the whole graph (counted once, at their source).
    pub edges: usize,
}

impl Local {
    /// The out-edges of local op `v`, by target.
    pub fn out(&self, v: usize) -> &[Full] {
        &self.edges_by_source[self.starts[v] as usize..self.starts[v + 1] as usize]
    }

    /// Number of local ops.
    fn len(&self) -> usize {
        self.starts.len() - 1
    }
}

/// Edges routed per superstep of [`route`]: what is in flight at once (the
/// batches, their encoding, what arrives) is bounded by this, not by the
/// window's edges.
const ROUTE_EDGES: usize = 1 << 20;

/// Sends every edge to its source's window (and its target's, when it
/// crosses a cut) and merges what arrives. Edges go in supersteps of
/// [`ROUTE_EDGES`], taken from the ends of `data` and `order`, whose
/// buffers shrink as they are sent.
pub fn route(
    bsp: &mut Bsp,
    win: &Window,
    mut data: Vec<DataEdge>,
    mut order: Vec<OrderEdge>,
) -> Result<Local, DistError> {
    let n = bsp.peers();
    let mine_steps = (data.len() + order.len()).div_ceil(ROUTE_EDGES) as u64;
    let steps = bsp.all_gather(&mine_steps)?.into_iter().max().unwrap_or(0);
    let mut mine: Vec<Full> = Vec::new();
    let mut ins = Vec::new();
    for _ in 0..steps {
        let mut out: Vec<Vec<Full>> = (0..n).map(|_| Vec::new()).collect();
        let mut push = |f: Full| {
            let (ws, wt) = (win.window_of(f.from), win.window_of(f.to));
            if ws != wt {
                out[wt].push(f);
            }
            out[ws].push(f);
        };
        let from_data = data.len().min(ROUTE_EDGES);
        for e in data.drain(data.len() - from_data..) {
            push(Full { from: e.from, to: e.to, rels: e.rels, inv: NONE });
        }
        let from_order = order.len().min(ROUTE_EDGES - from_data);
        for e in order.drain(order.len() - from_order..) {
            push(Full { from: e.from, to: e.to, rels: e.rels, inv: e.inv });
        }
        data.shrink_to_fit();
        order.shrink_to_fit();
        let got = bsp.exchange(out.into_iter().enumerate().filter(|(_, v)| !v.is_empty()).collect())?;
        for (_, batch) in got {
            for f in batch {
                if win.local(f.from).is_some() {
                    mine.push(f);
                } else if let Some(t) = win.local(f.to) {
                    ins.push((f.from, t));
                }
            }
        }
    }
    ins.sort_unstable();
    ins.dedup();
    // Parallel edges merged, as the single run's graph merges them.
    mine.sort_unstable_by_key(|f| (f.from, f.to));
    let mut merged: Vec<Full> = Vec::with_capacity(mine.len());
    for f in mine {
        match merged.last_mut() {
            Some(last) if (last.from, last.to) == (f.from, f.to) => last.merge(f),
            _ => merged.push(f),
        }
    }
    merged.shrink_to_fit();
    let n = win.h.ops.len();
    let mut starts = vec![0u32; n + 1];
    for f in &merged {
        if let Some(l) = win.local(f.from) {
            starts[l as usize + 1] += 1;
        }
    }
    for i in 0..n {
        starts[i + 1] += starts[i];
    }
    let edges = merged.len();
    Ok(Local { edges_by_source: merged, starts, ins, edges })
}

/// The window's own graph.
struct Own<'a> {
    win: &'a Window,
    local: &'a Local,
}

impl Adjacency for Own<'_> {
    fn len(&self) -> usize {
        self.local.len()
    }
    fn degree(&self, v: u32) -> usize {
        self.local.out(v as usize).len()
    }
    fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
        self.win.local(self.local.out(v as usize)[i].to)
    }
}

/// Labels and the condensation they were computed on.
pub struct Labels {
    /// Per local op: (p, q).
    pub pq: Vec<(u32, u32)>,
    /// Per local op: its rank in a topological order of the window's
    /// components (equal ranks: one component).
    pub rank: Vec<u32>,
    /// Rounds of label exchange.
    pub rounds: u64,
}

/// Computes every op's labels (see the module doc).
pub fn labels(bsp: &mut Bsp, win: &Window, local: &Local) -> Result<Labels, DistError> {
    let me = win.me as u32;
    let n = local.len();
    let rank = scc::topological_ranks(&Own { win, local });
    let comps = rank.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); comps];
    for (v, &r) in rank.iter().enumerate() {
        members[r as usize].push(v as u32);
    }
    // Local in-edges, for q.
    let mut local_in: Vec<Vec<u32>> = vec![Vec::new(); n];
    for v in 0..n {
        let outs = local.out(v);
        for f in outs {
            if let Some(t) = win.local(f.to) {
                local_in[t as usize].push(v as u32);
            }
        }
    }
    let mut cross_in: Vec<Vec<OpId>> = vec![Vec::new(); n];
    for &(s, t) in &local.ins {
        cross_in[t as usize].push(s);
    }
    // Labels of cross-window neighbours, as last heard.
    let mut remote_p: FxHashMap<OpId, u32> = FxHashMap::default();
    let mut remote_q: FxHashMap<OpId, u32> = FxHashMap::default();
    let mut sent_p: Vec<u32> = vec![u32::MAX; n];
    let mut sent_q: Vec<u32> = vec![u32::MAX; n];
    let (mut p, mut q) = (vec![me; n], vec![me; n]);
    let mut rounds = 0;
    loop {
        rounds += 1;
        let mut comp_p = vec![me; comps];
        for c in (0..comps).rev() {
            let mut best = me;
            for &v in &members[c] {
                for f in local.out(v as usize) {
                    let l = match win.local(f.to) {
                        Some(t) if rank[t as usize] as usize != c => comp_p[rank[t as usize] as usize],
                        Some(_) => me,
                        None => *remote_p.get(&f.to).unwrap_or(&(win.window_of(f.to) as u32)),
                    };
                    best = best.min(l);
                }
            }
            comp_p[c] = best;
        }
        let mut comp_q = vec![me; comps];
        for c in 0..comps {
            let mut best = me;
            for &v in &members[c] {
                for &s in &local_in[v as usize] {
                    if rank[s as usize] as usize != c {
                        best = best.max(comp_q[rank[s as usize] as usize]);
                    }
                }
                for s in &cross_in[v as usize] {
                    best = best.max(*remote_q.get(s).unwrap_or(&(win.window_of(*s) as u32)));
                }
            }
            comp_q[c] = best;
        }
        for v in 0..n {
            p[v] = comp_p[rank[v] as usize];
            q[v] = comp_q[rank[v] as usize];
        }
        // Trade what changed: p to the sources of cross in-edges, q to the
        // targets of cross out-edges.
        let mut out: FxHashMap<usize, Vec<(OpId, u8, u32)>> = FxHashMap::default();
        for v in 0..n {
            let g = win.gid(v as u32);
            if p[v] != sent_p[v] && !cross_in[v].is_empty() {
                sent_p[v] = p[v];
                let mut dests: Vec<usize> = cross_in[v].iter().map(|&s| win.window_of(s)).collect();
                dests.sort_unstable();
                dests.dedup();
                for d in dests {
                    out.entry(d).or_default().push((g, 0, p[v]));
                }
            }
            if q[v] != sent_q[v] {
                let mut dests: Vec<usize> =
                    local.out(v).iter().filter(|f| win.local(f.to).is_none()).map(|f| win.window_of(f.to)).collect();
                if dests.is_empty() {
                    continue;
                }
                sent_q[v] = q[v];
                dests.sort_unstable();
                dests.dedup();
                for d in dests {
                    out.entry(d).or_default().push((g, 1, q[v]));
                }
            }
        }
        let mut out: Vec<(usize, Vec<(OpId, u8, u32)>)> = out.into_iter().collect();
        out.sort_unstable_by_key(|o| o.0);
        let got = bsp.exchange(out)?;
        let mut changed = 0u64;
        for (_, updates) in got {
            for (g, which, label) in updates {
                let map = if which == 0 { &mut remote_p } else { &mut remote_q };
                if map.insert(g, label) != Some(label) {
                    changed += 1;
                }
            }
        }
        if bsp.sum(changed)? == 0 {
            break;
        }
    }
    Ok(Labels { pq: p.into_iter().zip(q).collect(), rank, rounds })
}

/// A migrant on its way to the worker of its class.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Migrant {
    gid: OpId,
    index: i64,
    process: i64,
    class: (u32, u32),
    out: Vec<Full>,
}

/// One op of a component to analyse.
struct Vertex<'a> {
    gid: OpId,
    index: i64,
    process: i64,
    out: &'a [Full],
}

/// What the component analyses found.
pub struct Cycles {
    /// Anomalies (global ids).
    pub anomalies: Vec<(String, Case)>,
    /// Ops that migrated to this worker.
    pub migrants: usize,
    /// Components analysed here.
    pub components: usize,
}

/// Analyses the window's home components and the migrant classes sent
/// here.
pub fn cycles(
    bsp: &mut Bsp,
    win: &Window,
    local: &Local,
    labels: &Labels,
    explainer: Option<&Explainer>,
    workload: Workload,
    opts: CycleOptions,
) -> Result<Cycles, DistError> {
    let me = win.me as u32;
    let mut out: FxHashMap<usize, Vec<Migrant>> = FxHashMap::default();
    let mut home: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for (v, &(p, q)) in labels.pq.iter().enumerate() {
        if p == me && q == me {
            home.entry(labels.rank[v]).or_default().push(v as u32);
        } else {
            let op = &win.h.ops[v];
            out.entry(p as usize).or_default().push(Migrant {
                gid: win.gid(v as u32),
                index: op.index,
                process: op.process,
                class: (p, q),
                out: local.out(v).to_vec(),
            });
        }
    }
    let mut out: Vec<(usize, Vec<Migrant>)> = out.into_iter().collect();
    out.sort_unstable_by_key(|o| o.0);
    let arrived: Vec<Migrant> = bsp.exchange(out)?.into_iter().flat_map(|(_, m)| m).collect();
    // Every component, as its ops.
    let mut comps: Vec<Vec<Vertex>> = Vec::new();
    let mut homes: Vec<Vec<u32>> = home.into_values().filter(|c| c.len() > 1).collect();
    homes.sort_unstable();
    for comp in homes {
        comps.push(
            comp.iter()
                .map(|&v| {
                    let op = &win.h.ops[v as usize];
                    Vertex { gid: win.gid(v), index: op.index, process: op.process, out: local.out(v as usize) }
                })
                .collect(),
        );
    }
    let migrants = arrived.len();
    let mut classes: FxHashMap<(u32, u32), Vec<&Migrant>> = FxHashMap::default();
    for m in &arrived {
        classes.entry(m.class).or_default().push(m);
    }
    let mut classes: Vec<((u32, u32), Vec<&Migrant>)> = classes.into_iter().collect();
    classes.sort_unstable_by_key(|c| c.0);
    for (_, mut ms) in classes {
        ms.sort_unstable_by_key(|m| m.gid);
        for comp in components_of(&ms) {
            comps.push(
                comp.iter()
                    .map(|&i| {
                        let m = ms[i as usize];
                        Vertex { gid: m.gid, index: m.index, process: m.process, out: &m.out }
                    })
                    .collect(),
            );
        }
    }
    let steps = ask_steps(bsp, &comps, explainer)?;
    let mut found = Vec::new();
    let components = comps.len();
    for vs in comps {
        found.extend(analyse(vs, &steps, workload, opts));
    }
    Ok(Cycles { anomalies: found, migrants, components })
}

/// The data steps of every edge inside a component, asked of every key
/// owner (each explains the edges its keys made; the lowest rank wins, as
/// in a single run's explainer): one superstep out, one back.
fn ask_steps(bsp: &mut Bsp, comps: &[Vec<Vertex>], explainer: Option<&Explainer>) -> Result<Steps, DistError> {
    let mut asked: Vec<(OpId, OpId, Rels)> = Vec::new();
    for vs in comps {
        let members: rustc_hash::FxHashSet<OpId> = vs.iter().map(|v| v.gid).collect();
        for v in vs {
            for f in v.out {
                if f.rels & rel::DATA != 0 && members.contains(&f.to) {
                    asked.push((f.from, f.to, f.rels & rel::DATA));
                }
            }
        }
    }
    let out = (0..bsp.peers()).map(|d| (d, asked.clone())).collect();
    let requests: Vec<(usize, Vec<(OpId, OpId, Rels)>)> = bsp.exchange(out)?;
    let answers: Vec<(usize, Vec<(u32, [Option<Ranked>; 3])>)> = requests
        .into_iter()
        .map(|(src, reqs)| {
            let mine = reqs
                .iter()
                .enumerate()
                .filter_map(|(i, &(a, b, r))| {
                    let s = explainer?.steps(a, b, r);
                    s.iter().any(Option::is_some).then_some((i as u32, s))
                })
                .collect();
            (src, mine)
        })
        .collect();
    let mut steps = Steps::default();
    for (_, answer) in bsp.exchange(answers)? {
        for (i, got) in answer {
            let Some(&(a, b, _)) = asked.get(i as usize) else { continue };
            let mine = steps.entry((a, b)).or_insert([None, None, None]);
            for (m, t) in mine.iter_mut().zip(got) {
                if let Some(t) = t {
                    if m.as_ref().is_none_or(|x| t.rank < x.rank) {
                        *m = Some(t);
                    }
                }
            }
        }
    }
    Ok(steps)
}

/// The strongly connected components (≥ 2 ops) among a class's migrants
/// (sorted by id), as lists of positions.
fn components_of(ms: &[&Migrant]) -> Vec<Vec<u32>> {
    struct Class<'a> {
        ms: &'a [&'a Migrant],
        pos: FxHashMap<OpId, u32>,
    }
    impl Adjacency for Class<'_> {
        fn len(&self) -> usize {
            self.ms.len()
        }
        fn degree(&self, v: u32) -> usize {
            self.ms[v as usize].out.len()
        }
        fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
            self.pos.get(&self.ms[v as usize].out[i].to).copied()
        }
    }
    let pos = ms.iter().enumerate().map(|(i, m)| (m.gid, i as u32)).collect();
    scc::tarjan(&Class { ms, pos }, |_| true).comps
}

/// Analyses one component as a single run does.
fn analyse(mut vs: Vec<Vertex>, steps: &Steps, workload: Workload, opts: CycleOptions) -> Vec<(String, Case)> {
    vs.sort_unstable_by_key(|v| v.gid);
    let pos: FxHashMap<OpId, u32> = vs.iter().enumerate().map(|(i, v)| (v.gid, i as u32)).collect();
    let mut edges = Vec::new();
    let mut full: FxHashMap<(OpId, OpId), &Full> = FxHashMap::default();
    for (i, v) in vs.iter().enumerate() {
        for f in v.out {
            if let Some(&t) = pos.get(&f.to) {
                edges.push(Edge { from: i as u32, to: t, rels: f.rels });
                full.insert((f.from, f.to), f);
            }
        }
    }
    let graph = Graph::from_edges(vs.len(), &edges);
    let etype = (0..graph.edge_count()).map(|e| cycles::explained_type(workload, graph.rel(e))).collect();
    let process: FxHashMap<OpId, i64> = vs.iter().map(|v| (v.gid, v.process)).collect();
    let g = SccGraph {
        vertices: vs.iter().map(|v| v.gid).collect(),
        indices: vs.iter().map(|v| v.index).collect(),
        graph,
        etype,
    };
    let data_order: [u8; 3] = match workload {
        Workload::ListAppend => [rel::WW, rel::WR, rel::RW],
        Workload::RwRegister => [rel::WR, rel::WW, rel::RW],
        Workload::ClosedPredicate => [rel::WW, rel::WR, rel::RW],
    };
    let explain = |a: OpId, b: OpId, rels: Rels| -> Option<Step> {
        let f = full.get(&(a, b))?;
        if let Some(data) = steps.get(&(a, b)) {
            for r in data_order {
                if rels & r != 0 {
                    if let Some(s) = &data[super::keys::slot(r)] {
                        return Some(s.step.clone());
                    }
                }
            }
        }
        if rels & rel::REALTIME != 0 {
            return Some(Step::Realtime { a_completion: a, b_invocation: if f.inv == NONE { b } else { f.inv } });
        }
        if rels & rel::PROCESS != 0 {
            return Some(Step::Process { process: *process.get(&a)? });
        }
        None
    };
    cycles::analyse_scc(&g, &explain, opts)
}
