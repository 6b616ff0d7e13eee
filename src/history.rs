//! The history model: a compact, columnar record of every client operation.
//!
//! Ingest builds a [`History`] once; every analysis reads it and never mutates
//! it. Operations live in one vector in history order; their micro-operations
//! live in one flat vector (each op holds a range into it), and the elements of
//! list reads live in one flat `i64` arena. Keys are interned to dense
//! [`KeyId`]s. An operation's position in [`History::ops`] is its identity
//! throughout the analysis ([`OpId`]); Elle's `:index` is kept alongside for
//! reporting.
//!
//! # Shared list storage
//!
//! List reads overlap: in a list-append history every read of a key is
//! (in a valid history) a prefix of its longest read, and the reads' elements
//! together are most of the input (about 74 elements per transaction in
//! Elle's paper shape, 70% of the columns). So a read whose elements are a
//! prefix of another read of the same key points into that read's elements
//! instead of holding a copy ([`HistoryBuilder::share_lists`]): the arena
//! keeps, per key, the longest read and only the reads that are not
//! prefixes of a longer one. A list is still one contiguous slice
//! ([`History::list`]); only where it lies changes. Readers share within each
//! parallel chunk as soon as it is parsed, so the copies never all exist at
//! once, and [`HistoryBuilder::finish`] shares over the whole history into a
//! layout that depends only on the micro-ops (by key, longest read first),
//! so the result is the same however the input was cut.
//!
//! # Invocations share their completion's micro-ops
//!
//! A Jepsen invocation carries its transaction's micro-ops with every read
//! `nil` (what was read is known at completion), so its micro-ops are its
//! completion's with the reads blanked: half of the micro-op column repeats
//! the other half. Ingest drops those copies
//! ([`History::share_invocation_mops`]): such an invocation's range names
//! its completion's micro-ops, and [`History::mops_of`] gives them with the
//! reads `nil`, exactly as written (the copy is made the first time it is
//! asked for, which the analyses never do: they read completions). Scans
//! that look only at functions, keys and written values may read the
//! stored micro-ops without a copy ([`History::stored_mops_of`]).
//!
//! # Values
//!
//! Every analysis compares values (appended elements, written and read
//! register values) as `i64`s. A value is therefore stored as an `i64`
//! *identity*, in one of two modes chosen per history:
//!
//! * **Integer mode** ([`History::values`] empty): every value in the input
//!   is a 64-bit integer and its identity is the integer itself. This is the
//!   common case and costs nothing: readers store the parsed integer.
//! * **Interned mode** ([`History::values`] non-empty): the input has some
//!   other value (a string, keyword, UUID, vector, float, an integer beyond 64
//!   bits). Every value, integers included, is then interned: its identity is
//!   its position in [`History::values`], which keeps the value as written
//!   for printing. The builder switches the first time it meets a non-integer
//!   value, re-numbering what it has stored so far (once).
//!
//! Two values get the same identity exactly when they are equal as EDN/Clojure
//! values: structurally, with `1` and `1.0` different, a vector equal to a list
//! of the same elements and sets and maps equal regardless of order (see
//! [`Value::canonical`]). [`History::value_text`] and the report printers
//! turn an identity back into the value. `nil` (a register's initial state, a
//! list's absence) is never interned: it stays [`MopValue::Nil`].

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

pub mod transaction_order;

/// Integers up to this one are never value identities in integer mode (the
/// analyses use `i64::MIN` and `i64::MIN + 1` as markers); a history with such
/// a value is interned instead.
pub const RESERVED_MAX: i64 = i64::MIN + 1;

/// Position of an operation in [`History::ops`]; the identity of a transaction
/// in every later stage (graph vertices are `OpId`s of completions).
pub type OpId = u32;

/// Marker for "no such op" in `u32` link fields.
pub const NONE: u32 = u32::MAX;

/// Dense id of an interned key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, serde::Serialize, serde::Deserialize)]
pub struct KeyId(pub u32);

/// The `:type` of an operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
pub enum MopFn {
    /// `[:append k v]`: append element `v` to the list at `k`.
    Append,
    /// `[:r k v]`: read `k`, observing `v` (`nil` when unknown or initial).
    Read,
    /// `[:w k v]`: blind write of `v` to the register at `k`.
    Write,
    /// `[:insert k v]` (closed-predicate): creates key `k` with value `v`.
    Insert,
    /// `[:delete k]` (closed-predicate): deletes key `k` (value `nil`).
    Delete,
    /// `[:rp PRED {k v ...}]` (closed-predicate): a predicate read. `key` is
    /// the predicate, interned as a key (`:true`, `[:= 2]`, `[:mod 2 0]`);
    /// `value` is `nil` (nothing read yet) or [`MopValue::Entries`]`(n)`,
    /// and the read's `n` entries follow it as [`MopFn::PredEntry`]
    /// micro-ops, so one Elle micro-op occupies `1 + n` slots (see
    /// [`History::elle_mops`]).
    PredRead,
    /// One `k v` entry of the predicate read before it: key `k`, value `v`.
    PredEntry,
}

impl MopFn {
    /// Elle's keyword name, without the colon.
    pub fn name(self) -> &'static str {
        match self {
            MopFn::Append => "append",
            MopFn::Read => "r",
            MopFn::Write => "w",
            MopFn::Insert => "insert",
            MopFn::Delete => "delete",
            MopFn::PredRead => "rp",
            MopFn::PredEntry => "rp-entry",
        }
    }
}

/// The value slot of a micro-operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
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
    /// A predicate read's result map: the number of [`MopFn::PredEntry`]
    /// micro-ops that follow its [`MopFn::PredRead`].
    Entries(u32),
}

/// One micro-operation.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
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
    /// An integer written as a big integer: one beyond the 64-bit range (an
    /// EDN or JSON literal, an unsigned 64-bit value above `i64::MAX` from a
    /// binary format) or an EDN value with the `N` suffix (`7N`), spelled as
    /// written: an optional `-`, the decimal digits and an optional `N`.
    /// [`Value::canonical`] drops the `N` (and makes a 64-bit one an
    /// [`Atom::Int`]), so `7N` and `7` are one value, as in Clojure. EDN
    /// prints the spelling, JSON the bare number.
    BigInt(Box<str>),
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
            Atom::BigInt(d) => f.write_str(d),
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

impl Atom {
    /// An unsigned 64-bit number: [`Atom::Int`] when it fits an `i64`,
    /// [`Atom::BigInt`] otherwise (binary formats store `u64`s).
    pub fn from_u64(n: u64) -> Atom {
        match i64::try_from(n) {
            Ok(i) => Atom::Int(i),
            Err(_) => Atom::BigInt(n.to_string().into()),
        }
    }
}

/// A general EDN value: an op's extra fields (such as `:error`), keys and
/// (in interned mode, see the module docs) values.
///
/// Equality, ordering and hashing are structural and total: floats compare by
/// their bits (so a value can be a hash-map key), and vectors, lists, sets and
/// maps compare element by element in their stored order. Interning applies
/// [`Value::canonical`] first, which gives Clojure's equality.
#[derive(Clone, Debug)]
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

impl Value {
    fn rank(&self) -> u8 {
        match self {
            Value::Atom(_) => 0,
            Value::Float(_) => 1,
            Value::Vector(_) => 2,
            Value::List(_) => 3,
            Value::Set(_) => 4,
            Value::Map(_) => 5,
            Value::Tagged(..) => 6,
        }
    }

    /// The representative of the value's Clojure equality class: lists become
    /// vectors (`(= [1 2] '(1 2))`), set elements and map entries are sorted
    /// (and set duplicates dropped), `-0.0` becomes `0.0` and every NaN the
    /// same NaN. Two values are equal in Clojure exactly when their canonical
    /// forms are equal (`==`), with the one exception that Clojure's NaN is
    /// never equal to itself (here it is, so a NaN value read back matches).
    pub fn canonical(&self) -> Value {
        match self {
            Value::Atom(Atom::BigInt(d)) => {
                let digits = d.strip_suffix('N').unwrap_or(d);
                match digits.parse::<i64>() {
                    Ok(n) => Value::Atom(Atom::Int(n)),
                    Err(_) => Value::Atom(Atom::BigInt(digits.into())),
                }
            }
            Value::Atom(a) => Value::Atom(a.clone()),
            Value::Float(f) => Value::Float(if *f == 0.0 {
                0.0
            } else if f.is_nan() {
                f64::NAN
            } else {
                *f
            }),
            Value::Vector(xs) | Value::List(xs) => Value::Vector(xs.iter().map(Value::canonical).collect()),
            Value::Set(xs) => {
                let mut v: Vec<Value> = xs.iter().map(Value::canonical).collect();
                v.sort();
                v.dedup();
                Value::Set(v)
            }
            Value::Map(kvs) => {
                let mut v: Vec<(Value, Value)> = kvs.iter().map(|(k, v)| (k.canonical(), v.canonical())).collect();
                v.sort();
                Value::Map(v)
            }
            Value::Tagged(t, v) => Value::Tagged(t.clone(), Box::new(v.canonical())),
        }
    }
}

impl Ord for Value {
    fn cmp(&self, o: &Self) -> Ordering {
        match (self, o) {
            (Value::Atom(a), Value::Atom(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::Vector(a), Value::Vector(b))
            | (Value::List(a), Value::List(b))
            | (Value::Set(a), Value::Set(b)) => a.cmp(b),
            (Value::Map(a), Value::Map(b)) => a.cmp(b),
            (Value::Tagged(t, v), Value::Tagged(u, w)) => (t, v).cmp(&(u, w)),
            _ => self.rank().cmp(&o.rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Value {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, s: &mut H) {
        self.rank().hash(s);
        match self {
            Value::Atom(a) => a.hash(s),
            Value::Float(f) => f.to_bits().hash(s),
            Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => xs.hash(s),
            Value::Map(kvs) => kvs.hash(s),
            Value::Tagged(t, v) => {
                t.hash(s);
                v.hash(s);
            }
        }
    }
}

impl PartialEq<Atom> for Value {
    fn eq(&self, a: &Atom) -> bool {
        matches!(self, Value::Atom(b) if b == a)
    }
}

impl From<Atom> for Value {
    fn from(a: Atom) -> Value {
        Value::Atom(a)
    }
}

/// Writes a float as Clojure prints it (`1.5`, `##Inf`, `##NaN`).
pub fn write_edn_float(f: &mut impl fmt::Write, x: f64) -> fmt::Result {
    if x.is_nan() {
        f.write_str("##NaN")
    } else if x.is_infinite() {
        f.write_str(if x > 0.0 { "##Inf" } else { "##-Inf" })
    } else {
        write!(f, "{x:?}")
    }
}

impl fmt::Display for Value {
    /// Renders the value as EDN, as Clojure's `pr-str` would (tags kept).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(f: &mut fmt::Formatter<'_>, open: &str, xs: &[Value], close: &str) -> fmt::Result {
            f.write_str(open)?;
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    f.write_str(" ")?;
                }
                write!(f, "{x}")?;
            }
            f.write_str(close)
        }
        match self {
            Value::Atom(a) => write!(f, "{a}"),
            Value::Float(x) => write_edn_float(f, *x),
            Value::Vector(xs) => seq(f, "[", xs, "]"),
            Value::List(xs) => seq(f, "(", xs, ")"),
            Value::Set(xs) => seq(f, "#{", xs, "}"),
            Value::Map(kvs) => {
                f.write_str("{")?;
                for (i, (k, v)) in kvs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} {v}")?;
                }
                f.write_str("}")
            }
            Value::Tagged(t, v) => write!(f, "#{t} {v}"),
        }
    }
}

/// Bits of [`Op::fields`]: which of the optional op fields the input gave, so
/// that reports echo an op with exactly its fields.
pub mod field {
    /// `:time` was given.
    pub const TIME: u8 = 1;
    /// `:time` was given as `nil`.
    pub const TIME_NIL: u8 = 2;
    /// `:f` was given.
    pub const F: u8 = 4;
    /// `:value` was given.
    pub const VALUE: u8 = 8;
    /// `:value` was given as `nil`.
    pub const VALUE_NIL: u8 = 16;
    /// `:value` was a map `{k v ...}` (a closed-predicate `:init`), stored
    /// as one `[:w k v]` micro-op per entry.
    pub const VALUE_MAP: u8 = 32;
}

/// The value identity of a key's unborn version (closed-predicate; Elle's
/// `:elle/unborn`): a reserved integer, never a value of the input.
pub const UNBORN: i64 = i64::MIN;

/// The value identity of a key's dead (deleted) version (Elle's
/// `:elle/dead`).
pub const DEAD: i64 = i64::MIN + 1;

/// An op put back into a history being built ([`HistoryBuilder::insert_ops`]):
/// the op, its micro-ops and its extra fields.
pub type OpBack = (Op, Vec<Mop>, Option<Vec<(Value, Value)>>);

/// One operation of the history (an invocation or a completion).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Op {
    /// Jepsen's `:index` (given, or assigned densely in input order).
    pub index: i64,
    /// `:time` in nanoseconds, `-1` when absent (or `nil`).
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
    /// Which optional fields the input gave ([`field`] bits); reports print
    /// only those (and always `:index`, which jepsen.history assigns).
    pub fields: u8,
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

/// What Jepsen's store file `test.jepsen` said about its test (the top
/// level of its test map), and whether its history was read whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreNote {
    /// The store file's format version (0 or 1).
    pub version: i32,
    /// The test's `:name`.
    pub name: Option<String>,
    /// The test's `:start-time`, as Jepsen wrote it.
    pub start_time: Option<String>,
    /// The test's `:nodes`.
    pub nodes: Vec<String>,
    /// The test's `:concurrency`.
    pub concurrency: Option<i64>,
    /// `None` when the history was read whole; otherwise how much of it was
    /// recovered, and where and why reading stopped.
    pub partial: Option<StorePartial>,
    /// Other remarks on the file (a damaged tail after a whole history).
    pub notes: Vec<String>,
}

/// A history recovered in part from a store file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StorePartial {
    /// Ops read (every sealed chunk of the newest trusted checkpoint).
    pub ops: usize,
    /// Byte offset where reading stopped.
    pub offset: u64,
    /// Why it stopped.
    pub reason: String,
}

impl StorePartial {
    /// One line saying what was recovered, for every report.
    pub fn describe(&self) -> String {
        format!(
            "history recovered in part from test.jepsen: {} ops read; reading stopped at byte {}: {}",
            self.ops, self.offset, self.reason
        )
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
    pub keys: Vec<Value>,
    /// Interned values, empty in integer mode (see the module docs): in
    /// interned mode a value identity `v` stands for `values[v]`.
    pub values: Vec<Value>,
    /// In integer mode: the values are unsigned 64-bit numbers stored as
    /// their two's-complement `i64` (binary formats), printed as unsigned.
    pub unsigned_values: bool,
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
    /// Set when the history was read from Jepsen's store file
    /// `test.jepsen`: the test's name, start, nodes and concurrency, and
    /// whether the history was read whole (reports say when it was not).
    pub store: Option<Box<StoreNote>>,
    /// The database's commit order of (some of) the completions, from the
    /// ops' `:transaction-order` fields or `--transaction-order FILE`
    /// ([`transaction_order`]); `None` when none was given.
    pub transaction_order: Option<Box<transaction_order::TransactionOrder>>,
    /// Invocations whose micro-ops are their completion's with every read
    /// `nil`, increasing: they hold no copy ([`Self::share_invocation_mops`]).
    shared_invocations: Vec<OpId>,
    /// The micro-ops of each of [`Self::shared_invocations`], made the first
    /// time they are asked for.
    invocation_views: Vec<OnceLock<Box<[Mop]>>>,
}

impl History {
    /// The micro-ops of an op.
    #[inline]
    pub fn mops_of(&self, op: &Op) -> &[Mop] {
        if op.op_type == OpType::Invoke && !self.shared_invocations.is_empty() {
            if let Some(view) = self.invocation_view(op) {
                return view;
            }
        }
        self.stored_mops_of(op)
    }

    /// The micro-ops stored for an op: [`Self::mops_of`], except that an
    /// invocation sharing its completion's micro-ops (see
    /// [`Self::share_invocation_mops`]) gives the completion's, whose
    /// functions, keys and written values are the same but whose reads
    /// hold the values read. For scans that look at nothing else: they
    /// make no copy of an invocation's micro-ops.
    #[inline]
    pub fn stored_mops_of(&self, op: &Op) -> &[Mop] {
        &self.mops[op.mop_start as usize..(op.mop_start + op.mop_len) as usize]
    }

    /// Whether `op` is an invocation that shares its completion's micro-ops
    /// (see [`Self::share_invocation_mops`]): every read of it is `nil`.
    pub fn shares_mops(&self, op: &Op) -> bool {
        op.op_type == OpType::Invoke
            && !self.shared_invocations.is_empty()
            && self.ops.get(op.pair as usize).is_some_and(|c| self.shared_invocations.binary_search(&c.pair).is_ok())
    }

    /// The micro-ops of a shared invocation (its completion's, every read
    /// `nil`), made once; `None` when `op` shares nothing.
    #[cold]
    fn invocation_view(&self, op: &Op) -> Option<&[Mop]> {
        let me = self.ops.get(op.pair as usize)?.pair;
        let slot = self.shared_invocations.binary_search(&me).ok()?;
        Some(self.invocation_views[slot].get_or_init(|| {
            let nil_read = |m: &Mop| match m.f {
                MopFn::Read => Mop { value: MopValue::Nil, ..*m },
                _ => *m,
            };
            self.stored_mops_of(op).iter().map(nil_read).collect()
        }))
    }

    /// Drops the micro-ops of every invocation that are exactly its
    /// completion's with each read `nil` (Jepsen's invocations: the values
    /// read are known only at completion), about half of the micro-op
    /// column: such an invocation's micro-op range names its completion's,
    /// and [`Self::mops_of`] gives them with the reads `nil` (a copy made
    /// the first time they are asked for; the analyses never ask, reports
    /// ask for the few they print). Nothing changes in a history whose ops'
    /// micro-op ranges are not laid out in op order, as readers build them.
    pub fn share_invocation_mops(&mut self) {
        if !self.shared_invocations.is_empty() || !self.ops_in_mop_order() {
            return;
        }
        let shared: Vec<OpId> =
            (0..self.ops.len() as OpId).filter(|&i| self.mops_match_completion(&self.ops[i as usize])).collect();
        if shared.is_empty() {
            return;
        }
        let mut next = 0u32;
        let mut skip = shared.iter().copied().peekable();
        for i in 0..self.ops.len() {
            if skip.next_if_eq(&(i as OpId)).is_some() {
                continue;
            }
            let op = &mut self.ops[i];
            let (start, len) = (op.mop_start as usize, op.mop_len as usize);
            self.mops.copy_within(start..start + len, next as usize);
            op.mop_start = next;
            next += op.mop_len;
        }
        for &i in &shared {
            let completion = self.ops[i as usize].pair as usize;
            self.ops[i as usize].mop_start = self.ops[completion].mop_start;
        }
        self.mops.truncate(next as usize);
        self.mops.shrink_to_fit();
        self.invocation_views = shared.iter().map(|_| OnceLock::new()).collect();
        self.shared_invocations = shared;
    }

    /// Whether each op's micro-ops follow the previous op's.
    fn ops_in_mop_order(&self) -> bool {
        let mut end = 0u64;
        self.ops.iter().all(|op| {
            let ok = u64::from(op.mop_start) == end;
            end += u64::from(op.mop_len);
            ok
        }) && end == self.mops.len() as u64
    }

    /// Whether `op` is a paired invocation whose micro-ops are its
    /// completion's with every read `nil`.
    fn mops_match_completion(&self, op: &Op) -> bool {
        if op.op_type != OpType::Invoke || op.pair == NONE || op.mop_len == 0 {
            return false;
        }
        let Some(completion) = self.ops.get(op.pair as usize) else { return false };
        let (mine, theirs) = (self.stored_mops_of(op), self.stored_mops_of(completion));
        mine.len() == theirs.len()
            && mine.iter().zip(theirs).all(|(a, b)| {
                a.f == b.f
                    && a.key == b.key
                    && if a.f == MopFn::Read { a.value == MopValue::Nil } else { a.value == b.value }
            })
    }

    /// The elements of a list value (empty for non-lists).
    #[inline]
    pub fn list(&self, v: MopValue) -> &[i64] {
        match v {
            MopValue::List { start, len } => &self.elements[start as usize..(start + len) as usize],
            _ => &[],
        }
    }

    /// The micro-ops of an op as Elle counts them: each with its position
    /// among the stored ones, a predicate read's entries
    /// ([`MopFn::PredEntry`]) folded into it. The `i`-th item is Elle's
    /// micro-op `i` (its `:a-mop-index` / `:b-mop-index`).
    pub fn elle_mops<'a>(&'a self, op: &'a Op) -> impl Iterator<Item = (usize, &'a Mop)> + 'a {
        self.mops_of(op).iter().enumerate().filter(|(_, m)| m.f != MopFn::PredEntry)
    }

    /// The entries (key, value) of the predicate read stored at position
    /// `at` among `mops` (empty when it read nothing or is not one).
    pub fn pred_entries(mops: &[Mop], at: usize) -> &[Mop] {
        match mops.get(at).map(|m| m.value) {
            Some(MopValue::Entries(n)) => mops.get(at + 1..at + 1 + n as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The op at a position.
    #[inline]
    pub fn op(&self, id: OpId) -> &Op {
        &self.ops[id as usize]
    }

    /// The key's spelling in the input.
    pub fn key(&self, k: KeyId) -> &Value {
        &self.keys[k.0 as usize]
    }

    /// The value a value identity stands for, when it is not the integer
    /// the identity itself is (integer mode): `None` for a plain integer.
    #[inline]
    pub fn value(&self, v: i64) -> Option<Cow<'_, Value>> {
        if v == UNBORN || v == DEAD {
            let name = if v == UNBORN { "elle/unborn" } else { "elle/dead" };
            return Some(Cow::Owned(Value::Atom(Atom::Keyword(name.into()))));
        }
        if self.values.is_empty() {
            (self.unsigned_values && v < 0).then(|| Cow::Owned(Value::Atom(Atom::from_u64(v as u64))))
        } else {
            usize::try_from(v).ok().and_then(|i| self.values.get(i)).map(Cow::Borrowed)
        }
    }

    /// A value identity as EDN text, as it was written in the input.
    pub fn value_text(&self, v: i64) -> String {
        match self.value(v) {
            Some(x) => x.to_string(),
            None => v.to_string(),
        }
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

    /// Bytes the columns use, for `--stats`: ops, micro-ops, list elements,
    /// and the rest (interned keys, values and `:f`s by slot, extras, the
    /// shared invocations and the copies made of their micro-ops),
    /// counted by length: readers reserve address space generously, and
    /// untouched reserved pages are never resident.
    pub fn column_bytes(&self) -> [(&'static str, u64); 4] {
        fn used<T>(v: &[T]) -> u64 {
            std::mem::size_of_val(v) as u64
        }
        let extras: u64 = self.extras.iter().map(|e| used(e)).sum();
        let views: u64 = self.invocation_views.iter().filter_map(OnceLock::get).map(|v| used(v)).sum();
        let shared = used(&self.shared_invocations) + used(&self.invocation_views) + views;
        let rest = used(&self.keys) + used(&self.values) + used(&self.fs) + used(&self.extras) + extras + shared;
        [("ops", used(&self.ops)), ("mops", used(&self.mops)), ("elements", used(&self.elements)), ("other", rest)]
    }
}

/// Incrementally assembles a [`History`]; used by every ingest format so that
/// interning, dense indices and invoke/completion pairing work the same way
/// everywhere.
#[derive(Clone)]
pub struct HistoryBuilder {
    h: History,
    key_ids: FxHashMap<Value, u32>,
    f_ids: FxHashMap<Atom, u32>,
    /// In interned mode: canonical non-integer value -> identity.
    value_ids: FxHashMap<Value, u32>,
    /// In interned mode: integer value -> identity.
    int_ids: FxHashMap<i64, u32>,
    /// Ops seen so far (client and non-client), for dense `:index` assignment.
    seen: i64,
    /// Whether the first op of the input carried an `:index` (jepsen.history
    /// then keeps every given index; otherwise all ops are numbered densely).
    first_has_index: Option<bool>,
    /// Per client op: its given `:index`, or `i64::MIN` when absent.
    given_index: Vec<i64>,
    /// Length of the element arena when the op being read began, so that a
    /// discarded (non-client) op leaves no elements behind.
    op_elements: usize,
    /// The `:f` id of the previous op (most ops share one `:f`).
    last_f: u32,
    /// Integers above this are stored as they are: [`RESERVED_MAX`] in
    /// integer mode, `i64::MAX` (none) in interned mode. One comparison on
    /// the hot path of [`Self::int_value`].
    raw_above: i64,
}

impl Default for HistoryBuilder {
    fn default() -> Self {
        HistoryBuilder {
            h: History::default(),
            key_ids: FxHashMap::default(),
            f_ids: FxHashMap::default(),
            value_ids: FxHashMap::default(),
            int_ids: FxHashMap::default(),
            seen: 0,
            first_has_index: None,
            given_index: Vec::new(),
            op_elements: 0,
            last_f: NONE,
            raw_above: RESERVED_MAX,
        }
    }
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

    /// Interns a key given as an atom.
    pub fn key(&mut self, k: Atom) -> KeyId {
        self.key_value(Value::Atom(k))
    }

    /// Interns a key (any EDN value; equal values as Clojure compares them,
    /// see [`Value::canonical`], get the same id and keep the first spelling).
    pub fn key_value(&mut self, k: Value) -> KeyId {
        let canon = match &k {
            Value::Atom(a) if !matches!(a, Atom::BigInt(_)) => None,
            other => Some(other.canonical()),
        };
        if let Some(&id) = self.key_ids.get(canon.as_ref().unwrap_or(&k)) {
            return KeyId(id);
        }
        let id = self.h.keys.len() as u32;
        self.h.keys.push(k.clone());
        self.key_ids.insert(canon.unwrap_or(k), id);
        KeyId(id)
    }

    /// The identity of an integer value: the integer itself in integer mode
    /// (the hot path), its interned identity otherwise. The two smallest
    /// integers are kept from the analyses, which use them as markers: a
    /// history with either value is interned.
    #[inline(always)]
    pub fn int_value(&mut self, n: i64) -> i64 {
        if n > self.raw_above {
            n
        } else {
            self.int_value_slow(n)
        }
    }

    #[cold]
    fn int_value_slow(&mut self, n: i64) -> i64 {
        if self.h.values.is_empty() {
            self.enter_interned_mode();
        }
        self.intern_int(n)
    }

    /// The identity of an unsigned 64-bit value (binary formats). In integer
    /// mode a value above `i64::MAX` is stored as its two's complement and
    /// the history marked [`History::unsigned_values`], which costs nothing
    /// and keeps equality; interned, it is an [`Atom::BigInt`].
    #[inline]
    pub fn u64_value(&mut self, n: u64) -> i64 {
        self.h.unsigned_values = true;
        match i64::try_from(n) {
            Ok(i) => self.int_value(i),
            Err(_) if self.h.values.is_empty() && n as i64 > RESERVED_MAX => n as i64,
            Err(_) => self.value(Value::Atom(Atom::from_u64(n))),
        }
    }

    /// The identity of any value (switching the history to interned mode on
    /// the first value that is not a 64-bit integer).
    ///
    /// Switching renumbers the identities stored in the builder, so a reader
    /// must store (push) each identity before it takes the next one; one
    /// held elsewhere across this call may be stale (readers that buffer
    /// micro-ops keep the raw values and take identities as they push). `nil` gets an identity
    /// too: callers that give `nil` a meaning (a register's initial state)
    /// use [`MopValue::Nil`] instead.
    pub fn value(&mut self, v: Value) -> i64 {
        if let Value::Atom(Atom::Int(n)) = v {
            return self.int_value(n);
        }
        if self.h.values.is_empty() {
            self.enter_interned_mode();
        }
        self.intern(v)
    }

    /// Whether values are interned (see the module docs).
    pub fn values_interned(&self) -> bool {
        !self.h.values.is_empty()
    }

    fn intern(&mut self, v: Value) -> i64 {
        if let Value::Atom(Atom::Int(n)) = v {
            return self.intern_int(n);
        }
        let canon = v.canonical();
        if let Value::Atom(Atom::Int(n)) = canon {
            // `7N`: the integer 7, spelled as written if first seen so.
            return self.intern_int_as(n, v);
        }
        if let Some(&id) = self.value_ids.get(&canon) {
            return id as i64;
        }
        let id = self.h.values.len() as u32;
        self.h.values.push(v);
        self.value_ids.insert(canon, id);
        id as i64
    }

    fn intern_int(&mut self, n: i64) -> i64 {
        self.intern_int_as(n, Value::Atom(Atom::Int(n)))
    }

    /// Interns the integer `n`, written as `spelling` (`7` or `7N`).
    fn intern_int_as(&mut self, n: i64, spelling: Value) -> i64 {
        if let Some(&id) = self.int_ids.get(&n) {
            return id as i64;
        }
        let id = self.h.values.len() as u32;
        self.h.values.push(spelling);
        self.int_ids.insert(n, id);
        id as i64
    }

    /// Re-numbers every integer value stored so far as an interned identity.
    #[cold]
    fn enter_interned_mode(&mut self) {
        self.raw_above = i64::MAX;
        for i in 0..self.h.mops.len() {
            if let MopValue::Int(n) = self.h.mops[i].value {
                let id = self.intern_raw(n);
                self.h.mops[i].value = MopValue::Int(id);
            }
        }
        for i in 0..self.h.elements.len() {
            let id = self.intern_raw(self.h.elements[i]);
            self.h.elements[i] = id;
        }
    }

    /// Interns a value stored in integer mode.
    fn intern_raw(&mut self, n: i64) -> i64 {
        if self.h.unsigned_values && n < 0 {
            self.intern(Value::Atom(Atom::from_u64(n as u64)))
        } else {
            self.intern_int(n)
        }
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

    /// Marks the history's integer values as unsigned 64-bit numbers
    /// stored as their two's complement ([`History::unsigned_values`]).
    pub fn set_unsigned_values(&mut self) {
        self.h.unsigned_values = true;
    }

    /// Sets the value of the micro-op pushed at position `at` (a predicate
    /// read's entry count, known once its entries are read).
    pub fn set_mop_value(&mut self, at: u32, value: MopValue) {
        if let Some(m) = self.h.mops.get_mut(at as usize) {
            m.value = value;
        }
    }

    /// Appends list elements (value identities) to the arena, returning the
    /// list value.
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

    /// Starts a list whose first elements are the `len` elements stored at
    /// `start` (a read that repeats an earlier read of its key and goes on,
    /// as the EDN reader finds them): the list goes on in place when they end the arena, on a copy of them
    /// otherwise. Returns the list's start for [`Self::finish_list`], or
    /// `None` (nothing changed) when they are not all stored.
    pub fn repeat_list(&mut self, start: u32, len: u32) -> Option<u32> {
        let (s, end) = (start as usize, start as usize + len as usize);
        let stored = self.h.elements.len();
        if end > stored {
            return None;
        }
        if end == stored {
            return Some(start);
        }
        self.h.elements.extend_from_within(s..end);
        Some(stored as u32)
    }

    /// Adds one element (a value identity) to the list begun by
    /// [`Self::begin_list`].
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

    /// Finishes an op whose micro-ops were pushed since `mop_start`, for
    /// formats without optional fields: the op is echoed with `:f` and
    /// `:value`, and with `:time` when `raw.time` is given. Non-client ops
    /// (no integer process) are counted and their micro-ops discarded.
    pub fn push_op(&mut self, raw: RawOp, mop_start: u32) {
        let fields = field::F | field::VALUE | if raw.time.is_some() { field::TIME } else { 0 };
        self.push_op_with(raw, mop_start, fields);
    }

    /// As [`Self::push_op`], with the [`field`] bits saying which optional
    /// fields the input gave.
    pub fn push_op_with(&mut self, raw: RawOp, mop_start: u32, fields: u8) {
        self.first_has_index.get_or_insert(raw.index.is_some());
        let dense = self.seen;
        self.seen += 1;
        let Some(process) = raw.process else {
            self.h.nonclient_ops += 1;
            self.h.mops.truncate(mop_start as usize);
            self.h.elements.truncate(self.op_elements);
            return;
        };
        self.op_elements = self.h.elements.len();
        let f = match self.h.fs.get(self.last_f as usize) {
            Some(last) if *last == raw.f => self.last_f,
            _ => {
                let id = match self.f_ids.get(&raw.f) {
                    Some(&id) => id,
                    None => {
                        let id = self.h.fs.len() as u32;
                        self.h.fs.push(raw.f.clone());
                        self.f_ids.insert(raw.f, id);
                        id
                    }
                };
                self.last_f = id;
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
            fields,
        });
    }

    /// Appends every op of `other` (built from a later part of the same input,
    /// e.g. by a parallel reader) to this builder, re-interning its keys and,
    /// when either side has interned values, its values.
    pub fn append(&mut self, other: HistoryBuilder) {
        let mut o = other.h;
        let key_map: Vec<KeyId> = std::mem::take(&mut o.keys).into_iter().map(|k| self.key_value(k)).collect();
        let f_map: Vec<u32> = std::mem::take(&mut o.fs)
            .into_iter()
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
        // Values: identities of `o` mapped to identities of `self`.
        if !o.values.is_empty() {
            if self.h.values.is_empty() {
                self.enter_interned_mode();
            }
            let map: Vec<i64> = std::mem::take(&mut o.values).into_iter().map(|v| self.intern(v)).collect();
            let get = |v: i64| usize::try_from(v).ok().and_then(|i| map.get(i)).copied().unwrap_or(v);
            remap_values(&mut o, get);
        } else if !self.h.values.is_empty() {
            let mut raw = Vec::with_capacity(o.mops.len() + o.elements.len());
            remap_values(&mut o, |n| {
                raw.push(n);
                n
            });
            self.h.unsigned_values |= o.unsigned_values;
            let mut ids = raw.into_iter().map(|n| self.intern_raw(n));
            remap_values(&mut o, |n| ids.next().unwrap_or(n));
        }
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
        self.op_elements = self.h.elements.len();
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
        self.h.unsigned_values |= o.unsigned_values;
    }

    /// Pairs invocations with completions and returns the finished history.
    ///
    /// An `:invoke` pairs with the next completion of the same process, as in
    /// jepsen.history. A second invoke on a process whose previous invoke is
    /// still open leaves the earlier one unpaired; a completion with no open
    /// invoke stays unpaired (completion-only histories are accepted).
    ///
    /// In interned mode the identities are renumbered in order of first use
    /// (so the result does not depend on how a parallel reader cut the
    /// input), values only discarded ops used are dropped, and a history all
    /// of whose remaining values are integers goes back to integer mode.
    pub fn finish(mut self) -> History {
        if self.first_has_index == Some(true) {
            for (op, &given) in self.h.ops.iter_mut().zip(&self.given_index) {
                if given != i64::MIN {
                    op.index = given;
                }
            }
        }
        if !self.h.values.is_empty() {
            normalize_values(&mut self.h);
        }
        drop(share_lists(&mut self.h));
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

impl HistoryBuilder {
    /// Stores each list read that is a prefix of another read of the same
    /// key inside that read's elements (see the module docs on shared list
    /// storage), dropping the copies. Parallel readers call it on each chunk
    /// once parsed; the lists read back are unchanged. The op and micro-op
    /// columns give back what the reader reserved beyond their length
    /// (address space only). Returns the old
    /// arena, emptied: its pages are resident already, so a reader can hand
    /// it to the next chunk's builder ([`Self::reuse_arena`]) instead of
    /// having the kernel zero fresh pages for it.
    pub fn share_lists(&mut self) -> Vec<i64> {
        let mut old = share_lists(&mut self.h);
        old.clear();
        self.op_elements = self.h.elements.len();
        self.h.ops.shrink_to_fit();
        self.h.mops.shrink_to_fit();
        self.given_index.shrink_to_fit();
        old
    }

    /// Moves every op's source line `by` lines down (a chunk of an input
    /// whose lines were counted from the chunk's start); a line beyond the
    /// `u32` range is kept as `u32::MAX`, as readers store it.
    pub fn offset_lines(&mut self, by: usize) {
        for op in &mut self.h.ops {
            op.line = u32::try_from(op.line as usize + by).unwrap_or(u32::MAX);
        }
    }

    /// Gives a builder that has stored no list element yet an emptied arena
    /// to fill (one [`Self::share_lists`] returned), grown to the capacity
    /// the builder had reserved: a large buffer grows by remapping, so the
    /// pages the arena has already touched are filled again without the
    /// kernel zeroing fresh ones.
    pub fn reuse_arena(&mut self, mut arena: Vec<i64>) {
        if self.h.elements.is_empty() {
            arena.clear();
            arena.reserve(self.h.elements.capacity());
            self.h.elements = arena;
        }
    }

    /// The history built so far, as [`Self::finish`] would return it,
    /// leaving the builder usable: the online checker checks what it has
    /// read while it reads on. Costs a copy of everything built.
    pub fn snapshot(&self) -> History {
        self.clone().finish()
    }

    /// Whether [`Self::append`]ing `other` keeps every column addressable by
    /// the model's `u32` offsets (ops below [`NONE`], micro-ops, list
    /// elements, extras).
    pub fn can_append(&self, other: &HistoryBuilder) -> bool {
        let fits = |a: usize, b: usize| a.checked_add(b).is_some_and(|n| n < NONE as usize);
        fits(self.h.ops.len(), other.h.ops.len())
            && fits(self.h.mops.len(), other.h.mops.len())
            && fits(self.h.elements.len(), other.h.elements.len())
            && fits(self.h.extras.len(), other.h.extras.len())
    }

    /// Ops read so far, client and non-client: the dense `:index` the next
    /// op would get (a window of a distributed run adds the ops of the
    /// windows before it, see `crate::dist`).
    pub fn seen(&self) -> i64 {
        self.seen
    }

    /// Whether the first client op read carried an `:index` (`None` before
    /// any): [`Self::finish`] keeps given indices only when it did.
    pub fn first_has_index(&self) -> Option<bool> {
        self.first_has_index
    }

    /// Places a window of a larger input (`crate::dist`): every op's dense
    /// `:index` moves by `base` (the ops of the windows before it), and the
    /// whole input's rule on given indices (whether its first client op
    /// carried an `:index`) replaces the window's own, so that
    /// [`Self::finish`] numbers the window's ops as a reading of the whole
    /// input would.
    pub fn place_in_whole(&mut self, base: i64, first_has_index: Option<bool>) {
        for op in &mut self.h.ops {
            op.index += base;
        }
        self.seen += base;
        self.first_has_index = first_has_index;
    }

    /// Number of client ops built so far.
    pub fn op_count(&self) -> usize {
        self.h.ops.len()
    }

    /// Number of completions (`:ok`, `:fail`, `:info`) built so far.
    pub fn completions(&self) -> usize {
        self.h.ops.iter().filter(|o| !o.is_invoke()).count()
    }

    /// Whether values are held as interned identities (some value was not
    /// an integer) rather than as themselves.
    pub fn interned(&self) -> bool {
        !self.h.values.is_empty()
    }

    /// Forgets the client ops at the positions `keep` refuses, with their
    /// micro-ops, list elements and extra fields; the others keep their
    /// order, `:index` and everything else. Keys, `:f`s and interned values
    /// stay (identities remain valid). The online checker collects old
    /// transactions this way ([`crate::online::collect`]).
    pub fn retain_ops(&mut self, keep: impl Fn(usize) -> bool) {
        let h = &mut self.h;
        let (mut ops, mut mops, mut elements, mut extras, mut given) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, op) in h.ops.iter().enumerate() {
            if !keep(i) {
                continue;
            }
            let mut op = *op;
            let start = mops.len() as u32;
            for m in &h.mops[op.mop_start as usize..(op.mop_start + op.mop_len) as usize] {
                let mut m = *m;
                if let MopValue::List { start, len } = m.value {
                    let at = elements.len() as u32;
                    elements.extend_from_slice(&h.elements[start as usize..(start + len) as usize]);
                    m.value = MopValue::List { start: at, len };
                }
                mops.push(m);
            }
            op.mop_start = start;
            if op.extras != NONE {
                extras.push(std::mem::take(&mut h.extras[op.extras as usize]));
                op.extras = (extras.len() - 1) as u32;
            }
            given.push(self.given_index.get(i).copied().unwrap_or(i64::MIN));
            ops.push(op);
        }
        (h.ops, h.mops, h.elements, h.extras) = (ops, mops, elements, extras);
        self.given_index = given;
        self.op_elements = h.elements.len();
    }

    /// Puts back ops that [`Self::retain_ops`] forgot: each op with its
    /// micro-ops (their keys index `keys`; no list values) and extra fields,
    /// placed among the held ops by source line. Its `:index` stays the one
    /// it had. The online checker takes collected transactions back into
    /// its window this way when a later read needs them checked again
    /// ([`crate::online::fenced`]).
    pub fn insert_ops(&mut self, keys: &[Value], mut ops: Vec<OpBack>) {
        if ops.is_empty() {
            return;
        }
        ops.sort_by_key(|(op, _, _)| op.line);
        let mut key_map: FxHashMap<u32, KeyId> = FxHashMap::default();
        let mut added = Vec::with_capacity(ops.len());
        for (mut op, mops, extras) in ops {
            op.mop_start = self.h.mops.len() as u32;
            op.mop_len = mops.len() as u32;
            for m in mops {
                debug_assert!(!matches!(m.value, MopValue::List { .. }), "insert_ops takes no list values");
                let key = match key_map.get(&m.key.0) {
                    Some(&k) => k,
                    None => {
                        let k = self.key_value(keys[m.key.0 as usize].clone());
                        key_map.insert(m.key.0, k);
                        k
                    }
                };
                self.h.mops.push(Mop { key, ..m });
            }
            op.extras = match extras {
                Some(e) => {
                    self.h.extras.push(e);
                    (self.h.extras.len() - 1) as u32
                }
                None => NONE,
            };
            op.pair = NONE;
            added.push(op);
        }
        let held = std::mem::take(&mut self.h.ops);
        let given = std::mem::take(&mut self.given_index);
        let mut merged = Vec::with_capacity(held.len() + added.len());
        let mut merged_given = Vec::with_capacity(held.len() + added.len());
        let mut back = added.into_iter().peekable();
        for (i, op) in held.into_iter().enumerate() {
            while let Some(a) = back.next_if(|a| a.line < op.line) {
                merged_given.push(a.index);
                merged.push(a);
            }
            merged_given.push(given.get(i).copied().unwrap_or(i64::MIN));
            merged.push(op);
        }
        for a in back {
            merged_given.push(a.index);
            merged.push(a);
        }
        self.h.ops = merged;
        self.given_index = merged_given;
    }

    /// The interned keys: `keys()[k.0]` is how key `k` was first written.
    pub fn keys(&self) -> &[Value] {
        &self.h.keys
    }

    /// Per key, whether some micro-op still mentions it.
    pub fn used_keys(&self) -> Vec<bool> {
        let mut used = vec![false; self.h.keys.len()];
        for m in &self.h.mops {
            used[m.key.0 as usize] = true;
        }
        used
    }

    /// Forgets the keys `drop` marks that no micro-op mentions (a key
    /// mentioned later is interned afresh) and renumbers the others in
    /// their order. Returns each old id's new one ([`NONE`]: dropped). The
    /// online checker keeps its key table to the keys it still holds this
    /// way ([`crate::online::collect`]); identities of the dropped keys
    /// given out before mean nothing after.
    pub fn drop_keys(&mut self, drop: &[bool]) -> Vec<u32> {
        let used = self.used_keys();
        let mut map = vec![NONE; self.h.keys.len()];
        let mut kept = Vec::with_capacity(self.h.keys.len());
        for (i, k) in std::mem::take(&mut self.h.keys).into_iter().enumerate() {
            if used[i] || !drop.get(i).copied().unwrap_or(false) {
                map[i] = kept.len() as u32;
                kept.push(k);
            }
        }
        kept.shrink_to(kept.len() * 2);
        self.h.keys = kept;
        for m in &mut self.h.mops {
            m.key = KeyId(map[m.key.0 as usize]);
        }
        self.key_ids.retain(|_, id| {
            *id = map[*id as usize];
            *id != NONE
        });
        if self.key_ids.capacity() > 4 * self.key_ids.len() + 64 {
            self.key_ids.shrink_to(2 * self.key_ids.len());
        }
        map
    }
}

#[cfg(test)]
impl HistoryBuilder {
    /// The history built so far, leaving the builder usable (tests).
    fn clone_finish(&self) -> History {
        let mut h = self.h.clone();
        if !h.values.is_empty() {
            normalize_values(&mut h);
        }
        h
    }
}

/// Applies `f` to every value identity stored in `h` (micro-op values and
/// list elements).
fn remap_values(h: &mut History, mut f: impl FnMut(i64) -> i64) {
    for m in &mut h.mops {
        if let MopValue::Int(v) = m.value {
            m.value = MopValue::Int(f(v));
        }
    }
    for e in &mut h.elements {
        *e = f(*e);
    }
}

/// Renumbers interned identities in order of first use, dropping unused
/// values, and returns to integer mode when only integers remain.
///
/// First use is found by visiting the micro-ops in order; the new numbers
/// are then applied to each micro-op value and each arena slot once, since
/// lists may share slots (see the module docs).
fn normalize_values(h: &mut History) {
    let old = std::mem::take(&mut h.values);
    let mut map = vec![u32::MAX; old.len()];
    let mut order: Vec<u32> = Vec::new();
    let mut visit = |v: i64| {
        if let Some(slot) = usize::try_from(v).ok().and_then(|i| map.get_mut(i)) {
            if *slot == u32::MAX {
                *slot = order.len() as u32;
                order.push(v as u32);
            }
        }
    };
    for m in &h.mops {
        match m.value {
            MopValue::Int(v) => visit(v),
            MopValue::List { start, len } => {
                h.elements[start as usize..(start + len) as usize].iter().for_each(|&e| visit(e))
            }
            MopValue::Nil | MopValue::Entries(_) => {}
        }
    }
    let renumber = |v: i64| match usize::try_from(v).ok().and_then(|i| map.get(i)) {
        Some(&n) if n != u32::MAX => n as i64,
        _ => v,
    };
    remap_values(h, renumber);
    let values: Vec<Value> = order.iter().map(|&i| old[i as usize].clone()).collect();
    if values.iter().all(|v| matches!(v, Value::Atom(Atom::Int(n)) if *n > RESERVED_MAX)) {
        let ints: Vec<i64> = values.iter().map(|v| if let Value::Atom(Atom::Int(n)) = v { *n } else { 0 }).collect();
        let back = |v: i64| usize::try_from(v).ok().and_then(|i| ints.get(i)).copied().unwrap_or(v);
        remap_values(h, back);
    } else {
        h.values = values;
    }
}

/// Shares list storage (see the module docs): the list reads are visited by
/// key, longest first (then in micro-op order), and each is stored in the new
/// arena unless it is a prefix of a list of its key stored before it (the
/// few stored last are tried; in a valid history every read of a key is a
/// prefix of its longest, which is stored first and alone). The new layout depends only on the micro-ops. Empty lists point at
/// 0. Returns the old arena.
fn share_lists(h: &mut History) -> Vec<i64> {
    /// Stored lists of a key tried before storing a new one.
    const TRIED: usize = 8;
    let mut reads: Vec<(u32, std::cmp::Reverse<u32>, u32)> = Vec::new();
    for (i, m) in h.mops.iter_mut().enumerate() {
        match m.value {
            MopValue::List { len: 0, .. } => m.value = MopValue::List { start: 0, len: 0 },
            MopValue::List { len, .. } => reads.push((m.key.0, std::cmp::Reverse(len), i as u32)),
            _ => {}
        }
    }
    if reads.is_empty() {
        return std::mem::take(&mut h.elements);
    }
    rayon::slice::ParallelSliceMut::par_sort_unstable(&mut reads[..]);
    let mut out: Vec<i64> = Vec::new();
    let mut stored: Vec<(u32, u32)> = Vec::new();
    let mut starts: Vec<u32> = Vec::with_capacity(reads.len());
    let mut key = u32::MAX;
    // The previous read's elements (where they were) and where it went.
    let mut prev: Option<(*const i64, u32)> = None;
    for &(k, _, i) in &reads {
        if k != key {
            key = k;
            stored.clear();
            prev = None;
        }
        let list = h.list(h.mops[i as usize].value);
        // A read stored where the previous (longer or equal) read of its
        // key was is a prefix of it: it fits the list that read went to,
        // and when that is the last list stored, the search below would
        // find it first.
        if let Some((at, s)) = prev {
            if at == list.as_ptr() && stored.last().is_some_and(|&(last, _)| last == s) {
                starts.push(s);
                continue;
            }
        }
        let fits =
            |&&(s, n): &&(u32, u32)| n as usize >= list.len() && out[s as usize..s as usize + list.len()] == *list;
        let start = match stored.iter().rev().take(TRIED).find(fits) {
            Some(&(s, _)) => s,
            None => {
                let s = out.len() as u32;
                out.extend_from_slice(list);
                stored.push((s, list.len() as u32));
                s
            }
        };
        prev = Some((list.as_ptr(), start));
        starts.push(start);
    }
    for (&(_, std::cmp::Reverse(len), i), &start) in reads.iter().zip(&starts) {
        h.mops[i as usize].value = MopValue::List { start, len };
    }
    out.shrink_to_fit();
    std::mem::replace(&mut h.elements, out)
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
    fn dropped_keys_leave_the_table_and_come_back_afresh() {
        let mut b = HistoryBuilder::new("t");
        for name in ["x", "y", "z", "y"] {
            let k = b.key(Atom::Keyword(name.into()));
            let s = b.mop_count();
            b.push_mop(Mop { f: MopFn::Append, key: k, value: MopValue::Int(1) });
            b.push_op(raw(OpType::Ok, Some(0), None), s);
        }
        // The ops on `x` and `y` go; `x` is dropped, `y` is not asked to
        // be, `z` is still mentioned.
        b.retain_ops(|i| i == 2);
        assert_eq!(b.used_keys(), vec![false, false, true]);
        let map = b.drop_keys(&[true, false, true]);
        assert_eq!(map, vec![NONE, 0, 1]);
        assert_eq!(b.keys(), &[Value::Atom(Atom::Keyword("y".into())), Value::Atom(Atom::Keyword("z".into()))]);
        assert_eq!(b.clone_finish().mops[0].key, KeyId(1));
        assert_eq!(b.key(Atom::Keyword("z".into())), KeyId(1));
        assert_eq!(b.key(Atom::Keyword("x".into())), KeyId(2));
        assert_eq!(b.key(Atom::Keyword("y".into())), KeyId(0));
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

    fn s(x: &str) -> Value {
        Value::Atom(Atom::Str(x.into()))
    }

    /// Builds one op per entry of `ops`, each a list of (append?, value).
    fn build(b: &mut HistoryBuilder, ops: &[&[Value]]) {
        for vals in ops {
            let k = b.key(Atom::Keyword("x".into()));
            let start = b.mop_count();
            for v in vals.iter() {
                let id = b.value(v.clone());
                b.push_mop(Mop { f: MopFn::Append, key: k, value: MopValue::Int(id) });
            }
            b.push_op(raw(OpType::Ok, Some(0), None), start);
        }
    }

    fn texts(h: &History) -> Vec<String> {
        h.mops.iter().map(|m| if let MopValue::Int(v) = m.value { h.value_text(v) } else { "nil".into() }).collect()
    }

    #[test]
    fn integer_mode_until_a_non_integer_value_then_interned() {
        let mut b = HistoryBuilder::new("t");
        build(&mut b, &[&[Value::Atom(Atom::Int(5)), Value::Atom(Atom::Int(-3))]]);
        assert!(!b.values_interned());
        build(&mut b, &[&[s("a"), Value::Atom(Atom::Int(5)), Value::Float(5.0)]]);
        assert!(b.values_interned());
        let h = b.finish();
        assert_eq!(texts(&h), vec!["5", "-3", "\"a\"", "5", "5.0"]);
        // 5 and 5 are one identity; 5 and 5.0 are not.
        let ids: Vec<MopValue> = h.mops.iter().map(|m| m.value).collect();
        assert_eq!(ids[0], ids[3]);
        assert_ne!(ids[0], ids[4]);
    }

    #[test]
    fn values_compare_as_clojure_does() {
        let i = |n| Value::Atom(Atom::Int(n));
        let mut b = HistoryBuilder::new("t");
        build(
            &mut b,
            &[&[
                Value::Vector(vec![i(1), i(2)]),
                Value::List(vec![i(1), i(2)]),
                Value::Set(vec![i(1), i(2)]),
                Value::Set(vec![i(2), i(1)]),
                Value::Atom(Atom::BigInt("7N".into())),
                i(7),
                Value::Atom(Atom::BigInt("123456789012345678901".into())),
                Value::Atom(Atom::BigInt("123456789012345678901N".into())),
                Value::Float(0.0),
                Value::Float(-0.0),
                Value::Atom(Atom::Keyword("a".into())),
                s("a"),
            ]],
        );
        let h = b.finish();
        let v: Vec<MopValue> = h.mops.iter().map(|m| m.value).collect();
        assert_eq!(v[0], v[1]);
        assert_eq!(v[2], v[3]);
        assert_ne!(v[0], v[2]);
        assert_eq!(v[4], v[5]);
        assert_eq!(v[6], v[7]);
        assert_eq!(v[8], v[9]);
        assert_ne!(v[10], v[11]);
        // Each value prints as first written.
        assert_eq!(texts(&h)[..6], ["[1 2]", "[1 2]", "#{1 2}", "#{1 2}", "7N", "7N"]);
    }

    #[test]
    fn reserved_integers_are_interned_not_confused_with_markers() {
        let mut b = HistoryBuilder::new("t");
        assert_eq!(b.int_value(3), 3);
        let id = b.int_value(i64::MIN);
        assert!(b.values_interned());
        assert!(id >= 0);
        let h = b.finish();
        assert_eq!(h.values.len(), 0, "no op uses the values: back to integer mode");
        let mut b = HistoryBuilder::new("t");
        build(&mut b, &[&[Value::Atom(Atom::Int(i64::MIN)), Value::Atom(Atom::Int(i64::MIN + 1))]]);
        let h = b.finish();
        assert!(!h.values.is_empty());
        assert_eq!(texts(&h), vec!["-9223372036854775808", "-9223372036854775807"]);
    }

    #[test]
    fn unsigned_values_print_unsigned_in_both_modes() {
        let mut b = HistoryBuilder::new("t");
        let k = b.key(Atom::from_u64(u64::MAX));
        let start = b.mop_count();
        let v = b.u64_value(u64::MAX);
        assert_eq!(v, -1, "integer mode: the two's complement");
        b.push_mop(Mop { f: MopFn::Write, key: k, value: MopValue::Int(v) });
        b.push_op(raw(OpType::Ok, Some(0), None), start);
        let h = b.clone_finish();
        assert!(h.values.is_empty() && h.unsigned_values);
        assert_eq!(texts(&h), vec!["18446744073709551615"]);
        assert_eq!(h.key(KeyId(0)).to_string(), "18446744073709551615");
        // Switching to interned mode keeps the unsigned reading.
        build(&mut b, &[&[s("a")]]);
        let h = b.finish();
        assert_eq!(texts(&h), vec!["18446744073709551615", "\"a\""]);
    }

    /// One op per list, each a read of key `k` of the given values.
    fn reads(b: &mut HistoryBuilder, k: &str, lists: &[&[Value]]) {
        for vals in lists {
            let key = b.key(Atom::Keyword(k.into()));
            let start = b.mop_count();
            let ids: Vec<i64> = vals.iter().map(|v| b.value(v.clone())).collect();
            let l = b.list(&ids);
            b.push_mop(Mop { f: MopFn::Read, key, value: l });
            b.push_op(raw(OpType::Ok, Some(0), None), start);
        }
    }

    fn list_texts(h: &History) -> Vec<Vec<String>> {
        h.mops.iter().map(|m| h.list(m.value).iter().map(|&v| h.value_text(v)).collect()).collect()
    }

    fn ints(xs: &[i64]) -> Vec<Value> {
        xs.iter().map(|&x| Value::Atom(Atom::Int(x))).collect()
    }

    #[test]
    fn prefix_reads_share_storage_and_read_back_unchanged() {
        let mut b = HistoryBuilder::new("t");
        let (a, b2, c, d, e) = (ints(&[1, 2]), ints(&[1, 2, 3]), ints(&[1]), ints(&[2, 1]), ints(&[]));
        reads(&mut b, "x", &[&a, &b2, &c, &d, &e]);
        reads(&mut b, "y", &[&a]);
        let h = b.finish();
        let want: Vec<Vec<String>> =
            [&a, &b2, &c, &d, &e, &a].iter().map(|l| l.iter().map(|v| v.to_string()).collect()).collect();
        assert_eq!(list_texts(&h), want);
        // x keeps [1 2 3] (holding [1 2] and [1]) and [2 1]; y its own [1 2].
        assert_eq!(h.elements.len(), 3 + 2 + 2);
    }

    #[test]
    fn shared_chunks_merge_into_the_same_history_as_one_builder() {
        let lists: Vec<Vec<Value>> =
            vec![ints(&[1]), vec![s("a")], vec![s("a"), s("b")], ints(&[1, 7]), vec![s("a"), s("b"), s("c")]];
        let refs: Vec<&[Value]> = lists.iter().map(Vec::as_slice).collect();
        let mut one = HistoryBuilder::new("t");
        reads(&mut one, "x", &refs);
        let mut first = HistoryBuilder::new("t");
        reads(&mut first, "x", &refs[..3]);
        let mut second = HistoryBuilder::new("t");
        reads(&mut second, "x", &refs[3..]);
        assert!(first.share_lists().is_empty());
        second.share_lists();
        first.append(second);
        let (one, merged) = (one.finish(), first.finish());
        assert_eq!(format!("{one:?}"), format!("{merged:?}"));
        assert_eq!(list_texts(&merged)[4], vec!["\"a\"", "\"b\"", "\"c\""]);
    }

    #[test]
    fn discarded_ops_leave_no_values_or_elements() {
        let mut b = HistoryBuilder::new("t");
        build(&mut b, &[&[Value::Atom(Atom::Int(1))]]);
        let k = b.key(Atom::Int(0));
        let start = b.mop_count();
        let e = b.value(s("gone"));
        let l = b.list(&[e]);
        b.push_mop(Mop { f: MopFn::Read, key: k, value: l });
        b.push_op(raw(OpType::Info, None, None), start);
        let h = b.finish();
        assert!(h.elements.is_empty());
        assert!(h.values.is_empty(), "only integers are left: integer mode");
        assert_eq!(texts(&h), vec!["1"]);
    }

    /// Merging chunks gives the history one sequential builder gives,
    /// whichever chunks are interned.
    #[test]
    fn append_merges_integer_and_interned_chunks_like_one_builder() {
        let i = |n| Value::Atom(Atom::Int(n));
        let parts: [&[&[Value]]; 4] =
            [&[&[i(1), i(2)]], &[&[s("a"), i(2)], &[i(9)]], &[&[i(3), i(1)]], &[&[s("b"), s("a"), i(4)]]];
        let mut seq = HistoryBuilder::new("t");
        for p in parts {
            build(&mut seq, p);
        }
        let seq = seq.finish();
        for split in 1..parts.len() {
            let mut first = HistoryBuilder::new("t");
            for p in &parts[..split] {
                build(&mut first, p);
            }
            for p in &parts[split..] {
                let mut c = HistoryBuilder::new("t");
                build(&mut c, p);
                first.append(c);
            }
            let merged = first.finish();
            assert_eq!(format!("{merged:?}"), format!("{seq:?}"), "split at {split}");
            assert_eq!(texts(&merged), vec!["1", "2", "\"a\"", "2", "9", "3", "1", "\"b\"", "\"a\"", "4"]);
        }
    }
}
