//! Whether a sequence of begin and commit events is an execution of the
//! history under snapshot isolation or prefix consistency: the definition
//! itself, checked in one pass, independent of the polygraph.
//!
//! Under both semantics one total order of begin and commit events exists
//! in which each transaction reads, for every key it reads before writing
//! it, the version of the transaction that committed last on that key
//! before it began (its snapshot; `nil` when none did). Snapshot isolation
//! adds the write-conflict rule: two transactions that write a common key
//! never overlap (no other writer of the key commits between a writer's
//! begin and its commit). Session order puts each session's transactions
//! one after another (a commit before the next begin), realtime order puts
//! a transaction that completed before another was invoked first (its
//! commit before the other's begin).
//!
//! The exact check's model (an acyclic begin/commit graph) describes such
//! an execution: any topological order of its nodes. `--follow` collects
//! old transactions by the commit order of one
//! ([`super::model_order::serial_execution`]); this check confirms it, so a
//! slip in the model costs the caller the order, never a wrong one.
//!
//! Written by hand: the definition over this crate's transactions.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::polygraph::commit;
use super::serial::{reads_version, spans};
use super::txns::{TxnId, Txns};
use super::{Level, OrderKind, Semantics};
use crate::history::History;

/// Whether `events` (begin and commit nodes, `2t` and `2t + 1`, each once)
/// is an execution of `txns` at `level` (snapshot isolation or prefix
/// consistency; `false` for serializability, which [`super::serial::explains`]
/// checks on a transaction order).
pub fn explains(h: &History, txns: &Txns, level: Level, events: &[u32]) -> bool {
    let n = txns.len();
    if events.len() != 2 * n || level.semantics == Semantics::Serializable {
        return false;
    }
    let conflicts = level.semantics == Semantics::SnapshotIsolation;
    // Per transaction: the position of its begin, `NONE` before it.
    const NONE: u32 = u32::MAX;
    let mut began = vec![NONE; n];
    let mut committed = vec![false; n];
    // Per key: its last committer and the position of that commit.
    let mut current: FxHashMap<u32, (TxnId, u32)> = FxHashMap::default();
    let mut session_last: FxHashMap<i64, TxnId> = FxHashMap::default();
    let spans = (level.order == OrderKind::Realtime).then(|| spans(h, txns));
    // Realtime: the completions of transactions not committed yet.
    let mut pending: BinaryHeap<Reverse<(u32, TxnId)>> = match &spans {
        Some(sp) => (0..n as TxnId).map(|t| Reverse((sp[t as usize].1, t))).collect(),
        None => BinaryHeap::new(),
    };
    let mut installs = super::commit_order::Installs::new(h, txns);
    for (at, &v) in events.iter().enumerate() {
        let t = v / 2;
        let Some(b) = began.get(t as usize).copied() else { return false };
        if v == commit(t) {
            if b == NONE || std::mem::replace(&mut committed[t as usize], true) {
                return false;
            }
            if installs.as_mut().is_some_and(|i| !i.install(txns, t)) {
                return false;
            }
            for w in txns.writes_of(t) {
                let last = current.insert(w.key.0, (t, at as u32));
                if conflicts && last.is_some_and(|(_, c)| c > b) {
                    return false;
                }
            }
            continue;
        }
        if b != NONE {
            return false;
        }
        began[t as usize] = at as u32;
        if level.order != OrderKind::None {
            // Transactions are numbered in history order: a session's
            // order is that of its transactions' numbers.
            if let Some(p) = session_last.insert(txns.process[t as usize], t) {
                if p > t || !committed[p as usize] {
                    return false;
                }
            }
        }
        if let Some(sp) = &spans {
            while pending.peek().is_some_and(|Reverse((_, p))| committed[*p as usize]) {
                pending.pop();
            }
            if pending.peek().is_some_and(|Reverse((done, p))| *p != t && *done < sp[t as usize].0) {
                return false;
            }
        }
        if !txns.reads_of(t).iter().all(|r| reads_version(txns, r, current.get(&r.key.0).map(|&(w, _)| w))) {
            return false;
        }
    }
    true
}

/// The transactions of `events` in the order of their commits, and per
/// commit whether a transaction was still running after it (begun, not
/// committed): the commits up to a position without one are a prefix of
/// the execution whose transactions all ended before any later one began.
pub fn commit_order(events: &[u32]) -> (Vec<TxnId>, Vec<bool>) {
    let (mut order, mut open) = (Vec::with_capacity(events.len() / 2), Vec::with_capacity(events.len() / 2));
    let mut running = 0usize;
    for &v in events {
        if v == commit(v / 2) {
            running = running.saturating_sub(1);
            order.push(v / 2);
            open.push(running > 0);
        } else {
            running += 1;
        }
    }
    (order, open)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::si_check::polygraph::begin;
    use crate::si_check::txns::from_edn as history;

    fn level(model: &str) -> Level {
        Level::from_model(model).expect("a level")
    }

    /// A write skew: two transactions read both keys' initial state and
    /// each writes one. They must overlap.
    const WRITE_SKEW: &str = "{:type :ok, :process 1, :value [[:r :x nil] [:r :y nil] [:w :x 1]]}
         {:type :ok, :process 2, :value [[:r :x nil] [:r :y nil] [:w :y 1]]}";

    #[test]
    fn a_write_skew_is_an_execution_only_with_both_running_at_once() {
        let (h, txns) = history(WRITE_SKEW);
        let si = level("strong-session-snapshot-isolation");
        let overlapping = [begin(0), begin(1), commit(0), commit(1)];
        assert!(explains(&h, &txns, si, &overlapping));
        assert!(!explains(&h, &txns, si, &[begin(0), commit(0), begin(1), commit(1)]));
        assert!(!explains(&h, &txns, level("strong-session-serializable"), &overlapping));
        assert_eq!(commit_order(&overlapping), (vec![0, 1], vec![true, false]));
    }

    /// A lost update: two writers of a key that overlap break the write
    /// rule of snapshot isolation, not prefix consistency.
    #[test]
    fn overlapping_writers_of_a_key_are_prefix_consistent_only() {
        let (h, txns) = history(
            "{:type :ok, :process 1, :value [[:r :x nil] [:w :x 1]]}
             {:type :ok, :process 2, :value [[:r :x nil] [:w :x 2]]}",
        );
        let events = [begin(0), begin(1), commit(0), commit(1)];
        assert!(!explains(&h, &txns, level("snapshot-isolation"), &events));
        assert!(explains(&h, &txns, level("prefix"), &events));
    }

    /// Session order: a session's next transaction begins after its
    /// previous one committed, in history order.
    #[test]
    fn sessions_run_one_transaction_at_a_time() {
        let (h, txns) = history(
            "{:type :ok, :process 1, :value [[:w :x 1]]}
             {:type :ok, :process 1, :value [[:r :x 1]]}",
        );
        let si = level("strong-session-snapshot-isolation");
        assert!(explains(&h, &txns, si, &[begin(0), commit(0), begin(1), commit(1)]));
        assert!(!explains(&h, &txns, si, &[begin(1), begin(0), commit(0), commit(1)]));
        assert!(!explains(&h, &txns, si, &[begin(0), commit(0), begin(1)]));
    }
}
