//! The `isolde explore` command line: arguments, output, exit status.
//!
//! Exit status: 0 the assertion holds in every history, 1 some history
//! breaks it, 2 a bad program (or level, or file), 3 a `--timeout` or
//! `--max-histories` budget stopped the search before it found a violation
//! (never a false "holds").

use super::witness::{label, Source};
use super::{explore, Level, Options, Outcome, Program, Verdict};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `isolde explore`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ExploreArgs {
    /// The program (EDN; `isolde help explore.md` describes it).
    pub program: PathBuf,
    /// Isolation level: read-committed-be, read-atomic, causal-cerone
    /// (transactional-causal), prefix, snapshot-isolation, serializable (all
    /// with session order).
    #[arg(long, short = 'l')]
    pub level: String,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "text", help_heading = "Output")]
    pub format: Format,
    /// Print (and with -d write) up to N violating histories, not only the
    /// first (N defaults to 100).
    #[arg(long, num_args = 0..=1, default_missing_value = "100", value_name = "N", help_heading = "Output")]
    pub all: Option<usize>,
    /// Write each printed violating history to DIR/violation-K.edn as a
    /// Jepsen rw-register history that `isolde analyze` checks, and
    /// DIR/index.html, one page with each as `analyze -d` shows it.
    #[arg(long, short = 'd', value_name = "DIR", help_heading = "Output")]
    pub directory: Option<PathBuf>,
    /// Stop after this many seconds (exit 3 unless a violation was found).
    #[arg(long, value_name = "SECS", help_heading = "Limits")]
    pub timeout: Option<f64>,
    /// Stop after this many consistent histories (exit 3 unless a violation
    /// was found).
    #[arg(long, value_name = "N", help_heading = "Limits")]
    pub max_histories: Option<u64>,
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines for people.
    Text,
    /// One JSON object.
    Json,
}

/// Runs the command; returns the exit status.
pub fn run(a: &ExploreArgs) -> u8 {
    let shown = a.program.display().to_string();
    let fail = |msg: String| {
        eprintln!("isolde explore: {msg}");
        2
    };
    let Some(level) = Level::from_name(&a.level) else {
        let names: Vec<&str> = super::levels::ALL.iter().map(|l| l.name()).collect();
        return fail(format!("unknown level {:?} (expected one of {})", a.level, names.join(", ")));
    };
    let text = match std::fs::read_to_string(&a.program) {
        Ok(t) => t,
        Err(e) => return fail(format!("{shown}: {e}")),
    };
    let program = match Program::parse(&text) {
        Ok(p) => p,
        Err(e) => return fail(format!("{shown}: {e}")),
    };
    let timeout = match a.timeout {
        Some(t) if !(t.is_finite() && t >= 0.0) => return fail(format!("--timeout {t}: expected a number of seconds")),
        t => t.map(Duration::from_secs_f64),
    };
    let opts =
        Options { timeout, max_histories: a.max_histories, witnesses: a.all.unwrap_or(1), check_invariants: false };
    let out = match explore(&program, level, &opts) {
        Ok(o) => o,
        Err(e) => return fail(format!("{shown}: {e}")),
    };
    let mut files = Vec::new();
    if let Some(dir) = &a.directory {
        match write_witnesses(dir, &out, &shown) {
            Ok(f) => files = f,
            Err(e) => return fail(format!("{}: {e}", dir.display())),
        }
        if let Err(e) = super::page::write(dir, &out, &shown, &files) {
            eprintln!("isolde explore: warning: could not write the page: {e}");
        }
    }
    match a.format {
        Format::Text => print!("{}", text_report(&shown, &out, &files)),
        Format::Json => println!("{}", json_report(&shown, &out, &files)),
    }
    match out.verdict() {
        Verdict::Holds => 0,
        Verdict::Violated => 1,
        Verdict::Unknown => 3,
    }
}

fn write_witnesses(dir: &Path, out: &Outcome, program: &str) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    for (i, w) in out.witnesses.iter().enumerate() {
        let path = dir.join(format!("violation-{}.edn", i + 1));
        std::fs::write(&path, w.to_jepsen(program, out.level.name()))?;
        files.push(path);
    }
    Ok(files)
}

/// The text report.
pub fn text_report(program: &str, out: &Outcome, files: &[PathBuf]) -> String {
    let s = &out.stats;
    let mut r = String::new();
    let verdict = match out.verdict() {
        Verdict::Holds => "the assertion holds in every history".to_string(),
        Verdict::Violated => format!("the assertion fails in {} of {} histories", s.violations, s.histories),
        Verdict::Unknown => "unknown: the search stopped before the end".to_string(),
    };
    r.push_str(&format!("{program} at {}: {verdict}\n", out.level.name()));
    let filtered =
        if out.level.filtered() { format!(", {} end states explored under causal", s.explored) } else { String::new() };
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    r.push_str(&format!(
        "  {} consistent{filtered}, {}, {:.3} s\n",
        plural(s.histories, "history", "histories"),
        plural(s.violations, "violation", "violations"),
        out.elapsed.as_secs_f64()
    ));
    if let Some(why) = &out.stopped {
        r.push_str(&format!("  {why}\n"));
    }
    for (i, w) in out.witnesses.iter().enumerate() {
        r.push_str(&format!("violating history {}:\n{}", i + 1, w.to_text()));
        if let Some(f) = files.get(i) {
            r.push_str(&format!(
                "  written to {} (isolde analyze --model {} accepts it; a stronger --model explains the anomaly)\n",
                f.display(),
                out.level.analyze_model()
            ));
            let names: Vec<String> = w.analyze_names().iter().map(|(l, n)| format!("{l} = {n}")).collect();
            r.push_str(&format!(
                "  analyze names its transactions {} ({} client ops: an invocation and a completion each)\n",
                names.join(", "),
                2 * w.txns.len()
            ));
        }
    }
    r
}

/// The JSON report.
pub fn json_report(program: &str, out: &Outcome, files: &[PathBuf]) -> Value {
    let s = &out.stats;
    let valid = match out.verdict() {
        Verdict::Holds => json!(true),
        Verdict::Violated => json!(false),
        Verdict::Unknown => json!("unknown"),
    };
    let witnesses: Vec<Value> = out
        .witnesses
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let txns: Vec<Value> = w
                .txns
                .iter()
                .map(|t| {
                    let events: Vec<Value> = t
                        .events
                        .iter()
                        .map(|e| {
                            let mut o = json!({"f": if e.read { "r" } else { "w" }, "key": e.key, "value": e.value});
                            if let Some(from) = e.from {
                                o["from"] = json!(match from {
                                    Source::Init => "init".to_string(),
                                    Source::Own => "own".to_string(),
                                    Source::Txn(s, i) => label(s, i),
                                });
                            }
                            o
                        })
                        .collect();
                    json!({"txn": label(t.session, t.index), "aborted": t.aborted, "events": events})
                })
                .collect();
            let locals: serde_json::Map<String, Value> = w.locals.iter().map(|(n, v)| (n.clone(), json!(v))).collect();
            let mut o = json!({"transactions": txns, "locals": locals});
            if let Some(f) = files.get(i) {
                o["file"] = json!(f.display().to_string());
            }
            o
        })
        .collect();
    json!({
        "program": program,
        "level": out.level.name(),
        "valid?": valid,
        "histories": s.histories,
        "violations": s.violations,
        "explored": s.explored,
        "blocked": s.blocked,
        "time-s": out.elapsed.as_secs_f64(),
        "stopped": out.stopped,
        "witnesses": witnesses,
    })
}
