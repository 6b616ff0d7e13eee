//! Shortest cycles of a given anomaly type inside one SCC.
//!
//! Each anomaly type is a small automaton over the *explained* type of each
//! edge (the relationship Elle's explainer would cite for it): which edge
//! types may be used, how many rw edges, whether two rw edges may be adjacent,
//! and whether a process/realtime edge must appear. A cycle of the type is a
//! closed walk accepted by the automaton.
//!
//! We search the way Elle does, so that the witness is the one Elle would
//! print: start vertices in Elle's iteration order ([`super::elle_order`]) over
//! the vertices the type's relationships touch, each start's successors in
//! that order too, and the first edge restricted as Elle restricts it (an rw
//! edge for G-single/G-nonadjacent/G2, a wr or the required order edge for
//! G1c, the order edge for G0-process/-realtime). From each start a
//! breadth-first search over (vertex, automaton state) pairs finds a shortest
//! accepted loop back to it; the first start with a simple one wins. Unlike
//! Elle's search, which keeps every path, this is polynomial per start vertex
//! (at the price of missing a loop that only a later, duplicate path to the
//! same state would close simply); starts whose first edges leave their
//! strongly connected component under the type's edges are skipped, and a
//! wall-clock deadline bounds the whole SCC and turns into
//! `:cycle-search-timeout`.

use super::elle_order::elle_order;
use super::scc::{tarjan, Adjacency};
use super::SccGraph;
use crate::anomaly::{rel, Rels};
use crate::history::NONE;
use std::time::Instant;

/// Explained edge types, as indices into a small bitmask.
pub mod etype {
    /// ww.
    pub const WW: u8 = 0;
    /// wr.
    pub const WR: u8 = 1;
    /// rw.
    pub const RW: u8 = 2;
    /// process.
    pub const PROCESS: u8 = 3;
    /// realtime.
    pub const REALTIME: u8 = 4;
    /// Predicate ww (searched as ww).
    pub const WWP: u8 = 5;
    /// Predicate wr (searched as wr).
    pub const WRP: u8 = 6;
    /// Predicate rw: an rw edge that only the predicate types may take.
    pub const RWP: u8 = 7;
}

/// Explained types searched as ww, as wr, and as rw edges.
const WWS: u8 = 1 << etype::WW | 1 << etype::WWP;
const WRS: u8 = 1 << etype::WR | 1 << etype::WRP;
const RWS: u8 = 1 << etype::RW | 1 << etype::RWP;

/// Base shape of a cycle anomaly.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Base {
    /// Only ww edges.
    G0,
    /// ww/wr with at least one wr.
    G1c,
    /// Exactly one rw.
    Single,
    /// Two or more rw, never adjacent.
    Nonadjacent,
    /// Two or more rw, some adjacent.
    G2,
}

/// Which order edges a variant needs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Variant {
    /// Data edges only.
    Plain,
    /// At least one process edge.
    Process,
    /// At least one realtime edge.
    Realtime,
}

/// A searchable cycle anomaly type (the `-item` family, its predicate
/// forms G-single, G-nonadjacent and G2, and G0/G1c).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CycleType {
    /// Base shape.
    pub base: Base,
    /// Order-edge variant.
    pub variant: Variant,
    /// A predicate type: its rw edges may be predicate (rwp) ones, as in
    /// Elle's specs; the witness keeps the type only when one is (checked
    /// by naming the explained cycle, see [`super::classify`]).
    pub predicate: bool,
}

impl CycleType {
    /// Parses Elle's name (`G-single-item-realtime`, `G0`, `G2`, ...).
    /// Predicate types (`G-single`, `G2`, ...) need predicate edges, which
    /// item workloads never produce; searching them there finds nothing.
    pub fn parse(name: &str) -> Option<CycleType> {
        let (stem, variant) = if let Some(s) = name.strip_suffix("-realtime") {
            (s, Variant::Realtime)
        } else if let Some(s) = name.strip_suffix("-process") {
            (s, Variant::Process)
        } else {
            (name, Variant::Plain)
        };
        let (base, predicate) = match stem {
            "G0" => (Base::G0, false),
            "G1c" => (Base::G1c, false),
            "G-single-item" => (Base::Single, false),
            "G-nonadjacent-item" => (Base::Nonadjacent, false),
            "G2-item" => (Base::G2, false),
            "G-single" => (Base::Single, true),
            "G-nonadjacent" => (Base::Nonadjacent, true),
            "G2" => (Base::G2, true),
            _ => return None,
        };
        Some(CycleType { base, variant, predicate })
    }

    /// The explained types searched as rw edges.
    fn rw_types(self) -> u8 {
        if self.predicate {
            RWS
        } else {
            1 << etype::RW
        }
    }

    fn allowed(self) -> u8 {
        let base = match self.base {
            Base::G0 => WWS,
            Base::G1c => WWS | WRS,
            _ => WWS | WRS | self.rw_types(),
        };
        base | self.variant_bit()
    }

    fn variant_bit(self) -> u8 {
        match self.variant {
            Variant::Plain => 0,
            Variant::Process => 1 << etype::PROCESS,
            Variant::Realtime => 1 << etype::REALTIME,
        }
    }

    /// The edge types Elle lets a search start with: an rw edge when the type
    /// wants rw edges; otherwise one of the relationships it requires (wr for
    /// G1c, the order edge of a -process/-realtime variant); otherwise any.
    fn first_types(self) -> u8 {
        match (self.base, self.variant) {
            (Base::G0, Variant::Plain) => WWS,
            (Base::G0, _) => self.variant_bit(),
            (Base::G1c, _) => WRS | self.variant_bit(),
            _ => self.rw_types(),
        }
    }

    /// The raw relationships of the graph Elle projects the SCC onto for this
    /// type; its vertices are the ones that touch such an edge.
    fn raw_rels(self) -> Rels {
        const RAW: [(u8, Rels); 8] = [
            (etype::WW, rel::WW),
            (etype::WR, rel::WR),
            (etype::RW, rel::RW),
            (etype::PROCESS, rel::PROCESS),
            (etype::REALTIME, rel::REALTIME),
            (etype::WWP, rel::WWP),
            (etype::WRP, rel::WRP),
            (etype::RWP, rel::RWP),
        ];
        let bits = self.allowed();
        RAW.iter().filter(|(t, _)| bits & (1 << t) != 0).fold(0, |acc, (_, r)| acc | r)
    }
}

// Automaton state bits.
const VAR: u8 = 1; // saw the variant's order edge
const AUX: u8 = 2; // G1c: saw wr; rw types: last edge was rw
const MULTI: u8 = 4; // two or more rw
const ADJ: u8 = 8; // two adjacent rw
const STATES: usize = 16;

/// The state after a path's first edge, of type `t` (one of
/// [`CycleType::first_types`]).
fn after_first(ty: CycleType, t: u8) -> Option<u8> {
    let t = searched_as(t);
    match ty.base {
        // Started with rw: the closing edge must not make it adjacent to another.
        Base::Single | Base::Nonadjacent | Base::G2 => (t == etype::RW).then_some(AUX),
        Base::G0 | Base::G1c => step(ty, 0, t),
    }
}

/// The item type a predicate edge is searched as (the type's allowed
/// edges already keep rwp edges from the item types).
fn searched_as(t: u8) -> u8 {
    match t {
        etype::WWP => etype::WW,
        etype::WRP => etype::WR,
        etype::RWP => etype::RW,
        t => t,
    }
}

fn step(ty: CycleType, s: u8, t: u8) -> Option<u8> {
    let t = searched_as(t);
    if ty.variant_bit() & (1 << t) != 0 {
        return Some(match ty.base {
            Base::G0 | Base::G1c => s | VAR,
            _ => (s | VAR) & !AUX,
        });
    }
    match (ty.base, t) {
        (Base::G0, etype::WW) => Some(s),
        (Base::G1c, etype::WW) => Some(s),
        (Base::G1c, etype::WR) => Some(s | AUX),
        (_, etype::WW | etype::WR) => Some(s & !AUX),
        (Base::Single, etype::RW) => None,
        (Base::Nonadjacent, etype::RW) => (s & AUX == 0).then_some(s | MULTI | AUX),
        (Base::G2, etype::RW) => Some(if s & AUX != 0 { s | MULTI | AUX | ADJ } else { s | MULTI | AUX }),
        _ => None,
    }
}

fn accepts(ty: CycleType, s: u8) -> bool {
    let var_ok = ty.variant == Variant::Plain || s & VAR != 0;
    var_ok
        && match ty.base {
            Base::G0 | Base::Single => true,
            Base::G1c => s & AUX != 0,
            // The closing edge meets the first (rw) edge.
            Base::Nonadjacent => s & MULTI != 0 && s & AUX == 0,
            Base::G2 => s & MULTI != 0 && (s & ADJ != 0 || s & AUX != 0),
        }
}

/// Outcome of a typed search.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// A simple cycle `[v0, v1, ..., vk]` (closing back to v0), local ids.
    Cycle(Vec<u32>),
    /// No such cycle through any candidate edge.
    None,
    /// The deadline passed first.
    Timeout,
}

/// Reusable buffers for repeated searches in one SCC.
pub struct Scratch {
    stamp: Vec<u32>,
    parent: Vec<u32>,
    queue: Vec<u32>,
    generation: u32,
}

impl Scratch {
    /// Buffers for an SCC of `n` vertices.
    pub fn new(n: usize) -> Scratch {
        Scratch { stamp: vec![0; n * STATES], parent: vec![NONE; n * STATES], queue: Vec::new(), generation: 0 }
    }
}

struct TypedView<'a> {
    g: &'a SccGraph,
    allowed: u8,
}

impl Adjacency for TypedView<'_> {
    fn len(&self) -> usize {
        self.g.len()
    }
    fn degree(&self, v: u32) -> usize {
        self.g.graph.edge_range(v).len()
    }
    fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
        let e = self.g.graph.edge_range(v).start + i;
        (self.allowed & (1 << self.g.etype[e]) != 0).then(|| self.g.graph.target(e))
    }
}

/// Each vertex's successors under one type's projection, in Elle's order,
/// computed the first time the search expands the vertex.
struct Successors {
    raw: Rels,
    range: Vec<(u32, u32)>,
    edges: Vec<u32>,
    buf: Vec<(i64, u32)>,
}

impl Successors {
    fn new(n: usize, raw: Rels) -> Successors {
        Successors { raw, range: vec![(NONE, NONE); n], edges: Vec::new(), buf: Vec::new() }
    }

    /// Edge positions out of `x` whose relationships the projection keeps.
    fn of(&mut self, g: &SccGraph, x: u32) -> &[u32] {
        if self.range[x as usize].0 == NONE {
            self.buf.clear();
            for e in g.graph.edge_range(x) {
                if g.graph.rel(e) & self.raw != 0 {
                    self.buf.push((g.indices[g.graph.target(e) as usize], e as u32));
                }
            }
            elle_order(&mut self.buf, |&(index, _)| index);
            let start = self.edges.len() as u32;
            self.edges.extend(self.buf.iter().map(|&(_, e)| e));
            self.range[x as usize] = (start, self.edges.len() as u32);
        }
        let (a, b) = self.range[x as usize];
        &self.edges[a as usize..b as usize]
    }
}

/// Finds Elle's witness of type `ty` in the SCC: the shortest accepted simple
/// loop through the first start vertex, in Elle's order, that has one.
pub fn search(g: &SccGraph, ty: CycleType, deadline: Instant, scratch: &mut Scratch) -> Found {
    if Instant::now() > deadline {
        return Found::Timeout;
    }
    let allowed = ty.allowed();
    let first = ty.first_types();
    let comps = tarjan(&TypedView { g, allowed }, |_| true);
    let raw = ty.raw_rels();
    let n = g.len();
    let mut touches = vec![false; n];
    for u in 0..n as u32 {
        for e in g.graph.edge_range(u) {
            if g.graph.rel(e) & raw != 0 {
                touches[u as usize] = true;
                touches[g.graph.target(e) as usize] = true;
            }
        }
    }
    let mut starts: Vec<u32> = (0..n as u32).filter(|&v| touches[v as usize]).collect();
    elle_order(&mut starts, |&v| g.indices[v as usize]);
    let mut succ = Successors::new(n, raw);
    for (polls, &u) in starts.iter().enumerate() {
        let cu = comps.comp_of[u as usize];
        if cu == NONE {
            continue;
        }
        let opens = g
            .graph
            .edge_range(u)
            .any(|e| first & (1 << g.etype[e]) != 0 && comps.comp_of[g.graph.target(e) as usize] == cu);
        if !opens {
            continue;
        }
        if polls % 64 == 63 && Instant::now() > deadline {
            return Found::Timeout;
        }
        match bfs(g, ty, u, &mut succ, deadline, scratch) {
            Some(Some(c)) => return Found::Cycle(c),
            Some(None) => {}
            None => return Found::Timeout,
        }
    }
    Found::None
}

/// BFS from `u` back to `u`. Returns `None` on timeout, `Some(None)` when no
/// simple accepted loop goes through `u`.
fn bfs(
    g: &SccGraph,
    ty: CycleType,
    u: u32,
    succ: &mut Successors,
    deadline: Instant,
    sc: &mut Scratch,
) -> Option<Option<Vec<u32>>> {
    sc.generation = sc.generation.wrapping_add(1);
    if sc.generation == 0 {
        sc.stamp.iter_mut().for_each(|s| *s = 0);
        sc.generation = 1;
    }
    let gen = sc.generation;
    let allowed = ty.allowed();
    let first = ty.first_types();
    sc.queue.clear();
    for &e in succ.of(g, u) {
        let t = g.etype[e as usize];
        if first & (1 << t) == 0 {
            continue;
        }
        let Some(s) = after_first(ty, t) else { continue };
        let v = g.graph.target(e as usize);
        let idx = v as usize * STATES + s as usize;
        if v != u && sc.stamp[idx] != gen {
            sc.stamp[idx] = gen;
            sc.parent[idx] = NONE;
            sc.queue.push(idx as u32);
        }
    }
    let mut head = 0;
    while head < sc.queue.len() {
        if head % 4096 == 4095 && Instant::now() > deadline {
            return None;
        }
        let node = sc.queue[head] as usize;
        head += 1;
        let (x, s) = ((node / STATES) as u32, (node % STATES) as u8);
        for &e in succ.of(g, x) {
            let t = g.etype[e as usize];
            if allowed & (1 << t) == 0 {
                continue;
            }
            let Some(s2) = step(ty, s, t) else { continue };
            let y = g.graph.target(e as usize);
            if y == u {
                if accepts(ty, s2) {
                    // Reconstruct u, v, ..., x.
                    let mut path = vec![x];
                    let mut cur = node;
                    while sc.parent[cur] != NONE {
                        cur = sc.parent[cur] as usize;
                        path.push((cur / STATES) as u32);
                    }
                    path.push(u);
                    path.reverse();
                    let mut seen = path.clone();
                    seen.sort_unstable();
                    seen.dedup();
                    if seen.len() == path.len() {
                        return Some(Some(path));
                    }
                }
                continue;
            }
            let idx = y as usize * STATES + s2 as usize;
            if sc.stamp[idx] != gen {
                sc.stamp[idx] = gen;
                sc.parent[idx] = node as u32;
                sc.queue.push(idx as u32);
            }
        }
    }
    Some(None)
}

/// Some cycle through vertex 0 using any edges (the SCC guarantees one):
/// Elle's fallback witness when the typed search times out.
pub fn any_cycle(g: &SccGraph) -> Vec<u32> {
    let n = g.len();
    let mut parent = vec![NONE; n];
    let mut queue = vec![0u32];
    let mut head = 0;
    parent[0] = 0;
    while head < queue.len() {
        let x = queue[head];
        head += 1;
        for e in g.graph.edge_range(x) {
            let y = g.graph.target(e);
            if y == 0 {
                let mut path = vec![x];
                let mut cur = x;
                while cur != 0 {
                    cur = parent[cur as usize];
                    path.push(cur);
                }
                path.reverse();
                return path;
            }
            if parent[y as usize] == NONE {
                parent[y as usize] = x;
                queue.push(y);
            }
        }
    }
    vec![0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anomaly::Workload;
    use crate::graph::{Edge, Graph};
    use std::time::Duration;

    /// Searches a graph whose vertices are op indices `1..=n` (local id
    /// `i - 1`), returning the cycle as indices.
    fn find(name: &str, edges: &[(u32, u32, Rels)]) -> Option<Vec<i64>> {
        let n = edges.iter().map(|&(a, b, _)| a.max(b)).max().unwrap_or(0) as usize;
        let list: Vec<Edge> = edges.iter().map(|&(a, b, r)| Edge { from: a - 1, to: b - 1, rels: r }).collect();
        let graph = Graph::from_edges(n, &list);
        let etype =
            (0..graph.edge_count()).map(|e| super::super::explained_type(Workload::ListAppend, graph.rel(e))).collect();
        let g = SccGraph { vertices: (0..n as u32).collect(), indices: (1..=n as i64).collect(), graph, etype };
        let ty = CycleType::parse(name).expect("a cycle type");
        match search(&g, ty, Instant::now() + Duration::from_secs(10), &mut Scratch::new(n)) {
            Found::Cycle(c) => Some(c.iter().map(|&v| g.indices[v as usize]).collect()),
            Found::None => None,
            Found::Timeout => panic!("timed out"),
        }
    }

    const WW: Rels = rel::WW;
    const WR: Rels = rel::WR;
    const RW: Rels = rel::RW;

    #[test]
    fn g0_uses_only_ww_edges() {
        assert_eq!(find("G0", &[(1, 2, WW), (2, 1, WW)]), Some(vec![1, 2]));
        // Elle's order over {1, 2, 3} is 1, 3, 2: the cycle starts at 1.
        assert_eq!(find("G0", &[(1, 2, WW), (2, 3, WW), (3, 1, WW)]), Some(vec![1, 2, 3]));
        assert_eq!(find("G0", &[(1, 2, WW), (2, 1, RW), (2, 1, WR)]), None);
    }

    #[test]
    fn g1c_starts_with_a_wr_edge() {
        // 1 comes first in Elle's order but only has a ww edge out; 3 is next.
        let edges = [(1, 2, WW), (2, 3, WR), (2, 1, RW), (3, 1, WR), (3, 2, RW)];
        assert_eq!(find("G1c", &edges), Some(vec![3, 1, 2]));
    }

    #[test]
    fn single_rw_cycles_hidden_behind_shorter_ones() {
        let edges = [(1, 2, RW), (2, 1, RW), (2, 3, WW), (3, 1, RW), (3, 4, WR), (4, 1, WR)];
        assert_eq!(find("G-single-item", &edges), Some(vec![1, 2, 3, 4]));
    }

    #[test]
    fn nonadjacent_and_g2_differ_in_rw_adjacency() {
        let nonadjacent = [(1, 2, RW), (2, 3, WW), (3, 4, RW), (4, 1, WR), (2, 1, WW), (3, 2, WW)];
        assert_eq!(find("G-nonadjacent-item", &nonadjacent), Some(vec![1, 2, 3, 4]));
        assert_eq!(find("G2-item", &nonadjacent), None);
        // 1 has no rw edge out, so the search starts at 3, as Elle's does.
        let g2 = [(1, 2, WW), (2, 3, WR), (3, 4, RW), (4, 1, RW), (2, 1, WW), (4, 3, WR)];
        assert_eq!(find("G2-item", &g2), Some(vec![3, 4, 1, 2]));
    }

    #[test]
    fn order_variants_start_with_their_order_edge() {
        let rt = [(1, 2, WW), (2, 3, rel::REALTIME), (3, 1, WW), (2, 1, WW)];
        assert_eq!(find("G0-realtime", &rt), Some(vec![2, 3, 1]));
        let process =
            [(1, 2, RW), (2, 3, rel::PROCESS), (3, 4, RW), (4, 1, WW), (4, 3, WR), (2, 5, WR), (5, 6, RW), (6, 1, WW)];
        assert_eq!(find("G-nonadjacent-item-process", &process), Some(vec![1, 2, 3, 4]));
    }
}
