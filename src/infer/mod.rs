//! Inference: from a history to a dependency graph and non-cycle anomalies.
//!
//! One file per workload ([`list_append`]; registers follow the same shape),
//! plus [`order`] for the workload-independent process and realtime orders.
//! Each workload returns an [`Inference`]: its data-dependency edges, the
//! anomalies it can see without cycles, and an [`Explain`]er that later
//! justifies any edge of a cycle in Elle's words.

pub mod closed_predicate;
pub mod initial_value;
pub mod list_append;
pub mod nearest;
pub mod order;
pub mod rw_register;
mod unique_appends;

use crate::anomaly::{Anomalies, Rels, Step, Workload};
use crate::graph::Edge;
use crate::history::{History, OpId};
use thiserror::Error;

/// The two operations of the first duplicate append of a list-append
/// history (see [`unique_appends`]), in the order a whole-history check
/// compares them: a distributed run picks, among its key owners' errors,
/// the one a single run would report.
pub fn first_duplicate_ops(h: &History) -> Option<(OpId, OpId)> {
    unique_appends::first_duplicate(h).map(|d| (d.0, d.1))
}

/// Refuses closed-predicate micro-ops (`:insert`, `:delete`, `:rp`) and
/// `:init` maps in a history checked as `workload` (list-append or
/// rw-register), which has no rules for them.
pub fn refuse_predicate_ops(h: &History, workload: &'static str) -> Result<(), InferError> {
    use crate::history::{field, MopFn};
    for op in &h.ops {
        let foreign = h
            .stored_mops_of(op)
            .iter()
            .find(|m| matches!(m.f, MopFn::Insert | MopFn::Delete | MopFn::PredRead | MopFn::PredEntry));
        if let Some(m) = foreign {
            let mop = if m.f == MopFn::PredEntry { "rp" } else { m.f.name() };
            return Err(InferError::UnexpectedMop { workload, mop, line: op.line });
        }
        if op.fields & field::VALUE_MAP != 0 {
            return Err(InferError::UnexpectedMop { workload, mop: "init", line: op.line });
        }
    }
    Ok(())
}

/// Justifies an edge `a -> b`: returns the data Elle would print for the
/// first relationship in `rels` that the workload can explain.
pub trait Explain: Send + Sync {
    /// Explains why `a` precedes `b` through one of `rels`.
    fn explain(&self, h: &History, a: OpId, b: OpId, rels: Rels) -> Option<Step>;

    /// Heap bytes the explainer keeps (for `--stats`; 0 where not counted).
    fn heap_bytes(&self) -> u64 {
        0
    }
}

/// What a workload's inference produced.
pub struct Inference {
    /// The workload whose rules were applied.
    pub workload: Workload,
    /// ww / wr / rw edges between completion ops, as several lists (built in
    /// parallel; the graph builder takes them without concatenating).
    pub edges: Vec<Vec<Edge>>,
    /// Anomalies found without cycle search.
    pub anomalies: Anomalies,
    /// Justifies data edges for cycle explanations.
    pub explainer: Box<dyn Explain>,
}

/// Histories that break a workload's ground rules, so no sound inference is
/// possible (Elle throws in these cases too).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum InferError {
    /// The same value was written (appended) to a key by more than one
    /// operation where the workload needs every value to name one writer
    /// (list-append, as in Elle: a list read must be traceable element by
    /// element). Register histories accept repeated values (a read of one
    /// then has several candidate writers), so only list-append raises it.
    #[error(
        "key {key}: value {value} was {verb} by more than one operation ({places}); {workload} needs unique values",
        verb = if *workload == "list-append" { "appended" } else { "written" },
        places = places.join(", ")
    )]
    DuplicateValue {
        /// The workload whose rules need unique values.
        workload: &'static str,
        /// The key, as written in the history.
        key: String,
        /// The value, as written in the history.
        value: String,
        /// Where the writers are (e.g. `line 3`, `index 7`).
        places: Vec<String>,
    },
    /// A closed-predicate history that breaks the workload's rules (a key
    /// written by two transactions, a second `:init`, a bad predicate).
    #[error("closed-predicate: line {line}: {message}")]
    ClosedPredicate {
        /// Line of the op.
        line: u32,
        /// What is wrong.
        message: String,
    },
    /// A micro-op the workload does not understand.
    #[error("history contained operations other than the {workload} workload's (a :{mop} {what} at line {line})", what = if *mop == "init" { "op with a map :value" } else { "micro-op" })]
    UnexpectedMop {
        /// The workload.
        workload: &'static str,
        /// The micro-op function.
        mop: &'static str,
        /// Line of the op.
        line: u32,
    },
}
