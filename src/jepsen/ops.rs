//! The op model shared by Jepsen's checkers and the linearizability check:
//! one [`Op`] per op map, its `:value` kept compact where it has one of the
//! bank, counter and set shapes ([`OpValue`]) and as written otherwise, and
//! each completion paired with its invocation as `jepsen.history` pairs
//! them.
//!
//! Checkers that need the value as written (to echo an op back, or to
//! match on any shape) get it from [`Ops::value`]; the bank, counter and
//! set checkers read the compact forms directly.

use super::result::Node;
use super::{int_of, name_of, JepsenError};
use crate::history::{Atom, Value};
use crate::ingest::op_value::{KeyTable, OpValue};
use crate::ingest::{read_op_maps, read_op_maps_bytes, Format, RawName, RawOpMap, ValueReader};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::path::Path;

/// An op's `:type`: the same four outcomes as the columnar history's.
pub use crate::history::OpType;

/// One op map.
#[derive(Clone, Debug)]
pub struct Op {
    /// `:index`, or the op's position in the input when it has none.
    pub index: i64,
    /// `:type`.
    pub op_type: OpType,
    /// `:f`'s name (`""` when absent).
    pub f: Cow<'static, str>,
    /// `:process` (`nil` when absent); an integer for client ops.
    pub process: Value,
    /// `:time` in nanoseconds, when given.
    pub time: Option<i64>,
    /// `:value` (`nil` when absent): compact, or as written; its keys are
    /// in [`Ops::keys`], and [`Ops::value`] gives it as written.
    pub value: OpValue,
    /// Other fields (`:error` ...), in input order.
    pub extra: Vec<(Value, Value)>,
    /// 1-based line of the op map in its file.
    pub line: u32,
    /// Whether the input gave `:value` (for printing the op back).
    pub has_value: bool,
}

impl Op {
    /// Whether this is a client op (an integer `:process`, or none), as
    /// `jepsen.history/client-op?`; `:nemesis` ops are not.
    pub fn is_client(&self) -> bool {
        matches!(self.process, Value::Atom(Atom::Int(_)) | Value::Atom(Atom::Nil))
    }
}

/// How op values are read: both give the same [`Ops`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reading {
    /// Compact values straight from EDN text (the default).
    #[default]
    Fast,
    /// Every value parsed into a generic tree first, then made compact.
    Generic,
}

/// No paired op.
pub const NONE: u32 = u32::MAX;

/// A history of [`Op`]s, with invocations and completions paired.
#[derive(Clone, Debug, Default)]
pub struct Ops {
    /// The file the ops were read from (for messages).
    pub source: String,
    /// The ops in input order.
    pub ops: Vec<Op>,
    /// For each op, the position of its partner (an invocation's
    /// completion, a completion's invocation), or [`NONE`].
    pub pair: Vec<u32>,
    /// The interned map keys of the compact values
    /// ([`crate::ingest::op_value::Key`]).
    pub keys: Vec<Value>,
}

impl Ops {
    /// Reads a history file (`-` is standard input).
    pub fn read(path: &Path, format: Format) -> Result<Ops, JepsenError> {
        Ops::read_with(path, format, Reading::Fast)
    }

    /// Reads a history file, its values as `reading` says.
    pub fn read_with(path: &Path, format: Format, reading: Reading) -> Result<Ops, JepsenError> {
        let source = path.display().to_string();
        let keys = KeyTable::default();
        let values = ValueReader { keys: &keys, fast: reading == Reading::Fast };
        let ops = read_op_maps(path, format, values, &|m| op_of(&source, m))??;
        Ops::from_ops(&source, ops, keys.into_values())
    }

    /// Reads a history from bytes named `source` in messages.
    pub fn read_bytes(source: &str, bytes: &[u8], format: Format) -> Result<Ops, JepsenError> {
        Ops::read_bytes_with(source, bytes, format, Reading::Fast)
    }

    /// [`Ops::read_bytes`], its values as `reading` says.
    pub fn read_bytes_with(source: &str, bytes: &[u8], format: Format, reading: Reading) -> Result<Ops, JepsenError> {
        let keys = KeyTable::default();
        let values = ValueReader { keys: &keys, fast: reading == Reading::Fast };
        let ops = read_op_maps_bytes(source, bytes, format, values, &|m| op_of(source, m))??;
        Ops::from_ops(source, ops, keys.into_values())
    }

    /// Builds the history from ops in input order (an op without `:index`
    /// gets its position) whose compact values' keys are `keys`, and pairs
    /// them.
    pub fn from_ops(source: &str, mut ops: Vec<Op>, keys: Vec<Value>) -> Result<Ops, JepsenError> {
        if ops.is_empty() {
            return Err(JepsenError::Malformed {
                source_name: source.to_string(),
                line: 1,
                what: "the history holds no op".into(),
            });
        }
        for (pos, o) in ops.iter_mut().enumerate() {
            if o.index == NO_INDEX {
                o.index = pos as i64;
            }
        }
        let pair = pair(&ops);
        Ok(Ops { source: source.to_string(), ops, pair, keys })
    }

    /// The completion of invocation `i`, if any.
    pub fn completion(&self, i: usize) -> Option<&Op> {
        match self.pair[i] {
            NONE => None,
            j if self.ops[i].op_type == OpType::Invoke => Some(&self.ops[j as usize]),
            _ => None,
        }
    }

    /// The invocation of completion `i`, if any.
    pub fn invocation(&self, i: usize) -> Option<usize> {
        match self.pair[i] {
            NONE => None,
            j if self.ops[i].op_type != OpType::Invoke => Some(j as usize),
            _ => None,
        }
    }

    /// The client ops' positions.
    pub fn clients(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.ops.len()).filter(|&i| self.ops[i].is_client())
    }

    /// Op `i`'s `:value` as written.
    pub fn value(&self, i: usize) -> Cow<'_, Value> {
        self.value_of(&self.ops[i])
    }

    /// An op's `:value` as written (borrowed when it is kept so).
    pub fn value_of<'s>(&'s self, o: &'s Op) -> Cow<'s, Value> {
        match &o.value {
            OpValue::Other(v) => Cow::Borrowed(v),
            v => Cow::Owned(v.to_value(&self.keys)),
        }
    }

    /// Every op's `:value` as written, by position (for checkers that keep
    /// references to values).
    pub fn values(&self) -> Vec<Cow<'_, Value>> {
        self.ops.iter().map(|o| self.value_of(o)).collect()
    }

    /// Op `i` as a Jepsen op map.
    pub fn node(&self, i: usize) -> Node {
        self.op_node(&self.ops[i])
    }

    /// An op as a Jepsen op map (fields in Jepsen's print order, the value
    /// as written).
    pub fn op_node(&self, o: &Op) -> Node {
        let kw = |s: &str| Node::Keyword(s.to_string());
        let mut m = vec![(kw("type"), kw(o.op_type.name())), (kw("f"), kw(&o.f))];
        if o.has_value {
            m.push((kw("value"), crate::reports::tree::value(&self.value_of(o))));
        }
        if !super::is_nil(&o.process) {
            m.push((kw("process"), crate::reports::tree::value(&o.process)));
        }
        if let Some(t) = o.time {
            m.push((kw("time"), Node::Int(t)));
        }
        for (k, v) in &o.extra {
            m.push((crate::reports::tree::value(k), crate::reports::tree::value(v)));
        }
        m.push((kw("index"), Node::Int(o.index)));
        Node::Map(m)
    }
}

/// Pairs each completion with the open invocation of its process.
fn pair(ops: &[Op]) -> Vec<u32> {
    let mut pair = vec![NONE; ops.len()];
    let mut open: FxHashMap<&Value, usize> = FxHashMap::default();
    for (i, o) in ops.iter().enumerate() {
        if o.op_type == OpType::Invoke {
            // A second invocation on a process leaves the first pending.
            open.insert(&o.process, i);
        } else if let Some(j) = open.remove(&o.process) {
            pair[i] = j as u32;
            pair[j] = i as u32;
        }
    }
    pair
}

/// The index of an op read without one, until [`Ops::from_ops`] gives it
/// its position.
const NO_INDEX: i64 = i64::MIN;

fn op_of(source: &str, m: RawOpMap<'_>) -> Result<Op, JepsenError> {
    let line = m.line;
    let bad = |what: String| JepsenError::Malformed { source_name: source.to_string(), line, what };
    let op_type = match &m.op_type {
        Some(RawName::Name(n)) => type_of(n),
        Some(RawName::Other(v)) => name_of(v).and_then(|n| type_of(n.as_bytes())),
        None => return Err(bad("expected a :type in the op map".into())),
    };
    let Some(op_type) = op_type else {
        let found = match m.op_type {
            Some(RawName::Name(n)) => format!(":{}", String::from_utf8_lossy(n)),
            Some(RawName::Other(v)) => v.to_string(),
            None => String::new(),
        };
        return Err(bad(format!("expected :type :invoke, :ok, :fail or :info, found {found}")));
    };
    let f = match &m.f {
        Some(RawName::Name(n)) => f_name(n),
        Some(RawName::Other(v)) => match name_of(v) {
            Some(n) => f_name(n.as_bytes()),
            None => Cow::Owned(v.to_string()),
        },
        None => Cow::Borrowed(""),
    };
    let index = match &m.index {
        None => NO_INDEX,
        Some(v) => {
            int_of(v).filter(|&i| i != NO_INDEX).ok_or_else(|| bad(format!("expected an integer :index, found {v}")))?
        }
    };
    let has_value = m.value.is_some();
    Ok(Op {
        index,
        op_type,
        f,
        process: m.process.unwrap_or(Value::Atom(Atom::Nil)),
        time: m.time.as_ref().and_then(int_of),
        value: m.value.unwrap_or(OpValue::Nil),
        extra: m.extra,
        line,
        has_value,
    })
}

/// The `:f` names of the workloads, shared rather than allocated per op.
const F_NAMES: &[&str] = &[
    "read", "write", "cas", "acquire", "release", "add", "transfer", "get", "put", "append", "txn", "enqueue",
    "dequeue", "drain", "generate",
];

fn f_name(n: &[u8]) -> Cow<'static, str> {
    match F_NAMES.iter().find(|f| f.as_bytes() == n) {
        Some(f) => Cow::Borrowed(f),
        None => Cow::Owned(String::from_utf8_lossy(n).into_owned()),
    }
}

fn type_of(n: &[u8]) -> Option<OpType> {
    match n {
        b"invoke" => Some(OpType::Invoke),
        b"ok" => Some(OpType::Ok),
        b"fail" => Some(OpType::Fail),
        b"info" => Some(OpType::Info),
        _ => None,
    }
}
