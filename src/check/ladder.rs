//! The verdict of every level of [`crate::levels::LEVELS`], from what one
//! check found: the printers read these rows and decide nothing.
//!
//! Each level is first decided by its own evidence ([`own`]): an anomaly
//! that rules it out (Elle's boundary, a weak violation, an exact
//! refutation), a proof that it holds (everything it prohibits searched and
//! none found; the weak check proved it; the exact check proved it), or
//! `unknown` with the reason of the check that could not decide it. An
//! undecided level of one checker never makes another level undecided: an
//! exact search that stopped at serializability leaves read committed to
//! Elle's inference and snapshot isolation to its own search.
//!
//! Then the implications of [`crate::levels`] answer what is left: a level
//! not decided on its own is violated when a level it implies is violated,
//! and holds when a level implying it holds. Own evidence is never
//! overridden, so a row shows what its checker found.

use crate::anomaly::Case;
use crate::cycles::lattice;
use crate::levels::{self, Decider, LevelDef, LEVELS};
use crate::outcome::{DecidedBy, LevelRow, ModelStatus, Outcome, PrefixFinding, Validity};
use crate::si_check;
use crate::weak;

/// Every level's row, weakest first.
pub fn rows(o: &Outcome) -> Vec<LevelRow> {
    if let Some(why) = no_client_transactions(o) {
        let unknown = |level| LevelRow {
            level,
            status: ModelStatus::Unknown,
            decided_by: DecidedBy::Nobody,
            reason: why.clone(),
            witness: None,
        };
        return LEVELS.iter().map(unknown).collect();
    }
    let own: Vec<LevelRow> = LEVELS.iter().map(|l| own(o, l)).collect();
    own.iter().map(|row| implied(&own, row).unwrap_or_else(|| row.clone())).collect()
}

/// Why no level can be decided, when every operation lacked an integer
/// `:process`: Elle (and isolde) check client operations only, so nothing
/// of what the history records was checked, and a `valid` of the empty
/// remainder would say nothing of it.
fn no_client_transactions(o: &Outcome) -> Option<String> {
    (o.stats.ops == 0 && o.stats.nonclient_ops > 0).then(|| {
        format!(
            "no client operation to check: all {} operations lack an integer :process, and only client operations are checked",
            o.stats.nonclient_ops
        )
    })
}

/// An undecided row answered by another level's own verdict: a violated
/// level it implies, else a level implying it that holds.
fn implied(own: &[LevelRow], row: &LevelRow) -> Option<LevelRow> {
    if matches!(row.status, ModelStatus::Holds | ModelStatus::Violated(_)) {
        return None;
    }
    let model = row.level.model;
    let weaker_violated = own.iter().find(|r| {
        r.level.model != model
            && matches!(r.status, ModelStatus::Violated(_))
            && matches!(r.decided_by, DecidedBy::Checker(_))
            && levels::implies(model, r.level.model)
    });
    if let Some(w) = weaker_violated {
        return Some(LevelRow {
            status: w.status.clone(),
            decided_by: DecidedBy::Implied(w.level.model),
            reason: String::new(),
            witness: None,
            ..row.clone()
        });
    }
    let stronger_holds = own.iter().find(|r| {
        r.level.model != model
            && r.status == ModelStatus::Holds
            && matches!(r.decided_by, DecidedBy::Checker(_))
            && levels::implies(r.level.model, model)
    })?;
    Some(LevelRow {
        status: ModelStatus::Holds,
        decided_by: DecidedBy::Implied(stronger_holds.level.model),
        reason: String::new(),
        witness: None,
        ..row.clone()
    })
}

/// A level's row from its own evidence alone.
fn own(o: &Outcome, level: &'static LevelDef) -> LevelRow {
    let (status, reason) = match level.model {
        "prefix" => prefix_status(o),
        m if weak::Level::from_model(m).is_some() => weak_status(o, m),
        m => elle_or_exact_status(o, m),
    };
    let (status, reason) = order_blind(o, level, status, reason);
    let (status, reason) = predicates_blind(o, level, status, reason);
    let witness = match &status {
        ModelStatus::Violated(name) => {
            let cases = o.anomalies.get(name).map(Vec::as_slice).unwrap_or_default();
            // The level's own refutation, if the exact check made one.
            let own = cases.iter().find(|c| matches!(c, Case::Refuted(r) if r.model == level.model));
            own.or(cases.first()).cloned()
        }
        _ => None,
    };
    let decided_by = match &status {
        ModelStatus::Violated(_) if level.model == "prefix" && o.stats.prefix.is_some() => {
            DecidedBy::Checker(Decider::Prefix)
        }
        ModelStatus::Violated(_) => DecidedBy::Checker(match &witness {
            Some(Case::Refuted(_)) => Decider::Exact,
            Some(Case::Weak(_)) => Decider::Weak,
            _ => Decider::Elle,
        }),
        ModelStatus::Holds => DecidedBy::Checker(holds_by(o, level)),
        _ => DecidedBy::Nobody,
    };
    LevelRow { level, status, decided_by, reason, witness }
}

/// A level proved by a checker that does not use the history's transaction
/// order (the weak and the prefix checkers) is not proved with it: the
/// order adds write orders, so their violations stand but their proofs do
/// not. Such a level is left to the implications (a stronger level the
/// exact check proved with the order answers it).
fn order_blind(o: &Outcome, level: &LevelDef, status: ModelStatus, reason: String) -> (ModelStatus, String) {
    if o.stats.transaction_order == 0 || status != ModelStatus::Holds {
        return (status, reason);
    }
    match holds_by(o, level) {
        Decider::Weak | Decider::Prefix => (
            ModelStatus::Unknown,
            format!("the {} check does not use the transaction order", holds_by(o, level).name()),
        ),
        _ => (status, reason),
    }
}

/// A closed-predicate history's level that only the weak or the prefix
/// checker decides, which do not know predicate reads, is unknown (with
/// the reason) unless a report rules it out or another level answers it.
fn predicates_blind(o: &Outcome, level: &LevelDef, status: ModelStatus, reason: String) -> (ModelStatus, String) {
    let blind = matches!(level.decider(false), Decider::Weak | Decider::Prefix);
    if o.workload != crate::anomaly::Workload::ClosedPredicate || !blind {
        return (status, reason);
    }
    match status {
        ModelStatus::Violated(_) => (status, reason),
        _ => (ModelStatus::Unknown, crate::check::PREDICATES_UNKNOWN.to_string()),
    }
}

/// Which checker proved a level that holds.
fn holds_by(o: &Outcome, level: &LevelDef) -> Decider {
    if weak::Level::from_model(level.model).is_some() {
        Decider::Weak
    } else if level.model == "prefix" && o.stats.prefix.is_some() {
        Decider::Prefix
    } else if level.model == "prefix" || exact_proves(o, level.model) {
        Decider::Exact
    } else {
        Decider::Elle
    }
}

/// Whether a level the exact check proved implies `model` (for Elle's
/// names, by prohibiting everything `model` prohibits).
fn exact_proves(o: &Outcome, model: &str) -> bool {
    let valid = &o.stats.exact_valid;
    match si_check::Level::from_model(model) {
        Some(level) => valid.iter().any(|v| v.implies(level)),
        None => valid.iter().any(|v| {
            lattice::anomalies_prohibited_by(&[model]).is_subset(&lattice::anomalies_prohibited_by(&[v.model()]))
        }),
    }
}

/// The reason the exact check gave for leaving `model` undecided.
fn exact_unknown(o: &Outcome, model: &str) -> Option<String> {
    o.anomalies.get("exact-check-unknown")?.iter().find_map(|c| match c {
        Case::ExactCheckUnknown { model: m, detail } if m == model => Some(detail.clone()),
        _ => None,
    })
}

/// Why Elle's inference cannot vouch for any level, if it cannot.
fn elle_inconclusive(o: &Outcome) -> Option<String> {
    if let Some(e) = &o.error {
        return Some(format!("the analysis could not run: {e}"));
    }
    let has = |t: &str| o.found_types.iter().any(|f| f == t);
    if has("cycle-search-timeout") {
        return Some("the cycle search ran out of time".into());
    }
    // An empty graph (Elle calls it inconclusive) decides the levels: no
    // dependency means no cycle, and the other anomalies were searched as
    // on any graph (a history of client operations only; see
    // [`no_client_transactions`] for one without any).
    None
}

/// A level Elle names, decided by Elle's inference or (for registers) the
/// exact check.
fn elle_or_exact_status(o: &Outcome, model: &str) -> (ModelStatus, String) {
    let Some(canonical) = lattice::canonical_model_name(model) else {
        return (ModelStatus::NotChecked, "not a level isolde checks".into());
    };
    let found: Vec<&str> = o.found_types.iter().map(String::as_str).collect();
    for t in lattice::boundary_names(&found) {
        if lattice::anomalies_to_impossible_models(&[t]).contains(canonical) {
            let shown = found.iter().find(|f| lattice::boundary_names(&[f]) == [t]).copied().unwrap_or(t);
            return (ModelStatus::Violated(shown.to_string()), String::new());
        }
    }
    // A model the boundary rules out for a reason outside Elle's lattice (a
    // weak-level violation, which also answers the session levels without
    // an exact search) never holds.
    let friendly = lattice::friendly_model_name(canonical);
    if [model, friendly].iter().any(|m| o.not.contains(*m) || o.also_not.contains(*m)) {
        let weak = o.found_types.iter().find(|t| weak::elle::WEAK_ANOMALY_TYPES.contains(&t.as_str()));
        let shown = weak.or(o.found_types.first()).cloned().unwrap_or_else(|| "a weak-level violation".into());
        return (ModelStatus::Violated(shown), String::new());
    }
    if exact_proves(o, model) {
        return (ModelStatus::Holds, String::new());
    }
    // The levels the exact check decides hold only when it proved them.
    if !o.stats.exact.is_empty() && si_check::Level::from_model(model).is_some() {
        return match exact_unknown(o, model) {
            Some(detail) => (ModelStatus::Unknown, detail),
            None => (ModelStatus::NotChecked, "the exact check did not search this level".into()),
        };
    }
    if let Some(why) = elle_inconclusive(o) {
        return (ModelStatus::Unknown, why);
    }
    if lattice::anomalies_prohibited_by(&[model]).iter().all(|a| o.checked.contains(a)) {
        (ModelStatus::Holds, String::new())
    } else {
        (ModelStatus::NotChecked, "the requested models did not search for everything it prohibits".into())
    }
}

/// A Biswas–Enea level (`read-committed-be`, `read-atomic`,
/// `causal-cerone`). It holds only when the weak check proved it (Elle's
/// detectors for these names are incomplete); it is violated when the
/// report rules it out.
fn weak_status(o: &Outcome, model: &str) -> (ModelStatus, String) {
    let Some(level) = weak::Level::from_model(model) else {
        return (ModelStatus::NotChecked, String::new());
    };
    if o.not.contains(model) || o.also_not.contains(model) {
        let canonical = lattice::canonical_model_name(model);
        let by_elle = o.found_types.iter().find(|t| {
            let b = lattice::boundary_names(&[t.as_str()]);
            canonical.is_some_and(|c| lattice::anomalies_to_impossible_models(&b).contains(c))
        });
        let by_weak = o.found_types.iter().find(|t| weak::elle::prohibited(level).contains(&t.as_str()));
        let shown = by_elle.or(by_weak).cloned().unwrap_or_else(|| "a weak-level violation".into());
        return (ModelStatus::Violated(shown), String::new());
    }
    match &o.stats.weak {
        Some(r) if r.proved && r.level >= level => (ModelStatus::Holds, String::new()),
        Some(r) if r.violated.is_some_and(|(l, _)| level < l) => (ModelStatus::Holds, String::new()),
        Some(r) if r.unknown => {
            (ModelStatus::Unknown, exact_unknown(o, r.level.model()).unwrap_or_else(|| "undecided".into()))
        }
        _ => (ModelStatus::NotChecked, "the weak check did not run at this level".into()),
    }
}

/// Prefix consistency: violated when the report rules it out (an anomaly
/// that rules out Elle's prefix, which ignores sessions, rules out the
/// Biswas–Enea level, which keeps them), otherwise what its check found.
fn prefix_status(o: &Outcome) -> (ModelStatus, String) {
    if o.not.contains("prefix") || o.also_not.contains("prefix") {
        let found: Vec<&str> = o.found_types.iter().map(String::as_str).collect();
        let rules_out =
            |t: &&&str| lattice::anomalies_to_impossible_models(&lattice::boundary_names(&[**t])).contains("prefix");
        let by = found
            .iter()
            .find(rules_out)
            .or(found.first())
            .map(|t| t.to_string())
            .unwrap_or_else(|| "an anomaly".into());
        return (ModelStatus::Violated(by), String::new());
    }
    match &o.stats.prefix {
        Some(PrefixFinding::Valid) => return (ModelStatus::Holds, String::new()),
        Some(PrefixFinding::Invalid(name)) => return (ModelStatus::Violated(name.clone()), String::new()),
        Some(PrefixFinding::Unknown(why)) => return (ModelStatus::Unknown, why.clone()),
        None => {}
    }
    if let Some((_, name)) = o.stats.exact_refuted.iter().find(|(l, _)| l.model() == "prefix") {
        return (ModelStatus::Violated(name.clone()), String::new());
    }
    if exact_proves(o, "prefix") {
        return (ModelStatus::Holds, String::new());
    }
    if let Some(detail) = exact_unknown(o, "prefix") {
        return (ModelStatus::Unknown, detail);
    }
    if o.valid == Validity::Unknown && o.error.is_some() {
        return (ModelStatus::Unknown, "the analysis could not run".into());
    }
    (ModelStatus::NotChecked, "prefix consistency was not checked".into())
}
