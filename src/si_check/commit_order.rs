//! The database's commit order in the exact check (see
//! [`crate::history::transaction_order`]).
//!
//! A history may carry the order in which the database committed (some of)
//! its transactions. For each key, a writer with a smaller number installed
//! its version first: the polygraph gets one known ww edge from each group
//! of equal numbers to the next ([`edges`]; ties stay open, transitivity
//! does the rest), and a serial or snapshot execution found by a replay
//! explains the history only if it installs every key's versions in an
//! order the numbers allow ([`Installs`]). Transactions the order does not
//! place are unconstrained by it.

use super::polygraph::{Dep, DepEdge};
use super::txns::{TxnId, Txns};
use crate::history::{History, KeyId};
use rustc_hash::FxHashMap;

/// Each transaction's order number, when the history has an order.
fn numbers(h: &History, txns: &Txns) -> Option<Vec<Option<i64>>> {
    let order = h.transaction_order.as_deref()?;
    let by_op = order.numbers(h.ops.len());
    Some(txns.op.iter().map(|&o| by_op.get(o as usize).copied().flatten()).collect())
}

/// Adds to `known` the ww edges the order fixes among the writers of each
/// key: every writer with one number precedes every writer with the next.
pub fn edges(h: &History, txns: &Txns, known: &mut Vec<DepEdge>) {
    let Some(numbers) = numbers(h, txns) else { return };
    // (key, number, writer) of every ordered final write.
    let mut writes: Vec<(u32, i64, TxnId)> = Vec::new();
    for (t, n) in numbers.iter().enumerate() {
        if let Some(n) = *n {
            writes.extend(txns.writes_of(t as TxnId).iter().map(|w| (w.key.0, n, t as TxnId)));
        }
    }
    writes.sort_unstable();
    for key_writes in writes.chunk_by(|a, b| a.0 == b.0) {
        let groups: Vec<&[(u32, i64, TxnId)]> = key_writes.chunk_by(|a, b| a.1 == b.1).collect();
        for pair in groups.windows(2) {
            for a in pair[0] {
                known.extend(pair[1].iter().map(|b| DepEdge::data(a.2, b.2, Dep::Ww, KeyId(a.0))));
            }
        }
    }
}

/// Checks, as a replay installs versions, that each key's ordered writers
/// install theirs in order of their numbers.
pub struct Installs {
    numbers: Vec<Option<i64>>,
    /// Per key: the largest number of a writer installed so far.
    latest: FxHashMap<u32, i64>,
}

impl Installs {
    /// `None` when the history has no order (nothing to check).
    pub fn new(h: &History, txns: &Txns) -> Option<Installs> {
        Some(Installs { numbers: numbers(h, txns)?, latest: FxHashMap::default() })
    }

    /// Records that `t` installs its writes now; `false` when a writer of
    /// one of its keys with a larger number already did.
    pub fn install(&mut self, txns: &Txns, t: TxnId) -> bool {
        let Some(n) = self.numbers.get(t as usize).copied().flatten() else { return true };
        for w in txns.writes_of(t) {
            let latest = self.latest.entry(w.key.0).or_insert(n);
            if *latest > n {
                return false;
            }
            *latest = n;
        }
        true
    }
}
