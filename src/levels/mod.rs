//! Every isolation level isolde names, as data: its name, a one-line
//! definition, which checker decides it, and which levels it implies.
//!
//! Three families meet in one ladder, and their names are easy to confuse:
//!
//! * **Elle's models** (Adya's PL-1 … PL-3 and their relatives): decided by
//!   Elle's inference and typed cycle search ([`crate::cycles`]); their
//!   implications are Elle's lattice ([`crate::cycles::lattice`]). They
//!   ignore session order unless their name says `strong-session-`.
//! * **The Biswas–Enea levels** (read committed, read atomic, causal,
//!   prefix): axioms over a commit order that includes session order. The
//!   first three are decided in near-linear time by [`crate::weak`]; prefix
//!   consistency is NP-complete and needs the solver.
//! * **Snapshot isolation and serializability**, plain, with sessions and
//!   with realtime order: decided exactly for registers by
//!   [`crate::si_check`] (polygraph and SAT), and by Elle's inference for
//!   list-append, whose reads reveal every version order.
//!
//! The implications below are the ones that hold under isolde's own
//! semantics of each name; they are what lets a check answer one level from
//! another: a violation of a level answers every level that implies it, and
//! a level shown to hold answers every level it implies. Where the families
//! differ (Elle's plain `snapshot-isolation` ignores sessions, so it does
//! not imply Biswas–Enea prefix consistency, which includes them) no
//! implication is claimed, and each level is decided on its own.

pub mod names;

/// What decides a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decider {
    /// Elle's inference and typed cycle search.
    Elle,
    /// The near-linear Biswas–Enea check ([`crate::weak`]).
    Weak,
    /// The exact prefix-consistency check.
    Prefix,
    /// The exact snapshot-isolation / serializability check
    /// ([`crate::si_check`]).
    Exact,
}

impl Decider {
    /// How reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Decider::Elle => "elle",
            Decider::Weak => "weak",
            Decider::Prefix => "prefix",
            Decider::Exact => "exact",
        }
    }
}

/// One level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelDef {
    /// The model name (`--model`), Elle's friendly spelling where Elle has
    /// the level.
    pub model: &'static str,
    /// The level as a person reads it.
    pub label: &'static str,
    /// What it forbids, in one line.
    pub definition: &'static str,
    /// What decides it on a register history.
    pub registers: Decider,
    /// What decides it on a list-append history.
    pub lists: Decider,
    /// The levels it directly implies (by model name).
    pub implies: &'static [&'static str],
}

impl LevelDef {
    /// What decides it on a history of `registers` (else list-append).
    pub fn decider(&self, registers: bool) -> Decider {
        if registers {
            self.registers
        } else {
            self.lists
        }
    }
}

const fn level(
    model: &'static str,
    label: &'static str,
    definition: &'static str,
    registers: Decider,
    lists: Decider,
    implies: &'static [&'static str],
) -> LevelDef {
    LevelDef { model, label, definition, registers, lists, implies }
}

use Decider::{Elle, Exact, Prefix, Weak};

/// Every level of the ladder, weakest first (a level comes after every
/// level it implies).
pub const LEVELS: &[LevelDef] = &[
    level("read-uncommitted", "read uncommitted (Adya PL-1)", "no write cycle (G0)", Elle, Elle, &[]),
    level(
        "read-committed",
        "read committed (Adya PL-2)",
        "no aborted or intermediate read, no cycle of writes and reads (G1)",
        Elle,
        Elle,
        &["read-uncommitted"],
    ),
    level(
        "read-committed-be",
        "read committed (Biswas–Enea)",
        "reads of a transaction never go back to older writes than it has seen (with sessions)",
        Weak,
        Weak,
        &[],
    ),
    level(
        "monotonic-atomic-view",
        "monotonic atomic view",
        "once a transaction sees one write of another, it sees them all (G1, no fractured reads of PL-2L)",
        Elle,
        Elle,
        &["read-committed"],
    ),
    level(
        "cursor-stability",
        "cursor stability",
        "read committed and no lost update on a read item (G-cursor)",
        Elle,
        Elle,
        &["read-committed"],
    ),
    level(
        "read-atomic",
        "read atomic",
        "a transaction sees all or none of another's writes (with sessions)",
        Weak,
        Weak,
        &["read-committed-be"],
    ),
    level(
        "repeatable-read",
        "repeatable read (Adya PL-2.99)",
        "no cycle with item anti-dependencies (G2-item)",
        Elle,
        Elle,
        &["cursor-stability", "monotonic-atomic-view"],
    ),
    level(
        "causal-cerone",
        "causal consistency",
        "a transaction sees everything its causal past saw (with sessions)",
        Weak,
        Weak,
        &["read-atomic"],
    ),
    level(
        "prefix",
        "prefix consistency",
        "every transaction sees a prefix of one commit order (with sessions)",
        Prefix,
        Prefix,
        &["causal-cerone"],
    ),
    level(
        "snapshot-isolation",
        "snapshot isolation",
        "a snapshot per transaction, no concurrent writers of a key (Adya PL-SI)",
        Exact,
        Elle,
        &["monotonic-atomic-view"],
    ),
    level(
        "serializable",
        "serializability",
        "some serial order explains every read (Adya PL-3)",
        Exact,
        Elle,
        &["snapshot-isolation", "repeatable-read"],
    ),
    level(
        "strong-session-snapshot-isolation",
        "snapshot isolation with sessions",
        "snapshot isolation that keeps each session's order",
        Exact,
        Elle,
        &["snapshot-isolation", "prefix"],
    ),
    level(
        "strong-snapshot-isolation",
        "strong snapshot isolation",
        "snapshot isolation that keeps realtime order",
        Exact,
        Elle,
        &["strong-session-snapshot-isolation"],
    ),
    level(
        "strong-session-serializable",
        "serializability with sessions",
        "serializability that keeps each session's order",
        Exact,
        Elle,
        &["serializable", "strong-session-snapshot-isolation"],
    ),
    level(
        "strict-serializable",
        "strict serializability",
        "serializability that keeps realtime order",
        Exact,
        Elle,
        &["strong-session-serializable", "strong-snapshot-isolation"],
    ),
];

/// The name that asks for every level (`--model all`).
pub const ALL: &str = "all";

/// The models `--model all` adds to the check so that the weak and exact
/// checkers run (weakest first); the ladder decides the other levels from
/// what these and Elle's inference find.
pub const LADDER_MODELS: &[&str] = &[
    "read-committed-be",
    "read-atomic",
    "causal-cerone",
    "prefix",
    "strong-session-snapshot-isolation",
    "strong-session-serializable",
];

/// The realtime levels `--model all` also asks for: searched after the
/// same inference as the rest, so that no row is left unchecked. A history
/// of completions only records no real time; as everywhere in isolde, its
/// real-time order is then its session order.
pub const REALTIME_MODELS: &[&str] = &["strong-snapshot-isolation", "strict-serializable"];

/// The level named `model`, if the ladder has it.
pub fn find(model: &str) -> Option<&'static LevelDef> {
    LEVELS.iter().find(|l| l.model == model)
}

/// Whether a history at level `a` is also at level `b` (reflexive,
/// transitive over [`LevelDef::implies`]).
pub fn implies(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    find(a).is_some_and(|l| l.implies.iter().any(|w| implies(w, b)))
}

/// Whether the requested models ask for the whole ladder.
pub fn ladder_requested(models: &Option<Vec<String>>) -> bool {
    models.as_ref().is_some_and(|ms| ms.iter().any(|m| m.trim().eq_ignore_ascii_case(ALL)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_comes_after_what_it_implies() {
        for (i, l) in LEVELS.iter().enumerate() {
            for w in l.implies {
                let j = LEVELS.iter().position(|x| x.model == *w);
                assert!(j.is_some_and(|j| j < i), "{} implies {w}, which must come first", l.model);
            }
        }
    }

    #[test]
    fn implication_is_transitive_and_not_symmetric() {
        assert!(implies("strict-serializable", "read-uncommitted"));
        assert!(implies("strong-session-serializable", "prefix"));
        assert!(implies("prefix", "read-committed-be"));
        assert!(!implies("serializable", "prefix"), "plain serializability has no sessions");
        assert!(!implies("read-committed", "strict-serializable"));
        assert!(!implies("snapshot-isolation", "repeatable-read"), "write skew");
    }
}
