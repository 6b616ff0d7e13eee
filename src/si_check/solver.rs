//! SAT modulo acyclicity: a small CDCL solver whose only theory is "the
//! graph of chosen edges is acyclic".
//!
//! Each variable is one polygraph constraint; its two literals each switch on
//! a set of edges (one side of the constraint). Input clauses are few: reads
//! with several candidate writers add "at least one candidate" and "this
//! order and this candidate imply that edge" ([`Instance::clauses`]); every
//! other clause is learned from a cycle. The theory keeps the graph of the
//! edges of assigned literals (plus the known edges) with a topological order
//! maintained by the Pearce–Kelly algorithm, as MonoSAT's cycle detector and
//! VeriStrong do: adding `a → b` with `ord[a] < ord[b]` is free; otherwise
//! a breadth-first search from `b` bounded by `ord[a]` either reaches `a` —
//! a cycle, whose shortest form becomes the conflict clause "not all of these
//! literals" — or the affected region is reordered. Backtracking just removes
//! edges (the order stays valid).
//!
//! A read's candidate writers form a group ([`Instance::groups`]): they are
//! decided first, and deciding one takes the candidate whose edges agree
//! with the current order (the latest such writer), the others false.
//!
//! Decisions follow VSIDS activity; a decided variable takes the side whose
//! edges agree best with the current topological order (VeriStrong's
//! order-guided polarity), so a consistent history is typically solved with
//! no conflict at all. Conflict analysis is first-UIP with non-chronological
//! backjumping; restarts follow the Luby sequence.
//!
//! Backjumps longer than [`CHRONO_THRESHOLD`] levels are chronological
//! instead (Nadel & Ryvchin, SAT 2018): the solver goes back one level and
//! asserts the learnt literal at its own, lower, level. On histories with
//! hundreds of thousands of constraints a conflict is usually local, yet
//! its first-UIP backjump undid tens of thousands of unrelated decisions,
//! each re-decided afterwards with its edges re-inserted into the order
//! (BL-10k: 3000 decisions per conflict). Levels then no longer grow along
//! the trail, so: a literal's level is the highest level of its reason's
//! other literals; a backtrack to level `l` keeps the later literals of
//! levels `<= l` (their edges leave the adjacency stacks with the rest and
//! are pushed back in trail order, the topological order staying valid for
//! this subset); a conflict below the current level first backtracks to
//! its level; analysis walks the trail for literals of the conflict level
//! only. A literal whose own edges close the cycle takes the current level,
//! so no backtrack keeps it with half of its edges inserted, and learnt
//! units are their own reasons (they may conflict with literals of higher
//! levels still on the trail).

use std::time::Instant;

use super::closure::{self, Closure};

const NONE: u32 = u32::MAX;

/// The reason of a literal implied by the theory, until [`Solver::explain`]
/// computes its clause.
const THEORY: u32 = u32::MAX - 1;

/// Contracts chains for the closure: a known edge `u → v` where `u` has no
/// other edge out and `v` no other edge in (known or of any literal) merges
/// the two, since every path through one passes through the other. Under
/// serializability a transaction's begin and commit nodes are such a pair,
/// which halves the closure's side. Fills `rep` (node → closure node) and
/// returns the number of closure nodes.
fn contract(inst: &Instance, rep: &mut Vec<u32>) -> usize {
    let n = inst.nodes;
    let mut outd = vec![0u32; n];
    let mut ind = vec![0u32; n];
    for &(a, b) in inst.known.iter().chain(&inst.side_edges) {
        outd[a as usize] += 1;
        ind[b as usize] += 1;
    }
    // Union-find over the mergeable edges.
    let mut parent: Vec<u32> = (0..n as u32).collect();
    let find = super::uf_find;
    for &(a, b) in &inst.known {
        if a != b && outd[a as usize] == 1 && ind[b as usize] == 1 {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            if ra != rb {
                parent[rb as usize] = ra;
            }
        }
    }
    let mut id = vec![u32::MAX; n];
    let mut classes = 0u32;
    rep.clear();
    for x in 0..n as u32 {
        let r = find(&mut parent, x) as usize;
        if id[r] == u32::MAX {
            id[r] = classes;
            classes += 1;
        }
        rep.push(id[r]);
    }
    classes as usize
}

/// Queues the negation of every literal passing `open` with the edge
/// `x → y` (`cand_in` lists them per `y`).
fn implied_by(
    cand_in: &[Vec<(u32, u32)>],
    implied: &mut Vec<(u32, u32, u32)>,
    x: u32,
    y: u32,
    open: impl Fn(u32) -> bool,
) {
    let list = &cand_in[y as usize];
    let start = list.partition_point(|&(s, _)| s < x);
    for &(s, l) in &list[start..] {
        if s != x {
            break;
        }
        if open(l) {
            implied.push((l ^ 1, x, y));
        }
    }
}

/// Conflicts per Luby unit between restarts. A restart re-decides every
/// variable (cheap here: order-guided phases add mostly forward edges, but
/// instances have up to millions of variables), so restarts are rare.
const RESTART_BASE: u64 = 512;

/// Backjumps longer than this many levels backtrack chronologically (one
/// level) instead (Nadel & Ryvchin, SAT 2018).
const CHRONO_THRESHOLD: u32 = 100;

/// One solver instance: a graph with known edges and binary choices.
#[derive(Clone, Debug, Default)]
pub struct Instance {
    /// Number of graph nodes.
    pub nodes: usize,
    /// Edges that are always present.
    pub known: Vec<(u32, u32)>,
    /// Edges of each literal: literal `2v` (variable `v` true) switches on
    /// `side_edges[side_start[2v]..side_start[2v+1]]`, literal `2v+1` the next
    /// range.
    pub side_edges: Vec<(u32, u32)>,
    /// Offsets into `side_edges`, `2 * vars + 1` of them.
    pub side_start: Vec<u32>,
    /// A topological position per node, consistent with the known edges
    /// (a permutation of `0..nodes`), used as the first order and to guide
    /// phases.
    pub order: Vec<u32>,
    /// Input clauses, as literals (`2v`: variable `v` true, `2v + 1`: false).
    pub clauses: Vec<Vec<u32>>,
    /// Variables whose first phase is false when both sides agree equally
    /// with the order (a read's candidates: the clause "at least one" sets
    /// the last one, so reads take as few edges as they need).
    pub false_first: Vec<u32>,
    /// Groups of variables of which at least one must be true and one is
    /// enough (a read's candidate writers, `start..end`): deciding one
    /// picks, among the unassigned ones, the candidate whose edges agree
    /// with the current order, latest writer first; once one is true the
    /// others are decided false.
    pub groups: Vec<(u32, u32)>,
}

impl Instance {
    /// Number of variables.
    pub fn vars(&self) -> usize {
        self.side_start.len().saturating_sub(1) / 2
    }

    fn edges(&self, lit: u32) -> &[(u32, u32)] {
        &self.side_edges[self.side_start[lit as usize] as usize..self.side_start[lit as usize + 1] as usize]
    }
}

/// The solver's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// An assignment (true = the first side) keeping the graph acyclic.
    Sat(Vec<bool>),
    /// No assignment does.
    Unsat,
    /// The deadline passed first.
    Timeout,
}

/// Counters, for `--stats`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SolveStats {
    /// Decisions made.
    pub decisions: u64,
    /// Conflicts found.
    pub conflicts: u64,
    /// Assignments undone by backjumps and restarts (each one re-decided or
    /// re-propagated later costs its edge insertions again).
    pub undone: u64,
    /// Decision levels skipped by backjumps, summed.
    pub jumped: u64,
    /// Restarts.
    pub restarts: u64,
    /// Literals in learnt clauses, summed.
    pub learnt_lits: u64,
    /// Conflicts found by the theory (a cycle) rather than a clause.
    pub theory_conflicts: u64,
    /// Phases refuted at decision time (their edges would close a cycle).
    pub refuted_phases: u64,
    /// Literals implied by the theory (a side whose edge would close a
    /// cycle is false).
    pub theory_props: u64,
}

impl SolveStats {
    /// Adds `o`'s counters to these.
    pub fn add(&mut self, o: &SolveStats) {
        self.decisions += o.decisions;
        self.conflicts += o.conflicts;
        self.undone += o.undone;
        self.jumped += o.jumped;
        self.restarts += o.restarts;
        self.learnt_lits += o.learnt_lits;
        self.theory_conflicts += o.theory_conflicts;
        self.refuted_phases += o.refuted_phases;
        self.theory_props += o.theory_props;
    }
}

/// Decides the instance, giving up at `deadline`.
pub fn solve(inst: &Instance, deadline: Option<Instant>) -> (Answer, SolveStats) {
    solve_with(inst, deadline, CHRONO_THRESHOLD, true)
}

/// [`solve`], adding its decisions to `progress` as it goes (every 1024).
pub fn solve_observed(
    inst: &Instance,
    deadline: Option<Instant>,
    progress: Option<&'static super::ExactProgress>,
) -> (Answer, SolveStats) {
    let mut s = Solver::new(inst, true);
    s.chrono = CHRONO_THRESHOLD;
    s.progress = progress;
    let a = s.run(deadline);
    (a, s.stats)
}

/// [`solve`] with backjumps longer than `chrono` levels made chronological
/// (tests use 0 to exercise chronological backtracking on small instances),
/// and theory propagation on or off (tests compare both).
fn solve_with(inst: &Instance, deadline: Option<Instant>, chrono: u32, propagate: bool) -> (Answer, SolveStats) {
    let mut s = Solver::new(inst, propagate);
    s.chrono = chrono;
    let a = s.run(deadline);
    (a, s.stats)
}

struct Solver<'a> {
    inst: &'a Instance,
    /// Where decisions are published, if anywhere.
    progress: Option<&'static super::ExactProgress>,
    assign: Vec<i8>,
    level: Vec<u32>,
    reason: Vec<u32>,
    trail: Vec<u32>,
    trail_edges: Vec<u32>,
    trail_lim: Vec<usize>,
    qhead: usize,
    clauses: Vec<Vec<u32>>,
    watches: Vec<Vec<u32>>,
    activity: Vec<f64>,
    var_inc: f64,
    heap: Heap,
    saved: Vec<bool>,
    seen: Vec<bool>,
    out: Vec<Vec<(u32, u32)>>,
    inn: Vec<Vec<(u32, u32)>>,
    ord: Vec<u32>,
    mark: Vec<u32>,
    epoch: u32,
    parent: Vec<(u32, u32)>,
    queue: Vec<u32>,
    back: Vec<u32>,
    stats: SolveStats,
    chrono: u32,
    /// Per variable, its index in [`Instance::groups`] (`NONE` if none).
    group_of: Vec<u32>,
    /// The transitive closure of the graph, for theory propagation (absent
    /// for components too large for its bit matrices).
    closure: Option<Closure>,
    /// Per node, its node in the closure (see [`contract`]).
    rep: Vec<u32>,
    /// Per closure node `y`, the literals with an edge into it, as
    /// `(x, lit)` with `x` the closure node of the edge's source, sorted.
    cand_in: Vec<Vec<(u32, u32)>>,
    /// Per trail entry, the closure's undo point before its edges.
    tmark: Vec<usize>,
    /// Per variable, its index on the trail.
    tpos: Vec<u32>,
    /// Per variable implied by the theory, the candidate edge `x → y` of
    /// its other side that a path `y ⇝ x` ruled out.
    treason: Vec<(u32, u32)>,
    /// Literals implied by the theory, with that edge, waiting to be
    /// assigned.
    implied: Vec<(u32, u32, u32)>,
    hits: Vec<(u32, u32)>,
}

impl<'a> Solver<'a> {
    fn new(inst: &'a Instance, propagate: bool) -> Self {
        let v = inst.vars();
        let n = inst.nodes;
        let mut out = vec![Vec::new(); n];
        let mut inn = vec![Vec::new(); n];
        for &(a, b) in &inst.known {
            out[a as usize].push((b, NONE));
            inn[b as usize].push((a, NONE));
        }
        let mut activity = vec![0.0; v];
        let mut saved = vec![true; v];
        for &x in &inst.false_first {
            if let Some(s) = saved.get_mut(x as usize) {
                *s = false;
            }
        }
        // Reads' candidates are decided first: a read's writer settles
        // which write orders matter around it.
        let mut group_of = vec![NONE; v];
        for (gi, &(lo, hi)) in inst.groups.iter().enumerate() {
            for x in lo..hi {
                if let Some(slot) = group_of.get_mut(x as usize) {
                    *slot = gi as u32;
                    activity[x as usize] = 1.0;
                }
            }
        }
        let mut heap = Heap::default();
        for i in 0..v as u32 {
            heap.insert(i, &activity);
        }
        let mut rep = Vec::new();
        let mut cand_in = Vec::new();
        let mut closure = None;
        let mut implied = Vec::new();
        let classes = if propagate { contract(inst, &mut rep) } else { usize::MAX };
        if classes <= closure::MAX_NODES {
            let cands = inst.side_edges.iter().map(|&(a, b)| (rep[a as usize], rep[b as usize]));
            // Closure nodes in a topological order of the known edges: by
            // the first position of their members (a contracted chain's
            // edges go forward in the order).
            let mut first = vec![u32::MAX; classes];
            for (x, &r) in rep.iter().enumerate() {
                first[r as usize] = first[r as usize].min(inst.order.get(x).copied().unwrap_or(0));
            }
            let mut topo: Vec<u32> = (0..classes as u32).collect();
            topo.sort_unstable_by_key(|&c| first[c as usize]);
            let known: Vec<(u32, u32)> =
                inst.known.iter().map(|&(a, b)| (rep[a as usize], rep[b as usize])).filter(|&(a, b)| a != b).collect();
            let mut hits = Vec::new();
            // None when the closures of components solved alongside hold
            // the memory budget: this one is solved without propagation.
            closure = Closure::with_edges(classes, cands, &known, &topo, &mut hits);
            if closure.is_some() {
                cand_in = vec![Vec::new(); classes];
                for lit in 0..2 * v as u32 {
                    for &(a, b) in inst.edges(lit) {
                        cand_in[rep[b as usize] as usize].push((rep[a as usize], lit));
                    }
                }
                for c in &mut cand_in {
                    c.sort_unstable();
                    c.dedup();
                }
                for (y, x) in hits {
                    implied_by(&cand_in, &mut implied, x, y, |_| true);
                }
            }
        }
        Solver {
            inst,
            progress: None,
            assign: vec![-1; v],
            level: vec![0; v],
            reason: vec![NONE; v],
            trail: Vec::new(),
            trail_edges: Vec::new(),
            trail_lim: Vec::new(),
            qhead: 0,
            clauses: Vec::new(),
            watches: vec![Vec::new(); 2 * v],
            activity,
            var_inc: 1.0,
            heap,
            saved,
            seen: vec![false; v],
            out,
            inn,
            ord: inst.order.clone(),
            mark: vec![0; n],
            epoch: 0,
            parent: vec![(NONE, NONE); n],
            queue: Vec::new(),
            back: Vec::new(),
            stats: SolveStats::default(),
            chrono: CHRONO_THRESHOLD,
            group_of,
            closure,
            rep,
            cand_in,
            tmark: Vec::new(),
            tpos: vec![0; v],
            treason: vec![(NONE, NONE); v],
            implied,
            hits: Vec::new(),
        }
    }

    #[inline]
    fn value(&self, lit: u32) -> i8 {
        let a = self.assign[(lit >> 1) as usize];
        if a < 0 {
            -1
        } else {
            i8::from((a == 1) == (lit & 1 == 0))
        }
    }

    fn decision_level(&self) -> u32 {
        self.trail_lim.len() as u32
    }

    /// Assigns `lit` at level `lvl` (the highest level among its reason's
    /// other literals, which may be below the current decision level after
    /// a chronological backtrack) and adds its edges; returns a conflict
    /// clause if an edge closes a cycle. The literal then takes the current
    /// decision level, so that the conflict lies at that level and every
    /// backtrack after it removes the literal with its partial edges.
    fn assign(&mut self, lit: u32, reason: u32, lvl: u32) -> Option<Vec<u32>> {
        let v = (lit >> 1) as usize;
        self.assign[v] = i8::from(lit & 1 == 0);
        self.level[v] = lvl;
        self.reason[v] = reason;
        self.tpos[v] = self.trail.len() as u32;
        self.trail.push(lit);
        self.trail_edges.push(0);
        self.tmark.push(self.closure.as_ref().map_or(0, Closure::mark));
        let inst = self.inst;
        for &(a, b) in inst.edges(lit) {
            self.out[a as usize].push((b, lit));
            self.inn[b as usize].push((a, lit));
            *self.trail_edges.last_mut().unwrap_or(&mut 0) += 1;
            let cycle = self.insert_order(a, b);
            if cycle.is_none() {
                self.close_over(a, b);
            }
            if let Some(cycle) = cycle {
                self.level[v] = self.decision_level();
                self.stats.theory_conflicts += 1;
                let mut clause: Vec<u32> = cycle.into_iter().chain(std::iter::once(lit)).map(|l| l ^ 1).collect();
                clause.sort_unstable();
                clause.dedup();
                return Some(clause);
            }
        }
        None
    }

    /// Adds `a → b` to the closure, queueing the negation of every
    /// undecided literal whose edge now closes a cycle.
    fn close_over(&mut self, a: u32, b: u32) {
        let Some(cl) = self.closure.as_mut() else { return };
        let (ra, rb) = (self.rep[a as usize], self.rep[b as usize]);
        if ra == rb {
            // Inside a contracted chain: either its own edge (nothing new)
            // or one closing a cycle, which the order maintenance reports.
            return;
        }
        cl.insert(ra, rb, &mut self.hits);
        let assign = &self.assign;
        for (y, x) in self.hits.drain(..) {
            implied_by(&self.cand_in, &mut self.implied, x, y, |l| assign[(l >> 1) as usize] < 0);
        }
    }

    /// The reason clause of variable `v`, implied by the theory: its literal
    /// and the negations of the literals on a path `y ⇝ x` made of edges
    /// assigned before it (known edges included), `x → y` being the edge of
    /// its other side.
    fn explain(&mut self, v: u32) -> u32 {
        let p = 2 * v + u32::from(self.assign[v as usize] != 1);
        let (x, y) = self.treason[v as usize];
        let clause = match self.path_before(y, x, self.tpos[v as usize]) {
            Some(path) => std::iter::once(p).chain(path.into_iter().map(|l| l ^ 1)).collect(),
            None => {
                // Cannot happen (the path existed when `v` was implied and
                // its edges are still assigned); all decisions imply `p` in
                // any case.
                debug_assert!(false, "no path explains a theory implication");
                let ds = self.trail_lim.iter().map(|&i| self.trail[i] ^ 1);
                std::iter::once(p).chain(ds).collect()
            }
        };
        let ci = self.clauses.len() as u32;
        self.clauses.push(clause);
        self.reason[v as usize] = ci;
        ci
    }

    /// [`Self::path`] over known edges and the edges of literals at trail
    /// positions before `limit`.
    fn path_before(&mut self, b: u32, a: u32, limit: u32) -> Option<Vec<u32>> {
        let tpos = std::mem::take(&mut self.tpos);
        let r = self.path_filtered(b, a, |l| l == NONE || tpos[(l >> 1) as usize] < limit);
        self.tpos = tpos;
        r
    }

    /// Breadth-first search from `b` for `a` over nodes ordered before `a`
    /// (a path must stay there); returns the labels (literals) on the path
    /// found, and leaves the visited nodes in `queue`, marked `epoch`.
    fn path(&mut self, b: u32, a: u32) -> Option<Vec<u32>> {
        self.path_filtered(b, a, |_| true)
    }

    /// [`Self::path`] over the edges whose label passes `keep`.
    fn path_filtered(&mut self, b: u32, a: u32, keep: impl Fn(u32) -> bool) -> Option<Vec<u32>> {
        let ub = self.ord[a as usize];
        self.epoch += 1;
        let ep = self.epoch;
        self.queue.clear();
        self.queue.push(b);
        self.mark[b as usize] = ep;
        self.parent[b as usize] = (NONE, NONE);
        let mut qi = 0;
        while qi < self.queue.len() {
            let x = self.queue[qi];
            qi += 1;
            for &(y, l) in &self.out[x as usize] {
                if !keep(l) {
                    continue;
                }
                if y == a {
                    let mut lits = Vec::new();
                    if l != NONE {
                        lits.push(l);
                    }
                    let mut cur = x;
                    while cur != b {
                        let (p, pl) = self.parent[cur as usize];
                        if pl != NONE {
                            lits.push(pl);
                        }
                        cur = p;
                    }
                    return Some(lits);
                }
                if self.mark[y as usize] != ep && self.ord[y as usize] < ub {
                    self.mark[y as usize] = ep;
                    self.parent[y as usize] = (x, l);
                    self.queue.push(y);
                }
            }
        }
        None
    }

    /// If assigning `lit` would close a cycle through one of its edges, the
    /// literals (all true) on the rest of that cycle.
    fn would_close(&mut self, lit: u32) -> Option<Vec<u32>> {
        let inst = self.inst;
        for &(a, b) in inst.edges(lit) {
            if let Some(c) = &self.closure {
                // The closure answers "no cycle" at once, except inside a
                // contracted chain, where the search below decides.
                let (ra, rb) = (self.rep[a as usize], self.rep[b as usize]);
                if ra != rb && !c.reaches(rb, ra) {
                    continue;
                }
            }
            if self.ord[a as usize] > self.ord[b as usize] {
                if let Some(p) = self.path(b, a) {
                    return Some(p);
                }
            }
        }
        None
    }

    /// Pearce–Kelly insertion of `a → b` (already in the adjacency lists).
    /// Returns the literals labelling a path `b ⇝ a` if one exists.
    fn insert_order(&mut self, a: u32, b: u32) -> Option<Vec<u32>> {
        let (ub, lb) = (self.ord[a as usize], self.ord[b as usize]);
        if ub < lb {
            return None;
        }
        if let Some(path) = self.path(b, a) {
            return Some(path);
        }
        let ep = self.epoch;
        // Backward search from a over nodes ordered after b.
        self.back.clear();
        self.back.push(a);
        let back_ep = ep.wrapping_add(1);
        self.epoch += 1;
        self.mark[a as usize] = back_ep;
        let mut bi = 0;
        while bi < self.back.len() {
            let x = self.back[bi];
            bi += 1;
            for &(y, _) in &self.inn[x as usize] {
                if self.mark[y as usize] != back_ep && self.ord[y as usize] > lb {
                    self.mark[y as usize] = back_ep;
                    self.back.push(y);
                }
            }
        }
        // Reorder: the backward set, then the forward set, into their slots.
        let ord = &mut self.ord;
        self.back.sort_unstable_by_key(|&x| ord[x as usize]);
        self.queue.sort_unstable_by_key(|&x| ord[x as usize]);
        let mut slots: Vec<u32> = self.back.iter().chain(self.queue.iter()).map(|&x| ord[x as usize]).collect();
        slots.sort_unstable();
        for (&x, &s) in self.back.iter().chain(self.queue.iter()).zip(&slots) {
            ord[x as usize] = s;
        }
        None
    }

    fn backtrack(&mut self, lvl: u32) {
        self.implied.clear();
        if self.decision_level() <= lvl {
            return;
        }
        let stop = self.trail_lim[lvl as usize];
        let cmark = self.tmark.get(stop).copied().unwrap_or(0);
        self.stats.jumped += u64::from(self.decision_level() - lvl);
        // Literals implied at levels <= lvl but assigned later (after a
        // chronological backtrack) stay: their edges come off the stacks
        // with the rest and go back on in trail order. The order stays
        // valid for them (it was valid for a superset of edges).
        let mut kept = Vec::new();
        while self.trail.len() > stop {
            let lit = self.trail.pop().unwrap_or(0);
            let k = self.trail_edges.pop().unwrap_or(0) as usize;
            self.tmark.pop();
            let edges = self.inst.edges(lit);
            for &(a, b) in edges[..k].iter().rev() {
                self.out[a as usize].pop();
                self.inn[b as usize].pop();
            }
            let v = (lit >> 1) as usize;
            if self.level[v] <= lvl {
                debug_assert_eq!(k, edges.len());
                kept.push((lit, k as u32));
                continue;
            }
            self.stats.undone += 1;
            self.saved[v] = lit & 1 == 0;
            self.assign[v] = -1;
            self.reason[v] = NONE;
            if !self.heap.contains(v as u32) {
                self.heap.insert(v as u32, &self.activity);
            }
        }
        if let Some(cl) = self.closure.as_mut() {
            cl.undo_to(cmark);
        }
        for &(lit, k) in kept.iter().rev() {
            self.tpos[(lit >> 1) as usize] = self.trail.len() as u32;
            self.tmark.push(self.closure.as_ref().map_or(0, Closure::mark));
            let inst = self.inst;
            for &(a, b) in &inst.edges(lit)[..k as usize] {
                self.out[a as usize].push((b, lit));
                self.inn[b as usize].push((a, lit));
                self.close_over(a, b);
            }
            self.trail.push(lit);
            self.trail_edges.push(k);
        }
        self.trail_lim.truncate(lvl as usize);
        self.qhead = self.qhead.min(stop);
    }

    /// Unit propagation over learned clauses, then the theory's implied
    /// literals, until neither has anything left.
    fn propagate(&mut self) -> Option<Vec<u32>> {
        loop {
            if let Some(c) = self.propagate_clauses() {
                self.implied.clear();
                return Some(c);
            }
            let mut assigned = false;
            while let Some((l, rx, ry)) = self.implied.pop() {
                let value = self.value(l);
                if value == 1 {
                    continue;
                }
                // The edge of the other side between those closure nodes.
                let rep = &self.rep;
                let Some(&(x, y)) =
                    self.inst.edges(l ^ 1).iter().find(|&&(a, b)| rep[a as usize] == rx && rep[b as usize] == ry)
                else {
                    continue;
                };
                match value {
                    0 => {
                        // The other side holds `x → y` and `y ⇝ x`: the
                        // cycle was a conflict when it closed, so this is
                        // stale; report it anyway if the path is there.
                        if let Some(path) = self.path(y, x) {
                            self.implied.clear();
                            return Some(std::iter::once(l).chain(path.into_iter().map(|q| q ^ 1)).collect());
                        }
                        continue;
                    }
                    _ => {
                        self.stats.theory_props += 1;
                        self.treason[(l >> 1) as usize] = (x, y);
                        if let Some(c) = self.assign(l, THEORY, self.decision_level()) {
                            self.implied.clear();
                            return Some(c);
                        }
                        assigned = true;
                        break;
                    }
                }
            }
            if !assigned {
                return None;
            }
        }
    }

    /// Unit propagation over learned clauses.
    fn propagate_clauses(&mut self) -> Option<Vec<u32>> {
        while self.qhead < self.trail.len() {
            let p = self.trail[self.qhead];
            self.qhead += 1;
            let false_lit = p ^ 1;
            // The watch list is compacted in place (`j` kept so far), so
            // propagating a literal allocates nothing.
            let mut ws = std::mem::take(&mut self.watches[false_lit as usize]);
            let mut j = 0;
            let mut conflict = None;
            let mut i = 0;
            while i < ws.len() {
                let ci = ws[i];
                i += 1;
                let c = &mut self.clauses[ci as usize];
                if c[0] == false_lit {
                    c.swap(0, 1);
                }
                let first = c[0];
                if self.value(first) == 1 {
                    ws[j] = ci;
                    j += 1;
                    continue;
                }
                let mut moved = false;
                for k in 2..self.clauses[ci as usize].len() {
                    let l = self.clauses[ci as usize][k];
                    if self.value(l) != 0 {
                        self.clauses[ci as usize].swap(1, k);
                        self.watches[l as usize].push(ci);
                        moved = true;
                        break;
                    }
                }
                if moved {
                    continue;
                }
                ws[j] = ci;
                j += 1;
                if self.value(first) == 0 {
                    conflict = Some(self.clauses[ci as usize].clone());
                    break;
                }
                let lvl =
                    self.clauses[ci as usize][1..].iter().map(|&l| self.level[(l >> 1) as usize]).max().unwrap_or(0);
                if let Some(c) = self.assign(first, ci, lvl) {
                    conflict = Some(c);
                    break;
                }
            }
            ws.copy_within(i.., j);
            ws.truncate(j + ws.len() - i);
            let slot = &mut self.watches[false_lit as usize];
            ws.append(slot);
            *slot = ws;
            if conflict.is_some() {
                return conflict;
            }
        }
        None
    }

    fn bump(&mut self, v: u32) {
        self.activity[v as usize] += self.var_inc;
        if self.activity[v as usize] > 1e100 {
            for a in &mut self.activity {
                *a *= 1e-100;
            }
            self.var_inc *= 1e-100;
        }
        self.heap.increased(v, &self.activity);
    }

    /// First-UIP analysis; returns the learned clause (asserting literal
    /// first, a literal of the backjump level second) and the backjump level.
    fn analyze(&mut self, conflict: Vec<u32>) -> (Vec<u32>, u32) {
        let cur = self.decision_level();
        let mut learnt = vec![0u32];
        let mut counter = 0;
        let mut clause = conflict;
        let mut skip = NONE;
        let mut idx = self.trail.len();
        loop {
            for &q in &clause {
                let v = q >> 1;
                if v == skip || self.seen[v as usize] || self.level[v as usize] == 0 {
                    continue;
                }
                self.seen[v as usize] = true;
                self.bump(v);
                if self.level[v as usize] >= cur {
                    counter += 1;
                } else {
                    learnt.push(q);
                }
            }
            let p = loop {
                idx -= 1;
                let l = self.trail[idx];
                if self.seen[(l >> 1) as usize] && self.level[(l >> 1) as usize] == cur {
                    break l;
                }
            };
            let v = p >> 1;
            self.seen[v as usize] = false;
            counter -= 1;
            if counter == 0 {
                learnt[0] = p ^ 1;
                break;
            }
            skip = v;
            let r = match self.reason[v as usize] {
                THEORY => self.explain(v),
                r => r,
            };
            clause = self.clauses[r as usize].clone();
        }
        for &l in &learnt[1..] {
            self.seen[(l >> 1) as usize] = false;
        }
        // Second watch: the highest level among the rest.
        let mut bt = 0;
        if learnt.len() > 1 {
            let mut best = 1;
            for i in 1..learnt.len() {
                if self.level[(learnt[i] >> 1) as usize] > self.level[(learnt[best] >> 1) as usize] {
                    best = i;
                }
            }
            learnt.swap(1, best);
            bt = self.level[(learnt[1] >> 1) as usize];
        }
        self.var_inc /= 0.95;
        (learnt, bt)
    }

    /// The literal to decide for `v`: for a candidate of a read, the best
    /// candidate of its group (see [`Instance::groups`]); else the side
    /// whose edges agree best with the order.
    fn pick(&self, v: u32) -> u32 {
        let gi = self.group_of[v as usize];
        if gi == NONE {
            return self.pick_phase(v);
        }
        let (lo, hi) = self.inst.groups[gi as usize];
        if (lo..hi).any(|x| self.assign[x as usize] == 1) {
            return 2 * v + 1;
        }
        let mut best = (usize::MAX, 0u32, v);
        for x in lo..hi {
            if self.assign[x as usize] >= 0 {
                continue;
            }
            let edges = self.inst.edges(2 * x);
            let back = edges.iter().filter(|&&(a, b)| self.ord[a as usize] > self.ord[b as usize]).count();
            let late = edges.first().map_or(0, |&(a, _)| self.ord[a as usize]);
            if back < best.0 || (back == best.0 && late > best.1) {
                best = (back, late, x);
            }
        }
        2 * best.2
    }

    fn pick_phase(&self, v: u32) -> u32 {
        let backward = |lit: u32| {
            self.inst.edges(lit).iter().filter(|&&(a, b)| self.ord[a as usize] > self.ord[b as usize]).count()
        };
        let (t, f) = (backward(2 * v), backward(2 * v + 1));
        if t < f || (t == f && self.saved[v as usize]) {
            2 * v
        } else {
            2 * v + 1
        }
    }

    /// Reuse-trail restarts (van der Tak, Ramos & Heule, 2011): a restart
    /// would re-decide, in activity order, every decision whose activity
    /// beats the best unassigned variable's, and take the same phases, so
    /// those levels are kept. Returns the level to restart to.
    fn reused_levels(&mut self) -> u32 {
        let best = loop {
            match self.heap.pop(&self.activity) {
                Some(v) if self.assign[v as usize] >= 0 => continue,
                Some(v) => {
                    self.heap.insert(v, &self.activity);
                    break self.activity[v as usize];
                }
                None => return self.decision_level(),
            }
        };
        let mut lvl = 0;
        while (lvl as usize) < self.trail_lim.len() {
            let d = self.trail[self.trail_lim[lvl as usize]] >> 1;
            if self.activity[d as usize] < best {
                break;
            }
            lvl += 1;
        }
        lvl
    }

    /// Adds the input clauses: units are asserted at level 0, the others
    /// watched. Returns false when they are contradictory at once.
    fn add_inputs(&mut self) -> bool {
        let inst = self.inst;
        for c in &inst.clauses {
            let mut c = c.clone();
            c.sort_unstable();
            c.dedup();
            match c.len() {
                0 => return false,
                1 => match self.value(c[0]) {
                    1 => {}
                    0 => return false,
                    _ => {
                        let ci = self.clauses.len() as u32;
                        self.clauses.push(c.clone());
                        if self.assign(c[0], ci, 0).is_some() {
                            return false;
                        }
                    }
                },
                _ => {
                    let ci = self.clauses.len() as u32;
                    self.watches[c[0] as usize].push(ci);
                    self.watches[c[1] as usize].push(ci);
                    self.clauses.push(c);
                }
            }
        }
        true
    }

    fn run(&mut self, deadline: Option<Instant>) -> Answer {
        let vars = self.inst.vars();
        if !self.add_inputs() {
            return Answer::Unsat;
        }
        let mut pending: Option<Vec<u32>> = None;
        let mut restart_count = 0u32;
        let mut conflicts_since_restart = 0u64;
        let mut restart_limit = RESTART_BASE * luby(0);
        loop {
            let conflict = match pending.take() {
                Some(c) => Some(c),
                None => self.propagate(),
            };
            if let Some(c) = conflict {
                self.stats.conflicts += 1;
                conflicts_since_restart += 1;
                // After chronological backtracks a conflict may lie below
                // the current level: go down to it first.
                let conflict_level = c.iter().map(|&l| self.level[(l >> 1) as usize]).max().unwrap_or(0);
                if conflict_level == 0 {
                    return Answer::Unsat;
                }
                self.backtrack(conflict_level);
                if self.stats.conflicts.is_multiple_of(256) && deadline.is_some_and(|d| Instant::now() >= d) {
                    return Answer::Timeout;
                }
                let (learnt, bt) = self.analyze(c);
                self.stats.learnt_lits += learnt.len() as u64;
                // A long backjump would undo (and later redo) many
                // decisions unrelated to the conflict; go back one level
                // only and assert the learnt literal at its own level.
                let cur = self.decision_level();
                self.backtrack(if cur - bt > self.chrono { cur - 1 } else { bt });
                if learnt.len() == 1 {
                    // The unit is its own reason: after a chronological
                    // backtrack its edges may still close a cycle with
                    // literals of higher levels, and that conflict's
                    // analysis resolves on it.
                    let ci = self.clauses.len() as u32;
                    let first = learnt[0];
                    self.clauses.push(learnt);
                    pending = self.assign(first, ci, 0);
                } else {
                    let ci = self.clauses.len() as u32;
                    self.watches[learnt[0] as usize].push(ci);
                    self.watches[learnt[1] as usize].push(ci);
                    let first = learnt[0];
                    self.clauses.push(learnt);
                    pending = self.assign(first, ci, bt);
                }
                continue;
            }
            if conflicts_since_restart >= restart_limit {
                conflicts_since_restart = 0;
                restart_count += 1;
                restart_limit = RESTART_BASE * luby(restart_count);
                self.stats.restarts += 1;
                let keep = self.reused_levels();
                self.backtrack(keep);
                continue;
            }
            // Decide.
            let mut next = NONE;
            while let Some(v) = self.heap.pop(&self.activity) {
                if self.assign[v as usize] < 0 {
                    next = v;
                    break;
                }
            }
            if next == NONE {
                debug_assert_eq!(self.trail.len(), vars);
                return Answer::Sat(self.assign.iter().map(|&a| a == 1).collect());
            }
            self.stats.decisions += 1;
            if self.stats.decisions.is_multiple_of(1024) {
                if let Some(p) = self.progress {
                    p.add_decisions(1024);
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Answer::Timeout;
                }
            }
            let lit = self.pick(next);
            if lit >> 1 != next {
                // Another candidate of the same read is decided; `next`
                // stays to be decided later.
                self.heap.insert(next, &self.activity);
            }
            // A phase whose edges would close a cycle is refuted right away
            // (theory propagation at decision time): learn "not all of the
            // cycle" and take the other side at the current level, instead
            // of deciding, failing and backjumping.
            if let Some(path) = self.would_close(lit) {
                self.stats.refuted_phases += 1;
                let mut clause: Vec<u32> = std::iter::once(lit ^ 1).chain(path.into_iter().map(|l| l ^ 1)).collect();
                clause[1..].sort_unstable();
                clause.dedup();
                if clause.len() == 1 {
                    // The phase closes a cycle with known edges alone, so
                    // its negation is a fact. Assert it here, with itself as
                    // the reason, rather than undoing every decision (with
                    // millions of variables that re-decides them all); if a
                    // backjump undoes it, the theory refutes the phase again.
                    let ci = self.clauses.len() as u32;
                    self.clauses.push(vec![lit ^ 1]);
                    pending = self.assign(lit ^ 1, ci, 0);
                } else {
                    let mut best = 1;
                    for i in 2..clause.len() {
                        if self.level[(clause[i] >> 1) as usize] > self.level[(clause[best] >> 1) as usize] {
                            best = i;
                        }
                    }
                    clause.swap(1, best);
                    let lvl = self.level[(clause[1] >> 1) as usize];
                    let ci = self.clauses.len() as u32;
                    self.watches[clause[0] as usize].push(ci);
                    self.watches[clause[1] as usize].push(ci);
                    self.clauses.push(clause);
                    pending = self.assign(lit ^ 1, ci, lvl);
                }
                continue;
            }
            self.trail_lim.push(self.trail.len());
            if let Some(c) = self.closure.as_mut() {
                // Backtracking undoes the closure to the start of a level.
                c.checkpoint();
            }
            pending = self.assign(lit, NONE, self.decision_level());
        }
    }
}

/// The Luby restart sequence 1, 1, 2, 1, 1, 2, 4, ...
fn luby(mut i: u32) -> u64 {
    let mut size = 1u64;
    let mut seq = 0;
    while size < u64::from(i) + 1 {
        seq += 1;
        size = 2 * size + 1;
    }
    let mut x = u64::from(i);
    while size - 1 != x {
        size = (size - 1) / 2;
        seq -= 1;
        x %= size;
    }
    i = seq;
    1u64 << i
}

/// A max-heap of variables by activity, with positions for updates.
#[derive(Default)]
struct Heap {
    items: Vec<u32>,
    pos: Vec<u32>,
}

impl Heap {
    fn contains(&self, v: u32) -> bool {
        (v as usize) < self.pos.len() && self.pos[v as usize] != NONE
    }

    fn insert(&mut self, v: u32, act: &[f64]) {
        if self.pos.len() <= v as usize {
            self.pos.resize(v as usize + 1, NONE);
        }
        self.pos[v as usize] = self.items.len() as u32;
        self.items.push(v);
        self.up(self.items.len() - 1, act);
    }

    fn increased(&mut self, v: u32, act: &[f64]) {
        if self.contains(v) {
            self.up(self.pos[v as usize] as usize, act);
        }
    }

    fn pop(&mut self, act: &[f64]) -> Option<u32> {
        let top = *self.items.first()?;
        let last = self.items.pop()?;
        self.pos[top as usize] = NONE;
        if !self.items.is_empty() {
            self.items[0] = last;
            self.pos[last as usize] = 0;
            self.down(0, act);
        }
        Some(top)
    }

    fn up(&mut self, mut i: usize, act: &[f64]) {
        let v = self.items[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if act[self.items[p] as usize] >= act[v as usize] {
                break;
            }
            self.items[i] = self.items[p];
            self.pos[self.items[i] as usize] = i as u32;
            i = p;
        }
        self.items[i] = v;
        self.pos[v as usize] = i as u32;
    }

    fn down(&mut self, mut i: usize, act: &[f64]) {
        let v = self.items[i];
        let n = self.items.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && act[self.items[r] as usize] > act[self.items[l] as usize] { r } else { l };
            if act[self.items[c] as usize] <= act[v as usize] {
                break;
            }
            self.items[i] = self.items[c];
            self.pos[self.items[i] as usize] = i as u32;
            i = c;
        }
        self.items[i] = v;
        self.pos[v as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::si_check::testkit::xorshift;

    /// The two sides' edges of one variable.
    type Sides = (Vec<(u32, u32)>, Vec<(u32, u32)>);

    /// Builds an instance from per-variable (true side, false side) edges.
    /// Chronological backtracking thresholds and theory propagation, in
    /// every combination the tests run.
    const CONFIGS: [(u32, bool); 6] =
        [(CHRONO_THRESHOLD, true), (0, true), (1, true), (CHRONO_THRESHOLD, false), (0, false), (1, false)];

    pub(crate) fn instance(nodes: usize, known: &[(u32, u32)], vars: &[Sides]) -> Instance {
        let mut side_edges = Vec::new();
        let mut side_start = vec![0];
        for (t, f) in vars {
            side_edges.extend_from_slice(t);
            side_start.push(side_edges.len() as u32);
            side_edges.extend_from_slice(f);
            side_start.push(side_edges.len() as u32);
        }
        Instance {
            nodes,
            known: known.to_vec(),
            side_edges,
            side_start,
            order: (0..nodes as u32).collect(),
            clauses: Vec::new(),
            false_first: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// Whether the known edges plus the edges of each variable's chosen
    /// side in `m` are acyclic.
    fn model_acyclic(inst: &Instance, nodes: usize, m: &[bool]) -> bool {
        let mut e = inst.known.clone();
        for (i, &b) in m.iter().enumerate() {
            e.extend_from_slice(inst.edges(2 * i as u32 + u32::from(!b)));
        }
        acyclic(nodes, &e)
    }

    fn acyclic(nodes: usize, edges: &[(u32, u32)]) -> bool {
        let mut indeg = vec![0; nodes];
        for &(_, b) in edges {
            indeg[b as usize] += 1;
        }
        let mut stack: Vec<u32> = (0..nodes as u32).filter(|&v| indeg[v as usize] == 0).collect();
        let mut seen = 0;
        while let Some(v) = stack.pop() {
            seen += 1;
            for &(a, b) in edges {
                if a == v {
                    indeg[b as usize] -= 1;
                    if indeg[b as usize] == 0 {
                        stack.push(b);
                    }
                }
            }
        }
        seen == nodes
    }

    /// Whether assignment `m` (bit `i` set: variable `i` true) satisfies
    /// the input clauses.
    fn clauses_hold(inst: &Instance, m: u64) -> bool {
        inst.clauses.iter().all(|c| c.iter().any(|&l| (m >> (l / 2) & 1 == 1) == (l % 2 == 0)))
    }

    fn brute(inst: &Instance) -> bool {
        let v = inst.vars();
        (0..1u64 << v).filter(|&m| clauses_hold(inst, m)).any(|m| {
            let mut e = inst.known.clone();
            for i in 0..v {
                e.extend_from_slice(inst.edges(2 * i as u32 + u32::from(m >> i & 1 == 0)));
            }
            acyclic(inst.nodes, &e)
        })
    }

    /// Solves `inst` in every configuration ([`CONFIGS`]) and checks each
    /// answer against brute force: a model must satisfy the input clauses
    /// and keep the graph acyclic. Returns how many answers were
    /// satisfiable and how many unsatisfiable.
    fn agrees_with_brute_force(inst: &Instance) -> (u32, u32) {
        let expected = brute(inst);
        let (mut sat, mut unsat) = (0, 0);
        for (chrono, propagate) in CONFIGS {
            match solve_with(inst, None, chrono, propagate).0 {
                Answer::Sat(m) => {
                    assert!(expected, "model for an unsatisfiable instance ({chrono}, {propagate})");
                    let bits = m.iter().enumerate().fold(0u64, |acc, (i, &b)| acc | (u64::from(b) << i));
                    assert!(clauses_hold(inst, bits), "model breaks an input clause");
                    assert!(model_acyclic(inst, inst.nodes, &m), "model is cyclic");
                    sat += 1;
                }
                Answer::Unsat => {
                    assert!(!expected, "unsat for a satisfiable instance ({chrono}, {propagate})");
                    unsat += 1;
                }
                Answer::Timeout => panic!("no deadline"),
            }
        }
        (sat, unsat)
    }

    #[test]
    fn solves_small_instances_like_brute_force() {
        let mut rnd = xorshift(99);
        let (mut sat, mut unsat) = (0, 0);
        for _ in 0..3000 {
            let nodes = 3 + rnd(8) as usize;
            let known: Vec<(u32, u32)> = (0..rnd(4))
                .map(|_| {
                    let a = rnd(nodes as u64 - 1);
                    (a, a + 1 + rnd((nodes as u32 - a - 1) as u64))
                })
                .collect();
            let nv = 1 + rnd(11) as usize;
            let mut side = || {
                (0..1 + rnd(2))
                    .map(|_| {
                        let a = rnd(nodes as u64);
                        let mut b = rnd(nodes as u64);
                        if a == b {
                            b = (b + 1) % nodes as u32;
                        }
                        (a, b)
                    })
                    .collect::<Vec<_>>()
            };
            let vars: Vec<_> = (0..nv).map(|_| (side(), side())).collect();
            let inst = instance(nodes, &known, &vars);
            let (s, u) = agrees_with_brute_force(&inst);
            sat += s;
            unsat += u;
        }
        assert!(sat > 50 && unsat > 50, "sat {sat} unsat {unsat}");
    }

    /// Input clauses (reads' "at least one candidate", conditional edges)
    /// are honoured: verdicts match brute force and models satisfy them.
    #[test]
    fn input_clauses_match_brute_force() {
        let mut rnd = xorshift(7);
        let (mut sat, mut unsat) = (0, 0);
        for _ in 0..3000 {
            let nodes = 3 + rnd(5) as usize;
            let nv = 2 + rnd(6) as usize;
            let edge = |rnd: &mut dyn FnMut(u64) -> u32| {
                let a = rnd(nodes as u64);
                (a, (a + 1 + rnd(nodes as u64 - 1)) % nodes as u32)
            };
            // Like a read's candidate: edges on one side only.
            let vars: Vec<_> = (0..nv)
                .map(|_| {
                    if rnd(2) == 0 {
                        (vec![edge(&mut rnd)], vec![edge(&mut rnd)])
                    } else {
                        (vec![edge(&mut rnd), edge(&mut rnd)], vec![])
                    }
                })
                .collect();
            let mut inst = instance(nodes, &[], &vars);
            for _ in 0..1 + rnd(4) {
                let len = 1 + rnd(3);
                inst.clauses.push((0..len).map(|_| rnd(2 * nv as u64)).collect());
            }
            let (s, u) = agrees_with_brute_force(&inst);
            sat += s;
            unsat += u;
        }
        assert!(sat > 50 && unsat > 20, "sat {sat} unsat {unsat}");
    }

    /// Begin/commit-shaped instances (transaction `t` is `2t → 2t + 1`,
    /// dependencies go from a commit to a begin, as under serializability,
    /// plus a few begin-to-commit edges as under snapshot isolation), where
    /// the closure contracts the pairs that have no other edge: verdicts
    /// match brute force with and without theory propagation, and models
    /// are acyclic.
    #[test]
    fn begin_commit_instances_like_brute_force() {
        let mut rnd = xorshift(4242);
        let (mut sat, mut unsat) = (0, 0);
        for _ in 0..2000 {
            let txns = 3 + rnd(4);
            let nodes = 2 * txns as usize;
            let known: Vec<(u32, u32)> = (0..txns)
                .map(|t| (2 * t, 2 * t + 1))
                .chain((0..rnd(3)).map(|_| {
                    // Forward, so that the identity is a topological order.
                    let a = rnd(u64::from(txns - 1));
                    let b = a + 1 + rnd(u64::from(txns - 1 - a));
                    (2 * a + 1, 2 * b)
                }))
                .collect();
            let nv = 2 + rnd(7) as usize;
            let dep = |rnd: &mut dyn FnMut(u64) -> u32| {
                let a = rnd(u64::from(txns));
                let b = (a + 1 + rnd(u64::from(txns - 1))) % txns;
                if rnd(6) == 0 {
                    (2 * a, 2 * b + 1)
                } else {
                    (2 * a + 1, 2 * b)
                }
            };
            let vars: Vec<_> = (0..nv)
                .map(|_| {
                    let one: Vec<_> = (0..1 + rnd(2)).map(|_| dep(&mut rnd)).collect();
                    let other: Vec<_> = (0..1 + rnd(2)).map(|_| dep(&mut rnd)).collect();
                    (one, other)
                })
                .collect();
            let inst = instance(nodes, &known, &vars);
            let (s, u) = agrees_with_brute_force(&inst);
            sat += s;
            unsat += u;
        }
        assert!(sat > 300 && unsat > 300, "sat {sat} unsat {unsat}");
    }

    #[test]
    fn luby_sequence() {
        let l: Vec<u64> = (0..10).map(luby).collect();
        assert_eq!(l, vec![1, 1, 2, 1, 1, 2, 4, 1, 1, 2]);
    }
}
