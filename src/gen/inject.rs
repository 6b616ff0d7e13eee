//! Named anomalies the generators can plant among normal traffic.
//!
//! An injection is a short *scenario*: a few scripted transactions on keys
//! reserved for it (never touched by normal traffic nor by another
//! scenario), with their results fixed by the script instead of by the store.
//! Because the keys are fresh, the scenario's transactions have data
//! dependencies only among themselves, so the anomaly they form is the only
//! one the analysis can find there (up to the `-process` / `-realtime`
//! variants of the same cycle, and the consequences listed in
//! [`Inject::collateral`]). Each scenario is designed for what isolde's
//! Elle-style inference can see: list-append histories reveal version order
//! through the lists that reads return, registers only through the initial
//! state (`nil`) and unique values, so register scenarios order versions by
//! reading `nil`.
//!
//! The scenario scripts themselves live with each workload (they render its
//! micro-ops); this module names the anomalies, parses them, and states what
//! the analysis is expected to report for each.

use std::fmt;

/// The workload a scenario is planted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectWorkload {
    /// Elle's list-append.
    ListAppend,
    /// Read/write registers.
    RwRegister,
    /// Elle's closed-predicate workload (predicate reads over a universe of
    /// keys, each key written once after `:init`).
    ClosedPredicate,
}

impl InjectWorkload {
    /// The workload's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            InjectWorkload::ListAppend => "list-append",
            InjectWorkload::RwRegister => "rw-register",
            InjectWorkload::ClosedPredicate => "closed-predicate",
        }
    }
}

/// A named anomaly `--inject` can plant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Inject {
    /// Write cycle: two transactions append to two keys in opposite orders
    /// (list-append only: registers have no visible write order).
    G0,
    /// Aborted read: a committed read of a value written by a `:fail`
    /// transaction.
    G1a,
    /// Intermediate read: a read of a value its writer later overwrote in
    /// the same transaction.
    G1b,
    /// Circular information flow: two transactions each read the other's
    /// write.
    G1c,
    /// Two committed transactions read the same version of a key and both
    /// write it.
    LostUpdate,
    /// Write skew (G2-item): two transactions each read a key the other
    /// writes, seeing the version before that write.
    WriteSkew,
    /// Long fork (G-nonadjacent): two readers observe two independent writes
    /// in opposite orders.
    LongFork,
    /// Read skew (G-single): a reader sees one of a transaction's writes but
    /// not the other.
    ReadSkew,
    /// A read that disagrees with the transaction's own earlier write.
    Internal,
    /// A list read containing the same element twice (list-append only).
    DuplicateElements,
    /// A read of a value nobody wrote.
    GarbageRead,
    /// A read, invoked after a write to its key completed, that misses the
    /// write (a G-single cycle through a realtime edge; seen only by strict
    /// models).
    StaleRealtimeRead,
    /// Plume's TAP-h: a transaction reads `y` from `t₂`, then reads `x`
    /// from a writer `t₂` overwrote (lists: whose append `t₂` read before
    /// its own); breaks Biswas–Enea read committed.
    NonMonotonicRead,
    /// TAP-i: two readers see two two-key writers in opposite orders, each
    /// read committed's forced edge fine alone; breaks read committed.
    /// Lists: one reader, whose read of `y` (`[1 2]`) orders the writers
    /// and whose later read of `x` (`[1]`) orders them back; the checker
    /// names that TAP-h, as a list read orders writers like `wr` does
    /// (readers that order them by forced edges alone would read `[1]` and
    /// `[2]`, which Elle rightly calls G0 on lists).
    NonMonotonicReadAo,
    /// TAP-k: a reader sees one of a transaction's writes after missing
    /// the other; holds at read committed, breaks read atomic.
    FracturedRead,
    /// TAP-l: a reader sees `x` from one two-key writer and `y` from
    /// another (lists: `y` as `[1 2]`, which orders the writers); holds at
    /// read committed, breaks read atomic.
    FracturedReadAo,
    /// TAP-j: two reads of one key in a transaction see two writers; holds
    /// at read committed, breaks read atomic.
    NonRepeatableRead,
    /// TAP-m: a reader misses a write its read's writer had seen; holds at
    /// read atomic, breaks causal consistency.
    CausalityViolation,
    /// TAP-c: a read of a value its own transaction writes later.
    FutureRead,
    /// TAP-d: after writing a key, a transaction reads another's value.
    NotMyOwnWrite,
    /// TAP-e: after writing a key twice, a transaction reads its first write.
    NotMyLastWrite,
    /// Predicate write skew (G2, closed-predicate only): two concurrent
    /// transactions each read a predicate, see nothing, and insert a key
    /// the other's predicate matches (each predicate read precedes the
    /// other's insert: rwp both ways).
    PredicateWriteSkew,
    /// A predicate read that misses a key every version of which matches
    /// the predicate, as a read of a stale or partial snapshot would
    /// (closed-predicate only; Elle's `:predicate-read-miss`).
    PredicateReadMiss,
}

impl Inject {
    /// Every injectable anomaly, in CLI order.
    pub const ALL: [Inject; 23] = [
        Inject::G0,
        Inject::G1a,
        Inject::G1b,
        Inject::G1c,
        Inject::LostUpdate,
        Inject::WriteSkew,
        Inject::LongFork,
        Inject::ReadSkew,
        Inject::Internal,
        Inject::DuplicateElements,
        Inject::GarbageRead,
        Inject::StaleRealtimeRead,
        Inject::NonMonotonicRead,
        Inject::NonMonotonicReadAo,
        Inject::FracturedRead,
        Inject::FracturedReadAo,
        Inject::NonRepeatableRead,
        Inject::CausalityViolation,
        Inject::FutureRead,
        Inject::NotMyOwnWrite,
        Inject::NotMyLastWrite,
        Inject::PredicateWriteSkew,
        Inject::PredicateReadMiss,
    ];

    /// The name used on the command line (`--inject`).
    pub fn name(self) -> &'static str {
        match self {
            Inject::G0 => "G0",
            Inject::G1a => "G1a",
            Inject::G1b => "G1b",
            Inject::G1c => "G1c",
            Inject::LostUpdate => "lost-update",
            Inject::WriteSkew => "write-skew",
            Inject::LongFork => "long-fork",
            Inject::ReadSkew => "read-skew",
            Inject::Internal => "internal",
            Inject::DuplicateElements => "duplicate-elements",
            Inject::GarbageRead => "garbage-read",
            Inject::StaleRealtimeRead => "stale-realtime-read",
            Inject::NonMonotonicRead => "non-monotonic-read",
            Inject::NonMonotonicReadAo => "non-monotonic-read-ao",
            Inject::FracturedRead => "fractured-read",
            Inject::FracturedReadAo => "fractured-read-ao",
            Inject::NonRepeatableRead => "non-repeatable-read",
            Inject::CausalityViolation => "causality-violation",
            Inject::FutureRead => "future-read",
            Inject::NotMyOwnWrite => "not-my-own-write",
            Inject::NotMyLastWrite => "not-my-last-write",
            Inject::PredicateWriteSkew => "predicate-write-skew",
            Inject::PredicateReadMiss => "predicate-read-miss",
        }
    }

    /// The Plume TAP the scenario is an instance of (`a` … `m`; Plume's
    /// TAP-n needs two transactions in one session, which scenarios do not
    /// control), if any.
    pub fn tap(self) -> Option<char> {
        Some(match self {
            Inject::GarbageRead => 'a',
            Inject::G1a => 'b',
            Inject::FutureRead => 'c',
            Inject::NotMyOwnWrite => 'd',
            Inject::NotMyLastWrite => 'e',
            Inject::G1b => 'f',
            Inject::G1c => 'g',
            Inject::NonMonotonicRead => 'h',
            Inject::NonMonotonicReadAo => 'i',
            Inject::NonRepeatableRead => 'j',
            Inject::FracturedRead => 'k',
            Inject::FracturedReadAo => 'l',
            Inject::CausalityViolation => 'm',
            _ => return None,
        })
    }

    /// For the weak-level scenarios: the index (0 read
    /// committed, 1 read atomic, 2 causal) of the weakest Biswas–Enea level
    /// the scenario breaks; it satisfies every weaker one.
    pub fn weak_level(self) -> Option<usize> {
        match self {
            Inject::NonMonotonicRead
            | Inject::NonMonotonicReadAo
            | Inject::FutureRead
            | Inject::NotMyOwnWrite
            | Inject::NotMyLastWrite => Some(0),
            Inject::FracturedRead | Inject::FracturedReadAo | Inject::NonRepeatableRead => Some(1),
            Inject::CausalityViolation => Some(2),
            _ => None,
        }
    }

    /// Parses a CLI name; also accepts the anomaly-type spellings
    /// (`G2-item`, `G-nonadjacent`, `G-single`, `causal-violation`) and
    /// Plume's TAP names (`tap-a` … `tap-m`), case-insensitively.
    pub fn parse(s: &str) -> Option<Inject> {
        let s = s.trim().to_ascii_lowercase();
        let alias = match s.as_str() {
            "g2-item" | "g2" => Some(Inject::WriteSkew),
            "g-nonadjacent" => Some(Inject::LongFork),
            "g-single" => Some(Inject::ReadSkew),
            "causal-violation" => Some(Inject::CausalityViolation),
            t if t.len() == 5 && t.starts_with("tap-") => {
                Inject::ALL.into_iter().find(|i| i.tap().is_some_and(|c| t.ends_with(c)))
            }
            _ => None,
        };
        alias.or_else(|| Inject::ALL.into_iter().find(|i| i.name().to_ascii_lowercase() == s))
    }

    /// Whether the anomaly can be planted (and seen) in `w`.
    pub fn applies_to(self, w: InjectWorkload) -> bool {
        let predicate = matches!(self, Inject::PredicateWriteSkew | Inject::PredicateReadMiss);
        match w {
            InjectWorkload::RwRegister => !predicate && !matches!(self, Inject::G0 | Inject::DuplicateElements),
            InjectWorkload::ListAppend => !predicate,
            // Each key is written once: only the anomalies of first writes
            // and of reads (item and predicate) can be planted.
            InjectWorkload::ClosedPredicate => predicate || matches!(self, Inject::G1c | Inject::WriteSkew),
        }
    }

    /// Whether each transaction of the scenario must run in its own session
    /// (the weak-level scenarios: session order among them would add
    /// constraints of its own).
    pub(crate) fn own_sessions(self) -> bool {
        self.weak_level().is_some()
    }

    /// The anomaly type isolde's analysis reports for this scenario (as in
    /// `Outcome::anomaly_types`).
    pub fn expected_type(self, _w: InjectWorkload) -> &'static str {
        match self {
            Inject::G0 => "G0",
            Inject::G1a => "G1a",
            Inject::G1b => "G1b",
            Inject::G1c => "G1c",
            Inject::LostUpdate => "lost-update",
            Inject::WriteSkew => "G2-item",
            Inject::LongFork => "G-nonadjacent-item",
            Inject::ReadSkew => "G-single-item",
            Inject::Internal => "internal",
            Inject::DuplicateElements => "duplicate-elements",
            Inject::GarbageRead => "garbage-read",
            Inject::StaleRealtimeRead => "G-single-item-realtime",
            Inject::NonMonotonicRead | Inject::NonMonotonicReadAo => "non-monotonic-read",
            Inject::FracturedRead | Inject::FracturedReadAo => "fractured-read",
            Inject::NonRepeatableRead => "non-repeatable-read",
            Inject::CausalityViolation => "causal-violation",
            Inject::FutureRead => "future-read",
            Inject::NotMyOwnWrite | Inject::NotMyLastWrite => "internal",
            Inject::PredicateWriteSkew => "G2",
            Inject::PredicateReadMiss => "predicate-read-miss",
        }
    }

    /// The weakest Elle model under which the analysis looks for this
    /// anomaly without also searching realtime edges (whose cycles through
    /// the surrounding traffic would add `-realtime` variants of the same
    /// dependency cycle): `serializable`, except for the stale realtime read,
    /// which only a strict model can see.
    pub fn detecting_model(self) -> &'static str {
        match self.weak_level() {
            _ if self == Inject::StaleRealtimeRead => "strict-serializable",
            Some(0) => "read-committed-be",
            Some(1) => "read-atomic",
            Some(_) => "causal-cerone",
            None => "serializable",
        }
    }

    /// Other anomaly types the same scenario necessarily exhibits, besides
    /// the `-process` / `-realtime` variants of its cycles: reading an
    /// intermediate list state also orders the reader before its writer's
    /// later append (a G-single), and two appends after one read version
    /// order the writers both ways (G-single / G2-item).
    pub fn collateral(self, w: InjectWorkload) -> &'static [&'static str] {
        match (self, w) {
            (Inject::G1b, InjectWorkload::ListAppend) => &["G-single-item"],
            (Inject::LostUpdate, InjectWorkload::ListAppend) => &["G-single-item"],
            (Inject::LostUpdate, InjectWorkload::RwRegister) => &["G2-item"],
            // Elle's rw-register analysis calls a second read of a key
            // that disagrees with the first `internal`, and so does its
            // list-append analysis for a list that changes within a
            // transaction.
            (Inject::NonRepeatableRead, _) => &["internal"],
            _ => &[],
        }
    }

    /// Number of reserved keys the scenario uses.
    pub(crate) fn keys(self) -> u64 {
        match self {
            Inject::G0
            | Inject::G1c
            | Inject::WriteSkew
            | Inject::LongFork
            | Inject::ReadSkew
            | Inject::NonMonotonicRead
            | Inject::NonMonotonicReadAo
            | Inject::FracturedRead
            | Inject::FracturedReadAo
            | Inject::CausalityViolation
            | Inject::PredicateWriteSkew => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for Inject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses a comma-separated `--inject` list, reporting the first unknown
/// name.
pub fn parse_list(s: &str) -> Result<Vec<Inject>, String> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            Inject::parse(p).ok_or_else(|| {
                let names: Vec<&str> = Inject::ALL.iter().map(|i| i.name()).collect();
                format!("unknown anomaly {:?} (expected one of {})", p.trim(), names.join(", "))
            })
        })
        .collect()
}

/// How many scenarios of each kind a run planted, in [`Inject::ALL`] order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InjectCounts(pub [u32; Inject::ALL.len()]);

impl InjectCounts {
    /// Counts one planted scenario of `kind`.
    pub(crate) fn add(&mut self, kind: Inject) {
        if let Some(i) = Inject::ALL.iter().position(|&k| k == kind) {
            self.0[i] += 1;
        }
    }

    /// The kinds planted at least once, with their counts.
    pub fn planted(&self) -> Vec<(Inject, u32)> {
        Inject::ALL.iter().zip(self.0).filter(|(_, n)| *n > 0).map(|(&k, n)| (k, n)).collect()
    }

    /// Total scenarios planted.
    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_aliases() {
        for i in Inject::ALL {
            assert_eq!(Inject::parse(i.name()), Some(i));
            assert_eq!(Inject::parse(&i.name().to_uppercase()), Some(i));
        }
        assert_eq!(Inject::parse("G2-item"), Some(Inject::WriteSkew));
        assert_eq!(Inject::parse("G-single"), Some(Inject::ReadSkew));
        assert_eq!(Inject::parse("bogus"), None);
        assert_eq!(parse_list("G0, g1a,,long-fork").unwrap(), vec![Inject::G0, Inject::G1a, Inject::LongFork]);
        assert!(parse_list("G0,nope").unwrap_err().contains("\"nope\""));
    }

    #[test]
    fn taps_name_their_scenarios() {
        for c in 'a'..='m' {
            let i = Inject::parse(&format!("TAP-{c}")).unwrap_or_else(|| panic!("tap-{c}"));
            assert_eq!(i.tap(), Some(c));
        }
        assert_eq!(Inject::parse("tap-n"), None);
        assert_eq!(Inject::parse("causal-violation"), Some(Inject::CausalityViolation));
        assert!(Inject::FracturedRead.applies_to(InjectWorkload::ListAppend));
    }

    #[test]
    fn applicability_and_counts() {
        assert!(!Inject::G0.applies_to(InjectWorkload::RwRegister));
        assert!(!Inject::DuplicateElements.applies_to(InjectWorkload::RwRegister));
        let predicate = [Inject::PredicateWriteSkew, Inject::PredicateReadMiss];
        assert!(Inject::ALL.iter().all(|i| i.applies_to(InjectWorkload::ListAppend) != predicate.contains(i)));
        let cp: Vec<Inject> =
            Inject::ALL.into_iter().filter(|i| i.applies_to(InjectWorkload::ClosedPredicate)).collect();
        assert_eq!(cp, [Inject::G1c, Inject::WriteSkew, Inject::PredicateWriteSkew, Inject::PredicateReadMiss]);
        let mut c = InjectCounts::default();
        c.add(Inject::G1c);
        c.add(Inject::G1c);
        c.add(Inject::Internal);
        assert_eq!(c.planted(), vec![(Inject::G1c, 2), (Inject::Internal, 1)]);
        assert_eq!(c.total(), 3);
    }
}
