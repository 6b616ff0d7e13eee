//! The serial execution a valid verdict rests on, for callers that need one
//! ([`super::ExactOptions::keep_serial`]: `isolde analyze --follow` collects
//! old transactions by it).
//!
//! The serial replay finds one directly. When the check needed more (the
//! replay under the edges pruning derived, or the solver), the verdict
//! rests on an acyclic graph: the known and derived edges, one side of each
//! constraint, the writers picked for ambiguous reads. Under
//! serializability every dependency is an edge from a commit to a begin,
//! so ordering the transactions by the position of their commit in a
//! topological order of that graph puts every writer before its readers,
//! every write order in place, and every reader before the writer that
//! overwrote what it read: a serial execution. It is confirmed by the
//! definition itself ([`super::serial::explains`]) before anyone gets it,
//! so a slip here costs the caller the order, never a wrong one.
//!
//! Under snapshot isolation the graph allows overlapping transactions, so
//! there is no serial execution to take from it: none is kept.
//!
//! Written by hand: a topological sort over the graph the check built.

use super::polygraph::{commit, DepEdge, Polygraph};
use super::txns::{TxnId, Txns};
use super::{prune, serial, Level, Semantics};
use crate::history::{History, OpId};

/// For each constraint of `g`, whether its first chain comes first in
/// `order` (each transaction once): the write order `order` implies.
pub(super) fn sides_by_order(g: &Polygraph, order: &[TxnId]) -> Vec<bool> {
    let mut pos = vec![u32::MAX; g.n];
    for (i, &t) in order.iter().enumerate() {
        pos[t as usize] = i as u32;
    }
    let head_pos = |c: u32| g.chain(c).first().map_or(u32::MAX, |&t| pos[t as usize]);
    g.constraints.iter().map(|c| head_pos(c.a) < head_pos(c.b)).collect()
}

/// The edges of the sides `a_first` picks for the constraints `open`.
pub(super) fn chosen_sides(g: &Polygraph, open: &[u32], a_first: &[bool]) -> Vec<DepEdge> {
    let mut out = Vec::new();
    let mut side = Vec::new();
    for &c in open {
        g.side(&g.constraints[c as usize], a_first[c as usize], &mut side);
        out.extend_from_slice(&side);
    }
    out
}

/// The serial execution of `txns` (completion ops, in order) that the
/// acyclic graph of `edges` describes at `level`, ties broken by
/// `priority` (per transaction, lower first); empty under snapshot
/// isolation or when the order is not a serial execution after all.
pub(super) fn serial_execution(
    h: &History,
    txns: &Txns,
    g: &Polygraph,
    level: Level,
    edges: impl Iterator<Item = DepEdge> + Clone,
    priority: &[u32],
) -> Vec<OpId> {
    if level.semantics != Semantics::Serializable {
        return Vec::new();
    }
    let (offsets, targets) = prune::bc_csr(g, edges);
    let Some(nodes) = prune::topo(&offsets, &targets, priority) else { return Vec::new() };
    let order: Vec<TxnId> = nodes.into_iter().filter(|&v| v % 2 == commit(0) % 2).map(|v| v / 2).collect();
    as_ops(h, txns, level, &order)
}

/// `order` as completion ops, when it is a serial execution at `level`.
pub(super) fn as_ops(h: &History, txns: &Txns, level: Level, order: &[TxnId]) -> Vec<OpId> {
    match serial::explains(h, txns, level.order, order) {
        true => order.iter().map(|&t| txns.op[t as usize]).collect(),
        false => Vec::new(),
    }
}

/// The serial execution a replay's `order` stands for, given the edges
/// `base` it was checked under: the order itself when it is one, else the
/// order of the graph its write order implies.
pub(super) fn from_replay(
    h: &History,
    txns: &Txns,
    g: &Polygraph,
    level: Level,
    base: &[DepEdge],
    order: &[TxnId],
) -> Vec<OpId> {
    let direct = as_ops(h, txns, level, order);
    if !direct.is_empty() || level.semantics != Semantics::Serializable {
        return direct;
    }
    let a_first = sides_by_order(g, order);
    let all: Vec<u32> = (0..g.constraints.len() as u32).collect();
    let sides = chosen_sides(g, &all, &a_first);
    let mut rank = vec![0u32; g.n];
    for (i, &t) in order.iter().enumerate() {
        rank[t as usize] = i as u32;
    }
    serial_execution(h, txns, g, level, base.iter().copied().chain(sides), &rank)
}
