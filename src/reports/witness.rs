//! One-line witnesses: each anomaly case in a line, for the table's
//! example column, the levels' witnesses and the HTML page; long values
//! shortened as [`super::elide`] does.

use super::elide;
use crate::anomaly::Case;
use crate::history::History;

fn txn(h: &History, id: u32) -> String {
    format!("T{}", h.op(id).index)
}

/// A one-line witness for a case.
pub fn short_witness(h: &History, c: &Case) -> String {
    let key = |k| h.key(k).to_string();
    // Values as `[a, b]`, as `{:?}` prints a vector of integers.
    let vs = |xs: &[i64]| {
        let shown = xs.iter().take(elide::LIST_WHOLE).map(|&x| h.value_text(x)).collect::<Vec<_>>().join(", ");
        match xs.len().saturating_sub(elide::LIST_WHOLE) {
            0 => format!("[{shown}]"),
            more => format!("[{shown}, … {more} more]"),
        }
    };
    match c {
        Case::Cycle(cy) => {
            let mut s = String::new();
            for (i, st) in cy.steps.iter().enumerate() {
                s.push_str(&txn(h, cy.ops[i]));
                s.push_str(&format!(" -{}-> ", st.type_name()));
            }
            if let Some(&f) = cy.ops.first() {
                s.push_str(&txn(h, f));
            }
            s
        }
        Case::BadRead { mop, writer, element } => format!(
            "{} read {}{} written by {} ({})",
            txn(h, mop.op),
            element.map(|e| format!("element {} of ", h.value_text(e))).unwrap_or_default(),
            elide::mop_text(h, mop.op, mop.mop, &element.iter().copied().collect::<Vec<_>>()),
            txn(h, *writer),
            h.op(*writer).op_type.name()
        ),
        Case::Internal { mop, .. } => format!(
            "{} read {} inconsistently with its own writes",
            txn(h, mop.op),
            elide::mop_text(h, mop.op, mop.mop, &[])
        ),
        Case::FutureRead { mop, element } => {
            let appends = h.mops_of(h.op(mop.op)).iter().any(|m| m.f == crate::history::MopFn::Append);
            let (what, verb) = if appends { ("element", "appending") } else { ("value", "writing") };
            format!("{} read {what} {} before {verb} it", txn(h, mop.op), h.value_text(*element))
        }
        Case::DirtyUpdate { key: k, values, txns } => format!(
            "key {}: failed {} then committed {} (versions {})",
            key(*k),
            txn(h, txns[0]),
            txn(h, txns[1]),
            vs(values)
        ),
        Case::DuplicateElements { mop, duplicates } => {
            let mut d: Vec<String> = duplicates
                .iter()
                .take(elide::LIST_WHOLE)
                .map(|&(e, n)| format!("({}, {n})", h.value_text(e)))
                .collect();
            if duplicates.len() > d.len() {
                d.push(format!("… {} more", duplicates.len() - d.len()));
            }
            format!("{} read duplicates [{}]", txn(h, mop.op), d.join(", "))
        }
        Case::PredicateReadMiss { mop, key: k, versions } => format!(
            "{}'s predicate read {} did not return key {}, whose every version {} it matches",
            txn(h, mop.op),
            super::edn::to_string(h, &super::tree::mop_at(h, h.mops_of(h.op(mop.op)), mop.mop as usize)),
            key(*k),
            vs(versions)
        ),
        Case::IncompatibleOrder { key: k, values } => {
            // Shown around the first position where the two disagree.
            let at = values[0].iter().zip(&values[1]).take_while(|(a, b)| a == b).count();
            let (a, b) = (elide::list_marked(h, &values[0], &[at]), elide::list_marked(h, &values[1], &[at]));
            format!("key {}: {a} vs {b}", key(*k))
        }
        Case::LostUpdate { key: k, txns, .. } => format!(
            "key {}: {} all read the same version and wrote it",
            key(*k),
            txns.iter().map(|&t| txn(h, t)).collect::<Vec<_>>().join(", ")
        ),
        Case::CollectedPrefix { op, key: k, read, prefix, pending, line } => {
            let mut collected = elide::list_marked(h, prefix, &[]);
            if !pending.is_empty() {
                collected = format!("{collected} then {} in some order", elide::list_marked(h, pending, &[]));
            }
            format!(
                "{} read key {} = {}, but transactions that completed by line {line}, before it began, \
                 had made it begin {collected}",
                txn(h, *op),
                key(*k),
                elide::list_marked(h, read, &[])
            )
        }
        Case::CollectedWrite { op, key: k, value, frontier, line, intermediate, realtime } => {
            let read = value.map_or_else(|| "nil (the initial state)".to_string(), |v| h.value_text(v));
            let by = match realtime {
                true => "by realtime and reads-from",
                false => "by fence transactions",
            };
            let why = match intermediate {
                true => "a value its writer (collected) overwrote itself".to_string(),
                false => format!(
                    "a version collected transactions overwrote: their last write of it, {} on line {line}, \
                     precedes this transaction {by}",
                    h.value_text(*frontier)
                ),
            };
            format!("{} read key {} = {read}, {why}", txn(h, *op), key(*k))
        }
        Case::CollectedAborted { op, key: k, value } => format!(
            "{} read key {} = {}, a value only a failed transaction wrote (collected earlier: its \
             :fail completion is in the history)",
            txn(h, *op),
            key(*k),
            h.value_text(*value)
        ),
        Case::GarbageRead { mop, key: k, value } => {
            format!("{} read {} of key {} which nobody wrote", txn(h, mop.op), h.value_text(*value), key(*k))
        }
        Case::CyclicVersions { key: k, scc, sources } => {
            let mut shown: Vec<String> = scc
                .iter()
                .take(elide::LIST_WHOLE)
                .map(|v| v.map(|x| h.value_text(x)).unwrap_or_else(|| "nil".into()))
                .collect();
            if scc.len() > shown.len() {
                shown.push(format!("… {} more", scc.len() - shown.len()));
            }
            format!(
                "key {}: versions {:?} form a cycle once {} is assumed",
                key(*k),
                shown,
                sources.last().map(String::as_str).unwrap_or("?")
            )
        }
        Case::CycleExists { not, scc_size, .. } => {
            format!("a cycle among {scc_size} txns rules out {not}")
        }
        Case::CycleSearchTimeout { spec_type, scc_size, .. } => {
            format!("search for {spec_type} in an SCC of {scc_size} txns ran out of time")
        }
        Case::EmptyTransactionGraph => "no dependencies between transactions could be inferred".into(),
        Case::Refuted(r) => {
            let first = r.branches.first().map(|b| short_witness(h, &Case::Cycle(b.cycle.clone()))).unwrap_or_default();
            match r.branches.len() {
                1 => format!("{} refuted: {first}", r.model),
                n => format!("{} refuted in all {n} cases of the open write orders, e.g. {first}", r.model),
            }
        }
        Case::ExactCheckUnknown { model, detail } => format!("{model} undecided: {detail}"),
        Case::Weak(v) => crate::reports::weak::short(h, v),
    }
}
