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
//! composed edges. Under prefix consistency the ww edges are `c(u) → c(v)`
//! as well: writers of a key are ordered by their commits, so two of them
//! may overlap (SI's write-conflict rule is the one thing prefix
//! consistency drops), while a reader still sees every commit before its
//! begin and none after.
//!
//! This file holds the polygraph's data and its begin/commit nodes;
//! [`super::builder`] builds it from a history, and pruning
//! ([`super::prune`]) and the solver read it.

use super::txns::{TxnId, Txns};
use super::{OrderKind, Semantics};
use crate::history::{History, KeyId, NONE};
use crate::infer::order;

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
    pub(super) fn data(from: TxnId, to: TxnId, dep: Dep, key: KeyId) -> DepEdge {
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
    pub(super) readers: Vec<(TxnId, u32, TxnId)>,
    /// For each chain, the range of `readers` that read its tail's version.
    pub(super) tail_readers: Vec<(u32, u32)>,
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
    pub(super) fn tail_readers(&self, c: u32) -> impl Iterator<Item = TxnId> + '_ {
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
    match (e.dep, semantics) {
        (_, Semantics::Serializable) => (commit(e.from), begin(e.to)),
        (Dep::Rw, _) => (begin(e.from), commit(e.to)),
        // Prefix consistency orders writers by commit only: they may overlap.
        (Dep::Ww, Semantics::Prefix) => (commit(e.from), commit(e.to)),
        _ => (commit(e.from), begin(e.to)),
    }
}

/// Appends the edges of `order` between `txns`: session order (each
/// process's transactions in history order) unless `order` is none, and
/// realtime order (Elle's reduction: each completion linked to the frontier
/// of operations before the invocation) when it is realtime.
pub fn order_edges(h: &History, txns: &Txns, order: OrderKind, out: &mut Vec<DepEdge>) {
    each_order_edge(h, txns, order, |from, to, dep| out.push(DepEdge { from, to, dep, key: NONE }));
}

/// [`order_edges`] as `(from, to)` pairs, in the same order (what the
/// serial replay needs of them, half the bytes).
pub fn order_pairs(h: &History, txns: &Txns, order: OrderKind) -> Vec<(TxnId, TxnId)> {
    let mut out = Vec::new();
    each_order_edge(h, txns, order, |from, to, _| out.push((from, to)));
    out
}

/// Calls `edge(from, to, dep)` for each edge of [`order_edges`], in order.
fn each_order_edge(h: &History, txns: &Txns, order: OrderKind, mut edge: impl FnMut(TxnId, TxnId, Dep)) {
    if order != OrderKind::None {
        let mut last: rustc_hash::FxHashMap<i64, TxnId> = rustc_hash::FxHashMap::default();
        for t in 0..txns.len() as TxnId {
            if let Some(p) = last.insert(txns.process[t as usize], t) {
                edge(p, t, Dep::Session);
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
                edge(a, b, Dep::Realtime);
            }
        }
    }
}
