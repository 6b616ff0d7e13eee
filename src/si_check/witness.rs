//! Turning a refutation into something a person can check by hand: cycles
//! over concrete transactions with every step typed, keyed and valued, the
//! case split over the write orders the history leaves open, and a reason
//! for every write order a cycle relies on without assuming it.

use super::polygraph::{Dep, DepEdge, Polygraph};
use super::prune::{shortest_path, Derivation, EdgeRec};
use super::txns::{Source, TxnId, Txns};
use crate::anomaly::{Cycle, Justified, Step, WriteOrder};
use crate::cycles::classify::classify;
use crate::history::{History, KeyId};

/// Everything needed to explain edges.
pub struct Ctx<'a> {
    /// The history.
    pub h: &'a History,
    /// Its transactions.
    pub txns: &'a Txns,
    /// The polygraph.
    pub g: &'a Polygraph,
    /// Known and derived edges.
    pub recs: &'a [EdgeRec],
    /// Why derived edges hold.
    pub derivations: &'a [Derivation],
    /// Adjacency of `recs`, built on first use.
    pub adj: std::sync::OnceLock<Vec<Vec<(u32, u32)>>>,
}

/// At most this many justifications are listed per refutation.
const MAX_JUSTIFIED: usize = 64;

impl Ctx<'_> {
    fn write_value(&self, t: TxnId, key: u32) -> Option<i64> {
        self.txns.write_of(t, KeyId(key)).map(|w| w.value)
    }

    /// The explained step of a dependency edge.
    pub fn step(&self, e: &DepEdge) -> Step {
        let key = KeyId(e.key);
        let wmop = |t: TxnId| self.txns.write_of(t, key).map(|w| w.mop);
        let rmop = |t: TxnId| self.txns.read_of(t, key).map(|r| r.mop);
        match e.dep {
            Dep::Ww => Step::Ww {
                key,
                value: self.write_value(e.from, e.key),
                value2: self.write_value(e.to, e.key),
                a_mop: wmop(e.from),
                b_mop: wmop(e.to),
            },
            Dep::Wr => Step::Wr {
                key,
                value: match self.txns.read_of(e.to, key).map(|r| r.from) {
                    Some(Source::Txn(_, v)) => Some(v),
                    Some(Source::Choice(c)) => Some(self.txns.choices[c as usize].value),
                    _ => self.write_value(e.from, e.key),
                },
                a_mop: wmop(e.from),
                b_mop: rmop(e.to),
            },
            Dep::Rw => Step::Rw {
                key,
                value: match self.txns.read_of(e.from, key).map(|r| r.from) {
                    Some(Source::Txn(_, v)) => Some(v),
                    Some(Source::Choice(c)) => Some(self.txns.choices[c as usize].value),
                    _ => None,
                },
                value2: self.write_value(e.to, e.key),
                a_mop: rmop(e.from),
                b_mop: wmop(e.to),
            },
            Dep::Session => Step::Process { process: self.txns.process[e.from as usize] },
            Dep::Realtime => {
                let b = self.txns.op[e.to as usize];
                let inv = self.h.op(b).pair;
                Step::Realtime {
                    a_completion: self.txns.op[e.from as usize],
                    b_invocation: if inv == crate::history::NONE { b } else { inv },
                }
            }
        }
    }

    /// The cycle made of `edges` (each ending where the next begins).
    pub fn cycle(&self, edges: &[DepEdge]) -> Cycle {
        let steps: Vec<Step> = edges.iter().map(|e| self.step(e)).collect();
        let rels: Vec<u8> = steps.iter().map(Step::rel).collect();
        Cycle {
            ops: edges.iter().map(|e| self.txns.op[e.from as usize]).collect(),
            anomaly: classify(&rels).unwrap_or_else(|| "G0".to_string()),
            steps,
        }
    }

    /// The write order a decided constraint stands for.
    pub fn write_order(&self, constraint: u32, a_first: bool) -> WriteOrder {
        let c = &self.g.constraints[constraint as usize];
        let (x, y) = if a_first { (c.a, c.b) } else { (c.b, c.a) };
        let key = self.g.chains[x as usize].key;
        let tail = *self.g.chain(x).last().unwrap_or(&0);
        let head = self.g.chain(y)[0];
        let val = |t: TxnId| self.write_value(t, key.0).unwrap_or(0);
        WriteOrder {
            key,
            first: (self.txns.op[tail as usize], val(tail)),
            second: (self.txns.op[head as usize], val(head)),
        }
    }

    /// The reads-from assumption "choice `j` read from candidate `i`".
    pub fn read_from(&self, j: u32, i: usize) -> crate::anomaly::ReadFrom {
        let c = &self.txns.choices[j as usize];
        crate::anomaly::ReadFrom {
            key: c.key,
            value: c.value,
            reader: self.txns.op[c.reader as usize],
            writer: self.txns.op[c.cands[i] as usize],
            candidates: c.cands.iter().map(|&w| self.txns.op[w as usize]).collect(),
        }
    }

    /// The shortest cycle through `first`, using `extra` edges and the
    /// known/derived edges of rounds `<= round`; returns the cycle's edges and
    /// the indices (into `recs`) of the derived edges on it.
    pub fn close(&self, first: DepEdge, extra: &[DepEdge], round: u32) -> Option<(Vec<DepEdge>, Vec<usize>)> {
        let n = self.recs.len();
        let (a, b) = self.g.bc(&first);
        let adj = self.adjacency();
        let mut extra_adj: rustc_hash::FxHashMap<u32, Vec<(u32, u32)>> = rustc_hash::FxHashMap::default();
        for (i, e) in extra.iter().enumerate() {
            let (x, y) = self.g.bc(e);
            extra_adj.entry(x).or_default().push((y, (n + i) as u32));
        }
        let recs = self.recs;
        let path = shortest_path(adj, &extra_adj, |i| i >= n || recs[i].round <= round, b, a)?;
        let mut edges = vec![first];
        let mut derived = Vec::new();
        for i in path {
            edges.push(if i < n { recs[i].e } else { extra[i - n] });
            if i < n && recs[i].why != u32::MAX {
                derived.push(i);
            }
        }
        Some((edges, derived))
    }

    /// The begin/commit adjacency of every known and derived edge (built
    /// once): `(target, index into recs)`.
    fn adjacency(&self) -> &Vec<Vec<(u32, u32)>> {
        self.adj.get_or_init(|| {
            let mut adj: Vec<Vec<(u32, u32)>> = vec![Vec::new(); 2 * self.g.n];
            for (i, r) in self.recs.iter().enumerate() {
                let (a, b) = self.g.bc(&r.e);
                adj[a as usize].push((b, i as u32));
            }
            adj
        })
    }

    /// Justifies every derived edge in `pending` (indices into `recs`), and
    /// recursively those their reasons use, appending to `out`.
    pub fn justify(&self, mut pending: Vec<usize>, out: &mut Vec<Justified>) {
        let mut done: Vec<u32> = Vec::new();
        while let Some(i) = pending.pop() {
            let why = self.recs[i].why;
            if done.contains(&why) {
                continue;
            }
            if out.len() >= MAX_JUSTIFIED {
                break;
            }
            done.push(why);
            let d = &self.derivations[why as usize];
            // The rejected side's edge closes a cycle with what was known
            // when the constraint was decided (edges of rounds <= d.round).
            let Some((edges, more)) = self.close(d.blocked, &[], d.round) else { continue };
            out.push(Justified { order: self.write_order(d.constraint, d.a_first), because: self.cycle(&edges) });
            pending.extend(more);
        }
    }
}

/// Rank of a cycle name's base anomaly, from most to least specific.
fn base_rank(name: &str) -> usize {
    let base = name.strip_suffix("-realtime").or_else(|| name.strip_suffix("-process")).unwrap_or(name);
    BASES.iter().position(|b| *b == base).unwrap_or(BASES.len() - 1)
}

/// Cycle anomaly bases of register histories, most specific first.
const BASES: [&str; 5] = ["G0", "G1c", "G-single-item", "G-nonadjacent-item", "G2-item"];

/// The anomaly a refutation establishes: every write order leads to one of
/// its case cycles or to a cycle justifying a forced order, so it is the
/// most general of all their types.
pub fn refutation_name(r: &crate::anomaly::Refutation) -> String {
    let names: Vec<&str> = r
        .branches
        .iter()
        .map(|b| b.cycle.anomaly.as_str())
        .chain(r.derived.iter().map(|d| d.because.anomaly.as_str()))
        .collect();
    combined_name(&names)
}

/// The name that holds for every branch of a case split: each branch shows
/// a cycle of its own type, so only the most general of their types (the
/// weakest claim) is established for the history.
pub fn combined_name(names: &[&str]) -> String {
    let base = names.iter().map(|n| base_rank(n)).max().unwrap_or(BASES.len() - 1);
    let suffix = if names.iter().any(|n| n.ends_with("-realtime")) {
        "-realtime"
    } else if names.iter().any(|n| n.ends_with("-process")) {
        "-process"
    } else {
        ""
    };
    format!("{}{suffix}", BASES[base])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_names_take_the_most_general_base_and_order() {
        assert_eq!(combined_name(&["G-single-item", "G-single-item"]), "G-single-item");
        assert_eq!(combined_name(&["G-single-item", "G2-item"]), "G2-item");
        assert_eq!(combined_name(&["G0", "G1c-process"]), "G1c-process");
        assert_eq!(
            combined_name(&["G-nonadjacent-item-realtime", "G-single-item-process"]),
            "G-nonadjacent-item-realtime"
        );
        assert_eq!(combined_name(&["G0"]), "G0");
    }
}
