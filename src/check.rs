//! The whole analysis: history in, Elle-compatible verdict out.
//!
//! [`check`] runs inference for the workload, adds the process or realtime
//! order when a requested model needs it (as Elle's `additional-graphs` does),
//! builds the dependency graph, searches cycles, and assembles Elle's result
//! map: which anomalies are *prohibited* (by the requested models and
//! anomalies), which are *reportable*, the verdict, and the `:not` /
//! `:also-not` boundary of models the anomalies rule out.

use crate::anomaly::{Anomalies, Case, Workload};
use crate::cli::model_names;
use crate::cycles::{self, lattice, CycleOptions};
use crate::graph::Graph;
use crate::history::{History, MopFn, MopValue, OpId};
use crate::infer::{self, order, InferError};
use crate::si_check;
use crate::weak;
use crate::weak::front::Sessions;
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
    /// Decide serializability and snapshot isolation levels of register
    /// histories exactly (polygraph + SAT) when a requested model is one of
    /// them; `None` keeps Elle's inference-only analysis.
    pub exact: Option<si_check::ExactOptions>,
    /// Options of the exact weak-level checks (`read-committed-be`,
    /// `read-atomic`, `causal-cerone`): session order and limits.
    pub weak: weak::Options,
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
            exact: Some(si_check::ExactOptions::default()),
            weak: weak::Options::default(),
        }
    }
}

/// The verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// No reportable anomaly.
    Valid,
    /// A prohibited anomaly was found.
    Invalid,
    /// Only inconclusive findings (timeouts, an empty graph) or the analysis
    /// could not run.
    Unknown,
}

impl Validity {
    /// Elle's spelling: `true`, `false`, `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            Validity::Valid => "true",
            Validity::Invalid => "false",
            Validity::Unknown => "unknown",
        }
    }
}

/// Sizes and stage times, for `--stats`-style reporting and benchmarks.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Client operations analysed.
    pub ops: usize,
    /// Edges in the dependency graph.
    pub edges: usize,
    /// Time spent inferring dependencies and non-cycle anomalies.
    pub infer: Duration,
    /// Time spent on order edges and building the graph.
    pub graph: Duration,
    /// Time spent on SCCs and cycle search.
    pub cycles: Duration,
    /// Each exact check run: the model and its sizes and times.
    pub exact: Vec<(String, si_check::ExactStats)>,
    /// Levels the exact check proved to hold.
    pub exact_valid: Vec<si_check::Level>,
    /// Levels answered invalid without an exact search, because the weak
    /// check's violation implies they fail (see [`weak::strong`]).
    pub exact_implied: Vec<String>,
    /// Time spent computing causal consistency's forced write orders for
    /// the exact check (see [`weak::strong`]): for its known edges
    /// (`cc_orders`) and, under session order, for the serial replay.
    pub known_orders: Duration,
    /// What the exact weak-level check found, when it ran.
    pub weak: Option<weak::elle::WeakRun>,
}

/// The result of a check: Elle's result map plus context.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Workload analysed.
    pub workload: Workload,
    /// Verdict.
    pub valid: Validity,
    /// Reportable anomaly types, sorted as Elle sorts keywords.
    pub anomaly_types: Vec<String>,
    /// Reportable anomalies by type.
    pub anomalies: Anomalies,
    /// Weakest models ruled out (friendly names).
    pub not: BTreeSet<String>,
    /// Every other model ruled out.
    pub also_not: BTreeSet<String>,
    /// Why the analysis could not run, when it could not.
    pub error: Option<String>,
    /// The dependency graph's strongly connected components with their
    /// edges, when [`CheckOptions::keep_sccs`] asked for them.
    pub sccs: Vec<SccEdges>,
    /// Every anomaly type found, reportable or not (the boundary's input).
    pub found_types: Vec<String>,
    /// The anomalies the requested models and anomalies prohibit: a model
    /// whose prohibited anomalies all lie in this set was fully checked.
    pub checked: BTreeSet<String>,
    /// Sizes and timings.
    pub stats: Stats,
}

/// One strongly connected component of the dependency graph.
#[derive(Clone, Debug, Default)]
pub struct SccEdges {
    /// Its transactions.
    pub vertices: Vec<OpId>,
    /// Every edge between them, with its relationships.
    pub edges: Vec<(OpId, OpId, crate::anomaly::Rels)>,
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
}

/// Anomalies isolde reports beyond Elle's vocabulary. A read of a value no one
/// wrote breaks every consistency model, so every model prohibits them; with
/// no model they are reported only when asked for by name.
pub const PROHIBITED_BY_EVERY_MODEL: &[&str] = &["garbage-read"];

/// Anomalies that make a verdict `unknown` rather than `false`.
pub const UNKNOWN_ANOMALY_TYPES: &[&str] = &["cycle-search-timeout", "empty-transaction-graph", "exact-check-unknown"];

/// Resolves the workload for a history. `Auto` decides from what the
/// micro-ops say, strongest evidence first: an `:append` means list-append;
/// otherwise a `:w` means registers; otherwise reads decide, a list read
/// (`[:r :x [1 2]]`) meaning list-append and a scalar read (`[:r :x 2]`)
/// meaning registers; a history from a register-only format
/// ([`History::registers_only`]) is registers. Only a history whose reads
/// all saw `nil` says nothing, and is read as list-append (both workloads
/// give it the same verdict). So a read-only history gets the same
/// workload, and the same verdict, whatever format it came in.
pub fn resolve_workload(h: &History, choice: WorkloadChoice) -> Workload {
    match choice {
        WorkloadChoice::Fixed(w) => w,
        WorkloadChoice::Auto => {
            let (mut write, mut append, mut list_read, mut scalar_read) = (false, false, false, false);
            for m in &h.mops {
                match (m.f, m.value) {
                    (MopFn::Write, _) => write = true,
                    (MopFn::Append, _) => append = true,
                    (MopFn::Read, MopValue::List { .. }) => list_read = true,
                    (MopFn::Read, MopValue::Int(_)) => scalar_read = true,
                    (MopFn::Read, MopValue::Nil) => {}
                }
            }
            if append {
                Workload::ListAppend
            } else if write || h.registers_only {
                Workload::RwRegister
            } else if list_read {
                Workload::ListAppend
            } else if scalar_read {
                Workload::RwRegister
            } else {
                Workload::ListAppend
            }
        }
    }
}

/// Validates model names and returns the list to check (default applied),
/// each in Elle's spelling; `all` stands for every level of the ladder
/// ([`weak::ladder::ALL_MODELS`]). Names match case-insensitively (`Serializable`,
/// `PL-SI`); an empty name or one Elle does not know is an error, never
/// ignored, so a typo cannot turn a check into a vacuous `valid`.
pub fn resolve_models(models: &Option<Vec<String>>) -> Result<Vec<String>, CheckError> {
    let mut ms = models.clone().unwrap_or_else(|| vec!["strict-serializable".to_string()]);
    if weak::ladder::requested(models) {
        ms.retain(|m| !m.trim().eq_ignore_ascii_case(weak::ladder::ALL));
        ms.extend(weak::ladder::ALL_MODELS.iter().map(|m| m.to_string()));
    }
    let mut known = lattice::all_model_names();
    known.extend(weak::elle::ISOLDE_ONLY_MODELS);
    known.push(weak::ladder::ALL);
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
    let ms: Vec<&str> =
        models.iter().map(String::as_str).filter(|m| !weak::elle::ISOLDE_ONLY_MODELS.contains(m)).collect();
    let an: Vec<&str> = anomalies.iter().map(String::as_str).collect();
    let mut p = lattice::all_anomalies_implying(&an);
    p.extend(lattice::anomalies_prohibited_by(&ms));
    if let Some(level) = weak::elle::requested(&models) {
        p.extend(weak::elle::prohibited(level).into_iter().map(str::to_string));
    }
    if !models.is_empty() {
        p.extend(PROHIBITED_BY_EVERY_MODEL.iter().map(|s| s.to_string()));
    }
    Ok(p)
}

/// Whether `internal` is prohibited by a requested model or anomaly other
/// than the weak levels' own lists.
fn internal_beyond_weak(opts: &CheckOptions) -> Result<bool, CheckError> {
    let models = resolve_models(&opts.models)?;
    let anomalies = resolve_anomalies(&opts.anomalies)?;
    let ms: Vec<&str> = models
        .iter()
        .map(String::as_str)
        .filter(|m| weak::Level::from_model(m).is_none() && !weak::elle::ISOLDE_ONLY_MODELS.contains(m))
        .collect();
    let an: Vec<&str> = anomalies.iter().map(String::as_str).collect();
    let mut p = lattice::all_anomalies_implying(&an);
    p.extend(lattice::anomalies_prohibited_by(&ms));
    Ok(p.contains("internal"))
}

/// Runs the whole analysis.
pub fn check(h: &History, opts: &CheckOptions) -> Result<Outcome, CheckError> {
    let workload = resolve_workload(h, opts.workload);
    let prohibited = prohibited_anomalies(opts)?;
    let mut reportable = prohibited.clone();
    reportable.extend(UNKNOWN_ANOMALY_TYPES.iter().map(|s| s.to_string()));
    let mut stats = Stats { ops: h.ops.len(), ..Stats::default() };

    let t0 = Instant::now();
    let inferred = match workload {
        Workload::ListAppend => infer::list_append::infer(h),
        Workload::RwRegister => infer::rw_register::infer(h, opts.rw),
    };
    let inf = match inferred {
        Ok(inf) => inf,
        Err(e) => return Ok(cannot_run(workload, e, stats)),
    };
    stats.infer = t0.elapsed();

    // Order edges only when a reportable anomaly needs them (Elle's rule:
    // realtime subsumes process).
    let t1 = Instant::now();
    let wants =
        |suffix: &str| lattice::CYCLE_SEARCH_ORDER.iter().any(|t| t.ends_with(suffix) && reportable.contains(*t));
    // A history of completions only (dbcop, Cobra, PolySI text) has no
    // realtime information, but its sessions are still ordered.
    let has_invocations = h.ops.iter().any(|o| o.is_invoke());
    let order_edges = if wants("-realtime") && has_invocations {
        order::realtime_edges(h)
    } else if wants("-process") || wants("-realtime") {
        order::process_edges(h)
    } else {
        Vec::new()
    };
    let mut lists: Vec<&[crate::graph::Edge]> = inf.edges.iter().map(Vec::as_slice).collect();
    lists.push(&order_edges);
    let graph = Graph::from_edge_lists(h.ops.len(), &lists);
    drop(lists);
    drop(order_edges);
    stats.edges = graph.edge_count();
    stats.graph = t1.elapsed();

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
        workload,
        |a, b, rels| explainer.explain(h, a, b, rels).or_else(|| order::explain(h, a, b, rels)),
        CycleOptions { timeout: opts.cycle_search_timeout },
    );
    for (k, v) in cycles {
        anomalies.entry(k).or_default().extend(v);
    }
    stats.cycles = t2.elapsed();
    let models = resolve_models(&opts.models)?;
    // The weak check runs before the exact one: a violation it finds
    // answers the session levels without search (see `weak::strong`).
    let mut weak_run = None;
    if let Some(level) = weak::elle::requested(&models) {
        if level == weak::Level::ReadCommitted && !internal_beyond_weak(opts)? {
            weak::elle::refile_non_repeatable_reads(h, &mut anomalies);
        }
        weak_run = Some(weak::elle::run(h, workload, level, &opts.weak, &mut anomalies));
    }
    if let (Workload::RwRegister, Some(exact)) = (workload, &opts.exact) {
        let implied = weak_run.as_ref().and_then(|r| r.violated);
        run_exact(h, &models, exact, &opts.weak, implied, &mut anomalies, &mut stats);
        // Elle calls an edgeless graph inconclusive; a level the exact check
        // proved is not.
        let proved =
            |m: &String| si_check::Level::from_model(m).is_some_and(|l| stats.exact_valid.iter().any(|v| v.implies(l)));
        if !models.is_empty() && models.iter().all(proved) {
            anomalies.remove("empty-transaction-graph");
        }
    }
    let mut violated = None;
    if let Some(weak_run) = weak_run {
        let level = weak_run.level;
        violated = weak_run.violated;
        let proved_weak = weak_run.proved;
        let session_si =
            si_check::Level { semantics: si_check::Semantics::SnapshotIsolation, order: si_check::OrderKind::Session };
        let mut si_proved = stats.exact_valid.iter().any(|v| v.implies(session_si));
        // Prefix consistency holds when session snapshot isolation does;
        // for registers the exact check can show it.
        if models.iter().any(|m| m == "prefix") && weak_run.proved && !si_proved {
            if let (Workload::RwRegister, Some(exact)) = (workload, &opts.exact) {
                si_proved = si_check::check_level_knowing(h, session_si, exact, &[])
                    .is_ok_and(|o| matches!(o.verdict, si_check::Verdict::Valid));
            }
        }
        if let Some(detail) = weak::elle::prefix_undecided(&models, &weak_run, si_proved) {
            let case = Case::ExactCheckUnknown { model: "prefix".into(), detail };
            anomalies.entry("exact-check-unknown".into()).or_default().push(case);
        }
        stats.weak = Some(weak_run);
        let proved = |m: &String| {
            weak::Level::from_model(m).is_some_and(|l| l <= level && proved_weak)
                || si_check::Level::from_model(m).is_some_and(|l| stats.exact_valid.iter().any(|v| v.implies(l)))
        };
        if !models.is_empty() && models.iter().all(proved) {
            anomalies.remove("empty-transaction-graph");
        }
    }
    let mut outcome = result_map(workload, anomalies, &prohibited, &reportable, stats);
    if let Some((level, without_sessions)) = violated {
        if outcome.valid != Validity::Valid {
            weak::elle::extend_boundary(level, without_sessions, &mut outcome.not, &mut outcome.also_not);
        }
    }
    if opts.keep_sccs {
        outcome.sccs = sccs
            .into_iter()
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
            .collect();
    }
    Ok(outcome)
}

/// Runs the exact check for every requested model it decides that the
/// Elle-style findings do not already rule out, and, each time a level is
/// refuted, for the next weaker one, so the report says which of these
/// levels the history does satisfy. Refutations are added under the name
/// of the cycles they show; an undecided level adds `exact-check-unknown`.
///
/// A level that the weak check's violation `implied` (weakest level
/// violated, and whether without sessions) already refutes is not searched
/// (it is listed in [`Stats::exact_implied`]). With
/// [`si_check::ExactOptions::cc_orders`], every search starts from causal
/// consistency's forced write orders, computed with the level's session
/// semantics under the limits of `weak` (see [`weak::strong`]).
fn run_exact(
    h: &History,
    models: &[String],
    opts: &si_check::ExactOptions,
    weak: &weak::Options,
    implied: Option<(weak::Level, bool)>,
    anomalies: &mut Anomalies,
    stats: &mut Stats,
) {
    let mut todo: Vec<si_check::Level> = models.iter().filter_map(|m| si_check::Level::from_model(m)).collect();
    todo.reverse();
    let mut done: Vec<si_check::Level> = Vec::new();
    let mut refuted: Vec<si_check::Level> = Vec::new();
    // Forced write orders with and without sessions, computed when first needed.
    let mut known: [Option<Option<si_check::KnownOrders>>; 2] = [None, None];
    while let Some(level) = todo.pop() {
        if done.contains(&level) || stats.exact_valid.iter().any(|v| v.implies(level)) {
            continue;
        }
        done.push(level);
        let found: Vec<&str> = anomalies.keys().map(String::as_str).collect();
        let ruled_out = lattice::anomalies_to_impossible_models(&boundary_names(&found));
        let canonical = lattice::canonical_model_name(level.model()).unwrap_or("");
        if ruled_out.contains(canonical) {
            // Already refuted by inferred anomalies: try the weaker levels.
            refuted.push(level);
            todo.extend(level.weaker().into_iter().rev());
            continue;
        }
        if implied.is_some_and(|(l, plain)| weak::strong::implied_refuted(l, plain, level)) {
            // Refuted by the weak check's violation, without search.
            stats.exact_implied.push(level.model().to_string());
            refuted.push(level);
            todo.extend(level.weaker().into_iter().rev());
            continue;
        }
        let mut level_opts = opts.clone();
        if opts.serial_first && has_sessions(h) {
            // The serial replay keeps the orders forced under session
            // order when it replays under session or realtime order.
            let t = Instant::now();
            level_opts.session_orders = known[0]
                .get_or_insert_with(|| {
                    let limits = weak::Options { sessions: Sessions::Process, ..*weak };
                    weak::strong::known_orders(h, Sessions::Process, &limits)
                })
                .clone();
            stats.known_orders += t.elapsed();
        }
        if opts.cc_orders {
            let sessions = if level.order == si_check::OrderKind::Session { Sessions::Process } else { Sessions::None };
            let slot = &mut known[usize::from(sessions == Sessions::None)];
            let t = Instant::now();
            level_opts.known = slot
                .get_or_insert_with(|| {
                    // Without sessions every transaction is its own session,
                    // so the clocks get the weak recheck's small budget.
                    let budget = match sessions {
                        Sessions::Process => weak.max_clock_entries,
                        Sessions::None => weak.max_clock_entries.min((1 << 22).max(16 * h.ops.len())),
                    };
                    let limits = weak::Options { sessions, max_clock_entries: budget, ..*weak };
                    weak::strong::known_orders(h, sessions, &limits)
                })
                .clone();
            stats.known_orders += t.elapsed();
        }
        let out = match si_check::check_level_knowing(h, level, &level_opts, &refuted) {
            Ok(o) => o,
            Err(e) => {
                let case = Case::ExactCheckUnknown { model: level.model().to_string(), detail: e.to_string() };
                anomalies.entry("exact-check-unknown".into()).or_default().push(case);
                continue;
            }
        };
        stats.exact.push((level.model().to_string(), out.stats));
        match out.verdict {
            si_check::Verdict::Valid => stats.exact_valid.push(level),
            si_check::Verdict::Invalid(r) => {
                refuted.push(level);
                let name = si_check::witness::refutation_name(&r);
                anomalies.entry(name).or_default().push(Case::Refuted(r));
                todo.extend(level.weaker().into_iter().rev());
            }
            si_check::Verdict::Unknown(detail) => {
                let case = Case::ExactCheckUnknown { model: level.model().to_string(), detail };
                anomalies.entry("exact-check-unknown".into()).or_default().push(case);
            }
        }
    }
}

/// Whether some process completed more than one operation `:ok` (so
/// session order relates two of them).
fn has_sessions(h: &History) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    h.ops.iter().filter(|o| o.is_ok()).any(|o| !seen.insert(o.process))
}

/// An outcome for a history the workload's rules cannot analyse.
fn cannot_run(workload: Workload, e: InferError, stats: Stats) -> Outcome {
    Outcome {
        workload,
        valid: Validity::Unknown,
        anomaly_types: Vec::new(),
        anomalies: Anomalies::new(),
        not: BTreeSet::new(),
        also_not: BTreeSet::new(),
        error: Some(e.to_string()),
        sccs: Vec::new(),
        found_types: Vec::new(),
        checked: BTreeSet::new(),
        stats,
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
    if shown.is_empty() {
        return Outcome {
            workload,
            valid: Validity::Valid,
            anomaly_types: Vec::new(),
            anomalies: shown,
            not: BTreeSet::new(),
            also_not: BTreeSet::new(),
            error: None,
            sccs: Vec::new(),
            found_types,
            checked: prohibited.clone(),
            stats,
        };
    }
    Outcome {
        workload,
        valid: if bad { Validity::Invalid } else { Validity::Unknown },
        anomaly_types: shown.keys().cloned().collect(),
        anomalies: shown,
        not,
        also_not,
        error: None,
        sccs: Vec::new(),
        found_types,
        checked: prohibited.clone(),
        stats,
    }
}

/// Maps isolde-only anomaly names onto the Elle anomaly whose model boundary
/// they share (a garbage read rules out every model, like a write cycle).
pub fn boundary_names<'a>(types: &[&'a str]) -> Vec<&'a str> {
    types.iter().map(|&t| if t == "garbage-read" { "G0" } else { t }).collect()
}
