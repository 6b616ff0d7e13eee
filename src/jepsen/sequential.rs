//! elle-cli's `sequential` checker (from Jepsen's CockroachDB, TiDB and
//! Dgraph tests): client order must be consistent with the database's.
//!
//! A writer inserts a key's subkeys one after another (`k_0`, `k_1`, ...,
//! each in its own transaction); a reader reads them in reverse order,
//! returning `[k [v_n ... v_0]]` in its `:ok` `:read`. The writer's process
//! order puts `k_i` before `k_(i+1)`, so a read that sees a later subkey
//! must see every earlier one: in the read's (reversed) list, no `nil` may
//! follow a non-nil value. Such reads are `:bad`.
//!
//! Result map (elle-cli's): `:all-count` (reads that saw every subkey),
//! `:some-count` (reads with some nil), `:none-count` (all nil),
//! `:bad-count` and `:bad`. elle-cli's `all` compares against subkey names
//! built from the test's `:key-count`, which elle-cli never sets (so it
//! fails with an assertion); here `all` counts reads with no nil.

use super::result::{count, kw, CheckResult, Node, Validity};
use super::{elements, is_nil, JepsenError, OpType, Ops};

const EXPECTS: &str = ":read ops whose :ok value is [key [subkey-values ...]] (and writes, which are not checked)";

/// Checks a sequential history.
pub fn check(ops: &Ops) -> Result<CheckResult, JepsenError> {
    let (mut all, mut some, mut none) = (0usize, 0usize, 0usize);
    let mut bad = Vec::new();
    for i in ops.clients() {
        let o = &ops.ops[i];
        if &*o.f != "read" {
            continue;
        }
        if o.op_type != OpType::Ok {
            continue;
        }
        let value = ops.value(i);
        let vals = match elements(&value) {
            Some([_, vs]) => match elements(vs) {
                Some(vs) => vs,
                None => return Err(ops.model_error(i, "sequential", EXPECTS)),
            },
            _ => return Err(ops.model_error(i, "sequential", EXPECTS)),
        };
        let nils = vals.iter().filter(|v| is_nil(v)).count();
        if nils == vals.len() {
            none += 1;
        }
        if nils > 0 {
            some += 1;
        } else {
            all += 1;
        }
        let first = vals.iter().position(|v| !is_nil(v)).unwrap_or(vals.len());
        if vals[first..].iter().any(is_nil) {
            bad.push(crate::reports::tree::value(&value));
        }
    }
    let valid = if bad.is_empty() { Validity::Valid } else { Validity::Invalid };
    Ok(CheckResult::new(
        valid,
        vec![
            (kw("all-count"), count(all)),
            (kw("some-count"), count(some)),
            (kw("none-count"), count(none)),
            (kw("bad-count"), count(bad.len())),
            (kw("bad"), Node::List(bad)),
        ],
    ))
}
