//! Reference deciders the fast checkers are tested against.
//!
//! * [`saturate`]: weak.md §3.1, the textbook construction: for every read
//!   and *every* other writer of its key, test the level's premise directly
//!   (reachability by plain search), add the forced edge, then test
//!   acyclicity. Quadratic; no cleverness to get wrong.
//! * [`enumerate`]: tries every commit order of a small history (up to
//!   [`MAX_ENUMERATED`] transactions besides `⊥`) against the axioms of
//!   weak.md §1.2 directly, for all six levels including prefix, snapshot
//!   isolation and serializability.
//!
//! Both decide the front end's history with every assignment of writers to
//! reads of repeated values: valid iff some assignment is.

use super::front::{Front, TxnId, BOTTOM};
use super::{resolve, Level};

/// The most transactions (besides `⊥`) [`enumerate`] accepts.
pub const MAX_ENUMERATED: usize = 8;

/// A level of the axiomatic hierarchy (weak.md §1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Axiom {
    /// Read committed.
    ReadCommitted,
    /// Read atomic.
    ReadAtomic,
    /// Causal consistency.
    Causal,
    /// Prefix consistency.
    Prefix,
    /// Snapshot isolation.
    SnapshotIsolation,
    /// Serializability.
    Serializable,
}

impl From<Level> for Axiom {
    fn from(l: Level) -> Axiom {
        match l {
            Level::ReadCommitted => Axiom::ReadCommitted,
            Level::ReadAtomic => Axiom::ReadAtomic,
            Level::Causal => Axiom::Causal,
        }
    }
}

/// Every writer assignment of `f`'s ambiguous reads.
fn assignments(f: &Front) -> Vec<Vec<TxnId>> {
    let mut out = Vec::new();
    let mut pick = vec![0usize; f.choices.len()];
    loop {
        out.push(resolve(f, &pick));
        let mut i = 0;
        loop {
            if i == pick.len() {
                return out;
            }
            pick[i] += 1;
            if pick[i] < f.choices[i].len() {
                break;
            }
            pick[i] = 0;
            i += 1;
        }
    }
}

/// `so ∪ wr ∪ version edges` as an adjacency matrix (`⊥` first in `so`).
fn base_edges(f: &Front, wr: &[TxnId]) -> Vec<Vec<bool>> {
    let n = f.len();
    let mut e = vec![vec![false; n]; n];
    for x in e[BOTTOM as usize].iter_mut().skip(1) {
        *x = true;
    }
    for s in &f.sessions {
        for (i, &a) in s.iter().enumerate() {
            for &b in &s[i + 1..] {
                e[a as usize][b as usize] = true;
            }
        }
    }
    for t in 1..n as TxnId {
        for i in f.read_start[t as usize]..f.read_start[t as usize + 1] {
            let w = wr[i as usize];
            if w != t {
                e[w as usize][t as usize] = true;
            }
        }
    }
    for v in &f.version_edges {
        e[v.from as usize][v.to as usize] = true;
    }
    e
}

/// `so ∪ wr` one step: `t₂ (so ∪ wr) t₃`.
fn so_wr(f: &Front, wr: &[TxnId], t2: TxnId, t3: TxnId) -> bool {
    if t2 == BOTTOM {
        return true;
    }
    let same = f.session[t2 as usize] == f.session[t3 as usize] && f.pos[t2 as usize] < f.pos[t3 as usize];
    same || f.reads_of(t3).iter().enumerate().any(|(i, _)| wr[f.read_start[t3 as usize] as usize + i] == t2)
}

/// `t₂ (so ∪ wr)⁺ t₃`, by search.
fn reaches(f: &Front, wr: &[TxnId], t2: TxnId, t3: TxnId) -> bool {
    let n = f.len();
    let mut seen = vec![false; n];
    let mut stack = vec![t2];
    while let Some(v) = stack.pop() {
        for w in 0..n as TxnId {
            if !seen[w as usize] && w != v && so_wr(f, wr, v, w) {
                if w == t3 {
                    return true;
                }
                seen[w as usize] = true;
                stack.push(w);
            }
        }
    }
    false
}

fn acyclic(e: &[Vec<bool>]) -> bool {
    let n = e.len();
    let mut indeg: Vec<usize> = (0..n).map(|b| (0..n).filter(|&a| e[a][b]).count()).collect();
    let mut queue: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut done = 0;
    while let Some(v) = queue.pop() {
        done += 1;
        for b in 0..n {
            if e[v][b] {
                indeg[b] -= 1;
                if indeg[b] == 0 {
                    queue.push(b);
                }
            }
        }
    }
    done == n
}

/// Decides `level` by saturation (weak.md §3.1): true iff it holds.
pub fn saturate(f: &Front, level: Level) -> bool {
    if !f.findings.is_empty() {
        return false;
    }
    assignments(f).iter().any(|wr| saturate_one(f, wr, level))
}

fn saturate_one(f: &Front, wr: &[TxnId], level: Level) -> bool {
    let n = f.len();
    let mut e = base_edges(f, wr);
    for t3 in 1..n as TxnId {
        let base = f.read_start[t3 as usize] as usize;
        let rs = f.reads_of(t3);
        for (p, r) in rs.iter().enumerate() {
            let t1 = wr[base + p];
            for t2 in 0..n as TxnId {
                if t2 == t1 || !f.writes_key(t2, r.key) {
                    continue;
                }
                let premise = match level {
                    Level::ReadCommitted => (0..p).any(|q| wr[base + q] == t2),
                    Level::ReadAtomic => so_wr(f, wr, t2, t3),
                    Level::Causal => t2 == BOTTOM || reaches(f, wr, t2, t3),
                };
                if premise {
                    e[t2 as usize][t1 as usize] = true;
                }
            }
        }
    }
    (0..n).all(|v| !e[v][v]) && acyclic(&e)
}

/// Decides `axiom` by trying every commit order; `None` when the history
/// has more than [`MAX_ENUMERATED`] transactions.
pub fn enumerate(f: &Front, axiom: Axiom) -> Option<bool> {
    if f.len() - 1 > MAX_ENUMERATED {
        return None;
    }
    if !f.findings.is_empty() {
        return Some(false);
    }
    Some(assignments(f).iter().any(|wr| enumerate_one(f, wr, axiom)))
}

fn enumerate_one(f: &Front, wr: &[TxnId], axiom: Axiom) -> bool {
    let n = f.len();
    let e = base_edges(f, wr);
    // pos[t] = position in the commit order being built.
    let mut order: Vec<TxnId> = vec![BOTTOM];
    let mut placed = vec![false; n];
    placed[0] = true;
    extend(f, wr, &e, axiom, &mut order, &mut placed)
}

/// Depth-first over the linear extensions of `e`.
fn extend(f: &Front, wr: &[TxnId], e: &[Vec<bool>], axiom: Axiom, order: &mut Vec<TxnId>, placed: &mut [bool]) -> bool {
    let n = f.len();
    if order.len() == n {
        return satisfies(f, wr, axiom, order);
    }
    for t in 1..n {
        if placed[t] || (0..n).any(|a| e[a][t] && !placed[a]) {
            continue;
        }
        placed[t] = true;
        order.push(t as TxnId);
        if extend(f, wr, e, axiom, order, placed) {
            return true;
        }
        order.pop();
        placed[t] = false;
    }
    false
}

/// Whether the commit order `order` (every transaction once, `⊥` first)
/// satisfies `axiom` (weak.md §1.2) with the writers `wr`. It does not check
/// that `order` extends `so ∪ wr`; [`extends`] does.
pub fn satisfies(f: &Front, wr: &[TxnId], axiom: Axiom, order: &[TxnId]) -> bool {
    let n = f.len();
    let mut at = vec![0usize; n];
    for (i, &t) in order.iter().enumerate() {
        at[t as usize] = i;
    }
    let co = |a: TxnId, b: TxnId| at[a as usize] < at[b as usize];
    for t3 in 1..n as TxnId {
        let base = f.read_start[t3 as usize] as usize;
        for (p, r) in f.reads_of(t3).iter().enumerate() {
            let t1 = wr[base + p];
            for t2 in 0..n as TxnId {
                if t2 == t1 || t2 == t3 || !f.writes_key(t2, r.key) {
                    continue;
                }
                let prefix = || (0..n as TxnId).any(|t4| (t2 == t4 || co(t2, t4)) && t4 != t3 && so_wr(f, wr, t4, t3));
                let premise = match axiom {
                    Axiom::ReadCommitted => (0..p).any(|q| wr[base + q] == t2),
                    Axiom::ReadAtomic => so_wr(f, wr, t2, t3),
                    Axiom::Causal => t2 == BOTTOM || reaches(f, wr, t2, t3),
                    Axiom::Prefix => prefix(),
                    Axiom::SnapshotIsolation => {
                        prefix()
                            || (1..n as TxnId).any(|t4| {
                                t4 != t3
                                    && (t2 == t4 || co(t2, t4))
                                    && co(t4, t3)
                                    && f.writes_of(t3).iter().any(|y| f.writes_key(t4, *y))
                            })
                    }
                    Axiom::Serializable => co(t2, t3),
                };
                if premise && !co(t2, t1) {
                    return false;
                }
            }
        }
    }
    true
}

/// Whether `order` lists every transaction once, `⊥` first, and extends
/// `so ∪ wr ∪ version edges` under the writers `wr`.
pub fn extends(f: &Front, wr: &[TxnId], order: &[TxnId]) -> bool {
    let n = f.len();
    if order.len() != n || order.first() != Some(&BOTTOM) {
        return false;
    }
    let mut at = vec![usize::MAX; n];
    for (i, &t) in order.iter().enumerate() {
        if at[t as usize] != usize::MAX {
            return false;
        }
        at[t as usize] = i;
    }
    let e = base_edges(f, wr);
    (0..n).all(|a| (0..n).all(|b| !e[a][b] || at[a] < at[b]))
}
