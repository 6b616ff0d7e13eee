//! The explorer's history: transactions, their events, and the order `<`.
//!
//! A history (spec §1) is `⟨T, so, wr⟩`: the transactions that started, each
//! a log of events in program order, the session order (fixed by the
//! program), and for every *external* read the transaction it read from.
//! Read values are not part of a history; they follow from `wr` because the
//! program is deterministic given what it reads, so two runs with the same
//! `wr` are the same history.
//!
//! Identities (spec §1, "[ours]"): transaction ids are the program's
//! transactions numbered session by session, in session order, from 1; id 0
//! is the initial transaction `init`, which writes every key. This
//! numbering *is* the oracle order `<or` of explore-ce (sessions by id, then
//! session order, `init` least), so comparing ids compares in `<or`.
//!
//! The explorer also keeps the total order `<` on events. Each transaction
//! is a contiguous block of `<` (at most one transaction is pending and it is
//! always the last block, spec §4), so `<` is stored as the sequence of
//! transaction blocks, [`Hist::order`]; events of one block are in program
//! order. Begin and commit/abort are not stored as events: a transaction's
//! [`Status`] says whether it is pending, committed or aborted.
//!
//! Sets of transactions are `u64` bit sets (ids below 64).

/// A transaction id (0 is `init`).
pub type TxnId = u32;
/// The initial transaction.
pub const INIT: TxnId = 0;
/// The writer of a read that returns the transaction's own earlier write.
pub const OWN: TxnId = u32::MAX;
/// An interned key.
pub type KeyId = u32;
/// An interned value.
pub type ValId = u32;

/// The bit of transaction `t` in a set.
#[inline]
pub fn bit(t: TxnId) -> u64 {
    1u64 << t
}

/// The transactions of a bit set, in increasing id.
pub fn members(mut s: u64) -> impl Iterator<Item = TxnId> {
    std::iter::from_fn(move || {
        if s == 0 {
            return None;
        }
        let t = s.trailing_zeros();
        s &= s - 1;
        Some(t)
    })
}

/// A read or a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvKind {
    /// A read; [`Event::writer`] is who it read from ([`OWN`] for a read
    /// of the transaction's own write).
    Read,
    /// A write.
    Write,
}

/// A database event of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// Read or write.
    pub kind: EvKind,
    /// The key.
    pub key: KeyId,
    /// The value read or written.
    pub val: ValId,
    /// For an external read, the transaction read from; [`OWN`] otherwise.
    pub writer: TxnId,
}

impl Event {
    /// Whether this is an external read (it has a `wr` edge).
    #[inline]
    pub fn is_external_read(&self) -> bool {
        self.kind == EvKind::Read && self.writer != OWN
    }
}

/// Where a transaction stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Status {
    /// Not in the history.
    #[default]
    Absent,
    /// Begun, not finished.
    Pending,
    /// Committed.
    Committed,
    /// Aborted: it writes nothing visible.
    Aborted,
}

/// A transaction's log.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Log {
    /// Where it stands.
    pub status: Status,
    /// Its reads and writes, in program order.
    pub events: Vec<Event>,
}

/// An ordered history.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hist {
    /// Every program transaction's log, by id (index 0 is `init`).
    pub txns: Vec<Log>,
    /// The order `<` as transaction blocks; `init` first.
    pub order: Vec<TxnId>,
}

impl Hist {
    /// The history holding only `init`, for a program of `n` transactions.
    pub fn initial(n: usize) -> Hist {
        let mut txns = vec![Log::default(); n + 1];
        txns[0].status = Status::Committed;
        Hist { txns, order: vec![INIT] }
    }

    /// The set of transactions in the history.
    pub fn present(&self) -> u64 {
        self.order.iter().fold(0, |s, &t| s | bit(t))
    }

    /// The position of each transaction's block in `<` (`u8::MAX` if absent).
    pub fn positions(&self) -> [u8; 64] {
        let mut p = [u8::MAX; 64];
        for (i, &t) in self.order.iter().enumerate() {
            p[t as usize] = i as u8;
        }
        p
    }

    /// The pending transaction, if any (always the last block).
    pub fn pending(&self) -> Option<TxnId> {
        self.order.last().copied().filter(|&t| self.txns[t as usize].status == Status::Pending)
    }

    /// Whether `t` writes `key` in the sense of the axioms: `init` writes
    /// every key; an aborted transaction writes nothing.
    pub fn writes(&self, t: TxnId, key: KeyId) -> bool {
        if t == INIT {
            return true;
        }
        let l = &self.txns[t as usize];
        l.status != Status::Aborted && l.events.iter().any(|e| e.kind == EvKind::Write && e.key == key)
    }

    /// The value of `t`'s last write to `key` (`None` for `init` or no write).
    pub fn last_write(&self, t: TxnId, key: KeyId) -> Option<ValId> {
        if t == INIT {
            return None;
        }
        self.txns[t as usize].events.iter().rev().find(|e| e.kind == EvKind::Write && e.key == key).map(|e| e.val)
    }

    /// The causal past `CP(t) = {t' | t' (so ∪ wr)* t}` of every
    /// transaction, given each one's session predecessors `so_mask`.
    /// Computed in the order `<`, which extends `so ∪ wr`.
    pub fn causal_pasts(&self, so_mask: &[u64]) -> [u64; 64] {
        let mut cp = [0u64; 64];
        let present = self.present();
        for &t in &self.order {
            let mut c = bit(t);
            for p in members(so_mask[t as usize] & present) {
                c |= cp[p as usize];
            }
            for e in &self.txns[t as usize].events {
                if e.is_external_read() {
                    c |= cp[e.writer as usize];
                }
            }
            cp[t as usize] = c;
        }
        cp
    }
}
