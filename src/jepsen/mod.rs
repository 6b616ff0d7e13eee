//! Jepsen's non-transactional checkers, with Jepsen's semantics and result
//! maps: the rest of what a Jepsen run checks besides Elle's workloads.
//!
//! | model | checker | what is checked |
//! |---|---|---|
//! | `bank` | [`bank`] (elle-cli's `elle-cli.bank`) | every `:ok` `:read` of the accounts sums to the total, shows no negative balance (unless allowed), no unexpected account, no `nil` balance |
//! | `counter` | [`counter`] (`jepsen.checker/counter`) | every read lies between the sum of the adds that must have happened (`:ok` before the read began) and of those that may have (`:ok` or `:info`/pending invoked before it ended) |
//! | `set` | [`set`] (`jepsen.checker/set`) | the final read holds every acknowledged add and nothing never attempted |
//! | `set-full` | [`set_full`] (`jepsen.checker/set-full`) | every element's timeline over all reads: stable, lost, never read; stale reads; duplicates |
//! | `long-fork` | [`long_fork`] (`jepsen.tests.long-fork`) | group reads of single-write keys are totally ordered by what they saw |
//! | `comments` | [`comments`] (elle-cli's, from Jepsen's CockroachDB test) | a read seeing a write sees every write that completed before that write began |
//! | `sequential` | [`sequential`] (elle-cli's) | a read of a key's subkeys never sees a later subkey without an earlier one |
//! | `queue` | [`queue`] (`jepsen.checker/queue`) | every `:ok` dequeue takes an element a Knossos queue model holds (unordered, or FIFO) |
//! | `total-queue` | [`queue`] (`jepsen.checker/total-queue`) | with drains expanded, every acknowledged enqueue is dequeued and nothing never enqueued is (lost, unexpected, duplicated, recovered) |
//! | `unique-ids` | [`unique_ids`] (`jepsen.checker/unique-ids`) | no id is generated twice |
//!
//! The linearizable registers and mutex (Knossos's models) are in
//! [`crate::linear`], which reads its ops through this module.
//!
//! # Why a generic op reader and not the columnar history
//!
//! [`crate::history::History`] stores transactions: every client op's
//! `:value` is a vector of micro-ops (`[:r k v]`, `[:append k v]`), held in
//! flat arrays. These workloads' values are not micro-ops: a bank read is a
//! map of accounts to balances, a transfer a map `{:from :to :amount}`, a
//! counter add an integer, a set read a set or vector of elements, a CAS a
//! pair `[old new]`, a mutex op has no value. The EDN reader rejects them
//! (`expected a :value of nil or a vector of micro-ops`), and widening the
//! columnar model would cost every Elle history. So this module reads the
//! same files with the same tokenizers ([`crate::ingest::read_values`]:
//! the EDN and JSON readers' generic value parser, same syntax and
//! `file:line:column` errors) into one [`Op`] per op map, whose `:value` is
//! kept compact where it has a bank, counter or set shape, and as the
//! generic [`Value`] it was written as otherwise
//! ([`crate::ingest::op_value`]; [`Ops::value`] gives any value as
//! written). Each checker then checks
//! that every client op fits its model ([`JepsenError::Model`], naming the
//! op, its line and what the model expects) before it checks anything: a
//! history of another workload is an error, never a silent valid.
//!
//! # History semantics
//!
//! As `jepsen.history`: ops keep their `:index` (or their position when
//! the input has none); a completion (`:ok`, `:fail`, `:info`) belongs to
//! the latest open invocation of its `:process` ([`Ops::pair`]); an
//! invocation with no completion is pending, like `:info`: it may have
//! taken effect or not. Ops whose `:process` is not an integer (`:nemesis`)
//! are not client ops and are ignored by every checker. JSON strings in
//! `"type"` and `"f"` are read as keywords (elle-cli's `value-reader`).
//!
//! Where isolde answers differently from Jepsen on purpose (each is noted
//! at its checker): set-full reports elements read but
//! never added (Jepsen ignores them) and counts a duplicate as an element
//! appearing more than once in a read (Jepsen's `(< v 1)` test never
//! fires); `comments` checks plain single-key histories (elle-cli's
//! `independent` wrapper finds no keys in them and answers valid).

pub mod bank;
pub mod comments;
pub mod counter;
pub mod detect;
pub mod elem;
pub mod long_fork;
pub mod ops;
pub mod queue;
pub mod result;
pub mod sequential;
pub mod set;
pub mod set_full;
pub mod unique_ids;

pub use ops::{Op, OpType, Ops};
pub use result::{CheckResult, Node};

use crate::history::{Atom, Value};
use crate::ingest::IngestError;
use thiserror::Error;

/// Why a history could not be checked.
#[derive(Debug, Error)]
pub enum JepsenError {
    /// The file could not be read or parsed.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// A form that is not an op map, or an op map with a malformed field.
    #[error("{source_name}:{line}: {what}")]
    Malformed {
        /// The file.
        source_name: String,
        /// 1-based line of the op.
        line: u32,
        /// What is wrong.
        what: String,
    },
    /// An option that does not apply to the workload checked.
    #[error("{0}")]
    Usage(String),
    /// A client op that the chosen model does not have.
    #[error(
        "{source_name}:{line}: op {op} does not fit the {model} model, which expects {expected}{detail} - wrong model selected?{hint}"
    )]
    Model {
        /// The file.
        source_name: String,
        /// 1-based line of the op.
        line: u32,
        /// The op, as EDN.
        op: String,
        /// The model's name.
        model: &'static str,
        /// What the model expects.
        expected: &'static str,
        /// What in the op's value does not fit (`"; ..."`), or empty.
        detail: String,
        /// A hint naming the workload the history looks like, or empty.
        hint: String,
    },
}

/// The keyword (or, from JSON, string) name of a value.
pub fn name_of(v: &Value) -> Option<&str> {
    match v {
        Value::Atom(Atom::Keyword(k)) | Value::Atom(Atom::Str(k)) => Some(k),
        _ => None,
    }
}

/// The integer a value holds.
pub fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Atom(Atom::Int(i)) => Some(*i),
        _ => None,
    }
}

/// Whether a value is `nil`.
pub fn is_nil(v: &Value) -> bool {
    matches!(v, Value::Atom(Atom::Nil))
}

/// The elements of a vector, list or set.
pub fn elements(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => Some(xs),
        _ => None,
    }
}

impl Ops {
    /// The [`JepsenError::Model`] for op `i`.
    pub fn model_error(&self, i: usize, model: &'static str, expected: &'static str) -> JepsenError {
        self.model_error_in(i, model, expected, String::new())
    }

    /// The [`JepsenError::Model`] for op `i`, saying what in its value does
    /// not fit (`detail`, as `"; the balance of ..."`).
    pub fn model_error_in(&self, i: usize, model: &'static str, expected: &'static str, detail: String) -> JepsenError {
        let op = &self.ops[i];
        let hint = match detect::detect(self) {
            Ok(w) if w.name() != model => format!(" This history looks like a \"{}\" workload.", w.name()),
            _ => String::new(),
        };
        JepsenError::Model {
            source_name: self.source.clone(),
            line: op.line,
            op: result::edn(&self.op_node(op)),
            model,
            expected,
            detail,
            hint,
        }
    }
}
