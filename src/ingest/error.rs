//! Errors of the ingest stage, and the helpers that turn a byte offset into
//! the `file:line:column: expected X, found Y` form every reader reports.

use std::borrow::Cow;

/// Why a history could not be read.
///
/// Every variant names the source (file name or the name given to
/// [`super::read_bytes`]) so that a message is useful on its own; malformed
/// input additionally carries the 1-based line and column and what the reader
/// expected versus what it found there.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The file could not be opened, mapped or read.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The history is well formed but says something inconsistent (an op
    /// field naming an impossible order); the reason names file and line.
    #[error("{reason}")]
    Invalid {
        /// What is wrong, and where.
        reason: String,
    },
    /// The input is not a well-formed history.
    #[error("{source_name}:{line}:{column}: expected {expected}, found {found}")]
    Syntax {
        /// The file (or source name) being read.
        source_name: String,
        /// 1-based line of the offending text.
        line: u32,
        /// 1-based column (in characters) of the offending text.
        column: u32,
        /// What the reader expected at that point.
        expected: String,
        /// What it found instead (a short excerpt, or `end of input`).
        found: String,
    },
    /// A binary input (dbcop `history.bincode`, a Cobra log) is malformed.
    /// Binary files have no lines, so the error is located by the record
    /// being read (dbcop: session, transaction and event index; Cobra: the
    /// record's number in its log) and the byte offset.
    #[error("{source_name}: {}at byte {offset}: expected {expected}, found {found}", with_comma(record))]
    Binary {
        /// The file (or source name) being read.
        source_name: String,
        /// The record being read, e.g. `session 0, transaction 3, event 1`
        /// or `record 12`, 0-based; empty where no record is open (a header).
        record: String,
        /// Byte offset of the offending data from the start of the file.
        offset: u64,
        /// What the reader expected at that point.
        expected: String,
        /// What it found instead (a value, or `end of input`).
        found: String,
    },
    /// The path is not something a history can be read from as asked (for
    /// example a directory without Cobra `*.log` files).
    #[error("{path}: {reason}")]
    Unreadable {
        /// The path as given.
        path: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// The input is larger than the limit (at most 4 GiB - 1, as the columnar
    /// model's arenas use `u32` offsets; see [`super::MAX_INPUT_BYTES`];
    /// EDN files are read in chunks up to [`super::MAX_MAPPED_EDN_BYTES`]).
    #[error("{source_name}: input of {len} bytes or more is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The file (or source name) being read.
        source_name: String,
        /// Its length in bytes, or for a stream the bytes read before the
        /// limit was passed.
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// The input holds nothing to check: it is empty, or its client
    /// operations are all invocations (none completed).
    #[error("{source_name}: {reason}")]
    Empty {
        /// The file (or source name) being read.
        source_name: String,
        /// What the input holds instead.
        reason: String,
    },
    /// The input could not be read in the format it was taken to be, and its
    /// content looks like another format: the reader's error plus a hint.
    #[error("{inner}; the content looks like {looks_like}: try `--input-format {flag}`")]
    OtherFormat {
        /// The reader's error.
        inner: Box<IngestError>,
        /// The format the content looks like, in words.
        looks_like: &'static str,
        /// The `--input-format` value that reads it.
        flag: &'static str,
    },
}

/// `record` followed by `, `, or nothing when it is empty.
fn with_comma(record: &str) -> String {
    if record.is_empty() {
        String::new()
    } else {
        format!("{record}, ")
    }
}

/// A parse error inside a reader, located by byte offset only; it is turned
/// into an [`IngestError::Syntax`] (line and column computed once, on the cold
/// path) by [`PErr::into_ingest`]. Boxed so that `Result`s on the hot path
/// stay one word wide.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PErr {
    /// Absolute byte offset in the whole input.
    pub pos: usize,
    /// What was expected.
    pub expected: Cow<'static, str>,
    /// What was found; `None` means "describe the text at `pos`".
    pub found: Option<String>,
}

/// Result type of the readers' internals.
pub(crate) type PResult<T> = Result<T, Box<PErr>>;

/// Builds a boxed parse error at `pos`.
#[cold]
pub(crate) fn perr(pos: usize, expected: impl Into<Cow<'static, str>>) -> Box<PErr> {
    Box::new(PErr { pos, expected: expected.into(), found: None })
}

impl PErr {
    /// Locates the error in `input` and names `source`.
    #[cold]
    pub(crate) fn into_ingest(self, source: &str, input: &[u8]) -> IngestError {
        let (line, column) = line_col(input, self.pos);
        let found = escape_controls(&self.found.unwrap_or_else(|| describe(input, self.pos)));
        IngestError::Syntax {
            source_name: source.to_string(),
            line,
            column,
            expected: escape_controls(&self.expected),
            found,
        }
    }
}

/// A parse error inside a binary reader, located by byte offset; turned into
/// an [`IngestError::Binary`] by [`BErr::into_ingest`]. Boxed like [`PErr`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BErr {
    /// Byte offset in the input.
    pub pos: usize,
    /// What was expected.
    pub expected: Cow<'static, str>,
    /// What was found.
    pub found: String,
    /// The record being read (see [`IngestError::Binary`]), if known.
    pub record: String,
}

/// Result type of the binary readers' internals.
pub(crate) type BResult<T> = Result<T, Box<BErr>>;

/// Builds a boxed binary parse error at `pos`.
#[cold]
pub(crate) fn berr(pos: usize, expected: impl Into<Cow<'static, str>>, found: impl Into<String>) -> Box<BErr> {
    Box::new(BErr { pos, expected: expected.into(), found: found.into(), record: String::new() })
}

impl BErr {
    /// Names `source` in the error.
    #[cold]
    pub(crate) fn into_ingest(self, source: &str) -> IngestError {
        IngestError::Binary {
            source_name: source.to_string(),
            record: self.record,
            offset: self.pos as u64,
            expected: escape_controls(&self.expected),
            found: escape_controls(&self.found),
        }
    }
}

/// Counts `\n` bytes quickly: per-lane byte counters over 32-byte blocks
/// (which compile to vector compares and subtracts), flushed before they can
/// overflow.
#[inline]
pub(crate) fn count_newlines(bytes: &[u8]) -> usize {
    let mut n = 0usize;
    let mut blocks = bytes.chunks_exact(32);
    loop {
        let mut acc = [0u8; 32];
        let mut k = 0;
        for block in blocks.by_ref() {
            for (a, &b) in acc.iter_mut().zip(block) {
                *a += (b == b'\n') as u8;
            }
            k += 1;
            if k == 255 {
                break;
            }
        }
        n += acc.iter().map(|&a| a as usize).sum::<usize>();
        if k < 255 {
            break;
        }
    }
    n + blocks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// 1-based line and column (in UTF-8 characters) of byte offset `pos`.
pub(crate) fn line_col(input: &[u8], pos: usize) -> (u32, u32) {
    let pos = pos.min(input.len());
    let before = &input[..pos];
    let line = count_newlines(before) + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    // Count characters, not bytes: skip UTF-8 continuation bytes.
    let column = input[line_start..pos].iter().filter(|&&b| (b & 0xC0) != 0x80).count() + 1;
    (saturate(line), saturate(column))
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `s` with control characters (C0, DEL, C1) and Unicode bidirectional
/// formatting characters escaped as `\u{..}`, so that an excerpt of the input
/// quoted in a message cannot move the cursor, recolour or reorder a terminal.
pub(crate) fn escape_controls(s: &str) -> String {
    let bad = |c: char| {
        c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(bad) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Bytes that end an EDN/JSON token.
#[inline]
pub(crate) fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b' ' | b',' | b'\n' | b'\t' | b'\r' | 0x0b | 0x0c | b'[' | b']' | b'(' | b')' | b'{' | b'}' | b'"' | b';'
    )
}

/// A short, printable description of the text at `pos`, for the `found`
/// part of a message: a token as written (`:foo`, `12x`), a string literal, the
/// start of a collection, a lone bracket, `end of input`, or a raw byte.
pub(crate) fn describe(input: &[u8], pos: usize) -> String {
    const MAX: usize = 40;
    let Some(&b) = input.get(pos) else {
        return "end of input".to_string();
    };
    let rest = &input[pos..];
    let end = match b {
        b']' | b')' | b'}' | b',' | b':' if rest.len() == 1 || is_delimiter(rest[1]) => 1,
        b'"' => {
            // Up to the closing quote (honouring escapes) or the end of line.
            let mut i = 1;
            while i < rest.len() && rest[i] != b'"' && rest[i] != b'\n' {
                i += if rest[i] == b'\\' { 2 } else { 1 };
            }
            (i + 1).min(rest.len())
        }
        b'[' | b'(' | b'{' | b'#' => rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len()),
        _ if b < 0x20 || b == 0x7f => return format!("byte 0x{b:02x}"),
        _ => {
            // A token: up to the next delimiter (a leading ':' belongs to it).
            let mut i = 1;
            while i < rest.len() && !is_delimiter(rest[i]) {
                i += 1;
            }
            i
        }
    };
    let text = &rest[..end];
    match std::str::from_utf8(text) {
        Ok(s) => {
            let mut out: String = s.chars().take(MAX).collect();
            if s.chars().nth(MAX).is_some() {
                out.push_str("...");
            }
            out
        }
        Err(e) if e.valid_up_to() > 0 => {
            // Show the valid prefix; the bad byte is reported separately.
            let s = String::from_utf8_lossy(&text[..e.valid_up_to()]);
            s.chars().take(MAX).collect()
        }
        Err(_) => format!("byte 0x{b:02x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lines_and_characters() {
        let s = "ab\ncé:d\n".as_bytes();
        assert_eq!(line_col(s, 0), (1, 1));
        assert_eq!(line_col(s, 3), (2, 1));
        // 'é' is two bytes but one column.
        assert_eq!(line_col(s, 6), (2, 3));
        assert_eq!(line_col(s, s.len()), (3, 1));
    }

    #[test]
    fn count_newlines_matches_naive_count() {
        let s: Vec<u8> = (0..1000u32).map(|i| if i % 7 == 0 { b'\n' } else { b'x' }).collect();
        for len in [0, 1, 31, 32, 33, 500, 1000] {
            let naive = s[..len].iter().filter(|&&b| b == b'\n').count();
            assert_eq!(count_newlines(&s[..len]), naive);
        }
    }

    #[test]
    fn describe_shows_tokens_brackets_and_end() {
        assert_eq!(describe(b"[:foo 1]", 1), ":foo");
        assert_eq!(describe(b"x]", 1), "]");
        assert_eq!(describe(b"x", 1), "end of input");
        assert_eq!(describe(b"\"a\\\"b\" 1", 0), "\"a\\\"b\"");
        assert_eq!(describe(b"\x01", 0), "byte 0x01");
        assert_eq!(describe(b"\xff", 0), "byte 0xff");
    }

    #[test]
    fn control_characters_in_excerpts_are_escaped() {
        assert_eq!(escape_controls("ab"), "ab");
        assert_eq!(escape_controls("a\u{1b}[31mb\u{7f}\u{9b}\u{202e}"), "a\\u{1b}[31mb\\u{7f}\\u{9b}\\u{202e}");
        // A string token holding an escape sequence and a tab.
        let e = perr(0, "a keyword").into_ingest("h.edn", b"\"\x1b[2J\tx\" 1");
        assert_eq!(e.to_string(), "h.edn:1:1: expected a keyword, found \"\\u{1b}[2J\\u{9}x\"");
        let e = berr(3, "a tag", "x\u{7}").into_ingest("T1.log");
        assert_eq!(e.to_string(), "T1.log: at byte 3: expected a tag, found x\\u{7}");
    }

    #[test]
    fn syntax_error_message_has_file_line_column() {
        let e = perr(4, "a thing").into_ingest("h.edn", b"ab\ncd :x");
        assert_eq!(e.to_string(), "h.edn:2:2: expected a thing, found d");
    }
}
