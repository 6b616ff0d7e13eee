//! Isolation levels and the consistency of the explorer's histories.
//!
//! # Levels
//!
//! Every level here is a Biswas–Enea level *with* session order (spec §2):
//! `h ⊨ I` iff some total commit order `co ⊇ so ∪ wr` satisfies, for every
//! external read of `x` in `t₃` from `t₁` and every other writer `t₂` of
//! `x`, `φ_I(t₂, t₃) ⇒ t₂ co t₁`. The names are `analyze`'s:
//! `read-committed-be`, `read-atomic` and `causal-cerone` (alias
//! `transactional-causal`) from [`weak::MODEL_NAMES`], `prefix`, and
//! `snapshot-isolation` and `serializable` as [`si_check::LEVELS`] spells
//! them — here with session order, which `analyze` calls
//! `strong-session-snapshot-isolation` and `strong-session-serializable`
//! (accepted too).
//!
//! # Read committed, read atomic, causal ([`weak_ok`])
//!
//! Their premises do not mention `co`, so the edges they force are known at
//! once and the history is consistent iff `so ∪ wr ∪ forced` is acyclic
//! (the argument of [`crate::weak`]). The explorer checks histories of at
//! most 63 transactions with one pending at most, many times per step, so
//! this version works on bit sets: causal pasts as `u64`, forced edges
//! OR-ed into predecessor sets, Kahn's algorithm over them. A pending
//! transaction and aborted readers take part as readers (spec pitfall 3);
//! aborted transactions write nothing.
//!
//! # Prefix, snapshot isolation, serializability ([`strong_ok`])
//!
//! These need a search over commit orders. Each transaction `t` gets two
//! instants, its snapshot and its commit; `co` is the commit order. A
//! history is prefix-consistent iff the events can be placed one by one
//! such that (i) `t`'s snapshot comes after the commits of its `so ∪ wr`
//! predecessors and before its own commit, and (ii) committing a writer `t₂`
//! of `x` is allowed only when every read of `x` from an already committed
//! other writer `t₁` has taken its snapshot — then each read returns the
//! last committed writer of its key at its snapshot. Snapshot isolation adds
//! (iii): no transaction commits between the snapshot and the commit of
//! another that writes a key it writes. Serializability places snapshot and
//! commit together. (Placing the snapshot of `t₃` right after its last
//! `so ∪ wr` predecessor — or, for SI, its last write-conflicting
//! predecessor — turns a `co` satisfying the axioms into such a placement,
//! and conversely a placement's commit order satisfies them.) Every rule
//! depends only on *which* transactions have taken their snapshot and
//! committed, so the search memoises failed states `(snapshotted,
//! committed)`: at most `3ⁿ` states for `n` transactions, far fewer in
//! practice since `so` orders most of them. A transaction that writes
//! nothing commits right after its snapshot (it never constrains anyone).

use super::history::{bit, members, EvKind, Hist, KeyId, Status, TxnId, INIT};
use crate::si_check;
use crate::weak;
use rustc_hash::FxHashSet;

/// An isolation level the explorer decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// Read committed, read atomic or causal (explore-ce).
    Weak(weak::Level),
    /// Prefix consistency (explore-ce*(causal, prefix)).
    Prefix,
    /// Snapshot isolation or serializability with session order
    /// (explore-ce*(causal, ·)).
    Strong(si_check::Semantics),
}

/// Every level, weakest first.
pub const ALL: [Level; 6] = [
    Level::Weak(weak::Level::ReadCommitted),
    Level::Weak(weak::Level::ReadAtomic),
    Level::Weak(weak::Level::Causal),
    Level::Prefix,
    Level::Strong(si_check::Semantics::SnapshotIsolation),
    Level::Strong(si_check::Semantics::Serializable),
];

impl Level {
    /// The level a name selects: `analyze`'s names (case-insensitive).
    pub fn from_name(name: &str) -> Option<Level> {
        if let Some(l) = weak::Level::from_model(name) {
            return Some(Level::Weak(l));
        }
        let lower = name.to_ascii_lowercase();
        if lower == "prefix" {
            return Some(Level::Prefix);
        }
        let stripped = lower.strip_prefix("strong-session-").unwrap_or(&lower);
        match si_check::Level::from_model(stripped) {
            Some(si_check::Level { semantics, order: si_check::OrderKind::None }) => Some(Level::Strong(semantics)),
            _ => match stripped {
                "si" => Some(Level::Strong(si_check::Semantics::SnapshotIsolation)),
                "ser" => Some(Level::Strong(si_check::Semantics::Serializable)),
                _ => None,
            },
        }
    }

    /// The level's name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Weak(l) => l.model(),
            Level::Prefix => "prefix",
            Level::Strong(s) => si_check::Level { semantics: s, order: si_check::OrderKind::None }.model(),
        }
    }

    /// The name `isolde analyze --model` decides this level under (with
    /// session order).
    pub fn analyze_model(self) -> &'static str {
        match self {
            Level::Strong(s) => si_check::Level { semantics: s, order: si_check::OrderKind::Session }.model(),
            l => l.name(),
        }
    }

    /// The level explored under: the level itself for explore-ce, causal
    /// consistency for explore-ce* (spec §5: it admits every prefix, SI
    /// and SER history and is causally extensible).
    pub fn base(self) -> weak::Level {
        match self {
            Level::Weak(l) => l,
            _ => weak::Level::Causal,
        }
    }

    /// Whether complete histories are filtered by this level at the leaves
    /// (explore-ce*), rather than explored directly.
    pub fn filtered(self) -> bool {
        !matches!(self, Level::Weak(_))
    }
}

/// Reusable buffers of the checks.
#[derive(Default)]
pub struct Scratch {
    writers: Vec<u64>,
    failed: FxHashSet<(u64, u64)>,
    cond: Vec<Vec<(TxnId, TxnId)>>,
}

/// Whether `h` (one pending transaction at most) satisfies a weak level;
/// `so_mask[t]` is the set of `t`'s session predecessors (with `init`), and
/// `nkeys` bounds the key ids.
pub fn weak_ok(h: &Hist, so_mask: &[u64], nkeys: usize, level: weak::Level, s: &mut Scratch) -> bool {
    let present = h.present();
    s.writers.clear();
    s.writers.resize(nkeys, bit(INIT));
    for &t in &h.order[1..] {
        let l = &h.txns[t as usize];
        if l.status != Status::Aborted {
            for e in &l.events {
                if e.kind == EvKind::Write {
                    s.writers[e.key as usize] |= bit(t);
                }
            }
        }
    }
    let mut pred = [0u64; 64];
    let mut cp = [0u64; 64];
    for &t in &h.order {
        let mut p = so_mask[t as usize] & present;
        for e in &h.txns[t as usize].events {
            if e.is_external_read() {
                p |= bit(e.writer);
            }
        }
        let mut c = bit(t);
        for q in members(p) {
            c |= cp[q as usize];
        }
        pred[t as usize] = p;
        cp[t as usize] = c;
    }
    let mut forced = [0u64; 64];
    for &t3 in &h.order[1..] {
        let mut seen = 0u64;
        for e in &h.txns[t3 as usize].events {
            if !e.is_external_read() {
                continue;
            }
            let must_see = match level {
                weak::Level::ReadCommitted => seen,
                weak::Level::ReadAtomic => pred[t3 as usize],
                weak::Level::Causal => cp[t3 as usize],
            };
            forced[e.writer as usize] |= must_see & s.writers[e.key as usize] & !bit(e.writer) & !bit(t3);
            seen |= bit(e.writer);
        }
    }
    for &t in &h.order {
        pred[t as usize] |= forced[t as usize];
    }
    acyclic(present, &pred)
}

/// Kahn's algorithm on predecessor sets.
fn acyclic(present: u64, pred: &[u64; 64]) -> bool {
    let mut done = 0u64;
    let mut left = present;
    while left != 0 {
        let mut progress = false;
        for t in members(left) {
            if pred[t as usize] & !done == 0 {
                done |= bit(t);
                left &= !bit(t);
                progress = true;
            }
        }
        if !progress {
            return false;
        }
    }
    true
}

/// Whether the complete history `h` satisfies prefix consistency, snapshot
/// isolation or serializability (with session order). `level` must be a
/// filtered level.
pub fn strong_ok(h: &Hist, so_mask: &[u64], level: Level, s: &mut Scratch) -> bool {
    let present = h.present();
    let mut pred = [0u64; 64];
    let mut wkeys: Vec<Vec<KeyId>> = vec![Vec::new(); 64];
    let mut reads: Vec<(TxnId, KeyId, TxnId)> = Vec::new();
    for &t in &h.order {
        let l = &h.txns[t as usize];
        let mut p = so_mask[t as usize] & present;
        for e in &l.events {
            if e.is_external_read() {
                p |= bit(e.writer);
                reads.push((t, e.key, e.writer));
            } else if e.kind == EvKind::Write && l.status != Status::Aborted && !wkeys[t as usize].contains(&e.key) {
                wkeys[t as usize].push(e.key);
            }
        }
        pred[t as usize] = p;
    }
    // cond[t2]: pairs (t1, t3) with t3 reading a key t2 writes from t1 ≠ t2.
    s.cond.resize(64, Vec::new());
    let mut conflicts = [0u64; 64];
    for &t2 in &h.order[1..] {
        let c = &mut s.cond[t2 as usize];
        c.clear();
        for &(t3, x, t1) in &reads {
            if t1 != t2 && t3 != t2 && wkeys[t2 as usize].contains(&x) {
                c.push((t1, t3));
            }
        }
        for &t4 in &h.order[1..] {
            if t4 != t2 && wkeys[t4 as usize].iter().any(|k| wkeys[t2 as usize].contains(k)) {
                conflicts[t2 as usize] |= bit(t4);
            }
        }
    }
    s.failed.clear();
    let writes_nothing = h.order.iter().fold(0u64, |m, &t| if wkeys[t as usize].is_empty() { m | bit(t) } else { m });
    let search = Search {
        all: present,
        pred: &pred,
        cond: &s.cond,
        conflicts: &conflicts,
        writes_nothing,
        si: level == Level::Strong(si_check::Semantics::SnapshotIsolation),
        ser: level == Level::Strong(si_check::Semantics::Serializable),
    };
    debug_assert!(level.filtered());
    search.run(bit(INIT), bit(INIT), &mut s.failed)
}

struct Search<'a> {
    all: u64,
    pred: &'a [u64; 64],
    cond: &'a [Vec<(TxnId, TxnId)>],
    conflicts: &'a [u64; 64],
    writes_nothing: u64,
    si: bool,
    ser: bool,
}

impl Search<'_> {
    /// Whether `t` may commit now (snapshotted set `snap`, committed `com`).
    fn may_commit(&self, t: TxnId, snap: u64, com: u64) -> bool {
        if self.si && self.conflicts[t as usize] & snap & !com != 0 {
            return false;
        }
        self.cond[t as usize].iter().all(|&(t1, t3)| com & bit(t1) == 0 || snap & bit(t3) != 0)
    }

    fn run(&self, snap: u64, com: u64, failed: &mut FxHashSet<(u64, u64)>) -> bool {
        if com == self.all {
            return true;
        }
        if failed.contains(&(snap, com)) {
            return false;
        }
        // Snapshots (with SER, snapshot and commit at once; a transaction
        // writing nothing commits with its snapshot).
        for t in members(self.all & !snap) {
            if self.pred[t as usize] & !com != 0 {
                continue;
            }
            let s2 = snap | bit(t);
            if self.ser || self.writes_nothing & bit(t) != 0 {
                if self.may_commit(t, s2, com) && self.run(s2, com | bit(t), failed) {
                    return true;
                }
            } else if self.run(s2, com, failed) {
                return true;
            }
        }
        for t in members(snap & !com) {
            if self.may_commit(t, snap, com) && self.run(snap, com | bit(t), failed) {
                return true;
            }
        }
        failed.insert((snap, com));
        false
    }
}
