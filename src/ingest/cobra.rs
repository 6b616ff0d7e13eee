//! Reader for Cobra client logs (CobraBench's output, PolySI's `COBRA`
//! input): a directory of binary files whose names end in `.log`, one file
//! per client session. Other files (`*.debug`, `*.error`) are ignored.
//!
//! Each file is a sequence of big-endian records with a one-byte ASCII tag
//! and no header or framing:
//!
//! | tag | payload | meaning |
//! |-----|---------|---------|
//! | `S` | `txnid: i64` | start of a transaction |
//! | `C` | `txnid: i64` | commit of the open transaction |
//! | `W` | `write_id, key_hash, value_hash: i64` | a write |
//! | `R` | `writer_txnid, write_id, key_hash, value_hash: i64` | a read |
//!
//! Mapping onto the rw-register model: files are sorted by name in
//! numeric-aware order (`T2.log` before `T10.log`) and the file at position
//! `i` is `:process i`; each transaction (the records between `S` and `C`)
//! is one `:ok` completion op `:f :txn`. The key is `key_hash` and the
//! micro-op value is the write's globally unique `write_id`, both read as
//! unsigned 64-bit numbers and printed so (value
//! hashes need not be unique, write ids are): `[:w k write_id]` and
//! `[:r k write_id]`. A read whose writer is Cobra's INIT (`0xbebeebee`) or
//! NULL (`0xdeadbeef`) id read the initial state: `[:r k nil]`. Reads with
//! the garbage-collection write ids `0x23332333` and `0x66666666` are not
//! data reads: they are left out and counted in [`History::dropped_events`].
//! A transaction still open at the end of its file (the client crashed) may
//! or may not have committed: it becomes an `:info` op.
//!
//! With Cobra's `TIME_ORDER_ON`, `S` and `C` carry a second `i64`, a
//! timestamp. A file is read with that layout only when the plain layout
//! does not fit its record structure and the timestamped one does (the
//! byte after a plain `S` record is then a timestamp byte, not a tag); the
//! timestamps themselves are not used. Should a file fit both layouts, the
//! plain one is taken.
//!
//! Malformed input (an unknown tag, a truncated record, a nested `S`, a `C`
//! without `S` or for another transaction, a read or write outside a
//! transaction) is an [`IngestError::Binary`] naming the file, the record's
//! number in it (0-based) and its byte offset.
//!
//! Viper's JSON logs are also named `J<tid>.log`, but hold one JSON object
//! per line; a log that starts with `{` (never a Cobra tag) is refused as
//! that unsupported format rather than reported as a bad Cobra record. Every
//! log must be a regular file (or a symbolic link to one), and all logs of a
//! directory together at most [`super::MAX_INPUT_BYTES`] bytes, both checked
//! before a byte is read.

use super::cobra_log::{timestamped, LogError, LogMop, LogReader, TxnEnd};
use super::error::IngestError;
use crate::history::{Atom, History, HistoryBuilder, Mop, MopFn, MopValue, OpType, RawOp};
use std::cmp::Ordering;
use std::path::Path;

#[cfg(test)]
use super::cobra_log::{GC_IDS, INIT_ID, NULL_ID};

/// True when a log looks like Viper's JSON (a `{` where a tag belongs).
pub(crate) fn is_viper_json(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// The refusal of a Viper JSON log.
pub(crate) fn viper_refusal(name: &str) -> IngestError {
    IngestError::Unreadable {
        path: name.to_string(),
        reason: "is a Viper JSON log (one JSON transaction per line), not a binary Cobra log; \
                 Viper's format is not supported: convert it to Jepsen EDN or elle-cli JSON"
            .into(),
    }
}

/// Reads one session's log into `b` as `process`; returns the number of
/// garbage-collection reads left out.
fn session(b: &mut HistoryBuilder, bytes: &[u8], process: i64, name: &str) -> Result<usize, IngestError> {
    let ts = timestamped(bytes).map_err(|source| IngestError::Io { path: name.to_string(), source })?;
    let txn = Atom::Keyword("txn".into());
    let mut log = LogReader::new(bytes, ts);
    let mut mops = Vec::new();
    loop {
        let end = match log.next_txn(&mut mops) {
            Ok(Some(end)) => end,
            Ok(None) => return Ok(log.dropped()),
            Err(LogError::Bad(e)) => return Err(e.into_ingest(name)),
            Err(LogError::Io(source)) => return Err(IngestError::Io { path: name.to_string(), source }),
        };
        let start = b.mop_count();
        for m in &mops {
            let mop = match *m {
                LogMop::Write { key, write_id } => {
                    let key = b.key(Atom::from_u64(key));
                    Mop { f: MopFn::Write, key, value: MopValue::Int(b.u64_value(write_id)) }
                }
                LogMop::Read { key, write_id } => {
                    let key = b.key(Atom::from_u64(key));
                    let value = write_id.map_or(MopValue::Nil, |w| MopValue::Int(b.u64_value(w)));
                    Mop { f: MopFn::Read, key, value }
                }
            };
            b.push_mop(mop);
        }
        let op_type = if end == TxnEnd::Committed { OpType::Ok } else { OpType::Info };
        b.push_op(
            RawOp {
                index: None,
                time: None,
                op_type,
                process: Some(process),
                f: txn.clone(),
                extras: Vec::new(),
                line: 0,
            },
            start,
        );
    }
}

/// Parses one Cobra log as a single session (`:process 0`).
pub(crate) fn parse(source: &str, bytes: &[u8]) -> Result<History, IngestError> {
    if is_viper_json(bytes) {
        return Err(viper_refusal(source));
    }
    let mut b = HistoryBuilder::new(source);
    b.set_registers_only();
    let dropped = session(&mut b, bytes, 0, source)?;
    b.count_dropped(dropped);
    Ok(b.finish())
}

/// Compares file names so that runs of digits compare as numbers
/// (`T2.log` < `T10.log`), everything else bytewise.
pub(crate) fn numeric_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let da = &a[si..i];
            let db = &b[sj..j];
            let ta = &da[da.iter().position(|&c| c != b'0').unwrap_or(da.len())..];
            let tb = &db[db.iter().position(|&c| c != b'0').unwrap_or(db.len())..];
            let o = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb)).then_with(|| da.len().cmp(&db.len()));
            if o != Ordering::Equal {
                return o;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

/// The `*.log` files of a directory, in session order.
pub(crate) fn log_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, IngestError> {
    let io = |source| IngestError::Io { path: dir.display().to_string(), source };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".log") && !entry.file_type().map_err(io)?.is_dir() {
            files.push((name, entry.path()));
        }
    }
    files.sort_by(|a, b| numeric_order(&a.0, &b.0));
    Ok(files.into_iter().map(|f| f.1).collect())
}

/// Reads a directory of Cobra logs, one session per `*.log` file.
pub(crate) fn read_dir(dir: &Path) -> Result<History, IngestError> {
    let files = log_files(dir)?;
    if files.is_empty() {
        return Err(IngestError::Unreadable {
            path: dir.display().to_string(),
            reason: "a directory without any `*.log` file (Cobra client logs)".into(),
        });
    }
    // Every log must be a regular file, and all of them together fit the
    // limit: checked from metadata, before any is opened (opening a FIFO
    // blocks).
    let mut total = 0u64;
    for path in &files {
        let name = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|source| IngestError::Io { path: name.clone(), source })?;
        super::regular_file(&name, &meta)?;
        total = total.saturating_add(meta.len());
    }
    if total > super::MAX_INPUT_BYTES {
        return Err(IngestError::TooLarge {
            source_name: dir.display().to_string(),
            len: total,
            limit: super::MAX_INPUT_BYTES,
        });
    }
    let mut b = HistoryBuilder::new(dir.display().to_string());
    b.set_registers_only();
    let mut budget = super::MAX_INPUT_BYTES;
    for (process, path) in files.iter().enumerate() {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|source| IngestError::Io { path: name.clone(), source })?;
        let meta = file.metadata().map_err(|source| IngestError::Io { path: name.clone(), source })?;
        super::regular_file(&name, &meta)?;
        let bytes = super::read_capped(&name, file, budget)?;
        budget -= bytes.len() as u64;
        if is_viper_json(&bytes) {
            return Err(viper_refusal(&name));
        }
        let dropped = session(&mut b, &bytes, process as i64, &name)?;
        b.count_dropped(dropped);
    }
    Ok(b.finish())
}

/// Test helpers: encodes Cobra records (the integration tests' own,
/// `tests/support/cobra.rs`: one copy).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../tests/support/cobra.rs"]
pub(crate) mod encode;

#[cfg(test)]
mod tests {
    use super::encode::{r, sc, w};
    use super::*;

    fn summary(h: &History) -> Vec<(i64, OpType, String)> {
        h.ops.iter().map(|op| (op.process, op.op_type, crate::gen::testkit::mops_text(h, op))).collect()
    }

    fn err(bytes: &[u8]) -> String {
        match parse("T1.log", bytes) {
            Ok(_) => panic!("parsed"),
            Err(e) => e.to_string(),
        }
    }

    fn log() -> Vec<u8> {
        [
            sc(b'S', 11),
            r(INIT_ID, INIT_ID, -5, 0),
            w(100, -5, 42),
            r(11, 100, -5, 42),
            r(9, GC_IDS[0], -5, 0),
            sc(b'C', 11),
            sc(b'S', 12),
            r(3, 77, 8, 1),
            r(NULL_ID, 5, 8, 1),
            sc(b'C', 12),
            sc(b'S', 13),
            w(101, 8, 2),
        ]
        .concat()
    }

    #[test]
    fn maps_records_to_transactions() {
        let h = match parse("T1.log", &log()) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        assert!(h.registers_only);
        assert_eq!(h.dropped_events, 1);
        assert_eq!(
            summary(&h),
            vec![
                (
                    0,
                    OpType::Ok,
                    "r 18446744073709551611 nil, w 18446744073709551611 100, r 18446744073709551611 100".to_string()
                ),
                (0, OpType::Ok, "r 8 77, r 8 nil".to_string()),
                (0, OpType::Info, "w 8 101".to_string()),
            ]
        );
    }

    #[test]
    fn timestamped_layout_is_detected() {
        let ts = |tag, id: i64| [sc(tag, id), 1_700_000_000_000_000_000i64.to_be_bytes().to_vec()].concat();
        let bytes = [ts(b'S', 1), w(5, 1, 1), ts(b'C', 1), ts(b'S', 2), r(1, 5, 1, 1), ts(b'C', 2)].concat();
        let h = parse("T1.log", &bytes).map(|h| summary(&h)).map_err(|e| e.to_string());
        assert_eq!(h, Ok(vec![(0, OpType::Ok, "w 1 5".to_string()), (0, OpType::Ok, "r 1 5".to_string())]));
    }

    #[test]
    fn malformed_logs_name_the_offset() {
        assert_eq!(
            err(&[sc(b'S', 1), vec![b'X']].concat()),
            "T1.log: record 1, at byte 9: expected a record tag 'S', 'C', 'W' or 'R', found 'X'"
        );
        assert_eq!(
            err(&[sc(b'S', 1), w(1, 2, 3)[..10].to_vec()].concat()),
            "T1.log: record 1, at byte 9: expected a complete 'W' record of 25 bytes, found end of input after 10 bytes"
        );
        assert_eq!(
            err(&[sc(b'S', 1), sc(b'S', 2)].concat()),
            "T1.log: record 1, at byte 9: expected a commit 'C' of transaction 1 (started at byte 0), found a nested start 'S' of transaction 2"
        );
        assert_eq!(
            err(&sc(b'C', 4)),
            "T1.log: record 0, at byte 0: expected a start 'S' before a commit, found a commit 'C' of transaction 4 with no transaction open"
        );
        assert_eq!(
            err(&[sc(b'S', 1), sc(b'C', 2)].concat()),
            "T1.log: record 1, at byte 9: expected a commit 'C' of transaction 1 (started at byte 0), found a commit of transaction 2"
        );
        assert_eq!(
            err(&w(1, 2, 3)),
            "T1.log: record 0, at byte 0: expected a start 'S' before a read or write, found 'W' record"
        );
    }

    #[test]
    fn write_ids_and_keys_are_unsigned() {
        let h = match parse("T1.log", &[sc(b'S', 1), w(-1, 5, 0), r(1, -1, 5, 0), sc(b'C', 1)].concat()) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            summary(&h),
            vec![(0, OpType::Ok, "w 5 18446744073709551615, r 5 18446744073709551615".to_string())]
        );
    }

    #[test]
    fn numeric_aware_file_order() {
        let mut names = vec!["T10.log", "T2.log", "T1.log", "A.log", "T02.log", "T2a.log"];
        names.sort_by(|a, b| numeric_order(a, b));
        assert_eq!(names, vec!["A.log", "T1.log", "T2.log", "T2a.log", "T02.log", "T10.log"]);
    }

    #[test]
    fn reads_a_directory_of_logs_in_numeric_order() {
        let dir = std::env::temp_dir().join(format!("isolde-cobra-test-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let files = [
            ("T10.log", [sc(b'S', 3), r(1, 7, 1, 0), sc(b'C', 3)].concat()),
            ("T2.log", [sc(b'S', 1), w(7, 1, 9), sc(b'C', 1)].concat()),
            ("T2.debug", b"not a log".to_vec()),
        ];
        for (name, bytes) in &files {
            assert!(std::fs::write(dir.join(name), bytes).is_ok());
        }
        let h = read_dir(&dir).map(|h| summary(&h)).map_err(|e| e.to_string());
        assert_eq!(h, Ok(vec![(0, OpType::Ok, "w 1 7".to_string()), (1, OpType::Ok, "r 1 7".to_string())]));
        assert!(std::fs::write(dir.join("T3.log"), b"Z").is_ok());
        let e = read_dir(&dir).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.ends_with("T3.log: record 0, at byte 0: expected a record tag 'S', 'C', 'W' or 'R', found 'Z'"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
