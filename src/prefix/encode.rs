//! The begin/commit polygraph of one writer assignment (see the module
//! docs of [`super`] for why it is exact).
//!
//! Nodes: `B(t) = 2t`, `C(t) = 2t + 1`. Known edges: `B(t) → C(t)`;
//! `C(⊥) → B(t)`; session order and reads-from `C(a) → B(b)`; list version
//! edges `C(a) → C(b)`; and for a read of the initial state by `r`,
//! `B(r) → C(b)` for every other writer `b` of the key. One variable per
//! unordered pair `{a, b}` of writers of a key where `a` has readers:
//! true (`a` first) switches on `C(a) → C(b)` and `B(r) → C(b)` for every
//! reader `r ≠ b` of `a`'s version; false mirrors it.

use crate::history::KeyId;
use crate::si_check::solver::Instance;
use crate::weak::front::{Front, TxnId, BOTTOM};
use rustc_hash::{FxHashMap, FxHashSet};

/// Where an edge of the begin/commit graph comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// `B(t) → C(t)`.
    Txn,
    /// Session order (or `⊥` before everyone).
    So,
    /// Read `read` (index into [`Front::reads`]) read from the edge's source.
    Wr {
        /// The read.
        read: u32,
    },
    /// List version edge `i` of [`Front::version_edges`].
    Version {
        /// The edge.
        edge: u32,
    },
    /// The source's write of `key` precedes the target's.
    Ww {
        /// The key.
        key: KeyId,
    },
    /// Read `read` of the source saw a version the target overwrote.
    Rw {
        /// The read.
        read: u32,
    },
}

/// A begin/commit edge with its origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BcEdge {
    /// Source node.
    pub from: u32,
    /// Target node.
    pub to: u32,
    /// Origin.
    pub label: Label,
}

/// One variable: the order of two writers of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The key.
    pub key: KeyId,
    /// The writer first when the variable is true.
    pub a: TxnId,
    /// The other writer.
    pub b: TxnId,
}

/// The encoding of one writer assignment.
#[derive(Clone, Debug, Default)]
pub struct Encoding {
    /// Number of nodes (`2 * transactions`).
    pub nodes: usize,
    /// Known edges.
    pub known: Vec<BcEdge>,
    /// The variables.
    pub pairs: Vec<Pair>,
    /// Edges of literal `2v` (true) and `2v + 1` (false), by `side_start`.
    pub side_edges: Vec<BcEdge>,
    /// Offsets into `side_edges`, `2 * pairs + 1` of them.
    pub side_start: Vec<u32>,
}

/// Begin node of `t`.
pub fn begin(t: TxnId) -> u32 {
    2 * t
}

/// Commit node of `t`.
pub fn commit(t: TxnId) -> u32 {
    2 * t + 1
}

/// The reads of each written version: `(key, writer) → reads`.
type Readers = FxHashMap<(KeyId, TxnId), Vec<u32>>;

/// Builds the encoding of `f` under writers `wr`, giving up (returning the
/// count) when it would need more than `max_vars` variables.
pub fn encode(f: &Front, wr: &[TxnId], max_vars: usize) -> Result<Encoding, usize> {
    let n = f.len() as TxnId;
    let mut e = Encoding { nodes: 2 * n as usize, ..Encoding::default() };
    let known = &mut e.known;
    let mut writers: FxHashMap<KeyId, Vec<TxnId>> = FxHashMap::default();
    for t in 0..n {
        known.push(BcEdge { from: begin(t), to: commit(t), label: Label::Txn });
        if t != BOTTOM {
            known.push(BcEdge { from: commit(BOTTOM), to: begin(t), label: Label::So });
            for &k in f.writes_of(t) {
                writers.entry(k).or_default().push(t);
            }
        }
    }
    for s in &f.sessions {
        for w in s.windows(2) {
            known.push(BcEdge { from: commit(w[0]), to: begin(w[1]), label: Label::So });
        }
    }
    for (i, v) in f.version_edges.iter().enumerate() {
        known.push(BcEdge { from: commit(v.from), to: commit(v.to), label: Label::Version { edge: i as u32 } });
    }
    let mut readers: Readers = FxHashMap::default();
    for t in 1..n {
        let base = f.read_start[t as usize];
        for (i, r) in f.reads_of(t).iter().enumerate() {
            let read = base + i as u32;
            let w = wr[read as usize];
            if w != BOTTOM && w != t {
                known.push(BcEdge { from: commit(w), to: begin(t), label: Label::Wr { read } });
            }
            readers.entry((r.key, w)).or_default().push(read);
        }
    }
    // Reads of the initial state: every other writer comes after.
    let mut keys: Vec<&(KeyId, TxnId)> = readers.keys().collect();
    keys.sort_unstable();
    for &&(key, w) in &keys {
        if w != BOTTOM {
            continue;
        }
        for &read in &readers[&(key, w)] {
            let r = reader_of(f, read);
            for &b in writers.get(&key).map_or(&[][..], |v| v) {
                if b != r {
                    known.push(BcEdge { from: begin(r), to: commit(b), label: Label::Rw { read } });
                }
            }
        }
    }
    pairs(f, &mut e, &keys, &readers, &writers, max_vars)?;
    Ok(e)
}

/// The transaction holding read `read`.
pub fn reader_of(f: &Front, read: u32) -> TxnId {
    (f.read_start.partition_point(|&s| s <= read) - 1) as TxnId
}

/// The variables: one per unordered pair of writers of a key of which at
/// least one has readers (pairs where neither has readers add only a
/// write-write edge, which a topological order of the rest always orders).
fn pairs(
    f: &Front,
    e: &mut Encoding,
    keys: &[&(KeyId, TxnId)],
    readers: &Readers,
    writers: &FxHashMap<KeyId, Vec<TxnId>>,
    max_vars: usize,
) -> Result<(), usize> {
    let mut seen: FxHashSet<(KeyId, TxnId, TxnId)> = FxHashSet::default();
    let mut count = 0usize;
    for &&(key, a) in keys {
        if a == BOTTOM {
            continue;
        }
        count += writers.get(&key).map_or(0, |w| w.len().saturating_sub(1));
    }
    if count > max_vars {
        return Err(count);
    }
    e.side_start.push(0);
    for &&(key, a) in keys {
        if a == BOTTOM {
            continue;
        }
        for &b in writers.get(&key).map_or(&[][..], |v| v) {
            if b == a || !seen.insert((key, a.min(b), a.max(b))) {
                continue;
            }
            e.pairs.push(Pair { key, a, b });
            for (x, y) in [(a, b), (b, a)] {
                e.side_edges.push(BcEdge { from: commit(x), to: commit(y), label: Label::Ww { key } });
                for &read in readers.get(&(key, x)).map_or(&[][..], |v| v) {
                    let r = reader_of(f, read);
                    if r != y {
                        e.side_edges.push(BcEdge { from: begin(r), to: commit(y), label: Label::Rw { read } });
                    }
                }
                e.side_start.push(e.side_edges.len() as u32);
            }
        }
    }
    Ok(())
}

impl Encoding {
    /// The edges of literal `lit`.
    pub fn side(&self, lit: u32) -> &[BcEdge] {
        &self.side_edges[self.side_start[lit as usize] as usize..self.side_start[lit as usize + 1] as usize]
    }

    /// A topological position per node under the known edges, or `None`
    /// when they are cyclic.
    pub fn known_order(&self) -> Option<Vec<u32>> {
        topo(self.nodes, self.known.iter().map(|e| (e.from, e.to)))
    }

    /// The solver instance over the variables `vars` (all when `None`),
    /// with the known order `order`.
    pub fn instance(&self, vars: Option<&[u32]>, order: &[u32]) -> Instance {
        let mut inst = Instance {
            nodes: self.nodes,
            known: self.known.iter().map(|e| (e.from, e.to)).collect(),
            order: order.to_vec(),
            ..Instance::default()
        };
        inst.side_start.push(0);
        let all: Vec<u32>;
        let vars = match vars {
            Some(v) => v,
            None => {
                all = (0..self.pairs.len() as u32).collect();
                &all
            }
        };
        for &v in vars {
            for lit in [2 * v, 2 * v + 1] {
                inst.side_edges.extend(self.side(lit).iter().map(|e| (e.from, e.to)));
                inst.side_start.push(inst.side_edges.len() as u32);
            }
        }
        inst
    }
}

/// Kahn's algorithm: a position per node, or `None` on a cycle.
pub fn topo(nodes: usize, edges: impl Iterator<Item = (u32, u32)> + Clone) -> Option<Vec<u32>> {
    let mut start = vec![0u32; nodes + 1];
    for (a, _) in edges.clone() {
        start[a as usize + 1] += 1;
    }
    for i in 0..nodes {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut targets = vec![0u32; start[nodes] as usize];
    let mut indeg = vec![0u32; nodes];
    for (a, b) in edges {
        targets[fill[a as usize] as usize] = b;
        fill[a as usize] += 1;
        indeg[b as usize] += 1;
    }
    let mut queue: Vec<u32> = (0..nodes as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut pos = vec![u32::MAX; nodes];
    let mut next = 0u32;
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head];
        head += 1;
        pos[v as usize] = next;
        next += 1;
        for &w in &targets[start[v as usize] as usize..start[v as usize + 1] as usize] {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                queue.push(w);
            }
        }
    }
    (next as usize == nodes).then_some(pos)
}
