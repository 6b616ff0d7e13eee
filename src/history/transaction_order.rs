//! A database's own commit order of transactions: Elle's
//! `:transaction-order` (its pull request #31), given with
//! `--transaction-order FILE` or recorded on each completion as the op
//! field `:transaction-order`.
//!
//! **Semantics.** The order maps a completion's `:index` to an integer
//! order number: a smaller number committed earlier. It is a white-box
//! fact from the database, which black-box inference cannot see: for
//! rw-register histories, each key's versions are installed in the order of
//! their writers' numbers. Only a transaction's *final* write of a key (its
//! external write) is a version. As in Elle:
//!
//! * `:ok` and `:info` completions take part (an `:info` one the database
//!   ordered committed); a `:fail` completion's number is ignored (its
//!   writes never took effect);
//! * the order only ever adds write-write version-order facts; reads and
//!   the process or realtime order are unaffected.
//!
//! Where isolde differs from Elle: an op the order does not name has no
//! place in it (Elle sorts such ops before every numbered one, inventing
//! an order), and two ops with the same number are unordered (Elle orders
//! them by history position). Both choices only ever infer less.
//!
//! **Files.** An EDN map `{1 0, 3 1}` or a JSON object `{"1": 0, "3": 1}`
//! (adya's form); keys are completion indices (JSON: as strings or
//! numbers), values integers. A malformed file, a repeated index, an index
//! no client operation has, or an invocation's index is an error naming the
//! file, line and column. Given both a file and op fields, they must agree.

use super::{Atom, History, OpId, OpType, Value};
use rustc_hash::FxHashMap;

/// The op field that carries an op's order number.
pub const FIELD: &str = "transaction-order";

/// One `index -> number` entry, with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The completion's `:index`.
    pub index: i64,
    /// Its order number.
    pub number: i64,
    /// Where it was written, e.g. `order.json:3:2` or `h.edn line 7`.
    pub place: String,
}

/// The order of a history's completions, resolved to its operations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransactionOrder {
    /// `(number, op)` of every ordered `:ok` / `:info` op, sorted.
    ranked: Vec<(i64, OpId)>,
    /// Where the order came from, for reports.
    pub source: String,
    /// `:fail` completions the order numbered, ignored.
    pub ignored_failed: usize,
}

impl TransactionOrder {
    /// The ordered ops, `(number, op)`, by number (ties by history order).
    pub fn ranked(&self) -> &[(i64, OpId)] {
        &self.ranked
    }

    /// How many ops the order places.
    pub fn len(&self) -> usize {
        self.ranked.len()
    }

    /// Whether it places no op.
    pub fn is_empty(&self) -> bool {
        self.ranked.is_empty()
    }

    /// Each op's number (`None` for ops it does not place), by op id.
    pub fn numbers(&self, ops: usize) -> Vec<Option<i64>> {
        let mut out = vec![None; ops];
        for &(n, op) in &self.ranked {
            if let Some(slot) = out.get_mut(op as usize) {
                *slot = Some(n);
            }
        }
        out
    }
}

/// An order file as read: its name and entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderFile {
    /// The path as given.
    pub name: String,
    /// Its entries, in file order.
    pub entries: Vec<Entry>,
}

impl OrderFile {
    /// Reads an order file (EDN or JSON, see the module docs).
    pub fn read(path: &std::path::Path) -> Result<OrderFile, String> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        Ok(OrderFile { entries: parse(&name, &text)?, name })
    }
}

/// Parses an order map: `{` then pairs of integers (JSON: a key as a string,
/// then `:`), separated by whitespace or commas, then `}`; EDN `;`
/// comments are allowed.
pub fn parse(name: &str, text: &str) -> Result<Vec<Entry>, String> {
    let mut p = Parser { name, text, pos: 0 };
    p.skip_space();
    p.expect('{', "`{` opening the map from completion :index to order number")?;
    let mut entries: Vec<Entry> = Vec::new();
    let mut seen: FxHashMap<i64, String> = FxHashMap::default();
    loop {
        p.skip_space();
        if p.peek() == Some('}') {
            p.pos += 1;
            break;
        }
        let place = p.place();
        let index = p.integer(true, "a completion :index (an integer) or `}`")?;
        p.skip_space();
        if p.peek() == Some(':') {
            p.pos += 1;
            p.skip_space();
        }
        let number = p.integer(false, "an order number (an integer)")?;
        if let Some(first) = seen.insert(index, place.clone()) {
            return Err(format!("{place}: :index {index} is given twice (first at {first})"));
        }
        entries.push(Entry { index, number, place });
    }
    p.skip_space();
    if p.pos < p.text.len() {
        return Err(format!("{}: expected end of input after the map, found {}", p.place(), p.excerpt()));
    }
    Ok(entries)
}

/// A cursor over the text of an order file.
struct Parser<'a> {
    name: &'a str,
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    /// `name:line:column` of the cursor.
    fn place(&self) -> String {
        let before = &self.text[..self.pos];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("{}:{line}:{column}", self.name)
    }

    fn excerpt(&self) -> String {
        let rest: String = self.text[self.pos..].chars().take_while(|&c| c != '\n').take(12).collect();
        if rest.is_empty() {
            "end of input".into()
        } else {
            format!("`{rest}`")
        }
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' {
                self.pos += c.len_utf8();
            } else if c == ';' {
                self.pos = self.text[self.pos..].find('\n').map_or(self.text.len(), |i| self.pos + i);
            } else {
                break;
            }
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("{}: expected {what}, found {}", self.place(), self.excerpt()))
        }
    }

    /// An integer, or (`quoted_ok`, a JSON key) one in double quotes.
    fn integer(&mut self, quoted_ok: bool, what: &str) -> Result<i64, String> {
        let start = self.pos;
        let quoted = quoted_ok && self.peek() == Some('"');
        if quoted {
            self.pos += 1;
        }
        let digits_start = self.pos;
        if matches!(self.peek(), Some('-' | '+')) {
            self.pos += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = &self.text[digits_start..self.pos];
        let value = digits.parse::<i64>().ok();
        let closed = !quoted || self.peek() == Some('"');
        let ends = |p: &Self| {
            let at = p.pos + usize::from(quoted);
            p.text[at..].chars().next().is_none_or(|c| c.is_whitespace() || matches!(c, ',' | '}' | ':' | ';'))
        };
        match value {
            Some(v) if closed && ends(self) => {
                self.pos += usize::from(quoted);
                Ok(v)
            }
            _ => {
                self.pos = start;
                Err(format!("{}: expected {what}, found {}", self.place(), self.excerpt()))
            }
        }
    }
}

/// The entries the history's ops carry in their `:transaction-order` field
/// (completions only; an invocation's field is ignored).
pub fn from_fields(h: &History) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for op in h.ops.iter().filter(|op| !op.is_invoke()) {
        for (k, v) in h.extras_of(op) {
            if !matches!(k, Value::Atom(Atom::Keyword(name)) if &**name == FIELD) {
                continue;
            }
            let place = format!("{} line {}", h.source, op.line);
            match v {
                Value::Atom(Atom::Int(n)) => out.push(Entry { index: op.index, number: *n, place }),
                Value::Atom(Atom::Nil) => {}
                other => {
                    return Err(format!(
                        "{place}: the op field :{FIELD} must be an integer (the op's place in the commit order), found {other}"
                    ))
                }
            }
        }
    }
    Ok(out)
}

/// Resolves `entries` against the history: every index must be a client
/// completion's. `source` names where they came from.
pub fn resolve(h: &History, entries: &[Entry], source: &str) -> Result<TransactionOrder, String> {
    let by_index: FxHashMap<i64, OpId> = h.ops.iter().enumerate().map(|(i, op)| (op.index, i as OpId)).collect();
    let mut order = TransactionOrder { source: source.to_string(), ..TransactionOrder::default() };
    let mut number_of: FxHashMap<OpId, (i64, &str)> = FxHashMap::default();
    for e in entries {
        let Some(&op) = by_index.get(&e.index) else {
            return Err(format!("{}: no client operation of {} has :index {}", e.place, h.source, e.index));
        };
        match h.op(op).op_type {
            OpType::Invoke => {
                return Err(format!(
                    "{}: :index {} is an invocation in {}; the order maps completions (:ok or :info) to order numbers",
                    e.place, e.index, h.source
                ))
            }
            OpType::Fail => order.ignored_failed += 1,
            OpType::Ok | OpType::Info => {
                if let Some((n, first)) = number_of.insert(op, (e.number, &e.place)) {
                    if n != e.number {
                        return Err(format!(
                            "{}: :index {} is given order number {}, but {first} gives it {n}",
                            e.place, e.index, e.number
                        ));
                    }
                    continue;
                }
                order.ranked.push((e.number, op));
            }
        }
    }
    order.ranked.sort_unstable();
    Ok(order)
}

/// The order of `h`: its ops' fields merged with `file_entries` (from
/// `file`), or `None` when neither gives any.
pub fn load(h: &History, file: Option<&OrderFile>) -> Result<Option<TransactionOrder>, String> {
    let mut entries = from_fields(h)?;
    let fields = !entries.is_empty();
    if let Some(f) = file {
        entries.extend_from_slice(&f.entries);
    }
    if entries.is_empty() {
        return Ok(None);
    }
    let source = match (file, fields) {
        (Some(f), true) => format!("{} and the ops' :{FIELD} fields", f.name),
        (Some(f), false) => f.name.clone(),
        (None, _) => format!("the ops' :{FIELD} fields"),
    };
    resolve(h, &entries, &source).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(i64, i64)> {
        parse("o", text).expect("parses").iter().map(|e| (e.index, e.number)).collect()
    }

    #[test]
    fn edn_and_json_forms() {
        assert_eq!(pairs("{0 2, 1 1}"), vec![(0, 2), (1, 1)]);
        assert_eq!(pairs("{\"1\": 0, \"3\": 1}"), vec![(1, 0), (3, 1)]);
        assert_eq!(pairs("{1: 0}"), vec![(1, 0)]);
        assert_eq!(pairs(" ; commit order\n{5 -1 6 +2}\n"), vec![(5, -1), (6, 2)]);
        assert_eq!(pairs("{}"), vec![]);
    }

    #[test]
    fn malformed_files_name_the_place() {
        let err = |t: &str| parse("o.edn", t).err().unwrap_or_default();
        assert_eq!(
            err("[1 2]"),
            "o.edn:1:1: expected `{` opening the map from completion :index to order number, found `[1 2]`"
        );
        assert_eq!(err("{1 0,\n 2 x}"), "o.edn:2:4: expected an order number (an integer), found `x}`");
        assert_eq!(err("{1 0"), "o.edn:1:5: expected a completion :index (an integer) or `}`, found end of input");
        assert_eq!(err("{1 0 1 2}"), "o.edn:1:6: :index 1 is given twice (first at o.edn:1:2)");
        assert_eq!(err("{1 0.5}"), "o.edn:1:4: expected an order number (an integer), found `0.5}`");
        assert_eq!(err("{1 0} x"), "o.edn:1:7: expected end of input after the map, found `x`");
        assert_eq!(err("{\"1 0}"), "o.edn:1:2: expected a completion :index (an integer) or `}`, found `\"1 0}`");
    }
}
