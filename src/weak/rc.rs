//! Read committed's forced edges in `O(n^{3/2})` (weak.md §3.2, with the FIX).
//!
//! The premise: a transaction `t₃` that read `t₂` (at position `q`) and
//! later (at `p > q`) read `x` from `t₁ ≠ t₂`, where `t₂` writes `x`, forces
//! `t₂ → t₁`. Per reader, a backward scan keeps for every key read further
//! on the writer `a` of its earliest later read and `b`, the earliest later
//! writer other than `a`; at the first read from each writer `t₂`, the edge
//! goes to `a`, or to `b` when `a` is `t₂` itself. Edges to later reads of
//! the same key are implied: those reads are chained from the earliest one
//! by their own edges. AWDIT keeps "the two earliest reads" instead, which
//! may both come from `t₂` and then loses the edge (weak.md's FIX).

use super::front::{Front, TxnId, BOTTOM};
use super::{Forced, Kind};
use crate::history::{KeyId, NONE};
use rustc_hash::FxHashMap;

/// Appends read committed's forced edges of `f` (with resolved writers
/// `wr`, one per read) to `out`.
pub fn forced(f: &Front, wr: &[TxnId], out: &mut Vec<Forced>) {
    let mut first: FxHashMap<TxnId, u32> = FxHashMap::default();
    // key -> (a, position of a's earliest later read, b, its position)
    let mut later: FxHashMap<KeyId, (TxnId, u32, TxnId, u32)> = FxHashMap::default();
    for t3 in 1..f.len() as TxnId {
        let base = f.read_start[t3 as usize];
        let rs = f.reads_of(t3);
        if rs.len() < 2 {
            continue;
        }
        first.clear();
        for i in 0..rs.len() as u32 {
            first.entry(wr[(base + i) as usize]).or_insert(i);
        }
        later.clear();
        for i in (0..rs.len() as u32).rev() {
            let t2 = wr[(base + i) as usize];
            if t2 != BOTTOM && first.get(&t2) == Some(&i) {
                let ws = f.writes_of(t2);
                let mut emit = |&(a, pa, b, pb): &(TxnId, u32, TxnId, u32)| {
                    let (t1, p) = if a != t2 { (a, pa) } else { (b, pb) };
                    if t1 != NONE {
                        out.push(Forced {
                            from: t2,
                            to: t1,
                            reader: t3,
                            read: base + p,
                            via: Some(base + i),
                            kind: Kind::NonMonotonic,
                        });
                    }
                };
                if ws.len() <= later.len() {
                    for x in ws {
                        if let Some(e) = later.get(x) {
                            emit(e);
                        }
                    }
                } else {
                    for (x, e) in later.iter() {
                        if ws.binary_search(x).is_ok() {
                            emit(e);
                        }
                    }
                }
            }
            let x = rs[i as usize].key;
            match later.get_mut(&x) {
                None => {
                    later.insert(x, (t2, i, NONE, 0));
                }
                Some(e) if e.0 == t2 => e.1 = i,
                Some(e) => *e = (t2, i, e.0, e.1),
            }
        }
    }
}
