//! The set-full checker (`jepsen.checker/set-full`): every element's
//! timeline over every read.
//!
//! Clients `:add` single elements and `:read` the whole set, many times.
//! For each element, from its add's invocation on (a later add of the same
//! element starts its timeline again, as in Jepsen):
//!
//! - *known*: the add's `:ok` completion, or the first read that saw it,
//!   whichever comes first;
//! - *last present*: the invocation of the latest-invoked read that saw it;
//! - *last absent*: the invocation of the latest-invoked read, completing
//!   after the add was invoked, that did not see it.
//!
//! An element is *stable* when it was seen and the last read missing it
//! began before the last read seeing it; *lost* when it was known, and the
//! last read missing it began after both the last read seeing it and the
//! moment it became known; *never read* otherwise. Its stable latency is
//! the time from known to just after the last absent read's invocation
//! (milliseconds, at least 0); an element with a positive stable latency is
//! *stale* (a read that began after the add was acknowledged missed it).
//!
//! Valid: `false` with any lost element (or, with `--linearizable`, any
//! stale one), `:unknown` when no element is stable, else `true`; and
//! `false` whenever a read holds an element twice (`:duplicated`).
//!
//! Deviations, both towards soundness: elements read but never added
//! (before that read completed) are `:unexpected` and make the history
//! invalid (Jepsen ignores them); a duplicate is an element appearing more
//! than once in one read (Jepsen's `(< v 1)` test never matches, so it
//! reports none). Where ops carry no `:time`, latencies are `nil` and an
//! element is stale when a read that began after it was known missed it.
//!
//! # Complexity
//!
//! Jepsen updates every element at every read: O(elements × reads). Here
//! one forward pass records, per element, its known op and last present
//! read (work proportional to the reads' sizes); then the last absent read
//! of an element is found by walking the reads from the latest-invoked
//! down while they contain it, each step but the last charged to an
//! (element, read) membership, so the walk totals the reads' sizes too;
//! reads invoked before the add and completing after it (at most one per
//! process) are recorded when the add is invoked. O(n log n) overall.

use super::elem::Elem;
use super::result::{count, kw, map, CheckResult, Node, Validity};
use super::{JepsenError, OpType, Ops};
use crate::history::Value;
use rustc_hash::FxHashMap;

const EXPECTS: &str = ":add ops of single elements and :read ops whose :ok value is a collection of elements";
const NONE: u32 = u32::MAX;

/// set-full's options.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetFullOptions {
    /// Stale reads make the history invalid (Jepsen's `:linearizable?`).
    pub linearizable: bool,
}

/// One element's state.
struct Element {
    /// Position of the (latest) add invocation.
    add: u32,
    /// Position of the known op.
    known: u32,
    /// Position of the last present read's invocation.
    last_present: u32,
    /// Offset range into the open-reads arena at the add's invocation.
    open: (u32, u32),
}

/// An `:ok` read.
struct Read {
    inv: u32,
    comp: u32,
    /// Sorted element ids.
    ids: Vec<u32>,
    /// The same as a bitset, where the memory budget allows.
    bits: Vec<u64>,
}

/// Most bytes of per-read bitsets (membership tests in O(1) rather than
/// by binary search).
const BITSET_BUDGET: usize = 256 << 20;

/// Element ids: small non-negative integers (the usual elements) through
/// a dense table, other integers through their own map, other values
/// through a map of elements.
#[derive(Default)]
struct Ids<'a> {
    dense: Vec<u32>,
    ints: FxHashMap<i64, u32>,
    others: FxHashMap<Elem<'a>, u32>,
}

/// Integers below this are looked up in the dense table (at most 16 MB).
const DENSE_LIMIT: i64 = 1 << 22;

impl<'a> Ids<'a> {
    #[inline]
    fn get(&self, v: &Elem) -> Option<u32> {
        match v {
            Elem::Int(i) if (0..DENSE_LIMIT).contains(i) => {
                self.dense.get(*i as usize).copied().filter(|&id| id != NONE)
            }
            Elem::Int(i) => self.ints.get(i).copied(),
            v => self.others.get(v).copied(),
        }
    }

    fn insert(&mut self, v: Elem<'a>, id: u32) {
        match v {
            Elem::Int(i) if (0..DENSE_LIMIT).contains(&i) => {
                let i = i as usize;
                if i >= self.dense.len() {
                    self.dense.resize((i + 1).next_power_of_two(), NONE);
                }
                self.dense[i] = id;
            }
            Elem::Int(i) => {
                self.ints.insert(i, id);
            }
            v => {
                self.others.insert(v, id);
            }
        }
    }
}

/// Checks a set-full history.
pub fn check(ops: &Ops, opts: &SetFullOptions) -> Result<CheckResult, JepsenError> {
    let mut ids = Ids::default();
    let mut values: Vec<Elem> = Vec::new();
    let mut els: Vec<Element> = Vec::new();
    let mut reads: Vec<Read> = Vec::new();
    let mut open_reads: FxHashMap<&Value, u32> = FxHashMap::default();
    let mut open_arena: Vec<u32> = Vec::new();
    let mut dups: FxHashMap<Elem, usize> = FxHashMap::default();
    let mut unexpected: FxHashMap<Elem, ()> = FxHashMap::default();
    let index = |p: u32| if p == NONE { -1 } else { ops.ops[p as usize].index };
    for i in ops.clients() {
        let o = &ops.ops[i];
        let pos = i as u32;
        match (&*o.f, o.op_type) {
            ("add", OpType::Invoke) => {
                let start = open_arena.len() as u32;
                open_arena.extend(open_reads.values().copied());
                let open = (start, open_arena.len() as u32);
                let fresh = Element { add: pos, known: NONE, last_present: NONE, open };
                let x = ops.element(o);
                match ids.get(&x) {
                    Some(id) => els[id as usize] = fresh,
                    None => {
                        ids.insert(x.clone(), els.len() as u32);
                        values.push(x);
                        els.push(fresh);
                    }
                }
            }
            ("add", OpType::Ok) => {
                if let Some(id) = ids.get(&ops.element(o)) {
                    let e = &mut els[id as usize];
                    if e.known == NONE {
                        e.known = pos;
                    }
                }
            }
            ("add", _) => {}
            ("read", OpType::Invoke) => {
                if ops.completion(i).is_some_and(|c| c.op_type == OpType::Ok) {
                    open_reads.insert(&o.process, pos);
                }
            }
            ("read", OpType::Ok) => {
                let Some(xs) = ops.members(o) else { return Err(ops.model_error(i, "set-full", EXPECTS)) };
                let inv = match ops.invocation(i) {
                    Some(j) => {
                        open_reads.remove(&ops.ops[j].process);
                        j as u32
                    }
                    None => pos,
                };
                let mut rid = Vec::with_capacity(xs.len());
                for x in xs.iter() {
                    match ids.get(&x) {
                        Some(id) => {
                            rid.push(id);
                            let e = &mut els[id as usize];
                            if e.known == NONE {
                                e.known = pos;
                            }
                            if e.last_present == NONE || index(e.last_present) < index(inv) {
                                e.last_present = inv;
                            }
                        }
                        None => {
                            unexpected.insert(x, ());
                        }
                    }
                }
                rid.sort_unstable();
                for w in rid.windows(2) {
                    if w[0] == w[1] {
                        let d = dups.entry(values[w[0] as usize].clone()).or_insert(1);
                        let n = rid.iter().filter(|&&x| x == w[0]).count();
                        *d = (*d).max(n);
                    }
                }
                rid.dedup();
                reads.push(Read { inv, comp: pos, ids: rid, bits: Vec::new() });
            }
            ("read", _) => {}
            _ => return Err(ops.model_error(i, "set-full", EXPECTS)),
        }
    }
    // Reads by invocation, latest first.
    let mut order: Vec<u32> = (0..reads.len() as u32).collect();
    order.sort_unstable_by_key(|&r| std::cmp::Reverse(index(reads[r as usize].inv)));
    let inv_read: FxHashMap<u32, u32> = reads.iter().enumerate().map(|(r, x)| (x.inv, r as u32)).collect();
    let bitset_bytes: usize = reads.iter().map(|r| r.ids.last().map_or(0, |&m| m as usize / 8 + 8)).sum();
    if bitset_bytes <= BITSET_BUDGET {
        for r in &mut reads {
            let words = r.ids.last().map_or(0, |&m| m as usize / 64 + 1);
            let mut bits = vec![0u64; words];
            for &id in &r.ids {
                bits[id as usize / 64] |= 1 << (id % 64);
            }
            r.bits = bits;
        }
    }
    let with_bits = bitset_bytes <= BITSET_BUDGET;
    let contains = |r: &Read, id: u32| {
        if with_bits {
            r.bits.get(id as usize / 64).is_some_and(|w| w >> (id % 64) & 1 == 1)
        } else {
            r.ids.binary_search(&id).is_ok()
        }
    };
    let time = |p: u32| if p == NONE { None } else { ops.ops[p as usize].time };

    struct Res {
        id: u32,
        outcome: &'static str,
        stable_latency: Option<i64>,
        lost_latency: Option<i64>,
        stale: bool,
        known: u32,
        last_absent: u32,
    }
    let mut results: Vec<Res> = Vec::with_capacity(els.len());
    for id in 0..els.len() as u32 {
        let e = &els[id as usize];
        let add_index = index(e.add);
        let mut last_absent = NONE;
        for &r in &order {
            let rd = &reads[r as usize];
            if index(rd.inv) <= add_index {
                break;
            }
            if !contains(rd, id) {
                last_absent = rd.inv;
                break;
            }
        }
        if last_absent == NONE {
            // Reads open when the add was invoked.
            for &inv in &open_arena[e.open.0 as usize..e.open.1 as usize] {
                if let Some(&r) = inv_read.get(&inv) {
                    let rd = &reads[r as usize];
                    if rd.comp > e.add && !contains(rd, id) && index(inv) > index(last_absent) {
                        last_absent = inv;
                    }
                }
            }
        }
        let stable = e.last_present != NONE && index(last_absent) < index(e.last_present);
        let lost = e.known != NONE
            && last_absent != NONE
            && index(e.last_present) < index(last_absent)
            && index(e.known) < index(last_absent);
        let ms = |t: i64| t / 1_000_000;
        let stable_latency = stable.then(|| {
            let st = if last_absent == NONE { Some(0) } else { time(last_absent).map(|t| t + 1) };
            match (st, time(e.known)) {
                (Some(s), Some(k)) => Some(ms((s - k).max(0))),
                _ => None,
            }
        });
        let lost_latency = lost.then(|| {
            let lt = if e.last_present == NONE { Some(0) } else { time(e.last_present).map(|t| t + 1) };
            match (lt, time(e.known)) {
                (Some(l), Some(k)) => Some(ms((l - k).max(0))),
                _ => None,
            }
        });
        let stale = match stable_latency {
            Some(Some(l)) => l > 0,
            Some(None) => last_absent != NONE && index(e.known) < index(last_absent),
            None => false,
        };
        results.push(Res {
            id,
            outcome: if stable {
                "stable"
            } else if lost {
                "lost"
            } else {
                "never-read"
            },
            stable_latency: stable_latency.flatten(),
            lost_latency: lost_latency.flatten(),
            stale,
            known: e.known,
            last_absent,
        });
    }
    let val = |id: u32| crate::reports::tree::value(&values[id as usize].to_value());
    // Element order in the lists: by value, as Jepsen sorts its elements.
    let by_value = |mut v: Vec<usize>| {
        v.sort_by(|&a, &b| values[results[a].id as usize].cmp(&values[results[b].id as usize]));
        v.into_iter().map(|i| &results[i]).collect::<Vec<&Res>>()
    };
    let of = |o: &str| by_value((0..results.len()).filter(|&i| results[i].outcome == o).collect());
    let (lost, never) = (of("lost"), of("never-read"));
    // Only counted: not sorted.
    let stable = results.iter().filter(|r| r.outcome == "stable").count();
    let stale: Vec<&Res> = by_value((0..results.len()).filter(|&i| results[i].stale).collect());
    let mut worst: Vec<&Res> = stale.clone();
    worst.sort_by_key(|r| std::cmp::Reverse(r.stable_latency.unwrap_or(0)));
    worst.truncate(8);
    let opt = |x: Option<i64>| x.map(Node::Int).unwrap_or(Node::Nil);
    let op_node = |p: u32| if p == NONE { Node::Nil } else { ops.node(p as usize) };
    let element_map = |r: &Res| {
        map(vec![
            ("element", val(r.id)),
            ("outcome", kw(r.outcome)),
            ("stable-latency", opt(r.stable_latency)),
            ("lost-latency", opt(r.lost_latency)),
            ("known", op_node(r.known)),
            ("last-absent", op_node(r.last_absent)),
        ])
    };
    let list = |rs: &[&Res]| Node::List(rs.iter().map(|r| val(r.id)).collect());
    let mut valid = if !lost.is_empty() {
        Validity::Invalid
    } else if stable == 0 {
        Validity::Unknown
    } else if opts.linearizable && !stale.is_empty() {
        Validity::Invalid
    } else {
        Validity::Valid
    };
    if !dups.is_empty() || !unexpected.is_empty() {
        valid = Validity::Invalid;
    }
    let mut entries = vec![
        (kw("attempt-count"), count(results.len())),
        (kw("stable-count"), count(stable)),
        (kw("lost-count"), count(lost.len())),
        (kw("lost"), list(&lost)),
        (kw("never-read-count"), count(never.len())),
        (kw("never-read"), list(&never)),
        (kw("stale-count"), count(stale.len())),
        (kw("stale"), list(&stale)),
        (kw("worst-stale"), Node::Vector(worst.iter().map(|r| element_map(r)).collect())),
    ];
    let points = [0.0, 0.5, 0.95, 0.99, 1.0];
    let dist = |mut xs: Vec<i64>| {
        xs.sort_unstable();
        let n = xs.len();
        Node::Map(
            points
                .iter()
                .map(|&p| {
                    let i = ((n as f64 * p).floor() as usize).min(n - 1);
                    let k = if p == 0.0 || p == 1.0 { Node::Int(p as i64) } else { Node::Float(p) };
                    (k, Node::Int(xs[i]))
                })
                .collect(),
        )
    };
    let sl: Vec<i64> = results.iter().filter_map(|r| r.stable_latency).collect();
    let ll: Vec<i64> = results.iter().filter_map(|r| r.lost_latency).collect();
    if !sl.is_empty() {
        entries.push((kw("stable-latencies"), dist(sl)));
    }
    if !ll.is_empty() {
        entries.push((kw("lost-latencies"), dist(ll)));
    }
    let mut dup: Vec<(Elem, usize)> = dups.into_iter().collect();
    dup.sort();
    entries.push((kw("duplicated-count"), count(dup.len())));
    entries.push((
        kw("duplicated"),
        Node::Map(dup.into_iter().map(|(v, n)| (crate::reports::tree::value(&v.to_value()), count(n))).collect()),
    ));
    let mut unexp: Vec<Elem> = unexpected.into_keys().collect();
    unexp.sort();
    entries.push((kw("unexpected-count"), count(unexp.len())));
    let unexp = unexp.iter().map(|v| crate::reports::tree::value(&v.to_value())).collect();
    entries.push((kw("unexpected"), Node::List(unexp)));
    Ok(CheckResult::new(valid, entries))
}
