//! Inference: from a history to a dependency graph and non-cycle anomalies.
//!
//! One file per workload ([`list_append`]; registers follow the same shape),
//! plus [`order`] for the workload-independent process and realtime orders.
//! Each workload returns an [`Inference`]: its data-dependency edges, the
//! anomalies it can see without cycles, and an [`Explain`]er that later
//! justifies any edge of a cycle in Elle's words.

pub mod list_append;
pub mod order;
pub mod rw_register;

use crate::anomaly::{Anomalies, Rels, Step, Workload};
use crate::graph::Edge;
use crate::history::{History, OpId};
use thiserror::Error;

/// Justifies an edge `a -> b`: returns the data Elle would print for the
/// first relationship in `rels` that the workload can explain.
pub trait Explain: Send + Sync {
    /// Explains why `a` precedes `b` through one of `rels`.
    fn explain(&self, h: &History, a: OpId, b: OpId, rels: Rels) -> Option<Step>;
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
    /// Two transactions appended the same element to a key.
    #[error("value {value} appended to key {key} multiple times (lines {first_line} and {second_line}); list-append needs unique appends")]
    DuplicateAppend {
        /// The key, as written in the history.
        key: String,
        /// The element, as written in the history.
        value: String,
        /// Line of the first append.
        first_line: u32,
        /// Line of the second append.
        second_line: u32,
    },
    /// Two committed transactions wrote the same value to a register, so a read
    /// of it cannot name its writer.
    #[error(
        "key {key} had value {value} written by more than one op (lines {lines:?}); rw-register needs unique writes"
    )]
    DuplicateWrite {
        /// The key, as written in the history.
        key: String,
        /// The value.
        value: String,
        /// Lines of the writers.
        lines: Vec<u32>,
    },
    /// A micro-op the workload does not understand.
    #[error("history contained operations other than the {workload} workload's (a :{mop} micro-op at line {line})")]
    UnexpectedMop {
        /// The workload.
        workload: &'static str,
        /// The micro-op function.
        mop: &'static str,
        /// Line of the op.
        line: u32,
    },
}
