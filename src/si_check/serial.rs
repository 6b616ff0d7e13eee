//! Deciding valid histories in linear time, before any polygraph exists:
//! replay the history for a serial order and check that order directly.
//!
//! A history is serializable at a level exactly when some total order of its
//! transactions that extends the level's order (none, session order, or
//! realtime order) is a serial execution: every external read of a key reads
//! the last write of the key before it in the order (a read of a repeated
//! value: one of its candidate writers; a read of the initial state: no
//! write at all). A serial execution is also a snapshot-isolation execution
//! (each transaction's snapshot is the state just before it, and no two
//! transactions overlap), so the same order shows the history satisfies the
//! snapshot-isolation level with the same order.
//!
//! The polygraph's constraints are quadratic in the writers of a key, which
//! is what makes hot keys expensive; most real histories are valid, and for
//! them a serial order found by replaying the history, backtracking where
//! greed goes wrong ([`super::guess::backtracking_order`]), decides the
//! level with no polygraph at all. [`explains`] checks the order
//! against the definition above in one pass over the transactions (current
//! writer per key, last placed transaction per session, the latest
//! invocation placed so far for realtime), so a wrong guess costs time and
//! never a verdict: when the replay gives up or the check fails, the caller
//! goes on with the polygraph.
//!
//! The replay is tried under the strongest order the history records first
//! (realtime, then session order, then none, stopping at the level's own):
//! its edges steer the greedy replay towards the order the database most
//! likely used, and an order that respects them also respects the level's.

use super::guess::{self, Rows};
use super::polygraph::{Dep, DepEdge};
use super::txns::{Source, TxnId, Txns};
use super::OrderKind;
use crate::history::{History, OpType, NONE};
use rustc_hash::FxHashMap;
use std::time::{Duration, Instant};

/// Each transaction's invocation and completion positions in the history,
/// as the polygraph's realtime rule reads them: a transaction without an
/// invocation counts as invoked at the start, an `:info` one never
/// completes.
pub(super) fn spans(h: &History, txns: &Txns) -> Vec<(u32, u32)> {
    txns.op
        .iter()
        .map(|&o| {
            let op = h.op(o);
            let inv = if op.pair == NONE { 0 } else { op.pair };
            let done = if op.op_type == OpType::Ok { o } else { u32::MAX };
            (inv, done)
        })
        .collect()
}

/// The edges that guide a replay under `order`: write-read edges of reads
/// with one writer and the order's own edges
/// ([`super::polygraph::order_edges`]).
pub fn guide_edges(h: &History, txns: &Txns, order: OrderKind) -> Vec<DepEdge> {
    let n = txns.len();
    let mut edges = Vec::new();
    for t in 0..n as TxnId {
        for r in txns.reads_of(t) {
            if let Source::Txn(w, _) = r.from {
                edges.push(DepEdge { from: w, to: t, dep: Dep::Wr, key: r.key.0 });
            }
        }
    }
    super::polygraph::order_edges(h, txns, order, &mut edges);
    edges
}

/// The edges of [`guide_edges`] followed by the write orders of `known`
/// between transactions of `txns`, as `(from, to)` pairs in that order,
/// allocated once at their exact number: all the replay needs of them.
fn guide_pairs<'k>(
    h: &History,
    txns: &Txns,
    order: OrderKind,
    known: impl Iterator<Item = &'k super::KnownOrders> + Clone,
) -> Vec<(TxnId, TxnId)> {
    let n = txns.len();
    let by_order = super::polygraph::order_pairs(h, txns, order);
    let txn = |o: crate::history::OpId| txns.op.binary_search(&o).ok().map(|t| t as TxnId);
    let known_pairs =
        || known.clone().flat_map(|k| k.orders.iter()).filter_map(move |o| Some((txn(o.from)?, txn(o.to)?)));
    let reads = txns.reads.iter().filter(|r| matches!(r.from, Source::Txn(..))).count();
    let mut edges = Vec::with_capacity(reads + by_order.len() + known_pairs().count());
    for t in 0..n as TxnId {
        for r in txns.reads_of(t) {
            if let Source::Txn(w, _) = r.from {
                edges.push((w, t));
            }
        }
    }
    edges.extend_from_slice(&by_order);
    drop(by_order);
    edges.extend(known_pairs());
    edges
}

/// Whether `serial` (each of `txns` exactly once) is a serial execution of
/// the history that respects `order`: every external read reads the last
/// write of its key placed before it, each session's transactions come in
/// history order, and (realtime) no transaction comes after one invoked
/// after it completed, and (with a transaction order) every key's ordered
/// writers come in the order of their numbers. One pass; the definition
/// itself, independent of the polygraph.
pub fn explains(h: &History, txns: &Txns, order: OrderKind, serial: &[TxnId]) -> bool {
    let n = txns.len();
    if serial.len() != n {
        return false;
    }
    let mut seen = vec![false; n];
    let mut current: FxHashMap<u32, TxnId> = FxHashMap::default();
    let mut session_last: FxHashMap<i64, TxnId> = FxHashMap::default();
    let spans = (order == OrderKind::Realtime).then(|| spans(h, txns));
    // The latest invocation among the transactions placed so far.
    let mut latest_invocation: Option<u32> = None;
    let mut installs = super::commit_order::Installs::new(h, txns);
    for &t in serial {
        let Some(s) = seen.get_mut(t as usize) else { return false };
        if std::mem::replace(s, true) {
            return false;
        }
        if order != OrderKind::None {
            // Transactions are numbered in history order, so a session's
            // order is the order of its transactions' numbers.
            if let Some(p) = session_last.insert(txns.process[t as usize], t) {
                if p > t {
                    return false;
                }
            }
        }
        if let Some(sp) = &spans {
            let (inv, done) = sp[t as usize];
            // An earlier-placed transaction invoked after `t` completed
            // must come after it in realtime order.
            if latest_invocation.is_some_and(|l| l > done) {
                return false;
            }
            latest_invocation = Some(latest_invocation.map_or(inv, |l| l.max(inv)));
        }
        if !txns.reads_of(t).iter().all(|r| reads_version(txns, r, current.get(&r.key.0).copied())) {
            return false;
        }
        if installs.as_mut().is_some_and(|i| !i.install(txns, t)) {
            return false;
        }
        for w in txns.writes_of(t) {
            current.insert(w.key.0, t);
        }
    }
    true
}

/// Whether read `r` sees the version of `writer` (`None`: the initial
/// state), given where its value may come from.
pub(super) fn reads_version(txns: &Txns, r: &super::txns::Read, writer: Option<TxnId>) -> bool {
    match r.from {
        Source::Init => writer.is_none(),
        Source::Txn(w, _) => writer == Some(w),
        Source::Choice(j) => writer.is_some_and(|c| txns.choices[j as usize].cands.contains(&c)),
    }
}

/// How [`decide`] searches.
#[derive(Clone, Copy)]
pub struct Search<'a> {
    /// The time estimate per transaction ([`super::prune::time_estimate`]):
    /// the replay takes the earliest ready transaction first.
    pub priority: &'a [u32],
    /// Write orders every explanation respects, kept by every replay.
    pub known: Option<&'a super::KnownOrders>,
    /// Write orders every execution that respects session order respects
    /// (causal consistency's forced edges with sessions, see
    /// [`crate::weak::strong`]), kept by the replays guided by session or
    /// realtime order. They only guide: what a replay finds is checked by
    /// [`explains`].
    pub session_known: Option<&'a super::KnownOrders>,
    /// How long the replays after the first per guiding order may take.
    pub budget: Duration,
}

/// What [`decide`] found.
pub struct Decided {
    /// The serial order that explains the history.
    pub order: Vec<TxnId>,
    /// The order whose edges guided the replay that found it.
    pub guided_by: OrderKind,
    /// Placements undone to follow a hint, all guides.
    pub backtracks: usize,
}

/// Looks for a serial execution of `txns` that respects `order`, by
/// replaying under the orders the history records, strongest first
/// (`realtime` and `sessions` say whether realtime and session order relate
/// any two transactions), each replay checked by [`explains`]. A replay
/// that gets stuck suggests orders to keep (see [`guess::Hint`]) and the
/// next one keeps them, within [`Search::budget`]. `Err(replays)`: none
/// found one (the history may still be valid; the polygraph decides).
pub fn decide(
    h: &History,
    txns: &Txns,
    order: OrderKind,
    realtime: bool,
    sessions: bool,
    how: &Search<'_>,
) -> Result<Decided, usize> {
    let Search { priority, known, session_known, budget } = *how;
    let timed = h.ops.iter().any(|o| o.is_invoke());
    let rank = |o: OrderKind| match o {
        OrderKind::None => 0,
        OrderKind::Session => 1,
        OrderKind::Realtime => 2,
    };
    // Never guide by less than the level's own order.
    let guides = [(OrderKind::Realtime, realtime), (OrderKind::Session, sessions), (OrderKind::None, true)]
        .into_iter()
        .filter(|&(g, recorded)| (recorded && rank(g) >= rank(order)) || g == order)
        .map(|(g, _)| g);
    // The time estimate itself first: a history whose transactions
    // completed in the order they took effect needs no replay.
    let mut by_time: Vec<TxnId> = (0..txns.len() as TxnId).collect();
    by_time.sort_by_key(|&t| (priority[t as usize], t));
    if explains(h, txns, order, &by_time) {
        return Ok(Decided { order: by_time, guided_by: order, backtracks: 0 });
    }
    let guides: Vec<OrderKind> = guides.collect();
    let start = Instant::now();
    let mut backtracks = 0;
    for (i, &guide) in guides.iter().enumerate() {
        let by_sessions = session_known.filter(|_| rank(guide) >= rank(OrderKind::Session));
        let pairs = || guide_pairs(h, txns, guide, known.into_iter().chain(by_sessions));
        // Each replay takes its edges and frees them once it has its own
        // rows of them; a second replay derives them again.
        let mut edges = Some(pairs());
        // The budget left, shared by the guides left.
        let left = budget.saturating_sub(start.elapsed()) / (guides.len() - i) as u32;
        let until = Instant::now() + left;
        // The time estimate first; a replay that gets lost in some corner
        // often passes it when ready transactions are taken in invocation
        // order instead (timed histories only).
        let invoked = (timed && guide == OrderKind::Realtime).then(|| invocation_order(h, txns));
        for prio in std::iter::once(priority).chain(invoked.as_deref()) {
            let edges = edges.take().unwrap_or_else(pairs);
            // One copy of the edges' rows, for the reachability and the replay.
            let rows = Rows::of(txns.len(), edges.iter().copied());
            let mut graph = Reach::new(txns.len(), &rows, prio);
            match guess::backtracking_order_owned(txns, edges, &rows, prio, until, &mut graph) {
                Ok((serial, b)) => {
                    backtracks += b;
                    if explains(h, txns, order, &serial) {
                        return Ok(Decided { order: serial, guided_by: guide, backtracks });
                    }
                }
                Err(b) => backtracks += b,
            }
            if Instant::now() > until {
                break;
            }
        }
    }
    Err(backtracks)
}

/// Each transaction's rank by invocation (a transaction without one counts
/// as invoked at the start), as a replay priority.
fn invocation_order(h: &History, txns: &Txns) -> Vec<u32> {
    let sp = spans(h, txns);
    let mut by_invocation: Vec<TxnId> = (0..txns.len() as TxnId).collect();
    by_invocation.sort_by_key(|&t| (sp[t as usize].0, t));
    let mut rank = vec![0u32; txns.len()];
    for (i, &t) in by_invocation.iter().enumerate() {
        rank[t as usize] = i as u32;
    }
    rank
}

/// Transactions one cycle test may visit; past that, a hint counts as
/// closing a cycle (it is a guess either way, and an unbounded search per
/// backtrack would make a lost replay quadratic).
const MAX_SEARCH: usize = 4096;

/// The edges kept so far, for asking whether a hint would close a cycle.
struct Reach<'r> {
    /// The loaded edges.
    rows: &'r Rows,
    seen: Vec<u32>,
    epoch: u32,
    stack: Vec<TxnId>,
    parent: Vec<TxnId>,
    /// Topological rank per transaction (`u32::MAX` on a cycle).
    rank: Vec<u32>,
    /// Kept orders by their first transaction.
    kept: FxHashMap<TxnId, Vec<TxnId>>,
    /// How many kept orders start at each rank (the highest bounds searches).
    kept_ranks: std::collections::BTreeMap<u32, u32>,
}

impl guess::KeptOrders for Reach<'_> {
    fn path(&mut self, from: TxnId, to: TxnId) -> Option<Vec<TxnId>> {
        Reach::path(self, from, to)
    }

    fn keep(&mut self, a: TxnId, b: TxnId) {
        self.kept.entry(a).or_default().push(b);
        *self.kept_ranks.entry(self.rank[a as usize]).or_default() += 1;
    }

    fn forget(&mut self, a: TxnId, b: TxnId) {
        let Some(v) = self.kept.get_mut(&a) else { return };
        let Some(i) = v.iter().position(|&x| x == b) else { return };
        v.swap_remove(i);
        let r = self.rank[a as usize];
        if let Some(c) = self.kept_ranks.get_mut(&r) {
            *c -= 1;
            if *c == 0 {
                self.kept_ranks.remove(&r);
            }
        }
    }

    fn is_kept(&self, a: TxnId, b: TxnId) -> bool {
        self.kept.get(&a).is_some_and(|v| v.contains(&b))
    }
}

impl<'r> Reach<'r> {
    /// Reachability over `rows` (edges over `n` transactions), ranked by
    /// `priority`, with no order kept yet.
    fn new(n: usize, rows: &'r Rows, priority: &[u32]) -> Reach<'r> {
        let mut r = Reach {
            rows,
            seen: vec![0; n],
            epoch: 0,
            stack: Vec::new(),
            parent: vec![0; n],
            rank: Vec::new(),
            kept: FxHashMap::default(),
            kept_ranks: std::collections::BTreeMap::new(),
        };
        r.rank = r.ranks(n, priority);
        r
    }

    /// Topological ranks of the loaded edges (`u32::MAX` on a cycle).
    fn ranks(&self, n: usize, priority: &[u32]) -> Vec<u32> {
        // Topological ranks of the loaded edges (Kahn): a path over them
        // only climbs, which bounds every search below.
        let mut indegree = vec![0u32; n];
        for &w in &self.rows.succ {
            indegree[w as usize] += 1;
        }
        // Earliest first by the time estimate, so that ranks follow time
        // and the searches stay near the replay's frontier.
        let mut queue: std::collections::BinaryHeap<std::cmp::Reverse<(u32, TxnId)>> = (0..n as TxnId)
            .filter(|&v| indegree[v as usize] == 0)
            .map(|v| std::cmp::Reverse((priority[v as usize], v)))
            .collect();
        let mut rank = vec![u32::MAX; n];
        let mut next = 0;
        while let Some(std::cmp::Reverse((_, v))) = queue.pop() {
            rank[v as usize] = next;
            next += 1;
            for &w in self.rows.row(v) {
                indegree[w as usize] -= 1;
                if indegree[w as usize] == 0 {
                    queue.push(std::cmp::Reverse((priority[w as usize], w)));
                }
            }
        }
        rank
    }

    /// A path from `from` to `to` over the loaded edges and the kept
    /// orders, both ends included (depth-first).
    fn path(&mut self, from: TxnId, to: TxnId) -> Option<Vec<TxnId>> {
        // Loaded edges only climb in rank, so a node ranked above both `to`
        // and the start of every kept order never leads back down to `to`.
        let top = self.kept_ranks.keys().next_back().copied().unwrap_or(0);
        let limit = self.rank[to as usize].max(top);
        self.epoch += 1;
        self.stack.clear();
        if self.rank[from as usize] > limit {
            return None;
        }
        self.stack.push(from);
        self.seen[from as usize] = self.epoch;
        let mut visited = 0usize;
        while let Some(v) = self.stack.pop() {
            visited += 1;
            if visited > MAX_SEARCH {
                // Too far to tell: answer as if there were a path (with no
                // kept order on it), so that the hint is not kept.
                return Some(Vec::new());
            }
            if v == to {
                let mut path = vec![to];
                let mut at = to;
                while at != from {
                    at = self.parent[at as usize];
                    path.push(at);
                }
                path.reverse();
                return Some(path);
            }
            let out = self.rows.row(v);
            let extra = self.kept.get(&v).map_or(&[][..], |x| &x[..]);
            for &w in out.iter().chain(extra) {
                if self.seen[w as usize] != self.epoch && self.rank[w as usize] <= limit {
                    self.seen[w as usize] = self.epoch;
                    self.parent[w as usize] = v;
                    self.stack.push(w);
                }
            }
        }
        None
    }
}

/// A backtracking replay (see [`guess::backtracking_order`]) under
/// `edges` until `until`: `Ok` with a replayed order and the backtracks it
/// took, `Err` with the backtracks made when it found none.
pub fn backtrack_under(
    txns: &Txns,
    edges: &[DepEdge],
    priority: &[u32],
    until: Instant,
) -> Result<(Vec<TxnId>, usize), usize> {
    let rows = Rows::of(txns.len(), edges.iter().map(guess::Ends::ends));
    let mut graph = Reach::new(txns.len(), &rows, priority);
    guess::backtracking_order(txns, edges, priority, until, &mut graph)
}
