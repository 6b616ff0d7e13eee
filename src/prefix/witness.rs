//! Explaining a prefix-consistency refutation by hand-checkable cycles.
//!
//! A refutation is a set of write orders (pairs of writers of a key) that
//! the solver cannot orient without a cycle, shrunk to a minimal such set
//! (the *core*): every one of its `2^k` orientations closes a cycle in the
//! begin/commit graph, and each case of the refutation shows one of them as
//! a cycle over concrete transactions. Every edge into a begin node is a
//! session or reads-from edge, and an anti-dependency leaves a begin node,
//! so each anti-dependency on such a cycle directly follows a reads-from or
//! session step: the cycles are G0, G1c, G-single-item or
//! G-nonadjacent-item (with `-process` when session order is used), never
//! two anti-dependencies in a row, and never a write-write step followed
//! by an anti-dependency (a lost update, which prefix consistency allows).

use super::encode::{BcEdge, Encoding, Label};
use crate::anomaly::{Branch, Cycle, ReadFrom, Step, WriteOrder};
use crate::cycles::classify::classify;
use crate::history::{History, KeyId, MopFn, MopValue, OpId};
use crate::weak::front::{Front, TxnId};

/// What the explanation needs to name values and operations.
pub struct Ctx<'a> {
    /// The history.
    pub h: &'a History,
    /// Its front-end history.
    pub f: &'a Front,
    /// The writer of each read.
    pub wr: &'a [TxnId],
}

/// Most cases listed in one refutation.
pub const MAX_BRANCHES: usize = 64;

impl Ctx<'_> {
    fn op(&self, t: TxnId) -> OpId {
        self.f.op[t as usize]
    }

    /// The last write (or append) of `key` by `t`: its value and micro-op.
    fn write(&self, t: TxnId, key: KeyId) -> (Option<i64>, Option<u32>) {
        if t == crate::weak::front::BOTTOM {
            return (None, None);
        }
        let op = self.h.op(self.op(t));
        let mops = self.h.mops_of(op);
        for (i, m) in mops.iter().enumerate().rev() {
            if m.key == key && matches!(m.f, MopFn::Write | MopFn::Append) {
                let v = match m.value {
                    MopValue::Int(v) => Some(v),
                    _ => None,
                };
                return (v, Some(i as u32));
            }
        }
        (None, None)
    }

    /// The value read `read` observed (a list's last element).
    fn read_value(&self, read: u32) -> Option<i64> {
        let r = &self.f.reads[read as usize];
        let t = super::encode::reader_of(self.f, read);
        let op = self.h.op(self.op(t));
        match self.h.mops_of(op).get(r.mop as usize).map(|m| m.value) {
            Some(MopValue::Int(v)) => Some(v),
            Some(v @ MopValue::List { .. }) => self.h.list(v).last().copied(),
            _ => None,
        }
    }

    /// The step of an edge between two transactions.
    fn step(&self, e: &BcEdge) -> Option<Step> {
        let (a, b) = (e.from / 2, e.to / 2);
        Some(match e.label {
            Label::Txn => return None,
            Label::So => Step::Process { process: self.h.op(self.op(a)).process },
            Label::Wr { read } => {
                let key = self.f.reads[read as usize].key;
                Step::Wr {
                    key,
                    value: self.read_value(read),
                    a_mop: self.write(a, key).1,
                    b_mop: Some(self.f.reads[read as usize].mop),
                }
            }
            Label::Version { edge } => self.version(a, b, edge),
            Label::Ww { key } => self.ww(a, b, key),
            Label::Rw { read } => {
                let key = self.f.reads[read as usize].key;
                let (value2, b_mop) = self.write(b, key);
                Step::Rw {
                    key,
                    value: self.read_value(read),
                    value2,
                    a_mop: Some(self.f.reads[read as usize].mop),
                    b_mop,
                }
            }
        })
    }

    /// The micro-op of `t` appending `element` to `key`.
    fn append_mop(&self, t: TxnId, key: KeyId, element: i64) -> Option<u32> {
        let mops = self.h.mops_of(self.h.op(self.op(t)));
        mops.iter()
            .position(|m| m.key == key && m.f == MopFn::Append && m.value == MopValue::Int(element))
            .map(|i| i as u32)
    }

    /// A list version edge, with the two elements its read shows side by
    /// side.
    fn version(&self, a: TxnId, b: TxnId, edge: u32) -> Step {
        let e = &self.f.version_edges[edge as usize];
        let mops = self.h.mops_of(self.h.op(e.op));
        if let Some(m) = mops.get(e.mop as usize) {
            for w in self.h.list(m.value).windows(2) {
                let (am, bm) = (self.append_mop(a, e.key, w[0]), self.append_mop(b, e.key, w[1]));
                if am.is_some() && bm.is_some() {
                    return Step::Ww { key: e.key, value: Some(w[0]), value2: Some(w[1]), a_mop: am, b_mop: bm };
                }
            }
        }
        self.ww(a, b, e.key)
    }

    fn ww(&self, a: TxnId, b: TxnId, key: KeyId) -> Step {
        let (value, a_mop) = self.write(a, key);
        let (value2, b_mop) = self.write(b, key);
        Step::Ww { key, value, value2, a_mop, b_mop }
    }

    /// The transaction cycle of a begin/commit cycle.
    pub fn cycle(&self, edges: &[BcEdge]) -> Cycle {
        let steps: Vec<(OpId, Step)> =
            edges.iter().filter_map(|e| self.step(e).map(|s| (self.op(e.from / 2), s))).collect();
        let rels: Vec<u8> = steps.iter().map(|(_, s)| s.rel()).collect();
        Cycle {
            ops: steps.iter().map(|(o, _)| *o).collect(),
            anomaly: classify(&rels).unwrap_or_else(|| "G0".to_string()),
            steps: steps.into_iter().map(|(_, s)| s).collect(),
        }
    }

    /// The write order variable `v` stands for when set to `value`.
    pub fn write_order(&self, enc: &Encoding, v: u32, value: bool) -> WriteOrder {
        let p = enc.pairs[v as usize];
        let (x, y) = if value { (p.a, p.b) } else { (p.b, p.a) };
        WriteOrder {
            key: p.key,
            first: (self.op(x), self.write(x, p.key).0.unwrap_or(0)),
            second: (self.op(y), self.write(y, p.key).0.unwrap_or(0)),
        }
    }

    /// The reads of repeated values, with the writers this assignment took.
    pub fn assumed_reads(&self) -> Vec<ReadFrom> {
        let mut out = Vec::new();
        for (read, r) in self.f.reads.iter().enumerate() {
            if let crate::weak::front::ReadFrom::Choice(c) = r.from {
                let t = super::encode::reader_of(self.f, read as u32);
                out.push(ReadFrom {
                    key: r.key,
                    value: self.read_value(read as u32).unwrap_or(0),
                    reader: self.op(t),
                    writer: self.op(self.wr[read]),
                    candidates: self.f.choices[c as usize].iter().map(|&w| self.op(w)).collect(),
                });
            }
        }
        out
    }

    /// One case per orientation of the core variables (at most
    /// [`MAX_BRANCHES`]; the flag says whether some were left out), or
    /// `None` if some orientation is acyclic (the core was not one).
    pub fn branches(&self, enc: &Encoding, core: &[u32]) -> Option<(Vec<Branch>, bool)> {
        let k = core.len().min(usize::BITS as usize - 1);
        let total = 1usize << k;
        let mut out = Vec::new();
        let reads = self.assumed_reads();
        for mask in 0..total.min(MAX_BRANCHES) {
            let mut edges: Vec<BcEdge> = enc.known.clone();
            let mut assume = Vec::new();
            for (i, &v) in core.iter().enumerate() {
                let value = mask >> i & 1 == 0;
                edges.extend_from_slice(enc.side(if value { 2 * v } else { 2 * v + 1 }));
                assume.push(self.write_order(enc, v, value));
            }
            let cycle = shortest_cycle(enc.nodes, &edges)?;
            out.push(Branch { assume, reads: reads.clone(), cycle: self.cycle(&cycle) });
        }
        Some((out, total > MAX_BRANCHES))
    }
}

/// A shortest cycle through one of the first nodes left on a cycle (Kahn's
/// algorithm removes the others), or `None` if `edges` are acyclic.
pub fn shortest_cycle(nodes: usize, edges: &[BcEdge]) -> Option<Vec<BcEdge>> {
    let mut out_adj: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    let mut indeg = vec![0u32; nodes];
    for (i, e) in edges.iter().enumerate() {
        out_adj[e.from as usize].push(i as u32);
        indeg[e.to as usize] += 1;
    }
    let mut queue: Vec<u32> = (0..nodes as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut removed = vec![false; nodes];
    while let Some(v) = queue.pop() {
        removed[v as usize] = true;
        for &i in &out_adj[v as usize] {
            let w = edges[i as usize].to as usize;
            indeg[w] -= 1;
            if indeg[w] == 0 {
                queue.push(w as u32);
            }
        }
    }
    let left: Vec<u32> = (0..nodes as u32).filter(|&v| !removed[v as usize]).collect();
    let mut best: Option<Vec<BcEdge>> = None;
    let mut via = vec![u32::MAX; nodes];
    for &s in left.iter().take(32) {
        via.iter_mut().for_each(|x| *x = u32::MAX);
        let mut frontier = vec![s];
        let mut found = None;
        'bfs: while !frontier.is_empty() {
            let mut next = Vec::new();
            for &v in &frontier {
                for &i in &out_adj[v as usize] {
                    let w = edges[i as usize].to;
                    if removed[w as usize] || via[w as usize] != u32::MAX {
                        continue;
                    }
                    via[w as usize] = i;
                    if w == s {
                        found = Some(());
                        break 'bfs;
                    }
                    next.push(w);
                }
            }
            frontier = next;
        }
        if found.is_some() {
            let mut path = Vec::new();
            let mut v = s;
            loop {
                let e = edges[via[v as usize] as usize];
                path.push(e);
                v = e.from;
                if v == s {
                    break;
                }
            }
            path.reverse();
            if best.as_ref().is_none_or(|b| path.len() < b.len()) {
                best = Some(path);
            }
        }
    }
    best
}
