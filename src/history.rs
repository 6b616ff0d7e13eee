//! The history model: a compact, columnar record of every client operation.
//!
//! Ingest builds a [`History`] once; every analysis reads it and never mutates
//! it. Operations live in one vector in history order; their micro-operations
//! live in one flat vector (each op holds a range into it), and the elements of
//! list reads live in one flat `i64` arena. Keys are interned to dense
//! [`KeyId`]s. An operation's position in [`History::ops`] is its identity
//! throughout the analysis ([`OpId`]); Elle's `:index` is kept alongside for
//! reporting.

use rustc_hash::FxHashMap;
use std::fmt;

/// Position of an operation in [`History::ops`]; the identity of a transaction
/// in every later stage (graph vertices are `OpId`s of completions).
pub type OpId = u32;

/// Marker for "no such op" in `u32` link fields.
pub const NONE: u32 = u32::MAX;

/// Dense id of an interned key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct KeyId(pub u32);

/// The `:type` of an operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum OpType {
    /// The client began the operation.
    Invoke,
    /// The operation definitely committed.
    Ok,
    /// The operation definitely did not take effect.
    Fail,
    /// The outcome is unknown: it may or may not have taken effect.
    Info,
}

impl OpType {
    /// Elle's keyword name, without the colon.
    pub fn name(self) -> &'static str {
        match self {
            OpType::Invoke => "invoke",
            OpType::Ok => "ok",
            OpType::Fail => "fail",
            OpType::Info => "info",
        }
    }
}

/// The function of a micro-operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MopFn {
    /// `[:append k v]`: append element `v` to the list at `k`.
    Append,
    /// `[:r k v]`: read `k`, observing `v` (`nil` when unknown or initial).
    Read,
    /// `[:w k v]`: blind write of `v` to the register at `k`.
    Write,
}

impl MopFn {
    /// Elle's keyword name, without the colon.
    pub fn name(self) -> &'static str {
        match self {
            MopFn::Append => "append",
            MopFn::Read => "r",
            MopFn::Write => "w",
        }
    }
}

/// The value slot of a micro-operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MopValue {
    /// `nil` (or absent, as in the two-element read `[:r k]`).
    Nil,
    /// An integer: an appended element, a written or read register value.
    Int(i64),
    /// A list read: `len` elements starting at `start` in [`History::elements`].
    /// `[]` is a list of length 0, distinct from `nil` when printed.
    List {
        /// First element's position in the arena.
        start: u32,
        /// Number of elements.
        len: u32,
    },
}

/// One micro-operation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Mop {
    /// What the micro-op does.
    pub f: MopFn,
    /// The key it touches.
    pub key: KeyId,
    /// What it wrote or observed.
    pub value: MopValue,
}

/// A printable EDN atom: how a key or an op's `:f` was spelled in the input,
/// kept so reports print them exactly as Elle would (`:x`, `12`, `"x"`).
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Atom {
    /// `nil`.
    Nil,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A keyword, stored without its leading colon (`"x"` for `:x`).
    Keyword(Box<str>),
    /// A string.
    Str(Box<str>),
    /// A bare symbol.
    Symbol(Box<str>),
}

impl fmt::Display for Atom {
    /// Renders the atom as Clojure's `pr-str` would.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Nil => f.write_str("nil"),
            Atom::Bool(b) => write!(f, "{b}"),
            Atom::Int(i) => write!(f, "{i}"),
            Atom::Keyword(k) => write!(f, ":{k}"),
            Atom::Str(s) => write_edn_string(f, s),
            Atom::Symbol(s) => f.write_str(s),
        }
    }
}

/// Writes `s` as an EDN/Clojure string literal with escapes.
pub fn write_edn_string(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// A general EDN value, used only for the rare extra fields of an op (such as
/// `:error`) that the analysis ignores but reports print back.
#[derive(Clone, PartialEq, Debug)]
pub enum Value {
    /// An atom (nil, bool, int, keyword, string, symbol).
    Atom(Atom),
    /// A floating-point number.
    Float(f64),
    /// `[...]`.
    Vector(Vec<Value>),
    /// `(...)`.
    List(Vec<Value>),
    /// `#{...}`.
    Set(Vec<Value>),
    /// `{...}` with entries in input order.
    Map(Vec<(Value, Value)>),
    /// `#tag value`.
    Tagged(Box<str>, Box<Value>),
}

/// One operation of the history (an invocation or a completion).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Op {
    /// Jepsen's `:index` (given, or assigned densely in input order).
    pub index: i64,
    /// `:time` in nanoseconds, `-1` when absent.
    pub time: i64,
    /// `:type`.
    pub op_type: OpType,
    /// `:process` (client ops always have an integer process).
    pub process: i64,
    /// `:f`, interned in [`History::fs`].
    pub f: u32,
    /// First micro-op in [`History::mops`].
    pub mop_start: u32,
    /// Number of micro-ops.
    pub mop_len: u32,
    /// For an invocation, its completion; for a completion, its invocation;
    /// [`NONE`] when unpaired.
    pub pair: u32,
    /// Extra fields, as an index into [`History::extras`]; [`NONE`] if none.
    pub extras: u32,
    /// 1-based line in the source file where the op starts (0 if unknown).
    pub line: u32,
}

impl Op {
    /// True for `:ok` completions.
    pub fn is_ok(&self) -> bool {
        self.op_type == OpType::Ok
    }
    /// True for `:invoke`.
    pub fn is_invoke(&self) -> bool {
        self.op_type == OpType::Invoke
    }
}

/// A whole history of client operations, built once by ingest.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// Where the history came from (file name), for messages.
    pub source: String,
    /// Client operations in history order.
    pub ops: Vec<Op>,
    /// All micro-operations, grouped by op.
    pub mops: Vec<Mop>,
    /// Elements of every list read, grouped by mop.
    pub elements: Vec<i64>,
    /// Interned keys: `keys[k.0]` is how key `k` was written.
    pub keys: Vec<Atom>,
    /// Interned `:f` values.
    pub fs: Vec<Atom>,
    /// Extra op fields (key, value) in input order, per op that has any.
    pub extras: Vec<Vec<(Value, Value)>>,
    /// Number of non-client operations (e.g. `:process :nemesis`) that were
    /// read and counted but are not part of the analysis.
    pub nonclient_ops: usize,
    /// Number of micro-operations present in the input that did not happen
    /// and so are not part of the history: dbcop events marked unsuccessful,
    /// and Cobra's garbage-collection reads. Counted so that nothing in the
    /// input is dropped silently (reports show the count when it is not 0).
    pub dropped_events: usize,
    /// Number of transactions the input marks committed that were read as
    /// indeterminate (`:info`) because one of their events failed (dbcop;
    /// see `isolde analyze --failed-events`). Reports show the count when it
    /// is not 0.
    pub indeterminate_txns: usize,
    /// True when the input format can express only read-write registers
    /// (dbcop, PolySI text, Cobra), so that `--workload auto` picks
    /// rw-register even when the micro-ops alone cannot tell (a history of
    /// reads of the initial state only).
    pub registers_only: bool,
}

impl History {
    /// The micro-ops of an op.
    #[inline]
    pub fn mops_of(&self, op: &Op) -> &[Mop] {
        &self.mops[op.mop_start as usize..(op.mop_start + op.mop_len) as usize]
    }

    /// The elements of a list value (empty for non-lists).
    #[inline]
    pub fn list(&self, v: MopValue) -> &[i64] {
        match v {
            MopValue::List { start, len } => &self.elements[start as usize..(start + len) as usize],
            _ => &[],
        }
    }

    /// The op at a position.
    #[inline]
    pub fn op(&self, id: OpId) -> &Op {
        &self.ops[id as usize]
    }

    /// The key's spelling in the input.
    pub fn key(&self, k: KeyId) -> &Atom {
        &self.keys[k.0 as usize]
    }

    /// The op's `:f`.
    pub fn f_of(&self, op: &Op) -> &Atom {
        &self.fs[op.f as usize]
    }

    /// Extra fields of an op (empty if none).
    pub fn extras_of(&self, op: &Op) -> &[(Value, Value)] {
        if op.extras == NONE {
            &[]
        } else {
            &self.extras[op.extras as usize]
        }
    }

    /// Number of distinct keys.
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }
}

/// Incrementally assembles a [`History`]; used by every ingest format so that
/// interning, dense indices and invoke/completion pairing work the same way
/// everywhere.
#[derive(Default)]
pub struct HistoryBuilder {
    h: History,
    key_ids: FxHashMap<Atom, u32>,
    f_ids: FxHashMap<Atom, u32>,
    /// Ops seen so far (client and non-client), for dense `:index` assignment.
    seen: i64,
    /// Whether the first op of the input carried an `:index` (jepsen.history
    /// then keeps every given index; otherwise all ops are numbered densely).
    first_has_index: Option<bool>,
    /// Per client op: its given `:index`, or `i64::MIN` when absent.
    given_index: Vec<i64>,
}

/// The parts of an op that a format reader hands to [`HistoryBuilder::push_op`].
#[derive(Clone, Debug)]
pub struct RawOp {
    /// `:index` if present.
    pub index: Option<i64>,
    /// `:time` if present.
    pub time: Option<i64>,
    /// `:type`.
    pub op_type: OpType,
    /// `:process` when it is an integer; `None` for non-client processes.
    pub process: Option<i64>,
    /// `:f` (nil when absent).
    pub f: Atom,
    /// Extra fields in input order.
    pub extras: Vec<(Value, Value)>,
    /// 1-based source line.
    pub line: u32,
}

impl HistoryBuilder {
    /// A builder for a history read from `source`.
    pub fn new(source: impl Into<String>) -> Self {
        let mut b = HistoryBuilder::default();
        b.h.source = source.into();
        b
    }

    /// A builder with room for everything `bytes` of input could hold, so that
    /// parsing never copies a growing vector (the reservation is address space,
    /// not memory: untouched pages are never resident). The bounds follow from
    /// the shortest possible spellings: an op map takes at least 24 bytes, a
    /// micro-op 6, a list element 2.
    pub fn with_capacity_for(source: impl Into<String>, bytes: usize) -> Self {
        let mut b = HistoryBuilder::new(source);
        b.h.ops.reserve(bytes / 24 + 16);
        b.given_index.reserve(bytes / 24 + 16);
        b.h.mops.reserve(bytes / 6 + 16);
        b.h.elements.reserve(bytes / 2 + 16);
        b
    }

    /// Reserves room for `ops` more ops and `mops` more micro-ops, for readers
    /// that know (a bound on) the sizes up front.
    pub fn reserve(&mut self, ops: usize, mops: usize) {
        self.h.ops.reserve(ops);
        self.given_index.reserve(ops);
        self.h.mops.reserve(mops);
    }

    /// Interns a key.
    pub fn key(&mut self, k: Atom) -> KeyId {
        if let Some(&id) = self.key_ids.get(&k) {
            return KeyId(id);
        }
        let id = self.h.keys.len() as u32;
        self.h.keys.push(k.clone());
        self.key_ids.insert(k, id);
        KeyId(id)
    }

    /// Counts `n` input micro-operations that did not happen and were left
    /// out (see [`History::dropped_events`]).
    pub fn count_dropped(&mut self, n: usize) {
        self.h.dropped_events += n;
    }

    /// Counts `n` transactions read as indeterminate (see
    /// [`History::indeterminate_txns`]).
    pub fn count_indeterminate(&mut self, n: usize) {
        self.h.indeterminate_txns += n;
    }

    /// Marks the history as read from a register-only format (see
    /// [`History::registers_only`]).
    pub fn set_registers_only(&mut self) {
        self.h.registers_only = true;
    }

    /// Appends list elements to the arena, returning the list value.
    pub fn list(&mut self, elems: &[i64]) -> MopValue {
        let start = self.h.elements.len() as u32;
        self.h.elements.extend_from_slice(elems);
        MopValue::List { start, len: elems.len() as u32 }
    }

    /// Starts a list in the arena; push elements with [`Self::push_element`]
    /// and close it with [`Self::finish_list`]. Avoids a temporary vector.
    pub fn begin_list(&self) -> u32 {
        self.h.elements.len() as u32
    }

    /// Adds one element to the list begun by [`Self::begin_list`].
    #[inline]
    pub fn push_element(&mut self, e: i64) {
        self.h.elements.push(e);
    }

    /// Closes a list begun at `start`.
    pub fn finish_list(&self, start: u32) -> MopValue {
        MopValue::List { start, len: self.h.elements.len() as u32 - start }
    }

    /// Adds a micro-op to the op being built (call before [`Self::push_op`]).
    #[inline]
    pub fn push_mop(&mut self, mop: Mop) {
        self.h.mops.push(mop);
    }

    /// Number of micro-ops pushed so far (the start of the next op's mops).
    pub fn mop_count(&self) -> u32 {
        self.h.mops.len() as u32
    }

    /// Finishes an op whose micro-ops were pushed since `mop_start`. Non-client
    /// ops (no integer process) are counted and their micro-ops discarded.
    pub fn push_op(&mut self, raw: RawOp, mop_start: u32) {
        self.first_has_index.get_or_insert(raw.index.is_some());
        let dense = self.seen;
        self.seen += 1;
        let Some(process) = raw.process else {
            self.h.nonclient_ops += 1;
            self.h.mops.truncate(mop_start as usize);
            return;
        };
        let f = match self.f_ids.get(&raw.f) {
            Some(&id) => id,
            None => {
                let id = self.h.fs.len() as u32;
                self.h.fs.push(raw.f.clone());
                self.f_ids.insert(raw.f, id);
                id
            }
        };
        let extras = if raw.extras.is_empty() {
            NONE
        } else {
            self.h.extras.push(raw.extras);
            (self.h.extras.len() - 1) as u32
        };
        self.given_index.push(raw.index.unwrap_or(i64::MIN));
        self.h.ops.push(Op {
            index: dense,
            time: raw.time.unwrap_or(-1),
            op_type: raw.op_type,
            process,
            f,
            mop_start,
            mop_len: self.h.mops.len() as u32 - mop_start,
            pair: NONE,
            extras,
            line: raw.line,
        });
    }

    /// Appends every op of `other` (built from a later part of the same input,
    /// e.g. by a parallel reader) to this builder, re-interning its keys.
    pub fn append(&mut self, other: HistoryBuilder) {
        let o = other.h;
        let key_map: Vec<KeyId> = o.keys.into_iter().map(|k| self.key(k)).collect();
        let f_map: Vec<u32> =
            o.fs.into_iter()
                .map(|f| match self.f_ids.get(&f) {
                    Some(&id) => id,
                    None => {
                        let id = self.h.fs.len() as u32;
                        self.h.fs.push(f.clone());
                        self.f_ids.insert(f, id);
                        id
                    }
                })
                .collect();
        let mop_base = self.h.mops.len() as u32;
        let elem_base = self.h.elements.len() as u32;
        let extras_base = self.h.extras.len() as u32;
        if self.first_has_index.is_none() {
            self.first_has_index = other.first_has_index;
        }
        self.given_index.extend_from_slice(&other.given_index);
        let dense_base = self.seen;
        self.h.mops.extend(o.mops.into_iter().map(|mut m| {
            m.key = key_map[m.key.0 as usize];
            if let MopValue::List { start, len } = m.value {
                m.value = MopValue::List { start: start + elem_base, len };
            }
            m
        }));
        self.h.elements.extend_from_slice(&o.elements);
        self.h.extras.extend(o.extras);
        self.h.ops.extend(o.ops.into_iter().map(|mut op| {
            op.f = f_map[op.f as usize];
            op.mop_start += mop_base;
            if op.extras != NONE {
                op.extras += extras_base;
            }
            op.index += dense_base;
            op
        }));
        self.seen += other.seen;
        self.h.nonclient_ops += o.nonclient_ops;
        self.h.dropped_events += o.dropped_events;
        self.h.indeterminate_txns += o.indeterminate_txns;
        self.h.registers_only |= o.registers_only;
    }

    /// Pairs invocations with completions and returns the finished history.
    ///
    /// An `:invoke` pairs with the next completion of the same process, as in
    /// jepsen.history. A second invoke on a process whose previous invoke is
    /// still open leaves the earlier one unpaired; a completion with no open
    /// invoke stays unpaired (completion-only histories are accepted).
    pub fn finish(mut self) -> History {
        if self.first_has_index == Some(true) {
            for (op, &given) in self.h.ops.iter_mut().zip(&self.given_index) {
                if given != i64::MIN {
                    op.index = given;
                }
            }
        }
        let mut open: FxHashMap<i64, u32> = FxHashMap::default();
        for i in 0..self.h.ops.len() {
            let op = self.h.ops[i];
            if op.op_type == OpType::Invoke {
                open.insert(op.process, i as u32);
            } else if let Some(inv) = open.remove(&op.process) {
                self.h.ops[inv as usize].pair = i as u32;
                self.h.ops[i].pair = inv;
            }
        }
        self.h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(t: OpType, p: Option<i64>, index: Option<i64>) -> RawOp {
        RawOp { index, time: None, op_type: t, process: p, f: Atom::Keyword("txn".into()), extras: vec![], line: 1 }
    }

    #[test]
    fn pairs_invocations_with_next_completion_of_same_process() {
        let mut b = HistoryBuilder::new("t");
        for (t, p) in [(OpType::Invoke, 0), (OpType::Invoke, 1), (OpType::Ok, 1), (OpType::Info, 0)] {
            let s = b.mop_count();
            b.push_op(raw(t, Some(p), None), s);
        }
        let h = b.finish();
        assert_eq!(h.ops[0].pair, 3);
        assert_eq!(h.ops[1].pair, 2);
        assert_eq!(h.ops[2].pair, 1);
        assert_eq!(h.ops.iter().map(|o| o.index).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn nonclient_ops_are_counted_and_still_consume_dense_indices() {
        let mut b = HistoryBuilder::new("t");
        let s = b.mop_count();
        b.push_op(raw(OpType::Info, None, None), s);
        let s = b.mop_count();
        b.push_op(raw(OpType::Ok, Some(3), None), s);
        let h = b.finish();
        assert_eq!(h.nonclient_ops, 1);
        assert_eq!(h.ops.len(), 1);
        assert_eq!(h.ops[0].index, 1);
    }

    #[test]
    fn append_merges_chunks_reinterning_keys() {
        let mut a = HistoryBuilder::new("t");
        let k = a.key(Atom::Keyword("x".into()));
        let s = a.mop_count();
        a.push_mop(Mop { f: MopFn::Append, key: k, value: MopValue::Int(1) });
        a.push_op(raw(OpType::Ok, Some(0), None), s);
        let mut b = HistoryBuilder::new("t");
        let ky = b.key(Atom::Keyword("y".into()));
        let kx = b.key(Atom::Keyword("x".into()));
        let s = b.mop_count();
        let l = b.list(&[1, 2]);
        b.push_mop(Mop { f: MopFn::Read, key: ky, value: l });
        b.push_mop(Mop { f: MopFn::Read, key: kx, value: MopValue::Nil });
        b.push_op(raw(OpType::Ok, Some(1), None), s);
        a.append(b);
        let h = a.finish();
        assert_eq!(h.keys.len(), 2);
        assert_eq!(h.ops[1].index, 1);
        let m = h.mops_of(&h.ops[1]);
        assert_eq!(h.key(m[0].key), &Atom::Keyword("y".into()));
        assert_eq!(h.key(m[1].key), &Atom::Keyword("x".into()));
        assert_eq!(h.list(m[0].value), &[1, 2]);
    }
}
