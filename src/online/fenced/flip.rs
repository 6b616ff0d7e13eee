//! Flips: deciding an assumed write order the other way when a later read
//! shows it, instead of giving up on the run.
//!
//! ## The case
//! A round collects its prefix `P` of a serial execution `E`. Two writers
//! of a key `x` in `P` that nothing orders (no known edge, no fence, no
//! reader between them) are in `E`'s order only because `E` chose one:
//! `W_a` first, `W_L` last. The key's last version is then `l`, and `a` is
//! *assumed* overwritten. A later transaction `T` that reads `a` (`T`
//! follows both by fences) shows `W_L` before `W_a`. Without more, the run
//! cannot tell whether another execution of the forgotten transactions
//! puts `W_a` last, and says `unknown` ([`super::Collector::broken`]).
//!
//! ## When another execution explains the read
//! The round still holds its window when it collects, so it asks then, for
//! each such `a`: is there a serial execution of `P` that differs from `E`
//! only in a *range* `E[i..=j]` (from `W_a` to `W_L`, and on to the last
//! member that read a version of `x` written in it) and ends with `a` as
//! `x`'s last version? It replays the range greedily from `E`'s state
//! before it, taking at each step the first transaction in `E`'s order
//! that
//!
//! * has all its predecessors by known edges (session order, reads-from)
//!   in the range placed;
//! * reads exactly the versions there now (the state before the range for
//!   a version the range does not write);
//! * overwrites no version a transaction still to come in the range reads;
//! * and, where it writes a key's *pinned* last version, comes after the
//!   range's other writers of that key. `x`'s pinned last version is `a`;
//!   another key's is the one `E` leaves when the round's last version of
//!   the key or a read after the range depends on it.
//!
//! When every transaction is placed, `E' = E[..i] + replay + E[j+1..]` is
//! a serial execution at the round's level (known edges are kept inside
//! the range and across its ends, every read in it sees the latest write,
//! and what follows the range reads what it read in `E`) whose state after
//! `P` is `E`'s with `a` as `x`'s last version. A version of `x` written in
//! the range that a transaction still held read (it follows all of `P`)
//! rules the flip out, as does any value written twice in the window (a
//! read would not name its writer). The range is at most [`MAX_RANGE`]
//! transactions long. The round files the result with the key's state as
//! a [`Flip`] ([`super::Front::flips`], sealed with it).
//!
//! ## Using one
//! The read of `a` by an `:ok` transaction not flagged on `x` (it follows
//! both writers by known edges or fences) is accepted, and `a` becomes the
//! key's last version, when since the round nothing changed `x`'s state
//! (the front is the one the flip was filed with: any new last version
//! replaces it) and nothing read `l` ([`super::Front::seen`]): then every
//! later round's execution reads on `x` only what it read from the state
//! `E'` leaves, so `E'` followed by the later rounds' executions is a serial
//! execution of everything collected, and the rest is checked from its
//! state as before. A read of `l` after the flip (in the same round's
//! window too) is a read of an assumed version: `unknown`, never a report,
//! and so is a read of a version that was ordered before `l`. One flip per
//! round: a second would start from an execution that is no longer `E`.
//!
//! ## What it does not decide
//! A read that needs `E` changed outside the range too (two assumed
//! orders entangled: a transaction of the range must overwrite a version
//! that `E` placed, by assumption, after one written before the range)
//! finds no replay, and the run still says `unknown`. On a
//! 600k-transaction `isolde gen` stream (default shape, seed 7, a fence
//! every 20 transactions), 8 of its 3,541 assumed orders were read the
//! other way round and flipped; the first read no flip explains came at
//! line 506,735 instead of line 49,996. Such reads are asked of the exact
//! check on the kept round instead ([`super::resolve`]).
//!
//! Only where `E` is a serial execution (not snapshot isolation's commit
//! order with overlapping transactions, nor causal consistency's
//! arbitration order), and not after the run went `invalid` (the known
//! order then stands in for `E`).
//!
//! Written by hand: specific to this collector.

use rustc_hash::{FxHashMap, FxHashSet};

use super::super::cut::{Known, Txn};
use super::Collector;
use crate::history::{History, KeyId, Mop, MopFn, MopValue, OpType};

/// The most transactions of a round's execution a flip replays.
const MAX_RANGE: usize = 128;

/// An assumed version of a key that a later read may show last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Flip {
    /// The version.
    pub(super) value: i64,
    /// The collecting round that assumed it (one flip per round).
    pub(super) round: u32,
    /// The line on which its writer completed.
    pub(super) line: u32,
}

impl Collector {
    /// Takes the read of `x`'s assumed version `a` (by an `:ok`
    /// transaction that follows its collected writers) as deciding the
    /// order the other way, when a [`Flip`] allows it (module docs):
    /// `a` becomes the key's last version, and what was ordered before it
    /// is only assumed from then on. `false` when none allows it.
    pub(super) fn flip(&mut self, h: &History, x: KeyId, a: i64) -> bool {
        let Some(front) = self.fronts.get_mut(&x) else { return false };
        if front.seen {
            return false;
        }
        let done = &self.flipped_rounds;
        let Some(f) = front.flips.iter().find(|f| f.value == a && !done.contains(&f.round)).cloned() else {
            return false;
        };
        let old = std::mem::replace(&mut front.value, a);
        front.assumed.insert(old);
        front.assumed.absorb(std::mem::take(&mut front.stale));
        front.line = f.line;
        front.seen = true;
        front.flips.clear();
        self.flipped_rounds.insert(f.round);
        self.kept.flipped(f.round, h.key(x), a, f.line);
        self.flipped += 1;
        true
    }
}

/// What a round's serial execution says about its members, for deciding
/// which assumed versions may flip.
pub(super) struct Round<'a> {
    h: &'a History,
    txns: &'a [Txn],
    known: &'a Known,
    /// Members in the execution's order.
    order: Vec<usize>,
    /// Per transaction, its place in `order` (`u32::MAX`: not a member).
    place: Vec<u32>,
    /// Per version `(key, value)`, the transactions that read it (all but
    /// failed ones).
    readers: FxHashMap<(KeyId, i64), Vec<usize>>,
    /// Per key, its last writer among the members.
    last_writer: &'a FxHashMap<KeyId, usize>,
    /// Whether some value was written twice in the window (a read of it
    /// then names no one writer: no flips).
    repeated: bool,
}

impl<'a> Round<'a> {
    /// The members of `txns` (`members`) in the order `ranks` gives them;
    /// `h` is the window as read (reads the collector set aside included).
    pub(super) fn new(
        h: &'a History,
        txns: &'a [Txn],
        ranks: &[u32],
        members: &[bool],
        known: &'a Known,
        last_writer: &'a FxHashMap<KeyId, usize>,
    ) -> Round<'a> {
        let mut order: Vec<usize> = (0..txns.len()).filter(|&t| members[t]).collect();
        order.sort_unstable_by_key(|&t| txns[t].done.map_or(u32::MAX, |d| ranks[d]));
        let mut place = vec![u32::MAX; txns.len()];
        for (i, &t) in order.iter().enumerate() {
            place[t] = i as u32;
        }
        let mut readers: FxHashMap<(KeyId, i64), Vec<usize>> = FxHashMap::default();
        let mut values: FxHashSet<(KeyId, i64)> = FxHashSet::default();
        let mut repeated = false;
        for (t, txn) in txns.iter().enumerate() {
            for m in h.mops_of(&h.ops[txn.op()]) {
                if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                    repeated |= !values.insert((m.key, v));
                }
            }
            if txn.kind == Some(OpType::Fail) {
                continue;
            }
            for (k, v) in external_reads(h, txn) {
                if let Some(v) = v {
                    readers.entry((k, v)).or_default().push(t);
                }
            }
        }
        Round { h, txns, known, order, place, readers, last_writer, repeated }
    }

    /// The flip of `wa`'s assumed version `a` of `x`, when the module's
    /// conditions hold (`round`: this round's number).
    pub(super) fn flip(&self, wa: usize, x: KeyId, a: i64, round: u32) -> Option<Flip> {
        if self.repeated {
            return None;
        }
        let start = self.place[wa] as usize;
        let lw = *self.last_writer.get(&x)?;
        let mut end = self.place[lw] as usize;
        if start == u32::MAX as usize || end == u32::MAX as usize || end <= start {
            return None;
        }
        // The range: up to the last member that read a version of `x`
        // written in it (other than `a`, which ends up last).
        let mut scanned = start;
        while scanned < end {
            let from = scanned + 1;
            scanned = end;
            for &z in &self.order[from..=end] {
                for (k, v) in self.writes(&self.txns[z]).filter(|&(k, _)| k == x) {
                    for &r in self.readers.get(&(k, v)).map_or(&[][..], |r| &r[..]) {
                        match self.place[r] {
                            u32::MAX => return None,
                            p => end = end.max(p as usize),
                        }
                    }
                }
            }
            if end - start > MAX_RANGE {
                return None;
            }
        }
        let range = &self.order[start..=end];
        let n = range.len();
        let reads: Vec<Vec<(KeyId, Option<i64>)>> =
            range.iter().map(|&t| external_reads(self.h, &self.txns[t]).collect()).collect();
        let writes: Vec<Vec<(KeyId, i64)>> = range.iter().map(|&t| self.writes(&self.txns[t]).collect()).collect();
        // Which versions the range writes, and per key its writers left
        // and the one that must write it last (`wa` for `x`, else the
        // execution's).
        let mut written: FxHashSet<(KeyId, i64)> = FxHashSet::default();
        let mut left: FxHashMap<KeyId, u32> = FxHashMap::default();
        let mut last: FxHashMap<KeyId, (usize, i64)> = FxHashMap::default();
        for (i, ws) in writes.iter().enumerate() {
            for &(k, v) in ws {
                written.insert((k, v));
                *left.entry(k).or_default() += 1;
                last.insert(k, (i, v));
            }
        }
        // The range's last write of a key stays last where the round's
        // last version or a read after the range depends on it; `x`'s
        // becomes `wa`'s.
        let last: FxHashMap<KeyId, usize> =
            last.into_iter()
                .filter(|&(k, (_, v))| {
                    k == x
                        || self.last_writer.get(&k).is_some_and(|&w| (self.place[w] as usize) <= end)
                        || self.readers.get(&(k, v)).is_some_and(|r| {
                            r.iter().any(|&r| self.place[r] == u32::MAX || self.place[r] as usize > end)
                        })
                })
                .map(|(k, (i, _))| (k, if k == x { 0 } else { i }))
                .collect();
        // Known predecessors within the range not yet placed, and per
        // version (`None`: the one before the range) its readers not yet
        // placed.
        let mut preds = vec![0u32; n];
        for (j, &u) in range.iter().enumerate() {
            preds[j] = range[..j].iter().filter(|&&p| self.known.reaches(p, u)).count() as u32;
        }
        let version = |k: KeyId, v: Option<i64>| (k, v.filter(|&v| written.contains(&(k, v))));
        let mut waiting: FxHashMap<(KeyId, Option<i64>), u32> = FxHashMap::default();
        for &(k, v) in reads.iter().flatten() {
            *waiting.entry(version(k, v)).or_default() += 1;
        }
        let mut placed = vec![false; n];
        let mut now: FxHashMap<KeyId, i64> = FxHashMap::default();
        for _ in 0..n {
            // The first in the execution's order that reads what is there
            // now, overwrites nothing a transaction still to come reads,
            // and writes no key's last version before its other writers.
            let ready = (0..n).find(|&j| {
                !placed[j]
                    && preds[j] == 0
                    && reads[j].iter().all(|&(k, v)| version(k, v).1 == now.get(&k).copied())
                    && writes[j].iter().all(|&(k, _)| {
                        let own = reads[j].iter().filter(|&&(rk, _)| rk == k).count() as u32;
                        (last.get(&k) != Some(&j) || left.get(&k) == Some(&1))
                            && waiting.get(&(k, now.get(&k).copied())).map_or(0, |&w| w) == own
                    })
            })?;
            placed[ready] = true;
            for &(k, v) in &reads[ready] {
                *waiting.get_mut(&version(k, v)).expect("counted") -= 1;
            }
            for &(k, v) in &writes[ready] {
                now.insert(k, v);
                *left.get_mut(&k).expect("a key it writes") -= 1;
            }
            for (i, &u) in range.iter().enumerate().skip(ready + 1) {
                if !placed[i] && self.known.reaches(range[ready], u) {
                    preds[i] -= 1;
                }
            }
        }
        let line = self.txns[wa].done.map(|d| self.h.ops[d].line)?;
        Some(Flip { value: a, round, line })
    }

    /// The last value a transaction wrote to each key it wrote.
    fn writes(&self, txn: &Txn) -> impl Iterator<Item = (KeyId, i64)> + '_ {
        let mops = self.h.mops_of(&self.h.ops[txn.op()]);
        mops.iter().enumerate().filter_map(move |(i, m)| match (m.f, m.value) {
            (MopFn::Write, MopValue::Int(v))
                if !mops[i + 1..].iter().any(|n| n.key == m.key && n.f == MopFn::Write) =>
            {
                Some((m.key, v))
            }
            _ => None,
        })
    }
}

/// What a transaction read from others: its reads of a key before it wrote
/// that key, with the version read (`None`: the initial state).
fn external_reads<'h>(h: &'h History, txn: &Txn) -> impl Iterator<Item = (KeyId, Option<i64>)> + 'h {
    external_reads_of(h.mops_of(&h.ops[txn.op()]))
}

/// [`external_reads`] of a transaction's micro-ops.
pub(super) fn external_reads_of(mops: &[Mop]) -> impl Iterator<Item = (KeyId, Option<i64>)> + '_ {
    mops.iter().enumerate().filter_map(move |(i, m)| {
        let outside = !mops[..i].iter().any(|n| n.key == m.key && n.f == MopFn::Write);
        match (m.f, m.value) {
            (MopFn::Read, MopValue::Int(v)) if outside => Some((m.key, Some(v))),
            (MopFn::Read, MopValue::Nil) if outside => Some((m.key, None)),
            _ => None,
        }
    })
}
