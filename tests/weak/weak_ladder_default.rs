//! The default of `isolde analyze` (no `--model`): Elle's verdict and exit
//! status, and one table of every level of the ladder, each decided by its
//! own checker in the same run; the same on a terminal and in a pipe, and
//! the levels in the JSON result map.

use crate::support;

use std::time::Duration;
use support::cli::{isolde, run_program, temp_dir};

/// weak.md's E-RA: a fractured read (read committed holds, read atomic
/// fails), which the default strict-serializable verdict calls G-single.
const FRACTURED: &str = "{:type :ok, :f :txn, :process 0, :value [[:w :x 1] [:w :y 1]], :index 0}\n\
{:type :ok, :f :txn, :process 1, :value [[:r :y nil] [:r :x 1]], :index 1}\n";

/// The cells of the table row of `level`, a cell wrapped over several
/// lines (the table fits the width) read back as one line.
fn row(out: &str, level: &str) -> Vec<String> {
    let cells = |l: &str| -> Vec<String> {
        let inner = l.trim().trim_start_matches('│').trim_end_matches('│');
        inner.split('┆').map(|c| c.trim().to_string()).collect()
    };
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with('│')).collect();
    let Some(at) = lines.iter().position(|l| cells(l).first().is_some_and(|c| c == level)) else {
        return Vec::new();
    };
    let mut row = cells(lines[at]);
    for more in lines[at + 1..].iter().map(|l| cells(l)).take_while(|c| c.first().is_some_and(|c| c.is_empty())) {
        for (cell, part) in row.iter_mut().zip(more).filter(|(_, p)| !p.is_empty()) {
            // A line broken after a hyphen joins without a space.
            if !cell.ends_with('-') || cell.ends_with(" -") {
                cell.push(' ');
            }
            cell.push_str(&part);
        }
    }
    row
}

fn fractured_file(name: &str) -> (support::cli::TempDir, String) {
    let dir = temp_dir(name);
    let p = dir.join("fractured.edn");
    std::fs::write(&p, FRACTURED).expect("write");
    let p = p.to_string_lossy().to_string();
    (dir, p)
}

#[test]
fn a_pipe_gets_one_table_of_every_level() {
    let (_dir, path) = fractured_file("ladder-pipe");
    let piped = isolde(&["analyze", &path, "--format", "table"], None, Duration::from_secs(30));
    assert_eq!(piped.code, 1, "the exit status is the Elle verdict's: {piped:?}");
    let out = &piped.stdout;
    assert_eq!(out.matches("verdict").count(), 2, "one verdict line, one table of levels: {out}");
    assert!(!out.contains("consistency model"), "no second table of models: {out}");
    assert_eq!(row(out, "read-committed-be")[1..], ["valid", "weak"], "{out}");
    let ra = row(out, "read-atomic");
    assert_eq!(ra[1], "invalid", "{out}");
    assert!(ra[2].starts_with("fractured-read (weak): "), "{out}");
    // Causal consistency implies read atomic, so it fails with it; the
    // witness is shown once.
    let cc = row(out, "causal-cerone");
    assert_eq!((cc[1].as_str(), cc[2].as_str()), ("invalid", "fractured-read (weak)"), "{out}");
    assert!(ra[2].contains("T0") && ra[2].contains("TAP-k"), "{out}");
    assert_eq!(row(out, "read-committed")[1], "valid", "{out}");
}

#[test]
fn the_json_result_map_has_every_level() {
    let (_dir, path) = fractured_file("ladder-json");
    let r = isolde(&["analyze", &path, "--format", "json"], None, Duration::from_secs(30));
    assert_eq!(r.code, 1, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let levels = v["levels"].as_array().expect("levels");
    assert_eq!(levels.len(), isolde::levels::LEVELS.len());
    let ra = levels.iter().find(|l| l["level"] == "read-atomic").expect("read-atomic");
    assert_eq!(ra["valid?"], false);
    assert_eq!(ra["anomaly"], "fractured-read");
    assert_eq!(ra["decided-by"], "weak");
    // The violation is a finding of the ladder's own weak check, not of the
    // requested model: its witness travels with the level.
    assert!(ra["witness"].is_object(), "{ra}");
    let rc = levels.iter().find(|l| l["level"] == "read-committed-be").expect("rc");
    assert_eq!(rc["valid?"], true);
}

#[test]
fn a_terminal_gets_what_a_pipe_gets() {
    let (_dir, path) = fractured_file("ladder-tty");
    let piped = isolde(&["analyze", &path, "--format", "table"], None, Duration::from_secs(30));
    // `script` runs the command on a pseudo-terminal.
    let Ok(script) = which("script") else {
        eprintln!("skipped: no `script` to give isolde a terminal");
        return;
    };
    let cmd = format!("{} analyze {path}", env!("CARGO_BIN_EXE_isolde"));
    let tty = run_program(&script, &["-qec", &cmd, "/dev/null"], None, Duration::from_secs(60));
    assert_eq!(tty.code, 1, "the exit status is the Elle verdict's: {tty:?}");
    let out = tty.stdout.replace('\r', "");
    // The terminal's width decides where cells wrap: compare the text of
    // the tables without their drawing and spacing.
    let text = |s: &str| {
        s.chars().filter(|c| !c.is_whitespace() && !('\u{2500}'..='\u{257f}').contains(c)).collect::<String>()
    };
    assert_eq!(text(&out), text(&piped.stdout), "{out}\n{}", piped.stdout);
    assert!(out.contains("causal-cerone"), "{out}");
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()))
        .ok_or(())
}
