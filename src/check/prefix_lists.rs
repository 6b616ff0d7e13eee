//! Prefix consistency of a list-append history, exactly, in linear time.
//!
//! Prefix consistency (Biswas–Enea's `Prefix` axiom, Cerone's PC) asks for
//! one total order of begin and commit events in which every transaction
//! sees exactly the transactions committed before it began (and its own
//! writes), and session order puts a transaction's commit before its
//! successor's begin. Unlike registers (NP-complete, `si_check`), a
//! list-append history reveals, for every read of a key, which appends it
//! saw: an append is in the list it read, or it is not. So every constraint
//! of the begin/commit graph is known, and the history is prefix consistent
//! exactly when this graph is acyclic (`s(t)`, `c(t)` the begin and commit
//! of `t`):
//!
//! * `s(t) → c(t)`;
//! * **wr** (Elle's inference: `b` read the list ending in `a`'s element, so
//!   `b` saw `a`): `c(a) → s(b)`; **session** order likewise;
//! * **ww** (the version order of a key, read off its longest list: `b`'s
//!   element follows `a`'s): `c(a) → c(b)`. Appends land in commit order,
//!   and prefix consistency, unlike snapshot isolation, lets two appenders
//!   overlap;
//! * **rw** (`a` read a list that `b`'s element follows, so `a` did not see
//!   `b`): `s(a) → c(b)`;
//! * an append no read ever observed, by a committed transaction `w`: every
//!   other committed reader `r` of the key did not see it, `s(r) → c(w)`.
//!   (An unobserved `:info` append may never have happened: no edge.)
//!
//! Every edge holds in every prefix-consistent execution, so a cycle refutes
//! the level; an acyclic graph's topological order is such an execution
//! (each reader's list is then exactly the appends committed before it
//! began, in commit order). Reads Elle's inference cannot trace (aborted
//! or intermediate reads, duplicates, incompatible orders) are its own
//! anomalies and fail every level on their own.
//!
//! The witness is the cycle's transactions with the steps that justify each
//! edge (Elle's explainer for inferred edges, the unseen append for the
//! last rule), named by Elle's cycle classification.

use crate::anomaly::{rel, Cycle, Rels, Step};
use crate::cycles::classify::classify;
use crate::graph::Graph;
use crate::history::{History, KeyId, MopFn, OpId};
use crate::infer::{order, Explain};
use rustc_hash::FxHashSet;

/// The most unseen-append edges built (readers × unseen appends of a key,
/// summed); beyond it the check answers undecided rather than run long.
const MAX_UNSEEN_EDGES: usize = 50_000_000;

/// What the check found.
pub enum PrefixLists {
    /// Prefix consistent.
    Valid,
    /// A cycle of the begin/commit graph, as a dependency cycle.
    Invalid(Cycle),
    /// Too large to decide within the limit, with the reason.
    Unknown(String),
}

/// One edge of the begin/commit graph and what justifies it.
#[derive(Clone, Copy)]
enum Why {
    /// `s(t) → c(t)`.
    Own,
    /// An edge of Elle's graph between two transactions, with its rels.
    Inferred(OpId, OpId, Rels),
    /// `r` did not see `w`'s unobserved append to `key` (`w`'s mop index).
    Unseen { r: OpId, w: OpId, key: KeyId, mop: u32 },
}

fn begin(t: OpId) -> u32 {
    2 * t
}

fn commit(t: OpId) -> u32 {
    2 * t + 1
}

/// Decides prefix consistency of a list-append history from Elle's
/// inferred graph (`graph`, over completion ops) and its explainer.
pub fn check(h: &History, graph: &Graph, explainer: &dyn Explain) -> PrefixLists {
    let n = h.ops.len();
    let mut edges: Vec<(u32, u32, Why)> = Vec::new();
    for t in 0..n as OpId {
        edges.push((begin(t), commit(t), Why::Own));
        let (targets, rels) = graph.out(t);
        for (&b, &r) in targets.iter().zip(rels) {
            push_inferred(&mut edges, t, b, r);
        }
    }
    for e in order::process_edges(h) {
        edges.push((commit(e.from), begin(e.to), Why::Inferred(e.from, e.to, rel::PROCESS)));
    }
    if let Err(why) = unseen_appends(h, &mut edges) {
        return PrefixLists::Unknown(why);
    }
    match find_cycle(2 * n, &edges) {
        None => PrefixLists::Valid,
        Some(cycle) => PrefixLists::Invalid(explain(h, explainer, &cycle, &edges)),
    }
}

/// The begin/commit edges of one inferred edge `a → b`.
fn push_inferred(edges: &mut Vec<(u32, u32, Why)>, a: OpId, b: OpId, r: Rels) {
    if r & (rel::WR | rel::PROCESS) != 0 {
        edges.push((commit(a), begin(b), Why::Inferred(a, b, r & (rel::WR | rel::PROCESS))));
    }
    if r & rel::WW != 0 {
        edges.push((commit(a), commit(b), Why::Inferred(a, b, rel::WW)));
    }
    if r & rel::RW != 0 {
        edges.push((begin(a), commit(b), Why::Inferred(a, b, rel::RW)));
    }
}

/// `s(r) → c(w)` for every committed append `w` no read observed and every
/// other committed transaction `r` that read the key before appending to it.
fn unseen_appends(h: &History, edges: &mut Vec<(u32, u32, Why)>) -> Result<(), String> {
    let mut seen: FxHashSet<(KeyId, i64)> = FxHashSet::default();
    let mut readers: rustc_hash::FxHashMap<KeyId, Vec<OpId>> = rustc_hash::FxHashMap::default();
    for (t, op) in h.ops.iter().enumerate() {
        if !op.is_ok() {
            continue;
        }
        let mut appended: FxHashSet<KeyId> = FxHashSet::default();
        for m in h.mops_of(op) {
            match m.f {
                MopFn::Read => {
                    seen.extend(h.list(m.value).iter().map(|&e| (m.key, e)));
                    if !appended.contains(&m.key) {
                        readers.entry(m.key).or_default().push(t as OpId);
                    }
                }
                _ => {
                    appended.insert(m.key);
                }
            }
        }
    }
    let mut budget = MAX_UNSEEN_EDGES;
    for (w, op) in h.ops.iter().enumerate().filter(|(_, o)| o.is_ok()) {
        for (i, m) in h.mops_of(op).iter().enumerate() {
            let crate::history::MopValue::Int(v) = m.value else { continue };
            if m.f != MopFn::Append || seen.contains(&(m.key, v)) {
                continue;
            }
            for &r in readers.get(&m.key).map(Vec::as_slice).unwrap_or_default() {
                if r as usize == w {
                    continue;
                }
                budget = budget.checked_sub(1).ok_or_else(|| {
                    format!("more than {MAX_UNSEEN_EDGES} reader/unread-append pairs; prefix consistency not decided")
                })?;
                edges.push((begin(r), commit(w as OpId), Why::Unseen { r, w: w as OpId, key: m.key, mop: i as u32 }));
            }
        }
    }
    Ok(())
}

/// A cycle of the graph, as indices into `edges`, or `None` when acyclic
/// (Kahn's algorithm; a cycle is then walked among the nodes left).
fn find_cycle(nodes: usize, edges: &[(u32, u32, Why)]) -> Option<Vec<usize>> {
    let mut offsets = vec![0u32; nodes + 1];
    for &(a, _, _) in edges {
        offsets[a as usize + 1] += 1;
    }
    for i in 0..nodes {
        offsets[i + 1] += offsets[i];
    }
    let mut out = vec![0u32; edges.len()];
    let mut fill = offsets.clone();
    let mut indegree = vec![0u32; nodes];
    for (i, &(a, b, _)) in edges.iter().enumerate() {
        out[fill[a as usize] as usize] = i as u32;
        fill[a as usize] += 1;
        indegree[b as usize] += 1;
    }
    let succ = |v: usize| out[offsets[v] as usize..offsets[v + 1] as usize].iter().map(|&i| i as usize);
    let mut queue: Vec<usize> = (0..nodes).filter(|&v| indegree[v] == 0).collect();
    let mut done = vec![false; nodes];
    while let Some(v) = queue.pop() {
        done[v] = true;
        for e in succ(v) {
            let b = edges[e].1 as usize;
            indegree[b] -= 1;
            if indegree[b] == 0 {
                queue.push(b);
            }
        }
    }
    // Nodes left reach a cycle, or lie on one; peel those with no edge to
    // another node left (they only hang below a cycle), so that every node
    // left has one, then walk them until one repeats.
    let mut outdegree = vec![0u32; nodes];
    let mut pred_offsets = vec![0u32; nodes + 1];
    for &(a, b, _) in edges {
        if !done[a as usize] && !done[b as usize] {
            outdegree[a as usize] += 1;
            pred_offsets[b as usize + 1] += 1;
        }
    }
    for i in 0..nodes {
        pred_offsets[i + 1] += pred_offsets[i];
    }
    let mut preds = vec![0u32; pred_offsets[nodes] as usize];
    let mut fill = pred_offsets.clone();
    for &(a, b, _) in edges {
        if !done[a as usize] && !done[b as usize] {
            preds[fill[b as usize] as usize] = a;
            fill[b as usize] += 1;
        }
    }
    let mut stack: Vec<usize> = (0..nodes).filter(|&v| !done[v] && outdegree[v] == 0).collect();
    while let Some(v) = stack.pop() {
        done[v] = true;
        for &p in &preds[pred_offsets[v] as usize..pred_offsets[v + 1] as usize] {
            outdegree[p as usize] -= 1;
            if outdegree[p as usize] == 0 {
                stack.push(p as usize);
            }
        }
    }
    let start = (0..nodes).find(|&v| !done[v])?;
    let mut pos = vec![usize::MAX; nodes];
    let mut path: Vec<usize> = Vec::new();
    let mut v = start;
    loop {
        if pos[v] != usize::MAX {
            return Some(path[pos[v]..].to_vec());
        }
        pos[v] = path.len();
        let e = succ(v).find(|&e| !done[edges[e].1 as usize])?;
        path.push(e);
        v = edges[e].1 as usize;
    }
}

/// The dependency cycle behind a begin/commit cycle: its transactions, each
/// step justified, named by Elle's classification.
fn explain(h: &History, explainer: &dyn Explain, cycle: &[usize], edges: &[(u32, u32, Why)]) -> Cycle {
    let mut ops = Vec::new();
    let mut steps = Vec::new();
    for &e in cycle {
        match edges[e].2 {
            Why::Own => {}
            Why::Inferred(a, b, r) => {
                ops.push(a);
                let step = explainer.explain(h, a, b, r).or_else(|| order::explain(h, a, b, r));
                steps.push(step.unwrap_or(Step::Process { process: h.op(a).process }));
            }
            Why::Unseen { r, w, key, mop } => {
                ops.push(r);
                steps.push(unseen_step(h, r, w, key, mop));
            }
        }
    }
    let rels: Vec<Rels> = steps.iter().map(Step::rel).collect();
    let anomaly = classify(&rels).unwrap_or_else(|| "G-single-item".into());
    Cycle { ops, steps, anomaly }
}

/// `r` read `key` without `w`'s append: an rw step from the last element
/// `r` saw to `w`'s value.
fn unseen_step(h: &History, r: OpId, w: OpId, key: KeyId, mop: u32) -> Step {
    let rmops = h.mops_of(h.op(r));
    let read = rmops.iter().position(|m| m.f == MopFn::Read && m.key == key);
    let value = read.and_then(|i| h.list(rmops[i].value).last().copied());
    let value2 = match h.mops_of(h.op(w))[mop as usize].value {
        crate::history::MopValue::Int(v) => Some(v),
        _ => None,
    };
    Step::Rw { key, value, value2, a_mop: read.map(|i| i as u32), b_mop: Some(mop) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_node_cycle_is_found() {
        let edges = vec![(0, 1, Why::Own), (1, 0, Why::Own)];
        assert!(find_cycle(2, &edges).is_some());
        let edges = vec![(0, 1, Why::Own), (1, 2, Why::Own)];
        assert!(find_cycle(3, &edges).is_none());
        // A node hanging below the cycle, visited first from it.
        let edges = vec![(0, 3, Why::Own), (0, 1, Why::Own), (1, 2, Why::Own), (2, 0, Why::Own)];
        assert_eq!(find_cycle(4, &edges).map(|c| c.len()), Some(3));
    }
}
