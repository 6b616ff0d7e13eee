//! Pruning: deciding constraints whose one side would close a cycle with
//! what is already known (PolySI's rule, also Cobra's).
//!
//! Each round numbers the begin/commit graph of the known and derived edges
//! topologically (a cycle there is already a violation), computes
//! reachability ([`super::reach`]), and checks every open constraint: a side
//! holding an edge `a → b` while `b` already reaches `a` is impossible, so the
//! other side's edges are derived; when both sides are impossible the
//! history is refuted. Rounds repeat while they still decide more than 1% of
//! the open constraints (PolySI's stopping rule). Every derived edge records
//! the round and the constraint that produced it, so a refutation can be
//! explained edge by edge.

use super::polygraph::{bc_edge, begin, commit, DepEdge, Polygraph};
use crate::accel::reach::{Dag, Reach};
use crate::accel::{Closure, Engine};
use rayon::prelude::*;

/// An edge of the known graph, with where it came from.
#[derive(Clone, Copy, Debug)]
pub struct EdgeRec {
    /// The dependency.
    pub e: DepEdge,
    /// 0 for edges inferred from the history; `r + 1` for edges derived in
    /// pruning round `r`.
    pub round: u32,
    /// For derived edges, the index of their [`Derivation`].
    pub why: u32,
}

/// A constraint decided by pruning.
#[derive(Clone, Copy, Debug)]
pub struct Derivation {
    /// The constraint.
    pub constraint: u32,
    /// The side chosen (true: chain `a` first).
    pub a_first: bool,
    /// An edge of the rejected side that would close a cycle.
    pub blocked: DepEdge,
    /// The round (edges of rounds `<= round` justify it).
    pub round: u32,
}

/// How pruning ended.
#[derive(Clone, Debug)]
pub enum Ending {
    /// Constraints remain for the solver.
    Open,
    /// Both sides of a constraint close a cycle.
    BothSides {
        /// The constraint.
        constraint: u32,
        /// An edge of each side (`a` first, then `b` first) closing a cycle.
        blocked: [DepEdge; 2],
        /// The round.
        round: u32,
    },
    /// The known and derived edges form a cycle.
    Cycle {
        /// Edges with `round <= this` contain the cycle.
        round: u32,
    },
}

/// The result of pruning.
#[derive(Clone, Debug)]
pub struct Pruned {
    /// Known and derived edges.
    pub edges: Vec<EdgeRec>,
    /// Why each derived edge holds.
    pub derivations: Vec<Derivation>,
    /// Constraints still open.
    pub open: Vec<u32>,
    /// Topological position of every begin/commit node (valid when `Open`).
    pub pos: Vec<u32>,
    /// How it ended.
    pub ending: Ending,
    /// Rounds run.
    pub rounds: u32,
}

/// Options for pruning.
#[derive(Clone, Copy, Debug)]
pub struct PruneOptions {
    /// Memory budget for reachability rows, in bytes.
    pub reach_bytes: usize,
    /// Whether to prune at all (otherwise only the known-graph cycle check).
    pub enabled: bool,
    /// Stop pruning here (what is still open is left to the solver, which
    /// then stops at once): a round checks no more constraints once it has
    /// passed, and no round starts after it.
    pub deadline: Option<std::time::Instant>,
}

/// CSR adjacency of the begin/commit graph of `edges` (plus `s(t) → c(t)`).
pub fn bc_csr(g: &Polygraph, edges: impl Iterator<Item = DepEdge> + Clone) -> (Vec<u32>, Vec<u32>) {
    let nodes = 2 * g.n;
    let mut offsets = vec![0u32; nodes + 1];
    for t in 0..g.n as u32 {
        offsets[begin(t) as usize + 1] += 1;
    }
    for e in edges.clone() {
        offsets[bc_edge(g.semantics, &e).0 as usize + 1] += 1;
    }
    for i in 0..nodes {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut targets = vec![0u32; offsets[nodes] as usize];
    let mut put = |a: u32, b: u32| {
        targets[fill[a as usize] as usize] = b;
        fill[a as usize] += 1;
    };
    for t in 0..g.n as u32 {
        put(begin(t), commit(t));
    }
    for e in edges {
        let (a, b) = bc_edge(g.semantics, &e);
        put(a, b);
    }
    (offsets, targets)
}

/// Kahn's algorithm, taking among the ready nodes the one of least
/// `priority` (an estimate of when the transaction ran), so the order is as
/// close to the real execution as the edges allow; `None` if there is a
/// cycle. A good order matters twice: reachability windows are exact for
/// nodes close in it, and the solver's phases follow it.
pub fn topo(offsets: &[u32], targets: &[u32], priority: &[u32]) -> Option<Vec<u32>> {
    use std::cmp::Reverse;
    let n = offsets.len() - 1;
    let mut indeg = vec![0u32; n];
    for &t in targets {
        indeg[t as usize] += 1;
    }
    let key = |v: u32| Reverse((priority[v as usize / 2], v));
    let mut ready: std::collections::BinaryHeap<Reverse<(u32, u32)>> =
        (0..n as u32).filter(|&v| indeg[v as usize] == 0).map(key).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, v))) = ready.pop() {
        order.push(v);
        for &t in &targets[offsets[v as usize] as usize..offsets[v as usize + 1] as usize] {
            indeg[t as usize] -= 1;
            if indeg[t as usize] == 0 {
                ready.push(key(t));
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// An estimate of when each transaction ran: its position in the history
/// when the history is in time order (Jepsen), else its position within its
/// session (dbcop, Cobra and PolySI list transactions session by session).
pub fn time_estimate(h: &crate::history::History, txns: &super::txns::Txns) -> Vec<u32> {
    let timed = h.ops.iter().any(|o| o.is_invoke() || o.time >= 0);
    if timed {
        return (0..txns.len() as u32).collect();
    }
    let mut seen: rustc_hash::FxHashMap<i64, u32> = rustc_hash::FxHashMap::default();
    txns.process
        .iter()
        .map(|p| {
            let r = seen.entry(*p).or_insert(0);
            *r += 1;
            *r - 1
        })
        .collect()
}

/// Reachability over the known graph alone, computed while building the
/// polygraph; pruning's first round reuses it instead of computing it again.
pub struct KnownReach {
    /// Topological position of every begin/commit node.
    pub pos: Vec<u32>,
    /// Reachability between them.
    pub reach: Closure,
}

/// Reachability over the begin/commit graph of `g`'s known edges, or `None`
/// when they already form a cycle.
pub fn known_reach(g: &Polygraph, priority: &[u32], reach_bytes: usize, engine: &mut Engine) -> Option<KnownReach> {
    let bc = ordered(g, g.known.iter().copied(), priority)?;
    let reach = bc.reach(g, reach_bytes, engine);
    Some(KnownReach { pos: bc.pos, reach })
}

/// A begin/commit graph with a topological order.
struct Ordered {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    order: Vec<u32>,
    pos: Vec<u32>,
}

impl Ordered {
    /// Windowed reachability, rows within `reach_bytes`.
    fn reach(&self, g: &Polygraph, reach_bytes: usize, engine: &mut Engine) -> Closure {
        let nodes = 2 * g.n;
        let window = (reach_bytes.saturating_mul(8) / nodes.max(1)).clamp(64, nodes.max(64));
        engine.closure(
            &Dag { offsets: &self.offsets, targets: &self.targets, order: &self.order, pos: &self.pos },
            window,
        )
    }
}

/// The begin/commit graph of `edges`, ordered, or `None` if it is cyclic.
fn ordered(g: &Polygraph, edges: impl Iterator<Item = DepEdge> + Clone, priority: &[u32]) -> Option<Ordered> {
    let (offsets, targets) = bc_csr(g, edges);
    let order = topo(&offsets, &targets, priority)?;
    let mut pos = vec![0u32; order.len()];
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = i as u32;
    }
    Some(Ordered { offsets, targets, order, pos })
}

/// Topological positions of the begin/commit nodes of `edges`, earliest
/// first by `priority` (per transaction) among the nodes ready at each
/// step; `None` when the edges are cyclic.
pub fn positions(g: &Polygraph, edges: impl Iterator<Item = DepEdge> + Clone, priority: &[u32]) -> Option<Vec<u32>> {
    ordered(g, edges, priority).map(|o| o.pos)
}

/// Runs pruning rounds. `first`, when given, is the reachability of `g`'s
/// known edges (see [`known_reach`]) and serves as the first round's.
/// Reachability is computed by `engine` (CPU or GPU; see [`crate::accel`]):
/// a round whose derived edges all go forward in the current order updates
/// the closure in place when that is cheaper than recomputing it (the order
/// a fresh topological sort would choose is then the same, so the result
/// is too).
pub fn prune(
    g: &Polygraph,
    priority: &[u32],
    opts: PruneOptions,
    first: Option<KnownReach>,
    engine: &mut Engine,
) -> Pruned {
    let mut edges: Vec<EdgeRec> = g.known.iter().map(|&e| EdgeRec { e, round: 0, why: u32::MAX }).collect();
    let mut derivations = Vec::new();
    let mut open: Vec<u32> = (0..g.constraints.len() as u32).collect();
    let mut round = 0u32;
    let mut last_decided = usize::MAX;
    // The closure of the previous round and the begin/commit pairs of the
    // edges that round derived.
    let mut current: Option<(Vec<u32>, Closure)> = first.map(|k| (k.pos, k.reach));
    let mut added: Vec<(u32, u32)> = Vec::new();
    loop {
        let (pos, reach) = match current.take() {
            Some(c) if round == 0 => c,
            prev => {
                let threshold = (open.len() / 100).max(1);
                let late = opts.deadline.is_some_and(|d| std::time::Instant::now() >= d);
                let stop = !opts.enabled || open.is_empty() || (round > 0 && last_decided < threshold) || late;
                match prev {
                    Some((pos, mut reach)) if engine.can_update(&reach, &added, edges.len() + g.n) => {
                        // Forward edges in a topological order: no cycle.
                        if stop {
                            return Pruned { edges, derivations, open, pos, ending: Ending::Open, rounds: round };
                        }
                        engine.update(&mut reach, &added);
                        (pos, reach)
                    }
                    _ => {
                        let Some(bc) = ordered(g, edges.iter().map(|r| r.e), priority) else {
                            return Pruned {
                                edges,
                                derivations,
                                open,
                                pos: Vec::new(),
                                ending: Ending::Cycle { round },
                                rounds: round,
                            };
                        };
                        if stop {
                            return Pruned {
                                edges,
                                derivations,
                                open,
                                pos: bc.pos,
                                ending: Ending::Open,
                                rounds: round,
                            };
                        }
                        let reach = bc.reach(g, opts.reach_bytes, engine);
                        (bc.pos, reach)
                    }
                }
            }
        };
        if !opts.enabled || open.is_empty() {
            return Pruned { edges, derivations, open, pos, ending: Ending::Open, rounds: round };
        }
        // Evaluate every open constraint against this round's reachability;
        // keep only the decided ones: (constraint, blocked edge index of the
        // a-first side, of the b-first side), NONE when not blocked.
        let decided_now = test_constraints(g, &open, &reach, opts.deadline, engine);
        let mut is_decided = vec![false; g.constraints.len()];
        let mut decided = 0;
        let mut buf = Vec::new();
        added.clear();
        // The derived edges, to be kept unless a known path implies them:
        // (edge, derivation), their pairs asked of the closure in one batch
        // (on a GPU the rows stay on the device).
        let mut derived: Vec<(DepEdge, u32)> = Vec::new();
        for &(c, x, y) in &decided_now {
            is_decided[c as usize] = true;
            let con = &g.constraints[c as usize];
            if x != NO && y != NO {
                g.side(con, true, &mut buf);
                let bx = buf[x as usize];
                g.side(con, false, &mut buf);
                let by = buf[y as usize];
                keep_derived(g, &derived, &reach, engine, round, &mut edges, &mut added);
                return Pruned {
                    edges,
                    derivations,
                    open,
                    pos,
                    ending: Ending::BothSides { constraint: c, blocked: [bx, by], round },
                    rounds: round + 1,
                };
            }
            let a_first = x == NO;
            g.side(con, !a_first, &mut buf);
            let blocked = buf[if a_first { y } else { x } as usize];
            let why = derivations.len() as u32;
            derivations.push(Derivation { constraint: c, a_first, blocked, round });
            g.side(con, a_first, &mut buf);
            derived.extend(buf.iter().map(|&e| (e, why)));
            decided += 1;
        }
        keep_derived(g, &derived, &reach, engine, round, &mut edges, &mut added);
        let still: Vec<u32> = open.iter().copied().filter(|&c| !is_decided[c as usize]).collect();
        open = still;
        last_decided = decided;
        round += 1;
        current = Some((pos, reach));
    }
}

/// Appends to `edges` (and their begin/commit pairs to `added`) the edges
/// `derived` in `round` that `reach` does not imply already (an implied
/// edge changes nothing), asking the closure in one batch
/// ([`Engine::reaches_batch`]: on a GPU the rows stay on the device).
fn keep_derived(
    g: &Polygraph,
    derived: &[(DepEdge, u32)],
    reach: &Closure,
    engine: &mut Engine,
    round: u32,
    edges: &mut Vec<EdgeRec>,
    added: &mut Vec<(u32, u32)>,
) {
    let pairs: Vec<(u32, u32)> = derived.iter().map(|(e, _)| g.bc(e)).collect();
    let implied = engine.reaches_batch(reach, &pairs);
    for ((&(e, why), &(x, y)), implied) in derived.iter().zip(&pairs).zip(implied) {
        if !implied {
            edges.push(EdgeRec { e, round: round + 1, why });
            added.push((x, y));
        }
    }
}

/// "Not blocked" in [`test_constraints`]' results.
const NO: u32 = u32::MAX;

/// The decided constraints of `open` by `reach`: (constraint, index of the
/// blocked edge of the a-first side, of the b-first side), [`NO`] where a
/// side is not blocked; constraints with neither side blocked are left out.
/// Past `deadline`, constraints are left undecided.
fn test_constraints(
    g: &Polygraph,
    open: &[u32],
    reach: &Closure,
    deadline: Option<std::time::Instant>,
    engine: &mut Engine,
) -> Vec<(u32, u32, u32)> {
    #[cfg(feature = "gpu")]
    if engine.tests_on_device(reach) && deadline.is_none_or(|d| std::time::Instant::now() < d) {
        // Flatten every side into node pairs, test them on the device.
        type Side = Vec<[u32; 2]>;
        let sides: Vec<(Side, Side)> = open
            .par_iter()
            .map_init(Vec::new, |buf, &c| {
                let con = &g.constraints[c as usize];
                let mut side = |a_first: bool| {
                    g.side(con, a_first, buf);
                    buf.iter()
                        .map(|e| {
                            let (x, y) = g.bc(e);
                            [x, y]
                        })
                        .collect::<Vec<_>>()
                };
                (side(true), side(false))
            })
            .collect();
        let mut side_ptr = Vec::with_capacity(2 * sides.len() + 1);
        side_ptr.push(0u32);
        let mut pairs = Vec::new();
        for (a, b) in &sides {
            pairs.extend_from_slice(a);
            side_ptr.push(pairs.len() as u32);
            pairs.extend_from_slice(b);
            side_ptr.push(pairs.len() as u32);
        }
        if let Some(r) = engine.test_on_device(reach, &side_ptr, &pairs) {
            return open
                .iter()
                .enumerate()
                .map(|(i, &c)| (c, r[2 * i], r[2 * i + 1]))
                .filter(|&(_, x, y)| x != NO || y != NO)
                .collect();
        }
    }
    let t = std::time::Instant::now();
    let out = open
        .par_iter()
        .map_init(Vec::new, |buf, &c| {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return (c, NO, NO);
            }
            let con = &g.constraints[c as usize];
            let blocked = |a_first: bool, buf: &mut Vec<DepEdge>| {
                g.side(con, a_first, buf);
                buf.iter()
                    .position(|e| {
                        let (x, y) = g.bc(e);
                        reach.reaches(y, x)
                    })
                    .map_or(NO, |i| i as u32)
            };
            (c, blocked(true, buf), blocked(false, buf))
        })
        .filter(|&(_, x, y)| x != NO || y != NO)
        .collect();
    engine.cpu_test_done(reach, t);
    out
}

/// Breadth-first shortest path `from ⇝ to` in the begin/commit graph given
/// by `adj` (edge labels are indices) plus `extra` (labels beyond), using
/// only edges whose label `keep` accepts; returns the labels on the path.
/// Internal `s(t) → c(t)` steps are implicit and not listed.
pub fn shortest_path(
    adj: &[Vec<(u32, u32)>],
    extra: &rustc_hash::FxHashMap<u32, Vec<(u32, u32)>>,
    keep: impl Fn(usize) -> bool,
    from: u32,
    to: u32,
) -> Option<Vec<usize>> {
    const INTERNAL: u32 = u32::MAX;
    let mut parent: rustc_hash::FxHashMap<u32, (u32, u32)> = rustc_hash::FxHashMap::default();
    let mut queue = std::collections::VecDeque::new();
    parent.insert(from, (u32::MAX, u32::MAX));
    queue.push_back(from);
    while let Some(x) = queue.pop_front() {
        if x == to {
            let mut path = Vec::new();
            let mut cur = to;
            while cur != from {
                let (p, e) = parent[&cur];
                if e != INTERNAL {
                    path.push(e as usize);
                }
                cur = p;
            }
            path.reverse();
            return Some(path);
        }
        let internal = (x % 2 == 0).then_some((x + 1, INTERNAL));
        let outs = adj[x as usize].iter().chain(extra.get(&x).into_iter().flatten()).copied().chain(internal);
        for (y, e) in outs {
            if (e == INTERNAL || keep(e as usize)) && !parent.contains_key(&y) {
                parent.insert(y, (x, e));
                queue.push_back(y);
            }
        }
    }
    None
}

/// Candidate writers of ambiguous reads that the known and derived edges
/// rule out, per choice and candidate (`true`: impossible). A read `r` of
/// key `x` cannot have read from candidate `w` when
/// - an edge `w` reading brings (`w →wr r`, `r →rw next(w)`) would close a
///   cycle with what is known, or
/// - another writer `w2` of `x` lies between them: `c(w) ⇝ c(w2)` and
///   `c(w2) ⇝ b(r)`. Then `w2`'s version is newer than `w`'s (versions are
///   ordered as commits are) and visible to `r`, so `r` would have read it
///   or a later one: if `w2` were ordered before `w` the ww edge closes a
///   cycle with `c(w) ⇝ c(w2)`, and if after, `r →rw w2` closes one with
///   `c(w2) ⇝ b(r)`.
///
/// Returns `None` when nothing was computed (no ambiguous reads, or the
/// graph is cyclic, which the caller has already ruled out).
pub fn dead_candidates(
    g: &Polygraph,
    pr: &Pruned,
    priority: &[u32],
    reach_bytes: usize,
    engine: &mut Engine,
) -> Option<Vec<Vec<bool>>> {
    if g.choices.is_empty() {
        return None;
    }
    let bc = ordered(g, pr.edges.iter().map(|r| r.e), priority)?;
    Some(dead_candidates_by(g, &bc.reach(g, reach_bytes, engine)))
}

/// [`dead_candidates`] by a given reachability (of edges every explanation
/// contains), such as the known graph's before pruning.
pub fn dead_candidates_by(g: &Polygraph, reach: &dyn Reach) -> Vec<Vec<bool>> {
    // Writers of each key that some read is ambiguous about.
    let mut writers: rustc_hash::FxHashMap<u32, Vec<u32>> = rustc_hash::FxHashMap::default();
    for ch in &g.choices {
        writers.entry(ch.key.0).or_default();
    }
    for (ci, ch) in g.chains.iter().enumerate() {
        if let Some(ws) = writers.get_mut(&ch.key.0) {
            ws.extend_from_slice(g.chain(ci as u32));
        }
    }
    g.choices
        .par_iter()
        .enumerate()
        .map_init(Vec::new, |buf, (j, ch)| {
            let ws = writers.get(&ch.key.0).map(Vec::as_slice).unwrap_or(&[]);
            let r = ch.reader;
            (0..ch.cands.len())
                .map(|i| {
                    buf.clear();
                    g.cand_edges(j as u32, i, buf);
                    if buf.iter().any(|e| {
                        let (x, y) = g.bc(e);
                        reach.reaches(y, x)
                    }) {
                        return true;
                    }
                    let w = ch.cands[i].writer;
                    ws.iter().any(|&w2| {
                        w2 != w
                            && w2 != r
                            && reach.reaches(commit(w), commit(w2))
                            && reach.reaches(commit(w2), begin(r))
                    })
                })
                .collect()
        })
        .collect()
}
