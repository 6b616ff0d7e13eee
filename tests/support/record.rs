//! Helpers for the `isolde record` tests: throwaway servers from
//! `scripts/dbs.sh`, a record run, and the verdict of analyzing its history.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::cli::{anomaly_types, isolde, Run};

/// URLs of the servers `scripts/dbs.sh start` got running, and its notes
/// about the ones it could not start.
pub struct Servers {
    /// `postgres://...`, if PostgreSQL runs.
    pub postgres: Option<String>,
    /// `mysql://...`, if MariaDB runs.
    pub mysql: Option<String>,
    /// The script's standard error (why a server is missing).
    pub notes: String,
}

/// Starts (once per test binary; the script is idempotent) the throwaway
/// servers.
pub fn servers() -> &'static Servers {
    static S: OnceLock<Servers> = OnceLock::new();
    S.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dbs.sh");
        match Command::new("bash").arg(&script).arg("start").output() {
            Ok(out) => {
                let stdout = String::from_utf8_lossy(&out.stdout);
                let find = |var: &str| stdout.lines().find_map(|l| l.strip_prefix(var).map(|u| u.trim().to_string()));
                Servers {
                    postgres: find("ISOLDE_POSTGRES_URL="),
                    mysql: find("ISOLDE_MYSQL_URL="),
                    notes: String::from_utf8_lossy(&out.stderr).into_owned(),
                }
            }
            Err(e) => Servers { postgres: None, mysql: None, notes: format!("cannot run {}: {e}", script.display()) },
        }
    })
}

/// Prints, past the test harness's output capture, that `test` is skipped.
pub fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// The PostgreSQL URL, or `None` after printing why `test` is skipped.
pub fn postgres(test: &str) -> Option<String> {
    let s = servers();
    if s.postgres.is_none() {
        skip(test, &format!("scripts/dbs.sh could not start PostgreSQL: {}", s.notes.trim()));
    }
    s.postgres.clone()
}

/// The MariaDB URL, or `None` after printing why `test` is skipped.
pub fn mysql(test: &str) -> Option<String> {
    let s = servers();
    if s.mysql.is_none() {
        skip(test, &format!("scripts/dbs.sh could not start MariaDB: {}", s.notes.trim()));
    }
    s.mysql.clone()
}

/// Runs `isolde record` with `args` plus `-o <dir>/<name>`, asserting it
/// exits 0; returns the history's path.
pub fn record(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let path = out.to_str().expect("utf-8 path");
    let mut all = vec!["record", "--quiet", "-o", path];
    all.extend_from_slice(args);
    let r = isolde(&all, None, Duration::from_secs(300));
    assert_eq!(r.code, 0, "record {args:?}: {}", r.stderr);
    out
}

/// The verdict of `isolde analyze -f json -m <models>` on a history.
pub struct Verdict {
    /// `valid?` as Elle spells it: `true`, `false` or `unknown`.
    pub valid: String,
    /// Reported anomaly types.
    pub anomalies: Vec<String>,
    /// The whole run, for messages.
    pub run: Run,
}

/// Analyzes `history` against `models` (comma separated).
pub fn analyze(history: &Path, models: &str) -> Verdict {
    let r = isolde(
        &["analyze", "-f", "json", "-m", models, history.to_str().expect("utf-8 path")],
        None,
        Duration::from_secs(300),
    );
    let v = r.json();
    let valid = match &v["valid?"] {
        serde_json::Value::Bool(b) => b.to_string(),
        other => other.as_str().unwrap_or("?").to_string(),
    };
    Verdict { valid, anomalies: anomaly_types(&v), run: r }
}

/// Counts of each op type in an EDN history written by `isolde record`,
/// checking that every line is one whole op map and that every invocation
/// is completed by a later line of the same process.
pub fn op_counts(history: &Path) -> (usize, usize, usize, usize) {
    let text = std::fs::read_to_string(history).expect("history");
    let (mut inv, mut ok, mut fail, mut info) = (0, 0, 0, 0);
    let mut open: std::collections::HashMap<String, usize> = Default::default();
    for (i, line) in text.lines().enumerate() {
        assert!(line.starts_with("{:type :") && line.ends_with(&format!(", :index {i}}}")), "line {i}: {line}");
        let p = line.split(":process ").nth(1).and_then(|s| s.split(',').next()).expect("process").to_string();
        if line.starts_with("{:type :invoke") {
            inv += 1;
            assert!(open.insert(p, i).is_none(), "line {i}: process invoked twice");
        } else {
            assert!(open.remove(&p).is_some(), "line {i}: completion without invocation");
            if line.starts_with("{:type :ok") {
                ok += 1;
            } else if line.starts_with("{:type :fail") {
                fail += 1;
            } else if line.starts_with("{:type :info") {
                info += 1;
            } else {
                panic!("line {i}: {line}");
            }
        }
    }
    assert!(open.is_empty(), "invocations never completed: {open:?}");
    assert!(text.ends_with('\n'));
    (inv, ok, fail, info)
}

/// The state directory of a private server named `name`.
fn private_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("isolde-dbs-{name}-{}", std::process::id()))
}

/// Starts a PostgreSQL of this test's own (which the test may stop) on
/// `port` through `scripts/dbs.sh start postgres`, or prints why `test` is
/// skipped and returns `None`.
pub fn private_postgres(test: &str, name: &str, port: u16) -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dbs.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["start", "postgres"])
        .env("ISOLDE_DBS_DIR", private_dir(name))
        .env("ISOLDE_PG_PORT", port.to_string())
        .output();
    match out {
        Ok(o) => {
            let stdout = String::from_utf8_lossy(&o.stdout);
            let url = stdout.lines().find_map(|l| l.strip_prefix("ISOLDE_POSTGRES_URL=").map(str::to_string));
            if url.is_none() {
                skip(
                    test,
                    &format!("scripts/dbs.sh could not start PostgreSQL: {}", String::from_utf8_lossy(&o.stderr)),
                );
            }
            url
        }
        Err(e) => {
            skip(test, &format!("cannot run {}: {e}", script.display()));
            None
        }
    }
}

/// Stops (and deletes) the private servers named `name`.
pub fn stop_private(name: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dbs.sh");
    let status = Command::new("bash").arg(&script).arg("stop").env("ISOLDE_DBS_DIR", private_dir(name)).status();
    assert!(status.is_ok_and(|s| s.success()), "scripts/dbs.sh stop failed");
    let _ = std::fs::remove_dir_all(private_dir(name));
}

/// Records 2000 serializable transactions against `url` while connections
/// are killed and statements time out (`--faults kill-connections,timeouts`),
/// and asserts that connections were killed, every invocation completed and
/// was counted in the summary (`:info` included), and the history is still
/// serializable: faults cause no false alarm.
pub fn faults_cause_no_false_alarm(url: &str, dir_name: &str) {
    let dir = super::cli::temp_dir(dir_name);
    let out = dir.join("f.edn");
    let path = out.to_str().expect("utf-8 path");
    let r = isolde(
        &[
            "record",
            "--quiet",
            "--db",
            url,
            "--isolation",
            "serializable",
            "--txns",
            "2000",
            "--sessions",
            "8",
            "--keys",
            "8",
            "--faults",
            "kill-connections,timeouts",
            "--fault-interval-ms",
            "10",
            "-o",
            path,
        ],
        None,
        Duration::from_secs(300),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let kills: u64 = r
        .stderr
        .split("faults: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no kill count: {}", r.stderr));
    assert!(kills > 0, "{}", r.stderr);
    let (inv, ok, fail, info) = op_counts(&out);
    assert_eq!(inv, 2000);
    // The summary counts every outcome, :info included.
    assert!(r.stderr.contains(&format!("{ok} ok, {fail} fail, {info} info")), "{}", r.stderr);
    let v = analyze(&out, "serializable");
    assert_eq!(v.valid, "true", "{:?}", v.anomalies);
}
