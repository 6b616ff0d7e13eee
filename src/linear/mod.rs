//! Linearizability checking of Knossos's models (`register`,
//! `cas-register`, `mutex`) and Porcupine's key-value model.
//!
//! # The problem
//!
//! A history of operations on one object (each with a call and, unless it
//! crashed, a return) is *linearizable* when every operation can be given
//! a point between its call and its return such that, in the order of those
//! points, the operations are a legal sequential run of the object's model
//! (a read returns the last write, a CAS swaps only when it matches, a lock
//! is acquired only when free). An `:info` (or never completed) operation
//! may take effect at any point after its call, or never. A `:fail`
//! operation did not happen and is dropped, as Knossos does. The problem
//! is NP-complete in general; the search below is exponential only in the
//! number of operations that overlap in time.
//!
//! # The search (Wing & Gong, Lowe)
//!
//! [`search`] is the Wing–Gong algorithm with Lowe's memoization, as
//! Porcupine implements it (`checker.go`, `checkSingle`): a depth-first
//! search over which operation to linearize next, where a configuration —
//! the *set* of operations linearized so far (a bitset) and the model's
//! state — is explored at most once. Two different orders of the same
//! operations that end in the same state lead to the same future, so the
//! cache cuts the factorial blow-up of interleavings down to the number of
//! distinct (set, state) pairs.
//!
//! # P-compositionality
//!
//! Linearizability is local (Herlihy & Wing): a history over several
//! independent objects is linearizable iff each object's sub-history is.
//! Horn & Kroening's P-compositionality generalizes this to partitions of
//! one object's operations (Porcupine's `Partition`). Histories whose ops
//! carry a `:key` (Porcupine's kv data) are split per key and each key is
//! searched alone, so the exponential part is per key.
//!
//! # Witness
//!
//! A non-linearizable partition answers with the deepest configuration the
//! search reached: the longest linearizable prefix (`:longest-prefix`), its
//! last operation (`:last-op`, Knossos's key) and last `:ok` completion
//! (`:previous-ok`), the operation whose return came before it could be
//! placed (`:op`), and, for every operation that could have come next, the
//! state it contradicts (`:final-paths`: the state after the prefix, then
//! the operation, with the state it would leave or `:inconsistent`).
//!
//! # Budgets
//!
//! `--timeout` and the cache's memory budget stop the search with
//! `:valid? :unknown` and what was explored, never with a verdict.

pub mod model;
pub mod porcupine;
pub mod search;

pub use model::{CasOutcome, Input, Interner, Model};
pub use search::{Budget, LinOp, Outcome};

use crate::history::Value;
use crate::jepsen::result::{count, kw, map, CheckResult, Node, Validity};
use crate::jepsen::{name_of, JepsenError, OpType, Ops};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Options of the search.
#[derive(Clone, Debug)]
pub struct LinearOptions {
    /// Time budget of the whole check.
    pub timeout: Option<Duration>,
    /// Memory budget of the search caches, in bytes.
    pub max_memory: usize,
    /// Progress on stderr (a line per partition decided).
    pub progress: bool,
    /// The register's initial value (Knossos's `(model/register v)`,
    /// `(model/cas-register v)`); `None` is `nil`, Knossos's default.
    /// Only the register models take one.
    pub initial: Option<Value>,
}

impl Default for LinearOptions {
    fn default() -> Self {
        LinearOptions { timeout: None, max_memory: 4 << 30, progress: false, initial: None }
    }
}

/// A history ready for the search: its partitions (per `:key`), each a
/// list of operations, and the interned values.
#[derive(Debug, Default)]
pub struct Prepared {
    /// (key, ops) per partition, in order of first appearance.
    pub partitions: Vec<(Option<Value>, Vec<LinOp>)>,
    /// Values and strings of the inputs.
    pub interner: Interner,
}

const EXPECTS_REGISTER: &str = ":read ops (whose :ok value is the value read) and :write ops of a value";
const EXPECTS_CAS: &str = ":read, :write and :cas ops, a :cas value being [old new]";
const EXPECTS_MUTEX: &str = ":acquire and :release ops";
const EXPECTS_KV: &str = ":get, :put and :append ops with a :key and string values";

/// Turns a Jepsen history into the search's operations, checking that
/// every client op fits `model`.
pub fn prepare(ops: &Ops, model: Model) -> Result<Prepared, JepsenError> {
    let name = model.name();
    let expects = match model {
        Model::Register => EXPECTS_REGISTER,
        Model::CasRegister => EXPECTS_CAS,
        Model::Mutex => EXPECTS_MUTEX,
        Model::Kv => EXPECTS_KV,
    };
    let mut p = Prepared { partitions: Vec::new(), interner: Interner::new() };
    let mut part_of: FxHashMap<Option<Value>, usize> = FxHashMap::default();
    for i in ops.clients() {
        let o = &ops.ops[i];
        let fits = matches!(
            (model, &*o.f),
            (Model::Register, "read" | "write")
                | (Model::CasRegister, "read" | "write" | "cas")
                | (Model::Mutex, "acquire" | "release")
                | (Model::Kv, "get" | "put" | "append")
        );
        if !fits {
            return Err(ops.model_error(i, name, expects));
        }
        // Register values are scalars (a map or a collection is another
        // workload's read: a bank's balances, a set).
        let value = ops.value(i);
        let scalar = |v: &Value| matches!(v, Value::Atom(_) | Value::Tagged(..) | Value::Float(_));
        if matches!(model, Model::Register | Model::CasRegister)
            && o.op_type != OpType::Fail
            && (&*o.f != "cas" && !scalar(&value))
        {
            return Err(ops.model_error(i, name, expects));
        }
        if o.op_type != OpType::Invoke {
            continue;
        }
        let completion = ops.completion(i);
        let (ret, known) = match completion.map(|c| c.op_type) {
            Some(OpType::Fail) => continue,
            Some(OpType::Ok) => (ops.pair[i] as u64, true),
            _ => (u64::MAX, false),
        };
        let out = completion.filter(|_| known).map(|c| ops.value_of(c));
        let it = &mut p.interner;
        let input = match &*o.f {
            "read" => Input::Read(out.map(|v| it.value(&v))),
            "write" => Input::Write(it.value(&value)),
            "cas" => match crate::jepsen::elements(&value) {
                Some([from, to]) => Input::Cas {
                    from: it.value(from),
                    to: it.value(to),
                    outcome: if known { CasOutcome::Ok } else { CasOutcome::Unknown },
                },
                _ => return Err(ops.model_error(i, name, expects)),
            },
            "acquire" => Input::Acquire,
            "release" => Input::Release,
            f => {
                let s = |v: &Value| match v {
                    Value::Atom(crate::history::Atom::Str(s)) => Some(s.to_string()),
                    v if crate::jepsen::is_nil(v) => Some(String::new()),
                    _ => None,
                };
                match f {
                    "get" => match out.as_deref().map(s) {
                        None => Input::Get(None),
                        Some(Some(x)) => Input::Get(Some(it.string(x))),
                        Some(None) => return Err(ops.model_error(ops.pair[i] as usize, name, expects)),
                    },
                    _ => match s(&value) {
                        Some(x) if f == "put" => Input::Put(it.string(x)),
                        Some(x) => Input::Append(it.string(x)),
                        None => return Err(ops.model_error(i, name, expects)),
                    },
                }
            }
        };
        let key = o.extra.iter().find(|(k, _)| name_of(k) == Some("key")).map(|(_, v)| v.clone());
        let n = p.partitions.len();
        let at = *part_of.entry(key.clone()).or_insert(n);
        if at == n {
            p.partitions.push((key, Vec::new()));
        }
        p.partitions[at].1.push(LinOp { call: i as u64, ret, input, origin: i });
    }
    Ok(p)
}

/// Checks a Jepsen history's linearizability under `model`.
pub fn check_ops(ops: &Ops, model: Model, o: &LinearOptions) -> Result<CheckResult, JepsenError> {
    let mut p = prepare(ops, model)?;
    Ok(check_prepared(&mut p, model, o, &|i| ops.node(i), &|i| {
        ops.completion(i).filter(|c| c.op_type == OpType::Ok).map(|c| ops.op_node(c))
    }))
}

/// Checks prepared partitions; `op_node(origin)` prints an op's
/// invocation and `ok_node(origin)` its `:ok` completion, if any.
pub fn check_prepared(
    p: &mut Prepared,
    model: Model,
    o: &LinearOptions,
    op_node: &dyn Fn(usize) -> Node,
    ok_node: &dyn Fn(usize) -> Option<Node>,
) -> CheckResult {
    let start = Instant::now();
    let parts = p.partitions.len();
    // Partitions are independent (P-compositionality): search them in
    // parallel, smallest first, and stop the others as soon as one is not
    // linearizable (as Porcupine does).
    let init = initial_state(p, model, o);
    let cancel = AtomicBool::new(false);
    let threads = rayon::current_num_threads().min(parts).max(1);
    let budget =
        Budget { deadline: o.timeout.map(|t| start + t), max_bytes: o.max_memory / threads, cancel: Some(&cancel) };
    let mut order: Vec<usize> = (0..parts).collect();
    order.sort_by_key(|&k| p.partitions[k].1.len());
    let base = &p.interner;
    let mut results: Vec<(usize, Outcome, u64, Interner)> = order
        .par_iter()
        .map(|&k| {
            let mut interner = base.clone();
            let lin = &p.partitions[k].1;
            let (outcome, n) = search::search(lin, init, &mut interner, &budget);
            if matches!(outcome, Outcome::NotLinearizable(_)) {
                cancel.store(true, Ordering::Relaxed);
            }
            if o.progress {
                eprintln!(
                    "isolde: linearizability: partition {} of {parts} ({} ops): {n} search steps",
                    k + 1,
                    lin.len()
                );
            }
            (k, outcome, n, interner)
        })
        .collect();
    results.sort_by_key(|r| r.0);
    let explored: u64 = results.iter().map(|r| r.2).sum();
    let mut unknown: Option<String> = None;
    for (k, outcome, _, interner) in results {
        let (key, lin) = &p.partitions[k];
        match outcome {
            Outcome::Linearizable(_) => {}
            Outcome::Unknown(why, _) => {
                if !why.starts_with("cancelled") {
                    unknown.get_or_insert(why);
                }
            }
            Outcome::NotLinearizable(w) => {
                let state = |s| crate::reports::tree::value(&model::describe_state(model, s, &interner));
                let last = w.prefix.last().map(|&i| lin[i].origin);
                let previous_ok = w.prefix.iter().rev().find_map(|&i| ok_node(lin[i].origin)).unwrap_or(Node::Nil);
                let before = last.map(op_node).unwrap_or(Node::Nil);
                let paths: Vec<Node> = w
                    .candidates
                    .iter()
                    .map(|&(c, next)| {
                        let after = match next {
                            Some(s) => map(vec![("value", state(s))]),
                            None => kw("inconsistent"),
                        };
                        Node::Vector(vec![
                            map(vec![("op", before.clone()), ("model", map(vec![("value", state(w.state))]))]),
                            map(vec![
                                ("op", ok_node(lin[c].origin).unwrap_or_else(|| op_node(lin[c].origin))),
                                ("model", after),
                            ]),
                        ])
                    })
                    .collect();
                let mut entries = vec![
                    (kw("model"), kw(model.name())),
                    (kw("analyzer"), kw("wgl")),
                    (kw("configs"), Node::Int(explored as i64)),
                    (kw("op"), ok_node(lin[w.blocked].origin).unwrap_or_else(|| op_node(lin[w.blocked].origin))),
                    (kw("previous-ok"), previous_ok),
                    (kw("last-op"), before),
                    (kw("final-paths"), Node::Set(paths)),
                    (kw("state"), state(w.state)),
                    (
                        kw("longest-prefix"),
                        Node::Vector(w.prefix.iter().map(|&i| Node::Int(lin[i].origin as i64)).collect()),
                    ),
                    (kw("longest-prefix-count"), count(w.prefix.len())),
                ];
                if let Some(why) = initial_value_hint(lin, &w, init, &interner) {
                    entries.insert(0, (kw("explanation"), Node::Str(why)));
                }
                if let Some(k) = key {
                    entries.insert(0, (kw("key"), crate::reports::tree::value(k)));
                }
                return CheckResult::new(Validity::Invalid, entries);
            }
        }
    }
    let entries = vec![
        (kw("model"), kw(model.name())),
        (kw("analyzer"), kw("wgl")),
        (kw("configs"), Node::Int(explored as i64)),
        (kw("partitions"), count(parts)),
        (kw("ops"), count(p.partitions.iter().map(|(_, l)| l.len()).sum())),
    ];
    match unknown {
        Some(why) => CheckResult::unknown(why, entries),
        None => CheckResult::new(Validity::Valid, entries),
    }
}

/// The state the search starts from: the given initial value for the
/// register models, else the model's own ([`model::init`]: `nil`, a free
/// mutex, the empty string).
fn initial_state(p: &mut Prepared, model: Model, o: &LinearOptions) -> model::Id {
    match (model, &o.initial) {
        (Model::Register | Model::CasRegister, Some(v)) => p.interner.value(v),
        _ => model::init(model),
    }
}

/// When a violation hinges on the register's initial value, says so: the
/// op the search could not place (or one that could have come next and
/// contradicts the state) reads, or compares-and-sets from, a value that
/// no write or CAS wrote before it returned, and it began before any
/// write returned, so the only value it could have seen besides the
/// writes in flight is the initial one. That value, as the initial value,
/// is what would explain the op.
fn initial_value_hint(lin: &[LinOp], w: &search::Witness, init: model::Id, interner: &Interner) -> Option<String> {
    let first_write_return = lin.iter().filter(|o| writes(&o.input).is_some()).map(|o| o.ret).min().unwrap_or(u64::MAX);
    let inconsistent = w.candidates.iter().filter(|(_, next)| next.is_none()).map(|&(c, _)| c);
    let op = std::iter::once(w.blocked).chain(inconsistent).find_map(|i| {
        let o = &lin[i];
        let (verb, v) = match o.input {
            Input::Read(Some(v)) => ("reads", v),
            Input::Cas { from, .. } => ("compares-and-sets from", from),
            _ => return None,
        };
        let unwritten = !lin.iter().any(|x| writes(&x.input) == Some(v) && x.call < o.ret);
        (v != init && o.call < first_write_return && unwritten).then_some((verb, v))
    })?;
    let (verb, v) = op;
    let show = |id: model::Id| interner.value_of(id).to_string();
    let started = match init {
        model::NIL => "nil (Knossos's default)".to_string(),
        i => format!("{} (--initial-value {})", show(i), show(i)),
    };
    Some(format!(
        "the op {verb} {v}, which no write wrote before it returned, and it began before any write returned, \
         so the register could still hold its initial value {started}: if the register started at {v}, \
         pass --initial-value {v}",
        v = show(v)
    ))
}

/// The value an op writes: a write's, or a CAS's new value.
fn writes(input: &Input) -> Option<model::Id> {
    match *input {
        Input::Write(v) => Some(v),
        Input::Cas { to, .. } => Some(to),
        _ => None,
    }
}
