//! A register's initial value other than `nil` (`--initial-value V`), for
//! read/write register histories.
//!
//! # Semantics
//!
//! Elle's rw-register inference, the weak levels and the exact check all
//! take every key to start at `nil`: a read of `nil` reads the initial
//! version, which precedes every written one. Knossos's register models
//! take the initial value as an argument (`(model/cas-register 0)`), and
//! many databases start a register at 0 or `""`: a test that never writes
//! 0 yet reads 0 before its first write is read is then seen reading a
//! value nobody wrote (`garbage-read`), or one only a failed write wrote
//! (`G1a`).
//!
//! With an initial value `V`, a read of `V` of key `k` reads the initial
//! version when it cannot have read a write of `V`:
//!
//! * when no `:ok` or `:info` operation writes `V` to `k` (a `:fail`ed
//!   write of `V` did not happen, so the read is the initial version, not
//!   an aborted read); or
//! * when the reading operation completed before any operation that writes
//!   `V` to `k` was invoked (real time: it cannot have seen that write).
//!
//! Such a read is the same fact as a read of `nil`, and is rewritten to one
//! before any check runs, so that every check (inference, the weak levels,
//! the exact check) sees the same history. This is sound: a rewritten read
//! could only have read the initial version, and reads of `nil` stay reads
//! of the initial version too. Only a transaction's reads of `k` before its
//! own first write of `k` are rewritten (later ones read its own write),
//! and all of them alike, so a transaction that reads `V` twice is not made
//! to read two versions.
//!
//! A read of `V` that may have read either the initial version or a write
//! of `V` (it overlaps or follows such a write) is ambiguous: register
//! values must name their writer, so isolde refuses the history with the
//! read's line rather than guess (guessing the write could invent a cycle;
//! guessing the initial version could hide one). Printed reports show the
//! history as written; the anomalies' own value fields show a rewritten
//! read as `nil`.

use crate::history::{Atom, History, Mop, MopFn, MopValue, OpType, Value, NONE};
use rustc_hash::FxHashMap;

/// Rewrites the reads of `initial` that read the initial version to reads
/// of `nil` (see the module docs): `Ok(None)` when there is none, `Err`
/// naming the first read that may have read either the initial version or
/// a write of the same value.
pub fn apply(h: &History, initial: &Value) -> Result<Option<History>, String> {
    let Some(id) = identity(h, initial) else { return Ok(None) };
    let first_write = first_write_starts(h, id);
    let mut rewrites: Vec<usize> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.is_invoke() {
            continue;
        }
        let start = op.mop_start as usize;
        for (k, at) in initial_reads(h.stored_mops_of(op), id) {
            let began = first_write.get(&k).copied().unwrap_or(usize::MAX);
            if i >= began && op.op_type != OpType::Fail {
                return Err(ambiguous(h, op.line, k, initial));
            }
            rewrites.extend(at.into_iter().map(|j| start + j));
        }
    }
    if rewrites.is_empty() {
        return Ok(None);
    }
    let mut out = h.clone();
    for j in rewrites {
        out.mops[j].value = MopValue::Nil;
    }
    Ok(Some(out))
}

/// The history's identity of a value, if any read or write could hold it.
fn identity(h: &History, v: &Value) -> Option<i64> {
    if h.values.is_empty() {
        return match v {
            Value::Atom(Atom::Int(n)) if *n > crate::history::RESERVED_MAX => Some(*n),
            _ => None,
        };
    }
    let want = v.canonical();
    h.values.iter().position(|x| x.canonical() == want).map(|i| i as i64)
}

/// Per key, the position of the earliest invocation of an `:ok` or `:info`
/// operation writing the value (a completion without an invocation counts
/// from the start: it may have begun at any time).
fn first_write_starts(h: &History, id: i64) -> FxHashMap<u32, usize> {
    let mut first: FxHashMap<u32, usize> = FxHashMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        let pending = op.is_invoke() && op.pair == NONE;
        if !(pending || matches!(op.op_type, OpType::Ok | OpType::Info)) {
            continue;
        }
        let began = match op.pair {
            _ if pending => i,
            NONE => 0,
            j => (j as usize).min(i),
        };
        for m in h.stored_mops_of(op) {
            if m.f == MopFn::Write && m.value == MopValue::Int(id) {
                let e = first.entry(m.key.0).or_insert(began);
                *e = (*e).min(began);
            }
        }
    }
    first
}

/// A transaction's reads of the value before its own first write of their
/// key: (key, positions of those reads), per key.
fn initial_reads(mops: &[Mop], id: i64) -> Vec<(u32, Vec<usize>)> {
    let mut out: Vec<(u32, Vec<usize>)> = Vec::new();
    let mut written: Vec<u32> = Vec::new();
    for (j, m) in mops.iter().enumerate() {
        let k = m.key.0;
        if written.contains(&k) {
            continue;
        }
        match m.f {
            MopFn::Read if m.value == MopValue::Int(id) => match out.iter_mut().find(|(key, _)| *key == k) {
                Some((_, at)) => at.push(j),
                None => out.push((k, vec![j])),
            },
            // Predicate reads occur only in closed-predicate histories,
            // which --initial-value refuses.
            MopFn::Read | MopFn::PredRead | MopFn::PredEntry => {}
            MopFn::Write | MopFn::Append | MopFn::Insert | MopFn::Delete => written.push(k),
        }
    }
    out
}

fn ambiguous(h: &History, line: u32, k: u32, v: &Value) -> String {
    format!(
        "{}:{line}: --initial-value {v}: this transaction reads {v} of key {} after a transaction that writes {v} \
         to it began, so the read may be of the initial value or of that write; register values must name their \
         writer, so isolde cannot tell (use an initial value no transaction writes)",
        h.source, h.keys[k as usize]
    )
}
