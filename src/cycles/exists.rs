//! Cycle-existence proofs (Elle's `cycle-exists-cases`).
//!
//! Finding a *shortest typed* cycle can be expensive in a large SCC, but
//! proving that *some* cycle exists in the subgraph a model requires to be
//! acyclic is linear: compute SCCs of that subgraph. Each model gets a
//! subgraph spec (Elle's table): read uncommitted forbids ww cycles, read
//! committed ww/wr cycles, serializability any data cycle, and the "strong"
//! variants add process or realtime edges. Snapshot isolation uses the
//! *sequential extension* `A ∪ A;B` with A = ww∪wr(∪order) and B = rw, whose
//! cycles are exactly the closed walks in which no two rw edges are adjacent
//! (Cerone & Gotsman's characterisation of SI). We encode it without
//! materialising `A;B`: a two-layer graph where layer 1 means "arrived by an
//! rw edge" and may only leave by an A edge.
//!
//! A found SCC proves the model is violated (the anomaly
//! `:<model>-cycle-exists`); models implied to be impossible by an earlier
//! finding are skipped, and the models that survive tell the typed search
//! which cycle types cannot exist.

use super::scc::{tarjan, Adjacency};
use super::{lattice, SccGraph};
use crate::anomaly::{rel, Case, Rels};

/// A model and the subgraph it requires to be acyclic.
pub struct ExistsSpec {
    /// Canonical model name.
    pub model: &'static str,
    /// Elle's printed subgraph spec.
    pub subgraph: &'static str,
    /// Relationships of the base graph A.
    pub a: Rels,
    /// Relationships B of the sequential extension A ∪ A;B (0 for a plain union).
    pub b: Rels,
}

const WW: Rels = rel::WW | rel::WWP;
const WR: Rels = rel::WR | rel::WRP;
const RW: Rels = rel::RW | rel::RWP;
/// Repeatable read (PL-2.99) allows predicate anti-dependencies.
const RW_ITEM: Rels = rel::RW;
const P: Rels = rel::PROCESS;
const RT: Rels = rel::REALTIME;

/// Elle's cycle-exists specs, in Elle's order.
pub const EXISTS_SPECS: &[ExistsSpec] = &[
    ExistsSpec { model: "PL-1", subgraph: "[:union :ww :wwp]", a: WW, b: 0 },
    ExistsSpec { model: "PL-2", subgraph: "[:union :ww :wwp :wr :wrp]", a: WW | WR, b: 0 },
    ExistsSpec {
        model: "PL-SI",
        subgraph: "[:extension [:union :ww :wwp :wr :wrp] [:union :rw :rwp]]",
        a: WW | WR,
        b: RW,
    },
    ExistsSpec { model: "PL-2.99", subgraph: "[:union :ww :wwp :wr :wrp :rw]", a: WW | WR | RW_ITEM, b: 0 },
    ExistsSpec { model: "PL-3", subgraph: "[:union :ww :wwp :wr :wrp :rw :rwp]", a: WW | WR | RW, b: 0 },
    ExistsSpec { model: "strong-session-PL-1", subgraph: "[:union :ww :wwp :process]", a: WW | P, b: 0 },
    ExistsSpec { model: "strong-session-PL-2", subgraph: "[:union :ww :wwp :wr :wrp :process]", a: WW | WR | P, b: 0 },
    ExistsSpec {
        model: "strong-session-snapshot-isolation",
        subgraph: "[:extension [:union :ww :wwp :wr :wrp :process] [:union :rw :rwp]]",
        a: WW | WR | P,
        b: RW,
    },
    ExistsSpec {
        model: "strong-session-serializable",
        subgraph: "[:union :ww :wwp :wr :wrp :rw :rwp :process]",
        a: WW | WR | RW | P,
        b: 0,
    },
    ExistsSpec { model: "strong-PL-1", subgraph: "[:union :ww :wwp :realtime]", a: WW | RT, b: 0 },
    ExistsSpec { model: "strong-PL-2", subgraph: "[:union :ww :wwp :wr :wrp :realtime]", a: WW | WR | RT, b: 0 },
    ExistsSpec {
        model: "strong-snapshot-isolation",
        subgraph: "[:extension [:union :ww :wwp :wr :wrp :realtime] [:union :rw :rwp]]",
        a: WW | WR | RT,
        b: RW,
    },
    ExistsSpec {
        model: "PL-SS",
        subgraph: "[:union :ww :wwp :wr :wrp :rw :rwp :realtime]",
        a: WW | WR | RW | RT,
        b: 0,
    },
];

/// The two-layer view of `A ∪ A;B` over an SCC graph (node = 2·v + layer).
struct Layered<'a> {
    g: &'a SccGraph,
    a: Rels,
    b: Rels,
}

impl Adjacency for Layered<'_> {
    fn len(&self) -> usize {
        self.g.len() * 2
    }
    fn degree(&self, v: u32) -> usize {
        self.g.graph.edge_range(v / 2).len() * 2
    }
    fn neighbor(&self, v: u32, i: usize) -> Option<u32> {
        let (x, layer) = (v / 2, v % 2);
        let e = self.g.graph.edge_range(x).start + i / 2;
        let (t, r) = (self.g.graph.target(e), self.g.graph.rel(e));
        if i.is_multiple_of(2) {
            (r & self.a != 0).then_some(t * 2)
        } else {
            (layer == 0 && self.b != 0 && r & self.b != 0).then_some(t * 2 + 1)
        }
    }
}

/// Every cycle-exists proof for one SCC: (anomaly type, case), in spec order.
pub fn cycle_exists_cases(g: &SccGraph) -> Vec<(String, Case)> {
    let mut out = Vec::new();
    let mut redundant: Vec<&'static str> = Vec::new();
    for spec in EXISTS_SPECS {
        if redundant.contains(&spec.model) {
            continue;
        }
        let layered = Layered { g, a: spec.a, b: spec.b };
        let comps = tarjan(&layered, |v| v % 2 == 0);
        let Some(smallest) = comps
            .comps
            .iter()
            .map(|c| {
                let mut vs: Vec<u32> = c.iter().map(|&n| n / 2).collect();
                vs.sort_unstable();
                vs.dedup();
                vs
            })
            .min_by_key(|c| c.len())
        else {
            continue;
        };
        let mut scc: Vec<i64> = smallest.iter().map(|&v| g.indices[v as usize]).collect();
        scc.sort_unstable();
        out.push((
            format!("{}-cycle-exists", spec.model),
            Case::CycleExists {
                not: lattice::friendly_model_name(spec.model).to_string(),
                subgraph: spec.subgraph.into(),
                scc_size: scc.len(),
                scc,
            },
        ));
        redundant.extend(lattice::all_impossible_models(&[spec.model]));
    }
    out
}
