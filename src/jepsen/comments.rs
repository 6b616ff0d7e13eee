//! elle-cli's `comments` checker (from Jepsen's CockroachDB test): a
//! strict-serializability anomaly in which T1 completes before T2 begins,
//! yet a read sees T2 without T1.
//!
//! Clients perform blind `:write`s of unique values and `:read` the set of
//! values written so far. Replaying the history, each write `w` is given
//! the writes that had completed when `w` was invoked; a read that sees `w`
//! must see all of them. Every read that misses one is an error, with
//! `:missing` (the writes it should have seen) and `:expected-count`.
//!
//! Values may be independent tuples `[key value]` (Jepsen's
//! `independent` checker, as elle-cli runs it): each key is checked alone.
//! Plain values are one key. (elle-cli's `independent` wrapper finds no
//! key in a plain history and answers valid without checking; here such a
//! history is checked.)
//!
//! The writes completed before an invocation are a prefix of the order in
//! which writes complete, so a read's expected set is the longest such
//! prefix among the writes it saw: counting how many of its values fall in
//! that prefix decides it in time linear in the read, and the prefix is
//! walked only to list what is missing.

use super::result::{count, kw, CheckResult, Node, Validity};
use super::{elements, JepsenError, OpType, Ops};
use crate::history::Value;
use rustc_hash::{FxHashMap, FxHashSet};

const EXPECTS: &str =
    ":write ops of single values and :read ops whose :ok value is a set of values (or [key value] tuples of them)";

/// Splits an independent tuple.
fn split(v: &Value, independent: bool) -> (Option<&Value>, &Value) {
    match (independent, elements(v)) {
        (true, Some([k, x])) if matches!(v, Value::Vector(_)) => (Some(k), x),
        _ => (None, v),
    }
}

/// Checks a comments history.
pub fn check(ops: &Ops) -> Result<CheckResult, JepsenError> {
    let values = ops.values();
    // Independent when every write's value is a [key value] pair.
    let independent = ops
        .clients()
        .filter(|&i| &*ops.ops[i].f == "write")
        .all(|i| matches!(&*values[i], Value::Vector(x) if x.len() == 2));
    // Per key: completion order, each written value's rank in it, and the
    // number of completed writes when each value's write was invoked.
    #[derive(Default)]
    struct Key<'a> {
        completed: Vec<&'a Value>,
        rank: FxHashMap<&'a Value, usize>,
        before: FxHashMap<&'a Value, usize>,
    }
    let mut keys: FxHashMap<Option<&Value>, Key> = FxHashMap::default();
    let mut errors = Vec::new();
    let mut reads = 0usize;
    for i in ops.clients() {
        let o = &ops.ops[i];
        match (&*o.f, o.op_type) {
            ("write", t) => {
                let (k, v) = split(&values[i], independent);
                let key = keys.entry(k).or_default();
                match t {
                    OpType::Invoke => {
                        key.before.insert(v, key.completed.len());
                    }
                    OpType::Ok => {
                        key.rank.insert(v, key.completed.len());
                        key.completed.push(v);
                    }
                    _ => {}
                }
            }
            ("read", OpType::Ok) => {
                let (k, v) = split(&values[i], independent);
                let Some(seen) = elements(v) else { return Err(ops.model_error(i, "comments", EXPECTS)) };
                reads += 1;
                let Some(key) = keys.get(&k) else { continue };
                let prefix = seen.iter().filter_map(|x| key.before.get(x)).copied().max().unwrap_or(0);
                let seen_set: FxHashSet<&Value> = seen.iter().collect();
                let inside = seen_set.iter().filter(|x| key.rank.get(*x).is_some_and(|&r| r < prefix)).count();
                if inside < prefix {
                    let mut missing: Vec<&Value> =
                        key.completed[..prefix].iter().copied().filter(|x| !seen_set.contains(x)).collect();
                    missing.sort();
                    let mut m = match ops.node(i) {
                        Node::Map(m) => m.into_iter().filter(|(k, _)| *k != kw("value")).collect(),
                        _ => Vec::new(),
                    };
                    m.push((kw("missing"), Node::Set(missing.into_iter().map(crate::reports::tree::value).collect())));
                    m.push((kw("expected-count"), count(prefix)));
                    errors.push(Node::Map(m));
                }
            }
            ("read", _) => {}
            _ => return Err(ops.model_error(i, "comments", EXPECTS)),
        }
    }
    let valid = if errors.is_empty() { Validity::Valid } else { Validity::Invalid };
    Ok(CheckResult::new(valid, vec![(kw("read-count"), count(reads)), (kw("errors"), Node::Vector(errors))]))
}
