//! Strongly connected components (iterative Tarjan).
//!
//! Works over any [`Adjacency`], so filtered and layered views of a graph
//! (e.g. the two-layer graph that encodes Elle's sequential extension) need
//! not be materialised. Recursion-free: histories produce SCCs with millions
//! of vertices.

use crate::history::NONE;

/// A directed graph seen through neighbour indices; `neighbor` may return
/// `None` to skip an edge (filtered views).
pub trait Adjacency {
    /// Number of vertices.
    fn len(&self) -> usize;
    /// True if there are no vertices.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of neighbour slots of `v` (some may be skipped).
    fn degree(&self, v: u32) -> usize;
    /// The `i`-th neighbour of `v`, if that slot is an edge of this view.
    fn neighbor(&self, v: u32, i: usize) -> Option<u32>;
}

/// Components with at least two vertices, and each vertex's component number
/// (`NONE` for vertices in no such component). Singletons are never cyclic
/// here because graphs carry no self-loops.
pub struct Components {
    /// Vertex -> component number or `NONE`.
    pub comp_of: Vec<u32>,
    /// The components' vertices.
    pub comps: Vec<Vec<u32>>,
}

/// Tarjan's algorithm, restricted to start vertices where `start(v)` holds
/// (others are still visited if reachable).
pub fn tarjan<A: Adjacency>(g: &A, start: impl Fn(u32) -> bool) -> Components {
    let mut comp_of = vec![NONE; g.len()];
    let mut comps = Vec::new();
    visit(g, start, |comp| {
        if comp.len() > 1 {
            let id = comps.len() as u32;
            for &w in comp {
                comp_of[w as usize] = id;
            }
            comps.push(comp.to_vec());
        }
    });
    Components { comp_of, comps }
}

/// Each vertex's position in a topological order of the graph's
/// components: Tarjan's algorithm completes a component only after every
/// component it reaches, so numbering components in completion order and
/// reversing gives ranks with `rank(a) < rank(b)` whenever `a` reaches `b`
/// and `b` does not reach `a`. Vertices of one component share a rank.
pub fn topological_ranks<A: Adjacency>(g: &A) -> Vec<u32> {
    let mut done = vec![0u32; g.len()];
    let mut next = 0u32;
    visit(
        g,
        |_| true,
        |comp| {
            for &w in comp {
                done[w as usize] = next;
            }
            next += 1;
        },
    );
    for r in done.iter_mut() {
        *r = next - 1 - *r;
    }
    done
}

/// The iterative Tarjan walk: `component` is called with each strongly
/// connected component (singletons included) as it completes, which is
/// after every component it reaches.
fn visit<A: Adjacency>(g: &A, start: impl Fn(u32) -> bool, mut component: impl FnMut(&[u32])) {
    let n = g.len();
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, usize)> = Vec::new();
    let mut comp = Vec::new();
    let mut next = 0u32;
    for root in 0..n as u32 {
        if index[root as usize] != NONE || !start(root) {
            continue;
        }
        call.push((root, 0));
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            let deg = g.degree(v);
            let mut descended = false;
            while *i < deg {
                let slot = *i;
                *i += 1;
                let Some(w) = g.neighbor(v, slot) else {
                    continue;
                };
                let wu = w as usize;
                if index[wu] == NONE {
                    index[wu] = next;
                    low[wu] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[wu] = true;
                    call.push((w, 0));
                    descended = true;
                    break;
                } else if on_stack[wu] {
                    low[v as usize] = low[v as usize].min(index[wu]);
                }
            }
            if descended {
                continue;
            }
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                comp.clear();
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                component(&comp);
            }
        }
    }
}

/// Successor lists, one per vertex, as a graph.
impl Adjacency for Vec<Vec<u32>> {
    fn len(&self) -> usize {
        <[Vec<u32>]>::len(self)
    }
    fn degree(&self, v: u32) -> usize {
        self[v as usize].len()
    }
    fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
        Some(self[v as usize][i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nontrivial_components_only() {
        // 0 <-> 1, 2 -> 3 -> 4 -> 2, 5 alone, 1 -> 2
        let g: Vec<Vec<u32>> = vec![vec![1], vec![0, 2], vec![3], vec![4], vec![2], vec![]];
        let c = tarjan(&g, |_| true);
        let mut sets: Vec<Vec<u32>> = c
            .comps
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.sort();
                c
            })
            .collect();
        sets.sort();
        assert_eq!(sets, vec![vec![0, 1], vec![2, 3, 4]]);
        assert_eq!(c.comp_of[5], NONE);
        assert_eq!(c.comp_of[0], c.comp_of[1]);
        assert_ne!(c.comp_of[0], c.comp_of[2]);
    }

    #[test]
    fn deep_chains_do_not_overflow() {
        let n = 200_000u32;
        let g: Vec<Vec<u32>> = (0..n).map(|i| vec![(i + 1) % n]).collect();
        let c = tarjan(&g, |_| true);
        assert_eq!(c.comps.len(), 1);
        assert_eq!(c.comps[0].len(), n as usize);
    }

    #[test]
    fn topological_ranks_follow_every_path() {
        // 0 <-> 1 -> 2 -> 3, 4 -> 0, 5 alone
        let g: Vec<Vec<u32>> = vec![vec![1], vec![0, 2], vec![3], vec![], vec![0], vec![]];
        let r = topological_ranks(&g);
        assert_eq!(r[0], r[1]);
        for (a, b) in [(4, 0), (1, 2), (2, 3), (4, 3)] {
            assert!(r[a] < r[b], "{a} -> {b}: {r:?}");
        }
        let mut distinct = r.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 5, "one rank per component: {r:?}");
    }
}
