//! Sets of register values that `--follow --follow-window` keeps per
//! collected key ([`super::fenced`]), sized for what registers write.
//!
//! Jepsen's and `isolde gen`'s register workloads write each key's values
//! in increasing order (1, 2, 3, …), so the versions collected
//! transactions overwrote form a few runs: [`Ranges`] holds them as sorted
//! disjoint ranges. The values a transaction overwrote *itself* (it wrote
//! the key twice) are scattered through those runs, one here and there on
//! a hot key, and as ranges they would cost 16 bytes each for the rest of
//! the run; [`Dense`] holds them as a bitmap over the key's values, a bit
//! per version, with the values far outside it (a workload that writes
//! arbitrary numbers) as ranges.
//!
//! Written by hand: two small sets over plain vectors; a crate for
//! compressed bitmaps (roaring) would do the second one, at the cost of a
//! dependency for a few lines.

/// A set of integer values, as sorted disjoint inclusive ranges.
#[derive(Clone, Debug, Default)]
pub(super) struct Ranges(Vec<(i64, i64)>);

impl Ranges {
    pub(super) fn contains(&self, v: i64) -> bool {
        let i = self.0.partition_point(|r| r.0 <= v);
        i > 0 && self.0[i - 1].1 >= v
    }

    pub(super) fn insert(&mut self, v: i64) {
        self.insert_range(v, v);
    }

    /// Adds `lo..=hi`, merging the ranges it touches or overlaps.
    pub(super) fn insert_range(&mut self, lo: i64, hi: i64) {
        let start = self.0.partition_point(|r| r.1.saturating_add(1) < lo);
        let end = self.0.partition_point(|r| r.0.saturating_sub(1) <= hi);
        if start == end {
            self.0.insert(start, (lo, hi));
            return;
        }
        let merged = (lo.min(self.0[start].0), hi.max(self.0[end - 1].1));
        self.0.splice(start..end, [merged]);
    }

    pub(super) fn absorb(&mut self, other: Ranges) {
        for (lo, hi) in other.0 {
            self.insert_range(lo, hi);
        }
    }
}

/// A set of integer values: a bitmap over a window of values that grows
/// with what is inserted while it stays dense, and [`Ranges`] for the
/// rest.
#[derive(Clone, Debug, Default)]
pub(super) struct Dense {
    /// The value of bit 0 of `bits[0]` (a multiple of 64).
    base: i64,
    bits: Vec<u64>,
    /// How many values the bitmap holds.
    count: usize,
    /// Values the bitmap does not cover.
    rest: Ranges,
}

/// Words a bitmap may have beyond eight per value it holds (so it costs at
/// most about 64 bytes per value, and a bit per version on dense keys).
const SLACK_WORDS: usize = 16;

impl Dense {
    pub(super) fn contains(&self, v: i64) -> bool {
        match self.word_of(v) {
            Some(w) if w < self.bits.len() => self.bits[w] >> (v - self.base).rem_euclid(64) & 1 == 1,
            _ => self.rest.contains(v),
        }
    }

    pub(super) fn insert(&mut self, v: i64) {
        if self.bits.is_empty() && self.count == 0 {
            self.base = v.div_euclid(64).saturating_mul(64);
        }
        let word = self.word_of(v).filter(|&w| w < self.bits.len().max(8 * (self.count + 1) + SLACK_WORDS));
        match word {
            Some(w) => {
                if w >= self.bits.len() {
                    self.bits.resize(w + 1, 0);
                }
                let bit = 1u64 << (v - self.base).rem_euclid(64);
                if self.bits[w] & bit == 0 {
                    self.bits[w] |= bit;
                    self.count += 1;
                }
            }
            None => self.rest.insert(v),
        }
    }

    /// The bitmap word of `v`, when `v` is at or above the base.
    fn word_of(&self, v: i64) -> Option<usize> {
        let offset = v.checked_sub(self.base).filter(|&o| o >= 0)?;
        usize::try_from(offset / 64).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::{Dense, Ranges};

    #[test]
    fn ranges_merge_what_they_touch() {
        let mut r = Ranges::default();
        for v in [5, 7, 6, 1, 3, 2, 10] {
            r.insert(v);
        }
        assert_eq!(r.0, vec![(1, 3), (5, 7), (10, 10)]);
        r.insert_range(4, 9);
        assert_eq!(r.0, vec![(1, 10)]);
        assert!(r.contains(1) && r.contains(10) && !r.contains(0) && !r.contains(11));
        let mut s = Ranges::default();
        s.insert(i64::MAX);
        s.insert(i64::MIN);
        assert!(s.contains(i64::MAX) && s.contains(i64::MIN) && !s.contains(0));
    }

    #[test]
    fn dense_holds_scattered_values_in_bits_and_far_ones_as_ranges() {
        let mut d = Dense::default();
        let inside: Vec<i64> = (1..20_000).filter(|v| v % 3 == 0).collect();
        for &v in &inside {
            d.insert(v);
        }
        for far in [i64::MIN, -5, 10_000_000_000, i64::MAX] {
            d.insert(far);
        }
        for v in -10..20_010 {
            assert_eq!(d.contains(v), inside.contains(&v) || v == -5, "value {v}");
        }
        assert!(d.contains(i64::MIN) && d.contains(i64::MAX) && d.contains(10_000_000_000));
        assert!(!d.contains(10_000_000_001));
        // A bit per version: 20k values span about 313 words.
        assert!(d.bits.len() <= 320, "{} words", d.bits.len());
        assert_eq!(d.rest.0.len(), 4);
    }
}
