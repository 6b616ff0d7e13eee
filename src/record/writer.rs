//! The history file of a recording: Jepsen EDN op lines (the generators'
//! line format), each handed to the file as soon as it is complete.

use std::io::{self, Write};
use std::time::Instant;

use super::{Mop, Observed};
use crate::gen::closed_predicate::push_init_line;
use crate::gen::out::push_u64;
use crate::gen::sim::{next_stamp, push_op_line};

/// How a transaction completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Completion {
    Ok,
    Fail,
    Info,
}

/// Writes op lines with dense `:index` values and strictly increasing
/// `:time` (monotonic nanoseconds since `start`).
pub(crate) struct HistoryWriter<W: Write> {
    out: W,
    start: Instant,
    index: u64,
    last_time: Option<u64>,
    buf: Vec<u8>,
}

impl<W: Write> HistoryWriter<W> {
    pub(crate) fn new(out: W, start: Instant) -> Self {
        HistoryWriter { out, start, index: 0, last_time: None, buf: Vec::with_capacity(512) }
    }

    /// Writes and flushes the `:invoke` line of a transaction.
    pub(crate) fn invoke(&mut self, process: u64, mops: &[Mop]) -> io::Result<()> {
        self.line(b":invoke", process, |buf| push_mops(buf, mops, None))
    }

    /// Writes and flushes one line of the closed-predicate `:init` op that
    /// sets up the universe `rows`: its `:invoke` (`how` `None`) or its
    /// completion.
    pub(crate) fn init(&mut self, process: u64, how: Option<Completion>, rows: &[(u64, u64)]) -> io::Result<()> {
        let ty: &[u8] = match how {
            None => b":invoke",
            Some(Completion::Ok) => b":ok",
            Some(Completion::Fail) => b":fail",
            Some(Completion::Info) => b":info",
        };
        let time = self.stamp();
        self.buf.clear();
        push_init_line(&mut self.buf, ty, process, time, self.index, rows);
        self.flush_line()
    }

    /// Writes and flushes the completion line of a transaction; `observed`
    /// holds one entry per read of an `:ok` transaction, in order.
    pub(crate) fn complete(
        &mut self,
        process: u64,
        how: Completion,
        mops: &[Mop],
        observed: &[Observed],
    ) -> io::Result<()> {
        let ty: &[u8] = match how {
            Completion::Ok => b":ok",
            Completion::Fail => b":fail",
            Completion::Info => b":info",
        };
        let obs = (how == Completion::Ok).then_some(observed);
        self.line(ty, process, |buf| push_mops(buf, mops, obs))
    }

    fn line(&mut self, ty: &[u8], process: u64, mops: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let time = self.stamp();
        self.buf.clear();
        push_op_line(&mut self.buf, ty, process, time, self.index, mops);
        self.flush_line()
    }

    /// The `:time` of a line written now.
    fn stamp(&mut self) -> u64 {
        let now = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let time = next_stamp(self.last_time, now);
        self.last_time = Some(time);
        time
    }

    /// Hands the line in the buffer to the file.
    fn flush_line(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        self.index += 1;
        Ok(())
    }
}

/// The database key of fence transactions (`--fences`), written
/// `:isolde/fence` in the history: far above any workload key, and within
/// the signed 64-bit keys every backend's table holds.
pub(crate) const FENCE_KEY: u64 = 1 << 62;

/// Writes a key as the history spells it.
fn push_key(buf: &mut Vec<u8>, k: u64) {
    if k == FENCE_KEY {
        buf.extend_from_slice(b":isolde/fence");
    } else {
        push_u64(buf, k);
    }
}

/// Appends what a read observed (`nil` for nothing).
fn push_observed(buf: &mut Vec<u8>, observed: Option<&Observed>) {
    match observed {
        Some(Observed::Register(Some(v))) => push_u64(buf, *v),
        Some(Observed::List(vs)) => {
            buf.push(b'[');
            for (j, v) in vs.iter().enumerate() {
                if j > 0 {
                    buf.push(b' ');
                }
                push_u64(buf, *v);
            }
            buf.push(b']');
        }
        Some(Observed::Rows(rows)) => {
            let mut rows = rows.clone();
            rows.sort_unstable();
            buf.push(b'{');
            for (j, &(k, v)) in rows.iter().enumerate() {
                if j > 0 {
                    buf.extend_from_slice(b", ");
                }
                push_key(buf, k);
                buf.push(b' ');
                push_u64(buf, v);
            }
            buf.push(b'}');
        }
        Some(Observed::Register(None)) | None => buf.extend_from_slice(b"nil"),
    }
}

/// Renders micro-ops; reads show `observed` values in order when given,
/// else `nil`.
fn push_mops(buf: &mut Vec<u8>, mops: &[Mop], observed: Option<&[Observed]>) {
    let mut reads = observed.map(|o| o.iter());
    for (i, m) in mops.iter().enumerate() {
        if i > 0 {
            buf.push(b' ');
        }
        let seen = if m.reads() { reads.as_mut().and_then(|r| r.next()) } else { None };
        match *m {
            Mop::Read(k) => {
                buf.extend_from_slice(b"[:r ");
                push_key(buf, k);
                buf.push(b' ');
                push_observed(buf, seen);
                buf.push(b']');
            }
            Mop::PredRead(p) => {
                buf.extend_from_slice(b"[:rp ");
                p.push_edn(buf);
                buf.push(b' ');
                push_observed(buf, seen);
                buf.push(b']');
            }
            Mop::Write(k, v) | Mop::Append(k, v) | Mop::Insert(k, v) => {
                buf.extend_from_slice(match m {
                    Mop::Write(..) => b"[:w ",
                    Mop::Append(..) => b"[:append ",
                    _ => b"[:insert ",
                });
                push_key(buf, k);
                buf.push(b' ');
                push_u64(buf, v);
                buf.push(b']');
            }
            Mop::Delete(k) => {
                buf.extend_from_slice(b"[:delete ");
                push_key(buf, k);
                buf.push(b']');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::closed_predicate::Pred;

    #[test]
    fn lines_are_jepsen_ops_in_order() {
        let mut out = Vec::new();
        let mut w = HistoryWriter::new(&mut out, Instant::now());
        let mops = [Mop::Read(1), Mop::Append(2, 7), Mop::Read(2)];
        w.invoke(3, &mops).unwrap();
        let obs = [Observed::List(vec![]), Observed::List(vec![5, 7])];
        w.complete(3, Completion::Ok, &mops, &obs).unwrap();
        let rw = [Mop::Read(4), Mop::Write(4, 9)];
        w.invoke(0, &rw).unwrap();
        w.complete(0, Completion::Fail, &rw, &[Observed::Register(Some(8))]).unwrap();
        w.invoke(1, &rw).unwrap();
        w.complete(1, Completion::Ok, &rw, &[Observed::Register(Some(8))]).unwrap();
        let cp = [Mop::Insert(5, 2), Mop::PredRead(Pred::Mod(2, 0)), Mop::Delete(3), Mop::Read(3)];
        w.init(0, None, &[(3, 1), (4, 0)]).unwrap();
        w.init(0, Some(Completion::Ok), &[(3, 1), (4, 0)]).unwrap();
        w.invoke(2, &cp).unwrap();
        w.complete(2, Completion::Ok, &cp, &[Observed::Rows(vec![(5, 2), (4, 0)]), Observed::Register(None)]).unwrap();
        assert_eq!(w.index, 10);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let strip = |l: &str| l[..l.find(", :time").unwrap()].to_string();
        assert_eq!(
            lines.iter().map(|l| strip(l)).collect::<Vec<_>>(),
            [
                "{:type :invoke, :f :txn, :value [[:r 1 nil] [:append 2 7] [:r 2 nil]], :process 3",
                "{:type :ok, :f :txn, :value [[:r 1 []] [:append 2 7] [:r 2 [5 7]]], :process 3",
                "{:type :invoke, :f :txn, :value [[:r 4 nil] [:w 4 9]], :process 0",
                // A failed transaction's reads are not reported.
                "{:type :fail, :f :txn, :value [[:r 4 nil] [:w 4 9]], :process 0",
                "{:type :invoke, :f :txn, :value [[:r 4 nil] [:w 4 9]], :process 1",
                "{:type :ok, :f :txn, :value [[:r 4 8] [:w 4 9]], :process 1",
                "{:type :invoke, :f :init, :value {3 1, 4 0}, :process 0",
                "{:type :ok, :f :init, :value {3 1, 4 0}, :process 0",
                "{:type :invoke, :f :txn, :value [[:insert 5 2] [:rp [:mod 2 0] nil] [:delete 3] [:r 3 nil]], :process 2",
                "{:type :ok, :f :txn, :value [[:insert 5 2] [:rp [:mod 2 0] {4 0, 5 2}] [:delete 3] [:r 3 nil]], :process 2",
            ]
        );
        let mut last = None;
        for (i, l) in lines.iter().enumerate() {
            assert!(l.ends_with(&format!(", :index {i}}}")), "{l}");
            let t: u64 = l[l.find(":time ").unwrap() + 6..l.find(", :index").unwrap()].parse().unwrap();
            assert!(last.is_none_or(|p| t > p));
            last = Some(t);
        }
    }
}
