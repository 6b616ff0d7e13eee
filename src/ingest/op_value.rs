//! Compact op values for Jepsen's non-transactional workloads.
//!
//! A generic value tree ([`Value`]) costs a heap object per map, vector and
//! keyword: a bank history of a million operations holds 1.6 million
//! transfer maps and 400,000 balance maps, about 1.4 GB of small objects
//! that are allocated, faulted in and freed again, while the bank checker
//! needs only each transfer's amount and each read's balances. An
//! [`OpValue`] keeps the shapes that the bank, counter and set workloads
//! write in compact form, and any other value as the tree it was written as:
//!
//! | written as | kept as |
//! |---|---|
//! | `nil` | [`OpValue::Nil`] |
//! | an integer | [`OpValue::Int`] |
//! | `{:from a, :to b, :amount n}` (these keys, in this order, `n` an integer) | [`OpValue::Transfer`] |
//! | a map whose every value is an integer or `nil` (a bank read) | [`OpValue::Balances`] |
//! | a vector, list or set of integers (a set read, a CAS pair) | [`OpValue::Ints`] |
//! | anything else | [`OpValue::Other`], the generic tree |
//!
//! Map keys (accounts, `:from` and `:to`) are interned as [`Key`]s: a
//! non-negative integer below 2^31 is its own key, any other value gets a
//! number in a [`KeyTable`], so two keys are equal exactly when the values
//! they stand for are. Every compact form turns back into the value as
//! written ([`OpValue::to_value`]: same entries, same order, duplicates
//! kept), so printing an op never invents or drops a field.
//!
//! Two readers produce these values with the same result: the generic one
//! parses a [`Value`] and converts it ([`OpValue::of_value`]); the EDN
//! reader's fast path decodes the compact shapes straight from the text and
//! falls back to the generic one for anything else (see `edn`).

use crate::history::{Atom, Value};
use rustc_hash::FxHashMap;
use std::sync::Mutex;

/// An interned map key: a small non-negative integer itself, or (with
/// [`INTERNED`] set) a number in the [`KeyTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub u32);

/// The bit that marks a [`Key`] as a number in the key table.
pub const INTERNED: u32 = 1 << 31;

impl Key {
    /// `:from`.
    pub const FROM: Key = Key(INTERNED);
    /// `:to`.
    pub const TO: Key = Key(INTERNED | 1);
    /// `:amount`.
    pub const AMOUNT: Key = Key(INTERNED | 2);

    /// The value this key stands for; `keys` is the table's values.
    pub fn value(self, keys: &[Value]) -> Value {
        if self.0 & INTERNED == 0 {
            return Value::Atom(Atom::Int(i64::from(self.0)));
        }
        keys.get((self.0 & !INTERNED) as usize).cloned().unwrap_or(Value::Atom(Atom::Nil))
    }

    /// The key of a small non-negative integer, if it is one.
    #[inline(always)]
    pub fn small(n: i64) -> Option<Key> {
        (0..i64::from(INTERNED)).contains(&n).then_some(Key(n as u32))
    }
}

/// The interned keys of one history, shared by the threads that read it.
/// `:from`, `:to` and `:amount` are always in it ([`Key::FROM`],
/// [`Key::TO`], [`Key::AMOUNT`]), so a transfer can be seen as a map.
#[derive(Debug)]
pub struct KeyTable {
    inner: Mutex<Interned>,
}

impl Default for KeyTable {
    fn default() -> Self {
        let t = KeyTable { inner: Mutex::new(Interned::default()) };
        for name in ["from", "to", "amount"] {
            let _ = t.key(Value::Atom(Atom::Keyword(name.into())));
        }
        t
    }
}

#[derive(Debug, Default)]
struct Interned {
    ids: FxHashMap<Value, u32>,
    values: Vec<Value>,
}

impl KeyTable {
    /// The key of `v`; `None` when the table is full (2^31 keys).
    pub fn key(&self, v: Value) -> Option<Key> {
        if let Value::Atom(Atom::Int(n)) = v {
            if let Some(k) = Key::small(n) {
                return Some(k);
            }
        }
        let mut t = match self.inner.lock() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(&id) = t.ids.get(&v) {
            return Some(Key(id | INTERNED));
        }
        let id = u32::try_from(t.values.len()).ok().filter(|&id| id < INTERNED)?;
        t.values.push(v.clone());
        t.ids.insert(v, id);
        Some(Key(id | INTERNED))
    }

    /// The interned values, by number.
    pub fn into_values(self) -> Vec<Value> {
        match self.inner.into_inner() {
            Ok(t) => t.values,
            Err(poisoned) => poisoned.into_inner().values,
        }
    }
}

/// One account of a bank read: its key and balance (`nil` kept apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Balance {
    /// The account.
    pub key: Key,
    /// Whether the balance was written `nil` (then `amount` is 0).
    pub nil: bool,
    /// The balance.
    pub amount: i64,
}

/// A bank transfer `{:from a, :to b, :amount n}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// `:from`.
    pub from: Key,
    /// `:to`.
    pub to: Key,
    /// `:amount`.
    pub amount: i64,
}

/// Which collection a run of integers was written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coll {
    /// `[...]`.
    Vector,
    /// `(...)`.
    List,
    /// `#{...}`.
    Set,
}

/// An op's `:value`: compact where it has one of the shapes above, else
/// the generic tree.
#[derive(Clone, Debug, PartialEq)]
pub enum OpValue {
    /// `nil` (or no `:value`).
    Nil,
    /// An integer.
    Int(i64),
    /// `{:from a, :to b, :amount n}`.
    Transfer(Transfer),
    /// A map of keys to integers or `nil`, in input order.
    Balances(Box<[Balance]>),
    /// A vector, list or set of integers, in input order.
    Ints(Coll, Box<[i64]>),
    /// Any other value, as written.
    Other(Box<Value>),
}

impl OpValue {
    /// The compact form of a generic value (the value itself when none
    /// fits, or when `keys` is full).
    pub fn of_value(v: Value, keys: &KeyTable) -> OpValue {
        match v {
            Value::Atom(Atom::Nil) => OpValue::Nil,
            Value::Atom(Atom::Int(n)) => OpValue::Int(n),
            Value::Map(entries) => match transfer_of(&entries, keys).or_else(|| balances_of(&entries, keys)) {
                Some(v) => v,
                None => OpValue::Other(Box::new(Value::Map(entries))),
            },
            Value::Vector(xs) => ints_of(Coll::Vector, xs, Value::Vector),
            Value::List(xs) => ints_of(Coll::List, xs, Value::List),
            Value::Set(xs) => ints_of(Coll::Set, xs, Value::Set),
            v => OpValue::Other(Box::new(v)),
        }
    }

    /// The value as written; `keys` is the history's key table's values.
    pub fn to_value(&self, keys: &[Value]) -> Value {
        let int = |n: i64| Value::Atom(Atom::Int(n));
        match self {
            OpValue::Nil => Value::Atom(Atom::Nil),
            OpValue::Int(n) => int(*n),
            OpValue::Transfer(t) => Value::Map(vec![
                (Key::FROM.value(keys), t.from.value(keys)),
                (Key::TO.value(keys), t.to.value(keys)),
                (Key::AMOUNT.value(keys), int(t.amount)),
            ]),
            OpValue::Balances(bs) => Value::Map(
                bs.iter()
                    .map(|b| (b.key.value(keys), if b.nil { Value::Atom(Atom::Nil) } else { int(b.amount) }))
                    .collect(),
            ),
            OpValue::Ints(c, xs) => {
                let xs = xs.iter().map(|&x| int(x)).collect();
                match c {
                    Coll::Vector => Value::Vector(xs),
                    Coll::List => Value::List(xs),
                    Coll::Set => Value::Set(xs),
                }
            }
            OpValue::Other(v) => (**v).clone(),
        }
    }

    /// The integer, if the value is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            OpValue::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// Whether the value is `nil`.
    pub fn is_nil(&self) -> bool {
        matches!(self, OpValue::Nil)
    }
}

impl Transfer {
    /// The transfer as the map it was written as, when that map is one of
    /// integers or `nil` (when both accounts are); `keys` is the key
    /// table's values.
    pub fn as_balances(&self, keys: &[Value]) -> Option<[Balance; 3]> {
        let account = |k: Key, key: Key| match k.value(keys) {
            Value::Atom(Atom::Int(amount)) => Some(Balance { key, nil: false, amount }),
            Value::Atom(Atom::Nil) => Some(Balance { key, nil: true, amount: 0 }),
            _ => None,
        };
        Some([
            account(self.from, Key::FROM)?,
            account(self.to, Key::TO)?,
            Balance { key: Key::AMOUNT, nil: false, amount: self.amount },
        ])
    }
}

fn transfer_of(entries: &[(Value, Value)], keys: &KeyTable) -> Option<OpValue> {
    let is_kw = |k: &Value, name: &str| matches!(k, Value::Atom(Atom::Keyword(n)) if &**n == name);
    match entries {
        [(f, from), (t, to), (a, Value::Atom(Atom::Int(amount)))]
            if is_kw(f, "from") && is_kw(t, "to") && is_kw(a, "amount") =>
        {
            Some(OpValue::Transfer(Transfer {
                from: keys.key(from.clone())?,
                to: keys.key(to.clone())?,
                amount: *amount,
            }))
        }
        _ => None,
    }
}

fn balances_of(entries: &[(Value, Value)], keys: &KeyTable) -> Option<OpValue> {
    let mut out = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let (nil, amount) = match v {
            Value::Atom(Atom::Int(n)) => (false, *n),
            Value::Atom(Atom::Nil) => (true, 0),
            _ => return None,
        };
        out.push(Balance { key: keys.key(k.clone())?, nil, amount });
    }
    Some(OpValue::Balances(out.into_boxed_slice()))
}

fn ints_of(c: Coll, xs: Vec<Value>, rebuild: fn(Vec<Value>) -> Value) -> OpValue {
    let ints: Option<Vec<i64>> = xs
        .iter()
        .map(|x| match x {
            Value::Atom(Atom::Int(n)) => Some(*n),
            _ => None,
        })
        .collect();
    match ints {
        Some(ints) => OpValue::Ints(c, ints.into_boxed_slice()),
        None => OpValue::Other(Box::new(rebuild(xs))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edn(s: &str) -> Value {
        // Inside a history vector, so that a vector is one value.
        match crate::ingest::edn::parse_values("t.edn", format!("[{s}]").as_bytes()) {
            Ok(mut v) if v.len() == 1 => v.remove(0).0,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn compact_forms_turn_back_into_the_value_as_written() {
        let keys = KeyTable::default();
        let cases = [
            ("nil", "nil"),
            ("-7", "int"),
            ("{:from 1, :to :b, :amount 4}", "transfer"),
            ("{:to 1, :from 2, :amount 4}", "balances"),
            ("{:from 1, :to 2, :amount 4, :why 1}", "balances"),
            ("{0 10, :x nil, \"y\" -3, 0 10, 3000000000 1}", "balances"),
            ("{0 10, 1 1.5}", "other"),
            ("[1 2 3]", "ints"),
            ("#{3 1 1}", "ints"),
            ("(1)", "ints"),
            ("[]", "ints"),
            ("[1 :x]", "other"),
            ("7N", "other"),
            ("\"s\"", "other"),
        ];
        for (text, shape) in cases {
            let v = edn(text);
            let c = OpValue::of_value(v.clone(), &keys);
            let got = match &c {
                OpValue::Nil => "nil",
                OpValue::Int(_) => "int",
                OpValue::Transfer(_) => "transfer",
                OpValue::Balances(_) => "balances",
                OpValue::Ints(..) => "ints",
                OpValue::Other(_) => "other",
            };
            assert_eq!(got, shape, "{text}");
            let back = c.to_value(&keys.inner.lock().expect("lock").values);
            assert_eq!(back.to_string(), v.to_string(), "{text}");
            assert!(back == v, "{text}");
        }
    }

    #[test]
    fn equal_keys_are_equal_values() {
        let keys = KeyTable::default();
        let a = keys.key(Value::Atom(Atom::Keyword("a".into())));
        assert_eq!(a, keys.key(Value::Atom(Atom::Keyword("a".into()))));
        assert_ne!(a, keys.key(Value::Atom(Atom::Str("a".into()))));
        assert_eq!(keys.key(Value::Atom(Atom::Int(5))), Some(Key(5)));
        let big = keys.key(Value::Atom(Atom::Int(-1))).expect("key");
        assert_ne!(big.0 & INTERNED, 0);
        assert_eq!(big.value(&keys.into_values()), Value::Atom(Atom::Int(-1)));
    }
}
