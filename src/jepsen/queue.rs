//! Jepsen's queue checkers: `jepsen.checker/queue` and
//! `jepsen.checker/total-queue`.
//!
//! Clients `:enqueue` elements and `:dequeue` them (an `:ok` dequeue's
//! value is the element it took); a `:drain` takes every element left (its
//! `:ok` value is the collection of them).
//!
//! # `queue`: every dequeue must come from somewhere
//!
//! Every `:enqueue` invocation (whatever its completion, `:fail` included,
//! as Jepsen's filter reads) and every `:ok` `:dequeue`, in history order,
//! is applied to a sequential queue model, Knossos's `unordered-queue` (a
//! multiset: a dequeue must find its element) or `fifo-queue` (a dequeue
//! must take the head). The first dequeue the model cannot take ends the
//! check: `{:valid? false, :error "can't dequeue 3"}` (Knossos's message,
//! the value as Clojure's `str` prints it). Otherwise `{:valid? true,
//! :final-queue ...}`, the model after the last op, printed as Jepsen
//! prints the record. Drains are not looked at (Jepsen's filter keeps only
//! enqueues and dequeues). One pass: O(n).
//!
//! # `total-queue`: what goes in must come out
//!
//! Each `:ok` drain is first expanded into one `:ok` dequeue per element
//! (Jepsen's `expand-queue-drain-ops`); drain invocations and `:fail`ed
//! drains are dropped, and a crashed (`:info`) drain cannot be expanded, so
//! the answer is `unknown` with Jepsen's message. Then, over multisets
//! (counts kept): `attempts` the enqueue invocations' values, `enqueues`
//! the `:ok` enqueues', `dequeues` the `:ok` dequeues':
//!
//! - `ok` = dequeues ∩ attempts (each element as often as in both);
//! - `unexpected` = the dequeues of elements never attempted;
//! - `duplicated` = dequeues − attempts − unexpected (dequeued more often
//!   than attempted);
//! - `lost` = enqueues − dequeues (acknowledged, never dequeued);
//! - `recovered` = ok − enqueues (indeterminate enqueues that came out).
//!
//! Valid iff nothing is lost or unexpected (duplicates are reported, not
//! fatal, as in Jepsen). The map has Jepsen's counts (a multiset's count is
//! its size, repeats included) and the four multisets, printed as Jepsen
//! prints them (a set literal whose repeats stand for counts, sorted here).
//! Sorted runs merged: O(n log n).
//!
//! isolde adds `:op`, the dequeue the model refused, to `queue`'s invalid
//! map, and checks only client ops (Jepsen's filters see every op).

use super::elem::Elem;
use super::result::{count, kw, CheckResult, Node, Validity};
use super::{JepsenError, OpType, Ops};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

const EXPECTS: &str = ":enqueue ops of an element, :dequeue ops whose :ok value is the element taken, and :drain ops \
                       whose :ok value is a collection of elements";

/// Knossos's queue models, for `queue`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum QueueModel {
    /// `knossos.model/unordered-queue`: a dequeue takes any pending element.
    #[default]
    Unordered,
    /// `knossos.model/fifo-queue`: a dequeue takes the oldest one.
    Fifo,
}

/// Checks that every client op is a queue op; returns the model error of
/// the first that is not.
fn fit(ops: &Ops, name: &'static str) -> Result<(), JepsenError> {
    for i in ops.clients() {
        let o = &ops.ops[i];
        let ok = match &*o.f {
            "enqueue" | "dequeue" => true,
            "drain" => o.op_type != OpType::Ok || ops.members(o).is_some(),
            _ => false,
        };
        if !ok {
            return Err(ops.model_error(i, name, EXPECTS));
        }
    }
    Ok(())
}

/// Jepsen's `queue` checker under `model`.
pub fn check_queue(ops: &Ops, model: QueueModel) -> Result<CheckResult, JepsenError> {
    fit(ops, "queue")?;
    let mut state = Model::new(model);
    for i in ops.clients() {
        let o = &ops.ops[i];
        let step = match (&*o.f, o.op_type) {
            ("enqueue", OpType::Invoke) => {
                state.enqueue(ops.element(o));
                Ok(())
            }
            ("dequeue", OpType::Ok) => state.dequeue(ops.element(o)),
            _ => Ok(()),
        };
        if let Err(msg) = step {
            return Ok(CheckResult::new(
                Validity::Invalid,
                vec![(kw("error"), Node::Str(msg)), (kw("op"), ops.node(i))],
            ));
        }
    }
    Ok(CheckResult::new(Validity::Valid, vec![(kw("final-queue"), state.node())]))
}

/// The state of a Knossos queue model.
enum Model<'a> {
    /// Pending elements and their counts.
    Unordered(FxHashMap<Elem<'a>, usize>),
    /// Pending elements, oldest first.
    Fifo(VecDeque<Elem<'a>>),
}

impl<'a> Model<'a> {
    fn new(m: QueueModel) -> Model<'a> {
        match m {
            QueueModel::Unordered => Model::Unordered(FxHashMap::default()),
            QueueModel::Fifo => Model::Fifo(VecDeque::new()),
        }
    }

    fn enqueue(&mut self, e: Elem<'a>) {
        match self {
            Model::Unordered(m) => *m.entry(e).or_insert(0) += 1,
            Model::Fifo(q) => q.push_back(e),
        }
    }

    /// Takes `e`, or says why the model cannot (Knossos's message).
    fn dequeue(&mut self, e: Elem<'a>) -> Result<(), String> {
        match self {
            Model::Unordered(m) => match m.get_mut(&e) {
                Some(n) => {
                    *n -= 1;
                    if *n == 0 {
                        m.remove(&e);
                    }
                    Ok(())
                }
                None => Err(format!("can't dequeue {}", clj_str(&e))),
            },
            Model::Fifo(q) => match q.front() {
                None => Err(format!("can't dequeue {} from empty queue", clj_str(&e))),
                Some(head) if *head == e => {
                    q.pop_front();
                    Ok(())
                }
                Some(_) => Err(format!("can't dequeue {}", clj_str(&e))),
            },
        }
    }

    /// The model as Jepsen prints the record.
    fn node(&self) -> Node {
        let (tag, pending) = match self {
            Model::Unordered(m) => {
                let mut runs: Vec<(Elem, usize)> = m.iter().map(|(e, &n)| (e.clone(), n)).collect();
                runs.sort_unstable();
                ("knossos.model.UnorderedQueue", multiset_node(&runs))
            }
            Model::Fifo(q) => ("knossos.model.FIFOQueue", Node::List(q.iter().map(elem_node).collect())),
        };
        Node::Tagged(tag.into(), Box::new(Node::Map(vec![(kw("pending"), pending)])))
    }
}

/// Clojure's `str` of an element: strings bare, `nil` empty, the rest as
/// EDN.
fn clj_str(e: &Elem) -> String {
    use crate::history::{Atom, Value};
    match e.to_value() {
        Value::Atom(Atom::Str(s)) => s.to_string(),
        Value::Atom(Atom::Nil) => String::new(),
        v => v.to_string(),
    }
}

fn elem_node(e: &Elem) -> Node {
    match e {
        Elem::Int(n) => Node::Int(*n),
        Elem::Val(v) => crate::reports::tree::value(v),
    }
}

/// A multiset as Jepsen prints one: a set literal, each element repeated
/// as often as it occurs.
fn multiset_node(runs: &[(Elem, usize)]) -> Node {
    Node::Set(runs.iter().flat_map(|(e, n)| std::iter::repeat_n(elem_node(e), *n)).collect())
}

/// A multiset: sorted distinct elements with their counts.
type Multiset<'a> = Vec<(Elem<'a>, usize)>;

/// The multiset of some elements.
fn multiset(xs: Vec<Elem<'_>>) -> Multiset<'_> {
    super::elem::counted(xs)
}

/// Merges two multisets element by element: `f(count in a, count in b)` is
/// the count kept (0 drops the element).
fn merge<'a>(a: &Multiset<'a>, b: &Multiset<'a>, f: impl Fn(usize, usize) -> usize) -> Multiset<'a> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let (e, x, y) = match (a.get(i), b.get(j)) {
            (Some((ea, x)), Some((eb, y))) if ea == eb => {
                i += 1;
                j += 1;
                (ea, *x, *y)
            }
            (Some((ea, x)), Some((eb, _))) if ea < eb => {
                i += 1;
                (ea, *x, 0)
            }
            (Some((ea, x)), None) => {
                i += 1;
                (ea, *x, 0)
            }
            (_, Some((eb, y))) => {
                j += 1;
                (eb, 0, *y)
            }
            (None, None) => break,
        };
        let n = f(x, y);
        if n > 0 {
            out.push((e.clone(), n));
        }
    }
    out
}

fn size(m: &Multiset) -> usize {
    m.iter().map(|(_, n)| n).sum()
}

/// The three multisets total-queue reads from a history.
struct Collected<'a> {
    attempts: Vec<Elem<'a>>,
    enqueues: Vec<Elem<'a>>,
    dequeues: Vec<Elem<'a>>,
}

/// Gathers the attempts, acknowledged enqueues and dequeues (drains
/// expanded); `Err` holds the first crashed drain.
fn collect(ops: &Ops) -> Result<Collected<'_>, usize> {
    let mut c = Collected { attempts: Vec::new(), enqueues: Vec::new(), dequeues: Vec::new() };
    for i in ops.clients() {
        let o = &ops.ops[i];
        match (&*o.f, o.op_type) {
            ("enqueue", OpType::Invoke) => c.attempts.push(ops.element(o)),
            ("enqueue", OpType::Ok) => c.enqueues.push(ops.element(o)),
            ("dequeue", OpType::Ok) => c.dequeues.push(ops.element(o)),
            ("drain", OpType::Ok) => c.dequeues.extend(ops.members(o).into_iter().flat_map(|m| m.iter())),
            ("drain", OpType::Info) => return Err(i),
            _ => {}
        }
    }
    Ok(c)
}

/// Jepsen's `total-queue` checker.
pub fn check_total(ops: &Ops) -> Result<CheckResult, JepsenError> {
    fit(ops, "total-queue")?;
    let c = match collect(ops) {
        Ok(c) => c,
        Err(i) => {
            let why = format!("Not sure how to handle a crashed drain operation: {}", super::result::edn(&ops.node(i)));
            return Ok(CheckResult::unknown(why, Vec::new()));
        }
    };
    let (attempts, enqueues, dequeues) = (multiset(c.attempts), multiset(c.enqueues), multiset(c.dequeues));
    let ok = merge(&dequeues, &attempts, |d, a| d.min(a));
    let unexpected = merge(&dequeues, &attempts, |d, a| if a == 0 { d } else { 0 });
    let over = merge(&dequeues, &attempts, |d, a| d.saturating_sub(a));
    let duplicated = merge(&over, &unexpected, |o, u| o.saturating_sub(u));
    let lost = merge(&enqueues, &dequeues, |e, d| e.saturating_sub(d));
    let recovered = merge(&ok, &enqueues, |o, e| o.saturating_sub(e));
    let valid = if lost.is_empty() && unexpected.is_empty() { Validity::Valid } else { Validity::Invalid };
    Ok(CheckResult::new(
        valid,
        vec![
            (kw("attempt-count"), count(size(&attempts))),
            (kw("acknowledged-count"), count(size(&enqueues))),
            (kw("ok-count"), count(size(&ok))),
            (kw("unexpected-count"), count(size(&unexpected))),
            (kw("duplicated-count"), count(size(&duplicated))),
            (kw("lost-count"), count(size(&lost))),
            (kw("recovered-count"), count(size(&recovered))),
            (kw("lost"), multiset_node(&lost)),
            (kw("unexpected"), multiset_node(&unexpected)),
            (kw("duplicated"), multiset_node(&duplicated)),
            (kw("recovered"), multiset_node(&recovered)),
        ],
    ))
}
