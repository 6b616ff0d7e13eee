//! `isolde explore`: every history of a small transactional program under an
//! isolation level.
//!
//! Application developers ask the other half of the question `analyze`
//! answers: *given that the database provides level `L`, can my
//! transactions break my invariant?* Following Bouajjani, Enea and
//! Román-Calvo (PLDI'23; spec `explore.md`), the explorer enumerates every
//! history a bounded client program can produce under `L`, each exactly
//! once, and checks the program's assertion on each:
//!
//! * for read committed, read atomic and causal consistency — prefix-closed
//!   and causally extensible levels — with explore-ce, which is sound,
//!   complete and *strongly optimal*: no history is produced twice and no
//!   exploration is ever blocked ([`Stats::blocked`] stays 0);
//! * for prefix consistency, snapshot isolation and serializability with
//!   explore-ce*(causal, L): explore under causal consistency and keep the
//!   complete histories consistent at `L` (optimal, not strongly: no
//!   strongly optimal swapping algorithm exists for SI or SER, spec §5).
//!
//! The modules, one job each: [`reader`] and [`program`] (the EDN program
//! format), [`eval`] (expressions), [`history`] (the explorer's histories),
//! [`levels`] (the levels and their consistency checks), [`dpor`] (the
//! algorithm), [`witness`] (histories as text and as Jepsen histories),
//! [`page`] (the output directory's HTML page), [`cli`] (the command line).
//!
//! Memory stays polynomial in the program: the search is a depth-first stack
//! of histories, and no set of seen histories is kept.

pub mod cli;
pub mod dpor;
pub mod eval;
pub mod history;
pub mod levels;
pub mod page;
pub mod program;
pub mod reader;
pub mod witness;

pub use dpor::Stats;
pub use eval::RunError;
pub use levels::Level;
pub use program::Program;
pub use reader::ProgramError;
pub use witness::HistView;

use dpor::{Engine, Stop};
use std::time::{Duration, Instant};

/// Limits of a search and what it keeps.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Stop (verdict unknown unless a violation was found) after this long.
    pub timeout: Option<Duration>,
    /// Stop after this many consistent histories.
    pub max_histories: Option<u64>,
    /// Keep this many violating histories as witnesses.
    pub witnesses: usize,
    /// Check that every explored history is consistent at the level
    /// explored under ([`Stats::inconsistent`]); for tests.
    pub check_invariants: bool,
}

/// The result of a search.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The level.
    pub level: Level,
    /// The counters.
    pub stats: Stats,
    /// Why the search stopped before the end, if it did.
    pub stopped: Option<String>,
    /// The first violating histories.
    pub witnesses: Vec<HistView>,
    /// Time taken.
    pub elapsed: Duration,
}

/// What a search established.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The assertion holds in every history.
    Holds,
    /// Some history breaks it.
    Violated,
    /// The search stopped early without finding a violation.
    Unknown,
}

impl Outcome {
    /// The verdict: a violation found is final even in a stopped search; a
    /// stopped search that found none is `Unknown`, never `Holds`.
    pub fn verdict(&self) -> Verdict {
        if self.stats.violations > 0 {
            Verdict::Violated
        } else if self.stopped.is_some() {
            Verdict::Unknown
        } else {
            Verdict::Holds
        }
    }
}

/// Explores `program` at `level`.
pub fn explore(program: &Program, level: Level, opts: &Options) -> Result<Outcome, RunError> {
    let mut kept = Vec::new();
    let out = search(program, level, opts, |e, leaf| {
        if leaf.consistent && !leaf.assert_ok && kept.len() < opts.witnesses {
            kept.push(HistView::new(e, leaf.hist, leaf.env));
        }
    })?;
    Ok(Outcome { witnesses: kept, ..out })
}

/// Explores `program` at `level`, showing every complete history reached
/// to `f` with whether it is consistent at `level` and whether the
/// assertion holds there (tests compare these sets with other
/// enumerations; histories inconsistent at `level` arise only for the
/// filtered levels).
pub fn explore_each(
    program: &Program,
    level: Level,
    opts: &Options,
    mut f: impl FnMut(&HistView, bool, bool),
) -> Result<Outcome, RunError> {
    search(program, level, opts, |e, leaf| f(&HistView::new(e, leaf.hist, leaf.env), leaf.consistent, leaf.assert_ok))
}

fn search(
    program: &Program,
    level: Level,
    opts: &Options,
    mut on_leaf: impl FnMut(&dpor::View, &dpor::Leaf),
) -> Result<Outcome, RunError> {
    let start = Instant::now();
    let mut engine = Engine::new(program, level);
    engine.check_invariants = opts.check_invariants;
    let mut steps = 0u64;
    let leaf = |v: &dpor::View, l: &dpor::Leaf| {
        on_leaf(v, l);
        true
    };
    let budget = |s: &Stats| {
        if let Some(m) = opts.max_histories {
            if s.histories >= m {
                return Err(format!("stopped after --max-histories {m} histories"));
            }
        }
        steps += 1;
        if let Some(t) = opts.timeout {
            if (steps == 1 || steps.is_multiple_of(64)) && start.elapsed() >= t {
                return Err(format!("stopped after the --timeout of {} s", t.as_secs_f64()));
            }
        }
        Ok(())
    };
    let stopped = match engine.run(leaf, budget) {
        Ok(()) => None,
        Err(Stop::Error(e)) => return Err(e),
        Err(Stop::Budget(reason)) => Some(reason),
    };
    Ok(Outcome { level, stats: engine.stats, stopped, witnesses: Vec::new(), elapsed: start.elapsed() })
}
