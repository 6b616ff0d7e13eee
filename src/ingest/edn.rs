//! Reader for Jepsen `history.edn` files.
//!
//! # Why a hand-written reader
//!
//! A generic EDN crate would first build a tree of values (a heap allocation
//! per keyword, string, vector and map, tens of millions for a large history)
//! and then walk that tree a second time to fill the [`History`]. This reader
//! instead scans the bytes once and writes straight into the columnar model
//! through [`HistoryBuilder`]: integers are parsed in place, list reads are
//! pushed element by element into the shared arena, keys are interned through
//! per-chunk caches keyed by the input bytes themselves, and op fields are
//! recognised by comparing keyword bytes. Nothing is allocated per micro-op or
//! per list element (the only per-op allocation is the `:f` atom, which
//! [`RawOp`] takes by value); only rare things (extra fields such as `:error`,
//! non-client ops' values) go through the general [`Value`] parser.
//!
//! # Layout and parallelism
//!
//! A history is either a sequence of top-level op maps (usually one per line)
//! or one top-level vector/list of op maps. When the input is large, it is cut
//! at line starts whose first non-blank byte is `{` or `#` (the start of an op
//! map or a tagged record), the chunks are parsed in parallel into separate
//! builders (each counting its lines from its start as it reads, in the one
//! pass over its bytes; its ops' lines are then moved by the lines of the
//! chunks before it), and the builders are appended in order. Chunks are
//! about 32 MB (at least one per thread): appending copies every chunk but
//! the first, while smaller chunks keep the copies small. A cut can only
//! be wrong if it falls inside an op (inside a multi-line string or map); the
//! chunk before it then ends in the middle of a form, which is always a parse
//! error, and any chunk error makes the reader redo the whole input
//! sequentially. (For a vector-wrapped history the final bracket must be the
//! last non-blank byte, on a line without `;`, or the input is read
//! sequentially.) So the result, and every error message, is exactly that of
//! a sequential parse.
//!
//! # Accepted syntax
//!
//! Commas are whitespace; `;` comments and `#_` discards are skipped anywhere;
//! `#tag {...}` records at top level are read as op maps; strings with escapes,
//! keywords (also namespaced), symbols, integers (`-3`, `7N`), floats, `##Inf`,
//! characters (`\a`, `\newline`), sets, lists, vectors, maps, tagged values,
//! `true`, `false` and `nil` are all read. Characters, which the model has no
//! variant for, are kept as [`Atom::Symbol`] holding their source spelling
//! (`\a`), which prints back exactly; so are `M`-suffixed decimals. Integers
//! beyond 64 bits become [`Atom::BigInt`].
//!
//! # Keys and values
//!
//! Micro-op keys may be any EDN value (keywords, strings, integers, UUIDs,
//! vectors ...), interned by [`HistoryBuilder::key_value`]. Values take a fast
//! path while they are 64-bit integers (parsed in place and stored as they
//! are, see the integer mode in [`crate::history`]); any other value (a
//! string, keyword, `#uuid`, nested vector, float, big integer) is read as a
//! [`Value`] and interned by [`HistoryBuilder::value`]. `nil` keeps its
//! meaning: a read or write of `nil` is [`MopValue::Nil`].
//!
//! # Echo
//!
//! Which of `:time`, `:f` and `:value` an op map gave (and whether as `nil`)
//! is recorded in [`crate::history::Op::fields`], so reports print the op with
//! exactly the fields it was read with.

use super::error::{count_newlines, line_col, perr, IngestError, PErr, PResult};
use super::num::scan_digits;
use super::op_value::{KeyTable, OpValue};
use super::repeat_reads::{ListRead, RepeatReads};
use crate::history::{field, Atom, History, HistoryBuilder, KeyId, Mop, MopFn, MopValue, OpType, RawOp, Value, NONE};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::borrow::Cow;

#[path = "edn_op_value.rs"]
mod op_value_text;

/// Deepest nesting of collections (and chained `#_`) accepted; deeper input
/// is rejected instead of overflowing the stack.
pub(crate) const MAX_DEPTH: u32 = 512;

/// Integer keys in `0..SMALL_KEY_LIMIT` are interned through a dense table.
const SMALL_KEY_LIMIT: i64 = 1 << 20;

/// Inputs smaller than twice this are parsed sequentially.
pub(crate) const DEFAULT_MIN_CHUNK: usize = 1 << 20;

/// Input per parallel chunk of a large history: merging copies every chunk
/// but the first and frees it, so while merging the history's columns are
/// resident once plus one chunk's worth; smaller chunks cost only the copy.
const CHUNK_TARGET: usize = 32 << 20;

/// Gives back the resident pages of a byte range `[from, to)` of a
/// memory-mapped input that has been read (`MADV_DONTNEED`): a file-backed,
/// never-written map reads the same bytes again from the file if they are
/// touched later (an error message, a key's bytes), so this changes memory,
/// never what is read.
pub(crate) type Release<'r> = &'r (dyn Fn(usize, usize) + Sync);

/// Input read between two [`Release`] calls.
const RELEASE_STEP: usize = 16 << 20;

const WS: u8 = 1;
const DELIM: u8 = 2;
/// Bytes that may begin something `skip_ws` skips: whitespace, `;`, `#`.
const SKIP: u8 = 4;

/// Byte classes: whitespace (including `,`) and token delimiters.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let ws: [u8; 7] = [b' ', b',', b'\n', b'\t', b'\r', 0x0b, 0x0c];
    let mut i = 0;
    while i < ws.len() {
        t[ws[i] as usize] = WS | DELIM;
        i += 1;
    }
    let delims: [u8; 8] = [b'[', b']', b'(', b')', b'{', b'}', b'"', b';'];
    let mut i = 0;
    while i < delims.len() {
        t[delims[i] as usize] = DELIM;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        if t[i] & WS != 0 || i == b';' as usize || i == b'#' as usize {
            t[i] |= SKIP;
        }
        i += 1;
    }
    t
};

#[inline(always)]
fn is_ws(b: u8) -> bool {
    CLASS[b as usize] & WS != 0
}

#[inline(always)]
fn is_delim(b: u8) -> bool {
    CLASS[b as usize] & DELIM != 0
}

/// Whether `b` may start a symbol (or `nil`/`true`/`false`).
fn is_symbol_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b >= 0x80 || b"*+!-_?$%&=<>/.".contains(&b)
}

fn closer(open: u8) -> u8 {
    match open {
        b'[' => b']',
        b'(' => b')',
        _ => b'}',
    }
}

fn is_closer(b: u8) -> bool {
    matches!(b, b']' | b')' | b'}')
}

/// Bits recording which op fields were seen (to reject duplicates).
const F_TYPE: u8 = 1;
const F_F: u8 = 2;
const F_VALUE: u8 = 4;
const F_PROCESS: u8 = 8;
const F_TIME: u8 = 16;
const F_INDEX: u8 = 32;

/// What is known about an op's `:process` while its map is being read.
enum Proc {
    Unknown,
    Client(i64),
    NonClient,
}

/// A cursor over one chunk of the input; positions are absolute offsets into
/// the whole input so that errors can be located without adjustment.
struct Parser<'a> {
    /// The whole input (for locating messages).
    full: &'a [u8],
    /// The input up to the end of this chunk.
    src: &'a [u8],
    /// Current offset.
    pos: usize,
    /// Offset whose line number is `line_no` (lines are counted lazily, only
    /// up to each op's start).
    line_pos: usize,
    line_no: usize,
    /// Lines of the whole input before `full` (a streamed segment's place in
    /// the stream; 0 when `full` is the whole input), added to every line
    /// this parser names.
    line_base: usize,
    /// Where the history vector was opened, when it was opened in an earlier
    /// segment of a stream (see [`OPENED_EARLIER`]).
    opener: Option<String>,
    /// `KeyId`s of small non-negative integer keys, `NONE` when not yet seen.
    small_keys: Vec<u32>,
    /// `KeyId`s of keyword (kind 0) and escape-free string (kind 1) keys,
    /// keyed by their bytes in the input.
    named_keys: FxHashMap<(u8, &'a [u8]), KeyId>,
    /// The latest list read of each key, so that a read repeating it is
    /// parsed only past it (see [`super::repeat_reads`]).
    lists: RepeatReads,
    /// Where read input is given back, and from which offset it has not
    /// been yet; `None` for input that is not a memory map.
    release: Option<(Release<'a>, usize)>,
}

impl<'a> Parser<'a> {
    fn new(full: &'a [u8], start: usize, end: usize, first_line: usize) -> Self {
        Parser {
            full,
            src: &full[..end],
            pos: start,
            line_pos: start,
            line_no: first_line,
            line_base: 0,
            opener: None,
            small_keys: Vec::new(),
            named_keys: FxHashMap::default(),
            lists: RepeatReads::default(),
            release: None,
        }
    }

    /// Gives back the input read since the last call, every
    /// [`RELEASE_STEP`] bytes.
    #[inline]
    fn release_read(&mut self) {
        if let Some((release, from)) = &mut self.release {
            if self.pos - *from >= RELEASE_STEP {
                release(*from, self.pos);
                *from = self.pos;
            }
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// `line:column` of an offset, for "opened at" notes (cold path).
    #[cold]
    fn loc(&self, pos: usize) -> String {
        if pos == OPENED_EARLIER {
            if let Some(at) = &self.opener {
                return at.clone();
            }
        }
        let (l, c) = line_col(self.full, pos);
        format!("{}:{c}", l as usize + self.line_base)
    }

    /// 1-based line of `pos`, which must not precede the previous query.
    fn line_at(&mut self, pos: usize) -> u32 {
        self.line_no += count_newlines(&self.src[self.line_pos..pos]);
        self.line_pos = pos;
        u32::try_from(self.line_no).unwrap_or(u32::MAX)
    }

    /// The line of `end` (at or after every op read): for a chunk parsed
    /// from line 0, the number of lines it holds before `end`.
    fn lines_to(&mut self, end: usize) -> usize {
        self.line_no + count_newlines(&self.src[self.line_pos..end])
    }

    /// Skips whitespace, commas, `;` comments and `#_` discarded forms.
    #[inline(always)]
    fn skip_ws(&mut self, depth: u32) -> PResult<()> {
        // Fast exits: nothing to skip, or a single blank before a token.
        match self.src.get(self.pos) {
            Some(&c) if CLASS[c as usize] & SKIP != 0 => {}
            _ => return Ok(()),
        }
        if self.src.get(self.pos) == Some(&b' ')
            && self.src.get(self.pos + 1).is_some_and(|&c| CLASS[c as usize] & SKIP == 0)
        {
            self.pos += 1;
            return Ok(());
        }
        self.skip_ws_slow(depth)
    }

    #[inline(never)]
    fn skip_ws_slow(&mut self, depth: u32) -> PResult<()> {
        while let Some(&c) = self.src.get(self.pos) {
            if is_ws(c) {
                self.pos += 1;
            } else if c == b';' {
                match self.src[self.pos..].iter().position(|&b| b == b'\n') {
                    Some(n) => self.pos += n + 1,
                    None => self.pos = self.src.len(),
                }
            } else if c == b'#' && self.src.get(self.pos + 1) == Some(&b'_') {
                self.pos += 2;
                self.discard(depth)?;
            } else {
                break;
            }
        }
        Ok(())
    }

    /// Reads and drops the form after `#_`.
    #[cold]
    fn discard(&mut self, depth: u32) -> PResult<()> {
        if depth > MAX_DEPTH {
            return Err(perr(self.pos, "nesting at most 512 levels deep"));
        }
        self.skip_ws(depth + 1)?;
        match self.peek() {
            Some(c) if !is_closer(c) => self.value(depth + 1).map(drop),
            _ => Err(perr(self.pos, "a form to discard after #_")),
        }
    }

    /// End of the token starting at `from`.
    #[inline(always)]
    fn token_end(&self, from: usize) -> usize {
        let mut i = from;
        while i < self.src.len() && !is_delim(self.src[i]) {
            i += 1;
        }
        i
    }

    /// Whether the token at the cursor is exactly `word`.
    #[inline]
    fn at_word(&self, word: &[u8]) -> bool {
        let end = self.pos + word.len();
        self.src.get(self.pos..end) == Some(word) && self.src.get(end).is_none_or(|&c| is_delim(c))
    }

    /// Whether a number starts at the cursor (a digit, or a sign and a digit).
    #[inline(always)]
    fn at_number(&self) -> bool {
        match self.peek() {
            Some(b'0'..=b'9') => true,
            Some(b'-' | b'+') => matches!(self.src.get(self.pos + 1), Some(b'0'..=b'9')),
            _ => false,
        }
    }

    /// Parses a 64-bit integer token (`-12`, `7N`) at the cursor, or returns
    /// `None` without moving if the token is not one.
    #[inline(always)]
    fn int_inner(&mut self) -> Option<i64> {
        self.int_token::<true>()
    }

    /// As [`Self::int_inner`]; without `ALLOW_N`, a token with the `N`
    /// suffix is not taken (values keep that spelling, see [`Self::scalar`]).
    #[inline(always)]
    fn int_token<const ALLOW_N: bool>(&mut self) -> Option<i64> {
        let s = self.src;
        let mut i = self.pos;
        let first = *s.get(i)?;
        let neg = first == b'-';
        if neg || first == b'+' {
            i += 1;
        }
        let digits = i;
        let (v, nd) = scan_digits(s, i);
        i += nd;
        // 19 decimal digits always fit in a u64; more never fit in an i64.
        if nd == 0 || nd > 19 || (nd > 1 && s[digits] == b'0') {
            return None;
        }
        if let Some(&c) = s.get(i) {
            if !is_delim(c) {
                if ALLOW_N && c == b'N' && s.get(i + 1).is_none_or(|&c| is_delim(c)) {
                    i += 1;
                } else {
                    return None;
                }
            }
        }
        let r = if neg {
            if v > 1 << 63 {
                return None;
            }
            (v as i64).wrapping_neg()
        } else {
            i64::try_from(v).ok()?
        };
        self.pos = i;
        Some(r)
    }

    /// Parses an integer at the cursor; `what` describes it for errors.
    #[inline(always)]
    fn int(&mut self, what: &'static str) -> PResult<i64> {
        match self.int_inner() {
            Some(v) => Ok(v),
            None => Err(self.int_error(what)),
        }
    }

    #[cold]
    fn int_error(&self, what: &'static str) -> Box<PErr> {
        let end = self.token_end(self.pos);
        let tok = &self.src[self.pos..end];
        let body = tok.strip_prefix(b"-").or_else(|| tok.strip_prefix(b"+")).unwrap_or(tok);
        let body = body.strip_suffix(b"N").unwrap_or(body);
        if !body.is_empty() && body.iter().all(u8::is_ascii_digit) {
            if body.len() > 1 && body[0] == b'0' {
                return perr(self.pos, format!("{what} (without leading zeros)"));
            }
            return perr(self.pos, format!("{what} (within the 64-bit range)"));
        }
        perr(self.pos, what)
    }

    /// Reads a keyword at the cursor (which is at `:`), returning its name.
    #[inline(always)]
    fn keyword_name(&mut self) -> PResult<&'a [u8]> {
        let start = self.pos;
        let end = self.token_end(start + 1);
        if end == start + 1 {
            return Err(perr(start, "a keyword name after :"));
        }
        self.pos = end;
        Ok(&self.src[start + 1..end])
    }

    /// Reads a string literal at the cursor (which is at `"`).
    #[inline]
    fn string(&mut self) -> PResult<Cow<'a, str>> {
        let open = self.pos;
        let s = self.src;
        let mut i = open + 1;
        while let Some(&c) = s.get(i) {
            if c == b'"' || c == b'\\' {
                break;
            }
            i += 1;
        }
        match s.get(i) {
            Some(b'"') => {
                let text = utf8(&s[open + 1..i], open + 1)?;
                self.pos = i + 1;
                Ok(Cow::Borrowed(text))
            }
            Some(_) => self.string_with_escapes(open),
            None => Err(self.unterminated_string(open)),
        }
    }

    #[cold]
    fn unterminated_string(&self, open: usize) -> Box<PErr> {
        perr(self.src.len(), format!("a closing \" for the string opened at {}", self.loc(open)))
    }

    #[cold]
    fn string_with_escapes(&mut self, open: usize) -> PResult<Cow<'a, str>> {
        let s = self.src;
        let mut out: Vec<u8> = Vec::new();
        let mut i = open + 1;
        loop {
            let Some(&c) = s.get(i) else {
                return Err(self.unterminated_string(open));
            };
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = s.get(i + 1) else {
                        return Err(self.unterminated_string(open));
                    };
                    i += 2;
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'n' => Some(b'\n'),
                        b't' => Some(b'\t'),
                        b'r' => Some(b'\r'),
                        b'b' => Some(0x08),
                        b'f' => Some(0x0c),
                        _ => None,
                    };
                    if let Some(b) = simple {
                        out.push(b);
                        continue;
                    }
                    let ch = match e {
                        b'u' => {
                            let hi = hex4(s, i).ok_or_else(|| perr(i - 2, "a \\uXXXX escape with four hex digits"))?;
                            i += 4;
                            if (0xD800..0xDC00).contains(&hi) {
                                // A surrogate pair written as two escapes.
                                let lo = if s.get(i..i + 2) == Some(b"\\u") { hex4(s, i + 2) } else { None };
                                match lo {
                                    Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                                        i += 6;
                                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                    }
                                    _ => None,
                                }
                            } else {
                                char::from_u32(hi)
                            }
                        }
                        b'0'..=b'7' => {
                            // Octal escape \N, \NN or \NNN (up to \377).
                            let mut v = (e - b'0') as u32;
                            let mut n = 1;
                            while n < 3 {
                                match s.get(i) {
                                    Some(&d @ b'0'..=b'7') => {
                                        v = v * 8 + (d - b'0') as u32;
                                        i += 1;
                                        n += 1;
                                    }
                                    _ => break,
                                }
                            }
                            if v > 0o377 {
                                None
                            } else {
                                char::from_u32(v)
                            }
                        }
                        _ => {
                            return Err(perr(i - 2, "a string escape such as \\n, \\\", \\\\ or \\uXXXX"));
                        }
                    };
                    let Some(ch) = ch else {
                        return Err(perr(i - 2, "a valid character escape"));
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        let text = String::from_utf8(out).map_err(|_| perr(open, "valid UTF-8 text"))?;
        self.pos = i + 1;
        Ok(Cow::Owned(text))
    }

    /// Reads a character literal (`\a`, `\newline`, `\u0041`) at the cursor.
    fn char_lit(&mut self) -> PResult<Atom> {
        let start = self.pos;
        let i = start + 1;
        let Some(&first) = self.src.get(i) else {
            return Err(perr(i, "a character after \\"));
        };
        let end = if first.is_ascii_alphanumeric() {
            self.token_end(i)
        } else {
            let len = match first {
                0x00..=0x7f => 1,
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            (i + len).min(self.src.len())
        };
        let text = utf8(&self.src[i..end], i)?;
        let ok = text.chars().count() == 1
            || matches!(text, "newline" | "space" | "tab" | "return" | "formfeed" | "backspace")
            || (text.len() == 5 && text.starts_with('u') && text[1..].bytes().all(|b| b.is_ascii_hexdigit()))
            || (text.len() >= 2
                && text.len() <= 4
                && text.starts_with('o')
                && text[1..].bytes().all(|b| (b'0'..=b'7').contains(&b)));
        if !ok {
            return Err(perr(start, "a character literal such as \\a, \\newline or \\u0041"));
        }
        self.pos = end;
        Ok(Atom::Symbol(format!("\\{text}").into()))
    }

    /// Reads a symbol, `nil`, `true` or `false` at the cursor.
    fn symbol(&mut self) -> PResult<Atom> {
        let start = self.pos;
        let end = self.token_end(start);
        let text = utf8(&self.src[start..end], start)?;
        self.pos = end;
        Ok(match text {
            "nil" => Atom::Nil,
            "true" => Atom::Bool(true),
            "false" => Atom::Bool(false),
            _ => Atom::Symbol(text.into()),
        })
    }

    /// Reads a number that is not a plain 64-bit integer (the caller tried
    /// that first): a float, or an integer/decimal kept by spelling.
    #[cold]
    fn number(&mut self) -> PResult<Value> {
        let start = self.pos;
        let end = self.token_end(start);
        let tok = &self.src[start..end];
        let text = utf8(tok, start)?;
        let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
        let is_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let leading_zero = unsigned.len() > 1 && unsigned.starts_with('0') && unsigned.as_bytes()[1].is_ascii_digit();
        let float_like = |s: &str| {
            s.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
                && s.parse::<f64>().is_ok()
        };
        let big_int = |s: &str| is_digits(s.strip_suffix('N').unwrap_or(s));
        let v = if !leading_zero && big_int(unsigned) {
            // An integer beyond 64 bits (the caller tried 64 bits first).
            let neg = if text.starts_with('-') { "-" } else { "" };
            Value::Atom(Atom::BigInt(format!("{neg}{unsigned}").into()))
        } else if text.strip_suffix('M').is_some_and(float_like) {
            // A BigDecimal: kept exactly as written.
            Value::Atom(Atom::Symbol(text.into()))
        } else if !leading_zero && float_like(text) {
            match text.parse::<f64>() {
                Ok(f) => Value::Float(f),
                Err(_) => return Err(perr(start, "a number")),
            }
        } else if let Some(n) = radix_int(text) {
            // Clojure's other integer spellings (`0x1a2b`, which Jepsen
            // writes inside `#object[...]`, octal `017`, radix `2r101`) read
            // as the integer they denote, as Clojure's reader does.
            Value::Atom(Atom::Int(n))
        } else {
            return Err(perr(start, "a number"));
        };
        self.pos = end;
        Ok(v)
    }

    /// Reads any EDN value (used for extra fields and skipped values).
    fn value(&mut self, depth: u32) -> PResult<Value> {
        if depth > MAX_DEPTH {
            return Err(perr(self.pos, "nesting at most 512 levels deep"));
        }
        let start = self.pos;
        let Some(c) = self.peek() else {
            return Err(perr(start, "a value"));
        };
        Ok(match c {
            b'{' => Value::Map(self.map_entries(depth)?),
            b'[' => Value::Vector(self.seq(b']', "vector", depth)?),
            b'(' => Value::List(self.seq(b')', "list", depth)?),
            b'"' => Value::Atom(Atom::Str(self.string()?.into())),
            b'\\' => Value::Atom(self.char_lit()?),
            b':' => {
                let name = self.keyword_name()?;
                Value::Atom(Atom::Keyword(utf8(name, start + 1)?.into()))
            }
            b'#' => self.dispatch(depth)?,
            _ if self.at_number() => match self.int_inner() {
                Some(n) if self.src[self.pos - 1] != b'N' => Value::Atom(Atom::Int(n)),
                Some(_) => {
                    // `7N` is kept as written, as Clojure prints it.
                    self.pos = start;
                    self.number()?
                }
                None => self.number()?,
            },
            _ if is_symbol_start(c) => Value::Atom(self.symbol()?),
            _ => return Err(perr(start, "a value")),
        })
    }

    /// Reads the elements of a vector, list or set up to `close`; the cursor
    /// is at the opening bracket (for sets, at its `{`).
    fn seq(&mut self, close: u8, what: &str, depth: u32) -> PResult<Vec<Value>> {
        let open = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws(depth + 1)?;
            match self.peek() {
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(c) if !is_closer(c) => items.push(self.value(depth + 1)?),
                _ => {
                    return Err(perr(
                        self.pos,
                        format!("`{}` to close the {what} opened at {}", close as char, self.loc(open)),
                    ))
                }
            }
        }
    }

    /// Reads a map's entries; the cursor is at `{`.
    fn map_entries(&mut self, depth: u32) -> PResult<Vec<(Value, Value)>> {
        let open = self.pos;
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_ws(depth + 1)?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(entries);
                }
                Some(c) if !is_closer(c) => {
                    let k = self.value(depth + 1)?;
                    self.skip_ws(depth + 1)?;
                    match self.peek() {
                        Some(c) if !is_closer(c) => {}
                        _ => return Err(perr(self.pos, "a value for the map key")),
                    }
                    let v = self.value(depth + 1)?;
                    entries.push((k, v));
                }
                _ => return Err(perr(self.pos, format!("`}}` to close the map opened at {}", self.loc(open)))),
            }
        }
    }

    /// Reads a `#` form: a set, `##Inf`, a discard, or a tagged value.
    fn dispatch(&mut self, depth: u32) -> PResult<Value> {
        let start = self.pos;
        match self.src.get(start + 1) {
            Some(b'{') => {
                self.pos += 1;
                Ok(Value::Set(self.seq(b'}', "set", depth)?))
            }
            Some(b'#') => {
                let end = self.token_end(start + 2);
                let f = match &self.src[start + 2..end] {
                    b"Inf" => f64::INFINITY,
                    b"-Inf" => f64::NEG_INFINITY,
                    b"NaN" => f64::NAN,
                    _ => return Err(perr(start, "##Inf, ##-Inf or ##NaN")),
                };
                self.pos = end;
                Ok(Value::Float(f))
            }
            Some(b'_') => {
                self.pos += 2;
                self.discard(depth)?;
                self.skip_ws(depth)?;
                match self.peek() {
                    Some(c) if !is_closer(c) => self.value(depth),
                    _ => Err(perr(self.pos, "a value")),
                }
            }
            Some(&c) if c.is_ascii_alphabetic() => {
                let end = self.token_end(start + 1);
                let tag = utf8(&self.src[start + 1..end], start + 1)?;
                self.pos = end;
                self.skip_ws(depth + 1)?;
                match self.peek() {
                    Some(c) if !is_closer(c) => {}
                    _ => return Err(perr(self.pos, format!("a value after the tag #{tag}"))),
                }
                let v = self.value(depth + 1)?;
                Ok(Value::Tagged(tag.into(), Box::new(v)))
            }
            _ => Err(perr(start, "a value")),
        }
    }

    /// Skips whitespace after a key (which started at `key_pos` and ends at
    /// the cursor) and checks that a value follows.
    #[inline(always)]
    fn value_start(&mut self, key_pos: usize) -> PResult<()> {
        let key_end = self.pos;
        self.skip_ws(1)?;
        match self.peek() {
            Some(c) if !is_closer(c) => Ok(()),
            _ => Err(self.missing_value(key_pos, key_end)),
        }
    }

    #[cold]
    fn missing_value(&self, key_pos: usize, key_end: usize) -> Box<PErr> {
        let key = String::from_utf8_lossy(&self.src[key_pos..key_end]);
        let key: String = key.chars().take(40).collect();
        perr(self.pos, format!("a value for the key {key}"))
    }

    /// Interns a keyword or escape-free string key, caching by input bytes.
    #[inline]
    fn named_key(&mut self, b: &mut HistoryBuilder, kind: u8, name: &'a [u8], pos: usize) -> PResult<KeyId> {
        if let Some(&k) = self.named_keys.get(&(kind, name)) {
            return Ok(k);
        }
        let s = utf8(name, pos)?;
        let atom = if kind == 0 { Atom::Keyword(s.into()) } else { Atom::Str(s.into()) };
        let k = b.key(atom);
        self.named_keys.insert((kind, name), k);
        Ok(k)
    }

    /// Interns an integer key, through the dense cache when small.
    #[inline(always)]
    fn int_key(&mut self, b: &mut HistoryBuilder, n: i64) -> KeyId {
        int_key(&mut self.small_keys, b, n)
    }

    /// Reads a micro-op key.
    #[inline(always)]
    fn key(&mut self, b: &mut HistoryBuilder) -> PResult<KeyId> {
        let kpos = self.pos;
        match self.peek() {
            Some(b':') => {
                let name = self.keyword_name()?;
                self.named_key(b, 0, name, kpos + 1)
            }
            Some(b'"') => match self.string()? {
                Cow::Borrowed(s) => self.named_key(b, 1, s.as_bytes(), kpos + 1),
                Cow::Owned(s) => Ok(b.key(Atom::Str(s.into()))),
            },
            Some(c) if !is_closer(c) => {
                if self.at_number() {
                    if let Some(n) = self.int_inner() {
                        return Ok(self.int_key(b, n));
                    }
                }
                let v = self.value(2)?;
                Ok(b.key_value(v))
            }
            _ => Err(perr(kpos, "a key")),
        }
    }

    /// Reads a value that is not `nil` and (when it is an integer) the
    /// identity of that value: integers take the fast path.
    #[inline(always)]
    fn scalar(&mut self, b: &mut HistoryBuilder, depth: u32) -> PResult<i64> {
        if self.at_number() {
            // Not `7N`, which is read as written (see `value`).
            if let Some(n) = self.int_token::<false>() {
                return Ok(b.int_value(n));
            }
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

    /// Reads a read's value (of `key`): nil, a list of values, or another
    /// value.
    #[inline(always)]
    fn read_value(&mut self, b: &mut HistoryBuilder, key: KeyId) -> PResult<MopValue> {
        match self.peek() {
            Some(c @ (b'[' | b'(')) => {
                let open = self.pos;
                let close = closer(c);
                self.pos += 1;
                let start = self.repeated_list(b, key);
                loop {
                    self.skip_ws(3)?;
                    match self.peek() {
                        Some(c) if c == close => {
                            let list = b.finish_list(start);
                            if let MopValue::List { start, len } = list {
                                let read = ListRead { text_start: open + 1, text_end: self.pos, start, len };
                                self.lists.note(key, read);
                            }
                            self.pos += 1;
                            return Ok(list);
                        }
                        Some(b'0'..=b'9' | b'-' | b'+') => {
                            let e = match self.int_token::<false>() {
                                Some(n) => b.int_value(n),
                                None => self.general_value(b, 4)?,
                            };
                            b.push_element(e);
                        }
                        Some(c) if !is_closer(c) => {
                            let e = self.general_value(b, 4)?;
                            b.push_element(e);
                        }
                        _ => {
                            return Err(perr(
                                self.pos,
                                format!("`{}` to close the list read opened at {}", close as char, self.loc(open)),
                            ))
                        }
                    }
                }
            }
            _ if self.at_word(b"nil") => {
                self.pos += 3;
                Ok(MopValue::Nil)
            }
            Some(c) if !is_closer(c) => Ok(MopValue::Int(self.scalar(b, 3)?)),
            _ => Err(perr(self.pos, "a read value")),
        }
    }

    /// Begins a list read of `key` whose text starts at the cursor: on the
    /// elements of the key's latest read when the text repeats that read's
    /// text (the cursor then moves past it), empty otherwise.
    #[inline(always)]
    fn repeated_list(&mut self, b: &mut HistoryBuilder, key: KeyId) -> u32 {
        if let Some(prev) = self.lists.repeated(key, self.src, self.pos) {
            if let Some(start) = b.repeat_list(prev.start, prev.len) {
                self.pos += prev.text_end - prev.text_start;
                return start;
            }
        }
        b.begin_list()
    }

    /// Reads one micro-op vector; the cursor is at its `[` or `(`.
    #[inline(always)]
    fn mop(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        let open = self.pos;
        let close = closer(self.src[open]);
        self.pos += 1;
        self.skip_ws(3)?;
        let fpos = self.pos;
        const FNS: &str = "micro-op function :append, :r, :w, or (closed-predicate) :insert, :delete or :rp";
        let f = if self.peek() == Some(b':') {
            match self.keyword_name()? {
                b"append" => MopFn::Append,
                b"r" => MopFn::Read,
                b"w" => MopFn::Write,
                b"insert" => MopFn::Insert,
                b"delete" => MopFn::Delete,
                b"rp" => return self.pred_read(b, open, close),
                _ => return Err(perr(fpos, FNS)),
            }
        } else {
            return Err(perr(fpos, FNS));
        };
        self.skip_ws(3)?;
        let key = self.key(b)?;
        self.skip_ws(3)?;
        let value = match f {
            MopFn::Read if self.peek() == Some(close) => MopValue::Nil,
            MopFn::Read => self.read_value(b, key)?,
            MopFn::Append => match self.peek() {
                Some(c) if !is_closer(c) => MopValue::Int(self.scalar(b, 3)?),
                _ => return Err(perr(self.pos, "a value for :append")),
            },
            MopFn::Insert => match self.peek() {
                Some(c) if !is_closer(c) => MopValue::Int(self.scalar(b, 3)?),
                _ => return Err(perr(self.pos, "a value for :insert")),
            },
            MopFn::Delete => {
                if self.at_word(b"nil") {
                    self.pos += 3;
                }
                MopValue::Nil
            }
            MopFn::PredRead | MopFn::PredEntry => MopValue::Nil,
            MopFn::Write => {
                if self.at_word(b"nil") {
                    self.pos += 3;
                    MopValue::Nil
                } else {
                    match self.peek() {
                        Some(c) if !is_closer(c) => MopValue::Int(self.scalar(b, 3)?),
                        _ => return Err(perr(self.pos, "a value (or nil) for :w")),
                    }
                }
            }
        };
        self.close_mop(open, close)?;
        b.push_mop(Mop { f, key, value });
        Ok(())
    }

    /// Expects the `close` bracket of the micro-op opened at `open`.
    fn close_mop(&mut self, open: usize, close: u8) -> PResult<()> {
        self.skip_ws(3)?;
        if self.peek() != Some(close) {
            return Err(perr(
                self.pos,
                format!("`{}` to close the micro-op opened at {}", close as char, self.loc(open)),
            ));
        }
        self.pos += 1;
        Ok(())
    }

    /// Reads the rest of a predicate read `[:rp PRED RESULT]` (the cursor is
    /// after `:rp`): the predicate, interned as the micro-op's key, and the
    /// result, `nil` or a map `{k v ...}` whose entries follow the
    /// [`MopFn::PredRead`] as [`MopFn::PredEntry`] micro-ops.
    fn pred_read(&mut self, b: &mut HistoryBuilder, open: usize, close: u8) -> PResult<()> {
        self.skip_ws(3)?;
        let ppos = self.pos;
        let pred = match self.peek() {
            Some(c) if !is_closer(c) => self.value(3)?,
            _ => return Err(perr(ppos, "a predicate (:true, [:= v] or [:mod m r]) after :rp")),
        };
        let key = b.key_value(pred);
        self.skip_ws(3)?;
        let at = b.mop_count();
        b.push_mop(Mop { f: MopFn::PredRead, key, value: MopValue::Nil });
        match self.peek() {
            Some(b'{') => {
                let n = self.pred_entries(b)?;
                b.set_mop_value(at, MopValue::Entries(n));
            }
            _ if self.at_word(b"nil") => self.pos += 3,
            Some(c) if c == close => {}
            _ => return Err(perr(self.pos, "a predicate read's result: nil or a map {k v ...}")),
        }
        self.close_mop(open, close)
    }

    /// Reads a map `{k v ...}` (the cursor is at its `{`) as one
    /// [`MopFn::PredEntry`] micro-op per entry; returns how many.
    fn pred_entries(&mut self, b: &mut HistoryBuilder) -> PResult<u32> {
        let open = self.pos;
        self.pos += 1;
        let mut n = 0u32;
        loop {
            self.skip_ws(3)?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(n);
                }
                Some(c) if !is_closer(c) => {
                    let key = self.key(b)?;
                    self.skip_ws(3)?;
                    let value = self.entry_value(b, open)?;
                    b.push_mop(Mop { f: MopFn::PredEntry, key, value });
                    n += 1;
                }
                _ => return Err(perr(self.pos, format!("`}}` to close the map opened at {}", self.loc(open)))),
            }
        }
    }

    /// Reads the value of a map entry: `nil` or a value.
    fn entry_value(&mut self, b: &mut HistoryBuilder, open: usize) -> PResult<MopValue> {
        if self.at_word(b"nil") {
            self.pos += 3;
            return Ok(MopValue::Nil);
        }
        match self.peek() {
            Some(c) if !is_closer(c) => Ok(MopValue::Int(self.scalar(b, 3)?)),
            _ => Err(perr(self.pos, format!("a value for each key of the map opened at {}", self.loc(open)))),
        }
    }

    /// Reads an `:init` op's `:value` map `{k v ...}` (the cursor is at its
    /// `{`) as one `[:w k v]` micro-op per entry.
    fn init_map(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        let open = self.pos;
        self.pos += 1;
        loop {
            self.skip_ws(2)?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(c) if !is_closer(c) => {
                    let key = self.key(b)?;
                    self.skip_ws(2)?;
                    let value = self.entry_value(b, open)?;
                    b.push_mop(Mop { f: MopFn::Write, key, value });
                }
                _ => return Err(perr(self.pos, format!("`}}` to close the :value opened at {}", self.loc(open)))),
            }
        }
    }

    /// Reads a client op's `:value`: nil, a vector/list of micro-ops, or a
    /// map (a closed-predicate `:init`, see [`Self::init_map`]).
    #[inline]
    fn mops(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        match self.peek() {
            Some(b'{') => self.init_map(b),
            Some(c @ (b'[' | b'(')) => {
                let open = self.pos;
                let close = closer(c);
                self.pos += 1;
                loop {
                    self.skip_ws(2)?;
                    match self.peek() {
                        Some(c) if c == close => {
                            self.pos += 1;
                            return Ok(());
                        }
                        Some(b'[' | b'(') => self.mop(b)?,
                        Some(c) if !is_closer(c) => {
                            return Err(perr(self.pos, "a micro-op vector like [:append k v]"));
                        }
                        _ => {
                            return Err(perr(
                                self.pos,
                                format!("`{}` to close the :value opened at {}", close as char, self.loc(open)),
                            ))
                        }
                    }
                }
            }
            _ if self.at_word(b"nil") => {
                self.pos += 3;
                Ok(())
            }
            _ => Err(perr(self.pos, "a :value of nil or a vector of micro-ops like [[:append k v] [:r k nil]]")),
        }
    }

    /// Reads an optional integer field (`:time`, `:index`); nil means absent.
    #[inline]
    fn opt_int(&mut self, what: &'static str) -> PResult<Option<i64>> {
        if self.at_word(b"nil") {
            self.pos += 3;
            return Ok(None);
        }
        if !self.at_number() {
            return Err(perr(self.pos, what));
        }
        self.int(what).map(Some)
    }

    /// Reads one op map (the cursor is at its `{`) that starts (with its tag,
    /// if any) at `op_start`, and hands it to the builder.
    fn op_map(&mut self, b: &mut HistoryBuilder, op_start: usize) -> PResult<()> {
        let open = self.pos;
        self.pos += 1;
        let line = self.line_at(op_start);
        let mop_start = b.mop_count();
        let mut op_type: Option<OpType> = None;
        let mut process = Proc::Unknown;
        let mut time = None;
        let mut index = None;
        let mut f = Atom::Nil;
        let mut seen = 0u8;
        let mut fields = 0u8;
        // An error that only matters if the op turns out to be a client op.
        let mut deferred: Option<Box<PErr>> = None;
        let mut extras = Vec::new();
        // Where a map `:value` began (only an `:init` may have one).
        let mut map_value: Option<usize> = None;
        self.lists.discard();
        loop {
            self.skip_ws(1)?;
            let kpos = self.pos;
            let Some(c) = self.peek() else {
                return Err(perr(kpos, format!("`}}` to close the op map opened at {}", self.loc(open))));
            };
            if c == b'}' {
                self.pos += 1;
                break;
            }
            if is_closer(c) {
                return Err(perr(kpos, format!("`}}` to close the op map opened at {}", self.loc(open))));
            }
            if c != b':' {
                // A non-keyword key: an extra field.
                let k = self.value(1)?;
                self.value_start(kpos)?;
                let v = self.value(1)?;
                extras.push((k, v));
                continue;
            }
            let name = self.keyword_name()?;
            let field = match name {
                b"type" => F_TYPE,
                b"f" => F_F,
                b"value" => F_VALUE,
                b"process" => F_PROCESS,
                b"time" => F_TIME,
                b"index" => F_INDEX,
                _ => 0,
            };
            self.value_start(kpos)?;
            if field == 0 {
                let k = Value::Atom(Atom::Keyword(utf8(name, kpos + 1)?.into()));
                let v = self.value(1)?;
                extras.push((k, v));
                continue;
            }
            if seen & field != 0 {
                return Err(perr(kpos, "each key at most once in an op map"));
            }
            seen |= field;
            let vpos = self.pos;
            match field {
                F_TYPE => {
                    let t = if self.peek() == Some(b':') {
                        match self.keyword_name()? {
                            b"invoke" => Some(OpType::Invoke),
                            b"ok" => Some(OpType::Ok),
                            b"fail" => Some(OpType::Fail),
                            b"info" => Some(OpType::Info),
                            _ => None,
                        }
                    } else {
                        None
                    };
                    match t {
                        Some(t) => op_type = Some(t),
                        None => return Err(perr(vpos, "an op :type of :invoke, :ok, :fail or :info")),
                    }
                }
                F_F => {
                    fields |= field::F;
                    if self.peek() == Some(b':') {
                        let name = self.keyword_name()?;
                        f = Atom::Keyword(utf8(name, vpos + 1)?.into());
                    } else {
                        match self.value(1)? {
                            Value::Atom(a) => f = a,
                            _ => {
                                if deferred.is_none() {
                                    deferred = Some(perr(vpos, "an atom (keyword, string, integer or symbol) as :f"));
                                }
                            }
                        }
                    }
                }
                F_VALUE => {
                    // A value starting with `n` is `nil` (or an error).
                    fields |= match self.peek() {
                        Some(b'n') => field::VALUE | field::VALUE_NIL,
                        Some(b'{') => {
                            map_value = Some(vpos);
                            field::VALUE | field::VALUE_MAP
                        }
                        _ => field::VALUE,
                    };
                    match process {
                        Proc::NonClient => drop(self.value(1)?),
                        Proc::Client(_) => self.mops(b)?,
                        Proc::Unknown => {
                            // Not yet known whether this is a client op: read the
                            // value as micro-ops, and if that fails, skip it as a
                            // plain value and keep the error for a client op.
                            if let Err(e) = self.mops(b) {
                                self.pos = vpos;
                                drop(self.value(1)?);
                                if deferred.is_none() {
                                    deferred = Some(e);
                                }
                            }
                        }
                    }
                }
                F_PROCESS => {
                    let p = if self.at_number() { self.int_inner() } else { None };
                    process = match p {
                        Some(p) => Proc::Client(p),
                        None => {
                            drop(self.value(1)?);
                            Proc::NonClient
                        }
                    };
                }
                F_TIME => {
                    time = self.opt_int("an integer :time")?;
                    fields |= if time.is_some() { field::TIME } else { field::TIME | field::TIME_NIL };
                }
                _ => index = self.opt_int("an integer :index")?,
            }
        }
        let Some(op_type) = op_type else {
            return Err(Box::new(PErr {
                pos: open,
                expected: "a :type in every op map".into(),
                found: Some("an op map without one".into()),
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
                        "a :value of nil or a vector of micro-ops like [[:append k v] [:r k nil]] (a map only \
                         for a closed-predicate :init op)",
                    ));
                }
                Some(p)
            }
            _ => None,
        };
        match process {
            Some(_) => self.lists.commit(),
            None => self.lists.discard(),
        }
        b.push_op_with(RawOp { index, time, op_type, process, f, extras, line }, mop_start, fields);
        Ok(())
    }

    /// Reads one top-level op: `{...}` or a tagged record `#tag {...}`.
    fn op_form(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        let start = self.pos;
        match self.peek() {
            Some(b'{') => self.op_map(b, start),
            Some(b'#') if self.src.get(start + 1).is_some_and(|c| c.is_ascii_alphabetic()) => {
                let end = self.token_end(start + 1);
                self.pos = end;
                self.skip_ws(1)?;
                if self.peek() == Some(b'{') {
                    self.op_map(b, start)
                } else {
                    let tag = String::from_utf8_lossy(&self.src[start..end]).into_owned();
                    Err(perr(self.pos, format!("an op map after the tag {tag}")))
                }
            }
            _ => Err(perr(start, "an op map like {:type :invoke, :f :txn, :value [...], :process 0}")),
        }
    }

    /// Reads ops until the end of the chunk, or, with `closer`, until the
    /// bracket closing the history vector opened at `open`.
    fn ops(&mut self, b: &mut HistoryBuilder, closer: Option<(u8, usize)>) -> PResult<()> {
        loop {
            self.skip_ws(0)?;
            match (self.peek(), closer) {
                (None, None) => return Ok(()),
                (None, Some((c, open))) => {
                    return Err(perr(
                        self.pos,
                        format!("`{}` to close the history opened at {}", c as char, self.loc(open)),
                    ))
                }
                (Some(c), Some((close, _))) if c == close => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    self.op_form(b)?;
                    self.release_read();
                }
            }
        }
    }

    /// Reads a whole input: a sequence of op maps, or one vector/list of them.
    fn document(&mut self, b: &mut HistoryBuilder) -> PResult<()> {
        self.skip_ws(0)?;
        match self.peek() {
            Some(c @ (b'[' | b'(')) => {
                let open = self.pos;
                self.pos += 1;
                self.ops(b, Some((closer(c), open)))?;
                self.skip_ws(0)?;
                if self.pos < self.src.len() {
                    return Err(perr(self.pos, "end of input after the history vector"));
                }
                Ok(())
            }
            _ => self.ops(b, None),
        }
    }
}

/// Reads an EDN document as generic values, for histories whose ops the
/// columnar model does not hold (Jepsen's bank, counter, set and Knossos
/// workloads, see `crate::jepsen`): the forms of one top-level vector or
/// list, or the top-level forms one after another, each with its 1-based
/// line.
pub(crate) fn parse_values(source: &str, input: &[u8]) -> Result<Vec<(Value, u32)>, IngestError> {
    let mut p = Parser::new(input, 0, input.len(), 1);
    values_document(&mut p).map_err(|e| e.into_ingest(source, input))
}

fn values_document(p: &mut Parser<'_>) -> PResult<Vec<(Value, u32)>> {
    let mut out = Vec::new();
    p.skip_ws(0)?;
    let wrapped = match p.peek() {
        Some(c @ (b'[' | b'(')) => {
            let open = p.pos;
            p.pos += 1;
            Some((closer(c), open))
        }
        _ => None,
    };
    loop {
        p.skip_ws(0)?;
        match (p.peek(), wrapped) {
            (None, None) => return Ok(out),
            (None, Some((c, open))) => {
                return Err(perr(p.pos, format!("`{}` to close the history opened at {}", c as char, p.loc(open))))
            }
            (Some(c), Some((close, _))) if c == close => {
                p.pos += 1;
                p.skip_ws(0)?;
                if p.pos < p.src.len() {
                    return Err(perr(p.pos, "end of input after the history vector"));
                }
                return Ok(out);
            }
            (Some(c), _) if is_closer(c) => return Err(perr(p.pos, "an op map")),
            _ => {
                let line = p.line_at(p.pos);
                let v = p.value(1)?;
                out.push((v, line));
            }
        }
    }
}

/// Reads an EDN history op map by op map, each as a [`RawOpMap`] (its
/// usual fields picked out without allocating: `:type` and `:f` keywords
/// borrow their names from the input) handed to `f`, which turns it into
/// the caller's op. Large inputs are cut at op starts and read in
/// parallel, with the sequential read's result and messages (as
/// [`parse_chunks`]); `f`'s first error in input order is returned.
pub(crate) fn parse_op_maps_with<'a, T: Send, E: Send>(
    source: &str,
    input: &'a [u8],
    values: ValueReader<'_>,
    f: &(dyn Fn(RawOpMap<'a>) -> Result<T, E> + Sync),
) -> Result<Result<Vec<T>, E>, IngestError> {
    if let Some(bounds) = plan_chunks(input, DEFAULT_MIN_CHUNK, rayon::current_num_threads()) {
        let line_counts: Vec<usize> = bounds.par_windows(2).map(|w| count_newlines(&input[w[0]..w[1]])).collect();
        let mut first_lines = Vec::with_capacity(line_counts.len());
        let mut line = 1 + count_newlines(&input[..bounds[0]]);
        for n in &line_counts {
            first_lines.push(line);
            line += n;
        }
        // Usually one op per line. The first chunk's vector has room for
        // every chunk's ops, so only the later chunks are copied into it.
        let total = line_counts.iter().sum::<usize>() + line_counts.len();
        let chunks: Vec<Option<Result<Vec<T>, E>>> = bounds
            .par_windows(2)
            .zip(first_lines.par_iter().zip(line_counts.par_iter()))
            .enumerate()
            .map(|(k, (w, (&first_line, &lines)))| {
                let mut p = Parser::new(input, w[0], w[1], first_line);
                let mut out = Vec::with_capacity(if k == 0 { total } else { lines + 1 });
                loop {
                    p.skip_ws(0).ok()?;
                    if p.peek().is_none() {
                        return Some(Ok(out));
                    }
                    match f(p.raw_op_map(values).ok()?) {
                        Ok(t) => out.push(t),
                        Err(e) => return Some(Err(e)),
                    }
                }
            })
            .collect();
        if chunks.iter().all(Option::is_some) {
            let mut all = Vec::new();
            for c in chunks.into_iter().flatten() {
                match c {
                    Ok(v) if all.is_empty() => all = v,
                    Ok(mut v) => all.append(&mut v),
                    Err(e) => return Ok(Err(e)),
                }
            }
            return Ok(Ok(all));
        }
    }
    let mut p = Parser::new(input, 0, input.len(), 1);
    let maps = raw_document(&mut p, values).map_err(|e| e.into_ingest(source, input))?;
    Ok(maps.into_iter().map(f).collect())
}

fn raw_document<'a>(p: &mut Parser<'a>, values: ValueReader<'_>) -> PResult<Vec<RawOpMap<'a>>> {
    let mut out = Vec::new();
    p.skip_ws(0)?;
    let wrapped = match p.peek() {
        Some(c @ (b'[' | b'(')) => {
            let open = p.pos;
            p.pos += 1;
            Some((closer(c), open))
        }
        _ => None,
    };
    loop {
        p.skip_ws(0)?;
        match (p.peek(), wrapped) {
            (None, None) => return Ok(out),
            (None, Some((c, open))) => {
                return Err(perr(p.pos, format!("`{}` to close the history opened at {}", c as char, p.loc(open))))
            }
            (Some(c), Some((close, _))) if c == close => {
                p.pos += 1;
                p.skip_ws(0)?;
                if p.pos < p.src.len() {
                    return Err(perr(p.pos, "end of input after the history vector"));
                }
                return Ok(out);
            }
            _ => out.push(p.raw_op_map(values)?),
        }
    }
}

/// How op values are read: the key table they are interned in, and whether
/// compact shapes are decoded straight from the text (`fast`) or through
/// the generic value tree.
#[derive(Clone, Copy, Debug)]
pub struct ValueReader<'k> {
    /// Where map keys are interned.
    pub keys: &'k KeyTable,
    /// Decode compact values from the text.
    pub fast: bool,
}

/// A name field of an op map: a keyword's name borrowed from the input, or
/// any other value.
#[derive(Clone, Debug)]
pub enum RawName<'a> {
    /// A keyword (EDN) or string (JSON) name.
    Name(&'a [u8]),
    /// Anything else.
    Other(Value),
}

/// One op map, its usual fields picked out.
#[derive(Clone, Debug)]
pub struct RawOpMap<'a> {
    /// 1-based line where the map starts.
    pub line: u32,
    /// `:type`.
    pub op_type: Option<RawName<'a>>,
    /// `:f`.
    pub f: Option<RawName<'a>>,
    /// `:process`.
    pub process: Option<Value>,
    /// `:time`.
    pub time: Option<Value>,
    /// `:index`.
    pub index: Option<Value>,
    /// `:value`, compact where it has one of [`OpValue`]'s shapes.
    pub value: Option<OpValue>,
    /// Every other entry, in input order.
    pub extra: Vec<(Value, Value)>,
}

impl<'a> RawOpMap<'a> {
    /// An empty map at `line`.
    pub fn new(line: u32) -> Self {
        RawOpMap {
            line,
            op_type: None,
            f: None,
            process: None,
            time: None,
            index: None,
            value: None,
            extra: Vec::new(),
        }
    }

    /// Files an entry under its field (used for maps read as values); a
    /// `:value` is made compact with `keys`.
    pub fn insert(&mut self, k: Value, v: Value, keys: &KeyTable) {
        let name = match &k {
            Value::Atom(Atom::Keyword(n)) | Value::Atom(Atom::Str(n)) => Some(&**n),
            _ => None,
        };
        match name {
            Some("type") => self.op_type = Some(RawName::Other(v)),
            Some("f") => self.f = Some(RawName::Other(v)),
            Some("process") => self.process = Some(v),
            Some("time") => self.time = Some(v),
            Some("index") => self.index = Some(v),
            Some("value") => self.value = Some(OpValue::of_value(v, keys)),
            _ => self.extra.push((k, v)),
        }
    }
}

impl<'a> Parser<'a> {
    /// Reads one op map (optionally tagged) as a [`RawOpMap`].
    fn raw_op_map(&mut self, values: ValueReader<'_>) -> PResult<RawOpMap<'a>> {
        let start = self.pos;
        let line = self.line_at(start);
        if self.peek() == Some(b'#') && self.src.get(start + 1).is_some_and(|c| c.is_ascii_alphabetic()) {
            self.pos = self.token_end(start + 1);
            self.skip_ws(1)?;
        }
        if self.peek() != Some(b'{') {
            return Err(perr(self.pos, "an op map like {:type :invoke, :f :read, :value nil, :process 0}"));
        }
        let open = self.pos;
        self.pos += 1;
        let mut m = RawOpMap::new(line);
        loop {
            self.skip_ws(1)?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(m);
                }
                Some(b':') => {
                    let kpos = self.pos;
                    let name = self.keyword_name()?;
                    self.value_start(kpos)?;
                    let keyword_value = self.peek() == Some(b':');
                    match name {
                        b"type" if keyword_value => m.op_type = Some(RawName::Name(self.keyword_name()?)),
                        b"f" if keyword_value => m.f = Some(RawName::Name(self.keyword_name()?)),
                        b"value" => m.value = Some(self.op_value(values.keys, values.fast)?),
                        b"process" => m.process = Some(self.value(2)?),
                        b"time" => m.time = Some(self.value(2)?),
                        b"index" => m.index = Some(self.value(2)?),
                        b"type" | b"f" => {
                            let v = self.value(2)?;
                            m.insert(Value::Atom(Atom::Keyword(utf8(name, kpos + 1)?.into())), v, values.keys);
                        }
                        _ => {
                            let k = Value::Atom(Atom::Keyword(utf8(name, kpos + 1)?.into()));
                            let v = self.value(2)?;
                            m.extra.push((k, v));
                        }
                    }
                }
                Some(c) if !is_closer(c) => {
                    let k = self.value(2)?;
                    self.skip_ws(1)?;
                    match self.peek() {
                        Some(c) if !is_closer(c) => {}
                        _ => return Err(perr(self.pos, "a value for the map key")),
                    }
                    let v = self.value(2)?;
                    m.insert(k, v, values.keys);
                }
                _ => return Err(perr(self.pos, format!("`}}` to close the op map opened at {}", self.loc(open)))),
            }
        }
    }
}

/// Interns an integer key through a dense cache of small keys (shared by the
/// EDN and JSON readers).
#[inline(always)]
pub(crate) fn int_key(cache: &mut Vec<u32>, b: &mut HistoryBuilder, n: i64) -> KeyId {
    if !(0..SMALL_KEY_LIMIT).contains(&n) {
        return b.key(Atom::Int(n));
    }
    let i = n as usize;
    match cache.get(i) {
        Some(&k) if k != NONE => return KeyId(k),
        Some(_) => {}
        None => cache.resize((i + 1).next_power_of_two().max(256), NONE),
    }
    let k = b.key(Atom::Int(n));
    cache[i] = k.0;
    k
}

/// Validates UTF-8, reporting an error at `pos` otherwise.
#[inline]
pub(crate) fn utf8(bytes: &[u8], pos: usize) -> PResult<&str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => Err(perr(pos + e.valid_up_to(), "valid UTF-8 text")),
    }
}

/// A Clojure integer literal in another base: hexadecimal `0x1F`, octal
/// `017`, or radix `NrDIGITS` (base 2 to 36), with an optional sign and, for
/// hex and octal, an optional `N`; `None` if `text` is none of these or does
/// not fit 64 bits.
fn radix_int(text: &str) -> Option<i64> {
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (base, digits) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        (16, h.strip_suffix('N').unwrap_or(h))
    } else if let Some((b, d)) = body.split_once(['r', 'R']) {
        let b: u32 = b.parse().ok().filter(|b| (2..=36).contains(b))?;
        (b, d)
    } else if body.len() > 1 && body.starts_with('0') {
        let o = &body[1..];
        (8, o.strip_suffix('N').unwrap_or(o))
    } else {
        return None;
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = i128::from(u64::from_str_radix(digits, base).ok()?);
    i64::try_from(if neg { -magnitude } else { magnitude }).ok()
}

/// Four hex digits at `i`, as a number.
fn hex4(s: &[u8], i: usize) -> Option<u32> {
    let digits = s.get(i..i + 4)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + (d as char).to_digit(16)?;
    }
    Some(v)
}

/// The "opened at" offset of a history vector opened in an earlier segment
/// of a stream: [`Parser::loc`] names [`Parser::opener`] instead.
const OPENED_EARLIER: usize = usize::MAX;

/// Parses an EDN history, in parallel when it is large enough.
pub(crate) fn parse(source: &str, input: &[u8]) -> Result<History, IngestError> {
    merge(source, parse_chunks(source, input, None)?)
}

/// Parses into per-chunk builders without merging them, so a caller can
/// release the input (e.g. unmap the file) before the merge copies chunks:
/// that keeps the input and the copy from being resident at the same time.
///
/// With `release`, the input is a memory map whose pages are given back as
/// they are read (counted, then parsed), so that the whole file is never
/// resident beside its columns.
pub(crate) fn parse_chunks(
    source: &str,
    input: &[u8],
    release: Option<Release<'_>>,
) -> Result<Vec<HistoryBuilder>, IngestError> {
    // At least one chunk per thread, and chunks of about CHUNK_TARGET bytes
    // so that merging holds one small chunk twice, not half the history.
    let chunks = rayon::current_num_threads().max(input.len() / CHUNK_TARGET);
    parse_chunks_sized(source, input, DEFAULT_MIN_CHUNK, chunks, 1, release)
}

/// Merges chunk builders, in input order, into the finished history. An
/// input over 4 GiB (read in chunks, each addressable) whose columns
/// together outgrow the model's `u32` offsets is refused.
pub(crate) fn merge(source: &str, chunks: Vec<HistoryBuilder>) -> Result<History, IngestError> {
    let mut iter = chunks.into_iter();
    let mut b = iter.next().unwrap_or_else(|| HistoryBuilder::new(source));
    for chunk in iter {
        if !b.can_append(&chunk) {
            return Err(IngestError::Unreadable {
                path: source.to_string(),
                reason: "holds more than 4 billion operations, micro-operations or distinct list elements, \
                         beyond the columnar model's u32 offsets"
                    .into(),
            });
        }
        b.append(chunk);
    }
    Ok(b.finish())
}

/// The sequential parse of a whole input, which must then be addressable
/// with `u32` offsets: a larger input is read only in parallel chunks.
fn whole_input(source: &str, input: &[u8], first_line: usize) -> Result<HistoryBuilder, IngestError> {
    whole_input_within(source, input, first_line, u32::MAX as usize)
}

/// [`whole_input`] with the largest input read whole as `limit` (tests).
fn whole_input_within(
    source: &str,
    input: &[u8],
    first_line: usize,
    limit: usize,
) -> Result<HistoryBuilder, IngestError> {
    if input.len() > limit {
        return Err(IngestError::Unreadable {
            path: source.to_string(),
            reason: format!(
                "is {} bytes, over 4 GiB, and could not be read in parallel chunks (a syntax error, or op maps \
                 that do not each start a line); histories this large are read only as op maps starting lines",
                input.len()
            ),
        });
    }
    parse_sequential_builder(source, input, first_line)
}

/// Parses sequentially, in one pass over the whole input.
#[cfg(test)]
pub(crate) fn parse_sequential(source: &str, input: &[u8]) -> Result<History, IngestError> {
    merge(source, vec![parse_sequential_builder(source, input, 1)?])
}

fn parse_sequential_builder(source: &str, input: &[u8], first_line: usize) -> Result<HistoryBuilder, IngestError> {
    let mut b = HistoryBuilder::with_capacity_for(source, input.len());
    let mut p = Parser::new(input, 0, input.len(), first_line);
    p.line_base = first_line - 1;
    match p.document(&mut b) {
        Ok(()) => Ok(b),
        Err(e) => Err(shift_lines(e.into_ingest(source, input), first_line - 1)),
    }
}

/// Parses a run of op lines with no enclosing vector (a history chunk
/// decoded from another format, e.g. Jepsen's store file) into `b`, after
/// the ops it holds already; the run's first byte is on line `first_line`
/// of the whole history, and errors name lines of the whole history.
/// `small_keys` is the parser's cache of small integer keys' ids, kept by
/// the caller from one run to the next into the same builder.
pub(crate) fn parse_op_lines_into(
    source: &str,
    (b, small_keys): &mut (HistoryBuilder, Vec<u32>),
    text: &[u8],
    first_line: usize,
) -> Result<(), IngestError> {
    let mut p = Parser::new(text, 0, text.len(), first_line);
    p.line_base = first_line - 1;
    p.small_keys = std::mem::take(small_keys);
    let r = p.ops(b, None).map_err(|e| shift_lines(e.into_ingest(source, text), first_line - 1));
    *small_keys = std::mem::take(&mut p.small_keys);
    r
}

/// Moves a syntax error found in a segment to its line in the whole input.
fn shift_lines(e: IngestError, lines_before: usize) -> IngestError {
    match e {
        IngestError::Syntax { source_name, line, column, expected, found } => IngestError::Syntax {
            source_name,
            line: u32::try_from(line as usize + lines_before).unwrap_or(u32::MAX),
            column,
            expected,
            found,
        },
        e => e,
    }
}

/// How a history streamed in segments begins: where its ops start in the
/// first bytes read, and, when they lie in one vector or list, the byte that
/// closes it and where it was opened (`line:column`).
pub(crate) struct StreamOpening {
    /// Offset of the first op (after the opening bracket, if any).
    pub ops_start: usize,
    /// The closing bracket and the opening's location, for a history vector.
    pub vector: Option<(u8, String)>,
}

/// Finds where the ops of a streamed EDN history begin in `head`, its first
/// bytes; `None` when `head` holds nothing but blanks and comments (the
/// caller then reads more, or the whole input).
pub(crate) fn stream_opening(head: &[u8]) -> Option<StreamOpening> {
    let mut p = Parser::new(head, 0, head.len(), 1);
    p.skip_ws(0).ok()?;
    match p.peek()? {
        c @ (b'[' | b'(') => {
            let (l, col) = line_col(head, p.pos);
            Some(StreamOpening { ops_start: p.pos + 1, vector: Some((closer(c), format!("{l}:{col}"))) })
        }
        _ => Some(StreamOpening { ops_start: p.pos, vector: None }),
    }
}

/// Parses one segment of a streamed history: a run of whole ops (in
/// parallel chunks when it is large), whose first byte is on line
/// `first_line` of the stream. With `end_of_vector`, the segment is the last
/// one of a history vector: it ends with the vector's closing bracket and
/// nothing but blanks may follow. Errors name lines of the whole stream.
pub(crate) fn parse_segment(
    source: &str,
    seg: &[u8],
    first_line: usize,
    end_of_vector: Option<&(u8, String)>,
) -> Result<Vec<HistoryBuilder>, IngestError> {
    let Some((close, opened_at)) = end_of_vector else {
        return parse_chunks_sized(source, seg, DEFAULT_MIN_CHUNK, rayon::current_num_threads(), first_line, None);
    };
    let mut b = HistoryBuilder::with_capacity_for(source, seg.len());
    let mut p = Parser::new(seg, 0, seg.len(), first_line);
    p.line_base = first_line - 1;
    p.opener = Some(opened_at.clone());
    let done = p.ops(&mut b, Some((*close, OPENED_EARLIER))).and_then(|()| {
        p.skip_ws(0)?;
        match p.pos < p.src.len() {
            true => Err(perr(p.pos, "end of input after the history vector")),
            false => Ok(()),
        }
    });
    match done {
        Ok(()) => Ok(vec![b]),
        Err(e) => Err(shift_lines(e.into_ingest(source, seg), first_line - 1)),
    }
}

/// The offset of the last line start in `buf` (after position 0) whose first
/// non-blank byte is `{` or `#`: where a streamed history may be cut between
/// two ops. A cut that falls inside an op (a multi-line op with such a line)
/// makes the segment before it fail to parse, and the caller reads on.
pub(crate) fn last_cut(buf: &[u8]) -> Option<usize> {
    let mut end = buf.len();
    while let Some(nl) = buf[..end].iter().rposition(|&b| b == b'\n') {
        let line = nl + 1;
        let mut j = line;
        while j < buf.len() && matches!(buf[j], b' ' | b'\t' | b',') {
            j += 1;
        }
        if j < buf.len() && matches!(buf[j], b'{' | b'#') && line > 0 {
            return Some(line);
        }
        end = nl;
    }
    None
}

/// Parses in at most `max_chunks` chunks of at least `min_chunk` bytes (tests
/// use tiny chunks to exercise the splitting logic on small inputs).
#[cfg(test)]
pub(crate) fn parse_with_chunk(
    source: &str,
    input: &[u8],
    min_chunk: usize,
    max_chunks: usize,
) -> Result<History, IngestError> {
    merge(source, parse_chunks_sized(source, input, min_chunk, max_chunks, 1, None)?)
}

fn parse_chunks_sized(
    source: &str,
    input: &[u8],
    min_chunk: usize,
    max_chunks: usize,
    first_line: usize,
    release: Option<Release<'_>>,
) -> Result<Vec<HistoryBuilder>, IngestError> {
    let Some(bounds) = plan_chunks(input, min_chunk.max(1), max_chunks) else {
        return Ok(vec![whole_input(source, input, first_line)?]);
    };
    // Chunks after the first count their lines from 0 as they go; their
    // ops' lines are moved to the whole input's once all are parsed.
    let first = first_line + count_newlines(&input[..bounds[0]]);
    // Emptied list arenas of parsed chunks, reused by the next ones.
    let arenas: std::sync::Mutex<Vec<Vec<i64>>> = std::sync::Mutex::new(Vec::new());
    let chunks: Vec<Option<(HistoryBuilder, usize)>> = bounds
        .par_windows(2)
        .enumerate()
        .map(|(i, w)| {
            // Reserved for the chunk only: the first chunk's columns grow as
            // the others are appended (large buffers grow by remapping, not
            // copying), and a reservation for a whole multi-GB input would
            // exceed what the kernel lets one allocation reserve.
            let mut b = HistoryBuilder::with_capacity_for(source, w[1] - w[0]);
            if let Some(arena) = arenas.lock().ok().and_then(|mut a| a.pop()) {
                b.reuse_arena(arena);
            }
            let mut p = Parser::new(input, w[0], w[1], if i == 0 { first } else { 0 });
            p.release = release.map(|r| (r, w[0]));
            let parsed = p.ops(&mut b, None).ok().map(|()| {
                let arena = b.share_lists();
                if let Ok(mut a) = arenas.lock() {
                    a.push(arena);
                }
                (b, p.lines_to(w[1]))
            });
            if let Some(r) = release {
                r(w[0], w[1]);
            }
            parsed
        })
        .collect();
    if chunks.iter().any(Option::is_none) {
        // Some cut fell inside an op, or the input has an error: the
        // sequential parse gives the authoritative result and message.
        return Ok(vec![whole_input(source, input, first_line)?]);
    }
    let mut line = first;
    let mut out = Vec::with_capacity(chunks.len());
    for (i, (mut b, lines)) in chunks.into_iter().flatten().enumerate() {
        if i > 0 {
            b.offset_lines(line);
            line += lines;
        } else {
            line = lines;
        }
        out.push(b);
    }
    Ok(out)
}

/// Cuts an input into `n` windows for a distributed run (`crate::dist`):
/// `n + 1` non-decreasing offsets, the first where ops begin (after a
/// history vector's opening bracket), the last where they end (before its
/// closing bracket), each other one the first line start at or after an
/// equal share of the bytes whose first non-blank byte is `{` or `#` (some
/// windows may be empty). Every process computes the same cuts from the
/// same bytes. A cut that falls inside an op (a multi-line string or map)
/// leaves the window before it ending inside a form: its parse fails with
/// the place, never a guess. Errors: a history vector whose closing
/// bracket is not the last thing in the input.
pub(crate) fn plan_windows(input: &[u8], n: usize) -> Result<Vec<usize>, String> {
    let mut p = Parser::new(input, 0, input.len(), 1);
    p.skip_ws(0).map_err(|e| format!("cannot find the first op ({})", e.expected))?;
    let (start, end) = match p.peek() {
        None => (input.len(), input.len()),
        Some(c @ (b'[' | b'(')) => {
            let last = input.iter().rposition(|&b| !is_ws(b)).unwrap_or(p.pos);
            let line_start = input[..last].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            if input[last] != closer(c) || last == p.pos || input[line_start..last].contains(&b';') {
                return Err(format!(
                    "the history is one vector opened at byte {}, whose closing `{}` is not the last thing in the \
                     input (on a line without a `;` comment); write one op per line, or check it on one process",
                    p.pos,
                    closer(c) as char
                ));
            }
            (p.pos + 1, last)
        }
        Some(_) => (p.pos, input.len()),
    };
    let n = n.max(1);
    let len = end - start;
    let mut bounds = vec![start];
    for i in 1..n {
        let from = (start + len / n * i).max(*bounds.last().unwrap_or(&start));
        bounds.push(next_op_line(input, from, end));
    }
    bounds.push(end);
    Ok(bounds)
}

/// The first line start at or after `from` (and before `end`) whose first
/// non-blank byte begins an op map or a tagged record; `end` if none.
pub(crate) fn next_op_line(input: &[u8], from: usize, end: usize) -> usize {
    let mut search = from;
    // `from` itself is a line start only after a newline.
    if search > 0 && input.get(search - 1) != Some(&b'\n') {
        match input[search..end].iter().position(|&b| b == b'\n') {
            Some(nl) => search += nl + 1,
            None => return end,
        }
    }
    while search < end {
        let mut j = search;
        while j < end && matches!(input[j], b' ' | b'\t' | b',') {
            j += 1;
        }
        if j < end && matches!(input[j], b'{' | b'#') {
            return search;
        }
        match input[search..end].iter().position(|&b| b == b'\n') {
            Some(nl) => search += nl + 1,
            None => return end,
        }
    }
    end
}

/// The byte span of the `k`-th client op (from 0) read from `from` on in
/// `input[..end]`, non-client ops skipped as the reader skips them; `None`
/// when there is none (a distributed run echoes the ops its cases name
/// from the bytes they were read from).
pub(crate) fn client_op_span(input: &[u8], from: usize, end: usize, k: usize) -> Option<(usize, usize)> {
    let mut p = Parser::new(input, from, end, 1);
    let mut b = HistoryBuilder::new("");
    loop {
        p.skip_ws(0).ok()?;
        p.peek()?;
        let start = p.pos;
        let before = b.op_count();
        p.op_form(&mut b).ok()?;
        if b.op_count() > before && before == k {
            return Some((start, p.pos));
        }
    }
}

/// Parses the ops of `input[start..end]` (a window of [`plan_windows`])
/// into a builder, its first byte on line `first_line` (0: count lines from
/// the window's start, to be moved later); returns the builder and the line
/// of `end`. Errors name their place in the whole input. With `release`,
/// the input's bytes are given back as they are read (see [`parse_chunks`]).
///
/// The window is read in pieces of [`WINDOW_PIECE`] bytes cut at op lines,
/// each stored with its list reads shared ([`HistoryBuilder::share_lists`])
/// before it joins the window's builder: list reads are stored whole while
/// a piece is read, so a window read in one go would hold every read list
/// at once (several times the shared history). A piece that does not parse
/// on its own (an op spanning a cut) is read again with the rest of the
/// window in one go, so pieces never change what is read or an error's place.
pub(crate) fn parse_window(
    source: &str,
    input: &[u8],
    start: usize,
    end: usize,
    first_line: usize,
    release: Option<Release<'_>>,
) -> Result<(HistoryBuilder, usize), IngestError> {
    let mut whole: Option<HistoryBuilder> = None;
    let (mut at, mut line) = (start, first_line);
    let mut arena: Option<Vec<i64>> = None;
    while at < end {
        let mut cut = if end - at > WINDOW_PIECE { next_op_line(input, at + WINDOW_PIECE, end) } else { end };
        let parsed = match parse_piece(source, input, (at, cut), line, release, arena.take()) {
            Err(_) if cut < end => {
                cut = end;
                parse_piece(source, input, (at, end), line, release, None)
            }
            parsed => parsed,
        };
        let (mut piece, next_line) = parsed.map_err(|e| e.into_ingest(source, input))?;
        arena = Some(piece.share_lists());
        match &mut whole {
            None => whole = Some(piece),
            Some(b) if b.can_append(&piece) => b.append(piece),
            Some(_) => {
                return Err(IngestError::Unreadable {
                    path: source.to_string(),
                    reason: "holds more than 4 billion operations, micro-operations or distinct list elements in \
                             one window, beyond the columnar model's u32 offsets: use more workers"
                        .into(),
                })
            }
        }
        (at, line) = (cut, next_line);
    }
    Ok((whole.unwrap_or_else(|| HistoryBuilder::new(source)), line))
}

/// Bytes of a window read at a time by [`parse_window`].
const WINDOW_PIECE: usize = 32 << 20;

/// Parses one piece `input[from..to]` of a window, its first byte on line
/// `line`, into a builder (filling `arena` when given); returns it and the
/// line of `to`.
fn parse_piece(
    source: &str,
    input: &[u8],
    (from, to): (usize, usize),
    line: usize,
    release: Option<Release<'_>>,
    arena: Option<Vec<i64>>,
) -> PResult<(HistoryBuilder, usize)> {
    let mut b = HistoryBuilder::with_capacity_for(source, to - from);
    if let Some(arena) = arena {
        b.reuse_arena(arena);
    }
    let mut p = Parser::new(input, from, to, line);
    p.release = release.map(|r| (r, from));
    let parsed = p.ops(&mut b, None);
    if let Some(r) = release {
        r(from, to);
    }
    parsed.map(|()| (b, p.lines_to(to)))
}

/// Chooses chunk boundaries for a parallel parse: offsets where a line starts
/// (after optional blanks) with `{` or `#`. Returns `None` when the input is
/// small or has no usable cut. The first boundary is where ops begin (after a
/// history vector's opening bracket), the last where they end (before its
/// closing bracket).
fn plan_chunks(input: &[u8], min_chunk: usize, max_chunks: usize) -> Option<Vec<usize>> {
    if input.len() < 2 * min_chunk {
        return None;
    }
    let mut p = Parser::new(input, 0, input.len(), 1);
    p.skip_ws(0).ok()?;
    let (start, end) = match p.peek()? {
        c @ (b'[' | b'(') => {
            // One history vector: the ops lie between its brackets. The final
            // closer must be the last non-blank byte, not inside a comment.
            let last = input.iter().rposition(|&b| !is_ws(b))?;
            if input[last] != closer(c) {
                return None;
            }
            let line_start = input[..last].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            if input[line_start..last].contains(&b';') {
                return None;
            }
            (p.pos + 1, last)
        }
        _ => (p.pos, input.len()),
    };
    let len = end.checked_sub(start)?;
    let n = (len / min_chunk).min(max_chunks);
    if n < 2 {
        return None;
    }
    let step = len / n;
    let mut bounds = vec![start];
    let mut search = start;
    for i in 1..n {
        search = search.max(start + i * step);
        // Find the next line start (after `\n`) whose first non-blank byte
        // is `{` or `#`.
        while search < end {
            let Some(nl) = input[search..end].iter().position(|&b| b == b'\n') else {
                search = end;
                break;
            };
            let line = search + nl + 1;
            search = line;
            let mut j = line;
            while j < end && matches!(input[j], b' ' | b'\t' | b',') {
                j += 1;
            }
            if j < end && matches!(input[j], b'{' | b'#') {
                bounds.push(line);
                break;
            }
        }
    }
    bounds.push(end);
    bounds.dedup();
    (bounds.len() >= 3).then_some(bounds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::testkit;

    fn parse_str(s: &str) -> Result<History, IngestError> {
        parse_sequential("h.edn", s.as_bytes())
    }

    fn ok(s: &str) -> History {
        match parse_str(s) {
            Ok(h) => h,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn err(s: &str) -> String {
        match parse_str(s) {
            Ok(h) => panic!("expected an error, got {} ops", h.ops.len()),
            Err(e) => e.to_string(),
        }
    }

    fn kw(s: &str) -> Atom {
        Atom::Keyword(s.into())
    }

    #[test]
    fn clojure_integer_spellings_read_as_their_value() {
        for (text, n) in [
            ("0x1a2b", Some(6699)),
            ("-0x10", Some(-16)),
            ("0XffN", Some(255)),
            ("017", Some(15)),
            ("2r101", Some(5)),
            ("36rZZ", Some(1295)),
            ("+8r17", Some(15)),
            ("0x", None),
            ("08", None),
            ("1r0", None),
            ("0x-1", None),
            ("0xFFFFFFFFFFFFFFFF", None),
            ("12", None),
        ] {
            assert_eq!(radix_int(text), n, "{text}");
        }
    }

    /// Jepsen writes Java objects into `:error` fields as
    /// `#object[java.lang.Object 0x1a2b "..."]`, with a hex number inside;
    /// such tagged literals (and `#error`, `#uuid`, `#inst`) are read, not a
    /// parse error.
    #[test]
    fn jepsen_tagged_literals_are_read() {
        let text = "{:type :invoke, :process 0, :value [[:append :x 1]]}
{:type :info, :process 0, :value [[:append :x 1]], :error #object[java.lang.Object 0x1a2b \"java.lang.Object@1a2b\"]}
{:type :ok, :process 1, :value [[:r :x [1]]], :error #error {:cause \"x\"}, :u #uuid \"123e4567-e89b-12d3-a456-426614174000\", :at #inst \"2020-01-01T00:00:00Z\"}
";
        let h = match parse("h.edn", text.as_bytes()) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(h.ops.len(), 3);
        assert_eq!(h.extras_of(&h.ops[1]).len(), 1);
        assert_eq!(h.extras_of(&h.ops[2]).len(), 3);
    }

    #[test]
    fn reads_op_fields_and_mops() {
        let h = ok(
            "{:type :invoke, :f :txn, :value [[:append 11 1] [:r 11 nil]], :process 10, :time 31076248, :index 1}\n\
                    {:type :ok, :f :txn, :value [[:append 11 1] [:r 11 [1]]], :process 10, :time 31076249, :index 2}\n",
        );
        assert_eq!(h.ops.len(), 2);
        let op = h.ops[1];
        assert_eq!(op.op_type, OpType::Ok);
        assert_eq!(op.process, 10);
        assert_eq!(op.time, 31076249);
        assert_eq!(op.index, 2);
        assert_eq!(op.line, 2);
        assert_eq!(h.f_of(&op), &kw("txn"));
        assert_eq!(h.ops[0].pair, 1);
        let m = h.mops_of(&op);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].f, MopFn::Append);
        assert_eq!(h.key(m[0].key), &Atom::Int(11));
        assert_eq!(m[0].value, MopValue::Int(1));
        assert_eq!(m[1].f, MopFn::Read);
        assert_eq!(m[1].key, m[0].key);
        assert_eq!(h.list(m[1].value), &[1]);
        assert_eq!(h.mops_of(&h.ops[0])[1].value, MopValue::Nil);
    }

    #[test]
    fn nil_read_empty_list_read_and_two_element_read_differ() {
        let h = ok(
            "{:type :ok :process 0 :value [[:r 1 nil] [:r 1 []] [:r 1] [:r 1 5] [:r 1 (2 -3)] (:w 1 nil) [:w 1 -7]]}",
        );
        let m = h.mops_of(&h.ops[0]);
        assert_eq!(m[0].value, MopValue::Nil);
        assert!(matches!(m[1].value, MopValue::List { len: 0, .. }));
        assert_eq!(m[2].value, MopValue::Nil);
        assert_eq!(m[3].value, MopValue::Int(5));
        assert_eq!(h.list(m[4].value), &[2, -3]);
        assert_eq!((m[5].f, m[5].value), (MopFn::Write, MopValue::Nil));
        assert_eq!(m[6].value, MopValue::Int(-7));
    }

    #[test]
    fn closed_predicate_ops_read_as_flat_mops_and_print_back() {
        let text = "{:index 0, :type :ok, :process 0, :f :init, :value {:x 0, 5 1}}\n\
                    {:index 1, :type :ok, :process 1, :f :txn, :value [[:insert :y 2] [:delete :x] \
                    [:rp [:mod 2 0] {:y 2, 5 nil}] [:rp :true nil] [:r :y 2]]}";
        let h = ok(text);
        let m = h.mops_of(&h.ops[1]);
        let fs: Vec<MopFn> = m.iter().map(|m| m.f).collect();
        use MopFn::*;
        assert_eq!(fs, [Insert, Delete, PredRead, PredEntry, PredEntry, PredRead, Read]);
        assert_eq!(m[2].value, MopValue::Entries(2));
        assert_eq!((m[4].value, m[5].value), (MopValue::Nil, MopValue::Nil));
        assert_eq!(h.elle_mops(&h.ops[1]).count(), 5);
        assert_ne!(h.ops[0].fields & field::VALUE_MAP, 0);
        let printed: Vec<String> =
            (0..2).map(|i| crate::reports::edn::to_string(&h, &crate::reports::tree::op(&h, i))).collect();
        assert_eq!(
            printed,
            [
                "{:index 0, :type :ok, :process 0, :f :init, :value {:x 0, 5 1}}",
                "{:index 1, :type :ok, :process 1, :f :txn, :value [[:insert :y 2] [:delete :x] \
                 [:rp [:mod 2 0] {:y 2, 5 nil}] [:rp :true nil] [:r :y 2]]}",
            ]
        );
    }

    #[test]
    fn keyword_string_and_int_keys_are_distinct() {
        let h = ok(
            r#"{:type :ok :process 0 :value [[:append :x 1] [:append "x" 2] [:append 3 3] [:append :x 4] [:append "x" 5] [:append :elle.list-append/k 6] [:append "a\"b" 7]]}"#,
        );
        let m = h.mops_of(&h.ops[0]);
        assert_eq!(h.key(m[0].key), &kw("x"));
        assert_eq!(h.key(m[1].key), &Atom::Str("x".into()));
        assert_eq!(h.key(m[2].key), &Atom::Int(3));
        assert_eq!(m[3].key, m[0].key);
        assert_eq!(m[4].key, m[1].key);
        assert_eq!(h.key(m[5].key), &kw("elle.list-append/k"));
        assert_eq!(h.key(m[6].key), &Atom::Str("a\"b".into()));
        assert_eq!(h.key_count(), 5);
    }

    #[test]
    fn reads_values_and_keys_of_any_edn_type() {
        let h = ok(
            r#"{:type :ok :process 0 :value [[:append "k1" "a"] [:r "k1" ["a" :b #uuid "u-1" [1 ("x")] 1.5 nil 123456789012345678901234 -7 2N]] [:w [1 "x"] #uuid "u-2"] [:r #uuid "u-3" ##Inf] [:append :k #{2 1}] [:r :k [#{1 2}]] [:w 99999999999999999999 \a]]}"#,
        );
        assert!(!h.values.is_empty());
        let m = h.mops_of(&h.ops[0]);
        let text = |v: MopValue| match v {
            MopValue::Int(v) => h.value_text(v),
            MopValue::List { .. } => h.list(v).iter().map(|&e| h.value_text(e)).collect::<Vec<_>>().join(" "),
            MopValue::Nil | MopValue::Entries(_) => "nil".into(),
        };
        assert_eq!(text(m[0].value), r#""a""#);
        assert_eq!(text(m[1].value), r#""a" :b #uuid "u-1" [1 ("x")] 1.5 nil 123456789012345678901234 -7 2N"#);
        assert_eq!(
            h.list(m[1].value)[0],
            match m[0].value {
                MopValue::Int(v) => v,
                _ => -1,
            }
        );
        assert_eq!(h.key(m[2].key).to_string(), r#"[1 "x"]"#);
        assert_eq!(text(m[2].value), r#"#uuid "u-2""#);
        assert_eq!(h.key(m[3].key).to_string(), r#"#uuid "u-3""#);
        assert_eq!(text(m[3].value), "##Inf");
        // Sets are equal whatever their order; each prints as first written.
        assert_eq!(
            h.list(m[5].value),
            &[match m[4].value {
                MopValue::Int(v) => v,
                _ => -1,
            }]
        );
        assert_eq!(text(m[5].value), "#{2 1}");
        assert_eq!(h.key(m[6].key).to_string(), "99999999999999999999");
        assert_eq!(text(m[6].value), "\\a");
    }

    #[test]
    fn missing_and_nil_fields_are_recorded() {
        let h = ok("{:type :ok :process 0}{:type :ok :process 0 :time nil :f nil :value nil}{:type :ok :process 0 :time 3 :f :txn :value []}");
        let f = |i: usize| h.ops[i].fields;
        assert_eq!(f(0), 0);
        assert_eq!(f(1), field::TIME | field::TIME_NIL | field::F | field::VALUE | field::VALUE_NIL);
        assert_eq!(f(2), field::TIME | field::F | field::VALUE);
    }

    #[test]
    fn parallel_equals_sequential_when_values_turn_non_integer_late() {
        let mut s = String::new();
        for i in 0..400 {
            s.push_str(&format!("{{:type :ok :process {i} :value [[:append 1 {i}] [:r 1 [{}]]]}}\n", i + 1));
        }
        for i in 0..20 {
            s.push_str(&format!(
                "{{:type :ok :process {i} :value [[:append \"s\" \"v{i}\"] [:r 1 [{i} \"v{i}\"]]]}}\n"
            ));
        }
        for i in 0..50 {
            s.push_str(&format!("{{:type :ok :process {i} :value [[:w 2 {}]]}}\n", -i - 5));
        }
        let seq = parse_sequential("h.edn", s.as_bytes()).map(|h| debug(&h)).map_err(|e| e.to_string());
        assert!(seq.is_ok());
        for chunk in [100, 1000, 5000] {
            let par =
                parse_with_chunk("h.edn", s.as_bytes(), chunk, 1000).map(|h| debug(&h)).map_err(|e| e.to_string());
            assert!(par == seq, "chunk {chunk}");
        }
    }

    #[test]
    fn tagged_records_comments_commas_and_discards() {
        let h = ok("; a history\n\
                    #jepsen.history.Op{:index 0, :time 5, :type :invoke, :process 0, :f :txn, :value [[:w :x 1]]}\n\
                    #_ {:type :ok :process 0 :value [[:w :x 1]]}\n\
                    {:type :ok, #_ :ignored, :process 0 ; trailing comment\n :f :txn :value [[:w :x #_ 99 1]] :index 1 :time 6},,,\n");
        assert_eq!(h.ops.len(), 2);
        assert_eq!(h.ops[0].line, 2);
        assert_eq!(h.ops[1].line, 4);
        assert_eq!(h.ops[1].index, 1);
        assert_eq!(h.mops_of(&h.ops[1])[0].value, MopValue::Int(1));
        assert!(h.extras.is_empty());
    }

    #[test]
    fn vector_or_list_wrapped_history() {
        for (open, close) in [("[", "]"), ("(", ")")] {
            let s = format!("{open}{{:type :invoke :process 0 :value [[:r 1]]}}\n {{:type :ok :process 0 :value [[:r 1 [2]]]}}{close}\n");
            let h = ok(&s);
            assert_eq!(h.ops.len(), 2);
            assert_eq!(h.ops[1].line, 2);
            assert_eq!(h.list(h.mops_of(&h.ops[1])[0].value), &[2]);
        }
        assert!(err("[{:type :ok :process 0}").contains("h.edn:1:24: expected `]` to close the history opened at 1:1"));
        assert!(err("[{:type :ok :process 0}] {:type :ok}")
            .contains("1:26: expected end of input after the history vector"));
    }

    /// The lists of every read of a history, as parsed.
    fn read_lists(h: &History) -> Vec<Vec<i64>> {
        h.mops.iter().filter(|m| m.f == MopFn::Read).map(|m| h.list(m.value).to_vec()).collect()
    }

    #[test]
    fn repeated_reads_read_the_same_lists_as_fresh_ones() {
        // Reads that repeat the previous read of their key and go on, that
        // repeat only bytes (`[1 2]` then `[1 23]`), shorter reads, reads
        // of other keys in between, a nemesis op's list (discarded), a
        // comma and a comment, and values that turn non-integer.
        let ops = [
            "[:r 1 [1 2]] [:r 2 [7]]",
            "[:r 1 [1 2 3]] [:r 1 [1 2 3 4]]",
            "[:r 1 [1 23]]",
            "[:r 1 [1 2]] [:r 2 (7 8)]",
            "[:r 1 [1 2,5 ; c\n 6]]",
            "[:r 1 [1 2,5 ; c\n 6 \"x\"]] [:r 2 [7 8 9]]",
            "[:r 1 [1 2,5 ; c\n 6 \"x\" 10]]",
        ];
        let mut text = String::new();
        for (i, mops) in ops.iter().enumerate() {
            text.push_str(&format!("{{:type :ok, :process {i}, :value [{mops}]}}\n"));
            text.push_str("{:type :info, :process :nemesis, :value [[:r 1 [1 2 3 4 5 6 7]]]}\n");
        }
        let h = ok(&text);
        let x = h.values.iter().position(|v| *v == Value::Atom(Atom::Str("x".into()))).map(|i| i as i64);
        let id = |n: i64| h.values.iter().position(|v| *v == Value::Atom(Atom::Int(n))).map_or(-1, |i| i as i64);
        let ids = |ns: &[i64]| ns.iter().map(|&n| id(n)).collect::<Vec<_>>();
        let mut tail = ids(&[1, 2, 5, 6]);
        tail.push(x.unwrap_or(-1));
        let mut longest = tail.clone();
        longest.push(id(10));
        let want = vec![
            ids(&[1, 2]),
            ids(&[7]),
            ids(&[1, 2, 3]),
            ids(&[1, 2, 3, 4]),
            ids(&[1, 23]),
            ids(&[1, 2]),
            ids(&[7, 8]),
            ids(&[1, 2, 5, 6]),
            tail,
            ids(&[7, 8, 9]),
            longest,
        ];
        assert_eq!(read_lists(&h), want);
        assert_eq!(h.nonclient_ops, ops.len());
    }

    #[test]
    fn nonclient_ops_are_counted_with_any_value() {
        let h = ok(
            "{:type :info, :f :start-partition, :value [:isolated {\"n1\" #{\"n2\"}}], :process :nemesis, :time 1}\n\
                    {:type :info :f :kill :value [[:r 1 [1]]] :time 2}\n\
                    {:type :invoke :process 0 :value nil :f :txn}\n\
                    {:type :info :value :weird :process nil}\n",
        );
        assert_eq!(h.nonclient_ops, 3);
        assert_eq!(h.ops.len(), 1);
        assert_eq!(h.ops[0].index, 2);
        assert!(h.mops.is_empty());
    }

    #[test]
    fn process_after_value_still_validates_client_mops() {
        // :value before :process, and the op turns out to be a client op.
        let e = err("{:type :ok :value [[:frob 1 2]] :process 3}");
        assert!(e.contains("h.edn:1:21: expected micro-op function :append, :r, :w, or (closed-predicate) :insert, :delete or :rp, found :frob"), "{e}");
        // ... or a nemesis op: no error.
        let h = ok("{:type :info :value [[:frob 1 2]] :process :nemesis}");
        assert_eq!(h.nonclient_ops, 1);
    }

    #[test]
    fn missing_index_is_dense_and_given_indices_are_kept() {
        let h = ok("{:type :invoke :process 0}\n{:type :ok :process 0}\n{:type :info :process :nemesis}\n{:type :ok :process 1}\n");
        assert_eq!(h.ops.iter().map(|o| o.index).collect::<Vec<_>>(), vec![0, 1, 3]);
        let h = ok("{:type :invoke :process 0 :index 10}\n{:type :ok :process 0 :index 20}\n{:type :ok :process 1 :index 35}\n");
        assert_eq!(h.ops.iter().map(|o| o.index).collect::<Vec<_>>(), vec![10, 20, 35]);
    }

    #[test]
    fn missing_time_is_minus_one_and_missing_f_is_nil() {
        let h = ok("{:type :ok :process 0 :time nil}{:type :ok :process 0 :time 7 :f \"read\"}");
        assert_eq!(h.ops[0].time, -1);
        assert_eq!(h.f_of(&h.ops[0]), &Atom::Nil);
        assert_eq!(h.ops[1].time, 7);
        assert_eq!(h.f_of(&h.ops[1]), &Atom::Str("read".into()));
    }

    #[test]
    fn extras_are_kept_in_order() {
        let h = ok(
            r#"{:type :fail, :f :txn, :value [[:r 1 nil]], :process 4, :error [:no-client "Connection refused"], :node "n1", "odd" 1.5, :c \a, :big 123456789012345678901234N, :t #inst "2020-01-01"}"#,
        );
        let ex = h.extras_of(&h.ops[0]);
        assert_eq!(ex.len(), 6);
        assert_eq!(ex[0].0, Value::Atom(kw("error")));
        assert_eq!(
            ex[0].1,
            Value::Vector(vec![Value::Atom(kw("no-client")), Value::Atom(Atom::Str("Connection refused".into()))])
        );
        assert_eq!(ex[1].1, Value::Atom(Atom::Str("n1".into())));
        assert_eq!(ex[2], (Value::Atom(Atom::Str("odd".into())), Value::Float(1.5)));
        assert_eq!(ex[3].1, Value::Atom(Atom::Symbol("\\a".into())));
        assert_eq!(ex[4].1, Value::Atom(Atom::BigInt("123456789012345678901234N".into())));
        assert_eq!(ex[5].1, Value::Tagged("inst".into(), Box::new(Value::Atom(Atom::Str("2020-01-01".into())))));
    }

    #[test]
    fn general_values_parse() {
        let h = ok(
            r#"{:type :ok :process 0 :x [1 -2 3N 1.5e3 ##Inf nil true false sym ns/sym "s\n\u00e9" \newline #{1} (a) {:k [#_ 9]}]}"#,
        );
        let Value::Vector(v) = &h.extras_of(&h.ops[0])[0].1 else { panic!("not a vector") };
        assert_eq!(v[0], Value::Atom(Atom::Int(1)));
        assert_eq!(v[1], Value::Atom(Atom::Int(-2)));
        assert_eq!(v[2], Value::Atom(Atom::BigInt("3N".into())));
        assert_eq!(v[3], Value::Float(1500.0));
        assert_eq!(v[4], Value::Float(f64::INFINITY));
        assert_eq!(v[5], Value::Atom(Atom::Nil));
        assert_eq!(v[6], Value::Atom(Atom::Bool(true)));
        assert_eq!(v[8], Value::Atom(Atom::Symbol("sym".into())));
        assert_eq!(v[9], Value::Atom(Atom::Symbol("ns/sym".into())));
        assert_eq!(v[10], Value::Atom(Atom::Str("s\né".into())));
        assert_eq!(v[11], Value::Atom(Atom::Symbol("\\newline".into())));
        assert_eq!(v[12], Value::Set(vec![Value::Atom(Atom::Int(1))]));
        assert_eq!(v[13], Value::List(vec![Value::Atom(Atom::Symbol("a".into()))]));
        assert_eq!(v[14], Value::Map(vec![(Value::Atom(kw("k")), Value::Vector(vec![]))]));
    }

    #[test]
    fn errors_name_line_column_expected_and_found() {
        let cases = [
            ("{:type :ok :process 0}\n{:type :foo, :process 1}", "h.edn:2:8: expected an op :type of :invoke, :ok, :fail or :info, found :foo"),
            ("{:type :ok, :process 0, :value [:foo]}", "h.edn:1:33: expected a micro-op vector like [:append k v], found :foo"),
            ("{:type :ok, :process 0, :value [[:incr 1 2]]}", "h.edn:1:34: expected micro-op function :append, :r, :w, or (closed-predicate) :insert, :delete or :rp, found :incr"),
            ("\n\n  {:type :ok, :process 0", "h.edn:3:25: expected `}` to close the op map opened at 3:3, found end of input"),
            ("{:type :ok, :process 0, :value [[:append 1]]}", "h.edn:1:43: expected a value for :append, found ]"),
            ("{:type :ok, :process 0, :value [[:append 1 1.5.5]]}", "h.edn:1:44: expected a number, found 1.5.5"),
            ("{:type :ok :process 0}\n\u{1}\u{2}garbage", "h.edn:2:1: expected an op map like {:type :invoke, :f :txn, :value [...], :process 0}, found byte 0x01"),
            ("{:type :ok, :process 0, :value [[:r 1 [1 #{]]]}", "h.edn:1:44: expected `}` to close the set opened at 1:43, found ]"),
            ("{:process 0}", "h.edn:1:1: expected a :type in every op map, found an op map without one"),
            ("{:type :ok :type :ok :process 0}", "h.edn:1:12: expected each key at most once in an op map, found :type"),
            ("{:type :ok :process 0 :value [[:r 1 2 3]]}", "h.edn:1:39: expected `]` to close the micro-op opened at 1:31, found 3"),
            ("{:type :ok :process 0 :value [[:w 1 #uuid]]}", "h.edn:1:42: expected a value after the tag #uuid, found ]"),
            ("{:type :ok :process 0 :time :now}", "h.edn:1:29: expected an integer :time, found :now"),
            ("{:type :ok :process 0 :error \"abc}", "h.edn:1:35: expected a closing \" for the string opened at 1:30"),
            ("{:type :ok :process 0 :value 5}", "h.edn:1:30: expected a :value of nil or a vector of micro-ops"),
            ("{:type :ok :process 0 :f}", "h.edn:1:25: expected a value for the key :f, found }"),
            ("{:type :ok :process 0 \"k\"\n}", "h.edn:2:1: expected a value for the key \"k\", found }"),
            ("{:type :ok :process 0 :x [1 2)}", "h.edn:1:30: expected `]` to close the vector opened at 1:26, found )"),
        ];
        for (input, want) in cases {
            let got = err(input);
            assert!(got.contains(want), "input {input:?}\n  got:  {got}\n  want: {want}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let s = format!("{{:type :ok :process 0 :x {}}}", "[".repeat(100_000));
        assert!(err(&s).contains("nesting at most 512 levels deep"));
        let s = format!("{{:type :ok :process 0 :x {} 1}}", "#_".repeat(100_000));
        assert!(err(&s).contains("nesting at most 512 levels deep"));
    }

    #[test]
    fn empty_input_is_an_empty_history() {
        let h = ok(" \n; nothing\n");
        assert!(h.ops.is_empty());
        assert_eq!(h.nonclient_ops, 0);
    }

    fn debug(h: &History) -> String {
        format!("{h:?}")
    }

    #[test]
    fn inputs_beyond_u32_offsets_are_never_read_whole() {
        let text = b"{:type :ok, :process 0, :value [[:append :x 1]]}\n";
        assert!(whole_input_within("h.edn", text, 1, text.len()).is_ok());
        match whole_input_within("h.edn", text, 1, text.len() - 1) {
            Err(IngestError::Unreadable { reason, .. }) => assert!(reason.contains("over 4 GiB"), "{reason}"),
            other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn parallel_equals_sequential_on_generated_history() {
        let text = testkit::sized_list_append(5 << 20, 7);
        assert!(text.len() >= 5 << 20);
        let seq = parse_sequential("g.edn", text.as_bytes()).map(|h| debug(&h)).map_err(|e| e.to_string());
        assert!(seq.is_ok(), "{:?}", seq.err());
        for chunk in [64 << 10, 256 << 10, 1 << 20] {
            assert!(plan_chunks(text.as_bytes(), chunk, 1000).is_some());
            let par =
                parse_with_chunk("g.edn", text.as_bytes(), chunk, 1000).map(|h| debug(&h)).map_err(|e| e.to_string());
            assert!(par == seq, "chunk size {chunk}: results differ");
        }
        // The production configuration (one chunk per thread).
        let par = parse("g.edn", text.as_bytes()).map(|h| debug(&h)).map_err(|e| e.to_string());
        assert!(par == seq);
        // The same history wrapped in one vector, elements on separate lines.
        let wrapped = format!("[{}]\n", text.trim_end());
        let seq = parse_sequential("g.edn", wrapped.as_bytes()).map(|h| debug(&h)).map_err(|e| e.to_string());
        assert!(seq.is_ok());
        assert!(plan_chunks(wrapped.as_bytes(), 256 << 10, 1000).is_some());
        let par = parse_with_chunk("g.edn", wrapped.as_bytes(), 256 << 10, 1000)
            .map(|h| debug(&h))
            .map_err(|e| e.to_string());
        assert!(par == seq);
    }

    #[test]
    fn bad_cuts_fall_back_to_sequential() {
        // Lines starting with `{` inside a multi-line string and a multi-line
        // map: cuts there must not change the result.
        let mut s = String::new();
        for i in 0..200 {
            s.push_str(&format!(
                "{{:type :ok :process {i} :value [[:append 1 {i}]] :note \"x\n{{:type :ok :process 99}}\n\"}}\n"
            ));
            s.push_str(&format!("{{:type :ok :process {i}\n:value [[:r 1\n[{i}]]]}}\n"));
        }
        let seq = parse_sequential("h.edn", s.as_bytes()).map(|h| debug(&h)).map_err(|e| e.to_string());
        assert!(seq.is_ok());
        for chunk in [16, 100, 1000] {
            let par =
                parse_with_chunk("h.edn", s.as_bytes(), chunk, 1000).map(|h| debug(&h)).map_err(|e| e.to_string());
            assert!(par == seq, "chunk {chunk}");
        }
        // An error late in the input is reported as by a sequential parse.
        let bad = format!("{s}{{:type :ok :process 1 :value [[:append 1 #_]]}}\n");
        let par = parse_with_chunk("h.edn", bad.as_bytes(), 100, 1000).map(|h| debug(&h)).map_err(|e| e.to_string());
        let seq = parse_sequential("h.edn", bad.as_bytes()).map(|h| debug(&h)).map_err(|e| e.to_string());
        assert!(par.is_err());
        assert_eq!(par, seq);
    }

    #[test]
    fn chunked_parse_reports_absolute_lines() {
        let mut s = String::new();
        for i in 0..1000 {
            s.push_str(&format!("{{:type :ok :process {i} :value [[:r {i} [1 2]]]}}\n\n"));
        }
        let h = match parse_with_chunk("h.edn", s.as_bytes(), 512, 1000) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        assert!(plan_chunks(s.as_bytes(), 512, 1000).is_some_and(|b| b.len() > 3));
        for (i, op) in h.ops.iter().enumerate() {
            assert_eq!(op.line as usize, 2 * i + 1);
        }
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        const VALID: &str = "[{:type :invoke, :f :txn, :value [[:append 1 1] [:r :x nil]], :process 0, :time 1, :index 0}\n\
            #jepsen.history.Op{:type :ok, :f :txn, :value [[:append 1 1] (:r :x [1 2 3])], :process 0, :time 2, :index 1}\n\
            {:type :info, :f :start, :value {:n1 #{\"n2\"}}, :process :nemesis, :error [:x \"y\\n\"] ; c\n}\n\
            #_ {:a 1} {:type :fail :process 1 :value [[:w \"k\" -5] [:r 2]] :extra (1.5 ##NaN \\a)}]\n";

        fn same_as_sequential(input: &[u8]) -> Result<(), TestCaseError> {
            let seq = parse_sequential("f.edn", input).map(|h| format!("{h:?}")).map_err(|e| e.to_string());
            for chunk in [1, 7, 40] {
                let par =
                    parse_with_chunk("f.edn", input, chunk, 1000).map(|h| format!("{h:?}")).map_err(|e| e.to_string());
                prop_assert_eq!(&par, &seq);
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            #[test]
            fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
                same_as_sequential(&bytes)?;
            }

            #[test]
            fn edn_like_text_never_panics(s in "[\\[\\](){}#_:;,\" \n\\\\a-z0-9.+\\-NM]{0,200}") {
                same_as_sequential(s.as_bytes())?;
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
                same_as_sequential(&bytes)?;
            }
        }

        #[test]
        fn valid_fuzz_seed_parses() {
            let h = ok(VALID);
            assert_eq!(h.ops.len(), 3);
            assert_eq!(h.nonclient_ops, 1);
        }
    }
}
