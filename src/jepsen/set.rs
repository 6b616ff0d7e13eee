//! The set checker (`jepsen.checker/set`).
//!
//! Clients `:add` single elements to a set; a final `:read` returns the
//! whole set. With `attempts` the elements of every `:add` invocation,
//! `adds` those of `:ok` adds, and `final` the value of the last `:ok` read:
//!
//! - `ok` = final ∩ attempts; `unexpected` = final − attempts (read, never
//!   added); `lost` = adds − final (acknowledged, not read); `recovered` =
//!   ok − adds (indeterminate adds that did happen).
//!
//! Valid iff nothing is lost or unexpected; `unknown` ("Set was never
//! read") without an `:ok` read. Sets are printed as Jepsen's
//! `integer-interval-set-str` (`#{1..3 5}`). Hash sets: linear time.

use super::result::{count, interval_set_str, kw, CheckResult, Node, Validity};
use super::{elements, JepsenError, OpType, Ops};
use crate::history::Value;
use rustc_hash::FxHashSet;

const EXPECTS: &str = ":add ops of single elements and :read ops whose :ok value is a collection of elements";

/// Checks a set history.
pub fn check(ops: &Ops) -> Result<CheckResult, JepsenError> {
    let mut attempts: FxHashSet<&Value> = FxHashSet::default();
    let mut adds: FxHashSet<&Value> = FxHashSet::default();
    let mut final_read: Option<&[Value]> = None;
    for i in ops.clients() {
        let o = &ops.ops[i];
        match (&*o.f, o.op_type) {
            ("add", OpType::Invoke) => {
                attempts.insert(&o.value);
            }
            ("add", OpType::Ok) => {
                adds.insert(&o.value);
            }
            ("add", _) | ("read", OpType::Invoke | OpType::Fail | OpType::Info) => {}
            ("read", OpType::Ok) => match elements(&o.value) {
                Some(xs) => final_read = Some(xs),
                None => return Err(ops.model_error(i, "set", EXPECTS)),
            },
            _ => return Err(ops.model_error(i, "set", EXPECTS)),
        }
    }
    let Some(final_read) = final_read else {
        return Ok(CheckResult::unknown("Set was never read", vec![(kw("attempt-count"), count(attempts.len()))]));
    };
    let read: FxHashSet<&Value> = final_read.iter().collect();
    let sorted = |s: Vec<&Value>| {
        let mut v: Vec<Value> = s.into_iter().cloned().collect();
        v.sort();
        v
    };
    let ok = sorted(read.iter().copied().filter(|x| attempts.contains(x)).collect());
    let unexpected = sorted(read.iter().copied().filter(|x| !attempts.contains(x)).collect());
    let lost = sorted(adds.iter().copied().filter(|x| !read.contains(x)).collect());
    let recovered = sorted(ok.iter().filter(|x| !adds.contains(x)).collect());
    let valid = if lost.is_empty() && unexpected.is_empty() { Validity::Valid } else { Validity::Invalid };
    let s = |xs: &[Value]| Node::Str(interval_set_str(xs));
    Ok(CheckResult::new(
        valid,
        vec![
            (kw("attempt-count"), count(attempts.len())),
            (kw("acknowledged-count"), count(adds.len())),
            (kw("ok-count"), count(ok.len())),
            (kw("lost-count"), count(lost.len())),
            (kw("recovered-count"), count(recovered.len())),
            (kw("unexpected-count"), count(unexpected.len())),
            (kw("ok"), s(&ok)),
            (kw("lost"), s(&lost)),
            (kw("unexpected"), s(&unexpected)),
            (kw("recovered"), s(&recovered)),
        ],
    ))
}
