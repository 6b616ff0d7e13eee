//! The command line of the Jepsen and Knossos checkers ([`crate::jepsen`],
//! [`crate::linear`]): the options `isolde analyze` takes for them, the
//! dispatch from a workload to its checker, and the printing of a result
//! map as a table, JSON or EDN.

use crate::ingest::Format;
use crate::jepsen::bank::BankOptions;
use crate::jepsen::detect::{self, Workload};
use crate::jepsen::set_full::SetFullOptions;
use crate::jepsen::{CheckResult, JepsenError, Ops};
use crate::linear::LinearOptions;
use crate::outcome::Validity;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// `isolde analyze`'s options for the Jepsen and Knossos workloads.
#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = crate::help_headings::JEPSEN)]
pub struct JepsenArgs {
    /// long-fork: keys per read group (0: the first read's key count).
    #[arg(long, short = 'g', default_value_t = 0, value_name = "N")]
    pub group_size: usize,
    /// bank: negative balances are allowed.
    #[arg(long, visible_alias = "allow-negative-balances")]
    pub negative_balances: bool,
    /// bank: the expected total of every read (default: the first read's sum).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub total_amount: Option<i64>,
    /// bank: the largest transfer the test issues (larger ones are counted).
    #[arg(long, value_name = "N")]
    pub max_transfer: Option<i64>,
    /// set-full: stale reads make the history invalid (Jepsen's :linearizable?).
    #[arg(long)]
    pub linearizable: bool,
    /// queue: the Knossos queue model every dequeue is checked against.
    #[arg(long, value_enum, default_value = "unordered", value_name = "MODEL")]
    pub queue_model: crate::jepsen::queue::QueueModel,
    /// register, cas-register, rw-register: the value every register starts
    /// at (Knossos's model argument, as in `(model/cas-register 0)`), an EDN
    /// value; default nil.
    #[arg(long, value_name = "V", value_parser = parse_initial_value, allow_hyphen_values = true)]
    pub initial_value: Option<crate::history::Value>,
    /// register, cas-register, mutex: seconds the linearizability search may
    /// take before the verdict becomes unknown.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Memory budget in MB: for register, cas-register and mutex the
    /// search's memoization cache (default 4096; the verdict becomes
    /// unknown when spent); with --follow, reading stops once the process
    /// holds more, and the verdict is unknown unless an anomaly was found
    /// (default: no limit); otherwise a history whose size predicts more is
    /// refused, exit 2 (default: 90% of the memory available at the start,
    /// which a check that outgrows it stops at, exit 2).
    #[arg(long, value_name = "MB", help_heading = crate::help_headings::LIMITS)]
    pub max_memory: Option<usize>,
}

impl JepsenArgs {
    /// The checkers' options.
    pub fn options(&self) -> JepsenOptions {
        JepsenOptions {
            bank: BankOptions {
                negative_balances: self.negative_balances,
                total_amount: self.total_amount,
                max_transfer: self.max_transfer,
            },
            group_size: self.group_size,
            set_full: SetFullOptions { linearizable: self.linearizable },
            queue_model: self.queue_model,
            linear: LinearOptions {
                timeout: self.timeout.filter(|t| t.is_finite() && *t >= 0.0).map(Duration::from_secs_f64),
                max_memory: self.max_memory.unwrap_or(4096).saturating_mul(1 << 20),
                progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
                initial: self.initial_value.clone(),
            },
        }
    }
}

/// Every checker's options.
#[derive(Clone, Debug, Default)]
pub struct JepsenOptions {
    /// bank.
    pub bank: BankOptions,
    /// long-fork's group size (0: inferred).
    pub group_size: usize,
    /// set-full.
    pub set_full: SetFullOptions,
    /// queue's model.
    pub queue_model: crate::jepsen::queue::QueueModel,
    /// register, cas-register, mutex.
    pub linear: LinearOptions,
}

/// Parses `--initial-value`: one EDN value (`0`, `nil`, `"a"`, `:x`).
pub fn parse_initial_value(text: &str) -> Result<crate::history::Value, String> {
    let values = crate::ingest::read_values_bytes("--initial-value", text.as_bytes(), Format::Edn)
        .map_err(|e| format!("expected one EDN value (0, nil, \"a\", :x): {e}"))?;
    match <[_; 1]>::try_from(values) {
        Ok([(v, _)]) => Ok(v),
        Err(vs) => Err(format!("expected one EDN value (0, nil, \"a\", :x), found {} in {text:?}", vs.len())),
    }
}

/// Runs the checker of workload `w` on `ops`.
pub fn check_ops(ops: &Ops, w: Workload, o: &JepsenOptions) -> Result<CheckResult, JepsenError> {
    use crate::jepsen::*;
    if o.linear.initial.is_some() && !matches!(w, Workload::Register | Workload::CasRegister) {
        return Err(JepsenError::Usage(format!(
            "--initial-value applies to the register, cas-register and rw-register workloads, not {}",
            w.name()
        )));
    }
    match w {
        Workload::Bank => bank::check(ops, &o.bank),
        Workload::Counter => counter::check(ops),
        Workload::Set => set::check(ops),
        Workload::SetFull => set_full::check(ops, &o.set_full),
        Workload::LongFork => long_fork::check(ops, o.group_size),
        Workload::Comments => comments::check(ops),
        Workload::Sequential => sequential::check(ops),
        Workload::Register => crate::linear::check_ops(ops, crate::linear::Model::Register, &o.linear),
        Workload::CasRegister => crate::linear::check_ops(ops, crate::linear::Model::CasRegister, &o.linear),
        Workload::Mutex => crate::linear::check_ops(ops, crate::linear::Model::Mutex, &o.linear),
        Workload::Kv => crate::linear::check_ops(ops, crate::linear::Model::Kv, &o.linear),
        Workload::Queue => queue::check_queue(ops, o.queue_model),
        Workload::TotalQueue => queue::check_total(ops),
        Workload::UniqueIds => unique_ids::check(ops),
    }
}

/// A history checked: its ops, the workload, the result.
pub struct JepsenChecked {
    /// The ops (empty for an etcd log, which is read straight into the
    /// linearizability search).
    pub ops: Ops,
    /// Client ops, and the others.
    pub counts: (usize, usize),
    /// Time spent reading, and checking.
    pub times: (Duration, Duration),
    /// The workload checked (given, or detected).
    pub workload: Workload,
    /// The result.
    pub result: CheckResult,
}

/// Reads `path` and checks it as workload `w`, or as the workload its ops
/// show when `w` is `None`.
pub fn check_path(
    path: &Path,
    format: Format,
    w: Option<Workload>,
    o: &JepsenOptions,
) -> Result<JepsenChecked, String> {
    let store = store_file(path);
    let path = store.as_deref().unwrap_or(path);
    if let Some(c) = etcd_log(path, w, o) {
        return c;
    }
    let t0 = std::time::Instant::now();
    let ops = Ops::read(path, format).map_err(|e| e.to_string())?;
    let t1 = std::time::Instant::now();
    let workload = match w {
        Some(w) => w,
        None => detect::detect(&ops).map_err(|e| format!("{}: {e}", path.display()))?,
    };
    let result = check_ops(&ops, workload, o).map_err(|e| e.to_string())?;
    Ok(JepsenChecked { counts: counts(&ops), times: (t1 - t0, t1.elapsed()), ops, workload, result })
}

fn counts(ops: &Ops) -> (usize, usize) {
    let c = ops.clients().count();
    (c, ops.ops.len() - c)
}

/// A Jepsen etcd log (Porcupine's test data), checked as a cas-register
/// with Porcupine's reading; `None` when the file is not one.
fn etcd_log(path: &Path, w: Option<Workload>, o: &JepsenOptions) -> Option<Result<JepsenChecked, String>> {
    use std::io::Read;
    if path.as_os_str() == "-" || !matches!(w, None | Some(Workload::CasRegister)) {
        return None;
    }
    // Only a regular file: opening a FIFO would block.
    std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    let mut head = [0u8; 32];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).ok()?;
    if !crate::linear::porcupine::is_etcd_log(&head[..n]) {
        return None;
    }
    let run = || -> Result<JepsenChecked, String> {
        let name = path.display().to_string();
        let t0 = std::time::Instant::now();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        let mut p = crate::linear::porcupine::read_etcd_log(&name, &text).map_err(|e| e.to_string())?;
        let t1 = std::time::Instant::now();
        let n = p.partitions.iter().map(|(_, l)| l.len()).sum();
        let line = |i: usize| crate::jepsen::result::map(vec![("line", crate::reports::tree::Node::Int(i as i64))]);
        let result = crate::linear::check_prepared(&mut p, crate::linear::Model::CasRegister, &o.linear, &line, &|i| {
            Some(line(i))
        });
        let times = (t1 - t0, t1.elapsed());
        Ok(JepsenChecked {
            ops: Ops { source: name, ..Default::default() },
            counts: (n, 0),
            times,
            workload: Workload::CasRegister,
            result,
        })
    };
    Some(run())
}

/// The history file of a Jepsen store directory (`None` for anything else).
fn store_file(path: &Path) -> Option<std::path::PathBuf> {
    path.is_dir().then(|| crate::ingest::jepsen::store_history(path)).flatten()
}

/// How to print a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Printed {
    /// A header line and the result map's keys one per line.
    Table,
    /// Pretty JSON.
    Json,
    /// One line of JSON (several files).
    JsonLine,
    /// EDN.
    Edn,
}

/// Prints a checked history (with `file` first in the map when `several`)
/// and returns the exit status: 0 valid, 1 invalid, 3 unknown.
pub fn print(c: &JepsenChecked, file: &Path, how: Printed, several: bool, out: &mut dyn Write) -> std::io::Result<u8> {
    let mut r = c.result.clone();
    if let crate::reports::tree::Node::Map(m) = &mut r.map {
        if several && how != Printed::Table {
            m.insert(
                0,
                (
                    crate::reports::tree::Node::Keyword("file".into()),
                    crate::reports::tree::Node::Str(file.display().to_string()),
                ),
            );
        }
        if how != Printed::Table {
            let at = if several { 2 } else { 1 };
            m.insert(
                at.min(m.len()),
                (
                    crate::reports::tree::Node::Keyword("workload".into()),
                    crate::reports::tree::Node::Keyword(c.workload.name().into()),
                ),
            );
        }
    }
    match how {
        Printed::Table => {
            writeln!(
                out,
                "{}: {} history, {} client ops ({} non-client ignored)",
                file.display(),
                c.workload.name(),
                c.counts.0,
                c.counts.1
            )?;
            write!(out, "{}", r.to_table(160))?;
            if several {
                writeln!(out)?;
            }
        }
        Printed::Json => writeln!(out, "{}", r.to_json())?,
        Printed::JsonLine => writeln!(out, "{}", r.to_json_line())?,
        Printed::Edn => writeln!(out, "{}", r.to_edn())?,
    }
    Ok(match c.result.valid {
        Validity::Valid => 0,
        Validity::Invalid => 1,
        Validity::Unknown => 3,
    })
}

/// For `isolde analyze` without `--workload`, after the columnar reader
/// refused the file: the file read as Jepsen ops and checked as the
/// workload they show, or `None` when it is not a Jepsen history either
/// (then the columnar reader's error stands). With `quiet`, a history whose
/// workload cannot be detected is `None` too.
pub fn check_detected(
    path: &Path,
    format: Format,
    o: &JepsenOptions,
    quiet: bool,
) -> Option<Result<JepsenChecked, String>> {
    // A Jepsen store directory: its history file (history.edn, else
    // test.jepsen), as the columnar reader reads it.
    let store = store_file(path);
    let path = store.as_deref().unwrap_or(path);
    // Standard input was read by the columnar reader; a FIFO or device
    // would block (or be read twice).
    if path.as_os_str() == "-" || !path.is_file() {
        return None;
    }
    if let Some(c) = etcd_log(path, None, o) {
        return Some(c);
    }
    let t0 = std::time::Instant::now();
    let ops = Ops::read(path, format).ok()?;
    let t1 = std::time::Instant::now();
    let workload = match detect::detect(&ops) {
        Ok(w) => w,
        // Elle's transactions: the columnar reader's error says more.
        // Not Jepsen's :f values (Elle's :txn, none): the columnar
        // reader's error says more.
        Err(_) if quiet || !ops.clients().all(|i| JEPSEN_FS.contains(&&*ops.ops[i].f)) => return None,
        Err(e) => return Some(Err(format!("{}: {e}", path.display()))),
    };
    Some(
        check_ops(&ops, workload, o)
            .map(|result| JepsenChecked { counts: counts(&ops), times: (t1 - t0, t1.elapsed()), ops, workload, result })
            .map_err(|e| e.to_string()),
    )
}

/// `isolde gen bank | counter | set | queue | unique-ids`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct GenArgs {
    /// Operations (each an invocation and a completion).
    #[arg(long, default_value_t = 10_000)]
    pub ops: usize,
    /// Concurrent client processes.
    #[arg(long, default_value_t = 10)]
    pub processes: usize,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Faults to plant, comma separated, each once: lost-element (set,
    /// queue), negative-balance (bank), wrong-total (bank, counter),
    /// stale-read (counter, set), unexpected-element (queue),
    /// duplicate-element (queue, unique-ids).
    #[arg(long, value_delimiter = ',')]
    pub inject: Vec<String>,
    /// Fraction of ops that complete :info (taking effect or not at random).
    #[arg(long, default_value_t = 0.0)]
    pub info_fraction: f64,
    /// bank, counter: fraction of ops that are reads; queue: that are
    /// dequeues.
    #[arg(long, default_value_t = 0.2)]
    pub read_fraction: f64,
    /// set: reads of the whole set during the run (besides the final read).
    #[arg(long, default_value_t = 10)]
    pub reads: usize,
    /// bank: accounts (10 each to start with).
    #[arg(long, default_value_t = 10)]
    pub accounts: usize,
    /// Output file (default: stdout).
    #[arg(long, short = 'o')]
    pub output: Option<std::path::PathBuf>,
}

/// Runs a Jepsen generator and reports what it planted on `err`.
pub fn generate(kind: crate::gen::jepsen::Kind, a: &GenArgs, err: &mut dyn Write) -> Result<(), String> {
    use crate::gen::jepsen::{Fault, JepsenGenConfig};
    let faults =
        a.inject.iter().filter(|s| !s.trim().is_empty()).map(|s| Fault::parse(s)).collect::<Result<Vec<_>, _>>()?;
    let cfg = JepsenGenConfig {
        kind,
        seed: a.seed,
        ops: a.ops,
        processes: a.processes,
        accounts: a.accounts,
        read_fraction: a.read_fraction,
        reads: a.reads,
        info_fraction: a.info_fraction,
        faults,
    };
    let name = a.output.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "stdout".into());
    let write = match kind {
        crate::gen::jepsen::Kind::Queue | crate::gen::jepsen::Kind::UniqueIds => crate::gen::jepsen_queue::generate,
        _ => crate::gen::jepsen::generate,
    };
    let planted = match &a.output {
        Some(p) => std::fs::File::create(p).and_then(|mut f| write(&cfg, &mut f)),
        None => write(&cfg, &mut std::io::stdout().lock()),
    }
    .map_err(|e| format!("{name}: {e}"))?;
    for (f, index) in &planted.faults {
        let _ = writeln!(err, "isolde: injected 1 x {} (op :index {index})", f.name());
    }
    if planted.faults.len() < cfg.faults.len() {
        let _ = writeln!(err, "isolde: {} of the faults found no place to go", cfg.faults.len() - planted.faults.len());
    }
    Ok(())
}

/// The `:f` values of Jepsen's and Knossos's workloads.
const JEPSEN_FS: &[&str] = &[
    "read", "write", "cas", "acquire", "release", "add", "transfer", "get", "put", "append", "enqueue", "dequeue",
    "drain", "generate",
];

/// Whether a history the columnar reader accepted is rather a Jepsen
/// workload's: no `:txn` op, and every `:f` one of those workloads' (a
/// mutex history's ops have no value, a long-fork's are micro-ops).
pub fn looks_jepsen(h: &crate::history::History) -> bool {
    h.ops.iter().all(|o| match h.f_of(o) {
        crate::history::Atom::Keyword(f) => JEPSEN_FS.contains(&&**f),
        _ => false,
    })
}
