//! Every anomaly explained in words for `--verbose` and the HTML page:
//! cycles and refutations as Elle explains them ([`super::text`]), the
//! weak levels' violations as [`super::weak`] does, and the anomalies that
//! are not cycles (aborted and intermediate reads, lost updates, garbage
//! reads, …) as a sentence followed by the transactions involved, values
//! shortened as [`super::elide`] does unless asked whole.

use super::elide::{self, Focus};
use super::text::{self, Naming, Values};
use crate::anomaly::{Case, ReadValue, Workload};
use crate::history::{History, OpId};

/// The explanation of one case.
pub fn explain_case(h: &History, w: Workload, c: &Case, naming: Naming, values: Values) -> String {
    match c {
        Case::Cycle(cy) => text::explain_cycle_values(h, w, cy, naming, values),
        Case::Refuted(r) => text::explain_refutation_named(h, r, naming),
        Case::Weak(v) => super::weak::explain(h, v),
        other => {
            let mut s = sentence(h, other);
            let ops = case_ops(h, other);
            if !ops.is_empty() {
                s.push_str("\n\nLet:");
                for (op, focus) in ops {
                    let t = match values {
                        Values::Full => text::op_text(h, op),
                        Values::Short => elide::op_text(h, op, &focus),
                    };
                    s.push_str(&format!("\n  T{} = {t}", h.op(op).index));
                }
            }
            s
        }
    }
}

/// What a case that is not a cycle says, in a sentence.
fn sentence(h: &History, c: &Case) -> String {
    let t = |op: OpId| format!("T{}", h.op(op).index);
    match c {
        Case::BadRead { mop, writer, element } => {
            let what = match h.op(*writer).op_type.name() {
                "fail" => "which failed (:fail), so nothing it wrote should be visible: an aborted read",
                "info" => "whose outcome is unknown (:info)",
                _ => "which wrote a later version of that key itself: an intermediate read",
            };
            let el = element.map(|e| format!("element {} of ", h.value_text(e))).unwrap_or_default();
            format!(
                "{} read {el}{}, written by {}, {what}.",
                t(mop.op),
                elide::mop_text(h, mop.op, mop.mop, &element.iter().copied().collect::<Vec<_>>()),
                t(*writer)
            )
        }
        Case::LostUpdate { key, value, txns } => {
            let version = match value {
                ReadValue::Nil => "nil (its initial state)".to_string(),
                ReadValue::Int(v) => h.value_text(*v),
                ReadValue::List(xs) => elide::list_marked(h, xs, &[]),
            };
            let names: Vec<String> = txns.iter().map(|&o| t(o)).collect();
            format!(
                "{} all read key {} at version {version} and each wrote it: only one of them can come \
                 right after that version, so the others' updates are lost (a lost update).",
                names.join(", "),
                h.key(*key)
            )
        }
        other => format!("{}.", super::witness::short_witness(h, other)),
    }
}

/// The transactions a case that is not a cycle involves, each with what
/// the case is about in it.
pub(crate) fn case_ops(h: &History, c: &Case) -> Vec<(OpId, Focus)> {
    let on_key = |op: OpId, key: crate::history::KeyId| -> Focus {
        let mops = h.mops_of(h.op(op));
        (0..mops.len() as u32).filter(|&i| mops[i as usize].key == key).map(|i| (i, None)).collect()
    };
    match c {
        Case::BadRead { mop, writer, element } => {
            vec![(mop.op, vec![(mop.mop, *element)]), (*writer, Vec::new())]
        }
        Case::Internal { mop, .. } | Case::FutureRead { mop, .. } | Case::DuplicateElements { mop, .. } => {
            vec![(mop.op, vec![(mop.mop, None)])]
        }
        Case::GarbageRead { mop, value, .. } => vec![(mop.op, vec![(mop.mop, Some(*value))])],
        Case::CollectedPrefix { op, key, .. }
        | Case::CollectedWrite { op, key, .. }
        | Case::CollectedAborted { op, key, .. } => {
            vec![(*op, on_key(*op, *key))]
        }
        Case::DirtyUpdate { txns, key, .. } => txns.iter().map(|&o| (o, on_key(o, *key))).collect(),
        Case::LostUpdate { txns, key, .. } => {
            txns.iter().take(elide::MOPS_WHOLE).map(|&o| (o, on_key(o, *key))).collect()
        }
        _ => Vec::new(),
    }
}
