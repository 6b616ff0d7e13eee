//! Helpers for the `isolde record` and `isolde hermitage` tests: the
//! servers the environment names, a record run, and the verdict of
//! analyzing its history.
//!
//! Tests never start, install or stop a shared server: a PostgreSQL test
//! runs only when `ISOLDE_TEST_POSTGRES` names one (a URL), a MariaDB test
//! only when `ISOLDE_TEST_MYSQL` does, and otherwise prints `SKIPPED` with
//! how to run it. `.ci/run` starts throwaway servers (`scripts/dbs.sh`),
//! sets both, and stops the servers when it exits.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::cli::{anomaly_types, isolde, Run};

/// The variable naming the PostgreSQL URL tests may use.
pub const POSTGRES_VAR: &str = "ISOLDE_TEST_POSTGRES";
/// The variable naming the MySQL/MariaDB URL tests may use.
pub const MYSQL_VAR: &str = "ISOLDE_TEST_MYSQL";

/// How to give a test a server, for SKIPPED lines.
fn how_to(var: &str) -> String {
    format!(
        "{var} is not set; to run it, start a throwaway server (`scripts/dbs.sh start` prints its URL, \
         `scripts/dbs.sh stop` removes it) and set {var}=URL, or run .ci/run, which does both"
    )
}

/// The URL `var` names, or `None` after printing why `test` is skipped.
fn server(var: &str, test: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().to_string()),
        _ => {
            skip(test, &how_to(var));
            None
        }
    }
}

/// Prints, past the test harness's output capture, that `test` is skipped.
pub fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// The PostgreSQL URL, or `None` after printing why `test` is skipped.
pub fn postgres(test: &str) -> Option<String> {
    server(POSTGRES_VAR, test)
}

/// The MariaDB URL, or `None` after printing why `test` is skipped.
pub fn mysql(test: &str) -> Option<String> {
    server(MYSQL_VAR, test)
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

/// A private PostgreSQL server (see [`private_postgres`]): stopped, and its
/// data removed, when dropped, also when the test fails.
pub struct PrivateServer {
    name: String,
    /// Its URL.
    pub url: String,
}

impl PrivateServer {
    /// Stops the server now (the test's fault); dropping stops it too.
    pub fn stop(&self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dbs.sh");
        let status =
            Command::new("bash").arg(&script).arg("stop").env("ISOLDE_DBS_DIR", private_dir(&self.name)).status();
        assert!(status.is_ok_and(|s| s.success()), "scripts/dbs.sh stop failed");
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dbs.sh");
        let _ = Command::new("bash").arg(&script).arg("stop").env("ISOLDE_DBS_DIR", private_dir(&self.name)).status();
        let _ = std::fs::remove_dir_all(private_dir(&self.name));
    }
}

/// Starts a PostgreSQL of this test's own (which the test may stop) on
/// `port` through `scripts/dbs.sh start postgres`, with the PostgreSQL
/// already installed here (never installing packages), or prints why `test`
/// is skipped and returns `None`. Only runs when `ISOLDE_TEST_POSTGRES` is
/// set: whoever set it agreed to servers being started for the tests.
pub fn private_postgres(test: &str, name: &str, port: u16) -> Option<PrivateServer> {
    postgres(test)?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dbs.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["start", "postgres"])
        .env("ISOLDE_DBS_DIR", private_dir(name))
        .env("ISOLDE_PG_PORT", port.to_string())
        .env("ISOLDE_DBS_NO_INSTALL", "1")
        .output();
    match out {
        Ok(o) => {
            let stdout = String::from_utf8_lossy(&o.stdout);
            let url = stdout.lines().find_map(|l| l.strip_prefix("ISOLDE_POSTGRES_URL=").map(str::to_string));
            let server = PrivateServer { name: name.to_string(), url: url.clone().unwrap_or_default() };
            if url.is_none() {
                skip(
                    test,
                    &format!("scripts/dbs.sh could not start PostgreSQL: {}", String::from_utf8_lossy(&o.stderr)),
                );
                return None;
            }
            Some(server)
        }
        Err(e) => {
            skip(test, &format!("cannot run {}: {e}", script.display()));
            None
        }
    }
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
