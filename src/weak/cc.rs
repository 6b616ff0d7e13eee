//! Causal consistency's forced edges with vector clocks, `O(n·k)` clocks
//! (weak.md §3.4).
//!
//! The premise: `t₂` reaches the reader `t₃` in `(so ∪ wr)⁺` and writes `x`,
//! which `t₃` read from `t₁ ≠ t₂`; then `t₂ → t₁`. Transactions are taken
//! in a topological order of `so ∪ wr`; `VC[t][s]` is one past the position
//! of the latest transaction of session `s` that reaches `t`, the join over
//! `t`'s immediate predecessors (its session predecessor and the writers it
//! read). For each read and each session that wrote the key, only the
//! latest such writer below the clock is needed: earlier ones reach it by
//! `so`. A clock is freed once all its successors have taken it, so memory
//! is `k` per transaction on the frontier.

use super::front::{Front, TxnId, BOTTOM};
use super::{Forced, Kind};
use crate::history::KeyId;
use rustc_hash::FxHashMap;

/// Appends causal consistency's forced edges of `f` (resolved writers `wr`,
/// `topo` a topological order of `so ∪ wr`) to `out`. Gives up, with the
/// reason, when the live clocks would exceed `max_clock_entries` entries.
pub fn forced(
    f: &Front,
    wr: &[TxnId],
    topo: &[TxnId],
    max_clock_entries: usize,
    out: &mut Vec<Forced>,
) -> Result<(), String> {
    let n = f.len();
    let k = f.sessions.len();
    // Number of distinct immediate successors of each transaction.
    let mut succ = vec![0u32; n];
    let mut preds: Vec<TxnId> = Vec::new();
    let preds_of = |t3: TxnId, preds: &mut Vec<TxnId>| {
        preds.clear();
        let pos = f.pos[t3 as usize];
        if pos > 0 {
            preds.push(f.sessions[f.session[t3 as usize] as usize][pos as usize - 1]);
        }
        for &w in &wr[f.read_start[t3 as usize] as usize..f.read_start[t3 as usize + 1] as usize] {
            if w != BOTTOM && w != t3 {
                preds.push(w);
            }
        }
        preds.sort_unstable();
        preds.dedup();
    };
    for t in 1..n as TxnId {
        preds_of(t, &mut preds);
        for &p in &preds {
            succ[p as usize] += 1;
        }
    }
    let mut clocks: Vec<Option<Box<[u32]>>> = vec![None; n];
    let mut live = 0usize;
    // Per key, the sessions that wrote it: their writers' positions, and the
    // last edge emitted for that (key, session).
    let mut ws: FxHashMap<KeyId, Vec<Entry>> = FxHashMap::default();
    let mut slot: FxHashMap<(KeyId, u32), usize> = FxHashMap::default();
    let mut first_read: Vec<(TxnId, u32)> = Vec::new();
    // Whether `a (so ∪ wr)⁺ b`, for `b` an immediate predecessor of the
    // transaction being processed (its clock is still held): then the edge
    // `a → b` is implied and need not be added.
    // `a` is given by its session and position.
    let reaches = |(sa, pa): (u32, u32), b: TxnId, b_clock: Option<&[u32]>| -> bool {
        if b == BOTTOM {
            return false;
        }
        if f.session[b as usize] == sa {
            return pa < f.pos[b as usize];
        }
        b_clock.is_some_and(|c| c[sa as usize] > pa)
    };
    for &t3 in topo {
        if t3 == BOTTOM {
            continue;
        }
        let mut vc = vec![0u32; k].into_boxed_slice();
        preds_of(t3, &mut preds);
        for &p in &preds {
            if let Some(c) = &clocks[p as usize] {
                for (a, b) in vc.iter_mut().zip(c.iter()) {
                    *a = (*a).max(*b);
                }
            }
            let s = f.session[p as usize] as usize;
            vc[s] = vc[s].max(f.pos[p as usize] + 1);
        }
        let base = f.read_start[t3 as usize];
        let rs = f.reads_of(t3);
        // Each distinct writer read, with its first read (sorted by writer).
        first_read.clear();
        first_read.extend((0..rs.len()).map(|i| (wr[base as usize + i], i as u32)));
        first_read.sort_unstable();
        first_read.dedup_by_key(|e| e.0);
        let s3 = f.session[t3 as usize];
        for (i, r) in rs.iter().enumerate() {
            let t1 = wr[base as usize + i];
            let Some(list) = ws.get_mut(&r.key) else { continue };
            let t1_clock = clocks[t1 as usize].as_deref();
            for e in list.iter_mut() {
                let s = &e.session;
                let lim = vc[*s as usize];
                // Usually every writer so far is visible: no search needed.
                let p2 = if e.last_pos < lim {
                    e.last_pos
                } else {
                    match e.positions.partition_point(|&p| p < lim) {
                        0 => continue,
                        idx => e.positions[idx - 1],
                    }
                };
                let t2 = if p2 == e.last_pos { e.last_txn } else { f.sessions[*s as usize][p2 as usize] };
                // The same edge as this entry's previous one adds nothing.
                if t2 == t1 || e.emitted == (t2, t1) || reaches((*s, p2), t1, t1_clock) {
                    continue;
                }
                e.emitted = (t2, t1);
                let read_t2 = first_read.binary_search_by_key(&t2, |e| e.0).ok().map(|k| first_read[k].1);
                let kind = match read_t2 {
                    Some(q) if (q as usize) < i => Kind::NonMonotonic,
                    Some(_) => Kind::FracturedWr,
                    None if *s == s3 => Kind::FracturedSo,
                    None => Kind::Causal,
                };
                out.push(Forced {
                    from: t2,
                    to: t1,
                    reader: t3,
                    read: base + i as u32,
                    via: read_t2.map(|q| base + q),
                    kind,
                });
            }
        }
        // The predecessors' clocks were needed for the lookups; release
        // those no other successor needs.
        for &p in &preds {
            succ[p as usize] -= 1;
            if succ[p as usize] == 0 && clocks[p as usize].take().is_some() {
                live -= 1;
            }
        }
        for &x in f.writes_of(t3) {
            let list = ws.entry(x).or_default();
            let at = *slot.entry((x, s3)).or_insert_with(|| {
                list.push(Entry {
                    session: s3,
                    last_pos: u32::MAX,
                    last_txn: BOTTOM,
                    emitted: (BOTTOM, BOTTOM),
                    positions: Vec::new(),
                });
                list.len() - 1
            });
            let e = &mut list[at];
            e.positions.push(f.pos[t3 as usize]);
            e.last_pos = f.pos[t3 as usize];
            e.last_txn = t3;
        }
        if succ[t3 as usize] > 0 {
            clocks[t3 as usize] = Some(vc);
            live += 1;
            if live.saturating_mul(k) > max_clock_entries {
                return Err(format!(
                    "causal consistency needs {live} live vector clocks of {k} sessions, over the budget of {max_clock_entries} entries"
                ));
            }
        }
    }
    Ok(())
}

/// The writers of one key in one session, as the causal lookups need them:
/// the latest inline (the common case touches nothing else).
struct Entry {
    session: u32,
    /// Position of the session's latest writer of the key (`u32::MAX` none).
    last_pos: u32,
    /// That writer.
    last_txn: TxnId,
    /// The last edge emitted from this entry.
    emitted: (TxnId, TxnId),
    /// Positions of all the session's writers of the key, increasing.
    positions: Vec<u32>,
}
