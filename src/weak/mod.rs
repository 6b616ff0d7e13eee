//! Exact, near-linear checking of read committed, read atomic and causal
//! consistency as Biswas and Enea define them (weak.md §1–§3).
//!
//! # The theory
//!
//! A history `⟨T, so, wr⟩` (transactions, session order, and for every
//! external read the transaction it read from) satisfies a level `I` iff
//! some strict total *commit order* `co ⊇ so ∪ wr` satisfies, for every
//! external read `α` of `x` in `t₃` reading from `t₁` and every other writer
//! `t₂` of `x`: `φ_I(t₂, α) ⇒ t₂ co t₁` — every writer the reader was
//! obliged to see commits before the writer it actually read. The premises:
//!
//! | level | `φ(t₂, α ∈ t₃)`: `t₃` must see `t₂` | here |
//! |---|---|---|
//! | read committed (`read-committed-be`) | `t₃` read from `t₂` earlier in its program | [`rc`] |
//! | read atomic (`read-atomic`) | `t₂ (so ∪ wr) t₃`, one step | [`ra`] |
//! | causal (`causal-cerone`) | `t₂ (so ∪ wr)⁺ t₃` | [`cc`] |
//!
//! None of these premises mentions `co`, so the edges they force are known
//! up front, and the history satisfies the level iff `so ∪ wr ∪ forced` is
//! acyclic; a topological order is then a commit order (the consistency
//! witness), and a cycle is the violation witness. The three premises are
//! nested (RC's ⊆ RA's ⊆ CC's), so the driver checks read committed, then
//! read atomic, then causal, up to the level asked: the first failure is the
//! weakest level violated.
//!
//! The shared front end ([`front`]) builds the history from the Jepsen
//! operations (sessions from `:process`, `⊥` for initial values, `:info` and
//! `:fail` as weak.md §4 says) and finds reads nothing committed explains;
//! [`graph`] holds the graph, Kahn's and Tarjan's algorithms and the shortest
//! witness cycle; [`witness`] names the reported data (plain anomaly data,
//! defined with [`Level`] and [`Kind`] in [`crate::anomaly::weak`]);
//! [`oracle`] the quadratic saturation checker and the exhaustive enumerator
//! the fast checkers are tested against.
//!
//! # Repeated values
//!
//! When several transactions wrote the value a read returned, `wr` is not
//! determined (weak.md §4.4). The driver tries every assignment of writers
//! while there are at most [`Options::max_assignments`]: the level holds if
//! one assignment satisfies it (that assignment and its commit order are
//! the witness) and fails if every one fails. With more, it checks the
//! history without those reads, which can only remove constraints: a
//! violation there is a violation of every assignment; otherwise the answer
//! is `unknown`, never a guessed `valid`.

/// Why the checkers beyond Elle's inference (the Biswas–Enea weak levels,
/// prefix consistency, the exact check of registers) decide nothing of a
/// closed-predicate history.
pub const PREDICATES_UNKNOWN: &str = "this checker has no predicate reads: it cannot decide a closed-predicate \
     history (only Elle's inference, with predicate dependencies, does)";

pub mod cc;
pub mod elle;
pub mod front;
pub mod graph;
pub mod oracle;
pub mod ra;
pub mod rc;
pub mod strong;
pub mod witness;

pub use crate::anomaly::weak::{Kind, Level};

use crate::anomaly::Workload;
use crate::history::History;
use front::{Front, ReadFrom, Sessions, TxnId, BOTTOM};
use graph::{LGraph, Label};
use witness::{Assumed, Cause, Violation, WCycle, WStep};

/// The model names that select a weak level, with the level.
pub const MODEL_NAMES: &[(&str, Level)] = &[
    ("read-committed-be", Level::ReadCommitted),
    ("read-atomic", Level::ReadAtomic),
    ("causal-cerone", Level::Causal),
    ("transactional-causal", Level::Causal),
];

/// The checker's side of [`Level`] (the level itself is anomaly data,
/// defined in [`crate::anomaly::weak`]).
impl Level {
    /// The level a model name selects (case-insensitive), if any.
    pub fn from_model(name: &str) -> Option<Level> {
        MODEL_NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|&(_, l)| l)
    }

    /// The TAP letters of a cycle at this level with one forced edge and
    /// with several.
    fn taps(self) -> (char, char) {
        match self {
            Level::ReadCommitted => ('h', 'i'),
            Level::ReadAtomic => ('k', 'l'),
            Level::Causal => ('m', 'n'),
        }
    }
}

/// A forced commit-order edge `from → to`, with its reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forced {
    /// `t₂`, the writer the reader had to see.
    pub from: TxnId,
    /// `t₁`, the writer the reader read from.
    pub to: TxnId,
    /// `t₃`, the reader.
    pub reader: TxnId,
    /// The read of `t₁` (index into [`Front::reads`]).
    pub read: u32,
    /// The reader's first read from `t₂`, if it read from it.
    pub via: Option<u32>,
    /// The premise.
    pub kind: Kind,
}

/// Limits and choices of the weak checks.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Where session order comes from.
    pub sessions: Sessions,
    /// Most live vector-clock entries causal consistency may hold.
    pub max_clock_entries: usize,
    /// Most writer assignments of repeated values tried.
    pub max_assignments: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { sessions: Sessions::Process, max_clock_entries: 1 << 28, max_assignments: 256 }
    }
}

/// A consistency witness: the writers of the reads and a commit order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The writer of each read of [`Front::reads`].
    pub wr: Vec<TxnId>,
    /// A commit order (all transactions, `⊥` first).
    pub co: Vec<TxnId>,
}

/// The answer for one level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The level holds; the witness.
    Valid(Box<Explanation>),
    /// The level is violated.
    Invalid(Box<Violation>),
    /// Undecided, with the reason.
    Unknown(String),
}

/// Decides `level` for the history `h` read as `workload`.
pub fn check(h: &History, workload: Workload, level: Level, opts: &Options) -> Verdict {
    match front::build(h, workload, opts.sessions) {
        Ok(f) => check_front(&f, level, opts),
        Err(e) => Verdict::Unknown(e.to_string()),
    }
}

/// Decides `level` for a front-end history.
pub fn check_front(f: &Front, level: Level, opts: &Options) -> Verdict {
    if let Some(&finding) = f.findings.first() {
        return Verdict::Invalid(Box::new(Violation {
            level: Level::ReadCommitted,
            tap: finding.kind.tap(),
            sessions: opts.sessions,
            cause: Cause::Read(finding),
            assumed: Vec::new(),
            assignments: 1,
        }));
    }
    let total =
        f.choices.iter().try_fold(1usize, |acc, c| acc.checked_mul(c.len()).filter(|&p| p <= opts.max_assignments));
    let Some(total) = total else {
        // Too many assignments: only a violation without those reads is sure.
        let reduced = without_choices(f);
        return match decide(&reduced, &resolve(&reduced, &[]), level, opts) {
            Ok(v @ Verdict::Invalid(_)) => v,
            Ok(_) => Verdict::Unknown(format!(
                "{} reads of repeated values have more than {} possible writer assignments, and the history \
                 without them satisfies the level",
                f.choices.len(),
                opts.max_assignments
            )),
            Err(e) => Verdict::Unknown(e),
        };
    };
    let mut pick = vec![0usize; f.choices.len()];
    let mut strongest: Option<Box<Violation>> = None;
    for _ in 0..total {
        let wr = resolve(f, &pick);
        match decide(f, &wr, level, opts) {
            Ok(Verdict::Valid(e)) => return Verdict::Valid(e),
            Ok(Verdict::Invalid(mut v)) => {
                // Each assignment fails at some weakest level; the history
                // fails at the strongest of those (a weaker level still has
                // an assignment that satisfies it).
                if strongest.as_ref().is_none_or(|w| w.level < v.level) {
                    v.assumed = assumed(f, &pick);
                    v.assignments = total;
                    strongest = Some(v);
                }
            }
            Ok(u @ Verdict::Unknown(_)) => return u,
            Err(e) => return Verdict::Unknown(e),
        }
        // Next assignment (odometer).
        for (i, c) in pick.iter_mut().enumerate() {
            *c += 1;
            if *c < f.choices[i].len() {
                break;
            }
            *c = 0;
        }
    }
    match strongest {
        Some(v) => Verdict::Invalid(v),
        None => Verdict::Unknown("no writer assignment was tried".into()),
    }
}

/// The writer of every read under the choice `pick` (one index per
/// ambiguous read; missing entries take the first candidate).
pub fn resolve(f: &Front, pick: &[usize]) -> Vec<TxnId> {
    f.reads
        .iter()
        .map(|r| match r.from {
            ReadFrom::Txn(t) => t,
            ReadFrom::Choice(c) => f.choices[c as usize][pick.get(c as usize).copied().unwrap_or(0)],
        })
        .collect()
}

/// The history without its reads of repeated values (fewer constraints: a
/// violation of it is one of every writer assignment).
pub fn without_choices(f: &Front) -> Front {
    let mut g = f.clone();
    g.reads.clear();
    g.read_start.clear();
    g.read_start.push(0);
    for t in 0..f.len() as TxnId {
        g.reads.extend(f.reads_of(t).iter().filter(|r| matches!(r.from, ReadFrom::Txn(_))));
        g.read_start.push(g.reads.len() as u32);
    }
    g.choices.clear();
    g
}

fn assumed(f: &Front, pick: &[usize]) -> Vec<Assumed> {
    let mut out = Vec::new();
    for t in 1..f.len() as TxnId {
        for r in f.reads_of(t) {
            if let ReadFrom::Choice(c) = r.from {
                let cands = &f.choices[c as usize];
                out.push(Assumed {
                    op: f.op[t as usize],
                    mop: r.mop,
                    writer: f.op[cands[pick[c as usize]] as usize],
                    candidates: cands.iter().map(|&w| f.op[w as usize]).collect(),
                });
            }
        }
    }
    out
}

/// Decides `level` for one writer assignment: read committed, then read
/// atomic, then causal, stopping at the first failure.
fn decide(f: &Front, wr: &[TxnId], level: Level, opts: &Options) -> Result<Verdict, String> {
    let base = LGraph::build(f, wr, &[]);
    let Some(so_wr) = base.topo(|l| matches!(l, Label::So | Label::Wr(_))) else {
        return Ok(cycle_violation(f, &base, &[], Level::ReadCommitted, opts));
    };
    if base.topo(|_| true).is_none() {
        return Ok(cycle_violation(f, &base, &[], Level::ReadCommitted, opts));
    }
    let mut co = Vec::new();
    for lvl in Level::ALL.into_iter().filter(|&l| l <= level) {
        if lvl >= Level::ReadAtomic {
            if let Some(v) = non_repeatable(f, wr, lvl, opts) {
                return Ok(Verdict::Invalid(Box::new(v)));
            }
        }
        let mut forced = Vec::new();
        match lvl {
            Level::ReadCommitted => rc::forced(f, wr, &mut forced),
            Level::ReadAtomic => ra::forced(f, wr, &mut forced),
            Level::Causal => cc::forced(f, wr, &so_wr, opts.max_clock_entries, &mut forced)?,
        }
        let g = LGraph::build(f, wr, &forced);
        match g.topo_earliest() {
            Some(order) => co = order,
            None => return Ok(cycle_violation(f, &g, &forced, lvl, opts)),
        }
    }
    Ok(Verdict::Valid(Box::new(Explanation { wr: wr.to_vec(), co })))
}

/// TAP-j: two external reads of one key in one transaction from different
/// writers; each writer was read, so each must commit before the other.
fn non_repeatable(f: &Front, wr: &[TxnId], level: Level, opts: &Options) -> Option<Violation> {
    let mut by_key: Vec<(crate::history::KeyId, usize)> = Vec::new();
    for t in 1..f.len() as TxnId {
        let base = f.read_start[t as usize] as usize;
        let rs = f.reads_of(t);
        if rs.len() < 2 {
            continue;
        }
        by_key.clear();
        by_key.extend(rs.iter().enumerate().map(|(i, r)| (r.key, i)));
        by_key.sort_unstable();
        for w in by_key.windows(2) {
            let ((ka, i), (kb, j)) = (w[0], w[1]);
            if ka == kb && wr[base + i] != wr[base + j] {
                let (a, b) = (&rs[i], &rs[j]);
                let op = |w: TxnId| (w != BOTTOM).then(|| f.op[w as usize]);
                return Some(Violation {
                    level,
                    tap: 'j',
                    sessions: opts.sessions,
                    cause: Cause::NonRepeatable {
                        reader: f.op[t as usize],
                        key: a.key,
                        mops: [a.mop, b.mop],
                        writers: [op(wr[base + i]), op(wr[base + j])],
                    },
                    assumed: Vec::new(),
                    assignments: 1,
                });
            }
        }
    }
    None
}

/// The violation shown by a cycle of `g` at `level`.
fn cycle_violation(f: &Front, g: &LGraph, forced: &[Forced], level: Level, opts: &Options) -> Verdict {
    let Some((vs, ls)) = g.short_cycle() else {
        return Verdict::Unknown("the graph is cyclic but no cycle was recovered".into());
    };
    let op = |t: TxnId| (t != BOTTOM).then(|| f.op[t as usize]);
    let mop_of = |read: u32| f.reads[read as usize].mop;
    let steps: Vec<WStep> = ls
        .iter()
        .map(|l| match *l {
            Label::So => WStep::So,
            Label::Wr(i) => WStep::Wr { key: f.reads[i as usize].key, mop: mop_of(i) },
            Label::Version(i) => {
                let e = &f.version_edges[i as usize];
                WStep::Version { key: e.key, op: e.op, mop: e.mop }
            }
            Label::Forced(i) => {
                let e = &forced[i as usize];
                WStep::Forced {
                    kind: e.kind,
                    reader: f.op[e.reader as usize],
                    key: f.reads[e.read as usize].key,
                    read_mop: mop_of(e.read),
                    via_mop: e.via.map(mop_of),
                }
            }
        })
        .collect();
    let n_forced = steps.iter().filter(|s| matches!(s, WStep::Forced { .. })).count();
    let (one, many) = level.taps();
    let tap = match n_forced {
        0 => 'g',
        1 => one,
        _ => many,
    };
    let level = if n_forced == 0 { Level::ReadCommitted } else { level };
    Verdict::Invalid(Box::new(Violation {
        level,
        tap,
        sessions: opts.sessions,
        cause: Cause::Cycle(WCycle { txns: vs.into_iter().map(op).collect(), steps }),
        assumed: Vec::new(),
        assignments: 1,
    }))
}
