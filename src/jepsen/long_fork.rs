//! The long-fork checker (`jepsen.tests.long-fork`).
//!
//! Write transactions `[[:w k v]]` each write one fresh key once; read
//! transactions `[[:r k1 v1] [:r k2 v2] ...]` read a whole group of keys
//! (`-g` keys). Since every key is written once, each value only changes
//! away from `nil`, and under snapshot isolation all reads of a group are
//! totally ordered by the set of keys they saw: one read's non-nil keys
//! contain the other's. Two reads that each saw a write the other missed
//! are a *long fork* (allowed by parallel snapshot isolation, not by SI).
//!
//! Checked as Jepsen does: a key written twice answers `unknown`
//! (`[:multiple-writes k]`), as does a read of other than `-g` keys or two
//! reads of one key seeing different non-nil values (an illegal history).
//! Result map: `:reads-count`, `:early-read-count` (all nil),
//! `:late-read-count` (none nil), and `:forks`, pairs of incomparable reads.
//!
//! Jepsen compares every pair of reads of a group (quadratic). Here the
//! reads of a group are sorted by how many keys they saw, and only
//! neighbours are compared: if each read's view contains the previous one's
//! the views form a chain (inclusion is transitive), and the first
//! neighbours that are incomparable are a fork. So the verdict is Jepsen's
//! and `:forks` lists one incomparable pair per break of the chain rather
//! than every pair. O(n log n).
//!
//! A group size of 0 (elle-cli's default) takes the key count of the first
//! read as the group size.

use super::result::{count, kw, CheckResult, Node, Validity};
use super::{elements, is_nil, name_of, JepsenError, OpType, Ops};
use crate::history::Value;
use rustc_hash::{FxHashMap, FxHashSet};

const EXPECTS: &str = "transactions of micro-ops: writes [[:w k v]] of one key and reads [[:r k v] ...] of a group";

/// One micro-op `[f k v]`: f's name, key, value.
fn mop(v: &Value) -> Option<(&str, &Value, &Value)> {
    match elements(v) {
        Some([f, k, x]) => Some((name_of(f)?, k, x)),
        _ => None,
    }
}

/// Checks a long-fork history with group size `n` (0: inferred).
pub fn check(ops: &Ops, n: usize) -> Result<CheckResult, JepsenError> {
    let values = ops.values();
    let mut written: FxHashSet<&Value> = FxHashSet::default();
    let mut multiple: Option<&Value> = None;
    // Each ok read: its (key, value) pairs sorted by key.
    let mut reads: Vec<(usize, Vec<(&Value, &Value)>)> = Vec::new();
    for i in ops.clients() {
        let o = &ops.ops[i];
        if o.value.is_nil() && o.op_type != OpType::Ok {
            continue;
        }
        let Some(txn) = elements(&values[i]) else { return Err(ops.model_error(i, "long-fork", EXPECTS)) };
        let mut mops = Vec::with_capacity(txn.len());
        for m in txn {
            match mop(m) {
                Some((f @ ("r" | "w"), k, v)) => mops.push((f, k, v)),
                _ => return Err(ops.model_error(i, "long-fork", EXPECTS)),
            }
        }
        let is_read = mops.iter().all(|(f, _, _)| *f == "r");
        let is_write = mops.len() == 1 && mops[0].0 == "w";
        if o.op_type == OpType::Invoke && is_write && !written.insert(mops[0].1) && multiple.is_none() {
            multiple = Some(mops[0].1);
        }
        if o.op_type == OpType::Ok && is_read {
            let mut kv: Vec<(&Value, &Value)> = mops.iter().map(|(_, k, v)| (*k, *v)).collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            reads.push((i, kv));
        }
    }
    let early = reads.iter().filter(|(_, kv)| kv.iter().all(|(_, v)| is_nil(v))).count();
    let late = reads.iter().filter(|(_, kv)| kv.iter().all(|(_, v)| !is_nil(v))).count();
    let base = vec![
        (kw("reads-count"), count(reads.len())),
        (kw("early-read-count"), count(early)),
        (kw("late-read-count"), count(late)),
    ];
    if let Some(k) = multiple {
        let mut e = base;
        e.push((kw("error"), Node::Vector(vec![kw("multiple-writes"), crate::reports::tree::value(k)])));
        return Ok(CheckResult::new(Validity::Unknown, e));
    }
    let n = if n == 0 { reads.first().map(|(_, kv)| kv.len()).unwrap_or(0) } else { n };
    let mut groups: FxHashMap<Vec<&Value>, Vec<usize>> = FxHashMap::default();
    for (r, (_, kv)) in reads.iter().enumerate() {
        let keys: Vec<&Value> = kv.iter().map(|(k, _)| *k).collect();
        groups.entry(keys).or_default().push(r);
    }
    let mut groups: Vec<(Vec<&Value>, Vec<usize>)> = groups.into_iter().collect();
    groups.sort_by(|a, b| a.1[0].cmp(&b.1[0]));
    let mut forks = Vec::new();
    for (keys, members) in &groups {
        let distinct: FxHashSet<&&Value> = keys.iter().collect();
        if keys.len() != n || distinct.len() != keys.len() {
            let op = &ops.ops[reads[members[0]].0];
            let mut e = base;
            e.insert(
                0,
                (
                    kw("error"),
                    Node::Str(format!(
                        "{}:{}: every read in this history should have observed exactly {n} distinct keys, but this read observed {}",
                        ops.source,
                        op.line,
                        keys.len()
                    )),
                ),
            );
            return Ok(CheckResult::new(Validity::Unknown, e));
        }
        let mut sorted = members.clone();
        let seen = |r: usize| reads[r].1.iter().filter(|(_, v)| !is_nil(v)).count();
        sorted.sort_by_key(|&r| (seen(r), r));
        for w in sorted.windows(2) {
            let (a, b) = (&reads[w[0]].1, &reads[w[1]].1);
            // a saw no more keys than b: comparable iff a's view is in b's.
            let mut fork = false;
            for ((_, va), (_, vb)) in a.iter().zip(b.iter()) {
                if va == vb || is_nil(va) {
                    continue;
                }
                if is_nil(vb) {
                    fork = true;
                    continue;
                }
                let op = &ops.ops[reads[w[0]].0];
                let mut e = base;
                e.insert(
                    0,
                    (
                        kw("error"),
                        Node::Str(format!(
                            "{}:{}: two reads of one key saw distinct values ({va} and {vb}); this checker assumes one write per key",
                            ops.source, op.line
                        )),
                    ),
                );
                return Ok(CheckResult::new(Validity::Unknown, e));
            }
            if fork {
                forks.push(Node::Vector(vec![ops.node(reads[w[0]].0), ops.node(reads[w[1]].0)]));
            }
        }
    }
    let mut e = base;
    if forks.is_empty() {
        Ok(CheckResult::new(Validity::Valid, e))
    } else {
        e.push((kw("forks"), Node::Vector(forks)));
        Ok(CheckResult::new(Validity::Invalid, e))
    }
}
