//! Incremental transitive closure with undo, for the solver's theory
//! propagation.
//!
//! The solver's theory is "the chosen edges form no cycle". Detecting a
//! cycle when it closes is not enough on histories where nothing observable
//! orders the transactions (every transaction its own process, all of them
//! concurrent): a key written by hundreds of transactions has a write order
//! made of one variable per pair, and without propagation the solver learns
//! each transitivity fact (`a < b`, `b < c` so not `c < a`) from its own
//! conflict, millions of them. Theory propagation says it at once: when a
//! path `y ⇝ x` appears, every undecided side holding an edge `x → y` is
//! false, so the other side of its constraint holds (Gebser, Janhunen and
//! Rintanen's acyclicity propagation; MonoSAT's reachability propagation).
//!
//! The closure keeps one bit row per node: `row(y)` = the nodes `y` reaches.
//! Inserting `a → b` when `a` does not reach `b` yet ORs `row(b) ∪ {b}` into
//! the row of every node that reaches `a` (and of `a`) and does not reach
//! `b` yet — a node that reaches `b` already has all of `row(b)`, the
//! closure being transitive. The new bits of row `y` ANDed with the row of
//! candidate sources into `y` (`cand(y)`: the `x` with an edge `x → y` in
//! some constraint side) are exactly the candidate edges that now close a
//! cycle; they are reported to the caller. Every word changed goes on an
//! undo log, so backtracking restores the closure of a trail prefix.
//!
//! Descendant rows alone would make finding the ancestors of `a` a scan of
//! every row; a second matrix keeps ancestor rows, so both sets of an
//! insertion are read off one row each, and only the words where a row
//! gains bits are visited. The known edges' closure is computed in bulk
//! (reverse topological order) before the search.
//!
//! Memory is three `n × n` bit matrices (descendants, ancestors, candidate
//! sources) and an epoch stamp per word of the first two, so the solver uses
//! this only for components up to [`MAX_NODES`] nodes, and only while all
//! live closures fit [`BUDGET_BYTES`].

use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest component (in graph nodes) given a closure: three bit
/// matrices of `n²` bits and a stamp per word of two of them, 512 MiB at
/// this size (plus the undo log).
pub const MAX_NODES: usize = 32_768;

/// What the closures alive at once may hold (components are solved in
/// parallel): a component that would exceed it is solved without theory
/// propagation.
pub const BUDGET_BYTES: usize = 2 << 30;

/// Bytes held by live closures.
static IN_USE: AtomicUsize = AtomicUsize::new(0);

/// The bytes of a closure on `n` nodes (without its undo log).
pub fn bytes_for(n: usize) -> usize {
    let words = n.div_ceil(64).max(1);
    3 * n * words * 8 + 2 * n * words * 4
}

/// The transitive closure of a growing DAG, with an undo log.
pub struct Closure {
    n: usize,
    words: usize,
    /// Two matrices in one buffer: `bits[y * words ..][..words]` holds the
    /// nodes `y` reaches by a non-empty path (its descendants), and
    /// `bits[(n + x) * words ..][..words]` the nodes reaching `x` (its
    /// ancestors).
    bits: Vec<u64>,
    /// `cand[y * words ..][..words]`: the nodes `x` with a candidate edge
    /// `x → y`.
    cand: Vec<u64>,
    /// The index and old value of every word changed, oldest first; a word
    /// is logged once per epoch (its first change since the last
    /// [`Closure::checkpoint`] or undo), which is all an undo to the start
    /// of an epoch needs.
    log_index: Vec<u32>,
    log_old: Vec<u64>,
    /// Per word of `bits`, the epoch it was last logged in.
    stamp: Vec<u32>,
    epoch: u32,
    /// The descendants of `b` with `b`, and the ancestors of `a` with `a`,
    /// while inserting `a → b`; with the indices of their non-zero words.
    down: Vec<u64>,
    up: Vec<u64>,
    down_words: Vec<u32>,
    up_words: Vec<u32>,
    /// The nodes whose descendant rows, and whose ancestor rows, grow.
    rows_to_do: Vec<u32>,
    cols_to_do: Vec<u32>,
    /// Bytes counted in [`IN_USE`] for this closure.
    held: usize,
}

impl Drop for Closure {
    fn drop(&mut self) {
        IN_USE.fetch_sub(self.held, Ordering::Relaxed);
    }
}

impl Closure {
    /// An empty graph on `n` nodes whose candidate edges are `cands`
    /// (counted against [`BUDGET_BYTES`] but not refused).
    pub fn new(n: usize, cands: impl IntoIterator<Item = (u32, u32)>) -> Closure {
        let held = bytes_for(n);
        IN_USE.fetch_add(held, Ordering::Relaxed);
        Closure::holding(n, cands, held)
    }

    /// An empty graph, if one on `n` nodes fits [`MAX_NODES`] and what is
    /// left of [`BUDGET_BYTES`].
    pub fn try_new(n: usize, cands: impl IntoIterator<Item = (u32, u32)>) -> Option<Closure> {
        let held = bytes_for(n);
        let reserved = n <= MAX_NODES
            && IN_USE
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| (u + held <= BUDGET_BYTES).then_some(u + held))
                .is_ok();
        reserved.then(|| Closure::holding(n, cands, held))
    }

    fn holding(n: usize, cands: impl IntoIterator<Item = (u32, u32)>, held: usize) -> Closure {
        let words = n.div_ceil(64).max(1);
        let mut cand = vec![0u64; n * words];
        for (x, y) in cands {
            let (x, y) = (x as usize, y as usize);
            if x < n && y < n {
                cand[y * words + x / 64] |= 1u64 << (x % 64);
            }
        }
        Closure {
            n,
            words,
            bits: vec![0; 2 * n * words],
            cand,
            log_index: Vec::new(),
            log_old: Vec::new(),
            stamp: vec![0; 2 * n * words],
            epoch: 1,
            down: vec![0; words],
            up: vec![0; words],
            down_words: Vec::new(),
            up_words: Vec::new(),
            rows_to_do: Vec::new(),
            cols_to_do: Vec::new(),
            held,
        }
    }

    /// The closure of `edges` on `n` nodes (if it fits, see
    /// [`Closure::try_new`]), given a topological order of
    /// them (`topo`, every node once), computed in bulk: rows in reverse
    /// topological order (a node reaches its successors and what they
    /// reach), ancestor rows in topological order. `O(edges × n / 64)`
    /// word operations, instead of one insertion per edge. Pushes `(y, x)`
    /// onto `hits` for every candidate edge `x → y` the edges already close
    /// into a cycle.
    pub fn with_edges(
        n: usize,
        cands: impl IntoIterator<Item = (u32, u32)>,
        edges: &[(u32, u32)],
        topo: &[u32],
        hits: &mut Vec<(u32, u32)>,
    ) -> Option<Closure> {
        let mut c = Closure::try_new(n, cands)?;
        let w = c.words;
        let csr = |rev: bool| {
            let mut start = vec![0u32; n + 1];
            for &(a, b) in edges {
                start[if rev { b } else { a } as usize + 1] += 1;
            }
            for i in 0..n {
                start[i + 1] += start[i];
            }
            let mut fill = start.clone();
            let mut to = vec![0u32; edges.len()];
            for &(a, b) in edges {
                let (f, t) = if rev { (b, a) } else { (a, b) };
                to[fill[f as usize] as usize] = t;
                fill[f as usize] += 1;
            }
            (start, to)
        };
        // Descendant rows: successors first; ancestor rows: predecessors
        // first.
        let (start, to) = csr(false);
        union_rows(&mut c.bits, w, 0, &start, &to, topo.iter().rev());
        let (start, to) = csr(true);
        union_rows(&mut c.bits, w, n, &start, &to, topo.iter());
        for y in 0..n {
            for i in 0..w {
                let mut h = c.bits[y * w + i] & c.cand[y * w + i];
                while h != 0 {
                    hits.push((y as u32, (i * 64) as u32 + h.trailing_zeros()));
                    h &= h - 1;
                }
            }
        }
        Some(c)
    }

    /// Whether `from` reaches `to` by a non-empty path.
    #[inline]
    pub fn reaches(&self, from: u32, to: u32) -> bool {
        let (f, t) = (from as usize, to as usize);
        self.bits[f * self.words + t / 64] >> (t % 64) & 1 == 1
    }

    /// The current undo point. Only points taken right after
    /// [`Closure::checkpoint`] (or an undo) can be restored.
    pub fn mark(&self) -> usize {
        self.log_index.len()
    }

    /// Starts an epoch: the current state becomes a point to undo to.
    pub fn checkpoint(&mut self) {
        self.epoch += 1;
    }

    /// Restores the closure as it was at undo point `mark`, and starts an
    /// epoch.
    pub fn undo_to(&mut self, mark: usize) {
        while self.log_index.len() > mark {
            if let (Some(i), Some(old)) = (self.log_index.pop(), self.log_old.pop()) {
                self.bits[i as usize] = old;
            }
        }
        self.epoch += 1;
    }

    /// Sets word `i` to `value`, logging its old value if this epoch has
    /// not yet.
    #[inline]
    fn set(&mut self, i: usize, old: u64, value: u64) {
        if self.stamp[i] != self.epoch {
            self.stamp[i] = self.epoch;
            self.log_index.push(i as u32);
            self.log_old.push(old);
        }
        self.bits[i] = value;
    }

    /// Adds the edge `a → b` (the caller has checked that `b` does not reach
    /// `a`). Pushes `(y, x)` onto `hits` for every candidate edge `x → y`
    /// that now closes a cycle (`y` newly reaches `x`).
    ///
    /// The new pairs are (ancestors of `a` with `a`) × (descendants of `b`
    /// with `b`): every such ancestor that does not reach `b` yet gains the
    /// descendants in its row, and every such descendant that `a` does not
    /// reach yet gains the ancestors in its column row. Only the non-zero
    /// words of the two sets are visited.
    pub fn insert(&mut self, a: u32, b: u32, hits: &mut Vec<(u32, u32)>) {
        let (a, b) = (a as usize, b as usize);
        if a == b || a >= self.n || b >= self.n || self.reaches(a as u32, b as u32) {
            return;
        }
        let (n, w) = (self.n, self.words);
        // Only the pairs (ancestor not reaching b yet) × (descendant a
        // does not reach yet) are new: every ancestor of a reaches what a
        // reaches, and every descendant of b is reached by what reaches b.
        // Both sets are taken before either matrix changes, in one pass.
        let (row_b, col_a, col_b, row_a) = (b * w, (n + a) * w, (n + b) * w, a * w);
        self.down_words.clear();
        self.up_words.clear();
        for i in 0..w {
            let own_b = if i == b / 64 { 1u64 << (b % 64) } else { 0 };
            let own_a = if i == a / 64 { 1u64 << (a % 64) } else { 0 };
            let d = (self.bits[row_b + i] | own_b) & !self.bits[row_a + i];
            let u = (self.bits[col_a + i] | own_a) & !self.bits[col_b + i];
            self.down[i] = d;
            self.up[i] = u;
            if d != 0 {
                self.down_words.push(i as u32);
            }
            if u != 0 {
                self.up_words.push(i as u32);
            }
        }
        set_bits(&self.up, &self.up_words, &mut self.rows_to_do);
        set_bits(&self.down, &self.down_words, &mut self.cols_to_do);
        let (rows_to_do, down_words) = (std::mem::take(&mut self.rows_to_do), std::mem::take(&mut self.down_words));
        for &y in &rows_to_do {
            let y = y as usize;
            let base = y * w;
            for &i in &down_words {
                let i = i as usize;
                let old = self.bits[base + i];
                let new = self.down[i] & !old;
                if new == 0 {
                    continue;
                }
                self.set(base + i, old, old | new);
                let mut h = new & self.cand[base + i];
                while h != 0 {
                    let x = i * 64 + h.trailing_zeros() as usize;
                    h &= h - 1;
                    hits.push((y as u32, x as u32));
                }
            }
        }
        (self.rows_to_do, self.down_words) = (rows_to_do, down_words);
        let (cols_to_do, up_words) = (std::mem::take(&mut self.cols_to_do), std::mem::take(&mut self.up_words));
        for &x in &cols_to_do {
            let base = (n + x as usize) * w;
            for &i in &up_words {
                let i = i as usize;
                let old = self.bits[base + i];
                let new = self.up[i] & !old;
                if new != 0 {
                    self.set(base + i, old, old | new);
                }
            }
        }
        (self.cols_to_do, self.up_words) = (cols_to_do, up_words);
    }
}

/// The positions of the bits set in `set`, whose non-zero words are `words`.
fn set_bits(set: &[u64], words: &[u32], out: &mut Vec<u32>) {
    out.clear();
    for &i in words {
        let mut m = set[i as usize];
        while m != 0 {
            out.push(i * 64 + m.trailing_zeros());
            m &= m - 1;
        }
    }
}

/// For each node `v` in `order`, ORs into row `offset + v` of `bits` the row
/// `offset + s` and the bit `s` of every neighbour `s` (`to[start[v] ..
/// start[v + 1]]`); with neighbours visited first, the rows end up
/// transitively closed.
fn union_rows<'a>(
    bits: &mut [u64],
    w: usize,
    offset: usize,
    start: &[u32],
    to: &[u32],
    order: impl Iterator<Item = &'a u32>,
) {
    for &v in order {
        let v = v as usize;
        for k in start[v]..start[v + 1] {
            let s = to[k as usize] as usize;
            if s == v {
                continue;
            }
            for i in 0..w {
                let add = bits[(offset + s) * w + i];
                bits[(offset + v) * w + i] |= add;
            }
            bits[(offset + v) * w + s / 64] |= 1u64 << (s % 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::si_check::testkit::xorshift;

    #[test]
    fn closure_grows_reports_new_cycles_and_undoes() {
        // Candidate edges 2 → 0 and 3 → 1.
        let mut c = Closure::new(4, [(2, 0), (3, 1)]);
        let mut hits = Vec::new();
        c.insert(0, 1, &mut hits);
        assert!(c.reaches(0, 1) && !c.reaches(1, 0));
        assert!(hits.is_empty());
        c.checkpoint();
        let m = c.mark();
        c.insert(1, 2, &mut hits);
        // 0 ⇝ 2 now, so the candidate 2 → 0 would close a cycle.
        assert!(c.reaches(0, 2));
        assert_eq!(hits, vec![(0, 2)]);
        hits.clear();
        c.insert(2, 3, &mut hits);
        hits.sort_unstable();
        assert_eq!(hits, vec![(1, 3)]);
        assert!(c.reaches(0, 3));
        c.undo_to(m);
        assert!(c.reaches(0, 1) && !c.reaches(0, 2) && !c.reaches(1, 2) && !c.reaches(0, 3));
        // An edge already implied adds nothing.
        hits.clear();
        c.insert(1, 2, &mut hits);
        assert_eq!(hits, vec![(0, 2)]);
        hits.clear();
        let m2 = c.mark();
        c.insert(0, 2, &mut hits);
        assert_eq!(c.mark(), m2);
        assert!(hits.is_empty());
    }

    #[test]
    fn bulk_closure_equals_insertions() {
        // A DAG on 150 nodes (edges forward in a shuffled order), so rows
        // span several words.
        let n = 150u32;
        let mut rnd = xorshift(17);
        let mut topo: Vec<u32> = (0..n).collect();
        for i in (1..n as usize).rev() {
            topo.swap(i, rnd(i as u64 + 1) as usize);
        }
        let edges: Vec<(u32, u32)> = (0..300)
            .map(|_| {
                let (i, j) = (rnd(u64::from(n)), rnd(u64::from(n)));
                let (i, j) = (i.min(j), i.max(j).max(i.min(j) + 1).min(n - 1));
                (topo[i as usize], topo[j as usize])
            })
            .filter(|&(a, b)| a != b)
            .collect();
        let cands: Vec<(u32, u32)> = (0..200).map(|_| (rnd(u64::from(n)), rnd(u64::from(n)))).collect();
        let mut one = Closure::new(n as usize, cands.iter().copied());
        let mut hits_one = Vec::new();
        for &(a, b) in &edges {
            one.insert(a, b, &mut hits_one);
        }
        let mut hits_bulk = Vec::new();
        let Some(bulk) = Closure::with_edges(n as usize, cands.iter().copied(), &edges, &topo, &mut hits_bulk) else {
            panic!("a 150-node closure fits the budget");
        };
        for a in 0..n {
            for b in 0..n {
                assert_eq!(one.reaches(a, b), bulk.reaches(a, b), "{a} -> {b}");
            }
        }
        assert_eq!(one.bits, bulk.bits);
        hits_one.sort_unstable();
        hits_one.dedup();
        hits_bulk.sort_unstable();
        assert_eq!(hits_one, hits_bulk);
        assert!(!hits_bulk.is_empty());
    }

    #[test]
    fn rows_across_word_boundaries() {
        let n = 200;
        // Candidate edges 150 → 120 (closes a cycle once the chain links
        // 120 to 150) and 0 → 199 (never does).
        let mut c = Closure::new(n, [(150, 120), (0, 199)]);
        let mut hits = Vec::new();
        for v in (100..199).rev() {
            c.insert(v, v + 1, &mut hits);
        }
        assert_eq!(hits, vec![(120, 150)]);
        c.insert(0, 100, &mut hits);
        assert_eq!(hits.len(), 1);
        assert!(c.reaches(0, 199) && c.reaches(150, 199) && !c.reaches(199, 0) && !c.reaches(150, 120));
    }
}
