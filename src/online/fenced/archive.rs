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

use super::Collector;
use crate::history::{History, KeyId, Value};
use crate::online::spill;
use crate::online::values::Dense;

/// Words of a key's intermediate values kept in memory before they are
/// archived (768 bytes), unless the collector says otherwise.
pub const ARCHIVE_WORDS: usize = 64;

/// The tag byte before a key's name for its archived values
/// ([`spill::name`]'s names start with a type tag below it).
const TAG: u8 = 0xA7;

/// The store's name for `key`'s archived values.
fn archive_name(key: &Value) -> Option<Vec<u8>> {
    spill::name(key).map(|n| [&[TAG][..], &n].concat())
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
            let Some(name) = archive_name(&h.keys[k.0 as usize]) else { continue };
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

    /// Whether `v` is an archived intermediate value of `key`, or why that
    /// could not be read back.
    pub(super) fn archived_intermediate(&mut self, key: &Value, v: i64) -> Result<bool, String> {
        let Some(name) = archive_name(key) else { return Ok(false) };
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
