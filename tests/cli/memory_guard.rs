//! A batch check that cannot fit the memory budget ends with a clear
//! error, exit 2, instead of meeting the out-of-memory killer: refused
//! before reading when the history's size predicts too much, stopped while
//! checking when the process grows past the budget.

use crate::support;

use std::time::Duration;
use support::cli::{isolde, temp_dir};

/// A generated list-append history of `txns` transactions in `dir`.
fn history(dir: &std::path::Path, txns: &str) -> String {
    let path = dir.join("h.edn").to_string_lossy().into_owned();
    let run = isolde(&["gen", "list-append", "--txns", txns, "-o", &path], None, Duration::from_secs(120));
    assert_eq!(run.code, 0, "{}", run.stderr);
    path
}

#[test]
fn a_history_larger_than_the_budget_is_refused_before_reading() {
    let dir = temp_dir("memory-guard-size");
    let path = history(dir.path(), "20000");
    let size_mb = std::fs::metadata(&path).expect("written").len() >> 20;
    assert!(size_mb >= 4, "{size_mb} MB");
    let run = isolde(&["analyze", &path, "--max-memory", "2"], None, Duration::from_secs(60));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("needs at least") && run.stderr.contains("--max-memory budget"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn a_check_that_outgrows_the_budget_stops_with_an_error() {
    let dir = temp_dir("memory-guard-watch");
    let path = history(dir.path(), "100000");
    // The size passes (about 0.85 MB per MB of input), the process does not.
    let available = (((std::fs::metadata(&path).expect("written").len() >> 20) + 2) * 10 / 9).to_string();
    let program = std::path::Path::new(env!("CARGO_BIN_EXE_isolde"));
    let out = std::process::Command::new(program)
        .args(["analyze", &path])
        .env("ISOLDE_AVAILABLE_MB", &available)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("stopped: the check holds"), "{stderr}");
}

#[test]
fn a_history_within_the_budget_is_checked_as_before() {
    let dir = temp_dir("memory-guard-fits");
    let path = history(dir.path(), "2000");
    let run = isolde(&["analyze", &path, "--max-memory", "4000"], None, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{}", run.stderr);
}
