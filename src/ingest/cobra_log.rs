//! The records of one Cobra client log, read one transaction at a time from
//! any byte source: a log held in memory (the batch reader,
//! [`super::cobra`]) or a file read as it goes (`isolde analyze --follow`
//! on a log directory, [`crate::online::cobra`]). The format and its
//! mapping onto registers are described in [`super::cobra`]; this module
//! owns the record layout, the transaction structure and their errors, so
//! that both readers accept the same logs and name the same record and
//! byte offset when one is malformed.
//!
//! Which layout a log has (plain, or Cobra's `TIME_ORDER_ON` with a
//! timestamp after each `S` and `C`) follows from the whole log: the
//! timestamped one only when the plain one does not fit and it does
//! ([`timestamped`], one pass over the bytes that keeps two offsets).

use std::io::Read;

use super::error::{berr, BErr};

/// Cobra's id of the initial-state transaction and write.
pub(crate) const INIT_ID: i64 = 0xbebe_ebee;
/// Cobra's "no writer" id; a read of it read the initial state.
pub(crate) const NULL_ID: i64 = 0xdead_beef;
/// Write ids of garbage-collection reads.
pub(crate) const GC_IDS: [i64; 2] = [0x2333_2333, 0x6666_6666];

/// A micro-op of a transaction, with keys and write ids as Cobra's
/// unsigned 64-bit numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogMop {
    /// `[:w key write_id]`.
    Write { key: u64, write_id: u64 },
    /// `[:r key write_id]`, `None` for a read of the initial state.
    Read { key: u64, write_id: Option<u64> },
}

/// How a transaction ended in its log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TxnEnd {
    /// Its `C` record: committed.
    Committed,
    /// The log ended while it was open (the client crashed): `:info`.
    Open,
}

/// Why a log could not be read on.
#[derive(Debug)]
pub(crate) enum LogError {
    /// The byte source failed.
    Io(std::io::Error),
    /// A malformed record, located (its number and byte offset).
    Bad(Box<BErr>),
}

/// Payload size of a record with tag `t`, or `None` for an unknown tag.
pub(crate) fn payload(t: u8, ts: bool) -> Option<usize> {
    match t {
        b'S' | b'C' => Some(if ts { 16 } else { 8 }),
        b'W' => Some(24),
        b'R' => Some(32),
        _ => None,
    }
}

/// Printable name of a tag byte.
fn tag_name(t: u8) -> String {
    if t.is_ascii_graphic() {
        format!("'{}'", t as char)
    } else {
        format!("byte 0x{t:02x}")
    }
}

fn be(bytes: &[u8], i: usize) -> i64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[i..i + 8]);
    i64::from_be_bytes(w)
}

/// Where a layout's next record starts while the bytes stream past.
struct Fit {
    ts: bool,
    next: u64,
    ok: bool,
}

impl Fit {
    /// Looks at the bytes of `block`, which starts at offset `at`.
    fn see(&mut self, block: &[u8], at: u64) {
        while self.ok && self.next < at + block.len() as u64 {
            match payload(block[(self.next - at) as usize], self.ts) {
                Some(n) => self.next += 1 + n as u64,
                None => self.ok = false,
            }
        }
    }
}

/// Whether a log has the timestamped layout: the plain one does not fit
/// its records (tags and sizes) and the timestamped one does.
pub(crate) fn timestamped(mut input: impl Read) -> std::io::Result<bool> {
    let mut fits = [Fit { ts: false, next: 0, ok: true }, Fit { ts: true, next: 0, ok: true }];
    let mut block = vec![0u8; 1 << 16];
    let mut at = 0u64;
    loop {
        let n = match input.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        fits.iter_mut().for_each(|f| f.see(&block[..n], at));
        at += n as u64;
    }
    let fit = |f: &Fit| f.ok && f.next == at;
    Ok(!fit(&fits[0]) && fit(&fits[1]))
}

/// A Cobra log read one transaction at a time.
pub(crate) struct LogReader<R> {
    input: R,
    ts: bool,
    /// Offset of the next record.
    pos: usize,
    /// Number of the next record (0-based).
    record: usize,
    /// Garbage-collection reads left out so far.
    dropped: usize,
    /// The id of the last transaction read.
    txn_id: i64,
    /// The record being read: tag and payload.
    buf: [u8; 33],
}

impl<R: Read> LogReader<R> {
    /// Reads `input`, a log with the layout [`timestamped`] found.
    pub(crate) fn new(input: R, ts: bool) -> LogReader<R> {
        LogReader { input, ts, pos: 0, record: 0, dropped: 0, txn_id: 0, buf: [0; 33] }
    }

    /// Garbage-collection reads left out so far.
    pub(crate) fn dropped(&self) -> usize {
        self.dropped
    }

    /// The id (`S` and `C` records) of the last transaction read.
    pub(crate) fn txn_id(&self) -> i64 {
        self.txn_id
    }

    /// Reads into `buf[..n]` as much as the input has, up to `n` bytes.
    fn fill(&mut self, from: usize, n: usize) -> Result<usize, LogError> {
        let mut got = from;
        while got < n {
            match self.input.read(&mut self.buf[got..n]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(LogError::Io(e)),
            }
        }
        Ok(got)
    }

    /// An error at the record being read.
    fn bad(&self, mut e: Box<BErr>) -> LogError {
        e.record = format!("record {}", self.record);
        LogError::Bad(e)
    }

    /// The next record: its tag and payload in `buf`, or `None` at the end.
    fn next_record(&mut self) -> Result<Option<(u8, usize)>, LogError> {
        if self.fill(0, 1)? == 0 {
            return Ok(None);
        }
        let t = self.buf[0];
        let Some(n) = payload(t, self.ts) else {
            return Err(self.bad(berr(self.pos, "a record tag 'S', 'C', 'W' or 'R'", tag_name(t))));
        };
        let got = self.fill(1, 1 + n)?;
        if got < 1 + n {
            return Err(self.bad(berr(
                self.pos,
                format!("a complete {} record of {} bytes", tag_name(t), 1 + n),
                format!("end of input after {got} bytes"),
            )));
        }
        Ok(Some((t, n)))
    }

    /// Reads the next transaction's micro-ops into `mops` (cleared first);
    /// `None` at the end of the log.
    pub(crate) fn next_txn(&mut self, mops: &mut Vec<LogMop>) -> Result<Option<TxnEnd>, LogError> {
        mops.clear();
        // The open transaction: its id and where its `S` is.
        let mut open: Option<(i64, usize)> = None;
        while let Some((t, n)) = self.next_record()? {
            let here = self.pos;
            match t {
                b'S' => {
                    if let Some((id, at)) = open {
                        return Err(self.bad(berr(
                            here,
                            format!("a commit 'C' of transaction {id} (started at byte {at})"),
                            format!("a nested start 'S' of transaction {}", be(&self.buf, 1)),
                        )));
                    }
                    open = Some((be(&self.buf, 1), here));
                }
                b'C' => {
                    let id = be(&self.buf, 1);
                    match open {
                        Some((open_id, _)) if open_id == id => {
                            self.txn_id = id;
                            self.advance(n);
                            return Ok(Some(TxnEnd::Committed));
                        }
                        Some((open_id, at)) => {
                            return Err(self.bad(berr(
                                here,
                                format!("a commit 'C' of transaction {open_id} (started at byte {at})"),
                                format!("a commit of transaction {id}"),
                            )))
                        }
                        None => {
                            return Err(self.bad(berr(
                                here,
                                "a start 'S' before a commit",
                                format!("a commit 'C' of transaction {id} with no transaction open"),
                            )))
                        }
                    }
                }
                _ => {
                    if open.is_none() {
                        return Err(self.bad(berr(
                            here,
                            "a start 'S' before a read or write",
                            format!("{} record", tag_name(t)),
                        )));
                    }
                    if let Some(m) = self.mop(t) {
                        mops.push(m);
                    }
                }
            }
            self.advance(n);
        }
        Ok(open.map(|(id, _)| {
            self.txn_id = id;
            TxnEnd::Open
        }))
    }

    fn advance(&mut self, n: usize) {
        self.pos += 1 + n;
        self.record += 1;
    }

    /// The micro-op of the `W` or `R` record in `buf`; `None` for a
    /// garbage-collection read (counted).
    fn mop(&mut self, t: u8) -> Option<LogMop> {
        if t == b'W' {
            return Some(LogMop::Write { key: be(&self.buf, 9) as u64, write_id: be(&self.buf, 1) as u64 });
        }
        let (writer, write_id) = (be(&self.buf, 1), be(&self.buf, 9));
        if GC_IDS.contains(&write_id) {
            self.dropped += 1;
            return None;
        }
        let initial = [writer, write_id].iter().any(|w| *w == INIT_ID || *w == NULL_ID);
        Some(LogMop::Read { key: be(&self.buf, 17) as u64, write_id: (!initial).then_some(write_id as u64) })
    }
}
