//! Elle's result map as a value tree ([`Node`]): the verdict, every
//! anomaly case as Elle writes it (cycles with their steps, refutations of
//! the exact check, weak-level violations), the model boundary, and the
//! levels of the ladder.

use super::tree::{mop, opt_val, val, vals, value, Node};
use crate::anomaly::{Case, Cycle, Expected, MopRef, ReadValue, Refutation, Step, Workload, WriteOrder};
use crate::history::{History, OpId};
use crate::outcome::{LevelRow, ModelStatus, Outcome, Validity};

fn kw(s: &str) -> Node {
    Node::Keyword(s.to_string())
}

fn mop_of(h: &History, r: MopRef) -> Node {
    let o = h.op(r.op);
    mop(h, &h.mops_of(o)[r.mop as usize])
}

/// The predicate read that is Elle's micro-op `i` of `op`, as Elle prints it.
pub fn pred_read(h: &History, op: OpId, i: u32) -> Node {
    let o = h.op(op);
    match h.elle_mops(o).nth(i as usize) {
        Some((at, _)) => super::tree::mop_at(h, h.mops_of(o), at),
        None => Node::Nil,
    }
}

/// A cycle step from `a` to `b` as Elle's step map.
pub fn step(h: &History, w: Workload, s: &Step, a: OpId, b: OpId) -> Node {
    let mut m = vec![(kw("type"), kw(s.type_name()))];
    // Elle's closed-predicate explainers print -1 for a micro-op not found.
    let missing = if w == Workload::ClosedPredicate { Node::Int(-1) } else { Node::Nil };
    let index = |i: &Option<u32>| i.map(|i| Node::Int(i as i64)).unwrap_or_else(|| missing.clone());
    let idx = |m: &mut Vec<(Node, Node)>, a: &Option<u32>, b: &Option<u32>| {
        m.push((kw("a-mop-index"), index(a)));
        m.push((kw("b-mop-index"), index(b)));
    };
    match s {
        Step::Ww { key, value: v1, value2, a_mop, b_mop } => {
            m.push((kw("key"), value(h.key(*key))));
            m.push((kw("value"), opt_val(h, *v1)));
            m.push((kw("value'"), opt_val(h, *value2)));
            idx(&mut m, a_mop, b_mop);
        }
        Step::Wr { key, value: v, a_mop, b_mop } => {
            m.push((kw("key"), value(h.key(*key))));
            m.push((kw("value"), opt_val(h, *v)));
            idx(&mut m, a_mop, b_mop);
        }
        Step::Rw { key, value: v1, value2, a_mop, b_mop } => {
            m.push((kw("key"), value(h.key(*key))));
            let v = match (v1, w) {
                (None, Workload::ListAppend) => kw("elle.list-append/init"),
                (v, _) => opt_val(h, *v),
            };
            m.push((kw("value"), v));
            m.push((kw("value'"), opt_val(h, *value2)));
            idx(&mut m, a_mop, b_mop);
        }
        Step::Wrp { key, value: v, a_mop, b_mop, .. } => {
            m.push((kw("key"), value(h.key(*key))));
            m.push((kw("value"), val(h, *v)));
            m.push((kw("predicate-read"), pred_read(h, b, *b_mop)));
            idx(&mut m, a_mop, &Some(*b_mop));
        }
        Step::Rwp { key, value: v, value2, a_mop, b_mop, .. } => {
            m.push((kw("key"), value(h.key(*key))));
            m.push((kw("value"), val(h, *v)));
            m.push((kw("value'"), val(h, *value2)));
            m.push((kw("predicate?"), Node::Bool(true)));
            m.push((kw("predicate-read"), pred_read(h, a, *a_mop)));
            idx(&mut m, &Some(*a_mop), b_mop);
        }
        Step::Process { process } => m.push((kw("process"), Node::Int(*process))),
        Step::Realtime { a_completion, b_invocation } => {
            m.push((kw("a'"), Node::Op(*a_completion)));
            m.push((kw("b"), Node::Op(*b_invocation)));
        }
    }
    Node::Map(m)
}

/// A cycle as Elle's `{:cycle [...] :steps [...] :type ...}`.
pub fn cycle(h: &History, w: Workload, c: &Cycle) -> Node {
    let mut ops: Vec<Node> = c.ops.iter().map(|&o| Node::Op(o)).collect();
    if let Some(&first) = c.ops.first() {
        ops.push(Node::Op(first));
    }
    Node::Map(vec![
        (kw("cycle"), Node::Vector(ops)),
        (
            kw("steps"),
            Node::Vector(
                c.steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| step(h, w, s, c.ops[i], c.ops[(i + 1) % c.ops.len()]))
                    .collect(),
            ),
        ),
        (kw("type"), kw(&c.anomaly)),
    ])
}

fn read_value(h: &History, v: &ReadValue) -> Node {
    match v {
        ReadValue::Nil => Node::Nil,
        ReadValue::Int(i) => val(h, *i),
        ReadValue::List(xs) => vals(h, xs),
    }
}

/// One anomaly case.
pub fn case(h: &History, w: Workload, c: &Case) -> Node {
    match c {
        Case::Cycle(cy) => cycle(h, w, cy),
        Case::BadRead { mop, writer, element } => {
            let mut m =
                vec![(kw("op"), Node::Op(mop.op)), (kw("mop"), mop_of(h, *mop)), (kw("writer"), Node::Op(*writer))];
            if let Some(e) = element {
                m.push((kw("element"), val(h, *e)));
            }
            Node::Map(m)
        }
        Case::Internal { mop, expected } => {
            let e = match expected {
                Expected::List { unknown_prefix, elems } => {
                    let mut v = Vec::new();
                    if *unknown_prefix {
                        v.push(Node::Symbol("...".into()));
                    }
                    v.extend(elems.iter().map(|&x| val(h, x)));
                    Node::Vector(v)
                }
                Expected::Register(v) => opt_val(h, *v),
            };
            Node::Map(vec![(kw("op"), Node::Op(mop.op)), (kw("mop"), mop_of(h, *mop)), (kw("expected"), e)])
        }
        Case::FutureRead { mop, element } => Node::Map(vec![
            (kw("op"), Node::Op(mop.op)),
            (kw("mop"), mop_of(h, *mop)),
            (kw("element"), val(h, *element)),
        ]),
        Case::DirtyUpdate { key, values, txns } => Node::Map(vec![
            (kw("key"), value(h.key(*key))),
            (kw("values"), vals(h, values)),
            (kw("txns"), Node::Vector(vec![Node::Op(txns[0]), Node::Symbol("...".into()), Node::Op(txns[1])])),
        ]),
        Case::DuplicateElements { mop, duplicates } => Node::Map(vec![
            (kw("op"), Node::Op(mop.op)),
            (kw("mop"), mop_of(h, *mop)),
            (kw("duplicates"), Node::Map(duplicates.iter().map(|&(e, c)| (val(h, e), Node::Int(c as i64))).collect())),
        ]),
        Case::IncompatibleOrder { key, values } => Node::Map(vec![
            (kw("key"), value(h.key(*key))),
            (kw("values"), Node::Vector(values.iter().map(|v| vals(h, v)).collect())),
        ]),
        Case::LostUpdate { key, value: v, txns } => Node::Map(vec![
            (kw("key"), value(h.key(*key))),
            (kw("value"), read_value(h, v)),
            (kw("txns"), Node::Vector(txns.iter().map(|&t| Node::Op(t)).collect())),
        ]),
        Case::CollectedPrefix { op, key, read, prefix, pending, line } => Node::Map(vec![
            (kw("op"), Node::Op(*op)),
            (kw("key"), value(h.key(*key))),
            (kw("read"), vals(h, read)),
            (kw("collected-prefix"), vals(h, prefix)),
            (kw("collected-pending"), vals(h, pending)),
            (kw("collected-by-line"), Node::Int(*line as i64)),
        ]),
        Case::CollectedWrite { op, key, value: v, frontier, line, intermediate, realtime } => Node::Map(vec![
            (kw("op"), Node::Op(*op)),
            (kw("key"), value(h.key(*key))),
            (kw("value"), opt_val(h, *v)),
            (kw("collected-last-version"), val(h, *frontier)),
            (kw("collected-by-line"), Node::Int(*line as i64)),
            (kw("intermediate"), Node::Bool(*intermediate)),
            (kw("ordered-by"), kw(if *realtime { "realtime" } else { "fences" })),
        ]),
        Case::CollectedAborted { op, key, value: v } => Node::Map(vec![
            (kw("op"), Node::Op(*op)),
            (kw("key"), value(h.key(*key))),
            (kw("value"), val(h, *v)),
            (kw("writer"), kw("collected-failed")),
        ]),
        Case::GarbageRead { mop, key, value: v } => Node::Map(vec![
            (kw("op"), Node::Op(mop.op)),
            (kw("mop"), mop_of(h, *mop)),
            (kw("key"), value(h.key(*key))),
            (kw("value"), val(h, *v)),
        ]),
        Case::PredicateReadMiss { mop, key, versions } => Node::Map(vec![
            (kw("op"), Node::Op(mop.op)),
            (kw("mop"), super::tree::mop_at(h, h.mops_of(h.op(mop.op)), mop.mop as usize)),
            (kw("key"), value(h.key(*key))),
            (kw("versions"), vals(h, versions)),
        ]),
        Case::CyclicVersions { key, scc, sources } => Node::Map(vec![
            (kw("key"), value(h.key(*key))),
            (kw("scc"), Node::Set(scc.iter().map(|v| opt_val(h, *v)).collect())),
            (kw("sources"), Node::Vector(sources.iter().map(|s| kw(s)).collect())),
        ]),
        Case::CycleExists { not, subgraph, scc_size, scc } => Node::Map(vec![
            (kw("not"), kw(not)),
            (kw("subgraph"), Node::Symbol((*subgraph).to_string())),
            (kw("scc-size"), Node::Int(*scc_size as i64)),
            (kw("scc"), Node::Set(scc.iter().map(|&i| Node::Int(i)).collect())),
        ]),
        Case::CycleSearchTimeout { spec_type, does_not_contain, scc_size } => Node::Map(vec![
            (kw("type"), kw("cycle-search-timeout")),
            (kw("anomaly-spec-type"), kw(spec_type)),
            (kw("does-not-contain"), Node::Vector(does_not_contain.iter().map(|t| kw(t)).collect())),
            (kw("scc-size"), Node::Int(*scc_size as i64)),
        ]),
        Case::EmptyTransactionGraph => Node::Bool(true),
        Case::Refuted(r) => refutation(h, w, r),
        Case::Weak(v) => crate::reports::weak::node(h, v),
        Case::ExactCheckUnknown { model, detail } => Node::Map(vec![
            (kw("type"), kw("exact-check-unknown")),
            (kw("model"), kw(model)),
            (kw("detail"), Node::Str(detail.clone())),
        ]),
    }
}

/// A write order as `{:key k, :first {:index i, :value v}, :second {...}}`.
fn write_order(h: &History, o: &WriteOrder) -> Node {
    let side =
        |(op, v): (OpId, i64)| Node::Map(vec![(kw("index"), Node::Int(h.op(op).index)), (kw("value"), val(h, v))]);
    Node::Map(vec![(kw("key"), value(h.key(o.key))), (kw("first"), side(o.first)), (kw("second"), side(o.second))])
}

/// A refutation by the exact check: the first case's cycle in Elle's shape
/// (`:cycle`, `:steps`, `:type`), then every case with the write orders it
/// assumes, and the justified write orders the cases rely on.
pub fn refutation(h: &History, w: Workload, r: &Refutation) -> Node {
    let mut m = match r.branches.first().map(|b| cycle(h, w, &b.cycle)) {
        Some(Node::Map(m)) => m,
        _ => Vec::new(),
    };
    m.push((kw("model"), kw(&r.model)));
    let cases = r
        .branches
        .iter()
        .map(|b| {
            let mut c = vec![(kw("assuming"), Node::Vector(b.assume.iter().map(|o| write_order(h, o)).collect()))];
            if !b.reads.is_empty() {
                let idx = |o: OpId| Node::Int(h.op(o).index);
                let reads = b.reads.iter().map(|rf| {
                    Node::Map(vec![
                        (kw("key"), value(h.key(rf.key))),
                        (kw("value"), val(h, rf.value)),
                        (kw("reader"), idx(rf.reader)),
                        (kw("writer"), idx(rf.writer)),
                        (kw("candidates"), Node::Vector(rf.candidates.iter().map(|&o| idx(o)).collect())),
                    ])
                });
                c.push((kw("reads-from"), Node::Vector(reads.collect())));
            }
            if let Node::Map(cy) = cycle(h, w, &b.cycle) {
                c.extend(cy);
            }
            Node::Map(c)
        })
        .collect();
    m.push((kw("cases"), Node::Vector(cases)));
    let derived = r
        .derived
        .iter()
        .map(|d| Node::Map(vec![(kw("order"), write_order(h, &d.order)), (kw("because"), cycle(h, w, &d.because))]))
        .collect();
    m.push((kw("derived-orders"), Node::Vector(derived)));
    m.push((kw("partial?"), Node::Bool(r.partial)));
    Node::Map(m)
}

/// Elle's result map for an outcome, every case of every anomaly.
pub fn result_map(h: &History, o: &Outcome) -> Node {
    result_map_limited(h, o, None)
}

/// Elle's result map with at most `limit` cases per anomaly type (`None`:
/// all). When a type is cut, the map gains `:truncated {type {:shown n,
/// :total m}}` (a key Elle does not write) so the totals are never lost.
pub fn result_map_limited(h: &History, o: &Outcome, limit: Option<usize>) -> Node {
    let limit = limit.unwrap_or(usize::MAX);
    let valid = match o.valid {
        Validity::Valid => Node::Bool(true),
        Validity::Invalid => Node::Bool(false),
        Validity::Unknown => kw("unknown"),
    };
    let mut m = vec![(kw("valid?"), valid)];
    if let Some(p) = h.store.as_ref().and_then(|s| s.partial.as_ref()) {
        // A key Elle does not write: the verdict is on part of the history.
        m.push((
            kw("history-recovered-in-part"),
            Node::Map(vec![
                (kw("ops"), Node::Int(p.ops as i64)),
                (kw("stopped-at-byte"), Node::Int(p.offset as i64)),
                (kw("reason"), Node::Str(p.reason.clone())),
            ]),
        ));
    }
    if h.indeterminate_txns > 0 {
        m.push((kw("info-txn-count"), Node::Int(h.indeterminate_txns as i64)));
    }
    if let Some(e) = &o.error {
        m.push((kw("error"), Node::Str(e.clone())));
        return Node::Map(m);
    }
    if o.valid == Validity::Valid {
        push_levels(h, o, &mut m);
        return Node::Map(m);
    }
    m.push((kw("anomaly-types"), Node::List(o.anomaly_types.iter().map(|t| kw(t)).collect())));
    let anomalies = o
        .anomalies
        .iter()
        .map(|(name, cases)| {
            let v = if cases.len() == 1 && cases[0] == Case::EmptyTransactionGraph {
                Node::Bool(true)
            } else {
                Node::Vector(cases.iter().take(limit).map(|c| case(h, o.workload, c)).collect())
            };
            (kw(name), v)
        })
        .collect();
    m.push((kw("anomalies"), Node::Map(anomalies)));
    let truncated: Vec<(Node, Node)> = o
        .anomalies
        .iter()
        .filter(|(_, cases)| cases.len() > limit)
        .map(|(name, cases)| {
            let counts = vec![(kw("shown"), Node::Int(limit as i64)), (kw("total"), Node::Int(cases.len() as i64))];
            (kw(name), Node::Map(counts))
        })
        .collect();
    if !truncated.is_empty() {
        m.push((kw("truncated"), Node::Map(truncated)));
    }
    m.push((kw("not"), Node::Set(o.not.iter().map(|t| kw(t)).collect())));
    m.push((kw("also-not"), Node::Set(o.also_not.iter().map(|t| kw(t)).collect())));
    push_levels(h, o, &mut m);
    Node::Map(m)
}

/// Adds `:levels` (a key Elle does not write): every level of the ladder,
/// weakest first, as `{:level :read-atomic, :valid? true|false|:unknown|
/// :not-checked, :decided-by "weak", :anomaly :fractured-read, :witness …,
/// :why "…"}`; `:witness` only where `:anomalies` lacks the anomaly (a
/// finding of the ladder's own checkers). Only when the ladder ran (the
/// default check, `--model all`): a check of named models keeps Elle's map.
fn push_levels(h: &History, o: &Outcome, m: &mut Vec<(Node, Node)>) {
    if o.ladder && !o.levels.is_empty() {
        m.push((kw("levels"), Node::Vector(o.levels.iter().map(|r| level_row(h, o, r)).collect())));
    }
}

fn level_row(h: &History, o: &Outcome, r: &LevelRow) -> Node {
    let valid = match &r.status {
        ModelStatus::Holds => Node::Bool(true),
        ModelStatus::Violated(_) => Node::Bool(false),
        ModelStatus::Unknown => kw("unknown"),
        ModelStatus::NotChecked => kw("not-checked"),
    };
    let mut m = vec![(kw("level"), kw(r.level.model)), (kw("valid?"), valid)];
    let by = r.decided_by.describe();
    if !by.is_empty() {
        m.push((kw("decided-by"), Node::Str(by)));
    }
    if let ModelStatus::Violated(a) = &r.status {
        m.push((kw("anomaly"), kw(a)));
    }
    // The witness, unless the map's :anomalies already holds it.
    match (&r.status, &r.witness) {
        (ModelStatus::Violated(a), Some(w)) if !o.anomalies.contains_key(a) => {
            m.push((kw("witness"), case(h, o.workload, w)))
        }
        _ => {}
    }
    if !r.reason.is_empty() && matches!(r.status, ModelStatus::Unknown | ModelStatus::NotChecked) {
        m.push((kw("why"), Node::Str(r.reason.clone())));
    }
    Node::Map(m)
}
