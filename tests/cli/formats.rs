//! The polygraph-checker input formats (dbcop, PolySI text, Cobra) end to
//! end through the `isolde` binary, and every dbcop history of the PolySI
//! corpus when it is present.

use crate::support;

use isolde::history::OpType;
use isolde::ingest::{read_path, Format};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `isolde analyze <path> --format json <extra>`: exit code and the
/// parsed JSON output.
fn analyze(path: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_isolde"))
        .arg("analyze")
        .arg(path)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("{}: not JSON ({e}): {stdout} {}", path.display(), String::from_utf8_lossy(&out.stderr))
    });
    (out.status.code().unwrap_or(-1), json)
}

/// A transaction as (write?, key, value) events.
type Txn = Vec<(bool, u64, u64)>;

/// Lost update: two sessions each read the initial x (0) and write x.
fn lost_update() -> Vec<Vec<Txn>> {
    vec![vec![vec![(false, 1, 0), (true, 1, 1)]], vec![vec![(false, 1, 0), (true, 1, 2)]]]
}

/// A serial history: w x1; r x1 w x2; r x2.
fn clean() -> Vec<Vec<Txn>> {
    vec![vec![vec![(true, 1, 1)], vec![(false, 1, 2)]], vec![vec![(false, 1, 1), (true, 1, 2)]]]
}

fn dbcop(sessions: &[Vec<Txn>]) -> Vec<u8> {
    let mut out = Vec::new();
    let per = sessions[0].len() as u64;
    for v in [0, sessions.len() as u64, 10, per, 2] {
        out.extend_from_slice(&u64::to_le_bytes(v));
    }
    for s in ["PostgreSQL", "start", "end"] {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&(sessions.len() as u64).to_le_bytes());
    for s in sessions {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        for t in s {
            out.extend_from_slice(&(t.len() as u64).to_le_bytes());
            for &(w, k, v) in t {
                out.push(w as u8);
                out.extend_from_slice(&k.to_le_bytes());
                out.extend_from_slice(&v.to_le_bytes());
                out.push(1);
            }
            out.push(1);
        }
    }
    out
}

fn polysi_text(sessions: &[Vec<Txn>]) -> String {
    let mut out = String::new();
    for (s, txns) in sessions.iter().enumerate() {
        for (t, txn) in txns.iter().enumerate() {
            for &(w, k, v) in txn {
                out.push_str(&format!("{}({k},{v},{s},{t})\n", if w { 'w' } else { 'r' }));
            }
        }
    }
    out
}

/// Writes one Cobra log per session into `dir`: write ids are the values
/// (unique per key in these histories), the writer txn id is looked up.
fn cobra(dir: &Path, sessions: &[Vec<Txn>]) {
    const INIT: i64 = 0xbebe_ebee;
    let mut writer = std::collections::HashMap::new();
    let mut id = 100i64;
    for txns in sessions {
        for txn in txns {
            id += 1;
            for &(w, _, v) in txn {
                if w {
                    writer.insert(v as i64, id);
                }
            }
        }
    }
    let mut id = 100i64;
    for (s, txns) in sessions.iter().enumerate() {
        let mut out = Vec::new();
        let rec = |out: &mut Vec<u8>, tag: u8, fields: &[i64]| {
            out.push(tag);
            for f in fields {
                out.extend_from_slice(&f.to_be_bytes());
            }
        };
        for txn in txns {
            id += 1;
            rec(&mut out, b'S', &[id]);
            for &(w, k, v) in txn {
                let (k, v) = (k as i64 * 7919, v as i64);
                if w {
                    rec(&mut out, b'W', &[v, k, v * 31]);
                } else if v == 0 {
                    rec(&mut out, b'R', &[INIT, INIT, k, 0]);
                } else {
                    rec(&mut out, b'R', &[writer[&v], v, k, v * 31]);
                }
            }
            rec(&mut out, b'C', &[id]);
        }
        // Session 1 is named T10 so that it sorts after T2 only numerically.
        let name = if s == 1 { "T10.log".to_string() } else { format!("T{}.log", s + 2) };
        std::fs::write(dir.join(name), out).expect("write log");
    }
    std::fs::write(dir.join("T2.debug"), "ignored").expect("write debug");
}

/// Writes `sessions` in `format` under a fresh directory; returns the path
/// to analyze.
fn write(format: &str, sessions: &[Vec<Txn>]) -> support::cli::TempFile {
    let dir = support::cli::temp_dir("formats");
    let name = match format {
        "dbcop" => {
            std::fs::write(dir.join("history.bincode"), dbcop(sessions)).expect("write");
            "history.bincode"
        }
        "polysi-text" => {
            std::fs::write(dir.join("history.txt"), polysi_text(sessions)).expect("write");
            "history.txt"
        }
        _ => {
            cobra(&dir, sessions);
            ""
        }
    };
    support::cli::TempFile::in_dir(dir, name)
}

#[test]
fn lost_update_is_invalid_and_clean_history_valid_in_every_format() {
    for format in ["dbcop", "polysi-text", "cobra"] {
        for explicit in [false, true] {
            let extra: &[&str] = if explicit { &["--input-format", format] } else { &[] };
            let p = write(format, &lost_update());
            let (code, v) = analyze(&p, extra);
            assert_eq!(code, 1, "{format}: {v}");
            assert_eq!(v["valid?"], serde_json::Value::Bool(false), "{format}");
            let types: Vec<&str> = v["anomaly-types"]
                .as_array()
                .map(|a| a.iter().filter_map(|t| t.as_str()).collect())
                .unwrap_or_default();
            assert!(types.contains(&"lost-update"), "{format}: {types:?}");
            let case = &v["anomalies"]["lost-update"][0];
            assert_eq!(case["value"], serde_json::Value::Null, "{format}: both read the initial state");
            let p = write(format, &clean());
            let (code, mut v) = analyze(&p, extra);
            // The default check also decides every level of the ladder.
            let levels = v.as_object_mut().and_then(|m| m.remove("levels"));
            assert!(levels.is_some_and(|l| l.as_array().is_some_and(|a| !a.is_empty())), "{format}");
            assert_eq!((code, &v), (0, &serde_json::json!({"valid?": true})), "{format}");
        }
    }
}

#[test]
fn formats_are_read_as_rw_register_with_sessions_as_processes() {
    for format in ["dbcop", "polysi-text", "cobra"] {
        let p = write(format, &clean());
        let h = read_path(&p, Format::Auto).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert!(h.registers_only, "{format}");
        let ops: Vec<(i64, OpType, usize)> = h.ops.iter().map(|o| (o.process, o.op_type, o.mop_len as usize)).collect();
        assert_eq!(ops, vec![(0, OpType::Ok, 1), (0, OpType::Ok, 1), (1, OpType::Ok, 2)], "{format}");
        let o = isolde::check::check(&h, &isolde::check::CheckOptions::default()).expect("runs");
        assert_eq!(o.workload, isolde::anomaly::Workload::RwRegister, "{format}");
    }
}

#[test]
fn wrong_input_format_is_a_usage_error() {
    let p = write("dbcop", &clean());
    let out = Command::new(env!("CARGO_BIN_EXE_isolde"))
        .arg("analyze")
        .arg(&*p)
        .args(["--input-format", "polysi-text"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("history.bincode:1:1: expected an operation"), "{err}");
}

/// All `history.bincode` files under `dir`, sorted.
fn bincode_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            bincode_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "history.bincode") {
            out.push(p);
        }
    }
    out.sort();
}

/// Every dbcop history of the PolySI corpus (`../shared/corpus/polysi`,
/// skipped when absent): op counts match the header (`n_node` sessions of
/// `n_transaction` transactions, failed ones as `:fail`), and `isolde
/// analyze` gives a verdict with valid JSON. Verdicts are printed (run with
/// `--nocapture` to see them).
#[test]
fn polysi_corpus_dbcop_histories() {
    let Some(root) = support::shared::path("corpus/polysi", "PolySI corpus dbcop histories") else { return };
    let mut files = Vec::new();
    bincode_files(&root, &mut files);
    if files.is_empty() {
        support::shared::skip("PolySI corpus dbcop histories", &format!("no history.bincode under {}", root.display()));
        return;
    }
    for f in &files {
        let bytes = std::fs::read(f).expect("read");
        let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let (n_node, n_txn) = (word(1), word(3));
        let h = read_path(f, Format::Auto).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(h.ops.len() as u64, n_node * n_txn, "{}", f.display());
        for p in 0..n_node as i64 {
            let n = h.ops.iter().filter(|o| o.process == p).count() as u64;
            assert_eq!(n, n_txn, "{}: session {p}", f.display());
        }
        assert!(h.ops.iter().all(|o| matches!(o.op_type, OpType::Ok | OpType::Fail)));
        let failed = h.ops.iter().filter(|o| o.op_type == OpType::Fail).count();
        let (code, v) = analyze(f, &[]);
        // 3 (unknown) only for histories with no inferable dependency (all
        // reads of the initial state).
        assert!(
            matches!(code, 0 | 1)
                || (code == 3 && v["anomaly-types"] == serde_json::json!(["empty-transaction-graph"])),
            "{}: exit {code}: {v}",
            f.display()
        );
        let name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        println!(
            "{name}: {} txns ({failed} failed, {} events dropped), exit {code}, valid? {}, anomalies {}",
            h.ops.len(),
            h.dropped_events,
            v["valid?"],
            v.get("anomaly-types").map_or("[]".to_string(), |a| a.to_string())
        );
    }
    let big = root.join("fig8_9_10/25_400_8_10000_0.3_uniform/history.bincode");
    if big.exists() {
        let best = (0..10)
            .map(|_| {
                let t = std::time::Instant::now();
                let h = read_path(&big, Format::Auto).map(|h| h.mops.len());
                assert!(h.is_ok());
                t.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min);
        println!("reading {}: best of 10 {:.3} ms", big.display(), best * 1e3);
    }
}
