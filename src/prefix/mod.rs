//! Exact checking of prefix consistency (PC), the level between causal
//! consistency and snapshot isolation (weak.md §1.2, Fig. 2(b) of Bouajjani,
//! Enea and Román-Calvo).
//!
//! # The definition
//!
//! A history `⟨T, so, wr⟩` is prefix consistent iff some strict total commit
//! order `co ⊇ so ∪ wr` satisfies: for every external read of `x` in `t₃`
//! reading from `t₁` and every other writer `t₂` of `x`, if `t₂ = t₄` or
//! `t₂ co t₄` for some `t₄ (so ∪ wr) t₃`, then `t₂ co t₁`. In words, `t₃`
//! sees the `co`-prefix up to `p(t₃)`, the latest transaction it follows in
//! `so ∪ wr`, and reads the latest write of that prefix. Unlike read
//! committed, read atomic and causal consistency, the premise mentions `co`,
//! and the problem is NP-complete (Biswas and Enea, OOPSLA'19).
//!
//! # The encoding
//!
//! Cerone's equivalent view puts a begin event `B(t)` and a commit event
//! `C(t)` of every transaction in one total order, with `B(t) < C(t)`,
//! `C(t) < B(t')` for session order, each transaction seeing exactly the
//! transactions committed before its begin and reading the latest visible
//! write. The two views agree: from a commit order, place each `B(t₃)` right
//! after `C(p(t₃))`; from an event order, the commit order is the order of
//! the commit events and the prefix a reader sees contains `p(t₃)`, so the
//! smaller prefix of the axiom constrains no more. Writing the event order's
//! requirements as edges of a graph over the `2|T|` events:
//!
//! * `B(t) → C(t)`; `C(a) → B(b)` for session order and for `a →wr b`
//!   (a reader sees what it read from); `C(⊥) → B(t)`;
//! * for a read of `x` in `r` from `t₁` and another writer `t₂ ≠ r` of `x`:
//!   `C(t₂) → C(t₁)` (`t₂` commits first) **or** `B(r) → C(t₂)` (`r` does not
//!   see `t₂`). A read of `⊥` leaves only the second.
//!
//! The history is PC iff some choice of one side per disjunction leaves the
//! graph acyclic: a topological order is an event order as above, and an
//! event order satisfies one side of every disjunction. The disjunctions of
//! all readers of one version `t₁` and one other writer `t₂` share their
//! first side, so they are one variable: "`t₁` before `t₂`" switches on
//! `C(t₁) → C(t₂)` (implied in a total order) and `B(r) → C(t₂)` for every
//! reader `r`; "`t₂` before `t₁`" switches on `C(t₂) → C(t₁)` and, when `t₂`
//! has readers too, their edges into `C(t₁)`. A pair of writers neither of
//! which is read needs no variable. The variables go to the solver of
//! [`crate::si_check::solver`] (CDCL with an incremental acyclicity theory), the same
//! one snapshot isolation uses.
//!
//! **What is not carried over from snapshot isolation.** There, write-write
//! edges are `C(a) → B(b)` (no two overlapping writers: the Conflict axiom),
//! so a read-modify-write sits right after the version it read (Cobra's and
//! PolySI's chain combining) and serial replays explain valid histories.
//! Here write-write edges end at commit nodes: two transactions may read the
//! same version and both overwrite it (a lost update), so chains are not
//! combined and no rule of [`crate::si_check::prune`] or [`crate::si_check::serial`] that relies
//! on the absence of lost updates is used.
//!
//! # Lists
//!
//! List-append histories are read as the other weak levels read them
//! (weak.md §4.5, [`crate::weak::front`]): a read of a list reads from the
//! appender of its last element (`⊥` for an empty list), and consecutive
//! elements of a read list give the version edges `C(a) → C(b)`. The
//! stronger reading "a reader saw exactly the appends in its list", which
//! would make the graph known, holds when appends commute but not under PC
//! itself: an append is a read-modify-write of the list, and PC allows two
//! appends to overwrite the same version (a lost update), after which a
//! visible append is missing from the list. So lists get the same search.
//!
//! # The driver
//!
//! Reads no committed write explains break every level and are reported as
//! they are at read committed. Reads of repeated values are decided as the
//! other weak levels decide them: every writer assignment is tried (valid
//! if one is), and beyond [`PrefixOptions::max_assignments`] the history
//! without those reads is checked (a violation there is one of every
//! assignment; otherwise `unknown`). For each assignment, a commit order
//! that follows the history's completion order is checked against the
//! definition first ([`verify`]), and, for registers, the serial order
//! snapshot isolation's replay finds ([`crate::si_check::serial`]; a serial
//! execution respecting session order is prefix consistent); either decides
//! most valid histories in about linear time, and each is checked against
//! the definition, never trusted. Then the polygraph is solved. A `valid` verdict carries a
//! commit order that [`verify::satisfies_prefix`] accepted; an `invalid`
//! one a minimal set of write orders every orientation of which closes a
//! cycle ([`witness`]); a timeout or too many variables give `unknown`.
//!
//! # Where each workload is decided
//!
//! `isolde analyze` decides list-append histories here. Register histories
//! it decides with the polygraph of [`crate::si_check`] under
//! [`crate::si_check::Semantics::Prefix`] (the same begin/commit encoding,
//! with pruning, the serial replays and the stronger attempts first), which
//! scales to histories this module's unpruned search cannot finish; this
//! module stays the independent second decision for registers that the
//! tests compare with it and with the enumerator. It lives beside `weak`
//! and `si_check`, not inside either: it reads the weak front end and
//! drives the solver, and `weak` already imports `si_check`.

pub mod encode;
pub mod verify;
pub mod witness;

use crate::anomaly::{Branch, Case, Refutation, Workload};
use crate::history::History;
use crate::si_check::solver::{self, Answer};
use crate::si_check::{ExactOptions, ExactStats};
use crate::weak::front::{self, Front, FrontError, Sessions, TxnId};
use crate::weak::witness::{Cause, Violation};
use crate::weak::Explanation;
use encode::Encoding;
use std::time::{Duration, Instant};

/// Elle's name of the level.
pub const MODEL: &str = "prefix";

/// Limits of the prefix-consistency check.
#[derive(Clone, Debug)]
pub struct PrefixOptions {
    /// Where session order comes from.
    pub sessions: Sessions,
    /// Give up (unknown) after this long, the witness included.
    pub timeout: Option<Duration>,
    /// Give up (unknown) when one writer assignment needs more write-order
    /// variables than this.
    pub max_constraints: usize,
    /// Most writer assignments of reads of repeated values tried.
    pub max_assignments: usize,
    /// Check the commit order that follows the history's completion order
    /// before building the polygraph ([`verify`]). Off only to measure or
    /// test the polygraph path.
    pub order_first: bool,
}

impl Default for PrefixOptions {
    fn default() -> Self {
        PrefixOptions::from_exact(&ExactOptions::default())
    }
}

impl PrefixOptions {
    /// The limits of the exact check (`--exact-timeout`, the constraint
    /// limit), with process sessions and the weak levels' assignment limit.
    pub fn from_exact(o: &ExactOptions) -> PrefixOptions {
        PrefixOptions {
            sessions: Sessions::Process,
            timeout: o.timeout,
            max_constraints: o.max_constraints,
            max_assignments: crate::weak::Options::default().max_assignments,
            order_first: true,
        }
    }
}

/// The verdict.
#[derive(Clone, Debug, PartialEq)]
pub enum PrefixVerdict {
    /// Prefix consistent: the writers and a commit order satisfying the
    /// definition.
    Valid(Box<Explanation>),
    /// Not prefix consistent.
    Invalid {
        /// The anomaly name to report it under.
        anomaly: String,
        /// The witness: [`Case::Weak`] for a read no committed write
        /// explains, [`Case::Refuted`] (model `prefix`) for cycles.
        case: Box<Case>,
    },
    /// Undecided, with the reason.
    Unknown(String),
}

/// The verdict with sizes and times (the fields of [`ExactStats`] that
/// apply: `txns`, `known_edges`, `constraints`, `constraint_edges`,
/// `decisions`, `conflicts`, `solver`, `build`, `solve`, `witness`, and
/// `guessed` when the completion order decided it; summed over writer
/// assignments; `serial` when a serial replay decided it).
#[derive(Clone, Debug)]
pub struct PrefixOutcome {
    /// The verdict.
    pub verdict: PrefixVerdict,
    /// Sizes and times.
    pub stats: ExactStats,
}

/// Decides prefix consistency of `h` read as `workload`.
pub fn check_prefix(h: &History, workload: Workload, opts: &PrefixOptions) -> Result<PrefixOutcome, FrontError> {
    let f = front::build(h, workload, opts.sessions)?;
    Ok(check_prefix_front(h, &f, opts))
}

/// Decides prefix consistency of a front-end history of `h`.
pub fn check_prefix_front(h: &History, f: &Front, opts: &PrefixOptions) -> PrefixOutcome {
    let deadline = opts.timeout.and_then(|t| Instant::now().checked_add(t));
    let mut stats = ExactStats { txns: f.len() - 1, ..ExactStats::default() };
    if let Some(&finding) = f.findings.first() {
        let v = Violation {
            level: crate::weak::Level::ReadCommitted,
            tap: finding.kind.tap(),
            sessions: opts.sessions,
            cause: Cause::Read(finding),
            assumed: Vec::new(),
            assignments: 1,
        };
        let anomaly = v.anomaly_name();
        let verdict = PrefixVerdict::Invalid { anomaly, case: Box::new(Case::Weak(Box::new(v))) };
        return PrefixOutcome { verdict, stats };
    }
    let total =
        f.choices.iter().try_fold(1usize, |acc, c| acc.checked_mul(c.len()).filter(|&p| p <= opts.max_assignments));
    let Some(total) = total else {
        let reduced = crate::weak::without_choices(f);
        let wr = crate::weak::resolve(&reduced, &[]);
        let verdict = match decide(h, &reduced, &wr, opts, deadline, &mut stats) {
            Decided::Invalid(b, partial) => invalid(b, partial),
            Decided::Valid(_) => PrefixVerdict::Unknown(format!(
                "{} reads of repeated values have more than {} possible writer assignments, and the history \
                 without them is prefix consistent",
                f.choices.len(),
                opts.max_assignments
            )),
            Decided::Unknown(r) => PrefixVerdict::Unknown(r),
        };
        return PrefixOutcome { verdict, stats };
    };
    if opts.order_first {
        let t = Instant::now();
        let budget = deadline.map_or(Duration::from_secs(60), |d| d.saturating_duration_since(t) / 4);
        let found = verify::serial_order(h, f, budget.min(Duration::from_secs(60)));
        stats.guess += t.elapsed();
        if let Some((co, wr)) = found.filter(|(co, wr)| verify::satisfies_prefix(f, wr, co)) {
            stats.guessed = true;
            stats.serial = true;
            return PrefixOutcome { verdict: PrefixVerdict::Valid(Box::new(Explanation { wr, co })), stats };
        }
    }
    let mut pick = vec![0usize; f.choices.len()];
    let mut branches = Vec::new();
    let mut partial = false;
    for _ in 0..total {
        let wr = crate::weak::resolve(f, &pick);
        match decide(h, f, &wr, opts, deadline, &mut stats) {
            Decided::Valid(e) => return PrefixOutcome { verdict: PrefixVerdict::Valid(e), stats },
            Decided::Invalid(b, p) => {
                partial |= p || branches.len() + b.len() > witness::MAX_BRANCHES;
                let room = witness::MAX_BRANCHES.saturating_sub(branches.len());
                branches.extend(b.into_iter().take(room));
            }
            Decided::Unknown(r) => return PrefixOutcome { verdict: PrefixVerdict::Unknown(r), stats },
        }
        for (i, c) in pick.iter_mut().enumerate() {
            *c += 1;
            if *c < f.choices[i].len() {
                break;
            }
            *c = 0;
        }
    }
    PrefixOutcome { verdict: invalid(branches, partial), stats }
}

/// The verdict of a refutation made of `branches`.
fn invalid(branches: Vec<Branch>, partial: bool) -> PrefixVerdict {
    let r = Refutation { model: MODEL.to_string(), branches, derived: Vec::new(), partial };
    let anomaly = crate::si_check::witness::refutation_name(&r);
    PrefixVerdict::Invalid { anomaly, case: Box::new(Case::Refuted(Box::new(r))) }
}

/// The answer for one writer assignment.
enum Decided {
    Valid(Box<Explanation>),
    /// Every orientation of a core closes one of these cycles; the flag
    /// says whether some cases were left out.
    Invalid(Vec<Branch>, bool),
    Unknown(String),
}

/// Decides one writer assignment.
fn decide(
    h: &History,
    f: &Front,
    wr: &[TxnId],
    opts: &PrefixOptions,
    deadline: Option<Instant>,
    stats: &mut ExactStats,
) -> Decided {
    let t0 = Instant::now();
    if let Some(co) = verify::history_order(f, wr).filter(|_| opts.order_first) {
        if verify::satisfies_prefix(f, wr, &co) {
            stats.guess += t0.elapsed();
            stats.guessed = true;
            return Decided::Valid(Box::new(Explanation { wr: wr.to_vec(), co }));
        }
    }
    stats.guess += t0.elapsed();
    let t1 = Instant::now();
    let enc = match encode::encode(f, wr, opts.max_constraints) {
        Ok(e) => e,
        Err(n) => {
            return Decided::Unknown(format!(
                "prefix consistency needs {n} write-order variables, more than the limit of {}",
                opts.max_constraints
            ))
        }
    };
    stats.known_edges += enc.known.len();
    stats.constraints += enc.pairs.len();
    stats.constraint_edges += enc.side_edges.len();
    let ctx = witness::Ctx { h, f, wr };
    let Some(order) = enc.known_order() else {
        stats.build += t1.elapsed();
        let cycle = witness::shortest_cycle(enc.nodes, &enc.known);
        return match cycle {
            Some(c) => Decided::Invalid(
                vec![Branch { assume: Vec::new(), reads: ctx.assumed_reads(), cycle: ctx.cycle(&c) }],
                false,
            ),
            None => Decided::Unknown("the known graph is cyclic but no cycle was recovered".into()),
        };
    };
    stats.build += t1.elapsed();
    let t2 = Instant::now();
    let (answer, s) = solver::solve(&enc.instance(None, &order), deadline);
    stats.solve += t2.elapsed();
    stats.decisions += s.decisions;
    stats.conflicts += s.conflicts;
    stats.solver.add(&s);
    match answer {
        Answer::Sat(model) => match commit_order(&enc, &model, f.len()) {
            Some(co) if verify::satisfies_prefix(f, wr, &co) => {
                Decided::Valid(Box::new(Explanation { wr: wr.to_vec(), co }))
            }
            _ => Decided::Unknown("the solver's model does not give a prefix-consistent commit order".into()),
        },
        Answer::Timeout => Decided::Unknown("prefix consistency: the time limit passed during the search".into()),
        Answer::Unsat => {
            let t3 = Instant::now();
            let out = refute(&ctx, &enc, &order, deadline);
            stats.witness += t3.elapsed();
            out
        }
    }
}

/// The commit order of a satisfying assignment: transactions by the
/// position of their commit node in a topological order of the chosen
/// graph (`⊥`, whose commit precedes every begin, first).
fn commit_order(enc: &Encoding, model: &[bool], n: usize) -> Option<Vec<TxnId>> {
    let chosen = model.iter().enumerate().flat_map(|(v, &a)| enc.side(if a { 2 * v as u32 } else { 2 * v as u32 + 1 }));
    let pos = encode::topo(enc.nodes, enc.known.iter().chain(chosen).map(|e| (e.from, e.to)))?;
    let mut co: Vec<TxnId> = (0..n as TxnId).collect();
    co.sort_by_key(|&t| pos[encode::commit(t) as usize]);
    Some(co)
}

/// Shrinks the variables to a minimal unsatisfiable set and explains it.
fn refute(ctx: &witness::Ctx<'_>, enc: &Encoding, order: &[u32], deadline: Option<Instant>) -> Decided {
    let unsat = |vars: &[u32]| match solver::solve(&enc.instance(Some(vars), order), deadline).0 {
        Answer::Unsat => Some(true),
        Answer::Sat(_) => Some(false),
        Answer::Timeout => None,
    };
    let core = shrink((0..enc.pairs.len() as u32).collect(), unsat);
    match ctx.branches(enc, &core) {
        Some((b, partial)) => Decided::Invalid(b, partial),
        None => Decided::Unknown("prefix consistency: refuted, but a case of the refutation closed no cycle".into()),
    }
}

/// Deletion-based shrinking in halving chunks: drops every chunk whose
/// removal keeps the set unsatisfiable. On a timeout the set reached so far
/// (still unsatisfiable) is returned.
fn shrink(mut core: Vec<u32>, unsat: impl Fn(&[u32]) -> Option<bool>) -> Vec<u32> {
    let mut chunk = core.len().div_ceil(2).max(1);
    loop {
        let mut i = 0;
        while i < core.len() {
            let end = (i + chunk).min(core.len());
            let trial: Vec<u32> = core[..i].iter().chain(&core[end..]).copied().collect();
            match unsat(&trial) {
                Some(true) => core = trial,
                Some(false) => i = end,
                None => return core,
            }
        }
        if chunk == 1 {
            return core;
        }
        chunk = chunk.div_ceil(2);
    }
}
