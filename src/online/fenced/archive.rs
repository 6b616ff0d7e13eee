//! Archiving the values collected transactions overwrote within
//! themselves (a register collector's *intermediate* values) to the spill
//! store, so that memory does not grow with the run.
//!
//! ## Why
//! A later read of a value a collected transaction wrote and then
//! overwrote itself is an intermediate read (`G1b`), reported with that
//! name; every other read of a collected version that is not the last is
//! reported (or set aside) under another. So, per key, the collector keeps
//! the set of those values exactly ([`Dense`]). On a hot key they are
//! scattered over all its versions: about one 12-byte word per value, and
//! their number grows with the run (`isolde gen rw-register`'s shape:
//! 25,000 words per 500,000 transactions, most of the 0.8 MB per million
//! transactions that the register window crept by before).
//!
//! ## How
//! When a key's in-memory set reaches [`ARCHIVE_WORDS`] words, it is
//! written to the spill store (the same append-only file as sealed keys,
//! under the key's name behind a tag byte no key name starts with) and
//! cleared, and the key's [`Front`](super::Front) remembers that it has
//! archived values. Only a read of a collected version other than the last
//! one (an anomaly, or a read the run cannot judge: rare) looks there: all
//! of the key's archived records are read back, merged into one, checked,
//! and put back as one record. A key with fewer words (a cold key) keeps
//! them in memory, where sealing takes them when the key retires. The
//! store's index costs 8 bytes per record, one per [`ARCHIVE_WORDS`] words
//! archived. A record that cannot be written leaves the set in memory; one
//! that cannot be read back makes the read unjudged (the run says so)
//! instead of guessing its name.
//!
//! ## Failed transactions' values
//! The values collected failed transactions wrote are kept per key too
//! (a later read of one is `G1a`), and a store that aborts often (a
//! snapshot-isolation store: first committer wins) writes as many of them
//! as of versions: about a bit per aborted write, 1.5 MB per million
//! transactions. A read of one is checked before anything else, so most
//! must stay in memory; but those among the key's ordered collected
//! versions (the ranges of `stale` join across them) are read only where a
//! read of a collected version other than the last is judged: those are
//! archived the same way (under another tag), once the key holds
//! [`ARCHIVE_WORDS`] words of them, and looked up there first.

use super::Collector;
use crate::history::{History, KeyId, Value};
use crate::online::spill;
use crate::online::values::Dense;

/// Words of a key's intermediate values kept in memory before they are
/// archived (768 bytes), unless the collector says otherwise.
pub const ARCHIVE_WORDS: usize = 64;

/// The tag byte before a key's name for its archived intermediate values
/// ([`spill::name`]'s names start with a type tag below it).
const TAG: u8 = 0xA7;

/// The tag for its archived values of failed transactions.
const ABORTED_TAG: u8 = 0xA8;

/// The store's name for `key`'s archived values under `tag`.
fn archive_name(tag: u8, key: &Value) -> Option<Vec<u8>> {
    spill::name(key).map(|n| [&[tag][..], &n].concat())
}

impl Collector {
    /// Words of a key's intermediate values kept in memory.
    pub(super) fn archive_limit(&self) -> usize {
        if self.archive_words == 0 {
            ARCHIVE_WORDS
        } else {
            self.archive_words
        }
    }

    /// Archives the intermediate values of each of `keys` (keys of `h`)
    /// whose in-memory set reached [`Collector::archive_limit`] words.
    pub(super) fn archive_intermediate(&mut self, h: &History, keys: impl Iterator<Item = KeyId>) {
        if self.spill_failed.is_some() {
            return;
        }
        let mut queued = Vec::new();
        for k in keys {
            let Some(f) = self.fronts.get(&k) else { continue };
            if f.intermediate.words() < self.archive_limit() {
                continue;
            }
            let Some(name) = archive_name(TAG, &h.keys[k.0 as usize]) else { continue };
            let mut bytes = Vec::new();
            f.intermediate.encode(&mut bytes);
            if self.spill.put(&name, &bytes) {
                queued.push(k);
            }
        }
        if queued.is_empty() {
            return;
        }
        if let Err(e) = self.spill.flush() {
            self.spill_failed = Some(format!("{e}: retired keys and intermediate values stay in memory"));
            return;
        }
        for k in queued {
            if let Some(f) = self.fronts.get_mut(&k) {
                f.intermediate = Dense::default();
                f.archived = true;
            }
        }
    }

    /// Archives the values of collected failed transactions of key `k`
    /// (of `h`) that lie among its ordered versions, once it holds
    /// [`Collector::archive_limit`] words of them.
    pub(super) fn archive_aborted(&mut self, h: &History, k: KeyId) {
        let limit = self.archive_limit();
        let (Some(f), Some(d)) = (self.fronts.get(&k), self.aborted.get_mut(&k)) else { return };
        if self.spill_failed.is_some() || d.words() < limit {
            return;
        }
        let Some(name) = archive_name(ABORTED_TAG, &h.keys[k.0 as usize]) else { return };
        let taken = d.take_where(|v| f.stale.contains(v));
        if taken.is_empty() {
            return;
        }
        let mut bytes = Vec::new();
        taken.encode(&mut bytes);
        if !self.spill.put(&name, &bytes) {
            d.absorb(&taken);
            return;
        }
        if let Err(e) = self.spill.flush() {
            d.absorb(&taken);
            self.spill_failed = Some(format!("{e}: retired keys and archived values stay in memory"));
            return;
        }
        if let Some(f) = self.fronts.get_mut(&k) {
            f.aborted_archived = true;
        }
    }

    /// Whether `v` is an archived value of a failed transaction of `key`,
    /// or why that could not be read back.
    pub(super) fn archived_aborted(&mut self, key: &Value, v: i64) -> Result<bool, String> {
        self.archived(ABORTED_TAG, key, v)
    }

    /// Whether `v` is an archived intermediate value of `key`, or why that
    /// could not be read back.
    pub(super) fn archived_intermediate(&mut self, key: &Value, v: i64) -> Result<bool, String> {
        self.archived(TAG, key, v)
    }

    /// Whether `v` is among `key`'s values archived under `tag`: every
    /// record read back, merged, and put back as one.
    fn archived(&mut self, tag: u8, key: &Value, v: i64) -> Result<bool, String> {
        let Some(name) = archive_name(tag, key) else { return Ok(false) };
        let mut all = Dense::default();
        let mut found = false;
        while let Some(bytes) = self.spill.take(&name).map_err(|e| e.to_string())? {
            let d = Dense::decode(&mut &bytes[..]).ok_or("a damaged record")?;
            all.absorb(&d);
            found = true;
        }
        if found {
            let mut bytes = Vec::new();
            all.encode(&mut bytes);
            if !self.spill.put(&name, &bytes) || self.spill.flush().is_err() {
                return Err("the spill file took no more records".into());
            }
        }
        Ok(all.contains(v))
    }
}
