//! Checking one commit order against prefix consistency's definition, in
//! one pass: the fast path that decides most valid histories without a
//! polygraph, and the check every `valid` verdict's witness passes.
//!
//! With a commit order `co` fixed, the axiom (weak.md §1.2) says: for every
//! external read of `x` in `t₃` from `t₁`, no other writer `t₂ ≠ t₃` of `x`
//! commits after `t₁` but no later than `p(t₃)`, the `co`-latest transaction
//! that `t₃` follows in `so ∪ wr` (`⊥` at least). So per transaction `p` is a
//! maximum over its session predecessor and its writers, and per read one
//! binary search over the key's writers sorted by position finds the first
//! writer after `t₁`.

use crate::history::KeyId;
use crate::weak::front::{Front, TxnId, BOTTOM};
use rustc_hash::FxHashMap;

/// Whether `co` (every transaction of `f` once, `⊥` first) is a prefix
/// consistent commit order of `f` with the writers `wr` (one per read of
/// [`Front::reads`]): it extends session order, `wr` and the list version
/// edges, and every read reads the latest writer of its key in the prefix
/// the reader must see.
pub fn satisfies_prefix(f: &Front, wr: &[TxnId], co: &[TxnId]) -> bool {
    let n = f.len();
    if co.len() != n || co.first() != Some(&BOTTOM) || wr.len() != f.reads.len() {
        return false;
    }
    let mut at = vec![usize::MAX; n];
    for (i, &t) in co.iter().enumerate() {
        if (t as usize) >= n || at[t as usize] != usize::MAX {
            return false;
        }
        at[t as usize] = i;
    }
    // Session order and version edges go forward.
    let session_ok = f.sessions.iter().all(|s| s.windows(2).all(|w| at[w[0] as usize] < at[w[1] as usize]));
    let version_ok = f.version_edges.iter().all(|e| at[e.from as usize] < at[e.to as usize]);
    if !session_ok || !version_ok {
        return false;
    }
    // Writers of each key by position (⊥ writes every key, at position 0).
    let mut by_key: FxHashMap<KeyId, Vec<usize>> = FxHashMap::default();
    for t in 1..n as TxnId {
        for &k in f.writes_of(t) {
            by_key.entry(k).or_default().push(at[t as usize]);
        }
    }
    for v in by_key.values_mut() {
        v.sort_unstable();
    }
    for t3 in 1..n as TxnId {
        let base = f.read_start[t3 as usize] as usize;
        let rs = f.reads_of(t3);
        // p(t₃): the latest transaction t₃ follows in so ∪ wr.
        let mut p = 0usize;
        let (s, pos) = (f.session[t3 as usize], f.pos[t3 as usize]);
        if pos > 0 {
            p = p.max(at[f.sessions[s as usize][pos as usize - 1] as usize]);
        }
        for i in 0..rs.len() {
            let w = wr[base + i];
            if w == t3 || at[w as usize] >= at[t3 as usize] {
                return false;
            }
            p = p.max(at[w as usize]);
        }
        for (i, r) in rs.iter().enumerate() {
            let t1 = at[wr[base + i] as usize];
            let Some(ws) = by_key.get(&r.key) else { continue };
            // The first writer of the key after t₁ (t₃ itself is after p).
            let next = ws.partition_point(|&x| x <= t1);
            if ws.get(next).is_some_and(|&x| x <= p) {
                return false;
            }
        }
    }
    true
}

/// A topological order of `so ∪ wr ∪ version edges` (`⊥` first) that
/// prefers transactions that completed earlier in the history, or `None`
/// when those edges are cyclic.
pub fn history_order(f: &Front, wr: &[TxnId]) -> Option<Vec<TxnId>> {
    use std::cmp::Reverse;
    let n = f.len();
    let mut succ: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    for s in &f.sessions {
        for w in s.windows(2) {
            succ[w[0] as usize].push(w[1]);
        }
    }
    for t in 1..n as TxnId {
        let base = f.read_start[t as usize] as usize;
        for i in 0..f.reads_of(t).len() {
            let w = wr[base + i];
            if w != BOTTOM {
                succ[w as usize].push(t);
            }
        }
    }
    for e in &f.version_edges {
        succ[e.from as usize].push(e.to);
    }
    let mut indeg = vec![0u32; n];
    for v in succ.iter().flatten() {
        indeg[*v as usize] += 1;
    }
    let mut heap = std::collections::BinaryHeap::new();
    for t in 1..n as TxnId {
        if indeg[t as usize] == 0 {
            heap.push(Reverse((f.op[t as usize], t)));
        }
    }
    let mut out = vec![BOTTOM];
    while let Some(Reverse((_, t))) = heap.pop() {
        out.push(t);
        for &v in &succ[t as usize] {
            indeg[v as usize] -= 1;
            if indeg[v as usize] == 0 {
                heap.push(Reverse((f.op[v as usize], v)));
            }
        }
    }
    (out.len() == n).then_some(out)
}

/// A serial order of the history found by snapshot isolation's replay
/// ([`crate::si_check::serial`], registers only), as a commit order of `f`
/// (transactions the replay leaves out, unobserved `:info` ones, last),
/// with writers for the reads of repeated values: the latest candidate
/// placed before the reader. A serial execution that respects session order
/// is prefix consistent, but what comes back here is only a guess: the
/// caller checks it with [`satisfies_prefix`].
pub fn serial_order(
    h: &crate::history::History,
    f: &Front,
    budget: std::time::Duration,
) -> Option<(Vec<TxnId>, Vec<TxnId>)> {
    use crate::si_check::{prune, serial, txns, OrderKind};
    let t = txns::extract(h).ok()?;
    let priority = prune::time_estimate(h, &t);
    let order = match f.sessions.iter().any(|s| s.len() > 1) {
        true => OrderKind::Session,
        false => OrderKind::None,
    };
    let timed = h.ops.iter().any(|o| o.is_invoke());
    let how = serial::Search { priority: &priority, known: None, session_known: None, budget };
    let decided = serial::decide(h, &t, order, timed, order == OrderKind::Session, &how).ok()?;
    let mut co = vec![BOTTOM];
    let mut placed = vec![false; f.len()];
    placed[BOTTOM as usize] = true;
    for &s in &decided.order {
        let ft = *f.txn_of_op.get(t.op[s as usize] as usize)?;
        if (ft as usize) < f.len() && !placed[ft as usize] {
            placed[ft as usize] = true;
            co.push(ft);
        }
    }
    co.extend((0..f.len() as TxnId).filter(|&x| !placed[x as usize]));
    let mut at = vec![0usize; f.len()];
    for (i, &x) in co.iter().enumerate() {
        at[x as usize] = i;
    }
    let wr = f
        .reads
        .iter()
        .enumerate()
        .map(|(i, r)| match r.from {
            crate::weak::front::ReadFrom::Txn(w) => w,
            crate::weak::front::ReadFrom::Choice(c) => {
                let reader = super::encode::reader_of(f, i as u32);
                let cands = &f.choices[c as usize];
                let before = cands.iter().copied().filter(|&w| at[w as usize] < at[reader as usize]);
                before.max_by_key(|&w| at[w as usize]).unwrap_or(cands[0])
            }
        })
        .collect();
    Some((co, wr))
}
