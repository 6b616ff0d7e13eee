//! Plain data types for everything an analysis can report.
//!
//! Detectors (in [`crate::infer`] and [`crate::cycles`]) produce these; the
//! result map ([`crate::check`]) groups them by anomaly type name, and the
//! printers in [`crate::reports`] render them as Elle does. Every case carries
//! the operations and values that witness it, so a person can check it by hand.
//! The weak levels' violation ([`Case::Weak`]) is plain data too, in [`weak`].
//!
//! This module sits just above the history model and imports nothing else:
//! every stage depends on it, so it depends on no stage.

pub mod weak;

use crate::history::{KeyId, OpId};
use std::collections::BTreeMap;

/// A relationship between two transactions, as a bit in a [`Rels`] set.
pub mod rel {
    /// Write-write dependency: `a` installed a version that `b` overwrote.
    pub const WW: u8 = 1;
    /// Write-read dependency: `b` read a version `a` installed.
    pub const WR: u8 = 2;
    /// Read-write anti-dependency: `a` read a version that `b` overwrote.
    pub const RW: u8 = 4;
    /// Process order: the same process completed `a` before `b`.
    pub const PROCESS: u8 = 8;
    /// Realtime order: `a` completed before `b` was invoked.
    pub const REALTIME: u8 = 16;
    /// Predicate write-write dependency (Adya's; Elle's closed-predicate
    /// workload never infers one, but its cycle specs name it).
    pub const WWP: u8 = 32;
    /// Predicate write-read dependency: `a` installed a version in the
    /// version set of a predicate read of `b`.
    pub const WRP: u8 = 64;
    /// Predicate read-write anti-dependency: a predicate read of `a`
    /// selected a version that `b` overwrote with one that changes whether
    /// the predicate matches.
    pub const RWP: u8 = 128;
    /// Every data dependency.
    pub const DATA: u8 = WW | WR | RW | WWP | WRP | RWP;
}

/// A set of [`rel`] bits labelling one edge.
pub type Rels = u8;

/// Which workload's rules produced an analysis (it decides how steps are
/// explained and in which order relationships take precedence).
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub enum Workload {
    /// Lists with unique appends (traceable).
    ListAppend,
    /// Registers with unique writes (recoverable).
    RwRegister,
    /// Elle's closed-predicate workload: a universe of keys written at most
    /// once after `:init`, and predicate reads.
    ClosedPredicate,
}

impl Workload {
    /// Elle's name for the workload.
    pub fn name(self) -> &'static str {
        match self {
            Workload::ListAppend => "list-append",
            Workload::RwRegister => "rw-register",
            Workload::ClosedPredicate => "closed-predicate",
        }
    }
}

/// A micro-operation inside an op: the op and the mop's position in it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct MopRef {
    /// The operation.
    pub op: OpId,
    /// Index of the micro-op within the op's `:value`.
    pub mop: u32,
}

/// One justified edge of a cycle: why `a` must precede `b`.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub enum Step {
    /// `b` overwrote `a`'s version of `key`: `value` then `value2`.
    Ww {
        /// The key.
        key: KeyId,
        /// `a`'s version (`None` = nil).
        value: Option<i64>,
        /// `b`'s version.
        value2: Option<i64>,
        /// Index of `a`'s mop, if it could be located.
        a_mop: Option<u32>,
        /// Index of `b`'s mop.
        b_mop: Option<u32>,
    },
    /// `b` observed `a`'s write of `value` to `key`.
    Wr {
        /// The key.
        key: KeyId,
        /// The value written and observed.
        value: Option<i64>,
        /// Index of `a`'s mop.
        a_mop: Option<u32>,
        /// Index of `b`'s mop.
        b_mop: Option<u32>,
    },
    /// `a` observed `value` of `key` (`None` = the initial state), which `b`
    /// overwrote with `value2`.
    Rw {
        /// The key.
        key: KeyId,
        /// The version `a` observed (`None` = initial/nil).
        value: Option<i64>,
        /// `b`'s version.
        value2: Option<i64>,
        /// Index of `a`'s read mop.
        a_mop: Option<u32>,
        /// Index of `b`'s write mop.
        b_mop: Option<u32>,
    },
    /// `a` installed `value` of `key`, which was in the version set of
    /// `b`'s predicate read (Elle's micro-op `b_mop`).
    Wrp {
        /// The key.
        key: KeyId,
        /// The version (possibly [`crate::history::DEAD`]).
        value: i64,
        /// Index of `a`'s mop, if it could be located.
        a_mop: Option<u32>,
        /// Index of `b`'s predicate read (Elle's count).
        b_mop: u32,
        /// The key's versions in version order (for the explanation).
        versions: Vec<i64>,
    },
    /// `a`'s predicate read (Elle's micro-op `a_mop`) selected `value` of
    /// `key`, which `b` overwrote with `value2`, changing whether the
    /// predicate matches.
    Rwp {
        /// The key.
        key: KeyId,
        /// The version in the read's version set (possibly
        /// [`crate::history::UNBORN`]).
        value: i64,
        /// `b`'s version (possibly [`crate::history::DEAD`]).
        value2: i64,
        /// Index of `a`'s predicate read (Elle's count).
        a_mop: u32,
        /// Index of `b`'s mop, if it could be located.
        b_mop: Option<u32>,
        /// The key's versions in version order (for the explanation).
        versions: Vec<i64>,
    },
    /// The same process executed `a` before `b`.
    Process {
        /// The process.
        process: i64,
    },
    /// `a` completed (op `a_completion`) before `b` was invoked (op `b_invocation`).
    Realtime {
        /// `a`'s completion.
        a_completion: OpId,
        /// `b`'s invocation.
        b_invocation: OpId,
    },
}

impl Step {
    /// The relationship this step justifies.
    pub fn rel(&self) -> Rels {
        match self {
            Step::Ww { .. } => rel::WW,
            Step::Wr { .. } => rel::WR,
            Step::Rw { .. } => rel::RW,
            Step::Wrp { .. } => rel::WRP,
            Step::Rwp { .. } => rel::RWP,
            Step::Process { .. } => rel::PROCESS,
            Step::Realtime { .. } => rel::REALTIME,
        }
    }

    /// Elle's name for the step type.
    pub fn type_name(&self) -> &'static str {
        match self {
            Step::Ww { .. } => "ww",
            Step::Wr { .. } => "wr",
            Step::Rw { .. } => "rw",
            Step::Wrp { .. } => "wrp",
            Step::Rwp { .. } => "rwp",
            Step::Process { .. } => "process",
            Step::Realtime { .. } => "realtime",
        }
    }
}

/// A dependency cycle: `ops[0] -> ops[1] -> ... -> ops[0]`, with `steps[i]`
/// justifying `ops[i] -> ops[(i+1) % n]`.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Cycle {
    /// The transactions (completion ops), first not repeated at the end.
    pub ops: Vec<OpId>,
    /// One justified step per edge.
    pub steps: Vec<Step>,
    /// Its classification (e.g. `G-single-item-realtime`).
    pub anomaly: String,
}

/// What a transaction expected to read, for `:internal` cases.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub enum Expected {
    /// A list; `unknown_prefix` means Elle's `[... 3]`: some unknown prefix
    /// followed by `elems`.
    List {
        /// Whether an unknown prefix precedes the elements.
        unknown_prefix: bool,
        /// The known elements.
        elems: Vec<i64>,
    },
    /// A register value (`None` = nil).
    Register(Option<i64>),
}

/// A value observed by a read: a list, a register value, or nil.
#[derive(Clone, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
pub enum ReadValue {
    /// nil.
    Nil,
    /// A register value.
    Int(i64),
    /// A list.
    List(Vec<i64>),
}

/// One witnessed anomaly.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub enum Case {
    /// A dependency cycle (G0, G1c, G-single-item, ... and variants).
    Cycle(Cycle),
    /// G1a / G1b: `mop` read a value written by `writer`, which aborted
    /// (G1a) or later overwrote it in the same transaction (G1b).
    BadRead {
        /// The reading micro-op.
        mop: MopRef,
        /// The op that wrote the value.
        writer: OpId,
        /// The element read (list-append only).
        element: Option<i64>,
    },
    /// A read disagreeing with the transaction's own earlier reads/writes.
    Internal {
        /// The reading micro-op.
        mop: MopRef,
        /// What the transaction should have read.
        expected: Expected,
    },
    /// A read of an element the same transaction appends later.
    FutureRead {
        /// The reading micro-op.
        mop: MopRef,
        /// The element.
        element: i64,
    },
    /// An aborted append followed, in the version order, by a committed one.
    DirtyUpdate {
        /// The key.
        key: KeyId,
        /// The elements from the aborted version to the committed one.
        values: Vec<i64>,
        /// The failed op and the committed op (printed `[t1 ... t2]`).
        txns: [OpId; 2],
    },
    /// A read containing some element more than once.
    DuplicateElements {
        /// The reading micro-op.
        mop: MopRef,
        /// Element -> number of occurrences (> 1), sorted by element.
        duplicates: Vec<(i64, usize)>,
    },
    /// Two reads of a key that no single append order can explain.
    IncompatibleOrder {
        /// The key.
        key: KeyId,
        /// The shorter and the longer read.
        values: [Vec<i64>; 2],
    },
    /// Two or more committed transactions read the same version of a key and
    /// each wrote that key.
    LostUpdate {
        /// The key.
        key: KeyId,
        /// The version they all read.
        value: ReadValue,
        /// The transactions.
        txns: Vec<OpId>,
    },
    /// A read of a value that no operation ever wrote (isolde only; Elle
    /// accepts or crashes on these).
    GarbageRead {
        /// The reading micro-op.
        mop: MopRef,
        /// The key.
        key: KeyId,
        /// The value nobody wrote.
        value: i64,
    },
    /// The inferred version order of a register is cyclic; the source of
    /// version facts that made it so was discarded.
    CyclicVersions {
        /// The key.
        key: KeyId,
        /// The values in the cycle (`None` = nil).
        scc: Vec<Option<i64>>,
        /// The version sources in use, ending with the one discarded.
        sources: Vec<String>,
    },
    /// Proof that an SCC exists in the subgraph a model requires acyclic.
    CycleExists {
        /// Friendly name of the model ruled out.
        not: String,
        /// The subgraph spec, as Elle prints it (e.g. `[:union :ww :wr]`).
        subgraph: std::borrow::Cow<'static, str>,
        /// Number of transactions in the smallest such SCC.
        scc_size: usize,
        /// Their `:index`es, sorted.
        scc: Vec<i64>,
    },
    /// The cycle search of an SCC ran out of time.
    CycleSearchTimeout {
        /// The anomaly type being searched when time ran out.
        spec_type: String,
        /// Types fully searched and not found.
        does_not_contain: Vec<String>,
        /// Size of the SCC.
        scc_size: usize,
    },
    /// A read that does not fit the part of its key's version order that
    /// `--follow` collected (isolde only; see [`crate::online::collect`]):
    /// the transactions that appended `prefix` and `pending` all completed
    /// (by history line `line`) before `op` was invoked, so `op` must read
    /// `prefix`, then every pending element, then the rest.
    CollectedPrefix {
        /// The reading transaction (its read is not in the checked window).
        op: OpId,
        /// The key.
        key: KeyId,
        /// What it read.
        read: Vec<i64>,
        /// The collected prefix of the key's version order.
        prefix: Vec<i64>,
        /// Collected elements no read had placed yet.
        pending: Vec<i64>,
        /// The line by which every collected appender of the key completed.
        line: u32,
    },
    /// A register read of a version that `--follow` collected as
    /// overwritten (isolde only; see [`crate::online::fenced`]): every
    /// collected writer of `key` precedes `op` by fence transactions (by
    /// realtime, when `realtime`), so
    /// `op` must read the last of them (`frontier`, whose writer completed
    /// on line `line`) or a later version. `value` (`None`: the initial
    /// state) was overwritten by `frontier` (or, when `intermediate`, by
    /// its own writer), so `op →rw` that writer and back by fences: a
    /// cycle with one anti-dependency (an intermediate read when
    /// `intermediate`).
    CollectedWrite {
        /// The reading transaction (its read is not in the checked window).
        op: OpId,
        /// The key.
        key: KeyId,
        /// What it read (`None`: the initial state).
        value: Option<i64>,
        /// The version the collected writers left last.
        frontier: i64,
        /// The line on which the transaction that wrote `frontier` completed.
        line: u32,
        /// `value` was overwritten inside the transaction that wrote it.
        intermediate: bool,
        /// Realtime (strict serializability) orders the collected writers
        /// before `op`, not fences.
        realtime: bool,
    },
    /// A register read of a value that only a failed transaction wrote,
    /// where `--follow` had already collected that transaction (isolde
    /// only; see `online::fenced`): an aborted read. Only the key and the
    /// value are kept of a collected failed transaction.
    CollectedAborted {
        /// The reading transaction (its read is not in the checked window).
        op: OpId,
        /// The key.
        key: KeyId,
        /// What it read.
        value: i64,
    },
    /// A predicate read that must have observed `key` and did not
    /// (closed-predicate, Elle's `:predicate-read-miss`): the predicate
    /// matches every version of the key, yet the key is not in the result.
    PredicateReadMiss {
        /// The predicate read (its stored position in the op).
        mop: MopRef,
        /// The key.
        key: KeyId,
        /// Every version of the key, in version order.
        versions: Vec<i64>,
    },
    /// The dependency graph had no edges at all.
    EmptyTransactionGraph,
    /// A refutation by the exact (polygraph) check: no order of the writes
    /// explains the history at the level checked.
    Refuted(Box<Refutation>),
    /// A violation of a Biswas–Enea weak level (read committed, read atomic,
    /// causal) with its witness (isolde only; see [`crate::weak`]).
    Weak(Box<weak::Violation>),
    /// The exact check could not decide (a time or size limit; isolde only).
    ExactCheckUnknown {
        /// Elle's name of the level being checked.
        model: String,
        /// What was still open.
        detail: String,
    },
}

/// Two writes of a key in a version order: `first`'s version precedes
/// `second`'s.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct WriteOrder {
    /// The key.
    pub key: KeyId,
    /// The earlier writer (completion op) and the value it wrote.
    pub first: (OpId, i64),
    /// The later writer and its value.
    pub second: (OpId, i64),
}

/// A read whose value more than one transaction wrote, assumed to have
/// read from one of them.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct ReadFrom {
    /// The key.
    pub key: KeyId,
    /// The value read.
    pub value: i64,
    /// The reading transaction (completion op).
    pub reader: OpId,
    /// The writer assumed.
    pub writer: OpId,
    /// Every transaction the read could have come from.
    pub candidates: Vec<OpId>,
}

/// One case of a refutation: assuming some write orders (and, for reads of
/// repeated values, which write each read observed), this cycle closes.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Branch {
    /// The write orders assumed (empty when the cycle needs none).
    pub assume: Vec<WriteOrder>,
    /// The writers assumed for reads with several candidates.
    pub reads: Vec<ReadFrom>,
    /// The cycle.
    pub cycle: Cycle,
}

/// A write order the refutation relies on, with its reason: the opposite
/// order would close `because`.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Justified {
    /// The order that must hold.
    pub order: WriteOrder,
    /// The cycle the opposite order closes (its first step is the opposite
    /// order's edge).
    pub because: Cycle,
}

/// Proof that a register history violates a level, by case analysis over the
/// write orders the history leaves open: every branch assumes one
/// combination of orders and shows a cycle, the branches cover every
/// combination, and write orders used without being assumed are justified
/// in `derived`. With no open order there is a single branch whose cycle
/// uses only inferred and justified dependencies.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Refutation {
    /// Elle's name of the model refuted (e.g. `snapshot-isolation`).
    pub model: String,
    /// The cases.
    pub branches: Vec<Branch>,
    /// Write orders forced by the rest of the history.
    pub derived: Vec<Justified>,
    /// True when the cases shown are only some of those the solver refuted
    /// (too many to list); the verdict is still exact.
    pub partial: bool,
}

/// Anomaly type name -> cases, sorted by name as Elle sorts keywords.
pub type Anomalies = BTreeMap<String, Vec<Case>>;

/// Adds a case under `name`.
pub fn add(anomalies: &mut Anomalies, name: &str, case: Case) {
    anomalies.entry(name.to_string()).or_default().push(case);
}

/// Renames the operations and keys a case names (a distributed run moves
/// cases between numberings: a key owner's, the whole history's, the
/// report's). [`Renumber::mop`] renames a micro-op index inside its
/// (original) op; it applies to [`MopRef`]s and cycle steps. Weak-level
/// violations and refutations keep their micro-op indices (no distributed
/// stage produces them where micro-ops are renumbered).
pub trait Renumber {
    /// The new id of an operation.
    fn op(&mut self, op: OpId) -> OpId;
    /// The new id of a key.
    fn key(&mut self, key: KeyId) -> KeyId;
    /// The new index of micro-op `mop` of `op` (the old op id).
    fn mop(&mut self, op: OpId, mop: u32) -> u32 {
        let _ = op;
        mop
    }
}

impl MopRef {
    /// Renumbered.
    pub fn renumber(self, r: &mut impl Renumber) -> MopRef {
        MopRef { op: r.op(self.op), mop: r.mop(self.op, self.mop) }
    }
}

impl Step {
    /// Renumbered; `a` and `b` are the (old) ops the step goes between.
    pub fn renumber(self, a: OpId, b: OpId, r: &mut impl Renumber) -> Step {
        let m = |op: OpId, x: Option<u32>, r: &mut dyn FnMut(OpId, u32) -> u32| x.map(|x| r(op, x));
        match self {
            Step::Ww { key, value, value2, a_mop, b_mop } => {
                let key = r.key(key);
                let a_mop = m(a, a_mop, &mut |o, x| r.mop(o, x));
                let b_mop = m(b, b_mop, &mut |o, x| r.mop(o, x));
                Step::Ww { key, value, value2, a_mop, b_mop }
            }
            Step::Wr { key, value, a_mop, b_mop } => {
                let key = r.key(key);
                let a_mop = m(a, a_mop, &mut |o, x| r.mop(o, x));
                let b_mop = m(b, b_mop, &mut |o, x| r.mop(o, x));
                Step::Wr { key, value, a_mop, b_mop }
            }
            Step::Rw { key, value, value2, a_mop, b_mop } => {
                let key = r.key(key);
                let a_mop = m(a, a_mop, &mut |o, x| r.mop(o, x));
                let b_mop = m(b, b_mop, &mut |o, x| r.mop(o, x));
                Step::Rw { key, value, value2, a_mop, b_mop }
            }
            Step::Wrp { key, value, a_mop, b_mop, versions } => {
                let key = r.key(key);
                let a_mop = m(a, a_mop, &mut |o, x| r.mop(o, x));
                Step::Wrp { key, value, a_mop, b_mop: r.mop(b, b_mop), versions }
            }
            Step::Rwp { key, value, value2, a_mop, b_mop, versions } => {
                let key = r.key(key);
                let b_mop = m(b, b_mop, &mut |o, x| r.mop(o, x));
                Step::Rwp { key, value, value2, a_mop: r.mop(a, a_mop), b_mop, versions }
            }
            Step::Process { process } => Step::Process { process },
            Step::Realtime { a_completion, b_invocation } => {
                Step::Realtime { a_completion: r.op(a_completion), b_invocation: r.op(b_invocation) }
            }
        }
    }
}

impl Cycle {
    /// Renumbered.
    pub fn renumber(self, r: &mut impl Renumber) -> Cycle {
        let n = self.ops.len();
        let steps = self
            .steps
            .into_iter()
            .enumerate()
            .map(|(i, s)| s.renumber(self.ops[i], self.ops[(i + 1) % n], r))
            .collect();
        let ops = self.ops.iter().map(|&o| r.op(o)).collect();
        Cycle { ops, steps, anomaly: self.anomaly }
    }
}

impl WriteOrder {
    fn renumber(self, r: &mut impl Renumber) -> WriteOrder {
        WriteOrder {
            key: r.key(self.key),
            first: (r.op(self.first.0), self.first.1),
            second: (r.op(self.second.0), self.second.1),
        }
    }
}

impl Case {
    /// Renumbered (see [`Renumber`]).
    pub fn renumber(self, r: &mut impl Renumber) -> Case {
        match self {
            Case::Cycle(c) => Case::Cycle(c.renumber(r)),
            Case::BadRead { mop, writer, element } => {
                Case::BadRead { mop: mop.renumber(r), writer: r.op(writer), element }
            }
            Case::Internal { mop, expected } => Case::Internal { mop: mop.renumber(r), expected },
            Case::FutureRead { mop, element } => Case::FutureRead { mop: mop.renumber(r), element },
            Case::DirtyUpdate { key, values, txns } => {
                Case::DirtyUpdate { key: r.key(key), values, txns: [r.op(txns[0]), r.op(txns[1])] }
            }
            Case::DuplicateElements { mop, duplicates } => Case::DuplicateElements { mop: mop.renumber(r), duplicates },
            Case::IncompatibleOrder { key, values } => Case::IncompatibleOrder { key: r.key(key), values },
            Case::LostUpdate { key, value, txns } => {
                Case::LostUpdate { key: r.key(key), value, txns: txns.into_iter().map(|t| r.op(t)).collect() }
            }
            Case::GarbageRead { mop, key, value } => Case::GarbageRead { mop: mop.renumber(r), key: r.key(key), value },
            Case::CyclicVersions { key, scc, sources } => Case::CyclicVersions { key: r.key(key), scc, sources },
            Case::PredicateReadMiss { mop, key, versions } => {
                Case::PredicateReadMiss { mop: mop.renumber(r), key: r.key(key), versions }
            }
            c @ (Case::CycleExists { .. }
            | Case::CycleSearchTimeout { .. }
            | Case::EmptyTransactionGraph
            | Case::ExactCheckUnknown { .. }) => c,
            Case::CollectedPrefix { op, key, read, prefix, pending, line } => {
                Case::CollectedPrefix { op: r.op(op), key: r.key(key), read, prefix, pending, line }
            }
            Case::CollectedWrite { op, key, value, frontier, line, intermediate, realtime } => {
                Case::CollectedWrite { op: r.op(op), key: r.key(key), value, frontier, line, intermediate, realtime }
            }
            Case::CollectedAborted { op, key, value } => {
                Case::CollectedAborted { op: r.op(op), key: r.key(key), value }
            }
            Case::Refuted(x) => {
                let x = *x;
                let branches = x
                    .branches
                    .into_iter()
                    .map(|b| Branch {
                        assume: b.assume.into_iter().map(|w| w.renumber(r)).collect(),
                        reads: b
                            .reads
                            .into_iter()
                            .map(|f| ReadFrom {
                                key: r.key(f.key),
                                value: f.value,
                                reader: r.op(f.reader),
                                writer: r.op(f.writer),
                                candidates: f.candidates.into_iter().map(|c| r.op(c)).collect(),
                            })
                            .collect(),
                        cycle: b.cycle.renumber(r),
                    })
                    .collect();
                let derived = x
                    .derived
                    .into_iter()
                    .map(|j| Justified { order: j.order.renumber(r), because: j.because.renumber(r) })
                    .collect();
                Case::Refuted(Box::new(Refutation { branches, derived, ..x }))
            }
            Case::Weak(v) => Case::Weak(Box::new(v.renumber(r))),
        }
    }
}
