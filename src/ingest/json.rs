//! Reader for elle-cli JSON histories: one JSON array of op objects such as
//! `{"type": "ok", "f": "txn", "value": [["append", 3, 1], ["r", 3, [1]]],
//! "process": 0, "time": 123, "index": 0}` (a sequence of top-level objects,
//! as in JSON Lines, is accepted too).
//!
//! Like the EDN reader this is a single pass over the bytes straight into
//! [`HistoryBuilder`], so that semantic errors (a bad micro-op, a non-integer
//! append) can be reported at their exact line and column, which a parse into
//! `serde_json::Value` would lose. `serde_json` decodes string literals that
//! contain escapes (the rare case), so that escape and surrogate handling is
//! exactly JSON's.
//!
//! Mapping: `"type"`, `"f"` and the micro-op function names become keywords
//! ([`Atom::Keyword`]); keys stay as written (`"x"` is [`Atom::Str`], `3` is
//! [`Atom::Int`]); `null` is nil. Any other op field becomes an extra whose key
//! is the field name as a keyword (as for EDN's `:error`) and whose value maps
//! strings to [`Atom::Str`], integers to [`Atom::Int`] (beyond 64 bits:
//! [`Atom::BigInt`]), other numbers to [`Value::Float`], arrays to
//! [`Value::Vector`] and objects to [`Value::Map`] with string keys.
//!
//! Micro-op keys and values may be any JSON value, mapped the same way:
//! integer values take the fast path of the integer mode (see
//! [`crate::history`]), anything else (a string, a float, an array as a
//! register value or list element, an integer beyond 64 bits) is interned by
//! [`HistoryBuilder::value`]. `null` keeps its meaning (a read of the initial
//! state, a write of nil). Which of `"time"`, `"f"` and `"value"` an op gave is
//! recorded so that reports echo it with exactly those fields.
//!
//! Elle's closed-predicate micro-ops are spelled as the EDN ones with
//! keywords as strings (as `isolde convert --to json` writes them): an
//! `"init"` op's `"value"` is an object `{"k": v, ...}`; `["insert", k, v]`,
//! `["delete", k]` (or `["delete", k, null]`), and predicate reads `["rp",
//! PRED, RESULT]` with PRED `"true"`, `["=", v]` or `["mod", m, r]` (a
//! function name may keep its colon, `":true"`) and RESULT `null` or an
//! object. Object keys are strings in JSON: one that spells an integer
//! (`"12"`, as JSON encoders write integer keys) is that integer key, any
//! other a string key.

use super::edn::{int_key, utf8, MAX_DEPTH};
use super::error::{count_newlines, line_col, perr, IngestError, PErr, PResult};
use super::num::scan_digits;
use crate::history::{field, Atom, History, HistoryBuilder, KeyId, Mop, MopFn, MopValue, OpType, RawOp, Value};
use rustc_hash::FxHashMap;
use std::borrow::Cow;

#[inline(always)]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

/// Bits recording which op fields were seen (to reject duplicates).
const F_TYPE: u8 = 1;
const F_F: u8 = 2;
const F_VALUE: u8 = 4;
const F_PROCESS: u8 = 8;
const F_TIME: u8 = 16;
const F_INDEX: u8 = 32;

/// What is known about an op's `"process"` while its object is being read.
enum Proc {
    Unknown,
    Client(i64),
    NonClient,
}

/// A JSON number token, classified.
enum Num {
    Int(i64),
    /// An integer beyond 64 bits.
    BigInt,
    Float,
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    line_pos: usize,
    line_no: usize,
    small_keys: Vec<u32>,
    str_keys: FxHashMap<&'a [u8], KeyId>,
}

impl<'a> Parser<'a> {
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    #[cold]
    fn loc(&self, pos: usize) -> String {
        let (l, c) = line_col(self.src, pos);
        format!("{l}:{c}")
    }

    fn line_at(&mut self, pos: usize) -> u32 {
        self.line_no += count_newlines(&self.src[self.line_pos..pos]);
        self.line_pos = pos;
        u32::try_from(self.line_no).unwrap_or(u32::MAX)
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        while self.src.get(self.pos).is_some_and(|&c| is_ws(c)) {
            self.pos += 1;
        }
    }

    /// Consumes `c` (after whitespace) or fails expecting `what`.
    #[inline(always)]
    fn expect(&mut self, c: u8, what: &'static str) -> PResult<()> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(perr(self.pos, what))
        }
    }

    /// Whether the literal `word` (`null`, `true`, `false`) is at the cursor.
    #[inline]
    fn at_word(&self, word: &[u8]) -> bool {
        self.src.get(self.pos..self.pos + word.len()) == Some(word)
            && self.src.get(self.pos + word.len()).is_none_or(|c| !c.is_ascii_alphanumeric())
    }

    /// Reads a number token at the cursor (strict JSON grammar).
    #[inline(always)]
    fn number(&mut self) -> PResult<Num> {
        let s = self.src;
        let start = self.pos;
        let mut i = start;
        let neg = s.get(i) == Some(&b'-');
        if neg {
            i += 1;
        }
        let digits = i;
        let (v, nd) = scan_digits(s, i);
        i += nd;
        if nd == 0 || (nd > 1 && s[digits] == b'0') {
            return Err(perr(start, "a JSON number"));
        }
        let mut float = false;
        if s.get(i) == Some(&b'.') {
            i += 1;
            let f = i;
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == f {
                return Err(perr(start, "a JSON number"));
            }
            float = true;
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(s.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let e = i;
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == e {
                return Err(perr(start, "a JSON number"));
            }
            float = true;
        }
        if s.get(i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.') {
            return Err(perr(start, "a JSON number"));
        }
        self.pos = i;
        if float {
            return Ok(Num::Float);
        }
        if nd > 19 {
            return Ok(Num::BigInt);
        }
        let r = if neg {
            if v > 1 << 63 {
                return Ok(Num::BigInt);
            }
            (v as i64).wrapping_neg()
        } else {
            match i64::try_from(v) {
                Ok(r) => r,
                Err(_) => return Ok(Num::BigInt),
            }
        };
        Ok(Num::Int(r))
    }

    /// Whether a number starts at the cursor.
    #[inline(always)]
    fn at_number(&self) -> bool {
        matches!(self.peek(), Some(b'0'..=b'9' | b'-'))
    }

    /// Reads an integer at the cursor; `what` describes it for errors.
    #[inline(always)]
    fn int(&mut self, what: &'static str) -> PResult<i64> {
        let start = self.pos;
        if !self.at_number() {
            return Err(perr(start, what));
        }
        match self.number()? {
            Num::Int(n) => Ok(n),
            Num::BigInt => Err(perr(start, format!("{what} (within the 64-bit range)"))),
            Num::Float => Err(perr(start, what)),
        }
    }

    /// Reads a string literal at the cursor (which is at `"`).
    #[inline]
    fn string(&mut self) -> PResult<Cow<'a, str>> {
        let open = self.pos;
        let s = self.src;
        let mut i = open + 1;
        let mut escaped = false;
        loop {
            match s.get(i) {
                None => return Err(perr(s.len(), format!("a closing \" for the string opened at {}", self.loc(open)))),
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    i += 2;
                }
                Some(&c) if c < 0x20 => return Err(perr(i, "no control characters in a JSON string (use escapes)")),
                Some(_) => i += 1,
            }
        }
        let close = i;
        self.pos = close + 1;
        if !escaped {
            return Ok(Cow::Borrowed(utf8(&s[open + 1..close], open + 1)?));
        }
        // Rare: let serde_json decode the escapes.
        match serde_json::from_slice::<String>(&s[open..=close]) {
            Ok(t) => Ok(Cow::Owned(t)),
            Err(e) => {
                // The literal is on one line, so serde_json's column is a
                // byte offset into it.
                let at = open + e.column().saturating_sub(1).min(close - open);
                Err(perr(at, "a valid JSON string escape"))
            }
        }
    }

    /// Reads any JSON value.
    fn value(&mut self, depth: u32) -> PResult<Value> {
        if depth > MAX_DEPTH {
            return Err(perr(self.pos, "nesting at most 512 levels deep"));
        }
        self.skip_ws();
        let start = self.pos;
        Ok(match self.peek() {
            Some(b'"') => Value::Atom(Atom::Str(self.string()?.into())),
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.list_sep(b']', start)? {
                            break;
                        }
                    }
                }
                Value::Vector(items)
            }
            Some(b'{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                } else {
                    loop {
                        self.skip_ws();
                        if self.peek() != Some(b'"') {
                            return Err(perr(self.pos, "a string key"));
                        }
                        let k = Value::Atom(Atom::Str(self.string()?.into()));
                        self.expect(b':', "`:` after the key")?;
                        let v = self.value(depth + 1)?;
                        entries.push((k, v));
                        if self.list_sep(b'}', start)? {
                            break;
                        }
                    }
                }
                Value::Map(entries)
            }
            Some(b'0'..=b'9' | b'-') => match self.number()? {
                Num::Int(n) => Value::Atom(Atom::Int(n)),
                Num::BigInt => Value::Atom(Atom::BigInt(String::from_utf8_lossy(&self.src[start..self.pos]).into())),
                Num::Float => match std::str::from_utf8(&self.src[start..self.pos]).ok().and_then(|t| t.parse().ok()) {
                    Some(f) => Value::Float(f),
                    None => return Err(perr(start, "a JSON number")),
                },
            },
            _ if self.at_word(b"null") => {
                self.pos += 4;
                Value::Atom(Atom::Nil)
            }
            _ if self.at_word(b"true") => {
                self.pos += 4;
                Value::Atom(Atom::Bool(true))
            }
            _ if self.at_word(b"false") => {
                self.pos += 5;
                Value::Atom(Atom::Bool(false))
            }
            _ => return Err(perr(start, "a JSON value")),
        })
    }

    /// After an element of an array/object opened at `open`: consumes `,`
    /// (returning false) or the `close` bracket (returning true).
    #[inline(always)]
    fn list_sep(&mut self, close: u8, open: usize) -> PResult<bool> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(close) {
                    let what = if close == b'}' { "another key after `,`" } else { "another element after `,`" };
                    return Err(perr(self.pos, what));
                }
                Ok(false)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(perr(
                self.pos,
                format!("`,` or `{}` to close the bracket opened at {}", close as char, self.loc(open)),
            )),
        }
    }

    /// Reads a micro-op key: a string, an integer, a boolean or null.
    #[inline(always)]
    fn key(&mut self, b: &mut HistoryBuilder) -> PResult<KeyId> {
        self.skip_ws();
        let kpos = self.pos;
        match self.peek() {
            Some(b'"') => match self.string()? {
                Cow::Borrowed(s) => {
                    if let Some(&k) = self.str_keys.get(s.as_bytes()) {
                        return Ok(k);
                    }
                    let k = b.key(Atom::Str(s.into()));
                    self.str_keys.insert(s.as_bytes(), k);
                    Ok(k)
                }
                Cow::Owned(s) => Ok(b.key(Atom::Str(s.into()))),
            },
            Some(b'0'..=b'9' | b'-') => match self.number()? {
                Num::Int(n) => Ok(int_key(&mut self.small_keys, b, n)),
                _ => {
                    self.pos = kpos;
                    let v = self.value(3)?;
                    Ok(b.key_value(v))
                }
            },
            _ => {
                let v = self.value(3)?;
                Ok(b.key_value(v))
            }
        }
    }

    /// Reads a value that is not `null`, returning its identity: integers
    /// take the fast path.
    #[inline(always)]
    fn scalar(&mut self, b: &mut HistoryBuilder, depth: u32) -> PResult<i64> {
        if self.at_number() {
            let start = self.pos;
            // Anything but a 64-bit integer (or a malformed number, which
            // the general reader reports) takes the general path.
            if let Ok(Num::Int(n)) = self.number() {
                return Ok(b.int_value(n));
            }
            self.pos = start;
        }
        self.general_value(b, depth)
    }

    /// Reads any value and interns it (the rare, non-integer path).
    #[cold]
    #[inline(never)]
    fn general_value(&mut self, b: &mut HistoryBuilder, depth: u32) -> PResult<i64> {
        let v = self.value(depth)?;
        Ok(b.value(v))
    }

    /// Reads one micro-op array; the cursor is at its `[`.
    #[inline(always)]
    fn mop(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        let open = self.pos;
        self.pos += 1;
        self.skip_ws();
        let fpos = self.pos;
        const FNS: &str =
            "micro-op function \"append\", \"r\", \"w\", or (closed-predicate) \"insert\", \"delete\" or \"rp\"";
        let f = if self.peek() == Some(b'"') {
            // A leading `:` (an EDN keyword spelled as a string) is allowed.
            match self.string()?.trim_start_matches(':') {
                "append" => MopFn::Append,
                "r" => MopFn::Read,
                "w" => MopFn::Write,
                "insert" => MopFn::Insert,
                "delete" => MopFn::Delete,
                "rp" => return self.pred_read(b, open),
                _ => return Err(perr(fpos, FNS)),
            }
        } else {
            return Err(perr(fpos, FNS));
        };
        self.expect(b',', "`,` after the micro-op function")?;
        let key = self.key(b)?;
        self.skip_ws();
        let optional = matches!(f, MopFn::Read | MopFn::Delete);
        let value = if optional && self.peek() == Some(b']') {
            MopValue::Nil
        } else {
            self.expect(b',', "`,` or `]` after the micro-op key")?;
            self.skip_ws();
            match f {
                MopFn::Append | MopFn::Insert => MopValue::Int(self.scalar(b, 3)?),
                MopFn::Write | MopFn::Delete if self.at_word(b"null") => {
                    self.pos += 4;
                    MopValue::Nil
                }
                MopFn::Write => MopValue::Int(self.scalar(b, 3)?),
                MopFn::Delete => return Err(perr(self.pos, "null or `]` after the key of a \"delete\"")),
                MopFn::Read => self.read_value(b)?,
                // Read by `pred_read`.
                MopFn::PredRead | MopFn::PredEntry => MopValue::Nil,
            }
        };
        self.close_mop(open)?;
        b.push_mop(Mop { f, key, value });
        Ok(())
    }

    /// Expects the `]` of the micro-op opened at `open`.
    fn close_mop(&mut self, open: usize) -> PResult<()> {
        self.skip_ws();
        if self.peek() != Some(b']') {
            return Err(perr(self.pos, format!("`]` to close the micro-op opened at {}", self.loc(open))));
        }
        self.pos += 1;
        Ok(())
    }

    /// Reads the rest of a predicate read `["rp", PRED, RESULT]` (the cursor
    /// is after `"rp"`), as the EDN reader reads `[:rp PRED RESULT]`: the
    /// predicate, interned as the micro-op's key in its EDN form (`"true"`
    /// is `:true`, `["=", v]` is `[:= v]`, `["mod", m, r]` is `[:mod m r]`;
    /// each function name may also be written with its colon), and the
    /// result, `null` or an object `{"k": v, ...}` whose entries follow the
    /// [`MopFn::PredRead`] as [`MopFn::PredEntry`] micro-ops (see
    /// [`Self::object_key`] for the keys).
    fn pred_read(&mut self, b: &mut HistoryBuilder, open: usize) -> PResult<()> {
        self.expect(b',', "`,` and a predicate after \"rp\"")?;
        self.skip_ws();
        let pred = self.predicate()?;
        let key = b.key_value(pred);
        let at = b.mop_count();
        b.push_mop(Mop { f: MopFn::PredRead, key, value: MopValue::Nil });
        self.skip_ws();
        if self.peek() == Some(b',') {
            self.pos += 1;
            self.skip_ws();
            match self.peek() {
                Some(b'{') => {
                    let n = self.pred_entries(b)?;
                    b.set_mop_value(at, MopValue::Entries(n));
                }
                _ if self.at_word(b"null") => self.pos += 4,
                _ => return Err(perr(self.pos, "a predicate read's result: null or an object {\"k\": v, ...}")),
            }
        }
        self.close_mop(open)
    }

    /// Reads a predicate (see [`Self::pred_read`]) as its EDN value.
    fn predicate(&mut self) -> PResult<Value> {
        const PRED: &str = "a predicate: \"true\", [\"=\", v] or [\"mod\", m, r]";
        let start = self.pos;
        let kw = |s: &str| Value::Atom(Atom::Keyword(s.into()));
        match self.peek() {
            Some(b'"') => match self.string()?.trim_start_matches(':') {
                "true" => Ok(kw("true")),
                _ => Err(perr(start, PRED)),
            },
            Some(b'[') => {
                self.pos += 1;
                self.skip_ws();
                let name = match self.peek() {
                    Some(b'"') => self.string()?,
                    _ => return Err(perr(start, PRED)),
                };
                match name.trim_start_matches(':') {
                    "=" => {
                        self.expect(b',', "`,` and a value after \"=\"")?;
                        let v = self.value(4)?;
                        self.expect(b']', "`]` to close the predicate [\"=\", v]")?;
                        Ok(Value::Vector(vec![kw("="), v]))
                    }
                    "mod" => {
                        self.expect(b',', "`,` and a modulus after \"mod\"")?;
                        self.skip_ws();
                        let m = self.int("an integer modulus")?;
                        self.expect(b',', "`,` and a remainder after the modulus")?;
                        self.skip_ws();
                        let r = self.int("an integer remainder")?;
                        self.expect(b']', "`]` to close the predicate [\"mod\", m, r]")?;
                        Ok(Value::Vector(vec![kw("mod"), Value::Atom(Atom::Int(m)), Value::Atom(Atom::Int(r))]))
                    }
                    _ => Err(perr(start, PRED)),
                }
            }
            _ => Err(perr(start, PRED)),
        }
    }

    /// Reads the key of an object entry (a predicate read's result, an
    /// `:init` value): JSON keys are strings, so a string that is an
    /// integer as written by a JSON encoder (`"12"`, `"-3"`: no sign, zero
    /// or space besides) is that integer key, as `["r", 12]` would name it,
    /// and any other string is a string key, as `["r", "x"]` would.
    fn object_key(&mut self, b: &mut HistoryBuilder) -> PResult<KeyId> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(perr(self.pos, "a string key"));
        }
        let s = self.string()?;
        if let Some(n) = canonical_int(&s) {
            return Ok(int_key(&mut self.small_keys, b, n));
        }
        Ok(match s {
            Cow::Borrowed(s) => match self.str_keys.get(s.as_bytes()) {
                Some(&k) => k,
                None => {
                    let k = b.key(Atom::Str(s.into()));
                    self.str_keys.insert(s.as_bytes(), k);
                    k
                }
            },
            Cow::Owned(s) => b.key(Atom::Str(s.into())),
        })
    }

    /// Reads an object `{"k": v, ...}` (the cursor is at its `{`) as one
    /// micro-op of `f` per entry (`null` values are nil); returns how many.
    fn object_mops(&mut self, b: &mut HistoryBuilder, f: MopFn) -> PResult<u32> {
        let open = self.pos;
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(0);
        }
        let mut n = 0u32;
        loop {
            let key = self.object_key(b)?;
            self.expect(b':', "`:` after the key")?;
            self.skip_ws();
            let value = if self.at_word(b"null") {
                self.pos += 4;
                MopValue::Nil
            } else {
                MopValue::Int(self.scalar(b, 3)?)
            };
            b.push_mop(Mop { f, key, value });
            n += 1;
            if self.list_sep(b'}', open)? {
                return Ok(n);
            }
        }
    }

    /// A predicate read's result object, as [`MopFn::PredEntry`] micro-ops.
    fn pred_entries(&mut self, b: &mut HistoryBuilder) -> PResult<u32> {
        self.object_mops(b, MopFn::PredEntry)
    }

    /// Reads a read's value: null, an array of values, or another value.
    #[inline(always)]
    fn read_value(&mut self, b: &mut HistoryBuilder) -> PResult<MopValue> {
        match self.peek() {
            Some(b'[') => {
                let open = self.pos;
                self.pos += 1;
                let start = b.begin_list();
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                } else {
                    loop {
                        self.skip_ws();
                        let e = self.scalar(b, 4)?;
                        b.push_element(e);
                        if self.list_sep(b']', open)? {
                            break;
                        }
                    }
                }
                Ok(b.finish_list(start))
            }
            _ if self.at_word(b"null") => {
                self.pos += 4;
                Ok(MopValue::Nil)
            }
            _ => Ok(MopValue::Int(self.scalar(b, 3)?)),
        }
    }

    /// Reads a client op's `"value"`: null, an array of micro-ops, or an
    /// object `{"k": v, ...}` (a closed-predicate `:init`), read as one
    /// `[:w k v]` micro-op per entry as the EDN reader does.
    fn mops(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        match self.peek() {
            Some(b'{') => self.object_mops(b, MopFn::Write).map(drop),
            Some(b'[') => {
                let open = self.pos;
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(());
                }
                loop {
                    self.skip_ws();
                    if self.peek() != Some(b'[') {
                        return Err(perr(self.pos, "a micro-op array like [\"append\", k, v]"));
                    }
                    self.mop(b)?;
                    if self.list_sep(b']', open)? {
                        return Ok(());
                    }
                }
            }
            _ if self.at_word(b"null") => {
                self.pos += 4;
                Ok(())
            }
            _ => Err(perr(
                self.pos,
                "a \"value\" of null or an array of micro-ops like [[\"append\", k, v]] (an object only for a \
                 closed-predicate \"init\" op)",
            )),
        }
    }

    /// Reads an optional integer field; null means absent.
    fn opt_int(&mut self, what: &'static str) -> PResult<Option<i64>> {
        if self.at_word(b"null") {
            self.pos += 4;
            return Ok(None);
        }
        self.int(what).map(Some)
    }

    /// Reads one op object (the cursor is at its `{`).
    fn op_object(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        let open = self.pos;
        self.pos += 1;
        let line = self.line_at(open);
        let mop_start = b.mop_count();
        let mut op_type = None;
        let mut process = Proc::Unknown;
        let (mut time, mut index) = (None, None);
        let mut f = Atom::Nil;
        let mut seen = 0u8;
        let mut fields = 0u8;
        let mut deferred: Option<Box<PErr>> = None;
        // Where an object `"value"` began (only an `"init"` op takes one).
        let mut map_value: Option<usize> = None;
        let mut extras = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.skip_ws();
                let kpos = self.pos;
                if self.peek() != Some(b'"') {
                    return Err(perr(kpos, "a string key"));
                }
                let name = self.string()?;
                let field = match name.as_ref() {
                    "type" => F_TYPE,
                    "f" => F_F,
                    "value" => F_VALUE,
                    "process" => F_PROCESS,
                    "time" => F_TIME,
                    "index" => F_INDEX,
                    _ => 0,
                };
                self.expect(b':', "`:` after the key")?;
                self.skip_ws();
                if field == 0 {
                    let v = self.value(1)?;
                    extras.push((Value::Atom(Atom::Keyword(name.into())), v));
                } else {
                    if seen & field != 0 {
                        return Err(perr(kpos, "each key at most once in an op object"));
                    }
                    seen |= field;
                    let vpos = self.pos;
                    match field {
                        F_F => fields |= field::F,
                        // A value starting with `n` is `null` (or an error).
                        F_VALUE if self.peek() == Some(b'n') => fields |= field::VALUE | field::VALUE_NIL,
                        F_VALUE if self.peek() == Some(b'{') => {
                            map_value = Some(vpos);
                            fields |= field::VALUE | field::VALUE_MAP;
                        }
                        F_VALUE => fields |= field::VALUE,
                        _ => {}
                    }
                    match field {
                        F_TYPE => {
                            let t = if self.peek() == Some(b'"') {
                                match self.string()?.as_ref() {
                                    "invoke" => Some(OpType::Invoke),
                                    "ok" => Some(OpType::Ok),
                                    "fail" => Some(OpType::Fail),
                                    "info" => Some(OpType::Info),
                                    _ => None,
                                }
                            } else {
                                None
                            };
                            match t {
                                Some(t) => op_type = Some(t),
                                None => {
                                    return Err(perr(
                                        vpos,
                                        "an op \"type\" of \"invoke\", \"ok\", \"fail\" or \"info\"",
                                    ))
                                }
                            }
                        }
                        F_F => match self.value(1)? {
                            Value::Atom(Atom::Str(s)) => f = Atom::Keyword(s),
                            Value::Atom(a) => f = a,
                            _ => {
                                if deferred.is_none() {
                                    deferred = Some(perr(vpos, "a string, integer, boolean or null as \"f\""));
                                }
                            }
                        },
                        F_VALUE => match process {
                            Proc::NonClient => drop(self.value(1)?),
                            Proc::Client(_) => self.mops(b)?,
                            Proc::Unknown => {
                                if let Err(e) = self.mops(b) {
                                    self.pos = vpos;
                                    drop(self.value(1)?);
                                    if deferred.is_none() {
                                        deferred = Some(e);
                                    }
                                }
                            }
                        },
                        F_PROCESS => {
                            process = match self.value(1)? {
                                Value::Atom(Atom::Int(p)) => Proc::Client(p),
                                _ => Proc::NonClient,
                            };
                        }
                        F_TIME => {
                            time = self.opt_int("an integer \"time\"")?;
                            fields |= if time.is_some() { field::TIME } else { field::TIME | field::TIME_NIL };
                        }
                        _ => index = self.opt_int("an integer \"index\"")?,
                    }
                }
                if self.list_sep(b'}', open)? {
                    break;
                }
            }
        }
        let Some(op_type) = op_type else {
            return Err(Box::new(PErr {
                pos: open,
                expected: "a \"type\" in every op object".into(),
                found: Some("an op object without one".into()),
            }));
        };
        let process = match process {
            Proc::Client(p) => {
                if let Some(e) = deferred {
                    return Err(e);
                }
                if let Some(pos) = map_value.filter(|_| !matches!(&f, Atom::Keyword(k) if &**k == "init")) {
                    return Err(perr(
                        pos,
                        "a \"value\" of null or an array of micro-ops like [[\"append\", k, v]] (an object only \
                         for a closed-predicate \"init\" op)",
                    ));
                }
                Some(p)
            }
            _ => None,
        };
        b.push_op_with(RawOp { index, time, op_type, process, f, extras, line }, mop_start, fields);
        Ok(())
    }

    fn document(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        const OP: &str = "an op object like {\"type\": \"invoke\", \"f\": \"txn\", \"value\": [...], \"process\": 0}";
        self.skip_ws();
        match self.peek() {
            None => Ok(()),
            Some(b'[') => {
                let open = self.pos;
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                } else {
                    loop {
                        self.skip_ws();
                        if self.peek() != Some(b'{') {
                            return Err(perr(self.pos, OP));
                        }
                        self.op_object(b)?;
                        if self.list_sep(b']', open)? {
                            break;
                        }
                    }
                }
                self.skip_ws();
                if self.pos < self.src.len() {
                    return Err(perr(self.pos, "end of input after the history array"));
                }
                Ok(())
            }
            Some(b'{') => loop {
                // A sequence of op objects (JSON Lines).
                self.skip_ws();
                match self.peek() {
                    None => return Ok(()),
                    Some(b'{') => self.op_object(b)?,
                    Some(_) => return Err(perr(self.pos, OP)),
                }
            },
            Some(_) => Err(perr(self.pos, "a JSON array of op objects")),
        }
    }
}

/// The integer a JSON object key stands for: the decimal form a JSON
/// encoder writes of an integer key (no `+`, no leading zero, no `-0`),
/// within 64 bits.
fn canonical_int(s: &str) -> Option<i64> {
    let n: i64 = s.parse().ok()?;
    (n.to_string() == s).then_some(n)
}

/// Reads a JSON document as generic values (see `edn::parse_values`): the
/// elements of one top-level array, or top-level values one after another,
/// each with its 1-based line.
pub(crate) fn parse_values(source: &str, input: &[u8]) -> Result<Vec<(Value, u32)>, IngestError> {
    let mut p =
        Parser { src: input, pos: 0, line_pos: 0, line_no: 1, small_keys: Vec::new(), str_keys: FxHashMap::default() };
    let run = |p: &mut Parser<'_>| -> PResult<Vec<(Value, u32)>> {
        let mut out = Vec::new();
        p.skip_ws();
        if p.peek() == Some(b'[') {
            let open = p.pos;
            p.pos += 1;
            p.skip_ws();
            if p.peek() == Some(b']') {
                p.pos += 1;
            } else {
                loop {
                    p.skip_ws();
                    let line = p.line_at(p.pos);
                    out.push((p.value(1)?, line));
                    if p.list_sep(b']', open)? {
                        break;
                    }
                }
            }
            p.skip_ws();
            if p.pos < p.src.len() {
                return Err(perr(p.pos, "end of input after the history array"));
            }
            return Ok(out);
        }
        loop {
            p.skip_ws();
            if p.peek().is_none() {
                return Ok(out);
            }
            let line = p.line_at(p.pos);
            out.push((p.value(1)?, line));
        }
    };
    run(&mut p).map_err(|e| e.into_ingest(source, input))
}

/// Parses an elle-cli JSON history.
pub(crate) fn parse(source: &str, input: &[u8]) -> Result<History, IngestError> {
    let mut b = HistoryBuilder::new(source);
    let mut p =
        Parser { src: input, pos: 0, line_pos: 0, line_no: 1, small_keys: Vec::new(), str_keys: FxHashMap::default() };
    p.document(&mut b).map_err(|e| e.into_ingest(source, input))?;
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{json::edn_to_json, testkit};
    use crate::ingest::edn;

    fn ok(s: &str) -> History {
        match parse("h.json", s.as_bytes()) {
            Ok(h) => h,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn err(s: &str) -> String {
        match parse("h.json", s.as_bytes()) {
            Ok(h) => panic!("expected an error, got {} ops", h.ops.len()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn reads_elle_cli_json() {
        let h = ok(r#"[
            {"type": "invoke", "f": "txn", "value": [["append", 3, 1], ["r", "x", null], ["r", 3]], "process": 0, "time": 123, "index": 0},
            {"type": "ok", "f": "txn", "value": [["append", 3, 1], ["r", "x", []], ["r", 3, [1, -2]], ["w", 4, null], ["w", 4, 9]], "process": 0, "time": 124, "index": 1, "node": "n1"},
            {"type": "info", "f": "kill", "value": {"n1": true}, "process": "nemesis"}
        ]"#);
        assert_eq!(h.ops.len(), 2);
        assert_eq!(h.nonclient_ops, 1);
        let (a, b) = (h.ops[0], h.ops[1]);
        assert_eq!((a.op_type, b.op_type), (OpType::Invoke, OpType::Ok));
        assert_eq!((a.line, b.line), (2, 3));
        assert_eq!((b.time, b.index, b.process, b.pair), (124, 1, 0, 0));
        assert_eq!(h.f_of(&b), &Atom::Keyword("txn".into()));
        let m = h.mops_of(&b);
        assert_eq!(h.key(m[0].key), &Atom::Int(3));
        assert_eq!(h.key(m[1].key), &Atom::Str("x".into()));
        assert!(matches!(m[1].value, MopValue::List { len: 0, .. }));
        assert_eq!(h.list(m[2].value), &[1, -2]);
        assert_eq!((m[3].f, m[3].value), (MopFn::Write, MopValue::Nil));
        assert_eq!(m[4].value, MopValue::Int(9));
        let ma = h.mops_of(&a);
        assert_eq!((ma[1].value, ma[2].value), (MopValue::Nil, MopValue::Nil));
        assert_eq!(
            h.extras_of(&b),
            &[(Value::Atom(Atom::Keyword("node".into())), Value::Atom(Atom::Str("n1".into())))]
        );
    }

    #[test]
    fn extras_map_json_values() {
        let h = ok(
            r#"[{"type": "fail", "process": 1, "error": ["no-client", {"k": 1.5}, 18446744073709551616, "a\u00e9\n"]}]"#,
        );
        let ex = h.extras_of(&h.ops[0]);
        assert_eq!(ex[0].0, Value::Atom(Atom::Keyword("error".into())));
        assert_eq!(
            ex[0].1,
            Value::Vector(vec![
                Value::Atom(Atom::Str("no-client".into())),
                Value::Map(vec![(Value::Atom(Atom::Str("k".into())), Value::Float(1.5))]),
                Value::Atom(Atom::BigInt("18446744073709551616".into())),
                Value::Atom(Atom::Str("aé\n".into())),
            ])
        );
    }

    #[test]
    fn missing_index_and_time_and_jsonl() {
        let h = ok("{\"type\": \"invoke\", \"process\": 2}\n{\"type\": \"ok\", \"process\": 2, \"value\": null}\n");
        assert_eq!(h.ops.iter().map(|o| (o.index, o.time, o.line)).collect::<Vec<_>>(), vec![(0, -1, 1), (1, -1, 2)]);
        assert_eq!(h.ops[0].pair, 1);
    }

    #[test]
    fn reads_values_and_keys_of_any_json_type() {
        let h = ok(
            r#"[{"type": "ok", "process": 0, "f": "txn", "value": [["append", "k", "a"], ["r", "k", ["a", 1, 1.5, [2, "b"], null, 99999999999999999999]], ["w", [1, "x"], {"a": 1}], ["w", 2.5, "s"], ["r", "k", "a"]]}]"#,
        );
        assert!(!h.values.is_empty());
        let m = h.mops_of(&h.ops[0]);
        let text = |v: MopValue| match v {
            MopValue::Int(v) => h.value_text(v),
            MopValue::List { .. } => h.list(v).iter().map(|&e| h.value_text(e)).collect::<Vec<_>>().join(" "),
            MopValue::Nil | MopValue::Entries(_) => "nil".into(),
        };
        assert_eq!(text(m[0].value), "\"a\"");
        assert_eq!(text(m[1].value), "\"a\" 1 1.5 [2 \"b\"] nil 99999999999999999999");
        assert_eq!(h.key(m[2].key).to_string(), "[1 \"x\"]");
        assert_eq!(text(m[2].value), "{\"a\" 1}");
        assert_eq!(h.key(m[3].key).to_string(), "2.5");
        assert_eq!(m[4].value, m[0].value, "the read of \"a\" is the append of \"a\"");
        assert_eq!(h.ops[0].fields, crate::history::field::F | crate::history::field::VALUE);
    }

    #[test]
    fn errors_name_line_column() {
        let cases = [
            (
                "[{\"type\": \"ok\", \"process\": 0},\n {\"type\": \"done\", \"process\": 0}]",
                "h.json:2:11: expected an op \"type\" of \"invoke\", \"ok\", \"fail\" or \"info\", found \"done\"",
            ),
            (
                "[{\"type\": \"ok\", \"process\": 0, \"value\": [[\"incr\", 1, 1]]}]",
                "h.json:1:42: expected micro-op function \"append\", \"r\", \"w\", or (closed-predicate) \"insert\", \"delete\" or \"rp\", found \"incr\"",
            ),
            (
                "[{\"type\": \"ok\", \"process\": 0, \"value\": [[\"append\", 1, \"x]]}]",
                "h.json:1:61: expected a closing \" for the string opened at 1:55",
            ),
            (
                "[{\"type\": \"ok\", \"process\": 0",
                "h.json:1:29: expected `,` or `}` to close the bracket opened at 1:2, found end of input",
            ),
            ("[{\"type\": \"ok\", \"process\": 0,}]", "h.json:1:30: expected another key after `,`, found }"),
            (
                "[{\"type\": \"ok\", \"process\": 0}] x",
                "h.json:1:32: expected end of input after the history array, found x",
            ),
            ("\u{0}\u{1}", "h.json:1:1: expected a JSON array of op objects, found byte 0x00"),
            (
                "[{\"type\": \"ok\", \"process\": 0, \"value\": [\"r\"]}]",
                "h.json:1:41: expected a micro-op array like [\"append\", k, v], found \"r\"",
            ),
            ("[{\"process\": 0}]", "h.json:1:2: expected a \"type\" in every op object"),
            (
                "[{\"type\": \"ok\", \"process\": 0, \"value\": [[\"r\", 1, [1, 01]]]}]",
                "h.json:1:54: expected a JSON number, found 01",
            ),
        ];
        for (input, want) in cases {
            let got = err(input);
            assert!(got.contains(want), "input {input:?}\n  got:  {got}\n  want: {want}");
        }
    }

    /// Closed-predicate micro-ops read as the EDN reader reads them, from
    /// the JSON `isolde convert` writes of that EDN.
    #[test]
    fn closed_predicate_ops_read_as_the_edn_ones() {
        let edn_text = "{:index 0, :type :ok, :process 0, :f :init, :value {7 0, 5 1}}\n\
                        {:index 1, :type :ok, :process 1, :f :txn, :value [[:insert 9 2] [:delete 7] \
                        [:rp [:mod 2 0] {9 2, 5 nil}] [:rp :true nil] [:rp [:= 1] {}] [:r 9 2] [:w 5 3]]}\n";
        let json = edn_to_json(edn_text).unwrap_or_else(|e| panic!("{e}"));
        let (e, j) = (edn::parse_sequential("h", edn_text.as_bytes()), parse("h", json.as_bytes()));
        match (e, j) {
            (Ok(mut e), Ok(mut j)) => {
                for op in e.ops.iter_mut().chain(j.ops.iter_mut()) {
                    op.line = 0;
                }
                assert_eq!(format!("{e:?}"), format!("{j:?}"));
                let printed = crate::reports::edn::to_string(&j, &crate::reports::tree::op(&j, 1));
                assert_eq!(
                    printed,
                    "{:index 1, :type :ok, :process 1, :f :txn, :value [[:insert 9 2] [:delete 7] \
                     [:rp [:mod 2 0] {9 2, 5 nil}] [:rp :true nil] [:rp [:= 1] {}] [:r 9 2] [:w 5 3]]}"
                );
            }
            (e, j) => panic!("edn: {:?}\njson: {:?}", e.err(), j.err()),
        }
        // Other spellings: colons kept, a delete with null, string keys.
        let h = ok(
            r#"[{"type": "ok", "f": ":txn", "process": 0, "value": [[":rp", ":true", {"x": 1, "07": 2}], [":rp", [":=", "a"]], ["delete", "x", null]]}]"#,
        );
        let m = h.mops_of(&h.ops[0]);
        assert_eq!(h.key(m[0].key), &Atom::Keyword("true".into()));
        assert_eq!(h.key(m[1].key), &Atom::Str("x".into()));
        assert_eq!(h.key(m[2].key), &Atom::Str("07".into()));
        assert_eq!((m[3].f, m[4].f, m[4].value), (MopFn::PredRead, MopFn::Delete, MopValue::Nil));
    }

    #[test]
    fn malformed_closed_predicate_ops_name_the_position() {
        let cases = [
            (
                r#"[{"type": "ok", "process": 0, "value": [["rp", "false", {}]]}]"#,
                "h.json:1:48: expected a predicate: \"true\", [\"=\", v] or [\"mod\", m, r], found \"false\"",
            ),
            (
                r#"[{"type": "ok", "process": 0, "value": [["rp", ["mod", 2.5, 0], {}]]}]"#,
                "h.json:1:56: expected an integer modulus, found 2.5",
            ),
            (
                r#"[{"type": "ok", "process": 0, "value": [["rp", "true", [1]]]}]"#,
                "h.json:1:56: expected a predicate read's result: null or an object {\"k\": v, ...}",
            ),
            (
                r#"[{"type": "ok", "process": 0, "value": [["rp", "true", {"x"}]]}]"#,
                "h.json:1:60: expected `:` after the key",
            ),
            (
                r#"[{"type": "ok", "process": 0, "value": [["delete", 1, 2]]}]"#,
                "h.json:1:55: expected null or `]` after the key of a \"delete\"",
            ),
            (
                r#"[{"type": "ok", "process": 0, "value": [["incr", 1, 2]]}]"#,
                "h.json:1:42: expected micro-op function \"append\", \"r\", \"w\", or (closed-predicate) \"insert\", \"delete\" or \"rp\"",
            ),
            (
                r#"[{"type": "ok", "f": "txn", "process": 0, "value": {"x": 1}}]"#,
                "h.json:1:52: expected a \"value\" of null or an array of micro-ops",
            ),
        ];
        for (input, want) in cases {
            let got = err(input);
            assert!(got.contains(want), "input {input:?}\n  got:  {got}\n  want: {want}");
        }
        // An "init" op takes an object.
        let h = ok(r#"[{"type": "ok", "f": "init", "process": 0, "value": {"1": 0, "x": null}}]"#);
        assert_ne!(h.ops[0].fields & field::VALUE_MAP, 0);
        assert_eq!(h.mops_of(&h.ops[0]).len(), 2);
    }

    #[test]
    fn json_and_edn_of_the_same_history_are_equal() {
        let edn = testkit::sized_list_append(300_000, 3);
        let json = edn_to_json(&edn).unwrap_or_else(|e| panic!("{e}"));
        let e = edn::parse_sequential("h", edn.as_bytes());
        let j = parse("h", json.as_bytes());
        match (e, j) {
            (Ok(mut e), Ok(mut j)) => {
                assert!(e.ops.len() > 100);
                assert!(!e.extras.is_empty());
                assert!(e.nonclient_ops > 0);
                // Lines differ (the JSON is one op per line too, after a `[`).
                for op in e.ops.iter_mut().chain(j.ops.iter_mut()) {
                    op.line = 0;
                }
                assert_eq!(format!("{e:?}"), format!("{j:?}"));
            }
            (e, j) => panic!("edn: {:?}\njson: {:?}", e.err(), j.err()),
        }
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        const VALID: &str = "[{\"type\": \"invoke\", \"f\": \"txn\", \"value\": [[\"append\", 1, 1], [\"r\", \"x\", null]], \"process\": 0, \"time\": 1, \"index\": 0},\n\
            {\"type\": \"ok\", \"f\": \"txn\", \"value\": [[\"append\", 1, 1], [\"r\", \"x\", [1, 2]]], \"process\": 0, \"error\": {\"a\\u00e9\": [1.5e3, true]}},\n\
            {\"type\": \"info\", \"f\": \"start\", \"value\": {\"n1\": [\"n2\"]}, \"process\": \"nemesis\"}]\n";

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            #[test]
            fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
                let _ = parse("f.json", &bytes);
            }

            #[test]
            fn mutated_valid_history_never_panics(
                edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6)
            ) {
                let mut bytes = VALID.as_bytes().to_vec();
                for (at, byte, kind) in edits {
                    let i = at.index(bytes.len() + 1);
                    match kind {
                        0 => bytes.insert(i, byte),
                        1 if i < bytes.len() => { bytes.remove(i); }
                        _ if i < bytes.len() => bytes[i] = byte,
                        _ => {}
                    }
                }
                let _ = parse("f.json", &bytes);
            }
        }

        #[test]
        fn valid_fuzz_seed_parses() {
            let h = ok(VALID);
            assert_eq!(h.ops.len(), 2);
            assert_eq!(h.nonclient_ops, 1);
        }
    }
}
