//! List reads on the wire and at their key's owner, without copies.
//!
//! A list-append history reads each key's list again and again as it grows:
//! read by read, each list is the previous one plus a few elements. Sent
//! whole, a window's reads of a key would cost the square of the list's
//! length; stored whole at the owner, likewise. So each sender keeps, per
//! owner and key, the longest list it has sent, and sends a read as
//!
//! * [`WireList::Prefix`]: the first `n` elements of that list;
//! * [`WireList::Extend`]: that list followed by some elements (which
//!   becomes the longest);
//! * [`WireList::Full`]: the elements (a read that is neither, such as an
//!   incompatible order or a garbage read).
//!
//! The owner keeps, per key, one "spine": the longest list any sender has
//! sent whose prefixes the others' reads are (reads of a key that agree on
//! its version order are all prefixes of one list). A read that is a prefix
//! of the spine is stored as a length on it, one that extends the spine
//! extends it, and anything else is copied to a side arena. At the end the
//! spines and the side arena are laid out as the history's list elements.
//! Nothing is guessed: every read is reconstructed element for element.

use rustc_hash::FxHashMap;

/// A list read on the wire.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum WireList {
    /// The first `n` elements of the sender's longest list of the key.
    Prefix(u32),
    /// The sender's longest list of the key, then these elements.
    Extend(Vec<i64>),
    /// These elements.
    Full(Vec<i64>),
}

/// The sender's side: per (owner, key) the longest list sent, as a slice of
/// the window's list arena.
#[derive(Default)]
pub struct Encoder {
    longest: FxHashMap<(usize, u32), (usize, usize)>,
}

impl Encoder {
    /// Encodes `list` (stored at `start..start + len` of `arena`) for owner
    /// `to`, key `key`.
    pub fn encode(&mut self, arena: &[i64], to: usize, key: u32, start: usize, len: usize) -> WireList {
        let list = &arena[start..start + len];
        match self.longest.get(&(to, key)) {
            Some(&(ls, ll)) => {
                let longest = &arena[ls..ls + ll];
                if len <= ll && longest[..len] == *list {
                    WireList::Prefix(len as u32)
                } else if ll <= len && list[..ll] == *longest {
                    self.longest.insert((to, key), (start, len));
                    WireList::Extend(list[ll..].to_vec())
                } else {
                    WireList::Full(list.to_vec())
                }
            }
            None => {
                self.longest.insert((to, key), (start, len));
                WireList::Full(list.to_vec())
            }
        }
    }
}

/// Where a list lies at the owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The first `len` elements of key `key`'s spine.
    Spine {
        /// The owner's key.
        key: u32,
        /// Length.
        len: u32,
    },
    /// `start..start + len` of the side arena.
    Side {
        /// Start.
        start: u32,
        /// Length.
        len: u32,
    },
}

/// The owner's side.
#[derive(Default)]
pub struct Decoder {
    spines: Vec<Vec<i64>>,
    side: Vec<i64>,
    /// Per (sender, sender's key slot): where its longest list lies.
    longest: FxHashMap<(usize, u32), Place>,
}

impl Decoder {
    fn elements(&self, p: Place) -> &[i64] {
        match p {
            Place::Spine { key, len } => &self.spines[key as usize][..len as usize],
            Place::Side { start, len } => &self.side[start as usize..(start + len) as usize],
        }
    }

    /// Stores a whole list of owner key `key`.
    fn store(&mut self, key: u32, list: &[i64]) -> Place {
        if self.spines.len() <= key as usize {
            self.spines.resize_with(key as usize + 1, Vec::new);
        }
        let spine = &mut self.spines[key as usize];
        let n = list.len().min(spine.len());
        if spine[..n] == list[..n] {
            if list.len() > spine.len() {
                spine.extend_from_slice(&list[spine.len()..]);
            }
            return Place::Spine { key, len: list.len() as u32 };
        }
        let start = self.side.len() as u32;
        self.side.extend_from_slice(list);
        Place::Side { start, len: list.len() as u32 }
    }

    /// Decodes a list read of owner key `key`, sent by `sender` under its
    /// key slot `slot`; returns where it lies. `None` when the message
    /// refers to a list the sender never sent (a broken message).
    pub fn decode(&mut self, sender: usize, slot: u32, key: u32, w: &WireList) -> Option<Place> {
        let place = match w {
            WireList::Full(l) => {
                let p = self.store(key, l);
                self.longest.entry((sender, slot)).or_insert(p);
                return Some(p);
            }
            WireList::Prefix(n) => {
                let base = *self.longest.get(&(sender, slot))?;
                return match base {
                    Place::Spine { key, len } if *n <= len => Some(Place::Spine { key, len: *n }),
                    Place::Side { start, len } if *n <= len => Some(Place::Side { start, len: *n }),
                    _ => None,
                };
            }
            WireList::Extend(suffix) => {
                let base = *self.longest.get(&(sender, slot))?;
                match base {
                    Place::Spine { key: k, len } => {
                        let spine = &mut self.spines[k as usize];
                        let (len, end) = (len as usize, len as usize + suffix.len());
                        if spine.len() == len {
                            spine.extend_from_slice(suffix);
                            Place::Spine { key: k, len: end as u32 }
                        } else if spine.len() >= end && spine[len..end] == **suffix {
                            Place::Spine { key: k, len: end as u32 }
                        } else {
                            let mut whole = spine[..len].to_vec();
                            whole.extend_from_slice(suffix);
                            let start = self.side.len() as u32;
                            self.side.extend_from_slice(&whole);
                            Place::Side { start, len: whole.len() as u32 }
                        }
                    }
                    Place::Side { start, len } => {
                        if (start + len) as usize == self.side.len() {
                            self.side.extend_from_slice(suffix);
                            Place::Side { start, len: len + suffix.len() as u32 }
                        } else {
                            let mut whole = self.elements(base).to_vec();
                            whole.extend_from_slice(suffix);
                            let start = self.side.len() as u32;
                            self.side.extend_from_slice(&whole);
                            Place::Side { start, len: whole.len() as u32 }
                        }
                    }
                }
            }
        };
        self.longest.insert((sender, slot), place);
        Some(place)
    }

    /// Lays the lists out as one element arena: returns it and a function
    /// from a [`Place`] to `(start, len)` in it.
    pub fn finish(self) -> (Vec<i64>, impl Fn(Place) -> (u32, u32)) {
        let mut arena = Vec::with_capacity(self.spines.iter().map(Vec::len).sum::<usize>() + self.side.len());
        let mut offsets = Vec::with_capacity(self.spines.len());
        for s in &self.spines {
            offsets.push(arena.len() as u32);
            arena.extend_from_slice(s);
        }
        let side = arena.len() as u32;
        arena.extend_from_slice(&self.side);
        let at = move |p: Place| match p {
            Place::Spine { key, len } => (offsets[key as usize], len),
            Place::Side { start, len } => (side + start, len),
        };
        (arena, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every read comes back element for element, whatever the order of
    /// growth, divergence and senders.
    #[test]
    fn lists_round_trip_through_prefixes_extensions_and_divergence() {
        let arena: Vec<i64> = vec![1, 2, 3, 4, 5, 9, 9, 1, 2, 7];
        // (start, len) reads of one key by one sender, in order.
        let reads = [(0, 2), (0, 4), (0, 1), (5, 2), (0, 5), (7, 3), (0, 3), (7, 2)];
        let mut enc = Encoder::default();
        let mut dec = Decoder::default();
        let mut places = Vec::new();
        for &(s, l) in &reads {
            let w = enc.encode(&arena, 0, 0, s, l);
            places.push(dec.decode(3, 0, 0, &w).expect("decodes"));
        }
        // A second sender whose first read diverges, then agrees.
        let other: Vec<i64> = vec![1, 2, 3, 4, 5, 6];
        let mut enc2 = Encoder::default();
        let mut more = Vec::new();
        for &(s, l) in &[(0usize, 6usize), (0, 2)] {
            let w = enc2.encode(&other, 0, 0, s, l);
            more.push((dec.decode(4, 0, 0, &w).expect("decodes"), other[s..s + l].to_vec()));
        }
        let (out, at) = dec.finish();
        for (p, &(s, l)) in places.iter().zip(&reads) {
            let (a, n) = at(*p);
            assert_eq!(&out[a as usize..(a + n) as usize], &arena[s..s + l]);
        }
        for (p, want) in more {
            let (a, n) = at(p);
            assert_eq!(&out[a as usize..(a + n) as usize], &want[..]);
        }
    }

    #[test]
    fn a_prefix_of_a_list_never_sent_is_refused() {
        let mut dec = Decoder::default();
        assert_eq!(dec.decode(0, 0, 0, &WireList::Prefix(1)), None);
    }
}
