//! A read/write-register history laid out for the Plume/PolySI text format
//! and AWDIT's `test` format ([`super::plume`], [`super::awdit_test`]):
//! sessions of transactions whose events are `(read?, key, value)` with
//! non-negative integer keys and values, value `0` standing for the initial
//! state.
//!
//! # The mapping
//!
//! * **Transactions.** Every `:ok` completion is a committed transaction. A
//!   `:fail` one is aborted: the text format writes it with transaction id
//!   `-1`, the `test` format cannot express it and leaves it out (a read of
//!   its value then reads a value nobody wrote, which breaks every level just
//!   as the aborted read did). An `:info` one (outcome unknown) is written,
//!   as a committed transaction holding only its writes, exactly when a
//!   committed read returned one of its writes (values are unique, so it
//!   committed); otherwise it is left out. That is the checkers' own rule
//!   (see `weak::front`): an unobserved indeterminate transaction adds no
//!   constraint, and an indeterminate transaction's reads are unknown.
//! * **Sessions.** One per `:process`, in history order; after an `:info`
//!   the process's later transactions form a new session, as Jepsen retires
//!   the process there. A session keeps its process number when that is a
//!   non-negative integer; later sessions of a process get fresh numbers.
//! * **Keys and values.** Kept as they are when every key is a non-negative
//!   integer and every value a positive one; otherwise renumbered, keys
//!   densely and each key's values `1, 2, …` in order of appearance (equal
//!   values stay equal, so repeated values stay repeated). A read of the
//!   initial state (`nil`) is value `0`. A write of `nil` cannot be told from
//!   the initial state and is refused, as are list-append histories (these
//!   formats hold registers; Plume reads list-append EDN itself).
//! * **Pinning the initial state** ([`ExportOptions::pin_initial`]). AWDIT
//!   adds the initial transaction as one more session with no session order
//!   to anyone, so a stale read of an initial value is caught only where
//!   other edges happen to order the initial transaction first. With pinning,
//!   each session's first transaction starts with a read of the initial value
//!   of a fresh key of its own, which orders the initial transaction before
//!   every session, as in isolde's (Biswas–Enea's) semantics; the extra reads
//!   change no verdict of isolde's.

use crate::history::{Atom, History, MopFn, MopValue, OpType, Value};
use rustc_hash::{FxHashMap, FxHashSet};
use thiserror::Error;

/// Why a history cannot be written in a register text format.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExportError {
    /// A list-append micro-op or list value.
    #[error("{source_name}: line {line}: list-append histories cannot be written in a register format (Plume reads list-append EDN itself)")]
    Lists {
        /// The history's source.
        source_name: String,
        /// The op's line.
        line: u32,
    },
    /// A closed-predicate micro-op (`:insert`, `:delete`, `:rp`).
    #[error("{source_name}: line {line}: closed-predicate histories cannot be written in a register format")]
    Predicates {
        /// The history's source.
        source_name: String,
        /// The op's line.
        line: u32,
    },
    /// A write of `nil`.
    #[error("{source_name}: line {line}: a write of nil cannot be told from the initial value 0")]
    NilWrite {
        /// The history's source.
        source_name: String,
        /// The op's line.
        line: u32,
    },
}

/// One event: a read or write of `key` with `value` (`0` = initial).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// A write (else a read).
    pub write: bool,
    /// The key.
    pub key: u64,
    /// The value; `0` is the initial value.
    pub value: u64,
}

/// One transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegTxn {
    /// Its session.
    pub session: u64,
    /// Aborted (`:fail`).
    pub aborted: bool,
    /// Its events in program order.
    pub events: Vec<Event>,
}

/// A register history in history order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegHistory {
    /// The transactions, in history order.
    pub txns: Vec<RegTxn>,
    /// Every key used (including the pinning keys), ascending.
    pub keys: Vec<u64>,
}

/// Choices of the export.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Add a read of a fresh key's initial value at the start of each
    /// session (see the module documentation).
    pub pin_initial: bool,
}

/// Lays `h` out as sessions of register transactions.
pub fn export(h: &History, opts: ExportOptions) -> Result<RegHistory, ExportError> {
    let lists = |line| ExportError::Lists { source_name: h.source.clone(), line };
    // Values read by committed transactions: which :info writes were seen.
    let mut read: FxHashSet<(u32, i64)> = FxHashSet::default();
    for op in h.ops.iter().filter(|o| o.op_type == OpType::Ok) {
        for m in h.mops_of(op) {
            match (m.f, m.value) {
                (MopFn::Append, _) | (_, MopValue::List { .. }) => return Err(lists(op.line)),
                (MopFn::Insert | MopFn::Delete | MopFn::PredRead | MopFn::PredEntry, _) | (_, MopValue::Entries(_)) => {
                    return Err(ExportError::Predicates { source_name: h.source.clone(), line: op.line })
                }
                (MopFn::Read, MopValue::Int(v)) => {
                    read.insert((m.key.0, v));
                }
                _ => {}
            }
        }
    }
    let included = |op: &crate::history::Op| match op.op_type {
        OpType::Ok | OpType::Fail => true,
        OpType::Info => h
            .mops_of(op)
            .iter()
            .any(|m| m.f == MopFn::Write && matches!(m.value, MopValue::Int(v) if read.contains(&(m.key.0, v)))),
        OpType::Invoke => false,
    };
    let int_keys: Option<Vec<u64>> = h.keys.iter().map(key_number).collect();
    let plain_values = h.values.is_empty()
        && h.ops.iter().filter(|o| included(o)).all(|o| {
            h.mops_of(o).iter().all(|m| match m.value {
                MopValue::Int(v) if h.unsigned_values => v != 0,
                MopValue::Int(v) => v > 0,
                _ => true,
            })
        });
    let mut renumbered: FxHashMap<(u32, i64), u64> = FxHashMap::default();
    let mut next_value: Vec<u64> = Vec::new();
    let mut value_of = |key: u32, v: i64| -> u64 {
        if plain_values {
            return v as u64;
        }
        *renumbered.entry((key, v)).or_insert_with(|| {
            if next_value.len() <= key as usize {
                next_value.resize(key as usize + 1, 0);
            }
            next_value[key as usize] += 1;
            next_value[key as usize]
        })
    };
    let key_of = |k: u32| int_keys.as_ref().map_or(k as u64, |ks| ks[k as usize]);
    let max_process = h.ops.iter().map(|o| o.process).max().unwrap_or(0).max(-1);
    let mut next_session = (max_process + 1) as u64;
    let mut open: FxHashMap<i64, u64> = FxHashMap::default();
    let mut used: FxHashSet<u64> = FxHashSet::default();
    let mut out = RegHistory::default();
    for op in h.ops.iter().filter(|o| o.op_type != OpType::Invoke) {
        let session = match open.get(&op.process) {
            Some(&s) => s,
            None => {
                let s = if op.process >= 0 && !used.contains(&(op.process as u64)) {
                    op.process as u64
                } else {
                    next_session += 1;
                    next_session - 1
                };
                used.insert(s);
                open.insert(op.process, s);
                s
            }
        };
        if op.op_type == OpType::Info {
            open.remove(&op.process);
        }
        if !included(op) {
            continue;
        }
        let mut events = Vec::with_capacity(op.mop_len as usize);
        for m in h.mops_of(op) {
            if op.op_type == OpType::Info && m.f != MopFn::Write {
                continue;
            }
            let value = match (m.f, m.value) {
                (MopFn::Append, _) | (_, MopValue::List { .. }) => return Err(lists(op.line)),
                (MopFn::Write, MopValue::Nil) if op.op_type != OpType::Fail => {
                    return Err(ExportError::NilWrite { source_name: h.source.clone(), line: op.line })
                }
                (_, MopValue::Nil) => 0,
                (_, MopValue::Int(v)) => value_of(m.key.0, v),
                (_, MopValue::Entries(_)) => {
                    return Err(ExportError::Predicates { source_name: h.source.clone(), line: op.line })
                }
            };
            events.push(Event { write: m.f == MopFn::Write, key: key_of(m.key.0), value });
        }
        out.txns.push(RegTxn { session, aborted: op.op_type == OpType::Fail, events });
    }
    let mut keys: Vec<u64> = (0..h.keys.len() as u32).map(key_of).collect();
    keys.sort_unstable();
    if opts.pin_initial {
        let mut fresh = keys.last().map_or(0, |k| k + 1);
        let mut pinned: FxHashSet<u64> = FxHashSet::default();
        for t in out.txns.iter_mut().filter(|t| !t.aborted) {
            if pinned.insert(t.session) {
                t.events.insert(0, Event { write: false, key: fresh, value: 0 });
                keys.push(fresh);
                fresh += 1;
            }
        }
    }
    out.keys = keys;
    Ok(out)
}

/// A key's number, when it is a non-negative integer.
fn key_number(k: &Value) -> Option<u64> {
    match k {
        Value::Atom(Atom::Int(n)) => u64::try_from(*n).ok(),
        Value::Atom(Atom::BigInt(d)) => d.parse().ok(),
        _ => None,
    }
}
