//! Which frozen transactions of a round's window are collected
//! ([`super::fenced`]), and which staying ones are only *assumed* to follow
//! them.
//!
//! The collected set `P` is the longest prefix of the serial execution the
//! round's check found whose members are all frozen `:ok` transactions
//! (every later one follows them by fences) that read only values written
//! before them in it. The execution is valid, so `P` followed by the rest
//! in its order is too: forgetting `P` and starting the rest from the state
//! `P` leaves keeps a valid history valid.
//!
//! The converse needs care: a staying transaction that conflicts with a
//! member (they touch a common key, one writing it) may, in another valid
//! execution, come before it. Where the member reaches it by *known*
//! edges (session order, reads-from: edges every valid execution at a
//! session level respects; fences are chained read-modify-writes) it
//! cannot. Where not, the staying transaction is *flagged* on that key: the
//! check of the rest assumes it follows `P`, so an anomaly whose witness
//! relies on it doing so on that key is not reported as such
//! ([`super::collect::Window::set_aside`]).
//!
//! The order may also be the commit order of an execution in which
//! transactions overlap (snapshot isolation's begin/commit execution,
//! `causal-cerone`'s arbitration order): then `P` ends only where no
//! transaction is running, and never leaves behind a staying transaction
//! that read a version a later member overwrote
//! ([`overwritten_read`]): the rest is checked as seeing all of `P`, and such
//! a reader did not.
//!
//! Reachability is a bit table: one row per transaction of the serial
//! execution (a topological order of the known edges), one column per
//! member, each row the union of its predecessors' rows.
//!
//! Written by hand: the table is a few lines over plain words, and the
//! rest is specific to this rule.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::history::{History, KeyId, MopFn, MopValue, OpType, NONE as UNPAIRED};

/// Bits the reachability table may hold (256 MB).
const MAX_BITS: usize = 1 << 31;

const NONE: u32 = u32::MAX;

/// A position no fence has: not known, or none yet.
pub(super) const NO_FENCE: u32 = u32::MAX;

/// One transaction of a round's window.
pub(super) struct Txn {
    /// Its invocation's position (its completion's when it has none).
    pub(super) inv: usize,
    /// Its completion's position, `None` while open.
    pub(super) done: Option<usize>,
    /// How it ended, `None` while open.
    pub(super) kind: Option<OpType>,
    pub(super) process: i64,
    /// `prev(T)` and `next(T)`: the positions of its client's fences
    /// around it (its own position for a fence).
    pub(super) prev: u32,
    pub(super) next: u32,
}

impl Txn {
    /// The op whose micro-ops say what it touches.
    pub(super) fn op(&self) -> usize {
        self.done.unwrap_or(self.inv)
    }
}

/// The transactions of `h` in invocation order: completed ones and open
/// invocations.
pub(super) fn transactions(h: &History) -> Vec<Txn> {
    let mut out = Vec::new();
    for (i, o) in h.ops.iter().enumerate() {
        let (inv, done) = match (o.is_invoke(), o.pair) {
            (true, UNPAIRED) => (i, None),
            (true, d) => (i, Some(d as usize)),
            (false, UNPAIRED) => (i, Some(i)),
            (false, _) => continue,
        };
        let kind = done.map(|d| h.ops[d].op_type);
        out.push(Txn { inv, done, kind, process: o.process, prev: 0, next: NO_FENCE });
    }
    out
}

/// An order of the known edges of a window that may have a cycle of them
/// ([`known_order`]).
pub(super) struct KnownOrder {
    /// Each op's rank (its completion's, for a transaction), `u32::MAX`
    /// for ops that are not `:ok` completions.
    pub(super) ranks: Vec<u32>,
    /// Per op, like `ranks`: which cycle of known edges (strongly connected
    /// component of two or more transactions) its transaction is on,
    /// `u32::MAX` for one on none. A component's transactions have
    /// consecutive ranks.
    pub(super) component: Vec<u32>,
}

/// An order of the known edges among the `:ok` transactions of `h`
/// (session order, reads-from): their strongly connected components in a
/// topological order, the one whose earliest completion is earliest first,
/// and inside a component (a cycle of known edges: a `G1c`) by completion.
/// Used after an anomaly, when no serial execution exists
/// ([`super::fenced`], "After an anomaly"): every transaction gets a rank,
/// so that a cycle does not hold back everything after it.
pub(super) fn known_order(h: &History, realtime: bool) -> KnownOrder {
    let txns = transactions(h);
    let ok: Vec<usize> = (0..txns.len()).filter(|&t| txns[t].kind == Some(OpType::Ok)).collect();
    let succ = known_successors(h, &txns, &ok, realtime);
    let (comp, count) = components(&succ);
    let done = |i: usize| txns[ok[i]].done.unwrap_or(usize::MAX);
    // The condensation: per component its members (by completion), its
    // successors and its in-degree.
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    for (i, &c) in comp.iter().enumerate() {
        members[c as usize].push(i as u32);
    }
    let mut csucc: Vec<Vec<u32>> = vec![Vec::new(); count];
    let mut indegree = vec![0u32; count];
    for (i, ss) in succ.iter().enumerate() {
        for &s in ss {
            let (a, b) = (comp[i], comp[s as usize]);
            if a != b {
                csucc[a as usize].push(b);
            }
        }
    }
    for cs in &mut csucc {
        cs.sort_unstable();
        cs.dedup();
        for &b in cs.iter() {
            indegree[b as usize] += 1;
        }
    }
    let first = |c: usize| members[c].iter().map(|&i| done(i as usize)).min().unwrap_or(usize::MAX);
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<(usize, u32)>> =
        (0..count).filter(|&c| indegree[c] == 0).map(|c| std::cmp::Reverse((first(c), c as u32))).collect();
    let mut out = KnownOrder { ranks: vec![u32::MAX; h.ops.len()], component: vec![u32::MAX; h.ops.len()] };
    let mut next = 0u32;
    while let Some(std::cmp::Reverse((_, c))) = ready.pop() {
        let mut ms: Vec<usize> = members[c as usize].iter().map(|&i| done(i as usize)).collect();
        ms.sort_unstable();
        for &d in &ms {
            out.ranks[d] = next;
            next += 1;
            if ms.len() > 1 {
                out.component[d] = c;
            }
        }
        for &s in &csucc[c as usize] {
            indegree[s as usize] -= 1;
            if indegree[s as usize] == 0 {
                ready.push(std::cmp::Reverse((first(s as usize), s)));
            }
        }
    }
    out
}

/// Per position in `ok`: the positions its known edges lead to (session
/// order, reads-from of a value one `:ok` transaction wrote, and with
/// `realtime` the realtime order, reduced by [`realtime_predecessors`]).
fn known_successors(h: &History, txns: &[Txn], ok: &[usize], realtime: bool) -> Vec<Vec<u32>> {
    let mut row = vec![NONE; txns.len()];
    for (i, &t) in ok.iter().enumerate() {
        row[t] = i as u32;
    }
    let mut writer: FxHashMap<(KeyId, i64), u32> = FxHashMap::default();
    for &t in ok {
        for m in h.mops_of(&h.ops[txns[t].op()]) {
            if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                writer.insert((m.key, v), t as u32);
            }
        }
    }
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); ok.len()];
    let mut last_of: FxHashMap<i64, u32> = FxHashMap::default();
    for (i, &t) in ok.iter().enumerate() {
        if let Some(p) = last_of.insert(txns[t].process, i as u32) {
            succ[p as usize].push(i as u32);
        }
        for m in h.mops_of(&h.ops[txns[t].op()]) {
            if let (MopFn::Read, MopValue::Int(v)) = (m.f, m.value) {
                if let Some(&w) = writer.get(&(m.key, v)) {
                    if w as usize != t {
                        succ[row[w as usize] as usize].push(i as u32);
                    }
                }
            }
        }
    }
    if realtime {
        for (i, ps) in realtime_predecessors(txns, ok).into_iter().enumerate() {
            for p in ps {
                succ[p as usize].push(i as u32);
            }
        }
    }
    for ss in &mut succ {
        ss.sort_unstable();
        ss.dedup();
    }
    succ
}

/// Per position in `ts` (transactions of `txns` in an order): positions in
/// `ts` of `:ok` transactions that completed before it was invoked, enough of them
/// that their realtime predecessors, taken transitively, are all of its
/// own. Each gets the *frontier* at its invocation: the completed
/// transactions no other completed one follows in realtime. A completion
/// removes from the frontier what its transaction's frontier held (those
/// now precede it) and joins it. The frontier is an antichain of
/// intervals, so they share a point: it never holds more transactions
/// than ran at once.
fn realtime_predecessors(txns: &[Txn], ts: &[usize]) -> Vec<Vec<u32>> {
    // (op position, position in `ts`, whether it is the completion).
    let mut events: Vec<(usize, u32, bool)> = Vec::with_capacity(2 * ts.len());
    for (i, &t) in ts.iter().enumerate() {
        // Only an `:ok` completion precedes what is invoked after it (an
        // `:info` transaction in the order took effect at some unknown
        // point after its invocation), as in the batch check.
        let ok = txns[t].kind == Some(OpType::Ok);
        if let Some(d) = txns[t].done.filter(|&d| d != txns[t].inv) {
            events.push((txns[t].inv, i as u32, false));
            if ok {
                events.push((d, i as u32, true));
            }
        } else if let Some(d) = txns[t].done.filter(|_| ok) {
            // A completion without an invocation: nothing precedes it in
            // realtime (as in the batch check), and it precedes what is
            // invoked after it.
            events.push((d, i as u32, true));
        }
    }
    events.sort_unstable();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); ts.len()];
    let mut frontier: Vec<u32> = Vec::new();
    for (_, i, done) in events {
        if done {
            let before = &preds[i as usize];
            frontier.retain(|p| !before.contains(p));
            frontier.push(i);
        } else {
            preds[i as usize] = frontier.clone();
        }
    }
    preds
}

/// The strongly connected components of `succ`: each node's component
/// (those of two or more nodes first, then one per other node), and how
/// many there are.
fn components(succ: &Vec<Vec<u32>>) -> (Vec<u32>, usize) {
    let cyclic = crate::cycles::scc::tarjan(succ, |_| true);
    let mut count = cyclic.comps.len();
    let comp = cyclic
        .comp_of
        .iter()
        .map(|&c| {
            if c != NONE {
                return c;
            }
            count += 1;
            (count - 1) as u32
        })
        .collect();
    (comp, count)
}

/// Reachability by known edges from frozen transactions.
pub(super) struct Known {
    /// Per transaction: its row, `NONE` outside the serial execution.
    row: Vec<u32>,
    /// Per transaction: its column, `NONE` for one that is not a candidate.
    col: Vec<u32>,
    /// Words per row.
    words: usize,
    anc: Vec<u64>,
}

impl Known {
    /// Whether candidate transaction `a` reaches transaction `b` by known
    /// edges (`false` when `a` is no candidate).
    pub(super) fn reaches(&self, a: usize, b: usize) -> bool {
        let (c, r) = (self.col[a], self.row[b]);
        c != NONE && r != NONE && self.anc[r as usize * self.words + c as usize / 64] >> (c % 64) & 1 == 1
    }

    fn row(&self, t: usize) -> &[u64] {
        let r = self.row[t] as usize;
        &self.anc[r * self.words..(r + 1) * self.words]
    }
}

/// What a round collects: the members of `P` (per transaction of
/// `txns`), the reachability from them, and the staying transactions
/// flagged, with their keys. `None` when the serial execution does not
/// follow the known edges (not a valid one: nothing is collected).
pub(super) struct Cut {
    pub(super) members: Vec<bool>,
    pub(super) known: Known,
    pub(super) flagged: Vec<(usize, Vec<KeyId>)>,
    /// The first transaction of the execution that stays (where `P`
    /// ends), if the execution has one.
    pub(super) first_staying: Option<usize>,
}

/// The cut of `txns`, given each one's rank in the serial execution and
/// whether it is `frozen` (an `:ok` transaction every later one follows by
/// fences). `component` (per op, like `ranks`; empty when the order is a
/// serial execution) names the cycles of known edges of a
/// [`known_order`]: such a cycle goes whole or not at all, and the known
/// edges inside it that the order breaks are left out of the
/// reachability (which then holds fewer paths: more is flagged, nothing
/// wrongly ordered). `open` (per op, like `ranks`; empty when every
/// prefix is one) marks the transactions after which `P` may not end: in
/// an execution under snapshot isolation, a later one began before they
/// committed. Conflicts are read from `full`, the window as read
/// (`h` with the reads the collector set aside put back: the same ops and
/// micro-op positions), since a later round judges those reads again,
/// against the last versions it then knows.
pub(super) fn cut(
    h: &History,
    full: &History,
    txns: &[Txn],
    ranks: &[u32],
    frozen: &[bool],
    component: &[u32],
    open: &[bool],
    realtime: bool,
) -> Option<Cut> {
    let rank = |t: usize| txns[t].done.map_or(NONE, |d| ranks[d]);
    let comp = |t: usize| txns[t].done.and_then(|d| component.get(d).copied()).unwrap_or(NONE);
    let mut order: Vec<usize> = (0..txns.len()).filter(|&t| rank(t) != NONE).collect();
    order.sort_unstable_by_key(|&t| rank(t));
    let mut row = vec![NONE; txns.len()];
    for (i, &t) in order.iter().enumerate() {
        row[t] = i as u32;
    }
    let preds = predecessors(h, txns, &order, &row, &comp, realtime)?;
    let written = values_written(h, txns, &order);
    let cap = (MAX_BITS / order.len().max(1)).max(64);
    let mut members = vec![false; txns.len()];
    let mut col = vec![NONE; txns.len()];
    let mut cols: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < order.len() {
        // The next transaction, with the rest of its cycle of known edges.
        let c = comp(order[at]);
        let len = if c == NONE { 1 } else { order[at..].iter().take_while(|&&t| comp(t) == c).count() };
        let group = &order[at..at + len];
        if group.iter().any(|&t| !frozen[t]) || at + len > cap {
            break;
        }
        group.iter().for_each(|&t| members[t] = true);
        if !group.iter().all(|&t| reads_explained(h, txns, t, &written, &members)) {
            group.iter().for_each(|&t| members[t] = false);
            break;
        }
        at += len;
    }
    // Under snapshot isolation `P` ends where no transaction is running.
    let running = |t: usize| txns[t].done.is_some_and(|d| open.get(d).copied().unwrap_or(false));
    let mut end = at;
    while end > 0 && running(order[end - 1]) {
        end -= 1;
    }
    loop {
        // What the prefix leaves behind stays, and is read like the rest.
        for &t in &order[end..at] {
            members[t] = false;
        }
        at = end;
        match overwritten_read(h, txns, &order[..end], &members) {
            Some(p) => end = p,
            None => break,
        }
    }
    for &t in &order[..end] {
        col[t] = cols.len() as u32;
        cols.push(t);
    }
    let words = cols.len().div_ceil(64).max(1);
    let mut known = Known { row, col, words, anc: vec![0u64; order.len() * words] };
    for (i, ps) in preds.iter().enumerate() {
        for &p in ps {
            let (pr, pc) = (known.row[p] as usize, known.col[p]);
            let (lo, hi) = known.anc.split_at_mut(i * words);
            let dst = &mut hi[..words];
            for (d, s) in dst.iter_mut().zip(&lo[pr * words..(pr + 1) * words]) {
                *d |= s;
            }
            if pc != NONE {
                dst[pc as usize / 64] |= 1 << (pc % 64);
            }
        }
    }
    let mut flagged = unreached(full, txns, &order, &known, &cols, &members);
    flagged.extend(indeterminate(full, txns, &known.row, &cols));
    Some(Cut { members, known, flagged, first_staying: order.get(end).copied() })
}

/// Where `P` must end, when a staying `:ok` transaction read a version that
/// a member of `prefix` (the members, in order) wrote and a later member
/// overwrote, or the initial state of a key a member writes: at the first
/// member that overwrote what it read. Cut after it, the reader would be
/// judged against a newer last version than the one it saw. A serial
/// execution never needs this (the reader comes before the overwriter);
/// an execution whose transactions overlap (snapshot isolation,
/// `causal-cerone`'s arbitration order) may.
fn overwritten_read(h: &History, txns: &[Txn], prefix: &[usize], members: &[bool]) -> Option<usize> {
    if prefix.is_empty() {
        return None;
    }
    // Per (key, value) written in the prefix: its position; per key, the
    // positions of its writers.
    let mut version: FxHashMap<(KeyId, i64), usize> = FxHashMap::default();
    let mut writers: FxHashMap<KeyId, Vec<usize>> = FxHashMap::default();
    for (p, &t) in prefix.iter().enumerate() {
        for m in h.mops_of(&h.ops[txns[t].op()]) {
            if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                version.insert((m.key, v), p);
                let ws = writers.entry(m.key).or_default();
                if ws.last() != Some(&p) {
                    ws.push(p);
                }
            }
        }
    }
    let mut end: Option<usize> = None;
    let staying = txns.iter().enumerate().filter(|&(t, x)| !members[t] && x.kind == Some(OpType::Ok));
    for (_, txn) in staying {
        let mut own: FxHashSet<KeyId> = FxHashSet::default();
        for m in h.mops_of(&h.ops[txn.op()]) {
            match (m.f, m.value) {
                (MopFn::Write, _) => {
                    own.insert(m.key);
                }
                (MopFn::Read, value) if !own.contains(&m.key) => {
                    let Some(ws) = writers.get(&m.key) else { continue };
                    let next = match value {
                        MopValue::Int(v) => match version.get(&(m.key, v)) {
                            Some(&p) => ws.iter().copied().find(|&q| q > p),
                            None => None,
                        },
                        _ => ws.first().copied(),
                    };
                    if let Some(q) = next {
                        end = Some(end.map_or(q, |e| e.min(q)));
                    }
                }
                _ => {}
            }
        }
    }
    end
}

/// The `:info` transactions outside the serial execution (it left them
/// out as not committed, but one may have taken effect at any point after
/// its invocation), with the keys on which they conflict with a member
/// whose fences do not put it first (its next fence after the `:info`
/// transaction's previous one).
fn indeterminate(h: &History, txns: &[Txn], row: &[u32], cols: &[usize]) -> Vec<(usize, Vec<KeyId>)> {
    let mut out = Vec::new();
    for (i, info) in txns.iter().enumerate() {
        if info.kind != Some(OpType::Info) || row[i] != NONE {
            continue;
        }
        let mops = h.mops_of(&h.ops[info.op()]);
        let mut keys: Vec<KeyId> = Vec::new();
        for &t in cols.iter().filter(|&&t| txns[t].next > info.prev) {
            for m in h.mops_of(&h.ops[txns[t].op()]) {
                let conflict = mops.iter().any(|x| x.key == m.key && (x.f == MopFn::Write || m.f == MopFn::Write));
                if conflict && m.f != MopFn::Append {
                    keys.push(m.key);
                }
            }
        }
        if !keys.is_empty() {
            keys.sort_unstable();
            keys.dedup();
            out.push((i, keys));
        }
    }
    out
}

/// Each (key, value) written by a transaction of the serial execution,
/// with the writer.
fn values_written(h: &History, txns: &[Txn], order: &[usize]) -> FxHashMap<(KeyId, i64), usize> {
    let mut out = FxHashMap::default();
    for &t in order {
        for m in h.mops_of(&h.ops[txns[t].op()]) {
            if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                out.insert((m.key, v), t);
            }
        }
    }
    out
}

/// Whether every value transaction `t` read was written by itself or by a
/// member (`nil`: the initial state, or the collected last version).
fn reads_explained(
    h: &History,
    txns: &[Txn],
    t: usize,
    written: &FxHashMap<(KeyId, i64), usize>,
    members: &[bool],
) -> bool {
    h.mops_of(&h.ops[txns[t].op()]).iter().all(|m| match (m.f, m.value) {
        (MopFn::Read, MopValue::Int(v)) => written.get(&(m.key, v)).is_some_and(|&w| w == t || members[w]),
        _ => true,
    })
}

/// Per transaction of `order` (by position): the transactions with a
/// known edge into it, or `None` when one comes later in `order` (the
/// serial execution would then break a known edge: not a valid one),
/// unless both are on the same cycle of known edges (`comp`, see [`cut`]).
fn predecessors(
    h: &History,
    txns: &[Txn],
    order: &[usize],
    row: &[u32],
    comp: &dyn Fn(usize) -> u32,
    realtime: bool,
) -> Option<Vec<Vec<usize>>> {
    let realtime_preds = if realtime { realtime_predecessors(txns, order) } else { Vec::new() };
    // Each written (key, value): its writer, `NONE` when several wrote it.
    let mut writer: FxHashMap<(KeyId, i64), u32> = FxHashMap::default();
    for &t in order {
        for m in h.mops_of(&h.ops[txns[t].op()]) {
            if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                writer
                    .entry((m.key, v))
                    .and_modify(|w| *w = if *w == t as u32 { *w } else { NONE })
                    .or_insert(t as u32);
            }
        }
    }
    let mut last_of: FxHashMap<i64, usize> = FxHashMap::default();
    let mut session_pred = vec![NONE; txns.len()];
    for (t, txn) in txns.iter().enumerate().filter(|&(t, _)| row[t] != NONE) {
        if let Some(p) = last_of.insert(txn.process, t) {
            session_pred[t] = p as u32;
        }
    }
    let mut out = Vec::with_capacity(order.len());
    for (i, &t) in order.iter().enumerate() {
        let mut ps: Vec<usize> = Vec::new();
        if session_pred[t] != NONE {
            ps.push(session_pred[t] as usize);
        }
        if let Some(rt) = realtime_preds.get(i) {
            ps.extend(rt.iter().map(|&p| order[p as usize]));
        }
        for m in h.mops_of(&h.ops[txns[t].op()]) {
            if let (MopFn::Read, MopValue::Int(v)) = (m.f, m.value) {
                match writer.get(&(m.key, v)) {
                    Some(&w) if w != NONE && w as usize != t => ps.push(w as usize),
                    _ => {}
                }
            }
        }
        // An edge inside a cycle of known edges that the order breaks is
        // left out; any other one breaking it makes the order no valid one.
        ps.retain(|&p| row[p] as usize <= i || comp(p) == NONE || comp(p) != comp(t));
        ps.sort_unstable();
        ps.dedup();
        if ps.iter().any(|&p| row[p] as usize >= i) {
            return None;
        }
        out.push(ps);
    }
    Some(out)
}

/// The staying transactions of the serial execution that conflict with a
/// member that does not reach them by known edges, with those keys. Open
/// transactions follow every frozen one by fences; failed ones are in no
/// execution.
fn unreached(
    h: &History,
    txns: &[Txn],
    order: &[usize],
    known: &Known,
    cols: &[usize],
    members: &[bool],
) -> Vec<(usize, Vec<KeyId>)> {
    // Staying `:ok` transactions outside the order (none when it is a
    // serial execution or a known order) are reached by nothing.
    let mut staying: Vec<usize> = order.iter().copied().filter(|&t| !members[t]).collect();
    staying.extend((0..txns.len()).filter(|&t| known.row[t] == NONE && txns[t].kind == Some(OpType::Ok)));
    let unranked = vec![0u64; known.words];
    let touched: FxHashSet<KeyId> =
        staying.iter().flat_map(|&t| h.mops_of(&h.ops[txns[t].op()]).iter().map(|m| m.key)).collect();
    // Per touched key: the members writing it and those touching it.
    let words = known.words;
    let mut sets: FxHashMap<KeyId, (Vec<u64>, Vec<u64>)> = FxHashMap::default();
    for &t in cols {
        let c = known.col[t] as usize;
        for m in h.mops_of(&h.ops[txns[t].op()]).iter().filter(|m| touched.contains(&m.key)) {
            let e = sets.entry(m.key).or_insert_with(|| (vec![0; words], vec![0; words]));
            if m.f == MopFn::Write {
                e.0[c / 64] |= 1 << (c % 64);
            }
            e.1[c / 64] |= 1 << (c % 64);
        }
    }
    let mut out = Vec::new();
    for &u in &staying {
        let reach = if known.row[u] == NONE { &unranked[..] } else { known.row(u) };
        let mut keys: Vec<KeyId> = h
            .mops_of(&h.ops[txns[u].op()])
            .iter()
            .filter(|m| {
                sets.get(&m.key).is_some_and(|(writers, touchers)| {
                    let need = if m.f == MopFn::Write { touchers } else { writers };
                    need.iter().zip(reach).any(|(&n, &r)| n & !r != 0)
                })
            })
            .map(|m| m.key)
            .collect();
        if !keys.is_empty() {
            keys.sort_unstable();
            keys.dedup();
            out.push((u, keys));
        }
    }
    out
}
