//! The counter checker (`jepsen.checker/counter`).
//!
//! A counter starts at 0; `:add` ops add a non-negative integer and `:read`
//! ops return the current value. Walking the history in order, two bounds
//! are kept: `lower`, the sum of the adds known to have happened (`:ok`
//! completions so far), and `upper`, the sum of the adds that may have
//! happened (every add invoked so far whose completion is not `:fail`:
//! `:ok`, `:info` and never-completed adds all count). A read's value must
//! lie between `lower` when it was invoked and `upper` when it completed;
//! every read that does not is an error. One pass: linear time.
//!
//! Result map (Jepsen's): `:reads` and `:errors` as `[lower value upper]`
//! triples (isolde adds `:read-count` and `:error-count`). As in Jepsen, a
//! history without an `:ok` read is valid: no read contradicts it.

use super::result::{count, kw, CheckResult, Node, Validity};
use super::{JepsenError, OpType, Ops};
use crate::history::Value;
use rustc_hash::FxHashMap;

const EXPECTS: &str = ":add ops of a non-negative integer and :read ops whose :ok value is an integer";

/// Checks a counter history.
pub fn check(ops: &Ops) -> Result<CheckResult, JepsenError> {
    let (mut lower, mut upper) = (0i128, 0i128);
    let mut pending: FxHashMap<&Value, (i128, i64)> = FxHashMap::default();
    let mut reads: Vec<[i128; 3]> = Vec::new();
    for i in ops.clients() {
        let o = &ops.ops[i];
        match (&*o.f, o.op_type) {
            ("read", OpType::Invoke) => {
                if let Some(c) = ops.completion(i).filter(|c| c.op_type == OpType::Ok) {
                    let Some(v) = c.value.as_int() else {
                        let j = ops.pair[i] as usize;
                        return Err(ops.model_error(j, "counter", EXPECTS));
                    };
                    pending.insert(&o.process, (lower, v));
                }
            }
            ("read", OpType::Ok) => match pending.remove(&o.process) {
                Some((l, v)) => reads.push([l, v as i128, upper]),
                // A read with no invocation: its start is unknown, so
                // only the upper bound and the initial 0 apply.
                None => match o.value.as_int() {
                    Some(v) => reads.push([0, v as i128, upper]),
                    None => return Err(ops.model_error(i, "counter", EXPECTS)),
                },
            },
            ("read", _) => {}
            ("add", t) => {
                let Some(v) = o.value.as_int().filter(|&v| v >= 0) else {
                    return Err(ops.model_error(i, "counter", EXPECTS));
                };
                match t {
                    OpType::Invoke if ops.completion(i).map(|c| c.op_type) != Some(OpType::Fail) => {
                        upper += v as i128;
                    }
                    OpType::Ok => lower += v as i128,
                    _ => {}
                }
            }
            _ => return Err(ops.model_error(i, "counter", EXPECTS)),
        }
    }
    let triple = |r: &[i128; 3]| Node::Vector(r.iter().map(|&x| big(x)).collect());
    let errors: Vec<Node> = reads.iter().filter(|r| !(r[0] <= r[1] && r[1] <= r[2])).map(triple).collect();
    let entries = vec![
        (kw("read-count"), count(reads.len())),
        (kw("error-count"), count(errors.len())),
        (kw("reads"), Node::Vector(reads.iter().map(triple).collect())),
        (kw("errors"), Node::Vector(errors.clone())),
    ];
    Ok(CheckResult::new(if errors.is_empty() { Validity::Valid } else { Validity::Invalid }, entries))
}

fn big(x: i128) -> Node {
    match i64::try_from(x) {
        Ok(v) => Node::Int(v),
        Err(_) => Node::BigInt(x.to_string()),
    }
}
