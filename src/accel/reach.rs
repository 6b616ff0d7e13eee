//! Reachability in the begin/commit graph, for pruning.
//!
//! Pruning only asks "does `b` reach `a`?" to rule out a constraint side
//! holding an edge `a → b`. A *no* that should have been *yes* only means
//! less pruning (the solver then decides that constraint), so any
//! under-approximation is sound. [`WindowReach`] exploits that: nodes are
//! numbered in a topological order, and each node keeps one bit for each of
//! the next `W` positions. A path from `b` to `a` only visits positions
//! between theirs, so the answer is exact whenever `a` lies fewer than `W`
//! positions after `b`, and *no* beyond. With `W` = the number of nodes this
//! is the full transitive closure; for huge histories `W` is chosen so that
//! the rows fit a memory budget, and since dependencies in real histories
//! are mostly between transactions close in time, little pruning is lost.
//!
//! Rows are filled in reverse topological order (`row(v) = ∪ row(s) ∪ {s}`
//! over successors `s`, shifted by the distance between their positions), the
//! DP PolySI and VeriStrong use, over bit-packed words; nodes of the same
//! *level* (longest distance to a sink) are independent and are filled in
//! parallel. The [`Reach`] trait keeps the pruning loop independent of how
//! reachability is computed, so an accelerator kernel can replace it.

use rayon::prelude::*;

/// Answers reachability queries over a fixed DAG.
pub trait Reach: Sync {
    /// Whether `from` reaches `to` by a non-empty path (under-approximation
    /// allowed: `false` may mean "not known").
    fn reaches(&self, from: u32, to: u32) -> bool;
}

/// A DAG in compressed sparse row form, with a topological order.
pub struct Dag<'a> {
    /// `targets[offsets[v]..offsets[v+1]]` are `v`'s successors.
    pub offsets: &'a [u32],
    /// Successor lists.
    pub targets: &'a [u32],
    /// `order[i]` is the node at topological position `i`.
    pub order: &'a [u32],
    /// `pos[v]` is `v`'s topological position.
    pub pos: &'a [u32],
}

/// Windowed bit-matrix reachability (see the module docs).
pub struct WindowReach {
    pos: Vec<u32>,
    words: usize,
    rows: Vec<u64>,
}

impl WindowReach {
    /// Computes rows of `window_bits` (rounded up to 64) bits per node.
    pub fn new(dag: &Dag<'_>, window_bits: usize) -> WindowReach {
        let n = dag.order.len();
        let words = window_bits.div_ceil(64).max(1);
        let mut rows = vec![0u64; n * words];
        // Level = longest path to a sink; nodes of one level only depend on
        // lower levels.
        let mut level = vec![0u32; n];
        let mut max_level = 0;
        for &v in dag.order.iter().rev() {
            let mut l = 0;
            for &s in &dag.targets[dag.offsets[v as usize] as usize..dag.offsets[v as usize + 1] as usize] {
                l = l.max(level[s as usize] + 1);
            }
            level[v as usize] = l;
            max_level = max_level.max(l);
        }
        let mut by_level: Vec<Vec<u32>> = vec![Vec::new(); max_level as usize + 1];
        for &v in dag.order {
            by_level[level[v as usize] as usize].push(v);
        }
        let width = (words * 64) as u32;
        let rows_ptr = SyncPtr(rows.as_mut_ptr());
        for nodes in by_level.iter().skip(1) {
            let fill = |v: u32| {
                let pv = dag.pos[v as usize];
                // SAFETY: each node's row is written by exactly one task (the
                // nodes of a level are distinct) and only rows of lower
                // levels, which no task of this level writes, are read.
                let row = unsafe { std::slice::from_raw_parts_mut(rows_ptr.get().add(v as usize * words), words) };
                for &s in &dag.targets[dag.offsets[v as usize] as usize..dag.offsets[v as usize + 1] as usize] {
                    let d = dag.pos[s as usize] - pv;
                    if d >= width {
                        continue;
                    }
                    let src = unsafe { std::slice::from_raw_parts(rows_ptr.get().add(s as usize * words), words) };
                    or_shifted(row, src, d as usize);
                    row[d as usize / 64] |= 1 << (d % 64);
                }
            };
            if nodes.len() >= 256 {
                nodes.par_iter().for_each(|&v| fill(v));
            } else {
                nodes.iter().for_each(|&v| fill(v));
            }
        }
        WindowReach { pos: dag.pos.to_vec(), words, rows }
    }
}

/// A row matrix's base pointer shared by the threads that fill disjoint
/// rows of it (here and in [`super::bitreach`]).
#[derive(Clone, Copy)]
pub(crate) struct SyncPtr(pub(crate) *mut u64);
// SAFETY: used only as described in `WindowReach::new` and
// `BitReach::closure`: each thread writes rows no other thread touches.
unsafe impl Send for SyncPtr {}
unsafe impl Sync for SyncPtr {}
impl SyncPtr {
    pub(crate) fn get(self) -> *mut u64 {
        self.0
    }
}

/// `dst |= src << shift` over little-endian bit rows of equal length,
/// dropping bits shifted past the end.
fn or_shifted(dst: &mut [u64], src: &[u64], shift: usize) {
    let (ws, bs) = (shift / 64, shift % 64);
    let n = dst.len();
    if ws >= n {
        return;
    }
    if bs == 0 {
        for i in ws..n {
            dst[i] |= src[i - ws];
        }
    } else {
        dst[ws] |= src[0] << bs;
        for i in ws + 1..n {
            dst[i] |= (src[i - ws] << bs) | (src[i - ws - 1] >> (64 - bs));
        }
    }
}

impl Reach for WindowReach {
    fn reaches(&self, from: u32, to: u32) -> bool {
        let (pf, pt) = (self.pos[from as usize], self.pos[to as usize]);
        if pt <= pf {
            return false;
        }
        let d = (pt - pf) as usize;
        if d >= self.words * 64 {
            return false;
        }
        self.rows[from as usize * self.words + d / 64] >> (d % 64) & 1 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dag_of(n: usize, edges: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
        let mut offsets = vec![0u32; n + 1];
        for &(a, _) in edges {
            offsets[a as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0; edges.len()];
        for &(a, b) in edges {
            targets[fill[a as usize] as usize] = b;
            fill[a as usize] += 1;
        }
        let order: Vec<u32> = (0..n as u32).collect();
        let pos = order.clone();
        (offsets, targets, order, pos)
    }

    fn closure(n: usize, edges: &[(u32, u32)]) -> Vec<Vec<bool>> {
        let mut r = vec![vec![false; n]; n];
        for &(a, b) in edges {
            r[a as usize][b as usize] = true;
        }
        for k in 0..n {
            for i in 0..n {
                for j in 0..n {
                    if r[i][k] && r[k][j] {
                        r[i][j] = true;
                    }
                }
            }
        }
        r
    }

    #[test]
    fn full_window_is_the_transitive_closure_and_narrow_windows_under_approximate() {
        // A forward-only random DAG on 300 nodes (identity topological order).
        let n = 300;
        let mut x: u64 = 7;
        let mut edges = Vec::new();
        for a in 0..n as u32 {
            for _ in 0..3 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let b = a + 1 + (x % 40) as u32;
                if (b as usize) < n {
                    edges.push((a, b));
                }
            }
        }
        let (offsets, targets, order, pos) = dag_of(n, &edges);
        let dag = Dag { offsets: &offsets, targets: &targets, order: &order, pos: &pos };
        let exact = closure(n, &edges);
        let full = WindowReach::new(&dag, n);
        let narrow = WindowReach::new(&dag, 64);
        let mut narrow_hits = 0;
        for a in 0..n as u32 {
            for b in 0..n as u32 {
                let e = exact[a as usize][b as usize];
                assert_eq!(full.reaches(a, b), e, "{a} -> {b}");
                let w = narrow.reaches(a, b);
                assert!(!w || e, "narrow window claimed {a} -> {b}");
                if b > a && b - a < 64 {
                    assert_eq!(w, e, "within the window {a} -> {b}");
                }
                narrow_hits += usize::from(w);
            }
        }
        assert!(narrow_hits > 0);
    }

    #[test]
    fn shifted_or_moves_bits_across_words() {
        let mut dst = vec![0u64; 3];
        or_shifted(&mut dst, &[1 << 63 | 1, 1, 0], 65);
        assert_eq!(dst, vec![0, 2, 1 | 2]);
    }
}
