//! The printable value tree every printer writes (EDN's data model), and
//! the history's values and operations as trees; [`super::result_map`]
//! builds Elle's result map from them.
//!
//! Values of the history (appended elements, register values, list reads)
//! are stored as identities (see [`crate::history`]); [`val`] turns one back
//! into the value as it was written. Ops print with exactly the fields the
//! input gave them ([`op`]).

use crate::history::{field, Atom, History, Mop, MopValue, OpId, Value};

/// A printable value: EDN's data model, which JSON output flattens.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// nil / null.
    Nil,
    /// Boolean.
    Bool(bool),
    /// Integer.
    Int(i64),
    /// An integer beyond 64 bits, spelled as in [`Atom::BigInt`] (EDN prints
    /// the spelling, JSON the bare number).
    BigInt(String),
    /// Float.
    Float(f64),
    /// Keyword (without colon).
    Keyword(String),
    /// String.
    Str(String),
    /// Symbol (e.g. `...`).
    Symbol(String),
    /// Vector.
    Vector(Vec<Node>),
    /// List (printed `(...)` in EDN).
    List(Vec<Node>),
    /// Set.
    Set(Vec<Node>),
    /// Map, entries in print order.
    Map(Vec<(Node, Node)>),
    /// A tagged value such as `#uuid "..."` (JSON prints the value alone).
    Tagged(String, Box<Node>),
    /// An operation of the history, printed as [`op`] prints it. Reports
    /// cite operations by id and the printers expand them as they write, so
    /// the tree stays small however large the operations are.
    Op(OpId),
}

fn kw(s: &str) -> Node {
    Node::Keyword(s.to_string())
}

/// An atom as a node.
pub fn atom(a: &Atom) -> Node {
    match a {
        Atom::Nil => Node::Nil,
        Atom::Bool(b) => Node::Bool(*b),
        Atom::Int(i) => Node::Int(*i),
        Atom::BigInt(d) => Node::BigInt(d.to_string()),
        Atom::Keyword(k) => Node::Keyword(k.to_string()),
        Atom::Str(s) => Node::Str(s.to_string()),
        Atom::Symbol(s) => Node::Symbol(s.to_string()),
    }
}

/// A general value as a node.
pub fn value(v: &Value) -> Node {
    match v {
        Value::Atom(a) => atom(a),
        Value::Float(f) => Node::Float(*f),
        Value::Vector(xs) => Node::Vector(xs.iter().map(value).collect()),
        Value::List(xs) => Node::List(xs.iter().map(value).collect()),
        Value::Set(xs) => Node::Set(xs.iter().map(value).collect()),
        Value::Map(kvs) => Node::Map(kvs.iter().map(|(k, v)| (value(k), value(v))).collect()),
        Value::Tagged(t, v) => Node::Tagged(t.to_string(), Box::new(value(v))),
    }
}

/// A value identity as the value it stands for.
pub fn val(h: &History, v: i64) -> Node {
    match h.value(v) {
        Some(x) => value(&x),
        None => Node::Int(v),
    }
}

/// A vector of value identities.
pub fn vals(h: &History, xs: &[i64]) -> Node {
    Node::Vector(xs.iter().map(|&x| val(h, x)).collect())
}

/// A value identity, or nil.
pub fn opt_val(h: &History, v: Option<i64>) -> Node {
    v.map(|v| val(h, v)).unwrap_or(Node::Nil)
}

/// A micro-op as Elle prints it: `[:append :x 1]`, `[:r :x [1 2]]`,
/// `[:delete :x]`. A predicate read needs its entries: see [`mop_at`].
pub fn mop(h: &History, m: &Mop) -> Node {
    let v = match m.value {
        MopValue::Nil => Node::Nil,
        MopValue::Int(i) => val(h, i),
        MopValue::List { .. } => vals(h, h.list(m.value)),
        MopValue::Entries(_) => Node::Map(Vec::new()),
    };
    match m.f {
        crate::history::MopFn::Delete => Node::Vector(vec![kw(m.f.name()), value(h.key(m.key))]),
        _ => Node::Vector(vec![kw(m.f.name()), value(h.key(m.key)), v]),
    }
}

/// The micro-op stored at position `at` of `mops`, as Elle prints it; a
/// predicate read prints with its result map: `[:rp :true {:x 1}]`.
pub fn mop_at(h: &History, mops: &[Mop], at: usize) -> Node {
    let Some(m) = mops.get(at) else { return Node::Nil };
    if m.f != crate::history::MopFn::PredRead {
        return mop(h, m);
    }
    let result = match m.value {
        MopValue::Entries(_) => Node::Map(
            History::pred_entries(mops, at)
                .iter()
                .map(|e| (value(h.key(e.key)), if let MopValue::Int(v) = e.value { val(h, v) } else { Node::Nil }))
                .collect(),
        ),
        _ => Node::Nil,
    };
    Node::Vector(vec![kw("rp"), value(h.key(m.key)), result])
}

/// An op's `:value`: its micro-ops (predicate reads with their entries), or
/// the map of a closed-predicate `:init`.
pub fn op_value(h: &History, o: &crate::history::Op) -> Node {
    let mops = h.mops_of(o);
    if o.fields & field::VALUE_MAP != 0 {
        let entry = |m: &Mop| (value(h.key(m.key)), if let MopValue::Int(v) = m.value { val(h, v) } else { Node::Nil });
        return Node::Map(mops.iter().map(entry).collect());
    }
    Node::Vector(
        mops.iter()
            .enumerate()
            .filter(|(_, m)| m.f != crate::history::MopFn::PredEntry)
            .map(|(i, _)| mop_at(h, mops, i))
            .collect(),
    )
}

/// An op as a Jepsen op map: `:index` (always: jepsen.history assigns one),
/// then those of `:time`, `:type`, `:process`, `:f` and `:value` the input
/// gave, in that order (Elle's print order), then the extra fields in input
/// order. Nothing absent from the input is printed.
pub fn op(h: &History, id: OpId) -> Node {
    let o = h.op(id);
    let has = |bit: u8| o.fields & bit != 0;
    let mut m = vec![(kw("index"), Node::Int(o.index))];
    if has(field::TIME) {
        m.push((kw("time"), if has(field::TIME_NIL) { Node::Nil } else { Node::Int(o.time) }));
    }
    m.push((kw("type"), kw(o.op_type.name())));
    m.push((kw("process"), Node::Int(o.process)));
    if has(field::F) {
        m.push((kw("f"), atom(h.f_of(o))));
    }
    if has(field::VALUE) {
        let v = if has(field::VALUE_NIL) { Node::Nil } else { op_value(h, o) };
        m.push((kw("value"), v));
    }
    for (k, v) in h.extras_of(o) {
        m.push((value(k), value(v)));
    }
    Node::Map(m)
}
