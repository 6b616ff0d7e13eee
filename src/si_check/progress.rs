//! Live progress of an exact check, read by a display on another thread.
//!
//! The exact check of a hard history can run for minutes; a user watching a
//! terminal should see which level is being checked, which phase it is in,
//! how many of the polygraph's independent components the solver has
//! finished and how many decisions it has made. The check publishes these as
//! relaxed atomics (the display only samples them), so publishing costs an
//! atomic add every 1024 solver decisions and nothing else. A progress
//! record is `'static` (one per process, see [`ExactProgress::new`]) so that
//! [`super::ExactOptions`] stays cheap to clone.

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed};

use super::Level;

/// Where an exact check is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not checking.
    Idle,
    /// Building the polygraph (known edges, write-order constraints).
    Build,
    /// Deciding constraints by reachability, ruling out candidate writers.
    Prune,
    /// Solving the components left open.
    Solve,
    /// Finding and shrinking a witness of a violation.
    Witness,
}

impl Phase {
    const ALL: [Phase; 5] = [Phase::Idle, Phase::Build, Phase::Prune, Phase::Solve, Phase::Witness];

    fn name(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Build => "building the polygraph",
            Phase::Prune => "pruning",
            Phase::Solve => "solving",
            Phase::Witness => "finding a witness",
        }
    }
}

/// The published state of an exact check.
#[derive(Debug)]
pub struct ExactProgress {
    phase: AtomicU8,
    /// Index into [`super::LEVELS`], `usize::MAX` when none.
    level: AtomicUsize,
    components: AtomicUsize,
    components_done: AtomicUsize,
    decisions: AtomicU64,
}

impl Default for ExactProgress {
    fn default() -> Self {
        Self::new()
    }
}

impl ExactProgress {
    /// An idle record; `const` so that it can be a `static`.
    pub const fn new() -> Self {
        ExactProgress {
            phase: AtomicU8::new(0),
            level: AtomicUsize::new(usize::MAX),
            components: AtomicUsize::new(0),
            components_done: AtomicUsize::new(0),
            decisions: AtomicU64::new(0),
        }
    }

    /// Starts a phase of the check of `level`.
    pub(crate) fn enter(&self, level: Level, phase: Phase) {
        let i = super::LEVELS.iter().position(|&(_, l)| l == level).unwrap_or(usize::MAX);
        self.level.store(i, Relaxed);
        self.phase.store(Phase::ALL.iter().position(|&p| p == phase).unwrap_or(0) as u8, Relaxed);
        if phase == Phase::Solve {
            self.components_done.store(0, Relaxed);
            self.decisions.store(0, Relaxed);
        }
    }

    /// The check ended.
    pub(crate) fn leave(&self) {
        self.phase.store(0, Relaxed);
    }

    /// The solver has `n` components to decide.
    pub(crate) fn set_components(&self, n: usize) {
        self.components.store(n, Relaxed);
    }

    /// One more component decided.
    pub(crate) fn component_done(&self) {
        self.components_done.fetch_add(1, Relaxed);
    }

    /// The solver made `n` more decisions.
    pub(crate) fn add_decisions(&self, n: u64) {
        self.decisions.fetch_add(n, Relaxed);
    }

    /// The phase now.
    pub fn phase(&self) -> Phase {
        Phase::ALL.get(self.phase.load(Relaxed) as usize).copied().unwrap_or(Phase::Idle)
    }

    /// One line for a progress display (`None` when idle), e.g.
    /// `exact serializable: solving, 3/184 components, 1.2M decisions`.
    pub fn describe(&self) -> Option<String> {
        let phase = self.phase();
        if phase == Phase::Idle {
            return None;
        }
        let level = super::LEVELS.get(self.level.load(Relaxed)).map_or("?", |&(name, _)| name);
        let mut s = format!("exact {level}: {}", phase.name());
        if phase == Phase::Solve {
            let d = self.decisions.load(Relaxed);
            s.push_str(&format!(
                ", {}/{} components, {} decisions",
                self.components_done.load(Relaxed),
                self.components.load(Relaxed),
                if d >= 1_000_000 { format!("{:.1}M", d as f64 / 1e6) } else { d.to_string() }
            ));
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_the_level_phase_and_solver_counts() {
        static P: ExactProgress = ExactProgress::new();
        assert_eq!(P.describe(), None);
        let Some(level) = Level::from_model("serializable") else { panic!("no serializable level") };
        P.enter(level, Phase::Solve);
        P.set_components(7);
        P.component_done();
        P.add_decisions(2_500_000);
        assert_eq!(P.describe().as_deref(), Some("exact serializable: solving, 1/7 components, 2.5M decisions"));
        P.enter(level, Phase::Witness);
        assert_eq!(P.describe().as_deref(), Some("exact serializable: finding a witness"));
        P.leave();
        assert_eq!(P.phase(), Phase::Idle);
    }
}
