//! Writes a register history in AWDIT's `test` format: sessions separated
//! by lines of `=====`, a session's transactions by lines of `-----`, one
//! event `r K V` or `w K V` per line. The format has no implicit initial
//! state and no aborted transactions, so the first session is the initial
//! transaction, writing `0` to every key, and aborted transactions are left
//! out (see [`super::registers`]); isolde's reader takes such a first
//! session back as the initial state. Sessions come in increasing number,
//! each with its transactions in order; empty transactions are left out
//! (AWDIT's reader skips them too).

use super::registers::RegHistory;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Writes `h` to `w`.
pub fn write(h: &RegHistory, w: &mut dyn Write) -> io::Result<()> {
    let mut sessions: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, t) in h.txns.iter().enumerate() {
        if !t.aborted && !t.events.is_empty() {
            sessions.entry(t.session).or_default().push(i);
        }
    }
    let mut buf = Vec::with_capacity(1 << 16);
    for k in &h.keys {
        writeln!(buf, "w {k} 0")?;
    }
    for txns in sessions.values() {
        buf.extend_from_slice(b"=====\n");
        for (j, &i) in txns.iter().enumerate() {
            if j > 0 {
                buf.extend_from_slice(b"-----\n");
            }
            for e in &h.txns[i].events {
                writeln!(buf, "{} {} {}", if e.write { 'w' } else { 'r' }, e.key, e.value)?;
            }
            if buf.len() > 1 << 16 {
                w.write_all(&buf)?;
                buf.clear();
            }
        }
    }
    w.write_all(&buf)?;
    w.flush()
}
