//! Process and realtime order across windows.
//!
//! [`crate::infer::order`] derives both orders in one scan of the history,
//! carrying a little state: each process's last `:ok` completion (process
//! order), and the realtime buffer (the `:ok` completions not yet known to
//! precede another completed op) with, per completion still to come, the
//! buffer its invocation saw. The state after a window is a function of the
//! state before it and the window's ops, and it stays about as large as the
//! concurrency. So the windows scan in turn, each starting from the state
//! the window before it handed on (one superstep per window, a few
//! kilobytes each), and emit exactly the edges a single scan emits, with
//! global ids: an edge from an op of an earlier window, or to the
//! completion (in a later window) of an invocation read here, is emitted by
//! the window that reads the op that makes it.

use super::bsp::Bsp;
use super::window::Window;
use super::DistError;
use crate::anomaly::rel;
use crate::history::{OpId, OpType, NONE};
use rustc_hash::FxHashMap;

/// Which order edges a check needs (Elle adds the realtime graph, or else
/// the process graph, when a requested anomaly needs it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderKind {
    /// Neither.
    None,
    /// Process order.
    Process,
    /// Realtime order.
    Realtime,
}

/// An order edge between global ops.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct OrderEdge {
    /// Source (a completion).
    pub from: OpId,
    /// Target (a completion).
    pub to: OpId,
    /// [`rel::PROCESS`] or [`rel::REALTIME`].
    pub rels: u8,
    /// For a realtime edge, `to`'s invocation (the op a realtime step
    /// names); [`NONE`] otherwise.
    pub inv: OpId,
}

/// The scan's state between windows.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Carry {
    /// Process order: each process's last `:ok` completion.
    last_ok: Vec<(i64, OpId)>,
    /// Realtime: the buffer.
    buffer: Vec<OpId>,
    /// Realtime: completions still to come, with the buffer their
    /// invocation saw (their predecessors).
    linked: Vec<(OpId, Vec<OpId>)>,
}

/// This window's order edges (of the kind asked), after the windows before
/// it handed their state on.
pub fn edges(bsp: &mut Bsp, win: &Window, kind: OrderKind) -> Result<Vec<OrderEdge>, DistError> {
    if kind == OrderKind::None {
        return Ok(Vec::new());
    }
    let (me, n) = (bsp.index(), bsp.peers());
    let mut carry = Carry::default();
    let mut mine = Vec::new();
    for turn in 0..n {
        let out = if turn == me {
            let (edges, next) = scan(win, kind, std::mem::take(&mut carry));
            mine = edges;
            if turn + 1 < n {
                vec![(turn + 1, next)]
            } else {
                Vec::new()
            }
        } else {
            Vec::new()
        };
        let got = bsp.exchange(out)?;
        if turn + 1 == me {
            carry = got.into_iter().next().map(|(_, c)| c).unwrap_or_default();
        }
    }
    Ok(mine)
}

/// Scans the window from `carry`, as `infer::order` scans a whole history.
fn scan(win: &Window, kind: OrderKind, carry: Carry) -> (Vec<OrderEdge>, Carry) {
    let mut out = Vec::new();
    let mut last_ok: FxHashMap<i64, OpId> = carry.last_ok.into_iter().collect();
    let mut buffer = carry.buffer;
    let mut linked: FxHashMap<OpId, Vec<OpId>> = carry.linked.into_iter().collect();
    for (i, op) in win.h.ops.iter().enumerate() {
        let me = win.gid(i as u32);
        match kind {
            OrderKind::Process => {
                if op.op_type == OpType::Ok {
                    if let Some(prev) = last_ok.insert(op.process, me) {
                        out.push(OrderEdge { from: prev, to: me, rels: rel::PROCESS, inv: NONE });
                    }
                }
            }
            OrderKind::Realtime => match op.op_type {
                OpType::Invoke => {
                    let completion = win.partner(i as u32);
                    if completion != NONE && !buffer.is_empty() {
                        out.extend(buffer.iter().map(|&a| OrderEdge {
                            from: a,
                            to: completion,
                            rels: rel::REALTIME,
                            inv: me,
                        }));
                        linked.insert(completion, buffer.clone());
                    }
                }
                OpType::Ok => {
                    if let Some(preds) = linked.remove(&me) {
                        buffer.retain(|b| !preds.contains(b));
                    }
                    buffer.push(me);
                }
                OpType::Info | OpType::Fail => {
                    linked.remove(&me);
                }
            },
            OrderKind::None => {}
        }
    }
    let mut last_ok: Vec<(i64, OpId)> = last_ok.into_iter().collect();
    last_ok.sort_unstable();
    let mut linked: Vec<(OpId, Vec<OpId>)> = linked.into_iter().collect();
    linked.sort_unstable_by_key(|l| l.0);
    (out, Carry { last_ok, buffer, linked })
}
