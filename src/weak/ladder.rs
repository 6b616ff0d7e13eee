//! `--model all`: every level from read committed to serializability in one
//! run, shown as one table (the "ladder"): each level's verdict, the weakest
//! level violated, the anomaly or TAP that breaks it, and its witness.
//!
//! The run itself is the ordinary check with the models of [`ALL_MODELS`]:
//! one ingest and one inference; the weak check (read committed, read
//! atomic, causal, in that order) and, for registers, the exact
//! snapshot-isolation and serializability check. The session forms of the
//! strong levels are used because the Biswas–Enea levels include sessions.

use super::elle::model_status;
use crate::anomaly::Case;
use crate::check::Outcome;
use crate::history::History;
use crate::reports::table::{self, ModelStatus};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

/// The name that asks for the ladder.
pub const ALL: &str = "all";

/// The models `--model all` checks, weakest first.
pub const ALL_MODELS: &[&str] = &[
    "read-committed-be",
    "read-atomic",
    "causal-cerone",
    "strong-session-snapshot-isolation",
    "strong-session-serializable",
];

/// The ladder's rows: (level shown, model whose status it reports).
const ROWS: &[(&str, &str)] = &[
    ("read committed (Biswas–Enea)", "read-committed-be"),
    ("read atomic", "read-atomic"),
    ("causal consistency", "causal-cerone"),
    ("prefix consistency", "prefix"),
    ("snapshot isolation (with sessions)", "strong-session-snapshot-isolation"),
    ("serializability (with sessions)", "strong-session-serializable"),
];

/// Whether the requested models ask for the ladder.
pub fn requested(models: &Option<Vec<String>>) -> bool {
    models.as_ref().is_some_and(|ms| ms.iter().any(|m| m.trim().eq_ignore_ascii_case(ALL)))
}

/// The status of one row. Prefix consistency has no exact check: it holds
/// when snapshot isolation does, fails when the report rules it out, and is
/// unknown otherwise.
fn status(o: &Outcome, model: &str) -> ModelStatus {
    if model == "prefix" {
        if o.not.contains(model) || o.also_not.contains(model) {
            return ModelStatus::Violated(o.anomaly_types.first().cloned().unwrap_or_else(|| "an anomaly".to_string()));
        }
        return match status(o, "strong-session-snapshot-isolation") {
            ModelStatus::Holds => ModelStatus::Holds,
            _ => ModelStatus::Unknown,
        };
    }
    model_status(o, model).unwrap_or_else(|| table::model_status(o, model))
}

/// A one-line witness of the anomaly type `name` in the outcome.
fn witness(h: &History, o: &Outcome, name: &str) -> String {
    let Some(cases) = o.anomalies.get(name) else { return String::new() };
    match cases.first() {
        Some(Case::Weak(v)) => super::report::short(h, v),
        Some(c) => table::short_witness(h, c),
        None => String::new(),
    }
}

/// The ladder as a terminal table.
pub fn render(h: &History, o: &Outcome) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    // A terminal that reports no usable width (a pseudo-terminal of 0
    // columns) would squeeze every column to one character.
    if t.width().is_none_or(|w| w < 60) {
        t.set_content_arrangement(ContentArrangement::Disabled);
    }
    t.set_header(vec!["level", "model", "verdict", "broken by", "witness"]);
    let mut weakest: Option<&str> = None;
    for &(label, model) in ROWS {
        let s = status(o, model);
        // Every level implies the ones below it: above a violated level,
        // nothing holds.
        let s = match (s, weakest) {
            (ModelStatus::Violated(a), _) => ModelStatus::Violated(a),
            (_, Some(w)) => ModelStatus::Violated(format!("implied by {w}")),
            (s, None) => s,
        };
        let weakest_seen = weakest.is_some();
        let (verdict, by, wit) = match &s {
            ModelStatus::Holds => ("valid".to_string(), String::new(), String::new()),
            ModelStatus::Unknown => ("unknown".to_string(), String::new(), String::new()),
            ModelStatus::NotChecked => ("not checked".to_string(), String::new(), String::new()),
            ModelStatus::Violated(a) => {
                let first = !weakest_seen;
                if first {
                    weakest = Some(model);
                }
                let verdict = if first { "INVALID (weakest violated)" } else { "invalid" };
                let tap = match o.anomalies.get(a).and_then(|cs| cs.first()) {
                    Some(Case::Weak(v)) => format!("{a} (TAP-{})", v.tap),
                    _ => a.clone(),
                };
                (verdict.to_string(), tap, if first { witness(h, o, a) } else { String::new() })
            }
        };
        t.add_row(vec![label.to_string(), model.to_string(), verdict, by, wit]);
    }
    format!("{t}\n")
}
