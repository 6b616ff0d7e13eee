//! Set elements as the set checkers compare them: integers (the usual
//! elements, kept compact) and any other value, with the same equality and
//! order as the values they stand for.

use super::{Op, Ops};
use crate::history::{Atom, Value};
use crate::ingest::op_value::OpValue;
use std::borrow::Cow;
use std::cmp::Ordering;

/// One element. An integer is always [`Elem::Int`] (never a value holding
/// an integer), so derived equality and hashing are the values'.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Elem<'a> {
    /// An integer.
    Int(i64),
    /// Any other value.
    Val(Cow<'a, Value>),
}

impl<'a> Elem<'a> {
    /// The element a value stands for.
    pub fn of(v: &'a Value) -> Elem<'a> {
        match v {
            Value::Atom(Atom::Int(n)) => Elem::Int(*n),
            v => Elem::Val(Cow::Borrowed(v)),
        }
    }

    /// The element as a value.
    pub fn to_value(&self) -> Value {
        match self {
            Elem::Int(n) => Value::Atom(Atom::Int(*n)),
            Elem::Val(v) => v.clone().into_owned(),
        }
    }
}

impl Ord for Elem<'_> {
    /// The values' order.
    fn cmp(&self, o: &Self) -> Ordering {
        match (self, o) {
            (Elem::Int(a), Elem::Int(b)) => a.cmp(b),
            (Elem::Int(a), Elem::Val(b)) => Value::Atom(Atom::Int(*a)).cmp(b),
            (Elem::Val(a), Elem::Int(b)) => (**a).cmp(&Value::Atom(Atom::Int(*b))),
            (Elem::Val(a), Elem::Val(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for Elem<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The elements of a read, as stored.
#[derive(Clone, Copy, Debug)]
pub enum Members<'a> {
    /// Integers read compact.
    Ints(&'a [i64]),
    /// Values of a collection kept as written.
    Values(&'a [Value]),
}

impl<'a> Members<'a> {
    /// How many elements (duplicates counted).
    pub fn len(&self) -> usize {
        match self {
            Members::Ints(xs) => xs.len(),
            Members::Values(xs) => xs.len(),
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements in input order.
    pub fn iter(self) -> impl Iterator<Item = Elem<'a>> {
        let (ints, values): (&[i64], &[Value]) = match self {
            Members::Ints(xs) => (xs, &[]),
            Members::Values(xs) => (&[], xs),
        };
        ints.iter().map(|&n| Elem::Int(n)).chain(values.iter().map(Elem::of))
    }
}

impl Ops {
    /// The element an op's `:value` is (an `:add`'s).
    pub fn element<'s>(&'s self, o: &'s Op) -> Elem<'s> {
        match &o.value {
            OpValue::Int(n) => Elem::Int(*n),
            OpValue::Other(v) => Elem::of(v),
            v => Elem::Val(Cow::Owned(v.to_value(&self.keys))),
        }
    }

    /// The elements of an op's `:value` when it is a vector, list or set
    /// (a read's).
    pub fn members<'s>(&'s self, o: &'s Op) -> Option<Members<'s>> {
        match &o.value {
            OpValue::Ints(_, xs) => Some(Members::Ints(xs)),
            OpValue::Other(v) => super::elements(v).map(Members::Values),
            _ => None,
        }
    }
}

/// The distinct elements of `xs` in order, each with how often it occurs
/// (a multiset). Integers only (the usual case) are sorted as plain `i64`s.
pub fn counted(xs: Vec<Elem<'_>>) -> Vec<(Elem<'_>, usize)> {
    let ints: Option<Vec<i64>> = xs.iter().map(|x| if let Elem::Int(n) = x { Some(*n) } else { None }).collect();
    match ints {
        Some(mut ints) => {
            ints.sort_unstable();
            runs(ints.into_iter().map(Elem::Int))
        }
        None => {
            let mut xs = xs;
            xs.sort_unstable();
            runs(xs.into_iter())
        }
    }
}

/// Run-length counts of sorted elements.
fn runs<'a>(sorted: impl Iterator<Item = Elem<'a>>) -> Vec<(Elem<'a>, usize)> {
    let mut out: Vec<(Elem<'a>, usize)> = Vec::new();
    for x in sorted {
        match out.last_mut() {
            Some((e, n)) if *e == x => *n += 1,
            _ => out.push((x, 1)),
        }
    }
    out
}
