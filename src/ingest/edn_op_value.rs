//! The EDN reader's fast path for op values: the compact shapes of
//! [`OpValue`] (integers, `nil`, bank transfers and balance maps, runs of
//! integers) decoded straight from the text, with no value tree.
//!
//! The fast path only ever answers for input it fully understands, with the
//! same tokenizer as the generic parser (the same whitespace, comments,
//! integer syntax and delimiters); at anything else (a string, a float, a
//! tag, a nested collection, a syntax error) it gives up, the cursor goes
//! back to the value's start and the generic parser reads the value and
//! [`OpValue::of_value`] converts it. So both paths give the same value and
//! the same errors; keys the fast path interned before giving up are only
//! extra entries in the key table.

use super::Parser;
use crate::history::{Atom, Value};
use crate::ingest::error::PResult;
use crate::ingest::op_value::{Balance, Coll, Key, KeyTable, OpValue, Transfer};

impl<'a> Parser<'a> {
    /// Reads an op's `:value` (the cursor at its first byte) as an
    /// [`OpValue`]; with `fast`, compact shapes straight from the text.
    pub(super) fn op_value(&mut self, keys: &KeyTable, fast: bool) -> PResult<OpValue> {
        let start = self.pos;
        if fast {
            if let Some(v) = self.fast_value(keys) {
                return Ok(v);
            }
            self.pos = start;
        }
        let v = self.value(2)?;
        Ok(OpValue::of_value(v, keys))
    }

    /// A compact value, or `None` (cursor anywhere) to fall back.
    fn fast_value(&mut self, keys: &KeyTable) -> Option<OpValue> {
        match self.peek()? {
            b'{' => self.fast_map(keys),
            b'[' => self.fast_ints(Coll::Vector, b']'),
            b'(' => self.fast_ints(Coll::List, b')'),
            b'#' if self.src.get(self.pos + 1) == Some(&b'{') => {
                self.pos += 1;
                self.fast_ints(Coll::Set, b'}')
            }
            b'n' if self.at_word(b"nil") => {
                self.pos += 3;
                Some(OpValue::Nil)
            }
            _ if self.at_number() => self.int_token::<false>().map(OpValue::Int),
            _ => None,
        }
    }

    /// Integers up to `close` (the cursor at the opening bracket).
    fn fast_ints(&mut self, c: Coll, close: u8) -> Option<OpValue> {
        self.pos += 1;
        let mut xs = Vec::new();
        loop {
            self.skip_ws(3).ok()?;
            match self.peek()? {
                b if b == close => {
                    self.pos += 1;
                    return Some(OpValue::Ints(c, xs.into_boxed_slice()));
                }
                _ if self.at_number() => xs.push(self.int_token::<false>()?),
                _ => return None,
            }
        }
    }

    /// A transfer or a balance map (the cursor at `{`).
    fn fast_map(&mut self, keys: &KeyTable) -> Option<OpValue> {
        self.pos += 1;
        self.skip_ws(3).ok()?;
        if self.at_word(b":from") {
            return self.fast_transfer(keys);
        }
        let mut out = Vec::new();
        loop {
            self.skip_ws(3).ok()?;
            if self.peek()? == b'}' {
                self.pos += 1;
                return Some(OpValue::Balances(out.into_boxed_slice()));
            }
            let key = self.fast_key(keys)?;
            self.skip_ws(3).ok()?;
            let (nil, amount) = self.fast_int_or_nil()?;
            out.push(Balance { key, nil, amount });
        }
    }

    /// `{:from a, :to b, :amount n}` with integer or `nil` accounts (the
    /// cursor at `:from`); a map that only starts so is read generically.
    fn fast_transfer(&mut self, keys: &KeyTable) -> Option<OpValue> {
        let account = |p: &mut Self, word: &[u8]| -> Option<(bool, i64)> {
            p.skip_ws(3).ok()?;
            if !p.at_word(word) {
                return None;
            }
            p.pos += word.len();
            p.skip_ws(3).ok()?;
            p.fast_int_or_nil()
        };
        let from = account(self, b":from")?;
        let to = account(self, b":to")?;
        let (nil, amount) = account(self, b":amount")?;
        self.skip_ws(3).ok()?;
        if nil || self.peek()? != b'}' {
            return None;
        }
        self.pos += 1;
        let key =
            |(nil, n): (bool, i64)| keys.key(if nil { Value::Atom(Atom::Nil) } else { Value::Atom(Atom::Int(n)) });
        Some(OpValue::Transfer(Transfer { from: key(from)?, to: key(to)?, amount }))
    }

    /// An integer (`(false, n)`) or `nil` (`(true, 0)`).
    fn fast_int_or_nil(&mut self) -> Option<(bool, i64)> {
        if self.at_word(b"nil") {
            self.pos += 3;
            return Some((true, 0));
        }
        if !self.at_number() {
            return None;
        }
        self.int_token::<false>().map(|n| (false, n))
    }

    /// A map key: an integer or keyword from the text, anything else through
    /// the generic parser; interned.
    fn fast_key(&mut self, keys: &KeyTable) -> Option<Key> {
        if self.at_number() {
            let n = self.int_token::<false>()?;
            return Key::small(n).or_else(|| keys.key(Value::Atom(Atom::Int(n))));
        }
        let v = self.value(3).ok()?;
        self.skip_ws(3).ok()?;
        // A key must be followed by its value.
        match self.peek() {
            Some(c) if !super::is_closer(c) => keys.key(v),
            _ => None,
        }
    }
}
