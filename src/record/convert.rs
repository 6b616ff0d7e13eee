//! `--output-format json|dbcop`: the recorded history in another checker's
//! format, written once the run is over.
//!
//! The run itself always writes Jepsen EDN, one op per line, flushed as it
//! goes, so that a crash or Ctrl-C leaves a complete history; with another
//! output format that EDN file is kept beside the output (`FILE.edn`) and
//! converted when the run ends:
//!
//! - **json** is elle-cli's JSON, one array of op objects
//!   ([`crate::gen::json::edn_to_json`]), for either workload.
//! - **dbcop** is dbcop's `history.bincode` (see [`crate::gen::dbcop`]):
//!   rw-register only (dbcop has no lists), one session per Jepsen
//!   `:process` in the order it ran, an `:ok` transaction with
//!   `success = true` and the values its reads observed, a `:fail` one with
//!   `success = false` and its reads `0`, every variable starting at `0`
//!   (which the recorder never writes). dbcop has no indeterminate
//!   transactions, so a history with `:info` ones is refused (with the EDN
//!   file named) rather than written as if they committed or aborted.

use super::RecordError;
use crate::history::{Atom, History, MopFn, MopValue, OpType, Value};
use crate::ingest;
use std::path::{Path, PathBuf};

/// Where the run writes its EDN when the output format is not EDN.
pub fn edn_path(output: &Path) -> PathBuf {
    let mut s = output.as_os_str().to_owned();
    s.push(".edn");
    PathBuf::from(s)
}

/// Writes the EDN history at `edn` to `out` as elle-cli JSON.
pub fn to_json(edn: &Path, out: &Path) -> Result<(), RecordError> {
    let text = std::fs::read_to_string(edn).map_err(|source| output_err(edn, source))?;
    let json = crate::gen::json::edn_to_json(&text).map_err(|message| RecordError::Convert {
        path: edn.display().to_string(),
        format: "json",
        message,
    })?;
    std::fs::write(out, json).map_err(|source| output_err(out, source))
}

/// Writes the rw-register EDN history at `edn` to `out` as dbcop bincode.
pub fn to_dbcop(edn: &Path, out: &Path) -> Result<(), RecordError> {
    let h = ingest::read_path(edn, ingest::Format::Edn).map_err(|e| convert_err(edn, e.to_string()))?;
    let bytes = dbcop_bytes(&h).map_err(|message| match h.ops.iter().any(|o| o.op_type == OpType::Info) {
        true => convert_err(edn, format!("{message}; the complete history is the EDN file")),
        false => convert_err(edn, message),
    })?;
    std::fs::write(out, bytes).map_err(|source| output_err(out, source))
}

/// An rw-register history as dbcop bincode: one session per `:process` in
/// the order it first ran, `:ok` and `:fail` transactions. Refuses
/// histories with `:info` transactions, lists, and keys or values that are
/// not non-negative integers (the message says which).
pub fn dbcop_bytes(h: &History) -> Result<Vec<u8>, String> {
    let info = h.ops.iter().filter(|o| o.op_type == OpType::Info).count();
    if info > 0 {
        return Err(format!(
            "{info} transactions have an unknown outcome (:info), which dbcop's format cannot express"
        ));
    }
    let int = |v: &Value, what: &str| -> Result<u64, String> {
        match v {
            Value::Atom(Atom::Int(n)) if *n >= 0 => Ok(*n as u64),
            other => Err(format!("{what} {other} is not a non-negative integer, as dbcop needs")),
        }
    };
    let mut process: Vec<i64> = Vec::new();
    let mut sessions: Vec<Vec<(Vec<crate::gen::dbcop::Event>, bool)>> = Vec::new();
    let (mut keys, mut events) = (0u64, 0u64);
    for op in h.ops.iter().filter(|o| matches!(o.op_type, OpType::Ok | OpType::Fail)) {
        let ok = op.op_type == OpType::Ok;
        let mut evs = Vec::new();
        for m in h.mops_of(op) {
            let key = int(h.key(m.key), "key")?;
            keys = keys.max(key + 1);
            let value = match (m.f, m.value) {
                (MopFn::Append, _) | (_, MopValue::List { .. }) => {
                    return Err("dbcop's format holds registers, not lists (record rw-register)".into())
                }
                (MopFn::Insert | MopFn::Delete | MopFn::PredRead | MopFn::PredEntry, _) | (_, MopValue::Entries(_)) => {
                    return Err("dbcop's format holds registers, not closed-predicate micro-ops".into())
                }
                (MopFn::Read, _) if !ok => 0,
                (_, MopValue::Nil) => 0,
                (_, MopValue::Int(v)) => match h.value(v) {
                    Some(x) => int(&x, "value")?,
                    None if v > 0 => v as u64,
                    None => return Err(format!("value {v} cannot be told from dbcop's initial 0")),
                },
            };
            evs.push((m.f == MopFn::Write, key, value, ok));
        }
        events = events.max(evs.len() as u64);
        let s = match process.iter().position(|&p| p == op.process) {
            Some(s) => s,
            None => {
                process.push(op.process);
                sessions.push(Vec::new());
                sessions.len() - 1
            }
        };
        sessions[s].push((evs, ok));
    }
    let txns = sessions.iter().map(Vec::len).max().unwrap_or(0) as u64;
    let params = [0, sessions.len() as u64, keys, txns, events];
    let start = crate::gen::dbcop::START;
    Ok(crate::gen::dbcop::encode_with(params, ["isolde record", start, start], &sessions))
}

fn output_err(path: &Path, source: std::io::Error) -> RecordError {
    RecordError::Output { path: path.display().to_string(), source }
}

fn convert_err(path: &Path, message: String) -> RecordError {
    RecordError::Convert { path: path.display().to_string(), format: "dbcop", message }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary directory, removed when dropped.
    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp(name: &str, text: &str) -> (Dir, PathBuf) {
        let dir = std::env::temp_dir().join(format!("isolde-convert-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let p = dir.join("h.edn");
        std::fs::write(&p, text).expect("write");
        (Dir(dir), p)
    }

    const OK_AND_FAIL: &str = "{:type :invoke, :f :txn, :value [[:w 1 1] [:r 2 nil]], :process 0, :time 1, :index 0}
{:type :ok, :f :txn, :value [[:w 1 1] [:r 2 nil]], :process 0, :time 2, :index 1}
{:type :invoke, :f :txn, :value [[:r 1 nil] [:w 2 1]], :process 1, :time 3, :index 2}
{:type :fail, :f :txn, :value [[:r 1 nil] [:w 2 1]], :process 1, :time 4, :index 3}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0, :time 5, :index 4}
{:type :ok, :f :txn, :value [[:r 1 1]], :process 0, :time 6, :index 5}
";

    #[test]
    fn dbcop_sessions_keep_ok_and_fail_transactions() {
        let (_dir, edn) = temp("okfail", OK_AND_FAIL);
        let out = edn.with_extension("bincode");
        to_dbcop(&edn, &out).expect("converts");
        let h = ingest::read_path(&out, ingest::Format::Dbcop).expect("dbcop reads back");
        let kinds: Vec<(i64, OpType)> = h.ops.iter().map(|o| (o.process, o.op_type)).collect();
        // Session 0's two transactions, then session 1's failed one.
        assert_eq!(kinds, [(0, OpType::Ok), (0, OpType::Ok), (1, OpType::Fail)]);
        let reads: Vec<MopValue> = h.mops_of(&h.ops[1]).iter().map(|m| m.value).collect();
        assert_eq!(reads, [MopValue::Int(1)]);
    }

    #[test]
    fn dbcop_refuses_info_transactions() {
        let text = format!(
            "{OK_AND_FAIL}{{:type :invoke, :f :txn, :value [[:w 1 2]], :process 2, :time 7, :index 6}}
{{:type :info, :f :txn, :value [[:w 1 2]], :process 2, :time 8, :index 7}}
"
        );
        let (_dir, edn) = temp("info", &text);
        let out = edn.with_extension("bincode");
        match to_dbcop(&edn, &out) {
            Err(RecordError::Convert { format: "dbcop", message, .. }) => {
                assert!(message.contains(":info"), "{message}")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(!out.exists());
    }

    #[test]
    fn json_is_one_array_of_the_same_ops() {
        let (_dir, edn) = temp("json", OK_AND_FAIL);
        let out = edn.with_extension("json");
        to_json(&edn, &out).expect("converts");
        let h = ingest::read_path(&out, ingest::Format::Json).expect("json reads back");
        assert_eq!(h.ops.len(), 6);
    }
}
