//! The transaction dependency graph in compressed sparse row form.
//!
//! Vertices are [`OpId`]s (positions in the history), so no id translation is
//! needed between stages; invocations simply have no edges. Each edge carries
//! the set of relationships ([`Rels`]) that hold between its endpoints, like
//! Elle's `BitRels`. Inference produces flat edge lists (possibly from several
//! threads); [`Graph::from_edges`] sorts them by a counting sort on the source
//! and merges parallel edges, so building is linear in the number of edges.

use crate::anomaly::Rels;
use crate::history::OpId;
use rayon::prelude::*;
use std::ops::Range;

/// Vertex boundaries cutting `0..n` (`counts`: edge offsets by vertex, n + 1
/// of them) into at most `blocks` ranges of about equal edge counts.
fn block_cuts(counts: &[u32], blocks: usize) -> Vec<usize> {
    let n = counts.len() - 1;
    let total = counts[n] as u64;
    let blocks = blocks.clamp(1, n.max(1)) as u64;
    let mut cuts = vec![0];
    for b in 1..blocks {
        let want = (total * b / blocks) as u32;
        let v = counts.partition_point(|&c| c < want).min(n);
        if v > *cuts.last().unwrap_or(&0) {
            cuts.push(v);
        }
    }
    if *cuts.last().unwrap_or(&0) < n || cuts.len() == 1 {
        cuts.push(n);
    }
    cuts
}

/// Fills one block of vertices `vs`: scatters the block's edges (those out
/// of its vertices, self-loops left out) into `targets`/`rels` (the block's
/// part, `counts[vs.end] - counts[vs.start]` long), sorts each vertex's
/// edges by target and merges parallel edges (their relationships joined),
/// packing each vertex's merged edges after the previous vertex's. Returns
/// the merged degree of each vertex.
fn fill_block(vs: Range<usize>, counts: &[u32], lists: &[&[Edge]], targets: &mut [u32], rels: &mut [Rels]) -> Vec<u32> {
    let base = counts[vs.start];
    let mut fill: Vec<u32> = counts[vs.clone()].iter().map(|&c| c - base).collect();
    let mut pairs = vec![(0u32, 0 as Rels); targets.len()];
    let (lo, hi) = (vs.start as u32, vs.end as u32);
    for e in lists.iter().flat_map(|l| l.iter()) {
        if e.from != e.to && e.from >= lo && e.from < hi {
            let slot = &mut fill[(e.from - lo) as usize];
            pairs[*slot as usize] = (e.to, e.rels);
            *slot += 1;
        }
    }
    let mut degrees = Vec::with_capacity(vs.len());
    let mut at = 0usize;
    for v in vs {
        let bucket = &mut pairs[(counts[v] - base) as usize..(counts[v + 1] - base) as usize];
        if bucket.len() > 1 {
            bucket.sort_unstable_by_key(|p| p.0);
        }
        let start = at;
        for &(t, r) in bucket.iter() {
            if at > start && targets[at - 1] == t {
                rels[at - 1] |= r;
            } else {
                targets[at] = t;
                rels[at] = r;
                at += 1;
            }
        }
        degrees.push((at - start) as u32);
    }
    degrees
}

/// One directed edge with its relationship bits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Edge {
    /// Source vertex.
    pub from: OpId,
    /// Target vertex.
    pub to: OpId,
    /// Relationships.
    pub rels: Rels,
}

/// A directed graph with relationship-labelled edges, in CSR layout.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    rels: Vec<Rels>,
}

impl Graph {
    /// Builds a graph on `n` vertices. Self-loops are dropped (Elle never
    /// links an op to itself); parallel edges are merged by OR-ing their rels.
    pub fn from_edges(n: usize, edges: &[Edge]) -> Graph {
        Graph::from_edge_lists(n, &[edges])
    }

    /// Like [`Graph::from_edges`], over several edge lists (e.g. data edges
    /// and order edges) without concatenating them first. The vertices are
    /// cut into one block per thread holding about as many edges each; each
    /// block scatters its own edges, sorts and merges them into its part of
    /// the target array, and the parts are then closed up. The result does
    /// not depend on the number of blocks.
    pub fn from_edge_lists(n: usize, lists: &[&[Edge]]) -> Graph {
        Graph::from_edge_lists_in(n, lists, rayon::current_num_threads())
    }

    /// [`Graph::from_edge_lists`] in at most `blocks` blocks.
    fn from_edge_lists_in(n: usize, lists: &[&[Edge]], blocks: usize) -> Graph {
        let mut counts = vec![0u32; n + 1];
        for e in lists.iter().flat_map(|l| l.iter()) {
            if e.from != e.to {
                counts[e.from as usize + 1] += 1;
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let total = counts[n] as usize;
        let cuts = block_cuts(&counts, blocks);
        let mut targets = vec![0u32; total];
        let mut rels: Vec<Rels> = vec![0; total];
        // Each block's part of the arrays, and its vertices' merged degrees.
        let mut parts = Vec::with_capacity(cuts.len());
        let (mut t_rest, mut r_rest) = (&mut targets[..], &mut rels[..]);
        for w in cuts.windows(2) {
            let len = (counts[w[1]] - counts[w[0]]) as usize;
            let (t, tr) = std::mem::take(&mut t_rest).split_at_mut(len);
            let (r, rr) = std::mem::take(&mut r_rest).split_at_mut(len);
            (t_rest, r_rest) = (tr, rr);
            parts.push((w[0]..w[1], t, r));
        }
        let degrees: Vec<Vec<u32>> =
            parts.into_par_iter().map(|(vs, t, r)| fill_block(vs, &counts, lists, t, r)).collect();
        // Close up the gaps the merged duplicates left.
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        let mut at = 0usize;
        for (w, degs) in cuts.windows(2).zip(&degrees) {
            let from = counts[w[0]] as usize;
            let used: usize = degs.iter().map(|&d| d as usize).sum();
            targets.copy_within(from..from + used, at);
            rels.copy_within(from..from + used, at);
            for &d in degs {
                at += d as usize;
                offsets.push(at as u32);
            }
        }
        targets.truncate(at);
        targets.shrink_to_fit();
        rels.truncate(at);
        rels.shrink_to_fit();
        Graph { offsets, targets, rels }
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of (merged) edges.
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// Heap bytes of the three arrays (by capacity), for `--stats`.
    pub fn heap_bytes(&self) -> u64 {
        (self.offsets.capacity() * 4 + self.targets.capacity() * 4 + self.rels.capacity() * std::mem::size_of::<Rels>())
            as u64
    }

    /// Out-edges of `v` as (target, rels) slices.
    #[inline]
    pub fn out(&self, v: OpId) -> (&[u32], &[Rels]) {
        let (a, b) = (self.offsets[v as usize] as usize, self.offsets[v as usize + 1] as usize);
        (&self.targets[a..b], &self.rels[a..b])
    }

    /// Positions of `v`'s out-edges in the edge arrays (for per-edge side
    /// tables aligned with this graph).
    #[inline]
    pub fn edge_range(&self, v: OpId) -> std::ops::Range<usize> {
        self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize
    }

    /// Target of the edge at position `e`.
    #[inline]
    pub fn target(&self, e: usize) -> u32 {
        self.targets[e]
    }

    /// Rels of the edge at position `e`.
    #[inline]
    pub fn rel(&self, e: usize) -> Rels {
        self.rels[e]
    }

    /// The position of edge `a -> b`, if any.
    pub fn find_edge(&self, a: OpId, b: OpId) -> Option<usize> {
        let r = self.edge_range(a);
        self.targets[r.clone()].binary_search(&b).ok().map(|i| r.start + i)
    }

    /// The rels on edge `a -> b`, or 0 if there is none.
    pub fn rels_between(&self, a: OpId, b: OpId) -> Rels {
        let (ts, rs) = self.out(a);
        match ts.binary_search(&b) {
            Ok(i) => rs[i],
            Err(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anomaly::rel;

    #[test]
    fn merges_parallel_edges_and_drops_self_loops() {
        let g = Graph::from_edges(
            3,
            &[
                Edge { from: 0, to: 1, rels: rel::WW },
                Edge { from: 0, to: 1, rels: rel::RW },
                Edge { from: 1, to: 1, rels: rel::WR },
                Edge { from: 2, to: 0, rels: rel::WR },
            ],
        );
        assert_eq!(g.edge_count(), 2);
        assert_eq!(g.rels_between(0, 1), rel::WW | rel::RW);
        assert_eq!(g.rels_between(1, 1), 0);
        assert_eq!(g.rels_between(2, 0), rel::WR);
    }

    #[test]
    fn any_number_of_blocks_builds_the_same_graph() {
        // A pseudo-random multigraph with parallel edges, self-loops, and
        // vertices without edges (the last ones among them).
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % m) as u32
        };
        let rels = [rel::WW, rel::WR, rel::RW, rel::REALTIME];
        let a: Vec<Edge> =
            (0..400).map(|_| Edge { from: next(40), to: next(50), rels: rels[next(4) as usize] }).collect();
        let b: Vec<Edge> =
            (0..100).map(|_| Edge { from: next(50), to: next(40), rels: rels[next(4) as usize] }).collect();
        let one = Graph::from_edge_lists_in(60, &[&a, &b], 1);
        assert!(one.edge_count() > 100 && one.edge_count() < 500);
        for blocks in [2, 3, 7, 60, 100] {
            let g = Graph::from_edge_lists_in(60, &[&a, &b], blocks);
            assert_eq!((&g.offsets, &g.targets, &g.rels), (&one.offsets, &one.targets, &one.rels), "{blocks}");
        }
        for v in 0..60u32 {
            let (ts, rs) = one.out(v);
            assert!(ts.windows(2).all(|w| w[0] < w[1]) && !ts.contains(&v));
            for (&t, &r) in ts.iter().zip(rs) {
                let joined = a.iter().chain(&b).filter(|e| e.from == v && e.to == t).fold(0, |acc, e| acc | e.rels);
                assert_eq!(r, joined);
            }
        }
        let empty = Graph::from_edge_lists_in(0, &[], 2);
        assert_eq!((empty.vertex_count(), empty.edge_count()), (0, 0));
    }
}
