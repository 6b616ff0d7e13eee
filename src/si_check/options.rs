//! What the exact check is given and what it returns: its tuning
//! ([`ExactOptions`]), write orders known to hold ([`KnownOrders`]), and
//! the verdict of one level with its sizes and times ([`ExactOutcome`]).

use super::progress::ExactProgress;
use super::{solver, Level, OrderKind};
use crate::anomaly::Refutation;
use std::time::Duration;

/// Tuning of the exact check.
#[derive(Clone, Debug)]
pub struct ExactOptions {
    /// Decide constraints by reachability before solving.
    pub prune: bool,
    /// Memory budget for reachability rows, in bytes.
    pub reach_bytes: usize,
    /// Give up (verdict unknown) after this long, per level: the stronger
    /// attempts and the refutation's shrinking included.
    pub timeout: Option<Duration>,
    /// Give up (verdict unknown) when the polygraph needs more write-order
    /// constraints than this (they grow quadratically with the number of
    /// independent writers of a key that known dependencies leave unordered).
    pub max_constraints: usize,
    /// Where to publish live progress (level, phase, components solved,
    /// decisions) for a display on another thread; `None` publishes nothing.
    pub progress: Option<&'static ExactProgress>,
    /// Where pruning's reachability runs (CPU or GPU; see [`crate::accel`]).
    pub accel: crate::accel::AccelOptions,
    /// Whether the driver ([`crate::check`]) derives write orders every
    /// explanation respects from causal consistency's forced edges (see
    /// [`crate::weak::strong`]) and passes them as [`ExactOptions::known`].
    /// Pruning derives the same orders, so they pay mostly without it.
    pub cc_orders: bool,
    /// Extra write orders every explanation at the levels they name
    /// respects, added to the polygraph's known edges before pruning.
    pub known: Option<KnownOrders>,
    /// Write orders that every execution respecting session order
    /// respects (causal consistency's forced edges with sessions, from
    /// [`crate::weak::strong`]), for the serial replay ([`serial`]) to keep
    /// when it replays under session or realtime order, at any level: they
    /// only guide it (the order it finds is checked by the definition).
    /// Histories recorded without timestamps (dbcop, Cobra) are often
    /// decided by the replay only with them.
    pub session_orders: Option<KnownOrders>,
    /// Look for a serial execution by replaying the history before
    /// building the polygraph ([`serial`]): decides most valid histories in
    /// linear time. Off only to measure or test the polygraph path.
    pub serial_first: bool,
    /// Keep the serial execution the replay finds in
    /// [`ExactStats::serial_order`] (`--follow` collects by it).
    pub keep_serial: bool,
}

impl Default for ExactOptions {
    fn default() -> Self {
        ExactOptions {
            prune: true,
            reach_bytes: 1 << 30,
            timeout: Some(Duration::from_secs(600)),
            max_constraints: 50_000_000,
            progress: None,
            accel: crate::accel::AccelOptions::default(),
            cc_orders: false,
            known: None,
            session_orders: None,
            serial_first: true,
            keep_serial: false,
        }
    }
}

/// Write orders known to hold in every explanation of a history at some
/// levels, from outside the polygraph (causal consistency's forced edges,
/// see [`crate::weak::strong`]). Each names operations, so it does not
/// depend on how [`txns`] numbers transactions; the polygraph adds one only
/// when both writers take part and write the key and the reader reads the
/// key from `to` there too.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnownOrders {
    /// The weakest order the facts need: they hold at levels with exactly
    /// this order, and, for [`OrderKind::None`], at every level.
    pub order: OrderKind,
    /// The facts (shared: options are cloned per level and attempt).
    pub orders: std::sync::Arc<[KnownOrder]>,
}

/// One write order: `from`'s write of `key` precedes `to`'s in every
/// explanation, because `reader` read `key` from `to` and had to see `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownOrder {
    /// The earlier writer.
    pub from: crate::history::OpId,
    /// The later writer, which `reader` read the key from.
    pub to: crate::history::OpId,
    /// The key.
    pub key: crate::history::KeyId,
    /// The reader.
    pub reader: crate::history::OpId,
}

impl KnownOrders {
    /// Whether the facts hold at `level`.
    pub fn apply_to(&self, level: Level) -> bool {
        self.order == OrderKind::None || self.order == level.order
    }
}

/// The exact verdict for one level.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Some write order explains the history.
    Valid,
    /// No write order does; the refutation says why.
    Invalid(Box<Refutation>),
    /// Undecided, with the reason.
    Unknown(String),
}

/// Sizes and stage times (compare PolySI's Table 3).
#[derive(Clone, Debug, Default)]
pub struct ExactStats {
    /// Transactions in the polygraph.
    pub txns: usize,
    /// Reads dropped as unexplained (reported by the Elle-style analysis).
    pub dropped_reads: usize,
    /// Known dependency edges.
    pub known_edges: usize,
    /// Constraints before pruning.
    pub constraints: usize,
    /// Edges in constraint sides before pruning.
    pub constraint_edges: usize,
    /// Constraints between unread lone writers dropped before pruning
    /// (serializability only; see `drop_unread_pairs`).
    pub unread_pairs: usize,
    /// Constraints left after pruning.
    pub constraints_after: usize,
    /// Edges in constraint sides after pruning.
    pub constraint_edges_after: usize,
    /// Pruning rounds.
    pub rounds: u32,
    /// Components handed to the solver.
    pub components: usize,
    /// Variables in the largest component.
    pub largest_component: usize,
    /// Solver decisions, all components.
    pub decisions: u64,
    /// Solver conflicts, all components.
    pub conflicts: u64,
    /// All solver counters, all components.
    pub solver: solver::SolveStats,
    /// Extracting transactions and building the polygraph.
    pub build: Duration,
    /// Pruning.
    pub prune: Duration,
    /// Solving.
    pub solve: Duration,
    /// Building the refutation.
    pub witness: Duration,
    /// Passes that narrowed the candidates of ambiguous reads before this
    /// one (see [`check_level`]).
    pub narrowing_passes: u32,
    /// Time spent replaying the history for a serial order ([`guess`]).
    pub guess: Duration,
    /// Whether that order decided the level (valid, with no search).
    pub guessed: bool,
    /// Placements the replays that looked for a serial execution before
    /// the polygraph was built ([`serial`]) undid to follow a hint.
    pub serial_backtracks: usize,
    /// Placements the backtracking replay under the edges pruning derived
    /// undid to follow a hint.
    pub pruned_backtracks: usize,
    /// Whether the serial replay ([`serial`]) decided the level, before any
    /// polygraph was built.
    pub serial: bool,
    /// Which path computed reachability, with its times.
    pub accel: crate::accel::AccelStats,
    /// Write orders of [`ExactOptions::known`] added to the known edges.
    pub known_orders: usize,
    /// How many of those order two different write chains (the others
    /// were already implied by read-modify-writes).
    pub known_orders_new: usize,
    /// Whether the polygraph needed more constraints than allowed (the
    /// verdict is then `Unknown`, unless a window refuted the history).
    pub over_limit: bool,
    /// The search over windows of the history that ran because the whole
    /// polygraph was over the limit (see [`super::windows`]).
    pub windows: Option<WindowStats>,
    /// The serial execution the replay found (completion ops, in order),
    /// when [`ExactOptions::keep_serial`] asked for it; under snapshot
    /// isolation and prefix consistency, the commit order of an execution
    /// ([`super::snapshot`]).
    pub serial_order: Vec<crate::history::OpId>,
    /// Per position of `serial_order`: whether some later transaction
    /// began before that one committed (empty for a serial execution). A
    /// prefix of the order ending there is no execution of its own.
    pub serial_open: Vec<bool>,
}

impl ExactStats {
    /// Adds the stage times of an earlier pass (narrowing) to these.
    pub(super) fn add_times(&mut self, o: &ExactStats) {
        self.build += o.build;
        self.prune += o.prune;
        self.solve += o.solve;
        self.witness += o.witness;
        self.narrowing_passes += o.narrowing_passes;
        self.guess += o.guess;
        self.accel.add(&o.accel);
    }
}

/// What the search over windows of the history did (see
/// [`super::windows`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowStats {
    /// Windows looked at.
    pub windows: usize,
    /// Of those, windows the serial replay did not explain (searched).
    pub searched: usize,
    /// Transactions in the largest window looked at.
    pub largest: u32,
    /// The refuting window: its first and last transactions' completion
    /// operations (history indices), when one refuted.
    pub refuted_by: Option<(u32, u32)>,
    /// Time spent.
    pub time: Duration,
}

/// The result of checking one level.
#[derive(Clone, Debug)]
pub struct ExactOutcome {
    /// The level.
    pub level: Level,
    /// The verdict.
    pub verdict: Verdict,
    /// Sizes and times.
    pub stats: ExactStats,
}
