//! isolde: a fast, Elle-compatible black-box checker of transaction isolation.
//!
//! The pipeline is a chain of stages, each with one entry point and plain data
//! flowing forward:
//!
//! 1. [`ingest`] reads a history (Jepsen EDN, elle-cli JSON, dbcop, PolySI
//!    or C4 text, Cobra logs) into the compact, columnar [`history::History`]
//!    (operations, micro-ops and list elements in flat arrays, keys
//!    interned);
//! 2. [`infer`] derives the dependency graph (ww, wr, rw, process, realtime
//!    edges) and the non-cycle anomalies of a workload; the graph is a
//!    [`graph::Graph`] in compressed sparse row form;
//! 3. [`cycles`] finds strongly connected components, proves cycle existence,
//!    searches shortest witnesses per anomaly type, and maps anomalies onto
//!    Elle's lattice of consistency models;
//! 4. [`si_check`] decides serializability and snapshot isolation of a
//!    register history exactly (a polygraph of the unknown write orders,
//!    pruned, then solved), where inference alone cannot;
//! 5. [`weak`] decides read committed, read atomic and causal consistency
//!    (Biswas–Enea) exactly in near-linear time, with witness cycles;
//! 6. [`reports`] renders the result map as a table, EDN or JSON.
//!
//! [`anomaly`] holds the plain data every stage reports (anomaly cases,
//! cycles and their steps); [`check`] wires the stages together for the CLI
//! and for tests; [`cli`] holds the command line's plumbing and elle-cli's
//! argument model. Beside the pipeline, [`gen`] generates histories with known
//! properties (tests, benchmarks, demos), and [`clojure_hash`] reproduces
//! Clojure's hash of a long, on which Elle's output order and colours depend.

pub mod accel;
pub mod anomaly;
pub mod check;
pub mod cli;
pub mod clojure_hash;
pub mod cycles;
pub mod explore;
pub mod gen;
pub mod graph;
pub mod history;
pub mod infer;
pub mod ingest;
pub mod levels;
pub mod outcome;
pub mod record;
pub mod reports;
pub mod si_check;
pub mod weak;

/// The examples of `docs/library.md`, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryGuide;
