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
    /// and order edges) without concatenating them first.
    pub fn from_edge_lists(n: usize, lists: &[&[Edge]]) -> Graph {
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
        let mut fill = counts.clone();
        let mut pairs = vec![(0u32, 0u8); total];
        for e in lists.iter().flat_map(|l| l.iter()) {
            if e.from != e.to {
                let slot = &mut fill[e.from as usize];
                pairs[*slot as usize] = (e.to, e.rels);
                *slot += 1;
            }
        }
        // Sort each vertex's bucket by target and merge duplicates.
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::with_capacity(total);
        let mut rels = Vec::with_capacity(total);
        offsets.push(0u32);
        for v in 0..n {
            let bucket = &mut pairs[counts[v] as usize..counts[v + 1] as usize];
            if bucket.len() > 1 {
                bucket.sort_unstable_by_key(|p| p.0);
            }
            let mut last: Option<u32> = None;
            for &(t, r) in bucket.iter() {
                if last == Some(t) {
                    if let Some(x) = rels.last_mut() {
                        *x |= r;
                    }
                } else {
                    targets.push(t);
                    rels.push(r);
                    last = Some(t);
                }
            }
            offsets.push(targets.len() as u32);
        }
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
}
