//! The subset of Fressian that Jepsen writes into `test.jepsen`, read
//! straight into EDN text.
//!
//! # Why hand-written
//!
//! No Fressian crate exists for Rust, and the part Jepsen uses is small:
//! the codes of Datomic's `org.fressian.impl.Codes`, the two caches, and
//! the handful of tags that Jepsen's `jepsen.store.fressian` and
//! `clojure.data.fressian` register. Writing the value as EDN text while it
//! is read (instead of building a value tree) lets the EDN reader, which
//! already turns op maps into the columnar history, do the rest: a history
//! read from `test.jepsen` is then exactly the one read from the
//! `history.edn` Jepsen prints from the same ops.
//!
//! # Encoding
//!
//! Every value starts with a one-byte code:
//!
//! * integers: `0x00..=0x3F` and `0xFF` (-1) are the value itself;
//!   `0x40..0x60`, `0x60..0x70`, `0x70..0x74`, `0x74..0x78`, `0x78..0x7C`,
//!   `0x7C..0x80` carry the high bits of a 2..7-byte big-endian two's
//!   complement number (their "zero" codes are `0x50`, `0x68`, `0x72`,
//!   `0x76`, `0x7A`, `0x7E`); `0xF8` is followed by 8 bytes.
//! * `0xF5`/`0xF6` true/false, `0xF7` nil, `0xF9` float, `0xFA` double,
//!   `0xFB`/`0xFC` the doubles 0 and 1.
//! * strings: `0xDA + n` (n < 8 bytes), `0xE3` count, or `0xE2` count
//!   chunks ended by a final `0xE3`/packed piece. The bytes are Java's
//!   UTF-8 of UTF-16 units (a character outside the BMP is two 3-byte
//!   surrogates, as in CESU-8).
//! * bytes: `0xD0 + n`, `0xD9` count, `0xD8` chunks.
//! * lists: `0xE4 + n` (n < 8), `0xEC` count, `0xED` items up to `0xFD`,
//!   `0xEE` items up to `0xFD` or the end of the input. Jepsen's reader
//!   turns every list into a vector, printed `[...]`.
//! * structs (tagged values): `0xEF` tag fields (a new struct type, added
//!   to the struct cache), `0xA0 + i` (cached type `i < 16`), `0xF0` index;
//!   and the built-in types with their own code: `0xC0` map (one list of
//!   keys and values), `0xC1` set, `0xC3` uuid, `0xC4` regex, `0xC5` uri,
//!   `0xC6` bigint, `0xC7` bigdec, `0xC8` inst, `0xC9` symbol, `0xCA`
//!   keyword, `0xB0..=0xB5` arrays.
//! * the priority cache: `0xCD` value (read it and remember it),
//!   `0x80 + i` (i < 32) and `0xCC` index (the value remembered at i).
//!   `0xFE` empties both caches. A cache lives as long as its Fressian
//!   writer: one value in a Fressian block, the whole block of a
//!   FressianStream (every op of a history chunk).
//!
//! Tags Jepsen adds, and how they print: `jepsen.history.Op` (7 fields:
//! index, time, type, process, f, value, the map of other fields) as the op
//! map `{:index .., :time .., :type .., :process .., :f .., :value ..}`
//! followed by the other fields, as Jepsen prints an op; `vec`,
//! `persistent-hash-set`, `persistent-sorted-set`, `map-entry`, `atom`,
//! `multiset`, `throwable` (`#error {...}`, as Clojure prints one),
//! `instant`, `date-time`, `block-ref`, `byte`; Clojure's `key`, `sym`,
//! `char`, `ratio`, `bigint`, `record` (`#Class{...}`).
//!
//! An unknown tag is an error naming the tag and its byte offset in the
//! file (in `lenient` mode, used for the test map whose other keys hold
//! whatever a test put there, it is kept as `#tag [fields]`, as Fressian's
//! own reader keeps a `TaggedObject`). Nothing is ever guessed: a value
//! that runs past the end of its block is an error too.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Deepest nesting accepted (deeper input is an error, not a stack
/// overflow).
const MAX_DEPTH: u32 = 256;

/// A Fressian value that cannot be read, at `offset` bytes into the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FressianError {
    /// Byte offset in the file.
    pub offset: u64,
    /// What was expected there.
    pub expected: String,
    /// What was found instead.
    pub found: String,
}

type FResult<T> = Result<T, FressianError>;

/// What a rendered value was, for the places that need more than its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Nil,
    Str,
    Other,
}

/// The struct types almost every value of a history is (ops, keywords,
/// vectors, maps), recognised once when the type is first read so that
/// each value of them skips matching its tag's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Op,
    Key,
    Vec,
    Other,
}

impl Kind {
    fn of(tag: &str, fields: u32) -> Kind {
        match (tag, fields) {
            ("jepsen.history.Op", 7) => Kind::Op,
            ("key", 2) => Kind::Key,
            ("vec", 1) => Kind::Vec,
            _ => Kind::Other,
        }
    }
}

/// An entry of the priority cache: the value's EDN text, and for a string
/// its raw text (keywords and symbols are built from cached strings).
#[derive(Clone, Debug)]
struct Cached {
    edn: Box<[u8]>,
    raw: Option<Box<str>>,
    shape: Shape,
}

/// Reads Fressian values from one block's data, writing each as EDN.
pub(crate) struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    /// File offset of `buf[0]`, for messages.
    base: u64,
    priority: Vec<Cached>,
    /// Struct types by cache index: tag (shared, as every op names one),
    /// field count, and the common kinds resolved once.
    structs: Vec<(std::rc::Rc<str>, u32, Kind)>,
    /// Unknown tags are kept as `#tag [fields]` instead of refused.
    pub lenient: bool,
}

/// Clojure's spelling of a double.
fn push_double(out: &mut Vec<u8>, d: f64) {
    if d.is_nan() {
        out.extend_from_slice(b"##NaN");
    } else if d.is_infinite() {
        out.extend_from_slice(if d > 0.0 { b"##Inf" } else { b"##-Inf" });
    } else {
        let s = format!("{d:?}");
        out.extend_from_slice(s.as_bytes());
    }
}

/// `s` as an EDN string literal.
pub(crate) fn push_edn_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// Decimal digits of a big-endian two's complement integer.
fn big_decimal(bytes: &[u8]) -> String {
    let neg = bytes.first().is_some_and(|b| b & 0x80 != 0);
    // Magnitude, big-endian.
    let mut mag: Vec<u8> = if neg {
        // Two's complement negation: invert and add one.
        let mut m: Vec<u8> = bytes.iter().map(|b| !b).collect();
        for b in m.iter_mut().rev() {
            let (v, carry) = b.overflowing_add(1);
            *b = v;
            if !carry {
                break;
            }
        }
        m
    } else {
        bytes.to_vec()
    };
    let mut digits = Vec::new();
    while mag.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in mag.iter_mut() {
            let cur = (rem << 8) | u32::from(*b);
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    if neg {
        digits.push(b'-');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// Milliseconds since the epoch as `#inst`'s RFC 3339 text.
fn inst_text(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, mi, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}-00:00")
}

impl<'a> Decoder<'a> {
    /// A decoder of `buf`, which starts `base` bytes into the file.
    pub(crate) fn new(buf: &'a [u8], base: u64) -> Self {
        Decoder { buf, pos: 0, base, priority: Vec::new(), structs: Vec::new(), lenient: false }
    }

    /// Whether every byte has been read.
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// File offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn err_at(&self, pos: usize, expected: impl Into<String>, found: impl Into<String>) -> FressianError {
        FressianError { offset: self.base + pos as u64, expected: expected.into(), found: found.into() }
    }

    fn eof(&self, what: &str) -> FressianError {
        self.err_at(self.pos, what, "the end of the block")
    }

    fn byte(&mut self) -> FResult<u8> {
        let b = *self.buf.get(self.pos).ok_or_else(|| self.eof("a Fressian code"))?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize, what: &str) -> FResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(|| self.eof(what))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn raw_be(&mut self, n: usize) -> FResult<u64> {
        let s = self.take(n, "the bytes of an integer")?;
        Ok(s.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// The integer whose code is `code`, if it is an integer code.
    fn int_of_code(&mut self, code: u8) -> FResult<Option<i64>> {
        let c = i64::from(code);
        Ok(Some(match code {
            0xFF => -1,
            0x00..=0x3F => c,
            0x40..=0x5F => ((c - 0x50) << 8) | self.raw_be(1)? as i64,
            0x60..=0x6F => ((c - 0x68) << 16) | self.raw_be(2)? as i64,
            0x70..=0x73 => ((c - 0x72) << 24) | self.raw_be(3)? as i64,
            0x74..=0x77 => ((c - 0x76) << 32) | self.raw_be(4)? as i64,
            0x78..=0x7B => ((c - 0x7A) << 40) | self.raw_be(5)? as i64,
            0x7C..=0x7F => ((c - 0x7E) << 48) | self.raw_be(6)? as i64,
            0xF8 => self.raw_be(8)? as i64,
            _ => return Ok(None),
        }))
    }

    /// An integer (Fressian's `readInt`), as the 7-field op writes its
    /// index and time.
    pub(crate) fn int(&mut self) -> FResult<i64> {
        let at = self.pos;
        let code = self.byte()?;
        match self.int_of_code(code)? {
            Some(i) => Ok(i),
            None => Err(self.err_at(at, "an integer", format!("code 0x{code:02X}"))),
        }
    }

    /// A count (a non-negative integer within `usize`).
    fn count(&mut self) -> FResult<usize> {
        let at = self.pos;
        let n = self.int()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.buf.len().saturating_mul(8).max(64))
            .ok_or_else(|| self.err_at(at, "a count", n.to_string()))
    }

    /// Java's UTF-8 of UTF-16 units as a string.
    fn text_of<'b>(&self, at: usize, bytes: &'b [u8]) -> FResult<Cow<'b, str>> {
        if let Ok(s) = std::str::from_utf8(bytes) {
            return Ok(Cow::Borrowed(s));
        }
        let mut units = Vec::with_capacity(bytes.len());
        let mut i = 0;
        let bad = || self.err_at(at, "a string (Java's UTF-8)", "malformed UTF-8");
        while i < bytes.len() {
            let b = bytes[i];
            let cont = |j: usize| bytes.get(j).filter(|&&c| c & 0xC0 == 0x80).map(|&c| u16::from(c & 0x3F));
            match b >> 4 {
                0..=7 => {
                    units.push(u16::from(b));
                    i += 1;
                }
                12 | 13 => {
                    let c1 = cont(i + 1).ok_or_else(bad)?;
                    units.push((u16::from(b & 0x1F) << 6) | c1);
                    i += 2;
                }
                14 => {
                    let (c1, c2) = (cont(i + 1).ok_or_else(bad)?, cont(i + 2).ok_or_else(bad)?);
                    units.push((u16::from(b & 0x0F) << 12) | (c1 << 6) | c2);
                    i += 3;
                }
                _ => return Err(bad()),
            }
        }
        String::from_utf16(&units)
            .map(Cow::Owned)
            .map_err(|_| self.err_at(at, "a string (Java's UTF-8)", "an unpaired surrogate"))
    }

    /// The string whose code is `code`, if it is a string code (borrowed
    /// from the block unless it had to be re-encoded or joined).
    fn string_of_code(&mut self, at: usize, code: u8) -> FResult<Option<Cow<'a, str>>> {
        let mut bytes: Vec<u8>;
        match code {
            0xDA..=0xE1 => {
                let s = self.take(usize::from(code - 0xDA), "the bytes of a string")?;
                return self.text_of(at, s).map(Some);
            }
            0xE3 => {
                let n = self.count()?;
                let s = self.take(n, "the bytes of a string")?;
                return self.text_of(at, s).map(Some);
            }
            0xE2 => {
                let n = self.count()?;
                bytes = self.take(n, "the bytes of a string")?.to_vec();
                loop {
                    let c_at = self.pos;
                    let c = self.byte()?;
                    match c {
                        0xDA..=0xE1 => {
                            bytes.extend_from_slice(self.take(usize::from(c - 0xDA), "the bytes of a string")?);
                            break;
                        }
                        0xE3 => {
                            let n = self.count()?;
                            bytes.extend_from_slice(self.take(n, "the bytes of a string")?);
                            break;
                        }
                        0xE2 => {
                            let n = self.count()?;
                            bytes.extend_from_slice(self.take(n, "the bytes of a string")?);
                        }
                        _ => return Err(self.err_at(c_at, "the next chunk of a string", format!("code 0x{c:02X}"))),
                    }
                }
            }
            _ => return Ok(None),
        }
        // Chunks may split a character: decode the whole.
        self.text_of(at, &bytes).map(|t| Some(Cow::Owned(t.into_owned())))
    }

    fn bytes_of_code(&mut self, code: u8) -> FResult<Option<Vec<u8>>> {
        Ok(Some(match code {
            0xD0..=0xD7 => self.take(usize::from(code - 0xD0), "bytes")?.to_vec(),
            0xD9 => {
                let n = self.count()?;
                self.take(n, "bytes")?.to_vec()
            }
            0xD8 => {
                let n = self.count()?;
                let mut v = self.take(n, "bytes")?.to_vec();
                loop {
                    let at = self.pos;
                    match self.byte()? {
                        0xD8 => {
                            let n = self.count()?;
                            v.extend_from_slice(self.take(n, "bytes")?);
                        }
                        0xD9 => {
                            let n = self.count()?;
                            v.extend_from_slice(self.take(n, "bytes")?);
                            break;
                        }
                        c => return Err(self.err_at(at, "the next chunk of bytes", format!("code 0x{c:02X}"))),
                    }
                }
                v
            }
            _ => return Ok(None),
        }))
    }

    /// A string or nil (keyword and symbol parts, struct tags).
    fn text(&mut self, depth: u32) -> FResult<Option<String>> {
        let at = self.pos;
        let code = self.byte()?;
        match code {
            0xF7 => Ok(None),
            0xCD => {
                let v = self.text(depth + 1)?;
                let mut edn = Vec::new();
                let shape = match &v {
                    Some(s) => {
                        push_edn_string(&mut edn, s);
                        Shape::Str
                    }
                    None => {
                        edn.extend_from_slice(b"nil");
                        Shape::Nil
                    }
                };
                self.priority.push(Cached { edn: edn.into(), raw: v.clone().map(Into::into), shape });
                Ok(v)
            }
            0x80..=0x9F | 0xCC => {
                let i = if code == 0xCC { self.count()? } else { usize::from(code - 0x80) };
                let c = self.cached(at, i)?;
                match (c.shape, &c.raw) {
                    (Shape::Nil, _) => Ok(None),
                    (Shape::Str, Some(s)) => Ok(Some(s.to_string())),
                    _ => Err(self.err_at(at, "a string", String::from_utf8_lossy(&c.edn).into_owned())),
                }
            }
            0xFE => {
                self.reset();
                self.text(depth + 1)
            }
            _ => match self.string_of_code(at, code)? {
                Some(s) => Ok(Some(s.into_owned())),
                None => Err(self.err_at(at, "a string", format!("code 0x{code:02X}"))),
            },
        }
    }

    /// [`Self::text`] written to `out` (the raw text, no quotes) without
    /// allocating for cached or plain strings; false for nil.
    fn text_into(&mut self, out: &mut Vec<u8>, depth: u32) -> FResult<bool> {
        let at = self.pos;
        let code = *self.buf.get(self.pos).ok_or_else(|| self.eof("a Fressian code"))?;
        match code {
            0x80..=0x9F => {
                self.pos += 1;
                let c = self.cached(at, usize::from(code - 0x80))?;
                match (c.shape, &c.raw) {
                    (Shape::Nil, _) => Ok(false),
                    (Shape::Str, Some(s)) => {
                        out.extend_from_slice(s.as_bytes());
                        Ok(true)
                    }
                    _ => Err(self.err_at(at, "a string", String::from_utf8_lossy(&c.edn).into_owned())),
                }
            }
            0xDA..=0xE1 | 0xE3 => {
                self.pos += 1;
                match self.string_of_code(at, code)? {
                    Some(s) => {
                        out.extend_from_slice(s.as_bytes());
                        Ok(true)
                    }
                    None => Err(self.err_at(at, "a string", format!("code 0x{code:02X}"))),
                }
            }
            _ => match self.text(depth)? {
                Some(s) => {
                    out.extend_from_slice(s.as_bytes());
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }

    fn cached(&self, at: usize, i: usize) -> FResult<&Cached> {
        self.priority.get(i).ok_or_else(|| {
            self.err_at(at, "a priority cache index", format!("{i}, beyond the {} values cached", self.priority.len()))
        })
    }

    fn reset(&mut self) {
        self.priority.clear();
        self.structs.clear();
    }

    /// Reads one value and writes it to `out` as EDN.
    pub(crate) fn value(&mut self, out: &mut Vec<u8>) -> FResult<()> {
        self.value_at(out, 0).map(|_| ())
    }

    fn value_at(&mut self, out: &mut Vec<u8>, depth: u32) -> FResult<Shape> {
        if depth > MAX_DEPTH {
            return Err(self.err_at(self.pos, format!("values nested at most {MAX_DEPTH} deep"), "deeper nesting"));
        }
        let at = self.pos;
        let code = self.byte()?;
        match code {
            0x00..=0x7F | 0xF8 | 0xFF => {
                if let Some(i) = self.int_of_code(code)? {
                    push_int(out, i);
                }
            }
            0xDA..=0xE3 => {
                if let Some(s) = self.string_of_code(at, code)? {
                    push_edn_string(out, &s);
                    return Ok(Shape::Str);
                }
            }
            0xD0..=0xD9 => {
                if let Some(b) = self.bytes_of_code(code)? {
                    out.extend_from_slice(b"#bytes \"");
                    for x in b {
                        let _ = write!(Fmt(out), "{x:02x}");
                    }
                    out.push(b'"');
                }
            }
            0xF7 => {
                out.extend_from_slice(b"nil");
                return Ok(Shape::Nil);
            }
            0xF5 => out.extend_from_slice(b"true"),
            0xF6 => out.extend_from_slice(b"false"),
            0xFA => {
                let bits = self.raw_be(8)?;
                push_double(out, f64::from_bits(bits));
            }
            0xFB => out.extend_from_slice(b"0.0"),
            0xFC => out.extend_from_slice(b"1.0"),
            0xF9 => {
                let bits = self.raw_be(4)? as u32;
                push_double(out, f64::from(f32::from_bits(bits)));
            }
            0xE4..=0xEB => self.list_items(out, usize::from(code - 0xE4), depth)?,
            0xEC => {
                let n = self.count()?;
                self.list_items(out, n, depth)?;
            }
            0xED | 0xEE => {
                out.push(b'[');
                let mut first = true;
                loop {
                    if code == 0xEE && self.at_end() {
                        break;
                    }
                    if self.buf.get(self.pos) == Some(&0xFD) {
                        self.pos += 1;
                        break;
                    }
                    if !first {
                        out.push(b' ');
                    }
                    first = false;
                    self.value_at(out, depth + 1)?;
                }
                out.push(b']');
            }
            0xCD => {
                let start = out.len();
                let slot = self.priority.len();
                self.priority.push(Cached { edn: Box::new([]), raw: None, shape: Shape::Other });
                let shape = self.value_at(out, depth + 1)?;
                let raw = match shape {
                    Shape::Str => {
                        // Re-read the string's raw text from its literal.
                        unescape(&out[start..])
                    }
                    _ => None,
                };
                // A reset inside the cached value may have emptied the cache.
                if let Some(c) = self.priority.get_mut(slot) {
                    *c = Cached { edn: out[start..].into(), raw, shape };
                }
                return Ok(shape);
            }
            0x80..=0x9F | 0xCC => {
                let i = if code == 0xCC { self.count()? } else { usize::from(code - 0x80) };
                let c = self.cached(at, i)?;
                let shape = c.shape;
                out.extend_from_slice(&c.edn);
                return Ok(shape);
            }
            0xFE => {
                self.reset();
                return self.value_at(out, depth + 1);
            }
            0xEF => {
                let tag_at = self.pos;
                let tag = self.text(depth + 1)?.ok_or_else(|| self.err_at(tag_at, "a struct tag", "nil"))?;
                let fields = self.count()?;
                let fields = u32::try_from(fields).map_err(|_| self.err_at(tag_at, "a field count", "too many"))?;
                let tag: std::rc::Rc<str> = tag.into();
                let kind = Kind::of(&tag, fields);
                self.structs.push((tag.clone(), fields, kind));
                self.struct_value(out, at, &tag, fields, kind, depth)?;
            }
            0xA0..=0xAF | 0xF0 => {
                let i = if code == 0xF0 { self.count()? } else { usize::from(code - 0xA0) };
                let Some(&(_, fields, kind)) = self.structs.get(i) else {
                    return Err(self.err_at(
                        at,
                        "a struct cache index",
                        format!("{i}, beyond the {} struct types", self.structs.len()),
                    ));
                };
                if kind == Kind::Other {
                    let tag = self.structs[i].0.clone();
                    self.tagged(out, at, &tag, fields, depth)?;
                } else {
                    self.struct_value(out, at, "", fields, kind, depth)?;
                }
            }
            0xC0 => self.tagged(out, at, "map", 1, depth)?,
            0xC1 => self.tagged(out, at, "set", 1, depth)?,
            0xC3 => self.tagged(out, at, "uuid", 2, depth)?,
            0xC4 => self.tagged(out, at, "regex", 1, depth)?,
            0xC5 => self.tagged(out, at, "uri", 1, depth)?,
            0xC6 => self.tagged(out, at, "bigint", 1, depth)?,
            0xC7 => self.tagged(out, at, "bigdec", 2, depth)?,
            0xC8 => self.tagged(out, at, "inst", 1, depth)?,
            0xC9 => self.tagged(out, at, "sym", 2, depth)?,
            0xCA => self.tagged(out, at, "key", 2, depth)?,
            0xB0..=0xB5 => {
                let names = ["long[]", "double[]", "boolean[]", "int[]", "float[]", "Object[]"];
                let tag = names[usize::from(code - 0xB0)];
                self.tagged(out, at, tag, 2, depth)?;
            }
            _ => {
                return Err(self.err_at(
                    at,
                    "a Fressian value",
                    format!("code 0x{code:02X}, which Jepsen never writes"),
                ))
            }
        }
        Ok(Shape::Other)
    }

    /// A list (or nil, none) of values, each written as one line; returns
    /// how many. A history in a Fressian block is such a list of ops.
    pub(crate) fn list_lines(&mut self, out: &mut Vec<u8>) -> FResult<usize> {
        let at = self.pos;
        let code = self.byte()?;
        let (n, closed) = match code {
            0xF7 => return Ok(0),
            0xE4..=0xEB => (usize::from(code - 0xE4), None),
            0xEC => (self.count()?, None),
            0xED | 0xEE => (usize::MAX, Some(code)),
            _ => return Err(self.err_at(at, "the list of a history's ops", format!("code 0x{code:02X}"))),
        };
        let mut i = 0;
        while i < n {
            if let Some(c) = closed {
                if c == 0xEE && self.at_end() {
                    break;
                }
                if self.buf.get(self.pos) == Some(&0xFD) {
                    self.pos += 1;
                    break;
                }
            }
            self.value_at(out, 1)?;
            out.push(b'\n');
            i += 1;
        }
        Ok(i)
    }

    fn list_items(&mut self, out: &mut Vec<u8>, n: usize, depth: u32) -> FResult<()> {
        out.push(b'[');
        for i in 0..n {
            if i > 0 {
                out.push(b' ');
            }
            self.value_at(out, depth + 1)?;
        }
        out.push(b']');
        Ok(())
    }

    /// A list (or nil, empty) whose items are written between `open` and
    /// `close`; returns how many.
    fn list_as(&mut self, out: &mut Vec<u8>, open: &[u8], close: &[u8], depth: u32) -> FResult<usize> {
        let at = self.pos;
        let code = self.byte()?;
        let (n, closed) = match code {
            0xF7 => (0, None),
            0xE4..=0xEB => (usize::from(code - 0xE4), None),
            0xEC => (self.count()?, None),
            0xED | 0xEE => (usize::MAX, Some(code)),
            _ => return Err(self.err_at(at, "a list", format!("code 0x{code:02X}"))),
        };
        out.extend_from_slice(open);
        let mut i = 0;
        while i < n {
            if let Some(c) = closed {
                if c == 0xEE && self.at_end() {
                    break;
                }
                if self.buf.get(self.pos) == Some(&0xFD) {
                    self.pos += 1;
                    break;
                }
            }
            if i > 0 {
                out.push(b' ');
            }
            self.value_at(out, depth + 1)?;
            i += 1;
        }
        out.extend_from_slice(close);
        Ok(i)
    }

    /// The body of a struct of a common `kind` (`tag` is read only for
    /// [`Kind::Other`]).
    fn struct_value(
        &mut self,
        out: &mut Vec<u8>,
        at: usize,
        tag: &str,
        fields: u32,
        kind: Kind,
        depth: u32,
    ) -> FResult<()> {
        match kind {
            Kind::Op => self.op(out, depth + 1),
            Kind::Key => self.keyword(out, depth + 1),
            Kind::Vec => self.list_as(out, b"[", b"]", depth + 1).map(|_| ()),
            Kind::Other => self.tagged(out, at, tag, fields, depth),
        }
    }

    /// A keyword's namespace (or nil) and name, written `:ns/name`.
    fn keyword(&mut self, out: &mut Vec<u8>, d: u32) -> FResult<()> {
        out.push(b':');
        self.name_parts(out, d)
    }

    /// A keyword's or symbol's namespace (or nil) and name, as `ns/name`.
    fn name_parts(&mut self, out: &mut Vec<u8>, d: u32) -> FResult<()> {
        if self.text_into(out, d)? {
            out.push(b'/');
        }
        let name_at = self.pos;
        if !self.text_into(out, d)? {
            return Err(self.err_at(name_at, "a name", "nil"));
        }
        Ok(())
    }

    /// The body of a struct with `tag` and `fields` components.
    fn tagged(&mut self, out: &mut Vec<u8>, at: usize, tag: &str, fields: u32, depth: u32) -> FResult<()> {
        let d = depth + 1;
        match (tag, fields) {
            ("map", 1) => {
                // Keys and values alternate: an even number of items.
                if self.list_as(out, b"{", b"}", d)? % 2 != 0 {
                    return Err(self.err_at(at, "a map's keys and values (an even count)", "an odd count"));
                }
            }
            ("set" | "persistent-hash-set" | "persistent-sorted-set", 1) => {
                self.list_as(out, b"#{", b"}", d)?;
            }
            ("vec", 1) => {
                self.list_as(out, b"[", b"]", d)?;
            }
            ("key", 2) => self.keyword(out, d)?,
            ("sym", 2) => self.name_parts(out, d)?,
            ("jepsen.history.Op", 7) => self.op(out, d)?,
            ("map-entry", 2) => {
                out.push(b'[');
                self.value_at(out, d)?;
                out.push(b' ');
                self.value_at(out, d)?;
                out.push(b']');
            }
            ("bigint", 1) => {
                let b_at = self.pos;
                let code = self.byte()?;
                let b = self
                    .bytes_of_code(code)?
                    .ok_or_else(|| self.err_at(b_at, "bytes", format!("code 0x{code:02X}")))?;
                out.extend_from_slice(big_decimal(&b).as_bytes());
                out.push(b'N');
            }
            ("bigdec", 2) => {
                let b_at = self.pos;
                let code = self.byte()?;
                let b = self
                    .bytes_of_code(code)?
                    .ok_or_else(|| self.err_at(b_at, "bytes", format!("code 0x{code:02X}")))?;
                let scale = self.int()?;
                let digits = big_decimal(&b);
                let (neg, digits) = match digits.strip_prefix('-') {
                    Some(d) => (true, d.to_string()),
                    None => (false, digits),
                };
                if neg {
                    out.push(b'-');
                }
                if scale <= 0 {
                    out.extend_from_slice(digits.as_bytes());
                    for _ in 0..(-scale).min(4096) {
                        out.push(b'0');
                    }
                } else {
                    let scale = usize::try_from(scale).unwrap_or(usize::MAX).min(4096);
                    let padded = format!("{digits:0>width$}", width = scale + 1);
                    let (int, frac) = padded.split_at(padded.len() - scale);
                    let _ = write!(Fmt(out), "{int}.{frac}");
                }
                out.push(b'M');
            }
            ("inst", 1) => {
                let ms = self.int()?;
                out.extend_from_slice(b"#inst ");
                push_edn_string(out, &inst_text(ms));
            }
            ("uuid", 2) => {
                let b_at = self.pos;
                let code = self.byte()?;
                let b = self
                    .bytes_of_code(code)?
                    .ok_or_else(|| self.err_at(b_at, "bytes", format!("code 0x{code:02X}")))?;
                if b.len() != 16 {
                    return Err(self.err_at(b_at, "the 16 bytes of a UUID", format!("{} bytes", b.len())));
                }
                let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
                let _ =
                    write!(Fmt(out), "#uuid \"{}-{}-{}-{}-{}\"", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]);
            }
            ("char", 1) => {
                let c_at = self.pos;
                let c = self.int()?;
                let c = u32::try_from(c)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| self.err_at(c_at, "a character", c.to_string()))?;
                match c {
                    '\n' => out.extend_from_slice(b"\\newline"),
                    ' ' => out.extend_from_slice(b"\\space"),
                    '\t' => out.extend_from_slice(b"\\tab"),
                    '\r' => out.extend_from_slice(b"\\return"),
                    c if c.is_control() => {
                        let _ = write!(Fmt(out), "\\u{:04x}", c as u32);
                    }
                    c => {
                        let _ = write!(Fmt(out), "\\{c}");
                    }
                }
            }
            ("ratio", 2) => {
                self.value_at(out, d)?;
                out.push(b'/');
                self.value_at(out, d)?;
            }
            ("byte", 1) => {
                let i = self.int()?;
                let _ = write!(Fmt(out), "{i}");
            }
            ("record", 2) => {
                let sym_start = out.len();
                out.push(b'#');
                self.value_at(out, d)?;
                if out.get(sym_start + 1).is_some_and(|&b| b == b'"' || b == b'[' || b == b'{') {
                    return Err(self.err_at(at, "a record's class name", "another value"));
                }
                self.value_at(out, d)?;
            }
            ("atom" | "multiset" | "date-time" | "instant" | "regex" | "uri" | "block-ref" | "throwable", 1) => {
                let name = match tag {
                    "throwable" => "error",
                    t => t,
                };
                out.push(b'#');
                out.extend_from_slice(name.as_bytes());
                out.push(b' ');
                self.value_at(out, d)?;
            }
            ("int[]" | "long[]" | "float[]" | "double[]" | "boolean[]" | "Object[]", 2) => {
                let n_at = self.pos;
                let n = self.count()?;
                if n > self.buf.len() - self.pos {
                    return Err(self.err_at(n_at, "an array length within the block", n.to_string()));
                }
                self.list_items(out, n, d)?;
            }
            _ if self.lenient => {
                out.push(b'#');
                out.extend_from_slice(tag.as_bytes());
                out.extend_from_slice(b" [");
                for i in 0..fields {
                    if i > 0 {
                        out.push(b' ');
                    }
                    self.value_at(out, d)?;
                }
                out.push(b']');
            }
            _ => {
                return Err(self.err_at(
                    at,
                    "a value with a tag Jepsen writes",
                    format!("unknown Fressian tag `{tag}` with {fields} fields"),
                ))
            }
        }
        Ok(())
    }

    /// A `jepsen.history.Op`: index, time, type, process, f, value, and the
    /// map of any other fields, printed as Jepsen prints an op.
    fn op(&mut self, out: &mut Vec<u8>, d: u32) -> FResult<()> {
        let index = self.int()?;
        let time = self.int()?;
        out.extend_from_slice(b"{:index ");
        push_int(out, index);
        out.extend_from_slice(b", :time ");
        push_int(out, time);
        out.extend_from_slice(b", :type ");
        self.value_at(out, d)?;
        out.extend_from_slice(b", :process ");
        self.value_at(out, d)?;
        out.extend_from_slice(b", :f ");
        self.value_at(out, d)?;
        out.extend_from_slice(b", :value ");
        self.value_at(out, d)?;
        let at = self.pos;
        let start = out.len();
        match self.value_at(out, d)? {
            Shape::Nil => out.truncate(start),
            _ => {
                // The other fields: a map, spliced into the op's.
                if out.get(start) != Some(&b'{') || out.last() != Some(&b'}') {
                    let found = String::from_utf8_lossy(&out[start..]).chars().take(40).collect::<String>();
                    return Err(self.err_at(at, "the map of an op's other fields", found));
                }
                out.pop();
                if out.len() == start + 1 {
                    out.truncate(start);
                } else {
                    out[start] = b' ';
                    out.insert(start, b',');
                }
            }
        }
        out.push(b'}');
        Ok(())
    }
}

/// The text of an EDN string literal written by [`push_edn_string`].
fn unescape(lit: &[u8]) -> Option<Box<str>> {
    let inner = lit.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let mut s = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        if inner[i] == b'\\' {
            i += 1;
            s.push(match inner.get(i)? {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                &c => c,
            });
        } else {
            s.push(inner[i]);
        }
        i += 1;
    }
    String::from_utf8(s).ok().map(Into::into)
}

/// An integer's decimal digits, without `fmt`'s machinery (most of what a
/// history holds is integers).
fn push_int(out: &mut Vec<u8>, i: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
}

/// `write!` into a byte vector.
struct Fmt<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Fmt<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edn(bytes: &[u8]) -> Result<String, FressianError> {
        let mut d = Decoder::new(bytes, 100);
        let mut out = Vec::new();
        d.value(&mut out)?;
        Ok(String::from_utf8(out).expect("utf8"))
    }

    #[test]
    fn integers_of_every_width() {
        assert_eq!(edn(&[0x05]).unwrap(), "5");
        assert_eq!(edn(&[0xFF]).unwrap(), "-1");
        assert_eq!(edn(&[0x5F, 0x94]).unwrap(), "3988");
        assert_eq!(edn(&[0x4F, 0xFF]).unwrap(), "-1");
        assert_eq!(edn(&[0x71, 0xFF, 0xFF, 0xFF]).unwrap(), "-1");
        assert_eq!(edn(&[0x73, 0x00, 0x00, 0x01]).unwrap(), (1i64 << 24 | 1).to_string());
        assert_eq!(edn(&[0xF8, 0, 0, 0, 0, 0, 0, 1, 0]).unwrap(), "256");
    }

    #[test]
    fn keywords_maps_and_the_priority_cache() {
        // {:type :ok :type 1}: a map over a list of four elements, :type's
        // name cached, then :type again from the cache.
        let map = [
            0xC0,
            0xE8,
            0xCA,
            0xF7,
            0xCD,
            0xDE,
            b't',
            b'y',
            b'p',
            b'e',
            0xCA,
            0xF7,
            0xDA + 2,
            b'o',
            b'k',
            0xCA,
            0xF7,
            0x80,
            0x01,
        ];
        assert_eq!(edn(&map).unwrap(), "{:type :ok :type 1}");
        let odd = [0xC0, 0xE5, 0x01];
        assert!(edn(&odd).is_err());
    }

    #[test]
    fn unknown_tags_and_truncation_are_errors_with_offsets() {
        let t = [0xEF, 0xDA + 3, b'f', b'o', b'o', 0x01, 0x05];
        let e = edn(&t).unwrap_err();
        assert_eq!(e.offset, 100);
        assert!(e.found.contains("unknown Fressian tag `foo`"), "{e:?}");
        let e = edn(&[0xE3, 0x05, b'a']).unwrap_err();
        assert!(e.found.contains("end of the block"), "{e:?}");
        let mut d = Decoder::new(&t, 0);
        d.lenient = true;
        let mut out = Vec::new();
        d.value(&mut out).unwrap();
        assert_eq!(out, b"#foo [5]");
    }

    #[test]
    fn strings_big_integers_and_dates() {
        // A supplementary character as two 3-byte surrogates.
        let s = [0xDA + 6, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80];
        assert_eq!(edn(&s).unwrap(), "\"\u{1F600}\"");
        assert_eq!(edn(&[0xDA + 2, b'"', b'\\']).unwrap(), "\"\\\"\\\\\"");
        assert_eq!(big_decimal(&[0x01, 0x00]), "256");
        assert_eq!(big_decimal(&[0xFF]), "-1");
        assert_eq!(big_decimal(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0]), "-2361183241434822606848");
        assert_eq!(inst_text(0), "1970-01-01T00:00:00.000-00:00");
        assert_eq!(inst_text(951_782_400_123), "2000-02-29T00:00:00.123-00:00");
    }
}
