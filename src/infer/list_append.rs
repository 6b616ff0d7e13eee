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
use crate::anomaly::{add, rel, Anomalies, Case, Expected, MopRef, ReadValue, Rels, Step, Workload};
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

/// Where an element sits: who appended it, where the version order has it,
/// and which ops observed the version it ends (a range into `readers`).
#[derive(Clone, Copy)]
struct Slot {
    writer: OpId,
    pos: u32,
    readers_start: u32,
    readers_len: u32,
}

const EMPTY_SLOT: Slot = Slot { writer: NONE, pos: NONE, readers_start: 0, readers_len: 0 };

/// One key's element -> slot table: a dense array when the key's elements are
/// compact integers (Jepsen appends 1, 2, 3, ... per key), else a hash map.
/// Per-key tables keep lookups cache-local, where one global map would not.
enum ElementTable {
    Dense { min: i64, slots: Vec<Slot> },
    Sparse(FxHashMap<i64, Slot>),
}

impl ElementTable {
    /// A table for elements in `min..=max`, `count` of them (with repeats).
    fn new(min: i64, max: i64, count: usize) -> ElementTable {
        if count > 0 && (max as i128 - min as i128) < (4 * count as i128 + 64) {
            ElementTable::Dense { min, slots: vec![EMPTY_SLOT; (max - min + 1) as usize] }
        } else {
            ElementTable::Sparse(FxHashMap::default())
        }
    }

    #[inline]
    fn get(&self, e: i64) -> Option<&Slot> {
        match self {
            ElementTable::Dense { min, slots } => {
                let i = e.wrapping_sub(*min);
                if i >= 0 && (i as usize) < slots.len() {
                    let s = &slots[i as usize];
                    (s.writer != NONE || s.pos != NONE || s.readers_len != 0).then_some(s)
                } else {
                    None
                }
            }
            ElementTable::Sparse(m) => m.get(&e),
        }
    }

    /// The slot of `e`, created if needed. Dense tables are sized from every
    /// element they will hold; `None` only for an element outside that range.
    #[inline]
    fn entry(&mut self, e: i64) -> Option<&mut Slot> {
        match self {
            ElementTable::Dense { min, slots } => {
                let i = e.wrapping_sub(*min);
                if i >= 0 && (i as usize) < slots.len() {
                    Some(&mut slots[i as usize])
                } else {
                    None
                }
            }
            ElementTable::Sparse(m) => Some(m.entry(e).or_insert(EMPTY_SLOT)),
        }
    }
}

/// Everything inference learned, kept to explain edges after cycle search.
pub struct ListAppendIndex {
    orders: Vec<KeyOrder>,
    tables: Vec<ElementTable>,
    /// Per key, the ops that observed the initial (empty) state.
    init_readers: Vec<(u32, u32)>,
    readers: Vec<OpId>,
}

fn is_possible(op: &Op) -> bool {
    matches!(op.op_type, OpType::Ok | OpType::Info)
}

impl ListAppendIndex {
    #[inline]
    fn slot(&self, k: KeyId, e: i64) -> Option<Slot> {
        self.tables[k.0 as usize].get(e).copied()
    }

    #[inline]
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
        let (s, l) = if e == INIT {
            self.init_readers[k.0 as usize]
        } else {
            match self.slot(k, e) {
                Some(sl) => (sl.readers_start, sl.readers_len),
                None => (0, 0),
            }
        };
        &self.readers[s as usize..(s + l) as usize]
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
    super::refuse_predicate_ops(h, "list-append")?;
    let nkeys = h.key_count();
    // Version orders from the reads of ok and info ops, beside the check
    // that appends are unique (independent passes over the history).
    let (unique, orders) = rayon::join(|| verify_unique_appends(h), || key_orders(h, nkeys, is_possible));
    unique?;

    // Size each key's element table from the elements it will hold: the
    // version order, ok/info appends, and the tips of reads.
    let mut bounds: Vec<(i64, i64, usize)> = vec![(i64::MAX, i64::MIN, 0); nkeys];
    let mut note = |k: usize, e: i64| {
        let b = &mut bounds[k];
        b.0 = b.0.min(e);
        b.1 = b.1.max(e);
        b.2 += 1;
    };
    for (k, ko) in orders.iter().enumerate() {
        for &e in &ko.order {
            note(k, e);
        }
    }
    let mut tips: Vec<(u32, i64, OpId)> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !is_possible(op) {
            continue;
        }
        for m in h.mops_of(op) {
            match (m.f, m.value) {
                (MopFn::Append, MopValue::Int(v)) => note(m.key.0 as usize, v),
                (MopFn::Read, v) if observes(op, v) => {
                    let tip = read_tip(h, v);
                    if tip != INIT {
                        note(m.key.0 as usize, tip);
                    }
                    tips.push((m.key.0, tip, i as u32));
                }
                _ => {}
            }
        }
    }
    let mut tables: Vec<ElementTable> = bounds.iter().map(|&(lo, hi, n)| ElementTable::new(lo, hi, n)).collect();
    for (k, ko) in orders.iter().enumerate() {
        for (i, &e) in ko.order.iter().enumerate() {
            if let Some(s) = tables[k].entry(e) {
                if s.pos == NONE {
                    s.pos = i as u32;
                }
            }
        }
    }
    for (i, op) in h.ops.iter().enumerate() {
        if !is_possible(op) {
            continue;
        }
        for m in h.mops_of(op) {
            if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                if let Some(s) = tables[m.key.0 as usize].entry(v) {
                    s.writer = i as u32;
                }
            }
        }
    }

    // Read index: who observed each version (by its last element).
    tips.par_sort_unstable();
    tips.dedup();
    let mut init_readers = vec![(0u32, 0u32); nkeys];
    let mut readers = Vec::with_capacity(tips.len());
    let mut i = 0;
    while i < tips.len() {
        let (k, e, _) = tips[i];
        let start = readers.len() as u32;
        while i < tips.len() && tips[i].0 == k && tips[i].1 == e {
            readers.push(tips[i].2);
            i += 1;
        }
        let range = (start, readers.len() as u32 - start);
        if e == INIT {
            init_readers[k as usize] = range;
        } else if let Some(s) = tables[k as usize].entry(e) {
            s.readers_start = range.0;
            s.readers_len = range.1;
        }
    }
    drop(tips);

    let index = ListAppendIndex { orders, tables, init_readers, readers };
    let edges = data_edges(h, &index);
    let mut anomalies = Anomalies::new();
    detect_anomalies(h, &index, &mut anomalies);
    Ok(Inference { workload: Workload::ListAppend, edges, anomalies, explainer: Box::new(index) })
}

/// Elle refuses histories where two transactions append the same element to
/// the same key (see [`super::unique_appends`] for which records count), and
/// micro-ops other than appends and reads.
fn verify_unique_appends(h: &History) -> Result<(), InferError> {
    let dup = super::unique_appends::first_duplicate(h);
    if let Some((a, b, k, v)) = dup {
        let place = |o: &Op| match o.line {
            0 => format!("index {}", o.index),
            l => format!("line {l}"),
        };
        return Err(InferError::DuplicateValue {
            workload: "list-append",
            key: h.key(KeyId(k)).to_string(),
            value: h.value_text(v),
            places: vec![place(h.op(a)), place(h.op(b))],
        });
    }
    // Micro-op types: only appends and reads belong in this workload.
    for op in &h.ops {
        for m in h.stored_mops_of(op) {
            if m.f == MopFn::Write {
                return Err(InferError::UnexpectedMop { workload: "list-append", mop: "w", line: op.line });
            }
        }
    }
    Ok(())
}

/// Whether `a` is a prefix of `b` (not longer). Reads stored in one place
/// (shared list storage, see [`crate::history`]) are known equal without
/// comparing their elements.
#[inline]
fn is_prefix(a: &[i64], b: &[i64]) -> bool {
    a.len() <= b.len() && (a.as_ptr() == b.as_ptr() || b[..a.len()] == *a)
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
        // The stored micro-ops, without a copy: the reads of an invocation
        // that shares its completion's are `nil`, its appends are its own.
        let nil_reads = h.shares_mops(op);
        for (j, m) in h.stored_mops_of(op).iter().enumerate() {
            match (m.f, m.value) {
                (MopFn::Read, MopValue::List { start, len }) if len > 0 && !nil_reads => {
                    reads.push(ReadRec { key: m.key.0, len, start, op: i as u32, mop: j as u32 })
                }
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
                        if !is_prefix(a, b) {
                            chain_ok = false;
                            if incompatible.is_none() {
                                incompatible = Some([a.to_vec(), b.to_vec()]);
                            }
                        }
                        continue; // same length: keep the earlier as representative
                    }
                    if !is_prefix(a, b) {
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
            let longest = rs.iter().find(|r| r.len == max_len).unwrap_or(&rs[rs.len() - 1]);
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
                    longest_read: Some(MopRef { op: longest.op, mop: longest.mop }),
                },
            )
        })
        .collect();
    let mut orders = vec![KeyOrder { regular: true, ..KeyOrder::default() }; nkeys];
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
fn data_edges(h: &History, idx: &ListAppendIndex) -> Vec<Vec<Edge>> {
    const CHUNK: usize = 16 * 1024;
    h.ops
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
                                    out.push(Edge { from: w, to: me, rels: rel::WR });
                                }
                            }
                        }
                        (MopFn::Append, MopValue::Int(v)) => {
                            let prev = idx.previous_element(m.key, v);
                            if prev != INIT {
                                if let Some(w) = idx.writer(m.key, prev) {
                                    if w != me {
                                        out.push(Edge { from: w, to: me, rels: rel::WW });
                                    }
                                }
                            }
                            for &r in idx.readers_of(m.key, prev) {
                                if r != me {
                                    out.push(Edge { from: r, to: me, rels: rel::RW });
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            out
        })
        .collect()
}

impl ListAppendIndex {
    /// Heap bytes of the version orders, element tables and reader lists.
    fn bytes(&self) -> u64 {
        use std::mem::size_of;
        let orders: usize = self
            .orders
            .iter()
            .map(|o| {
                let inc = o.incompatible.as_ref().map_or(0, |[a, b]| a.capacity() + b.capacity());
                (o.order.capacity() + inc) * size_of::<i64>()
            })
            .sum();
        let tables: usize = self
            .tables
            .iter()
            .map(|t| match t {
                ElementTable::Dense { slots, .. } => slots.capacity() * size_of::<Slot>(),
                ElementTable::Sparse(m) => m.capacity() * (size_of::<(i64, Slot)>() + 1),
            })
            .sum();
        (orders
            + tables
            + self.orders.capacity() * size_of::<KeyOrder>()
            + self.tables.capacity() * size_of::<ElementTable>()
            + self.init_readers.capacity() * 8
            + self.readers.capacity() * 4) as u64
    }
}

impl Explain for ListAppendIndex {
    fn heap_bytes(&self) -> u64 {
        self.bytes()
    }

    fn explain(&self, h: &History, a: OpId, b: OpId, rels: Rels) -> Option<Step> {
        let (oa, ob) = (h.op(a), h.op(b));
        let bm = h.mops_of(ob);
        let am = h.mops_of(oa);
        let find_append = |k: KeyId, e: i64| {
            am.iter().position(|m| m.f == MopFn::Append && m.key == k && m.value == MopValue::Int(e)).map(|i| i as u32)
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

/// Facts about writes that the read checks consult.
struct WriteFacts {
    /// Appends of failed ops.
    failed: FxHashMap<(u32, i64), OpId>,
    /// Appends later overwritten by the same op (any op type).
    intermediate: FxHashMap<(u32, i64), OpId>,
    /// Appends of invocations that never completed (they may have happened).
    dangling: FxHashSet<(u32, i64)>,
    /// Per key: (position in the version order, element) of failed appends.
    failed_pos: FxHashMap<u32, Vec<(u32, i64)>>,
}

/// Runs every non-cycle detector.
fn detect_anomalies(h: &History, idx: &ListAppendIndex, out: &mut Anomalies) {
    let mut facts = WriteFacts {
        failed: FxHashMap::default(),
        intermediate: FxHashMap::default(),
        dangling: FxHashSet::default(),
        failed_pos: FxHashMap::default(),
    };
    for (i, op) in h.ops.iter().enumerate() {
        let mops = h.stored_mops_of(op);
        for (j, m) in mops.iter().enumerate() {
            if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                match op.op_type {
                    OpType::Fail => {
                        facts.failed.insert((m.key.0, v), i as u32);
                    }
                    OpType::Invoke if op.pair == NONE => {
                        facts.dangling.insert((m.key.0, v));
                    }
                    _ => {}
                }
                if mops[j + 1..].iter().any(|x| x.f == MopFn::Append && x.key == m.key) {
                    facts.intermediate.insert((m.key.0, v), i as u32);
                }
            }
        }
    }
    if !facts.failed.is_empty() {
        for (k, ko) in idx.orders.iter().enumerate() {
            for (p, &e) in ko.order.iter().enumerate() {
                if facts.failed.contains_key(&(k as u32, e)) {
                    facts.failed_pos.entry(k as u32).or_default().push((p as u32, e));
                }
            }
        }
    }

    // Per-op checks, in parallel chunks, merged in history order.
    const CHUNK: usize = 16 * 1024;
    let found: Vec<Vec<(&'static str, Case)>> = h
        .ops
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, ops)| {
            let mut found = Vec::new();
            for (j, op) in ops.iter().enumerate() {
                let me = (c * CHUNK + j) as u32;
                check_reads(h, idx, &facts, me, op, &mut found);
                if op.is_ok() {
                    internal_and_future_read(h, idx, me, op, &mut found);
                }
            }
            found
        })
        .collect();
    for (name, case) in found.into_iter().flatten() {
        add(out, name, case);
    }

    for (k, ko) in idx.orders.iter().enumerate() {
        let key = KeyId(k as u32);
        // Garbage reads on regular keys: every read is a prefix of the
        // version order, so checking the order once covers them all.
        if ko.regular {
            if let Some(lr) = ko.longest_read {
                for &e in &ko.order {
                    if is_garbage(idx, &facts, key, e) {
                        add(out, "garbage-read", Case::GarbageRead { mop: lr, key, value: e });
                    }
                }
            }
        }
        if let Some(pair) = &ko.incompatible {
            add(out, "incompatible-order", Case::IncompatibleOrder { key, values: pair.clone() });
        }
    }

    if !facts.failed.is_empty() {
        dirty_updates(h, &facts.failed, out);
    }
    lost_updates(h, out);
}

/// G1a and G1b for ok reads; duplicates and garbage on irregular keys.
fn check_reads(
    h: &History,
    idx: &ListAppendIndex,
    facts: &WriteFacts,
    me: OpId,
    op: &Op,
    found: &mut Vec<(&'static str, Case)>,
) {
    if h.shares_mops(op) {
        // Every read of it is `nil`: nothing to check.
        return;
    }
    let possible = is_possible(op);
    for (j, m) in h.mops_of(op).iter().enumerate() {
        let (MopFn::Read, MopValue::List { len, .. }) = (m.f, m.value) else { continue };
        if len == 0 {
            continue;
        }
        let mref = MopRef { op: me, mop: j as u32 };
        let ko = &idx.orders[m.key.0 as usize];
        let elems = h.list(m.value);
        if op.is_ok() {
            // G1a: elements appended by failed transactions.
            if !facts.failed.is_empty() {
                if ko.regular {
                    if let Some(ps) = facts.failed_pos.get(&m.key.0) {
                        for &(p, e) in ps {
                            if p < len {
                                let writer = facts.failed[&(m.key.0, e)];
                                found.push(("G1a", Case::BadRead { mop: mref, writer, element: Some(e) }));
                            }
                        }
                    }
                } else {
                    for &e in elems {
                        if let Some(&writer) = facts.failed.get(&(m.key.0, e)) {
                            found.push(("G1a", Case::BadRead { mop: mref, writer, element: Some(e) }));
                        }
                    }
                }
            }
            // G1b: the last element was an intermediate append of another txn.
            if !facts.intermediate.is_empty() {
                if let Some(&last) = elems.last() {
                    if let Some(&w) = facts.intermediate.get(&(m.key.0, last)) {
                        if h.op(w).index != op.index {
                            found.push(("G1b", Case::BadRead { mop: mref, writer: w, element: Some(last) }));
                        }
                    }
                }
            }
        }
        if possible && !ko.regular {
            // Duplicates and garbage on irregular keys, element by element.
            let mut counts: FxHashMap<i64, usize> = FxHashMap::default();
            for &e in elems {
                *counts.entry(e).or_default() += 1;
            }
            let mut dups: Vec<(i64, usize)> = counts.iter().filter(|(_, &c)| c > 1).map(|(&e, &c)| (e, c)).collect();
            if !dups.is_empty() {
                dups.sort_unstable();
                found.push(("duplicate-elements", Case::DuplicateElements { mop: mref, duplicates: dups }));
            }
            let mut reported = FxHashSet::default();
            for &e in elems {
                if is_garbage(idx, facts, m.key, e) && reported.insert(e) {
                    found.push(("garbage-read", Case::GarbageRead { mop: mref, key: m.key, value: e }));
                }
            }
        }
    }
}

/// True if no operation (ok, info, failed, or never completed) appended `e`.
fn is_garbage(idx: &ListAppendIndex, facts: &WriteFacts, k: KeyId, e: i64) -> bool {
    idx.writer(k, e).is_none() && !facts.failed.contains_key(&(k.0, e)) && !facts.dangling.contains(&(k.0, e))
}

/// What a transaction knows of a key so far: the last list it read (if any)
/// followed by its own appends since.
struct KnownState<'a> {
    key: KeyId,
    /// No read yet: only the suffix `tail` is known.
    unknown_prefix: bool,
    base: &'a [i64],
    tail: Vec<i64>,
    /// The last read returned nil.
    was_nil: bool,
}

impl KnownState<'_> {
    /// Whether a read of `got` (`got_nil`: the read returned nil) agrees
    /// with this state. As in Elle (since its commit 8a5e27b), nil is a
    /// definite state distinct from the empty list: a state that is exactly
    /// a read of nil admits only nil, and a known list (even `[]`) does not
    /// admit nil.
    fn consistent_with(&self, got: &[i64], got_nil: bool) -> bool {
        if !self.unknown_prefix && self.tail.is_empty() && (self.was_nil || got_nil) {
            return self.was_nil == got_nil;
        }
        if self.unknown_prefix {
            got.len() >= self.tail.len() && got[got.len() - self.tail.len()..] == self.tail[..]
        } else {
            got.len() == self.base.len() + self.tail.len()
                && got[..self.base.len()] == *self.base
                && got[self.base.len()..] == self.tail[..]
        }
    }

    fn expected(&self) -> Expected {
        if self.was_nil && self.tail.is_empty() {
            return Expected::Register(None);
        }
        let mut elems = self.base.to_vec();
        elems.extend_from_slice(&self.tail);
        Expected::List { unknown_prefix: self.unknown_prefix, elems }
    }
}

/// Cerone's INT axiom within one ok transaction, and future reads. A read
/// must agree with the transaction's last read of the key and its appends
/// since; a read of nil is a definite state (nothing there), so
/// `[[:r :x nil] [:r :x [2]]]` is internal with `:expected nil` (Elle since
/// its commit 8a5e27b). Only the first internal case of a transaction is
/// reported, as in Elle.
fn internal_and_future_read(
    h: &History,
    idx: &ListAppendIndex,
    me: OpId,
    op: &Op,
    found: &mut Vec<(&'static str, Case)>,
) {
    let mops = h.mops_of(op);
    if mops.len() < 2 {
        return;
    }
    let mut state: Vec<KnownState> = Vec::new();
    let (mut internal_done, mut future_done) = (false, false);
    for (j, m) in mops.iter().enumerate() {
        let slot = state.iter().position(|s| s.key == m.key);
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
                        let mop = MopRef { op: me, mop: r as u32 };
                        found.push(("future-read", Case::FutureRead { mop, element: v }));
                        future_done = true;
                    }
                }
                match slot {
                    Some(s) => state[s].tail.push(v),
                    None => state.push(KnownState {
                        key: m.key,
                        unknown_prefix: true,
                        base: &[],
                        tail: vec![v],
                        was_nil: false,
                    }),
                }
            }
            (MopFn::Read, v) => {
                let got = h.list(v);
                if let (false, Some(s)) = (internal_done, slot) {
                    if !state[s].consistent_with(got, v == MopValue::Nil) {
                        let mop = MopRef { op: me, mop: j as u32 };
                        found.push(("internal", Case::Internal { mop, expected: state[s].expected() }));
                        internal_done = true;
                    }
                }
                let fresh = KnownState {
                    key: m.key,
                    unknown_prefix: false,
                    base: got,
                    tail: Vec::new(),
                    was_nil: v == MopValue::Nil,
                };
                match slot {
                    Some(s) => state[s] = fresh,
                    None => state.push(fresh),
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
        if !ko.order.iter().any(|&e| failed.contains_key(&(k as u32, e))) {
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
                        Case::DirtyUpdate { key: KeyId(k as u32), values: vs.clone(), txns: [t1.unwrap_or(t2), t2] },
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

/// A read value borrowed from the history, for grouping without copies.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Observed<'a> {
    Nil,
    Int(i64),
    List(&'a [i64]),
}

/// Lost update: two or more ok txns read the same version of a key (their
/// first read of it) and then wrote it (appended or set). Shared by both
/// workloads, as in Elle.
pub(crate) fn lost_updates(h: &History, out: &mut Anomalies) {
    let mut groups: FxHashMap<(u32, Observed), Vec<OpId>> = FxHashMap::default();
    let mut first_seen: Vec<(u32, Observed)> = Vec::new();
    let mut reads: Vec<(KeyId, usize)> = Vec::new();
    let mut written: Vec<KeyId> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !op.is_ok() {
            continue;
        }
        let mops = h.mops_of(op);
        reads.clear();
        written.clear();
        for (j, m) in mops.iter().enumerate() {
            match m.f {
                MopFn::Read => {
                    if !reads.iter().any(|r| r.0 == m.key) {
                        reads.push((m.key, j));
                    }
                }
                MopFn::Insert | MopFn::Delete | MopFn::PredRead | MopFn::PredEntry => {}
                MopFn::Append | MopFn::Write => {
                    if written.contains(&m.key) {
                        continue;
                    }
                    // A write before any read of the key says nothing here.
                    let Some(&(_, rj)) = reads.iter().find(|r| r.0 == m.key) else { continue };
                    written.push(m.key);
                    let observed = match mops[rj].value {
                        MopValue::Nil => Observed::Nil,
                        MopValue::Int(x) => Observed::Int(x),
                        v @ MopValue::List { .. } => Observed::List(h.list(v)),
                        MopValue::Entries(_) => continue,
                    };
                    let group = groups.entry((m.key.0, observed)).or_default();
                    if group.is_empty() {
                        first_seen.push((m.key.0, observed));
                    }
                    group.push(i as u32);
                }
            }
        }
    }
    for gk in first_seen {
        if let Some(txns) = groups.remove(&gk) {
            if txns.len() >= 2 {
                let value = match gk.1 {
                    Observed::Nil => ReadValue::Nil,
                    Observed::Int(x) => ReadValue::Int(x),
                    Observed::List(xs) => ReadValue::List(xs.to_vec()),
                };
                add(out, "lost-update", Case::LostUpdate { key: KeyId(gk.0), value, txns });
            }
        }
    }
}
