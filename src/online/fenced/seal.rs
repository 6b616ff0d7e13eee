//! Sealing retired register keys: what the register collector keeps of a
//! key (its [`Front`] and the values failed transactions wrote to it)
//! leaves memory for the spill store ([`crate::online::spill`]) once the
//! key is quiet, and comes back when an op mentions the key again, as the
//! list-append collector does with its keys ([`crate::online::collect`]'s
//! `seal` module, whose rule and reasons this follows).
//!
//! ## The rule
//! After each collecting round, every key of the key table that no held op
//! (and no open invocation) mentions:
//!
//! * with nothing collected (no front, no failed write) leaves the key
//!   table at once: a later read of it is checked against the window alone,
//!   as before anything was collected;
//! * with collected state whose last collected write completed (and, for a
//!   key read back from the store, that was read back) at least the quiet
//!   lines ago is *sealed*: the state is written to the store under the
//!   key's name and leaves both the collector and the key table.
//!
//! The fence key is never sealed. Workloads that retire keys (Jepsen's,
//! `isolde record`'s) would otherwise keep a few hundred bytes per key for
//! the rest of the run (about 1 KB per key with the key table measured on
//! PostgreSQL: 14 → 36 MB in ten minutes).
//!
//! ## Why nothing is lost
//! A key mentioned again after it was sealed is interned afresh with an id
//! above every id the collector has looked at. Before a round judges any
//! read ([`Collector::apply`]) each such key's name is looked up in the
//! store, and a state found there is taken back under the new id, so its
//! reads are judged exactly as if it had never left. A state that cannot be
//! read back is never guessed: the key's reads and writes are left out of
//! every later check and the verdict can no longer be `valid`. A write to
//! the store that fails leaves the states in memory and sealing stops for
//! the run.

use super::{Collector, Front};
use crate::history::{History, KeyId, Value, NONE};
use crate::online::spill;
use crate::online::values::{Dense, Ranges};

impl Collector {
    /// Takes back the state of each key of `h` interned since the last
    /// look that the store holds.
    pub(super) fn unseal(&mut self, h: &History) {
        self.unseal_keys(&h.keys, h.ops.last().map_or(0, |o| o.line));
    }

    /// [`Self::unseal`] for the key table `keys` at line `now`.
    pub(super) fn unseal_keys(&mut self, keys: &[Value], now: u32) {
        let from = self.known_keys as usize;
        self.known_keys = self.known_keys.max(keys.len() as u32);
        for (i, name, state) in spill::take_back(&mut self.spill, keys, from, decode) {
            let id = KeyId(i as u32);
            match state {
                Ok((front, aborted)) => {
                    if let Some(f) = front {
                        self.fronts.insert(id, f);
                    }
                    if let Some(d) = aborted {
                        self.aborted.insert(id, d);
                    }
                    self.unsealed_at.insert(id, now);
                    self.unsealed += 1;
                }
                Err(e) => {
                    self.broken.get_or_insert_with(|| spill::unreadable(&keys[i], &e));
                    self.lost.insert(name);
                }
            }
        }
    }

    /// Whether `key` of `h` is one whose state was lost (its sealed state
    /// could not be read back, or a take-back could not restore it).
    pub(super) fn lost(&self, h: &History, key: KeyId) -> bool {
        let name = &h.keys[key.0 as usize];
        (!self.lost.is_empty() && spill::name(name).is_some_and(|n| self.lost.contains(&n)))
            || self.lost_other.iter().any(|k| k == name)
    }

    /// Marks the key `name` lost: its micro-ops are set aside from now on.
    pub(super) fn lose(&mut self, name: &Value) {
        match spill::name(name) {
            Some(n) => {
                self.lost.insert(n);
            }
            None if !self.lost_other.contains(name) => self.lost_other.push(name.clone()),
            None => {}
        }
    }

    /// Bytes written to the store.
    pub fn spill_bytes(&self) -> u64 {
        self.spill.bytes()
    }
}

/// A key's state as the store holds it: a byte saying which parts follow
/// (and, bit 2, whether the key has archived intermediate values, bit 3
/// archived values of failed transactions, bit 4 whether its last version
/// was read, bit 5 whether flips follow), then
/// the front (last version, its writer's line, the stale, assumed and
/// intermediate versions, then its flips: a count and each one's version,
/// round and line) and the failed transactions' values.
fn encode(front: Option<&Front>, aborted: Option<&Dense>) -> Vec<u8> {
    let mut b = Vec::new();
    encode_into(front, aborted, &mut b);
    b
}

/// [`encode`], appending to `b`.
pub(super) fn encode_into(front: Option<&Front>, aborted: Option<&Dense>, b: &mut Vec<u8>) {
    let archived = front.is_some_and(|f| f.archived);
    let aborted_archived = front.is_some_and(|f| f.aborted_archived);
    b.push(
        u8::from(front.is_some())
            | (u8::from(aborted.is_some()) << 1)
            | (u8::from(archived) << 2)
            | (u8::from(aborted_archived) << 3)
            | (u8::from(front.is_some_and(|f| f.seen)) << 4)
            | (u8::from(front.is_some_and(|f| !f.flips.is_empty())) << 5),
    );
    if let Some(f) = front {
        b.extend_from_slice(&f.value.to_le_bytes());
        b.extend_from_slice(&u64::from(f.line).to_le_bytes());
        f.stale.encode(b);
        f.assumed.encode(b);
        f.intermediate.encode(b);
        if !f.flips.is_empty() {
            b.extend_from_slice(&(f.flips.len() as u64).to_le_bytes());
            for x in &f.flips {
                b.extend_from_slice(&(x.value as u64).to_le_bytes());
                b.extend_from_slice(&(u64::from(x.round) << 32 | u64::from(x.line)).to_le_bytes());
            }
        }
    }
    if let Some(d) = aborted {
        d.encode(b);
    }
}

/// The state [`encode`] wrote; `None` when the bytes are not one.
pub(super) fn decode(bytes: &[u8]) -> Option<(Option<Front>, Option<Dense>)> {
    let take = crate::online::values::take_u64;
    let (&parts, mut b) = bytes.split_first()?;
    let front = if parts & 1 == 1 {
        let value = crate::online::values::take_u64(&mut b)? as i64;
        let line = u32::try_from(crate::online::values::take_u64(&mut b)?).ok()?;
        let stale = Ranges::decode(&mut b)?;
        let assumed = Ranges::decode(&mut b)?;
        let intermediate = Dense::decode(&mut b)?;
        let mut flips = Vec::new();
        if parts & 32 == 32 {
            for _ in 0..take(&mut b)? {
                let value = take(&mut b)? as i64;
                let at = take(&mut b)?;
                flips.push(super::flip::Flip { value, round: (at >> 32) as u32, line: at as u32 });
            }
        }
        Some(Front {
            value,
            line,
            stale,
            assumed,
            intermediate,
            archived: parts & 4 == 4,
            aborted_archived: parts & 8 == 8,
            seen: parts & 16 == 16,
            flips,
        })
    } else {
        None
    };
    let aborted = if parts & 2 == 2 { Some(Dense::decode(&mut b)?) } else { None };
    (b.is_empty() && parts < 64).then_some((front, aborted))
}

impl spill::Sealing for Collector {
    /// After a round's collection, with the key table `keys` and, per key,
    /// whether a held op mentions it (`used`), at input line `line`: seals
    /// the quiet keys (module docs) and returns the keys the key table may
    /// drop. The caller drops them and hands the renumbering to
    /// `remap_keys`.
    fn seal_keys(&mut self, keys: &[Value], used: &[bool], line: u32) -> Vec<bool> {
        let mut drop = vec![false; keys.len()];
        let mut sealing = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let id = KeyId(i as u32);
            if used.get(i).copied().unwrap_or(true) || Some(id) == self.fence_key {
                continue;
            }
            let front = self.fronts.get(&id);
            let aborted = self.aborted.get(&id);
            if front.is_none() && aborted.is_none() {
                drop[i] = true;
                continue;
            }
            let since = front.map_or(0, |f| f.line).max(self.unsealed_at.get(&id).copied().unwrap_or(0));
            if self.spill_failed.is_some() || line.saturating_sub(since) < self.quiet_lines {
                continue;
            }
            if let Some(name) = spill::name(k) {
                if self.spill.put(&name, &encode(front, aborted)) {
                    sealing.push(i);
                }
            }
        }
        if let Err(e) = self.spill.flush() {
            self.spill_failed = Some(format!("{e}: retired keys stay in memory"));
            return drop;
        }
        for i in sealing {
            let id = KeyId(i as u32);
            self.fronts.remove(&id);
            self.aborted.remove(&id);
            self.unsealed_at.remove(&id);
            drop[i] = true;
            self.sealed += 1;
        }
        if self.fronts.capacity() > 4 * self.fronts.len() + 64 {
            self.fronts.shrink_to(2 * self.fronts.len());
        }
        drop
    }

    /// The key table was renumbered: `map[old]` is each key's new id
    /// ([`NONE`]: dropped, which `seal_keys` allowed only for keys
    /// it holds nothing of).
    fn remap_keys(&mut self, map: &[u32]) {
        let id = |k: KeyId| KeyId(map.get(k.0 as usize).copied().unwrap_or(NONE));
        self.fronts = std::mem::take(&mut self.fronts).into_iter().map(|(k, f)| (id(k), f)).collect();
        self.aborted = std::mem::take(&mut self.aborted).into_iter().map(|(k, d)| (id(k), d)).collect();
        self.unsealed_at = std::mem::take(&mut self.unsealed_at).into_iter().map(|(k, l)| (id(k), l)).collect();
        for keys in self.flagged.values_mut() {
            for k in keys.iter_mut() {
                *k = id(*k);
            }
            keys.sort_unstable();
        }
        self.fence_key = self.fence_key.map(id);
        debug_assert!(!self.fronts.contains_key(&KeyId(NONE)), "a key with collected state left the key table");
        self.known_keys = map.iter().filter(|&&n| n != NONE).count() as u32;
    }

    fn spill_failed(&self) -> Option<&str> {
        self.spill_failed.as_deref()
    }
}
