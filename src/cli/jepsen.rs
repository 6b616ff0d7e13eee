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
#[command(next_help_heading = "Jepsen workloads")]
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
    /// register, cas-register, mutex: seconds the linearizability search may
    /// take before the verdict becomes unknown.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// register, cas-register, mutex: memory budget of the search's
    /// memoization cache, in MB (the verdict becomes unknown when spent).
    #[arg(long, default_value_t = 4096, value_name = "MB")]
    pub max_memory: usize,
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
            linear: LinearOptions {
                timeout: self.timeout.filter(|t| t.is_finite() && *t >= 0.0).map(Duration::from_secs_f64),
                max_memory: self.max_memory.saturating_mul(1 << 20),
                progress: false,
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
    /// register, cas-register, mutex.
    pub linear: LinearOptions,
}

/// Runs the checker of workload `w` on `ops`.
pub fn check_ops(ops: &Ops, w: Workload, o: &JepsenOptions) -> Result<CheckResult, JepsenError> {
    use crate::jepsen::*;
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
    }
}

/// A history checked: its ops, the workload, the result.
pub struct JepsenChecked {
    /// The ops.
    pub ops: Ops,
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
    let ops = Ops::read(path, format).map_err(|e| e.to_string())?;
    let workload = match w {
        Some(w) => w,
        None => detect::detect(&ops).map_err(|e| format!("{}: {e}", path.display()))?,
    };
    let result = check_ops(&ops, workload, o).map_err(|e| e.to_string())?;
    Ok(JepsenChecked { ops, workload, result })
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
            let clients = c.ops.clients().count();
            writeln!(
                out,
                "{}: {} history, {} client ops ({} non-client ignored)",
                file.display(),
                c.workload.name(),
                clients,
                c.ops.ops.len() - clients
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
/// (then the columnar reader's error stands).
pub fn check_detected(path: &Path, format: Format, o: &JepsenOptions) -> Option<Result<JepsenChecked, String>> {
    if path.as_os_str() == "-" {
        return None;
    }
    let ops = Ops::read(path, format).ok()?;
    let workload = match detect::detect(&ops) {
        Ok(w) => w,
        // Elle's transactions: the columnar reader's error says more.
        Err(_) if ops.clients().any(|i| &*ops.ops[i].f == "txn") => return None,
        Err(e) => return Some(Err(format!("{}: {e}", path.display()))),
    };
    Some(check_ops(&ops, workload, o).map(|result| JepsenChecked { ops, workload, result }).map_err(|e| e.to_string()))
}
