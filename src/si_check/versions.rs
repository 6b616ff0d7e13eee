//! The versions a replay tracks, and who reads each, in flat arrays.
//!
//! A version is a key's value as one transaction left it (its final write
//! of the key) or the key's initial state. The serial replay
//! ([`super::guess`]) asks, for the current version of a key, which
//! transactions read it and how many of them are not yet placed. Keyed by
//! `(key, writer)` in hash maps holding a vector each, that index cost
//! about a hundred bytes per version (bucket, vector header, the smallest
//! heap block), more than the transactions themselves at a million
//! transactions. Here a version is a number: the position of the write in
//! [`Txns::writes`] (a transaction writes each key once there), or, for a
//! key's initial state, the number of writes plus the key. Its readers lie
//! in one array by version (compressed rows), in the order the reads come
//! (by reader, then by read, then by candidate), so every question gets the
//! same answer, in the same order, as from the maps; a version nobody reads
//! has no readers, as it had no entry.
//!
//! A read names the version of a transaction's write (or the initial
//! state); one whose writer has no final write of the key (which
//! [`super::txns::extract`] does not produce) gets a number past those,
//! through a map, so nothing is lost either way.

use rustc_hash::FxHashMap;

use super::txns::{Source, TxnId, Txns};

/// The initial state's "writer" (as in [`super::guess`]).
pub const INIT: TxnId = TxnId::MAX;

/// Every version read, with its readers.
pub struct Versions {
    /// Versions `0..writes` are the writes of [`Txns::writes`].
    writes: u32,
    /// Keys with an initial-state version (`writes + key`).
    keys: u32,
    /// Versions of writers that did not write the key (see the module docs).
    others: FxHashMap<(u32, TxnId), u32>,
    /// Readers of version `v`: `readers[start[v]..start[v + 1]]`.
    start: Vec<u32>,
    readers: Vec<TxnId>,
}

impl Versions {
    /// Indexes every read of `txns`.
    pub fn build(txns: &Txns) -> Versions {
        let key_end = |k: &super::txns::Read| k.key.0 + 1;
        let keys = txns.reads.iter().map(key_end).max().unwrap_or(0);
        let mut v = Versions {
            writes: txns.writes.len() as u32,
            keys,
            others: FxHashMap::default(),
            start: Vec::new(),
            readers: Vec::new(),
        };
        let mut counts = vec![0u32; (v.writes + keys) as usize + 1];
        v.each_read(txns, |id, _| {
            if id + 1 >= counts.len() {
                counts.resize(id + 2, 0);
            }
            counts[id + 1] += 1;
        });
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut fill = counts.clone();
        let mut readers = vec![0 as TxnId; counts.last().copied().unwrap_or(0) as usize];
        v.each_read(txns, |id, t| {
            readers[fill[id] as usize] = t;
            fill[id] += 1;
        });
        v.start = counts;
        v.readers = readers;
        v
    }

    /// Calls `f(version, reader)` for every (read, candidate writer), in
    /// order, numbering versions of writers without the key's write as met.
    fn each_read(&mut self, txns: &Txns, mut f: impl FnMut(usize, TxnId)) {
        for t in 0..txns.len() as TxnId {
            for r in txns.reads_of(t) {
                let k = r.key.0;
                let mut one = |w: TxnId, v: &mut Versions| {
                    let id = match v.id(txns, k, w) {
                        Some(id) => id,
                        None => {
                            let id = v.writes + v.keys + v.others.len() as u32;
                            v.others.insert((k, w), id);
                            id
                        }
                    };
                    f(id as usize, t);
                };
                match r.from {
                    Source::Init => one(INIT, self),
                    Source::Txn(w, _) => one(w, self),
                    Source::Choice(j) => {
                        for &w in &txns.choices[j as usize].cands {
                            one(w, self);
                        }
                    }
                }
            }
        }
    }

    /// The number of version `(k, w)` (`w` [`INIT`] for the initial state),
    /// if it can be read.
    #[inline]
    pub fn id(&self, txns: &Txns, k: u32, w: TxnId) -> Option<u32> {
        if w == INIT {
            return (k < self.keys).then_some(self.writes + k);
        }
        if (w as usize) < txns.len() {
            if let Some(i) = txns.writes_of(w).iter().position(|x| x.key.0 == k) {
                return Some(txns.write_start[w as usize] + i as u32);
            }
        }
        self.others.get(&(k, w)).copied()
    }

    /// The number of versions (the length of a per-version array).
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    /// The readers of version `id`, in read order.
    #[inline]
    pub fn readers(&self, id: u32) -> &[TxnId] {
        let i = id as usize;
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.readers[a as usize..b as usize],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::KeyId;
    use crate::si_check::txns::{Choice, Read, Write};

    /// Transactions: 0 writes keys 0 and 1, 1 writes key 1; 2 reads key 0
    /// from 0, key 1 from 0 or 1 (a choice), key 2 initial; 3 reads key 1
    /// from 1 and key 0 from 1 (which has no final write of key 0).
    fn txns() -> Txns {
        let w = |k: u32, value: i64| Write { key: KeyId(k), value, mop: 0 };
        let r = |k: u32, from: Source| Read { key: KeyId(k), from, mop: 0 };
        Txns {
            op: vec![0, 1, 2, 3],
            process: vec![0, 1, 2, 3],
            writes: vec![w(0, 1), w(1, 1), w(1, 2)],
            write_start: vec![0, 2, 3, 3, 3],
            reads: vec![
                r(0, Source::Txn(0, 1)),
                r(1, Source::Choice(0)),
                r(2, Source::Init),
                r(1, Source::Txn(1, 2)),
                r(0, Source::Txn(1, 9)),
            ],
            read_start: vec![0, 0, 0, 3, 5],
            choices: vec![Choice { reader: 2, key: KeyId(1), value: 1, mop: 1, cands: vec![1, 0] }],
            ..Txns::default()
        }
    }

    #[test]
    fn readers_are_indexed_by_version_in_read_order() {
        let t = txns();
        let v = Versions::build(&t);
        let readers = |k, w| v.id(&t, k, w).map(|id| v.readers(id).to_vec());
        assert_eq!(readers(0, 0), Some(vec![2]));
        assert_eq!(readers(1, 0), Some(vec![2]));
        assert_eq!(readers(1, 1), Some(vec![2, 3]));
        assert_eq!(readers(2, INIT), Some(vec![2]));
        assert_eq!(readers(0, INIT), Some(vec![]));
        assert_eq!(readers(0, 1), Some(vec![3]), "a writer without the key's final write");
        assert_eq!(readers(0, 2), None);
        assert_eq!(readers(7, INIT), None);
        assert_eq!(v.len(), 3 + 3 + 1);
    }
}
