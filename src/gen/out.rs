//! Buffered byte sink with hand-rolled integer formatting for the generators.
//!
//! Generators emit hundreds of megabytes of EDN, dominated by small decimal
//! integers, so formatting goes through a lookup-table `u64` writer into a
//! reused byte buffer that is handed to the underlying writer in large chunks.

use std::io::{self, Write};

/// Size at which the internal buffer is handed to the underlying writer.
pub(crate) const CHUNK: usize = 1 << 16;

/// Two ASCII digits for every value 0..100, used to format two digits at a time.
const DIGITS2: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal form of `n` to `buf`.
#[inline]
pub(crate) fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    while n >= 100 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        tmp[i] = DIGITS2[d];
        tmp[i + 1] = DIGITS2[d + 1];
    }
    if n >= 10 {
        let d = n as usize * 2;
        i -= 2;
        tmp[i] = DIGITS2[d];
        tmp[i + 1] = DIGITS2[d + 1];
    } else {
        i -= 1;
        tmp[i] = b'0' + n as u8;
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// A byte buffer in front of a writer: callers append to `buf`, then call
/// [`Sink::maybe_flush`] at record boundaries so the writer only ever sees
/// whole lines in ~64 KiB chunks.
pub(crate) struct Sink<W: Write> {
    w: W,
    /// Pending bytes not yet handed to `w`.
    pub(crate) buf: Vec<u8>,
    /// Bytes handed to `w` so far.
    written: u64,
}

impl<W: Write> Sink<W> {
    pub(crate) fn new(w: W) -> Self {
        Sink { w, buf: Vec::with_capacity(CHUNK + 4096), written: 0 }
    }

    /// Hands the buffer to the writer once it has grown past [`CHUNK`].
    #[inline]
    pub(crate) fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= CHUNK {
            self.drain()?;
        }
        Ok(())
    }

    fn drain(&mut self) -> io::Result<()> {
        self.w.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes out everything pending, flushes the writer, and returns the
    /// total number of bytes written.
    pub(crate) fn finish(mut self) -> io::Result<u64> {
        self.drain()?;
        self.w.flush()?;
        Ok(self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_u64_matches_display() {
        let mut cases: Vec<u64> = vec![0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, u64::MAX, u64::MAX - 1];
        let mut x = 1u64;
        while let Some(y) = x.checked_mul(10) {
            cases.extend([x - 1, x, x + 1, y - 1]);
            x = y;
        }
        let mut s = 0x1234_5678u64;
        for _ in 0..10_000 {
            cases.push(crate::gen::rng::splitmix64(&mut s) >> (s % 64));
        }
        let mut buf = Vec::new();
        for n in cases {
            buf.clear();
            push_u64(&mut buf, n);
            assert_eq!(std::str::from_utf8(&buf).unwrap(), n.to_string());
        }
    }

    #[test]
    fn sink_counts_bytes_and_chunks() {
        let mut dest = Vec::new();
        let mut sink = Sink::new(&mut dest);
        for i in 0..50_000u64 {
            push_u64(&mut sink.buf, i);
            sink.buf.push(b'\n');
            sink.maybe_flush().unwrap();
            assert!(sink.buf.len() < CHUNK + 64);
        }
        let expected: String = (0..50_000u64).map(|i| format!("{i}\n")).collect();
        let n = sink.finish().unwrap();
        assert_eq!(n, expected.len() as u64);
        assert_eq!(String::from_utf8(dest).unwrap(), expected);
    }
}
