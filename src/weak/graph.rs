//! The graph `so ∪ wr ∪ version edges ∪ forced edges` over transactions,
//! its topological order, and the shortest witness cycle (weak.md §3.5).

use super::front::{Front, TxnId, BOTTOM};
use super::Forced;
use crate::cycles::scc::{tarjan, Adjacency};
use crate::history::NONE;

/// Why an edge is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// Session order (including `⊥` before each session's first transaction).
    So,
    /// The reader read from the writer: the index of the read in
    /// [`Front::reads`].
    Wr(u32),
    /// A list read shows the appends in this order: index into
    /// [`Front::version_edges`].
    Version(u32),
    /// A forced edge: index into the level's forced edges.
    Forced(u32),
}

/// A graph in compressed sparse row form with labelled edges.
pub struct LGraph {
    start: Vec<u32>,
    to: Vec<TxnId>,
    label: Vec<Label>,
}

impl Adjacency for LGraph {
    fn len(&self) -> usize {
        self.start.len() - 1
    }
    fn degree(&self, v: u32) -> usize {
        (self.start[v as usize + 1] - self.start[v as usize]) as usize
    }
    fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
        Some(self.to[self.start[v as usize] as usize + i])
    }
}

impl LGraph {
    /// Builds the graph of `f` with resolved writers `wr` and `forced` edges.
    /// Two passes over the edges (count per source, then fill), so no list
    /// of all edges is held beside the graph.
    pub fn build(f: &Front, wr: &[TxnId], forced: &[Forced]) -> LGraph {
        let start = out_starts(f, wr, forced);
        let total = start[f.len()] as usize;
        let mut fill = start.clone();
        let mut to = vec![0; total];
        let mut label = vec![Label::So; total];
        each_edge(f, wr, forced, |a, b, l| {
            let at = fill[a as usize] as usize;
            to[at] = b;
            label[at] = l;
            fill[a as usize] += 1;
        });
        LGraph { start, to, label }
    }

    fn out(&self, v: TxnId) -> std::ops::Range<usize> {
        self.start[v as usize] as usize..self.start[v as usize + 1] as usize
    }

    /// A topological order of the edges `keep` accepts, or `None` if they
    /// are cyclic (Kahn's algorithm).
    pub fn topo(&self, keep: impl Fn(Label) -> bool) -> Option<Vec<TxnId>> {
        kahn(&self.start, &self.to, |e| keep(self.label[e]))
    }

    /// A topological order of every edge that takes, among the vertices
    /// ready, the lowest first (transactions are numbered in history
    /// order: the earliest completion); `None` if there is a cycle. As a
    /// commit order it puts concurrent writes nothing orders in the order
    /// they answered, the likeliest to be the database's (`--follow`
    /// collects by it).
    pub fn topo_earliest(&self) -> Option<Vec<TxnId>> {
        use std::cmp::Reverse;
        let n = self.len();
        let mut indeg = vec![0u32; n];
        for &b in &self.to {
            indeg[b as usize] += 1;
        }
        let mut ready: std::collections::BinaryHeap<Reverse<TxnId>> =
            (0..n as TxnId).filter(|&v| indeg[v as usize] == 0).map(Reverse).collect();
        let mut order: Vec<TxnId> = Vec::with_capacity(n);
        while let Some(Reverse(v)) = ready.pop() {
            order.push(v);
            for e in self.out(v) {
                let b = self.to[e] as usize;
                indeg[b] -= 1;
                if indeg[b] == 0 {
                    ready.push(Reverse(b as TxnId));
                }
            }
        }
        (order.len() == n).then_some(order)
    }

    /// A short cycle, as `(vertices, labels)` with `labels[i]` the edge from
    /// `vertices[i]` to the next, if the graph has one: in each of the first
    /// few cyclic components, the shortest cycle through each of its first
    /// few forced edges (through any edge when it has none), the shortest
    /// of all. Consecutive session steps are merged into one.
    pub fn short_cycle(&self) -> Option<(Vec<TxnId>, Vec<Label>)> {
        const COMPONENTS: usize = 8;
        const EDGES: usize = 16;
        let comps = tarjan(self, |_| true);
        let mut best: Option<(Vec<TxnId>, Vec<Label>)> = None;
        let mut dist = vec![NONE; self.len()];
        let mut parent = vec![NONE; self.len()];
        for comp in comps.comps.iter().take(COMPONENTS) {
            let c = comps.comp_of[comp[0] as usize];
            let inside = |v: TxnId| comps.comp_of[v as usize] == c;
            let mut tries: Vec<usize> = Vec::new();
            for &v in comp {
                for e in self.out(v) {
                    if inside(self.to[e]) && matches!(self.label[e], Label::Forced(_)) && tries.len() < EDGES {
                        tries.push(e);
                    }
                }
            }
            if tries.is_empty() {
                'any: for &v in comp {
                    for e in self.out(v) {
                        if inside(self.to[e]) {
                            tries.push(e);
                            break 'any;
                        }
                    }
                }
            }
            for e in tries {
                let from = self.edge_source(e);
                if let Some(path) = self.bfs(self.to[e], from, &inside, &mut dist, &mut parent) {
                    // path: edges from to[e] .. from; the cycle is e then path.
                    if best.as_ref().is_none_or(|b| b.0.len() > path.len() + 1) {
                        let mut vs = vec![from];
                        let mut ls = vec![self.label[e]];
                        for &pe in &path {
                            vs.push(self.edge_source(pe));
                            ls.push(self.label[pe]);
                        }
                        best = Some((vs, ls));
                    }
                }
            }
        }
        best.map(|(vs, ls)| merge_so(vs, ls))
    }

    fn edge_source(&self, e: usize) -> TxnId {
        (self.start.partition_point(|&s| s as usize <= e) - 1) as TxnId
    }

    /// Edges of a shortest path from `a` to `b` inside the component.
    fn bfs(
        &self,
        a: TxnId,
        b: TxnId,
        inside: &impl Fn(TxnId) -> bool,
        dist: &mut [u32],
        parent: &mut [u32],
    ) -> Option<Vec<usize>> {
        let mut queue = vec![a];
        dist[a as usize] = 0;
        let mut head = 0;
        let mut found = a == b;
        while head < queue.len() && !found {
            let v = queue[head];
            head += 1;
            for e in self.out(v) {
                let w = self.to[e];
                if inside(w) && dist[w as usize] == NONE {
                    dist[w as usize] = dist[v as usize] + 1;
                    parent[w as usize] = e as u32;
                    queue.push(w);
                    if w == b {
                        found = true;
                        break;
                    }
                }
            }
        }
        let mut path = Vec::new();
        if found {
            let mut v = b;
            while v != a {
                let e = parent[v as usize] as usize;
                path.push(e);
                v = self.edge_source(e);
            }
            path.reverse();
        }
        for &v in &queue {
            dist[v as usize] = NONE;
            parent[v as usize] = NONE;
        }
        found.then_some(path)
    }
}

/// A topological order of `so ∪ wr ∪ forced` over `f` (resolved writers
/// `wr`), or `None` if they are cyclic: [`LGraph::topo`] of
/// [`LGraph::build`] accepting every edge, without the labels.
pub fn order_of(f: &Front, wr: &[TxnId], forced: &[Forced]) -> Option<Vec<TxnId>> {
    let start = out_starts(f, wr, forced);
    let mut fill = start.clone();
    let mut to = vec![0; start[f.len()] as usize];
    each_edge(f, wr, forced, |a, b, _| {
        to[fill[a as usize] as usize] = b;
        fill[a as usize] += 1;
    });
    drop(fill);
    kahn(&start, &to, |_| true)
}

/// Calls `edge(from, to, label)` for every edge of the graph of `f`, in the
/// order the graph lists each vertex's edges: session order (with `⊥`
/// before each session's first transaction), reads, version edges, forced
/// edges.
fn each_edge(f: &Front, wr: &[TxnId], forced: &[Forced], mut edge: impl FnMut(TxnId, TxnId, Label)) {
    for s in &f.sessions {
        if let Some(&first) = s.first() {
            edge(BOTTOM, first, Label::So);
        }
        for w in s.windows(2) {
            edge(w[0], w[1], Label::So);
        }
    }
    for t in 1..f.len() as TxnId {
        for i in f.read_start[t as usize]..f.read_start[t as usize + 1] {
            let w = wr[i as usize];
            if w != t {
                edge(w, t, Label::Wr(i));
            }
        }
    }
    for (i, e) in f.version_edges.iter().enumerate() {
        edge(e.from, e.to, Label::Version(i as u32));
    }
    for (i, e) in forced.iter().enumerate() {
        edge(e.from, e.to, Label::Forced(i as u32));
    }
}

/// Where each vertex's out-edges start in the compressed rows (one entry
/// per vertex and one past the last).
fn out_starts(f: &Front, wr: &[TxnId], forced: &[Forced]) -> Vec<u32> {
    let n = f.len();
    let mut start = vec![0u32; n + 1];
    each_edge(f, wr, forced, |a, _, _| start[a as usize + 1] += 1);
    for i in 0..n {
        start[i + 1] += start[i];
    }
    start
}

/// Kahn's algorithm over compressed rows (`start`, `to`), on the edges
/// (by position) that `keep` accepts: a topological order, or `None` when
/// they are cyclic.
fn kahn(start: &[u32], to: &[TxnId], keep: impl Fn(usize) -> bool) -> Option<Vec<TxnId>> {
    let n = start.len() - 1;
    let mut indeg = vec![0u32; n];
    for (i, &b) in to.iter().enumerate() {
        if keep(i) {
            indeg[b as usize] += 1;
        }
    }
    let mut order: Vec<TxnId> = Vec::with_capacity(n);
    order.extend((0..n as TxnId).filter(|&v| indeg[v as usize] == 0));
    let mut head = 0;
    while head < order.len() {
        let v = order[head] as usize;
        head += 1;
        let first = start[v] as usize;
        for (i, &b) in to[first..start[v + 1] as usize].iter().enumerate() {
            if keep(first + i) {
                let b = b as usize;
                indeg[b] -= 1;
                if indeg[b] == 0 {
                    order.push(b as TxnId);
                }
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// Merges runs of session steps: `a so b so c` becomes `a so c`.
fn merge_so(vs: Vec<TxnId>, ls: Vec<Label>) -> (Vec<TxnId>, Vec<Label>) {
    let n = vs.len();
    if n <= 2 {
        return (vs, ls);
    }
    // Rotate so the cycle does not start inside a run of so steps.
    let start = (0..n).find(|&i| !(ls[(i + n - 1) % n] == Label::So && ls[i] == Label::So)).unwrap_or(0);
    let mut out_v = Vec::new();
    let mut out_l = Vec::new();
    for j in 0..n {
        let i = (start + j) % n;
        let prev_so = j > 0 && ls[(i + n - 1) % n] == Label::So;
        if prev_so && ls[i] == Label::So {
            continue;
        }
        out_v.push(vs[i]);
        out_l.push(ls[i]);
    }
    (out_v, out_l)
}
