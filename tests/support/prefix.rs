//! Helpers for the prefix-consistency tests: the exact check's verdict with
//! its witness checked independently (a `valid` commit order against the
//! axioms, every case of an `invalid` refutation as a cycle justified by the
//! history and the case's assumptions, of a shape prefix consistency forbids).

use isolde::anomaly::{Case, Cycle, Step, WriteOrder};
use isolde::history::{History, MopFn, MopValue, OpType};
use isolde::prefix::{check_prefix_front, PrefixOptions, PrefixOutcome, PrefixVerdict};
use isolde::weak::front::{Front, Sessions};
use isolde::weak::oracle::{self, Axiom};

/// The outcome of the exact check on `f` (a front end of `h`).
pub fn outcome(h: &History, f: &Front, sessions: Sessions) -> PrefixOutcome {
    check_prefix_front(h, f, &PrefixOptions { sessions, ..PrefixOptions::default() })
}

/// The verdict (`Some(true)` valid, `Some(false)` invalid, `None` unknown),
/// after checking its witness, with and without the completion-order fast
/// path (which must agree); panics with `text` on a bad witness.
pub fn verdict(h: &History, f: &Front, sessions: Sessions, text: &str) -> Option<bool> {
    let fast = checked(h, f, &PrefixOptions { sessions, ..PrefixOptions::default() }, text);
    let slow = checked(h, f, &PrefixOptions { sessions, order_first: false, ..PrefixOptions::default() }, text);
    assert_eq!(fast, slow, "completion-order path vs polygraph\n{text}");
    fast
}

fn checked(h: &History, f: &Front, opts: &PrefixOptions, text: &str) -> Option<bool> {
    match check_prefix_front(h, f, opts).verdict {
        PrefixVerdict::Valid(x) => {
            assert!(oracle::extends(f, &x.wr, &x.co), "witness order does not extend so ∪ wr\n{text}");
            assert!(oracle::satisfies(f, &x.wr, Axiom::Prefix, &x.co), "witness order breaks the axiom\n{text}");
            Some(true)
        }
        PrefixVerdict::Invalid { anomaly, case } => {
            if let Case::Refuted(r) = &*case {
                assert_eq!(r.model, "prefix");
                assert!(!r.branches.is_empty(), "refutation without cases\n{text}");
                assert!(!anomaly.starts_with("G2"), "PC refutation named {anomaly}\n{text}");
                for b in &r.branches {
                    if let Err(e) = check_cycle(h, &b.cycle, &b.assume) {
                        panic!("case {b:?}: {e}\n{text}");
                    }
                }
            }
            Some(false)
        }
        PrefixVerdict::Unknown(_) => None,
    }
}

/// The value of a register read or write micro-op, or a list read's last
/// element (`None` for nil or the empty list).
fn value(h: &History, v: MopValue) -> Option<i64> {
    match v {
        MopValue::Int(x) => Some(x),
        MopValue::List { .. } => h.list(v).last().copied(),
        MopValue::Nil | MopValue::Entries(_) => None,
    }
}

/// Whether op `o` writes (or appends) `v` to `key`.
fn writes(h: &History, o: u32, key: isolde::history::KeyId, v: Option<i64>) -> bool {
    h.mops_of(h.op(o))
        .iter()
        .any(|m| m.key == key && matches!(m.f, MopFn::Write | MopFn::Append) && value(h, m.value) == v)
}

/// Whether op `o` reads `v` from `key`.
fn reads(h: &History, o: u32, key: isolde::history::KeyId, v: Option<i64>) -> bool {
    h.mops_of(h.op(o)).iter().any(|m| m.key == key && m.f == MopFn::Read && value(h, m.value) == v)
}

/// Checks a case's cycle: each step justified by the history or by the
/// case's assumed write orders, and no anti-dependency right after a
/// write-write step or another anti-dependency (those cycles are allowed by
/// prefix consistency: a lost update, a write skew).
pub fn check_cycle(h: &History, c: &Cycle, assume: &[WriteOrder]) -> Result<(), String> {
    let n = c.ops.len();
    if n < 2 || c.steps.len() != n {
        return Err(format!("malformed cycle {c:?}"));
    }
    let assumed = |k, a: u32, b: u32| assume.iter().any(|w| w.key == k && w.first.0 == a && w.second.0 == b);
    let list = isolde::anomaly::Workload::ListAppend == super::weak::workload(h);
    for i in 0..n {
        let (a, b) = (c.ops[i], c.ops[(i + 1) % n]);
        let ok = match c.steps[i] {
            Step::Process { process } => h.op(a).process == process && h.op(b).process == process && a < b,
            Step::Wr { key, value, .. } => writes(h, a, key, value) && reads(h, b, key, value),
            Step::Ww { key, .. } if list => assumed(key, a, b) || super::check_la_step(h, a, b, &c.steps[i]).is_ok(),
            Step::Ww { key, value, value2, .. } => {
                assumed(key, a, b) && writes(h, a, key, value) && writes(h, b, key, value2)
            }
            Step::Rw { key, value, value2, .. } => {
                let from_init = value.is_none();
                let ordered = from_init
                    || assume.iter().any(|w| w.key == key && Some(w.first.1) == value && w.second.0 == b)
                    || (list && super::check_la_step(h, a, b, &c.steps[i]).is_ok());
                reads(h, a, key, value) && writes(h, b, key, value2) && ordered
            }
            // Predicate steps: no prefix witness has them.
            Step::Realtime { .. } | Step::Wrp { .. } | Step::Rwp { .. } => false,
        };
        if !ok {
            return Err(format!("step {:?} from op {} to op {} is not justified", c.steps[i], a, b));
        }
        let prev = &c.steps[(i + n - 1) % n];
        if matches!(c.steps[i], Step::Rw { .. }) && matches!(prev, Step::Rw { .. } | Step::Ww { .. }) {
            return Err(format!("anti-dependency after {prev:?}: not a prefix violation"));
        }
    }
    if !c.ops.iter().all(|&o| matches!(h.op(o).op_type, OpType::Ok | OpType::Info)) {
        return Err("cycle through a failed transaction".into());
    }
    Ok(())
}
