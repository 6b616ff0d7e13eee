//! Reader for PolySI's text histories (its `TEXT` input, also read by Plume
//! and C4): one operation per line, `r(key,value,session,txn)` or
//! `w(key,value,session,txn)`, every field a non-negative decimal integer,
//! except that the transaction id may be `-1`, which C4 writes for an
//! operation of an aborted transaction.
//!
//! Mapping onto the rw-register model, as PolySI's loader does: operations
//! are grouped into transactions by `(session, txn)`, transactions ordered by
//! their first appearance and operations within one by line order; every
//! other transaction committed, so each becomes one `:ok` completion op `:f :txn`
//! with `:process session`, whose `line` is the line of its first operation.
//! Every key starts at 0, so a read of 0 becomes `[:r k nil]` (Elle's "read
//! the initial state"). Keys and values are unsigned 64-bit numbers (printed
//! as such, see [`History::unsigned_values`]); sessions and transaction ids
//! above `i64::MAX` are errors.
//!
//! Aborted transactions (C4's `-1` id): a `-1` line carries no transaction
//! id of its own, so transactions are delimited by session order: a run of
//! consecutive `-1` lines of one session (lines of other sessions may be
//! interleaved) is one aborted transaction, and the next line of that session
//! with a real transaction id ends it. Each becomes a `:fail` completion op
//! with the micro-ops as written (a read of 0 again `[:r k nil]`), so Elle's
//! aborted-read (G1a) check sees its writes and no dependency edge uses them.
//! Two aborted transactions of one session with no committed operation
//! between them are indistinguishable in this format and are read as one;
//! this cannot change a verdict, since an aborted transaction's writes are
//! never legitimately visible and its reads are not checked.
//!
//! Blank lines (and spaces or tabs around an operation, and `\r` line ends)
//! are allowed; anything else is reported as `file:line:column: expected X,
//! found Y`.

use super::edn::int_key;
use super::error::{perr, IngestError, PErr, PResult};
use crate::history::{Atom, History, HistoryBuilder, Mop, MopFn, MopValue, OpType, RawOp};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// One transaction while the input is read.
struct Txn {
    session: i64,
    /// Its id in the file (`-1`: aborted).
    id: i64,
    line: u32,
    mops: u32,
    /// Written with C4's transaction id `-1`.
    aborted: bool,
}

/// Parses a PolySI text history.
pub(crate) fn parse(source: &str, input: &[u8]) -> Result<History, IngestError> {
    parse_inner(source, input).map_err(|e| e.into_ingest(source, input))
}

/// An error at `s[i]`, naming blanks (which EDN-style descriptions would
/// print invisibly).
#[cold]
fn err_at(s: &[u8], i: usize, what: impl Into<std::borrow::Cow<'static, str>>) -> Box<PErr> {
    let mut e = perr(i, what);
    e.found = match s.get(i) {
        Some(b' ') => Some("a space".into()),
        Some(b'\t') => Some("a tab".into()),
        _ => None,
    };
    e
}

/// Reads a non-negative decimal integer at `*i` that fits an `i64`.
fn number(s: &[u8], i: &mut usize) -> PResult<i64> {
    let start = *i;
    let v = unsigned(s, i)?;
    i64::try_from(v).map_err(|_| perr(start, format!("an integer at most {}", i64::MAX)))
}

/// Reads a non-negative decimal integer at `*i` that fits a `u64` (keys and
/// values, which PolySI reads as unsigned 64-bit numbers).
fn unsigned(s: &[u8], i: &mut usize) -> PResult<u64> {
    let start = *i;
    let mut v: u64 = 0;
    while let Some(&d @ b'0'..=b'9') = s.get(*i) {
        v = match v.checked_mul(10).and_then(|v| v.checked_add(u64::from(d - b'0'))) {
            Some(v) => v,
            None => return Err(perr(start, format!("an integer at most {}", u64::MAX))),
        };
        *i += 1;
    }
    if *i == start {
        return Err(err_at(s, start, "a non-negative decimal integer"));
    }
    Ok(v)
}

/// Expects byte `c` at `*i`.
fn expect(s: &[u8], i: &mut usize, c: u8, what: &'static str) -> PResult<()> {
    if s.get(*i) == Some(&c) {
        *i += 1;
        Ok(())
    } else {
        Err(err_at(s, *i, what))
    }
}

/// One operation line, tokenized.
#[derive(Clone, Copy)]
struct Line {
    key: u64,
    value: u64,
    session: i64,
    /// `-1`: C4's aborted transaction.
    txn: i64,
    /// Line number within its piece (from 1).
    line: u32,
    f: MopFn,
}

/// Bytes of input one task tokenizes: pieces are cut after a newline.
const PIECE: usize = 1 << 20;

/// Tokenizes the lines of `input[from..to]` (whole lines) into `out`;
/// returns how many lines the piece holds. Positions in errors are
/// positions in `input`.
fn tokenize(input: &[u8], from: usize, to: usize, out: &mut Vec<Line>) -> PResult<u32> {
    out.clear();
    let mut pos = from;
    let mut line_no = 0u32;
    while pos < to {
        let end = memchr::memchr(b'\n', &input[pos..to]).map_or(to, |n| pos + n);
        line_no = line_no.saturating_add(1);
        if let Some(l) = op_line(input, pos, end)? {
            out.push(Line { line: line_no, ..l });
        }
        pos = end + 1;
    }
    Ok(line_no)
}

/// The operation on the line `input[pos..end]`, none for a blank line.
#[inline]
fn op_line(input: &[u8], pos: usize, end: usize) -> PResult<Option<Line>> {
    let mut i = pos;
    while matches!(input.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let mut stop = end;
    while stop > i && matches!(input[stop - 1], b' ' | b'\t' | b'\r') {
        stop -= 1;
    }
    if i >= stop {
        return Ok(None);
    }
    let s = &input[..stop];
    let f = match s[i] {
        b'r' => MopFn::Read,
        b'w' => MopFn::Write,
        _ => return Err(perr(i, "an operation `r(key,value,session,txn)` or `w(...)`")),
    };
    i += 1;
    expect(s, &mut i, b'(', "`(`")?;
    let key = unsigned(s, &mut i)?;
    expect(s, &mut i, b',', "`,` after the key")?;
    let value = unsigned(s, &mut i)?;
    expect(s, &mut i, b',', "`,` after the value")?;
    let session = number(s, &mut i)?;
    expect(s, &mut i, b',', "`,` after the session")?;
    // C4 writes -1 as the id of an aborted transaction's operations.
    let txn = if s.get(i..i + 3) == Some(b"-1)") {
        i += 2;
        -1
    } else if s.get(i) == Some(&b'-') {
        return Err(perr(i, "a non-negative transaction id, or -1 (an aborted transaction)"));
    } else {
        number(s, &mut i)?
    };
    expect(s, &mut i, b')', "`)`")?;
    while matches!(s.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    if i < stop {
        return Err(perr(i, "end of line after the operation"));
    }
    Ok(Some(Line { key, value, session, txn, line: 0, f }))
}

/// `n + 1` offsets cutting `input` into pieces of about [`PIECE`] bytes,
/// each ending after a newline (the last at the end).
fn pieces(input: &[u8]) -> Vec<usize> {
    let mut cuts = vec![0];
    let mut at = 0;
    while input.len() - at > PIECE {
        match memchr::memchr(b'\n', &input[at + PIECE..]) {
            Some(n) => at += PIECE + n + 1,
            None => break,
        }
        cuts.push(at);
    }
    if *cuts.last().unwrap_or(&0) < input.len() {
        cuts.push(input.len());
    }
    cuts
}

/// Transactions and their micro-ops as lines are read, in line order.
struct Grouping {
    /// `(session, id)` to transaction, built only once some session's ids
    /// stop increasing (see [`Grouping::committed`]).
    txn_ids: Option<FxHashMap<(i64, i64), u32>>,
    /// Per session, the aborted transaction its latest `-1` lines belong to.
    open_aborted: FxHashMap<i64, u32>,
    /// Per small session number: its latest transaction (id and index),
    /// and the largest id it has used.
    last: Vec<(i64, u32, i64)>,
    txns: Vec<Txn>,
    /// (transaction, micro-op) in line order; grouped by a counting sort.
    recs: Vec<(u32, Mop)>,
    key_cache: Vec<u32>,
}

/// Sessions below this are numbered in [`Grouping::last`].
const SMALL_SESSIONS: i64 = 1 << 16;

impl Grouping {
    /// The committed transaction `(session, id)`, numbered `next` if new.
    /// Most lines continue their session's latest transaction, and a
    /// session's ids usually increase, so an id above every id the session
    /// used is new: neither needs a lookup. The map of every transaction is
    /// built the first time an id does not increase.
    fn committed(&mut self, session: i64, id: i64, next: u32) -> u32 {
        let small = (0..SMALL_SESSIONS).contains(&session).then_some(session as usize);
        if let (Some(s), None) = (small, &self.txn_ids) {
            if self.last.len() <= s {
                self.last.resize(s + 1, (-1, u32::MAX, -1));
            }
            let (txn, t, max) = self.last[s];
            if txn == id && t != u32::MAX {
                return t;
            }
            if id > max {
                self.last[s] = (id, next, id);
                return next;
            }
        }
        let txns = &self.txns;
        let map = self.txn_ids.get_or_insert_with(|| {
            txns.iter().enumerate().filter(|(_, t)| !t.aborted).map(|(i, t)| ((t.session, t.id), i as u32)).collect()
        });
        *map.entry((session, id)).or_insert(next)
    }

    fn add(&mut self, b: &mut HistoryBuilder, l: &Line, line_no: u32) {
        let (session, aborted) = (l.session, l.txn == -1);
        let next = self.txns.len() as u32;
        let t = if aborted {
            *self.open_aborted.entry(session).or_insert(next)
        } else {
            if !self.open_aborted.is_empty() {
                self.open_aborted.remove(&session);
            }
            self.committed(session, l.txn, next)
        };
        if t == next {
            self.txns.push(Txn { session, id: l.txn, line: line_no, mops: 0, aborted });
        }
        self.txns[t as usize].mops += 1;
        // The raw value for now: its identity is taken when the mop is
        // pushed (taking it may renumber the values pushed before).
        let value = if l.f == MopFn::Read && l.value == 0 { MopValue::Nil } else { MopValue::Int(l.value as i64) };
        let key = match i64::try_from(l.key) {
            Ok(k) => int_key(&mut self.key_cache, b, k),
            Err(_) => b.key(Atom::from_u64(l.key)),
        };
        self.recs.push((t, Mop { f: l.f, key, value }));
    }
}

/// Reads the lines: pieces are tokenized in parallel, a batch at a time,
/// while the batch before is grouped into transactions (which is
/// sequential: a transaction is numbered at its first line).
fn parse_inner(source: &str, input: &[u8]) -> PResult<History> {
    let mut b = HistoryBuilder::new(source);
    b.set_registers_only();
    let mut g = Grouping {
        txn_ids: None,
        open_aborted: FxHashMap::default(),
        last: Vec::new(),
        txns: Vec::new(),
        recs: Vec::with_capacity(input.len() / 12),
        key_cache: Vec::new(),
    };
    let cuts = pieces(input);
    let spans: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    let batch = rayon::current_num_threads().max(1);
    let tokenize_batch = |spans: &[(usize, usize)], bufs: &mut Vec<(Vec<Line>, u32)>| -> PResult<()> {
        bufs.resize_with(spans.len(), || (Vec::new(), 0));
        let results: Vec<PResult<()>> = bufs
            .par_iter_mut()
            .zip(spans.par_iter())
            .map(|((out, lines), &(a, z))| {
                *lines = tokenize(input, a, z, out)?;
                Ok(())
            })
            .collect();
        // The first error in input order, as a sequential read reports.
        results.into_iter().collect()
    };
    let mut line_base = 0u32;
    let mut cur: Vec<(Vec<Line>, u32)> = Vec::new();
    let mut next: Vec<(Vec<Line>, u32)> = Vec::new();
    let mut batches = spans.chunks(batch);
    if let Some(first) = batches.next() {
        tokenize_batch(first, &mut cur)?;
    }
    loop {
        let upcoming = batches.next();
        let b = &mut b;
        let g = &mut g;
        let cur_ref = &cur;
        let base = &mut line_base;
        let (_, tokenized) = rayon::join(
            move || {
                for (lines, count) in cur_ref {
                    for l in lines {
                        g.add(b, l, base.saturating_add(l.line));
                    }
                    *base = base.saturating_add(*count);
                }
            },
            || upcoming.map(|spans| tokenize_batch(spans, &mut next)),
        );
        match tokenized {
            Some(r) => {
                r?;
                std::mem::swap(&mut cur, &mut next);
            }
            None => break,
        }
    }
    let Grouping { txns, recs, .. } = g;
    // Counting sort by transaction (stable: line order within one).
    let mut starts: Vec<u32> = Vec::with_capacity(txns.len());
    let mut acc = 0u32;
    for t in &txns {
        starts.push(acc);
        acc += t.mops;
    }
    let mut grouped = vec![Mop { f: MopFn::Read, key: crate::history::KeyId(0), value: MopValue::Nil }; recs.len()];
    let mut next = starts.clone();
    for (t, m) in recs {
        grouped[next[t as usize] as usize] = m;
        next[t as usize] += 1;
    }
    b.reserve(txns.len(), grouped.len());
    let f = Atom::Keyword("txn".into());
    for (t, &start) in txns.iter().zip(&starts) {
        let mop_start = b.mop_count();
        for &m in &grouped[start as usize..(start + t.mops) as usize] {
            let value = match m.value {
                MopValue::Int(v) => MopValue::Int(b.u64_value(v as u64)),
                v => v,
            };
            b.push_mop(Mop { value, ..m });
        }
        let raw = RawOp {
            index: None,
            time: None,
            op_type: if t.aborted { OpType::Fail } else { OpType::Ok },
            process: Some(t.session),
            f: f.clone(),
            extras: Vec::new(),
            line: t.line,
        };
        b.push_op(raw, mop_start);
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(text: &str) -> Vec<(i64, u32, String)> {
        let h = match parse("h.txt", text.as_bytes()) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        assert!(h.registers_only);
        h.ops
            .iter()
            .map(|op| {
                assert_eq!(op.op_type, OpType::Ok);
                (op.process, op.line, crate::gen::testkit::mops_text(&h, op))
            })
            .collect()
    }

    fn err(text: &str) -> String {
        match parse("h.txt", text.as_bytes()) {
            Ok(_) => panic!("parsed"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn groups_interleaved_lines_by_session_and_txn() {
        let text = "w(1,5,0,0)\n\nr(2,0,1,0)\r\n  w(2,7,0,0)\nr(1,5,1,0)\nw(1,6,0,1)\nr(3,9,1,0)\n";
        assert_eq!(
            ops(text),
            vec![
                (0, 1, "w 1 5, w 2 7".to_string()),
                (1, 3, "r 2 nil, r 1 5, r 3 9".to_string()),
                (0, 6, "w 1 6".to_string()),
            ]
        );
        assert!(ops("").is_empty());
        assert!(ops("\n \n").is_empty());
    }

    #[test]
    fn keys_and_values_above_i64_max_are_unsigned() {
        assert_eq!(
            ops("w(18446744073709551615,18446744073709551615,0,0)\nr(18446744073709551615,9223372036854775808,0,0)\n"),
            vec![(
                0,
                1,
                "w 18446744073709551615 18446744073709551615, r 18446744073709551615 9223372036854775808".into()
            )]
        );
    }

    #[test]
    fn malformed_lines_give_line_and_column() {
        assert_eq!(
            err("w(1,5,0,0)\nx(1,2,3,4)\n"),
            "h.txt:2:1: expected an operation `r(key,value,session,txn)` or `w(...)`, found x"
        );
        assert_eq!(err("r(1,-5,0,0)"), "h.txt:1:5: expected a non-negative decimal integer, found -5");
        assert_eq!(err("r(1,5,0)"), "h.txt:1:8: expected `,` after the session, found )");
        assert_eq!(err("r(1,5,0,0) x"), "h.txt:1:12: expected end of line after the operation, found x");
        assert_eq!(err("r(1 ,5,0,0)"), "h.txt:1:4: expected `,` after the key, found a space");
        assert_eq!(
            err("w(18446744073709551616,1,0,0)"),
            "h.txt:1:3: expected an integer at most 18446744073709551615, found 18446744073709551616"
        );
        assert_eq!(
            err("w(1,1,9223372036854775808,0)"),
            "h.txt:1:7: expected an integer at most 9223372036854775807, found 9223372036854775808"
        );
        assert_eq!(err("w(1,2,3,4"), "h.txt:1:10: expected `)`, found end of input");
        assert_eq!(
            err("w(1,2,3,-2)"),
            "h.txt:1:9: expected a non-negative transaction id, or -1 (an aborted transaction), found -2"
        );
        assert_eq!(err("w(1,2,-1,0)"), "h.txt:1:7: expected a non-negative decimal integer, found -1");
    }

    /// C4's `-1` transaction id: a run of a session's `-1` lines is one
    /// aborted (`:fail`) transaction; the session's next real id ends it.
    #[test]
    fn minus_one_lines_are_aborted_transactions() {
        let text = "w(1,1,0,-1)\nw(9,9,1,0)\nw(2,1,0,-1)\nr(1,1,0,1)\nw(1,2,0,-1)\nr(3,0,0,-1)\n";
        let h = match parse("h.txt", text.as_bytes()) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        let got: Vec<_> =
            h.ops.iter().map(|op| (op.process, op.op_type, op.line, crate::gen::testkit::mops_text(&h, op))).collect();
        assert_eq!(
            got,
            vec![
                (0, OpType::Fail, 1, "w 1 1, w 2 1".to_string()),
                (1, OpType::Ok, 2, "w 9 9".to_string()),
                (0, OpType::Ok, 4, "r 1 1".to_string()),
                (0, OpType::Fail, 5, "w 1 2, r 3 nil".to_string()),
            ]
        );
    }
}
