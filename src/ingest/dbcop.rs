//! Reader for dbcop's `history.bincode` (the `DBCOP` input of PolySI): Rust
//! bincode 1.x of dbcop's `History` struct, little-endian with `u64` lengths:
//!
//! ```text
//! params: { id, n_node, n_variable, n_transaction, n_event: u64 }
//! info: String, start: String, end: String      (u64 length + UTF-8)
//! data: Vec<Session>, Session = Vec<Transaction>
//! Transaction = { events: Vec<Event>, success: bool (u8) }
//! Event = { write: bool (u8), variable: u64, value: u64, success: bool (u8) }
//! ```
//!
//! Mapping onto the rw-register model: session `i` is `:process i`; each
//! transaction is one completion op `:f :txn`, `:ok` if it succeeded and
//! `:fail` otherwise; each event is `[:w k v]` or `[:r k v]` with the key
//! `Atom::Int(variable)`. dbcop's initial state is value 0 on every key, so a
//! read of 0 becomes `[:r k nil]`, Elle's "read the initial state". Events
//! marked unsuccessful did not happen: they are left out and counted in
//! [`History::dropped_events`], except the failed writes of a failed
//! transaction, which stay among its (aborted) writes, so that a read of one
//! is an aborted read (G1a) rather than a read of a value nobody wrote.
//! Values and variables are unsigned 64-bit numbers and print as such (see
//! [`History::unsigned_values`]).
//!
//! A transaction marked successful that holds a failed event is *not* known
//! to have committed as recorded: dbcop's PostgreSQL-wire clients
//! (CockroachDB, PostgreSQL) record a failed statement as a failed event and
//! the transaction as committed, though the server rolled it back (a failed
//! statement aborts the transaction, and `COMMIT` then answers `ROLLBACK`);
//! under MySQL/Galera the transaction did commit without the failed
//! statement. By default ([`FailedEvents::Indeterminate`]) such a transaction
//! becomes an `:info` op with its successful events: its writes may or may
//! not be visible, and its reads constrain nothing, which is sound under both
//! readings. It is counted in [`History::indeterminate_txns`].
//! [`FailedEvents::AsCommitted`] keeps dbcop's reading (`:ok` without the
//! failed events).
//!
//! The reader is one linear pass over the bytes with no allocation per event
//! (keys are interned through a dense cache). Every length is checked against
//! the bytes that remain before anything is reserved, so an absurd length is
//! an error, never a huge allocation; malformed input is reported as an
//! [`IngestError::Binary`] with the record being read (session, transaction
//! and event index, 0-based, as in dbcop's nested vectors), the byte offset
//! and what was expected.

use super::edn::int_key;
use super::error::{berr, BErr, BResult, IngestError};
use super::FailedEvents;
use crate::history::{Atom, History, HistoryBuilder, Mop, MopFn, MopValue, OpType, RawOp};

/// Smallest encodings, used to bound lengths by the bytes left.
const MIN_SESSION: usize = 8;
const MIN_TXN: usize = 9;
const EVENT: usize = 18;

/// A little-endian cursor over the input.
struct Cur<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cur<'a> {
    fn left(&self) -> usize {
        self.b.len() - self.pos
    }

    #[cold]
    fn eof(&self, what: &'static str) -> Box<BErr> {
        berr(self.pos, what, format!("end of input ({} bytes left)", self.left()))
    }

    #[inline(always)]
    fn u64(&mut self, what: &'static str) -> BResult<u64> {
        let Some(s) = self.b.get(self.pos..self.pos + 8) else {
            return Err(self.eof(what));
        };
        let mut w = [0u8; 8];
        w.copy_from_slice(s);
        self.pos += 8;
        Ok(u64::from_le_bytes(w))
    }

    #[inline(always)]
    fn bool(&mut self, what: &'static str) -> BResult<bool> {
        match self.b.get(self.pos) {
            Some(&b @ (0 | 1)) => {
                self.pos += 1;
                Ok(b == 1)
            }
            Some(&b) => Err(berr(self.pos, what, format!("byte 0x{b:02x}"))),
            None => Err(self.eof(what)),
        }
    }

    /// A sequence length, each element taking at least `min` bytes: larger
    /// than what the remaining bytes could hold is an error.
    fn len(&mut self, what: &'static str, min: usize) -> BResult<usize> {
        let at = self.pos;
        let n = self.u64(what)?;
        let most = self.left() / min;
        if n > most as u64 {
            return Err(berr(
                at,
                format!("{what} (at most {most}: {} bytes are left)", self.left()),
                format!("length {n}"),
            ));
        }
        Ok(n as usize)
    }

    fn string(&mut self, what: &'static str) -> BResult<&'a str> {
        let n = self.len(what, 1)?;
        let bytes = &self.b[self.pos..self.pos + n];
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                self.pos += n;
                Ok(s)
            }
            Err(e) => {
                let at = self.pos + e.valid_up_to();
                Err(berr(at, "valid UTF-8 text", format!("byte 0x{:02x}", self.b[at])))
            }
        }
    }
}

/// dbcop's `params` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// History id.
    pub id: u64,
    /// Number of sessions.
    pub n_node: u64,
    /// Number of keys.
    pub n_variable: u64,
    /// Transactions per session.
    pub n_transaction: u64,
    /// Events per transaction.
    pub n_event: u64,
}

fn header(c: &mut Cur<'_>) -> BResult<Header> {
    Ok(Header {
        id: c.u64("the header's `id`")?,
        n_node: c.u64("the header's `n_node`")?,
        n_variable: c.u64("the header's `n_variable`")?,
        n_transaction: c.u64("the header's `n_transaction`")?,
        n_event: c.u64("the header's `n_event`")?,
    })
}

/// True when `bytes` start like a dbcop history: a header followed by two
/// short UTF-8 strings (`info`, `start`). Text (EDN, JSON) never does, as
/// the `info` length would be eight ASCII bytes, a huge number.
pub(crate) fn looks_like(bytes: &[u8]) -> bool {
    const MAX_STRING: u64 = 4096;
    let mut c = Cur { b: bytes, pos: 40 };
    if bytes.len() < 40 {
        return false;
    }
    for what in ["`info`", "`start`"] {
        match c.u64(what) {
            Ok(n) if n <= MAX_STRING => c.pos -= 8,
            _ => return false,
        }
        if c.string(what).is_err() {
            return false;
        }
    }
    true
}

/// Reads the header of a dbcop history (for tests that compare counts).
#[cfg(test)]
pub(crate) fn read_header(bytes: &[u8]) -> Option<Header> {
    header(&mut Cur { b: bytes, pos: 0 }).ok()
}

/// Parses a dbcop history, reading committed transactions with failed
/// events as `failed` says.
pub(crate) fn parse(source: &str, input: &[u8], failed: FailedEvents) -> Result<History, IngestError> {
    let mut at = Loc::default();
    parse_inner(source, input, failed, &mut at).map_err(|mut e| {
        e.record = at.describe();
        e.into_ingest(source)
    })
}

/// Where the reader is: for error messages.
#[derive(Default)]
struct Loc {
    /// Current session, transaction in it and event in that, when open.
    session: Option<usize>,
    txn: Option<usize>,
    event: Option<usize>,
}

impl Loc {
    fn describe(&self) -> String {
        match (self.session, self.txn, self.event) {
            (Some(s), Some(t), Some(e)) => format!("session {s}, transaction {t}, event {e}"),
            (Some(s), Some(t), None) => format!("session {s}, transaction {t}"),
            (Some(s), None, _) => format!("session {s}"),
            (None, _, _) => String::new(),
        }
    }
}

fn parse_inner(source: &str, input: &[u8], failed: FailedEvents, at: &mut Loc) -> BResult<History> {
    let mut c = Cur { b: input, pos: 0 };
    let h = header(&mut c)?;
    c.string("the length of `info`")?;
    c.string("the length of `start`")?;
    c.string("the length of `end`")?;
    let mut b = HistoryBuilder::new(source);
    b.set_registers_only();
    // The header's counts are a hint only, capped by what the bytes can hold.
    let ops = h.n_node.saturating_mul(h.n_transaction).min((c.left() / MIN_TXN) as u64) as usize;
    let mops = (ops as u64).saturating_mul(h.n_event).min((c.left() / EVENT) as u64) as usize;
    b.reserve(ops, mops);
    let txn = Atom::Keyword("txn".into());
    let mut key_cache = Vec::new();
    let mut dropped = 0usize;
    let mut indeterminate = 0usize;
    let sessions = c.len("the number of sessions", MIN_SESSION)?;
    for s in 0..sessions {
        *at = Loc { session: Some(s), txn: None, event: None };
        let txns = c.len("the number of transactions of a session", MIN_TXN)?;
        for t in 0..txns {
            (at.txn, at.event) = (Some(t), None);
            let start = b.mop_count();
            let events = c.len("the number of events of a transaction", EVENT)?;
            let dropped_before = dropped;
            let mut failed_writes: Vec<Mop> = Vec::new();
            for e in 0..events {
                at.event = Some(e);
                let write = c.bool("an event's `write` flag (byte 0 or 1)")?;
                let var = c.u64("an event's `variable`")?;
                let value = c.u64("an event's `value`")?;
                let succeeded = c.bool("an event's `success` flag (byte 0 or 1)")?;
                if !succeeded && !write {
                    dropped += 1;
                    continue;
                }
                let key = match i64::try_from(var) {
                    Ok(k) => int_key(&mut key_cache, &mut b, k),
                    Err(_) => b.key(Atom::from_u64(var)),
                };
                let (f, value) = match (write, value) {
                    (true, v) => (MopFn::Write, MopValue::Int(b.u64_value(v))),
                    (false, 0) => (MopFn::Read, MopValue::Nil),
                    (false, v) => (MopFn::Read, MopValue::Int(b.u64_value(v))),
                };
                if !succeeded {
                    dropped += 1;
                    if write {
                        failed_writes.push(Mop { f, key, value });
                    }
                    continue;
                }
                b.push_mop(Mop { f, key, value });
            }
            at.event = None;
            let ok = c.bool("a transaction's `success` flag (byte 0 or 1)")?;
            if !ok {
                // An aborted transaction's failed writes were still attempted:
                // reading one is an aborted read (G1a), not a read of a value
                // nobody wrote.
                dropped -= failed_writes.len();
                for m in failed_writes.drain(..) {
                    b.push_mop(m);
                }
            }
            failed_writes.clear();
            let op_type = match (ok, dropped > dropped_before, failed) {
                (false, _, _) => OpType::Fail,
                (true, true, FailedEvents::Indeterminate) => {
                    indeterminate += 1;
                    OpType::Info
                }
                (true, _, _) => OpType::Ok,
            };
            let raw = RawOp {
                index: None,
                time: None,
                op_type,
                process: Some(s as i64),
                f: txn.clone(),
                extras: Vec::new(),
                line: 0,
            };
            b.push_op(raw, start);
        }
    }
    *at = Loc::default();
    if c.left() > 0 {
        return Err(berr(c.pos, "end of input after the last session", format!("{} more bytes", c.left())));
    }
    b.count_dropped(dropped);
    b.count_indeterminate(indeterminate);
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::dbcop::encode_events as history;
    use proptest::prelude::*;

    fn err(bytes: &[u8]) -> String {
        match parse("h.bincode", bytes, FailedEvents::Indeterminate) {
            Ok(_) => panic!("parsed"),
            Err(e) => e.to_string(),
        }
    }

    fn sample() -> Vec<u8> {
        history(&[
            vec![(vec![(true, 1, 1, true), (false, 2, 0, true)], true), (vec![(false, 1, 5, true)], false)],
            vec![(vec![(false, 1, 1, true), (true, 2, 9, false), (true, 2, 1, true)], true), (vec![], true)],
        ])
    }

    /// A failed transaction keeps its failed writes (they were attempted),
    /// so a committed read of one is G1a, not a garbage read; its failed
    /// reads, and a committed transaction's failed events, are still
    /// dropped and counted.
    #[test]
    fn failed_transactions_keep_their_failed_writes() {
        let bytes = history(&[
            vec![(vec![(true, 1, 1, false), (false, 2, 3, false)], false)],
            vec![(vec![(false, 1, 1, true)], true)],
        ]);
        let h = match parse("h.bincode", &bytes, FailedEvents::Indeterminate) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(h.dropped_events, 1);
        let failed = h.mops_of(&h.ops[0]);
        assert_eq!(h.ops[0].op_type, OpType::Fail);
        assert_eq!(failed.len(), 1);
        assert_eq!((failed[0].f, failed[0].value), (MopFn::Write, MopValue::Int(1)));
        let o = crate::check::check(&h, &crate::check::CheckOptions::default());
        let types = o.map(|o| o.anomaly_types).unwrap_or_default();
        assert!(types.contains(&"G1a".to_string()) && !types.contains(&"garbage-read".to_string()), "{types:?}");
    }

    #[test]
    fn values_and_variables_above_i64_max_are_unsigned() {
        let top = u64::MAX;
        let half = 1u64 << 63;
        let bytes =
            history(&[vec![(vec![(true, top, top, true), (true, half, half, true), (false, 1, top, true)], true)]]);
        let h = match parse("h.bincode", &bytes, FailedEvents::default()) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            crate::gen::testkit::mops_text(&h, &h.ops[0]),
            "w 18446744073709551615 18446744073709551615, w 9223372036854775808 9223372036854775808, r 1 18446744073709551615"
        );
        let m = h.mops_of(&h.ops[0]);
        assert_eq!(m[0].value, m[2].value, "the read of u64::MAX matches its write");
        assert_ne!(m[0].value, m[1].value);
    }

    #[test]
    fn maps_sessions_transactions_and_events() {
        let bytes = sample();
        assert_eq!(
            read_header(&bytes),
            Some(Header { id: 7, n_node: 2, n_variable: 10, n_transaction: 2, n_event: 2 })
        );
        let h = match parse("h.bincode", &bytes, FailedEvents::AsCommitted) {
            Ok(h) => h,
            Err(e) => panic!("{e}"),
        };
        assert!(h.registers_only);
        assert_eq!(h.dropped_events, 1);
        let summary: Vec<(i64, OpType, Vec<String>)> = h
            .ops
            .iter()
            .map(|op| {
                let mops = h.mops_of(op).iter().map(|m| {
                    let v = match m.value {
                        MopValue::Int(v) => h.value_text(v),
                        _ => "nil".to_string(),
                    };
                    format!("{} {} {v}", m.f.name(), h.key(m.key))
                });
                (op.process, op.op_type, mops.collect())
            })
            .collect();
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            summary,
            vec![
                (0, OpType::Ok, s(&["w 1 1", "r 2 nil"])),
                (0, OpType::Fail, s(&["r 1 5"])),
                (1, OpType::Ok, s(&["r 1 1", "w 2 1"])),
                (1, OpType::Ok, s(&[])),
            ]
        );
        assert_eq!(h.keys, vec![Atom::Int(1), Atom::Int(2)]);
        assert_eq!(h.f_of(&h.ops[0]), &Atom::Keyword("txn".into()));
        assert!(looks_like(&bytes));
        assert!(!looks_like(b"{:type :ok, :process 0, :value [[:w 1 1]]} {:type :ok}"));
    }

    #[test]
    fn committed_transactions_with_failed_events_are_indeterminate_by_default() {
        let bytes = sample();
        let types = |failed| match parse("h.bincode", &bytes, failed) {
            Ok(h) => (h.ops.iter().map(|o| o.op_type).collect::<Vec<_>>(), h.indeterminate_txns, h.mops.len()),
            Err(e) => panic!("{e}"),
        };
        // Session 1's first transaction is marked committed but its write
        // of 9 failed.
        assert_eq!(
            types(FailedEvents::Indeterminate),
            (vec![OpType::Ok, OpType::Fail, OpType::Info, OpType::Ok], 1, 5)
        );
        assert_eq!(types(FailedEvents::AsCommitted), (vec![OpType::Ok, OpType::Fail, OpType::Ok, OpType::Ok], 0, 5));
    }

    #[test]
    fn malformed_inputs_name_the_offset_and_expectation() {
        let good = sample();
        // Header 40 + strings (8+10, 8+25, 8+25) = 124; sessions count at 124.
        let data = 124;
        let mut bad = good.clone();
        bad[data + 24] = 2; // the first event's write flag
        assert_eq!(
            err(&bad),
            "h.bincode: session 0, transaction 0, event 0, at byte 148: expected an event's `write` flag (byte 0 or 1), found byte 0x02"
        );
        let mut bad = good.clone();
        bad[data..data + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(
            err(&bad).starts_with(
                "h.bincode: at byte 124: expected the number of sessions (at most 20: 160 bytes are left), found length 18446744073709551615"
            ),
            "{}",
            err(&bad)
        );
        let mut bad = good.clone();
        bad[48] = 0xff; // inside `info`
        assert_eq!(err(&bad), "h.bincode: at byte 48: expected valid UTF-8 text, found byte 0xff");
        assert_eq!(
            err(&good[..good.len() - 1]),
            format!(
                "h.bincode: session 1, transaction 1, at byte {}: expected a transaction's `success` flag (byte 0 or 1), found end of input (0 bytes left)",
                good.len() - 1
            )
        );
        let mut long = good.clone();
        long.extend_from_slice(b"xyz");
        assert_eq!(
            err(&long),
            format!(
                "h.bincode: at byte {}: expected end of input after the last session, found 3 more bytes",
                good.len()
            )
        );
        assert!(err(&good[..10]).starts_with("h.bincode: at byte 8: expected the header's `n_node`"));
    }

    #[test]
    fn every_truncation_is_an_error() {
        let good = sample();
        for n in 0..good.len() {
            assert!(parse("t", &good[..n], FailedEvents::default()).is_err(), "prefix of {n} bytes parsed");
        }
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse("fuzz", &bytes, FailedEvents::default());
            let _ = looks_like(&bytes);
        }

        #[test]
        fn mutated_histories_never_panic(pos in 0usize..400, byte in any::<u8>(), cut in 0usize..400) {
            let mut bytes = sample();
            let n = bytes.len();
            bytes[pos % n] = byte;
            bytes.truncate(n - cut % n);
            let _ = parse("fuzz", &bytes, FailedEvents::default());
        }
    }
}
