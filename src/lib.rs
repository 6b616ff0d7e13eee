//! isolde: a fast, Elle-compatible black-box checker of transaction isolation.
//!
//! The pipeline is a chain of stages, each with one entry point and plain data
//! flowing forward:
//!
//! 1. [`ingest`] reads a history (Jepsen EDN, elle-cli JSON, dbcop, PolySI
//!    text, Cobra logs) into a compact [`history::History`];
//! 2. [`infer`] derives the dependency graph (ww, wr, rw, process, realtime
//!    edges) and the non-cycle anomalies of a workload;
//! 3. [`cycles`] finds strongly connected components, proves cycle existence,
//!    searches shortest witnesses per anomaly type, and maps anomalies onto
//!    Elle's lattice of consistency models;
//! 4. [`reports`] renders the result map as a table, EDN or JSON.
//!
//! [`check`] wires the stages together for the CLI and for tests.

pub mod anomaly;
pub mod check;
pub mod clojure_hash;
pub mod cycles;
pub mod gen;
pub mod graph;
pub mod history;
pub mod infer;
pub mod ingest;
pub mod reports;
pub mod si_check;
