//! Process and realtime orders (Elle's `process-graph` and `realtime-graph`).
//!
//! * **process**: each process's consecutive `:ok` completions are ordered
//!   (a client runs one transaction at a time; `:info`/`:fail` are skipped).
//! * **realtime**: `a < b` when `a` completed (ok) before `b` was invoked. The
//!   full relation is quadratic, so, as Elle does, we emit its transitive
//!   reduction: scanning the history, a buffer holds the ok completions not
//!   yet known to precede another completed op; each invocation links the
//!   buffer to its completion, and each ok completion evicts the ops linked to
//!   it. The buffer stays about as large as the concurrency, so this is
//!   O(n·p). Completion-only histories have no invocations and get no edges.

use crate::anomaly::{rel, Step};
use crate::graph::Edge;
use crate::history::{History, OpId, OpType, NONE};
use rustc_hash::FxHashMap;

/// Edges between consecutive `:ok` completions of each process.
pub fn process_edges(h: &History) -> Vec<Edge> {
    let mut last: FxHashMap<i64, OpId> = FxHashMap::default();
    let mut out = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type == OpType::Ok {
            if let Some(prev) = last.insert(op.process, i as u32) {
                out.push(Edge { from: prev, to: i as u32, rels: rel::PROCESS });
            }
        }
    }
    out
}

/// The transitive reduction of realtime order between completions.
pub fn realtime_edges(h: &History) -> Vec<Edge> {
    let mut buffer: Vec<OpId> = Vec::new();
    // For each completion, the buffer snapshot taken at its invocation.
    let mut linked: FxHashMap<OpId, (usize, usize)> = FxHashMap::default();
    let mut out = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        match op.op_type {
            OpType::Invoke => {
                if op.pair != NONE && !buffer.is_empty() {
                    let start = out.len();
                    out.extend(buffer.iter().map(|&a| Edge { from: a, to: op.pair, rels: rel::REALTIME }));
                    linked.insert(op.pair, (start, out.len()));
                }
            }
            OpType::Ok => {
                if let Some((s, e)) = linked.remove(&(i as u32)) {
                    let preds = &out[s..e];
                    buffer.retain(|b| !preds.iter().any(|p| p.from == *b));
                }
                buffer.push(i as u32);
            }
            OpType::Info | OpType::Fail => {
                linked.remove(&(i as u32));
            }
        }
    }
    out
}

/// Justifies a process or realtime edge `a -> b`.
pub fn explain(h: &History, a: OpId, b: OpId, rels: u8) -> Option<Step> {
    if rels & rel::REALTIME != 0 {
        let inv = h.op(b).pair;
        return Some(Step::Realtime { a_completion: a, b_invocation: if inv == NONE { b } else { inv } });
    }
    if rels & rel::PROCESS != 0 {
        return Some(Step::Process { process: h.op(a).process });
    }
    None
}
