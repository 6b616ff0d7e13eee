//! Dependency inference for list-append histories (Elle's `elle.list-append`).
//!
//! Every key holds a list; transactions append unique elements and read whole
//! lists. Lists are *traceable*: a read of `[1 2 3]` reveals that the versions
//! of the key were `[] < [1] < [1 2] < [1 2 3]`. So the longest read of a key
//! gives its version order (if every other read is a prefix of it — if not,
//! the database reordered or lost appends: `:incompatible-order`), and from the
//! order we derive, per Adya:
//!
//! * **ww** — the appender of the previous element precedes the appender of the
//!   next one;
//! * **wr** — the appender of a read's last element precedes the reader;
//! * **rw** — a reader of a version precedes the appender of the next version.
//!
//! Appends never observed are known to come after every observed one, so they
//! are ordered after the last element of the longest read. Only `:ok` and
//! `:info` transactions take part (`:info` may have committed); `[:r k nil]` in
//! an `:info` op is the client's placeholder, not an observation. Failed
//! appends feed G1a and dirty-update.
//!
//! The non-cycle anomalies found here are G1a, G1b, internal, future-read,
//! dirty-update, duplicate-elements, incompatible-order, lost-update and
//! isolde's garbage-read. Reads are long (often dozens of elements), so the
//! per-element checks use the version order: when every read of a key is a
//! prefix of one duplicate-free list ("regular" keys, the normal case), a read
//! is fully described by its length, and element checks become position
//! checks. Irregular keys fall back to examining each element.

use super::{Explain, InferError, Inference};
use crate::anomaly::{
    add, rel, Anomalies, Case, Expected, MopRef, ReadValue, Rels, Step, Workload,
};
use crate::graph::Edge;
use crate::history::{History, KeyId, MopFn, MopValue, Op, OpId, OpType, NONE};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// The element standing for a key's initial, empty state.
const INIT: i64 = i64::MIN;

/// A non-empty list read, as needed to sort reads by key and length.
#[derive(Clone, Copy)]
struct ReadRec {
    key: u32,
    len: u32,
    start: u32,
    op: OpId,
    mop: u32,
}

/// What we know about a key's versions.
#[derive(Clone, Default)]
struct KeyOrder {
    /// Version order: the distinct elements of the longest read.
    order: Vec<i64>,
    /// Every read of the key is a prefix of `order` and `order` has no
    /// duplicates, so a read is determined by its length.
    regular: bool,
    /// Some pair of reads is not prefix-compatible: (shorter, longer).
    incompatible: Option<[Vec<i64>; 2]>,
    /// The op and mop of the longest read (for witnesses).
    longest_read: Option<MopRef>,
}

/// Where an appended element sits: who appended it and at which position of
/// the version order it was observed.
#[derive(Clone, Copy)]
struct Slot {
    writer: OpId,
    pos: u32,
}

/// Everything inference learned, kept to explain edges after cycle search.
pub struct ListAppendIndex {
    orders: Vec<KeyOrder>,
    slots: FxHashMap<(u32, i64), Slot>,
    /// (key, last element or INIT) -> range into `readers`.
    reader_ranges: FxHashMap<(u32, i64), (u32, u32)>,
    readers: Vec<OpId>,
}

fn is_possible(op: &Op) -> bool {
    matches!(op.op_type, OpType::Ok | OpType::Info)
}

impl ListAppendIndex {
    fn slot(&self, k: KeyId, e: i64) -> Option<Slot> {
        self.slots.get(&(k.0, e)).copied()
    }

    fn writer(&self, k: KeyId, e: i64) -> Option<OpId> {
        self.slot(k, e).map(|s| s.writer).filter(|&w| w != NONE)
    }

    /// The element appended just before `v` to `k` (or [`INIT`]); for an
    /// unobserved append, the last observed element.
    fn previous_element(&self, k: KeyId, v: i64) -> i64 {
        let order = &self.orders[k.0 as usize].order;
        match self.slot(k, v) {
            Some(s) if s.pos != NONE => {
                if s.pos == 0 {
                    INIT
                } else {
                    order[s.pos as usize - 1]
                }
            }
            _ => order.last().copied().unwrap_or(INIT),
        }
    }

    fn readers_of(&self, k: KeyId, e: i64) -> &[OpId] {
        match self.reader_ranges.get(&(k.0, e)) {
            Some(&(s, l)) => &self.readers[s as usize..(s + l) as usize],
            None => &[],
        }
    }
}

/// The last element a read observed, or [`INIT`] for nil/empty.
fn read_tip(h: &History, v: MopValue) -> i64 {
    h.list(v).last().copied().unwrap_or(INIT)
}

/// Whether a read mop in `op` counts as an observation for the read index.
fn observes(op: &Op, v: MopValue) -> bool {
    !(op.op_type == OpType::Info && v == MopValue::Nil)
}

/// Infers the list-append dependency graph and non-cycle anomalies.
pub fn infer(h: &History) -> Result<Inference, InferError> {
    verify_unique_appends(h)?;
    let nkeys = h.key_count();

    // Version orders from the reads of ok and info ops.
    let orders = key_orders(h, nkeys, is_possible);

    // Slots: positions in the version order, and ok/info writers.
    let mut slots: FxHashMap<(u32, i64), Slot> = FxHashMap::default();
    slots.reserve(h.mops.len() / 2);
    for (k, ko) in orders.iter().enumerate() {
        for (i, &e) in ko.order.iter().enumerate() {
            slots.entry((k as u32, e)).or_insert(Slot {
                writer: NONE,
                pos: i as u32,
            });
        }
    }
    for (i, op) in h.ops.iter().enumerate() {
        if !is_possible(op) {
            continue;
        }
        for m in h.mops_of(op) {
            if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                slots
                    .entry((m.key.0, v))
                    .or_insert(Slot {
                        writer: NONE,
                        pos: NONE,
                    })
                    .writer = i as u32;
            }
        }
    }

    // Read index: who observed each version (by its last element).
    let mut tips: Vec<(u32, i64, OpId)> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !is_possible(op) {
            continue;
        }
        for m in h.mops_of(op) {
            if m.f == MopFn::Read && observes(op, m.value) {
                tips.push((m.key.0, read_tip(h, m.value), i as u32));
            }
        }
    }
    tips.par_sort_unstable();
    tips.dedup();
    let mut reader_ranges = FxHashMap::default();
    let mut readers = Vec::with_capacity(tips.len());
    let mut i = 0;
    while i < tips.len() {
        let (k, e, _) = tips[i];
        let start = readers.len() as u32;
        while i < tips.len() && tips[i].0 == k && tips[i].1 == e {
            readers.push(tips[i].2);
            i += 1;
        }
        reader_ranges.insert((k, e), (start, readers.len() as u32 - start));
    }
    drop(tips);

    let index = ListAppendIndex {
        orders,
        slots,
        reader_ranges,
        readers,
    };
    let edges = data_edges(h, &index);
    let mut anomalies = Anomalies::new();
    detect_anomalies(h, &index, &mut anomalies);
    Ok(Inference {
        workload: Workload::ListAppend,
        edges,
        anomalies,
        explainer: Box::new(index),
    })
}

/// Elle refuses histories where two invocations append the same element to
/// the same key: uniqueness is what makes reads traceable. Completions with no
/// invocation are checked only when the history has no invocations at all
/// (completion-only histories), where they are the only record of intent.
fn verify_unique_appends(h: &History) -> Result<(), InferError> {
    let mut seen: FxHashMap<(u32, i64), OpId> = FxHashMap::default();
    let has_invokes = h.ops.iter().any(Op::is_invoke);
    for (i, op) in h.ops.iter().enumerate() {
        if op.is_invoke() != has_invokes {
            continue;
        }
        for m in h.mops_of(op) {
            if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                if let Some(&prev) = seen.get(&(m.key.0, v)) {
                    if prev != i as u32 {
                        return Err(InferError::DuplicateAppend {
                            key: h.key(m.key).to_string(),
                            value: v,
                            first_line: h.op(prev).line,
                            second_line: op.line,
                        });
                    }
                } else {
                    seen.insert((m.key.0, v), i as u32);
                }
            }
        }
    }
    // Micro-op types: only appends and reads belong in this workload.
    for op in &h.ops {
        for m in h.mops_of(op) {
            if m.f == MopFn::Write {
                return Err(InferError::UnexpectedMop {
                    workload: "list-append",
                    mop: "w",
                    line: op.line,
                });
            }
        }
    }
    Ok(())
}

/// Computes every key's version order from the reads of ops selected by
/// `include` (Elle's `sorted-values` + `append-index`), with the special case
/// that a key never read but appended exactly once has the order `[v]`.
fn key_orders(h: &History, nkeys: usize, include: fn(&Op) -> bool) -> Vec<KeyOrder> {
    let mut reads: Vec<ReadRec> = Vec::new();
    let mut single_append: Vec<(u32, i64)> = vec![(0, 0); nkeys]; // (count, value)
    for (i, op) in h.ops.iter().enumerate() {
        if !include(op) {
            continue;
        }
        for (j, m) in h.mops_of(op).iter().enumerate() {
            match (m.f, m.value) {
                (MopFn::Read, MopValue::List { start, len }) if len > 0 => reads.push(ReadRec {
                    key: m.key.0,
                    len,
                    start,
                    op: i as u32,
                    mop: j as u32,
                }),
                (MopFn::Append, MopValue::Int(v)) => {
                    let s = &mut single_append[m.key.0 as usize];
                    s.0 = s.0.saturating_add(1);
                    s.1 = v;
                }
                _ => {}
            }
        }
    }
    reads.par_sort_unstable_by_key(|r| ((r.key as u64) << 32 | r.len as u64, r.op, r.mop));
    // Group by key.
    let mut groups: Vec<(u32, usize, usize)> = Vec::new();
    let mut i = 0;
    while i < reads.len() {
        let k = reads[i].key;
        let s = i;
        while i < reads.len() && reads[i].key == k {
            i += 1;
        }
        groups.push((k, s, i));
    }
    let elems = &h.elements;
    let slice = |r: &ReadRec| &elems[r.start as usize..(r.start + r.len) as usize];
    let computed: Vec<(u32, KeyOrder)> = groups
        .par_iter()
        .map(|&(k, s, e)| {
            let rs = &reads[s..e];
            let mut incompatible = None;
            let mut chain_ok = true;
            // Consecutive distinct values (by length) must be prefixes.
            let mut prev: Option<&ReadRec> = None;
            for r in rs {
                if let Some(p) = prev {
                    let (a, b) = (slice(p), slice(r));
                    if a.len() == b.len() {
                        if a != b {
                            chain_ok = false;
                            if incompatible.is_none() {
                                incompatible = Some([a.to_vec(), b.to_vec()]);
                            }
                        }
                        continue; // same length: keep the earlier as representative
                    }
                    if &b[..a.len()] != a {
                        chain_ok = false;
                        if incompatible.is_none() {
                            incompatible = Some([a.to_vec(), b.to_vec()]);
                        }
                    }
                }
                prev = Some(r);
            }
            // The longest read: first of the longest group.
            let max_len = rs[rs.len() - 1].len;
            let longest = rs
                .iter()
                .find(|r| r.len == max_len)
                .unwrap_or(&rs[rs.len() - 1]);
            let lv = slice(longest);
            let mut seen = FxHashSet::default();
            let order: Vec<i64> = lv.iter().copied().filter(|&x| seen.insert(x)).collect();
            let regular = chain_ok && order.len() == lv.len();
            (
                k,
                KeyOrder {
                    order,
                    regular,
                    incompatible,
                    longest_read: Some(MopRef {
                        op: longest.op,
                        mop: longest.mop,
                    }),
                },
            )
        })
        .collect();
    let mut orders = vec![
        KeyOrder {
            regular: true,
            ..KeyOrder::default()
        };
        nkeys
    ];
    for (k, ko) in computed {
        orders[k as usize] = ko;
    }
    for (k, &(count, v)) in single_append.iter().enumerate() {
        if count == 1 && orders[k].longest_read.is_none() {
            orders[k].order = vec![v];
        }
    }
    orders
}

/// Derives ww, wr and rw edges, in parallel over chunks of the history.
fn data_edges(h: &History, idx: &ListAppendIndex) -> Vec<Edge> {
    const CHUNK: usize = 16 * 1024;
    let chunks: Vec<Vec<Edge>> = h
        .ops
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, ops)| {
            let mut out = Vec::new();
            for (j, op) in ops.iter().enumerate() {
                if !is_possible(op) {
                    continue;
                }
                let me = (c * CHUNK + j) as u32;
                for m in h.mops_of(op) {
                    match (m.f, m.value) {
                        (MopFn::Read, v @ MopValue::List { len, .. }) if len > 0 => {
                            if let Some(w) = idx.writer(m.key, read_tip(h, v)) {
                                if w != me {
                                    out.push(Edge {
                                        from: w,
                                        to: me,
                                        rels: rel::WR,
                                    });
                                }
                            }
                        }
                        (MopFn::Append, MopValue::Int(v)) => {
                            let prev = idx.previous_element(m.key, v);
                            if prev != INIT {
                                if let Some(w) = idx.writer(m.key, prev) {
                                    if w != me {
                                        out.push(Edge {
                                            from: w,
                                            to: me,
                                            rels: rel::WW,
                                        });
                                    }
                                }
                            }
                            for &r in idx.readers_of(m.key, prev) {
                                if r != me {
                                    out.push(Edge {
                                        from: r,
                                        to: me,
                                        rels: rel::RW,
                                    });
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            out
        })
        .collect();
    let total = chunks.iter().map(Vec::len).sum();
    let mut edges = Vec::with_capacity(total);
    for c in chunks {
        edges.extend(c);
    }
    edges
}

impl Explain for ListAppendIndex {
    fn explain(&self, h: &History, a: OpId, b: OpId, rels: Rels) -> Option<Step> {
        let (oa, ob) = (h.op(a), h.op(b));
        let bm = h.mops_of(ob);
        let am = h.mops_of(oa);
        let find_append = |k: KeyId, e: i64| {
            am.iter()
                .position(|m| m.f == MopFn::Append && m.key == k && m.value == MopValue::Int(e))
                .map(|i| i as u32)
        };
        if rels & rel::WW != 0 {
            for (j, m) in bm.iter().enumerate() {
                if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                    let prev = self.previous_element(m.key, v);
                    if prev != INIT && self.writer(m.key, prev) == Some(a) {
                        return Some(Step::Ww {
                            key: m.key,
                            value: Some(prev),
                            value2: Some(v),
                            a_mop: find_append(m.key, prev),
                            b_mop: Some(j as u32),
                        });
                    }
                }
            }
        }
        if rels & rel::WR != 0 {
            for (j, m) in bm.iter().enumerate() {
                if let (MopFn::Read, v @ MopValue::List { len, .. }) = (m.f, m.value) {
                    if len > 0 {
                        let tip = read_tip(h, v);
                        if self.writer(m.key, tip) == Some(a) {
                            return Some(Step::Wr {
                                key: m.key,
                                value: Some(tip),
                                a_mop: find_append(m.key, tip),
                                b_mop: Some(j as u32),
                            });
                        }
                    }
                }
            }
        }
        if rels & rel::RW != 0 {
            for (j, m) in bm.iter().enumerate() {
                if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                    let prev = self.previous_element(m.key, v);
                    if self.readers_of(m.key, prev).contains(&a) {
                        let a_mop = am
                            .iter()
                            .position(|x| {
                                x.f == MopFn::Read
                                    && x.key == m.key
                                    && observes(oa, x.value)
                                    && read_tip(h, x.value) == prev
                            })
                            .map(|i| i as u32);
                        return Some(Step::Rw {
                            key: m.key,
                            value: (prev != INIT).then_some(prev),
                            value2: Some(v),
                            a_mop,
                            b_mop: Some(j as u32),
                        });
                    }
                }
            }
        }
        None
    }
}

/// Runs every non-cycle detector.
fn detect_anomalies(h: &History, idx: &ListAppendIndex, out: &mut Anomalies) {
    // Failed and intermediate appends, and appends of invocations that never
    // completed (they may have taken effect).
    let mut failed: FxHashMap<(u32, i64), OpId> = FxHashMap::default();
    let mut intermediate: FxHashMap<(u32, i64), OpId> = FxHashMap::default();
    let mut dangling: FxHashSet<(u32, i64)> = FxHashSet::default();
    let mut any_fail_append = false;
    for (i, op) in h.ops.iter().enumerate() {
        let mops = h.mops_of(op);
        for (j, m) in mops.iter().enumerate() {
            if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                match op.op_type {
                    OpType::Fail => {
                        failed.insert((m.key.0, v), i as u32);
                        any_fail_append = true;
                    }
                    OpType::Invoke if op.pair == NONE => {
                        dangling.insert((m.key.0, v));
                    }
                    _ => {}
                }
                if mops[j + 1..]
                    .iter()
                    .any(|x| x.f == MopFn::Append && x.key == m.key)
                {
                    intermediate.insert((m.key.0, v), i as u32);
                }
            }
        }
    }

    // Failed positions per regular key's order, for G1a on regular keys.
    let mut failed_pos: FxHashMap<u32, Vec<(u32, i64)>> = FxHashMap::default();
    if !failed.is_empty() {
        for (k, ko) in idx.orders.iter().enumerate() {
            for (p, &e) in ko.order.iter().enumerate() {
                if failed.contains_key(&(k as u32, e)) {
                    failed_pos.entry(k as u32).or_default().push((p as u32, e));
                }
            }
        }
    }

    for (i, op) in h.ops.iter().enumerate() {
        let me = i as u32;
        let possible = is_possible(op);
        for (j, m) in h.mops_of(op).iter().enumerate() {
            let (MopFn::Read, MopValue::List { len, .. }) = (m.f, m.value) else {
                continue;
            };
            let mref = MopRef {
                op: me,
                mop: j as u32,
            };
            let ko = &idx.orders[m.key.0 as usize];
            let elems = h.list(m.value);
            if op.is_ok() && len > 0 {
                // G1a: elements appended by failed transactions.
                if !failed.is_empty() {
                    if ko.regular {
                        if let Some(ps) = failed_pos.get(&m.key.0) {
                            for &(p, e) in ps {
                                if p < len {
                                    add(
                                        out,
                                        "G1a",
                                        Case::BadRead {
                                            mop: mref,
                                            writer: failed[&(m.key.0, e)],
                                            element: Some(e),
                                        },
                                    );
                                }
                            }
                        }
                    } else {
                        for &e in elems {
                            if let Some(&w) = failed.get(&(m.key.0, e)) {
                                add(
                                    out,
                                    "G1a",
                                    Case::BadRead {
                                        mop: mref,
                                        writer: w,
                                        element: Some(e),
                                    },
                                );
                            }
                        }
                    }
                }
                // G1b: the last element was an intermediate append of another txn.
                if let Some(&last) = elems.last() {
                    if let Some(&w) = intermediate.get(&(m.key.0, last)) {
                        if h.op(w).index != op.index {
                            add(
                                out,
                                "G1b",
                                Case::BadRead {
                                    mop: mref,
                                    writer: w,
                                    element: Some(last),
                                },
                            );
                        }
                    }
                }
            }
            if possible && !ko.regular && len > 0 {
                // Duplicates and garbage on irregular keys, element by element.
                let mut counts: FxHashMap<i64, usize> = FxHashMap::default();
                for &e in elems {
                    *counts.entry(e).or_default() += 1;
                }
                let mut dups: Vec<(i64, usize)> = counts
                    .iter()
                    .filter(|(_, &c)| c > 1)
                    .map(|(&e, &c)| (e, c))
                    .collect();
                if !dups.is_empty() {
                    dups.sort_unstable();
                    add(
                        out,
                        "duplicate-elements",
                        Case::DuplicateElements {
                            mop: mref,
                            duplicates: dups,
                        },
                    );
                }
                let mut reported = FxHashSet::default();
                for &e in elems {
                    if is_garbage(idx, &failed, &dangling, m.key, e) && reported.insert(e) {
                        add(
                            out,
                            "garbage-read",
                            Case::GarbageRead {
                                mop: mref,
                                key: m.key,
                                value: e,
                            },
                        );
                    }
                }
            }
        }
        if op.is_ok() {
            internal_and_future_read(h, idx, me, op, out);
        }
    }

    // Garbage reads on regular keys: check the version order once.
    for (k, ko) in idx.orders.iter().enumerate() {
        if !ko.regular {
            continue;
        }
        if let Some(lr) = ko.longest_read {
            for &e in &ko.order {
                if is_garbage(idx, &failed, &dangling, KeyId(k as u32), e) {
                    add(
                        out,
                        "garbage-read",
                        Case::GarbageRead {
                            mop: lr,
                            key: KeyId(k as u32),
                            value: e,
                        },
                    );
                }
            }
        }
        if let Some(pair) = &ko.incompatible {
            add(
                out,
                "incompatible-order",
                Case::IncompatibleOrder {
                    key: KeyId(k as u32),
                    values: pair.clone(),
                },
            );
        }
    }
    for (k, ko) in idx.orders.iter().enumerate() {
        if !ko.regular {
            if let Some(pair) = &ko.incompatible {
                add(
                    out,
                    "incompatible-order",
                    Case::IncompatibleOrder {
                        key: KeyId(k as u32),
                        values: pair.clone(),
                    },
                );
            }
        }
    }
    if let Some(v) = out.get_mut("incompatible-order") {
        v.sort_by_key(|c| {
            if let Case::IncompatibleOrder { key, .. } = c {
                key.0
            } else {
                0
            }
        });
    }

    if any_fail_append {
        dirty_updates(h, &failed, out);
    }
    lost_updates(h, out);
}

fn is_garbage(
    idx: &ListAppendIndex,
    failed: &FxHashMap<(u32, i64), OpId>,
    dangling: &FxHashSet<(u32, i64)>,
    k: KeyId,
    e: i64,
) -> bool {
    idx.writer(k, e).is_none() && !failed.contains_key(&(k.0, e)) && !dangling.contains(&(k.0, e))
}

/// Cerone's INT axiom within one ok transaction, and future reads.
fn internal_and_future_read(
    h: &History,
    idx: &ListAppendIndex,
    me: OpId,
    op: &Op,
    out: &mut Anomalies,
) {
    let mops = h.mops_of(op);
    if mops.len() < 2 {
        return;
    }
    // Expected state per key: (unknown prefix?, elements, was the last read nil?)
    let mut state: Vec<(KeyId, bool, Vec<i64>, bool)> = Vec::new();
    let mut internal_done = false;
    let mut future_done = false;
    for (j, m) in mops.iter().enumerate() {
        let slot = state.iter().position(|s| s.0 == m.key);
        match (m.f, m.value) {
            (MopFn::Append, MopValue::Int(v)) => {
                if !future_done {
                    // Did an earlier read in this txn already contain v?
                    let ko = &idx.orders[m.key.0 as usize];
                    let pos = idx.slot(m.key, v).map(|s| s.pos).unwrap_or(NONE);
                    let earlier = mops[..j].iter().position(|x| {
                        x.f == MopFn::Read
                            && x.key == m.key
                            && if ko.regular && pos != NONE {
                                matches!(x.value, MopValue::List { len, .. } if len > pos)
                            } else {
                                h.list(x.value).contains(&v)
                            }
                    });
                    if let Some(r) = earlier {
                        add(
                            out,
                            "future-read",
                            Case::FutureRead {
                                mop: MopRef {
                                    op: me,
                                    mop: r as u32,
                                },
                                element: v,
                            },
                        );
                        future_done = true;
                    }
                }
                match slot {
                    Some(s) => {
                        state[s].2.push(v);
                        state[s].3 = false;
                    }
                    None => state.push((m.key, true, vec![v], false)),
                }
            }
            (MopFn::Read, v) => {
                let got = h.list(v);
                if !internal_done {
                    if let Some(s) = slot {
                        let (unknown, ref exp, was_nil) =
                            (state[s].1, state[s].2.clone(), state[s].3);
                        let bad = if unknown {
                            got.len() < exp.len() || got[got.len() - exp.len()..] != exp[..]
                        } else {
                            got != &exp[..]
                        };
                        if bad {
                            let expected = if was_nil {
                                Expected::Register(None)
                            } else {
                                Expected::List {
                                    unknown_prefix: unknown,
                                    elems: exp.clone(),
                                }
                            };
                            add(
                                out,
                                "internal",
                                Case::Internal {
                                    mop: MopRef {
                                        op: me,
                                        mop: j as u32,
                                    },
                                    expected,
                                },
                            );
                            internal_done = true;
                        }
                    }
                }
                let entry = (m.key, false, got.to_vec(), v == MopValue::Nil);
                match slot {
                    Some(s) => state[s] = entry,
                    None => state.push(entry),
                }
            }
            _ => {}
        }
        if internal_done && future_done {
            return;
        }
    }
}

/// Dirty update: in each key's version order (from every op's reads, failed
/// ones included), a failed append followed — possibly through indeterminate
/// ones — by a committed append.
fn dirty_updates(h: &History, failed: &FxHashMap<(u32, i64), OpId>, out: &mut Anomalies) {
    let orders = key_orders(h, h.key_count(), |_| true);
    // Writers among completions (ok, info, fail); later ops win, as in Elle.
    let mut writer: FxHashMap<(u32, i64), OpId> = FxHashMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        if op.is_invoke() {
            continue;
        }
        for m in h.mops_of(op) {
            if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                writer.insert((m.key.0, v), i as u32);
            }
        }
    }
    for (k, ko) in orders.iter().enumerate() {
        if !ko
            .order
            .iter()
            .any(|&e| failed.contains_key(&(k as u32, e)))
        {
            continue;
        }
        // (t1 type, t1, versions since t1)
        let mut t1: Option<OpId> = None; // None = the committed initial state
        let mut vs: Vec<i64> = Vec::new();
        for &v in &ko.order {
            let Some(&t2) = writer.get(&(k as u32, v)) else {
                continue;
            };
            let ty1 = t1.map(|t| h.op(t).op_type).unwrap_or(OpType::Ok);
            let ty2 = h.op(t2).op_type;
            vs.push(v);
            match (ty1, ty2) {
                (OpType::Fail, OpType::Ok) => {
                    add(
                        out,
                        "dirty-update",
                        Case::DirtyUpdate {
                            key: KeyId(k as u32),
                            values: vs.clone(),
                            txns: [t1.unwrap_or(t2), t2],
                        },
                    );
                    t1 = Some(t2);
                    vs = vec![v];
                }
                (_, OpType::Ok) | (OpType::Ok | OpType::Info, OpType::Fail) => {
                    t1 = Some(t2);
                    vs = vec![v];
                }
                _ => {} // info after anything, fail after fail: keep t1 and the range
            }
        }
    }
}

/// Lost update: two or more ok txns read the same version of a key (their
/// first read of it) and then appended to it.
fn lost_updates(h: &History, out: &mut Anomalies) {
    let mut groups: FxHashMap<(u32, ReadValue), Vec<OpId>> = FxHashMap::default();
    let mut order: Vec<(u32, ReadValue)> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !op.is_ok() {
            continue;
        }
        let mops = h.mops_of(op);
        let mut reads: Vec<(KeyId, usize)> = Vec::new();
        let mut written: Vec<KeyId> = Vec::new();
        for (j, m) in mops.iter().enumerate() {
            match m.f {
                MopFn::Read => {
                    if !reads.iter().any(|r| r.0 == m.key) {
                        reads.push((m.key, j));
                    }
                }
                MopFn::Append | MopFn::Write => {
                    if written.contains(&m.key) {
                        continue;
                    }
                    if let Some(&(_, rj)) = reads.iter().find(|r| r.0 == m.key) {
                        written.push(m.key);
                        let rv = match mops[rj].value {
                            MopValue::Nil => ReadValue::Nil,
                            MopValue::Int(x) => ReadValue::Int(x),
                            v @ MopValue::List { .. } => ReadValue::List(h.list(v).to_vec()),
                        };
                        let gk = (m.key.0, rv);
                        match groups.get_mut(&gk) {
                            Some(g) => g.push(i as u32),
                            None => {
                                order.push(gk.clone());
                                groups.insert(gk, vec![i as u32]);
                            }
                        }
                    }
                }
            }
        }
    }
    for gk in order {
        if let Some(txns) = groups.remove(&gk) {
            if txns.len() >= 2 {
                add(
                    out,
                    "lost-update",
                    Case::LostUpdate {
                        key: KeyId(gk.0),
                        value: gk.1,
                        txns,
                    },
                );
            }
        }
    }
}
