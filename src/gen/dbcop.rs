//! Writer of dbcop's `history.bincode` format for generated rw-register
//! histories.
//!
//! dbcop (and tools built on its format, such as PolySI's converters) store a
//! history as the bincode 1.x encoding (little-endian, fixed-width integers,
//! `u64` lengths) of
//!
//! ```text
//! History { params: { id, n_node, n_variable, n_transaction, n_event: u64 },
//!           info: String, start: String, end: String,
//!           data: Vec<Session> }
//! Session     = Vec<Transaction>
//! Transaction = { events: Vec<Event>, success: bool }
//! Event       = { write: bool, variable: u64, value: u64, success: bool }
//! ```
//!
//! where a `String` is its `u64` byte length and UTF-8 bytes, a `bool` one
//! byte, and `start`/`end` are RFC 3339 timestamps. Every variable starts at
//! `0`, which is how a read of the initial state appears; generated writes
//! are `1, 2, ...` per key and so never write `0`.
//!
//! Our mapping: a session is one simulated process (`n_node` sessions of
//! exactly `n_transaction` transactions each, in the order each session ran
//! them), `n_event` is the maximum number of micro-ops per transaction. An
//! `:ok` transaction has `success = true` and its reads carry the values
//! they observed; a `:fail` one has `success = false`, every event
//! `success = false`, and its reads `0`. dbcop has no indeterminate
//! transactions, so dbcop output is generated without `:info` ones (the
//! generators reject `info_fraction > 0` with this format). `start` is a
//! fixed instant (2000-01-01T00:00:00+00:00) and `end` that instant plus the
//! simulation's logical duration, so output is reproducible per seed.
//!
//! The format groups transactions by session, while the simulation emits
//! them in time order, so the session bodies are buffered in memory (about
//! 18 bytes per micro-op, the size of the output) and written at the end.

use std::io::{self, Write};

/// The `params` record of a dbcop history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// History id (we use the seed).
    pub id: u64,
    /// Number of sessions.
    pub n_node: u64,
    /// Number of variables (keys).
    pub n_variable: u64,
    /// Transactions per session.
    pub n_transaction: u64,
    /// Events (micro-ops) per transaction.
    pub n_event: u64,
}

/// The `info` string we write.
pub const INFO: &str = "isolde";

/// The fixed `start` timestamp.
pub const START: &str = "2000-01-01T00:00:00+00:00";

/// Seconds from the Unix epoch to [`START`].
const START_UNIX: u64 = 946_684_800;

/// Accumulates sessions' encoded transactions, then writes the whole file.
pub(crate) struct DbcopWriter {
    sessions: Vec<Vec<u8>>,
    counts: Vec<u64>,
}

#[inline]
fn put_u64(buf: &mut Vec<u8>, x: u64) {
    buf.extend_from_slice(&x.to_le_bytes());
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_u64(buf, s.len() as u64);
    buf.extend_from_slice(s.as_bytes());
}

impl DbcopWriter {
    /// A writer for `sessions` sessions.
    pub(crate) fn new(sessions: usize) -> Self {
        DbcopWriter { sessions: vec![Vec::new(); sessions], counts: vec![0; sessions] }
    }

    /// Appends a transaction of `events` `(write, variable, value)` to
    /// `session`.
    pub(crate) fn push_txn(&mut self, session: usize, events: impl Iterator<Item = (bool, u64, u64)>, success: bool) {
        let buf = &mut self.sessions[session];
        let at = buf.len();
        put_u64(buf, 0);
        let mut n = 0u64;
        for (write, variable, value) in events {
            buf.push(write as u8);
            put_u64(buf, variable);
            put_u64(buf, value);
            buf.push(success as u8);
            n += 1;
        }
        buf[at..at + 8].copy_from_slice(&n.to_le_bytes());
        buf.push(success as u8);
        self.counts[session] += 1;
    }

    /// Writes the history to `w` (flushing it) and returns its size.
    /// `duration_ns` is the logical length of the run (for `end`).
    pub(crate) fn finish<W: Write>(self, mut w: W, p: &Params, duration_ns: u64) -> io::Result<u64> {
        let mut head = Vec::with_capacity(256);
        for x in [p.id, p.n_node, p.n_variable, p.n_transaction, p.n_event] {
            put_u64(&mut head, x);
        }
        put_str(&mut head, INFO);
        put_str(&mut head, START);
        put_str(&mut head, &rfc3339(START_UNIX, duration_ns));
        put_u64(&mut head, self.sessions.len() as u64);
        w.write_all(&head)?;
        let mut total = head.len() as u64;
        for (body, n) in self.sessions.iter().zip(&self.counts) {
            w.write_all(&n.to_le_bytes())?;
            w.write_all(body)?;
            total += 8 + body.len() as u64;
        }
        w.flush()?;
        Ok(total)
    }
}

/// RFC 3339 text (UTC, `+00:00`) of `unix_secs` plus `ns` nanoseconds, with
/// a fractional part only when there is one.
pub(crate) fn rfc3339(unix_secs: u64, ns: u64) -> String {
    let secs = unix_secs + ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    let mut s = format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", rem / 3600, rem / 60 % 60, rem % 60);
    if frac != 0 {
        s.push_str(&format!(".{frac:09}"));
    }
    s.push_str("+00:00");
    s
}

/// One hand-written dbcop event: (write, variable, value, success).
pub type Event = (bool, u64, u64, bool);

/// Encodes explicit sessions of transactions (`(events, success)`) as a
/// dbcop `history.bincode`, with a fixed header (id 7, as many nodes as
/// sessions, 10 variables, the first session's transaction count, 2 events
/// per transaction) and dbcop's `info`/`start`/`end` strings. Unlike the
/// simulated stores, every event and transaction carries its own success
/// flag, so tests can write the dialects real clients produce (failed
/// events inside committed transactions, failed transactions).
pub fn encode_events(sessions: &[Vec<(Vec<Event>, bool)>]) -> Vec<u8> {
    let txns = sessions.first().map_or(0, Vec::len) as u64;
    let params = [7u64, sessions.len() as u64, 10, txns, 2];
    encode_with(params, ["PostgreSQL", "2022-07-22T17:32:02+08:00", "2022-07-22T17:32:06+08:00"], sessions)
}

/// [`encode_events`] with the given `params` (id, nodes, variables,
/// transactions, events) and `info`, `start`, `end` strings.
pub fn encode_with(params: [u64; 5], strings: [&str; 3], sessions: &[Vec<(Vec<Event>, bool)>]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in params {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for s in strings {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&(sessions.len() as u64).to_le_bytes());
    for s in sessions {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        for (events, ok) in s {
            out.extend_from_slice(&(events.len() as u64).to_le_bytes());
            for &(w, k, v, e_ok) in events {
                out.push(w as u8);
                out.extend_from_slice(&k.to_le_bytes());
                out.extend_from_slice(&v.to_le_bytes());
                out.push(e_ok as u8);
            }
            out.push(*ok as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(START_UNIX, 0), START);
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00+00:00");
        assert_eq!(rfc3339(START_UNIX, 1_500_000_000), "2000-01-01T00:00:01.500000000+00:00");
        // 2000 is a leap year: day 59 is Feb 29, day 366 is 2001-01-01.
        assert_eq!(rfc3339(START_UNIX + 59 * 86_400 + 3_723, 0), "2000-02-29T01:02:03+00:00");
        assert_eq!(rfc3339(START_UNIX + 366 * 86_400, 0), "2001-01-01T00:00:00+00:00");
    }

    /// A hand-encoded two-session history, byte by byte.
    #[test]
    fn encodes_a_tiny_history_exactly() {
        let mut d = DbcopWriter::new(2);
        // Session 0: one ok txn writing x0 = 1 then reading x1 = 0 (initial).
        d.push_txn(0, [(true, 0, 1), (false, 1, 0)].into_iter(), true);
        // Session 1: one failed txn writing x1 = 1.
        d.push_txn(1, [(true, 1, 1)].into_iter(), false);
        let p = Params { id: 7, n_node: 2, n_variable: 2, n_transaction: 1, n_event: 2 };
        let mut out = Vec::new();
        let n = d.finish(&mut out, &p, 2_000_000_000).unwrap();
        let mut e: Vec<u8> = Vec::new();
        let u = |e: &mut Vec<u8>, x: u64| e.extend_from_slice(&x.to_le_bytes());
        for x in [7, 2, 2, 1, 2] {
            u(&mut e, x);
        }
        for s in ["isolde", "2000-01-01T00:00:00+00:00", "2000-01-01T00:00:02+00:00"] {
            u(&mut e, s.len() as u64);
            e.extend_from_slice(s.as_bytes());
        }
        u(&mut e, 2); // sessions
        u(&mut e, 1); // session 0: one txn
        u(&mut e, 2); // two events
        e.push(1);
        u(&mut e, 0);
        u(&mut e, 1);
        e.push(1);
        e.push(0);
        u(&mut e, 1);
        u(&mut e, 0);
        e.push(1);
        e.push(1); // txn success
        u(&mut e, 1); // session 1: one txn
        u(&mut e, 1); // one event
        e.push(1);
        u(&mut e, 1);
        u(&mut e, 1);
        e.push(0);
        e.push(0); // txn failed
        assert_eq!(out, e);
        assert_eq!(n, e.len() as u64);
        // Spot-check the literal layout of the first bytes.
        assert_eq!(&out[..8], &[7, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&out[40..48], &[6, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&out[48..54], b"isolde");
    }
}
