//! Random DAGs for the reachability paths of `isolde::accel` (tests/exact/accel.rs,
//! tests/gpu/gpu_kernels.rs).

use isolde::accel::bitreach::Plan;
use isolde::accel::reach::Dag;

/// A DAG in CSR form with a topological order that is not the identity.
pub struct RandDag {
    /// Nodes.
    pub n: usize,
    /// CSR offsets by node id.
    pub offsets: Vec<u32>,
    /// Successors by node id.
    pub targets: Vec<u32>,
    /// Node at each position.
    pub order: Vec<u32>,
    /// Position of each node.
    pub pos: Vec<u32>,
    /// The edges, as node pairs.
    pub edges: Vec<(u32, u32)>,
}

/// xorshift64.
pub fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

impl RandDag {
    /// `n` nodes, about `degree` edges each, each to a position at most
    /// `span` after its source; node ids are a random permutation of
    /// positions.
    pub fn new(n: usize, degree: usize, span: usize, seed: u64) -> RandDag {
        let mut x = seed | 1;
        let mut order: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            order.swap(i, (next(&mut x) % (i as u64 + 1)) as usize);
        }
        let mut pos = vec![0u32; n];
        for (p, &v) in order.iter().enumerate() {
            pos[v as usize] = p as u32;
        }
        let mut edges = Vec::new();
        for p in 0..n {
            for _ in 0..degree {
                let q = p + 1 + (next(&mut x) % span.max(1) as u64) as usize;
                if q < n {
                    edges.push((order[p], order[q]));
                }
            }
        }
        RandDag::from_edges(n, order, pos, edges)
    }

    /// The DAG of `edges` over nodes ordered by `order` (`pos` its inverse).
    pub fn from_edges(n: usize, order: Vec<u32>, pos: Vec<u32>, edges: Vec<(u32, u32)>) -> RandDag {
        let mut offsets = vec![0u32; n + 1];
        for &(a, _) in &edges {
            offsets[a as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; edges.len()];
        for &(a, b) in &edges {
            targets[fill[a as usize] as usize] = b;
            fill[a as usize] += 1;
        }
        RandDag { n, offsets, targets, order, pos, edges }
    }

    /// The same order with `more` edges.
    pub fn with(&self, more: &[(u32, u32)]) -> RandDag {
        let mut edges = self.edges.clone();
        edges.extend_from_slice(more);
        RandDag::from_edges(self.n, self.order.clone(), self.pos.clone(), edges)
    }

    /// As the library's [`Dag`].
    pub fn dag(&self) -> Dag<'_> {
        Dag { offsets: &self.offsets, targets: &self.targets, order: &self.order, pos: &self.pos }
    }

    /// The level plan for rows of `window` bits.
    pub fn plan(&self, window: usize) -> Plan {
        Plan::new(&self.dag(), window)
    }

    /// Reachability by brute force (node ids), non-empty paths.
    pub fn closure(&self) -> Vec<Vec<bool>> {
        let mut r = vec![vec![false; self.n]; self.n];
        for &p in self.order.iter().rev() {
            let v = p as usize;
            for &s in &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize] {
                r[v][s as usize] = true;
                let row = r[s as usize].clone();
                for (a, b) in r[v].iter_mut().zip(row) {
                    *a |= b;
                }
            }
        }
        r
    }

    /// `k` random edges forward in the order, within `span` positions.
    pub fn forward_edges(&self, k: usize, span: usize, seed: u64) -> Vec<(u32, u32)> {
        let mut x = seed | 1;
        let mut out = Vec::new();
        for _ in 0..k {
            let p = (next(&mut x) % self.n as u64) as usize;
            let q = p + 1 + (next(&mut x) % span.max(1) as u64) as usize;
            if q < self.n {
                out.push((self.order[p], self.order[q]));
            }
        }
        out
    }

    /// Random constraint sides over node pairs (any direction), flattened
    /// as `BitReach::test_flat` takes them (positions).
    pub fn sides(&self, sides: usize, seed: u64) -> (Vec<u32>, Vec<[u32; 2]>) {
        let mut x = seed | 1;
        let mut ptr = vec![0u32];
        let mut pairs = Vec::new();
        for _ in 0..sides {
            for _ in 0..(next(&mut x) % 4) {
                let a = (next(&mut x) % self.n as u64) as u32;
                let b = (next(&mut x) % self.n as u64) as u32;
                pairs.push([a, b]);
            }
            ptr.push(pairs.len() as u32);
        }
        (ptr, pairs)
    }
}
