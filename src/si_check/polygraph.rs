//! The polygraph of a register history: the dependencies every explanation
//! of the history must contain (the *known* graph), and one binary
//! *constraint* per pair of write chains of a key whose order is unknown.
//!
//! Known edges (each justified by the history alone):
//! * **wr**: a read observed a unique value, so its writer precedes it;
//! * **session / realtime**: the process order, or the realtime order, when
//!   the level includes it;
//! * **ww inside a chain**: a transaction that read version `v` of a key and
//!   wrote the key installs the version right after `v` (Cobra's
//!   *combining writes*; anything between would make it overwrite a version it
//!   did not read, a G-single or worse cycle under both SI and
//!   serializability), so read-modify-writes link writers into chains;
//! * **rw inside a chain** (readers of one chain element precede the next),
//!   and **rw from initial-state reads** to the head of every chain.
//!
//! A constraint says "chain `a` entirely precedes chain `b` on key `k`, or the
//! other way round": side `a<b` holds the edge `tail(a) →ww head(b)` and
//! `r →rw head(b)` for every reader `r` of `tail(a)`'s version (Cobra's
//! coalesced constraint); side `b<a` mirrors it. Because acyclicity is
//! monotone, only the chosen side's edges need to be present.
//!
//! **Reads with several candidate writers** (repeated values, see
//! [`super::txns`]) give no known edge. Each is a [`ChoiceInfo`]: if it read
//! from candidate `w`, then `w →wr r`, `r →rw next(w)` when `w` is inside a
//! chain, and, when `w` is the tail of chain `x`, `r →rw head(y)` for every
//! chain `y` ordered after `x`, which is conditional on the constraint
//! between `x` and `y` (see `super::solve_components`). Such reads never
//! link chains. The pair filter treats every candidate reader of a tail as
//! a reader of it, so it only leaves out pairs whose every possible edge is
//! implied.
//!
//! Acyclicity is checked on the *begin/commit graph* (Viper): transaction `t`
//! is two nodes `s(t) → c(t)`. Under serializability every dependency `u → v`
//! is `c(u) → s(v)`, so cycles are exactly the dependency cycles. Under
//! snapshot isolation, ww/wr/session/realtime edges are `c(u) → s(v)` but rw
//! edges are `s(u) → c(v)`: a cycle can then never take two rw edges in a
//! row, so the graph is acyclic exactly when `(SO ∪ WR ∪ WW) ; RW?` is
//! (Cerone and Gotsman's characterisation used by PolySI), without building
//! composed edges.

use super::prune::KnownReach;
use super::reach::Reach;
use super::txns::{Source, TxnId, Txns};
use super::{Level, OrderKind, Semantics};
use crate::history::{History, KeyId, NONE};
use crate::infer::order;
use rayon::prelude::*;

/// The kind of a dependency between two transactions.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Dep {
    /// `to` overwrote `from`'s version of the key.
    Ww,
    /// `to` read `from`'s version of the key.
    Wr,
    /// `from` read a version of the key that `to` overwrote.
    Rw,
    /// Same process, `from` first.
    Session,
    /// `from` completed before `to` began.
    Realtime,
}

/// A dependency edge between transactions.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct DepEdge {
    /// Source transaction.
    pub from: TxnId,
    /// Target transaction.
    pub to: TxnId,
    /// Kind.
    pub dep: Dep,
    /// The key, for data dependencies ([`NONE`] otherwise).
    pub key: u32,
}

impl DepEdge {
    fn data(from: TxnId, to: TxnId, dep: Dep, key: KeyId) -> DepEdge {
        DepEdge { from, to, dep, key: key.0 }
    }
}

/// A maximal sequence of writers of one key linked by read-modify-writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Chain {
    /// The key.
    pub key: KeyId,
    /// Range in [`Polygraph::chain_txns`].
    pub start: u32,
    /// Number of writers (at least one).
    pub len: u32,
}

/// An unknown order between two chains of the same key. The constraint's
/// variable is true when chain `a` precedes chain `b`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Constraint {
    /// First chain.
    pub a: u32,
    /// Second chain.
    pub b: u32,
}

/// A candidate writer of a [`ChoiceInfo`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Cand {
    /// The writer.
    pub writer: TxnId,
    /// The next writer in its chain, if it is not the tail.
    pub next: Option<TxnId>,
    /// Its chain when it is the tail, else `u32::MAX`.
    pub tail_of: u32,
}

/// A read with several candidate writers.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ChoiceInfo {
    /// The reader.
    pub reader: TxnId,
    /// The key.
    pub key: KeyId,
    /// The candidates (at least two).
    pub cands: Vec<Cand>,
}

/// The known graph plus the constraints.
#[derive(Clone, Debug)]
pub struct Polygraph {
    /// Number of transactions.
    pub n: usize,
    /// Which cycles are forbidden.
    pub semantics: Semantics,
    /// Dependencies every explanation contains.
    pub known: Vec<DepEdge>,
    /// Write chains.
    pub chains: Vec<Chain>,
    /// Their writers, chain by chain, in version order.
    pub chain_txns: Vec<TxnId>,
    /// Unknown orders.
    pub constraints: Vec<Constraint>,
    /// `(writer, key, reader)` for every external read of a written version,
    /// sorted, for looking up the readers of a version.
    readers: Vec<(TxnId, u32, TxnId)>,
    /// For each chain, the range of `readers` that read its tail's version.
    tail_readers: Vec<(u32, u32)>,
    /// Reads with several candidate writers, as in [`Txns::choices`].
    pub choices: Vec<ChoiceInfo>,
    /// Constraints by chain, for chains that are some candidate's tail.
    pub tail_constraints: rustc_hash::FxHashMap<u32, Vec<u32>>,
}

impl Polygraph {
    /// The writers of a chain, in order.
    pub fn chain(&self, c: u32) -> &[TxnId] {
        let ch = &self.chains[c as usize];
        &self.chain_txns[ch.start as usize..(ch.start + ch.len) as usize]
    }

    /// The edges that hold when constraint `c` is decided `a_first`
    /// (chain `a` before chain `b`) or not.
    pub fn side(&self, c: &Constraint, a_first: bool, out: &mut Vec<DepEdge>) {
        out.clear();
        let (x, y) = if a_first { (c.a, c.b) } else { (c.b, c.a) };
        let key = self.chains[x as usize].key;
        let tail = *self.chain(x).last().unwrap_or(&0);
        let head = self.chain(y)[0];
        out.push(DepEdge::data(tail, head, Dep::Ww, key));
        out.extend(self.tail_readers(x).filter(|&r| r != head).map(|r| DepEdge::data(r, head, Dep::Rw, key)));
    }

    /// The edges that hold when choice `j` read from its candidate `i`,
    /// whatever the write orders: `w →wr r`, and `r →rw next(w)` inside a
    /// chain.
    pub fn cand_edges(&self, j: u32, i: usize, out: &mut Vec<DepEdge>) {
        let ch = &self.choices[j as usize];
        let c = ch.cands[i];
        out.push(DepEdge::data(c.writer, ch.reader, Dep::Wr, ch.key));
        if let Some(n) = c.next.filter(|&n| n != ch.reader) {
            out.push(DepEdge::data(ch.reader, n, Dep::Rw, ch.key));
        }
    }

    /// The edge that holds when choice `j` read from candidate `i` and
    /// constraint `c` is decided `a_first`: `r →rw head(y)` when the
    /// candidate is the tail of the chain ordered first, `y` the other.
    pub fn cond_edge(&self, j: u32, i: usize, c: u32, a_first: bool) -> Option<DepEdge> {
        let ch = &self.choices[j as usize];
        let con = &self.constraints[c as usize];
        let (x, y) = if a_first { (con.a, con.b) } else { (con.b, con.a) };
        let head = self.chain(y)[0];
        (ch.cands[i].tail_of == x && head != ch.reader).then(|| DepEdge::data(ch.reader, head, Dep::Rw, ch.key))
    }

    /// The transactions that read the version of chain `c`'s tail.
    fn tail_readers(&self, c: u32) -> impl Iterator<Item = TxnId> + '_ {
        let (lo, hi) = self.tail_readers[c as usize];
        self.readers[lo as usize..hi as usize].iter().map(|&(_, _, r)| r)
    }

    /// The begin/commit-graph edge of a dependency (see the module docs).
    #[inline]
    pub fn bc(&self, e: &DepEdge) -> (u32, u32) {
        bc_edge(self.semantics, e)
    }
}

/// Begin node of a transaction in the begin/commit graph.
#[inline]
pub fn begin(t: TxnId) -> u32 {
    2 * t
}

/// Commit node of a transaction.
#[inline]
pub fn commit(t: TxnId) -> u32 {
    2 * t + 1
}

/// The begin/commit-graph edge of a dependency under `semantics`.
#[inline]
pub fn bc_edge(semantics: Semantics, e: &DepEdge) -> (u32, u32) {
    if e.dep == Dep::Rw && semantics == Semantics::SnapshotIsolation {
        (begin(e.from), commit(e.to))
    } else {
        (commit(e.from), begin(e.to))
    }
}

/// The polygraph would hold more write-order constraints than allowed: one
/// per pair of write chains of a key that the known graph leaves open, so a
/// key written by many unrelated transactions makes the count quadratic.
/// Counting stops at the first key that crosses the limit, so both counts
/// are lower bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyConstraints {
    /// Constraints the history needs, at least.
    pub constraints: u64,
    /// The key needing the most.
    pub key: KeyId,
    /// How many that key needs, at least.
    pub key_constraints: u64,
}

/// Appends the edges of `order` between `txns`: session order (each
/// process's transactions in history order) unless `order` is none, and
/// realtime order (Elle's reduction: each completion linked to the frontier
/// of operations before the invocation) when it is realtime.
pub fn order_edges(h: &History, txns: &Txns, order: OrderKind, out: &mut Vec<DepEdge>) {
    if order != OrderKind::None {
        let mut last: rustc_hash::FxHashMap<i64, TxnId> = rustc_hash::FxHashMap::default();
        for t in 0..txns.len() as TxnId {
            if let Some(p) = last.insert(txns.process[t as usize], t) {
                out.push(DepEdge { from: p, to: t, dep: Dep::Session, key: NONE });
            }
        }
    }
    if order == OrderKind::Realtime {
        let mut txn_of_op = vec![u32::MAX; h.ops.len()];
        for (t, &o) in txns.op.iter().enumerate() {
            txn_of_op[o as usize] = t as u32;
        }
        for e in order::realtime_edges(h) {
            let (a, b) = (txn_of_op[e.from as usize], txn_of_op[e.to as usize]);
            if a != u32::MAX && b != u32::MAX && a != b {
                out.push(DepEdge { from: a, to: b, dep: Dep::Realtime, key: NONE });
            }
        }
    }
}

/// The realtime span of a chain: when its head was invoked, and the latest
/// completion among its tail and the tail's readers. If chain `a`'s span
/// ends before chain `b`'s begins, realtime order (part of the known graph
/// at realtime levels, as Elle's transitive reduction) already has a path
/// `tail(a) ⇝ head(b)` and `r ⇝ head(b)` for every reader `r` of `tail(a)`:
/// every edge of the side "a first" is implied and the other side would
/// close a cycle, so the pair needs no constraint. Only chains with
/// overlapping spans are paired, which keeps keys written by thousands of
/// transactions linear in practice instead of quadratic.
fn realtime_span(
    spans: &[(u32, u32)],
    ch: &Chain,
    chain_txns: &[TxnId],
    readers: &[(TxnId, u32, TxnId)],
) -> (u32, u32) {
    let elems = &chain_txns[ch.start as usize..(ch.start + ch.len) as usize];
    let (head, tail) = (elems[0], elems[elems.len() - 1]);
    let lo = readers.partition_point(|&(a, k, _)| (a, k) < (tail, ch.key.0));
    let end = readers[lo..]
        .iter()
        .take_while(|&&(a, k, _)| a == tail && k == ch.key.0)
        .map(|&(_, _, r)| spans[r as usize].1)
        .fold(spans[tail as usize].1, u32::max);
    (spans[head as usize].0, end)
}

/// What [`build`] needs to leave out the constraints whose outcome the known
/// graph already settles.
pub struct PairFilter<'a> {
    /// An estimate of when each transaction ran (see
    /// [`super::prune::time_estimate`]).
    pub priority: &'a [u32],
    /// Memory budget for the reachability rows, in bytes.
    pub reach_bytes: usize,
    /// Where reachability is computed.
    pub engine: &'a mut crate::accel::Engine,
}

/// A built polygraph, with the known graph's reachability when a filter
/// computed it (pruning's first round reuses it).
pub struct Built {
    /// The polygraph.
    pub graph: Polygraph,
    /// Reachability over its known edges.
    pub known_reach: Option<KnownReach>,
    /// Extra write orders ([`super::KnownOrders`]) added to the known edges.
    pub known_orders: usize,
    /// How many of those order two different write chains.
    pub known_orders_new: usize,
}

/// Builds the polygraph of `txns` for `level`, unless it needs more than
/// `max_constraints` constraints.
///
/// With a `filter`, a pair of chains gets no constraint when the known graph
/// already has a path for every edge of one of its sides: that side can
/// always be chosen without changing reachability, so the constraint can
/// never decide anything (the realtime-span rule, `realtime_span`, is the
/// special case that needs no reachability). Only the pairs left count
/// against `max_constraints`, so a hot key whose writers are mostly ordered
/// by sessions and reads no longer needs its quadratic number of pairs.
pub fn build(
    h: &History,
    txns: &Txns,
    level: Level,
    max_constraints: usize,
    filter: Option<PairFilter<'_>>,
) -> Result<Built, TooManyConstraints> {
    build_with(h, txns, level, max_constraints, filter, None)
}

/// Like [`build`], with `extra` write orders added to the known edges when
/// they hold at `level` (see [`super::KnownOrders`]). An order is added as
/// a ww edge only when both writers are transactions here that write the
/// key and the reader is one that reads the key from the later writer;
/// anything else is skipped.
pub fn build_with(
    h: &History,
    txns: &Txns,
    level: Level,
    max_constraints: usize,
    filter: Option<PairFilter<'_>>,
    extra: Option<&super::KnownOrders>,
) -> Result<Built, TooManyConstraints> {
    let mut pairs: u64 = 0;
    let mut widest: (u32, u64) = (0, 0);
    // With realtime order, each transaction's (invocation, completion)
    // positions in the history; `:info` ones never complete.
    let timed = level.order == OrderKind::Realtime && h.ops.iter().any(|o| o.is_invoke());
    let spans: Option<Vec<(u32, u32)>> = timed.then(|| {
        txns.op
            .iter()
            .map(|&o| {
                let op = h.op(o);
                let inv = if op.pair == NONE { 0 } else { op.pair };
                let done = if op.op_type == crate::history::OpType::Ok { o } else { u32::MAX };
                (inv, done)
            })
            .collect()
    });
    let n = txns.len();
    let mut known: Vec<DepEdge> = Vec::new();
    // Readers of each written version.
    let mut readers: Vec<(TxnId, u32, TxnId)> = Vec::new();
    let mut init_readers: Vec<(u32, TxnId)> = Vec::new();
    for t in 0..n as TxnId {
        for r in txns.reads_of(t) {
            match r.from {
                Source::Txn(w, _) => {
                    readers.push((w, r.key.0, t));
                    known.push(DepEdge::data(w, t, Dep::Wr, r.key));
                }
                Source::Init => init_readers.push((r.key.0, t)),
                Source::Choice(_) => {}
            }
        }
    }
    readers.sort_unstable();
    init_readers.sort_unstable();
    order_edges(h, txns, level.order, &mut known);
    // Writers per key, and read-modify-write successors.
    let mut writes: Vec<(u32, TxnId)> = Vec::with_capacity(txns.writes.len());
    for t in 0..n as TxnId {
        writes.extend(txns.writes_of(t).iter().map(|w| (w.key.0, t)));
    }
    writes.sort_unstable();
    // rmw[(key, writer)] = successors that read writer's version and wrote key.
    let mut rmw: Vec<(u32, TxnId, TxnId)> = Vec::new();
    for &(w, k, r) in &readers {
        if txns.write_of(r, KeyId(k)).is_some() {
            rmw.push((k, w, r));
        }
    }
    rmw.sort_unstable();
    let mut chains = Vec::new();
    let mut chain_txns = Vec::new();
    let mut key_chains: Vec<(u32, u32, u32)> = Vec::new();
    let mut i = 0;
    while i < writes.len() {
        let key = writes[i].0;
        let mut j = i;
        while j < writes.len() && writes[j].0 == key {
            j += 1;
        }
        let ws: Vec<TxnId> = writes[i..j].iter().map(|&(_, t)| t).collect();
        i = j;
        let lo = rmw.partition_point(|&(k, _, _)| k < key);
        let hi = rmw.partition_point(|&(k, _, _)| k <= key);
        let rm = &rmw[lo..hi];
        // A writer's unique RMW successor continues its chain; two or more
        // (a lost update) continue none, but each still follows it.
        let mut next: rustc_hash::FxHashMap<TxnId, TxnId> = rustc_hash::FxHashMap::default();
        let mut has_pred: rustc_hash::FxHashSet<TxnId> = rustc_hash::FxHashSet::default();
        let mut s = 0;
        while s < rm.len() {
            let w = rm[s].1;
            let mut e = s;
            while e < rm.len() && rm[e].1 == w {
                known.push(DepEdge::data(w, rm[e].2, Dep::Ww, KeyId(key)));
                e += 1;
            }
            if e - s == 1 {
                next.insert(w, rm[s].2);
                has_pred.insert(rm[s].2);
            }
            s = e;
        }
        let first_chain = chains.len() as u32;
        let mut in_chain: rustc_hash::FxHashSet<TxnId> = rustc_hash::FxHashSet::default();
        for &w in &ws {
            if has_pred.contains(&w) || in_chain.contains(&w) {
                continue;
            }
            let start = chain_txns.len() as u32;
            let mut cur = w;
            loop {
                if !in_chain.insert(cur) {
                    break; // a cycle of read-modify-writes; the wr edges close it
                }
                chain_txns.push(cur);
                match next.get(&cur) {
                    Some(&nx) => cur = nx,
                    None => break,
                }
            }
            chains.push(Chain { key: KeyId(key), start, len: chain_txns.len() as u32 - start });
        }
        // Writers on a cycle of read-modify-writes: each its own chain.
        for &w in &ws {
            if !in_chain.contains(&w) {
                in_chain.insert(w);
                chain_txns.push(w);
                chains.push(Chain { key: KeyId(key), start: chain_txns.len() as u32 - 1, len: 1 });
            }
        }
        let last_chain = chains.len() as u32;
        // rw inside chains, and from initial-state reads to every head.
        for c in first_chain..last_chain {
            let ch = chains[c as usize];
            let elems = &chain_txns[ch.start as usize..(ch.start + ch.len) as usize];
            for pair in elems.windows(2) {
                let (x, y) = (pair[0], pair[1]);
                let rlo = readers.partition_point(|&(a, k, _)| (a, k) < (x, key));
                for &(_, _, r) in readers[rlo..].iter().take_while(|&&(a, k, _)| a == x && k == key) {
                    if r != y {
                        known.push(DepEdge::data(r, y, Dep::Rw, KeyId(key)));
                    }
                }
            }
            let head = elems[0];
            let ilo = init_readers.partition_point(|&(k, _)| k < key);
            for &(_, r) in init_readers[ilo..].iter().take_while(|&&(k, _)| k == key) {
                if r != head {
                    known.push(DepEdge::data(r, head, Dep::Rw, KeyId(key)));
                }
            }
        }
        key_chains.push((key, first_chain, last_chain));
    }
    // Each chain's tail's readers, as a range of `readers`, looked up once.
    let tail_readers: Vec<(u32, u32)> = chains
        .iter()
        .map(|ch| {
            let (tail, key) = (chain_txns[(ch.start + ch.len - 1) as usize], ch.key.0);
            let lo = readers.partition_point(|&(a, k, _)| (a, k) < (tail, key));
            let hi = lo + readers[lo..].partition_point(|&(a, k, _)| (a, k) == (tail, key));
            (lo as u32, hi as u32)
        })
        .collect();
    // Candidate writers' places in their chains.
    let mut place: rustc_hash::FxHashMap<(u32, TxnId), (u32, u32)> = rustc_hash::FxHashMap::default();
    if !txns.choices.is_empty() {
        let wanted: rustc_hash::FxHashSet<(u32, TxnId)> =
            txns.choices.iter().flat_map(|c| c.cands.iter().map(move |&w| (c.key.0, w))).collect();
        for (ci, ch) in chains.iter().enumerate() {
            for (i, &w) in chain_txns[ch.start as usize..(ch.start + ch.len) as usize].iter().enumerate() {
                if wanted.contains(&(ch.key.0, w)) {
                    place.insert((ch.key.0, w), (ci as u32, i as u32));
                }
            }
        }
    }
    let mut choices = Vec::with_capacity(txns.choices.len());
    // (tail chain, reader) for every candidate that is a tail.
    let mut cand_tail_readers: Vec<(u32, TxnId)> = Vec::new();
    for c in &txns.choices {
        let cands = c
            .cands
            .iter()
            .map(|&w| {
                let (chain, i) = place.get(&(c.key.0, w)).copied().unwrap_or((u32::MAX, 0));
                let ch = chains.get(chain as usize);
                let next = ch.filter(|ch| i + 1 < ch.len).map(|ch| chain_txns[(ch.start + i + 1) as usize]);
                let tail_of = if ch.is_some() && next.is_none() { chain } else { u32::MAX };
                if tail_of != u32::MAX {
                    cand_tail_readers.push((tail_of, c.reader));
                }
                Cand { writer: w, next, tail_of }
            })
            .collect();
        choices.push(ChoiceInfo { reader: c.reader, key: c.key, cands });
    }
    cand_tail_readers.sort_unstable();
    cand_tail_readers.dedup();
    let cand_readers_of = |x: u32| {
        let lo = cand_tail_readers.partition_point(|&(c, _)| c < x);
        cand_tail_readers[lo..].iter().take_while(move |&&(c, _)| c == x).map(|&(_, r)| r)
    };
    let (known_orders, known_orders_new) = match extra.filter(|k| k.apply_to(level) && !k.orders.is_empty()) {
        Some(k) => add_known_orders(txns, k, &chains, &chain_txns, &mut known),
        None => (0, 0),
    };
    let mut g = Polygraph {
        n,
        semantics: level.semantics,
        known,
        chains,
        chain_txns,
        constraints: Vec::new(),
        readers,
        tail_readers,
        choices,
        tail_constraints: Default::default(),
    };
    let known_reach = filter.and_then(|f| super::prune::known_reach(&g, f.priority, f.reach_bytes, f.engine));
    // Whether the known graph implies every edge of the side "chain x
    // first, then chain y" (see `Polygraph::side`): the ww edge is checked
    // first, since it alone settles most pairs.
    let implied = |r: &crate::accel::Closure, x: u32, y: u32| {
        let key = g.chains[x as usize].key;
        let (tail, head) = (*g.chain(x).last().unwrap_or(&0), g.chain(y)[0]);
        let holds = |e: DepEdge| {
            let (from, to) = g.bc(&e);
            r.reaches(from, to)
        };
        holds(DepEdge::data(tail, head, Dep::Ww, key))
            && g.tail_readers(x).filter(|&rd| rd != head).all(|rd| holds(DepEdge::data(rd, head, Dep::Rw, key)))
            && cand_readers_of(x).filter(|&rd| rd != head).all(|rd| holds(DepEdge::data(rd, head, Dep::Rw, key)))
    };
    let pair_needed = |a: u32, b: u32| match &known_reach {
        None => true,
        Some(KnownReach { reach: r, .. }) => !implied(r, a, b) && !implied(r, b, a),
    };
    let limit = max_constraints as u64;
    let mut constraints: Vec<Constraint> = Vec::new();
    for &(key, first_chain, last_chain) in &key_chains {
        // Pairs of chains whose order realtime already decides, with every
        // edge of that side implied, need no constraint (see `realtime_span`).
        let span = |c: u32| match &spans {
            Some(sp) => {
                let (lo, hi) = realtime_span(sp, &g.chains[c as usize], &g.chain_txns, &g.readers);
                (lo, cand_readers_of(c).map(|r| sp[r as usize].1).fold(hi, u32::max))
            }
            None => (0, u32::MAX),
        };
        let mut order: Vec<(u32, (u32, u32))> = (first_chain..last_chain).map(|c| (c, span(c))).collect();
        order.sort_unstable_by_key(|&(_, (start, _))| start);
        // The chains each chain overlaps: order[i + 1..overlap[i]].
        let overlap: Vec<usize> = (0..order.len())
            .map(|i| {
                let end = order[i].1 .1;
                i + 1 + order[i + 1..].partition_point(|&(_, (start, _))| start <= end)
            })
            .collect();
        let over_budget = std::sync::atomic::AtomicBool::new(false);
        let budget_left = limit.saturating_sub(pairs);
        let counted = std::sync::atomic::AtomicU64::new(0);
        let row = |i: usize| {
            let mut out = Vec::new();
            if over_budget.load(std::sync::atomic::Ordering::Relaxed) {
                return out;
            }
            for &(c, _) in &order[i + 1..overlap[i]] {
                if pair_needed(order[i].0, c) {
                    out.push(Constraint { a: order[i].0.min(c), b: order[i].0.max(c) });
                }
            }
            let total = counted.fetch_add(out.len() as u64, std::sync::atomic::Ordering::Relaxed) + out.len() as u64;
            if total > budget_left {
                over_budget.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            out
        };
        // Most keys have a handful of chains: fanning those out to threads
        // costs more than checking them.
        let found: Vec<Constraint> = if overlap.iter().enumerate().map(|(i, &o)| o - i - 1).sum::<usize>() < 4096 {
            (0..order.len()).flat_map(row).collect()
        } else {
            (0..order.len()).into_par_iter().flat_map_iter(row).collect()
        };
        let key_pairs = if over_budget.into_inner() {
            // Stopped early: the exact count is at least this.
            counted.into_inner().max(budget_left + 1)
        } else {
            found.len() as u64
        };
        pairs += key_pairs;
        if key_pairs > widest.1 {
            widest = (key, key_pairs);
        }
        if pairs > limit {
            return Err(TooManyConstraints { constraints: pairs, key: KeyId(widest.0), key_constraints: widest.1 });
        }
        constraints.extend(found);
    }
    if !cand_tail_readers.is_empty() {
        for (i, c) in constraints.iter().enumerate() {
            for x in [c.a, c.b] {
                if cand_readers_of(x).next().is_some() {
                    g.tail_constraints.entry(x).or_default().push(i as u32);
                }
            }
        }
    }
    g.constraints = constraints;
    Ok(Built { graph: g, known_reach, known_orders, known_orders_new })
}

/// Adds the write orders of `k` that apply to these transactions to
/// `known` as ww edges; returns how many were added and how many of those
/// join two different write chains.
fn add_known_orders(
    txns: &Txns,
    k: &super::KnownOrders,
    chains: &[Chain],
    chain_txns: &[TxnId],
    known: &mut Vec<DepEdge>,
) -> (usize, usize) {
    // `txns.op` is in history order, so increasing.
    let txn = |o: crate::history::OpId| txns.op.binary_search(&o).ok().map(|t| t as TxnId);
    let mut chain_of: rustc_hash::FxHashMap<(u32, TxnId), u32> = rustc_hash::FxHashMap::default();
    for (ci, ch) in chains.iter().enumerate() {
        for &t in &chain_txns[ch.start as usize..(ch.start + ch.len) as usize] {
            chain_of.insert((ch.key.0, t), ci as u32);
        }
    }
    let (mut added, mut new) = (0, 0);
    for o in k.orders.iter() {
        let (Some(a), Some(b), Some(r)) = (txn(o.from), txn(o.to), txn(o.reader)) else { continue };
        if a == b || r == a || txns.write_of(a, o.key).is_none() || txns.write_of(b, o.key).is_none() {
            continue;
        }
        if !matches!(txns.read_of(r, o.key).map(|x| x.from), Some(Source::Txn(w, _)) if w == b) {
            continue;
        }
        known.push(DepEdge::data(a, b, Dep::Ww, o.key));
        added += 1;
        if chain_of.get(&(o.key.0, a)) != chain_of.get(&(o.key.0, b)) {
            new += 1;
        }
    }
    (added, new)
}
