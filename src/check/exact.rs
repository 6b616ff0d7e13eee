//! The exact check's place in the whole analysis: which levels
//! [`crate::si_check`] searches, in which order, and with which known
//! orders, given what Elle's inference and the weak check already found.
//!
//! The order is the ladder's, strongest requested level first: a level
//! refuted (by a search, by an inferred anomaly, or by the weak check's
//! violation) or left undecided sends the search on to the next weaker
//! levels ([`si_check::Level::weaker`]), so the report says which of them
//! the history does satisfy; a level proved valid answers every level it
//! implies without a search.

use super::Stats;
use crate::anomaly::{Anomalies, Case};
use crate::cycles::lattice;
use crate::history::History;
use crate::si_check;
use crate::weak;
use crate::weak::front::Sessions;
use std::time::Instant;

/// Runs the exact check for every requested model it decides that the
/// Elle-style findings do not already rule out, and, each time a level is
/// refuted or undecided, for the next weaker one, so the report says which of these
/// levels the history does satisfy. Refutations are added under the name
/// of the cycles they show; an undecided level adds `exact-check-unknown`.
///
/// A level that the weak check's violation `implied` (weakest level
/// violated, and whether without sessions) already refutes is not searched
/// (it is listed in [`Stats::exact_implied`]). With
/// [`si_check::ExactOptions::cc_orders`], every search starts from causal
/// consistency's forced write orders, computed with the level's session
/// semantics under the limits of `weak` (see [`weak::strong`]).
pub(super) fn run_exact(
    h: &History,
    models: &[String],
    opts: &si_check::ExactOptions,
    weak: &weak::Options,
    implied: Option<(weak::Level, bool)>,
    anomalies: &mut Anomalies,
    stats: &mut Stats,
) {
    // Strongest first (popped from the end): a level proved answers every
    // level it implies without a search.
    let mut todo: Vec<si_check::Level> = models.iter().filter_map(|m| si_check::Level::from_model(m)).collect();
    todo.sort_by_key(|l| l.strength());
    let mut done: Vec<si_check::Level> = Vec::new();
    let mut refuted: Vec<si_check::Level> = Vec::new();
    // Forced write orders with and without sessions, computed when first needed.
    let mut known: [Option<Option<si_check::KnownOrders>>; 2] = [None, None];
    while let Some(level) = todo.pop() {
        if done.contains(&level) || stats.exact_valid.iter().any(|v| v.implies(level)) {
            continue;
        }
        done.push(level);
        if stats.exact.iter().any(|(m, _)| m == level.model()) {
            // Searched already, by the check this one extends (the
            // ladder after the requested models): not proved, so the
            // weaker levels are next.
            todo.extend(level.weaker().into_iter().rev());
            continue;
        }
        let found: Vec<&str> = anomalies.keys().map(String::as_str).collect();
        let ruled_out = lattice::anomalies_to_impossible_models(&lattice::boundary_names(&found));
        let canonical = lattice::canonical_model_name(level.model()).unwrap_or("");
        if ruled_out.contains(canonical) {
            // Already refuted by inferred anomalies: try the weaker levels.
            refuted.push(level);
            todo.extend(level.weaker().into_iter().rev());
            continue;
        }
        if implied.is_some_and(|(l, plain)| weak::strong::implied_refuted(l, plain, level)) {
            // Refuted by the weak check's violation, without search.
            stats.exact_implied.push(level.model().to_string());
            refuted.push(level);
            todo.extend(level.weaker().into_iter().rev());
            continue;
        }
        let mut level_opts = opts.clone();
        if opts.serial_first && opts.keep_serial && !opts.cc_orders && known[0].is_none() && has_sessions(h) {
            // A round's window of `--follow` (the caller that keeps the
            // serial execution) almost always replays without the orders
            // forced under session order: a short try first spares
            // computing them. A batch check keeps its one replay with them.
            if let Ok(Some(out)) = si_check::proved_by_quick_replay(h, level, opts) {
                stats.exact.push((level.model().to_string(), out.stats));
                stats.exact_valid.push(level);
                continue;
            }
        }
        if opts.serial_first && has_sessions(h) {
            // The serial replay keeps the orders forced under session
            // order when it replays under session or realtime order.
            let t = Instant::now();
            level_opts.session_orders = known[0]
                .get_or_insert_with(|| {
                    let limits = weak::Options { sessions: Sessions::Process, ..*weak };
                    weak::strong::known_orders(h, Sessions::Process, &limits)
                })
                .clone();
            stats.known_orders += t.elapsed();
        }
        if opts.cc_orders {
            let sessions = if level.order == si_check::OrderKind::Session { Sessions::Process } else { Sessions::None };
            let slot = &mut known[usize::from(sessions == Sessions::None)];
            let t = Instant::now();
            level_opts.known = slot
                .get_or_insert_with(|| {
                    // Without sessions every transaction is its own session,
                    // so the clocks get the weak recheck's small budget.
                    let budget = match sessions {
                        Sessions::Process => weak.max_clock_entries,
                        Sessions::None => weak.max_clock_entries.min((1 << 22).max(16 * h.ops.len())),
                    };
                    let limits = weak::Options { sessions, max_clock_entries: budget, ..*weak };
                    weak::strong::known_orders(h, sessions, &limits)
                })
                .clone();
            stats.known_orders += t.elapsed();
        }
        let out = match si_check::check_level_knowing(h, level, &level_opts, &refuted) {
            Ok(o) => o,
            Err(e) => {
                let case = Case::ExactCheckUnknown { model: level.model().to_string(), detail: e.to_string() };
                anomalies.entry("exact-check-unknown".into()).or_default().push(case);
                todo.extend(level.weaker().into_iter().rev());
                continue;
            }
        };
        stats.exact.push((level.model().to_string(), out.stats));
        match out.verdict {
            si_check::Verdict::Valid => stats.exact_valid.push(level),
            si_check::Verdict::Invalid(r) => {
                refuted.push(level);
                let name = si_check::witness::refutation_name(&r);
                stats.exact_refuted.push((level, name.clone()));
                anomalies.entry(name).or_default().push(Case::Refuted(r));
                todo.extend(level.weaker().into_iter().rev());
            }
            si_check::Verdict::Unknown(detail) => {
                // Undecided here says nothing of the weaker levels: each is
                // decided by its own search.
                let case = Case::ExactCheckUnknown { model: level.model().to_string(), detail };
                anomalies.entry("exact-check-unknown".into()).or_default().push(case);
                todo.extend(level.weaker().into_iter().rev());
            }
        }
    }
}

/// Whether some process completed more than one operation `:ok` (so
/// session order relates two of them).
fn has_sessions(h: &History) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    h.ops.iter().filter(|o| o.is_ok()).any(|o| !seen.insert(o.process))
}
