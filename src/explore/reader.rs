//! A small EDN reader that keeps line numbers, for program files.
//!
//! The history reader ([`crate::ingest::edn`]) streams straight into the
//! columnar history model and keeps no positions in its values; a program
//! file is tiny and its errors must name a line, so it gets this reader:
//! integers, keywords, symbols, strings, `true`/`false`/`nil`, vectors,
//! lists, maps and sets, each form tagged with the line it starts on.
//! Commas are whitespace; `;` comments and `#_` discards are skipped.

use thiserror::Error;

/// A bad program: the line and what was expected. The reader raises it for
/// malformed EDN, the parser ([`super::program`]) for a well-formed file
/// that is not a program.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("line {line}: {msg}")]
pub struct ProgramError {
    /// The 1-based line.
    pub line: usize,
    /// What was wrong or expected.
    pub msg: String,
}

impl ProgramError {
    /// An error at `line`.
    pub fn new(line: usize, msg: impl Into<String>) -> Self {
        ProgramError { line, msg: msg.into() }
    }
}

/// Deepest nesting accepted (deeper input is an error, not a stack overflow).
const MAX_DEPTH: u32 = 256;

/// One EDN form and the line (1-based) where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    /// The form.
    pub kind: FormKind,
    /// Its first line.
    pub line: usize,
}

/// The kinds of form a program uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormKind {
    /// An integer.
    Int(i64),
    /// A keyword, without its colon.
    Keyword(String),
    /// A symbol (`true`, `false` and `nil` included).
    Symbol(String),
    /// A string.
    Str(String),
    /// `[...]`
    Vector(Vec<Form>),
    /// `(...)`
    List(Vec<Form>),
    /// `{...}` as key/value pairs.
    Map(Vec<(Form, Form)>),
    /// `#{...}`
    Set(Vec<Form>),
}

impl Form {
    /// A short description of the form for error messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            FormKind::Int(i) => format!("the integer {i}"),
            FormKind::Keyword(k) => format!("the keyword :{k}"),
            FormKind::Symbol(s) => format!("the symbol {s}"),
            FormKind::Str(s) => format!("the string {s:?}"),
            FormKind::Vector(_) => "a vector".into(),
            FormKind::List(_) => "a list".into(),
            FormKind::Map(_) => "a map".into(),
            FormKind::Set(_) => "a set".into(),
        }
    }
}

/// Reads every top-level form of `text`.
pub fn read_all(text: &str) -> Result<Vec<Form>, ProgramError> {
    let mut r = Reader { b: text.as_bytes(), i: 0, line: 1 };
    let mut out = Vec::new();
    loop {
        r.skip_ws(0)?;
        if r.i >= r.b.len() {
            return Ok(out);
        }
        out.push(r.form(0)?);
    }
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
}

fn is_delim(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';')
}

impl Reader<'_> {
    fn err(&self, line: usize, msg: impl Into<String>) -> ProgramError {
        ProgramError::new(line, msg)
    }

    fn skip_ws(&mut self, depth: u32) -> Result<(), ProgramError> {
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\n' => {
                    self.line += 1;
                    self.i += 1;
                }
                c if c.is_ascii_whitespace() || c == b',' => self.i += 1,
                b';' => {
                    while self.i < self.b.len() && self.b[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b'#' if self.b.get(self.i + 1) == Some(&b'_') => {
                    self.i += 2;
                    self.skip_ws(depth)?;
                    if self.i >= self.b.len() {
                        return Err(self.err(self.line, "expected a form after #_, found the end of the file"));
                    }
                    self.form(depth + 1)?;
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn form(&mut self, depth: u32) -> Result<Form, ProgramError> {
        if depth > MAX_DEPTH {
            return Err(self.err(self.line, format!("forms nested deeper than {MAX_DEPTH}")));
        }
        let line = self.line;
        let c = self.b[self.i];
        let kind = match c {
            b'[' => {
                self.i += 1;
                FormKind::Vector(self.seq(b']', depth, line)?)
            }
            b'(' => {
                self.i += 1;
                FormKind::List(self.seq(b')', depth, line)?)
            }
            b'{' => {
                self.i += 1;
                let items = self.seq(b'}', depth, line)?;
                if items.len() % 2 != 0 {
                    return Err(self.err(line, "a map needs an even number of forms (key value pairs)"));
                }
                let mut pairs = Vec::with_capacity(items.len() / 2);
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    pairs.push((k, v));
                }
                FormKind::Map(pairs)
            }
            b'#' if self.b.get(self.i + 1) == Some(&b'{') => {
                self.i += 2;
                FormKind::Set(self.seq(b'}', depth, line)?)
            }
            b'"' => FormKind::Str(self.string(line)?),
            b')' | b']' | b'}' => {
                return Err(self.err(line, format!("unexpected closing {:?}", c as char)));
            }
            _ => self.atom(line)?,
        };
        Ok(Form { kind, line })
    }

    fn seq(&mut self, close: u8, depth: u32, open_line: usize) -> Result<Vec<Form>, ProgramError> {
        let mut out = Vec::new();
        loop {
            self.skip_ws(depth + 1)?;
            match self.b.get(self.i) {
                None => {
                    return Err(self.err(
                        self.line,
                        format!(
                            "expected {:?} to close the form opened on line {open_line}, found the end of the file",
                            close as char
                        ),
                    ))
                }
                Some(&c) if c == close => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(_) => out.push(self.form(depth + 1)?),
            }
        }
    }

    fn string(&mut self, line: usize) -> Result<String, ProgramError> {
        self.i += 1;
        let mut bytes = Vec::new();
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    return String::from_utf8(bytes).map_err(|_| self.err(line, "invalid UTF-8 in a string"));
                }
                b'\\' => {
                    let e = self.b.get(self.i + 1).copied();
                    bytes.push(match e {
                        Some(b'n') => b'\n',
                        Some(b't') => b'\t',
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        _ => return Err(self.err(self.line, "unknown escape in a string")),
                    });
                    self.i += 2;
                }
                c => {
                    if c == b'\n' {
                        self.line += 1;
                    }
                    bytes.push(c);
                    self.i += 1;
                }
            }
        }
        Err(self.err(line, "a string is not closed (expected '\"')"))
    }

    fn atom(&mut self, line: usize) -> Result<FormKind, ProgramError> {
        let start = self.i;
        while self.i < self.b.len() && !is_delim(self.b[self.i]) {
            self.i += 1;
        }
        let tok = std::str::from_utf8(&self.b[start..self.i]).map_err(|_| self.err(line, "invalid UTF-8"))?;
        if tok.is_empty() {
            return Err(self.err(line, format!("unexpected character {:?}", self.b[start] as char)));
        }
        if let Some(k) = tok.strip_prefix(':') {
            if k.is_empty() {
                return Err(self.err(line, "expected a keyword name after ':'"));
            }
            return Ok(FormKind::Keyword(k.to_string()));
        }
        let first = tok.as_bytes()[0];
        let signed_digit = matches!(first, b'-' | b'+') && tok.len() > 1 && tok.as_bytes()[1].is_ascii_digit();
        if first.is_ascii_digit() || signed_digit {
            return tok
                .trim_end_matches('N')
                .parse::<i64>()
                .map(FormKind::Int)
                .map_err(|_| self.err(line, format!("expected a 64-bit integer, found {tok}")));
        }
        if tok.starts_with('#') || tok.starts_with('\\') {
            return Err(self.err(line, format!("unsupported EDN form {tok} (programs use integers, keywords, symbols, vectors, lists, maps and sets)")));
        }
        Ok(FormKind::Symbol(tok.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_forms_with_lines() {
        let f = read_all("; c\n{:a [1 -2 x]\n :b #{3} #_ (ignored) :c (+ a 1)}").unwrap();
        assert_eq!(f.len(), 1);
        let FormKind::Map(pairs) = &f[0].kind else { panic!("not a map") };
        assert_eq!(pairs.len(), 3);
        assert_eq!(f[0].line, 2);
        assert_eq!(pairs[1].0.line, 3);
        assert_eq!(
            pairs[0].1.kind,
            FormKind::Vector(vec![
                Form { kind: FormKind::Int(1), line: 2 },
                Form { kind: FormKind::Int(-2), line: 2 },
                Form { kind: FormKind::Symbol("x".into()), line: 2 },
            ])
        );
    }

    #[test]
    fn unclosed_names_the_opening_line() {
        let e = read_all("\n[1 2\n").unwrap_err();
        assert!(e.to_string().contains("opened on line 2"), "{e}");
        assert!(read_all("{:a}").is_err());
        assert!(read_all(")").is_err());
    }
}
