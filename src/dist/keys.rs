//! The key shuffle: Elle's inference, each key on its owner.
//!
//! Elle's list-append and rw-register inference is per key: a key's version
//! order, its ww / wr / rw edges and its non-cycle anomalies (aborted,
//! intermediate, future and garbage reads, internal inconsistency, dirty and
//! lost updates, duplicates, incompatible orders, duplicate appends) depend
//! only on the micro-ops of that key, the types, processes and history
//! order of the operations that hold them, and whether their invocations
//! are paired. So each key has an owner (a hash of its text), every window
//! sends each operation's micro-ops to the owners of their keys, and each
//! owner runs the single-process inference ([`crate::infer`]) unchanged on a
//! history of its keys: the operations that touch them, in global order,
//! with only those micro-ops (and without `:time`, which inference never
//! reads), and zero-micro-op stand-ins for partners that
//! touch none (so that "is this invocation paired" reads as in the whole
//! history).
//!
//! What comes back is renumbered into the whole history: op ids are global,
//! micro-op indices are the operation's own (each record carries them), and
//! a key is `owner-local id × workers + owner`. Each data edge carries, per
//! relationship, the step the workload's explainer gives for it on this
//! owner with a rank: across owners the single-process explainer would
//! return the step of the lowest rank (list-append tries `b`'s micro-ops in
//! order; rw-register `a`'s keys in order of first access), so the windows
//! keep, per edge and relationship, the step of the lowest rank, and cycle
//! explanations are the single run's.

use super::bsp::{self, Bsp};
use super::lists::{Decoder, Encoder, Place, WireList};
use super::window::Window;
use super::DistError;
use crate::anomaly::{rel, Case, Renumber, Step, Workload};
use crate::history::{Atom, History, KeyId, Mop, MopFn, MopValue, Op, OpId, OpType, Value, NONE};
use crate::infer::{self, InferError};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

/// A micro-op's value on the wire.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
enum WireValue {
    Nil,
    Int(i64),
    List(WireList),
}

/// One micro-op on the wire.
#[derive(serde::Serialize, serde::Deserialize)]
struct MopRec {
    /// Its index in its operation.
    at: u32,
    f: MopFn,
    /// Index into the batch's key texts.
    key: u32,
    value: WireValue,
}

/// One operation on the wire: its fields and its micro-ops on the
/// receiver's keys.
#[derive(serde::Serialize, serde::Deserialize)]
struct OpRec {
    gid: OpId,
    index: i64,
    line: u32,
    ty: OpType,
    process: i64,
    /// The global partner ([`NONE`] when unpaired) and its type.
    partner: OpId,
    partner_ty: Option<OpType>,
    mops: Vec<MopRec>,
}

/// What one window sends one owner in one superstep of the shuffle.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Batch {
    /// The texts of the keys this window sends this owner for the first
    /// time; a micro-op names a key by its slot, the order in which the
    /// window first sent it to this owner.
    keys: Vec<String>,
    ops: Vec<OpRec>,
}

/// A step justifying one relationship of an edge, with its rank among the
/// steps other owners may give for it (lower wins).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Ranked {
    /// The rank.
    pub rank: u32,
    /// The step (global ids).
    pub step: Step,
}

/// A data edge between global ops.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct DataEdge {
    /// Source op.
    pub from: OpId,
    /// Target op.
    pub to: OpId,
    /// Relationships.
    pub rels: u8,
}

/// Index of a data relationship in [`DataEdge::steps`].
pub fn slot(r: u8) -> usize {
    match r {
        rel::WW => 0,
        rel::WR => 1,
        _ => 2,
    }
}

/// What one owner keeps to explain its edges later: only the edges inside
/// strongly connected components are ever explained, so steps are made on
/// request ([`Owned::steps`]) rather than shipped with every edge.
pub struct Explainer {
    sub: Sub,
    explainer: Box<dyn infer::Explain>,
    workload: Workload,
    me: usize,
    workers: usize,
}

/// What one owner found.
pub struct Owned {
    /// Its data edges (global ids).
    pub edges: Vec<DataEdge>,
    /// What explains them (`None` after an inference error).
    pub explainer: Option<Explainer>,
    /// Its non-cycle anomalies (global ids).
    pub anomalies: Vec<(String, Case)>,
    /// Its inference error, with the place it names (for choosing the one a
    /// single run would meet first).
    pub error: Option<((OpId, OpId), String)>,
    /// Texts of its keys, by owner-local id.
    pub keys: Vec<String>,
    /// Operations and micro-ops it received.
    pub ops: usize,
    /// Micro-ops it received.
    pub mops: usize,
}

/// The owner of a key (by its text).
pub fn owner(text: &str, workers: usize) -> usize {
    let mut h = FxHasher::default();
    h.write(text.as_bytes());
    (h.finish() % workers as u64) as usize
}

/// A global key id: `local × workers + owner`.
pub fn global_key(local: u32, owner: usize, workers: usize) -> Result<KeyId, DistError> {
    u64::from(local)
        .checked_mul(workers as u64)
        .and_then(|k| k.checked_add(owner as u64))
        .and_then(|k| u32::try_from(k).ok())
        .map(KeyId)
        .ok_or_else(|| DistError::Input("too many keys for a distributed run's key ids".into()))
}

/// Ops of a window encoded and sent per superstep of the shuffle: what is
/// in flight at once is bounded by this, not by the window.
const SHUFFLE_OPS: usize = 1 << 18;

/// Sends the window's micro-ops to their keys' owners and runs this
/// worker's share of the inference. The window's micro-ops and lists are
/// given back once sent.
pub fn infer(
    bsp: &mut Bsp,
    win: &mut Window,
    workload: Workload,
    rw: infer::rw_register::RwOptions,
) -> Result<Owned, DistError> {
    let received = shuffle(bsp, win);
    win.h.mops = Vec::new();
    win.h.elements = Vec::new();
    let local = received.and_then(|r| owned(bsp.index(), bsp.peers(), win, r, workload, rw));
    bsp.agree(local)
}

/// The shuffle's supersteps: each sends the next [`SHUFFLE_OPS`] ops of
/// every window, encoded, to the owners of their keys. Returns, per
/// sender, the messages this owner received, in order; they are decoded
/// only once every window has been sent (so that they are read in global
/// order, sender after sender), and in the meantime are kept encoded.
fn shuffle(bsp: &mut Bsp, win: &Window) -> Result<Vec<Vec<Vec<u8>>>, DistError> {
    let workers = bsp.peers();
    let longest = win.offsets.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0);
    let rounds = longest.div_ceil(SHUFFLE_OPS);
    let mut inbox: Vec<Vec<Vec<u8>>> = vec![Vec::new(); workers];
    let mut enc = Batcher::new(win, workers);
    let mut failed = None;
    for round in 0..rounds {
        let from = (round * SHUFFLE_OPS).min(win.h.ops.len());
        let to = (from + SHUFFLE_OPS).min(win.h.ops.len());
        let mut out = Vec::new();
        for (dest, batch) in enc.batches(from..to).into_iter().enumerate() {
            if batch.ops.is_empty() && batch.keys.is_empty() {
                continue;
            }
            // Every worker takes part in every superstep, so an encoding
            // error is kept and reported after the last.
            match bsp::encode(&batch) {
                Ok(bytes) => out.push((dest, bytes)),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        for (src, bytes) in bsp.exchange_bytes(out) {
            inbox[src].push(bytes);
        }
    }
    failed.map_or(Ok(inbox), Err)
}

/// The sender's side of the shuffle: which owner and slot each key has
/// (slots are per owner, numbered as keys are first sent to it), and the
/// longest list sent per owner and key.
struct Batcher<'w> {
    win: &'w Window,
    /// Per window key: (owner, slot at that owner), once sent.
    slots: Vec<Option<(usize, u32)>>,
    /// Keys sent so far, per owner.
    sent_keys: Vec<u32>,
    lists: Encoder,
}

impl<'w> Batcher<'w> {
    fn new(win: &'w Window, workers: usize) -> Self {
        Batcher { win, slots: vec![None; win.h.key_count()], sent_keys: vec![0; workers], lists: Encoder::default() }
    }

    /// The batch for every owner of the window's ops `range`: the texts of
    /// keys sent for the first time, and the ops with their micro-ops on
    /// the owner's keys.
    fn batches(&mut self, range: std::ops::Range<usize>) -> Vec<Batch> {
        let (win, workers) = (self.win, self.sent_keys.len());
        let h = &win.h;
        let mut out: Vec<Batch> = (0..workers).map(|_| Batch::default()).collect();
        let mut per_owner: Vec<Vec<MopRec>> = (0..workers).map(|_| Vec::new()).collect();
        for i in range {
            let op = &h.ops[i];
            for (at, m) in h.mops_of(op).iter().enumerate() {
                let (o, key) = match self.slots[m.key.0 as usize] {
                    Some(slot) => slot,
                    None => {
                        let text = h.key(m.key).to_string();
                        let o = owner(&text, workers);
                        out[o].keys.push(text);
                        let slot = (o, self.sent_keys[o]);
                        self.sent_keys[o] += 1;
                        self.slots[m.key.0 as usize] = Some(slot);
                        slot
                    }
                };
                let value = match m.value {
                    MopValue::Nil | MopValue::Entries(_) => WireValue::Nil,
                    MopValue::Int(v) => WireValue::Int(v),
                    MopValue::List { start, len } => {
                        WireValue::List(self.lists.encode(&h.elements, o, key, start as usize, len as usize))
                    }
                };
                per_owner[o].push(MopRec { at: at as u32, f: m.f, key, value });
            }
            for (o, mops) in per_owner.iter_mut().enumerate() {
                if mops.is_empty() {
                    continue;
                }
                let local = i as u32;
                out[o].ops.push(OpRec {
                    gid: win.gid(local),
                    index: op.index,
                    line: op.line,
                    ty: op.op_type,
                    process: op.process,
                    partner: win.partner(local),
                    partner_ty: win.partner_type(local),
                    mops: std::mem::take(mops),
                });
            }
        }
        out
    }
}

/// The history of this owner's keys, and how to map it back.
struct Sub {
    h: History,
    /// Sub op -> global op ([`NONE`] for the stand-in invocation), ascending.
    gid: Vec<OpId>,
    /// Per sub micro-op: its index in its operation.
    at: Vec<u32>,
    /// Key texts by sub key id.
    keys: Vec<String>,
}

/// The owner's side of the shuffle: the history of its keys, built as the
/// messages are decoded, straight into its columns.
#[derive(Default)]
struct SubBuilder {
    h: History,
    gid: Vec<OpId>,
    at: Vec<u32>,
    /// Per op: its partner's global id and type.
    partner: Vec<(OpId, Option<OpType>)>,
    key_ids: FxHashMap<String, u32>,
    keys: Vec<String>,
    /// Per sender: its key slots -> this owner's keys.
    slots: Vec<Vec<u32>>,
    lists: Decoder,
    /// List-valued micro-ops and where their lists lie.
    places: Vec<(u32, Place)>,
}

impl SubBuilder {
    /// Adds one decoded message of `sender` (its messages in order, senders
    /// in window order).
    fn add(&mut self, sender: usize, b: Batch) -> Result<(), DistError> {
        if self.slots.len() <= sender {
            self.slots.resize_with(sender + 1, Vec::new);
        }
        for t in b.keys {
            let next = self.keys.len() as u32;
            let id = *self.key_ids.entry(t.clone()).or_insert(next);
            if id == next {
                self.keys.push(t);
            }
            self.slots[sender].push(id);
        }
        for r in b.ops {
            if self.gid.last().is_some_and(|&g| g >= r.gid) {
                return Err(DistError::Wire(format!("worker {sender} sent ops out of order")));
            }
            let mop_start = self.h.mops.len() as u32;
            for m in &r.mops {
                let key = *self.slots[sender].get(m.key as usize).ok_or_else(|| {
                    DistError::Wire(format!("a micro-op from worker {sender} names a key it never sent"))
                })?;
                let value = match &m.value {
                    WireValue::Int(v) => MopValue::Int(*v),
                    WireValue::Nil => MopValue::Nil,
                    WireValue::List(w) => {
                        let place = self.lists.decode(sender, m.key, key, w).ok_or_else(|| {
                            DistError::Wire(format!("a list read from worker {sender} refers to a list it never sent"))
                        })?;
                        self.places.push((self.h.mops.len() as u32, place));
                        MopValue::Nil
                    }
                };
                self.h.mops.push(Mop { f: m.f, key: KeyId(key), value });
                self.at.push(m.at);
            }
            self.h.ops.push(sub_op(&r, mop_start, r.mops.len() as u32));
            self.gid.push(r.gid);
            self.partner.push((r.partner, r.partner_ty));
        }
        Ok(())
    }

    /// The owner's history: stand-ins for partners that touch none of its
    /// keys put in their places, pairs made, lists laid out.
    fn finish(mut self, has_invokes: bool) -> Sub {
        self.add_standins();
        let gid = &self.gid;
        for (op, &(partner, _)) in self.h.ops.iter_mut().zip(&self.partner) {
            op.pair = if partner == NONE { NONE } else { gid.binary_search(&partner).map_or(NONE, |i| i as u32) };
        }
        // Whether the history has invocations is a fact of the whole history.
        if has_invokes && !self.h.ops.iter().any(Op::is_invoke) {
            let stand_in = OpRec {
                gid: NONE,
                index: -1,
                line: 0,
                ty: OpType::Invoke,
                process: i64::MIN,
                partner: NONE,
                partner_ty: None,
                mops: Vec::new(),
            };
            self.h.ops.push(sub_op(&stand_in, self.h.mops.len() as u32, 0));
            self.gid.push(NONE);
        }
        let (arena, place) = self.lists.finish();
        self.h.elements = arena;
        for (m, p) in self.places {
            let (start, len) = place(p);
            self.h.mops[m as usize].value = MopValue::List { start, len };
        }
        self.h.fs = vec![Atom::Keyword("txn".into())];
        self.h.keys = self.keys.iter().map(|t| Value::Atom(Atom::Symbol(t.as_str().into()))).collect();
        Sub { h: self.h, gid: self.gid, at: self.at, keys: self.keys }
    }

    /// Zero-micro-op stand-ins for the partners of ops here that touch none
    /// of these keys (so that "is this invocation paired" reads as in the
    /// whole history), merged into global order from the back.
    fn add_standins(&mut self) {
        let mut standins: Vec<(OpId, OpRec)> = Vec::new();
        for (i, &(partner, ty)) in self.partner.iter().enumerate() {
            let (Some(ty), false) = (ty, partner == NONE) else { continue };
            if self.gid.binary_search(&partner).is_err() {
                let op = &self.h.ops[i];
                let rec = OpRec {
                    gid: partner,
                    index: -1,
                    line: 0,
                    ty,
                    process: op.process,
                    partner: self.gid[i],
                    partner_ty: Some(op.op_type),
                    mops: Vec::new(),
                };
                standins.push((partner, rec));
            }
        }
        if standins.is_empty() {
            return;
        }
        standins.sort_unstable_by_key(|s| s.0);
        standins.dedup_by_key(|s| s.0);
        let (n, k) = (self.gid.len(), standins.len());
        let empty = (NONE, None);
        self.gid.resize(n + k, NONE);
        self.partner.resize(n + k, empty);
        let filler = self.h.ops.first().copied().unwrap_or_else(|| sub_op(&standins[0].1, 0, 0));
        self.h.ops.resize(n + k, filler);
        // Merge from the back: `i` reads the old ops, `w` writes.
        let (mut i, mut w) = (n, n + k);
        while let Some((g, rec)) = standins.pop() {
            while i > 0 && self.gid[i - 1] > g {
                i -= 1;
                w -= 1;
                self.gid[w] = self.gid[i];
                self.partner[w] = self.partner[i];
                self.h.ops[w] = self.h.ops[i];
            }
            w -= 1;
            let mop_start = if i > 0 { self.h.ops[i - 1].mop_start + self.h.ops[i - 1].mop_len } else { 0 };
            self.h.ops[w] = sub_op(&rec, mop_start, 0);
            self.gid[w] = g;
            self.partner[w] = (rec.partner, rec.partner_ty);
        }
    }
}

/// An op of the owner's history (paired later), from its record.
fn sub_op(r: &OpRec, mop_start: u32, mop_len: u32) -> Op {
    Op {
        index: r.index,
        time: -1,
        op_type: r.ty,
        process: r.process,
        f: 0,
        mop_start,
        mop_len,
        pair: NONE,
        extras: NONE,
        line: r.line,
        fields: 0,
    }
}

/// Builds the owner's history from the messages it received, per sender
/// in order, decoding them one at a time (each freed once read).
fn build(received: Vec<Vec<Vec<u8>>>, has_invokes: bool) -> Result<Sub, DistError> {
    let mut sub = SubBuilder::default();
    for (sender, messages) in received.into_iter().enumerate() {
        for bytes in messages {
            let batch: Batch = bsp::decode(sender, &bytes)?;
            drop(bytes);
            sub.add(sender, batch)?;
        }
    }
    Ok(sub.finish(has_invokes))
}

/// Maps a sub history's ids to the whole history's.
struct ToGlobal<'a> {
    sub: &'a Sub,
    me: usize,
    workers: usize,
}

impl Renumber for ToGlobal<'_> {
    fn op(&mut self, op: OpId) -> OpId {
        self.sub.gid.get(op as usize).copied().unwrap_or(NONE)
    }
    fn key(&mut self, key: KeyId) -> KeyId {
        global_key(key.0, self.me, self.workers).unwrap_or(KeyId(u32::MAX))
    }
    fn mop(&mut self, op: OpId, mop: u32) -> u32 {
        let o = &self.sub.h.ops[op as usize];
        self.sub.at.get((o.mop_start + mop) as usize).copied().unwrap_or(mop)
    }
}

/// Runs the inference on this owner's keys.
fn owned(
    me: usize,
    workers: usize,
    win: &Window,
    received: Vec<Vec<Vec<u8>>>,
    workload: Workload,
    rw: infer::rw_register::RwOptions,
) -> Result<Owned, DistError> {
    let sub = build(received, win.whole.has_invokes)?;
    global_key(sub.keys.len() as u32, me, workers)?;
    let (ops, mops) = (sub.h.ops.len(), sub.h.mops.len());
    let inferred = match workload {
        Workload::ListAppend => infer::list_append::infer(&sub.h),
        Workload::RwRegister => infer::rw_register::infer(&sub.h, rw),
        Workload::ClosedPredicate => infer::closed_predicate::infer(&sub.h),
    };
    let inf = match inferred {
        Ok(inf) => inf,
        Err(e) => {
            let place = error_place(&sub, &e);
            return Ok(Owned {
                edges: Vec::new(),
                explainer: None,
                anomalies: Vec::new(),
                error: Some((place, e.to_string())),
                keys: sub.keys,
                ops,
                mops,
            });
        }
    };
    let mut to = ToGlobal { sub: &sub, me, workers };
    let mut anomalies = Vec::new();
    for (name, cases) in inf.anomalies {
        for c in cases {
            anomalies.push((name.clone(), c.renumber(&mut to)));
        }
    }
    let mut edges = Vec::new();
    for e in inf.edges.iter().flatten() {
        if e.from != e.to {
            edges.push(DataEdge { from: to.op(e.from), to: to.op(e.to), rels: e.rels });
        }
    }
    drop(inf.edges);
    let keys = sub.keys.clone();
    let explainer = Some(Explainer { sub, explainer: inf.explainer, workload, me, workers });
    Ok(Owned { edges, explainer, anomalies, error: None, keys, ops, mops })
}

impl Explainer {
    /// The steps this owner gives for a data edge between global ops, per
    /// relationship of `rels` ([`slot`] order), with their ranks.
    pub fn steps(&self, a: OpId, b: OpId, rels: u8) -> [Option<Ranked>; 3] {
        let mut out: [Option<Ranked>; 3] = [None, None, None];
        let sub_of = |g: OpId| self.sub.gid.binary_search(&g).ok().map(|i| i as OpId);
        let (Some(sa), Some(sb)) = (sub_of(a), sub_of(b)) else { return out };
        let mut to = ToGlobal { sub: &self.sub, me: self.me, workers: self.workers };
        for r in [rel::WW, rel::WR, rel::RW] {
            if rels & r == 0 {
                continue;
            }
            if let Some(step) = self.explainer.explain(&self.sub.h, sa, sb, r) {
                let a_rank = rank_in_a(&self.sub, sa, &step);
                let step = step.renumber(sa, sb, &mut to);
                let rank = match (self.workload, &step) {
                    (Workload::RwRegister, _) => a_rank,
                    (_, Step::Ww { b_mop, .. } | Step::Wr { b_mop, .. } | Step::Rw { b_mop, .. }) => {
                        b_mop.unwrap_or(u32::MAX)
                    }
                    _ => u32::MAX,
                };
                out[slot(r)] = Some(Ranked { rank, step });
            }
        }
        out
    }
}

/// An rw-register step's rank among those of other owners (see the module
/// doc): the index, in the whole operation `a` (a sub op), of `a`'s first
/// micro-op on the step's key. (A list-append step's rank is its `b_mop`
/// in the whole operation.)
fn rank_in_a(sub: &Sub, a: OpId, step: &Step) -> u32 {
    let key = match *step {
        Step::Ww { key, .. } | Step::Wr { key, .. } | Step::Rw { key, .. } => key,
        _ => return u32::MAX,
    };
    let op = &sub.h.ops[a as usize];
    let mops = &sub.h.mops[op.mop_start as usize..(op.mop_start + op.mop_len) as usize];
    mops.iter().position(|m| m.key == key).map_or(u32::MAX, |j| sub.at[op.mop_start as usize + j])
}

/// Where an inference error lies, in global op order (the single run meets
/// the first such place first).
fn error_place(sub: &Sub, e: &InferError) -> (OpId, OpId) {
    match e {
        InferError::DuplicateValue { .. } => infer::first_duplicate_ops(&sub.h)
            .map(|(a, b)| (sub.gid[a as usize], sub.gid[b as usize]))
            .unwrap_or((NONE, NONE)),
        InferError::UnexpectedMop { line, .. } | InferError::ClosedPredicate { line, .. } => {
            let first = sub.h.ops.iter().position(|o| o.line == *line).map_or(NONE, |i| sub.gid[i]);
            (first, first)
        }
    }
}
