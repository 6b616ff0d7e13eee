//! isolde: a fast, Elle-compatible black-box checker of transaction isolation.
//!
//! The pipeline is a chain of stages, each with one entry point and plain data
//! flowing forward. In the order they run:
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
//! 4. [`weak`] decides read committed, read atomic and causal consistency
//!    (Biswas–Enea) exactly in near-linear time, with witness cycles;
//! 5. [`si_check`] decides serializability, snapshot isolation and prefix
//!    consistency of a register history exactly (a polygraph of the unknown
//!    write orders, pruned, then solved), where inference alone cannot; its
//!    pruning's reachability runs on [`accel`] (CPU rows, their
//!    data-parallel mirror, or CUDA kernels); [`prefix`] decides prefix
//!    consistency of list-append histories (and, independently, registers)
//!    over the weak front end with si_check's solver;
//! 6. [`check`] decides every level of the ladder from what ran
//!    ([`levels`] holds the levels as data: names, definitions, deciders,
//!    implications) into an [`outcome::Outcome`], the plain result below
//!    every printer;
//! 7. [`reports`] renders the outcome as a table, EDN or JSON, and writes
//!    Elle's output directory.
//!
//! [`check`] wires the stages together for the CLI and for tests. It runs
//! the weak levels before the exact check and feeds it what they found: a
//! weak violation refutes the stronger levels without a search, and the
//! write orders the weak premises force join si_check's known edges. With
//! the ladder (the default check, `--model all`) it then runs, on the same
//! findings, the checkers of the levels the requested check left undecided.
//! [`anomaly`] holds the plain data every stage reports (anomaly cases,
//! cycles and their steps, the weak levels' violations); it imports nothing
//! but [`history`], so every stage can depend on it.
//!
//! [`online`] runs the pipeline in rounds on a history that is still being
//! written (`isolde analyze --follow`), reporting each anomaly once it is
//! final. [`dist`] spreads one check over many processes on timely
//! dataflow (`isolde analyze --processes`, `--local-processes`): each
//! worker reads a window of the input, each key's owner runs [`infer`]
//! on its keys, and each strongly connected component is analysed by
//! [`cycles`] where it lies, with the single process's result.
//!
//! Beside the pipeline, for histories that are not transactional: [`jepsen`]
//! holds Jepsen's non-transactional checkers (bank, counter, set, set-full,
//! long-fork, comments, sequential) over a generic op reader, with Jepsen's
//! result maps; [`linear`] checks linearizability of Knossos's models
//! (registers, CAS registers, a mutex) and Porcupine's key-value model
//! (Wing–Gong search with Lowe's memoization, per key), reading its ops
//! through [`jepsen`].
//!
//! Around the pipeline: [`cli`] holds the command line's plumbing and
//! elle-cli's argument model, and [`help_headings`] the headings every
//! command's options are grouped under; [`record`] records histories from real
//! databases (`isolde record`); [`hermitage`] runs Hermitage's isolation
//! tests against one and checks each run (`isolde hermitage`); [`explore`] enumerates every history of a
//! small transactional program under a level (`isolde explore`); [`gen`]
//! generates histories with known properties (tests, benchmarks, demos); and
//! [`clojure_hash`] reproduces Clojure's hash of a long, on which Elle's
//! output order and colours depend; [`huge_pages`] restarts the binary
//! once with glibc's huge-page tunable (fewer page faults on large
//! histories).
//!
//! Files and top-level modules import downward only:
//! `tests/import_circles.rs` fails on any loop of imports between files, and
//! on any between top-level modules.

pub mod accel;
pub mod anomaly;
pub mod check;
pub mod cli;
pub mod clojure_hash;
pub mod cycles;
pub mod dist;
pub mod explore;
pub mod gen;
pub mod graph;
pub mod help_headings;
pub mod hermitage;
pub mod history;
pub mod huge_pages;
pub mod infer;
pub mod ingest;
pub mod jepsen;
pub mod levels;
pub mod linear;
pub mod online;
pub mod outcome;
pub mod prefix;
pub mod record;
pub mod reports;
pub mod si_check;
pub mod weak;

/// The examples of `docs/library.md`, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryGuide;
