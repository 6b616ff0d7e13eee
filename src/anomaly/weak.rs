//! The weak levels' anomaly: what a violation of read committed, read atomic
//! or causal consistency (Biswas–Enea; see [`crate::weak`]) reports, as
//! plain data. [`super::Case::Weak`] holds a [`Violation`]: the weakest level
//! violated, the Plume TAP, the Elle anomaly the witness maps onto (if any),
//! and the transactions, reads and writes that show it, with ids a person can
//! look up in the history.
//!
//! The weak checker ([`crate::weak`]) produces these and re-exports them
//! where it always has (`weak::Level`, `weak::Kind`, `weak::front::Sessions`,
//! `weak::front::Finding`, `weak::witness::Violation`); they are defined here,
//! with the other anomaly cases, so that the anomaly data imports nothing but
//! the history model.

use crate::history::{KeyId, OpId};

/// A Biswas–Enea level, as [`crate::weak`] decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Level {
    /// Read committed in Biswas and Enea's sense (strictly stronger than
    /// Adya's PL-2, Elle's `read-committed`).
    ReadCommitted,
    /// Read atomic (Cerone's, = Biswas–Enea's).
    ReadAtomic,
    /// Transactional causal consistency (Cerone's `causal-cerone`).
    Causal,
}

impl Level {
    /// Every level, weakest first.
    pub const ALL: [Level; 3] = [Level::ReadCommitted, Level::ReadAtomic, Level::Causal];

    /// The model name isolde uses for the level.
    pub fn model(self) -> &'static str {
        match self {
            Level::ReadCommitted => "read-committed-be",
            Level::ReadAtomic => "read-atomic",
            Level::Causal => "causal-cerone",
        }
    }
}

/// Which premise forced an edge `t₂ → t₁`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// The reader read `t₂` before reading the key from `t₁` (read committed).
    NonMonotonic,
    /// `t₂` precedes the reader in its session (read atomic).
    FracturedSo,
    /// The reader read `t₂`, after its read of the key (read atomic).
    FracturedWr,
    /// `t₂` reaches the reader only transitively (causal).
    Causal,
}

/// Where session order comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Sessions {
    /// Each `:process` is a session (Biswas–Enea, Cerone; a new session
    /// starts after an `:info`).
    #[default]
    Process,
    /// No session order besides `⊥` first: Elle's plain models.
    None,
}

/// What is wrong with a read that no committed final write explains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FindingKind {
    /// TAP-a: nobody wrote the value.
    ThinAir,
    /// TAP-b: only a `:fail` transaction (`writer`) wrote it.
    Aborted {
        /// The failed operation.
        writer: OpId,
    },
    /// TAP-c: the reading transaction writes it later itself.
    Future,
    /// TAP-d: after writing the key, the transaction read someone else's value.
    NotMyOwnWrite,
    /// TAP-e: after writing the key twice, it read its own earlier write.
    NotMyLastWrite,
    /// TAP-f: another transaction (`writer`) wrote it, but overwrote it itself.
    Intermediate {
        /// The writing operation.
        writer: OpId,
    },
}

impl FindingKind {
    /// The Plume TAP letter.
    pub fn tap(self) -> char {
        match self {
            FindingKind::ThinAir => 'a',
            FindingKind::Aborted { .. } => 'b',
            FindingKind::Future => 'c',
            FindingKind::NotMyOwnWrite => 'd',
            FindingKind::NotMyLastWrite => 'e',
            FindingKind::Intermediate { .. } => 'f',
        }
    }

    /// Elle's anomaly name for the same read (isolde's `garbage-read` for a
    /// thin-air read, which Elle has no name for).
    pub fn elle_name(self) -> &'static str {
        match self {
            FindingKind::ThinAir => "garbage-read",
            FindingKind::Aborted { .. } => "G1a",
            FindingKind::Future => "future-read",
            FindingKind::NotMyOwnWrite | FindingKind::NotMyLastWrite => "internal",
            FindingKind::Intermediate { .. } => "G1b",
        }
    }
}

/// A read that breaks every level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    /// What is wrong.
    pub kind: FindingKind,
    /// The reading operation.
    pub op: OpId,
    /// The read micro-op's index in it.
    pub mop: u32,
    /// The key.
    pub key: KeyId,
}

/// One step of a witness cycle, from its transaction to the next.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum WStep {
    /// Session order (the same process, earlier; or `⊥` before everyone).
    So,
    /// The next transaction read `key` from this one (micro-op `mop` of the
    /// reader).
    Wr {
        /// The key.
        key: KeyId,
        /// The reading micro-op's index in the next transaction.
        mop: u32,
    },
    /// A list read (micro-op `mop` of operation `op`) shows this
    /// transaction's append to `key` right before the next one's.
    Version {
        /// The key.
        key: KeyId,
        /// The reading operation.
        op: OpId,
        /// The read's micro-op index.
        mop: u32,
    },
    /// A forced commit-order edge: this transaction wrote `key` and must
    /// commit before the next, because `reader` read `key` from the next
    /// (micro-op `read_mop`) although this one was visible to it by the
    /// premise `kind` (a read of this one at `via_mop`, session order, or
    /// causality).
    Forced {
        /// The premise that fired.
        kind: Kind,
        /// The reading transaction (`None` is never used: `⊥` reads nothing).
        reader: OpId,
        /// The key.
        key: KeyId,
        /// The reader's micro-op reading `key` from the next transaction.
        read_mop: u32,
        /// The reader's micro-op reading from this transaction, if any.
        via_mop: Option<u32>,
    },
}

/// A cycle over transactions (`None` = the initial transaction `⊥`):
/// `steps[i]` leads from `txns[i]` to `txns[(i + 1) % len]`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WCycle {
    /// The transactions' completion operations.
    pub txns: Vec<Option<OpId>>,
    /// The steps.
    pub steps: Vec<WStep>,
}

impl WCycle {
    /// Whether a step is session order between two real transactions (`⊥`
    /// precedes everyone with or without sessions).
    pub fn session_steps(&self) -> bool {
        self.steps.iter().zip(&self.txns).any(|(s, t)| matches!(s, WStep::So) && t.is_some())
    }
}

/// Why the history violates the level.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Cause {
    /// A read no committed final write explains (TAP-a…f).
    Read(Finding),
    /// Two external reads of one key in one transaction saw different
    /// writers (TAP-j).
    NonRepeatable {
        /// The reading transaction.
        reader: OpId,
        /// The key.
        key: KeyId,
        /// The two read micro-ops.
        mops: [u32; 2],
        /// Their writers (`None` = `⊥`).
        writers: [Option<OpId>; 2],
    },
    /// A cycle in `so ∪ wr ∪ forced edges`.
    Cycle(WCycle),
}

/// A read of a repeated value: the writer assumed for it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Assumed {
    /// The reading operation.
    pub op: OpId,
    /// Its micro-op.
    pub mop: u32,
    /// The writer assumed.
    pub writer: OpId,
    /// Every candidate writer.
    pub candidates: Vec<OpId>,
}

/// A violation of a weak level, with its witness.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Violation {
    /// The weakest level violated (every stronger one is too).
    pub level: Level,
    /// The Plume TAP letter (`a`…`n`, weak.md §7).
    pub tap: char,
    /// Session order used.
    pub sessions: Sessions,
    /// The witness.
    pub cause: Cause,
    /// Writers assumed for reads of repeated values; when non-empty, every
    /// other assumption (`assignments` in all) fails too.
    pub assumed: Vec<Assumed>,
    /// How many writer assignments of repeated values were refuted (1 when
    /// there are none).
    pub assignments: usize,
}

impl Violation {
    /// The anomaly type this violation is reported under: Elle's name where
    /// the witness is one of Elle's anomalies by definition (a read finding,
    /// a cycle of session, read and version steps), otherwise a name for the
    /// Plume TAP family.
    pub fn anomaly_name(&self) -> String {
        match &self.cause {
            Cause::Read(f) => f.kind.elle_name().to_string(),
            Cause::NonRepeatable { .. } => "non-repeatable-read".to_string(),
            Cause::Cycle(c) => match self.tap {
                'h' | 'i' => "non-monotonic-read".to_string(),
                'k' | 'l' => "fractured-read".to_string(),
                'm' | 'n' => "causal-violation".to_string(),
                _ => {
                    let wr = c.steps.iter().any(|s| matches!(s, WStep::Wr { .. }));
                    let so = c.session_steps();
                    format!("{}{}", if wr { "G1c" } else { "G0" }, if so { "-process" } else { "" })
                }
            },
        }
    }

    /// The Elle anomaly a forced-edge cycle maps onto when its forced edges
    /// are read as anti-dependencies (weak.md §2): one gives
    /// `G-single-item`, more give `G-nonadjacent-item` or `G2-item` by
    /// adjacency, with `-process` when the cycle or a premise uses session
    /// order. Elle attributes these to consistent view / snapshot isolation
    /// and can see them only when it knows the version order.
    pub fn elle_analogue(&self) -> Option<String> {
        let Cause::Cycle(c) = &self.cause else { return None };
        let forced: Vec<bool> = c.steps.iter().map(|s| matches!(s, WStep::Forced { .. })).collect();
        let n = forced.iter().filter(|&&b| b).count();
        if n == 0 {
            return None;
        }
        let adjacent = (0..forced.len()).any(|i| forced[i] && forced[(i + 1) % forced.len()]);
        let so = c.session_steps()
            || c.steps.iter().any(|s| matches!(s, WStep::Forced { kind: Kind::FracturedSo | Kind::Causal, .. }));
        let base = match (n, adjacent) {
            (1, _) => "G-single-item",
            (_, false) => "G-nonadjacent-item",
            (_, true) => "G2-item",
        };
        Some(format!("{base}{}", if so { "-process" } else { "" }))
    }
}

impl Violation {
    /// Renumbered in ops and keys (micro-op indices are kept; see
    /// [`super::Renumber`]).
    pub fn renumber(self, r: &mut impl super::Renumber) -> Violation {
        let cause = match self.cause {
            Cause::Read(f) => Cause::Read(Finding { op: r.op(f.op), key: r.key(f.key), ..f }),
            Cause::NonRepeatable { reader, key, mops, writers } => Cause::NonRepeatable {
                reader: r.op(reader),
                key: r.key(key),
                mops,
                writers: [writers[0].map(|w| r.op(w)), writers[1].map(|w| r.op(w))],
            },
            Cause::Cycle(c) => {
                let txns = c.txns.into_iter().map(|t| t.map(|t| r.op(t))).collect();
                let steps = c
                    .steps
                    .into_iter()
                    .map(|s| match s {
                        WStep::So => WStep::So,
                        WStep::Wr { key, mop } => WStep::Wr { key: r.key(key), mop },
                        WStep::Version { key, op, mop } => WStep::Version { key: r.key(key), op: r.op(op), mop },
                        WStep::Forced { kind, reader, key, read_mop, via_mop } => {
                            WStep::Forced { kind, reader: r.op(reader), key: r.key(key), read_mop, via_mop }
                        }
                    })
                    .collect();
                Cause::Cycle(WCycle { txns, steps })
            }
        };
        let assumed = self
            .assumed
            .into_iter()
            .map(|a| Assumed {
                op: r.op(a.op),
                writer: r.op(a.writer),
                candidates: a.candidates.into_iter().map(|c| r.op(c)).collect(),
                mop: a.mop,
            })
            .collect();
        Violation { cause, assumed, ..self }
    }
}
