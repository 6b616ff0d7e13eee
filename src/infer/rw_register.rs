//! Dependency inference for read/write registers (Elle's `elle.rw-register`).
//!
//! Registers are *recoverable* but not traceable: a read of `x = 3` names the
//! one transaction that wrote 3 (values are unique), giving a **wr** edge, but
//! says nothing about which versions came before. Version order must come from
//! elsewhere, source by source:
//!
//! 1. `initial-state` (always): every key starts at nil, so nil precedes every
//!    value written or read;
//! 2. `wfr-keys` (opt-in): a transaction that reads `x = v` and then writes
//!    `x = v'` installed `v'` after `v`;
//! 3. `transaction-order-keys` (when the history has a commit order, see
//!    [`crate::history::transaction_order`]): each key's final writes in the
//!    order of their writers' commit numbers;
//! 4. `sequential-keys` / `linearizable-keys` (opt-in): if keys are sequential
//!    (linearizable), the process (realtime) order between two transactions
//!    orders the versions they touched: the last value the first one left on a
//!    key precedes the first value the next toucher of that key saw.
//!
//! A source whose facts make some key's version graph cyclic contradicts what
//! we already know; it is dropped and reported as `:cyclic-versions`. From the
//! version graph, each edge `v1 -> v2` of a key gives **ww** edges (writers of
//! v1 to writers of v2) and **rw** edges (readers of v1 to writers of v2).
//!
//! Only `:ok` transactions produce edges; `:info` writes only inform version
//! orders; `:fail` writes feed G1a. Transactions are summarised by their
//! *external* reads (the first access of a key, if a read) and *external*
//! writes (the last write of a key).
//!
//! **Repeated values.** Some harnesses write the same value to a key more
//! than once (VeriStrong's benchmarks, Cobra's placeholder, PolySI's initial
//! writes). A `(key, value)` whose final write comes from more than one
//! `:ok`/`:info` operation is *repeated*: a read of it has no known writer,
//! so only what holds for every choice of writer is inferred. It gives no
//! wr edge, and no version-order fact mentions it except "nil precedes it"
//! (true of every version), so neither do ww/rw edges; the exact check
//! (`si_check`) decides such reads by searching over their writers. A read
//! is G1a only if every other operation that wrote its value failed, G1b
//! only if every such write was intermediate, and garbage only if nobody
//! wrote it. A repeated value that nobody reads changes nothing.

use super::nearest::{nearest_toucher_links, KeyTouches, Touch};
use super::{Explain, InferError, Inference};
use crate::anomaly::{add, rel, Anomalies, Case, Expected, MopRef, ReadValue, Rels, Step, Workload};
use crate::cycles::scc::{tarjan, Adjacency};
use crate::graph::{Edge, Graph};
use crate::history::{History, KeyId, Mop, MopFn, MopValue, Op, OpId, OpType, NONE};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// The register value `nil` (the initial state).
const NIL: i64 = i64::MIN;

/// Which optional version-order sources to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RwOptions {
    /// Writes follow reads within a transaction.
    pub wfr_keys: bool,
    /// Each key is sequentially consistent: process order orders versions.
    pub sequential_keys: bool,
    /// Each key is linearizable: realtime order orders versions.
    pub linearizable_keys: bool,
}

/// A transaction's external access to one key, derived from its micro-ops
/// when needed ([`exts`], [`op_exts`]). Absence is a sentinel rather than an
/// `Option` so that an access takes 24 bytes, not 40.
#[derive(Clone, Copy, Debug)]
struct Ext {
    key: KeyId,
    /// First access was a read of this value (NIL = nil), or ABSENT.
    read_raw: i64,
    /// Last write's value, or ABSENT.
    write_raw: i64,
}

/// Marks a missing read or write in [`Ext`] (one above [`NIL`]; register
/// values this extreme are not supported).
const ABSENT: i64 = i64::MIN + 1;

impl Ext {
    fn new(key: KeyId, read: Option<i64>, write: Option<i64>) -> Ext {
        Ext { key, read_raw: read.unwrap_or(ABSENT), write_raw: write.unwrap_or(ABSENT) }
    }
    /// The external read's value, if the first access was a read.
    #[inline]
    fn read(&self) -> Option<i64> {
        (self.read_raw != ABSENT).then_some(self.read_raw)
    }
    /// The final write's value, if any.
    #[inline]
    fn write(&self) -> Option<i64> {
        (self.write_raw != ABSENT).then_some(self.write_raw)
    }
}

fn value_of(v: MopValue) -> i64 {
    match v {
        MopValue::Int(i) => i,
        _ => NIL,
    }
}

fn show(v: i64) -> Option<i64> {
    (v != NIL).then_some(v)
}

/// The external accesses of `op` (see [`op_exts`]). They are derived from
/// the micro-ops when needed, a few per transaction, rather than indexed
/// for the whole history: an index of them all held about a fifth of
/// inference's peak on large histories.
fn exts(h: &History, op: OpId) -> Vec<Ext> {
    let mut out = Vec::new();
    op_exts(h, h.op(op), &mut out);
    out
}

/// The number of `:ok` external writes and reads.
fn ok_access_counts(h: &History) -> (usize, usize) {
    const CHUNK: usize = 16 * 1024;
    h.ops
        .par_chunks(CHUNK)
        .map(|ops| {
            let (mut w, mut r) = (0, 0);
            let mut buf = Vec::new();
            for op in ops.iter().filter(|op| op.op_type == OpType::Ok) {
                buf.clear();
                op_exts(h, op, &mut buf);
                w += buf.iter().filter(|e| e.write().is_some()).count();
                r += buf.iter().filter(|e| e.read().is_some()).count();
            }
            (w, r)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// The external accesses of `op` (none for an invocation, which never takes
/// part in inference), in order of first access, appended to `exts`.
fn op_exts(h: &History, op: &Op, exts: &mut Vec<Ext>) {
    let start = exts.len();
    let mops = if op.is_invoke() { &[][..] } else { h.mops_of(op) };
    for m in mops {
        let slot = exts[start..].iter().position(|e| e.key == m.key).map(|i| start + i);
        match m.f {
            MopFn::Read => {
                if slot.is_none() {
                    exts.push(Ext::new(m.key, Some(value_of(m.value)), None));
                }
            }
            MopFn::Write | MopFn::Append => {
                let v = value_of(m.value);
                match slot {
                    Some(i) => exts[i].write_raw = v,
                    None => exts.push(Ext::new(m.key, None, Some(v))),
                }
            }
            // Refused before inference (`refuse_predicate_ops`).
            MopFn::Insert | MopFn::Delete | MopFn::PredRead | MopFn::PredEntry => {}
        }
    }
}

/// Ops grouped by (key, value), as one sorted array with per-key offsets:
/// one sort to build and no per-value allocation or hashing. Keys whose
/// values are compact integers (Jepsen writes 1, 2, 3, ... per key) get a
/// dense table from value to group start, so lookups take O(1) even for hot
/// keys with tens of thousands of versions; others use binary search.
struct ValueIndex {
    key_offsets: Vec<u32>,
    values: Vec<i64>,
    ops: Vec<OpId>,
    /// Per key: (smallest non-nil value, offset of its table in `starts`).
    dense: Vec<Option<(i64, i64, u32)>>,
    /// For dense keys: for each value from min to max+1, the position of the
    /// first entry with a value at least that large.
    starts: Vec<u32>,
}

impl ValueIndex {
    fn build(nkeys: usize, mut tuples: Vec<(u32, i64, OpId)>) -> ValueIndex {
        tuples.par_sort_unstable();
        let mut key_offsets = vec![0u32; nkeys + 1];
        for t in &tuples {
            key_offsets[t.0 as usize + 1] += 1;
        }
        for k in 0..nkeys {
            key_offsets[k + 1] += key_offsets[k];
        }
        let values: Vec<i64> = tuples.iter().map(|t| t.1).collect();
        let ops = tuples.iter().map(|t| t.2).collect();
        drop(tuples);
        let mut dense = vec![None; nkeys];
        let mut starts = Vec::new();
        for k in 0..nkeys {
            let (s, e) = (key_offsets[k] as usize, key_offsets[k + 1] as usize);
            let first = s + values[s..e].partition_point(|&x| x == NIL);
            if first == e {
                continue;
            }
            let (min, max) = (values[first], values[e - 1]);
            if (max as i128 - min as i128) > 4 * (e - first) as i128 + 64 {
                continue;
            }
            let base = starts.len() as u32;
            let mut i = first;
            for v in min..=max.saturating_add(1) {
                while i < e && values[i] < v {
                    i += 1;
                }
                starts.push(i as u32);
            }
            dense[k] = Some((min, max, base));
        }
        ValueIndex { key_offsets, values, ops, dense, starts }
    }

    /// The ops with value `v` for key `k` (empty if none).
    #[inline]
    fn get(&self, k: u32, v: i64) -> &[OpId] {
        if v != NIL {
            if let Some((min, max, base)) = self.dense[k as usize] {
                if v < min || v > max {
                    return &[];
                }
                let i = base as usize + (v - min) as usize;
                return &self.ops[self.starts[i] as usize..self.starts[i + 1] as usize];
            }
        }
        let (s, e) = (self.key_offsets[k as usize] as usize, self.key_offsets[k as usize + 1] as usize);
        let vals = &self.values[s..e];
        let lo = vals.partition_point(|&x| x < v);
        let hi = lo + vals[lo..].partition_point(|&x| x == v);
        &self.ops[s + lo..s + hi]
    }

    /// Every (key, value) group in order.
    fn groups(&self) -> impl Iterator<Item = (u32, i64, &[OpId])> {
        let mut i = 0;
        let mut k = 0u32;
        std::iter::from_fn(move || {
            if i >= self.values.len() {
                return None;
            }
            while self.key_offsets[k as usize + 1] as usize <= i {
                k += 1;
            }
            let v = self.values[i];
            let end = (self.key_offsets[k as usize + 1] as usize).min(self.values.len());
            let j = i + self.values[i..end].partition_point(|&x| x == v);
            let group = (k, v, &self.ops[i..j]);
            i = j;
            Some(group)
        })
    }
}

/// The version graphs of all keys: sorted, deduplicated (key, from, to) edges.
type VersionEdges = Vec<(u32, i64, i64)>;

/// Everything kept to explain edges after cycle search.
pub struct RwIndex {
    versions: VersionEdges,
    /// Repeated (key, value) pairs, which justify no wr edge.
    repeated: FxHashSet<(u32, i64)>,
}

impl Explain for RwIndex {
    fn explain(&self, h: &History, a: OpId, b: OpId, rels: Rels) -> Option<Step> {
        let (ea, eb) = (exts(h, a), exts(h, b));
        let mop_index = |op: OpId, f: MopFn, k: KeyId, v: i64| {
            h.mops_of(h.op(op)).iter().position(|m| m.f == f && m.key == k && value_of(m.value) == v).map(|i| i as u32)
        };
        if rels & rel::WR != 0 {
            for x in &ea {
                if let Some(w) = x.write().filter(|&w| !self.repeated.contains(&(x.key.0, w))) {
                    if eb.iter().any(|y| y.key == x.key && y.read() == Some(w)) {
                        return Some(Step::Wr {
                            key: x.key,
                            value: show(w),
                            a_mop: mop_index(a, MopFn::Write, x.key, w),
                            b_mop: mop_index(b, MopFn::Read, x.key, w),
                        });
                    }
                }
            }
        }
        // ww (a's final write) and rw (a's external read) both need a
        // version edge from a's value to b's final write of the same key.
        let overwritten = |a_value: fn(&Ext) -> Option<i64>, a_f: MopFn| {
            ea.iter().find_map(|x| {
                let v1 = a_value(x)?;
                let v2 = eb.iter().find(|y| y.key == x.key)?.write()?;
                self.versions.binary_search(&(x.key.0, v1, v2)).is_ok().then(|| {
                    (x.key, show(v1), show(v2), mop_index(a, a_f, x.key, v1), mop_index(b, MopFn::Write, x.key, v2))
                })
            })
        };
        if rels & rel::WW != 0 {
            if let Some((key, value, value2, a_mop, b_mop)) = overwritten(Ext::write, MopFn::Write) {
                return Some(Step::Ww { key, value, value2, a_mop, b_mop });
            }
        }
        if rels & rel::RW != 0 {
            if let Some((key, value, value2, a_mop, b_mop)) = overwritten(Ext::read, MopFn::Read) {
                return Some(Step::Rw { key, value, value2, a_mop, b_mop });
            }
        }
        None
    }
}

/// Infers the rw-register dependency graph and non-cycle anomalies.
pub fn infer(h: &History, opts: RwOptions) -> Result<Inference, InferError> {
    super::refuse_predicate_ops(h, "rw-register")?;
    for op in &h.ops {
        if h.stored_mops_of(op).iter().any(|m| m.f == MopFn::Append) {
            return Err(InferError::UnexpectedMop { workload: "rw-register", mop: "append", line: op.line });
        }
    }
    // Ok ext-writers and ext-readers of each (key, value), sized exactly
    // (growing by doubling held up to three times the tuples at once).
    let (w_count, r_count) = ok_access_counts(h);
    let (mut w_tuples, mut r_tuples) = (Vec::with_capacity(w_count), Vec::with_capacity(r_count));
    let mut buf = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        buf.clear();
        op_exts(h, op, &mut buf);
        for e in &buf {
            if let Some(w) = e.write() {
                w_tuples.push((e.key.0, w, i as u32));
            }
            if let Some(r) = e.read() {
                r_tuples.push((e.key.0, r, i as u32));
            }
        }
    }
    let nkeys = h.key_count();
    let r_len = r_tuples.len();
    let (writers, readers) = rayon::join(|| ValueIndex::build(nkeys, w_tuples), || ValueIndex::build(nkeys, r_tuples));

    let repeated = repeated_values(h, &writers);

    // wr: the writer of each value read, when only one operation wrote it.
    let mut edges: Vec<Edge> = Vec::with_capacity(r_len);
    for (k, v, rs) in readers.groups() {
        let ws = writers.get(k, v);
        if ws.len() == 1 && !repeated.contains(&(k, v)) {
            for &r in rs {
                edges.push(Edge { from: ws[0], to: r, rels: rel::WR });
            }
        }
    }

    // The version graph and its ww/rw edges on one thread, the per-op
    // anomaly checks on the other: they are independent.
    let ((mut anomalies, versions, mut edge_lists), checks) = rayon::join(
        || {
            // Version graphs, source by source.
            let mut anomalies = Anomalies::new();
            let mut sources: Vec<&'static str> = Vec::new();
            let mut versions: VersionEdges = Vec::new();
            let mut candidates: Vec<(&'static str, VersionSource)> = vec![("initial-state", initial_state_versions)];
            if h.transaction_order.is_some() {
                candidates.push(("transaction-order-keys", transaction_order_versions));
            }
            if opts.wfr_keys {
                candidates.push(("wfr-keys", wfr_versions));
            }
            if opts.sequential_keys {
                candidates.push(("sequential-keys", sequential_versions));
            }
            if opts.linearizable_keys {
                candidates.push(("linearizable-keys", linearizable_versions));
            }
            for (name, make) in candidates {
                // Each source is derived when its turn comes (one held at a
                // time), and checked for cycles together with the accepted
                // ones key by key, before the two are merged: at most the
                // accepted edges and one source are held, never a copy.
                let mut source = make(&Inputs { h, writers: &writers, readers: &readers });
                // Only "nil precedes v" holds for every writer of a repeated value.
                if !repeated.is_empty() {
                    source.retain(|&(k, v1, v2)| {
                        v1 == NIL || !(repeated.contains(&(k, v1)) || repeated.contains(&(k, v2)))
                    });
                }
                source.par_sort_unstable();
                source.dedup();
                source.shrink_to_fit();
                let cycles = merged_version_cycles(&versions, &source);
                let mut with: Vec<&'static str> = sources.clone();
                with.push(name);
                if cycles.is_empty() {
                    if versions.is_empty() {
                        // The first source accepted: no copy.
                        versions = source;
                    } else {
                        versions.extend(source);
                        versions.par_sort_unstable();
                        versions.dedup();
                    }
                    sources = with;
                } else {
                    for (key, scc) in cycles {
                        add(
                            &mut anomalies,
                            "cyclic-versions",
                            Case::CyclicVersions {
                                key: KeyId(key),
                                scc: scc.into_iter().map(show).collect(),
                                sources: with.iter().map(|s| s.to_string()).collect(),
                            },
                        );
                    }
                }
            }

            // ww and rw from each version edge, in parallel chunks.
            let per_chunk = versions.len() / (4 * rayon::current_num_threads()).max(1) + 1;
            let edge_lists: Vec<Vec<Edge>> = versions
                .par_chunks(per_chunk)
                .map(|chunk| {
                    let mut out = Vec::with_capacity(chunk.len() * 2);
                    for &(k, v1, v2) in chunk {
                        let w2s = writers.get(k, v2);
                        if w2s.is_empty() {
                            continue;
                        }
                        for (r, from) in [(rel::WW, writers.get(k, v1)), (rel::RW, readers.get(k, v1))] {
                            for &a in from {
                                for &b in w2s {
                                    if a != b {
                                        out.push(Edge { from: a, to: b, rels: r });
                                    }
                                }
                            }
                        }
                    }
                    out
                })
                .collect();
            (anomalies, versions, edge_lists)
        },
        || {
            let mut checks = Anomalies::new();
            detect_anomalies(h, &writers, &mut checks);
            if !repeated.is_empty() {
                // Two reads of a repeated value need not see the same version.
                if let Some(cases) = checks.get_mut("lost-update") {
                    cases.retain(|c| match c {
                        Case::LostUpdate { key, value: ReadValue::Int(v), .. } => !repeated.contains(&(key.0, *v)),
                        _ => true,
                    });
                    if cases.is_empty() {
                        checks.remove("lost-update");
                    }
                }
            }
            checks
        },
    );
    edge_lists.push(edges);
    for (name, cases) in checks {
        anomalies.entry(name).or_default().extend(cases);
    }
    Ok(Inference {
        workload: Workload::RwRegister,
        edges: edge_lists,
        anomalies,
        explainer: Box::new(RwIndex { versions, repeated }),
    })
}

/// The (key, value) pairs whose final write comes from more than one
/// `:ok`/`:info` operation (see the module docs). `ok_writers` holds the
/// `:ok` final writes; `:info` ones are few and gathered here.
fn repeated_values(h: &History, ok_writers: &ValueIndex) -> FxHashSet<(u32, i64)> {
    let mut out: FxHashSet<(u32, i64)> = FxHashSet::default();
    for (k, v, ws) in ok_writers.groups() {
        if ws.len() > 1 && v != NIL {
            out.insert((k, v));
        }
    }
    let mut info: FxHashMap<(u32, i64), OpId> = FxHashMap::default();
    for (i, _) in h.ops.iter().enumerate().filter(|(_, o)| o.op_type == OpType::Info) {
        for e in exts(h, i as u32) {
            let Some(w) = e.write().filter(|&w| w != NIL) else { continue };
            let other_info = info.insert((e.key.0, w), i as u32).is_some_and(|o| o != i as u32);
            if other_info || !ok_writers.get(e.key.0, w).is_empty() {
                out.insert((e.key.0, w));
            }
        }
    }
    out
}

/// nil precedes every value an ok/info op wrote and every value an ok op
/// read: one edge per distinct (key, value), sorted. The ok writes and
/// reads are the groups of the two value indexes, already sorted and
/// distinct, so they are merged at their exact number (deriving an edge per
/// access and deduplicating held every access's edge at once, the peak of
/// inference on large histories); the `:info` writes (few) are added after.
fn initial_state_versions(i: &Inputs<'_>) -> Vec<(u32, i64, i64)> {
    let ok_values = || {
        let mut w = i.writers.groups().map(|(k, v, _)| (k, v)).filter(|kv| kv.1 != NIL).peekable();
        let mut r = i.readers.groups().map(|(k, v, _)| (k, v)).filter(|kv| kv.1 != NIL).peekable();
        std::iter::from_fn(move || match (w.peek().copied(), r.peek().copied()) {
            (Some(a), Some(b)) if a == b => {
                r.next();
                w.next()
            }
            (Some(a), Some(b)) if a < b => w.next(),
            (Some(_), Some(_)) | (None, Some(_)) => r.next(),
            (Some(_), None) => w.next(),
            (None, None) => None,
        })
    };
    let info_writes = || {
        i.h.ops.iter().enumerate().filter(|(_, op)| op.op_type == OpType::Info).flat_map(|(o, _)| {
            exts(i.h, o as u32).into_iter().filter_map(|e| e.write().filter(|&w| w != NIL).map(|w| (e.key.0, w)))
        })
    };
    let mut out = Vec::with_capacity(ok_values().count() + info_writes().count());
    out.extend(ok_values().map(|(k, v)| (k, NIL, v)));
    let ok_len = out.len();
    out.extend(info_writes().map(|(k, v)| (k, NIL, v)));
    if out.len() > ok_len {
        out.sort_unstable();
        out.dedup();
    }
    out
}

/// An ok txn that externally read `v` and wrote `v'` to a key: `v < v'`.
fn wfr_versions(i: &Inputs<'_>) -> Vec<(u32, i64, i64)> {
    let h = i.h;
    let mut out = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        for e in exts(h, i as u32) {
            if let (Some(r), Some(w)) = (e.read(), e.write()) {
                if r != NIL {
                    out.push((e.key.0, r, w));
                }
            }
        }
    }
    out
}

/// Version edges from the database's commit order (`transaction-order-keys`,
/// see [`crate::history::transaction_order`]): per key, the final writes of
/// the ordered `:ok` / `:info` ops grouped by order number; every version
/// precedes those of the next number, and also those of the next number
/// with an `:ok` writer (the order is transitive, and only `:ok` writers
/// give ww and rw edges, so an `:info` write between two `:ok` ones must not
/// hide their order). Writes with the same number are unordered.
fn transaction_order_versions(i: &Inputs<'_>) -> VersionEdges {
    let Some(order) = i.h.transaction_order.as_deref() else { return Vec::new() };
    // (key, number, value, written by an ok op) of every ordered final write.
    let mut writes: Vec<(u32, i64, i64, bool)> = Vec::new();
    for &(n, op) in order.ranked() {
        let ok = i.h.op(op).op_type == OpType::Ok;
        writes.extend(exts(i.h, op).iter().filter_map(|e| Some((e.key.0, n, e.write()?, ok))));
    }
    writes.sort_unstable();
    let mut out = Vec::new();
    for key_writes in writes.chunk_by(|a, b| a.0 == b.0) {
        let groups: Vec<&[(u32, i64, i64, bool)]> = key_writes.chunk_by(|a, b| a.1 == b.1).collect();
        // For each group, the next later group with an ok write.
        let mut next_ok = vec![None; groups.len()];
        for g in (0..groups.len().saturating_sub(1)).rev() {
            let after = groups[g + 1].iter().any(|w| w.3).then_some(g + 1);
            next_ok[g] = after.or(next_ok[g + 1]);
        }
        for (g, group) in groups.iter().enumerate() {
            let mut link = |later: &[(u32, i64, i64, bool)], ok_only: bool| {
                for a in group.iter() {
                    for b in later.iter().filter(|b| (b.3 || !ok_only) && b.2 != a.2) {
                        out.push((a.0, a.2, b.2));
                    }
                }
            };
            if let Some(next) = groups.get(g + 1) {
                link(next, false);
            }
            if let Some(n) = next_ok[g].filter(|&n| n != g + 1) {
                link(groups[n], true);
            }
        }
    }
    out
}

/// Keys an op externally touched, as far as we can know: reads only when ok,
/// writes when ok or info; nothing for failed ops.
fn touches(op: &Op, e: &Ext) -> bool {
    match op.op_type {
        OpType::Ok => true,
        OpType::Info => e.write().is_some(),
        _ => false,
    }
}

/// Each key's touchers (see [`touches`]) with the first value each saw and
/// the last it left, as the order sources link them: an ok op's first value
/// is its external read when that read saw a value, else its external write
/// (else nil); its last is its external write, else its read; an info op's
/// are both its write.
fn key_touches(h: &History) -> KeyTouches {
    let nkeys = h.key_count();
    let mut offsets = vec![0u32; nkeys + 1];
    let each = |f: &mut dyn FnMut(u32, Touch)| {
        for (i, op) in h.ops.iter().enumerate() {
            for e in exts(h, i as u32).iter().filter(|e| touches(op, e)) {
                let (first, last) = match op.op_type {
                    OpType::Ok => (
                        e.read().filter(|&r| r != NIL).or(e.write()).unwrap_or(NIL),
                        e.write().or(e.read()).unwrap_or(NIL),
                    ),
                    _ => (e.write_raw, e.write_raw),
                };
                f(e.key.0, Touch { op: i as u32, first, last });
            }
        }
    };
    each(&mut |k, _| offsets[k as usize + 1] += 1);
    for k in 0..nkeys {
        offsets[k + 1] += offsets[k];
    }
    let mut fill = offsets.clone();
    let mut all = vec![Touch { op: 0, first: NIL, last: NIL }; offsets[nkeys] as usize];
    each(&mut |k, t| {
        all[fill[k as usize] as usize] = t;
        fill[k as usize] += 1;
    });
    KeyTouches { offsets, touches: all }
}

/// Version edges from an order between transactions (process or realtime),
/// assuming per-key sequential consistency / linearizability: the final value
/// a transaction left on a key precedes the first value seen by each nearest
/// later transaction touching that key ("nearest": reachable through
/// transactions that do not touch it, exactly as Elle's `ext-key-graph`; see
/// [`super::nearest`]). `order` must point forward in history. Elle also
/// links nil for keys a transaction does not touch; the initial-state source
/// already implies those links, so they are left out.
fn order_versions(h: &History, order: &Graph) -> Vec<(u32, i64, i64)> {
    nearest_toucher_links(order, &key_touches(h))
}

/// The version edges the `sequential-keys` / `linearizable-keys` sources
/// infer from `order` (process or realtime order, e.g. from
/// [`super::order`]), sorted and deduplicated: what [`infer`] merges into the
/// version graphs, exposed so tests can compare it with other derivations.
pub fn order_version_edges(h: &History, order: &Graph) -> Vec<(u32, i64, i64)> {
    let mut v = order_versions(h, order);
    v.sort_unstable();
    v.dedup();
    v
}

/// Per key, the strongly connected components (≥ 2 values) of the version
/// graph given as sorted, deduplicated edges.
/// What the version sources are derived from.
struct Inputs<'a> {
    h: &'a History,
    /// The `:ok` external writes by (key, value).
    writers: &'a ValueIndex,
    /// The `:ok` external reads by (key, value).
    readers: &'a ValueIndex,
}

/// Derives one source's version edges.
type VersionSource = fn(&Inputs<'_>) -> VersionEdges;

/// Version edges from session order (`sequential-keys`).
fn sequential_versions(i: &Inputs<'_>) -> VersionEdges {
    order_versions(i.h, &Graph::from_edges(i.h.ops.len(), &super::order::process_edges(i.h)))
}

/// Version edges from realtime order (`linearizable-keys`).
fn linearizable_versions(i: &Inputs<'_>) -> VersionEdges {
    order_versions(i.h, &Graph::from_edges(i.h.ops.len(), &super::order::realtime_edges(i.h)))
}

/// [`version_cycles`] of the union of two sorted, deduplicated edge lists,
/// without building the union: each key's edges of both, merged, sorted
/// and deduplicated, in key order, are exactly that key's part of the union
/// (the cycles are found key by key).
fn merged_version_cycles(a: &[(u32, i64, i64)], b: &[(u32, i64, i64)]) -> Vec<(u32, Vec<i64>)> {
    let mut out = Vec::new();
    let mut key_edges = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let k = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.min(y.0),
            (Some(x), None) => x.0,
            (None, Some(y)) => y.0,
            (None, None) => break,
        };
        let i2 = i + a[i..].partition_point(|e| e.0 == k);
        let j2 = j + b[j..].partition_point(|e| e.0 == k);
        key_edges.clear();
        key_edges.extend_from_slice(&a[i..i2]);
        key_edges.extend_from_slice(&b[j..j2]);
        key_edges.sort_unstable();
        key_edges.dedup();
        out.extend(version_cycles(&key_edges));
        (i, j) = (i2, j2);
    }
    out
}

fn version_cycles(edges: &[(u32, i64, i64)]) -> Vec<(u32, Vec<i64>)> {
    struct Local {
        adj: Vec<Vec<u32>>,
    }
    impl Adjacency for Local {
        fn len(&self) -> usize {
            self.adj.len()
        }
        fn degree(&self, v: u32) -> usize {
            self.adj[v as usize].len()
        }
        fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
            Some(self.adj[v as usize][i])
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < edges.len() {
        let k = edges[i].0;
        let start = i;
        while i < edges.len() && edges[i].0 == k {
            i += 1;
        }
        // Edges that all leave nil form a star: no cycle to look for.
        if edges[start..i].iter().all(|e| e.1 == NIL) {
            continue;
        }
        let mut ids: FxHashMap<i64, u32> = FxHashMap::default();
        let mut values: Vec<i64> = Vec::new();
        let mut id = |v: i64, values: &mut Vec<i64>| {
            *ids.entry(v).or_insert_with(|| {
                values.push(v);
                values.len() as u32 - 1
            })
        };
        let mut pairs = Vec::new();
        for &(_, a, b) in &edges[start..i] {
            let (x, y) = (id(a, &mut values), id(b, &mut values));
            pairs.push((x, y));
        }
        let mut adj = vec![Vec::new(); values.len()];
        let mut self_loop = Vec::new();
        for (x, y) in pairs {
            if x == y {
                self_loop.push(values[x as usize]);
            } else {
                adj[x as usize].push(y);
            }
        }
        let comps = tarjan(&Local { adj }, |_| true);
        for c in comps.comps {
            let mut scc: Vec<i64> = c.iter().map(|&v| values[v as usize]).collect();
            scc.sort_unstable();
            out.push((k, scc));
        }
        for v in self_loop {
            out.push((k, vec![v]));
        }
    }
    out
}

/// G1a, G1b, internal, lost-update and garbage reads.
fn detect_anomalies(h: &History, ok_writers: &ValueIndex, out: &mut Anomalies) {
    let mut failed: FxHashMap<(u32, i64), OpId> = FxHashMap::default();
    let mut intermediate: FxHashMap<(u32, i64), OpId> = FxHashMap::default();
    // Writes not visible in `ok_writers` (non-final, or by ops not known to
    // have committed): together they are every value anyone wrote. Each maps
    // to its writer, or to NONE when several ops wrote it (a future read
    // needs to know that nobody else could have written the value).
    let mut other_writes: FxHashMap<(u32, i64), OpId> = FxHashMap::default();
    // For repeated values (see the module docs), the other writers a read
    // could have observed: final writes by non-`:ok` ops, and writes by
    // `:ok`/`:info` ops not among `ok_writers`, each with "more than one op".
    let mut others = Others::default();
    for (i, op) in h.ops.iter().enumerate() {
        let mops = h.stored_mops_of(op);
        for (j, m) in mops.iter().enumerate() {
            if m.f != MopFn::Write {
                continue;
            }
            let v = value_of(m.value);
            let last = !mops[j + 1..].iter().any(|x| x.f == MopFn::Write && x.key == m.key);
            if op.op_type != OpType::Ok && op.pair == crate::history::NONE
                || op.op_type == OpType::Info
                || op.op_type == OpType::Fail
                || (op.op_type == OpType::Ok && !last)
            {
                other_writes
                    .entry((m.key.0, v))
                    .and_modify(|w| {
                        if *w != i as u32 {
                            *w = NONE;
                        }
                    })
                    .or_insert(i as u32);
                if last && op.op_type != OpType::Ok {
                    note(&mut others.final_not_ok, (m.key.0, v), i as u32);
                }
                if matches!(op.op_type, OpType::Ok | OpType::Info) {
                    note(&mut others.live, (m.key.0, v), i as u32);
                }
            }
            if op.op_type == OpType::Fail {
                failed.insert((m.key.0, v), i as u32);
            }
            if mops[j + 1..].iter().any(|x| x.f == MopFn::Write && x.key == m.key) {
                intermediate.insert((m.key.0, v), i as u32);
            }
        }
    }
    // Per-op read checks in parallel chunks (merged in history order), while
    // another thread looks for lost updates.
    const CHUNK: usize = 8 * 1024;
    let (found, mut lost) = rayon::join(
        || {
            h.ops
                .par_chunks(CHUNK)
                .enumerate()
                .map(|(c, ops)| {
                    let mut found: Vec<(&'static str, Case)> = Vec::new();
                    for (j, op) in ops.iter().enumerate() {
                        if op.op_type == OpType::Ok {
                            check_reads(
                                h,
                                ok_writers,
                                &failed,
                                &intermediate,
                                &other_writes,
                                &others,
                                (c * CHUNK + j) as u32,
                                op,
                                &mut found,
                            );
                        }
                    }
                    found
                })
                .collect::<Vec<_>>()
        },
        || {
            let mut lost = Anomalies::new();
            super::list_append::lost_updates(h, &mut lost);
            lost
        },
    );
    for (name, case) in found.into_iter().flatten() {
        add(out, name, case);
    }
    out.append(&mut lost);
}

/// True when the read at `mops[j]` (of an ok op `me`) observes a value that
/// `me` writes to that key only after the read, and that no other op
/// (committed, failed, indeterminate or unpaired) ever wrote.
fn is_future_read(
    mops: &[Mop],
    j: usize,
    ok_writers: &ValueIndex,
    other_writes: &FxHashMap<(u32, i64), OpId>,
    me: OpId,
) -> bool {
    let m = mops[j];
    let writes_it = |x: &Mop| x.f == MopFn::Write && x.key == m.key && x.value == m.value;
    if !mops[j + 1..].iter().any(writes_it) || mops[..j].iter().any(writes_it) {
        return false;
    }
    let v = value_of(m.value);
    ok_writers.get(m.key.0, v).iter().all(|&w| w == me) && other_writes.get(&(m.key.0, v)).is_none_or(|&w| w == me)
}

/// Writers beyond the `:ok` final ones, as (first op, more than one op).
#[derive(Default)]
struct Others {
    /// Final writes by `:info`/`:fail` ops.
    final_not_ok: FxHashMap<(u32, i64), (OpId, bool)>,
    /// Writes by `:ok`/`:info` ops that are not `:ok` final writes.
    live: FxHashMap<(u32, i64), (OpId, bool)>,
}

fn note(m: &mut FxHashMap<(u32, i64), (OpId, bool)>, kv: (u32, i64), op: OpId) {
    let e = m.entry(kv).or_insert((op, false));
    if e.0 != op {
        e.1 = true;
    }
}

/// Whether `m` holds a write of `kv` by an op other than `me`.
fn by_other(m: &FxHashMap<(u32, i64), (OpId, bool)>, kv: (u32, i64), me: OpId) -> bool {
    m.get(&kv).is_some_and(|&(o, multi)| multi || o != me)
}

/// G1a, G1b, garbage reads, future reads and internal inconsistency in one
/// ok op.
///
/// A *future read* is a read of a value that only this transaction writes,
/// and only later (`[[:r :x 6] [:w :x 6]]`): the value cannot have come
/// from anywhere, since the transaction had not written it yet and nobody
/// else ever did. Elle reports this pattern for list-append (an element read
/// before the transaction appends it) and calls it `future-read`; with
/// registers it is the same impossibility, so it gets the same name (Elle's
/// rw-register analysis misses it and calls such histories valid).
#[allow(clippy::too_many_arguments)]
fn check_reads(
    h: &History,
    ok_writers: &ValueIndex,
    failed: &FxHashMap<(u32, i64), OpId>,
    intermediate: &FxHashMap<(u32, i64), OpId>,
    other_writes: &FxHashMap<(u32, i64), OpId>,
    others: &Others,
    me: OpId,
    op: &Op,
    found: &mut Vec<(&'static str, Case)>,
) {
    // Internal: a read must match the txn's last read or write of the key.
    let mut state: Vec<(KeyId, i64)> = Vec::new();
    let (mut internal_done, mut future_done) = (false, false);
    let mops = h.mops_of(op);
    for (j, m) in mops.iter().enumerate() {
        let v = value_of(m.value);
        let mref = MopRef { op: me, mop: j as u32 };
        let slot = state.iter().position(|s| s.0 == m.key);
        match m.f {
            MopFn::Write => match slot {
                Some(s) => state[s].1 = v,
                None => state.push((m.key, v)),
            },
            MopFn::Read => {
                let kv = (m.key.0, v);
                // With a repeated value, only when no other writer could
                // have produced the version read.
                let ok_final_other = || ok_writers.get(m.key.0, v).iter().any(|&o| o != me);
                if let Some(&w) = failed.get(&kv) {
                    if !ok_final_other() && !by_other(&others.live, kv, me) {
                        found.push(("G1a", Case::BadRead { mop: mref, writer: w, element: None }));
                    }
                }
                if let Some(&w) = intermediate.get(&kv) {
                    if w != me && !ok_final_other() && !by_other(&others.final_not_ok, kv, me) {
                        found.push(("G1b", Case::BadRead { mop: mref, writer: w, element: None }));
                    }
                }
                if v != NIL && ok_writers.get(m.key.0, v).is_empty() && !other_writes.contains_key(&(m.key.0, v)) {
                    found.push(("garbage-read", Case::GarbageRead { mop: mref, key: m.key, value: v }));
                }
                if !future_done && v != NIL && is_future_read(mops, j, ok_writers, other_writes, me) {
                    found.push(("future-read", Case::FutureRead { mop: mref, element: v }));
                    future_done = true;
                }
                match slot {
                    Some(s) => {
                        if !internal_done && state[s].1 != v {
                            let expected = Expected::Register(show(state[s].1));
                            found.push(("internal", Case::Internal { mop: mref, expected }));
                            internal_done = true;
                        }
                        state[s].1 = v;
                    }
                    None => state.push((m.key, v)),
                }
            }
            MopFn::Append | MopFn::Insert | MopFn::Delete | MopFn::PredRead | MopFn::PredEntry => {}
        }
    }
}
