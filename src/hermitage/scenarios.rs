//! Hermitage's test cases as data.
//!
//! Each [`Scenario`] is one of the scripts of Hermitage's `postgres.md` and
//! `mysql.md` (github.com/ept/hermitage): two or three sessions, each
//! running one transaction, and the order in which their statements are
//! issued. Every scenario starts from Hermitage's table `test (id, value)`
//! holding `1 => 10, 2 => 20`; keys 3 and 4 are rows a scenario may
//! insert. Write values are unique per key (where Hermitage writes the same
//! value twice, here the second writer writes another), as the history's
//! checker needs.
//!
//! Statements are the operations of [`Op`]: an item read, a read of the
//! whole table (Hermitage's predicate reads `where value % 3 = 0` and the
//! like, and `select *`), its locking form (the scan a `DELETE`/`UPDATE
//! ... WHERE <predicate>` starts with), an update of one row, an insert,
//! commit and rollback. See `docs/hermitage.md` for how each is recorded.

/// The keys a scenario can touch: a scan reads every one of them.
pub const KEYS: [u64; 4] = [1, 2, 3, 4];

/// The rows every scenario starts from.
pub const INITIAL: [(u64, u64); 2] = [(1, 10), (2, 20)];

/// One statement of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `SELECT id, value FROM test WHERE id IN (keys)`.
    Read(&'static [u64]),
    /// `SELECT id, value FROM test`: a predicate read, recorded as a read
    /// of every key of [`KEYS`] (nil where there is no row).
    Scan,
    /// `SELECT id, value FROM test FOR UPDATE` (SQLite: without `FOR
    /// UPDATE`): the locking scan a write predicate starts with; recorded
    /// as [`Op::Scan`] is.
    LockingScan,
    /// `UPDATE test SET value = v WHERE id = k`.
    Write(u64, u64),
    /// `INSERT INTO test (id, value) VALUES (k, v)`.
    Insert(u64, u64),
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK`.
    Abort,
}

/// A statement of one session, and whether Hermitage's script says it
/// blocks (on PostgreSQL or MySQL; whether it does is measured, this is
/// what the explanation compares with).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// The session (0-based; `T1` is 0).
    pub session: usize,
    /// The statement.
    pub op: Op,
    /// Hermitage marks it `BLOCKS`.
    pub blocks: bool,
}

/// Hermitage's anomaly columns, in its table's order.
pub const ANOMALIES: [&str; 10] = ["G0", "G1a", "G1b", "G1c", "OTV", "PMP", "P4", "G-single", "G2-item", "G2"];

/// One Hermitage test case.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// A short name, unique, used for file names.
    pub name: &'static str,
    /// The Hermitage column it tests (one of [`ANOMALIES`]).
    pub anomaly: &'static str,
    /// What it shows, in Hermitage's words.
    pub title: &'static str,
    /// Whether the transaction that would observe the anomaly only reads
    /// (Hermitage's "R/O" cells: prevented for read-only transactions only).
    pub read_only: bool,
    /// Number of sessions.
    pub sessions: usize,
    /// The statements in the order they are issued.
    pub steps: &'static [Step],
    /// The anomaly types (prefixes of isolde's names) whose presence in
    /// the checked history means the anomaly occurred.
    pub witnesses: &'static [&'static str],
}

const fn s(session: usize, op: Op) -> Step {
    Step { session, op, blocks: false }
}

const fn blocks(session: usize, op: Op) -> Step {
    Step { session, op, blocks: true }
}

use Op::*;

/// Every scenario, grouped by column in [`ANOMALIES`] order.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "g0",
        anomaly: "G0",
        title: "Write Cycles (G0)",
        read_only: false,
        sessions: 2,
        steps: &[
            s(0, Write(1, 11)),
            blocks(1, Write(1, 12)),
            s(0, Write(2, 21)),
            s(0, Commit),
            s(1, Write(2, 22)),
            s(1, Commit),
        ],
        witnesses: &["G0"],
    },
    Scenario {
        name: "g1a",
        anomaly: "G1a",
        title: "Aborted Reads (G1a)",
        read_only: true,
        sessions: 2,
        steps: &[s(0, Write(1, 101)), s(1, Scan), s(0, Abort), s(1, Scan), s(1, Commit)],
        witnesses: &["G1a"],
    },
    Scenario {
        name: "g1b",
        anomaly: "G1b",
        title: "Intermediate Reads (G1b)",
        read_only: true,
        sessions: 2,
        steps: &[s(0, Write(1, 101)), s(1, Scan), s(0, Write(1, 11)), s(0, Commit), s(1, Scan), s(1, Commit)],
        witnesses: &["G1b"],
    },
    Scenario {
        name: "g1c",
        anomaly: "G1c",
        title: "Circular Information Flow (G1c)",
        read_only: false,
        sessions: 2,
        steps: &[
            s(0, Write(1, 11)),
            s(1, Write(2, 22)),
            s(0, Read(&[2])),
            s(1, Read(&[1])),
            s(0, Commit),
            s(1, Commit),
        ],
        witnesses: &["G1c"],
    },
    Scenario {
        name: "otv",
        anomaly: "OTV",
        title: "Observed Transaction Vanishes (OTV)",
        read_only: true,
        sessions: 3,
        steps: &[
            s(0, Write(1, 11)),
            s(0, Write(2, 19)),
            blocks(1, Write(1, 12)),
            s(0, Commit),
            // T3's one read: Hermitage's script reads again after T2's
            // write and commit, which shows non-repeatable reads (another
            // anomaly, which read committed allows) and not OTV.
            s(2, Scan),
            s(1, Write(2, 18)),
            s(1, Commit),
            s(2, Commit),
        ],
        witnesses: &["G1", "G-single"],
    },
    Scenario {
        name: "pmp",
        anomaly: "PMP",
        title: "Predicate-Many-Preceders (PMP)",
        read_only: true,
        sessions: 2,
        steps: &[s(0, Scan), s(1, Insert(3, 30)), s(1, Commit), s(0, Scan), s(0, Commit)],
        witnesses: &["internal", "G-single", "G1"],
    },
    Scenario {
        name: "pmp-write",
        anomaly: "PMP",
        title: "Predicate-Many-Preceders (PMP) for write predicates",
        read_only: false,
        sessions: 2,
        steps: &[
            s(0, Write(1, 20)),
            s(0, Write(2, 30)),
            s(1, Scan),
            blocks(1, LockingScan),
            s(0, Commit),
            s(1, Scan),
            s(1, Commit),
        ],
        witnesses: &["internal", "G-single", "G1"],
    },
    Scenario {
        name: "p4",
        anomaly: "P4",
        title: "Lost Update (P4)",
        read_only: false,
        sessions: 2,
        steps: &[
            s(0, Read(&[1])),
            s(1, Read(&[1])),
            s(0, Write(1, 11)),
            blocks(1, Write(1, 12)),
            s(0, Commit),
            s(1, Commit),
        ],
        witnesses: &["lost-update", "G-single"],
    },
    Scenario {
        name: "g-single",
        anomaly: "G-single",
        title: "Read Skew (G-single)",
        read_only: true,
        sessions: 2,
        steps: &[
            s(0, Read(&[1])),
            s(1, Read(&[1])),
            s(1, Read(&[2])),
            s(1, Write(1, 12)),
            s(1, Write(2, 18)),
            s(1, Commit),
            s(0, Read(&[2])),
            s(0, Commit),
        ],
        witnesses: &["G-single", "internal", "G1"],
    },
    Scenario {
        name: "g-single-predicate",
        anomaly: "G-single",
        title: "Read Skew (G-single) using predicate dependencies",
        read_only: true,
        sessions: 2,
        steps: &[s(0, Scan), s(1, Write(1, 12)), s(1, Commit), s(0, Scan), s(0, Commit)],
        witnesses: &["G-single", "internal", "G1"],
    },
    Scenario {
        name: "g-single-write",
        anomaly: "G-single",
        title: "Read Skew (G-single) on a write predicate",
        read_only: false,
        sessions: 2,
        steps: &[
            s(0, Read(&[1])),
            s(1, Scan),
            s(1, Write(1, 12)),
            s(1, Write(2, 18)),
            s(1, Commit),
            s(0, LockingScan),
            s(0, Commit),
        ],
        witnesses: &["G-single", "internal", "G1"],
    },
    Scenario {
        name: "g2-item",
        anomaly: "G2-item",
        title: "Write Skew (G2-item)",
        read_only: false,
        sessions: 2,
        steps: &[
            s(0, Read(&[1, 2])),
            s(1, Read(&[1, 2])),
            s(0, Write(1, 11)),
            s(1, Write(2, 21)),
            s(0, Commit),
            s(1, Commit),
        ],
        witnesses: &["G2", "G-single", "G1", "G0"],
    },
    Scenario {
        name: "g2",
        anomaly: "G2",
        title: "Anti-Dependency Cycles (G2)",
        read_only: false,
        sessions: 2,
        steps: &[s(0, Scan), s(1, Scan), s(0, Insert(3, 30)), s(1, Insert(4, 42)), s(0, Commit), s(1, Commit)],
        witnesses: &["G2", "G-single", "G1", "G0"],
    },
    Scenario {
        name: "g2-fekete",
        anomaly: "G2",
        title: "Anti-Dependency Cycles (G2): Fekete et al.'s example with two anti-dependency edges",
        read_only: false,
        sessions: 3,
        steps: &[
            s(0, Scan),
            s(1, Write(2, 25)),
            s(1, Commit),
            s(2, Scan),
            s(2, Commit),
            s(0, Write(1, 0)),
            s(0, Commit),
        ],
        witnesses: &["G2", "G-single", "G1", "G0"],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    /// Every scenario is well formed: its column exists, its sessions are
    /// in range and each ends its transaction once, as its last statement,
    /// and write values are unique per key (including the initial rows).
    #[test]
    fn scenarios_are_well_formed() {
        let mut names = HashSet::new();
        for sc in SCENARIOS {
            assert!(names.insert(sc.name), "{} twice", sc.name);
            assert!(ANOMALIES.contains(&sc.anomaly), "{}", sc.name);
            let mut values: HashMap<u64, HashSet<u64>> = HashMap::new();
            for (k, v) in INITIAL {
                values.entry(k).or_default().insert(v);
            }
            let mut ended = vec![false; sc.sessions];
            for st in sc.steps {
                assert!(st.session < sc.sessions, "{}", sc.name);
                assert!(!ended[st.session], "{}: a statement after the end", sc.name);
                match st.op {
                    Commit | Abort => ended[st.session] = true,
                    Write(k, v) | Insert(k, v) => {
                        assert!(KEYS.contains(&k), "{}", sc.name);
                        assert!(values.entry(k).or_default().insert(v), "{}: value {v} of key {k} twice", sc.name)
                    }
                    Read(ks) => assert!(ks.iter().all(|k| KEYS.contains(k))),
                    Scan | LockingScan => {}
                }
            }
            assert!(ended.iter().all(|&e| e), "{}: a session never ends", sc.name);
        }
        // Every column has a scenario.
        for a in ANOMALIES {
            assert!(SCENARIOS.iter().any(|s| s.anomaly == a), "{a}");
        }
    }
}
