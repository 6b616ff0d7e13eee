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

use super::bsp::Bsp;
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

/// What one window sends one owner.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Batch {
    /// The texts of the keys named in `ops` (each once).
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

/// Sends the window's micro-ops to their keys' owners and runs this
/// worker's share of the inference.
pub fn infer(
    bsp: &mut Bsp,
    win: &Window,
    workload: Workload,
    rw: infer::rw_register::RwOptions,
) -> Result<Owned, DistError> {
    let batches = batches(win, bsp.peers());
    let received = bsp.exchange(batches.into_iter().enumerate().filter(|(_, b)| !b.ops.is_empty()).collect())?;
    let local = owned(bsp.index(), bsp.peers(), win, received, workload, rw);
    bsp.agree(local)
}

/// The batch for every owner.
fn batches(win: &Window, workers: usize) -> Vec<Batch> {
    let h = &win.h;
    let mut out: Vec<Batch> = (0..workers).map(|_| Batch::default()).collect();
    // Per local key: (owner, index in that owner's batch keys), made lazily.
    let mut slots: Vec<Option<(usize, u32)>> = vec![None; h.key_count()];
    let mut per_owner: Vec<Vec<MopRec>> = (0..workers).map(|_| Vec::new()).collect();
    let mut lists = Encoder::default();
    for (i, op) in h.ops.iter().enumerate() {
        for (at, m) in h.mops_of(op).iter().enumerate() {
            let (o, key) = *slots[m.key.0 as usize].get_or_insert_with(|| {
                let text = h.key(m.key).to_string();
                let o = owner(&text, workers);
                out[o].keys.push(text);
                (o, out[o].keys.len() as u32 - 1)
            });
            let value = match m.value {
                MopValue::Nil => WireValue::Nil,
                MopValue::Int(v) => WireValue::Int(v),
                MopValue::List { start, len } => {
                    WireValue::List(lists.encode(&h.elements, o, key, start as usize, len as usize))
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

/// The history of this owner's keys, and how to map it back.
struct Sub {
    h: History,
    /// Sub op -> global op ([`NONE`] for the stand-in invocation).
    gid: Vec<OpId>,
    /// Per sub micro-op: its index in its operation.
    at: Vec<u32>,
    /// Key texts by sub key id.
    keys: Vec<String>,
}

/// Builds the owner's history from the batches (in window order, so in
/// global order), each with its sender.
fn build(batches: Vec<(usize, Batch)>, has_invokes: bool) -> Result<Sub, DistError> {
    let mut key_ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut keys: Vec<String> = Vec::new();
    let mut recs: Vec<(OpRec, Vec<Option<Place>>)> = Vec::new();
    let mut lists = Decoder::default();
    for (sender, b) in batches {
        let map: Vec<u32> = b
            .keys
            .into_iter()
            .map(|t| {
                *key_ids.entry(t.clone()).or_insert_with(|| {
                    keys.push(t);
                    keys.len() as u32 - 1
                })
            })
            .collect();
        for mut r in b.ops {
            let mut places = Vec::with_capacity(r.mops.len());
            for m in &mut r.mops {
                let slot = m.key;
                let key = *map.get(slot as usize).ok_or_else(|| {
                    DistError::Wire(format!("a micro-op from worker {sender} names a key it never sent"))
                })?;
                places.push(match &m.value {
                    WireValue::List(w) => Some(lists.decode(sender, slot, key, w).ok_or_else(|| {
                        DistError::Wire(format!("a list read from worker {sender} refers to a list it never sent"))
                    })?),
                    _ => None,
                });
                // From here on the micro-op names the owner's key.
                m.key = key;
            }
            recs.push((r, places));
        }
    }
    // Stand-ins for partners that touch none of these keys.
    let present: rustc_hash::FxHashSet<OpId> = recs.iter().map(|r| r.0.gid).collect();
    let mut standins: Vec<OpRec> = recs
        .iter()
        .filter(|(r, _)| r.partner != NONE && !present.contains(&r.partner))
        .filter_map(|(r, _)| {
            Some(OpRec {
                gid: r.partner,
                index: -1,
                line: 0,
                ty: r.partner_ty?,
                process: r.process,
                partner: r.gid,
                partner_ty: Some(r.ty),
                mops: Vec::new(),
            })
        })
        .collect();
    standins.sort_unstable_by_key(|r| r.gid);
    standins.dedup_by_key(|r| r.gid);
    recs.extend(standins.into_iter().map(|r| (r, Vec::new())));
    recs.sort_by_key(|r| r.0.gid);
    let mut h = History::default();
    h.fs = vec![Atom::Keyword("txn".into())];
    let mut gid = Vec::with_capacity(recs.len() + 1);
    let mut at = Vec::new();
    let pos: FxHashMap<OpId, u32> = recs.iter().enumerate().map(|(i, r)| (r.0.gid, i as u32)).collect();
    let (arena, place) = lists.finish();
    h.elements = arena;
    for (r, places) in recs {
        let mop_start = h.mops.len() as u32;
        for (m, p) in r.mops.iter().zip(&places) {
            let value = match (&m.value, p) {
                (WireValue::Int(v), _) => MopValue::Int(*v),
                (WireValue::List(_), Some(p)) => {
                    let (start, len) = place(*p);
                    MopValue::List { start, len }
                }
                _ => MopValue::Nil,
            };
            h.mops.push(Mop { f: m.f, key: KeyId(m.key), value });
            at.push(m.at);
        }
        h.ops.push(Op {
            index: r.index,
            time: -1,
            op_type: r.ty,
            process: r.process,
            f: 0,
            mop_start,
            mop_len: r.mops.len() as u32,
            pair: pos.get(&r.partner).copied().unwrap_or(NONE),
            extras: NONE,
            line: r.line,
            fields: 0,
        });
        gid.push(r.gid);
    }
    // Whether the history has invocations is a fact of the whole history.
    if has_invokes && !h.ops.iter().any(Op::is_invoke) {
        let mop_start = h.mops.len() as u32;
        h.ops.push(Op {
            index: -1,
            time: -1,
            op_type: OpType::Invoke,
            process: i64::MIN,
            f: 0,
            mop_start,
            mop_len: 0,
            pair: NONE,
            extras: NONE,
            line: 0,
            fields: 0,
        });
        gid.push(NONE);
    }
    h.keys = keys.iter().map(|t| Value::Atom(Atom::Symbol(t.as_str().into()))).collect();
    Ok(Sub { h, gid, at, keys })
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
    batches: Vec<(usize, Batch)>,
    workload: Workload,
    rw: infer::rw_register::RwOptions,
) -> Result<Owned, DistError> {
    let sub = build(batches, win.whole.has_invokes)?;
    global_key(sub.keys.len() as u32, me, workers)?;
    let (ops, mops) = (sub.h.ops.len(), sub.h.mops.len());
    let inferred = match workload {
        Workload::ListAppend => infer::list_append::infer(&sub.h),
        Workload::RwRegister => infer::rw_register::infer(&sub.h, rw),
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
        InferError::UnexpectedMop { line, .. } => {
            let first = sub.h.ops.iter().position(|o| o.line == *line).map_or(NONE, |i| sub.gid[i]);
            (first, first)
        }
    }
}
