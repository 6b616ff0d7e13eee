//! Readers of Porcupine's test data (anishathalye/porcupine, `test_data/`):
//! Jepsen's etcd logs (`jepsen/etcd_*.log`, log lines such as
//! `INFO  jepsen.util - 3`, `:ok`, `:cas`, `[1 4]`, tab-separated) and its key-value histories
//! (`kv/*.txt`, EDN op maps with a `:key`, read by [`crate::jepsen::Ops`]).
//!
//! The etcd log is read as Porcupine's `parseJepsenLog` reads it, so that
//! the verdicts are Porcupine's: an `:invoke` of `:read`, `:write` or
//! `:cas`, and its `:ok` return (a `:read` returning `nil` finds the
//! register unset), a `:fail` `:cas` is a completed CAS that found another
//! value, a `:fail :read :timed-out` returns with an unknown value, and an
//! operation without a recognized return (`:info`, timed-out writes and
//! CASes) returns after everything else with an unknown outcome. Other
//! lines are skipped, as Porcupine's regular expressions skip them.

use super::model::{CasOutcome, Input, Interner};
use super::{LinOp, Prepared};
use crate::history::{Atom, Value};
use rustc_hash::FxHashMap;

/// Why an etcd log could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}:{line}: {what}")]
pub struct LogError {
    /// The file.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

/// Whether bytes look like a Jepsen etcd log (Porcupine's format).
pub fn is_etcd_log(bytes: &[u8]) -> bool {
    bytes.starts_with(b"INFO  jepsen.util - ") || bytes.starts_with(b"INFO jepsen.util - ")
}

/// Reads an etcd log into one partition of cas-register operations (with
/// Porcupine's reading of `:fail` CASes). Ops' `origin` is their line.
pub fn read_etcd_log(path: &str, text: &str) -> Result<Prepared, LogError> {
    let mut interner = Interner::new();
    let mut ops: Vec<LinOp> = Vec::new();
    let mut open: FxHashMap<i64, usize> = FxHashMap::default();
    let int = |s: &str, line: usize| {
        s.parse::<i64>().map_err(|_| LogError {
            path: path.into(),
            line,
            what: format!("expected an integer, found {s:?}"),
        })
    };
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let Some(rest) = raw.strip_prefix("INFO").map(str::trim_start).and_then(|r| r.strip_prefix("jepsen.util"))
        else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('-') else { continue };
        let fields: Vec<&str> = rest.split('\t').map(str::trim).collect();
        if fields.len() != 4 {
            continue;
        }
        let Ok(proc) = fields[0].parse::<i64>() else { continue };
        let pos = line as u64;
        let value = |s: &str, it: &mut Interner| -> Result<u32, LogError> {
            Ok(if s == "nil" {
                it.value(&Value::Atom(Atom::Nil))
            } else {
                it.value(&Value::Atom(Atom::Int(int(s, line)?)))
            })
        };
        let pair = |s: &str| -> Option<(String, String)> {
            let inner = s.strip_prefix('[')?.strip_suffix(']')?;
            let mut it = inner.split_whitespace();
            let (a, b) = (it.next()?, it.next()?);
            it.next().is_none().then(|| (a.to_string(), b.to_string()))
        };
        match (fields[1], fields[2], fields[3]) {
            (":invoke", f @ (":read" | ":write" | ":cas"), v) => {
                let input = match f {
                    ":read" if v == "nil" => Input::Read(None),
                    ":write" if v.bytes().all(|b| b.is_ascii_digit()) && !v.is_empty() => {
                        Input::Write(value(v, &mut interner)?)
                    }
                    ":cas" => match pair(v) {
                        Some((a, b)) if [&a, &b].iter().all(|x| x.bytes().all(|c| c.is_ascii_digit())) => Input::Cas {
                            from: value(&a, &mut interner)?,
                            to: value(&b, &mut interner)?,
                            outcome: CasOutcome::Unknown,
                        },
                        _ => continue,
                    },
                    _ => continue,
                };
                open.insert(proc, ops.len());
                ops.push(LinOp { call: pos, ret: u64::MAX, input, origin: line });
            }
            (":ok", ":read", v) if v == "nil" || v.bytes().all(|b| b.is_ascii_digit()) => {
                if let Some(i) = open.remove(&proc) {
                    ops[i].ret = pos;
                    ops[i].input = Input::Read(Some(value(v, &mut interner)?));
                }
            }
            (":ok", ":write", _) => {
                if let Some(i) = open.remove(&proc) {
                    ops[i].ret = pos;
                }
            }
            (t @ (":ok" | ":fail"), ":cas", v) if pair(v).is_some() => {
                if let Some(i) = open.remove(&proc) {
                    ops[i].ret = pos;
                    if let Input::Cas { outcome, .. } = &mut ops[i].input {
                        *outcome = if t == ":ok" { CasOutcome::Ok } else { CasOutcome::Fail };
                    }
                }
            }
            (":fail", ":read", ":timed-out") => {
                if let Some(i) = open.remove(&proc) {
                    ops[i].ret = pos;
                }
            }
            _ => {}
        }
    }
    // Porcupine returns the ops still open after everything, with unknown
    // outcomes (its model accepts any state for them).
    let end = text.lines().count() as u64 + 1;
    for (_, i) in open {
        ops[i].ret = end;
        if let Input::Read(_) = ops[i].input {
            ops[i].input = Input::Read(None);
        }
    }
    Ok(Prepared { partitions: vec![(None, ops)], interner })
}
