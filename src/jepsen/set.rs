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
//! `integer-interval-set-str` (`#{1..3 5}`). Sorted runs merged:
//! O(n log n), over plain integers when every element is one.

use super::elem::Elem;
use super::result::{count, int_interval_set_str, interval_set_str, kw, CheckResult, Node, Validity};
use super::{JepsenError, OpType, Ops};
use crate::history::Value;

const EXPECTS: &str = ":add ops of single elements and :read ops whose :ok value is a collection of elements";

/// Checks a set history.
pub fn check(ops: &Ops) -> Result<CheckResult, JepsenError> {
    let (mut attempts, mut adds) = (Vec::new(), Vec::new());
    let mut final_read = None;
    for i in ops.clients() {
        let o = &ops.ops[i];
        match (&*o.f, o.op_type) {
            ("add", OpType::Invoke) => attempts.push(ops.element(o)),
            ("add", OpType::Ok) => adds.push(ops.element(o)),
            ("add", _) | ("read", OpType::Invoke | OpType::Fail | OpType::Info) => {}
            ("read", OpType::Ok) => match ops.members(o) {
                Some(xs) => final_read = Some(xs),
                None => return Err(ops.model_error(i, "set", EXPECTS)),
            },
            _ => return Err(ops.model_error(i, "set", EXPECTS)),
        }
    }
    let Some(final_read) = final_read else {
        return Ok(CheckResult::unknown(
            "Set was never read",
            vec![(kw("attempt-count"), count(distinct(attempts).len()))],
        ));
    };
    let read: Vec<Elem> = final_read.iter().collect();
    // Integers only (the usual case): the same sets over plain integers.
    match (all_ints(&attempts), all_ints(&adds), all_ints(&read)) {
        (Some(attempts), Some(adds), Some(read)) => {
            Ok(result(Sets::of(attempts, adds, read), |xs| int_interval_set_str(xs.to_vec())))
        }
        _ => Ok(result(Sets::of(attempts, adds, read), |xs| {
            interval_set_str(&xs.iter().map(Elem::to_value).collect::<Vec<Value>>())
        })),
    }
}

/// The integers, if every element is one.
fn all_ints(xs: &[Elem]) -> Option<Vec<i64>> {
    xs.iter().map(|x| if let Elem::Int(n) = x { Some(*n) } else { None }).collect()
}

/// Sorted without duplicates (elements sort as their values do, Jepsen's
/// order).
fn distinct<T: Ord>(mut xs: Vec<T>) -> Vec<T> {
    xs.sort_unstable();
    xs.dedup();
    xs
}

/// `a ∩ b` and `a − b` of sorted, duplicate-free runs.
fn split<T: Ord + Clone>(a: &[T], b: &[T]) -> (Vec<T>, Vec<T>) {
    let (mut both, mut only) = (Vec::new(), Vec::new());
    let mut j = 0;
    for x in a {
        while j < b.len() && b[j] < *x {
            j += 1;
        }
        if j < b.len() && b[j] == *x {
            both.push(x.clone());
        } else {
            only.push(x.clone());
        }
    }
    (both, only)
}

/// The set checker's sets, each sorted.
struct Sets<T> {
    attempts: usize,
    adds: usize,
    ok: Vec<T>,
    lost: Vec<T>,
    unexpected: Vec<T>,
    recovered: Vec<T>,
}

impl<T: Ord + Clone> Sets<T> {
    fn of(attempts: Vec<T>, adds: Vec<T>, read: Vec<T>) -> Sets<T> {
        let (attempts, adds, read) = (distinct(attempts), distinct(adds), distinct(read));
        let (ok, unexpected) = split(&read, &attempts);
        let (_, lost) = split(&adds, &read);
        let (_, recovered) = split(&ok, &adds);
        Sets { attempts: attempts.len(), adds: adds.len(), ok, lost, unexpected, recovered }
    }
}

fn result<T>(s: Sets<T>, show: impl Fn(&[T]) -> String) -> CheckResult {
    let valid = if s.lost.is_empty() && s.unexpected.is_empty() { Validity::Valid } else { Validity::Invalid };
    let str = |xs: &[T]| Node::Str(show(xs));
    CheckResult::new(
        valid,
        vec![
            (kw("attempt-count"), count(s.attempts)),
            (kw("acknowledged-count"), count(s.adds)),
            (kw("ok-count"), count(s.ok.len())),
            (kw("lost-count"), count(s.lost.len())),
            (kw("recovered-count"), count(s.recovered.len())),
            (kw("unexpected-count"), count(s.unexpected.len())),
            (kw("ok"), str(&s.ok)),
            (kw("lost"), str(&s.lost)),
            (kw("unexpected"), str(&s.unexpected)),
            (kw("recovered"), str(&s.recovered)),
        ],
    )
}
