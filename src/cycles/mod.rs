//! Cycle anomalies: SCCs, existence proofs, typed witnesses, and the lattice.
//!
//! [`find_cycles`] is the entry point. It splits the dependency graph into
//! strongly connected components (only they can hold cycles) and analyses each
//! independently and in parallel, as Elle does:
//!
//! 1. [`exists`]: which models' forbidden subgraphs contain a cycle (linear);
//!    the models that survive rule out whole families of cycle types;
//! 2. [`search`]: for every remaining cycle type, in Elle's order from the most
//!    to the least severe, the witness Elle would report (a shortest loop
//!    through the first start vertex in Elle's iteration order,
//!    [`elle_order`]); types implied by one already found are skipped;
//! 3. each witness is explained edge by edge and named by [`classify`]; a
//!    witness whose name differs from the type searched is dropped.
//!
//! A per-SCC deadline bounds step 2; when it passes, the SCC reports
//! `:cycle-search-timeout` with a fallback cycle, and the verdict can only be
//! `unknown` or invalid, never valid.

pub mod classify;
pub mod elle_order;
pub mod exists;
pub mod lattice;
pub mod scc;
pub mod search;

use crate::anomaly::{rel, Anomalies, Case, Cycle, Rels, Step, Workload};
use crate::graph::Graph;
use crate::history::{History, OpId, NONE};
use rayon::prelude::*;
use scc::{tarjan, Adjacency};
use search::{etype, CycleType, Found, Scratch};
use std::time::{Duration, Instant};

/// One SCC of the dependency graph, renumbered `0..n`, with each edge's
/// explained type (the relationship the explainer will cite for it).
pub struct SccGraph {
    /// Local vertex -> op.
    pub vertices: Vec<OpId>,
    /// Local vertex -> the op's `:index`, which orders Elle's iteration.
    pub indices: Vec<i64>,
    /// The induced subgraph on local ids, raw relationship bits on edges.
    pub graph: Graph,
    /// Explained type ([`etype`]) per edge position of `graph`.
    pub etype: Vec<u8>,
}

impl SccGraph {
    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.vertices.len()
    }

    /// True if the SCC has no vertices.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
    }
}

/// The order in which a workload's explainer tries relationships; the first
/// one present on an edge is the one a cycle explanation cites.
pub fn precedence(w: Workload) -> [Rels; 8] {
    const P: Rels = rel::WWP;
    match w {
        Workload::ListAppend => [rel::WW, rel::WR, rel::RW, rel::REALTIME, rel::PROCESS, P, P, P],
        Workload::RwRegister => [rel::WR, rel::WW, rel::RW, rel::REALTIME, rel::PROCESS, P, P, P],
        // Elle's closed-predicate explainers: ww, wr (item, then predicate),
        // rw (item, then predicate), then the order graphs.
        Workload::ClosedPredicate => {
            [rel::WW, rel::WWP, rel::WR, rel::WRP, rel::RW, rel::RWP, rel::REALTIME, rel::PROCESS]
        }
    }
}

/// The step type an explanation cites for an edge with these relationships
/// (the first of [`precedence`] present).
pub fn explained_type(w: Workload, rels: Rels) -> u8 {
    for r in precedence(w) {
        if rels & r != 0 {
            return match r {
                rel::WW => etype::WW,
                rel::WR => etype::WR,
                rel::RW => etype::RW,
                rel::WWP => etype::WWP,
                rel::WRP => etype::WRP,
                rel::RWP => etype::RWP,
                rel::PROCESS => etype::PROCESS,
                _ => etype::REALTIME,
            };
        }
    }
    etype::REALTIME
}

struct Whole<'a>(&'a Graph);

impl Adjacency for Whole<'_> {
    fn len(&self) -> usize {
        self.0.vertex_count()
    }
    fn degree(&self, v: u32) -> usize {
        self.0.edge_range(v).len()
    }
    fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
        Some(self.0.target(self.0.edge_range(v).start + i))
    }
}

/// Each vertex's rank in a topological order of the graph's strongly
/// connected components ([`scc::topological_ranks`]).
pub fn topological_ranks(graph: &Graph) -> Vec<u32> {
    scc::topological_ranks(&Whole(graph))
}

/// Options for the cycle stage.
#[derive(Clone, Copy, Debug)]
pub struct CycleOptions {
    /// Wall-clock budget for the typed search of one SCC.
    pub timeout: Duration,
}

/// Finds every cycle anomaly of the graph. `explain` justifies one edge.
/// Also returns the strongly connected components (each sorted by op id).
pub fn find_cycles<E>(
    h: &History,
    graph: &Graph,
    workload: Workload,
    explain: E,
    opts: CycleOptions,
) -> (Anomalies, Vec<Vec<OpId>>)
where
    E: Fn(OpId, OpId, Rels) -> Option<Step> + Sync,
{
    let whole = Whole(graph);
    let mut comps = tarjan(&whole, |v| !graph.edge_range(v).is_empty());
    // Local ids follow op positions, so witnesses read in history order.
    let mut local = vec![NONE; graph.vertex_count()];
    for c in comps.comps.iter_mut() {
        c.sort_unstable();
        for (i, &v) in c.iter().enumerate() {
            local[v as usize] = i as u32;
        }
    }
    let (comp_of, local) = (&comps.comp_of, &local);
    let results: Vec<Vec<(String, Case)>> = comps
        .comps
        .par_iter()
        .enumerate()
        .map(|(ci, vertices)| {
            let sub = induce(graph, vertices, |t| (comp_of[t as usize] == ci as u32).then(|| local[t as usize]));
            let etype = (0..sub.edge_count()).map(|e| explained_type(workload, sub.rel(e))).collect();
            let indices = vertices.iter().map(|&v| h.op(v).index).collect();
            let g = SccGraph { vertices: vertices.clone(), indices, graph: sub, etype };
            analyse_scc(&g, &explain, opts)
        })
        .collect();
    let mut out = Anomalies::new();
    for r in results {
        for (name, case) in r {
            crate::anomaly::add(&mut out, &name, case);
        }
    }
    (out, comps.comps)
}

fn induce(graph: &Graph, vertices: &[OpId], local: impl Fn(u32) -> Option<u32>) -> Graph {
    let mut edges = Vec::new();
    for (i, &v) in vertices.iter().enumerate() {
        let (ts, rs) = graph.out(v);
        for (&t, &r) in ts.iter().zip(rs) {
            if let Some(lt) = local(t) {
                edges.push(crate::graph::Edge { from: i as u32, to: lt, rels: r });
            }
        }
    }
    Graph::from_edges(vertices.len(), &edges)
}

/// Explains a local cycle and names it.
fn explain_cycle<E>(g: &SccGraph, local_cycle: &[u32], explain: &E) -> Option<Cycle>
where
    E: Fn(OpId, OpId, Rels) -> Option<Step>,
{
    let ops: Vec<OpId> = local_cycle.iter().map(|&v| g.vertices[v as usize]).collect();
    let n = ops.len();
    let mut steps = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (local_cycle[i], local_cycle[(i + 1) % n]);
        let e = g.graph.find_edge(a, b)?;
        steps.push(explain(ops[i], ops[(i + 1) % n], g.graph.rel(e))?);
    }
    let rels: Vec<Rels> = steps.iter().map(Step::rel).collect();
    let anomaly = classify::classify(&rels)?;
    Some(Cycle { ops, steps, anomaly })
}

/// Every cycle anomaly of one strongly connected component, as Elle finds
/// them (see the module doc); `explain` justifies one edge. A distributed
/// run (`crate::dist`) calls it on each component wherever it was found.
pub fn analyse_scc<E>(g: &SccGraph, explain: &E, opts: CycleOptions) -> Vec<(String, Case)>
where
    E: Fn(OpId, OpId, Rels) -> Option<Step>,
{
    let exists_cases = exists::cycle_exists_cases(g);
    // Models whose subgraph is acyclic hold; cycle types they forbid cannot exist.
    let violated: Vec<&str> = exists_cases
        .iter()
        .filter_map(|(_, c)| match c {
            Case::CycleExists { not, .. } => Some(not.as_str()),
            _ => None,
        })
        .collect();
    let impossible_models = lattice::all_impossible_models(&violated);
    let possible: Vec<&str> =
        exists::EXISTS_SPECS.iter().map(|s| s.model).filter(|m| !impossible_models.contains(m)).collect();
    let mut redundant = lattice::anomalies_prohibited_by(&possible);

    // A timeout too long for the clock to represent saturates (~136 years).
    let now = Instant::now();
    let deadline = now
        .checked_add(opts.timeout)
        .or_else(|| now.checked_add(std::time::Duration::from_secs(u64::from(u32::MAX))))
        .unwrap_or(now);
    let mut scratch = Scratch::new(g.len());
    let mut searched: Vec<String> = Vec::new();
    let mut found: Vec<Cycle> = Vec::new();
    let mut timed_out: Option<String> = None;
    for &name in lattice::CYCLE_SEARCH_ORDER {
        if redundant.contains(name) {
            continue;
        }
        let Some(ty) = CycleType::parse(name) else {
            continue;
        };
        searched.push(name.to_string());
        match search::search(g, ty, deadline, &mut scratch) {
            Found::Cycle(c) => {
                if let Some(cycle) = explain_cycle(g, &c, explain) {
                    if cycle.anomaly == name {
                        redundant.extend(lattice::all_implied_anomalies(&[name]));
                        found.push(cycle);
                    }
                }
            }
            Found::None => {}
            Found::Timeout => {
                timed_out = Some(name.to_string());
                break;
            }
        }
    }

    let mut out: Vec<(String, Case)> = Vec::new();
    if let Some(spec_type) = timed_out {
        let found_types: Vec<&str> = found.iter().map(|c| c.anomaly.as_str()).collect();
        let does_not_contain =
            searched[..searched.len() - 1].iter().filter(|t| !found_types.contains(&t.as_str())).cloned().collect();
        out.push((
            "cycle-search-timeout".into(),
            Case::CycleSearchTimeout { spec_type, does_not_contain, scc_size: g.len() },
        ));
        if let Some(c) = explain_cycle(g, &search::any_cycle(g), explain) {
            out.push((c.anomaly.clone(), Case::Cycle(c)));
        }
        out.extend(exists_cases);
    } else {
        // Drop existence proofs made redundant by a concrete cycle.
        let types: Vec<&str> = found.iter().map(|c| c.anomaly.as_str()).collect();
        let ruled_out = lattice::anomalies_to_impossible_models(&types);
        out.extend(exists_cases.into_iter().filter(|(name, _)| {
            let model = name.trim_end_matches("-cycle-exists");
            !ruled_out.contains(model)
        }));
    }
    for c in found {
        out.push((c.anomaly.clone(), Case::Cycle(c)));
    }
    out
}
