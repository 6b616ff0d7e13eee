//! Exact checking of register histories: does *some* order of the writes
//! explain the history at a given level?
//!
//! Elle's register analysis only reports the cycles it can infer, so it
//! misses violations whose write order is not revealed by the reads. Deciding
//! serializability or snapshot isolation exactly is NP-complete, and this
//! module does it the way Cobra and PolySI do, with our own engine, after a
//! cheaper try:
//!
//! 0. [`serial`]: most histories are valid; a serial execution found by
//!    replaying the history (backtracking where greed goes wrong, see
//!    [`guess`]) and checked against the definition in one pass decides
//!    the level with no polygraph at all;
//! 1. [`txns`]: the transactions that may have committed, their external
//!    reads (resolved to writers by unique values) and final writes;
//! 2. [`polygraph`]: the known dependencies plus one binary constraint per
//!    pair of write chains of a key (read-modify-writes combined into
//!    chains), over the begin/commit graph that makes snapshot isolation a
//!    plain acyclicity question; under serializability the pairs of lone
//!    writers whose versions nobody reads are dropped (any topological
//!    order of the rest orders them);
//! 3. [`prune`]: constraints decided by reachability
//!    ([`crate::accel::reach`]), round after round; with repeated values,
//!    candidate writers of ambiguous reads that reachability rules out are
//!    removed and the check starts again on the narrowed history (a read
//!    left with one writer is a known dependency, which prunes more), as
//!    long as that removes many;
//! 4. the remaining constraints split by strongly connected component and
//!    decided in parallel by [`solver`], a CDCL solver with an incremental
//!    acyclicity theory;
//! 5. [`witness`]: a refutation explained as cycles over concrete
//!    transactions, split into cases over the open write orders;
//! 6. [`windows`]: when the whole polygraph needs more constraints than
//!    allowed, windows of consecutive transactions are checked instead, and
//!    one that no serial order explains refutes the history.
//!
//! A verdict is `Valid` only when an acyclic choice was found for every
//! component; a timeout yields `Unknown`, never `Valid`.

pub mod builder;
pub mod closure;
mod commit_order;
pub mod guess;
mod level;
mod model_order;
mod options;
pub mod polygraph;
pub mod progress;
pub mod prune;
pub mod serial;
pub mod snapshot;
pub mod solver;
#[cfg(test)]
mod testkit;
pub mod txns;
mod versions;
pub mod windows;
pub mod witness;

pub use level::{Level, OrderKind, Semantics, LEVELS};
pub use options::{ExactOptions, ExactOutcome, ExactStats, KnownOrder, KnownOrders, Verdict, WindowStats};
pub use polygraph::Dep;
pub use progress::ExactProgress;
use progress::Phase;

use crate::anomaly::{Branch, Refutation};
use crate::cycles::scc::{tarjan, Adjacency};
use crate::history::History;
use polygraph::{DepEdge, Polygraph};
use prune::{Ending, PruneOptions, Pruned};
use rayon::prelude::*;
use std::time::{Duration, Instant};
use witness::Ctx;

/// Checks `h` (a register history) at `level`.
///
/// A level is first tried with the stronger orders the history records
/// (realtime, then session order): real databases usually keep them, their
/// edges prune most constraints, and a history valid with them is valid
/// without. Only when that fails is the weaker (harder) problem solved as
/// stated. [`ExactOptions::timeout`] bounds the whole call: each stronger
/// attempt gets half of the time left, the level itself the rest.
pub fn check_level(h: &History, level: Level, opts: &ExactOptions) -> Result<ExactOutcome, txns::TxnsError> {
    check_level_knowing(h, level, opts, &[])
}

/// Whether the serial replay alone ([`serial`]) shows `h` valid at `level`:
/// `Some` (a valid outcome) when it finds a serial execution, `None` when it
/// does not (which proves nothing). Linear in the history on most valid
/// ones; the whole check uses it to answer, before any other checker, the
/// levels a serial execution with sessions implies.
pub fn proved_by_replay(
    h: &History,
    level: Level,
    opts: &ExactOptions,
) -> Result<Option<ExactOutcome>, txns::TxnsError> {
    Ok(serial_order_by_replay(h, level, opts)?.map(|(out, _)| out))
}

/// [`proved_by_replay`] on a short budget ([`QUICK_REPLAY_PER_TXN`] per
/// transaction), without [`ExactOptions::session_orders`]: the try that
/// spares computing those orders where a history almost always replays
/// without them (a live window, each round of `--follow`). `None` proves
/// nothing; the caller computes the orders and checks the level as usual,
/// having lost at most the short budget.
pub fn proved_by_quick_replay(
    h: &History,
    level: Level,
    opts: &ExactOptions,
) -> Result<Option<ExactOutcome>, txns::TxnsError> {
    let txns = txns::extract(h)?;
    let (realtime, sessions) = recorded_orders(h, &txns);
    let plain = ExactOptions { session_orders: None, ..opts.clone() };
    let n = u32::try_from(txns.len()).unwrap_or(u32::MAX);
    let budget = QUICK_REPLAY_PER_TXN.saturating_mul(n).max(QUICK_REPLAY_LEAST);
    Ok(replay(h, &txns, level, &plain, (realtime, sessions), budget).ok().map(|(out, _)| out))
}

/// The quick replay's budget per transaction: about three times what a
/// live window's replay takes (7 µs per transaction on windows of 7,000,
/// a loaded 2-core machine; 8 µs cut a third of them short), so that a
/// history it would pass is rarely cut short, and one it cannot pass costs
/// little beside the check that follows.
const QUICK_REPLAY_PER_TXN: Duration = Duration::from_micros(20);

/// The quick replay's least budget (small histories, a slow clock).
const QUICK_REPLAY_LEAST: Duration = Duration::from_millis(50);

/// [`proved_by_replay`] with the serial execution it found: the completion
/// ops of the transactions that may have committed, in an order that
/// explains `h` at `level` (and so at every weaker level: a serial
/// execution respecting session order is a commit order for each of them).
/// `--follow` uses it to tell which transaction wrote each key last.
pub fn serial_order_by_replay(
    h: &History,
    level: Level,
    opts: &ExactOptions,
) -> Result<Option<(ExactOutcome, Vec<crate::history::OpId>)>, txns::TxnsError> {
    let deadline = opts.timeout.and_then(|t| Instant::now().checked_add(t));
    let txns = txns::extract(h)?;
    let (realtime, sessions) = recorded_orders(h, &txns);
    let budget = serial_budget(deadline, txns.len());
    Ok(replay(h, &txns, level, opts, (realtime, sessions), budget).ok().map(|(out, order)| {
        let ops = match out.stats.serial_order.is_empty() {
            true => model_order::as_ops(h, &txns, level, &order),
            false => out.stats.serial_order.clone(),
        };
        (out, ops)
    }))
}

/// The serial replay at `level` (`recorded`: whether the history has
/// realtime and session order): the valid outcome with the serial order
/// found, or the time it took and its backtracks.
fn replay(
    h: &History,
    txns: &txns::Txns,
    level: Level,
    opts: &ExactOptions,
    (realtime, sessions): (bool, bool),
    budget: Duration,
) -> Result<(ExactOutcome, Vec<txns::TxnId>), (Duration, usize)> {
    if let Some(p) = opts.progress {
        p.enter(level, Phase::Build);
    }
    let t = Instant::now();
    let priority = prune::time_estimate(h, txns);
    let decided = serial::decide(
        h,
        txns,
        level.order,
        realtime,
        sessions,
        &serial::Search {
            priority: &priority,
            known: opts.known.as_ref().filter(|k| k.apply_to(level)),
            session_known: opts.session_orders.as_ref(),
            budget,
        },
    );
    let (rounds, order) = match decided {
        Ok(d) => (d.backtracks, d.order),
        Err(r) => return Err((t.elapsed(), r)),
    };
    if let Some(p) = opts.progress {
        p.leave();
    }
    let stats = ExactStats {
        txns: txns.len(),
        guess: t.elapsed(),
        guessed: true,
        serial: true,
        serial_backtracks: rounds,
        serial_order: match opts.keep_serial {
            true => model_order::as_ops(h, txns, level, &order),
            false => Vec::new(),
        },
        ..Default::default()
    };
    Ok((ExactOutcome { level, verdict: Verdict::Valid, stats }, order))
}

/// Like [`check_level`], skipping the stronger attempts that `refuted`
/// (levels already refuted for this history) shows would fail.
pub fn check_level_knowing(
    h: &History,
    level: Level,
    opts: &ExactOptions,
    refuted: &[Level],
) -> Result<ExactOutcome, txns::TxnsError> {
    // The timeout bounds the whole level, stronger attempts included: each
    // stronger attempt may take half of what is left, the level itself
    // the rest. A timeout too long for the clock to represent is no
    // deadline at all.
    let deadline = opts.timeout.and_then(|t| Instant::now().checked_add(t));
    let txns = txns::extract(h)?;
    // Stronger variants first: realtime (when the history has it), then
    // session order. Their extra edges prune most constraints, and at
    // realtime levels far-apart writers need no constraint at all.
    // An attempt whose order adds no edge to the next weaker one's is the
    // same problem again (every transaction its own process; every
    // transaction concurrent with every other): it is skipped.
    let (realtime, sessions) = recorded_orders(h, &txns);
    // Most histories are valid, and a serial execution found by replaying
    // them decides the level in linear time, before any polygraph (whose
    // constraints are quadratic in the writers of a hot key) is built.
    let mut serial_time = Duration::ZERO;
    let mut serial_backtracks = 0;
    if opts.serial_first {
        match replay(h, &txns, level, opts, (realtime, sessions), serial_budget(deadline, txns.len())) {
            Ok((valid, _)) => return Ok(valid),
            Err((time, rounds)) => (serial_time, serial_backtracks) = (time, rounds),
        }
    }
    let stronger = level::attempts(level, realtime, sessions);
    for attempt in stronger {
        let order = attempt.order;
        if refuted.iter().any(|&r| attempt.implies(r)) {
            continue;
        }
        let half = deadline.map(|d| {
            let now = Instant::now();
            now + d.saturating_duration_since(now) / 2
        });
        // Only a `Valid` answer of a stronger attempt is used, and extra
        // known edges can only turn valid into invalid, so the orders that
        // hold at `level` may serve the attempt whatever its order.
        let widened;
        let attempt_opts = match &opts.known {
            Some(k) if k.apply_to(level) && !k.apply_to(attempt) => {
                widened = ExactOptions { known: Some(KnownOrders { order, ..k.clone() }), ..opts.clone() };
                &widened
            }
            _ => opts,
        };
        let mut out = check_exactly(h, &txns, attempt, attempt_opts, half);
        out.stats.guess += serial_time;
        out.stats.serial_backtracks = serial_backtracks;
        if out.verdict == Verdict::Valid {
            if let Some(p) = opts.progress {
                p.leave();
            }
            return Ok(ExactOutcome { level, ..out });
        }
    }
    let mut out = check_exactly(h, &txns, level, opts, deadline);
    out.stats.guess += serial_time;
    out.stats.serial_backtracks = serial_backtracks;
    if out.stats.over_limit {
        out = refute_by_window(h, &txns, level, opts, deadline, out);
    }
    // A refutation should explain every write order it uses; the extra
    // known orders come without an explanation here, so a refutation that
    // uses one is searched again without them (the verdict stays: the
    // orders hold in every explanation, and a second search that does not
    // finish leaves the first refutation standing).
    if let (Verdict::Invalid(r), Some(k)) = (&out.verdict, &opts.known) {
        if k.apply_to(level) && uses_known_orders(r, k) {
            let plain = ExactOptions { known: None, ..opts.clone() };
            let again = check_exactly(h, &txns, level, &plain, deadline);
            if matches!(again.verdict, Verdict::Invalid(_)) {
                let mut stats = again.stats;
                stats.add_times(&out.stats);
                stats.known_orders = out.stats.known_orders;
                stats.known_orders_new = out.stats.known_orders_new;
                out = ExactOutcome { stats, ..again };
            }
        }
    }
    if let Some(p) = opts.progress {
        p.leave();
    }
    Ok(out)
}

/// The whole polygraph was over the constraint limit (`out`, unknown):
/// the refutation of a window ([`windows`]) if one has none, else `out`,
/// with what the search did in its statistics either way.
fn refute_by_window(
    h: &History,
    txns: &txns::Txns,
    level: Level,
    opts: &ExactOptions,
    deadline: Option<Instant>,
    mut out: ExactOutcome,
) -> ExactOutcome {
    if let Some(p) = opts.progress {
        p.enter(level, Phase::Witness);
    }
    let (found, st) = windows::refute(h, txns, level, opts, deadline);
    out.stats.windows = Some(st);
    match found {
        Some(w) => {
            out.stats.witness += w.stats.witness;
            out.stats.solve += w.stats.solve;
            ExactOutcome { verdict: w.verdict, ..out }
        }
        None => out,
    }
}

/// How long the replays that look for a serial execution of `txns`
/// transactions may take: a quarter of the time left, between one second
/// and a minute, or [`SERIAL_PER_TXN`] per transaction where that is more.
/// A replay that finds one decides the level at once; one that does not
/// leaves the polygraph three quarters of the time.
fn serial_budget(deadline: Option<Instant>, txns: usize) -> Duration {
    let left = deadline.map_or(Duration::from_secs(240), |d| d.saturating_duration_since(Instant::now()));
    let most = Duration::from_secs(60).max(SERIAL_PER_TXN.saturating_mul(u32::try_from(txns).unwrap_or(u32::MAX)));
    (left / 4).clamp(Duration::from_secs(1), most)
}

/// The serial replays' budget per transaction on the largest histories:
/// a valid history's replay takes about 4 µs per transaction at 1M and 2M
/// (rw-register, PolySI's shape, a loaded 2-core machine), a little more as
/// it grows, so a minute is too short from about 10M on, and the polygraph
/// it would spare takes far longer and far more memory.
const SERIAL_PER_TXN: Duration = Duration::from_micros(15);

/// Whether the history records realtime order (it has invocations, and
/// they relate two of `txns`) and session order.
fn recorded_orders(h: &History, txns: &txns::Txns) -> (bool, bool) {
    let realtime = h.ops.iter().any(|o| o.is_invoke()) && has_realtime_order(h, txns);
    (realtime, has_session_order(txns))
}

/// Whether some process ran two of `txns` (session order has an edge).
fn has_session_order(txns: &txns::Txns) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    txns.process.iter().any(|p| !seen.insert(*p))
}

/// Whether one of `txns` completed before another was invoked (realtime
/// order has an edge beyond session order). A transaction without an
/// invocation counts as invoked at the start of the history, so it is
/// never after anything.
fn has_realtime_order(h: &History, txns: &txns::Txns) -> bool {
    let mut first_done = u32::MAX;
    let mut last_invoke = 0u32;
    for &o in &txns.op {
        let op = h.op(o);
        if op.op_type == crate::history::OpType::Ok {
            first_done = first_done.min(o);
        }
        if op.pair != crate::history::NONE {
            last_invoke = last_invoke.max(op.pair);
        }
    }
    first_done < last_invoke
}

/// Whether a refutation's cycles take a ww step that is one of `k`'s
/// orders.
fn uses_known_orders(r: &Refutation, k: &KnownOrders) -> bool {
    let facts: rustc_hash::FxHashSet<(u32, u32, u32)> = k.orders.iter().map(|o| (o.from, o.to, o.key.0)).collect();
    let cycles = r.branches.iter().map(|b| &b.cycle).chain(r.derived.iter().map(|d| &d.because));
    cycles.into_iter().any(|c| {
        c.steps.iter().enumerate().any(|(i, s)| match s {
            crate::anomaly::Step::Ww { key, .. } => {
                let (a, b) = (c.ops[i], c.ops[(i + 1) % c.ops.len()]);
                facts.contains(&(a, b, key.0))
            }
            _ => false,
        })
    })
}

/// The root of `x` in the union-find forest `p` (`p[x] == x` at a root),
/// halving paths on the way.
pub(crate) fn uf_find(p: &mut [u32], mut x: u32) -> u32 {
    while p[x as usize] != x {
        p[x as usize] = p[p[x as usize] as usize];
        x = p[x as usize];
    }
    x
}

/// Rounds of narrowing the candidates of ambiguous reads at most.
const MAX_NARROWING: u32 = 16;

/// Narrow again only when at least one read in this many loses a candidate.
const NARROW_WORTH: usize = 10;

/// Checks `h`, whose transactions are `txns`, at exactly `level`, giving up
/// at `deadline`.
///
/// With reads of repeated values, the candidates the known and derived
/// edges rule out ([`prune::dead_candidates`]) are removed and the check
/// starts again on the narrowed transactions: a read left with one
/// candidate becomes a known dependency, which prunes more write orders,
/// which rules out more candidates, until nothing changes. Narrowing only
/// removes impossible explanations, so a `Valid` verdict of the narrowed
/// history holds for the original. Any other verdict comes from the
/// original transactions, so that a refutation cites each read with every
/// writer it could have come from.
fn check_exactly(
    h: &History,
    txns: &txns::Txns,
    level: Level,
    opts: &ExactOptions,
    deadline: Option<Instant>,
) -> ExactOutcome {
    let mut narrowed: Option<txns::Txns> = None;
    let mut before = ExactStats::default();
    for _ in 0..MAX_NARROWING {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let cur = narrowed.as_ref().unwrap_or(txns);
        match check_once(h, cur, level, opts, deadline, true) {
            Attempt::Narrowed(t, stats) => {
                before.add_times(&stats);
                before.narrowing_passes += 1;
                narrowed = Some(t);
            }
            Attempt::Done(mut out, ruled_out) => {
                out.stats.add_times(&before);
                if (narrowed.is_none() && !ruled_out) || out.verdict == Verdict::Valid {
                    return out;
                }
                narrowed = None;
                break;
            }
        }
    }
    // Narrowing passes ran out: check what they left, without narrowing.
    let late = || deadline.is_some_and(|d| Instant::now() >= d);
    // Out of time before any component was solved: say so, and how far
    // the narrowing got.
    let narrowing_timeout = |before: &ExactStats| {
        Verdict::Unknown(format!(
            "the exact check did not finish within the time limit while narrowing the candidate writers of \
             reads: the write orders pruning left open were undecided after {} narrowing pass{}",
            before.narrowing_passes,
            if before.narrowing_passes == 1 { "" } else { "es" }
        ))
    };
    if late() {
        let verdict = narrowing_timeout(&before);
        return ExactOutcome { level, verdict, stats: before };
    }
    if let Some(t) = &narrowed {
        if let Attempt::Done(mut out, _) = check_once(h, t, level, opts, deadline, false) {
            if out.verdict == Verdict::Valid {
                out.stats.add_times(&before);
                return out;
            }
        }
    }
    // Without narrowing a pass always ends with a verdict.
    if late() {
        let verdict = narrowing_timeout(&before);
        return ExactOutcome { level, verdict, stats: before };
    }
    let mut out = match check_once(h, txns, level, opts, deadline, false) {
        Attempt::Done(out, _) => out,
        Attempt::Narrowed(_, stats) => {
            ExactOutcome { level, verdict: Verdict::Unknown("the exact check did not finish".into()), stats }
        }
    };
    out.stats.add_times(&before);
    out
}

/// Whether narrowing by `dead` pays: a pass that would shrink the
/// candidates of few reads costs more than it saves.
fn worth_narrowing(dead: &[Vec<bool>]) -> bool {
    let shrinking = dead.iter().filter(|c| c.iter().any(|&x| x)).count();
    shrinking > 0 && shrinking * NARROW_WORTH >= dead.len()
}

/// What one pass of [`check_once`] ended with.
enum Attempt {
    /// A verdict, and whether the solver was told of candidates ruled out
    /// (then a refutation does not cite them).
    Done(ExactOutcome, bool),
    /// Candidates were ruled out: check these transactions instead.
    Narrowed(txns::Txns, ExactStats),
}

/// One pass of the exact check over `txns`; with `narrow`, stops with the
/// narrowed transactions as soon as pruning rules out a candidate.
///
/// The steps: the polygraph ([`build_phase`]); the serial replay checked
/// against it; narrowing by what the known graph alone rules out
/// ([`narrowed_by_known`]); pruning; the verdict from how pruning ended
/// ([`decide_pruned`]); and the caveats that turn a verdict into
/// `unknown` ([`with_caveats`]).
fn check_once(
    h: &History,
    txns: &txns::Txns,
    level: Level,
    opts: &ExactOptions,
    deadline: Option<Instant>,
    narrow: bool,
) -> Attempt {
    let start = Instant::now();
    let mut stats = ExactStats::default();
    enter(opts, level, Phase::Build);
    let priority = prune::time_estimate(h, txns);
    let mut engine = match crate::accel::Engine::new(opts.accel, 2 * txns.len()) {
        Ok(e) => e,
        Err(e) => {
            stats.accel.gpu_error = Some(e.to_string());
            let verdict = Verdict::Unknown(e.to_string());
            return Attempt::Done(ExactOutcome { level, verdict, stats }, false);
        }
    };
    let (g, known_reach) =
        match build_phase(h, txns, level, opts, &priority, &mut engine, (start, deadline), &mut stats) {
            Ok(built) => built,
            Err(verdict) => return Attempt::Done(ExactOutcome { level, verdict, stats }, false),
        };
    if replay_decides(h, txns, &g, level, opts, &priority, &mut stats) {
        return Attempt::Done(ExactOutcome { level, verdict: Verdict::Valid, stats }, false);
    }
    enter(opts, level, Phase::Prune);
    let t = Instant::now();
    if narrow && opts.prune {
        if let Some(t2) = narrowed_by_known(&g, txns, known_reach.as_ref()) {
            stats.prune = t.elapsed();
            return Attempt::Narrowed(t2, stats);
        }
    }
    let prune_opts = PruneOptions { reach_bytes: opts.reach_bytes, enabled: opts.prune, deadline };
    let pr = prune::prune(&g, &priority, prune_opts, known_reach, &mut engine);
    stats.prune = t.elapsed();
    record_pruned(&g, &pr, &mut stats);
    let ctx = Ctx { h, txns, g: &g, recs: &pr.edges, derivations: &pr.derivations, adj: Default::default() };
    let open = Open { priority: &priority, level, opts, deadline, narrow };
    let (verdict, ruled_out) = decide_pruned(&ctx, &pr, &open, &mut engine, &mut stats);
    let verdict = with_caveats(verdict, txns, &engine);
    stats.accel = engine.stats;
    Attempt::Done(ExactOutcome { level, verdict, stats }, ruled_out)
}

/// Whether the serial replay decides `level` valid before pruning (the
/// time it took, and with `keep_serial` the order, go into `stats`).
///
/// A serial order found by replaying the history decides most valid
/// histories without pruning or search. It is checked against the
/// polygraph like a solver's model, so a wrong guess costs time, never a
/// verdict; when it is not a serial execution it still seeds the solver.
fn replay_decides(
    h: &History,
    txns: &txns::Txns,
    g: &Polygraph,
    level: Level,
    opts: &ExactOptions,
    priority: &[u32],
    stats: &mut ExactStats,
) -> bool {
    let t = Instant::now();
    let order = g.choices.is_empty().then(|| replay_order(g, txns, &g.known, priority)).flatten();
    stats.guess = t.elapsed();
    let Some(order) = order else { return false };
    stats.guessed = true;
    if opts.keep_serial {
        (stats.serial_order, stats.serial_open) = model_order::from_replay(h, txns, g, level, &g.known, &order);
    }
    true
}

/// Records in `stats` what pruning left: its rounds, and the constraints
/// and their edges still open.
fn record_pruned(g: &Polygraph, pr: &Pruned, stats: &mut ExactStats) {
    stats.rounds = pr.rounds;
    stats.constraints_after = pr.open.len();
    stats.constraint_edges_after = side_edge_count(g, pr.open.iter().copied());
}

/// Publishes that the check of `level` entered phase `p`.
fn enter(opts: &ExactOptions, level: Level, p: Phase) {
    if let Some(progress) = opts.progress {
        progress.enter(level, p);
    }
}

/// The transactions narrowed by the candidates the known graph alone rules
/// out, when that pays ([`worth_narrowing`]): narrowing at once, before any
/// pruning round, lets pruning start from more known edges.
fn narrowed_by_known(g: &Polygraph, txns: &txns::Txns, known_reach: Option<&prune::KnownReach>) -> Option<txns::Txns> {
    if g.choices.is_empty() {
        return None;
    }
    let dead = prune::dead_candidates_by(g, &known_reach?.reach);
    if worth_narrowing(&dead) {
        txns.restrict(&dead)
    } else {
        None
    }
}

/// The verdict after pruning: a refutation when pruning closed a cycle or
/// blocked both sides of a constraint, else the search over what it left
/// open ([`decide_open`]). Also returns whether candidates were ruled out.
fn decide_pruned(
    ctx: &Ctx<'_>,
    pr: &Pruned,
    open: &Open<'_>,
    engine: &mut crate::accel::Engine,
    stats: &mut ExactStats,
) -> (Verdict, bool) {
    let (level, opts) = (open.level, open.opts);
    match pr.ending {
        Ending::Cycle { round } => {
            enter(opts, level, Phase::Witness);
            let t = Instant::now();
            let r = refute_known_cycle(ctx, round, level);
            stats.witness = t.elapsed();
            (r, false)
        }
        Ending::BothSides { constraint, blocked, round } => {
            enter(opts, level, Phase::Witness);
            let t = Instant::now();
            let r = refute_both_sides(ctx, constraint, blocked, round, level);
            stats.witness = t.elapsed();
            (r, false)
        }
        Ending::Open => decide_open(ctx, pr, open, engine, stats),
    }
}

/// `verdict`, unless a refutation rests on reads that `:info` transactions
/// not known to have committed could explain, or the GPU failed under
/// `--gpu on` (its failure is the check's error, whatever the CPU that took
/// over found): then `unknown` with the reason.
fn with_caveats(verdict: Verdict, txns: &txns::Txns, engine: &crate::accel::Engine) -> Verdict {
    let verdict = match verdict {
        Verdict::Invalid(_) if txns.uncertain_info > 0 => Verdict::Unknown(format!(
            "no explanation was found, but {} reads of repeated values could have come from :info \
             transactions not known to have committed, so the refutation is not certain",
            txns.uncertain_info
        )),
        v => v,
    };
    match engine.failed() {
        Some(e) => Verdict::Unknown(format!("the GPU failed (--gpu on): {e}")),
        None => verdict,
    }
}

/// The polygraph of `txns` at `level` with its statistics, its
/// constraints between unread lone writers dropped: or the `unknown`
/// verdict when it needs more constraints than allowed or the time ran out
/// while it was built (`start`: when the attempt began, which the build
/// time counts from).
#[allow(clippy::too_many_arguments)]
fn build_phase(
    h: &History,
    txns: &txns::Txns,
    level: Level,
    opts: &ExactOptions,
    priority: &[u32],
    engine: &mut crate::accel::Engine,
    (start, deadline): (Instant, Option<Instant>),
    stats: &mut ExactStats,
) -> Result<(Polygraph, Option<prune::KnownReach>), Verdict> {
    let filter = opts.prune.then_some(builder::PairFilter { priority, reach_bytes: opts.reach_bytes, engine });
    let built = builder::build_with(h, txns, level, opts.max_constraints, filter, opts.known.as_ref());
    stats.txns = txns.len();
    let builder::Built { graph: mut g, known_reach, known_orders, known_orders_new } = match built {
        Ok(b) => b,
        Err(e) => {
            stats.constraints = e.constraints as usize;
            stats.over_limit = true;
            stats.build = start.elapsed();
            return Err(Verdict::Unknown(format!(
                "the history needs at least {} write-order constraints that its known dependencies leave open, \
                 more than the limit of {} (key {} alone needs at least {}); raise --max-constraints to try anyway",
                e.constraints,
                opts.max_constraints,
                h.key(e.key),
                e.key_constraints
            )));
        }
    };
    stats.dropped_reads = txns.dropped_reads;
    stats.known_orders = known_orders;
    stats.known_orders_new = known_orders_new;
    stats.constraints = g.constraints.len();
    drop_unread_pairs(&mut g);
    stats.known_edges = g.known.len();
    stats.unread_pairs = stats.constraints - g.constraints.len();
    stats.constraint_edges = side_edge_count(&g, 0..g.constraints.len() as u32);
    stats.build = start.elapsed();
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return Err(Verdict::Unknown(format!(
            "the time limit ran out while building the polygraph ({} constraints over {} transactions)",
            stats.constraints, stats.txns
        )));
    }
    Ok((g, known_reach))
}

/// What [`decide_open`] needs beyond the pruned polygraph.
struct Open<'a> {
    priority: &'a [u32],
    level: Level,
    opts: &'a ExactOptions,
    deadline: Option<Instant>,
    narrow: bool,
}

/// Pruning left constraints open: the candidates pruning rules out, a
/// replay under the edges pruning derived (a serial execution decides the
/// level; otherwise its order seeds the solver), then the solver over the
/// open components. Returns the verdict and whether candidates were ruled
/// out (the caller may narrow and search again).
fn decide_open(
    ctx: &Ctx<'_>,
    pr: &Pruned,
    open: &Open<'_>,
    engine: &mut crate::accel::Engine,
    stats: &mut ExactStats,
) -> (Verdict, bool) {
    let Open { priority, level, opts, deadline, narrow } = *open;
    let (g, txns) = (ctx.g, ctx.txns);
    let t = Instant::now();
    let dead =
        if narrow && opts.prune { prune::dead_candidates(g, pr, priority, opts.reach_bytes, engine) } else { None };
    stats.prune += t.elapsed();
    // A read with no candidate left is refuted: leave the
    // explanation to the search over every candidate.
    let dead = dead.filter(|d| d.iter().all(|c| c.iter().any(|&x| !x)));
    let ruled_out = dead.as_ref().is_some_and(|d| d.iter().flatten().any(|&x| x));
    // Replay again, now under the edges pruning derived too (they
    // order writers the known edges alone leave open): a serial
    // execution decides the level; otherwise its order is the
    // solver's first order.
    let t = Instant::now();
    let edges: Vec<DepEdge> = pr.edges.iter().map(|r| r.e).collect();
    let mut guessed = if g.choices.is_empty() { guess::serial_order(txns, &edges, priority) } else { None };
    let mut holds = guessed.as_ref().is_some_and(|gs| gs.replayed && serial_order_holds(g, &edges, &gs.order));
    // A greedy replay lost in some corner often finds its way by
    // backtracking now that the orders pruning forced are edges it
    // cannot get wrong (the backtracking replay before the polygraph
    // had only the known ones).
    if !holds && g.choices.is_empty() && opts.serial_first {
        let until = Instant::now() + serial_budget(deadline, txns.len());
        match serial::backtrack_under(txns, &edges, priority, until) {
            Ok((order, b)) => {
                stats.pruned_backtracks += b;
                holds = serial_order_holds(g, &edges, &order);
                guessed = Some(guess::Guess { order, replayed: true });
            }
            Err(b) => stats.pruned_backtracks += b,
        }
    }
    stats.guess += t.elapsed();
    let verdict = if holds {
        stats.guessed = true;
        if let (true, Some(gs)) = (opts.keep_serial, &guessed) {
            (stats.serial_order, stats.serial_open) =
                model_order::from_replay(ctx.h, txns, g, level, &edges, &gs.order);
        }
        Verdict::Valid
    } else {
        let seeded = guessed.as_ref().and_then(|gs| {
            let mut rank = vec![0u32; g.n];
            for (i, &t) in gs.order.iter().enumerate() {
                rank[t as usize] = i as u32;
            }
            prune::positions(g, edges.iter().copied(), &rank)
        });
        let pos = seeded.as_deref().unwrap_or(&pr.pos);
        solve_components(ctx, pr, pos, dead, level, deadline, opts, stats)
    };
    (verdict, ruled_out)
}

/// Under serializability, drops the constraints between two lone writers
/// (chains of one transaction) of a key whose versions nobody reads, not
/// even as a candidate: each side of such a constraint is the single ww
/// edge between the two writers. Whatever the other constraints choose,
/// the resulting graph, when acyclic, has a topological order of
/// transactions, and ordering every dropped pair by it adds only forward
/// edges; so the history has an acyclic choice with the dropped pairs
/// exactly when it has one without them. (Under snapshot isolation the
/// begin/commit graph also forbids two such writers to overlap, so the
/// pair stays.) A refutation of the rest refutes the whole, as dropping
/// constraints only removes edges.
fn drop_unread_pairs(g: &mut Polygraph) {
    if g.semantics != Semantics::Serializable || g.constraints.is_empty() {
        return;
    }
    let lone = |c: u32| g.chains[c as usize].len == 1 && !g.tail_constraints.contains_key(&c);
    let mut buf = Vec::new();
    let mut single = |c: &polygraph::Constraint, a_first: bool| {
        g.side(c, a_first, &mut buf);
        buf.len() == 1
    };
    let keep: Vec<bool> =
        g.constraints.iter().map(|c| !(lone(c.a) && lone(c.b) && single(c, true) && single(c, false))).collect();
    if keep.iter().all(|&k| k) {
        return;
    }
    let mut new_index = vec![u32::MAX; keep.len()];
    let mut next = 0u32;
    for (i, &k) in keep.iter().enumerate() {
        if k {
            new_index[i] = next;
            next += 1;
        }
    }
    let mut i = 0;
    g.constraints.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    for cs in g.tail_constraints.values_mut() {
        cs.retain(|&c| keep[c as usize]);
        for c in cs.iter_mut() {
            *c = new_index[*c as usize];
        }
    }
}

fn side_edge_count(g: &Polygraph, cs: impl Iterator<Item = u32>) -> usize {
    let mut buf = Vec::new();
    let mut n = 0;
    for c in cs {
        for side in [true, false] {
            g.side(&g.constraints[c as usize], side, &mut buf);
            n += buf.len();
        }
    }
    n
}

fn refutation(ctx: &Ctx<'_>, level: Level, branches: Vec<Branch>, derived: Vec<usize>, partial: bool) -> Verdict {
    let mut justified = Vec::new();
    ctx.justify(derived, &mut justified);
    Verdict::Invalid(Box::new(Refutation { model: level.model().to_string(), branches, derived: justified, partial }))
}

/// The known and derived edges of rounds `<= round` form a cycle.
fn refute_known_cycle(ctx: &Ctx<'_>, round: u32, level: Level) -> Verdict {
    let g = ctx.g;
    let edges: Vec<DepEdge> = ctx.recs.iter().filter(|r| r.round <= round).map(|r| r.e).collect();
    let (offsets, targets) = prune::bc_csr(g, edges.iter().copied());
    // Nodes Kahn cannot remove lie on or after a cycle; walking predecessors
    // among them must revisit a node.
    let n = offsets.len() - 1;
    let mut indeg = vec![0u32; n];
    for &t in &targets {
        indeg[t as usize] += 1;
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut removed = vec![false; n];
    while let Some(v) = stack.pop() {
        removed[v as usize] = true;
        for &t in &targets[offsets[v as usize] as usize..offsets[v as usize + 1] as usize] {
            indeg[t as usize] -= 1;
            if indeg[t as usize] == 0 {
                stack.push(t);
            }
        }
    }
    // Every remaining node has a remaining predecessor; walking predecessors
    // must revisit a node, which then lies on a cycle.
    let mut pred = vec![u32::MAX; n];
    for a in 0..n {
        if removed[a] {
            continue;
        }
        for &b in &targets[offsets[a] as usize..offsets[a + 1] as usize] {
            if !removed[b as usize] {
                pred[b as usize] = a as u32;
            }
        }
    }
    let Some(mut x) = (0..n as u32).find(|&v| !removed[v as usize]) else {
        return Verdict::Unknown("the known graph is cyclic but no cycle could be extracted".into());
    };
    let mut visited = vec![false; n];
    while !visited[x as usize] && pred[x as usize] != u32::MAX {
        visited[x as usize] = true;
        x = pred[x as usize];
    }
    // Close the cycle through a dependency edge entering x (or, when x is a
    // commit node entered from its own begin node, entering that).
    let t = x / 2;
    for (i, r) in ctx.recs.iter().enumerate() {
        if r.round > round {
            continue;
        }
        let (a, b) = g.bc(&r.e);
        if removed[a as usize] || !(b == x || (x % 2 == 1 && b == polygraph::begin(t))) {
            continue;
        }
        if let Some((cyc, mut derived)) = ctx.close(r.e, &[], round) {
            if r.why != u32::MAX {
                derived.push(i);
            }
            let branch = Branch { assume: Vec::new(), reads: Vec::new(), cycle: ctx.cycle(&cyc) };
            return refutation(ctx, level, vec![branch], derived, false);
        }
    }
    Verdict::Unknown("the known graph is cyclic but no cycle could be extracted".into())
}

/// Both sides of a constraint close cycles.
fn refute_both_sides(ctx: &Ctx<'_>, constraint: u32, blocked: [DepEdge; 2], round: u32, level: Level) -> Verdict {
    let mut branches = Vec::new();
    let mut derived = Vec::new();
    for (side, e) in [(true, blocked[0]), (false, blocked[1])] {
        match ctx.close(e, &[], round) {
            Some((cyc, d)) => {
                derived.extend(d);
                branches.push(Branch {
                    assume: vec![ctx.write_order(constraint, side)],
                    reads: Vec::new(),
                    cycle: ctx.cycle(&cyc),
                });
            }
            None => return Verdict::Unknown("a pruning conflict could not be explained".into()),
        }
    }
    refutation(ctx, level, branches, derived, false)
}

/// A group of begin/commit nodes and the constraints and ambiguous reads
/// among them.
struct Component {
    nodes: Vec<u32>,
    vars: Vec<u32>,
    /// Indices into [`Polygraph::choices`].
    choices: Vec<u32>,
}

struct Csr {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adjacency for Csr {
    fn len(&self) -> usize {
        self.offsets.len() - 1
    }
    fn degree(&self, v: u32) -> usize {
        (self.offsets[v as usize + 1] - self.offsets[v as usize]) as usize
    }
    fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
        Some(self.targets[self.offsets[v as usize] as usize + i])
    }
}

/// The edges of reads with several candidate writers, per choice and
/// candidate: `fixed` hold whenever the candidate is chosen (its wr edge,
/// its rw edge inside a chain, and the rw edges of constraints pruning
/// decided), `cond` only when an open constraint also takes a side
/// (constraint, side, edge).
#[derive(Default)]
struct ChoiceEdges {
    fixed: Vec<Vec<Vec<DepEdge>>>,
    /// Candidates the known and derived edges rule out
    /// ([`prune::dead_candidates`]).
    dead: Vec<Vec<bool>>,
    cond: Vec<Vec<Vec<(u32, bool, DepEdge)>>>,
}

fn choice_edges(g: &Polygraph, pr: &Pruned, dead: Option<Vec<Vec<bool>>>) -> ChoiceEdges {
    let mut ce = ChoiceEdges::default();
    if g.choices.is_empty() {
        return ce;
    }
    ce.dead = dead.unwrap_or_else(|| g.choices.iter().map(|ch| vec![false; ch.cands.len()]).collect());
    let mut decided: Vec<Option<bool>> = vec![None; g.constraints.len()];
    for d in &pr.derivations {
        decided[d.constraint as usize] = Some(d.a_first);
    }
    for (j, ch) in g.choices.iter().enumerate() {
        let (mut fixed, mut cond) = (Vec::new(), Vec::new());
        for (i, cand) in ch.cands.iter().enumerate() {
            let mut f = Vec::new();
            let mut c = Vec::new();
            g.cand_edges(j as u32, i, &mut f);
            for &k in g.tail_constraints.get(&cand.tail_of).into_iter().flatten() {
                match decided[k as usize] {
                    Some(a) => f.extend(g.cond_edge(j as u32, i, k, a)),
                    None => {
                        for a in [true, false] {
                            c.extend(g.cond_edge(j as u32, i, k, a).map(|e| (k, a, e)));
                        }
                    }
                }
            }
            fixed.push(f);
            cond.push(c);
        }
        ce.fixed.push(fixed);
        ce.cond.push(cond);
    }
    ce
}

/// Splits the open constraints and the ambiguous reads by strongly
/// connected component of the graph holding every known edge, both sides
/// of every open constraint and every edge any candidate writer could
/// bring: a cycle lies within one component, so components are
/// independent. A read of which some candidate brings no edge inside a
/// component is settled by that candidate (returned per choice, `usize::MAX`
/// for the others); a constraint one of whose conditional edges lies inside
/// a component joins the read's component.
fn components(ctx: &Ctx<'_>, open: &[u32], ce: &ChoiceEdges) -> (Vec<Component>, Vec<usize>) {
    let comps = open_sccs(ctx, open, ce);
    let inside = |e: &DepEdge| {
        let (a, b) = ctx.g.bc(e);
        let (ca, cb) = (comps.comp_of[a as usize], comps.comp_of[b as usize]);
        (ca != u32::MAX && ca == cb).then_some(ca)
    };
    // Union components a single constraint (or read) touches, so that a
    // variable lives in exactly one sub-problem.
    let mut parent: Vec<u32> = (0..comps.comps.len() as u32).collect();
    let mut home = constraint_homes(ctx.g, open, &inside, &mut parent);
    let (choice_home, picks) = choice_homes(open, ce, &inside, &mut parent, &mut home);
    let out = gather(&comps, open, &home, &choice_home, &mut parent);
    (out, picks)
}

/// The strongly connected components of the begin/commit graph holding
/// every known edge, both sides of every `open` constraint and every edge
/// a live candidate writer could bring.
fn open_sccs(ctx: &Ctx<'_>, open: &[u32], ce: &ChoiceEdges) -> crate::cycles::scc::Components {
    let g = ctx.g;
    let mut all: Vec<DepEdge> = ctx.recs.iter().map(|r| r.e).collect();
    let mut buf = Vec::new();
    for &c in open {
        for side in [true, false] {
            g.side(&g.constraints[c as usize], side, &mut buf);
            all.extend_from_slice(&buf);
        }
    }
    for j in 0..ce.fixed.len() {
        for i in (0..ce.fixed[j].len()).filter(|&i| !ce.dead[j][i]) {
            all.extend_from_slice(&ce.fixed[j][i]);
            all.extend(ce.cond[j][i].iter().map(|x| x.2));
        }
    }
    let (offsets, targets) = prune::bc_csr(g, all.iter().copied());
    drop(all);
    tarjan(&Csr { offsets, targets }, |_| true)
}

/// Joins `comp` into the union-find set `home` stands for (`u32::MAX`:
/// none yet), and makes `home` its root.
fn join(parent: &mut [u32], home: &mut u32, comp: u32) {
    let r = uf_find(parent, comp);
    if *home == u32::MAX {
        *home = r;
    } else {
        let h = uf_find(parent, *home);
        if h != r {
            parent[h as usize] = r;
        }
        *home = r;
    }
}

/// Per open constraint, the union of the components its sides' edges lie
/// inside (`u32::MAX`: none; the constraint decides nothing).
fn constraint_homes(
    g: &Polygraph,
    open: &[u32],
    inside: &impl Fn(&DepEdge) -> Option<u32>,
    parent: &mut [u32],
) -> Vec<u32> {
    let mut buf = Vec::new();
    let mut home: Vec<u32> = vec![u32::MAX; open.len()];
    for (i, &c) in open.iter().enumerate() {
        for side in [true, false] {
            g.side(&g.constraints[c as usize], side, &mut buf);
            for e in &buf {
                if let Some(k) = inside(e) {
                    join(parent, &mut home[i], k);
                }
            }
        }
    }
    home
}

/// Per ambiguous read, the union of the components its candidates' edges
/// lie inside, joining the constraints whose conditional edges do; or the
/// candidate that settles it (one bringing no edge inside a component),
/// returned per read (`usize::MAX` where none does).
fn choice_homes(
    open: &[u32],
    ce: &ChoiceEdges,
    inside: &impl Fn(&DepEdge) -> Option<u32>,
    parent: &mut [u32],
    home: &mut [u32],
) -> (Vec<u32>, Vec<usize>) {
    let open_index: rustc_hash::FxHashMap<u32, usize> =
        if ce.fixed.is_empty() { Default::default() } else { open.iter().enumerate().map(|(i, &c)| (c, i)).collect() };
    let mut choice_home: Vec<u32> = vec![u32::MAX; ce.fixed.len()];
    let mut picks: Vec<usize> = vec![usize::MAX; ce.fixed.len()];
    for j in 0..ce.fixed.len() {
        let free = (0..ce.fixed[j].len()).find(|&i| {
            !ce.dead[j][i]
                && !ce.fixed[j][i].iter().any(|e| inside(e).is_some())
                && !ce.cond[j][i].iter().any(|x| inside(&x.2).is_some())
        });
        if let Some(i) = free {
            picks[j] = i;
            continue;
        }
        for i in (0..ce.fixed[j].len()).filter(|&i| !ce.dead[j][i]) {
            for e in &ce.fixed[j][i] {
                if let Some(k) = inside(e) {
                    join(parent, &mut choice_home[j], k);
                }
            }
            for &(c, _, e) in &ce.cond[j][i] {
                if let Some(k) = inside(&e) {
                    join(parent, &mut choice_home[j], k);
                    if let Some(&oi) = open_index.get(&c) {
                        join(parent, &mut home[oi], k);
                    }
                }
            }
        }
    }
    (choice_home, picks)
}

/// One [`Component`] per union-find set that holds a constraint or a read,
/// with its nodes, in the order the sets are first met (constraints, then
/// reads).
fn gather(
    comps: &crate::cycles::scc::Components,
    open: &[u32],
    home: &[u32],
    choice_home: &[u32],
    parent: &mut Vec<u32>,
) -> Vec<Component> {
    let mut index: Vec<u32> = vec![u32::MAX; comps.comps.len()];
    let mut out: Vec<Component> = Vec::new();
    let mut root_of = |x: u32, parent: &mut Vec<u32>, out: &mut Vec<Component>| {
        let r = uf_find(parent, x) as usize;
        if index[r] == u32::MAX {
            index[r] = out.len() as u32;
            out.push(Component { nodes: Vec::new(), vars: Vec::new(), choices: Vec::new() });
        }
        index[r] as usize
    };
    for (i, &c) in open.iter().enumerate() {
        if home[i] != u32::MAX {
            let j = root_of(home[i], parent, &mut out);
            out[j].vars.push(c);
        }
    }
    for (j, &h) in choice_home.iter().enumerate() {
        if h != u32::MAX {
            let ci = root_of(h, parent, &mut out);
            out[ci].choices.push(j as u32);
        }
    }
    for (ci, nodes) in comps.comps.iter().enumerate() {
        let r = uf_find(parent, ci as u32) as usize;
        if index[r] != u32::MAX {
            out[index[r] as usize].nodes.extend_from_slice(nodes);
        }
    }
    out.retain(|c| !c.vars.is_empty() || !c.choices.is_empty());
    out
}

/// The solver instance of a component restricted to `vars` and `choices`
/// (subsets of its constraints and reads, by position). Variables: the
/// constraints first, then per read one variable per candidate ("read from
/// it") with the clause "at least one", then one variable per conditional
/// edge with the clause "this side and this candidate imply the edge".
/// Leaving a constraint out drops its conditional edges too, so a subset
/// never has more edges than the whole. Also returns, per read, its first
/// candidate variable.
fn instance(
    ctx: &Ctx<'_>,
    comp: &Component,
    vars: &[usize],
    choices: &[usize],
    pos: &[u32],
    ce: &ChoiceEdges,
) -> (solver::Instance, Vec<u32>) {
    let g = ctx.g;
    let mut local: rustc_hash::FxHashMap<u32, u32> = rustc_hash::FxHashMap::default();
    let mut nodes = comp.nodes.clone();
    nodes.sort_unstable_by_key(|&v| pos[v as usize]);
    for (i, &v) in nodes.iter().enumerate() {
        local.insert(v, i as u32);
    }
    let map = |e: &DepEdge| {
        let (a, b) = g.bc(e);
        Some((*local.get(&a)?, *local.get(&b)?))
    };
    let mut known: Vec<(u32, u32)> = ctx.recs.iter().filter_map(|r| map(&r.e)).collect();
    for t in 0..g.n as u32 {
        if let (Some(&a), Some(&b)) = (local.get(&polygraph::begin(t)), local.get(&polygraph::commit(t))) {
            known.push((a, b));
        }
    }
    let mut side_edges = Vec::new();
    let mut side_start = vec![0u32];
    let mut buf = Vec::new();
    let mut var_of: rustc_hash::FxHashMap<u32, u32> = rustc_hash::FxHashMap::default();
    for (v, &vi) in vars.iter().enumerate() {
        let ci = comp.vars[vi];
        if !choices.is_empty() {
            var_of.insert(ci, v as u32);
        }
        let c = &g.constraints[ci as usize];
        for side in [true, false] {
            g.side(c, side, &mut buf);
            side_edges.extend(buf.iter().filter_map(&map));
            side_start.push(side_edges.len() as u32);
        }
    }
    let mut clauses = Vec::new();
    let mut next = vars.len() as u32;
    let mut firsts = Vec::with_capacity(choices.len());
    let mut false_first = Vec::new();
    let mut groups = Vec::new();
    for &cj in choices {
        let j = comp.choices[cj] as usize;
        let first = next;
        firsts.push(first);
        for (i, f) in ce.fixed[j].iter().enumerate() {
            if ce.dead[j][i] {
                clauses.push(vec![2 * next + 1]);
            }
            false_first.push(next);
            side_edges.extend(f.iter().filter_map(&map));
            side_start.push(side_edges.len() as u32);
            side_start.push(side_edges.len() as u32);
            next += 1;
        }
        clauses.push((first..next).map(|x| 2 * x).collect::<Vec<u32>>());
        groups.push((first, next));
        for (i, cond) in ce.cond[j].iter().enumerate().filter(|&(i, _)| !ce.dead[j][i]) {
            for (c, a_first, e) in cond {
                let (Some(&v), Some(me)) = (var_of.get(c), map(e)) else { continue };
                side_edges.push(me);
                side_start.push(side_edges.len() as u32);
                side_start.push(side_edges.len() as u32);
                let side_lit = 2 * v + u32::from(!a_first);
                clauses.push(vec![side_lit ^ 1, (2 * (first + i as u32)) ^ 1, 2 * next]);
                false_first.push(next);
                next += 1;
            }
        }
    }
    let inst = solver::Instance {
        nodes: nodes.len(),
        known,
        side_edges,
        side_start,
        order: (0..nodes.len() as u32).collect(),
        clauses,
        false_first,
        groups,
    };
    (inst, firsts)
}

/// The candidate each read of a component's model chose (the first one
/// whose variable is true); `firsts` as [`instance`] returned them.
fn picked(comp: &Component, firsts: &[u32], ce: &ChoiceEdges, model: &[bool]) -> Vec<(u32, usize)> {
    let mut out = Vec::new();
    for (&j, &x) in comp.choices.iter().zip(firsts) {
        let n = ce.fixed[j as usize].len();
        let i = (0..n).find(|&i| model.get(x as usize + i) == Some(&true)).unwrap_or(0);
        out.push((j, i));
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn solve_components(
    ctx: &Ctx<'_>,
    pr: &Pruned,
    pos: &[u32],
    dead: Option<Vec<Vec<bool>>>,
    level: Level,
    deadline: Option<Instant>,
    opts: &ExactOptions,
    stats: &mut ExactStats,
) -> Verdict {
    let progress = opts.progress;
    let t = Instant::now();
    if let Some(p) = progress {
        p.enter(level, Phase::Solve);
    }
    let ce = choice_edges(ctx.g, pr, dead);
    let (comps, mut picks) = components(ctx, &pr.open, &ce);
    if let Some(p) = progress {
        p.set_components(comps.len());
    }
    stats.components = comps.len();
    stats.largest_component = comps.iter().map(|c| c.vars.len()).max().unwrap_or(0);
    let results: Vec<(solver::Answer, solver::SolveStats, Vec<u32>)> = comps
        .par_iter()
        .map(|c| {
            let all: Vec<usize> = (0..c.vars.len()).collect();
            let choices: Vec<usize> = (0..c.choices.len()).collect();
            let (inst, firsts) = instance(ctx, c, &all, &choices, pos, &ce);
            let (answer, stats) = solver::solve_observed(&inst, deadline, progress);
            if let Some(p) = progress {
                p.component_done();
            }
            (answer, stats, firsts)
        })
        .collect();
    stats.decisions = results.iter().map(|r| r.1.decisions).sum();
    stats.conflicts = results.iter().map(|r| r.1.conflicts).sum();
    for r in &results {
        stats.solver.add(&r.1);
    }
    stats.solve = t.elapsed();
    if let Some(i) = results.iter().position(|r| r.0 == solver::Answer::Unsat) {
        if let Some(p) = progress {
            p.enter(level, Phase::Witness);
        }
        let t = Instant::now();
        let v = if comps[i].choices.is_empty() {
            refute_component(ctx, &comps[i], pr, level, deadline)
        } else {
            refute_with_choices(ctx, &comps[i], pr, level, &ce, deadline)
        };
        stats.witness = t.elapsed();
        return v;
    }
    if results.iter().any(|r| r.0 == solver::Answer::Timeout) {
        let decided: Vec<usize> = comps
            .iter()
            .zip(&results)
            .filter(|(_, r)| r.0 != solver::Answer::Timeout)
            .map(|(c, _)| c.vars.len())
            .collect();
        let open: Vec<usize> = comps
            .iter()
            .zip(&results)
            .filter(|(_, r)| r.0 == solver::Answer::Timeout)
            .map(|(c, _)| c.vars.len())
            .collect();
        return Verdict::Unknown(format!(
            "the solver did not finish within the time limit ({} constraints and {} reads with several \
             candidate writers in {} components: {} of them decided satisfiable, {} undecided after {} solver \
             decisions, the largest undecided with {} variables)",
            pr.open.len(),
            ctx.g.choices.len(),
            comps.len(),
            decided.len(),
            open.len(),
            stats.decisions,
            open.iter().max().copied().unwrap_or(0)
        ));
    }
    // Never answer valid on the solver's word alone: the write order and
    // the writers of ambiguous reads it found, with every known and
    // derived edge, must be acyclic.
    let mut a_first = vec![true; ctx.g.constraints.len()];
    for (c, r) in comps.iter().zip(&results) {
        if let solver::Answer::Sat(model) = &r.0 {
            for (&ci, &v) in c.vars.iter().zip(model) {
                a_first[ci as usize] = v;
            }
            for (j, i) in picked(c, &r.2, &ce, model) {
                picks[j as usize] = i;
            }
        }
    }
    let mut extra = Vec::new();
    for (j, &i) in picks.iter().enumerate() {
        let i = if i == usize::MAX { 0 } else { i };
        extra.extend_from_slice(&ce.fixed[j][i]);
        extra.extend(ce.cond[j][i].iter().filter(|x| a_first[x.0 as usize] == x.1).map(|x| x.2));
    }
    let holds = model_is_acyclic(ctx.g, pr, &a_first, &extra);
    stats.solve = t.elapsed();
    if !holds {
        return Verdict::Unknown(
            "internal error: the write order the solver found does not check out; please report this history".into(),
        );
    }
    if opts.keep_serial {
        let base = pr.edges.iter().map(|r| r.e);
        let edges = base.chain(model_order::chosen_sides(ctx.g, &pr.open, &a_first)).chain(extra);
        let by_commit: Vec<u32> = (0..ctx.g.n as u32).map(|t| pos[polygraph::commit(t) as usize]).collect();
        (stats.serial_order, stats.serial_open) =
            model_order::serial_execution(ctx.h, ctx.txns, ctx.g, level, edges, &by_commit);
    }
    Verdict::Valid
}

/// Whether the known and derived edges, `extra`, and, for every open
/// constraint, the side `a_first` picks form an acyclic begin/commit graph.
fn model_is_acyclic(g: &Polygraph, pr: &Pruned, a_first: &[bool], extra: &[DepEdge]) -> bool {
    sides_are_acyclic(g, pr.edges.iter().map(|r| r.e), &pr.open, a_first, extra)
}

/// Whether `base`, `extra`, and for each of the constraints `open` the side
/// `a_first` picks form an acyclic begin/commit graph.
fn sides_are_acyclic(
    g: &Polygraph,
    base: impl Iterator<Item = DepEdge> + Clone,
    open: &[u32],
    a_first: &[bool],
    extra: &[DepEdge],
) -> bool {
    let chosen = open.iter().flat_map(|&c| {
        let mut side = Vec::new();
        g.side(&g.constraints[c as usize], a_first[c as usize], &mut side);
        side.into_iter()
    });
    let (offsets, targets) = prune::bc_csr(g, base.chain(chosen).chain(extra.iter().copied()));
    prune::topo(&offsets, &targets, &vec![0; g.n]).is_some()
}

/// Whether the serial order `order` (every transaction once) explains the
/// polygraph: each constraint decided by the order of its chains' heads,
/// with `base` (the known edges, or those and the ones pruning derived from
/// them; a constraint the build left out has a side the
/// known edges already imply), forms an acyclic begin/commit graph. The
/// same check as for a solver's model ([`model_is_acyclic`]).
fn serial_order_holds(g: &Polygraph, base: &[DepEdge], order: &[txns::TxnId]) -> bool {
    let a_first = model_order::sides_by_order(g, order);
    let all: Vec<u32> = (0..g.constraints.len() as u32).collect();
    sides_are_acyclic(g, base.iter().copied(), &all, &a_first, &[])
}

/// The order replaying `txns` under `edges` gives, when it is a serial
/// execution that [`serial_order_holds`] confirms.
fn replay_order(g: &Polygraph, txns: &txns::Txns, edges: &[DepEdge], priority: &[u32]) -> Option<Vec<txns::TxnId>> {
    guess::serial_order(txns, edges, priority)
        .filter(|gs| gs.replayed && serial_order_holds(g, edges, &gs.order))
        .map(|gs| gs.order)
}

/// How long shrinking a refutation may take: 20 s, and never past the
/// level's deadline (a shrink cut short still yields a refutation, only a
/// less minimal one).
fn witness_budget(deadline: Option<Instant>) -> Instant {
    let budget = Instant::now() + Duration::from_secs(20);
    deadline.map_or(budget, |d| d.min(budget))
}

/// Most cases listed for a refutation that splits over reads' writers.
const MAX_SPLIT_CASES: usize = 16;

/// Explains an unsatisfiable component holding reads with several
/// candidate writers: shrinks its constraints and reads to a minimal
/// unsatisfiable core (dropping either only removes edges), then splits
/// cases over the core's items, a write order's two sides or a read's
/// candidates, only as far as needed to close a cycle in every case.
fn refute_with_choices(
    ctx: &Ctx<'_>,
    comp: &Component,
    pr: &Pruned,
    level: Level,
    ce: &ChoiceEdges,
    deadline: Option<Instant>,
) -> Verdict {
    let budget = witness_budget(deadline);
    let nv = comp.vars.len();
    // Items: constraints 0..nv, then reads.
    let unsat = |items: &[usize]| -> Option<bool> {
        let vars: Vec<usize> = items.iter().copied().filter(|&x| x < nv).collect();
        let choices: Vec<usize> = items.iter().filter(|&&x| x >= nv).map(|&x| x - nv).collect();
        match solver::solve(&instance(ctx, comp, &vars, &choices, &pr.pos, ce).0, Some(budget)).0 {
            solver::Answer::Unsat => Some(true),
            solver::Answer::Sat(_) => Some(false),
            solver::Answer::Timeout => None,
        }
    };
    let (core, minimal) = shrink_core(nv + comp.choices.len(), unsat);
    // Depth-first case split: each case assigns a prefix of the core's
    // items; a case closing a cycle is a branch, else it splits on the next.
    let g = ctx.g;
    let mut branches = Vec::new();
    let mut derived = Vec::new();
    let mut partial = !minimal;
    let mut stack: Vec<Vec<usize>> = vec![Vec::new()];
    let mut buf = Vec::new();
    while let Some(case) = stack.pop() {
        if branches.len() >= MAX_SPLIT_CASES {
            partial = true;
            break;
        }
        // The edges the case assumes.
        let mut extra: Vec<DepEdge> = Vec::new();
        let mut assume = Vec::new();
        let mut reads = Vec::new();
        let side_of = |c: u32| core.iter().zip(&case).find(|(&x, _)| x < nv && comp.vars[x] == c).map(|(_, &s)| s == 0);
        for (&x, &s) in core.iter().zip(&case) {
            if x < nv {
                let c = comp.vars[x];
                g.side(&g.constraints[c as usize], s == 0, &mut buf);
                extra.extend_from_slice(&buf);
                assume.push(ctx.write_order(c, s == 0));
            } else {
                let j = comp.choices[x - nv];
                extra.extend_from_slice(&ce.fixed[j as usize][s]);
                for &(c, a, e) in &ce.cond[j as usize][s] {
                    if side_of(c) == Some(a) {
                        extra.push(e);
                    }
                }
                reads.push(ctx.read_from(j, s));
            }
        }
        let best = extra
            .iter()
            .filter_map(|&e| {
                let others: Vec<DepEdge> = extra.iter().copied().filter(|x| *x != e).collect();
                ctx.close(e, &others, u32::MAX)
            })
            .min_by_key(|(c, _)| c.len());
        if let Some((cyc, d)) = best {
            derived.extend(d);
            branches.push(Branch { assume, reads, cycle: ctx.cycle(&cyc) });
            continue;
        }
        let Some(&x) = core.get(case.len()) else {
            return Verdict::Unknown("an unsatisfiable core could not be explained".into());
        };
        let n = if x < nv { 2 } else { ce.fixed[comp.choices[x - nv] as usize].len() };
        for s in (0..n).rev() {
            let mut next = case.clone();
            next.push(s);
            stack.push(next);
        }
    }
    refutation(ctx, level, branches, derived, partial)
}

/// Shrinks the items `0..n` of an unsatisfiable problem to a minimal
/// unsatisfiable subset: drops chunks of halving size, then single items,
/// keeping a removal whenever `unsat` still answers `Some(true)`. Returns the
/// core and whether it is minimal (`unsat` answering `None`, out of time,
/// stops the shrinking with the core found so far).
fn shrink_core(n: usize, unsat: impl Fn(&[usize]) -> Option<bool>) -> (Vec<usize>, bool) {
    let mut core: Vec<usize> = (0..n).collect();
    let mut chunk = core.len() / 2;
    while chunk >= 1 {
        let mut i = 0;
        while i < core.len() {
            let trial: Vec<usize> =
                core[..i].iter().chain(core[(i + chunk).min(core.len())..].iter()).copied().collect();
            match unsat(&trial) {
                Some(true) => core = trial,
                Some(false) => i += chunk,
                None => return (core, false),
            }
        }
        chunk /= 2;
    }
    (core, true)
}

/// Most cases listed for one refutation (all combinations of up to three
/// open write orders).
const MAX_CORE_CASES: usize = 3;

/// Explains an unsatisfiable component: shrinks its constraints to a
/// minimal unsatisfiable core (removing a constraint drops both its sides,
/// which can only remove cycles), then shows a cycle for each combination of
/// the core's write orders.
fn refute_component(ctx: &Ctx<'_>, comp: &Component, pr: &Pruned, level: Level, deadline: Option<Instant>) -> Verdict {
    let budget = witness_budget(deadline);
    let none = ChoiceEdges::default();
    let unsat = |vars: &[usize]| -> Option<bool> {
        match solver::solve(&instance(ctx, comp, vars, &[], &pr.pos, &none).0, Some(budget)).0 {
            solver::Answer::Unsat => Some(true),
            solver::Answer::Sat(_) => Some(false),
            solver::Answer::Timeout => None,
        }
    };
    let (core, minimal) = shrink_core(comp.vars.len(), unsat);
    let shown = core.len().min(MAX_CORE_CASES);
    let mut branches = Vec::new();
    let mut derived = Vec::new();
    let mut buf = Vec::new();
    for mask in 0..1u32 << shown {
        let mut assume = Vec::new();
        let mut extra = Vec::new();
        let mut firsts = Vec::new();
        for (j, &vi) in core.iter().enumerate() {
            let c = comp.vars[vi];
            let a_first = if j < shown { mask >> j & 1 == 0 } else { true };
            ctx.g.side(&ctx.g.constraints[c as usize], a_first, &mut buf);
            extra.extend_from_slice(&buf);
            firsts.extend_from_slice(&buf);
            assume.push(ctx.write_order(c, a_first));
        }
        // The shortest cycle through an assumed edge.
        let best = firsts
            .iter()
            .filter_map(|&e| {
                let others: Vec<DepEdge> = extra.iter().copied().filter(|x| *x != e).collect();
                ctx.close(e, &others, u32::MAX)
            })
            .min_by_key(|(c, _)| c.len());
        match best {
            Some((cyc, d)) => {
                derived.extend(d);
                branches.push(Branch { assume, reads: Vec::new(), cycle: ctx.cycle(&cyc) });
            }
            None => return Verdict::Unknown("an unsatisfiable core could not be explained".into()),
        }
    }
    refutation(ctx, level, branches, derived, shown < core.len() || !minimal)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The replays get a quarter of the time left, at most a minute, except
    /// on the largest histories, which get their time per transaction.
    #[test]
    fn serial_budget_grows_with_the_largest_histories() {
        let minute = Duration::from_secs(60);
        assert_eq!(serial_budget(None, 1000), minute);
        let ten_minutes = Instant::now().checked_add(Duration::from_secs(600));
        assert_eq!(serial_budget(ten_minutes, 1_000_000), minute);
        let big = serial_budget(ten_minutes, 10_000_000);
        assert!(big > Duration::from_secs(140) && big <= Duration::from_secs(150), "{big:?}");
        let soon = Instant::now().checked_add(Duration::from_secs(20));
        assert!(serial_budget(soon, 10_000_000) <= Duration::from_secs(5));
        assert_eq!(serial_budget(Some(Instant::now()), 10_000_000), Duration::from_secs(1));
    }

    /// The final check accepts a write order that explains the history and
    /// rejects one that closes a cycle.
    #[test]
    fn model_check_rejects_a_cyclic_write_order() {
        // Two blind writes of x by one session: without pruning their order
        // stays an open constraint, and the session order (x1 before x2)
        // makes "x2 first" a cycle.
        let h = crate::ingest::read_bytes(
            "t.edn",
            b"{:type :ok, :process 1, :value [[:w :x 1]]}
              {:type :ok, :process 1, :value [[:w :x 2]]}
              {:type :ok, :process 2, :value [[:r :x 1]]}",
            crate::ingest::Format::Edn,
        )
        .expect("parses");
        let txns = txns::extract(&h).expect("transactions");
        let level = Level::from_model("strong-session-serializable").expect("a level");
        let g = builder::build(&h, &txns, level, 100, None).expect("builds").graph;
        assert_eq!(g.constraints.len(), 1, "one open pair without the filter");
        let pr = prune::prune(
            &g,
            &vec![0; g.n],
            PruneOptions { reach_bytes: 1 << 20, enabled: false, deadline: None },
            None,
            &mut crate::accel::Engine::new(Default::default(), 0).expect("no GPU wanted"),
        );
        let c = &g.constraints[0];
        let x1_first = g.chain(c.a)[0] == 0;
        assert!(model_is_acyclic(&g, &pr, &[x1_first], &[]));
        assert!(!model_is_acyclic(&g, &pr, &[!x1_first], &[]));
    }
}
