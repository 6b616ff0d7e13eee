//! The common front end of the weak-level checkers (weak.md §3.0, §4).
//!
//! From a [`History`] it builds the Biswas–Enea history `⟨T, so, wr⟩`:
//!
//! * **transactions**: a virtual initial transaction `⊥` ([`BOTTOM`]) that
//!   writes every key's initial value, every `:ok` transaction, and every
//!   `:info` transaction, and every invocation nothing completed that is
//!   its process's last op (Jepsen's and Elle's reading: it may have
//!   committed; online, it is still running). An `:info` transaction
//!   takes part only through its writes: its reads are unknown (Jepsen
//!   records only the invocation), and it is the last of its session, so
//!   when nobody reads from it it adds no constraint at all (which is
//!   exactly dropping it, §4.2). `:fail`
//!   transactions are not transactions; their writes are *aborted*.
//! * **sessions** (`so`): each process's transactions in history order,
//!   a new session after each `:info` (Jepsen retires a process there);
//!   with [`Sessions::None`] every transaction is its own session, which is
//!   Elle's plain, session-free semantics. `⊥` precedes everyone.
//! * **external reads** in program order, each resolved to the transaction
//!   whose final write of the key has the value read (`nil`, or the empty
//!   list, to `⊥`). A value several transactions wrote last is a
//!   [`ReadFrom::Choice`] among them (§4.4): the driver decides it by
//!   trying the choices, never by guessing one.
//! * **read findings** (TAP-a…f): reads no committed final write explains.
//!   Each breaks every level; they are kept as witnesses.
//! * for list-append, **version edges** (§4.5): the appender of each element
//!   of a read list commits before the appender of the next element.
//!
//! Everything is linear in the size of the history (hashing by key and
//! value).

pub use crate::anomaly::weak::{Finding, FindingKind, Sessions};

use crate::anomaly::Workload;
use crate::history::{History, KeyId, MopFn, MopValue, OpId, OpType, NONE};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use thiserror::Error;

/// Dense index of a transaction; [`BOTTOM`] is the initial transaction.
pub type TxnId = u32;

/// The initial transaction `⊥`.
pub const BOTTOM: TxnId = 0;

/// Who an external read observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadFrom {
    /// This transaction's final write ([`BOTTOM`] for the initial value).
    Txn(TxnId),
    /// One of several transactions that wrote the value last: an index into
    /// [`Front::choices`].
    Choice(u32),
}

/// An external read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtRead {
    /// The key read.
    pub key: KeyId,
    /// Its writer.
    pub from: ReadFrom,
    /// Index of the read micro-op in its operation.
    pub mop: u32,
}

/// A version-order fact of a list read: `from`'s append precedes `to`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionEdge {
    /// Appender of the earlier element.
    pub from: TxnId,
    /// Appender of the next element.
    pub to: TxnId,
    /// The key.
    pub key: KeyId,
    /// The operation whose read shows the two elements side by side.
    pub op: OpId,
    /// That read's micro-op index.
    pub mop: u32,
}

/// Histories the front end cannot turn into a Biswas–Enea history.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrontError {
    /// List-append needs each element appended once (reads are traced
    /// element by element).
    #[error("key {key}: element {element} was appended by more than one operation; list-append needs unique elements")]
    DuplicateElement {
        /// The key, as written.
        key: String,
        /// The element, as written.
        element: String,
    },
    /// A closed-predicate history: the Biswas–Enea checks have no
    /// predicate reads.
    #[error("{}", super::PREDICATES_UNKNOWN)]
    Predicates,
    /// A micro-op the workload does not have.
    #[error("a :{mop} micro-op in a {workload} history (operation index {index})")]
    UnexpectedMop {
        /// The micro-op.
        mop: &'static str,
        /// The workload.
        workload: &'static str,
        /// Its operation's `:index`.
        index: i64,
    },
}

/// The Biswas–Enea history of a [`History`], in flat arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Front {
    /// Completion operation of each transaction ([`NONE`] for `⊥`).
    pub op: Vec<OpId>,
    /// Whether the transaction is an `:info` one.
    pub info: Vec<bool>,
    /// Session of each transaction (`u32::MAX` for `⊥`).
    pub session: Vec<u32>,
    /// Position within its session.
    pub pos: Vec<u32>,
    /// The sessions, each in order.
    pub sessions: Vec<Vec<TxnId>>,
    /// External reads of `t`: `reads[read_start[t]..read_start[t + 1]]`, in
    /// program order.
    pub reads: Vec<ExtRead>,
    /// Offsets into `reads`.
    pub read_start: Vec<u32>,
    /// Keys `t` writes (its final writes), sorted: `writes[write_start[t]..]`.
    pub writes: Vec<KeyId>,
    /// Offsets into `writes`.
    pub write_start: Vec<u32>,
    /// Candidate writers of each ambiguous read (at least two each).
    pub choices: Vec<Vec<TxnId>>,
    /// Reads no committed final write explains.
    pub findings: Vec<Finding>,
    /// List-append version facts.
    pub version_edges: Vec<VersionEdge>,
    /// The transaction of each operation (`NONE` if it is none).
    pub txn_of_op: Vec<TxnId>,
}

impl Front {
    /// The same history with every transaction its own session (what
    /// [`build`] makes with [`Sessions::None`]): only the session order
    /// changes, so a check with sessions and its recheck without them share
    /// one build.
    pub fn into_without_sessions(mut self) -> Front {
        let n = self.op.len() as TxnId;
        self.session = std::iter::once(u32::MAX).chain(0..n.saturating_sub(1)).collect();
        self.pos = vec![0; n as usize];
        self.sessions = (1..n).map(|t| vec![t]).collect();
        self
    }

    /// Number of transactions, `⊥` included.
    pub fn len(&self) -> usize {
        self.op.len()
    }

    /// True when there is no transaction besides `⊥`.
    pub fn is_empty(&self) -> bool {
        self.op.len() <= 1
    }

    /// External reads of `t`, in program order.
    pub fn reads_of(&self, t: TxnId) -> &[ExtRead] {
        &self.reads[self.read_start[t as usize] as usize..self.read_start[t as usize + 1] as usize]
    }

    /// Keys `t` writes, sorted. `⊥` writes every key, which the checkers
    /// treat specially (an edge into or out of `⊥` needs no key).
    pub fn writes_of(&self, t: TxnId) -> &[KeyId] {
        &self.writes[self.write_start[t as usize] as usize..self.write_start[t as usize + 1] as usize]
    }

    /// Whether `t` writes `key` (`⊥` writes every key).
    pub fn writes_key(&self, t: TxnId, key: KeyId) -> bool {
        t == BOTTOM || self.writes_of(t).binary_search(&key).is_ok()
    }
}

/// Value identity used for `nil` and the empty list (the initial state).
const INIT: i64 = i64::MIN;

/// The value a write or append micro-op writes (its identity).
fn written(v: MopValue) -> Option<i64> {
    match v {
        MopValue::Int(x) => Some(x),
        _ => None,
    }
}

/// Builds the Biswas–Enea history of `h` under `workload`'s rules.
pub fn build(h: &History, workload: Workload, sessions: Sessions) -> Result<Front, FrontError> {
    // About eight ranges per thread balance uneven transactions; a small
    // history is not worth a fork.
    let pieces = if h.ops.len() < 1 << 15 { 1 } else { 8 * rayon::current_num_threads() as u32 };
    build_in_pieces(h, workload, sessions, pieces)
}

/// [`build`] with the read pass over `pieces` ranges of transactions, run
/// in parallel and joined in order: the result is the same for every count
/// (a property test holds it to that); [`build`] picks the count by size.
pub fn build_in_pieces(h: &History, workload: Workload, sessions: Sessions, pieces: u32) -> Result<Front, FrontError> {
    let writes_fn = match workload {
        Workload::RwRegister => MopFn::Write,
        Workload::ListAppend => MopFn::Append,
        Workload::ClosedPredicate => return Err(FrontError::Predicates),
    };
    let mut f = Front { txn_of_op: vec![NONE; h.ops.len()], ..Front::default() };
    // ⊥.
    f.op.push(NONE);
    f.info.push(false);
    f.session.push(u32::MAX);
    f.pos.push(0);
    // Transactions and sessions.
    let mut open: FxHashMap<i64, u32> = FxHashMap::default();
    // Each process's last op: an invocation nothing completed and that its
    // process did not follow with anything may have committed (`:info`).
    // One its process followed with another invocation was superseded
    // (the pairing left it behind) and stays out, as before.
    let mut last_op: FxHashMap<i64, usize> = FxHashMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        last_op.insert(op.process, i);
    }
    for (i, op) in h.ops.iter().enumerate() {
        let info = match op.op_type {
            OpType::Ok => false,
            OpType::Info => true,
            OpType::Invoke if op.pair == NONE && last_op.get(&op.process) == Some(&i) => true,
            _ => continue,
        };
        for m in h.mops_of(op) {
            let wrong = match (workload, m.f) {
                (Workload::RwRegister, MopFn::Append) => Some("append"),
                (Workload::ListAppend, MopFn::Write) => Some("w"),
                (_, MopFn::Insert | MopFn::Delete) => Some(m.f.name()),
                (_, MopFn::PredRead | MopFn::PredEntry) => Some("rp"),
                _ => None,
            };
            if let Some(mop) = wrong {
                return Err(FrontError::UnexpectedMop { mop, workload: workload.name(), index: op.index });
            }
        }
        let t = f.op.len() as TxnId;
        f.txn_of_op[i] = t;
        f.op.push(i as OpId);
        f.info.push(info);
        let s = match (sessions, open.get(&op.process)) {
            (Sessions::Process, Some(&s)) => s,
            _ => {
                f.sessions.push(Vec::new());
                let s = (f.sessions.len() - 1) as u32;
                if sessions == Sessions::Process {
                    open.insert(op.process, s);
                }
                s
            }
        };
        f.session.push(s);
        f.pos.push(f.sessions[s as usize].len() as u32);
        f.sessions[s as usize].push(t);
        if info {
            open.remove(&op.process);
        }
    }
    // Index writes: final writers of each (key, value); every other writer
    // (intermediate, aborted) for the findings.
    // The final writer of each (key, value), and every final writer of the
    // values more than one transaction wrote last.
    let final_writes: usize =
        (1..f.op.len()).map(|t| h.mops_of(h.op(f.op[t])).iter().filter(|m| m.f == writes_fn).count()).sum();
    let mut finals: FxHashMap<(KeyId, i64), TxnId> =
        FxHashMap::with_capacity_and_hasher(final_writes, Default::default());
    let mut repeated: FxHashMap<(KeyId, i64), Vec<TxnId>> = FxHashMap::default();
    let mut other: FxHashMap<(KeyId, i64), OpId> = FxHashMap::default();
    let mut aborted: FxHashMap<(KeyId, i64), OpId> = FxHashMap::default();
    f.write_start.push(0);
    f.write_start.push(0);
    let mut keys: Vec<KeyId> = Vec::new();
    let mut appended: FxHashMap<(KeyId, i64), TxnId> = FxHashMap::with_capacity_and_hasher(
        if workload == Workload::ListAppend { final_writes } else { 0 },
        Default::default(),
    );
    for t in 1..f.op.len() as TxnId {
        let op = h.op(f.op[t as usize]);
        let mops = h.mops_of(op);
        keys.clear();
        for (mi, m) in mops.iter().enumerate() {
            if m.f != writes_fn {
                continue;
            }
            let Some(v) = written(m.value) else { continue };
            let last = !mops[mi + 1..].iter().any(|n| n.f == writes_fn && n.key == m.key);
            if last {
                keys.push(m.key);
                match finals.get(&(m.key, v)) {
                    None => {
                        finals.insert((m.key, v), t);
                    }
                    Some(&w) if w == t => {}
                    Some(&w) => {
                        let ws = repeated.entry((m.key, v)).or_insert_with(|| vec![w]);
                        if !ws.contains(&t) {
                            ws.push(t);
                        }
                    }
                }
            } else {
                other.entry((m.key, v)).or_insert(f.op[t as usize]);
            }
            if workload == Workload::ListAppend {
                if appended.contains_key(&(m.key, v)) {
                    return Err(FrontError::DuplicateElement {
                        key: h.key(m.key).to_string(),
                        element: h.value_text(v),
                    });
                }
                appended.insert((m.key, v), t);
            }
        }
        keys.sort_unstable();
        keys.dedup();
        f.writes.extend_from_slice(&keys);
        f.write_start.push(f.writes.len() as u32);
    }
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type == OpType::Fail {
            for m in h.mops_of(op) {
                if let (true, Some(v)) = (m.f == writes_fn, written(m.value)) {
                    aborted.entry((m.key, v)).or_insert(i as OpId);
                }
            }
        }
    }
    // External reads, in parallel ranges of transactions (each a pure
    // function of the write index), joined in transaction order: the same
    // arrays a single pass makes.
    let n = f.op.len() as TxnId;
    let ctx = ReadCtx {
        h,
        workload,
        writes_fn,
        op: &f.op,
        txn_of_op: &f.txn_of_op,
        finals: &finals,
        repeated: &repeated,
        other: &other,
        aborted: &aborted,
    };
    let pieces = pieces.max(1);
    let step = (n - 1).div_ceil(pieces).max(1);
    let parts: Vec<ReadPart> =
        (0..pieces).into_par_iter().map(|p| ctx.reads((1 + p * step).min(n)..(1 + (p + 1) * step).min(n))).collect();
    let total = |len: fn(&ReadPart) -> usize| parts.iter().map(len).sum::<usize>();
    let mut reads = Vec::with_capacity(total(|p| p.reads.len()));
    let mut choices = Vec::with_capacity(total(|p| p.choices.len()));
    let mut findings = Vec::with_capacity(total(|p| p.findings.len()));
    let mut version_edges = Vec::with_capacity(total(|p| p.version_edges.len()));
    f.read_start.reserve(n as usize + 1);
    f.read_start.push(0);
    f.read_start.push(0);
    for part in parts {
        let shift = choices.len() as u32;
        for mut r in part.reads {
            if let ReadFrom::Choice(c) = &mut r.from {
                *c += shift;
            }
            reads.push(r);
        }
        let base = *f.read_start.last().unwrap_or(&0);
        f.read_start.extend(part.ends.iter().map(|&e| base + e));
        choices.extend(part.choices);
        findings.extend(part.findings);
        version_edges.extend(part.version_edges);
    }
    f.reads = reads;
    f.choices = choices;
    f.findings = findings;
    version_edges.sort_unstable_by_key(|e| (e.from, e.to));
    version_edges.dedup_by_key(|e| (e.from, e.to));
    f.version_edges = version_edges;
    Ok(f)
}

/// What the read pass looks up: the history and the write index.
struct ReadCtx<'a> {
    h: &'a History,
    workload: Workload,
    writes_fn: MopFn,
    op: &'a [OpId],
    txn_of_op: &'a [TxnId],
    finals: &'a FxHashMap<(KeyId, i64), TxnId>,
    repeated: &'a FxHashMap<(KeyId, i64), Vec<TxnId>>,
    other: &'a FxHashMap<(KeyId, i64), OpId>,
    aborted: &'a FxHashMap<(KeyId, i64), OpId>,
}

/// The read pass's output for a range of transactions; choices are
/// numbered within the part, and `ends[i]` is the number of the part's
/// reads up to and including its `i`-th transaction.
#[derive(Default)]
struct ReadPart {
    reads: Vec<ExtRead>,
    ends: Vec<u32>,
    choices: Vec<Vec<TxnId>>,
    findings: Vec<Finding>,
    version_edges: Vec<VersionEdge>,
}

impl ReadCtx<'_> {
    /// The writer of an element (list-append) for version edges and findings.
    fn element_writer(&self, k: KeyId, e: i64) -> Option<TxnId> {
        if let Some(&w) = self.finals.get(&(k, e)) {
            return Some(w);
        }
        self.other.get(&(k, e)).map(|&o| self.txn_of_op[o as usize])
    }

    /// A list read's facts: a version edge between the appenders of each
    /// two adjacent elements, a finding for each element before the last
    /// that no committed append explains. Returns the value it stands for
    /// (its last element).
    fn list_facts(&self, part: &mut ReadPart, o: OpId, mi: u32, key: KeyId, list: &[i64]) -> i64 {
        for w in list.windows(2) {
            if let (Some(a), Some(b)) = (self.element_writer(key, w[0]), self.element_writer(key, w[1])) {
                if a != b && a != NONE && b != NONE {
                    part.version_edges.push(VersionEdge { from: a, to: b, key, op: o, mop: mi });
                }
            }
        }
        for &e in &list[..list.len().saturating_sub(1)] {
            if self.element_writer(key, e).is_none() {
                let kind = match self.aborted.get(&(key, e)) {
                    Some(&w) => FindingKind::Aborted { writer: w },
                    None => FindingKind::ThinAir,
                };
                part.findings.push(Finding { kind, op: o, mop: mi, key });
            }
        }
        list.last().copied().unwrap_or(INIT)
    }

    /// External reads, read findings and version edges of the transactions
    /// in `range`, in order.
    fn reads(&self, range: std::ops::Range<TxnId>) -> ReadPart {
        let mut part = ReadPart { ends: Vec::with_capacity(range.len()), ..ReadPart::default() };
        let mut own: FxHashMap<KeyId, i64> = FxHashMap::default();
        for t in range {
            let o = self.op[t as usize];
            let op = self.h.op(o);
            if op.op_type == OpType::Ok {
                own.clear();
                let mops = self.h.mops_of(op);
                for (mi, m) in mops.iter().enumerate() {
                    if m.f == self.writes_fn {
                        if let Some(v) = written(m.value) {
                            own.insert(m.key, v);
                        }
                        continue;
                    }
                    let mi = mi as u32;
                    let finding = |kind| Finding { kind, op: o, mop: mi, key: m.key };
                    // The value read: the register value, or the list's last element.
                    let value = match (self.workload, m.value) {
                        (_, MopValue::Nil) => INIT,
                        (Workload::RwRegister, MopValue::Int(v)) => v,
                        (Workload::ListAppend, MopValue::List { .. }) => {
                            self.list_facts(&mut part, o, mi, m.key, self.h.list(m.value))
                        }
                        _ => continue,
                    };
                    if let Some(&mine) = own.get(&m.key) {
                        if value != mine {
                            let earlier = mops[..mi as usize]
                                .iter()
                                .any(|n| n.f == self.writes_fn && n.key == m.key && written(n.value) == Some(value));
                            part.findings.push(finding(if earlier {
                                FindingKind::NotMyLastWrite
                            } else {
                                FindingKind::NotMyOwnWrite
                            }));
                        }
                        continue;
                    }
                    if value == INIT {
                        part.reads.push(ExtRead { key: m.key, from: ReadFrom::Txn(BOTTOM), mop: mi });
                        continue;
                    }
                    let cands: Vec<TxnId> = match (self.finals.get(&(m.key, value)), self.repeated.get(&(m.key, value)))
                    {
                        (_, Some(ws)) => ws.iter().copied().filter(|&w| w != t).collect(),
                        (Some(&w), None) if w != t => {
                            part.reads.push(ExtRead { key: m.key, from: ReadFrom::Txn(w), mop: mi });
                            continue;
                        }
                        _ => Vec::new(),
                    };
                    match cands[..] {
                        [w] => part.reads.push(ExtRead { key: m.key, from: ReadFrom::Txn(w), mop: mi }),
                        [] => {
                            let later_own = mops[mi as usize + 1..]
                                .iter()
                                .any(|n| n.f == self.writes_fn && n.key == m.key && written(n.value) == Some(value));
                            let kind = if later_own {
                                FindingKind::Future
                            } else if let Some(&w) = self.other.get(&(m.key, value)) {
                                FindingKind::Intermediate { writer: w }
                            } else if let Some(&w) = self.aborted.get(&(m.key, value)) {
                                FindingKind::Aborted { writer: w }
                            } else {
                                FindingKind::ThinAir
                            };
                            part.findings.push(finding(kind));
                        }
                        _ => {
                            part.choices.push(cands);
                            part.reads.push(ExtRead {
                                key: m.key,
                                from: ReadFrom::Choice((part.choices.len() - 1) as u32),
                                mop: mi,
                            });
                        }
                    }
                }
            }
            part.ends.push(part.reads.len() as u32);
        }
        part
    }
}
