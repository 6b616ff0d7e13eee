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
//! verdict). The checks read an open transaction's writes as not (yet)
//! there, so a claim of absence (a read of a value nobody wrote, a read no
//! writer explains) can still be undone by its completion: a case that
//! names a transaction reading a value an open transaction writes waits too.
//!
//! Cases that are not anomalies of the history but limits of a check (a
//! cycle search that ran out of time, an exact check left undecided, the
//! proof that some cycle exists without its witness) are never reported
//! online: the final verdict carries them.

use rustc_hash::FxHashSet;

use crate::anomaly::{Case, Workload};
use crate::history::{History, KeyId, MopFn, MopValue, OpId, OpType, NONE};
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
    /// The anomaly types reported.
    pub types: std::collections::BTreeSet<String>,
}

impl Reported {
    /// The final cases of `anomalies` not reported before, marking them
    /// reported.
    pub fn take_new(&mut self, h: &History, workload: Workload, anomalies: &crate::anomaly::Anomalies) -> Vec<Final> {
        let mut out = Vec::new();
        let open = open_writes(h);
        for (name, cases) in anomalies {
            for case in cases {
                if !reportable(case) {
                    continue;
                }
                let node = result_map::case(h, workload, case);
                if !all_settled(h, &node, &open) {
                    continue;
                }
                let key = match case {
                    // Its collected prefix grows from round to round: the
                    // read and the key (by name: a sealed key's id changes,
                    // see `collect`) identify it.
                    Case::CollectedPrefix { op, key, .. }
                    | Case::CollectedWrite { op, key, .. }
                    | Case::CollectedAborted { op, key, .. } => {
                        let named = h.keys.get(key.0 as usize).map_or_else(|| key.0.to_string(), ToString::to_string);
                        format!("{name} {} {named}", h.op(*op).index)
                    }
                    _ => format!("{name} {}", json::to_string(h, &node)),
                };
                if self.seen.insert(key) {
                    self.types.insert(name.clone());
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

/// Whether every op the case names has completed `:ok` or `:fail` and
/// reads no value an open transaction writes.
fn all_settled(h: &History, node: &Node, open: &FxHashSet<(KeyId, i64)>) -> bool {
    let mut ok = true;
    walk_ops(node, &mut |id| ok &= settled(h, id) && !reads_open(h, id, open));
    ok
}

/// The (key, value) writes and appends of transactions still open.
fn open_writes(h: &History) -> FxHashSet<(KeyId, i64)> {
    h.ops
        .iter()
        .filter(|o| o.is_invoke() && o.pair == NONE)
        .flat_map(|o| h.mops_of(o))
        .filter_map(|m| match (m.f, m.value) {
            (MopFn::Write | MopFn::Append, MopValue::Int(v)) => Some((m.key, v)),
            _ => None,
        })
        .collect()
}

/// Whether the op (or its completion) reads a value in `open`.
fn reads_open(h: &History, id: OpId, open: &FxHashSet<(KeyId, i64)>) -> bool {
    if open.is_empty() {
        return false;
    }
    let op = h.op(id);
    let done = if op.is_invoke() && op.pair != NONE { h.op(op.pair) } else { op };
    h.mops_of(done).iter().filter(|m| m.f == MopFn::Read).any(|m| match m.value {
        MopValue::Int(v) => open.contains(&(m.key, v)),
        MopValue::List { .. } => h.list(m.value).iter().any(|&e| open.contains(&(m.key, e))),
        MopValue::Nil | MopValue::Entries(_) => false,
    })
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

/// Calls `f` on every op a result-map node names.
pub(super) fn walk_ops(n: &Node, f: &mut impl FnMut(OpId)) {
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
