//! `isolde hermitage` end to end: SQLite (always), PostgreSQL and MariaDB
//! (the servers `ISOLDE_TEST_POSTGRES` and `ISOLDE_TEST_MYSQL` name, as
//! `.ci/run` sets them; without them those tests print `SKIPPED` and how to
//! run them). On the servers, the table must be Hermitage's own rows for
//! PostgreSQL and MySQL/InnoDB (github.com/ept/hermitage, README).

use crate::support;

use std::time::Duration;

use support::cli::{isolde, temp_dir};

const LIMIT: Duration = Duration::from_secs(120);

/// Hermitage's columns, in order.
const COLUMNS: [&str; 10] = ["G0", "G1a", "G1b", "G1c", "OTV", "PMP", "P4", "G-single", "G2-item", "G2"];

/// Runs `isolde hermitage -f json` with `args`; returns, per level, its
/// actual level and its columns in Hermitage's symbols.
fn table(args: &[&str]) -> Vec<(String, String, Vec<&'static str>)> {
    let mut all = vec!["hermitage", "-f", "json"];
    all.extend_from_slice(args);
    let t0 = std::time::Instant::now();
    let r = isolde(&all, None, LIMIT);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(t0.elapsed() < Duration::from_secs(60), "took {:?}", t0.elapsed());
    let v = r.json();
    v.as_array()
        .expect("a list")
        .iter()
        .map(|row| {
            let cols = COLUMNS
                .iter()
                .map(|c| match row["anomalies"][c].as_str() {
                    Some("prevented") => "✓",
                    Some("possible") => "—",
                    Some("read-only") => "R/O",
                    Some("some") => "some",
                    other => panic!("{c}: {other:?}"),
                })
                .collect();
            (row["level"].as_str().unwrap().to_string(), row["actual"].as_str().unwrap().to_string(), cols)
        })
        .collect()
}

fn row(level: &str, actual: &str, cells: &str) -> (String, String, Vec<&'static str>) {
    let cells: Vec<&'static str> = cells
        .split_whitespace()
        .map(|c| match c {
            "✓" => "✓",
            "—" => "—",
            "R/O" => "R/O",
            _ => "some",
        })
        .collect();
    assert_eq!(cells.len(), 10);
    (level.to_string(), actual.to_string(), cells)
}

#[test]
fn sqlite_prevents_every_anomaly_and_keeps_its_histories() {
    let dir = temp_dir("hermitage-sqlite");
    let d = dir.join("out");
    let got = table(&["-d", d.to_str().unwrap()]);
    assert_eq!(got, [row("serializable", "serializable", "✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓")]);
    // -d: every scenario's history (checked again here, independently of
    // the run) and its explanation, and the Markdown table.
    let histories: Vec<_> = std::fs::read_dir(d.join("serializable"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "edn"))
        .collect();
    assert_eq!(histories.len(), 14, "{histories:?}");
    for h in &histories {
        let r = isolde(&["analyze", "-f", "json", "-m", "serializable", h.to_str().unwrap()], None, LIMIT);
        assert_eq!(r.json()["valid?"], true, "{}", h.display());
        assert!(h.with_extension("txt").exists());
    }
    let lost = std::fs::read_to_string(d.join("serializable/p4.txt")).unwrap();
    assert!(lost.contains("UPDATE test SET value = 12 WHERE id = 1"), "{lost}");
    assert!(lost.contains("prevented"), "{lost}");
    let md = std::fs::read_to_string(d.join("table.md")).unwrap();
    assert!(md.starts_with("| DBMS |") && md.contains("SQLite"), "{md}");
}

#[test]
fn the_terminal_and_markdown_tables_show_hermitages_columns() {
    let r = isolde(&["hermitage"], None, LIMIT);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for c in COLUMNS {
        assert!(r.stdout.contains(c), "{c}: {}", r.stdout);
    }
    assert!(r.stdout.contains("\"serializable\"") && r.stdout.contains("✓"), "{}", r.stdout);
    // Without --verbose, only occurred anomalies get a line (none here);
    // with it, every scenario says why.
    assert!(!r.stdout.contains("serializable P4 (p4)"), "{}", r.stdout);
    let r = isolde(&["hermitage", "--verbose"], None, LIMIT);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("serializable P4 (p4): prevented, aborted: T2: database is locked"), "{}", r.stdout);
    assert!(
        r.stdout.contains("serializable G0 (g0): prevented, blocked: T2: UPDATE test SET value = 12"),
        "{}",
        r.stdout
    );
    let r = isolde(&["hermitage", "--format", "markdown"], None, LIMIT);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    assert!(lines[2].contains("| \"serializable\" | serializable | ✓ |"), "{}", r.stdout);
}

#[test]
fn bad_input_is_a_clear_error() {
    let cases: &[(&[&str], &str)] = &[
        (&["--db", "redis://localhost"], "bad database URL"),
        (&["--db", "postgres://nobody@127.0.0.1:1/db"], "127.0.0.1"),
        (&["--levels", "read-committed"], "does not offer read-committed"),
        (&["--levels", "snapshot"], "invalid value 'snapshot'"),
        (&["--format", "yaml"], "invalid value 'yaml'"),
        (&["--init-sql", "BOGUS"], "--init-sql \"BOGUS\""),
    ];
    for (args, msg) in cases {
        let r = isolde(&[&["hermitage"][..], args].concat(), None, LIMIT);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(msg), "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
    }
}

/// Hermitage's PostgreSQL rows.
#[cfg(feature = "postgres")]
#[test]
fn postgres_gives_hermitages_postgres_rows() {
    let Some(url) = support::record::postgres("postgres_gives_hermitages_postgres_rows") else { return };
    let got = table(&["--db", &url]);
    let want = [
        row("read-committed", "monotonic atomic view", "✓ ✓ ✓ ✓ ✓ — — — — —"),
        row("repeatable-read", "snapshot isolation", "✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ — —"),
        row("serializable", "serializable", "✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓"),
    ];
    assert_eq!(got, want);
}

/// Hermitage's MySQL/InnoDB rows, and repeatable read with MariaDB's
/// `innodb_snapshot_isolation` on: snapshot isolation.
#[cfg(feature = "mysql")]
#[test]
fn mariadb_gives_hermitages_mysql_rows() {
    let Some(url) = support::record::mysql("mariadb_gives_hermitages_mysql_rows") else { return };
    let got = table(&["--db", &url]);
    let want = [
        row("read-uncommitted", "read uncommitted", "✓ — — — — — — — — —"),
        row("read-committed", "monotonic atomic view", "✓ ✓ ✓ ✓ ✓ — — — — —"),
        row("repeatable-read", "monotonic atomic view", "✓ ✓ ✓ ✓ ✓ R/O — R/O — —"),
        row("serializable", "serializable", "✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓"),
    ];
    assert_eq!(got, want);
    let si = "SET SESSION innodb_snapshot_isolation = ON";
    let got = table(&["--db", &url, "--levels", "repeatable-read", "--init-sql", si]);
    assert_eq!(got, [row("repeatable-read", "snapshot isolation", "✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ — —")]);
}
