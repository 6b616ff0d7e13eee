//! Shortest cycles of a given anomaly type inside one SCC.
//!
//! Each anomaly type is a small automaton over the *explained* type of each
//! edge (the relationship Elle's explainer would cite for it): which edge
//! types may be used, how many rw edges, whether two rw edges may be adjacent,
//! and whether a process/realtime edge must appear. A cycle of the type is a
//! closed walk accepted by the automaton, so we run a breadth-first search over
//! (vertex, automaton state) pairs, starting from each edge that every such
//! cycle must contain (an rw edge for G-single/G-nonadjacent/G2, a wr edge for
//! G1c, a ww edge for G0), after discarding start edges whose endpoints are not
//! strongly connected through the allowed edge types. BFS yields the shortest
//! accepted walk through that edge; we keep it only if it is a simple cycle,
//! and keep the shortest over a bounded number of start edges. Unlike Elle's
//! search this is polynomial per start edge; a wall-clock deadline still
//! bounds the whole SCC and turns into `:cycle-search-timeout`.

use super::scc::{tarjan, Adjacency};
use super::SccGraph;
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
}

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

/// A searchable cycle anomaly type (the `-item` family plus G0/G1c).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CycleType {
    /// Base shape.
    pub base: Base,
    /// Order-edge variant.
    pub variant: Variant,
}

impl CycleType {
    /// Parses Elle's name (`G-single-item-realtime`, `G0`, ...). Predicate
    /// types (`G-single`, `G2`, ...) need predicate edges, which item
    /// workloads never produce: they parse to `None`.
    pub fn parse(name: &str) -> Option<CycleType> {
        let (stem, variant) = if let Some(s) = name.strip_suffix("-realtime") {
            (s, Variant::Realtime)
        } else if let Some(s) = name.strip_suffix("-process") {
            (s, Variant::Process)
        } else {
            (name, Variant::Plain)
        };
        let base = match stem {
            "G0" => Base::G0,
            "G1c" => Base::G1c,
            "G-single-item" => Base::Single,
            "G-nonadjacent-item" => Base::Nonadjacent,
            "G2-item" => Base::G2,
            _ => return None,
        };
        Some(CycleType { base, variant })
    }

    fn allowed(self) -> u8 {
        let base = match self.base {
            Base::G0 => 1 << etype::WW,
            Base::G1c => 1 << etype::WW | 1 << etype::WR,
            _ => 1 << etype::WW | 1 << etype::WR | 1 << etype::RW,
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

    fn start_type(self) -> u8 {
        match self.base {
            Base::G0 => etype::WW,
            Base::G1c => etype::WR,
            _ => etype::RW,
        }
    }
}

// Automaton state bits.
const VAR: u8 = 1; // saw the variant's order edge
const AUX: u8 = 2; // G1c: saw wr; rw types: last edge was rw
const MULTI: u8 = 4; // two or more rw
const ADJ: u8 = 8; // two adjacent rw
const STATES: usize = 16;

fn initial(ty: CycleType) -> u8 {
    match ty.base {
        Base::G0 => 0,
        _ => AUX, // G1c started with wr; rw types started with rw
    }
}

fn step(ty: CycleType, s: u8, t: u8) -> Option<u8> {
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

/// How many further start edges to try after a first cycle, looking for a
/// shorter one.
const EXTRA_TRIES: usize = 32;

/// Finds a shortest-found simple cycle of type `ty` in the SCC.
pub fn search(g: &SccGraph, ty: CycleType, deadline: Instant, scratch: &mut Scratch) -> Found {
    if Instant::now() > deadline {
        return Found::Timeout;
    }
    let allowed = ty.allowed();
    let comps = tarjan(&TypedView { g, allowed }, |_| true);
    let start_type = ty.start_type();
    let mut best: Option<Vec<u32>> = None;
    let mut extra = 0;
    let mut polls = 0u32;
    for u in 0..g.len() as u32 {
        let cu = comps.comp_of[u as usize];
        if cu == NONE {
            continue;
        }
        for e in g.graph.edge_range(u) {
            if g.etype[e] != start_type {
                continue;
            }
            let v = g.graph.target(e);
            if comps.comp_of[v as usize] != cu {
                continue;
            }
            polls += 1;
            if polls.is_multiple_of(64) && Instant::now() > deadline {
                return best.map(Found::Cycle).unwrap_or(Found::Timeout);
            }
            match bfs(g, ty, u, v, deadline, scratch) {
                Some(Some(c)) => {
                    if best.as_ref().is_none_or(|b| c.len() < b.len()) {
                        best = Some(c);
                    }
                }
                Some(None) => {}
                None => return best.map(Found::Cycle).unwrap_or(Found::Timeout),
            }
            if let Some(b) = &best {
                extra += 1;
                if b.len() <= 2 || extra > EXTRA_TRIES {
                    return Found::Cycle(best.unwrap_or_default());
                }
            }
        }
    }
    best.map(Found::Cycle).unwrap_or(Found::None)
}

/// BFS from the start edge `u -> v` back to `u`. Returns `None` on timeout,
/// `Some(None)` when no simple accepted cycle was found through this edge.
fn bfs(g: &SccGraph, ty: CycleType, u: u32, v: u32, deadline: Instant, sc: &mut Scratch) -> Option<Option<Vec<u32>>> {
    sc.generation = sc.generation.wrapping_add(1);
    if sc.generation == 0 {
        sc.stamp.iter_mut().for_each(|s| *s = 0);
        sc.generation = 1;
    }
    let gen = sc.generation;
    let s0 = initial(ty);
    let allowed = ty.allowed();
    let start = v as usize * STATES + s0 as usize;
    // Closing immediately (a two-cycle) is handled by the general loop below.
    sc.stamp[start] = gen;
    sc.parent[start] = NONE;
    sc.queue.clear();
    sc.queue.push(start as u32);
    let mut head = 0;
    while head < sc.queue.len() {
        if head % 4096 == 4095 && Instant::now() > deadline {
            return None;
        }
        let node = sc.queue[head] as usize;
        head += 1;
        let (x, s) = ((node / STATES) as u32, (node % STATES) as u8);
        for e in g.graph.edge_range(x) {
            let t = g.etype[e];
            if allowed & (1 << t) == 0 {
                continue;
            }
            let Some(s2) = step(ty, s, t) else { continue };
            let y = g.graph.target(e);
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
                    return Some((seen.len() == path.len()).then_some(path));
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
