//! A serial order guessed by replaying the history, to decide valid
//! histories without search (or to start the solver from a good order).
//!
//! A serializable history has a serial order in which every transaction
//! reads, for each key, the value of the last writer before it. Such an
//! order is found greedily most of the time by *replaying*: keep the current
//! writer of every key; a transaction is *ready* when its known
//! predecessors (session order, realtime, write-read, ... every known edge
//! given) are placed and each of its reads reads the current writer of its
//! key (for a read of a repeated value: one of its candidate writers);
//! among the ready ones take the earliest (by the time estimate) that
//! *clobbers* nothing, that is, whose writes do not replace a version some
//! unplaced transaction still has to read, preferring one whose readers can
//! follow at once (see [`lagging_readers`]). Placing a transaction makes it
//! the current writer of the keys it writes. A writer of a version someone
//! reads also waits, while another transaction is ready, for the unplaced
//! writers of the same key whose versions nobody reads: such a blind write
//! often has to come before the read version.
//!
//! When every transaction is placed ready, the replay is a serial execution
//! explaining every read. The product never answers valid on that alone:
//! the caller checks the order (against the polygraph, or by the definition,
//! see [`super::serial::explains`]).
//!
//! Greed goes wrong when it places a writer too early: later, no
//! transaction is ready without clobbering. [`diagnose`] follows what holds
//! the stuck transaction back (an overwritten version it reads, an unplaced
//! writer or predecessor, a reader of the version it would clobber) to an
//! order the replay should have kept, a [`Hint`]. [`serial_order`] just goes
//! on placing (its order still seeds the solver, whose phases follow it);
//! [`backtracking_order`] *undoes* placements back to the one the hint
//! reorders, keeps the hint as an edge and replays on from there. Every
//! placement is reversible (each keeps the versions it replaced), so a
//! mistake costs the steps since it was made, not a new replay.
//!
//! Cost: every read is indexed by the version it needs, so placing (or
//! undoing) a transaction touches its reads, its writes and the readers of
//! the versions it replaces; with a bounded scan of ready transactions per
//! step the replay is `O((n + reads + edges) log n)`, plus the undone steps
//! when backtracking (bounded by the caller's deadline). A replay that
//! goes round in circles in one corner (two hints undoing each other) has
//! that corner searched exhaustively, within a bound (`guess::untangle`).

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::polygraph::DepEdge;
use super::txns::{Source, TxnId, Txns, Write};
use super::versions::{Versions, INIT};

mod untangle;

/// Ready transactions examined per step for one that clobbers nothing.
const SCAN: usize = 32;

/// How often [`backtracking_order`] may keep the same order again after
/// forgetting it: past that it is going round in circles, and the corner is
/// searched exhaustively (`guess::untangle`) or, where that finds no way out,
/// the replay gives up.
const MAX_TRIES: u32 = 8;

/// Backtracks [`backtracking_order`] may make beyond one per transaction: a
/// replay that needs more is lost (or the history is not serializable,
/// where it can only lose time).
const MIN_BACKTRACKS: usize = 1000;

/// Placements [`backtracking_order`] may undo in all, per transaction
/// (and [`MIN_BACKTRACKS`] times [`UNDO_PER_TXN`] more): a mistake is
/// usually a few steps back, but a writer placed early can show its harm
/// only thousands of steps later (a session that fell behind reaches the
/// version it clobbered), so one hint may undo any number of steps, and
/// the total bounds a lost replay to linear work.
const UNDO_PER_TXN: usize = 64;

/// An edge as the replay reads it: the transaction it leaves and the one
/// it enters. The replay needs nothing else of an edge, so a large replay
/// can hold its edges as bare pairs (8 bytes each, half a [`DepEdge`]).
pub trait Ends {
    /// `(from, to)`.
    fn ends(&self) -> (TxnId, TxnId);
}

impl Ends for DepEdge {
    fn ends(&self) -> (TxnId, TxnId) {
        (self.from, self.to)
    }
}

impl Ends for (TxnId, TxnId) {
    fn ends(&self) -> (TxnId, TxnId) {
        *self
    }
}

/// A replayed order of all transactions.
pub struct Guess {
    /// Every transaction once.
    pub order: Vec<TxnId>,
    /// Whether every transaction was placed with each read reading the
    /// current writer of its key (a serial execution, to be checked).
    pub replayed: bool,
}

/// An order `(a, b)` ("`a` before `b`") a stuck replay suggests, with the
/// other way out of the same corner for when the first would close a cycle.
pub type Hint = [(TxnId, TxnId); 2];

type Heap = BinaryHeap<Reverse<(u32, TxnId)>>;

/// Edges in compressed rows by their first transaction, each row in the
/// order the edges came.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    /// Where each transaction's row starts in `succ` (one past the last too).
    pub start: Vec<u32>,
    /// The second transaction of each edge.
    pub succ: Vec<TxnId>,
}

impl Rows {
    /// The rows of `edges` over `n` transactions.
    pub fn of(n: usize, edges: impl Iterator<Item = (TxnId, TxnId)> + Clone) -> Rows {
        let mut start = vec![0u32; n + 1];
        for (from, _) in edges.clone() {
            start[from as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut succ = vec![0 as TxnId; start[n] as usize];
        let mut fill = start.clone();
        for (from, to) in edges {
            succ[fill[from as usize] as usize] = to;
            fill[from as usize] += 1;
        }
        Rows { start, succ }
    }

    /// The successors of `t`.
    #[inline]
    pub fn row(&self, t: TxnId) -> &[TxnId] {
        &self.succ[self.start[t as usize] as usize..self.start[t as usize + 1] as usize]
    }

    /// Whether some edge goes from a transaction to itself.
    pub fn has_loop(&self) -> bool {
        (0..self.start.len().saturating_sub(1) as TxnId).any(|t| self.row(t).contains(&t))
    }
}

/// The state of a replay: what is placed, the current writer of each key,
/// which reads are satisfied, and what each placement replaced (to undo it).
struct Replay<'a> {
    txns: &'a Txns,
    priority: &'a [u32],
    /// Unplaced known predecessors.
    preds: Vec<u32>,
    /// Known successors, in rows by transaction (borrowed where the caller
    /// holds the same rows).
    succ: Cow<'a, Rows>,
    pred_start: Vec<u32>,
    pred_list: Vec<TxnId>,
    /// Edges added while replaying (kept hints), both ways.
    extra_succ: FxHashMap<TxnId, Vec<TxnId>>,
    extra_pred: FxHashMap<TxnId, Vec<TxnId>>,
    /// Readers of each `(key, writer)` version (a read of a repeated value
    /// is a reader of each candidate).
    wanted: Versions,
    /// Reads of each transaction not satisfied by the current writers.
    unsat: Vec<u32>,
    /// Unplaced readers of each version (by its number in `wanted`).
    pending: Vec<u32>,
    /// Unplaced writers of each key whose version of it nobody reads.
    blind: FxHashMap<u32, u32>,
    current: FxHashMap<u32, TxnId>,
    placed: Vec<bool>,
    /// Position in `order` of each placed transaction.
    pos: Vec<u32>,
    order: Vec<TxnId>,
    /// `(key, previous writer)` per write of each placement, and where each
    /// placement's entries start.
    replaced: Vec<(u32, Option<TxnId>)>,
    replaced_start: Vec<u32>,
    ready: Heap,
    free: Heap,
    /// Whether a transaction has an entry in `ready` / `free` (entries are
    /// checked when popped, so one entry each is enough).
    in_ready: Vec<bool>,
    in_free: Vec<bool>,
    scratch_dec: Vec<u32>,
    scratch_got: Vec<u32>,
    touched: Vec<TxnId>,
}

/// The readers of version `(k, w)` in `wanted`; `None` when nobody reads it.
fn readers_of<'v>(wanted: &'v Versions, txns: &Txns, k: u32, w: TxnId) -> Option<&'v [TxnId]> {
    let rs = wanted.readers(wanted.id(txns, k, w)?);
    (!rs.is_empty()).then_some(rs)
}

/// How one step of a replay went.
enum Step {
    /// A ready transaction that clobbers nothing.
    Clean(TxnId),
    /// Only a transaction that clobbers a version still to be read, or one
    /// whose reads are not satisfied, can go next.
    Forced(TxnId),
    /// Nothing whose predecessors are placed is left.
    Blocked,
}

impl<'a> Replay<'a> {
    fn new<E: Ends>(txns: &'a Txns, edges: &[E], priority: &'a [u32]) -> Replay<'a> {
        Replay::sharing(txns, edges, None, priority)
    }

    /// A replay under `edges` that reads its successor rows from `rows`
    /// (the same edges, as [`Rows::of`] lays them out) when they have no
    /// edge from a transaction to itself, which the replay leaves out.
    fn sharing<E: Ends>(txns: &'a Txns, edges: &[E], rows: Option<&'a Rows>, priority: &'a [u32]) -> Replay<'a> {
        let n = txns.len();
        let succ = match rows.filter(|r| !r.has_loop()) {
            Some(r) => Cow::Borrowed(r),
            None => Cow::Owned(Rows::of(n, edges.iter().map(Ends::ends).filter(|(a, b)| a != b))),
        };
        let mut preds = vec![0u32; n];
        for (_, to) in edges.iter().map(Ends::ends).filter(|(a, b)| a != b) {
            preds[to as usize] += 1;
        }
        let mut pred_start = vec![0u32; n + 1];
        for (t, &p) in preds.iter().enumerate() {
            pred_start[t + 1] = pred_start[t] + p;
        }
        let mut pred_list = vec![0 as TxnId; pred_start[n] as usize];
        let mut fill_pred = pred_start.clone();
        for (from, to) in edges.iter().map(Ends::ends).filter(|(a, b)| a != b) {
            pred_list[fill_pred[to as usize] as usize] = from;
            fill_pred[to as usize] += 1;
        }
        drop(fill_pred);

        let wanted = Versions::build(txns);
        let mut unsat = vec![0u32; n];
        for t in 0..n as TxnId {
            // Satisfied at first only by the initial state.
            unsat[t as usize] = txns.reads_of(t).iter().filter(|r| r.from != Source::Init).count() as u32;
        }
        let pending = (0..wanted.len() as u32).map(|v| wanted.readers(v).len() as u32).collect();
        let mut blind: FxHashMap<u32, u32> = FxHashMap::default();
        for t in 0..n as TxnId {
            for w in txns.writes_of(t) {
                if wanted.id(txns, w.key.0, t).is_none_or(|v| wanted.readers(v).is_empty()) {
                    *blind.entry(w.key.0).or_default() += 1;
                }
            }
        }
        let mut r = Replay {
            txns,
            priority,
            preds,
            succ,
            pred_start,
            pred_list,
            extra_succ: FxHashMap::default(),
            extra_pred: FxHashMap::default(),
            wanted,
            unsat,
            pending,
            blind,
            current: FxHashMap::default(),
            placed: vec![false; n],
            pos: vec![0; n],
            order: Vec::with_capacity(n),
            replaced: Vec::new(),
            replaced_start: Vec::with_capacity(n),
            ready: BinaryHeap::new(),
            free: BinaryHeap::new(),
            in_ready: vec![false; n],
            in_free: vec![false; n],
            scratch_dec: vec![0; n],
            scratch_got: vec![0; n],
            touched: Vec::new(),
        };
        for t in 0..n as TxnId {
            r.release(t);
        }
        r
    }

    fn key(&self, t: TxnId) -> Reverse<(u32, TxnId)> {
        Reverse((self.priority[t as usize], t))
    }

    /// Offers an unplaced `t` to the heaps when it can go next.
    fn release(&mut self, t: TxnId) {
        if self.preds[t as usize] == 0 && !self.placed[t as usize] {
            if !std::mem::replace(&mut self.in_free[t as usize], true) {
                self.free.push(self.key(t));
            }
            if self.unsat[t as usize] == 0 && !std::mem::replace(&mut self.in_ready[t as usize], true) {
                self.ready.push(self.key(t));
            }
        }
    }

    fn reads(&self, t: TxnId) -> &'a [super::txns::Read] {
        self.txns.reads_of(t)
    }

    fn writes(&self, t: TxnId) -> &'a [Write] {
        self.txns.writes_of(t)
    }

    /// The readers of version `(k, w)`; `None` when nobody reads it.
    fn readers_of(&self, k: u32, w: TxnId) -> Option<&[TxnId]> {
        readers_of(&self.wanted, self.txns, k, w)
    }

    /// Whether some transaction reads version `(k, w)`.
    fn is_read(&self, k: u32, w: TxnId) -> bool {
        self.readers_of(k, w).is_some()
    }

    /// The unplaced readers of version `(k, w)`.
    fn pending_readers(&self, k: u32, w: TxnId) -> u32 {
        self.wanted.id(self.txns, k, w).map_or(0, |v| self.pending[v as usize])
    }

    /// `t`'s known successors and those of the edges kept since.
    fn successors(&self, t: TxnId) -> (&[TxnId], &[TxnId]) {
        let known = self.succ.row(t);
        (known, self.extra_succ.get(&t).map_or(&[][..], |x| &x[..]))
    }

    /// How many of `t`'s writes replace a version some other unplaced
    /// transaction still has to read.
    fn clobbers(&self, t: TxnId) -> usize {
        self.writes(t)
            .iter()
            .filter(|w| {
                let cur = self.current.get(&w.key.0).copied().unwrap_or(INIT);
                let own = self.reads(t).iter().any(|r| r.key.0 == w.key.0) as u32;
                self.pending_readers(w.key.0, cur) > own
            })
            .count()
    }

    /// The next transaction to place.
    fn step(&mut self) -> Step {
        let mut scanned: Vec<Reverse<(u32, TxnId)>> = Vec::with_capacity(SCAN);
        let mut pick = None;
        let mut patient: Option<((u32, bool, u32), TxnId)> = None;
        while scanned.len() < SCAN {
            let Some(Reverse((p, t))) = self.ready.pop() else { break };
            self.in_ready[t as usize] = false;
            if self.placed[t as usize] || self.unsat[t as usize] > 0 || self.preds[t as usize] > 0 {
                continue;
            }
            if self.clobbers(t) == 0 {
                let waits = self
                    .writes(t)
                    .iter()
                    .any(|w| self.is_read(w.key.0, t) && self.blind.get(&w.key.0).copied().unwrap_or(0) > 0);
                let lag = self.lagging_readers(t);
                if lag == 0 && !waits {
                    pick = Some(t);
                    break;
                }
                let score = (lag, waits, p);
                if patient.is_none_or(|(s, _)| score < s) {
                    patient = Some((score, t));
                }
            }
            scanned.push(Reverse((p, t)));
        }
        for e in scanned.iter() {
            if Some(e.0 .1) != pick && !std::mem::replace(&mut self.in_ready[e.0 .1 as usize], true) {
                self.ready.push(*e);
            }
        }
        if let Some(t) = pick.or(patient.map(|(_, t)| t)) {
            return Step::Clean(t);
        }
        if let Some(e) = scanned.first() {
            return Step::Forced(e.0 .1);
        }
        while let Some(Reverse((_, t))) = self.free.pop() {
            self.in_free[t as usize] = false;
            if !self.placed[t as usize] && self.preds[t as usize] == 0 {
                self.in_free[t as usize] = true;
                self.free.push(self.key(t));
                return Step::Forced(t);
            }
        }
        Step::Blocked
    }

    /// How many unplaced readers of `t`'s versions would still wait for
    /// something else (an unsatisfied read, an unplaced predecessor) once
    /// `t` is placed. Placing a writer whose readers cannot follow at once
    /// holds its keys for them, and every other writer of those keys has to
    /// wait: the usual way a greedy replay paints itself into a corner.
    fn lagging_readers(&mut self, t: TxnId) -> u32 {
        let mut dec = std::mem::take(&mut self.scratch_dec);
        let (known, extra) = self.successors(t);
        for &s in known.iter().chain(extra) {
            dec[s as usize] += 1;
        }
        self.touched.clear();
        for w in self.writes(t) {
            if let Some(rs) = readers_of(&self.wanted, self.txns, w.key.0, t) {
                for &r in rs {
                    if r != t && !self.placed[r as usize] {
                        self.scratch_got[r as usize] += 1;
                        self.touched.push(r);
                    }
                }
            }
        }
        let mut lag = 0;
        for i in 0..self.touched.len() {
            let r = self.touched[i] as usize;
            let got = std::mem::take(&mut self.scratch_got[r]);
            if got > 0 && (self.unsat[r] > got || self.preds[r] > dec[r]) {
                lag += 1;
            }
        }
        let (known, extra) = self.successors(t);
        for &s in known.iter().chain(extra) {
            dec[s as usize] = 0;
        }
        self.scratch_dec = dec;
        lag
    }

    /// Adds `by` to the pending readers of every version `t`'s reads
    /// could read (each candidate of a read of a repeated value).
    fn adjust_pending(&mut self, t: TxnId, by: i32) {
        for r in self.reads(t) {
            let k = r.key.0;
            let single;
            let writers: &[TxnId] = match r.from {
                Source::Init => {
                    single = [INIT];
                    &single
                }
                Source::Txn(w, _) => {
                    single = [w];
                    &single
                }
                Source::Choice(j) => &self.txns.choices[j as usize].cands,
            };
            for &w in writers {
                if let Some(v) = self.wanted.id(self.txns, k, w) {
                    if !self.wanted.readers(v).is_empty() {
                        let c = &mut self.pending[v as usize];
                        *c = c.wrapping_add_signed(by);
                    }
                }
            }
        }
    }

    fn place(&mut self, t: TxnId) {
        self.placed[t as usize] = true;
        self.pos[t as usize] = self.order.len() as u32;
        self.order.push(t);
        self.replaced_start.push(self.replaced.len() as u32);
        for w in self.writes(t) {
            if !self.is_read(w.key.0, t) {
                if let Some(c) = self.blind.get_mut(&w.key.0) {
                    *c -= 1;
                }
            }
        }
        self.adjust_pending(t, -1);
        // It becomes the current writer of its keys: readers of the old
        // version lose a satisfied read, readers of the new one gain one.
        for w in self.writes(t) {
            let k = w.key.0;
            let old = self.current.insert(k, t);
            self.replaced.push((k, old));
            self.adjust(k, old.unwrap_or(INIT), 1);
            self.adjust(k, t, -1);
        }
        let (known, extra) = self.successors(t);
        let succs: Vec<TxnId> = known.iter().chain(extra).copied().collect();
        for s in succs {
            self.preds[s as usize] -= 1;
            self.release(s);
        }
    }

    /// Undoes the last placement.
    fn undo(&mut self) {
        let Some(t) = self.order.pop() else { return };
        let (known, extra) = self.successors(t);
        let succs: Vec<TxnId> = known.iter().chain(extra).copied().collect();
        for s in succs {
            self.preds[s as usize] += 1;
        }
        let start = self.replaced_start.pop().unwrap_or(0) as usize;
        while self.replaced.len() > start {
            let Some((k, old)) = self.replaced.pop() else { break };
            match old {
                Some(o) => self.current.insert(k, o),
                None => self.current.remove(&k),
            };
            self.adjust(k, t, 1);
            self.adjust(k, old.unwrap_or(INIT), -1);
        }
        self.adjust_pending(t, 1);
        for w in self.writes(t) {
            if !self.is_read(w.key.0, t) {
                if let Some(c) = self.blind.get_mut(&w.key.0) {
                    *c += 1;
                }
            }
        }
        self.placed[t as usize] = false;
        self.release(t);
    }

    /// Adds `by` to the unsatisfied reads of the unplaced readers of
    /// version `(k, w)`, offering those left with none to the heaps.
    fn adjust(&mut self, k: u32, w: TxnId, by: i32) {
        let Some(readers) = readers_of(&self.wanted, self.txns, k, w) else { return };
        let mut freed = Vec::new();
        for &r in readers {
            if !self.placed[r as usize] {
                let u = &mut self.unsat[r as usize];
                *u = u.wrapping_add_signed(by);
                if *u == 0 {
                    freed.push(r);
                }
            }
        }
        for r in freed {
            self.release(r);
        }
    }

    /// Keeps `a` before `b` from now on; `b` must be unplaced.
    fn add_edge(&mut self, a: TxnId, b: TxnId) {
        self.extra_succ.entry(a).or_default().push(b);
        self.extra_pred.entry(b).or_default().push(a);
        if !self.placed[a as usize] {
            self.preds[b as usize] += 1;
        }
    }

    /// Forgets an edge [`Replay::add_edge`] kept.
    fn remove_edge(&mut self, a: TxnId, b: TxnId) {
        if let Some(v) = self.extra_succ.get_mut(&a) {
            if let Some(i) = v.iter().position(|&x| x == b) {
                v.swap_remove(i);
            }
        }
        if let Some(v) = self.extra_pred.get_mut(&b) {
            if let Some(i) = v.iter().position(|&x| x == a) {
                v.swap_remove(i);
            }
        }
        if !self.placed[a as usize] && !self.placed[b as usize] {
            self.preds[b as usize] -= 1;
            self.release(b);
        }
    }
}

/// Replays `txns` under `edges` (known edges, or those and the edges
/// pruning derived from them), earliest first by `priority` (per
/// transaction), placing a transaction anyway where none is ready (see the
/// module docs). `None` when the edges are cyclic.
pub fn serial_order<E: Ends>(txns: &Txns, edges: &[E], priority: &[u32]) -> Option<Guess> {
    let n = txns.len();
    let mut r = Replay::new(txns, edges, priority);
    let mut replayed = true;
    while r.order.len() < n {
        let t = match r.step() {
            Step::Clean(t) => t,
            Step::Forced(t) => {
                if r.unsat[t as usize] > 0 {
                    replayed = false;
                }
                t
            }
            Step::Blocked => return None,
        };
        r.place(t);
    }
    Some(Guess { order: r.order, replayed })
}

/// Replays `txns` under `edges` like [`serial_order`], but where it gets
/// stuck it asks [`diagnose`] which order it should have kept, undoes the
/// placements back to the one that order moves, keeps the order as an edge
/// and goes on (see the module docs). `reaches(a, b)` says whether the
/// `kept` holds the hints kept so far and finds paths over them and
/// `edges`, so that no hint closes a cycle (or that the hints on it are
/// forgotten). `Err` when stuck with no hint to follow, after more backtracks than transactions (and a thousand), or at
/// `deadline`; `Err` carries the backtracks made.
pub fn backtracking_order<E: Ends>(
    txns: &Txns,
    edges: &[E],
    priority: &[u32],
    deadline: Instant,
    kept: &mut dyn KeptOrders,
) -> Result<(Vec<TxnId>, usize), usize> {
    replay_until(Replay::new(txns, edges, priority), deadline, kept)
}

/// [`backtracking_order`] taking the edges, which it frees once the replay
/// has its own rows of them (they are not needed while it runs), and
/// reading the successors from `rows` (the edges' [`Rows::of`], which the
/// caller holds anyway) instead of a copy.
pub fn backtracking_order_owned<'a, E: Ends>(
    txns: &'a Txns,
    edges: Vec<E>,
    rows: &'a Rows,
    priority: &'a [u32],
    deadline: Instant,
    kept: &mut dyn KeptOrders,
) -> Result<(Vec<TxnId>, usize), usize> {
    let r = Replay::sharing(txns, &edges, Some(rows), priority);
    drop(edges);
    replay_until(r, deadline, kept)
}

/// The loop of [`backtracking_order`] on the replay `r`.
fn replay_until(mut r: Replay<'_>, deadline: Instant, kept: &mut dyn KeptOrders) -> Result<(Vec<TxnId>, usize), usize> {
    let n = r.txns.len();
    let mut tries: FxHashMap<(TxnId, TxnId), u32> = FxHashMap::default();
    let mut backtracks = 0usize;
    let mut undone = 0usize;
    let max_undone = (n + MIN_BACKTRACKS) * UNDO_PER_TXN;
    let max_backtracks = n + MIN_BACKTRACKS;
    // The orders kept last (the corner a replay going round in circles is
    // in), and what untangling such corners may cost in all.
    let mut recent: Vec<(TxnId, TxnId)> = Vec::with_capacity(untangle::RECENT);
    let (mut untangles, max_untangles) = (0usize, n / untangle::TXNS_PER_UNTANGLE + 1);
    let mut untangle_nodes = (n + MIN_BACKTRACKS) * untangle::NODES_PER_TXN;
    while r.order.len() < n {
        let t = match r.step() {
            Step::Clean(t) => t,
            Step::Forced(t) => {
                if backtracks > max_backtracks || (backtracks.is_multiple_of(16) && Instant::now() > deadline) {
                    return Err(backtracks);
                }
                let hint = diagnose(t, &r, &mut Vec::new()).ok_or(backtracks)?;
                // The first way out that closes no cycle; else one whose
                // cycles run through kept hints only, which are forgotten
                // (the later corner knows more than the earlier one did).
                // A way out already tried and undone goes last.
                let depth =
                    |b: TxnId| if r.placed[b as usize] { r.order.len() - r.pos[b as usize] as usize } else { 0 };
                let mut ways: Vec<(TxnId, TxnId)> =
                    hint.iter().copied().filter(|&(a, b)| a != b && undone + depth(b) <= max_undone).collect();
                ways.dedup();
                ways.sort_by_key(|w| tries.get(w).copied().unwrap_or(0));
                let mut chosen = None;
                for &(a, b) in &ways {
                    let mut stale = Vec::new();
                    while let Some(p) = kept.path(b, a) {
                        let on_path: Vec<(TxnId, TxnId)> =
                            p.windows(2).map(|w| (w[0], w[1])).filter(|&(x, y)| kept.is_kept(x, y)).collect();
                        if on_path.is_empty() {
                            break;
                        }
                        for (x, y) in on_path {
                            kept.forget(x, y);
                            stale.push((x, y));
                        }
                    }
                    if kept.path(b, a).is_none() {
                        chosen = Some((a, b, stale));
                        break;
                    }
                    for &(x, y) in &stale {
                        kept.keep(x, y);
                    }
                }
                let (a, b, stale) = chosen.ok_or(backtracks)?;
                let count = tries.entry((a, b)).or_default();
                *count += 1;
                if *count > MAX_TRIES {
                    // Going round in circles: the stale orders stay kept,
                    // and the corner is searched exhaustively instead.
                    for &(x, y) in &stale {
                        kept.keep(x, y);
                    }
                    let out = untangles < max_untangles
                        && untangle::untangle(
                            &mut r,
                            kept,
                            &recent,
                            untangle::Budget { nodes: &mut untangle_nodes, undone: &mut undone },
                        );
                    if !out {
                        return Err(backtracks);
                    }
                    untangles += 1;
                    for p in recent.drain(..) {
                        tries.remove(&p);
                    }
                    continue;
                }
                for (x, y) in stale {
                    r.remove_edge(x, y);
                }
                kept.keep(a, b);
                if recent.len() == untangle::RECENT {
                    recent.remove(0);
                }
                recent.push((a, b));
                backtracks += 1;
                while r.placed[b as usize] {
                    undone += 1;
                    r.undo();
                }
                r.add_edge(a, b);
                continue;
            }
            Step::Blocked => return Err(backtracks),
        };
        r.place(t);
    }
    Ok((r.order, backtracks))
}

/// The orders [`backtracking_order`] keeps beside the edges it was given,
/// and paths over both, so that no kept order closes a cycle.
pub trait KeptOrders {
    /// A path from `from` to `to` over the given edges and the kept orders,
    /// both ends included.
    fn path(&mut self, from: TxnId, to: TxnId) -> Option<Vec<TxnId>>;
    /// Keeps `a` before `b`.
    fn keep(&mut self, a: TxnId, b: TxnId);
    /// Forgets a kept order.
    fn forget(&mut self, a: TxnId, b: TxnId);
    /// Whether `a` before `b` is a kept order.
    fn is_kept(&self, a: TxnId, b: TxnId) -> bool;
}

/// Why `t` cannot be placed cleanly now (an unsatisfied read, or a write
/// that clobbers a version someone still has to read), as an order the
/// replay should have kept, following what holds `t` back to where the
/// chain of waiting starts or closes on itself:
/// * an unplaced predecessor: what holds it back;
/// * a read of `w`'s version that a placed `c` has overwritten: the reader
///   before `c`, or else `c` before `w`;
/// * a read whose writer is not placed yet: what holds that writer back;
/// * a write that would clobber `c`'s version, which reader `r` still has
///   to read: what holds `r` back, and when that leads nowhere new, `t`
///   before `c`, or else `r` before `t`.
fn diagnose(t: TxnId, r: &Replay<'_>, followed: &mut Vec<TxnId>) -> Option<Hint> {
    if followed.len() > 16 {
        return None;
    }
    followed.push(t);
    if r.preds[t as usize] > 0 {
        let ps = &r.pred_list[r.pred_start[t as usize] as usize..r.pred_start[t as usize + 1] as usize];
        let extra = r.extra_pred.get(&t).map_or(&[][..], |v| &v[..]);
        let &p = ps.iter().chain(extra).find(|&&p| !r.placed[p as usize] && !followed.contains(&p))?;
        return diagnose(p, r, followed);
    }
    let reads = r.reads(t);
    if r.unsat[t as usize] > 0 {
        for rd in reads {
            let cur = r.current.get(&rd.key.0).copied();
            match rd.from {
                Source::Txn(w, _) if cur != Some(w) => {
                    if r.placed[w as usize] {
                        // `c` overwrote `w` before `t` read it.
                        return cur.filter(|&c| c != t).map(|c| [(t, c), (c, w)]);
                    }
                    if followed.contains(&w) {
                        return None;
                    }
                    return diagnose(w, r, followed);
                }
                Source::Init => {
                    if let Some(c) = cur.filter(|&c| c != t) {
                        return Some([(t, c), (t, c)]);
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    for w in r.writes(t) {
        let k = w.key.0;
        let cur = r.current.get(&k).copied().unwrap_or(INIT);
        let own = reads.iter().any(|rd| rd.key.0 == k) as u32;
        if r.pending_readers(k, cur) <= own {
            continue;
        }
        let readers = r.readers_of(k, cur)?;
        let waiting = |x: &&TxnId| **x != t && !r.placed[**x as usize];
        // A reader not on the chain yet, whose own wait explains this one.
        if let Some(&x) = readers.iter().filter(waiting).find(|x| !followed.contains(x)) {
            if let Some(h) = diagnose(x, r, followed) {
                return Some(h);
            }
        }
        let &x = readers.iter().find(waiting)?;
        if cur != INIT && cur != t {
            // `t` before `c`, or `c`'s readers before `t`.
            return Some([(t, cur), (x, t)]);
        }
        return Some([(x, t), (x, t)]);
    }
    None
}
