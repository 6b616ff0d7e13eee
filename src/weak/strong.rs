//! What causal consistency tells the exact snapshot-isolation and
//! serializability check (weak.md §3.6).
//!
//! # Forced edges are write orders of every stronger explanation
//!
//! Causal consistency forces `t₂ → t₁` when a transaction `t₃` read key `x`
//! from `t₁`, `t₂ ≠ t₁` also writes `x`, and `t₂ (so ∪ wr)⁺ t₃`. Every
//! snapshot-isolation (hence every serializable) explanation of the history
//! installs `t₂`'s version of `x` before `t₁`'s: otherwise `t₁ ≪ t₂` in the
//! version order of `x`, so `t₃` anti-depends on `t₁`'s successor `t₁'`
//! (`t₃ →rw t₁'`, or `t₃ = t₁'` itself), `t₁' →ww* t₂`, and the path
//! `t₂ (so ∪ wr)⁺ t₃` closes a cycle with a single anti-dependency, which
//! snapshot isolation forbids (and with no anti-dependency at all when
//! `t₃ = t₁'`). So each forced edge is a ww edge the exact check may add to
//! its polygraph's known graph before pruning: sound (it removes no
//! explanation), and it orders write chains the reads alone leave open.
//!
//! The argument needs the path and the read to exist in *every* explanation
//! the exact check considers, so the edges are computed on the part of the
//! history both checks see identically ([`known_orders`]):
//!
//! * only reads whose writer the exact check ([`crate::si_check::txns`])
//!   also knows for certain — the same reading and writing operations, the
//!   same key — take part: a read of a repeated value (weak.md §4.4), whose
//!   writer is a choice, gives no edge and no path; a read the exact check
//!   drops (garbage, aborted, intermediate, its own future write) gives
//!   none either. Dropping reads only removes forced edges.
//! * `:fail` transactions are in neither; an `:info` transaction is a
//!   transaction of the exact check only when a committed read observed it,
//!   and otherwise has no outgoing edge here (no read of it is kept, and it
//!   ends its session), so it is never on a path; an edge names it only if
//!   the exact check has it as a writer of the key.
//! * the initial state `⊥` is never an endpoint: an edge into `⊥` is a
//!   causal violation (then no edge is passed at all), and `⊥` writes no
//!   forced edge.
//! * internal reads are no external reads in either check.
//!
//! # Sessions
//!
//! Session order is part of the path `(so ∪ wr)⁺`, so edges computed with
//! sessions hold for Elle's `strong-session-…` levels but not for the plain
//! `snapshot-isolation` and `serializable`, which have no session order
//! (weak.md §2). [`known_orders`] takes the session semantics and records
//! it: with [`Sessions::Process`] the orders apply to the session levels
//! only, with [`Sessions::None`] (every transaction its own session) to
//! every level. The exact check's session order links every included
//! transaction of a process in history order, a superset of the front
//! end's sessions (which also end at an `:info`), so every session step of
//! a path is one of its paths. Realtime levels get only the session-free
//! orders: the polygraph's realtime graph does not contain session edges.
//!
//! # A causal violation answers the session levels
//!
//! Strong-session snapshot isolation and serializability imply Biswas–Enea
//! causal consistency with sessions (`SER ⊂ SI ⊂ PC ⊂ CC`, all with session
//! order), so when the weak check of a run finds causal consistency (or a
//! weaker level) violated, the driver does not search them: they are
//! reported refuted by that violation ([`implied_refuted`]). The plain
//! levels (and the realtime ones) are refuted the same way only when the
//! violation persists without session order (the weak check's recheck with
//! [`Sessions::None`]); otherwise they are searched, with orders computed
//! without sessions. Refuting plain levels from a session violation would
//! be unsound: a history may break causal consistency only through session
//! order and still be serializable without it. Recomputing causal
//! consistency without sessions is what the weak check already does for
//! the boundary, so this choice costs nothing extra.
//!
//! When the history itself breaks causal consistency on the shared part
//! (a cycle in `so ∪ wr ∪ forced`), no order is passed: the exact check
//! finds the violation itself, with witnesses made of its own edges.

use super::front::{self, ReadFrom, Sessions, BOTTOM};
use super::graph;
use super::{cc, Forced, Level, Options};
use crate::anomaly::Workload;
use crate::history::{History, OpId};
use crate::si_check::txns::{self, Source};
use crate::si_check::{KnownOrder, KnownOrders, OrderKind};

/// Causal consistency's forced edges of the register history `h` under
/// `sessions`, as write orders for the exact check (see the module docs).
/// `None` when they cannot be computed (the front end rejects the history,
/// the vector clocks exceed `opts.max_clock_entries`) or when the shared
/// part of the history already violates causal consistency.
pub fn known_orders(h: &History, sessions: Sessions, opts: &Options) -> Option<KnownOrders> {
    let mut g = front::build(h, Workload::RwRegister, sessions).ok()?;
    keep_shared_reads(h, &mut g)?;
    let wr = super::resolve(&g, &[]);
    let so_wr = graph::order_of(&g, &wr, &[])?;
    let mut forced = Vec::new();
    cc::forced(&g, &wr, &so_wr, opts.max_clock_entries, &mut forced).ok()?;
    drop(so_wr);
    graph::order_of(&g, &wr, &forced)?;
    drop(wr);
    // Exactly the edges between two transactions, at their number.
    let inner = |e: &&Forced| e.from != BOTTOM && e.to != BOTTOM;
    let mut orders = Vec::with_capacity(forced.iter().filter(inner).count());
    orders.extend(forced.iter().filter(inner).map(|e| KnownOrder {
        from: g.op[e.from as usize],
        to: g.op[e.to as usize],
        key: g.reads[e.read as usize].key,
        reader: g.op[e.reader as usize],
    }));
    drop((forced, g));
    let order = match sessions {
        Sessions::Process => OrderKind::Session,
        Sessions::None => OrderKind::None,
    };
    Some(KnownOrders { order, orders: orders.into() })
}

/// Restricts `f` in place to the reads both checks resolve alike (see the
/// module docs): an external read of a known writer that the exact check's
/// transactions also read, from the same writer or both from the initial
/// state. Frees what the forced orders do not use (choices, findings, the
/// operations' transactions). `None` when the exact check's transactions
/// cannot be extracted.
fn keep_shared_reads(h: &History, f: &mut front::Front) -> Option<()> {
    let si = txns::extract(h).ok()?;
    // The exact check's transaction of an operation.
    let si_txn = |o: OpId| si.op.binary_search(&o).ok().map(|t| t as txns::TxnId);
    let mut kept = 0usize;
    for t in 0..f.len() {
        let (from, to) = (f.read_start[t] as usize, f.read_start[t + 1] as usize);
        f.read_start[t] = kept as u32;
        let reader = if t == BOTTOM as usize { None } else { si_txn(f.op[t]) };
        for i in from..to {
            let r = f.reads[i];
            let ReadFrom::Txn(w) = r.from else { continue };
            let Some(reader) = reader else { continue };
            let shared = match si.read_of(reader, r.key).map(|x| x.from) {
                Some(Source::Init) => w == BOTTOM,
                Some(Source::Txn(sw, _)) => w != BOTTOM && si_txn(f.op[w as usize]) == Some(sw),
                _ => false,
            };
            if shared {
                f.reads[kept] = r;
                kept += 1;
            }
        }
    }
    let n = f.len();
    f.read_start[n] = kept as u32;
    f.reads.truncate(kept);
    f.reads.shrink_to_fit();
    f.choices = Vec::new();
    f.findings = Vec::new();
    f.txn_of_op = Vec::new();
    Some(())
}

/// Whether a weak violation refutes the exact level `exact` without
/// search: the weakest level violated is `level` (at most causal
/// consistency, which every exact level implies) and `without_sessions`
/// says whether the violation persists without session order. Session
/// levels are refuted by any violation; plain and realtime levels only by
/// one without sessions (the polygraph's realtime order is not known to
/// contain session order, e.g. in a history without invocations).
pub fn implied_refuted(level: Level, without_sessions: bool, exact: crate::si_check::Level) -> bool {
    level <= Level::Causal && (exact.order == OrderKind::Session || without_sessions)
}
