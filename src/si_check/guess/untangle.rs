//! Getting a backtracking replay out of a corner it keeps going round in.
//!
//! [`super::backtracking_order`] follows one hint at a time: where it gets
//! stuck it keeps the order [`super::diagnose`] suggests and forgets the
//! kept orders that would close a cycle with it. In a knot of a few dozen
//! transactions (several sessions reading and overwriting the same hot keys
//! within a few steps of each other) two hints can undo each other for
//! ever: each one's corner suggests the order the other forgot. The replay
//! used to give up there (after [`super::MAX_TRIES`] keeps of the same
//! order), and with it every placement made so far; on large valid
//! histories such a knot is met sooner or later (rw-register, 4M
//! transactions: at the 3,177,489th placement), so the whole replay failed
//! and the check went on to the polygraph.
//!
//! Instead, the knot is searched exhaustively: the placements back to the
//! earliest transaction of the orders kept last (and at least [`BACK`]'s
//! first number of placements) are undone, the kept orders into the part
//! to redo (guesses, not facts) are forgotten, and a depth-first search places only
//! *clean* transactions (every known predecessor placed, every read reading
//! the current writer, no write replacing a version an unplaced transaction
//! still reads: exactly the steps a serial execution is made of), the
//! replay's preferred one first, until it is [`AHEAD`] placements past the
//! point where the replay was stuck. States already searched (the same set
//! of placed transactions) are not searched again, and the search is
//! bounded by a number of placements, per knot and per replay (linear in
//! the history in all). A search that fails is tried again from further
//! back; when the last one fails the replay gives up as before; one that succeeds hands its placements to the replay, which goes
//! on as usual (and may still undo them later). The replay's order is
//! checked by its caller either way, so this changes what it finds, never
//! what a found order proves.

use super::{KeptOrders, Replay};
use crate::si_check::txns::TxnId;
use rustc_hash::FxHashSet;

/// Orders kept last that an untangling forgets (and whose transactions it
/// reorders).
pub(super) const RECENT: usize = 64;

/// Placements an untangling undoes before the point where the replay was
/// stuck (at least back to the earliest of the recent orders), one try
/// after the other.
const BACK: [usize; 3] = [64, 256, 1024];

/// Placements past the stuck point after which a search counts as out of
/// the knot.
const AHEAD: usize = 64;

/// Placements one untangling may try.
const NODES_PER_KNOT: usize = 1 << 16;

/// Placements all untanglings of one replay may try, per transaction.
pub(super) const NODES_PER_TXN: usize = 4;

/// Transactions per untangling a replay may make (one more on any replay).
pub(super) const TXNS_PER_UNTANGLE: usize = 1000;

/// What an untangling may spend: placements tried (shared by the replay's
/// untanglings) and placements undone (the replay's own count, added to).
pub(super) struct Budget<'b> {
    pub nodes: &'b mut usize,
    pub undone: &'b mut usize,
}

/// Searches the knot around the orders `recent` kept last (see the module
/// docs), from the earliest of their placed transactions, then from
/// further back where that finds no way out. `true`: `r` is [`AHEAD`]
/// placements past where it was (or done), and the kept orders into the
/// searched part are forgotten (in `r` and in `kept`). `false`: no way out
/// within the budget, and the replay should give up.
pub(super) fn untangle(
    r: &mut Replay<'_>,
    kept: &mut dyn KeptOrders,
    recent: &[(TxnId, TxnId)],
    budget: Budget<'_>,
) -> bool {
    let n = r.txns.len();
    let stuck = r.order.len();
    let earliest = recent
        .iter()
        .flat_map(|&(a, b)| [a, b])
        .filter(|&t| r.placed[t as usize])
        .map(|t| r.pos[t as usize] as usize)
        .min()
        .unwrap_or(stuck);
    for back in BACK {
        let start = earliest.min(stuck.saturating_sub(back));
        while r.order.len() > start {
            *budget.undone += 1;
            r.undo();
        }
        forget_kept_into_unplaced(r, kept, start);
        let nodes = NODES_PER_KNOT.min(*budget.nodes);
        let mut search = Search { target: (stuck + AHEAD).min(n), nodes, seen: FxHashSet::default(), hash: 0 };
        let out = search.from(r);
        *budget.nodes -= nodes - search.nodes;
        if out {
            return true;
        }
    }
    false
}

/// Forgets every kept order into an unplaced transaction from one that is
/// unplaced or placed at `start` or later: guesses about the part of the
/// order the search redoes.
fn forget_kept_into_unplaced(r: &mut Replay<'_>, kept: &mut dyn KeptOrders, start: usize) {
    let mut into: Vec<(TxnId, TxnId)> = Vec::new();
    for (&a, bs) in &r.extra_succ {
        if r.placed[a as usize] && (r.pos[a as usize] as usize) < start {
            continue;
        }
        into.extend(bs.iter().filter(|&&b| !r.placed[b as usize]).map(|&b| (a, b)));
    }
    into.sort_unstable();
    for (a, b) in into {
        kept.forget(a, b);
        r.remove_edge(a, b);
    }
}

/// A depth-first search over clean placements.
struct Search {
    /// Placements to reach.
    target: usize,
    /// Placements it may still try.
    nodes: usize,
    /// Hashes of the sets of placed transactions searched already.
    seen: FxHashSet<u64>,
    /// The hash of the placements made by the search so far.
    hash: u64,
}

impl Search {
    /// Whether the search reaches its target from `r`'s state; on `false`
    /// every placement it made is undone.
    fn from(&mut self, r: &mut Replay<'_>) -> bool {
        if r.order.len() >= self.target {
            return true;
        }
        for t in clean(r) {
            if self.nodes == 0 {
                return false;
            }
            self.nodes -= 1;
            let delta = change(r, t);
            self.hash ^= delta;
            if self.seen.insert(self.hash) {
                r.place(t);
                if self.from(r) {
                    return true;
                }
                r.undo();
            }
            self.hash ^= delta;
        }
        false
    }
}

/// The transactions `r` may place cleanly now, the replay's preferred one
/// first (the order of [`Replay::step`]: fewest lagging readers, no blind
/// write to wait for, earliest).
fn clean(r: &mut Replay<'_>) -> Vec<TxnId> {
    let mut ready: Vec<TxnId> = r.ready.iter().map(|e| e.0 .1).collect();
    ready.sort_unstable();
    ready.dedup();
    ready.retain(|&t| {
        let u = t as usize;
        !r.placed[u] && r.unsat[u] == 0 && r.preds[u] == 0 && r.clobbers(t) == 0
    });
    let mut scored: Vec<((u32, bool, u32), TxnId)> = Vec::with_capacity(ready.len());
    for t in ready {
        let waits =
            r.writes(t).iter().any(|w| r.is_read(w.key.0, t) && r.blind.get(&w.key.0).copied().unwrap_or(0) > 0);
        scored.push(((r.lagging_readers(t), waits, r.priority[t as usize]), t));
    }
    scored.sort_unstable();
    scored.into_iter().map(|(_, t)| t).collect()
}

/// How placing `t` changes the hash of `r`'s state (the set of placed
/// transactions and the current writer of each key): two searches that
/// reach the same state by different orders go on alike.
fn change(r: &Replay<'_>, t: TxnId) -> u64 {
    let mut d = mix(t);
    for w in r.writes(t) {
        let k = u64::from(w.key.0) << 32;
        let old = r.current.get(&w.key.0).copied().unwrap_or(super::INIT);
        d ^= mix64(k | u64::from(old)) ^ mix64(k | u64::from(t));
    }
    d
}

/// A 64-bit hash of one transaction (splitmix64), so that a set of them
/// hashes to the exclusive or of theirs.
fn mix(t: TxnId) -> u64 {
    mix64(u64::from(t) ^ 0x5bd1_e995_0000_0000)
}

/// splitmix64's finalizer.
fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::super::{KeptOrders, Replay};
    use super::*;
    use crate::si_check::serial::explains;
    use crate::si_check::txns::from_edn as history;
    use crate::si_check::OrderKind;

    /// Kept orders as a list (no path search: the tests keep no order
    /// that a path could run through).
    #[derive(Default)]
    struct List(Vec<(TxnId, TxnId)>);

    impl KeptOrders for List {
        fn path(&mut self, _: TxnId, _: TxnId) -> Option<Vec<TxnId>> {
            None
        }
        fn keep(&mut self, a: TxnId, b: TxnId) {
            self.0.push((a, b));
        }
        fn forget(&mut self, a: TxnId, b: TxnId) {
            if let Some(i) = self.0.iter().position(|&p| p == (a, b)) {
                self.0.swap_remove(i);
            }
        }
        fn is_kept(&self, a: TxnId, b: TxnId) -> bool {
            self.0.contains(&(a, b))
        }
    }

    /// Keeps `a` before `b` in the replay and in `kept`, as the replay does.
    fn keep(r: &mut Replay<'_>, kept: &mut List, a: TxnId, b: TxnId) {
        r.add_edge(a, b);
        kept.keep(a, b);
    }

    /// 0 writes x = 1, 1 writes x = 2 (read by nobody), 2 reads x = 1.
    const BLIND_OVERWRITE: &str = "{:type :ok, :process 1, :value [[:w :x 1]]}
         {:type :ok, :process 2, :value [[:w :x 2]]}
         {:type :ok, :process 3, :value [[:r :x 1]]}";

    /// A kept order that cannot hold (the reader before its writer) and a
    /// wrong placement: the search forgets the order, undoes the placement
    /// and finds a serial execution.
    #[test]
    fn a_wrong_kept_order_is_forgotten_and_the_corner_replayed() {
        let (h, txns) = history(BLIND_OVERWRITE);
        let priority = [0, 1, 2];
        let mut r = Replay::new(&txns, &[] as &[(TxnId, TxnId)], &priority);
        let mut kept = List::default();
        keep(&mut r, &mut kept, 2, 0);
        r.place(1);
        assert!(clean(&mut r).is_empty(), "stuck: 0 waits for 2, 2 for 0");
        let (mut nodes, mut undone) = (1000, 0);
        let recent = [(2, 0)];
        assert!(untangle(&mut r, &mut kept, &recent, Budget { nodes: &mut nodes, undone: &mut undone }));
        assert_eq!(r.order.len(), 3);
        assert!(explains(&h, &txns, OrderKind::None, &r.order), "{:?} is a serial execution", r.order);
        assert!(kept.0.is_empty() && r.extra_succ.values().all(|v| v.is_empty()));
        assert_eq!(undone, 1);
        assert!(nodes < 1000);
    }

    /// Write skew: no serial execution exists, so the search places what
    /// it cleanly can, finds no way on, and leaves everything unplaced.
    #[test]
    fn no_way_out_where_no_serial_execution_exists() {
        let (h, txns) = history(
            "{:type :ok, :process 1, :value [[:w :x 1] [:w :y 1]]}
             {:type :ok, :process 2, :value [[:r :x 1] [:w :y 2]]}
             {:type :ok, :process 3, :value [[:r :y 1] [:w :x 2]]}",
        );
        let priority = [0, 1, 2];
        let mut r = Replay::new(&txns, &[] as &[(TxnId, TxnId)], &priority);
        r.place(0);
        assert!(clean(&mut r).is_empty(), "either writer clobbers the other's read");
        let (mut nodes, mut undone) = (1000, 0);
        let out = untangle(&mut r, &mut List::default(), &[], Budget { nodes: &mut nodes, undone: &mut undone });
        assert!(!out);
        assert!(r.order.is_empty(), "a failed search undoes what it placed");
        for order in [[0, 1, 2], [0, 2, 1]] {
            assert!(!explains(&h, &txns, OrderKind::None, &order));
        }
    }

    /// The search stops at its placement budget.
    #[test]
    fn the_search_stops_at_its_budget() {
        let (_, txns) = history(BLIND_OVERWRITE);
        let priority = [0, 1, 2];
        let mut r = Replay::new(&txns, &[] as &[(TxnId, TxnId)], &priority);
        r.place(0);
        r.place(1);
        let (mut nodes, mut undone) = (0, 0);
        let out = untangle(&mut r, &mut List::default(), &[], Budget { nodes: &mut nodes, undone: &mut undone });
        assert!(!out);
        assert_eq!(undone, 2);
    }
}
