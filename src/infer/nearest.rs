//! Nearest touchers of each key along a transaction order (the core of
//! Elle's `sequential-keys` / `linearizable-keys` version inference).
//!
//! **What is computed.** Given a DAG `order` between operations (process or
//! realtime order, every edge pointing forward in the history) and, per key,
//! its *touchers* (operations that accessed it), a toucher `b` is a *nearest*
//! toucher of `a` for key `k` when some path `a → x₁ → … → b` of `order` has
//! no interior vertex touching `k`. Elle (`transaction-graph->version-graphs`)
//! links `a`'s last value of `k` to the first value of `k` of each of its
//! nearest touchers. This is *not* the transitive reduction of "a precedes b
//! among the touchers": a path may go around a toucher `c` with `a < c < b`
//! through a transaction concurrent with `c`, and then `b` is nearest to `a`
//! too. On realtime order most touchers are nearest to most earlier ones, so
//! the number of links is itself quadratic in the touchers of a key; what can
//! be avoided is the work Elle does beyond that output.
//!
//! **How.** Elle (and isolde before this module) walks the order once in
//! reverse, keeping for every transaction a map from *every key* touched
//! downstream to its nearest touchers: `n × keys` entries, each a set. Here
//! each key is handled on its own, over the stretch of the history between
//! its first and its last toucher only (vertices without an edge, the
//! invocations, are skipped), with the nearest-toucher sets as bitsets over
//! the key's distinct first values (touchers that saw the same value share a
//! bit):
//!
//! * walking that stretch backwards, a vertex's set is the union over its
//!   successors `y` of `{y}` when `y` touches the key, else `y`'s set;
//! * a toucher passes on only itself, and its set is OR-ed into the set of
//!   its last value, so each link `(last, first)` comes out once, sorted;
//! * a set is kept only while some predecessor in the stretch has yet to read
//!   it (a count of pending predecessors frees it), so memory follows the
//!   width of the order, not its length.
//!
//! Keys with few touchers (most keys of a zipfian history) would each pay a
//! sweep of their whole stretch for a handful of bits, so they are batched:
//! keys with at most 64 touchers in all share one sweep and one word per
//! vertex, a vertex blocking only the bits of the keys it touches.
//!
//! The work is the stretch's edges times the set's words, per key, instead of
//! every vertex times every key downstream. Keys are independent, so they run
//! in parallel. When the order is a set of
//! disjoint chains (process order: each vertex has at most one predecessor
//! and one successor) the only path from `a` is its chain, so the nearest
//! toucher is simply the next toucher of the key on the same chain; that
//! case takes one pass over the touchers.
//!
//! The result is the same set of links as Elle's traversal (the property test
//! in `tests/infer/nearest_touchers.rs` compares both on random histories).

use crate::graph::Graph;
use crate::history::OpId;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// One operation's access to a key, as the version inference sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    /// The operation (a completion).
    pub op: OpId,
    /// The first value of the key it saw (what an earlier toucher's value
    /// precedes).
    pub first: i64,
    /// The last value of the key it left (what precedes a later toucher's).
    pub last: i64,
}

/// Each key's touchers, ordered by operation, in CSR form.
#[derive(Debug, Default)]
pub struct KeyTouches {
    /// `touches[offsets[k]..offsets[k + 1]]` are key `k`'s touchers.
    pub offsets: Vec<u32>,
    /// All touches, grouped by key, by operation within a key.
    pub touches: Vec<Touch>,
}

impl KeyTouches {
    /// Key `k`'s touchers.
    pub fn of(&self, k: usize) -> &[Touch] {
        &self.touches[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// The number of keys.
    pub fn key_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
}

/// Version edges `(key, last value of a, first value of b)` for every key and
/// every toucher `b` nearest to a toucher `a` along `order` (see the module
/// docs), without `v → v` self links. Distinct, in no particular order.
pub fn nearest_toucher_links(order: &Graph, keys: &KeyTouches) -> Vec<(u32, i64, i64)> {
    let chains = is_chains(order);
    let compact = if chains.is_none() { Compact::new(order) } else { Compact::default() };
    // Work units: a key alone, or (general orders) a batch of keys with at
    // most 64 touchers in all, swept together in one word per vertex.
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut batch: Vec<usize> = Vec::new();
    let mut bits = 0;
    for k in (0..keys.key_count()).filter(|&k| keys.of(k).len() >= 2) {
        let m = keys.of(k).len();
        if chains.is_some() || m > 64 {
            units.push(vec![k]);
            continue;
        }
        if bits + m > 64 {
            units.push(std::mem::take(&mut batch));
            bits = 0;
        }
        batch.push(k);
        bits += m;
    }
    if !batch.is_empty() {
        units.push(batch);
    }
    let per_unit: Vec<Vec<(u32, i64, i64)>> = units
        .par_iter()
        .with_min_len(4)
        .map_init(Scratch::default, |scratch, unit| {
            let k = unit[0];
            let touches = keys.of(k);
            let mut pairs = match &chains {
                Some(chain_of) => chain_links(chain_of, touches),
                None if touches.len() > 64 => sweep_links(&compact, touches, scratch, MERGE_WORDS),
                None => return batch_links(&compact, keys, unit, scratch),
            };
            // Already sorted and distinct when the sweep merged per value.
            if !pairs.is_sorted() {
                pairs.sort_unstable();
            }
            pairs.dedup();
            pairs.into_iter().map(|(v1, v2)| (k as u32, v1, v2)).collect()
        })
        .collect();
    let mut out = Vec::with_capacity(per_unit.iter().map(Vec::len).sum());
    for p in per_unit {
        out.extend(p);
    }
    out
}

/// Keys with few touchers (at most 64 in all): one sweep over the stretch
/// covering all of them, each vertex's sets for every key of the batch in
/// one word (each key owns the bits of its touchers). A vertex passes on,
/// for the keys it touches, only its own bits, and for the others what it
/// received. Sorted and deduplicated.
fn batch_links(order: &Compact, keys: &KeyTouches, batch: &[usize], s: &mut Scratch) -> Vec<(u32, i64, i64)> {
    // Per bit: its key (position in the batch) and touch.
    let mut bit_key: Vec<usize> = Vec::with_capacity(64);
    let mut bit_touch: Vec<Touch> = Vec::with_capacity(64);
    let mut group: Vec<u64> = Vec::with_capacity(batch.len());
    // (position, bit) of every toucher with an edge.
    let mut at: Vec<(u32, u32)> = Vec::with_capacity(64);
    for (i, &k) in batch.iter().enumerate() {
        let start = bit_touch.len();
        for t in keys.of(k) {
            let p = order.pos[t.op as usize];
            if p != u32::MAX {
                at.push((p, bit_touch.len() as u32));
            }
            bit_key.push(i);
            bit_touch.push(*t);
        }
        let len = bit_touch.len() - start;
        group.push(if len == 64 { u64::MAX } else { ((1u64 << len) - 1) << start });
    }
    if at.len() < 2 {
        return Vec::new();
    }
    at.sort_unstable();
    let (lo, hi) = (at[0].0, at[at.len() - 1].0);
    let span = (hi - lo + 1) as usize;
    // Per vertex of the stretch: its set, its own bits, and the groups it blocks.
    s.arena.clear();
    s.arena.resize(3 * span, 0);
    let (sets, rest) = s.arena.split_at_mut(span);
    let (own, block) = rest.split_at_mut(span);
    for &(p, b) in &at {
        let i = (p - lo) as usize;
        own[i] |= 1 << b;
        block[i] |= group[bit_key[b as usize]];
    }
    let mut out = Vec::new();
    let mut next = at.len();
    for x in (lo..=hi).rev() {
        let xi = (x - lo) as usize;
        let mut u = 0u64;
        for &y in order.out(x) {
            if y <= hi {
                let yi = (y - lo) as usize;
                u |= (sets[yi] & !block[yi]) | own[yi];
            }
        }
        sets[xi] = u;
        // x's own touches are the entries of `at` at position x.
        while next > 0 && at[next - 1].0 >= x {
            next -= 1;
            let b = at[next].1 as usize;
            if at[next].0 != x || u == 0 {
                continue;
            }
            let kk = bit_key[b];
            let v1 = bit_touch[b].last;
            let mut m = u & group[kk];
            while m != 0 {
                let v2 = bit_touch[m.trailing_zeros() as usize].first;
                m &= m - 1;
                if v1 != v2 {
                    out.push((batch[kk] as u32, v1, v2));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// When every vertex has at most one successor and one predecessor, each
/// vertex's chain (the first vertex of its chain); otherwise `None`.
fn is_chains(order: &Graph) -> Option<Vec<u32>> {
    let n = order.vertex_count();
    let mut pred = vec![u32::MAX; n];
    for a in 0..n as u32 {
        let succ = order.out(a).0;
        if succ.len() > 1 {
            return None;
        }
        if let Some(&b) = succ.first() {
            if pred[b as usize] != u32::MAX || b <= a {
                return None;
            }
            pred[b as usize] = a;
        }
    }
    // Predecessors come first in history, so one forward pass names chains.
    let mut chain = vec![0u32; n];
    for v in 0..n {
        let p = pred[v];
        chain[v] = if p == u32::MAX { v as u32 } else { chain[p as usize] };
    }
    Some(chain)
}

/// Chains: each toucher links to the next toucher on its chain.
fn chain_links(chain_of: &[u32], touches: &[Touch]) -> Vec<(i64, i64)> {
    let mut last: FxHashMap<u32, i64> = FxHashMap::default();
    let mut out = Vec::new();
    for t in touches {
        if let Some(v1) = last.insert(chain_of[t.op as usize], t.last) {
            if v1 != t.first {
                out.push((v1, t.first));
            }
        }
    }
    out
}

/// The order restricted to vertices with an edge (invocations have none), in
/// CSR form over their positions: per-key stretches skip the rest.
#[derive(Default)]
struct Compact {
    /// Each vertex's position, or `u32::MAX` when it has no edge.
    pos: Vec<u32>,
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Compact {
    fn new(order: &Graph) -> Compact {
        let n = order.vertex_count();
        let mut active = vec![false; n];
        for a in 0..n as u32 {
            let succ = order.out(a).0;
            if !succ.is_empty() {
                active[a as usize] = true;
            }
            for &b in succ {
                active[b as usize] = true;
            }
        }
        let mut pos = vec![u32::MAX; n];
        let mut next = 0u32;
        for (v, _) in active.iter().enumerate().filter(|(_, &a)| a) {
            pos[v] = next;
            next += 1;
        }
        let mut offsets = Vec::with_capacity(next as usize + 1);
        let mut targets = Vec::with_capacity(order.edge_count());
        offsets.push(0);
        for (v, _) in active.iter().enumerate().filter(|(_, &a)| a) {
            targets.extend(order.out(v as u32).0.iter().map(|&b| pos[b as usize]));
            offsets.push(targets.len() as u32);
        }
        Compact { pos, offsets, targets }
    }

    #[inline]
    fn out(&self, p: u32) -> &[u32] {
        &self.targets[self.offsets[p as usize] as usize..self.offsets[p as usize + 1] as usize]
    }
}

/// Reusable buffers for one key's sweep.
#[derive(Default)]
struct Scratch {
    /// Per vertex of the stretch: a toucher's rank (with [`TOUCHER`]), the
    /// arena slot of its stored set, or [`NO_SET`].
    state: Vec<u32>,
    /// Per vertex of the stretch: predecessors in the stretch not yet swept.
    pending: Vec<u32>,
    /// Stored sets, `words` each.
    arena: Vec<u64>,
    free: Vec<u32>,
    acc: Vec<u64>,
}

const TOUCHER: u32 = 1 << 31;
const NO_SET: u32 = u32::MAX;

/// General orders: one backward sweep over the key's stretch of history.
///
/// Sets hold *values* rather than touchers: bit `i` stands for the `i`-th
/// smallest first value among the key's touchers, so two touchers that saw
/// the same first value share a bit. Each toucher's set is OR-ed into the
/// accumulated set of its last value, and each (last value, bit) pair is
/// emitted once at the end, already deduplicated and sorted; when those
/// accumulated sets would take too much memory (a hot key with many distinct
/// last values) pairs are emitted per toucher and deduplicated by sorting.
fn sweep_links(order: &Compact, touches: &[Touch], s: &mut Scratch, merge_words: usize) -> Vec<(i64, i64)> {
    // Touchers without an edge neither link nor are linked.
    let (mut lo, mut hi) = (u32::MAX, 0);
    let mut active = 0;
    for t in touches {
        let p = order.pos[t.op as usize];
        if p != u32::MAX {
            lo = lo.min(p);
            hi = hi.max(p);
            active += 1;
        }
    }
    if active < 2 {
        return Vec::new();
    }
    let span = (hi - lo + 1) as usize;
    let mut firsts: Vec<i64> = touches.iter().map(|t| t.first).collect();
    firsts.sort_unstable();
    firsts.dedup();
    let words = firsts.len().div_ceil(64);
    let mut lasts: Vec<i64> = touches.iter().map(|t| t.last).collect();
    lasts.sort_unstable();
    lasts.dedup();
    let merge = lasts.len().saturating_mul(words) <= merge_words;
    let mut merged: Vec<u64> = if merge { vec![0; lasts.len() * words] } else { Vec::new() };
    s.state.clear();
    s.state.resize(span, NO_SET);
    s.pending.clear();
    s.pending.resize(span, 0);
    s.arena.clear();
    s.free.clear();
    s.acc.clear();
    s.acc.resize(words, 0);
    for (r, t) in touches.iter().enumerate() {
        let p = order.pos[t.op as usize];
        if p != u32::MAX {
            s.state[(p - lo) as usize] = TOUCHER | r as u32;
        }
    }
    // Each toucher's bit: its first value's position.
    let bit: Vec<u32> = touches.iter().map(|t| firsts.partition_point(|&v| v < t.first) as u32).collect();
    for x in lo..=hi {
        for &y in order.out(x) {
            if y <= hi {
                s.pending[(y - lo) as usize] += 1;
            }
        }
    }
    let mut out = Vec::new();
    for x in (lo..=hi).rev() {
        let xi = (x - lo) as usize;
        let succ = order.out(x);
        let toucher = s.state[xi] != NO_SET && s.state[xi] & TOUCHER != 0;
        let needed = toucher || s.pending[xi] > 0;
        let mut any = false;
        if needed {
            s.acc.iter_mut().for_each(|w| *w = 0);
        }
        for &y in succ {
            if y > hi {
                continue;
            }
            let yi = (y - lo) as usize;
            let st = s.state[yi];
            if st != NO_SET && st & TOUCHER != 0 {
                if needed {
                    let b = bit[(st & !TOUCHER) as usize] as usize;
                    s.acc[b / 64] |= 1 << (b % 64);
                    any = true;
                }
            } else if st != NO_SET {
                let base = st as usize * words;
                if needed {
                    for (a, b) in s.acc.iter_mut().zip(&s.arena[base..base + words]) {
                        *a |= *b;
                    }
                    any = true;
                }
                s.pending[yi] -= 1;
                if s.pending[yi] == 0 {
                    s.free.push(st);
                    s.state[yi] = NO_SET;
                }
            }
        }
        if !any {
            continue;
        }
        if toucher {
            let v1 = touches[(s.state[xi] & !TOUCHER) as usize].last;
            if merge {
                let base = lasts.partition_point(|&v| v < v1) * words;
                for (m, a) in merged[base..base + words].iter_mut().zip(&s.acc) {
                    *m |= *a;
                }
            } else {
                emit(v1, &s.acc, &firsts, &mut out);
            }
        } else {
            let slot = match s.free.pop() {
                Some(slot) => slot,
                None => {
                    s.arena.resize(s.arena.len() + words, 0);
                    (s.arena.len() / words - 1) as u32
                }
            };
            let base = slot as usize * words;
            s.arena[base..base + words].copy_from_slice(&s.acc);
            s.state[xi] = slot;
        }
    }
    if merge {
        for (i, &v1) in lasts.iter().enumerate() {
            emit(v1, &merged[i * words..(i + 1) * words], &firsts, &mut out);
        }
    }
    out
}

/// Most words of accumulated per-last-value sets one key may take (32 MiB).
const MERGE_WORDS: usize = 4 << 20;

/// Pairs `(v1, v2)` for each value `v2 != v1` in `set` (bits over `firsts`).
fn emit(v1: i64, set: &[u64], firsts: &[i64], out: &mut Vec<(i64, i64)>) {
    for (w, &bits) in set.iter().enumerate() {
        let mut bits = bits;
        while bits != 0 {
            let v2 = firsts[w * 64 + bits.trailing_zeros() as usize];
            bits &= bits - 1;
            if v1 != v2 {
                out.push((v1, v2));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anomaly::rel;
    use crate::graph::Edge;

    /// The per-toucher emission (taken when merging per value would need
    /// too much memory) gives the same links as the merged one, and a
    /// batch of keys the same as each key alone.
    #[test]
    fn emission_paths_agree() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..200 {
            let n = 20 + rnd(60) as u32;
            let edges: Vec<Edge> = (0..3 * n)
                .map(|_| {
                    let a = rnd(n as u64 - 1) as u32;
                    let b = a + 1 + rnd(((n - a - 1) as u64).min(6)) as u32;
                    Edge { from: a, to: b, rels: rel::REALTIME }
                })
                .collect();
            let g = Graph::from_edges(n as usize, &edges);
            let compact = Compact::new(&g);
            // Three keys; values small so that firsts and lasts repeat.
            let mut touches: Vec<Vec<Touch>> = vec![Vec::new(); 3];
            for op in 0..n {
                for (k, t) in touches.iter_mut().enumerate() {
                    if rnd(3) == 0 {
                        t.push(Touch { op, first: rnd(8) as i64 + k as i64, last: rnd(8) as i64 });
                    }
                }
            }
            let mut offsets = vec![0u32];
            for t in &touches {
                offsets.push(offsets[offsets.len() - 1] + t.len() as u32);
            }
            let keys = KeyTouches { offsets, touches: touches.concat() };
            let mut scratch = Scratch::default();
            let mut alone = Vec::new();
            for k in 0..3 {
                if keys.of(k).len() < 2 {
                    continue;
                }
                let merged = sweep_links(&compact, keys.of(k), &mut scratch, usize::MAX);
                let mut each = sweep_links(&compact, keys.of(k), &mut scratch, 0);
                each.sort_unstable();
                each.dedup();
                assert_eq!(merged, each);
                alone.extend(merged.into_iter().map(|(a, b)| (k as u32, a, b)));
            }
            let batch: Vec<usize> = (0..3).filter(|&k| keys.of(k).len() >= 2).collect();
            if keys.touches.len() <= 64 {
                assert_eq!(batch_links(&compact, &keys, &batch, &mut scratch), alone);
            }
        }
    }
}
