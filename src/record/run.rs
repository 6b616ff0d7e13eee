//! `isolde record`: the command line, the sessions, and `--check`.

use std::fs::File;
use std::io::{BufWriter, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::shape::Source;
use super::writer::{Completion, HistoryWriter, FENCE_KEY};
use super::{sqlite::Sqlite, Backend, Database, ErrorClass, Isolation, Mop, Observed, RecordError, Workload};
use crate::check;
use crate::gen::Pattern;

pub use super::shape::KeyDistArg;

/// Transaction shapes (see `docs/record.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PatternArg {
    /// Random reads and writes per --read-fraction (as `isolde gen`).
    Mixed,
    /// Read-modify-write: read a key, then write it, --txn-len times.
    Rmw,
    /// Read two keys, write one of them.
    WriteSkew,
}

// Help headings of `isolde record`; the options `--help` hides are under
// `crate::help_headings::TUNING`, last (see `crate::help_headings`).
const DATABASE: &str = "Database";
const WORKLOAD: &str = "Workload";
const OUTPUT: &str = "Output";
const CHECK: &str = "Check";
const FAULTS: &str = "Faults";

/// The arguments of `isolde record`.
#[derive(Clone, Debug, clap::Args)]
pub struct RecordArgs {
    /// Database URL: sqlite:PATH, postgres://user:pass@host:port/db,
    /// mysql://user:pass@host:port/db. Default: a fresh SQLite file in a
    /// temporary directory.
    #[arg(long, help_heading = DATABASE)]
    pub db: Option<String>,
    /// Workload to run.
    #[arg(long, value_enum, default_value = "list-append", help_heading = WORKLOAD)]
    pub workload: Workload,
    /// Isolation level, set per transaction with the database's own
    /// statement (SQLite runs every level serializably).
    #[arg(long, value_enum, default_value = "serializable", help_heading = DATABASE)]
    pub isolation: Isolation,
    /// History file to write (Jepsen EDN, one op per line, flushed as the
    /// run goes).
    #[arg(long, short = 'o', default_value = "history.edn", help_heading = OUTPUT)]
    pub output: PathBuf,
    /// Output format. The run always writes Jepsen EDN as it goes; with
    /// json (elle-cli's) or dbcop (bincode; rw-register without :info
    /// transactions) it writes it to OUTPUT.edn, kept, and converts it to
    /// OUTPUT when the run ends.
    #[arg(long, value_enum, default_value = "edn", help_heading = OUTPUT)]
    pub output_format: OutputFormat,
    /// Transactions to run (all sessions together). Default: 10000, or no
    /// limit with --duration.
    #[arg(long, help_heading = WORKLOAD)]
    pub txns: Option<usize>,
    /// Stop invoking new transactions after this many seconds (in-flight
    /// ones complete).
    #[arg(long, help_heading = WORKLOAD)]
    pub duration: Option<f64>,
    /// Concurrent sessions (one connection and one Jepsen :process each).
    /// Default: 8.
    #[arg(long, alias = "processes", help_heading = WORKLOAD)]
    pub sessions: Option<usize>,
    /// Transaction shape: mixed reads and writes, read-modify-write, or
    /// write skew (read two keys, write one).
    #[arg(long, value_enum, default_value = "mixed", help_heading = WORKLOAD)]
    pub pattern: PatternArg,
    /// Keys: the window of active keys (each retired after
    /// --max-writes-per-key writes), or the key space of --key-dist zipf
    /// and hotspot, or closed-predicate's universe (each key mutated once).
    /// Default: 30, 10000 with zipf and hotspot, 50 for closed-predicate.
    #[arg(long, help_heading = WORKLOAD)]
    pub keys: Option<usize>,
    /// Maximum micro-ops (read-modify-write pairs with --pattern rmw) per
    /// transaction. Default: 4 (Elle's).
    #[arg(long, help_heading = WORKLOAD)]
    pub txn_len: Option<usize>,
    /// Fraction of micro-ops that are reads (--pattern mixed).
    #[arg(long, default_value_t = 0.5, help_heading = WORKLOAD)]
    pub read_fraction: f64,
    /// Key distribution. Default: uniform over the window of active keys.
    #[arg(long, value_enum, help_heading = WORKLOAD)]
    pub key_dist: Option<KeyDistArg>,
    /// Random seed of the workload.
    #[arg(long, default_value_t = 0, help_heading = WORKLOAD)]
    pub seed: u64,
    /// Check the history while it is recorded (each anomaly printed once
    /// it is final, a status line per round on stderr; isolde help online;
    /// closed-predicate: once the run is over) and exit with the verdict on
    /// the whole run.
    #[arg(long, help_heading = CHECK)]
    pub check: bool,
    /// rw-register: after every N transactions each session runs a fence
    /// transaction, a read-modify-write of the reserved key `:isolde/fence`
    /// (Cobra's; isolde help online). Default: 20 with --check, else 0
    /// (none).
    #[arg(long, value_name = "N", help_heading = WORKLOAD)]
    pub fences: Option<usize>,
    /// Models --check checks, comma separated (Elle's names). Default: the
    /// model the level promises on the database.
    #[arg(long = "model", short = 'm', value_delimiter = ',', requires = "check", help_heading = CHECK)]
    pub model: Option<Vec<String>>,
    /// With --check: keep every transaction recorded and check them all in
    /// each round, as `analyze --follow --follow-all` does. Without it the
    /// check holds only a window wherever `analyze --follow` does
    /// (list-append at strict-serializable; rw-register, whose fences order
    /// the rest before the window, at strong-session-serializable,
    /// strong-session-snapshot-isolation or causal-cerone), so memory stays
    /// flat; a read that shows a write order the window had to assume makes
    /// the verdict unknown (isolde help online).
    #[arg(long, requires = "check", help_heading = CHECK)]
    pub follow_all: bool,
    /// Holding a window is what --check does (the default since 2026-12);
    /// kept so that older command lines still run.
    #[arg(long, hide = true, requires = "check", conflicts_with = "follow_all")]
    pub follow_window: bool,
    /// A statement every connection runs once, before its first
    /// transaction (repeatable), e.g. `SET SESSION
    /// innodb_snapshot_isolation = ON` on MariaDB.
    #[arg(long, help_heading = DATABASE)]
    pub init_sql: Vec<String>,
    /// A statement that waits longer than this for another transaction's
    /// lock fails, and its transaction is a :fail, instead of waiting out
    /// the server's deadlock or lock timeout (PostgreSQL lock_timeout;
    /// MariaDB/MySQL innodb_lock_wait_timeout, whole seconds, at least 1).
    /// 0 keeps the server's setting; SQLite keeps its 5 s busy timeout.
    #[arg(long, default_value_t = 100, value_name = "MS", help_heading = DATABASE)]
    pub lock_timeout_ms: u64,
    /// Inject faults, comma separated (servers on this machine only):
    /// kill-connections (kill a random session's connection every
    /// --fault-interval-ms), timeouts (every statement times out on the
    /// server after --timeout-ms).
    #[arg(long, value_enum, value_delimiter = ',', help_heading = FAULTS)]
    pub faults: Vec<FaultArg>,
    /// Do not show the progress bar.
    #[arg(long, help_heading = OUTPUT)]
    pub quiet: bool,
    /// Writes (appends) a key of the window receives before it is retired
    /// and a fresh key takes its place.
    #[arg(long, default_value_t = 100, help_heading = crate::help_headings::TUNING)]
    pub max_writes_per_key: usize,
    /// Minimum micro-ops per transaction. Default: 1.
    #[arg(long, help_heading = crate::help_headings::TUNING)]
    pub min_txn_len: Option<usize>,
    /// Zipf exponent.
    #[arg(long, default_value_t = 1.0, help_heading = crate::help_headings::TUNING)]
    pub zipf_exponent: f64,
    /// Hotspot: fraction of keys that are hot.
    #[arg(long, default_value_t = 0.2, help_heading = crate::help_headings::TUNING)]
    pub hot_fraction: f64,
    /// Hotspot: probability that a micro-op targets a hot key.
    #[arg(long, default_value_t = 0.8, help_heading = crate::help_headings::TUNING)]
    pub hot_probability: f64,
    /// kill-connections: milliseconds between kills.
    #[arg(long, default_value_t = 100, help_heading = crate::help_headings::TUNING)]
    pub fault_interval_ms: u64,
    /// timeouts: the statement timeout, milliseconds.
    #[arg(long, default_value_t = 10, help_heading = crate::help_headings::TUNING)]
    pub timeout_ms: u64,
}

/// Faults `--faults` injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FaultArg {
    /// Kill random sessions' connections (PostgreSQL `pg_terminate_backend`,
    /// MariaDB `KILL CONNECTION`).
    KillConnections,
    /// Short server-side statement timeouts (PostgreSQL `statement_timeout`,
    /// MariaDB `max_statement_time`).
    Timeouts,
}

/// Faults injected into a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// Kill a random session's connection this often.
    pub kill_every: Option<Duration>,
    /// Statement timeout of every session.
    pub timeout: Option<Duration>,
}

impl Faults {
    fn any(&self) -> bool {
        self.kill_every.is_some() || self.timeout.is_some()
    }
}

/// What a recording did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordStats {
    /// Transactions invoked.
    pub invoked: u64,
    /// Completed `:ok`.
    pub ok: u64,
    /// Completed `:fail`.
    pub fail: u64,
    /// Completed `:info`.
    pub info: u64,
    /// Connections killed by `--faults kill-connections`.
    pub kills: u64,
    /// Why the run stopped before its transaction count or duration, if it
    /// did (a dead server, a session that kept failing, the file).
    pub cut_short: Option<String>,
}

/// The workload and run parameters, resolved from [`RecordArgs`].
pub struct Plan {
    /// Workload.
    pub workload: Workload,
    /// Isolation level.
    pub isolation: Isolation,
    /// Transaction source.
    pub source: Source,
    /// Transaction limit.
    pub txns: Option<u64>,
    /// Time limit.
    pub duration: Option<Duration>,
    /// Sessions.
    pub sessions: usize,
    /// Faults to inject.
    pub faults: Faults,
    /// Seed of the fault schedule.
    pub seed: u64,
    /// Statements every connection runs before its first transaction.
    pub init_sql: Vec<String>,
    /// A fence transaction per session after every this many (0: none).
    pub fences: usize,
    /// How long a statement may wait for a lock (`--lock-timeout-ms`);
    /// `None`: the server's setting.
    pub lock_timeout: Option<Duration>,
}

impl Plan {
    /// Resolves the arguments into a plan (usage errors only; nothing is
    /// connected).
    pub fn from_args(a: &RecordArgs) -> Result<Plan, RecordError> {
        let bad = RecordError::Workload;
        let pattern = match a.pattern {
            PatternArg::Mixed => Pattern::Mixed,
            PatternArg::Rmw => Pattern::ReadModifyWrite,
            PatternArg::WriteSkew => Pattern::WriteSkew,
        };
        let (source, sessions) = super::shape::source(&knobs(a), pattern)?;
        let duration = match a.duration {
            Some(s) if !(s.is_finite() && s > 0.0) => {
                return Err(bad(format!("--duration must be a positive number of seconds, got {s}")))
            }
            Some(s) => Some(Duration::from_secs_f64(s)),
            None => None,
        };
        let txns = match (a.txns, duration) {
            (Some(0), _) => return Err(bad("--txns must be at least 1".into())),
            (Some(n), _) => Some(n as u64),
            (None, Some(_)) => None,
            (None, None) => Some(10_000),
        };
        let ms = |name: &str, v: u64| {
            if v == 0 {
                Err(bad(format!("{name} must be at least 1")))
            } else {
                Ok(Duration::from_millis(v))
            }
        };
        let faults = Faults {
            kill_every: match a.faults.contains(&FaultArg::KillConnections) {
                true => Some(ms("--fault-interval-ms", a.fault_interval_ms)?),
                false => None,
            },
            timeout: match a.faults.contains(&FaultArg::Timeouts) {
                true => Some(ms("--timeout-ms", a.timeout_ms)?),
                false => None,
            },
        };
        let fences = match (a.fences, a.workload) {
            (Some(n), Workload::ListAppend | Workload::ClosedPredicate) if n > 0 => {
                return Err(bad(format!(
                    "--fences: fence transactions are read-modify-writes of a register; {} runs take none",
                    a.workload.name()
                )))
            }
            (Some(n), _) => n,
            (None, Workload::RwRegister) if a.check => 20,
            (None, _) => 0,
        };
        Ok(Plan {
            fences,
            workload: a.workload,
            isolation: a.isolation,
            source,
            txns,
            duration,
            sessions,
            faults,
            seed: a.seed,
            init_sql: a.init_sql.clone(),
            lock_timeout: (a.lock_timeout_ms > 0).then(|| Duration::from_millis(a.lock_timeout_ms)),
        })
    }
}

/// Runs `isolde record`: returns the exit status (0 recorded, or with
/// `--check` the verdict's: 0 valid, 1 invalid, 3 unknown; 2 when the run
/// was cut short by Ctrl-C or a lost server, after writing what it
/// recorded) or an error that happened before any transaction ran.
pub fn run(a: &RecordArgs) -> Result<u8, RecordError> {
    let plan = Plan::from_args(a)?;
    if a.output_format == OutputFormat::Dbcop && plan.workload != Workload::RwRegister {
        return Err(RecordError::Workload(
            "--output-format dbcop holds read-write registers: use --workload rw-register (or edn/json)".into(),
        ));
    }
    // Ctrl-C stops invoking transactions and lets in-flight ones complete,
    // so the history ends complete; a second Ctrl-C exits at once (the file
    // still holds whole lines; invocations without completions read as
    // indeterminate).
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\nisolde: interrupted: stopping after the transactions in flight (Ctrl-C again to quit now)");
    });
    let models = a.model.as_ref().map(|ms| ms.iter().map(|m| m.trim().to_string()).collect::<Vec<_>>());
    check::resolve_models(&models).map_err(|e| RecordError::Workload(e.to_string()))?;
    let url = a.db.as_deref();
    match url.map(scheme) {
        None => dispatch(&Sqlite::open(None, plan.workload)?, plan, a, models),
        Some(Ok("sqlite")) => {
            let u = url.unwrap_or_default();
            let path = u.strip_prefix("sqlite://").or_else(|| u.strip_prefix("sqlite:")).unwrap_or_default();
            if path.is_empty() {
                return Err(RecordError::BadUrl { url: u.into(), reason: "no database file path".into() });
            }
            dispatch(&Sqlite::open(Some(Path::new(path)), plan.workload)?, plan, a, models)
        }
        Some(Ok("postgres" | "postgresql")) => {
            #[cfg(feature = "postgres")]
            {
                let db = super::postgres::Postgres::open(url.unwrap_or_default(), plan.workload)?;
                dispatch(&db, plan, a, models)
            }
            #[cfg(not(feature = "postgres"))]
            Err(RecordError::MissingFeature { scheme: "postgres".into(), feature: "postgres" })
        }
        Some(Ok("mysql" | "mariadb")) => {
            #[cfg(feature = "mysql")]
            {
                let db = super::mysql::Mysql::open(url.unwrap_or_default(), plan.workload)?;
                dispatch(&db, plan, a, models)
            }
            #[cfg(not(feature = "mysql"))]
            Err(RecordError::MissingFeature { scheme: "mysql".into(), feature: "mysql" })
        }
        Some(Ok(other)) => Err(RecordError::BadUrl {
            url: url.unwrap_or_default().into(),
            reason: format!("unknown scheme {other:?}; use sqlite:, postgres:// or mysql://"),
        }),
        Some(Err(reason)) => Err(RecordError::BadUrl { url: url.unwrap_or_default().into(), reason }),
    }
}

/// The scheme of a URL (before the first `:`).
fn scheme(url: &str) -> Result<&str, String> {
    match url.split_once(':') {
        Some((s, _)) if !s.is_empty() => Ok(s),
        _ => Err("expected scheme:..., e.g. sqlite:FILE or postgres://user@host/db".into()),
    }
}

/// `--output-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Jepsen EDN, one op per line, written as the run goes.
    Edn,
    /// elle-cli JSON (one array), converted from the EDN at the end.
    Json,
    /// dbcop's history.bincode, converted from the EDN at the end.
    Dbcop,
}

/// Records against `db`, tears it down, reports, and checks if asked.
fn dispatch<D: Database>(db: &D, plan: Plan, a: &RecordArgs, models: Option<Vec<String>>) -> Result<u8, RecordError> {
    if plan.faults.any() {
        if let Err(why) = db.faultable() {
            let _ = db.teardown();
            return Err(RecordError::Workload(why));
        }
    }
    let model = db.promised_model(plan.isolation);
    let edn = match a.output_format {
        OutputFormat::Edn => a.output.clone(),
        OutputFormat::Json | OutputFormat::Dbcop => super::convert::edn_path(&a.output),
    };
    let file = match File::create(&edn) {
        Ok(f) => f,
        Err(source) => {
            let _ = db.teardown();
            return Err(RecordError::Output { path: edn.display().to_string(), source });
        }
    };
    let show = !a.quiet && std::io::stderr().is_terminal();
    let models = a.check.then(|| models.unwrap_or_else(|| vec![model.to_string()]));
    // A closed-predicate history is checked once the run is over: a
    // predicate read's version set depends on the versions written after
    // it, so no anomaly is final while the run goes on.
    let (follower, whole) = match models {
        Some(m) if plan.workload == Workload::ClosedPredicate => (None, Some(m)),
        m => (m.map(|m| super::follow::Follower::start(&edn, m, !a.quiet && !show, a.follow_all)), None),
    };
    let t0 = Instant::now();
    let stats = record(db, plan, BufWriter::new(file), show);
    if let Err(e) = db.teardown() {
        eprintln!("isolde: warning: could not drop the run's tables: {e}");
    }
    if matches!(stats, Err(RecordError::Connect { .. })) {
        // No transaction ran: leave no empty history behind.
        let _ = std::fs::remove_file(&edn);
    }
    let stats = stats.map_err(|e| match e {
        RecordError::Output { source, .. } => RecordError::Output { path: edn.display().to_string(), source },
        other => other,
    })?;
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "isolde: recorded {} transactions in {:.2}s ({:.0}/s) from {}: {} ok, {} fail, {} info -> {}",
        stats.invoked,
        secs,
        stats.invoked as f64 / secs.max(1e-9),
        db.describe(),
        stats.ok,
        stats.fail,
        stats.info,
        edn.display()
    );
    report_failures(&stats, a);
    match a.output_format {
        OutputFormat::Edn => {}
        OutputFormat::Json => super::convert::to_json(&edn, &a.output)?,
        OutputFormat::Dbcop => super::convert::to_dbcop(&edn, &a.output)?,
    }
    if a.output_format != OutputFormat::Edn {
        eprintln!("isolde: wrote {} (from {})", a.output.display(), edn.display());
    }
    if stats.kills > 0 {
        eprintln!("isolde: faults: {} connections killed", stats.kills);
    }
    if let Some(why) = &stats.cut_short {
        eprintln!(
            "isolde: the run stopped early: {why}; the history written so far is complete (transactions whose outcome is unknown are :info)"
        );
    }
    let mut status = if stats.cut_short.is_some() { 2 } else { 0 };
    if let Some(follower) = follower {
        let v = follower.finish()?;
        if status == 0 {
            status = v;
        }
    }
    if let Some(models) = whole {
        let v = check_whole(&edn, models)?;
        if status == 0 {
            status = v;
        }
    }
    Ok(status)
}

/// `--check` of a whole recorded history (closed-predicate's): prints the
/// table `analyze` prints and returns the verdict's exit status.
fn check_whole(edn: &Path, models: Vec<String>) -> Result<u8, RecordError> {
    let err = |message: String| RecordError::Check { path: edn.display().to_string(), message };
    let h = crate::ingest::read_path(edn, crate::ingest::Format::Edn).map_err(|e| err(e.to_string()))?;
    let opts = check::CheckOptions { models: Some(models), ..check::CheckOptions::default() };
    let outcome = check::check(&h, &opts).map_err(|e| err(e.to_string()))?;
    print!("{}", crate::reports::table::render(&h, &outcome, false));
    Ok(match outcome.valid {
        check::Validity::Valid => 0,
        check::Validity::Invalid => 1,
        check::Validity::Unknown => 3,
    })
}

/// The workload knobs of the arguments.
fn knobs(a: &RecordArgs) -> super::shape::Knobs {
    super::shape::Knobs {
        workload: a.workload,
        sessions: a.sessions,
        keys: a.keys,
        txn_len: a.txn_len,
        min_txn_len: a.min_txn_len,
        key_dist: a.key_dist,
        read_fraction: a.read_fraction,
        max_writes_per_key: a.max_writes_per_key,
        zipf_exponent: a.zipf_exponent,
        hot_fraction: a.hot_fraction,
        hot_probability: a.hot_probability,
        seed: a.seed,
    }
}

/// Prints the share of transactions that failed, and a warning naming the
/// flags that help when more than half did (not with `--faults`, which
/// fail transactions on purpose).
fn report_failures(stats: &RecordStats, a: &RecordArgs) {
    let done = stats.ok + stats.fail + stats.info;
    if done == 0 {
        return;
    }
    eprintln!(
        "isolde: failure rate: {:.1}% ({} of {done} transactions failed)",
        100.0 * stats.fail as f64 / done as f64,
        stats.fail
    );
    if 2 * stats.fail > done && a.faults.is_empty() {
        let keys = super::shape::keys(&knobs(a));
        eprintln!(
            "isolde: warning: more than half the transactions failed, so the history shows little of what the \
             database lets through: they conflict over too few keys; spread them over more (--keys {}, now {keys}), \
             or run fewer --sessions or shorter transactions (--txn-len)",
            keys.saturating_mul(4)
        );
    }
}

/// Set by Ctrl-C (in [`run`]): sessions stop invoking transactions.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Consecutive transactions of one session that may fail with an
/// [`ErrorClass::Unknown`] error before the run stops (something other
/// than contention is wrong); not applied with `--faults`, which cause
/// such errors on purpose.
const MAX_UNKNOWN_STREAK: u32 = 20;

/// State shared by the sessions.
struct Shared<W: std::io::Write> {
    source: Source,
    writer: HistoryWriter<W>,
    invoked: u64,
}

/// Counters the progress bar and the summary read.
#[derive(Default)]
struct Counters {
    ok: AtomicU64,
    fail: AtomicU64,
    info: AtomicU64,
}

/// Runs the plan's sessions against `db`, writing the history to `out`.
/// Every session connects before any transaction runs, so an unreachable
/// server or missing privileges fail the run with nothing recorded.
pub fn record<D: Database, W: std::io::Write + Send>(
    db: &D,
    plan: Plan,
    out: W,
    progress: bool,
) -> Result<RecordStats, RecordError> {
    let faults = plan.faults;
    let server_ids: Vec<AtomicU64> = (0..plan.sessions).map(|_| AtomicU64::new(0)).collect();
    let mut sessions = Vec::with_capacity(plan.sessions);
    for ids in &server_ids {
        sessions.push(open_session(db, &plan.init_sql, plan.lock_timeout, faults, ids)?);
    }
    let start = Instant::now();
    let mut writer = HistoryWriter::new(out, start);
    if let Some(rows) = plan.source.init() {
        let conn = sessions.first_mut().ok_or_else(|| RecordError::Workload("no session to run the :init".into()))?;
        init_universe(db, conn, plan.isolation, rows, &mut writer)?;
    }
    let shared = Mutex::new(Shared { source: plan.source, writer, invoked: 0 });
    let counters = Counters::default();
    let stop = AtomicBool::new(false);
    let cut_short: Mutex<Option<String>> = Mutex::new(None);
    let write_error: Mutex<Option<std::io::Error>> = Mutex::new(None);
    let bar = progress.then(|| progress_bar(plan.txns));
    let n = plan.sessions as u64;
    let ctx = Ctx {
        db,
        shared: &shared,
        counters: &counters,
        stop: &stop,
        cut_short: &cut_short,
        write_error: &write_error,
        bar: bar.as_ref(),
        txns: plan.txns,
        deadline: plan.duration.map(|d| start + d),
        isolation: plan.isolation,
        sessions: n,
        start,
        faults,
        init_sql: &plan.init_sql,
        lock_timeout: plan.lock_timeout,
        server_ids: &server_ids,
        running: AtomicU64::new(n),
        kills: AtomicU64::new(0),
        fences: plan.fences,
        fence_value: AtomicU64::new(0),
    };
    std::thread::scope(|s| {
        for (p, conn) in sessions.into_iter().enumerate() {
            let ctx = &ctx;
            s.spawn(move || {
                session(ctx, conn, p as u64);
                ctx.running.fetch_sub(1, Ordering::SeqCst);
            });
        }
        if let Some(every) = faults.kill_every {
            let ctx = &ctx;
            s.spawn(move || nemesis(ctx, every, plan.seed));
        }
    });
    let kills = ctx.kills.load(Ordering::SeqCst);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(e) = write_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(RecordError::Output { path: String::new(), source: e });
    }
    let invoked = shared.into_inner().unwrap_or_else(|p| p.into_inner()).invoked;
    Ok(RecordStats {
        invoked,
        ok: counters.ok.into_inner(),
        fail: counters.fail.into_inner(),
        info: counters.info.into_inner(),
        kills,
        cut_short: cut_short.into_inner().unwrap_or_else(|p| p.into_inner()),
    })
}

/// Runs closed-predicate's `:init`, the insert of the universe `rows` in
/// one transaction, before any session starts, and writes it as Elle's
/// `{:f :init, :value {k v ...}}` op. A universe that cannot be set up
/// ends the run: its histories would mean nothing.
fn init_universe<D: Database, W: std::io::Write>(
    db: &D,
    conn: &mut D::Session,
    level: Isolation,
    rows: &[(u64, u64)],
    writer: &mut HistoryWriter<W>,
) -> Result<(), RecordError> {
    let output = |source| RecordError::Output { path: String::new(), source };
    writer.init(0, None, rows).map_err(output)?;
    let mops: Vec<Mop> = rows.iter().map(|&(k, v)| Mop::Insert(k, v)).collect();
    match execute(conn, level, &mops) {
        Outcome::Ok(_) => writer.init(0, Some(Completion::Ok), rows).map_err(output),
        Outcome::Fail(_, e, _) | Outcome::Info(e) => Err(RecordError::Connect {
            db: db.describe(),
            message: format!("the :init that sets up the closed-predicate universe failed: {e}"),
        }),
    }
}

fn progress_bar(txns: Option<u64>) -> indicatif::ProgressBar {
    let (bar, template) = match txns {
        Some(n) => (indicatif::ProgressBar::new(n), "{bar:30} {pos}/{len} txns {msg} [{elapsed}]"),
        None => (indicatif::ProgressBar::new_spinner(), "{spinner} {pos} txns {msg} [{elapsed}]"),
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// What every session thread shares.
struct Ctx<'a, D: Database, W: std::io::Write> {
    db: &'a D,
    shared: &'a Mutex<Shared<W>>,
    counters: &'a Counters,
    stop: &'a AtomicBool,
    cut_short: &'a Mutex<Option<String>>,
    write_error: &'a Mutex<Option<std::io::Error>>,
    bar: Option<&'a indicatif::ProgressBar>,
    txns: Option<u64>,
    deadline: Option<Instant>,
    isolation: Isolation,
    sessions: u64,
    start: Instant,
    faults: Faults,
    init_sql: &'a [String],
    lock_timeout: Option<Duration>,
    /// Each session's current server-side connection id (0: none yet).
    server_ids: &'a [AtomicU64],
    /// Sessions still running.
    running: AtomicU64,
    /// Connections the nemesis killed.
    kills: AtomicU64,
    /// A fence per session after every this many transactions (0: none).
    fences: usize,
    /// The last value a fence wrote.
    fence_value: AtomicU64,
}

/// Connects a session: limits its lock waits, runs the `--init-sql`
/// statements (which may change that again), applies the faults, and
/// publishes the connection's server id in `id`.
fn open_session<D: Database>(
    db: &D,
    init_sql: &[String],
    lock_timeout: Option<Duration>,
    faults: Faults,
    id: &AtomicU64,
) -> Result<D::Session, RecordError> {
    id.store(0, Ordering::SeqCst);
    let mut conn = db.connect()?;
    if let Some(t) = lock_timeout {
        conn.limit_lock_wait(t).map_err(|e| RecordError::Connect {
            db: db.describe(),
            message: format!("cannot limit lock waits (--lock-timeout-ms; 0 keeps the server's setting): {e}"),
        })?;
    }
    for sql in init_sql {
        conn.execute(sql)
            .map_err(|e| RecordError::Connect { db: db.describe(), message: format!("--init-sql {sql:?}: {e}") })?;
    }
    if faults.any() {
        id.store(prepare_faults(db, &mut conn, faults)?, Ordering::SeqCst);
    }
    Ok(conn)
}

/// Applies `faults` to a fresh connection and returns its server id.
fn prepare_faults<D: Database>(db: &D, conn: &mut D::Session, faults: Faults) -> Result<u64, RecordError> {
    match conn.prepare_faults(faults.timeout) {
        Ok(Some(id)) => Ok(id),
        Ok(None) if faults.kill_every.is_none() => Ok(0),
        Ok(None) => Err(RecordError::Workload(format!("{}: connections have no id to kill", db.describe()))),
        Err(e) => Err(RecordError::Connect { db: db.describe(), message: e.to_string() }),
    }
}

/// Kills a random session's connection every `every` until the sessions
/// are done. A failed kill (the connection ended meanwhile) is not counted.
fn nemesis<D: Database, W: std::io::Write>(ctx: &Ctx<'_, D, W>, every: Duration, seed: u64) {
    let mut rng = crate::gen::rng::Rng::new(seed ^ 0x006e_656d_6573_6973);
    while ctx.running.load(Ordering::SeqCst) > 0 {
        // Sleep in small steps so the nemesis ends soon after the sessions.
        let until = Instant::now() + every;
        while Instant::now() < until && ctx.running.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_millis(5).min(every));
        }
        if ctx.running.load(Ordering::SeqCst) == 0 {
            return;
        }
        let victim = rng.below(ctx.server_ids.len() as u64) as usize;
        let id = ctx.server_ids[victim].load(Ordering::SeqCst);
        if id != 0 && ctx.db.kill(id).is_ok() {
            ctx.kills.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl<D: Database, W: std::io::Write> Ctx<'_, D, W> {
    /// Stops the run, keeping the first reason.
    fn halt(&self, why: String) {
        self.stop.store(true, Ordering::SeqCst);
        let mut c = self.cut_short.lock().unwrap_or_else(|p| p.into_inner());
        c.get_or_insert(why);
    }

    fn write_failed(&self, e: std::io::Error) {
        self.stop.store(true, Ordering::SeqCst);
        self.write_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    }
}

/// How [`execute`] ended.
enum Outcome {
    Ok(Vec<Observed>),
    /// Certainly not committed: the error's class, its message, and
    /// whether the connection still answered the rollback.
    Fail(ErrorClass, String, bool),
    /// Commit sent, outcome unknown.
    Info(String),
}

/// Runs one transaction.
fn execute<B: Backend>(conn: &mut B, level: Isolation, mops: &[Mop]) -> Outcome {
    let writes = mops.iter().any(|m| !m.reads());
    let mut observed = Vec::new();
    let body = (|| {
        conn.begin(level, writes)?;
        for m in mops {
            match *m {
                Mop::Read(k) => observed.push(conn.read(k)?),
                Mop::PredRead(p) => observed.push(Observed::Rows(conn.pred_read(p)?)),
                Mop::Write(k, v) => conn.write(k, v)?,
                Mop::Append(k, v) => conn.append(k, v)?,
                Mop::Insert(k, v) => conn.insert(k, v)?,
                Mop::Delete(k) => conn.delete(k)?,
            }
        }
        Ok(())
    })();
    if let Err(e) = body {
        // Nothing was committed: COMMIT was never sent. Roll back (a lost
        // connection aborts the transaction on the server anyway).
        let class = B::classify(&e);
        let healthy = conn.rollback().is_ok();
        return Outcome::Fail(class, e.to_string(), healthy);
    }
    match conn.commit() {
        Ok(()) => Outcome::Ok(observed),
        Err(e) => match B::classify(&e) {
            ErrorClass::Rejected => {
                // Some databases (SQLite) keep the transaction open after a
                // refused COMMIT: end it.
                let healthy = conn.rollback().is_ok();
                Outcome::Fail(ErrorClass::Rejected, e.to_string(), healthy)
            }
            ErrorClass::Unknown => Outcome::Info(e.to_string()),
        },
    }
}

/// One session's loop: invoke, execute, complete, until the run ends.
fn session<D: Database, W: std::io::Write>(ctx: &Ctx<'_, D, W>, mut conn: D::Session, first_process: u64) {
    let mut process = first_process;
    let mut mops = Vec::new();
    let mut unknown_streak = 0u32;
    let mut since_fence = 0usize;
    loop {
        {
            let mut g = ctx.shared.lock().unwrap_or_else(|p| p.into_inner());
            if INTERRUPTED.load(Ordering::SeqCst) {
                ctx.halt("interrupted (Ctrl-C)".into());
                return;
            }
            let done = ctx.stop.load(Ordering::SeqCst)
                || ctx.txns.is_some_and(|n| g.invoked >= n)
                || ctx.deadline.is_some_and(|d| Instant::now() >= d);
            if done {
                return;
            }
            if ctx.fences > 0 && since_fence == ctx.fences {
                since_fence = 0;
                let value = ctx.fence_value.fetch_add(1, Ordering::SeqCst) + 1;
                mops.clear();
                mops.extend([Mop::Read(FENCE_KEY), Mop::Write(FENCE_KEY, value)]);
            } else {
                since_fence += 1;
                g.source.next_txn(&mut mops);
            }
            if let Err(e) = g.writer.invoke(process, &mops) {
                drop(g);
                ctx.write_failed(e);
                return;
            }
            g.invoked += 1;
        }
        let outcome = execute(&mut conn, ctx.isolation, &mops);
        // `unexpected`: the error was not the database refusing the
        // transaction; `reconnect`: the connection may be unusable.
        let (how, observed, unexpected, reconnect, error) = match outcome {
            Outcome::Ok(obs) => (Completion::Ok, obs, false, false, None),
            Outcome::Fail(class, e, healthy) => {
                (Completion::Fail, Vec::new(), class == ErrorClass::Unknown, !healthy, Some(e))
            }
            Outcome::Info(e) => (Completion::Info, Vec::new(), true, true, Some(e)),
        };
        {
            let mut g = ctx.shared.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = g.writer.complete(process, how, &mops, &observed) {
                drop(g);
                ctx.write_failed(e);
                return;
            }
        }
        let counter = match how {
            Completion::Ok => &ctx.counters.ok,
            Completion::Fail => &ctx.counters.fail,
            Completion::Info => &ctx.counters.info,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if let Some(bar) = ctx.bar {
            bar.inc(1);
            let secs = ctx.start.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "{} fail, {} info, {:.0} txn/s",
                ctx.counters.fail.load(Ordering::Relaxed),
                ctx.counters.info.load(Ordering::Relaxed),
                bar.position() as f64 / secs
            ));
        }
        if how == Completion::Info {
            // As Jepsen does after an indeterminate op: a new process.
            process += ctx.sessions;
        }
        let error = error.unwrap_or_default();
        if unexpected {
            unknown_streak += 1;
        } else {
            unknown_streak = 0;
        }
        // Injected faults cause unexpected errors by design.
        if unknown_streak >= MAX_UNKNOWN_STREAK && !ctx.faults.any() {
            ctx.halt(format!(
                "session {first_process}: {unknown_streak} transactions in a row failed; last error: {error}"
            ));
            return;
        }
        if !reconnect {
            continue;
        }
        match open_session(ctx.db, ctx.init_sql, ctx.lock_timeout, ctx.faults, &ctx.server_ids[first_process as usize])
        {
            Ok(c) => conn = c,
            Err(e) => {
                ctx.halt(format!("session {first_process} lost its connection ({error}) and cannot reconnect: {e}"));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A scripted connection: `fail_at` names the call (counted from 0 over
    /// begin, each micro-op, commit) that fails, with `class`.
    struct Fake {
        calls: usize,
        fail_at: Option<usize>,
        class: ErrorClass,
        rollbacks: usize,
    }

    impl Fake {
        fn step(&mut self) -> Result<(), (ErrorClass, String)> {
            let n = self.calls;
            self.calls += 1;
            match self.fail_at {
                Some(f) if f == n => Err((self.class, format!("call {n} failed"))),
                _ => Ok(()),
            }
        }
    }

    struct FakeError(ErrorClass, String);

    impl std::fmt::Display for FakeError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.1)
        }
    }

    impl Backend for Fake {
        type Error = FakeError;
        fn begin(&mut self, _: Isolation, _: bool) -> Result<(), FakeError> {
            self.step().map_err(|(c, m)| FakeError(c, m))
        }
        fn read(&mut self, key: u64) -> Result<Observed, FakeError> {
            self.step().map_err(|(c, m)| FakeError(c, m))?;
            Ok(Observed::Register(Some(key * 10)))
        }
        fn write(&mut self, _: u64, _: u64) -> Result<(), FakeError> {
            self.step().map_err(|(c, m)| FakeError(c, m))
        }
        fn append(&mut self, _: u64, _: u64) -> Result<(), FakeError> {
            self.step().map_err(|(c, m)| FakeError(c, m))
        }
        fn insert(&mut self, _: u64, _: u64) -> Result<(), FakeError> {
            self.step().map_err(|(c, m)| FakeError(c, m))
        }
        fn delete(&mut self, _: u64) -> Result<(), FakeError> {
            self.step().map_err(|(c, m)| FakeError(c, m))
        }
        fn pred_read(&mut self, _: crate::gen::closed_predicate::Pred) -> Result<Vec<(u64, u64)>, FakeError> {
            self.step().map_err(|(c, m)| FakeError(c, m))?;
            Ok(vec![(1, 0)])
        }
        fn commit(&mut self) -> Result<(), FakeError> {
            self.step().map_err(|(c, m)| FakeError(c, m))
        }
        fn rollback(&mut self) -> Result<(), FakeError> {
            self.rollbacks += 1;
            Ok(())
        }
        fn classify(err: &FakeError) -> ErrorClass {
            err.0
        }
        fn execute(&mut self, _: &str) -> Result<(), FakeError> {
            Ok(())
        }
        fn prepare_faults(&mut self, _: Option<Duration>) -> Result<Option<u64>, FakeError> {
            Ok(None)
        }
    }

    fn fake(fail_at: Option<usize>, class: ErrorClass) -> Fake {
        Fake { calls: 0, fail_at, class, rollbacks: 0 }
    }

    const TXN: [Mop; 2] = [Mop::Read(1), Mop::Write(2, 5)];

    #[test]
    fn outcomes_claim_no_more_than_the_client_saw() {
        // Committed: reads are reported.
        let mut c = fake(None, ErrorClass::Unknown);
        assert!(
            matches!(execute(&mut c, Isolation::Serializable, &TXN), Outcome::Ok(o) if o == [Observed::Register(Some(10))])
        );
        // Any failure before COMMIT is a :fail, whatever its class, and is
        // rolled back.
        for at in 0..3 {
            for class in [ErrorClass::Rejected, ErrorClass::Unknown] {
                let mut c = fake(Some(at), class);
                let o = execute(&mut c, Isolation::Serializable, &TXN);
                assert!(matches!(o, Outcome::Fail(k, _, true) if k == class), "call {at}");
                assert_eq!(c.rollbacks, 1);
            }
        }
        // A refused COMMIT is a :fail; an unexplained COMMIT error an :info.
        let mut c = fake(Some(3), ErrorClass::Rejected);
        assert!(matches!(execute(&mut c, Isolation::Serializable, &TXN), Outcome::Fail(ErrorClass::Rejected, ..)));
        let mut c = fake(Some(3), ErrorClass::Unknown);
        assert!(matches!(execute(&mut c, Isolation::Serializable, &TXN), Outcome::Info(m) if m == "call 3 failed"));
        assert_eq!(c.rollbacks, 0);
    }

    /// A database whose first connection fails the commit of its
    /// transaction numbered `info_at` with an unexplained error.
    struct OneInfo {
        connects: AtomicUsize,
        info_at: usize,
    }

    impl Database for OneInfo {
        type Session = Fake;
        fn describe(&self) -> String {
            "fake".into()
        }
        fn connect(&self) -> Result<Fake, RecordError> {
            // Each transaction is begin + 2 micro-ops + commit.
            let nth = self.connects.fetch_add(1, Ordering::SeqCst);
            Ok(fake((nth == 0).then_some(4 * self.info_at + 3), ErrorClass::Unknown))
        }
        fn teardown(&self) -> Result<(), RecordError> {
            Ok(())
        }
        fn faultable(&self) -> Result<(), String> {
            Err("no server".into())
        }
        fn kill(&self, _: u64) -> Result<(), RecordError> {
            Ok(())
        }
    }

    #[test]
    fn an_info_moves_the_session_to_a_new_process() {
        // One session, three transactions; the second commit is an :info.
        let db = OneInfo { connects: AtomicUsize::new(0), info_at: 1 };
        let args = RecordArgs {
            db: None,
            workload: Workload::RwRegister,
            isolation: Isolation::Serializable,
            output: PathBuf::new(),
            output_format: OutputFormat::Edn,
            txns: Some(3),
            duration: None,
            sessions: Some(1),
            pattern: PatternArg::Mixed,
            keys: Some(5),
            max_writes_per_key: 100,
            txn_len: Some(2),
            min_txn_len: Some(2),
            read_fraction: 0.5,
            key_dist: Some(KeyDistArg::Uniform),
            zipf_exponent: 1.0,
            hot_fraction: 0.2,
            hot_probability: 0.8,
            seed: 3,
            check: false,
            fences: None,
            model: None,
            follow_all: false,
            follow_window: false,
            init_sql: Vec::new(),
            lock_timeout_ms: 100,
            faults: Vec::new(),
            fault_interval_ms: 100,
            timeout_ms: 10,
            quiet: true,
        };
        let mut out = Vec::new();
        let stats = record(&db, Plan::from_args(&args).unwrap(), &mut out, false).unwrap();
        assert_eq!((stats.invoked, stats.ok, stats.fail, stats.info), (3, 2, 0, 1));
        let text = String::from_utf8(out).unwrap();
        let procs: Vec<(&str, &str)> = text
            .lines()
            .map(|l| {
                let ty = l.split(' ').nth(1).unwrap();
                let p = l.split(":process ").nth(1).unwrap().split(',').next().unwrap();
                (ty, p)
            })
            .collect();
        assert_eq!(
            procs,
            [(":invoke,", "0"), (":ok,", "0"), (":invoke,", "0"), (":info,", "0"), (":invoke,", "1"), (":ok,", "1")]
        );
    }
}
