//! The serial execution a valid verdict rests on, for callers that need one
//! ([`super::ExactOptions::keep_serial`]: `isolde analyze --follow` collects
//! old transactions by it).
//!
//! The serial replay finds one directly. When the check needed more (the
//! replay under the edges pruning derived, or the solver), the verdict
//! rests on an acyclic graph: the known and derived edges, one side of each
//! constraint, the writers picked for ambiguous reads. Under
//! serializability every dependency is an edge from a commit to a begin,
//! so ordering the transactions by the position of their commit in a
//! topological order of that graph puts every writer before its readers,
//! every write order in place, and every reader before the writer that
//! overwrote what it read: a serial execution. It is confirmed by the
//! definition itself ([`super::serial::explains`]) before anyone gets it,
//! so a slip here costs the caller the order, never a wrong one.
//!
//! Under snapshot isolation (and prefix consistency) the graph allows
//! overlapping transactions, so there is no serial execution to take from
//! it. A topological order of its begin and commit nodes is an execution
//! at that level all the same: the order of its commits is kept instead
//! (confirmed by [`super::snapshot::explains`]). `--follow` collects by it
//! as by a serial execution: every transaction reads versions committed
//! before it began, so before it in that order, and the last version of a
//! key is the last one committed.
//!
//! ## Settling the order of unread writes
//! Whatever found the execution, the versions nobody read may come in any
//! order among themselves: between two versions some transaction read
//! (or after the last one) a run of unread versions can be permuted, so
//! long as each comes after the readers of the read version before the run
//! and before the writer of the read version after it. Which of them is
//! the key's last version is then arbitrary, and `--follow` takes the
//! last version as the key's state when it forgets the transactions; a
//! later read shows which one the database really kept. [`settle`]
//! reorders each run by when its writers completed (databases commit
//! before they answer, so the one that answered last is the likeliest to
//! have committed last): a topological order, earliest completion first,
//! of the execution's edges with the runs' internal order dropped,
//! confirmed by the definition like the rest.
//!
//! Written by hand: a topological sort over the graph the check built.

use super::guess::Rows;
use super::polygraph::{commit, order_pairs, DepEdge, Polygraph};
use super::txns::{Source, TxnId, Txns};
use super::{prune, serial, snapshot, Level, Semantics};
use crate::history::{History, OpId};

/// For each constraint of `g`, whether its first chain comes first in
/// `order` (each transaction once): the write order `order` implies.
pub(super) fn sides_by_order(g: &Polygraph, order: &[TxnId]) -> Vec<bool> {
    let mut pos = vec![u32::MAX; g.n];
    for (i, &t) in order.iter().enumerate() {
        pos[t as usize] = i as u32;
    }
    let head_pos = |c: u32| g.chain(c).first().map_or(u32::MAX, |&t| pos[t as usize]);
    g.constraints.iter().map(|c| head_pos(c.a) < head_pos(c.b)).collect()
}

/// The edges of the sides `a_first` picks for the constraints `open`.
pub(super) fn chosen_sides(g: &Polygraph, open: &[u32], a_first: &[bool]) -> Vec<DepEdge> {
    let mut out = Vec::new();
    let mut side = Vec::new();
    for &c in open {
        g.side(&g.constraints[c as usize], a_first[c as usize], &mut side);
        out.extend_from_slice(&side);
    }
    out
}

/// The serial execution of `txns` (completion ops, in order) that the
/// acyclic graph of `edges` describes at `level`, ties broken by
/// `priority` (per transaction, lower first); under snapshot isolation
/// and prefix consistency the commit order of the execution it describes,
/// with, per position, whether a later transaction began before that one
/// committed (then nothing may be cut there: see [`snapshot::commit_order`];
/// empty for a serial execution). Empty when the order is not such an
/// execution after all.
pub(super) fn serial_execution(
    h: &History,
    txns: &Txns,
    g: &Polygraph,
    level: Level,
    edges: impl Iterator<Item = DepEdge> + Clone,
    priority: &[u32],
) -> (Vec<OpId>, Vec<bool>) {
    let (offsets, targets) = prune::bc_csr(g, edges);
    let Some(nodes) = prune::topo(&offsets, &targets, priority) else { return Default::default() };
    if level.semantics != Semantics::Serializable {
        if !snapshot::explains(h, txns, level, &nodes) {
            return Default::default();
        }
        let (order, open) = snapshot::commit_order(&nodes);
        return (order.iter().map(|&t| txns.op[t as usize]).collect(), open);
    }
    let order: Vec<TxnId> = nodes.into_iter().filter(|&v| v % 2 == commit(0) % 2).map(|v| v / 2).collect();
    (as_ops(h, txns, level, &order), Vec::new())
}

/// `order` as completion ops, when it is a serial execution at `level`,
/// with its unread writes [`settle`]d.
pub(super) fn as_ops(h: &History, txns: &Txns, level: Level, order: &[TxnId]) -> Vec<OpId> {
    if !serial::explains(h, txns, level.order, order) {
        return Vec::new();
    }
    let settled = settle(h, txns, level, order);
    let order = settled.as_deref().unwrap_or(order);
    order.iter().map(|&t| txns.op[t as usize]).collect()
}

/// The serial execution `order` with each run of unread versions of a key
/// reordered by completion (see the module docs), when that is still a
/// serial execution at `level`; `None` when it is not, or when some read
/// has several candidate writers (their versions are not known here).
pub fn settle(h: &History, txns: &Txns, level: Level, order: &[TxnId]) -> Option<Vec<TxnId>> {
    if !txns.choices.is_empty() {
        return None;
    }
    let n = txns.len();
    let mut edges: Vec<(u32, u32)> = order_pairs(h, txns, level.order);
    // Per key, its versions in the execution's order: (writer, or `None`
    // for the initial state) and who read each.
    let mut versions: rustc_hash::FxHashMap<crate::history::KeyId, Vec<(Option<TxnId>, Vec<TxnId>)>> =
        Default::default();
    for &t in order {
        for r in txns.reads_of(t) {
            let writer = match r.from {
                Source::Init => None,
                Source::Txn(w, _) => Some(w),
                Source::Choice(_) => return None,
            };
            let vs = versions.entry(r.key).or_insert_with(|| vec![(None, Vec::new())]);
            match vs.iter_mut().rev().find(|v| v.0 == writer) {
                Some(v) => v.1.push(t),
                None => return None,
            }
        }
        for w in txns.writes_of(t) {
            versions.entry(w.key).or_insert_with(|| vec![(None, Vec::new())]).push((Some(t), Vec::new()));
        }
    }
    // A gate node per *anchor* (the initial state, a version someone
    // read, or one written by a reader of the version before: a
    // read-modify-write must follow what it read at once): its writer and
    // readers before the gate; the unread run after it, and the next
    // anchor's writer, after the gate.
    let mut gates = n as u32;
    for vs in versions.values() {
        let mut gate: Option<u32> = None;
        let mut run: Vec<TxnId> = Vec::new();
        for (i, (writer, readers)) in vs.iter().enumerate() {
            let rmw = i > 0 && writer.is_some_and(|w| vs[i - 1].1.contains(&w));
            if readers.is_empty() && !rmw && i > 0 {
                run.extend(*writer);
                continue;
            }
            let next = gates;
            gates += 1;
            for &u in &run {
                edges.extend(gate.map(|g| (g, u)));
                edges.extend(writer.map(|w| (u, w)));
            }
            if run.is_empty() {
                if let (Some(g), Some(w)) = (gate, writer) {
                    edges.push((g, *w));
                }
            }
            run.clear();
            let next_writer = vs.get(i + 1).and_then(|v| v.0);
            edges.extend(writer.map(|w| (w, next)));
            for &r in readers {
                edges.extend(writer.map(|w| (w, r)));
                if Some(r) != next_writer {
                    edges.push((r, next));
                }
            }
            gate = Some(next);
        }
        edges.extend(gate.into_iter().flat_map(|g| run.iter().map(move |&u| (g, u))));
    }
    let settled = by_completion(gates as usize, n, &edges)?;
    serial::explains(h, txns, level.order, &settled).then_some(settled)
}

/// A topological order of the transactions among `nodes` nodes (the
/// first `txns` of them transactions, numbered in completion order; the
/// rest gates), built from the end: of the nodes whose successors are all
/// placed, a gate first, else the transaction that completed last. So the
/// last place of each run goes to the latest completion that can take it
/// (a greedy order from the front would hand it to whichever writer an
/// edge on another key held back longest).
fn by_completion(nodes: usize, txns: usize, edges: &[(u32, u32)]) -> Option<Vec<TxnId>> {
    // Predecessor rows (the edges reversed) and out-degrees.
    let preds = Rows::of(nodes, edges.iter().map(|&(a, b)| (b, a)));
    let mut outdeg = vec![0u32; nodes];
    for &(a, _) in edges {
        outdeg[a as usize] += 1;
    }
    let key = |v: u32| if (v as usize) < txns { (0, v) } else { (1, v) };
    let mut ready: std::collections::BinaryHeap<_> =
        (0..nodes as u32).filter(|&v| outdeg[v as usize] == 0).map(key).collect();
    let mut out = Vec::with_capacity(txns);
    while let Some((_, v)) = ready.pop() {
        if (v as usize) < txns {
            out.push(v);
        }
        for &a in preds.row(v) {
            outdeg[a as usize] -= 1;
            if outdeg[a as usize] == 0 {
                ready.push(key(a));
            }
        }
    }
    out.reverse();
    (out.len() == txns).then_some(out)
}

/// The serial execution a replay's `order` stands for, given the edges
/// `base` it was checked under: the order itself when it is one, else the
/// order of the graph its write order implies.
pub(super) fn from_replay(
    h: &History,
    txns: &Txns,
    g: &Polygraph,
    level: Level,
    base: &[DepEdge],
    order: &[TxnId],
) -> (Vec<OpId>, Vec<bool>) {
    let direct = as_ops(h, txns, level, order);
    if !direct.is_empty() {
        return (direct, Vec::new());
    }
    let a_first = sides_by_order(g, order);
    let all: Vec<u32> = (0..g.constraints.len() as u32).collect();
    let sides = chosen_sides(g, &all, &a_first);
    let mut rank = vec![0u32; g.n];
    for (i, &t) in order.iter().enumerate() {
        rank[t as usize] = i as u32;
    }
    serial_execution(h, txns, g, level, base.iter().copied().chain(sides), &rank)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::si_check::txns::from_edn as history;

    fn level(model: &str) -> Level {
        Level::from_model(model).expect("a level")
    }

    /// Two overlapping blind writes nobody read: the one that answered
    /// last goes last, whatever order it was given in.
    #[test]
    fn unread_writes_settle_in_completion_order() {
        let (h, txns) = history(
            "{:type :invoke, :process 1, :value [[:w :x 1]]}
             {:type :invoke, :process 2, :value [[:w :x 2]]}
             {:type :ok, :process 2, :value [[:w :x 2]]}
             {:type :ok, :process 1, :value [[:w :x 1]]}",
        );
        // Numbered by completion: 0 wrote 2, 1 wrote 1.
        let given = [1, 0];
        let lvl = level("strong-session-serializable");
        assert!(serial::explains(&h, &txns, lvl.order, &given));
        assert_eq!(settle(&h, &txns, lvl, &given), Some(vec![0, 1]));
        assert_eq!(as_ops(&h, &txns, lvl, &given), vec![txns.op[0], txns.op[1]]);
    }

    /// The last place of a run goes to the latest completion that can take
    /// it, even when an edge on another key holds an earlier one back.
    #[test]
    fn the_latest_completion_takes_the_last_place() {
        let (h, txns) = history(
            "{:type :ok, :process 0, :value [[:w :y 1]]}
             {:type :invoke, :process 3, :value [[:r :y nil]]}
             {:type :ok, :process 1, :value [[:w :x 1] [:w :y 2]]}
             {:type :ok, :process 2, :value [[:w :x 2]]}
             {:type :ok, :process 3, :value [[:r :y 1]]}",
        );
        let lvl = level("strong-session-serializable");
        // Numbered by completion: t0 y1, t1 x1 y2, t2 x2, t3 reads y1.
        let given = [0, 3, 2, 1];
        assert!(serial::explains(&h, &txns, lvl.order, &given));
        let settled = settle(&h, &txns, lvl, &given).expect("settles");
        assert_eq!(settled.last(), Some(&2), "x2, written last, ends the run: {settled:?}");
    }

    /// A read fixes its version's place: the unread write must stay before
    /// it, and a read-modify-write stays right after what it read.
    #[test]
    fn read_versions_and_read_modify_writes_stay_put() {
        let (h, txns) = history(
            "{:type :ok, :process 1, :value [[:w :x 1]]}
             {:type :ok, :process 2, :value [[:w :x 2]]}
             {:type :ok, :process 3, :value [[:r :x 1] [:w :x 3]]}
             {:type :ok, :process 4, :value [[:r :x 3]]}",
        );
        let lvl = level("serializable");
        // x2 first (unread), then x1, its read-modify-write, and the reader.
        let given = [1, 0, 2, 3];
        assert!(serial::explains(&h, &txns, lvl.order, &given));
        let settled = settle(&h, &txns, lvl, &given).expect("settles");
        assert!(serial::explains(&h, &txns, lvl.order, &settled));
        let pos = |t: TxnId| settled.iter().position(|&x| x == t).expect("placed");
        assert!(pos(1) < pos(0), "the unread x2 stays before x1, which is read: {settled:?}");
        assert!(!(pos(0)..pos(2)).contains(&pos(1)), "no write of x between x1 and its read-modify-write: {settled:?}");
    }

    /// Reads of repeated values (several candidate writers) are not
    /// settled: their versions are not known here.
    #[test]
    fn ambiguous_reads_are_left_as_found() {
        let (h, txns) = history(
            "{:type :ok, :process 1, :value [[:w :x 1]]}
             {:type :ok, :process 2, :value [[:w :x 1]]}
             {:type :ok, :process 3, :value [[:r :x 1]]}",
        );
        assert!(!txns.choices.is_empty());
        assert_eq!(settle(&h, &txns, level("serializable"), &[0, 1, 2]), None);
    }
}
