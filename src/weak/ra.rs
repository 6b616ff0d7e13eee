//! Read atomic's forced edges in `O(n^{3/2})` (weak.md §3.3).
//!
//! The premise: `t₂` precedes the reader `t₃` by one `so` or `wr` step and
//! writes `x`, which `t₃` read from `t₁ ≠ t₂`; then `t₂ → t₁`.
//!
//! * **so**: walking each session, `lastW[x]` is the latest earlier
//!   transaction of the session writing `x`; earlier writers reach it by
//!   `so`, so it is the only edge needed.
//! * **wr**: for each writer `t₂` that `t₃` read from and each key both
//!   `t₂` writes and `t₃` reads (iterating the smaller side), an edge to each
//!   other writer `t₃` read that key from.

use super::front::{Front, TxnId, BOTTOM};
use super::{Forced, Kind};
use crate::history::KeyId;
use rustc_hash::FxHashMap;

/// Appends read atomic's forced edges of `f` (with resolved writers `wr`,
/// one per read) to `out`.
pub fn forced(f: &Front, wr: &[TxnId], out: &mut Vec<Forced>) {
    // The so premise.
    let mut last_w: FxHashMap<KeyId, TxnId> = FxHashMap::default();
    let mut read_from: Vec<TxnId> = Vec::new();
    for s in &f.sessions {
        last_w.clear();
        for &t3 in s {
            let base = f.read_start[t3 as usize];
            let rs = f.reads_of(t3);
            read_from.clear();
            read_from.extend_from_slice(&wr[base as usize..base as usize + rs.len()]);
            read_from.sort_unstable();
            read_from.dedup();
            for (i, r) in rs.iter().enumerate() {
                let Some(&t2) = last_w.get(&r.key) else { continue };
                let t1 = wr[base as usize + i];
                if t2 != t1 && read_from.binary_search(&t2).is_err() {
                    out.push(Forced {
                        from: t2,
                        to: t1,
                        reader: t3,
                        read: base + i as u32,
                        via: None,
                        kind: Kind::FracturedSo,
                    });
                }
            }
            for &x in f.writes_of(t3) {
                last_w.insert(x, t3);
            }
        }
    }
    // The wr premise.
    let mut by_key: Vec<(KeyId, u32, TxnId)> = Vec::new();
    let mut writers: Vec<(TxnId, u32)> = Vec::new();
    for t3 in 1..f.len() as TxnId {
        let base = f.read_start[t3 as usize];
        let rs = f.reads_of(t3);
        if rs.len() < 2 {
            continue;
        }
        by_key.clear();
        writers.clear();
        for (i, r) in rs.iter().enumerate() {
            let w = wr[base as usize + i];
            by_key.push((r.key, i as u32, w));
            if w != BOTTOM {
                writers.push((w, i as u32));
            }
        }
        by_key.sort_unstable();
        // Each distinct writer with its first read.
        writers.sort_unstable();
        writers.dedup_by_key(|e| e.0);
        for &(t2, q) in &writers {
            let ws = f.writes_of(t2);
            let mut emit = |x: KeyId| {
                let lo = by_key.partition_point(|e| e.0 < x);
                for &(_, p, t1) in by_key[lo..].iter().take_while(|e| e.0 == x) {
                    if t1 != t2 {
                        out.push(Forced {
                            from: t2,
                            to: t1,
                            reader: t3,
                            read: base + p,
                            via: Some(base + q),
                            kind: if q < p { Kind::NonMonotonic } else { Kind::FracturedWr },
                        });
                    }
                }
            };
            if ws.len() <= by_key.len() {
                for &x in ws {
                    emit(x);
                }
            } else {
                let mut prev = None;
                for &(x, _, _) in by_key.iter() {
                    if prev != Some(x) && ws.binary_search(&x).is_ok() {
                        emit(x);
                    }
                    prev = Some(x);
                }
            }
        }
    }
}
