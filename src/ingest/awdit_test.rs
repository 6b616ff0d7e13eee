//! Reader for AWDIT's `test` history format: sessions separated by lines of
//! `=` characters, a session's transactions by lines of `-` characters, one
//! event per line, `r K V` or `w K V` (non-negative decimal key and value,
//! separated by spaces or tabs). Every transaction committed; there are no
//! aborted transactions and no implicit initial state.
//!
//! Mapping onto the rw-register model: each transaction becomes one `:ok`
//! completion op `:f :txn` whose `:process` is its session's position in
//! the file, whose `line` is the line of its first event; empty
//! transactions are skipped (as AWDIT does). AWDIT's files give the initial
//! state, when they give one, as a first session of one transaction writing
//! `0` to keys; such a session is read as the initial state itself: it
//! becomes no op, a read of `0` from one of its keys becomes `[:r k nil]`,
//! and the later sessions are numbered from 0. This is done only when no
//! other transaction also writes `0` to one of those keys (the read would
//! be ambiguous); otherwise, and for a file without such a session, every
//! value is read as written, and a read of a value nobody wrote is a read
//! out of thin air, exactly as AWDIT sees it.
//!
//! Anything else is reported as `file:line:column: expected X, found Y`.

use super::error::{perr, IngestError, PResult};
use crate::history::{Atom, History, HistoryBuilder, KeyId, Mop, MopFn, MopValue, OpType, RawOp};
use rustc_hash::FxHashSet;

/// One event as read: (function, key, value).
type Ev = (MopFn, u64, u64);

/// Parses an AWDIT `test` history.
pub(crate) fn parse(source: &str, input: &[u8]) -> Result<History, IngestError> {
    parse_inner(source, input).map_err(|e| e.into_ingest(source, input))
}

/// Reads a non-negative decimal integer at `*i`.
fn number(s: &[u8], i: &mut usize, what: &'static str) -> PResult<u64> {
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
        return Err(err_at(s, start, what));
    }
    Ok(v)
}

/// An error at `s[i]`, naming a blank (which would print invisibly).
#[cold]
fn err_at(s: &[u8], i: usize, what: &'static str) -> Box<super::error::PErr> {
    let mut e = perr(i, what);
    e.found = match s.get(i) {
        Some(b' ') => Some("a space".into()),
        Some(b'\t') => Some("a tab".into()),
        Some(_) => None,
        None => Some("end of line".into()),
    };
    e
}

fn blanks(s: &[u8], i: &mut usize) -> usize {
    let start = *i;
    while matches!(s.get(*i), Some(b' ' | b'\t')) {
        *i += 1;
    }
    *i - start
}

fn parse_inner(source: &str, input: &[u8]) -> PResult<History> {
    // sessions -> transactions -> (line, events)
    let mut sessions: Vec<Vec<(u32, Vec<Ev>)>> = vec![vec![(0, Vec::new())]];
    let mut pos = 0;
    let mut line_no = 0u32;
    while pos < input.len() {
        let end = input[pos..].iter().position(|&c| c == b'\n').map_or(input.len(), |n| pos + n);
        line_no = line_no.saturating_add(1);
        let mut stop = end;
        while stop > pos && matches!(input[stop - 1], b' ' | b'\t' | b'\r') {
            stop -= 1;
        }
        let s = &input[..stop];
        let mut i = pos;
        blanks(s, &mut i);
        let line = &s[i..];
        if line.is_empty() {
            // A blank line.
        } else if line.iter().all(|&c| c == b'=') {
            sessions.push(vec![(0, Vec::new())]);
        } else if line.iter().all(|&c| c == b'-') {
            if let Some(sess) = sessions.last_mut() {
                sess.push((0, Vec::new()));
            }
        } else {
            let f = match s[i] {
                b'r' => MopFn::Read,
                b'w' => MopFn::Write,
                _ => return Err(perr(i, "an event `r KEY VALUE` or `w KEY VALUE`, or a line of `=` or `-`")),
            };
            i += 1;
            if blanks(s, &mut i) == 0 {
                return Err(err_at(s, i, "a space after the event's letter"));
            }
            let key = number(s, &mut i, "a non-negative decimal key")?;
            if blanks(s, &mut i) == 0 {
                return Err(err_at(s, i, "a space after the key"));
            }
            let value = number(s, &mut i, "a non-negative decimal value")?;
            if i < stop {
                return Err(err_at(s, i, "end of line after the value"));
            }
            if let Some(txn) = sessions.last_mut().and_then(|s| s.last_mut()) {
                if txn.1.is_empty() {
                    txn.0 = line_no;
                }
                txn.1.push((f, key, value));
            }
        }
        pos = end + 1;
    }
    // The initial state: a first session of one transaction of writes of 0
    // to distinct keys, which nobody else writes 0 to.
    let init: Option<FxHashSet<u64>> = match &sessions[..] {
        [first, rest @ ..] if first.len() == 1 && !rest.is_empty() => {
            let evs = &first[0].1;
            let keys: FxHashSet<u64> = evs.iter().map(|&(_, k, _)| k).collect();
            let all_init = evs.iter().all(|&(f, _, v)| f == MopFn::Write && v == 0) && keys.len() == evs.len();
            let rewritten = rest
                .iter()
                .flatten()
                .flat_map(|t| &t.1)
                .any(|&(f, k, v)| f == MopFn::Write && v == 0 && keys.contains(&k));
            (all_init && !rewritten).then_some(keys)
        }
        _ => None,
    };
    let skip = usize::from(init.is_some());
    let mut b = HistoryBuilder::new(source);
    b.set_registers_only();
    let mut key_cache = Vec::new();
    let f = Atom::Keyword("txn".into());
    for (s, txns) in sessions.iter().enumerate().skip(skip) {
        for (line, evs) in txns.iter().filter(|t| !t.1.is_empty()) {
            let mop_start = b.mop_count();
            for &(mf, k, v) in evs {
                let key: KeyId = match i64::try_from(k) {
                    Ok(k) => super::edn::int_key(&mut key_cache, &mut b, k),
                    Err(_) => b.key(Atom::from_u64(k)),
                };
                let initial = mf == MopFn::Read && v == 0 && init.as_ref().is_some_and(|ks| ks.contains(&k));
                let value = if initial { MopValue::Nil } else { MopValue::Int(b.u64_value(v)) };
                b.push_mop(Mop { f: mf, key, value });
            }
            let raw = RawOp {
                index: None,
                time: None,
                op_type: OpType::Ok,
                process: Some((s - skip) as i64),
                f: f.clone(),
                extras: Vec::new(),
                line: *line,
            };
            b.push_op(raw, mop_start);
        }
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(text: &str) -> Vec<(i64, u32, String)> {
        let h = parse("h.txt", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert!(h.registers_only);
        h.ops.iter().map(|op| (op.process, op.line, crate::gen::testkit::mops_text(&h, op))).collect()
    }

    fn err(text: &str) -> String {
        match parse("h.txt", text.as_bytes()) {
            Ok(_) => panic!("parsed"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn initial_session_becomes_the_initial_state() {
        let got = ops("w 0 0\nw 1 0\n=====\nr 0 0\nw 1 5\n-----\n\nr 1 5\n=====\n  r 0 0  \n");
        assert_eq!(
            got,
            vec![(0, 4, "r 0 nil, w 1 5".to_string()), (0, 8, "r 1 5".to_string()), (1, 10, "r 0 nil".to_string())]
        );
    }

    #[test]
    fn without_an_initial_session_values_are_read_as_written() {
        // No initial session: the first session is an ordinary one.
        assert_eq!(
            ops("w 0 1\n-----\nw 0 2\n=====\nr 0 2\nr 1 0"),
            vec![(0, 1, "w 0 1".to_string()), (0, 3, "w 0 2".to_string()), (1, 5, "r 0 2, r 1 0".to_string())]
        );
        // Another writer of 0 makes reads of 0 ambiguous: read literally.
        let got = ops("w 0 0\n=====\nw 0 0\n=====\nr 0 0");
        assert_eq!(got[0], (0, 1, "w 0 0".to_string()));
        assert_eq!(got[2], (2, 5, "r 0 0".to_string()));
    }

    #[test]
    fn bad_lines_are_located() {
        assert_eq!(
            err("w 0 0\n=====\nx 1 2"),
            "h.txt:3:1: expected an event `r KEY VALUE` or `w KEY VALUE`, or a line of `=` or `-`, found x"
        );
        assert_eq!(err("r 1"), "h.txt:1:4: expected a space after the key, found end of line");
        assert_eq!(err("r1 2"), "h.txt:1:2: expected a space after the event's letter, found 1");
        assert_eq!(err("r -1 2"), "h.txt:1:3: expected a non-negative decimal key, found -1");
        assert_eq!(err("w 1 2 3"), "h.txt:1:6: expected end of line after the value, found a space");
        assert_eq!(
            err("w 1 18446744073709551616"),
            "h.txt:1:5: expected an integer at most 18446744073709551615, found 18446744073709551616"
        );
        assert_eq!(
            err("=====\n--x"),
            "h.txt:2:1: expected an event `r KEY VALUE` or `w KEY VALUE`, or a line of `=` or `-`, found --x"
        );
    }
}
