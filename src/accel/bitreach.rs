//! Windowed reachability rows in a band layout, computed column block by
//! column block: the CPU mirror of `kernels/reach.cu`.
//!
//! The relation is exactly [`crate::accel::reach::WindowReach`]'s: with
//! the nodes in a topological order and a window of `64·words` positions,
//! position `p` *reaches* `q` (`p < q < p + 64·words`) when a path leads
//! from `p` to `q`. A path between two nodes only visits positions between
//! theirs, so every bit is exact and pairs farther apart than the window
//! read as *not known* (an under-approximation, which pruning tolerates).
//!
//! ## The band layout
//! Columns are grouped in absolute 64-bit words (word `w` = positions
//! `64w .. 64w + 63`). Row `p` covers the columns `[p, p + 64·words)`,
//! which touch the `words + 1` absolute words `p/64 ..= p/64 + words`;
//! word `w` of row `p` is stored at slot `w - p/64` of a `words + 1`-word
//! stride, its bits outside the window masked to zero ([`band_mask`]).
//! Because nothing is shifted, row `p` is the OR over its successors `s`
//! (in the window) of row `s` plus bit `s`, word by word at the *same*
//! absolute index:
//!
//! `row[p][w] = mask_p(w) & OR_s (row[s][w] | bit_s(w))`
//!
//! so word `w` of a row depends only on word `w` of its successors:
//! **columns are independent**. The closure ([`BitReach::closure`]) splits
//! the words into column blocks; each block sweeps, alone, the rows whose
//! band touches its columns in reverse topological order (positions
//! descending). No level structure, no synchronisation between blocks: on
//! the GPU one thread per column word and one launch per closure, on the CPU
//! rayon over blocks of 8 to 64 words ([`CPU_BLOCK_WORDS`]). The work is the classic
//! one (one word-OR per successor per row word) with no shifts.
//!
//! The constraint test ([`BitReach::test_flat`]) takes every side of every
//! constraint as a flat list of `(from, to)` position pairs and returns the
//! first pair of each side whose reverse path exists. After pruning derives
//! edges, [`BitReach::insert`] updates the closure in place (every row that
//! reaches the edge's source ORs in the target's row, masked to its band),
//! valid while the edges go forward in the order.
//!
//! Memory: `n · (words + 1) · 8` bytes, one word per row more than
//! `WindowReach` (the band of an unaligned row straddles one more word).

use super::reach::{Dag, Reach, SyncPtr};
use rayon::prelude::*;

/// "No pair of this side is blocked" in [`BitReach::test_flat`]'s result.
pub const NOT_BLOCKED: u32 = u32::MAX;

/// Fewest and most column words per rayon task in [`BitReach::closure`]
/// (between them: about four tasks per thread).
pub const CPU_BLOCK_WORDS: (usize, usize) = (8, 64);

/// A DAG flattened for the band sweep (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Nodes.
    pub n: usize,
    /// 64-bit words of window per row (the window is `64 · words` bits).
    pub words: usize,
    /// `targets[offsets[p]..offsets[p+1]]`: successor positions of position
    /// `p`, only those within the window.
    pub offsets: Vec<u32>,
    /// Successor positions.
    pub targets: Vec<u32>,
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
        Plan { n, words, offsets, targets, pos: dag.pos.to_vec() }
    }

    /// Words stored per row: the window's words plus one.
    pub fn stride(&self) -> usize {
        self.words + 1
    }

    /// Absolute column words (`ceil(n / 64)`).
    pub fn columns(&self) -> usize {
        self.n.div_ceil(64)
    }

    /// Bytes the rows take.
    pub fn row_bytes(&self) -> usize {
        self.n * self.stride() * 8
    }
}

/// The bits of absolute word `w` that row `p` may hold, for a window of
/// `words` words: all of them, except in the band's last word
/// (`w = p/64 + words`), where only columns below `p + 64·words` count.
/// Columns at or below `p` never get set (successors come later), so no
/// lower mask is needed. `w` must be within the band.
#[inline]
pub fn band_mask(p: usize, words: usize, w: usize) -> u64 {
    if w - p / 64 == words {
        (1u64 << (p % 64)) - 1
    } else {
        u64::MAX
    }
}

/// The rows whose band touches absolute word `w`: positions
/// `lo..hi` (`hi` exclusive) for `n` nodes.
#[inline]
pub fn rows_touching(w: usize, words: usize, n: usize) -> (usize, usize) {
    let lo = (64 * w + 1).saturating_sub(64 * words);
    let hi = (64 * w + 64).min(n);
    (lo, hi.max(lo))
}

/// What successor `s` contributes to absolute word `w` of a predecessor's
/// row: `s`'s own word `w` (when within `s`'s band) and bit `s`. The kernel
/// evaluates the same formula.
#[inline]
pub fn succ_word(rows: &[u64], stride: usize, s: usize, w: usize) -> u64 {
    let base = s / 64;
    if w < base {
        return 0;
    }
    let mut x = rows[s * stride + (w - base)];
    if w == base {
        x |= 1u64 << (s % 64);
    }
    x
}

/// Bit rows by topological position in the band layout (see the module
/// docs).
#[derive(Clone, Debug)]
pub struct BitReach {
    /// `pos[v]`: topological position of node `v`.
    pub pos: Vec<u32>,
    /// Words of window per row (the window is `64 · words` bits).
    pub words: usize,
    /// `rows[p * (words + 1) + k]`: absolute word `p/64 + k` of row `p`.
    pub rows: Vec<u64>,
}

impl BitReach {
    /// No rows.
    pub fn empty() -> BitReach {
        BitReach { pos: Vec::new(), words: 1, rows: Vec::new() }
    }

    /// Words stored per row.
    #[inline]
    pub fn stride(&self) -> usize {
        self.words + 1
    }

    /// The closure of `plan`: rayon over blocks of column words (see
    /// [`CPU_BLOCK_WORDS`]), each sweeping its rows by descending position.
    pub fn closure(plan: &Plan) -> BitReach {
        let (n, words, stride) = (plan.n, plan.words, plan.stride());
        let mut rows = vec![0u64; n * stride];
        let ptr = SyncPtr(rows.as_mut_ptr());
        let columns = plan.columns();
        let block = (columns / (4 * rayon::current_num_threads())).clamp(CPU_BLOCK_WORDS.0, CPU_BLOCK_WORDS.1);
        (0..columns.div_ceil(block)).into_par_iter().for_each(|b| {
            let (w0, w1) = (b * block, ((b + 1) * block).min(columns));
            // SAFETY: the task of block b reads and writes only the slots
            // of absolute words w0..w1 (of rows within `rows`), which no
            // other task touches.
            unsafe { sweep_block(plan, ptr.get(), w0, w1) };
        });
        BitReach { pos: plan.pos.clone(), words, rows }
    }

    /// Whether position `from` reaches position `to` (within the window).
    #[inline]
    pub fn reaches_pos(&self, from: u32, to: u32) -> bool {
        if to <= from {
            return false;
        }
        let (f, t) = (from as usize, to as usize);
        t - f < self.words * 64 && self.rows[f * self.stride() + (t / 64 - f / 64)] >> (t % 64) & 1 == 1
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
    /// everything it implies within the window: every row `u` in the window
    /// before `d` that is `s` or reaches it ORs in `d`'s row and bit `d`,
    /// masked to its band. Returns the rows changed.
    pub fn insert(&mut self, s: u32, d: u32) -> usize {
        debug_assert!(s < d);
        let (words, stride) = (self.words, self.stride());
        let (s, d) = (s as usize, d as usize);
        if d - s >= words * 64 {
            return 0;
        }
        let lo = (d + 1).saturating_sub(words * 64);
        let (head, tail) = self.rows.split_at_mut(d * stride);
        let src = &tail[..stride];
        let block = &mut head[lo * stride..(s + 1) * stride];
        let update = |(i, row): (usize, &mut [u64])| -> usize {
            let u = lo + i;
            let reaches_s = u == s || row[s / 64 - u / 64] >> (s % 64) & 1 == 1;
            if !reaches_s || row[d / 64 - u / 64] >> (d % 64) & 1 == 1 {
                return 0;
            }
            or_band(row, u, src, d, words);
            1
        };
        if (s + 1 - lo) * stride >= 1 << 16 {
            block.par_chunks_mut(stride).enumerate().map(update).sum()
        } else {
            block.chunks_mut(stride).enumerate().map(update).sum()
        }
    }
}

/// Sweeps column words `w0..w1` of every row touching them, positions
/// descending: each word is the masked OR of its successors' same words
/// ([`succ_word`], one contiguous slice per successor so the ORs
/// vectorize).
///
/// # Safety
/// `rows` points to `plan.n * plan.stride()` words, and nothing else reads
/// or writes the slots of words `w0..w1` meanwhile.
unsafe fn sweep_block(plan: &Plan, rows: *mut u64, w0: usize, w1: usize) {
    let (n, words, stride) = (plan.n, plan.words, plan.stride());
    let lo = rows_touching(w0, words, n).0;
    let hi = rows_touching(w1 - 1, words, n).1;
    for p in (lo..hi).rev() {
        // The words of this block within p's band.
        let (first, last) = (w0.max(p / 64), (w1 - 1).min(p / 64 + words));
        if first > last {
            continue;
        }
        // SAFETY: p < n, and slots first - p/64 ..= last - p/64 <= words
        // are within row p; only this task touches words w0..w1.
        let dst = unsafe { std::slice::from_raw_parts_mut(rows.add(p * stride + (first - p / 64)), last + 1 - first) };
        dst.fill(0);
        for &s in &plan.targets[plan.offsets[p] as usize..plan.offsets[p + 1] as usize] {
            let (s, sb) = (s as usize, s as usize / 64);
            let from = first.max(sb);
            if from > last {
                continue;
            }
            // SAFETY: s != p (s > p), so this does not overlap `dst`; its
            // slots from - s/64 ..= last - s/64 <= words (last <= p/64 +
            // words <= s/64 + words) are within row s.
            let src = unsafe { std::slice::from_raw_parts(rows.add(s * stride + (from - sb)), last + 1 - from) };
            for (x, &y) in dst[from - first..].iter_mut().zip(src) {
                *x |= y;
            }
            if sb >= first {
                dst[sb - first] |= 1u64 << (s % 64);
            }
        }
        if last == p / 64 + words {
            dst[last - first] &= band_mask(p, words, last);
        }
    }
}

/// `row |= mask_u(row d | bit d)` over `u`'s band: what inserting an edge
/// into `d` gives a row `u` that reaches its source.
fn or_band(row: &mut [u64], u: usize, src: &[u64], d: usize, words: usize) {
    let (ub, db) = (u / 64, d / 64);
    // Absolute words of u's band at or after d's first word.
    for w in db..=ub + words {
        let mut x = src[w - db];
        if w == db {
            x |= 1u64 << (d % 64);
        }
        row[w - ub] |= x & band_mask(u, words, w);
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
    fn band_masks_keep_exactly_the_window() {
        // Window of 2 words (128 columns); row 70 covers 70..198, words 1..=3.
        assert_eq!(band_mask(70, 2, 1), u64::MAX);
        assert_eq!(band_mask(70, 2, 3), (1 << 6) - 1);
        // An aligned row's last band word holds nothing.
        assert_eq!(band_mask(128, 2, 4), 0);
        assert_eq!(rows_touching(3, 2, 1000), (65, 256));
        assert_eq!(rows_touching(0, 2, 10), (0, 10));
    }

    #[test]
    fn a_chain_reaches_exactly_its_window() {
        let n = 300usize;
        let offsets: Vec<u32> = (0..=n as u32).map(|i| i.min(n as u32 - 1)).collect();
        let targets: Vec<u32> = (1..n as u32).collect();
        let order: Vec<u32> = (0..n as u32).collect();
        let dag = Dag { offsets: &offsets, targets: &targets, order: &order, pos: &order };
        let r = BitReach::closure(&Plan::new(&dag, 128));
        for p in 0..n as u32 {
            for q in 0..n as u32 {
                assert_eq!(r.reaches_pos(p, q), p < q && q - p < 128, "{p} -> {q}");
            }
        }
    }
}
