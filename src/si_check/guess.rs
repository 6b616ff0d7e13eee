//! A serial order guessed by replaying the history, to decide valid
//! histories without search (or to start the solver from a good order).
//!
//! A serializable history has a serial order in which every transaction
//! reads, for each key, the value of the last writer before it. Such an
//! order is found greedily most of the time by *replaying*: keep the current
//! writer of every key; a transaction is *ready* when its known
//! predecessors (session order, realtime, write-read, ... every known edge
//! of the polygraph) are placed and each of its reads reads the current
//! writer of its key (for a read of a repeated value: one of its candidate
//! writers); among the ready ones take the earliest (by the time estimate)
//! that *clobbers* nothing, that is, whose writes do not replace a version
//! some unplaced transaction still has to read. Placing a transaction makes
//! it the current writer of the keys it writes. A writer of a version
//! someone reads also waits, while another transaction is ready, for the
//! unplaced writers of the same key whose versions nobody reads: such a
//! blind write often has to come before the read version.
//!
//! When every transaction is placed ready, the replay is a serial execution
//! explaining every read. The product never answers valid on that alone:
//! the caller turns the order into a decision for every write-order
//! constraint and checks the result against the polygraph, as it does the
//! solver's model. When the replay gets stuck (no ready transaction: the
//! history is not serializable, or greed chose badly), it goes on placing
//! transactions whose predecessors are placed, earliest first, so that the
//! order is still a good first order for the solver, whose phases follow it.
//!
//! Cost: every read is indexed by the version it needs, so placing a
//! transaction touches its reads, its writes and the readers of the
//! versions it replaces; with a bounded scan of ready transactions per step
//! the replay is `O((n + reads + edges) log n)`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::polygraph::DepEdge;
use super::txns::{Source, TxnId, Txns};

/// Ready transactions examined per step for one that clobbers nothing.
const SCAN: usize = 32;

/// The initial state's "writer".
const INIT: TxnId = TxnId::MAX;

/// A replayed order of all transactions.
pub struct Guess {
    /// Every transaction once.
    pub order: Vec<TxnId>,
    /// Whether every transaction was placed with each read reading the
    /// current writer of its key (a serial execution, to be checked).
    pub replayed: bool,
    /// Orders `(a, b)` ("`a` before `b`") that the places where the replay
    /// got stuck suggest (see [`diagnose`]): guesses, not facts, for the
    /// caller to replay again under.
    pub hints: Vec<Hint>,
}

/// An order `(a, b)` ("`a` before `b`") a stuck replay suggests, with the
/// other way out of the same corner for when the first would close a cycle.
pub type Hint = [(TxnId, TxnId); 2];

/// Hints collected per replay.
const MAX_HINTS: usize = 4;

/// Replays `txns` under `edges` (the polygraph's known edges, or those
/// and the edges pruning derived from them), earliest first by `priority`
/// (per transaction). `None` when the edges are cyclic.
pub fn serial_order(txns: &Txns, edges: &[DepEdge], priority: &[u32]) -> Option<Guess> {
    let n = txns.len();
    // Known predecessors, as transaction-level precedence.
    let mut preds = vec![0u32; n];
    let mut succ_start = vec![0u32; n + 1];
    for e in edges {
        if e.from != e.to {
            succ_start[e.from as usize + 1] += 1;
        }
    }
    for i in 0..n {
        succ_start[i + 1] += succ_start[i];
    }
    let mut succ = vec![0 as TxnId; succ_start[n] as usize];
    let mut fill = succ_start.clone();
    for e in edges {
        if e.from != e.to {
            succ[fill[e.from as usize] as usize] = e.to;
            fill[e.from as usize] += 1;
            preds[e.to as usize] += 1;
        }
    }

    // Reads, indexed by the (key, writer) versions that satisfy them.
    let mut wanted: FxHashMap<(u32, TxnId), Vec<TxnId>> = FxHashMap::default();
    let mut unsat = vec![0u32; n];
    for t in 0..n as TxnId {
        for r in &txns.reads[txns.read_start[t as usize] as usize..txns.read_start[t as usize + 1] as usize] {
            let k = r.key.0;
            match r.from {
                Source::Init => wanted.entry((k, INIT)).or_default().push(t),
                Source::Txn(w, _) => wanted.entry((k, w)).or_default().push(t),
                Source::Choice(j) => {
                    for &w in &txns.choices[j as usize].cands {
                        wanted.entry((k, w)).or_default().push(t);
                    }
                }
            }
            // Satisfied at first only by the initial state.
            if r.from != Source::Init {
                unsat[t as usize] += 1;
            }
        }
    }
    // Unplaced readers of each version (a reader of a repeated value counts
    // for each candidate).
    let mut pending: FxHashMap<(u32, TxnId), u32> =
        wanted.iter().map(|(&v, readers)| (v, readers.len() as u32)).collect();

    // Unplaced writers of each key whose version of it nobody reads: such a
    // blind write may have to come before a read version of the key, so a
    // writer of a read version waits for them while others are ready.
    let mut blind: FxHashMap<u32, u32> = FxHashMap::default();
    for t in 0..n as TxnId {
        for w in &txns.writes[txns.write_start[t as usize] as usize..txns.write_start[t as usize + 1] as usize] {
            if !wanted.contains_key(&(w.key.0, t)) {
                *blind.entry(w.key.0).or_default() += 1;
            }
        }
    }
    let mut current: FxHashMap<u32, TxnId> = FxHashMap::default();
    let mut placed = vec![false; n];
    let key = |t: TxnId| Reverse((priority[t as usize], t));
    let mut ready: BinaryHeap<Reverse<(u32, TxnId)>> = BinaryHeap::new();
    let mut free: BinaryHeap<Reverse<(u32, TxnId)>> = BinaryHeap::new();
    for t in 0..n as TxnId {
        if preds[t as usize] == 0 {
            free.push(key(t));
            if unsat[t as usize] == 0 {
                ready.push(key(t));
            }
        }
    }
    let writes =
        |t: TxnId| &txns.writes[txns.write_start[t as usize] as usize..txns.write_start[t as usize + 1] as usize];
    let reads = |t: TxnId| &txns.reads[txns.read_start[t as usize] as usize..txns.read_start[t as usize + 1] as usize];
    // Versions `t`'s writes would replace that others still need.
    let clobbers = |t: TxnId, current: &FxHashMap<u32, TxnId>, pending: &FxHashMap<(u32, TxnId), u32>| {
        writes(t)
            .iter()
            .filter(|w| {
                let v = (w.key.0, current.get(&w.key.0).copied().unwrap_or(INIT));
                let own = reads(t).iter().any(|r| r.key.0 == w.key.0) as u32;
                pending.get(&v).copied().unwrap_or(0) > own
            })
            .count()
    };

    // Readers of `t`'s versions still waiting for something else once `t`
    // is placed: placing a writer whose readers cannot follow at once
    // holds its keys for them, and every other writer of those keys has to
    // wait (the usual way a greedy replay paints itself into a corner).
    let mut scratch_dec = vec![0u32; n];
    let mut scratch_got = vec![0u32; n];
    let mut touched: Vec<TxnId> = Vec::new();
    let mut order = Vec::with_capacity(n);
    let mut replayed = true;
    let mut hints: Vec<Hint> = Vec::new();
    let mut scanned: Vec<Reverse<(u32, TxnId)>> = Vec::with_capacity(SCAN);
    while order.len() < n {
        // The earliest ready transaction that clobbers nothing, else the
        // earliest ready one, else (stuck) the earliest free one.
        scanned.clear();
        let mut pick = None;
        let mut patient: Option<((u32, bool, u32), TxnId)> = None;
        while scanned.len() < SCAN {
            let Some(Reverse((p, t))) = ready.pop() else { break };
            if placed[t as usize] || unsat[t as usize] > 0 || preds[t as usize] > 0 {
                continue;
            }
            if clobbers(t, &current, &pending) == 0 {
                let waits = writes(t)
                    .iter()
                    .any(|w| wanted.contains_key(&(w.key.0, t)) && blind.get(&w.key.0).copied().unwrap_or(0) > 0);
                let lag = lagging_readers(
                    t,
                    &succ[succ_start[t as usize] as usize..succ_start[t as usize + 1] as usize],
                    writes(t),
                    &wanted,
                    Progress { placed: &placed, unsat: &unsat, preds: &preds },
                    Scratch { dec: &mut scratch_dec, got: &mut scratch_got, touched: &mut touched },
                );
                if lag == 0 && !waits {
                    pick = Some(t);
                    break;
                }
                let score = (lag, waits, p);
                if patient.is_none_or(|(s, _)| score < s) {
                    patient = Some((score, t));
                }
            }
            scanned.push(Reverse((p, t)));
        }
        let patient = patient.map(|(_, t)| t);
        let t = match pick.or(patient).or_else(|| scanned.first().map(|e| e.0 .1)) {
            Some(t) => t,
            None => {
                replayed = false;
                loop {
                    let Reverse((_, t)) = free.pop()?;
                    if !placed[t as usize] {
                        break t;
                    }
                }
            }
        };
        for e in scanned.drain(..) {
            if e.0 .1 != t {
                ready.push(e);
            }
        }
        let forced = unsat[t as usize] > 0 || (pick.is_none() && patient.is_none());
        if forced && hints.len() < MAX_HINTS {
            let at = Progress { placed: &placed, unsat: &unsat, preds: &preds };
            if let Some(hint) = diagnose(t, txns, &current, &pending, &wanted, &at, 0) {
                if !hints.contains(&hint) {
                    hints.push(hint);
                }
            }
        }
        if unsat[t as usize] > 0 {
            replayed = false;
        }
        placed[t as usize] = true;
        order.push(t);
        for w in writes(t) {
            if !wanted.contains_key(&(w.key.0, t)) {
                if let Some(c) = blind.get_mut(&w.key.0) {
                    *c -= 1;
                }
            }
        }
        // Its reads are no longer pending.
        for r in reads(t) {
            let k = r.key.0;
            let mut done = |w: TxnId| {
                if let Some(c) = pending.get_mut(&(k, w)) {
                    *c -= 1;
                }
            };
            match r.from {
                Source::Init => done(INIT),
                Source::Txn(w, _) => done(w),
                Source::Choice(j) => txns.choices[j as usize].cands.iter().for_each(|&w| done(w)),
            }
        }
        // It becomes the current writer of its keys: readers of the old
        // version lose a satisfied read, readers of the new one gain one.
        for w in writes(t) {
            let k = w.key.0;
            let old = current.insert(k, t).unwrap_or(INIT);
            if old == t {
                continue;
            }
            if let Some(readers) = wanted.get(&(k, old)) {
                for &r in readers {
                    if !placed[r as usize] {
                        unsat[r as usize] += 1;
                    }
                }
            }
            if let Some(readers) = wanted.get(&(k, t)) {
                for &r in readers {
                    if !placed[r as usize] {
                        unsat[r as usize] -= 1;
                        if unsat[r as usize] == 0 && preds[r as usize] == 0 {
                            ready.push(key(r));
                        }
                    }
                }
            }
        }
        for &s in &succ[succ_start[t as usize] as usize..succ_start[t as usize + 1] as usize] {
            preds[s as usize] -= 1;
            if preds[s as usize] == 0 {
                free.push(key(s));
                if unsat[s as usize] == 0 {
                    ready.push(key(s));
                }
            }
        }
    }
    Some(Guess { order, replayed, hints })
}

/// Where the replay stands, for [`lagging_readers`].
struct Progress<'a> {
    placed: &'a [bool],
    unsat: &'a [u32],
    preds: &'a [u32],
}

/// Per-transaction counters [`lagging_readers`] uses and leaves zeroed.
struct Scratch<'a> {
    dec: &'a mut [u32],
    got: &'a mut [u32],
    touched: &'a mut Vec<TxnId>,
}

/// How many unplaced readers of `t`'s versions would still wait for
/// something else (an unsatisfied read, an unplaced predecessor) once `t`
/// is placed. Placing a writer whose readers cannot follow at once holds
/// its keys for them, and every other writer of those keys has to wait:
/// the usual way a greedy replay paints itself into a corner.
fn lagging_readers(
    t: TxnId,
    succs: &[TxnId],
    writes: &[super::txns::Write],
    wanted: &FxHashMap<(u32, TxnId), Vec<TxnId>>,
    at: Progress<'_>,
    sc: Scratch<'_>,
) -> u32 {
    for &s in succs {
        sc.dec[s as usize] += 1;
    }
    sc.touched.clear();
    for w in writes {
        if let Some(rs) = wanted.get(&(w.key.0, t)) {
            for &r in rs {
                if r != t && !at.placed[r as usize] {
                    sc.got[r as usize] += 1;
                    sc.touched.push(r);
                }
            }
        }
    }
    let mut lag = 0;
    for &r in sc.touched.iter() {
        let got = std::mem::take(&mut sc.got[r as usize]);
        if got > 0 && (at.unsat[r as usize] > got || at.preds[r as usize] > sc.dec[r as usize]) {
            lag += 1;
        }
    }
    for &s in succs {
        sc.dec[s as usize] = 0;
    }
    lag
}

/// Why `t` cannot be placed cleanly now (an unsatisfied read, or a write
/// that clobbers a version someone still has to read), as an order the
/// replay should have kept: `(a, b)` says `a` should have come before the
/// placed `b` that is in its way. A read of `w`'s version that `c` has
/// overwrote asks for the reader before `c`; a read whose writer is not
/// placed yet asks what holds that writer back; a write that would clobber
/// `c`'s version asks for the writer before `c` (its readers cannot go
/// first), and one that would clobber the initial state asks for one of
/// its readers before the writer.
fn diagnose(
    t: TxnId,
    txns: &Txns,
    current: &FxHashMap<u32, TxnId>,
    pending: &FxHashMap<(u32, TxnId), u32>,
    wanted: &FxHashMap<(u32, TxnId), Vec<TxnId>>,
    at: &Progress<'_>,
    depth: u32,
) -> Option<Hint> {
    if depth > 8 || at.preds[t as usize] > 0 {
        return None;
    }
    let reads = &txns.reads[txns.read_start[t as usize] as usize..txns.read_start[t as usize + 1] as usize];
    if at.unsat[t as usize] > 0 {
        for r in reads {
            let cur = current.get(&r.key.0).copied();
            match r.from {
                Source::Txn(w, _) if cur != Some(w) => {
                    return if at.placed[w as usize] {
                        // `c` overwrote `w` before `t` read it: `t` before
                        // `c`, or `c` before `w`.
                        cur.filter(|&c| c != t).map(|c| [(t, c), (c, w)])
                    } else {
                        diagnose(w, txns, current, pending, wanted, at, depth + 1)
                    };
                }
                Source::Init => {
                    if let Some(c) = cur.filter(|&c| c != t) {
                        return Some([(t, c), (t, c)]);
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    let writes = &txns.writes[txns.write_start[t as usize] as usize..txns.write_start[t as usize + 1] as usize];
    for w in writes {
        let k = w.key.0;
        let cur = current.get(&k).copied().unwrap_or(INIT);
        let own = reads.iter().any(|r| r.key.0 == k) as u32;
        if pending.get(&(k, cur)).copied().unwrap_or(0) <= own {
            continue;
        }
        let reader = wanted.get(&(k, cur))?.iter().copied().find(|&r| r != t && !at.placed[r as usize])?;
        if cur != INIT && cur != t {
            // `t` before `c`, or `c`'s readers before `t`.
            return Some([(t, cur), (reader, t)]);
        }
        return Some([(reader, t), (reader, t)]);
    }
    None
}
