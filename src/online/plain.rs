//! Following a fenced register history at serializability or snapshot
//! isolation *without* sessions (`-m serializable`, `-m
//! snapshot-isolation`): what collecting may assume, and which of a
//! round's anomalies hold at the level asked.
//!
//! ## Fences need sessions
//! A fence orders nothing by itself. The fence argument ([`super::fenced`])
//! runs `T`, its client's next fence, the fence chain, the later client's
//! fence before `U`, `U`: the first and last links are session order. At
//! plain serializability nothing ties a client's transactions to its
//! fences (every fence could be placed first in a serial order), and a
//! future transaction may read any old version: no transaction can ever be
//! dropped with both verdicts exact. Cobra, whose setting is
//! serializability, therefore adds each client's order to its known graph
//! (`../shared/spec/online.md` §2): it assumes what strong session
//! serializability promises. `--follow` does the same, and says what rests
//! on the assumption:
//!
//! * **Rounds collect at the session level** of the same family
//!   ([`session_model`]: serializability → strong session serializability,
//!   snapshot isolation → strong session snapshot isolation), by the fence
//!   rule as it is.
//! * **`valid` is exact.** The final check is at the level asked, on the
//!   window started from the collected prefix's state. Collected
//!   transactions are a prefix `P` of an execution at the session level,
//!   which is one at the plain level too, so a valid rest makes `P` then the
//!   rest an execution of the whole history at the level asked.
//! * **An anomaly is reported only where it holds without the
//!   assumption.** The window shows a read of a collected key's last
//!   version as a read of the initial state, so its check places every
//!   writer of that key in the window after the collected one: an
//!   anti-dependency from such a read (`rw` from a version the window calls
//!   initial, [`super::collect::Window::reads_collected`]) is true only if
//!   the later writer follows the collected prefix, which sessions promise
//!   and plain serializability does not (the writer could be serialized
//!   before the whole prefix). Any other step holds in the whole history as
//!   it does in the window: reads-from, write orders and anti-dependencies
//!   among held transactions come from their own reads and writes, which
//!   the collected ones only add to. So a case is reported when no step of
//!   its witness (every cycle of a refutation, every order it derives) is a
//!   session or realtime step or such an anti-dependency
//!   ([`holds_without_sessions`]); reads and lost updates that need no
//!   order are reported as they are. A read of a collected version other
//!   than the last is a cycle only through fences, so it is not reported
//!   either, unless it is an intermediate or aborted read.
//! * **What is set aside makes the verdict `unknown`**, with the reason and
//!   the advice to check the history in one piece (`--follow-all`, or the
//!   batch check): never `valid`, never an anomaly the history does not
//!   have. When a round's session check finds an anomaly, the same window
//!   is checked at the level asked, and only that check's cases that hold
//!   are reported; the session anomaly itself makes the run `unknown`
//!   unless one is.
//!
//! A database that keeps each client's order (every one we have met, and
//! what Cobra's verifier requires) thus gets the exact verdict with the
//! memory of a session-level run; one that breaks session order gets
//! `unknown` and the reason, where the batch check can answer.

use crate::anomaly::{Anomalies, Case, Cycle, Step};
use crate::check::CheckOptions;

use super::collect::Window;

/// The plain levels a fenced register history is followed at, each with
/// the session level its rounds collect at.
pub const PLAIN_MODELS: [(&str, &str); 2] =
    [("serializable", "strong-session-serializable"), ("snapshot-isolation", "strong-session-snapshot-isolation")];

/// The session level whose rounds collect for `model`: itself when it is a
/// session level, its strong session counterpart when it is a plain one.
pub fn session_model(model: &str) -> Option<&'static str> {
    PLAIN_MODELS.iter().find(|(p, _)| *p == model).map(|(_, s)| *s)
}

/// What a run at a plain level needs: the options of the level asked (the
/// rounds check at the session level).
#[derive(Clone, Debug)]
pub struct Plain {
    /// The options the user asked for.
    pub asked: CheckOptions,
}

impl Plain {
    /// A round's anomalies, found at the session level on `w`: replaced by
    /// those of the level asked that hold without sessions (the window is
    /// checked again at that level when the session check found any). Says
    /// why the verdict can no longer be `valid` when something was set
    /// aside, or when the session check found an anomaly the level asked
    /// does not confirm after something was `collected` (the collection
    /// assumed sessions).
    pub fn sift_round(&self, w: &Window, collected: bool, anomalies: &mut Anomalies) -> Option<String> {
        let found: Vec<String> = anomalies.keys().filter(|n| !undecided(n)).cloned().collect();
        if found.is_empty() {
            return None;
        }
        let mut at_level = match crate::check::check(&w.check, &self.asked) {
            Ok(o) => o.anomalies,
            Err(e) => {
                anomalies.retain(|n, _| undecided(n));
                return Some(format!(
                    "checking a round at the level asked failed ({e}): check the history in one piece"
                ));
            }
        };
        w.restore(&mut at_level);
        let flagged = w.set_aside(&mut at_level);
        for (name, case) in &w.cases {
            crate::anomaly::add(&mut at_level, name, case.clone());
        }
        let why = sift(w, &mut at_level).or(flagged);
        anomalies.retain(|n, _| undecided(n));
        let reported = at_level.keys().any(|n| !undecided(n));
        anomalies.extend(at_level);
        // With nothing collected the check at the level asked was exact.
        why.or_else(|| {
            (!reported && collected).then(|| {
                format!(
                    "the history is not {} ({} while following), which collecting at the plain level assumes, as \
                     Cobra does; whether it is {} needs every transaction: check the history in one piece \
                     (--follow-all, or without --follow)",
                    session_names(&self.asked),
                    found.join(", "),
                    plain_names(&self.asked)
                )
            })
        })
    }
}

/// Removes from `anomalies` (checked at a plain level on `w`, restored) the
/// cases that rest on sessions or on the collected prefix preceding the
/// window, and says why when it removed one.
pub fn sift(w: &Window, anomalies: &mut Anomalies) -> Option<String> {
    let mut why = None;
    for (name, cases) in anomalies.iter_mut() {
        let before = cases.len();
        cases.retain(|c| holds_without_sessions(w, c));
        if cases.len() < before && why.is_none() {
            why = Some(format!(
                "a {name} found while following rests on session order or on transactions --follow assumed follow \
                 the collected ones (the plain level does not order them): it may not be an anomaly of the whole \
                 history; check the history in one piece (--follow-all, or without --follow)"
            ));
        }
    }
    anomalies.retain(|_, cases| !cases.is_empty());
    why
}

/// Whether `case` holds in the whole history at a plain level: no step of
/// its witness is session order, realtime, or an anti-dependency from a
/// read of a collected version.
pub fn holds_without_sessions(w: &Window, case: &Case) -> bool {
    let cycle = |c: &Cycle| {
        c.steps.iter().all(|s| match s {
            Step::Process { .. } | Step::Realtime { .. } => false,
            Step::Rw { key, value, .. } => !w.reads_collected(*key, *value),
            _ => true,
        })
    };
    match case {
        Case::Cycle(c) => cycle(c),
        Case::Refuted(r) => {
            !r.partial && r.branches.iter().all(|b| cycle(&b.cycle)) && r.derived.iter().all(|d| cycle(&d.because))
        }
        Case::BadRead { .. }
        | Case::Internal { .. }
        | Case::FutureRead { .. }
        | Case::DuplicateElements { .. }
        | Case::LostUpdate { .. }
        | Case::GarbageRead { .. }
        | Case::CollectedAborted { .. } => true,
        Case::CollectedWrite { intermediate, .. } => *intermediate,
        _ => false,
    }
}

/// Whether `name` says what a check could not decide (no edges, a search
/// that ran out of time) rather than an anomaly.
fn undecided(name: &str) -> bool {
    crate::check::UNKNOWN_ANOMALY_TYPES.contains(&name)
}

fn session_names(o: &CheckOptions) -> String {
    o.models.iter().flatten().filter_map(|m| session_model(m)).collect::<Vec<_>>().join(" or ")
}

fn plain_names(o: &CheckOptions) -> String {
    o.models.iter().flatten().map(String::as_str).collect::<Vec<_>>().join(" or ")
}
