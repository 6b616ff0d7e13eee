//! Which anomalies found in a prefix of a history are final.
//!
//! Every check isolde runs is monotone in what a history reveals, with one
//! exception: a transaction whose outcome is not known yet. More completed
//! transactions only add dependency edges, reads and write-order
//! constraints, so a cycle among completed transactions, a read of an
//! aborted or intermediate value, an internal inconsistency, two
//! incompatible reads, or a refutation over every order of the writes read so
//! far stays in every longer history. What later lines can still change is
//! a case that names a transaction still open (invoked, not completed: it may
//! yet fail, and its reads are not known) or indeterminate (`:info`); such a
//! case waits, and is reported once every transaction it names has
//! completed `:ok` or `:fail` (or at the end of the input, by the batch
//! verdict).
//!
//! Cases that are not anomalies of the history but limits of a check (a
//! cycle search that ran out of time, an exact check left undecided, the
//! proof that some cycle exists without its witness) are never reported
//! online: the final verdict carries them.

use rustc_hash::FxHashSet;

use crate::anomaly::{Case, Workload};
use crate::history::{History, OpId, OpType, NONE};
use crate::reports::{json, result_map, tree::Node};

/// One anomaly found final in a round.
pub struct Final {
    /// The anomaly type.
    pub name: String,
    /// The case.
    pub case: Case,
}

/// The anomalies already reported, by type and case as printed (op
/// positions and value identities may differ between the snapshots of two
/// rounds; the printed case does not).
#[derive(Default)]
pub struct Reported {
    seen: FxHashSet<String>,
}

impl Reported {
    /// The final cases of `anomalies` not reported before, marking them
    /// reported.
    pub fn take_new(
        &mut self,
        h: &History,
        workload: Workload,
        anomalies: &crate::anomaly::Anomalies,
    ) -> Vec<Final> {
        let mut out = Vec::new();
        for (name, cases) in anomalies {
            for case in cases {
                if !reportable(case) {
                    continue;
                }
                let node = result_map::case(h, workload, case);
                if !all_settled(h, &node) {
                    continue;
                }
                let key = format!("{name} {}", json::to_string(h, &node));
                if self.seen.insert(key) {
                    out.push(Final { name: name.clone(), case: case.clone() });
                }
            }
        }
        out
    }

    /// Number of anomalies reported.
    pub fn count(&self) -> usize {
        self.seen.len()
    }
}

/// Whether a case is an anomaly of the history (not a limit of a check).
fn reportable(case: &Case) -> bool {
    !matches!(
        case,
        Case::EmptyTransactionGraph
            | Case::CycleSearchTimeout { .. }
            | Case::ExactCheckUnknown { .. }
            | Case::CycleExists { .. }
    )
}

/// Whether every op the case names has completed `:ok` or `:fail`.
fn all_settled(h: &History, node: &Node) -> bool {
    let mut ok = true;
    walk_ops(node, &mut |id| ok &= settled(h, id));
    ok
}

fn settled(h: &History, id: OpId) -> bool {
    let op = h.op(id);
    let done = match op.op_type {
        OpType::Invoke if op.pair == NONE => return false,
        OpType::Invoke => h.op(op.pair).op_type,
        t => t,
    };
    matches!(done, OpType::Ok | OpType::Fail)
}

fn walk_ops(n: &Node, f: &mut impl FnMut(OpId)) {
    match n {
        Node::Op(id) => f(*id),
        Node::Vector(v) | Node::List(v) | Node::Set(v) => v.iter().for_each(|x| walk_ops(x, f)),
        Node::Map(m) => m.iter().for_each(|(k, v)| {
            walk_ops(k, f);
            walk_ops(v, f);
        }),
        Node::Tagged(_, x) => walk_ops(x, f),
        _ => {}
    }
}
