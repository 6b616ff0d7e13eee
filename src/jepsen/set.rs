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

use super::elem::Elem;
use super::result::{count, int_interval_set_str, interval_set_str, kw, CheckResult, Node, Validity};
use super::{JepsenError, OpType, Ops};
use crate::history::Value;
use rustc_hash::FxHashSet;

const EXPECTS: &str = ":add ops of single elements and :read ops whose :ok value is a collection of elements";

/// Checks a set history.
pub fn check(ops: &Ops) -> Result<CheckResult, JepsenError> {
    let mut attempts: FxHashSet<Elem> = FxHashSet::default();
    let mut adds: FxHashSet<Elem> = FxHashSet::default();
    let mut final_read = None;
    for i in ops.clients() {
        let o = &ops.ops[i];
        match (&*o.f, o.op_type) {
            ("add", OpType::Invoke) => {
                attempts.insert(ops.element(o));
            }
            ("add", OpType::Ok) => {
                adds.insert(ops.element(o));
            }
            ("add", _) | ("read", OpType::Invoke | OpType::Fail | OpType::Info) => {}
            ("read", OpType::Ok) => match ops.members(o) {
                Some(xs) => final_read = Some(xs),
                None => return Err(ops.model_error(i, "set", EXPECTS)),
            },
            _ => return Err(ops.model_error(i, "set", EXPECTS)),
        }
    }
    let Some(final_read) = final_read else {
        return Ok(CheckResult::unknown("Set was never read", vec![(kw("attempt-count"), count(attempts.len()))]));
    };
    let read: FxHashSet<Elem> = final_read.iter().collect();
    let ok = sorted(read.iter().filter(|x| attempts.contains(x)).collect());
    let unexpected = sorted(read.iter().filter(|x| !attempts.contains(x)).collect());
    let lost = sorted(adds.iter().filter(|x| !read.contains(x)).collect());
    let recovered = sorted(ok.iter().filter(|x| !adds.contains(x)).collect());
    let valid = if lost.is_empty() && unexpected.is_empty() { Validity::Valid } else { Validity::Invalid };
    let s = |xs: &[Elem]| {
        let ints: Option<Vec<i64>> = xs.iter().map(|x| if let Elem::Int(n) = x { Some(*n) } else { None }).collect();
        Node::Str(match ints {
            Some(ints) => int_interval_set_str(ints),
            None => interval_set_str(&xs.iter().map(Elem::to_value).collect::<Vec<Value>>()),
        })
    };
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

/// The elements, sorted as Jepsen sorts them (by value).
fn sorted<'a>(s: Vec<&Elem<'a>>) -> Vec<Elem<'a>> {
    let mut v: Vec<Elem> = s.into_iter().cloned().collect();
    v.sort_unstable();
    v
}
