//! The weak levels inside Elle's result map: which model names select them,
//! which anomaly types they prohibit, how a violation is filed, and which
//! models it rules out.
//!
//! Names: `read-atomic` and `causal-cerone` (alias `transactional-causal`)
//! are Cerone's models, which isolde checks exactly with the Biswas–Enea
//! axioms; `read-committed-be` is Biswas–Enea read committed, strictly
//! stronger than Elle's `read-committed` (Adya PL-2), which keeps its
//! meaning, as does Elle's single-object `causal`.
//!
//! Session order is part of every Biswas–Enea level, whereas Elle's plain
//! models (`serializable`, `snapshot-isolation`, …) ignore it. So a violation
//! rules out Elle's plain models above the level only when it persists
//! without session order; otherwise it rules out the level itself and the
//! session and realtime (`strong-…`, `strict-…`) models above it.

use super::front::Sessions;
use super::witness::Violation;
use super::{check_front, Level, Options, Verdict};
use crate::anomaly::{Anomalies, Case, Workload};
use crate::cycles::lattice;
use crate::history::History;
use std::collections::BTreeSet;

/// Anomaly types a weak level reports beyond Elle's vocabulary.
pub const WEAK_ANOMALY_TYPES: &[&str] =
    &["non-monotonic-read", "non-repeatable-read", "fractured-read", "causal-violation", "G0-process", "G1c-process"];

/// Model names that exist only for the weak checks (not in Elle's lattice).
pub const ISOLDE_ONLY_MODELS: &[&str] = &["read-committed-be", "transactional-causal"];

/// The spelling a weak model name resolves to, if it is one.
pub fn resolve_model(name: &str) -> Option<&'static str> {
    Level::from_model(name).map(Level::model)
}

/// The strongest weak level among the requested models. `prefix` asks for
/// causal consistency too: prefix consistency implies it, so a causal
/// violation refutes it without its own (NP-complete) check.
pub fn requested(models: &[String]) -> Option<Level> {
    models.iter().filter_map(|m| if m == "prefix" { Some(Level::Causal) } else { Level::from_model(m) }).max()
}

/// The anomaly types a weak level prohibits: its own and every weaker
/// level's, and the read findings every level prohibits (under Elle's
/// names).
pub fn prohibited(level: Level) -> Vec<&'static str> {
    let mut out =
        vec!["G0", "G0-process", "G1a", "G1b", "G1c", "G1c-process", "internal", "future-read", "garbage-read"];
    out.push("non-monotonic-read");
    if level >= Level::ReadAtomic {
        out.extend(["non-repeatable-read", "fractured-read"]);
    }
    if level >= Level::Causal {
        out.push("causal-violation");
    }
    out
}

/// The vector-clock budget (entries) of the session-free recheck of a
/// violation, at least (see [`run`]).
const RECHECK_CLOCK_ENTRIES: usize = 1 << 22;

/// What the weak check found, for the verdict and the boundary.
#[derive(Clone, Debug)]
pub struct WeakRun {
    /// The level checked.
    pub level: Level,
    /// The level asked for, proved to hold.
    pub proved: bool,
    /// The check could not decide.
    pub unknown: bool,
    /// The weakest level violated, and whether the violation persists
    /// without session order.
    pub violated: Option<(Level, bool)>,
}

/// Runs the weak check at `level` and files its finding in `anomalies`: a
/// violation under [`Violation::anomaly_name`] (unless Elle's analysis
/// already reported that type, which then stands as the witness), an
/// undecided level as `exact-check-unknown`.
pub fn run(h: &History, workload: Workload, level: Level, opts: &Options, anomalies: &mut Anomalies) -> WeakRun {
    // With no committed transaction there is nothing to vouch for (weak.md
    // §4.6): Elle's empty-transaction-graph verdict stands.
    if !h.ops.iter().any(|o| o.op_type == crate::history::OpType::Ok) {
        return WeakRun { level, proved: false, unknown: false, violated: None };
    }
    let front = match super::front::build(h, workload, opts.sessions) {
        Ok(f) => f,
        Err(e) => {
            let case = Case::ExactCheckUnknown { model: level.model().to_string(), detail: e.to_string() };
            anomalies.entry("exact-check-unknown".into()).or_default().push(case);
            return WeakRun { level, proved: false, unknown: true, violated: None };
        }
    };
    match check_front(&front, level, opts) {
        Verdict::Valid(_) => WeakRun { level, proved: true, unknown: false, violated: None },
        Verdict::Invalid(v) => {
            // Whether the violation persists without session order (then
            // Elle's plain models above the level are ruled out too). Without
            // sessions every transaction is its own session, so causal
            // consistency's vector clocks grow with the number of
            // transactions: the recheck gets a small clock budget, and when
            // it runs out the violation is taken to need sessions, which
            // rules out less (never a model the history might satisfy).
            let recheck = Options {
                sessions: Sessions::None,
                max_clock_entries: opts.max_clock_entries.min(RECHECK_CLOCK_ENTRIES.max(16 * h.ops.len())),
                ..*opts
            };
            let without_sessions = opts.sessions == Sessions::None
                || matches!(check_front(&front.into_without_sessions(), v.level, &recheck), Verdict::Invalid(_));
            let name = v.anomaly_name();
            let weakest = v.level;
            file(anomalies, name, *v);
            WeakRun { level, proved: false, unknown: false, violated: Some((weakest, without_sessions)) }
        }
        Verdict::Unknown(detail) => {
            let case = Case::ExactCheckUnknown { model: level.model().to_string(), detail };
            anomalies.entry("exact-check-unknown".into()).or_default().push(case);
            WeakRun { level, proved: false, unknown: true, violated: None }
        }
    }
}

/// Elle's `internal` (rw-register and list-append) covers two things: a read disagreeing
/// with the transaction's own earlier write (TAP-d/e, a violation of every
/// level) and a read disagreeing with its own earlier read of the key, a
/// non-repeatable read (TAP-j), which Biswas–Enea read committed allows.
/// When read committed is the strongest level asked for and no other
/// requested model prohibits `internal`, the non-repeatable reads among
/// Elle's `internal` cases are filed as `non-repeatable-read` instead, so
/// they are still reported but do not fail the level.
pub fn refile_non_repeatable_reads(h: &History, anomalies: &mut Anomalies) {
    let Some(cases) = anomalies.remove("internal") else { return };
    let wrote_before = |c: &Case| match c {
        Case::Internal { mop, .. } => {
            let op = h.op(mop.op);
            let mops = h.mops_of(op);
            let key = mops.get(mop.mop as usize).map(|m| m.key);
            mops[..(mop.mop as usize).min(mops.len())]
                .iter()
                .any(|m| Some(m.key) == key && m.f != crate::history::MopFn::Read)
        }
        _ => true,
    };
    let (internal, repeated): (Vec<Case>, Vec<Case>) = cases.into_iter().partition(wrote_before);
    if !internal.is_empty() {
        anomalies.insert("internal".into(), internal);
    }
    if !repeated.is_empty() {
        anomalies.entry("non-repeatable-read".into()).or_default().extend(repeated);
    }
}

fn file(anomalies: &mut Anomalies, name: String, v: Violation) {
    if anomalies.contains_key(&name) {
        return;
    }
    anomalies.insert(name, vec![Case::Weak(Box::new(v))]);
}

/// Whether a model's definition includes session (or realtime) order.
fn has_sessions(m: &str) -> bool {
    m.starts_with("strong-") || m.starts_with("strict-") || Level::from_model(m).is_some()
}

/// The friendly names of the models a violation at `level` rules out.
pub fn impossible_models(level: Level, without_sessions: bool) -> BTreeSet<String> {
    // Every Elle model implying read atomic implies Biswas–Enea read committed.
    let elle = match level {
        Level::ReadCommitted | Level::ReadAtomic => "read-atomic",
        Level::Causal => "causal-cerone",
    };
    let mut out: BTreeSet<String> = lattice::all_impossible_models(&[elle])
        .into_iter()
        .map(|m| lattice::friendly_model_name(m).to_string())
        .filter(|m| without_sessions || has_sessions(m))
        .collect();
    for l in Level::ALL.into_iter().filter(|&l| l >= level) {
        out.insert(l.model().to_string());
    }
    out
}

/// Models weaker than `level` that a report may already rule out.
fn weaker_models(level: Level) -> Vec<&'static str> {
    let mut out = vec!["read-uncommitted", "read-committed"];
    out.extend(Level::ALL.into_iter().filter(|&l| l < level).map(Level::model));
    out
}

/// Adds the models a weak violation rules out to Elle's `:not` /
/// `:also-not`: the violated level goes to `:not` unless a weaker model is
/// already ruled out, every stronger model to `:also-not`.
pub fn extend_boundary(
    level: Level,
    without_sessions: bool,
    not: &mut BTreeSet<String>,
    also_not: &mut BTreeSet<String>,
) {
    let imp = impossible_models(level, without_sessions);
    let own = level.model().to_string();
    // Models in :not that the newly refuted level implies move to :also-not.
    let implied: Vec<String> = not.iter().filter(|m| imp.contains(*m) && **m != own).cloned().collect();
    for m in implied {
        not.remove(&m);
        also_not.insert(m);
    }
    for m in &imp {
        if *m != own && !not.contains(m) {
            also_not.insert(m.clone());
        }
    }
    let weaker_out = weaker_models(level).iter().any(|m| not.contains(*m) || also_not.contains(*m));
    if weaker_out {
        also_not.insert(own);
    } else if !also_not.contains(&own) {
        not.insert(own);
    }
}
