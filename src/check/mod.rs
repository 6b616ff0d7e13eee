//! The whole analysis: history in, Elle-compatible verdict out.
//!
//! [`check`] runs inference for the workload, adds the process or realtime
//! order when a requested model needs it (as Elle's `additional-graphs` does),
//! builds the dependency graph, searches cycles, and assembles Elle's result
//! map: which anomalies are *prohibited* (by the requested models and
//! anomalies), which are *reportable*, the verdict, and the `:not` /
//! `:also-not` boundary of models the anomalies rule out.

mod exact;
pub mod ladder;
pub mod mem;

pub use crate::cycles::lattice::boundary_names;
pub use crate::outcome::{DecidedBy, LevelRow, ModelStatus, Outcome, SccEdges, Stats, Validity};

use crate::anomaly::{Anomalies, Case, Workload};
use crate::cycles::{self, lattice, CycleOptions};
use crate::graph::Graph;
use crate::history::{History, MopFn, MopValue, OpId};
use crate::infer::{self, order, InferError};
use crate::levels::names as model_names;
use crate::si_check;
use crate::weak;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Which workload's rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadChoice {
    /// Decide from the micro-ops: `:w` without `:append` means registers.
    Auto,
    /// Force a workload.
    Fixed(Workload),
}

/// What to check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Workload selection.
    pub workload: WorkloadChoice,
    /// Consistency models expected to hold; `None` means Elle's default
    /// (`strict-serializable`), an empty list means none.
    pub models: Option<Vec<String>>,
    /// Specific anomalies that must not occur (expanded to every anomaly
    /// implying them).
    pub anomalies: Vec<String>,
    /// Per-SCC budget for the typed cycle search.
    pub cycle_search_timeout: Duration,
    /// rw-register version-order sources.
    pub rw: infer::rw_register::RwOptions,
    /// Keep each SCC's vertices and edges in the outcome (for plots).
    pub keep_sccs: bool,
    /// Keep each op's rank in a topological order of the dependency graph's
    /// components ([`Outcome::order`]): the online collector orders unread
    /// appends by it.
    pub keep_order: bool,
    /// Decide serializability and snapshot isolation levels of register
    /// histories exactly (polygraph + SAT) when a requested model is one of
    /// them; `None` keeps Elle's inference-only analysis.
    pub exact: Option<si_check::ExactOptions>,
    /// Options of the exact weak-level checks (`read-committed-be`,
    /// `read-atomic`, `causal-cerone`): session order and limits.
    pub weak: weak::Options,
    /// Also run the ladder's own checkers (the weak levels, prefix, and
    /// snapshot isolation and serializability with sessions), on the same
    /// inference, so that [`Outcome::levels`] decides every level; the
    /// verdict stays the requested models'. `--model all` implies it.
    pub ladder: bool,
    /// rw-register: the value every key starts at (`--initial-value`);
    /// `None` is `nil`, Elle's. See [`infer::initial_value`].
    pub initial_value: Option<crate::history::Value>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            workload: WorkloadChoice::Auto,
            models: None,
            anomalies: Vec::new(),
            cycle_search_timeout: Duration::from_millis(1000),
            rw: infer::rw_register::RwOptions::default(),
            keep_sccs: false,
            keep_order: false,
            exact: Some(si_check::ExactOptions::default()),
            weak: weak::Options::default(),
            ladder: false,
            initial_value: None,
        }
    }
}

/// Problems with the request itself (not with the history).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CheckError {
    /// A model name Elle does not know: the name, and the message (a hint,
    /// or the nearest and the known names; see [`crate::cli::model_names`]).
    #[error("{1}")]
    UnknownModel(String, String),
    /// An anomaly name Elle (and isolde) does not know.
    #[error("unknown anomaly {0:?}; known anomalies are: {1}")]
    UnknownAnomaly(String, String),
    /// An empty name in a list of models or anomalies (`-m ''`, `-a G0,`).
    #[error("empty {what} name in the list; give {what} names separated by commas{hint}")]
    EmptyName {
        /// `model` or `anomaly`.
        what: &'static str,
        /// What else may be given.
        hint: &'static str,
    },
    /// `--initial-value` on a list-append history, or a read it leaves
    /// ambiguous (see [`infer::initial_value`]).
    #[error("{0}")]
    InitialValue(String),
}

/// Anomalies isolde reports beyond Elle's vocabulary. A read of a value no one
/// wrote breaks every consistency model, so every model prohibits them; with
/// no model they are reported only when asked for by name.
pub const PROHIBITED_BY_EVERY_MODEL: &[&str] = &["garbage-read"];

/// Why the checkers beyond Elle's inference decide nothing of a
/// closed-predicate history (defined beside the weak levels, the lowest
/// module that says it).
pub use crate::weak::PREDICATES_UNKNOWN;

/// Anomalies that make a verdict `unknown` rather than `false`.
pub const UNKNOWN_ANOMALY_TYPES: &[&str] = &["cycle-search-timeout", "empty-transaction-graph", "exact-check-unknown"];

/// Resolves the workload for a history. `Auto` decides from what the
/// micro-ops say, strongest evidence first: a closed-predicate micro-op
/// (`:insert`, `:delete`, `:rp`) or an `:init` map means closed-predicate;
/// an `:append` means list-append;
/// otherwise a `:w` means registers; otherwise reads decide, a list read
/// (`[:r :x [1 2]]`) meaning list-append and a scalar read (`[:r :x 2]`)
/// meaning registers; a history from a register-only format
/// ([`History::registers_only`]) is registers. Only a history whose reads
/// all saw `nil` says nothing, and is read as list-append (both workloads
/// give it the same verdict). So a read-only history gets the same
/// workload, and the same verdict, whatever format it came in.
pub fn resolve_workload(h: &History, choice: WorkloadChoice) -> Workload {
    WorkloadFlags::of(h).resolve(choice)
}

/// What the micro-ops of a history say of its workload (see
/// [`resolve_workload`]); the flags of parts of a history (a distributed
/// run's windows) combine with [`WorkloadFlags::or`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkloadFlags {
    /// Some `:w`.
    pub write: bool,
    /// Some `:append`.
    pub append: bool,
    /// Some read of a list.
    pub list_read: bool,
    /// Some read of a scalar.
    pub scalar_read: bool,
    /// The format holds registers only.
    pub registers_only: bool,
    /// Some closed-predicate micro-op (`:insert`, `:delete`, `:rp`) or an
    /// `:init` map.
    pub predicate: bool,
}

impl WorkloadFlags {
    /// The flags of a history.
    pub fn of(h: &History) -> WorkloadFlags {
        let predicate = h.ops.iter().any(|o| o.fields & crate::history::field::VALUE_MAP != 0);
        let mut f = WorkloadFlags { registers_only: h.registers_only, predicate, ..WorkloadFlags::default() };
        for m in &h.mops {
            match (m.f, m.value) {
                (MopFn::Write, _) => f.write = true,
                (MopFn::Append, _) => f.append = true,
                (MopFn::Read, MopValue::List { .. }) => f.list_read = true,
                (MopFn::Read, MopValue::Int(_)) => f.scalar_read = true,
                (MopFn::Read, MopValue::Nil | MopValue::Entries(_)) => {}
                (MopFn::Insert | MopFn::Delete | MopFn::PredRead | MopFn::PredEntry, _) => f.predicate = true,
            }
        }
        f
    }

    /// The flags of two parts together.
    pub fn or(self, o: WorkloadFlags) -> WorkloadFlags {
        WorkloadFlags {
            write: self.write || o.write,
            append: self.append || o.append,
            list_read: self.list_read || o.list_read,
            scalar_read: self.scalar_read || o.scalar_read,
            registers_only: self.registers_only || o.registers_only,
            predicate: self.predicate || o.predicate,
        }
    }

    /// The workload, by [`resolve_workload`]'s rules.
    pub fn resolve(self, choice: WorkloadChoice) -> Workload {
        match choice {
            WorkloadChoice::Fixed(w) => w,
            WorkloadChoice::Auto if self.predicate => Workload::ClosedPredicate,
            WorkloadChoice::Auto if self.append => Workload::ListAppend,
            WorkloadChoice::Auto if self.write || self.registers_only => Workload::RwRegister,
            WorkloadChoice::Auto if self.list_read => Workload::ListAppend,
            WorkloadChoice::Auto if self.scalar_read => Workload::RwRegister,
            WorkloadChoice::Auto => Workload::ListAppend,
        }
    }
}

/// Validates model names and returns the list to check (default applied),
/// each in Elle's spelling; `all` stands for every level of the ladder
/// ([`crate::levels::LADDER_MODELS`] and [`crate::levels::REALTIME_MODELS`]). Names match case-insensitively (`Serializable`,
/// `PL-SI`); an empty name or one Elle does not know is an error, never
/// ignored, so a typo cannot turn a check into a vacuous `valid`.
pub fn resolve_models(models: &Option<Vec<String>>) -> Result<Vec<String>, CheckError> {
    let mut ms = models.clone().unwrap_or_else(|| vec!["strict-serializable".to_string()]);
    if crate::levels::ladder_requested(models) {
        ms.retain(|m| !m.trim().eq_ignore_ascii_case(crate::levels::ALL));
        let ladder = crate::levels::LADDER_MODELS.iter().chain(crate::levels::REALTIME_MODELS);
        ms.extend(ladder.filter(|l| !ms.iter().any(|m| m == **l)).map(|m| m.to_string()).collect::<Vec<_>>());
    }
    let mut known = lattice::all_model_names();
    known.extend(weak::elle::ISOLDE_ONLY_MODELS);
    known.push(crate::levels::ALL);
    known.sort_unstable();
    ms.iter()
        .map(|m| {
            let name = m.trim().trim_start_matches(':');
            if name.is_empty() {
                return Err(CheckError::EmptyName { what: "model", hint: ", or `none` alone for no model" });
            }
            if let Some(weak_name) = weak::elle::resolve_model(name) {
                return Ok(weak_name.to_string());
            }
            if lattice::canonical_model_name(name).is_some() {
                return Ok(name.to_string());
            }
            known
                .iter()
                .find(|k| k.eq_ignore_ascii_case(name))
                .map(|k| k.to_string())
                .ok_or_else(|| CheckError::UnknownModel(m.clone(), model_names::unknown_model(name, &known)))
        })
        .collect()
}

/// Every anomaly name `--anomalies` accepts: Elle's anomalies and isolde's
/// own (see [`PROHIBITED_BY_EVERY_MODEL`] and [`UNKNOWN_ANOMALY_TYPES`]).
pub fn known_anomaly_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = lattice::all_anomalies().to_vec();
    names.extend(PROHIBITED_BY_EVERY_MODEL);
    names.extend(UNKNOWN_ANOMALY_TYPES);
    names.extend(weak::elle::WEAK_ANOMALY_TYPES);
    names.sort_unstable();
    names.dedup();
    names
}

/// Validates anomaly names and returns them in Elle's spelling. Elle's
/// keywords are case-sensitive (`:G1c`); isolde matches them
/// case-insensitively (`G1C` is `G1c`) and rejects any name it does not
/// know, listing the valid ones, rather than ignoring it.
pub fn resolve_anomalies(anomalies: &[String]) -> Result<Vec<String>, CheckError> {
    let known = known_anomaly_names();
    anomalies
        .iter()
        .map(|a| {
            let name = a.trim().trim_start_matches(':');
            if name.is_empty() {
                return Err(CheckError::EmptyName { what: "anomaly", hint: "" });
            }
            known
                .iter()
                .find(|k| **k == name)
                .or_else(|| known.iter().find(|k| k.eq_ignore_ascii_case(name)))
                .map(|k| k.to_string())
                .ok_or_else(|| CheckError::UnknownAnomaly(a.clone(), known.join(", ")))
        })
        .collect()
}

/// Anomalies that fail the check under these options.
pub fn prohibited_anomalies(opts: &CheckOptions) -> Result<BTreeSet<String>, CheckError> {
    let models = resolve_models(&opts.models)?;
    let anomalies = resolve_anomalies(&opts.anomalies)?;
    Ok(prohibited_by(&models, &anomalies))
}

/// Anomalies that fail a check of these (resolved) models and anomalies.
fn prohibited_by(models: &[String], anomalies: &[String]) -> BTreeSet<String> {
    let ms: Vec<&str> =
        models.iter().map(String::as_str).filter(|m| !weak::elle::ISOLDE_ONLY_MODELS.contains(m)).collect();
    let an: Vec<&str> = anomalies.iter().map(String::as_str).collect();
    let mut p = lattice::all_anomalies_implying(&an);
    p.extend(lattice::anomalies_prohibited_by(&ms));
    if let Some(level) = weak::elle::requested(models) {
        p.extend(weak::elle::prohibited(level).into_iter().map(str::to_string));
    }
    if !models.is_empty() {
        p.extend(PROHIBITED_BY_EVERY_MODEL.iter().map(|s| s.to_string()));
    }
    p
}

/// Whether `internal` is prohibited by a requested model or anomaly other
/// than the weak levels' own lists.
fn internal_beyond_weak(models: &[String], anomalies: &[String]) -> bool {
    let ms: Vec<&str> = models
        .iter()
        .map(String::as_str)
        .filter(|m| weak::Level::from_model(m).is_none() && !weak::elle::ISOLDE_ONLY_MODELS.contains(m))
        .collect();
    let an: Vec<&str> = anomalies.iter().map(String::as_str).collect();
    let mut p = lattice::all_anomalies_implying(&an);
    p.extend(lattice::anomalies_prohibited_by(&ms));
    p.contains("internal")
}

/// What inference and the cycle search found, before any level is decided.
struct Found {
    anomalies: Anomalies,
    graph: Graph,
    sccs: Vec<Vec<OpId>>,
}

/// What one set of models asks of the checkers.
struct Request<'a> {
    workload: Workload,
    models: Vec<String>,
    anomalies: &'a [String],
    opts: &'a CheckOptions,
}

/// Runs the whole analysis: Elle's inference and cycle search once, then
/// the requested models' checkers and Elle's result map, then every level
/// of the ladder ([`crate::levels`]). With [`CheckOptions::ladder`] (and
/// with `--model all`) the ladder's own checkers also run, on the same
/// inference, so that every level is decided; otherwise each level is
/// decided by what the requested check found.
pub fn check(h: &History, opts: &CheckOptions) -> Result<Outcome, CheckError> {
    let workload = resolve_workload(h, opts.workload);
    let rewritten = with_initial_value(h, workload, opts)?;
    let h = rewritten.as_ref().unwrap_or(h);
    let asked = resolve_anomalies(&opts.anomalies)?;
    let req = Request { workload, models: resolve_models(&opts.models)?, anomalies: &asked, opts };
    let prohibited = prohibited_by(&req.models, &asked);
    let mut reportable = prohibited.clone();
    reportable.extend(UNKNOWN_ANOMALY_TYPES.iter().map(|s| s.to_string()));
    let realtime = h.ops.iter().any(|o| o.is_invoke());
    let transaction_order = match workload {
        Workload::RwRegister => h.transaction_order.as_ref().map_or(0, |o| o.len()),
        Workload::ListAppend | Workload::ClosedPredicate => 0,
    };
    let mut stats =
        Stats { ops: h.ops.len(), nonclient_ops: h.nonclient_ops, realtime, transaction_order, ..Stats::default() };
    let weak_first = match weak_alone(h, &req, &stats) {
        Ok(outcome) => return Ok(outcome),
        Err(pre) => pre,
    };
    let found = match find(h, &req, &reportable, &mut stats) {
        Ok(f) => f,
        Err(e) => return Ok(cannot_run(workload, e, stats)),
    };
    let extend_ladder = opts.ladder && !crate::levels::ladder_requested(&opts.models);
    let mut anomalies = found.anomalies;
    let lists_prefix = |a: &Anomalies, models: &[String]| {
        workload == Workload::ListAppend
            && models.iter().any(|m| m == "prefix")
            && !elle_proves_session_si(a, models, req.anomalies)
    };
    if lists_prefix(&anomalies, &req.models) {
        prefix_of_lists(h, opts, &mut anomalies, &mut stats);
    }
    let (mut outcome, all_found) = decide(h, &req, anomalies, stats, extend_ladder, weak_first);
    outcome.levels = match all_found {
        Some(anomalies) => extend(h, &req, &mut outcome, anomalies, &lists_prefix),
        None => ladder::rows(&outcome),
    };
    outcome.ladder = extend_ladder || crate::levels::ladder_requested(&opts.models);
    if opts.keep_order {
        outcome.order = match workload {
            Workload::ListAppend | Workload::ClosedPredicate => cycles::topological_ranks(&found.graph),
            Workload::RwRegister => serial_ranks(h, opts, &mut outcome),
        };
    }
    if opts.keep_sccs {
        outcome.sccs = scc_edges(&found.graph, found.sccs);
    }
    Ok(outcome)
}

/// A register history asked only for weak levels (`read-committed-be`,
/// `read-atomic`, `causal-cerone`, `transactional-causal`), decided by the
/// weak check on the parsed history alone, without Elle's inference, when
/// it proves them all.
///
/// Why nothing is lost when it does: every anomaly those levels prohibit
/// under Elle's names is one the weak check decides exactly. The read
/// findings (garbage, aborted, intermediate, future and internal reads) are
/// its front end's. Every other prohibited type (G0, G1c, their `-process`
/// forms, `cyclic-versions`) is a cycle of wr, so and the ww edges Elle's
/// default inference derives, and each of those is a wr, so or
/// nil-first edge, all inside the commit order a weak-level proof exhibits:
/// such a cycle would be a cycle of that order. Elle's optional version
/// orders (`--wfr-keys`, `--sequential-keys`, `--linearizable-keys`) and a
/// database commit order add ww edges no such proof respects, and a
/// session-free weak check does not respect process order (G1c-process),
/// so with any of them, and whenever the weak check finds a violation (whose result
/// map names Elle's cycles too), the full pipeline runs as before.
fn weak_alone(h: &History, req: &Request, stats: &Stats) -> Result<Outcome, Option<WeakFirst>> {
    let opts = req.opts;
    let weak_only = req.workload == Workload::RwRegister
        && !req.models.is_empty()
        && req.models.iter().all(|m| weak::Level::from_model(m).is_some())
        && req.anomalies.is_empty()
        && !opts.ladder
        && !opts.keep_order
        && !opts.keep_sccs
        && opts.rw == infer::rw_register::RwOptions::default()
        && opts.weak.sessions == crate::anomaly::weak::Sessions::Process
        && stats.transaction_order == 0;
    let Some(level) = weak::elle::requested(&req.models).filter(|_| weak_only) else { return Err(None) };
    let mut found = Anomalies::new();
    let run = weak::elle::run(h, req.workload, level, &opts.weak, &mut found);
    let first = WeakFirst { run, found };
    if !first.run.proved {
        return Err(Some(first));
    }
    let (mut outcome, _) = decide(h, req, Anomalies::new(), stats.clone(), false, Some(first.clone()));
    if outcome.valid != Validity::Valid {
        return Err(Some(first));
    }
    outcome.levels = ladder::rows(&outcome);
    Ok(outcome)
}

/// The weak check's run made before Elle's inference ([`weak_alone`]),
/// and what it filed: [`decide`] uses it instead of running it again.
#[derive(Clone)]
struct WeakFirst {
    run: weak::elle::WeakRun,
    found: Anomalies,
}

impl WeakFirst {
    /// Files what the run found into `anomalies` as [`weak::elle::run`]
    /// would have: a violation under a name not already found, an unknown
    /// beside any others.
    fn file_into(self, anomalies: &mut Anomalies) -> weak::elle::WeakRun {
        for (name, cases) in self.found {
            if name == "exact-check-unknown" {
                anomalies.entry(name).or_default().extend(cases);
            } else {
                anomalies.entry(name).or_insert(cases);
            }
        }
        self.run
    }
}

/// The history with its reads of `--initial-value` that read the initial
/// version rewritten to reads of `nil` (registers), `None` when none is.
fn with_initial_value(h: &History, workload: Workload, opts: &CheckOptions) -> Result<Option<History>, CheckError> {
    let Some(v) = &opts.initial_value else { return Ok(None) };
    match workload {
        Workload::RwRegister => infer::initial_value::apply(h, v).map_err(CheckError::InitialValue),
        Workload::ListAppend => Err(CheckError::InitialValue(format!(
            "{}: --initial-value applies to register histories (rw-register, register, cas-register); \
             a list-append key always starts empty",
            h.source
        ))),
        Workload::ClosedPredicate => Err(CheckError::InitialValue(format!(
            "{}: --initial-value applies to register histories (rw-register, register, cas-register); \
             a closed-predicate history gives its keys' initial values in its :init op",
            h.source
        ))),
    }
}

/// How long [`serial_ranks`] may spend on the exact check at
/// serializability for an order, when the replay found none: a round of
/// `--follow` that gets none collects nothing and tries again later.
const SOLVED_ORDER_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// For a valid register history: each op's position in a serial execution
/// that explains it with sessions (the replay's, found during the check or
/// now), `u32::MAX` for ops outside it; empty when there is none (the
/// history is not valid, or the replay found no serial execution). A
/// history valid at strong session snapshot isolation and not serializable
/// gets the commit order of the execution the check found, and
/// [`Outcome::order_open`] says where a prefix of it may not end.
fn serial_ranks(h: &History, opts: &CheckOptions, outcome: &mut Outcome) -> Vec<u32> {
    if outcome.valid != Validity::Valid {
        return Vec::new();
    }
    let mut order = std::mem::take(&mut outcome.stats.serial_order);
    // Under snapshot isolation: per position, whether nothing may be cut
    // there (see `si_check::snapshot`).
    let mut open = Vec::new();
    if order.is_empty() {
        // The exact check's own replay at a level with sessions (under
        // snapshot isolation, its execution's commit order).
        let with_sessions =
            |m: &str| si_check::Level::from_model(m).is_some_and(|l| l.order != si_check::OrderKind::None);
        if let Some((_, s)) =
            outcome.stats.exact.iter_mut().find(|(m, s)| with_sessions(m) && !s.serial_order.is_empty())
        {
            order = std::mem::take(&mut s.serial_order);
            open = std::mem::take(&mut s.serial_open);
        }
    }
    let causal = opts.models.iter().flatten().any(|m| m == "causal-cerone");
    // Serial unless an execution with overlapping transactions says where
    // a prefix may not end, or the causal check's commit order stands in.
    let mut serial = true;
    if order.is_empty() {
        let exact = si_check::ExactOptions { keep_serial: true, ..opts.exact.clone().unwrap_or_default() };
        order = match si_check::serial_order_by_replay(h, SESSION_SERIALIZABLE, &exact) {
            Ok(Some((_, found))) => found,
            // At causal consistency, its own commit order (near-linear).
            _ if causal => {
                serial = false;
                causal_order(h, opts)
            }
            // Valid at a weaker level only the solver decided: the exact
            // check at serializability with sessions, whose model (when
            // it has one) is a serial execution. Without the replay that
            // just failed, and within `SOLVED_ORDER_TIME`.
            _ => {
                let timeout = Some(exact.timeout.map_or(SOLVED_ORDER_TIME, |t| t.min(SOLVED_ORDER_TIME)));
                let solve = si_check::ExactOptions { serial_first: false, timeout, ..exact };
                match si_check::check_level(h, SESSION_SERIALIZABLE, &solve) {
                    Ok(out) if out.verdict == si_check::Verdict::Valid => out.stats.serial_order,
                    _ => return Vec::new(),
                }
            }
        };
    }
    if order.is_empty() {
        return Vec::new();
    }
    let mut ranks = vec![u32::MAX; h.ops.len()];
    for (i, &op) in order.iter().enumerate() {
        ranks[op as usize] = i as u32;
    }
    if open.len() == order.len() && open.iter().any(|&o| o) {
        serial = false;
        outcome.order_open = vec![false; h.ops.len()];
        for (&op, &o) in order.iter().zip(&open) {
            outcome.order_open[op as usize] = o;
        }
    }
    outcome.order_serial = serial;
    ranks
}

/// For a register history valid at `causal-cerone`: its transactions in the
/// commit (arbitration) order of the weak check's witness, the order of
/// `(so ∪ wr)` and causal consistency's forced write orders
/// ([`weak::Explanation::co`]), without the initial transaction; empty
/// when it is not valid there. Tried only when no serial execution was
/// found: a serial execution settles concurrent unread writes by
/// completion, which the witness's order does not.
fn causal_order(h: &History, opts: &CheckOptions) -> Vec<crate::history::OpId> {
    let weak::Verdict::Valid(e) = weak::check(h, Workload::RwRegister, weak::Level::Causal, &opts.weak) else {
        return Vec::new();
    };
    let Ok(f) = weak::front::build(h, Workload::RwRegister, opts.weak.sessions) else { return Vec::new() };
    e.co.iter().map(|&t| f.op[t as usize]).filter(|&op| op != crate::history::NONE).collect()
}

/// The rows of every level after the requested check: the ladder's own
/// checkers run, on the same findings, for the levels that check left
/// undecided (a level implied by one that holds, or implying one that
/// fails, needs none). The verdict stays the requested check's.
fn extend(
    h: &History,
    req: &Request,
    outcome: &mut Outcome,
    mut anomalies: Anomalies,
    lists_prefix: &dyn Fn(&Anomalies, &[String]) -> bool,
) -> Vec<LevelRow> {
    let t = Instant::now();
    let decided = ladder::rows(outcome);
    let undecided = |m: &str| {
        decided.iter().any(|r| r.level.model == m && matches!(r.status, ModelStatus::Unknown | ModelStatus::NotChecked))
    };
    let mut models = req.models.clone();
    let wanted = |m: &&&str| !req.models.iter().any(|r| r == **m) && undecided(m);
    models.extend(crate::levels::LADDER_MODELS.iter().filter(wanted).map(|m| m.to_string()));
    let mut seeded = Stats {
        exact: outcome.stats.exact.clone(),
        exact_valid: outcome.stats.exact_valid.clone(),
        exact_refuted: outcome.stats.exact_refuted.clone(),
        prefix: outcome.stats.prefix.clone(),
        ops: outcome.stats.ops,
        nonclient_ops: outcome.stats.nonclient_ops,
        realtime: outcome.stats.realtime,
        transaction_order: outcome.stats.transaction_order,
        ..Stats::default()
    };
    if seeded.prefix.is_none() && undecided("prefix") && lists_prefix(&anomalies, &models) {
        prefix_of_lists(h, req.opts, &mut anomalies, &mut seeded);
    }
    let (extended, _) = decide(h, &Request { models, ..*req }, anomalies, seeded, false, None);
    outcome.stats.exact = extended.stats.exact.clone();
    outcome.stats.exact_valid = extended.stats.exact_valid.clone();
    outcome.stats.exact_refuted = extended.stats.exact_refuted.clone();
    outcome.stats.prefix = extended.stats.prefix.clone();
    outcome.stats.ladder = Some(t.elapsed());
    ladder::rows(&extended)
}

/// Decides prefix consistency of a list-append history ([`crate::prefix`]);
/// a refutation is filed under its anomaly name.
fn prefix_of_lists(h: &History, opts: &CheckOptions, anomalies: &mut Anomalies, stats: &mut Stats) {
    use crate::outcome::PrefixFinding;
    use crate::prefix::{check_prefix, PrefixOptions, PrefixVerdict};
    let exact = opts.exact.clone().unwrap_or_default();
    let popts = PrefixOptions { sessions: opts.weak.sessions, ..PrefixOptions::from_exact(&exact) };
    stats.prefix = Some(match check_prefix(h, Workload::ListAppend, &popts) {
        Ok(out) => match out.verdict {
            PrefixVerdict::Valid(_) => PrefixFinding::Valid,
            PrefixVerdict::Invalid { anomaly, case } => {
                anomalies.entry(anomaly.clone()).or_default().push(*case);
                PrefixFinding::Invalid(anomaly)
            }
            PrefixVerdict::Unknown(why) => PrefixFinding::Unknown(why),
        },
        Err(e) => PrefixFinding::Unknown(format!("the history cannot be read as Biswas–Enea transactions: {e}")),
    });
}

/// Inference, the dependency graph and the cycle search: what every level
/// shares. Order edges are added when a reportable anomaly needs them
/// (Elle's rule: realtime subsumes process).
fn find(h: &History, req: &Request, reportable: &BTreeSet<String>, stats: &mut Stats) -> Result<Found, InferError> {
    let t0 = Instant::now();
    // The session and realtime orders depend on the ops alone: they are
    // derived beside the data dependencies (and counted in the infer time).
    let (inf, order_edges) = rayon::join(
        || match req.workload {
            Workload::ListAppend => infer::list_append::infer(h),
            Workload::RwRegister => infer::rw_register::infer(h, req.opts.rw),
            Workload::ClosedPredicate => infer::closed_predicate::infer(h),
        },
        || order_edges(h, reportable),
    );
    let inf = inf?;
    stats.infer = t0.elapsed();
    let edge_bytes: u64 = inf.edges.iter().map(mem::vec_bytes).sum();
    stats.memory.push(mem::record("infer", edge_bytes + inf.explainer.heap_bytes()));

    let t1 = Instant::now();
    let mut lists: Vec<&[crate::graph::Edge]> = inf.edges.iter().map(Vec::as_slice).collect();
    lists.push(&order_edges);
    let graph = Graph::from_edge_lists(h.ops.len(), &lists);
    drop(lists);
    drop(order_edges);
    stats.edges = graph.edge_count();
    stats.graph = t1.elapsed();
    stats.memory.push(mem::record("graph", graph.heap_bytes()));

    let t2 = Instant::now();
    drop(inf.edges);
    let mut anomalies = inf.anomalies;
    if graph.edge_count() == 0 {
        anomalies.insert("empty-transaction-graph".into(), vec![Case::EmptyTransactionGraph]);
    }
    let explainer = &inf.explainer;
    let (cycles, sccs) = cycles::find_cycles(
        h,
        &graph,
        req.workload,
        |a, b, rels| explainer.explain(h, a, b, rels).or_else(|| order::explain(h, a, b, rels)),
        CycleOptions { timeout: req.opts.cycle_search_timeout },
    );
    for (k, v) in cycles {
        anomalies.entry(k).or_default().extend(v);
    }
    stats.cycles = t2.elapsed();
    stats.memory.push(mem::record("cycles", inf.explainer.heap_bytes() + graph.heap_bytes()));
    Ok(Found { anomalies, graph, sccs })
}

/// The process or realtime edges the reportable anomalies need (none when
/// they need neither).
fn order_edges(h: &History, reportable: &BTreeSet<String>) -> Vec<crate::graph::Edge> {
    let wants =
        |suffix: &str| lattice::CYCLE_SEARCH_ORDER.iter().any(|t| t.ends_with(suffix) && reportable.contains(*t));
    // A history of completions only (dbcop, Cobra, PolySI text) has no
    // realtime information, but its sessions are still ordered.
    let has_invocations = h.ops.iter().any(|o| o.is_invoke());
    if wants("-realtime") && has_invocations {
        order::realtime_edges(h)
    } else if wants("-process") || wants("-realtime") {
        order::process_edges(h)
    } else {
        Vec::new()
    }
}

/// Decides the request's models from what was found: the weak check first
/// (a violation it finds answers the session levels without search, see
/// `weak::strong`), then the exact check of register histories, then
/// Elle's result map. With `keep_all`, also returns every anomaly found
/// (reportable or not), for a wider request to start from.
fn decide(
    h: &History,
    req: &Request,
    mut anomalies: Anomalies,
    mut stats: Stats,
    keep_all: bool,
    weak_first: Option<WeakFirst>,
) -> (Outcome, Option<Anomalies>) {
    let (models, opts) = (&req.models, req.opts);
    let mut weak_run = None;
    let implied = match req.workload {
        Workload::ListAppend => elle_proves_session_si(&anomalies, models, req.anomalies),
        // The weak check does not know predicates: see `predicates_unknown`.
        Workload::ClosedPredicate => true,
        Workload::RwRegister => {
            weak::elle::requested(models).is_some()
                && !reads_break_weak_levels(&anomalies)
                && replay_proves_session_si(h, req, &mut stats)
        }
    };
    if req.workload == Workload::ClosedPredicate {
        predicates_unknown(models, &mut anomalies);
    }
    if let Some(level) = weak::elle::requested(models).filter(|_| !implied) {
        if level == weak::Level::ReadCommitted && !internal_beyond_weak(models, req.anomalies) {
            weak::elle::refile_non_repeatable_reads(h, &mut anomalies);
        }
        weak_run = Some(match weak_first.filter(|w| w.run.level == level) {
            Some(first) => first.file_into(&mut anomalies),
            None => weak::elle::run(h, req.workload, level, &opts.weak, &mut anomalies),
        });
    }
    if let (Workload::RwRegister, Some(exact_opts)) = (req.workload, &opts.exact) {
        let implied = weak_run.as_ref().and_then(|r| r.violated);
        exact::run_exact(h, models, exact_opts, &opts.weak, implied, &mut anomalies, &mut stats);
        // The exact check's inputs (forced write orders, transactions,
        // replay state, polygraph) are freed when it ends: it keeps nothing,
        // and the resident peak says what it needed.
        stats.memory.push(mem::record("exact", 0));
    }
    let mut violated = None;
    if let Some(weak_run) = weak_run {
        violated = weak_run.violated;
        order_blind_weak(models, &weak_run, &stats, &mut anomalies);
        if let Some(detail) = prefix_undecided(req, &weak_run, &stats) {
            let case = Case::ExactCheckUnknown { model: "prefix".into(), detail };
            anomalies.entry("exact-check-unknown".into()).or_default().push(case);
        }
        stats.weak = Some(weak_run);
    }
    // Elle calls an edgeless graph inconclusive; levels the weak or exact
    // check proved are not.
    if !models.is_empty() && models.iter().all(|m| proved(&stats, m)) {
        anomalies.remove("empty-transaction-graph");
    }
    let all = keep_all.then(|| anomalies.clone());
    let mut prohibited = prohibited_by(models, req.anomalies);
    // A requested level the exact check refuted fails the check, whatever
    // Elle's lattice says of the cycle's name (a prefix-consistency
    // refutation may be named G2-item, which Elle's prefix allows).
    for (level, name) in &stats.exact_refuted {
        if models.iter().any(|m| m == level.model()) {
            prohibited.insert(name.clone());
        }
    }
    if let (Some(crate::outcome::PrefixFinding::Invalid(name)), true) =
        (&stats.prefix, models.iter().any(|m| m == "prefix"))
    {
        prohibited.insert(name.clone());
    }
    let mut reportable = prohibited.clone();
    reportable.extend(UNKNOWN_ANOMALY_TYPES.iter().map(|s| s.to_string()));
    let mut outcome = result_map(req.workload, anomalies, &prohibited, &reportable, stats);
    if let Some((level, without_sessions)) = violated {
        if outcome.valid != Validity::Valid {
            weak::elle::extend_boundary(level, without_sessions, &mut outcome.not, &mut outcome.also_not);
        }
    }
    (outcome, all)
}

/// A closed-predicate history: each requested level that only the weak or
/// the prefix checker decides (Elle's inference has no complete detector
/// for it) is undecided, with the reason, never a silent `valid`. Those
/// checkers do not know predicate reads; Elle's inference does, and with
/// every version known it decides the levels it names (see
/// [`crate::infer::closed_predicate`]).
fn predicates_unknown(models: &[String], anomalies: &mut Anomalies) {
    for m in models.iter().filter(|m| weak::Level::from_model(m).is_some() || *m == "prefix") {
        let case = Case::ExactCheckUnknown { model: m.clone(), detail: PREDICATES_UNKNOWN.into() };
        anomalies.entry("exact-check-unknown".into()).or_default().push(case);
    }
}

/// With a transaction order, a requested weak level the weak check did not
/// refute stays undecided unless the exact check proved a level implying
/// it: the weak check does not use the order, which only adds write orders,
/// so its proof says nothing of the history with them.
fn order_blind_weak(models: &[String], run: &weak::elle::WeakRun, stats: &Stats, anomalies: &mut Anomalies) {
    if stats.transaction_order == 0 || run.violated.is_some() {
        return;
    }
    let exact_proves = stats.exact_valid.iter().any(|v| v.implies(SESSION_SI));
    for m in models.iter().filter(|m| weak::Level::from_model(m).is_some()) {
        if !exact_proves {
            let detail = "the weak check does not use the transaction order".to_string();
            let case = Case::ExactCheckUnknown { model: m.clone(), detail };
            anomalies.entry("exact-check-unknown".into()).or_default().push(case);
        }
    }
}

/// For a requested `prefix` the weak check did not refute: why it stays
/// undecided, or `None` when its own check decides it (registers: the
/// exact check; lists: [`crate::prefix`], whose finding is in `stats`).
fn prefix_undecided(req: &Request, run: &weak::elle::WeakRun, stats: &Stats) -> Option<String> {
    use crate::outcome::PrefixFinding;
    if !req.models.iter().any(|m| m == "prefix") || run.violated.is_some() {
        return None;
    }
    match (req.workload, &stats.prefix) {
        (Workload::RwRegister, _) if req.opts.exact.is_some() => None,
        (Workload::RwRegister, _) => {
            Some("prefix consistency of registers needs the exact check, which --no-exact turns off".into())
        }
        (Workload::ListAppend, Some(PrefixFinding::Valid | PrefixFinding::Invalid(_))) => None,
        (Workload::ListAppend, Some(PrefixFinding::Unknown(why))) => Some(why.clone()),
        (Workload::ListAppend, None) => Some("prefix consistency was not checked".into()),
        (Workload::ClosedPredicate, _) => Some(PREDICATES_UNKNOWN.into()),
    }
}

/// Snapshot isolation with sessions (or stronger), requested for a register
/// history, proved by the exact check's serial replay alone (linear on
/// most valid histories): the strongest such requested level is replayed,
/// and when a serial execution is found it is recorded as proved, which
/// answers every weak level without their check. When the caller wants a
/// serial execution anyway ([`CheckOptions::keep_order`]: a round of
/// `--follow`) and no such level is requested, the replay at serializability
/// with sessions that [`serial_ranks`] would run after the weak check runs
/// first instead, and spares that check when it succeeds.
fn replay_proves_session_si(h: &History, req: &Request, stats: &mut Stats) -> bool {
    let Some(exact) = req.opts.exact.as_ref().filter(|e| e.serial_first) else { return false };
    let strongest = req
        .models
        .iter()
        .filter_map(|m| si_check::Level::from_model(m))
        .filter(|l| l.implies(SESSION_SI))
        .max_by_key(|l| l.strength());
    let ordered = req.opts.keep_order.then_some(SESSION_SERIALIZABLE);
    let Some(level) = strongest.or(ordered) else { return false };
    let replayed = match req.opts.keep_order {
        true => si_check::serial_order_by_replay(h, level, exact).map(|found| {
            found.map(|(out, order)| {
                stats.serial_order = order;
                out
            })
        }),
        false => si_check::proved_by_replay(h, level, exact),
    };
    match replayed {
        Ok(Some(out)) => {
            stats.exact.push((level.model().to_string(), out.stats));
            stats.exact_valid.push(level);
            true
        }
        _ => false,
    }
}

/// Whether inference found a read every Biswas–Enea level may prohibit (an
/// aborted, intermediate, future or garbage read, an internal
/// inconsistency): the serial replay decides cycles only, so it cannot
/// answer the weak levels for such a history; their own check does.
fn reads_break_weak_levels(anomalies: &Anomalies) -> bool {
    let prohibited = weak::elle::prohibited(weak::Level::ReadCommitted);
    anomalies.keys().any(|k| prohibited.contains(&k.as_str()))
}

/// Snapshot isolation with sessions: implies every Biswas–Enea weak level.
const SESSION_SI: si_check::Level =
    si_check::Level { semantics: si_check::Semantics::SnapshotIsolation, order: si_check::OrderKind::Session };

/// Serializability with sessions: the level of the serial executions
/// [`serial_ranks`] looks for.
const SESSION_SERIALIZABLE: si_check::Level =
    si_check::Level { semantics: si_check::Semantics::Serializable, order: si_check::OrderKind::Session };

/// Whether Elle's inference alone proves snapshot isolation with sessions
/// (which implies every Biswas–Enea weak level, see [`crate::levels`]): it
/// searched for everything that level prohibits and found none of it, with
/// nothing inconclusive. Used on list-append histories, whose reads reveal
/// every version order, to spare the weak check levels that follow anyway.
fn elle_proves_session_si(anomalies: &Anomalies, models: &[String], asked: &[String]) -> bool {
    let searched = prohibited_by(models, asked);
    let needed = lattice::anomalies_prohibited_by(&["strong-session-snapshot-isolation"]);
    let inconclusive = UNKNOWN_ANOMALY_TYPES.iter().any(|t| anomalies.contains_key(*t));
    let found: Vec<&str> = anomalies.keys().map(String::as_str).collect();
    let ruled_out = lattice::anomalies_to_impossible_models(&lattice::boundary_names(&found));
    let canonical = lattice::canonical_model_name("strong-session-snapshot-isolation").unwrap_or("");
    !inconclusive && needed.is_subset(&searched) && !ruled_out.contains(canonical)
}

/// Whether the weak or exact check proved model `m`.
fn proved(stats: &Stats, m: &str) -> bool {
    let weak = weak::Level::from_model(m).is_some_and(|l| {
        stats.weak.as_ref().is_some_and(|r| r.proved && l <= r.level)
            || stats.exact_valid.iter().any(|v| v.implies(SESSION_SI))
    });
    let lists = m == "prefix" && stats.prefix == Some(crate::outcome::PrefixFinding::Valid);
    weak || lists || si_check::Level::from_model(m).is_some_and(|l| stats.exact_valid.iter().any(|v| v.implies(l)))
}

/// Each strongly connected component with the edges between its vertices.
fn scc_edges(graph: &Graph, sccs: Vec<Vec<OpId>>) -> Vec<SccEdges> {
    sccs.into_iter()
        .map(|vertices| {
            let mut edges = Vec::new();
            for &a in &vertices {
                let (ts, rs) = graph.out(a);
                for (&b, &r) in ts.iter().zip(rs) {
                    if vertices.binary_search(&b).is_ok() {
                        edges.push((a, b, r));
                    }
                }
            }
            SccEdges { vertices, edges }
        })
        .collect()
}

/// An outcome for a history the workload's rules cannot analyse.
fn cannot_run(workload: Workload, e: InferError, stats: Stats) -> Outcome {
    cannot_run_outcome(workload, e.to_string(), stats)
}

/// An outcome for a history the workload's rules cannot analyse, with the
/// inference's message (a distributed run gets it from a key's owner).
pub fn cannot_run_outcome(workload: Workload, error: String, stats: Stats) -> Outcome {
    Outcome {
        workload,
        valid: Validity::Unknown,
        anomaly_types: Vec::new(),
        anomalies: Anomalies::new(),
        not: BTreeSet::new(),
        also_not: BTreeSet::new(),
        error: Some(error),
        sccs: Vec::new(),
        order: Vec::new(),
        order_open: Vec::new(),
        order_serial: false,
        found_types: Vec::new(),
        checked: BTreeSet::new(),
        stats,
        levels: Vec::new(),
        ladder: false,
    }
}

/// Elle's `result-map`: select reportable anomalies, drop redundant
/// existence proofs, decide the verdict, and compute the model boundary from
/// *all* anomalies found.
pub fn result_map(
    workload: Workload,
    anomalies: Anomalies,
    prohibited: &BTreeSet<String>,
    reportable: &BTreeSet<String>,
    stats: Stats,
) -> Outcome {
    let all_types: Vec<&str> = anomalies.keys().map(String::as_str).collect();
    let found_types: Vec<String> = anomalies.keys().cloned().collect();
    let (not, also_not) = lattice::friendly_boundary(&boundary_names(&all_types));
    let bad = anomalies.keys().any(|k| prohibited.contains(k));
    let mut shown: Anomalies = anomalies.into_iter().filter(|(k, _)| reportable.contains(k)).collect();
    // Existence proofs are redundant once other anomalies rule their model out.
    let others: Vec<&str> = shown.keys().filter(|k| !k.ends_with("-cycle-exists")).map(String::as_str).collect();
    let ruled_out = lattice::anomalies_to_impossible_models(&boundary_names(&others));
    shown.retain(|k, _| match k.strip_suffix("-cycle-exists") {
        Some(model) => !ruled_out.contains(model),
        None => true,
    });
    // Nothing reportable: valid, and no boundary to report.
    let (valid, not, also_not) = match (shown.is_empty(), bad) {
        (true, _) => (Validity::Valid, BTreeSet::new(), BTreeSet::new()),
        (false, true) => (Validity::Invalid, not, also_not),
        (false, false) => (Validity::Unknown, not, also_not),
    };
    Outcome {
        workload,
        valid,
        anomaly_types: shown.keys().cloned().collect(),
        anomalies: shown,
        not,
        also_not,
        error: None,
        sccs: Vec::new(),
        order: Vec::new(),
        order_open: Vec::new(),
        order_serial: false,
        found_types,
        checked: prohibited.clone(),
        stats,
        levels: Vec::new(),
        ladder: false,
    }
}

/// Which order edges a request needs: `(realtime, process)` as Elle adds
/// them (realtime subsumes process; see `order_edges`), for a history that
/// has invocations. A distributed run (`crate::dist`) derives them itself.
pub fn order_needs(opts: &CheckOptions) -> Result<(bool, bool), CheckError> {
    let models = resolve_models(&opts.models)?;
    let asked = resolve_anomalies(&opts.anomalies)?;
    let mut reportable = prohibited_by(&models, &asked);
    reportable.extend(UNKNOWN_ANOMALY_TYPES.iter().map(|s| s.to_string()));
    let wants =
        |suffix: &str| lattice::CYCLE_SEARCH_ORDER.iter().any(|t| t.ends_with(suffix) && reportable.contains(*t));
    Ok((wants("-realtime"), wants("-process") || wants("-realtime")))
}

/// Why a level is not decided in a distributed run.
fn not_distributed(decider: crate::levels::Decider) -> String {
    let what = match decider {
        crate::levels::Decider::Weak => "the Biswas–Enea check of the weak levels",
        crate::levels::Decider::Prefix => "the prefix-consistency check",
        _ => "the exact check of registers (polygraph and solver)",
    };
    format!("not decided in a distributed run: {what} runs on one process (check without --processes)")
}

/// The outcome of a distributed run (`crate::dist`) from what its
/// inference and cycle search found (`anomalies`, in the whole history's
/// ids): Elle's result map as [`check`] makes it for the same request,
/// except for what only a single process decides. A requested level that
/// the weak check, the prefix check or the exact check of registers would
/// decide (and Elle's inference does not prove) is `unknown`, with the
/// reason, never a silent `valid`; the ladder's rows of such levels say
/// why they are not decided.
pub fn distributed_outcome(
    workload: Workload,
    mut anomalies: Anomalies,
    opts: &CheckOptions,
    stats: Stats,
) -> Result<Outcome, CheckError> {
    let models = resolve_models(&opts.models)?;
    let asked = resolve_anomalies(&opts.anomalies)?;
    if stats.edges == 0 {
        anomalies.insert("empty-transaction-graph".into(), vec![Case::EmptyTransactionGraph]);
    }
    anomalies.retain(|_, v| !v.is_empty());
    let proved_by_elle = workload == Workload::ListAppend && elle_proves_session_si(&anomalies, &models, &asked);
    let registers = workload == Workload::RwRegister;
    for m in &models {
        let Some(def) = crate::levels::LEVELS.iter().find(|l| l.model == m.as_str()) else { continue };
        let decider = def.decider(registers);
        let single_only = match decider {
            crate::levels::Decider::Elle => false,
            crate::levels::Decider::Exact => registers && opts.exact.is_some(),
            _ => true,
        };
        if single_only && !proved_by_elle {
            let case = Case::ExactCheckUnknown { model: m.clone(), detail: not_distributed(decider) };
            anomalies.entry("exact-check-unknown".into()).or_default().push(case);
        }
    }
    let prohibited = prohibited_by(&models, &asked);
    let mut reportable = prohibited.clone();
    reportable.extend(UNKNOWN_ANOMALY_TYPES.iter().map(|s| s.to_string()));
    let mut outcome = result_map(workload, anomalies, &prohibited, &reportable, stats);
    outcome.levels = ladder::rows(&outcome)
        .into_iter()
        .map(|mut row| {
            let decider = row.level.decider(registers);
            let elle = decider == crate::levels::Decider::Elle
                || (decider == crate::levels::Decider::Exact && !(registers && opts.exact.is_some()));
            if !elle && matches!(row.status, ModelStatus::Unknown | ModelStatus::NotChecked) {
                row.reason = not_distributed(decider);
            }
            row
        })
        .collect();
    outcome.ladder = opts.ladder || crate::levels::ladder_requested(&opts.models);
    Ok(outcome)
}
