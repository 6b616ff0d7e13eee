//! The history file of a recording: Jepsen EDN op lines (the generators'
//! line format), each handed to the file as soon as it is complete.

use std::io::{self, Write};
use std::time::Instant;

use super::Observed;
use crate::gen::out::push_u64;
use crate::gen::sim::{next_stamp, push_op_line};
use crate::gen::DrawnMop;

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
    pub(crate) fn invoke(&mut self, process: u64, mops: &[DrawnMop]) -> io::Result<()> {
        self.line(b":invoke", process, |buf| push_mops(buf, mops, None))
    }

    /// Writes and flushes the completion line of a transaction; `observed`
    /// holds one entry per read of an `:ok` transaction, in order.
    pub(crate) fn complete(
        &mut self,
        process: u64,
        how: Completion,
        mops: &[DrawnMop],
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
        let now = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let time = next_stamp(self.last_time, now);
        self.last_time = Some(time);
        self.buf.clear();
        push_op_line(&mut self.buf, ty, process, time, self.index, mops);
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

/// Renders micro-ops; reads show `observed` values in order when given,
/// else `nil`.
fn push_mops(buf: &mut Vec<u8>, mops: &[DrawnMop], observed: Option<&[Observed]>) {
    let mut reads = observed.map(|o| o.iter());
    for (i, m) in mops.iter().enumerate() {
        if i > 0 {
            buf.push(b' ');
        }
        match *m {
            DrawnMop::Read(k) => {
                buf.extend_from_slice(b"[:r ");
                push_key(buf, k);
                buf.push(b' ');
                match reads.as_mut().and_then(|r| r.next()) {
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
                    Some(Observed::Register(None)) | None => buf.extend_from_slice(b"nil"),
                }
                buf.push(b']');
            }
            DrawnMop::Write(k, v) | DrawnMop::Append(k, v) => {
                buf.extend_from_slice(if matches!(m, DrawnMop::Write(..)) { b"[:w " } else { b"[:append " });
                push_key(buf, k);
                buf.push(b' ');
                push_u64(buf, v);
                buf.push(b']');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_jepsen_ops_in_order() {
        let mut out = Vec::new();
        let mut w = HistoryWriter::new(&mut out, Instant::now());
        let mops = [DrawnMop::Read(1), DrawnMop::Append(2, 7), DrawnMop::Read(2)];
        w.invoke(3, &mops).unwrap();
        let obs = [Observed::List(vec![]), Observed::List(vec![5, 7])];
        w.complete(3, Completion::Ok, &mops, &obs).unwrap();
        let rw = [DrawnMop::Read(4), DrawnMop::Write(4, 9)];
        w.invoke(0, &rw).unwrap();
        w.complete(0, Completion::Fail, &rw, &[Observed::Register(Some(8))]).unwrap();
        w.invoke(1, &rw).unwrap();
        w.complete(1, Completion::Ok, &rw, &[Observed::Register(Some(8))]).unwrap();
        assert_eq!(w.index, 6);
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
