//! The levels the exact check decides: which cycles each forbids
//! ([`Semantics`]), which extra order it keeps ([`OrderKind`]), their
//! names, and how they imply one another.

/// Which cycles a level forbids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// Every dependency cycle (Adya PL-3).
    Serializable,
    /// Cycles without two adjacent anti-dependencies (Adya PL-SI, as
    /// characterised by Cerone and Gotsman).
    SnapshotIsolation,
    /// Prefix consistency (Cerone's PC, Biswas–Enea's `Prefix` axiom):
    /// snapshot isolation without its write-conflict rule. One total order
    /// of begin and commit events exists in which each transaction sees
    /// exactly the transactions committed before it began, so two writers of
    /// a key may overlap (a lost update is allowed) but a transaction never
    /// sees a later commit without every earlier one (no long fork). On the
    /// begin/commit graph a write order is commit before commit (see
    /// [`polygraph::bc_edge`]), and read-modify-writes do not chain.
    Prefix,
}

impl Semantics {
    /// Strength: a history with a stronger semantics has every weaker one.
    fn rank(self) -> u8 {
        match self {
            Semantics::Prefix => 0,
            Semantics::SnapshotIsolation => 1,
            Semantics::Serializable => 2,
        }
    }
}

/// Which extra order the level includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OrderKind {
    /// None.
    #[default]
    None,
    /// Each process's transactions in order (Elle's `strong-session-`).
    Session,
    /// Realtime order (Elle's `strict-`/`strong-`).
    Realtime,
}

/// A level the exact check decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Level {
    /// Forbidden cycles.
    pub semantics: Semantics,
    /// Extra order.
    pub order: OrderKind,
}

/// Elle's names of the levels the exact check decides.
pub const LEVELS: [(&str, Level); 7] = [
    ("strict-serializable", Level { semantics: Semantics::Serializable, order: OrderKind::Realtime }),
    ("strong-session-serializable", Level { semantics: Semantics::Serializable, order: OrderKind::Session }),
    ("serializable", Level { semantics: Semantics::Serializable, order: OrderKind::None }),
    ("strong-snapshot-isolation", Level { semantics: Semantics::SnapshotIsolation, order: OrderKind::Realtime }),
    ("strong-session-snapshot-isolation", Level { semantics: Semantics::SnapshotIsolation, order: OrderKind::Session }),
    ("snapshot-isolation", Level { semantics: Semantics::SnapshotIsolation, order: OrderKind::None }),
    ("prefix", Level { semantics: Semantics::Prefix, order: OrderKind::Session }),
];

impl Level {
    /// The level Elle calls `name` (friendly or canonical), if this check
    /// decides it.
    pub fn from_model(name: &str) -> Option<Level> {
        let name = match name {
            "PL-3" => "serializable",
            "PL-SS" | "strong-serializable" => "strict-serializable",
            "PL-SI" => "snapshot-isolation",
            n => n,
        };
        LEVELS.iter().find(|(n, _)| *n == name).map(|&(_, l)| l)
    }

    /// Elle's friendly name of the level.
    pub fn model(self) -> &'static str {
        LEVELS.iter().find(|(_, l)| *l == self).map(|(n, _)| *n).unwrap_or("serializable")
    }

    /// The next weaker levels to try once this one is refuted: the same
    /// order under snapshot isolation, and the level without its order.
    pub fn weaker(self) -> Vec<Level> {
        let mut out = Vec::new();
        if self.semantics == Semantics::Serializable {
            out.push(Level { semantics: Semantics::SnapshotIsolation, order: self.order });
        }
        if self.order != OrderKind::None {
            out.push(Level { semantics: self.semantics, order: OrderKind::None });
        }
        out
    }

    /// A key that sorts stronger levels after weaker ones (a level
    /// implying another never sorts before it).
    pub fn strength(self) -> (u8, u8) {
        let order = match self.order {
            OrderKind::None => 0,
            OrderKind::Session => 1,
            OrderKind::Realtime => 2,
        };
        (self.semantics.rank(), order)
    }

    /// Whether a history at this level is also at `other`.
    pub fn implies(self, other: Level) -> bool {
        let sem = self.semantics.rank() >= other.semantics.rank();
        let rank = |o: OrderKind| match o {
            OrderKind::None => 0,
            OrderKind::Session => 1,
            OrderKind::Realtime => 2,
        };
        sem && rank(self.order) >= rank(other.order)
    }
}

/// The stronger problems tried before `level` itself, in order: each is
/// smaller or more constrained, and a history valid at it is valid at
/// `level`, so only a `valid` answer of an attempt is used (refuting
/// `level` takes its own search, the last attempt).
///
/// * The same semantics with the stronger orders the history records
///   (`realtime`, then `sessions`): real databases usually keep them, their
///   edges prune most constraints, and at realtime levels far-apart writers
///   need no constraint at all.
/// * Below serializability, serializability with the strongest of those
///   orders comes first (the most constrained problem, decided fastest when
///   it holds; a transaction's begin and commit are one node for the
///   solver's closure, and pruning has the stronger rule); below snapshot
///   isolation (prefix consistency), snapshot isolation with it next, whose
///   read-modify-writes chain. Serializability (and snapshot isolation) at
///   the level's own order close the list when that order is weaker.
pub fn attempts(level: Level, realtime: bool, sessions: bool) -> Vec<Level> {
    let mut out = Vec::new();
    if level.order != OrderKind::Realtime && realtime {
        out.push(Level { order: OrderKind::Realtime, ..level });
    }
    if level.order == OrderKind::None && sessions {
        out.push(Level { order: OrderKind::Session, ..level });
    }
    if level.semantics == Semantics::Serializable {
        return out;
    }
    let top = out.first().map_or(level.order, |l| l.order);
    let stronger_semantics: &[Semantics] = match level.semantics {
        Semantics::Prefix => &[Semantics::Serializable, Semantics::SnapshotIsolation],
        _ => &[Semantics::Serializable],
    };
    let at = |order| stronger_semantics.iter().map(move |&semantics| Level { semantics, order });
    let mut first: Vec<Level> = at(top).collect();
    first.append(&mut out);
    if top != level.order {
        first.extend(at(level.order));
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn l(semantics: Semantics, order: OrderKind) -> Level {
        Level { semantics, order }
    }

    #[test]
    fn attempts_go_from_the_most_constrained_problem_down() {
        use OrderKind::*;
        use Semantics::*;
        assert_eq!(attempts(l(Serializable, None), true, true), [l(Serializable, Realtime), l(Serializable, Session)]);
        assert_eq!(
            attempts(l(SnapshotIsolation, Session), true, true),
            [l(Serializable, Realtime), l(SnapshotIsolation, Realtime), l(Serializable, Session)]
        );
        assert_eq!(
            attempts(l(Prefix, Session), false, true),
            [l(Serializable, Session), l(SnapshotIsolation, Session)]
        );
        for level in LEVELS.iter().map(|&(_, l)| l) {
            for (realtime, sessions) in [(false, false), (true, false), (false, true), (true, true)] {
                assert!(attempts(level, realtime, sessions).iter().all(|a| a.implies(level) && *a != level));
            }
        }
    }
}
