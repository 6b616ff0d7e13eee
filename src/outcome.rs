//! What a check found, as plain data below every printer: Elle's result map
//! (verdict, anomalies, the `:not` / `:also-not` boundary), the verdict of
//! every level of the ladder ([`LevelRow`], one per level of
//! [`crate::levels::LEVELS`]) with the checker that decided it, and the
//! sizes and times of each stage.
//!
//! [`crate::check`] fills it in; [`crate::reports`] reads it and imports
//! nothing above this module, so printers never reach into the checkers.

use crate::anomaly::{Anomalies, Case, Workload};
use crate::history::OpId;
use crate::levels::{Decider, LevelDef};
use crate::si_check;
use crate::weak;
use std::collections::BTreeSet;
use std::time::Duration;

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
    /// A distributed run's processes and workers (`None`: one process).
    pub distributed: Option<(usize, usize)>,
    pub ops: usize,
    /// Operations without an integer `:process`, ignored as Elle ignores
    /// them (see [`crate::history::History::nonclient_ops`]).
    pub nonclient_ops: usize,
    /// Whether the history records invocations, so that real-time order
    /// is known (a history of completions only, as dbcop, Cobra and PolySI
    /// write, says nothing of it).
    pub realtime: bool,
    /// Operations the database's commit order places (rw-register
    /// histories with a transaction order; 0 when none was given): their
    /// write orders are known facts to inference and the exact check.
    pub transaction_order: usize,
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
    /// The serial execution the exact check's replay found (completion
    /// ops, in order), kept when [`crate::check::CheckOptions::keep_order`]
    /// asks for it; empty otherwise.
    pub serial_order: Vec<crate::history::OpId>,
    /// Levels the exact check refuted, with the anomaly type their
    /// refutation is filed under.
    pub exact_refuted: Vec<(si_check::Level, String)>,
    /// Levels answered invalid without an exact search, because the weak
    /// check's violation implies they fail (see [`weak::strong`]).
    pub exact_implied: Vec<String>,
    /// Time spent computing causal consistency's forced write orders for
    /// the exact check (see [`weak::strong`]): for its known edges
    /// (`cc_orders`) and, under session order, for the serial replay.
    pub known_orders: Duration,
    /// What the exact weak-level check found, when it ran.
    pub weak: Option<weak::elle::WeakRun>,
    /// What the exact prefix-consistency check of a list-append history
    /// found, when it ran (registers: see [`Stats::exact`]).
    pub prefix: Option<PrefixFinding>,
    /// Time spent deciding the ladder's levels beyond the requested
    /// models (with [`crate::check::CheckOptions::ladder`]).
    pub ladder: Option<Duration>,
    /// Memory after each stage of the shared analysis (infer, graph,
    /// cycles, and the exact check of registers when it ran), in order; see
    /// [`crate::check::mem`].
    pub memory: Vec<StageMemory>,
}

/// Memory when a stage ended: what its kept structures hold, and the
/// process's resident set and high-water mark (bytes; 0 when unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageMemory {
    /// The stage (`parse`, `infer`, `graph`, `cycles`, `exact`).
    pub stage: &'static str,
    /// Heap bytes of the structures the stage produced and kept.
    pub bytes: u64,
    /// Resident set when the stage ended.
    pub rss: u64,
    /// Peak resident set so far when the stage ended.
    pub peak: u64,
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
    /// Per op, the rank of its component in a topological order of the
    /// dependency graph (`a` reaches `b` and not back: `order[a] <
    /// order[b]`), when [`crate::check::CheckOptions::keep_order`] asked for
    /// it; empty otherwise.
    pub order: Vec<u32>,
    /// Per op, when `order` is the commit order of an execution in which
    /// transactions overlap (snapshot isolation): whether a transaction
    /// that comes later began before this one committed, so that no prefix
    /// of the order may end here; empty when every prefix may.
    pub order_open: Vec<bool>,
    /// Whether `order` is a serial execution at a level with sessions (the
    /// replay's or the solver's), not only a commit order in which
    /// transactions overlap (snapshot isolation's, causal consistency's
    /// arbitration order): a collected writer may then be moved within it
    /// (`online::fenced`'s flips).
    pub order_serial: bool,
    /// Every anomaly type found, reportable or not (the boundary's input).
    pub found_types: Vec<String>,
    /// The anomalies the requested models and anomalies prohibit: a model
    /// whose prohibited anomalies all lie in this set was fully checked.
    pub checked: BTreeSet<String>,
    /// Sizes and timings.
    pub stats: Stats,
    /// Every level of the ladder, weakest first, with its verdict.
    pub levels: Vec<LevelRow>,
    /// Whether the ladder's own checkers ran (the default check and
    /// `--model all`), so that every level was decided by what decides it;
    /// the result map then carries the levels.
    pub ladder: bool,
}

/// One strongly connected component of the dependency graph.
#[derive(Clone, Debug, Default)]
pub struct SccEdges {
    /// Its transactions.
    pub vertices: Vec<OpId>,
    /// Every edge between them, with its relationships.
    pub edges: Vec<(OpId, OpId, crate::anomaly::Rels)>,
}

/// The verdict of the prefix-consistency check of a list-append history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrefixFinding {
    /// Prefix consistent.
    Valid,
    /// Refuted by a cycle, filed under this anomaly type.
    Invalid(String),
    /// Not decided, with the reason.
    Unknown(String),
}

/// What a check says of one model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelStatus {
    /// Ruled out by this anomaly.
    Violated(String),
    /// Everything the model prohibits was searched for and none was found.
    Holds,
    /// The analysis could not decide (a timeout, a solver limit, an error,
    /// a history with no client operation).
    Unknown,
    /// The requested check did not look for everything this model
    /// prohibits (e.g. realtime anomalies when checking serializability).
    NotChecked,
}

/// Who decided a level's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecidedBy {
    /// The level's own checker.
    Checker(Decider),
    /// Another level's verdict: a stronger level that holds, or a weaker
    /// one that is violated.
    Implied(&'static str),
    /// Nobody (not checked, or undecided).
    Nobody,
}

impl DecidedBy {
    /// How reports name it: `elle`, `weak`, `prefix`, `exact`,
    /// `implied by MODEL`, or empty.
    pub fn describe(&self) -> String {
        match self {
            DecidedBy::Checker(d) => d.name().to_string(),
            DecidedBy::Implied(m) => format!("implied by {m}"),
            DecidedBy::Nobody => String::new(),
        }
    }
}

/// One level of the ladder ([`crate::levels::LEVELS`]) and what the check
/// says of it.
#[derive(Clone, Debug)]
pub struct LevelRow {
    /// The level.
    pub level: &'static LevelDef,
    /// Its verdict; `Violated` names the anomaly type that breaks it.
    pub status: ModelStatus,
    /// What decided it.
    pub decided_by: DecidedBy,
    /// Why it is unknown or not checked (empty otherwise).
    pub reason: String,
    /// A witness of the violation, for a level violated by its own checker.
    pub witness: Option<Case>,
}

impl Outcome {
    /// The row of the level named `model` (see [`crate::levels::LEVELS`]).
    pub fn level(&self, model: &str) -> Option<&LevelRow> {
        self.levels.iter().find(|r| r.level.model == model)
    }

    /// What the check says of the level named `model`: its row's status,
    /// or `NotChecked` for a name the ladder does not have.
    pub fn status(&self, model: &str) -> ModelStatus {
        self.level(model).map(|r| r.status.clone()).unwrap_or(ModelStatus::NotChecked)
    }
}
