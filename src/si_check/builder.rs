//! Building the polygraph ([`super::polygraph`]) of a register history at
//! one level: the known edges the history justifies, the write chains, the
//! reads with several candidate writers, and one constraint per pair of
//! chains of a key whose order is still open.
//!
//! Most of the work is leaving pairs out. A pair needs no constraint when
//! the known graph already settles it: either realtime order puts one chain
//! entirely before the other (`realtime_span`, which needs no reachability),
//! or, with a [`PairFilter`], the known graph has a path for every edge of
//! one side, so that side can always be taken without changing reachability.
//! The filter computes the known graph's reachability with pruning's own
//! machinery ([`super::prune::known_reach`]) and hands it back in [`Built`],
//! so pruning's first round reuses it. That is why building stands above
//! pruning, and the polygraph's data ([`super::polygraph`]) below both.
//!
//! Extra write orders from outside the history ([`super::KnownOrders`], the
//! orders the weak checks force) join the known edges as ww edges when they
//! hold at the level being checked.

use super::polygraph::{order_edges, Cand, Chain, ChoiceInfo, Constraint, Dep, DepEdge, Polygraph};
use super::prune::KnownReach;
use super::txns::{Source, TxnId, Txns};
use super::{Level, OrderKind, Semantics};
use crate::accel::reach::Reach;
use crate::history::{History, KeyId, NONE};
use rayon::prelude::*;

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
///
/// The steps: the known wr edges and who reads what ([`read_edges`]), the
/// session and realtime edges, the write chains of each key with their
/// ww and rw edges ([`chain_keys`]), the candidate writers of the reads
/// with several ([`choice_infos`]), the extra orders, and one constraint
/// per pair of chains the known graph leaves open ([`pair_constraints`]).
pub fn build_with(
    h: &History,
    txns: &Txns,
    level: Level,
    max_constraints: usize,
    filter: Option<PairFilter<'_>>,
    extra: Option<&super::KnownOrders>,
) -> Result<Built, TooManyConstraints> {
    let spans = txn_spans(h, txns, level);
    let mut known: Vec<DepEdge> = Vec::new();
    let (readers, init_readers) = read_edges(txns, &mut known);
    order_edges(h, txns, level.order, &mut known);
    super::commit_order::edges(h, txns, &mut known);
    let set = chain_keys(txns, level, &readers, &init_readers, &mut known);
    let tail_readers = tail_reader_ranges(&set.chains, &set.chain_txns, &readers);
    let (choices, cand_tail) = choice_infos(txns, &set.chains, &set.chain_txns);
    let (known_orders, known_orders_new) = match extra.filter(|k| k.apply_to(level) && !k.orders.is_empty()) {
        Some(k) => add_known_orders(txns, k, &set.chains, &set.chain_txns, &mut known),
        None => (0, 0),
    };
    let mut g = Polygraph {
        n: txns.len(),
        semantics: level.semantics,
        known,
        chains: set.chains,
        chain_txns: set.chain_txns,
        constraints: Vec::new(),
        readers,
        tail_readers,
        choices,
        tail_constraints: Default::default(),
    };
    let known_reach = filter.and_then(|f| super::prune::known_reach(&g, f.priority, f.reach_bytes, f.engine));
    let pairs = Pairs { g: &g, spans: spans.as_deref(), known_reach: known_reach.as_ref(), cand_tail: &cand_tail };
    let constraints = pairs.constraints(&set.key_chains, max_constraints as u64)?;
    index_tail_constraints(&mut g, &constraints, &cand_tail);
    g.constraints = constraints;
    Ok(Built { graph: g, known_reach, known_orders, known_orders_new })
}

/// With realtime order (and a history that records invocations), each
/// transaction's (invocation, completion) positions in the history;
/// `:info` ones never complete.
fn txn_spans(h: &History, txns: &Txns, level: Level) -> Option<Vec<(u32, u32)>> {
    let timed = level.order == OrderKind::Realtime && h.ops.iter().any(|o| o.is_invoke());
    timed.then(|| {
        txns.op
            .iter()
            .map(|&o| {
                let op = h.op(o);
                let inv = if op.pair == NONE { 0 } else { op.pair };
                let done = if op.op_type == crate::history::OpType::Ok { o } else { u32::MAX };
                (inv, done)
            })
            .collect()
    })
}

/// A reader of a written version: `(writer, key, reader)`.
type VersionReader = (TxnId, u32, TxnId);

/// The wr edge of every read with one known writer (added to `known`);
/// returns the readers of each written version, `(writer, key, reader)`,
/// and the readers of each key's initial state, `(key, reader)`, sorted.
fn read_edges(txns: &Txns, known: &mut Vec<DepEdge>) -> (Vec<VersionReader>, Vec<(u32, TxnId)>) {
    let mut readers: Vec<(TxnId, u32, TxnId)> = Vec::new();
    let mut init_readers: Vec<(u32, TxnId)> = Vec::new();
    for t in 0..txns.len() as TxnId {
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
    (readers, init_readers)
}

/// The write chains of every key: each chain's transactions in order, and
/// each key's chains as a range `(key, first, last)`.
#[derive(Default)]
struct ChainSet {
    chains: Vec<Chain>,
    chain_txns: Vec<TxnId>,
    key_chains: Vec<(u32, u32, u32)>,
}

/// Splits each key's writers into chains of read-modify-writes, adding the
/// ww edges of every read-modify-write and the rw edges the chains fix.
fn chain_keys(
    txns: &Txns,
    level: Level,
    readers: &[(TxnId, u32, TxnId)],
    init_readers: &[(u32, TxnId)],
    known: &mut Vec<DepEdge>,
) -> ChainSet {
    // Writers per key.
    let mut writes: Vec<(u32, TxnId)> = Vec::with_capacity(txns.writes.len());
    for t in 0..txns.len() as TxnId {
        writes.extend(txns.writes_of(t).iter().map(|w| (w.key.0, t)));
    }
    writes.sort_unstable();
    // (key, writer, successor that read writer's version and wrote key).
    let mut rmw: Vec<(u32, TxnId, TxnId)> =
        readers.iter().filter(|&&(_, k, r)| txns.write_of(r, KeyId(k)).is_some()).map(|&(w, k, r)| (k, w, r)).collect();
    rmw.sort_unstable();
    let mut set = ChainSet::default();
    for ws in writes.chunk_by(|a, b| a.0 == b.0) {
        let key = ws[0].0;
        let lo = rmw.partition_point(|&(k, _, _)| k < key);
        let hi = rmw.partition_point(|&(k, _, _)| k <= key);
        let (next, has_pred) = rmw_links(key, &rmw[lo..hi], level, known);
        let first = set.chains.len() as u32;
        let ws: Vec<TxnId> = ws.iter().map(|&(_, t)| t).collect();
        link_chains(key, &ws, &next, &has_pred, &mut set);
        let last = set.chains.len() as u32;
        chain_rw_edges(key, &set, first..last, readers, init_readers, known);
        set.key_chains.push((key, first, last));
    }
    set
}

/// The ww edge of each read-modify-write of `key` (`rm`: its
/// `(key, writer, successor)` entries, sorted), and the links of the
/// chains: a writer's unique read-modify-write successor continues its
/// chain; two or more (a lost update) continue none, but each still
/// follows it. Under prefix consistency another writer may commit between
/// a version and the transaction that read and overwrote it (a lost update
/// is allowed): nothing chains.
fn rmw_links(
    key: u32,
    rm: &[(u32, TxnId, TxnId)],
    level: Level,
    known: &mut Vec<DepEdge>,
) -> (rustc_hash::FxHashMap<TxnId, TxnId>, rustc_hash::FxHashSet<TxnId>) {
    let mut next: rustc_hash::FxHashMap<TxnId, TxnId> = rustc_hash::FxHashMap::default();
    let mut has_pred: rustc_hash::FxHashSet<TxnId> = rustc_hash::FxHashSet::default();
    for same_writer in rm.chunk_by(|a, b| a.1 == b.1) {
        let w = same_writer[0].1;
        known.extend(same_writer.iter().map(|&(_, _, r)| DepEdge::data(w, r, Dep::Ww, KeyId(key))));
        if same_writer.len() == 1 && level.semantics != Semantics::Prefix {
            next.insert(w, same_writer[0].2);
            has_pred.insert(same_writer[0].2);
        }
    }
    (next, has_pred)
}

/// Follows the links from every writer of `key` (`ws`) without a
/// predecessor, one chain each; writers on a cycle of read-modify-writes
/// become chains of their own.
fn link_chains(
    key: u32,
    ws: &[TxnId],
    next: &rustc_hash::FxHashMap<TxnId, TxnId>,
    has_pred: &rustc_hash::FxHashSet<TxnId>,
    set: &mut ChainSet,
) {
    let mut in_chain: rustc_hash::FxHashSet<TxnId> = rustc_hash::FxHashSet::default();
    for &w in ws {
        if has_pred.contains(&w) || in_chain.contains(&w) {
            continue;
        }
        let start = set.chain_txns.len() as u32;
        let mut cur = w;
        loop {
            if !in_chain.insert(cur) {
                break; // a cycle of read-modify-writes; the wr edges close it
            }
            set.chain_txns.push(cur);
            match next.get(&cur) {
                Some(&nx) => cur = nx,
                None => break,
            }
        }
        set.chains.push(Chain { key: KeyId(key), start, len: set.chain_txns.len() as u32 - start });
    }
    // Writers on a cycle of read-modify-writes: each its own chain.
    for &w in ws {
        if in_chain.insert(w) {
            set.chain_txns.push(w);
            set.chains.push(Chain { key: KeyId(key), start: set.chain_txns.len() as u32 - 1, len: 1 });
        }
    }
}

/// The rw edges the chains `range` of `key` fix: from each reader of a
/// chain element to the next element, and from each reader of the initial
/// state to every chain's head.
fn chain_rw_edges(
    key: u32,
    set: &ChainSet,
    range: std::ops::Range<u32>,
    readers: &[(TxnId, u32, TxnId)],
    init_readers: &[(u32, TxnId)],
    known: &mut Vec<DepEdge>,
) {
    for c in range {
        let ch = set.chains[c as usize];
        let elems = &set.chain_txns[ch.start as usize..(ch.start + ch.len) as usize];
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
}

/// Each chain's tail's readers, as a range of `readers`, looked up once.
fn tail_reader_ranges(chains: &[Chain], chain_txns: &[TxnId], readers: &[(TxnId, u32, TxnId)]) -> Vec<(u32, u32)> {
    chains
        .iter()
        .map(|ch| {
            let (tail, key) = (chain_txns[(ch.start + ch.len - 1) as usize], ch.key.0);
            let lo = readers.partition_point(|&(a, k, _)| (a, k) < (tail, key));
            let hi = lo + readers[lo..].partition_point(|&(a, k, _)| (a, k) == (tail, key));
            (lo as u32, hi as u32)
        })
        .collect()
}

/// The readers whose candidate writer is a chain's tail, as sorted
/// `(tail chain, reader)` pairs.
struct CandTailReaders(Vec<(u32, TxnId)>);

impl CandTailReaders {
    /// The readers with a candidate at the tail of chain `x`.
    fn of(&self, x: u32) -> impl Iterator<Item = TxnId> + '_ {
        let lo = self.0.partition_point(|&(c, _)| c < x);
        self.0[lo..].iter().take_while(move |&&(c, _)| c == x).map(|&(_, r)| r)
    }
}

/// Each read with several candidate writers, with each candidate's place
/// in its chain (its successor, or the chain it ends).
fn choice_infos(txns: &Txns, chains: &[Chain], chain_txns: &[TxnId]) -> (Vec<ChoiceInfo>, CandTailReaders) {
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
    (choices, CandTailReaders(cand_tail_readers))
}

/// What deciding whether a pair of chains needs a constraint reads.
struct Pairs<'a> {
    g: &'a Polygraph,
    spans: Option<&'a [(u32, u32)]>,
    known_reach: Option<&'a KnownReach>,
    cand_tail: &'a CandTailReaders,
}

impl Pairs<'_> {
    /// Whether the known graph implies every edge of the side "chain x
    /// first, then chain y" (see `Polygraph::side`): the ww edge is checked
    /// first, since it alone settles most pairs.
    fn implied(&self, r: &crate::accel::Closure, x: u32, y: u32) -> bool {
        let g = self.g;
        let key = g.chains[x as usize].key;
        let (tail, head) = (*g.chain(x).last().unwrap_or(&0), g.chain(y)[0]);
        let holds = |e: DepEdge| {
            let (from, to) = g.bc(&e);
            r.reaches(from, to)
        };
        holds(DepEdge::data(tail, head, Dep::Ww, key))
            && g.tail_readers(x).filter(|&rd| rd != head).all(|rd| holds(DepEdge::data(rd, head, Dep::Rw, key)))
            && self.cand_tail.of(x).filter(|&rd| rd != head).all(|rd| holds(DepEdge::data(rd, head, Dep::Rw, key)))
    }

    /// Whether the pair of chains `a`, `b` needs a constraint.
    fn needed(&self, a: u32, b: u32) -> bool {
        match self.known_reach {
            None => true,
            Some(KnownReach { reach: r, .. }) => !self.implied(r, a, b) && !self.implied(r, b, a),
        }
    }

    /// Chain `c`'s realtime span, widened by its tail's candidate readers
    /// (see [`realtime_span`]); unbounded without realtime order.
    fn span(&self, c: u32) -> (u32, u32) {
        match self.spans {
            Some(sp) => {
                let g = self.g;
                let (lo, hi) = realtime_span(sp, &g.chains[c as usize], &g.chain_txns, &g.readers);
                (lo, self.cand_tail.of(c).map(|r| sp[r as usize].1).fold(hi, u32::max))
            }
            None => (0, u32::MAX),
        }
    }

    /// Every constraint of every key, or the error once the count passes
    /// `limit`.
    fn constraints(&self, key_chains: &[(u32, u32, u32)], limit: u64) -> Result<Vec<Constraint>, TooManyConstraints> {
        let mut pairs: u64 = 0;
        let mut widest: (u32, u64) = (0, 0);
        let mut constraints: Vec<Constraint> = Vec::new();
        for &(key, first_chain, last_chain) in key_chains {
            let (found, key_pairs) = self.key_constraints(first_chain..last_chain, limit.saturating_sub(pairs));
            pairs += key_pairs;
            if key_pairs > widest.1 {
                widest = (key, key_pairs);
            }
            if pairs > limit {
                return Err(TooManyConstraints { constraints: pairs, key: KeyId(widest.0), key_constraints: widest.1 });
            }
            constraints.extend(found);
        }
        Ok(constraints)
    }

    /// The constraints among the chains `range` of one key, and how many
    /// the key needs (at least that many when it passed `budget_left`).
    /// Pairs of chains whose order realtime already decides, with every
    /// edge of that side implied, need no constraint (see `realtime_span`).
    ///
    /// The chains' rows are checked in blocks of about [`BLOCK_PAIRS`]
    /// pairs (in parallel within a block), and the budget after each
    /// block: a key over the budget is counted up to the end of the block
    /// that crossed it, the same count on every run.
    fn key_constraints(&self, range: std::ops::Range<u32>, budget_left: u64) -> (Vec<Constraint>, u64) {
        let mut order: Vec<(u32, (u32, u32))> = range.map(|c| (c, self.span(c))).collect();
        order.sort_unstable_by_key(|&(_, (start, _))| start);
        // The chains each chain overlaps: order[i + 1..overlap[i]].
        let overlap: Vec<usize> = (0..order.len())
            .map(|i| {
                let end = order[i].1 .1;
                i + 1 + order[i + 1..].partition_point(|&(_, (start, _))| start <= end)
            })
            .collect();
        let row = |i: usize| {
            let mut out = Vec::new();
            for &(c, _) in &order[i + 1..overlap[i]] {
                if self.needed(order[i].0, c) {
                    out.push(Constraint { a: order[i].0.min(c), b: order[i].0.max(c) });
                }
            }
            out
        };
        let mut found: Vec<Constraint> = Vec::new();
        let mut i = 0;
        while i < order.len() {
            // Rows up to about BLOCK_PAIRS pairs (at least one row).
            let mut end = i;
            let mut pairs = 0;
            while end < order.len() && (end == i || pairs < BLOCK_PAIRS) {
                pairs += overlap[end] - end - 1;
                end += 1;
            }
            // Most keys have a handful of chains: fanning those out to
            // threads costs more than checking them.
            if pairs < 4096 {
                found.extend((i..end).flat_map(row));
            } else {
                let block: Vec<Constraint> = (i..end).into_par_iter().flat_map_iter(row).collect();
                found.extend(block);
            }
            if found.len() as u64 > budget_left {
                // Stopped early: the exact count is at least this.
                let counted = found.len() as u64;
                return (found, counted);
            }
            i = end;
        }
        let key_pairs = found.len() as u64;
        (found, key_pairs)
    }
}

/// Pairs of chains checked between two looks at the constraint budget
/// (see `Pairs::key_constraints`).
const BLOCK_PAIRS: usize = 1 << 20;

/// The constraints by chain, for the chains that are some candidate's tail
/// ([`Polygraph::tail_constraints`]).
fn index_tail_constraints(g: &mut Polygraph, constraints: &[Constraint], cand_tail: &CandTailReaders) {
    if cand_tail.0.is_empty() {
        return;
    }
    for (i, c) in constraints.iter().enumerate() {
        for x in [c.a, c.b] {
            if cand_tail.of(x).next().is_some() {
                g.tail_constraints.entry(x).or_default().push(i as u32);
            }
        }
    }
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
