//! Explanations in Elle's words: why each edge of a cycle holds, and the
//! whole cycle as a proof by contradiction.
//!
//! ```text
//! Let:
//!   T1 = {:index 0, :time 5, :type :ok, :process 0, :f :txn, :value [...]}
//!   T2 = ...
//!
//! Then:
//!   - T1 < T2, because T1 wrote :x = 1, which was read by T2.
//!   - However, T2 < T1, because T2 wrote :y = 1, which was read by T1: a contradiction!
//! ```

use super::edn;
use super::tree;
use crate::anomaly::{Cycle, ReadFrom, Refutation, Step, Workload, WriteOrder};
use crate::history::{History, OpId};

/// Why `a` precedes `b`, as Elle's explainers phrase it.
pub fn step_sentence(h: &History, w: Workload, s: &Step, ops: (OpId, OpId), a: &str, b: &str) -> String {
    let v = |x: &Option<i64>| x.map(|i| h.value_text(i)).unwrap_or_else(|| "nil".into());
    if w == Workload::ClosedPredicate {
        if let Some(why) = predicate_sentence(h, s, ops, a, b) {
            return why;
        }
    }
    match (s, w) {
        (Step::Ww { key, value, value2, .. }, Workload::ListAppend) => {
            format!("{b} appended {} after {a} appended {} to {}", v(value2), v(value), h.key(*key))
        }
        (Step::Wr { key, value, .. }, Workload::ListAppend) => {
            format!("{b} observed {a}'s append of {} to key {}", v(value), h.key(*key))
        }
        (Step::Rw { key, value: None, value2, .. }, Workload::ListAppend) => format!(
            "{a} observed the initial (nil) state of {}, which {b} created by appending {}",
            h.key(*key),
            v(value2)
        ),
        (Step::Rw { key, value2, .. }, Workload::ListAppend) => {
            format!("{a} did not observe {b}'s append of {} to {}", v(value2), h.key(*key))
        }
        (Step::Ww { key, value, value2, .. }, Workload::RwRegister) => format!(
            "{a} set key {} to {}, and {b} set it to {}, which came later in the version order",
            h.key(*key),
            v(value),
            v(value2)
        ),
        (Step::Rw { key, value, value2, .. }, Workload::RwRegister) => format!(
            "{a} read key {} = {}, and {b} set it to {}, which came later in the version order",
            h.key(*key),
            v(value),
            v(value2)
        ),
        (Step::Wr { key, value, .. }, Workload::RwRegister | Workload::ClosedPredicate) => {
            format!("{a} wrote {} = {}, which was read by {b}", h.key(*key), v(value))
        }
        (Step::Ww { .. } | Step::Rw { .. } | Step::Wrp { .. } | Step::Rwp { .. }, _) => {
            format!("{a} precedes {b} by a {} dependency", s.type_name())
        }
        (Step::Process { process }, _) => format!("process {process} executed {a} before {b}"),
        (Step::Realtime { a_completion, b_invocation }, _) => {
            let (ac, bi) = (h.op(*a_completion), h.op(*b_invocation));
            let gap = if ac.time >= 0 && bi.time >= 0 && bi.time > ac.time {
                format!("{:.3} seconds", (bi.time - ac.time) as f64 / 1e9)
            } else {
                "just".to_string()
            };
            format!("{a} completed at index {}, {gap} before the invocation of {b}, at index {}", ac.index, bi.index)
        }
    }
}

/// Why `a` precedes `b` in Elle's closed-predicate words (its ww, rw, wrp
/// and rwp explainers); `None` for the steps phrased as elsewhere.
fn predicate_sentence(h: &History, s: &Step, ops: (OpId, OpId), a: &str, b: &str) -> Option<String> {
    let v = |x: i64| h.value_text(x);
    let order = |vs: &[i64]| format!("[{}]", vs.iter().map(|&x| v(x)).collect::<Vec<_>>().join(" "));
    let pred = |op: OpId, i: u32| edn::to_string(h, &super::result_map::pred_read(h, op, i));
    Some(match s {
        Step::Ww { key, value: Some(v1), value2: Some(v2), .. } => {
            format!("{a} set key {} to {}, which {b} overwrote with {}", h.key(*key), v(*v1), v(*v2))
        }
        Step::Rw { key, value: Some(v1), value2: Some(v2), .. } => {
            format!("{a} read key {} = {}, which was overwritten by {b}'s write of {}", h.key(*key), v(*v1), v(*v2))
        }
        Step::Wrp { key, value, b_mop, versions, .. } => format!(
            "{a} set key {k} to {}, which was in the version set of predicate read {}. Note that the version \
             order of key {k} was {}",
            v(*value),
            pred(ops.1, *b_mop),
            order(versions),
            k = h.key(*key)
        ),
        Step::Rwp { key, value, value2, a_mop, versions, .. } => format!(
            "{a} performed a predicate read {} of key {k} and selected version {}, which was overwritten by \
             {b}'s write of {}, which also changed whether the predicate would have matched. Note that key \
             {k}'s version order was {}",
            pred(ops.0, *a_mop),
            v(*value),
            v(*value2),
            order(versions),
            k = h.key(*key)
        ),
        _ => return None,
    })
}

/// An op as Clojure prints it.
pub fn op_text(h: &History, id: OpId) -> String {
    edn::to_string(h, &tree::op(h, id))
}

/// How explanations name the transactions of a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Naming {
    /// Elle's names: `T1`, `T2`, ... in the order of the cycle, so the same
    /// transaction may be `T1` in one cycle and `T3` in the next (what Elle
    /// and elle-cli write).
    #[default]
    Elle,
    /// `T<index>`, the `:index` of the transaction's completion: the name
    /// the table, the JSON/EDN result (`:index`) and the plots use, so a
    /// transaction has one name everywhere.
    Index,
}

/// The name of `op` at position `pos` (0-based) of a cycle.
pub fn txn_name(h: &History, naming: Naming, op: OpId, pos: usize) -> String {
    match naming {
        Naming::Elle => format!("T{}", pos + 1),
        Naming::Index => format!("T{}", h.op(op).index),
    }
}

/// The full explanation of a cycle in Elle's words, with Elle's names
/// (see [`Naming::Elle`]).
pub fn explain_cycle(h: &History, w: Workload, c: &Cycle) -> String {
    explain_cycle_named(h, w, c, Naming::Elle)
}

/// The full explanation of a cycle, its transactions named by `naming`.
pub fn explain_cycle_named(h: &History, w: Workload, c: &Cycle, naming: Naming) -> String {
    explain_cycle_values(h, w, c, naming, Values::Full)
}

/// How explanations print the transactions' values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Values {
    /// Whole, as Elle prints them.
    #[default]
    Full,
    /// Long lists and long transactions shortened around what each step is
    /// about (see [`super::elide`]); short ones as Elle prints them.
    Short,
}

/// The explanation of a cycle, its transactions named by `naming`, their
/// values printed as `values` says.
pub fn explain_cycle_values(h: &History, w: Workload, c: &Cycle, naming: Naming, values: Values) -> String {
    let names: Vec<String> = c.ops.iter().enumerate().map(|(i, &op)| txn_name(h, naming, op, i)).collect();
    let focus = super::elide::cycle_focus(c);
    let mut s = String::from("Let:\n");
    for (i, &op) in c.ops.iter().enumerate() {
        let text = match values {
            Values::Full => op_text(h, op),
            Values::Short => super::elide::op_text(h, op, &focus[i]),
        };
        s.push_str(&format!("  {} = {}\n", names[i], text));
    }
    s.push_str("\nThen:\n");
    let n = c.steps.len();
    for (i, st) in c.steps.iter().enumerate() {
        let (a, b) = (&names[i], &names[(i + 1) % n]);
        let why = step_sentence(h, w, st, (c.ops[i], c.ops[(i + 1) % n]), a, b);
        if i + 1 == n {
            s.push_str(&format!("  - However, {a} < {b}, because {why}: a contradiction!"));
        } else {
            s.push_str(&format!("  - {a} < {b}, because {why}.\n"));
        }
    }
    s
}

/// The contents of Elle's `<type>.txt`: each cycle headed `"<type> #<i>"`,
/// separated by two blank lines.
pub fn cycles_file(h: &History, w: Workload, anomaly: &str, cycles: &[&Cycle]) -> String {
    cycles_file_named(h, w, anomaly, cycles, Naming::Elle)
}

/// [`cycles_file`] with transactions named by `naming`.
pub fn cycles_file_named(h: &History, w: Workload, anomaly: &str, cycles: &[&Cycle], naming: Naming) -> String {
    cycles_file_values(h, w, anomaly, cycles, naming, Values::Full)
}

/// [`cycles_file_named`] with values printed as `values` says.
pub fn cycles_file_values(
    h: &History,
    w: Workload,
    anomaly: &str,
    cycles: &[&Cycle],
    naming: Naming,
    values: Values,
) -> String {
    cycles
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{anomaly} #{i}\n{}", explain_cycle_values(h, w, c, naming, values)))
        .collect::<Vec<_>>()
        .join("\n\n\n")
}

fn order_text(h: &History, o: &WriteOrder) -> String {
    format!(
        "the write of {} = {} (index {}) precedes the write of {} = {} (index {})",
        h.key(o.key),
        h.value_text(o.first.1),
        h.op(o.first.0).index,
        h.key(o.key),
        h.value_text(o.second.1),
        h.op(o.second.0).index
    )
}

fn read_from_text(h: &History, rf: &ReadFrom) -> String {
    let idx = |o: OpId| h.op(o).index.to_string();
    format!(
        "the read of {} = {} (index {}) observed the write of index {} (written by indexes {})",
        h.key(rf.key),
        h.value_text(rf.value),
        h.op(rf.reader).index,
        h.op(rf.writer).index,
        rf.candidates.iter().map(|&o| idx(o)).collect::<Vec<_>>().join(", ")
    )
}

/// The explanation of an exact-check refutation: one proof by contradiction
/// per case of the open write orders, then the reasons for the write orders
/// the cases rely on.
pub fn explain_refutation(h: &History, r: &Refutation) -> String {
    explain_refutation_named(h, r, Naming::Elle)
}

/// [`explain_refutation`] with transactions named by `naming`.
pub fn explain_refutation_named(h: &History, r: &Refutation, naming: Naming) -> String {
    let w = Workload::RwRegister;
    let n = r.branches.len();
    let mut s = if n == 1 && r.branches[0].assume.is_empty() && r.branches[0].reads.is_empty() {
        format!("No order of the writes explains this history under {}:\n\n", r.model)
    } else {
        format!(
            "No order of the writes explains this history under {}: whichever way the write orders below go, \
             a cycle closes ({n} case{}{}).\n\n",
            r.model,
            if n == 1 { "" } else { "s" },
            if r.partial { ", a sample of those the solver refuted" } else { "" }
        )
    };
    for (i, b) in r.branches.iter().enumerate() {
        if !b.assume.is_empty() || !b.reads.is_empty() {
            let assumed: Vec<String> = b
                .assume
                .iter()
                .map(|o| order_text(h, o))
                .chain(b.reads.iter().map(|rf| read_from_text(h, rf)))
                .collect();
            s.push_str(&format!("Case {} of {n}: suppose {}.\n", i + 1, assumed.join(", and ")));
        }
        s.push_str(&explain_cycle_named(h, w, &b.cycle, naming));
        s.push_str("\n\n");
    }
    if !r.derived.is_empty() {
        s.push_str("These write orders are forced, because the opposite order would close a cycle:\n\n");
        for d in &r.derived {
            s.push_str(&format!("{}, since otherwise:\n", order_text(h, &d.order)));
            s.push_str(&explain_cycle_named(h, w, &d.because, naming));
            s.push_str("\n\n");
        }
    }
    s.trim_end().to_string()
}
