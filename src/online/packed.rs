//! A sequence of integers held as variable-length deltas.
//!
//! The collector keeps, per key, the part of its version order that
//! collected transactions made ([`super::collect`]); a later read of the
//! key must begin with it. A key the workload still uses keeps it in memory
//! (a retired one is sealed to disk, [`super::spill`], in this encoding),
//! so its size is what the collector's memory grows by. Jepsen's and `isolde gen`'s list-append workloads append
//! each key's values in increasing order (1, 2, 3, …) and the version order
//! stays close to that order, so consecutive elements differ by a little:
//! each is stored as its difference from the one before, zigzag-encoded as
//! a LEB128 varint (one byte for differences within ±63), instead of eight
//! bytes. Any sequence is held exactly (wrapping differences). Long
//! sequences (a key the workload never retires) also keep a sorted copy
//! for membership. No crate fits: delta-coded integer *sequences* with
//! prefix comparison, not sets or sorted lists.

/// Sequences longer than this keep a sorted copy for membership; shorter
/// ones are scanned.
const INDEX_ABOVE: usize = 512;

/// A sequence of `i64`s, delta- and varint-coded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packed {
    bytes: Vec<u8>,
    len: usize,
    last: i64,
    /// The elements, sorted, once there are more than [`INDEX_ABOVE`].
    sorted: Vec<i64>,
}

impl Packed {
    /// The sequence `elems`.
    pub fn from_slice(elems: &[i64]) -> Packed {
        let mut p = Packed::default();
        p.extend(elems);
        p
    }

    /// Its length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `elems`; keeps the vectors tight.
    pub fn extend(&mut self, elems: &[i64]) {
        for &e in elems {
            let d = e.wrapping_sub(self.last);
            let mut z = ((d << 1) ^ (d >> 63)) as u64;
            while z >= 0x80 {
                self.bytes.push((z as u8) | 0x80);
                z >>= 7;
            }
            self.bytes.push(z as u8);
            self.last = e;
        }
        self.len += elems.len();
        self.bytes.shrink_to_fit();
        if self.len > INDEX_ABOVE {
            if self.sorted.is_empty() {
                self.sorted = self.iter().collect();
            } else {
                self.sorted.extend_from_slice(elems);
            }
            // Nearly sorted already: pattern-defeating quicksort is close
            // to linear here.
            self.sorted.sort_unstable();
            self.sorted.shrink_to_fit();
        }
    }

    /// The elements, in order.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        let (mut at, mut prev) = (0usize, 0i64);
        std::iter::from_fn(move || {
            let (mut z, mut shift) = (0u64, 0u32);
            loop {
                let b = *self.bytes.get(at)?;
                at += 1;
                z |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    break;
                }
                shift += 7;
            }
            let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
            prev = prev.wrapping_add(d);
            Some(prev)
        })
    }

    /// The elements as a vector (for a witness).
    pub fn to_vec(&self) -> Vec<i64> {
        self.iter().collect()
    }

    /// Whether `read` begins with the whole sequence.
    pub fn is_prefix_of(&self, read: &[i64]) -> bool {
        read.len() >= self.len && self.iter().zip(read).all(|(a, &b)| a == b)
    }

    /// Whether the sequence begins with `read`.
    pub fn starts_with(&self, read: &[i64]) -> bool {
        read.len() <= self.len && self.iter().zip(read).all(|(a, &b)| a == b)
    }

    /// Whether `e` is one of its elements.
    pub fn contains(&self, e: i64) -> bool {
        if self.sorted.is_empty() {
            self.iter().any(|x| x == e)
        } else {
            self.sorted.binary_search(&e).is_ok()
        }
    }

    /// The encoded elements (what [`Packed::from_encoded`] reads back).
    pub fn encoded(&self) -> &[u8] {
        &self.bytes
    }

    /// The sequence of `len` elements whose encoding [`Packed::encoded`]
    /// gave, or `None` when `bytes` is not one.
    pub fn from_encoded(bytes: &[u8], len: usize) -> Option<Packed> {
        let raw = Packed { bytes: bytes.to_vec(), len, last: 0, sorted: Vec::new() };
        let elems = raw.to_vec();
        let p = Packed::from_slice(&elems);
        (elems.len() == len && p.bytes == raw.bytes).then_some(p)
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.sorted.capacity() * std::mem::size_of::<i64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_sequence_is_held_exactly() {
        let seq = [1, 2, 3, 7, 8, 5, 4, 9, 10, 11, -3, i64::MAX, i64::MIN, 0, 64, -64, 1 << 40];
        let p = Packed::from_slice(&seq);
        assert_eq!(p.to_vec(), seq);
        assert_eq!(p.len(), seq.len());
        assert!(p.is_prefix_of(&seq) && p.starts_with(&seq));
        assert!(p.is_prefix_of(&[&seq[..], &[99]].concat()));
        assert!(!p.is_prefix_of(&seq[..5]) && p.starts_with(&seq[..5]));
        assert!(!p.starts_with(&[1, 2, 4]));
        for e in seq {
            assert!(p.contains(e), "{e}");
        }
        for e in [6, 12, -2, i64::MAX - 1] {
            assert!(!p.contains(e), "{e}");
        }
    }

    #[test]
    fn nearly_sorted_values_take_a_byte_each_and_long_ones_are_indexed() {
        let near: Vec<i64> = (1..=100)
            .map(|i| {
                if i % 3 == 0 {
                    i - 1
                } else if i % 3 == 2 {
                    i + 1
                } else {
                    i
                }
            })
            .collect();
        let p = Packed::from_slice(&near);
        assert_eq!(p.heap_bytes(), 100);
        let mut long = Packed::default();
        long.extend(&(1..=400).collect::<Vec<_>>());
        assert!(long.sorted.is_empty());
        long.extend(&(401..=1000).rev().collect::<Vec<_>>());
        assert_eq!(long.sorted.len(), 1000);
        assert!(long.contains(1) && long.contains(1000) && !long.contains(1001) && !long.contains(0));
        assert!(long.is_prefix_of(&long.to_vec()));
    }

    #[test]
    fn an_encoding_reads_back_as_its_sequence() {
        let p = Packed::from_slice(&(1..=600).rev().collect::<Vec<_>>());
        let q = Packed::from_encoded(p.encoded(), p.len()).expect("decodes");
        assert_eq!(q, p);
        assert_eq!(Packed::from_encoded(p.encoded(), p.len() + 1), None);
        assert_eq!(Packed::from_encoded(&p.encoded()[..10], p.len()), None);
        assert_eq!(Packed::from_encoded(&[0x80], 0), None);
    }
}
