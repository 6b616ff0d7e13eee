//! One check spread over many processes, on timely dataflow.
//!
//! A history is cut into one window per worker (P processes × T threads,
//! over TCP between processes: [`timely`]'s cluster), and every stage of
//! Elle's check runs where its data lies, with the single run's result:
//!
//! 1. [`window`]: each worker parses its own bytes of the input (every
//!    process maps the same file); two supersteps give every op its global
//!    id, `:index` and line, and pair invocations with completions across
//!    cuts, exactly as a single reading does.
//! 2. [`keys`]: Elle's inference is per key, so each key has an owner; the
//!    windows send each op's micro-ops to the owners of their keys, and each
//!    owner runs the unchanged single-process inference on its keys. Data
//!    edges come back with the explanation of each relationship.
//! 3. [`order`]: process and realtime order, scanned window after window
//!    with the scan's small state handed on, so each window emits the
//!    edges a single scan emits.
//! 4. [`labels`]: edges go to the windows of their ends; each op gets the
//!    earliest window it reaches and the latest that reaches it, by rounds
//!    over the cross-window edges only. Components inside a window are
//!    analysed there; the few ops near cuts whose labels differ from their
//!    window ("migrants") go, with their edges, to one worker per label
//!    class, and their components are analysed there. Each analysis is the
//!    single run's ([`crate::cycles::analyse_scc`]).
//! 5. [`report`]: the cases go to worker 0, which reads back the ops they
//!    name from the input's bytes and builds Elle's result map.
//!
//! Histories cross the network once (the key shuffle, about the size of the
//! micro-ops); the graph only as edges with their ends, their steps, and a
//! few labels per cross-window edge. Measured shapes and costs are in
//! `docs/distributed.md`.
//!
//! What stays on one process: the weak levels' own check, prefix, and the
//! exact check of registers (see [`crate::check::distributed_outcome`]);
//! rw-register's `--linearizable-keys` and `--sequential-keys`, which read
//! the order of the whole history. A distributed run says so rather than
//! answering `valid`.
//!
//! Faults: timely has no fault tolerance, and retries a connection forever.
//! [`run`] sets a deadline on the start, and a peer that dies makes the
//! others' communication fail; [`cluster`] turns both into a clear error and
//! a non-zero exit on every process, and nothing partial is reported.

pub mod bsp;
pub mod cluster;
mod keys;
mod labels;
mod lists;
mod order;
mod report;
mod window;

pub use report::{Report, WorkerStats};

use crate::anomaly::Workload;
use crate::check::{self, CheckOptions};
use crate::cycles::CycleOptions;
use crate::ingest::{IngestError, MappedEdn};
use bsp::Bsp;
use std::time::Instant;
use thiserror::Error;

/// What stops a distributed run.
#[derive(Debug, Error)]
pub enum DistError {
    /// The input or the request cannot be checked in a distributed run.
    #[error("{0}")]
    Input(String),
    /// The input cannot be read.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// A message could not be encoded or decoded.
    #[error("distributed run: bad message: {0}")]
    Wire(String),
    /// Another worker failed with this error.
    #[error("{0}")]
    Peer(String),
    /// The processes could not be started or connected, or one died.
    #[error("{0}")]
    Cluster(String),
}

/// Runs this worker's part of the check: every worker of every process
/// calls it with the same input and options; worker 0 returns the report.
pub fn run_worker(
    bsp: &mut Bsp,
    input: &MappedEdn,
    opts: &CheckOptions,
    process: usize,
) -> Result<Finished, DistError> {
    let t0 = Instant::now();
    same_input(bsp, input)?;
    let mut win = window::open(bsp, input)?;
    let read = t0.elapsed();
    let read_peak = check::mem::resident().1 >> 20;
    let workload = win.whole.flags.resolve(opts.workload);
    let request = supported(workload, opts);
    bsp.agree(request)?;
    let t1 = Instant::now();
    // The micro-ops then live with their keys' owners; the window keeps
    // its ops (order, labels, and the lines its echoes are found by).
    let owned = keys::infer(bsp, &mut win, workload, opts.rw)?;
    let infer = t1.elapsed();
    let failed = bsp.sum(u64::from(owned.error.is_some()))? > 0;
    let mut times = vec![("read".to_string(), read.as_secs_f64(), read_peak), stage("infer", infer)];
    let mut stats = WorkerStats {
        process,
        ops: win.h.ops.len(),
        bytes: (win.bytes.1 - win.bytes.0) as u64,
        owned_ops: owned.ops,
        owned_mops: owned.mops,
        ..WorkerStats::default()
    };
    let (mut anomalies, error, keys, explainer) = (owned.anomalies, owned.error, owned.keys, owned.explainer);
    let mut total_edges = 0;
    if !failed {
        let t = Instant::now();
        let kind = order_kind(opts, win.whole.has_invokes)?;
        let order = order::edges(bsp, &win, kind)?;
        times.push(stage("order", t.elapsed()));
        let t = Instant::now();
        let local = labels::route(bsp, &win, owned.edges, order)?;
        total_edges = bsp.sum(local.edges as u64)? as usize;
        times.push(stage("route", t.elapsed()));
        let t = Instant::now();
        let labelled = labels::labels(bsp, &win, &local)?;
        times.push(stage("labels", t.elapsed()));
        let t = Instant::now();
        let cycle_opts = CycleOptions { timeout: opts.cycle_search_timeout };
        let found = labels::cycles(bsp, &win, &local, &labelled, explainer.as_ref(), workload, cycle_opts)?;
        times.push(stage("cycles", t.elapsed()));
        anomalies.extend(found.anomalies);
        stats.edges = local.edges;
        stats.label_rounds = labelled.rounds;
        stats.migrants = found.migrants;
        stats.components = found.components;
    }
    stats.times = times;
    stats.traffic = bsp.traffic;
    stats.peak_mb = Some(check::mem::resident().1 >> 20);
    let found = report::Found { anomalies, error, stats };
    let report = report::gather(bsp, &win, input, &keys, workload, opts, found, total_edges);
    // Every process exits with the verdict's status (2: no verdict).
    let status = match &report {
        Ok(Some(r)) => match r.outcome.valid {
            check::Validity::Valid => 0u8,
            check::Validity::Invalid => 1,
            check::Validity::Unknown => 3,
        },
        _ => 2,
    };
    let status = bsp.broadcast(Some(status))?;
    Ok(Finished { report: report?, status })
}

/// A stage's name, time, and the process's peak resident memory so far (MB).
fn stage(name: &str, took: std::time::Duration) -> (String, f64, u64) {
    (name.to_string(), took.as_secs_f64(), check::mem::resident().1 >> 20)
}

/// What a worker returns: worker 0's report, and the exit status every
/// process takes.
pub struct Finished {
    /// The report (worker 0 only).
    pub report: Option<Report>,
    /// 0 valid, 1 invalid, 3 unknown, 2 no verdict.
    pub status: u8,
}

/// Which order edges the request needs (see [`check::order_needs`]).
fn order_kind(opts: &CheckOptions, has_invokes: bool) -> Result<order::OrderKind, DistError> {
    let (realtime, process) = check::order_needs(opts).map_err(|e| DistError::Input(e.to_string()))?;
    Ok(if realtime && has_invokes {
        order::OrderKind::Realtime
    } else if process {
        order::OrderKind::Process
    } else {
        order::OrderKind::None
    })
}

/// Refuses what a distributed run cannot decide as a single run does.
fn supported(workload: Workload, opts: &CheckOptions) -> Result<(), DistError> {
    if workload == Workload::ClosedPredicate {
        return Err(DistError::Input(
            "a closed-predicate history's version sets range over the whole universe of keys, which a \
             distributed run does not hold in one place: check this history without --processes"
                .into(),
        ));
    }
    if workload == Workload::RwRegister && (opts.rw.linearizable_keys || opts.rw.sequential_keys) {
        return Err(DistError::Input(
            "--linearizable-keys and --sequential-keys infer versions from the order of the whole history, which a \
             distributed run does not hold in one place: check this history without --processes"
                .into(),
        ));
    }
    if opts.keep_sccs || opts.keep_order {
        return Err(DistError::Input(
            "a distributed run does not keep the graph's components (--directory's plots): check without \
             --processes, or use --html"
                .into(),
        ));
    }
    Ok(())
}

/// Checks that every process maps the same input: its files' names and
/// lengths, and a hash of 64 samples spread over it.
fn same_input(bsp: &mut Bsp, input: &MappedEdn) -> Result<(), DistError> {
    let mine = input.fingerprint();
    let all = bsp.all_gather(&mine)?;
    match all.iter().position(|x| *x != all[0]) {
        None => Ok(()),
        Some(w) => Err(DistError::Input(format!(
            "{}: worker {w} reads a different file than worker 0 ({} bytes against {}, or different contents): \
             every process must read the same history (a shared file, or identical copies)",
            input.name, all[w].0, all[0].0
        ))),
    }
}

pub use cluster::{run, Topology};
