//! The disk store of sealed keys: what the collector keeps of a key the
//! workload retired, out of memory.
//!
//! ## Why keys are sealed
//! The list-append collector ([`super::collect`]) keeps, per key, the
//! prefix of its version order that collected transactions made, because
//! any later read of the key must begin with it. Elle's generator and
//! Jepsen's workloads retire keys (a key gets a bounded number of appends,
//! then a fresh key takes its place), so that state grows with the run (a
//! few hundred bytes per key with the key table) although no later op
//! touches most of it. A key whose state is quiet (no held transaction
//! mentions it, and nothing collected appended to it for the collector's
//! quiet lines) is therefore *sealed*: its state goes to this store and
//! leaves memory, its entry in the key table included. An op that mentions
//! a sealed key again (rare in generated histories, possible in a real
//! one) interns it afresh; the collector then looks its name up here and
//! *unseals* it (takes its state back) before the round checks anything,
//! so every read of it is checked exactly as if it had never left.
//!
//! ## The store
//! One append-only file per run, created in the chosen directory
//! ([`std::env::temp_dir`], that is `$TMPDIR`, by default) on the first
//! seal and unlinked at once on Unix (the open handle keeps it alive, so it
//! is gone when the run ends however it ends; elsewhere it is removed when
//! the store is dropped). A record is its length, the key's name and the
//! state's bytes, padded to [`ALIGN`] bytes. In memory the store keeps only
//! a sorted index of `(32-bit hash of the name, record position /
//! ALIGN)`, 8 bytes per sealed key: a lookup is a binary search, then a
//! read of each record whose hash matches to compare the whole name (a
//! hash collision costs a read, never a wrong answer). A hash table of
//! names would cost several times that; a Bloom filter with per-batch
//! indexes on disk would cost less memory but several reads per lookup.
//! Unsealing takes the record out of the index (a tombstone: the entry's
//! position becomes `u32::MAX`, which keeps the order), so a key sealed
//! again is found at its newest record. The store holds up to
//! `u32::MAX * ALIGN` bytes (64 GiB); beyond that [`Spill::put`] refuses
//! and the collector keeps the key in memory.

use std::fs::{File, OpenOptions};
use std::hash::Hasher;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::history::{Atom, Value};

/// Records start at multiples of this many bytes.
pub const ALIGN: u64 = 16;

/// Position of a record taken back by [`Spill::take`].
const TOMBSTONE: u32 = u32::MAX;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum SpillError {
    /// The file could not be created, written or read.
    #[error("spill file {path}: {source}")]
    Io {
        /// The file (or the directory it was to be created in).
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A record read back is not one this store wrote.
    #[error("spill file {path}: record at byte {at} is damaged")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Where the record starts.
        at: u64,
    },
}

/// The disk store of sealed keys (see the module docs).
pub struct Spill {
    /// Where the file is created.
    dir: PathBuf,
    /// The file, once something was sealed, and its path.
    file: Option<(File, PathBuf)>,
    /// Bytes written.
    len: u64,
    /// `(hash << 32) | position / ALIGN`, sorted.
    index: Vec<u64>,
    /// Tombstones in `index`.
    dead: usize,
    /// Records written since the last [`Spill::flush`], and their index
    /// entries.
    buf: Vec<u8>,
    batch: Vec<u64>,
    /// Set when a write failed or the file reached its largest size:
    /// nothing more is stored.
    full: bool,
}

impl Spill {
    /// An empty store whose file (created on the first seal) goes in `dir`
    /// (`None`: [`std::env::temp_dir`]).
    pub fn new(dir: Option<&Path>) -> Spill {
        Spill {
            dir: dir.map_or_else(std::env::temp_dir, Path::to_path_buf),
            file: None,
            len: 0,
            index: Vec::new(),
            dead: 0,
            buf: Vec::new(),
            batch: Vec::new(),
            full: false,
        }
    }

    /// Keys sealed and not taken back.
    pub fn sealed(&self) -> usize {
        self.index.len() + self.batch.len() - self.dead
    }

    /// Bytes of the file (records written, including those taken back).
    pub fn bytes(&self) -> u64 {
        self.len + self.buf.len() as u64
    }

    /// Queues `state` under `name` (an encoded key, [`name`]); written at
    /// the next [`Spill::flush`]. Returns `false` when the store is full.
    pub fn put(&mut self, name: &[u8], state: &[u8]) -> bool {
        let at = self.len + self.buf.len() as u64;
        let slot = at / ALIGN;
        if self.full || slot >= u64::from(TOMBSTONE) {
            self.full = true;
            return false;
        }
        let body = 4 + name.len() + state.len();
        self.buf.extend_from_slice(&(body as u32).to_le_bytes());
        self.buf.extend_from_slice(&(name.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(name);
        self.buf.extend_from_slice(state);
        let padded = (4 + body as u64).div_ceil(ALIGN) * ALIGN;
        self.buf.resize((at + padded - self.len) as usize, 0);
        self.batch.push((u64::from(hash(name)) << 32) | slot);
        true
    }

    /// Writes the records queued by [`Spill::put`] and indexes them.
    pub fn flush(&mut self) -> Result<(), SpillError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let (file, path) = open(&mut self.file, &self.dir)?;
        if let Err(source) = file.write_all(&self.buf) {
            // What was written of it lies past `len`, where no index entry
            // points; nothing more is written.
            self.buf.clear();
            self.batch.clear();
            self.full = true;
            return Err(SpillError::Io { path: path.clone(), source });
        }
        self.len += self.buf.len() as u64;
        self.buf.clear();
        if self.buf.capacity() > 1 << 20 {
            self.buf.shrink_to(1 << 16);
        }
        let mut batch = std::mem::take(&mut self.batch);
        batch.sort_unstable();
        merge_into(&mut self.index, &batch);
        batch.clear();
        self.batch = batch;
        Ok(())
    }

    /// The state sealed under `name`, taken out of the store (a later
    /// lookup does not find it), or `None` when it holds none.
    pub fn take(&mut self, name: &[u8]) -> Result<Option<Vec<u8>>, SpillError> {
        self.flush()?;
        let h = u64::from(hash(name)) << 32;
        let from = self.index.partition_point(|&e| e < h);
        let to = self.index.partition_point(|&e| e < h + u64::from(TOMBSTONE));
        // Newest first: a key sealed, taken and sealed again has one live
        // record, but look at the newest anyway.
        for i in (from..to).rev() {
            let at = (self.index[i] & 0xFFFF_FFFF) * ALIGN;
            if let Some(state) = self.read(at, name)? {
                self.index[i] = h | u64::from(TOMBSTONE);
                self.dead += 1;
                self.purge();
                return Ok(Some(state));
            }
        }
        Ok(None)
    }

    /// The state of the record at `at` when its name is `name`.
    fn read(&mut self, at: u64, name: &[u8]) -> Result<Option<Vec<u8>>, SpillError> {
        let end = self.len;
        let (file, path) = open(&mut self.file, &self.dir)?;
        let io = |source| SpillError::Io { path: path.clone(), source };
        let damaged = || SpillError::Damaged { path: path.clone(), at };
        file.seek(SeekFrom::Start(at)).map_err(io)?;
        let mut head = [0u8; 8];
        file.read_exact(&mut head).map_err(io)?;
        let body = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let name_len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        if body < 4 + name_len || at + 4 + body as u64 > end {
            return Err(damaged());
        }
        if name_len != name.len() {
            return Ok(None);
        }
        let mut rest = vec![0u8; body - 4];
        file.read_exact(&mut rest).map_err(io)?;
        if &rest[..name_len] != name {
            return Ok(None);
        }
        rest.drain(..name_len);
        Ok(Some(rest))
    }

    /// Drops the tombstones once they are a quarter of the index.
    fn purge(&mut self) {
        if self.dead * 4 > self.index.len() {
            self.index.retain(|&e| e & 0xFFFF_FFFF != u64::from(TOMBSTONE));
            self.index.shrink_to_fit();
            self.dead = 0;
        }
    }
}

/// The store's file, created in `dir` on first use.
fn open<'a>(file: &'a mut Option<(File, PathBuf)>, dir: &Path) -> Result<&'a mut (File, PathBuf), SpillError> {
    if file.is_none() {
        *file = Some(create(dir)?);
    }
    file.as_mut().ok_or_else(|| SpillError::Io { path: dir.to_path_buf(), source: std::io::ErrorKind::NotFound.into() })
}

impl Default for Spill {
    fn default() -> Self {
        Spill::new(None)
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        // On Unix the file was unlinked when it was created.
        #[cfg(not(unix))]
        if let Some((_, path)) = self.file.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A new spill file in `dir`, opened for reading and appending; on Unix
/// its name is removed at once.
fn create(dir: &Path) -> Result<(File, PathBuf), SpillError> {
    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut tries = 0;
    loop {
        let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("isolde-spill-{}-{n}", std::process::id()));
        match OpenOptions::new().read(true).append(true).create_new(true).open(&path) {
            Ok(file) => {
                #[cfg(unix)]
                std::fs::remove_file(&path).map_err(|source| SpillError::Io { path: path.clone(), source })?;
                return Ok((file, path));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
            Err(source) => return Err(SpillError::Io { path, source }),
        }
    }
}

/// Merges the sorted `batch` into the sorted `index`, in place (from the
/// back, so nothing is copied twice).
fn merge_into(index: &mut Vec<u64>, batch: &[u64]) {
    let (mut i, mut j) = (index.len(), batch.len());
    index.resize(i + j, 0);
    let mut out = index.len();
    while j > 0 {
        out -= 1;
        if i > 0 && index[i - 1] > batch[j - 1] {
            index[out] = index[i - 1];
            i -= 1;
        } else {
            index[out] = batch[j - 1];
            j -= 1;
        }
    }
}

/// The 32-bit hash of an encoded name.
fn hash(name: &[u8]) -> u32 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(name);
    (h.finish() >> 32) as u32
}

/// A key's name as the store compares it: its canonical form (the key
/// table's equality, see [`Value::canonical`]) as a tag byte and the
/// atom's bytes; `None` for keys that are not integers, keywords, strings,
/// symbols or big integers (those are never sealed).
pub fn name(key: &Value) -> Option<Vec<u8>> {
    let Value::Atom(a) = key.canonical() else { return None };
    let (tag, bytes): (u8, &[u8]) = match &a {
        Atom::Int(n) => return Some([&[0u8][..], &n.to_le_bytes()].concat()),
        Atom::Keyword(s) => (1, s.as_bytes()),
        Atom::Str(s) => (2, s.as_bytes()),
        Atom::Symbol(s) => (3, s.as_bytes()),
        Atom::BigInt(s) => (4, s.as_bytes()),
        Atom::Nil | Atom::Bool(_) => return None,
    };
    Some([&[tag][..], bytes].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Spill {
        Spill::new(None)
    }

    #[test]
    fn what_is_sealed_is_found_by_name_once() {
        let mut s = store();
        let names: Vec<Vec<u8>> = (0..1000i64).map(|k| name(&Value::Atom(Atom::Int(k))).expect("int")).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(s.put(n, &vec![i as u8; i % 40]));
            if i % 97 == 0 {
                s.flush().expect("flush");
            }
        }
        s.flush().expect("flush");
        assert_eq!(s.sealed(), 1000);
        assert_eq!(s.bytes() % ALIGN, 0);
        for (i, n) in names.iter().enumerate().rev() {
            assert_eq!(s.take(n).expect("take"), Some(vec![i as u8; i % 40]), "{i}");
            assert_eq!(s.take(n).expect("take"), None, "taken once: {i}");
        }
        assert_eq!(s.sealed(), 0);
        assert_eq!(s.take(&name(&Value::Atom(Atom::Int(5000))).expect("int")).expect("take"), None);
    }

    #[test]
    fn a_key_sealed_again_is_found_at_its_newest_record() {
        let mut s = store();
        let k = name(&Value::Atom(Atom::Keyword("x".into()))).expect("keyword");
        assert!(s.put(&k, b"first"));
        assert_eq!(s.take(&k).expect("take"), Some(b"first".to_vec()));
        assert!(s.put(&k, b"second"));
        assert_eq!(s.take(&k).expect("take"), Some(b"second".to_vec()));
        assert_eq!(s.take(&k).expect("take"), None);
    }

    #[test]
    fn names_follow_the_key_tables_equality() {
        let big = |s: &str| Value::Atom(Atom::BigInt(s.into()));
        assert_eq!(name(&big("7N")), name(&Value::Atom(Atom::Int(7))));
        assert_ne!(name(&Value::Atom(Atom::Keyword("x".into()))), name(&Value::Atom(Atom::Str("x".into()))));
        assert_eq!(name(&Value::Atom(Atom::Nil)), None);
        assert_eq!(name(&Value::Vector(vec![])), None);
    }

    #[test]
    fn merging_keeps_the_index_sorted() {
        let mut index = vec![1, 5, 9];
        merge_into(&mut index, &[0, 5, 6, 10]);
        assert_eq!(index, vec![0, 1, 5, 5, 6, 9, 10]);
    }
}

/// A collector whose per-key states go to a [`Spill`] once quiet (the
/// list-append and the register collectors): what the follow loop needs
/// to seal after a round and renumber the key table.
pub trait Sealing {
    /// Seals the quiet keys of the key table `keys` (`used`: mentioned by
    /// a held op) at input line `line`; returns the keys the table may
    /// drop.
    fn seal_keys(&mut self, keys: &[Value], used: &[bool], line: u32) -> Vec<bool>;
    /// The key table was renumbered: `map[old]` is each key's new id.
    fn remap_keys(&mut self, map: &[u32]);
    /// Why sealing stopped, once a write to the store failed.
    fn spill_failed(&self) -> Option<&str>;
}

/// Takes back from `spill` the state of each key of `keys[from..]` that it
/// holds: per such key, its index, its name and the state `decode` made of
/// the record (or why it could not be read back).
pub fn take_back<T>(
    spill: &mut Spill,
    keys: &[Value],
    from: usize,
    decode: impl Fn(&[u8]) -> Option<T>,
) -> Vec<(usize, Vec<u8>, Result<T, String>)> {
    let mut out = Vec::new();
    if spill.sealed() == 0 {
        return out;
    }
    for (i, k) in keys.iter().enumerate().skip(from) {
        let Some(name) = name(k) else { continue };
        let state = match spill.take(&name) {
            Ok(None) => continue,
            Ok(Some(bytes)) => decode(&bytes).ok_or_else(|| "a damaged record".to_string()),
            Err(e) => Err(e.to_string()),
        };
        out.push((i, name, state));
    }
    out
}

/// Why a run can no longer be `valid` once the state of `key` could not be
/// read back (`e`).
pub fn unreadable(key: &Value, e: &str) -> String {
    format!("the collected state of key {key} could not be read back from the spill file ({e}): its later reads were not checked")
}
