//! A terminal summary: the verdict, one row per anomaly type with a short
//! witness, and the models ruled out.

use crate::anomaly::Case;
use crate::check::{Outcome, Validity};
use crate::history::History;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

fn txn(h: &History, id: u32) -> String {
    format!("T{}", h.op(id).index)
}

/// A one-line witness for a case.
pub fn short_witness(h: &History, c: &Case) -> String {
    let key = |k| h.key(k).to_string();
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
            element.map(|e| format!("element {e} of ")).unwrap_or_default(),
            crate::reports::edn::to_string(&crate::reports::tree::mop(h, &h.mops_of(h.op(mop.op))[mop.mop as usize])),
            txn(h, *writer),
            h.op(*writer).op_type.name()
        ),
        Case::Internal { mop, .. } => format!(
            "{} read {} inconsistently with its own writes",
            txn(h, mop.op),
            crate::reports::edn::to_string(&crate::reports::tree::mop(h, &h.mops_of(h.op(mop.op))[mop.mop as usize]))
        ),
        Case::FutureRead { mop, element } => format!("{} read element {element} before appending it", txn(h, mop.op)),
        Case::DirtyUpdate { key: k, values, txns } => format!(
            "key {}: failed {} then committed {} (versions {:?})",
            key(*k),
            txn(h, txns[0]),
            txn(h, txns[1]),
            values
        ),
        Case::DuplicateElements { mop, duplicates } => {
            format!("{} read duplicates {:?}", txn(h, mop.op), duplicates)
        }
        Case::IncompatibleOrder { key: k, values } => {
            format!("key {}: {:?} vs {:?}", key(*k), values[0], values[1])
        }
        Case::LostUpdate { key: k, txns, .. } => format!(
            "key {}: {} all read the same version and wrote it",
            key(*k),
            txns.iter().map(|&t| txn(h, t)).collect::<Vec<_>>().join(", ")
        ),
        Case::GarbageRead { mop, key: k, value } => {
            format!("{} read {} of key {} which nobody wrote", txn(h, mop.op), value, key(*k))
        }
        Case::CyclicVersions { key: k, scc, sources } => format!(
            "key {}: versions {:?} form a cycle once {} is assumed",
            key(*k),
            scc.iter().map(|v| v.map(|x| x.to_string()).unwrap_or_else(|| "nil".into())).collect::<Vec<_>>(),
            sources.last().map(String::as_str).unwrap_or("?")
        ),
        Case::CycleExists { not, scc_size, .. } => {
            format!("a cycle among {scc_size} txns rules out {not}")
        }
        Case::CycleSearchTimeout { spec_type, scc_size, .. } => {
            format!("search for {spec_type} in an SCC of {scc_size} txns ran out of time")
        }
        Case::EmptyTransactionGraph => "no dependencies between transactions could be inferred".into(),
    }
}

/// Renders the summary.
pub fn render(h: &History, o: &Outcome) -> String {
    let mut out = String::new();
    let verdict = match o.valid {
        Validity::Valid => "VALID",
        Validity::Invalid => "INVALID",
        Validity::Unknown => "UNKNOWN",
    };
    out.push_str(&format!(
        "{}: {} history, {} client ops ({} non-client ignored)\nverdict: {}\n",
        h.source,
        o.workload.name(),
        h.ops.len(),
        h.nonclient_ops,
        verdict
    ));
    if let Some(e) = &o.error {
        out.push_str(&format!("analysis could not run: {e}\n"));
        return out;
    }
    if o.anomalies.is_empty() {
        return out;
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["anomaly", "count", "example"]);
    for (name, cases) in &o.anomalies {
        let ex = cases.first().map(|c| short_witness(h, c)).unwrap_or_default();
        t.add_row(vec![name.clone(), cases.len().to_string(), ex]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    if !o.not.is_empty() {
        out.push_str(&format!("not: {}\n", o.not.iter().cloned().collect::<Vec<_>>().join(", ")));
    }
    if !o.also_not.is_empty() {
        out.push_str(&format!("also not: {}\n", o.also_not.iter().cloned().collect::<Vec<_>>().join(", ")));
    }
    out
}
