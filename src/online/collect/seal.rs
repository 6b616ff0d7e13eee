//! Sealing retired keys: when the collector's state of a key leaves
//! memory for the spill store ([`crate::online::spill`]), and how it comes
//! back.
//!
//! ## The rule
//! After each collecting round the collector looks at every key of the
//! key table that no held op (and no open invocation) mentions:
//!
//! * a key of which nothing is collected (its collected transactions only
//!   read it empty) leaves the key table at once: there is nothing to
//!   check a later read of it against;
//! * a key with a collected prefix or pending elements whose last collected
//!   append completed (and, for a key read back from the store, that was
//!   read back) at least the quiet lines ago ([`super::QUIET_LINES`] by
//!   default, the same wait that marks a key retired) is *sealed*: its
//!   whole state (prefix, pending elements with their appenders' lines, the
//!   line of its last collected append) is written to the store under the
//!   key's name, and it leaves both the collector's map and the key table.
//!
//! The key table is renumbered then ([`crate::history::HistoryBuilder::drop_keys`]),
//! so it holds the keys of the held ops and the keys still in memory, and
//! every round's copy of the history and its check cost what is live, not
//! every key the run has seen.
//!
//! ## Why nothing is lost
//! A key mentioned again after it was sealed is interned afresh, with an
//! id above every id the collector has looked at. Before a round strips
//! anything ([`super::Collector::apply`]), each such key's name is looked
//! up in the store, and a state found there is taken back under the new
//! id: the round then checks the key's reads exactly as if its state had
//! never left memory (same prefix, same pending elements, same lines, so
//! the same anomalies with the same witnesses). A state that cannot be read
//! back (a damaged or unreadable file) is never guessed: the key's reads
//! are left out of every later check and the verdict can no longer be
//! `valid` ([`super::Collector::broken`]). A write that fails leaves the
//! states in memory and sealing stops for the run
//! ([`super::Collector::spill_failed`]).

use rustc_hash::FxHashSet;

use super::{spill, Collector, Packed, Prefix};
use crate::history::{History, KeyId, Value, NONE};

impl Collector {
    /// Bytes written to the store.
    pub fn spill_bytes(&self) -> u64 {
        self.spill.bytes()
    }

    /// Takes back the state of each key of `h` interned since the last
    /// look that the store holds.
    pub(super) fn unseal(&mut self, h: &History) {
        let from = self.known_keys as usize;
        self.known_keys = self.known_keys.max(h.keys.len() as u32);
        let now = h.ops.last().map_or(0, |o| o.line);
        for (i, name, state) in spill::take_back(&mut self.spill, &h.keys, from, Prefix::decode) {
            match state {
                Ok(p) => {
                    self.prefixes.insert(KeyId(i as u32), Prefix { unsealed_at: now, ..p });
                    self.unsealed += 1;
                }
                Err(e) => {
                    self.broken.get_or_insert_with(|| spill::unreadable(&h.keys[i], &e));
                    self.lost.insert(name);
                }
            }
        }
    }

    /// The keys of `h` whose sealed state was lost.
    pub(super) fn lost_keys(&self, h: &History) -> FxHashSet<KeyId> {
        if self.lost.is_empty() {
            return FxHashSet::default();
        }
        let lost = |k: &Value| spill::name(k).is_some_and(|n| self.lost.contains(&n));
        (0..h.keys.len() as u32).map(KeyId).filter(|k| lost(&h.keys[k.0 as usize])).collect()
    }
}

impl Prefix {
    /// The state as the store holds it: the line, the prefix's length and
    /// encoding, and each pending element with its appender's lines.
    fn encode(&self) -> Vec<u8> {
        let elems = self.elems.encoded();
        let mut b = Vec::with_capacity(24 + elems.len() + 16 * self.pending.len());
        b.extend_from_slice(&self.line.to_le_bytes());
        b.extend_from_slice(&(self.elems.len() as u64).to_le_bytes());
        b.extend_from_slice(&(elems.len() as u64).to_le_bytes());
        b.extend_from_slice(elems);
        b.extend_from_slice(&(self.pending.len() as u64).to_le_bytes());
        for (e, (inv, done)) in self.pending.iter().zip(&self.times) {
            b.extend_from_slice(&e.to_le_bytes());
            b.extend_from_slice(&inv.to_le_bytes());
            b.extend_from_slice(&done.to_le_bytes());
        }
        b
    }

    /// The state [`Prefix::encode`] wrote, or `None` when `b` is not one.
    fn decode(b: &[u8]) -> Option<Prefix> {
        let mut at = 0usize;
        let mut take = |n: usize| {
            let s = b.get(at..at.checked_add(n)?)?;
            at += n;
            Some(s)
        };
        let u32_at = |s: &[u8]| u32::from_le_bytes(s.try_into().unwrap_or_default());
        let u64_at = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or_default());
        let line = u32_at(take(4)?);
        let len = usize::try_from(u64_at(take(8)?)).ok()?;
        let bytes = usize::try_from(u64_at(take(8)?)).ok()?;
        let elems = Packed::from_encoded(take(bytes)?, len)?;
        let n = usize::try_from(u64_at(take(8)?)).ok()?;
        let (mut pending, mut times) = (Vec::new(), Vec::new());
        for _ in 0..n {
            pending.push(i64::from_le_bytes(take(8)?.try_into().ok()?));
            times.push((u32_at(take(4)?), u32_at(take(4)?)));
        }
        if take(1).is_some() {
            return None;
        }
        Some(Prefix { elems, pending, times, line, unsealed_at: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reads_back_as_written() {
        let p = Prefix {
            elems: Packed::from_slice(&[1, 2, 3, 70, -5]),
            pending: vec![9, 8],
            times: vec![(10, 20), (11, 19)],
            line: 42,
            unsealed_at: 0,
        };
        let b = p.encode();
        let q = Prefix::decode(&b).expect("decodes");
        assert_eq!((q.elems, q.pending, q.times, q.line), (p.elems.clone(), p.pending.clone(), p.times.clone(), 42));
        assert!(Prefix::decode(&b[..b.len() - 1]).is_none());
        assert!(Prefix::decode(&[b.as_slice(), &[0]].concat()).is_none());
    }
}

impl spill::Sealing for Collector {
    /// After a round's collection, with the key table `keys` and, per key,
    /// whether a held op mentions it (`used`), at input line `line`: seals
    /// the quiet keys (see the module docs) and returns the keys the key
    /// table may drop. The caller drops them and hands the renumbering to
    /// `remap_keys`.
    fn seal_keys(&mut self, keys: &[Value], used: &[bool], line: u32) -> Vec<bool> {
        let mut drop = vec![false; keys.len()];
        let mut sealing = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            if used.get(i).copied().unwrap_or(true) {
                continue;
            }
            match self.prefixes.get(&KeyId(i as u32)) {
                None => drop[i] = true,
                Some(p)
                    if self.spill_failed.is_none()
                        && line.saturating_sub(p.line.max(p.unsealed_at)) >= self.quiet_lines =>
                {
                    if let Some(name) = spill::name(k) {
                        if self.spill.put(&name, &p.encode()) {
                            sealing.push(i);
                        }
                    }
                }
                Some(_) => {}
            }
        }
        if let Err(e) = self.spill.flush() {
            self.spill_failed = Some(format!("{e}: retired keys stay in memory"));
            return drop;
        }
        for i in sealing {
            self.prefixes.remove(&KeyId(i as u32));
            drop[i] = true;
            self.sealed += 1;
        }
        if self.prefixes.capacity() > 4 * self.prefixes.len() + 64 {
            self.prefixes.shrink_to(2 * self.prefixes.len());
        }
        drop
    }

    /// The key table was renumbered: `map[old]` is each key's new id
    /// ([`NONE`]: dropped, which `seal_keys` allowed only for keys
    /// it holds nothing of).
    fn remap_keys(&mut self, map: &[u32]) {
        let old = std::mem::take(&mut self.prefixes);
        self.prefixes.reserve(old.len());
        for (k, p) in old {
            let new = map.get(k.0 as usize).copied().unwrap_or(NONE);
            debug_assert_ne!(new, NONE, "a key with collected state left the key table");
            self.prefixes.insert(KeyId(new), p);
        }
        self.known_keys = map.iter().filter(|&&n| n != NONE).count() as u32;
    }

    fn spill_failed(&self) -> Option<&str> {
        self.spill_failed.as_deref()
    }
}
