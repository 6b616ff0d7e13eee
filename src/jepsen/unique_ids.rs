//! Jepsen's unique-id checker (`jepsen.checker/unique-ids`).
//!
//! Clients `:generate` ids; each `:ok` completion's value is the id the
//! generator returned. The generator is correct when no id is returned
//! twice. From the `:generate` ops:
//!
//! - `:attempted-count`: invocations; `:acknowledged-count`: `:ok`
//!   completions;
//! - the ids returned more than once, with how often: `:duplicated-count`
//!   is how many distinct ids that is, and `:duplicated` a map of at most 48
//!   of them (the most frequent; among equally frequent ones the greatest,
//!   as Jepsen's stable sort then reverse picks) to their counts, sorted by
//!   id;
//! - `:range`: the least and greatest id returned (`[nil nil]` when none).
//!
//! Valid iff no id is duplicated. Ids compare as their values do
//! (integers, strings, ...). One sort: O(n log n).

use super::elem::Elem;
use super::result::{count, kw, CheckResult, Node, Validity};
use super::{JepsenError, OpType, Ops};

const EXPECTS: &str = ":generate ops whose :ok value is the id generated";

/// How many duplicated ids `:duplicated` shows (Jepsen's `(take 48)`).
const SHOWN: usize = 48;

/// Checks a unique-id history.
pub fn check(ops: &Ops) -> Result<CheckResult, JepsenError> {
    let (mut attempted, mut acknowledged) = (0usize, 0usize);
    let mut ids: Vec<Elem> = Vec::new();
    for i in ops.clients() {
        let o = &ops.ops[i];
        if &*o.f != "generate" {
            return Err(ops.model_error(i, "unique-ids", EXPECTS));
        }
        match o.op_type {
            OpType::Invoke => attempted += 1,
            OpType::Ok => {
                acknowledged += 1;
                ids.push(ops.element(o));
            }
            OpType::Fail | OpType::Info => {}
        }
    }
    // Sorted with counts: the range is the first and last.
    let freqs = super::elem::counted(ids);
    let range = freqs.first().zip(freqs.last()).map(|((lo, _), (hi, _))| (lo.clone(), hi.clone()));
    let mut dups: Vec<(Elem, usize)> = freqs.into_iter().filter(|&(_, n)| n > 1).collect();
    let duplicated_count = dups.len();
    // The most frequent first; ties: the greatest id first.
    dups.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    dups.truncate(SHOWN);
    dups.sort_unstable();
    let node = |e: &Elem| match e {
        Elem::Int(n) => Node::Int(*n),
        Elem::Val(v) => crate::reports::tree::value(v),
    };
    let range = match &range {
        Some((lo, hi)) => Node::Vector(vec![node(lo), node(hi)]),
        None => Node::Vector(vec![Node::Nil, Node::Nil]),
    };
    let valid = if duplicated_count == 0 { Validity::Valid } else { Validity::Invalid };
    Ok(CheckResult::new(
        valid,
        vec![
            (kw("attempted-count"), count(attempted)),
            (kw("acknowledged-count"), count(acknowledged)),
            (kw("duplicated-count"), count(duplicated_count)),
            (kw("duplicated"), Node::Map(dups.iter().map(|(e, n)| (node(e), count(*n))).collect())),
            (kw("range"), range),
        ],
    ))
}
