//! Writes a register history in the text format of Plume, PolySI, C4 and
//! AWDIT (`-f plume`): one line per event, `r(K,V,S,T)` or `w(K,V,S,T)`,
//! value `0` the initial value, transaction id `T` counted up from 0 over
//! the committed transactions, `-1` for an aborted transaction's events.
//! Each transaction's events are contiguous and in program order, and the
//! transactions come in history order; see [`super::registers`] for how a
//! history is laid out (and `isolde::ingest` for the reader).

use super::registers::RegHistory;
use std::io::{self, Write};

/// Writes `h` to `w` (buffered by the caller or not; written in blocks).
pub fn write(h: &RegHistory, w: &mut dyn Write) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    let mut id = 0u64;
    for t in &h.txns {
        let txn = if t.aborted { "-1".to_string() } else { id.to_string() };
        for e in &t.events {
            let f = if e.write { 'w' } else { 'r' };
            writeln!(buf, "{f}({},{},{},{txn})", e.key, e.value, t.session)?;
        }
        if !t.aborted {
            id += 1;
        }
        if buf.len() > 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.flush()
}
