//! The CPU mirror of the CUDA kernels in `kernels/reach.cu`: windowed
//! bit-matrix reachability laid out for data-parallel hardware.
//!
//! The relation is exactly [`crate::si_check::reach::WindowReach`]'s: nodes
//! are numbered in a topological order, and the row of the node at position
//! `p` holds bit `d` (`1 <= d < 64·words`) when `p` reaches position `p + d`.
//! A path between two nodes only visits positions between theirs, so every
//! bit is exact and pairs farther apart than the window read as *not known*
//! (an under-approximation, which pruning tolerates).
//!
//! What differs is the layout, chosen so that one algorithm runs unchanged
//! on a GPU (one thread per row word) and on the CPU (rayon over rows):
//! - rows are stored by topological position, so a node's successors (close
//!   after it in the order) are close in memory;
//! - a [`Plan`] flattens the DAG once: successor *positions* per position,
//!   already restricted to the window, and the positions of each level
//!   (longest in-window path to a sink) in one array, levels ascending;
//! - the closure is one sweep per level: every row of the level is the OR
//!   of its successors' rows, shifted by their distance, plus their bits
//!   ([`row_word`] is the per-word formula the kernel evaluates);
//! - the constraint test ([`BitReach::test_flat`]) takes every side of every
//!   constraint as a flat list of `(from, to)` position pairs and returns
//!   the first pair of each side whose reverse path exists;
//! - after pruning derives edges, [`BitReach::insert`] updates the closure
//!   in place instead of recomputing it (rank-1 per edge: every row that
//!   reaches the edge's source ORs in the target's row), valid while the
//!   edges go forward in the order, which then stays the one a fresh
//!   topological sort would choose.
//!
//! Memory is what `WindowReach` uses: `n · words · 8` bytes.

use crate::si_check::reach::{Dag, Reach, SyncPtr};
use rayon::prelude::*;

/// "No pair of this side is blocked" in [`BitReach::test_flat`]'s result.
pub const NOT_BLOCKED: u32 = u32::MAX;

/// A DAG flattened for the level sweep (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Nodes.
    pub n: usize,
    /// 64-bit words per row.
    pub words: usize,
    /// `targets[offsets[p]..offsets[p+1]]`: successor positions of position
    /// `p`, only those within the window.
    pub offsets: Vec<u32>,
    /// Successor positions.
    pub targets: Vec<u32>,
    /// `level_nodes[level_ptr[l]..level_ptr[l+1]]`: the positions of level
    /// `l + 1` (level 0, the nodes with no successor in the window, has
    /// empty rows and is left out).
    pub level_ptr: Vec<u32>,
    /// Positions, level by level.
    pub level_nodes: Vec<u32>,
    /// `pos[v]`: topological position of node `v`.
    pub pos: Vec<u32>,
}

impl Plan {
    /// Flattens `dag` for rows of `window_bits` bits (rounded up to words).
    pub fn new(dag: &Dag<'_>, window_bits: usize) -> Plan {
        let n = dag.order.len();
        let words = window_bits.div_ceil(64).max(1);
        let width = (words * 64) as u64;
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        let mut targets = Vec::with_capacity(dag.targets.len());
        for (p, &v) in dag.order.iter().enumerate() {
            let succ = &dag.targets[dag.offsets[v as usize] as usize..dag.offsets[v as usize + 1] as usize];
            for &s in succ {
                let q = dag.pos[s as usize];
                if ((q as u64).wrapping_sub(p as u64)) < width {
                    targets.push(q);
                }
            }
            offsets.push(targets.len() as u32);
        }
        let mut level = vec![0u32; n];
        let mut max_level = 0u32;
        for p in (0..n).rev() {
            let l = targets[offsets[p] as usize..offsets[p + 1] as usize].iter().map(|&q| level[q as usize] + 1).max();
            level[p] = l.unwrap_or(0);
            max_level = max_level.max(level[p]);
        }
        let mut level_ptr = vec![0u32; max_level as usize + 1];
        for &l in &level {
            if l > 0 {
                level_ptr[l as usize] += 1;
            }
        }
        for l in 1..level_ptr.len() {
            level_ptr[l] += level_ptr[l - 1];
        }
        let mut fill = level_ptr.clone();
        let mut level_nodes = vec![0u32; level_ptr[max_level as usize] as usize];
        for (p, &l) in level.iter().enumerate() {
            if l > 0 {
                level_nodes[fill[l as usize - 1] as usize] = p as u32;
                fill[l as usize - 1] += 1;
            }
        }
        Plan { n, words, offsets, targets, level_ptr, level_nodes, pos: dag.pos.to_vec() }
    }

    /// Levels with a row to fill.
    pub fn levels(&self) -> usize {
        self.level_ptr.len() - 1
    }

    /// The positions of level `l + 1`.
    pub fn level(&self, l: usize) -> &[u32] {
        &self.level_nodes[self.level_ptr[l] as usize..self.level_ptr[l + 1] as usize]
    }

    /// Bytes the rows take.
    pub fn row_bytes(&self) -> usize {
        self.n * self.words * 8
    }
}

/// Word `j` of `src` shifted left by `d` bits (bits shifted past the end are
/// dropped), ORed with bit `d` itself: what a successor at distance `d`
/// contributes to word `j` of its predecessor's row.
#[inline]
pub fn row_word(src: &[u64], d: usize, j: usize) -> u64 {
    let (ws, bs) = (d / 64, d % 64);
    if j < ws {
        return 0;
    }
    let mut w = src[j - ws] << bs;
    if bs != 0 && j > ws {
        w |= src[j - ws - 1] >> (64 - bs);
    }
    if j == ws {
        w |= 1 << bs;
    }
    w
}

/// `dst |= shift(src, d) | bit(d)`: [`row_word`] for every word, with the
/// branches hoisted out of the loop (equal-length slices, so the loop has
/// no bounds checks and vectorizes).
#[inline]
fn or_row(dst: &mut [u64], src: &[u64], d: usize) {
    let (ws, bs) = (d / 64, d % 64);
    if ws >= dst.len() {
        return;
    }
    let dst = &mut dst[ws..];
    let src = &src[..dst.len()];
    if bs == 0 {
        for (x, &y) in dst.iter_mut().zip(src) {
            *x |= y;
        }
    } else {
        for i in 1..dst.len() {
            dst[i] |= (src[i] << bs) | (src[i - 1] >> (64 - bs));
        }
        dst[0] |= src[0] << bs;
    }
    dst[0] |= 1 << bs;
}

/// Bit rows by topological position (see the module docs).
#[derive(Clone, Debug)]
pub struct BitReach {
    /// `pos[v]`: topological position of node `v`.
    pub pos: Vec<u32>,
    /// Words per row.
    pub words: usize,
    /// `rows[p * words..(p + 1) * words]`: the row of position `p`.
    pub rows: Vec<u64>,
}

impl BitReach {
    /// No rows.
    pub fn empty() -> BitReach {
        BitReach { pos: Vec::new(), words: 1, rows: Vec::new() }
    }

    /// The closure of `plan`, one sweep per level, rayon over the rows of a
    /// level.
    pub fn closure(plan: &Plan) -> BitReach {
        let words = plan.words;
        let mut rows = vec![0u64; plan.n * words];
        let ptr = SyncPtr(rows.as_mut_ptr());
        for l in 0..plan.levels() {
            let fill = |p: u32| {
                let p = p as usize;
                // SAFETY: each row of a level is written by one task only (the
                // positions of a level are distinct), and only rows of lower
                // levels, which no task of this level writes, are read.
                let row = unsafe { std::slice::from_raw_parts_mut(ptr.get().add(p * words), words) };
                for &q in &plan.targets[plan.offsets[p] as usize..plan.offsets[p + 1] as usize] {
                    let src = unsafe { std::slice::from_raw_parts(ptr.get().add(q as usize * words), words) };
                    or_row(row, src, q as usize - p);
                }
            };
            let nodes = plan.level(l);
            if nodes.len() * words >= 4096 {
                nodes.par_iter().with_min_len(8).for_each(|&p| fill(p));
            } else {
                nodes.iter().for_each(|&p| fill(p));
            }
        }
        BitReach { pos: plan.pos.clone(), words, rows }
    }

    /// Whether position `from` reaches position `to` (within the window).
    #[inline]
    pub fn reaches_pos(&self, from: u32, to: u32) -> bool {
        if to <= from {
            return false;
        }
        let d = (to - from) as usize;
        d < self.words * 64 && self.rows[from as usize * self.words + d / 64] >> (d % 64) & 1 == 1
    }

    /// The constraint test over flattened sides: side `i` is the position
    /// pairs `pairs[side_ptr[i]..side_ptr[i+1]]`, each an edge `(a, b)` of
    /// that side; the result for side `i` is the index (within the side) of
    /// the first edge whose target reaches its source, or [`NOT_BLOCKED`].
    pub fn test_flat(&self, side_ptr: &[u32], pairs: &[[u32; 2]]) -> Vec<u32> {
        (0..side_ptr.len().saturating_sub(1))
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| {
                let side = &pairs[side_ptr[i] as usize..side_ptr[i + 1] as usize];
                side.iter().position(|&[a, b]| self.reaches_pos(b, a)).map_or(NOT_BLOCKED, |k| k as u32)
            })
            .collect()
    }

    /// Adds the edge from position `s` to position `d` (`s < d`) and
    /// everything it implies within the window: every row `u <= s` that is
    /// `s` or reaches it ORs in `d`'s row shifted by `d - u`. Rows already
    /// reaching `d` are skipped (they hold `d`'s row already). Returns the
    /// rows changed.
    pub fn insert(&mut self, s: u32, d: u32) -> usize {
        debug_assert!(s < d);
        let words = self.words;
        let width = words * 64;
        let (s, d) = (s as usize, d as usize);
        if d - s >= width {
            return 0;
        }
        let lo = (d + 1).saturating_sub(width);
        let (head, tail) = self.rows.split_at_mut(d * words);
        let src = &tail[..words];
        let block = &mut head[lo * words..(s + 1) * words];
        let update = |(i, row): (usize, &mut [u64])| -> usize {
            let u = lo + i;
            let (to_s, to_d) = (s - u, d - u);
            let reaches_s = to_s == 0 || row[to_s / 64] >> (to_s % 64) & 1 == 1;
            if !reaches_s || row[to_d / 64] >> (to_d % 64) & 1 == 1 {
                return 0;
            }
            or_row(row, src, to_d);
            1
        };
        if (s + 1 - lo) * words >= 1 << 16 {
            block.par_chunks_mut(words).enumerate().map(update).sum()
        } else {
            block.chunks_mut(words).enumerate().map(update).sum()
        }
    }
}

impl Reach for BitReach {
    #[inline]
    fn reaches(&self, from: u32, to: u32) -> bool {
        self.reaches_pos(self.pos[from as usize], self.pos[to as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_word_shifts_across_words_and_sets_the_distance_bit() {
        let src = [1u64 << 63 | 1, 1, 0];
        let got: Vec<u64> = (0..3).map(|j| row_word(&src, 65, j)).collect();
        // bit 65 itself, src bit 0 -> 65, bit 63 -> 128, bit 64 -> 129.
        assert_eq!(got, vec![0, 2, 1 | 2]);
        assert_eq!(row_word(&[0, 0], 3, 0), 8);
        // The loop form agrees with the per-word formula.
        let src: Vec<u64> = (0..5u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7)).collect();
        for d in [1, 63, 64, 65, 130, 319] {
            let mut dst = vec![0x10u64; 5];
            or_row(&mut dst, &src, d);
            let want: Vec<u64> = (0..5).map(|j| 0x10 | row_word(&src, d, j)).collect();
            assert_eq!(dst, want, "d = {d}");
        }
    }
}
