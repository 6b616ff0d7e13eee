//! Windows: each worker reads its own contiguous part of the input.
//!
//! The input is cut into one window per worker at op lines
//! ([`crate::ingest::MappedEdn::plan_windows`]); each worker parses its
//! window into a [`History`] of its own ops. Two supersteps then make the
//! windows one history, as a single reading would have made it:
//!
//! 1. every worker's count of ops read (client and not) and whether its
//!    first op carried an `:index`: each window moves its ops' dense
//!    indices by the ops before it and takes the whole input's rule on
//!    given indices (the first window's), so `:index` is the single run's;
//! 2. per window: client ops, lines, and per process the first op when it
//!    is a completion (it pairs with an invocation left open before the
//!    window) and the invocation still open at its end. Every worker replays
//!    these summaries in window order, which pairs invocations with
//!    completions across windows exactly as `HistoryBuilder::finish` pairs
//!    them inside one (an `:invoke` with the next completion of its process;
//!    a second invoke leaves the first unpaired), and keeps the pairs that
//!    touch its own window.
//!
//! Global op ids are the single run's: the client ops of the windows before
//! plus the position in the window. Lines are moved by the lines before the
//! window, as the parallel EDN reader moves its chunks'.

use super::bsp::Bsp;
use super::DistError;
use crate::check::WorkloadFlags;
use crate::history::{History, OpId, OpType, NONE};
use crate::ingest::MappedEdn;
use rustc_hash::FxHashMap;

/// What a window's first superstep tells the others.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Counts {
    /// Ops read, client and non-client.
    seen: i64,
    /// Whether the window's first client op carried an `:index`.
    first_has_index: Option<bool>,
}

/// What a window's second superstep tells the others.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Summary {
    /// Client ops.
    ops: u32,
    /// Newlines in the window (window 0: the line its end is on).
    lines: u64,
    /// Per process whose first op here is a completion: (process, local
    /// id, its type).
    heads: Vec<(i64, u32, OpType)>,
    /// Per process with an op here: the invocation open at the window's
    /// end, if any.
    tails: Vec<(i64, Option<u32>)>,
    has_invokes: bool,
    completions: u64,
    interned: bool,
    /// Some op carries a `:transaction-order` field.
    ordered: bool,
    flags: WorkloadFlags,
    nonclient: u64,
    dropped: u64,
    indeterminate: u64,
}

/// Facts about the whole history that every window knows.
#[derive(Clone, Debug, Default)]
pub struct Whole {
    /// Client ops in all.
    pub ops: usize,
    /// Non-client ops read and ignored.
    pub nonclient: usize,
    /// Input events not part of the history (see `History::dropped_events`).
    pub dropped: usize,
    /// Transactions read as indeterminate (see `History::indeterminate_txns`).
    pub indeterminate: usize,
    /// Some op is an invocation (realtime order exists).
    pub has_invokes: bool,
    /// What the micro-ops say of the workload.
    pub flags: WorkloadFlags,
}

/// One worker's window of the history.
pub struct Window {
    /// This window's number (the worker's index).
    pub me: usize,
    /// The window's client ops, local ids `0..n`, pairs inside the window.
    pub h: History,
    /// Global id of each window's first op; `offsets[w + 1] - offsets[w]`
    /// ops in window `w`; `offsets.len()` is the number of windows plus one.
    pub offsets: Vec<OpId>,
    /// Local op -> (global partner, partner's type) for pairs that cross a
    /// cut.
    pub cross: FxHashMap<u32, (OpId, OpType)>,
    /// The whole history's facts.
    pub whole: Whole,
    /// The window's bytes.
    pub bytes: (usize, usize),
    /// The line its first byte is on.
    pub first_line: u64,
}

impl Window {
    /// Global id of a local op.
    pub fn gid(&self, local: u32) -> OpId {
        self.offsets[self.me] + local
    }

    /// Local id of a global op of this window.
    pub fn local(&self, gid: OpId) -> Option<u32> {
        let (lo, hi) = (self.offsets[self.me], self.offsets[self.me + 1]);
        (gid >= lo && gid < hi).then(|| gid - lo)
    }

    /// The window holding a global op.
    pub fn window_of(&self, gid: OpId) -> usize {
        self.offsets.partition_point(|&o| o <= gid).saturating_sub(1).min(self.offsets.len() - 2)
    }

    /// The global id of a local op's partner (its completion or its
    /// invocation), [`NONE`] when unpaired.
    pub fn partner(&self, local: u32) -> OpId {
        let pair = self.h.ops[local as usize].pair;
        if pair != NONE {
            self.gid(pair)
        } else {
            self.cross.get(&local).map_or(NONE, |p| p.0)
        }
    }

    /// The partner's type, when paired.
    pub fn partner_type(&self, local: u32) -> Option<OpType> {
        let pair = self.h.ops[local as usize].pair;
        if pair != NONE {
            Some(self.h.ops[pair as usize].op_type)
        } else {
            self.cross.get(&local).map(|p| p.1)
        }
    }
}

/// Reads this worker's window and places it in the whole history.
pub fn open(bsp: &mut Bsp, input: &MappedEdn) -> Result<Window, DistError> {
    let (me, n) = (bsp.index(), bsp.peers());
    let parsed = input.plan_windows(n).map_err(DistError::from).and_then(|bounds| {
        let (start, end) = (bounds[me], bounds[me + 1]);
        let first_line = if me == 0 { 1 + input.lines_before(start) } else { 0 };
        let (b, lines) = input.parse_window(start, end, first_line).map_err(|e| {
            DistError::Input(format!(
                "{e}\n(a distributed run reads the input in {n} windows cut at lines that start with `{{` or `#`; \
                 an op that spans such a line cannot be cut there: write one op per line, or check this history \
                 on one process)"
            ))
        })?;
        Ok((b, lines, (start, end), first_line as u64))
    });
    let (mut b, lines, bytes, mut first_line) = bsp.agree(parsed)?;
    let counts = bsp.all_gather(&Counts { seen: b.seen(), first_has_index: b.first_has_index() })?;
    let base: i64 = counts[..me].iter().map(|c| c.seen).sum();
    let rule = counts.iter().find_map(|c| c.first_has_index);
    b.place_in_whole(base, rule);
    let mut h = b.finish();
    let summary = summarize(&h, lines);
    let all = bsp.all_gather(&summary)?;
    if let Some(w) = all.iter().position(|s| s.interned) {
        return Err(DistError::Input(format!(
            "{}: some values in window {w} are not integers; a distributed run needs integer values (Elle's \
             workloads write integers): check this history on one process",
            input.name
        )));
    }
    if let Some(w) = all.iter().position(|s| s.ordered) {
        return Err(DistError::Input(format!(
            "{}: ops in window {w} carry :{} (the database's commit order); a distributed run does not use it: \
             check this history on one process",
            input.name,
            crate::history::transaction_order::FIELD
        )));
    }
    let mut offsets = vec![0 as OpId];
    for s in &all {
        let next = u64::from(*offsets.last().unwrap_or(&0)) + u64::from(s.ops);
        let next = OpId::try_from(next)
            .ok()
            .filter(|&n| n < NONE)
            .ok_or_else(|| DistError::Input(format!("{}: more than {} client ops", input.name, NONE - 1)))?;
        offsets.push(next);
    }
    if me > 0 {
        let before: u64 = all[..me].iter().map(|s| s.lines).sum();
        first_line = before;
        for op in &mut h.ops {
            op.line = u32::try_from(u64::from(op.line) + before).unwrap_or(u32::MAX);
        }
    }
    let cross = cross_pairs(&all, &offsets, me);
    let completions = all.iter().map(|s| s.completions as usize).sum();
    let nonclient = all.iter().map(|s| s.nonclient as usize).sum();
    crate::ingest::completions_required(&input.name, offsets[n] as usize, completions, nonclient)?;
    let mut whole = Whole::default();
    for s in &all {
        whole.ops += s.ops as usize;
        whole.nonclient += s.nonclient as usize;
        whole.dropped += s.dropped as usize;
        whole.indeterminate += s.indeterminate as usize;
        whole.has_invokes |= s.has_invokes;
        whole.flags = whole.flags.or(s.flags);
    }
    Ok(Window { me, h, offsets, cross, whole, bytes, first_line })
}

/// This window's part of the cross-window pairing.
fn summarize(h: &History, lines: usize) -> Summary {
    let mut first: FxHashMap<i64, ()> = FxHashMap::default();
    let mut heads = Vec::new();
    let mut open: FxHashMap<i64, Option<u32>> = FxHashMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        if first.insert(op.process, ()).is_none() && op.op_type != OpType::Invoke {
            heads.push((op.process, i as u32, op.op_type));
        }
        match op.op_type {
            OpType::Invoke => open.insert(op.process, Some(i as u32)),
            _ => open.insert(op.process, None),
        };
    }
    let mut tails: Vec<(i64, Option<u32>)> = open.into_iter().collect();
    tails.sort_unstable();
    heads.sort_unstable_by_key(|h| h.0);
    Summary {
        ops: h.ops.len() as u32,
        lines: lines as u64,
        heads,
        tails,
        has_invokes: h.ops.iter().any(|o| o.is_invoke()),
        completions: h.ops.iter().filter(|o| !o.is_invoke()).count() as u64,
        interned: !h.values.is_empty(),
        ordered: h.ops.iter().any(|op| {
            h.extras_of(op).iter().any(|(k, _)| {
                matches!(k, crate::history::Value::Atom(crate::history::Atom::Keyword(n))
                    if &**n == crate::history::transaction_order::FIELD)
            })
        }),
        flags: WorkloadFlags::of(h),
        nonclient: h.nonclient_ops as u64,
        dropped: h.dropped_events as u64,
        indeterminate: h.indeterminate_txns as u64,
    }
}

/// Replays every window's heads and tails in order and returns the pairs
/// that cross into window `me`, by local id.
fn cross_pairs(all: &[Summary], offsets: &[OpId], me: usize) -> FxHashMap<u32, (OpId, OpType)> {
    let mut open: FxHashMap<i64, OpId> = FxHashMap::default();
    let mut mine = FxHashMap::default();
    for (w, s) in all.iter().enumerate() {
        for &(process, local, ty) in &s.heads {
            if let Some(inv) = open.remove(&process) {
                let comp = offsets[w] + local;
                if w == me {
                    mine.insert(local, (inv, OpType::Invoke));
                }
                if inv >= offsets[me] && inv < offsets[me + 1] {
                    mine.insert(inv - offsets[me], (comp, ty));
                }
            }
        }
        for &(process, tail) in &s.tails {
            match tail {
                Some(local) => open.insert(process, offsets[w] + local),
                None => open.remove(&process),
            };
        }
    }
    mine
}
