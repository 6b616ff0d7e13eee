//! Sets of register values that `--follow --follow-window` keeps per
//! collected key ([`super::fenced`]), sized for what registers write.
//!
//! Jepsen's and `isolde gen`'s register workloads write each key's values
//! in increasing order (1, 2, 3, …), so the versions collected
//! transactions overwrote form a few runs: [`Ranges`] holds them as sorted
//! disjoint ranges. The values a transaction overwrote *itself* (it wrote
//! the key twice) are scattered through those runs, one here and there on
//! a hot key, and as ranges they would cost 16 bytes each for the rest of
//! the run; [`Dense`] holds them as the non-zero words of a bitmap over the
//! key's values (about a bit per version on a hot key, 12 bytes per value
//! on a cold one), with the values outside it as ranges.
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

    /// Joins neighbouring ranges whose gap (at most `max_gap` values) lies
    /// wholly in `covered`: the values a caller treats the same as the
    /// set's own (a key's aborted values, between its collected versions).
    pub(super) fn bridge(&mut self, max_gap: i64, covered: impl Fn(i64) -> bool) {
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(self.0.len());
        for &(lo, hi) in &self.0 {
            match out.last_mut() {
                Some(last) if lo - last.1 - 1 <= max_gap && (last.1 + 1..lo).all(&covered) => last.1 = hi,
                _ => out.push((lo, hi)),
            }
        }
        self.0 = out;
    }

    pub(super) fn absorb(&mut self, other: Ranges) {
        for (lo, hi) in other.0 {
            self.insert_range(lo, hi);
        }
    }

    /// How many ranges the set holds.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// The values of the set that are not in `other`.
    pub(super) fn minus(&self, other: &Ranges) -> Ranges {
        let mut out = Vec::new();
        let mut j = 0;
        for &(lo, hi) in &self.0 {
            // Ranges of `other` wholly before this one cut nothing more.
            while j < other.0.len() && other.0[j].1 < lo {
                j += 1;
            }
            // `from..=hi` is what is left to decide of this range.
            let mut from = lo;
            let mut covered = false;
            for &(olo, ohi) in other.0[j..].iter().take_while(|o| o.0 <= hi) {
                if olo > from {
                    out.push((from, olo - 1));
                }
                if ohi >= hi {
                    covered = true;
                    break;
                }
                from = from.max(ohi + 1);
            }
            if !covered {
                out.push((from, hi));
            }
        }
        Ranges(out)
    }

    /// A fingerprint of the set (not of how it is split into ranges): equal
    /// sets give equal ones, and different sets almost never do.
    pub(super) fn fingerprint(&self) -> (u64, u64) {
        use std::hash::{Hash, Hasher};
        let mut hasher = rustc_hash::FxHasher::default();
        let mut count = 0u64;
        let mut run: Option<(i64, i64)> = None;
        for &(lo, hi) in &self.0 {
            match &mut run {
                Some(r) if r.1.checked_add(1) == Some(lo) => r.1 = hi,
                _ => {
                    if let Some(r) = run.replace((lo, hi)) {
                        r.hash(&mut hasher);
                        count += 1;
                    }
                }
            }
        }
        if let Some(r) = run {
            r.hash(&mut hasher);
            count += 1;
        }
        (count, hasher.finish())
    }

    /// Appends the set's bytes (for the spill store): the number of
    /// ranges, then each range's bounds, little-endian.
    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.0.len() as u64).to_le_bytes());
        for &(lo, hi) in &self.0 {
            out.extend_from_slice(&lo.to_le_bytes());
            out.extend_from_slice(&hi.to_le_bytes());
        }
    }

    /// Reads a set [`Ranges::encode`] wrote from the front of `bytes`,
    /// advancing it; `None` when the bytes are not one.
    pub(super) fn decode(bytes: &mut &[u8]) -> Option<Ranges> {
        let n = usize::try_from(take_u64(bytes)?).ok()?;
        if n > bytes.len() / 16 {
            return None;
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push((take_u64(bytes)? as i64, take_u64(bytes)? as i64));
        }
        Some(Ranges(out))
    }
}

/// The next 8 bytes of `bytes` as a little-endian number, advancing it.
pub(super) fn take_u64(bytes: &mut &[u8]) -> Option<u64> {
    let (head, rest) = bytes.split_first_chunk::<8>()?;
    *bytes = rest;
    Some(u64::from_le_bytes(*head))
}

/// A set of integer values: the non-zero 64-bit words of a bitmap over
/// the values from a base on (12 bytes a word: a hot key's scattered values
/// cost about a bit per version, a cold key's few about 12 bytes each), and
/// [`Ranges`] for values below the base or too far above it.
#[derive(Clone, Debug, Default)]
pub(super) struct Dense {
    /// The value of bit 0 of word 0 (a multiple of 64), set by the first
    /// value inserted.
    base: Option<i64>,
    /// The indices of the non-zero words, increasing.
    index: Vec<u32>,
    /// Those words.
    words: Vec<u64>,
    /// Values the bitmap does not cover.
    rest: Ranges,
}

impl Dense {
    pub(super) fn contains(&self, v: i64) -> bool {
        match self.place(v) {
            Some((w, bit)) => self.index.binary_search(&w).is_ok_and(|i| self.words[i] & bit != 0),
            None => self.rest.contains(v),
        }
    }

    pub(super) fn insert(&mut self, v: i64) {
        if self.base.is_none() {
            self.base = Some(v.div_euclid(64).saturating_mul(64));
        }
        let Some((w, bit)) = self.place(v) else { return self.rest.insert(v) };
        // Values mostly come in increasing order: the last word first.
        match self.index.last() {
            Some(&last) if last == w => *self.words.last_mut().expect("a word per index") |= bit,
            Some(&last) if last < w => {
                self.index.push(w);
                self.words.push(bit);
            }
            None => {
                self.index.push(w);
                self.words.push(bit);
            }
            Some(_) => match self.index.binary_search(&w) {
                Ok(i) => self.words[i] |= bit,
                Err(i) => {
                    self.index.insert(i, w);
                    self.words.insert(i, bit);
                }
            },
        }
    }

    /// Whether the set holds no value.
    pub(super) fn is_empty(&self) -> bool {
        self.words.is_empty() && self.rest.0.is_empty()
    }

    /// The bitmap's words held (what the set costs, 12 bytes each).
    pub(super) fn words(&self) -> usize {
        self.words.len()
    }

    /// Moves the values `pick` chooses into a set of their own.
    pub(super) fn take_where(&mut self, pick: impl Fn(i64) -> bool) -> Dense {
        let (mut taken, mut kept) = (Dense::default(), Dense::default());
        let mut each = |v: i64| if pick(v) { taken.insert(v) } else { kept.insert(v) };
        if let Some(base) = self.base {
            for (&i, &w) in self.index.iter().zip(&self.words) {
                let mut bits = w;
                while bits != 0 {
                    each(base + 64 * i64::from(i) + i64::from(bits.trailing_zeros()));
                    bits &= bits - 1;
                }
            }
        }
        for &(lo, hi) in &self.rest.0 {
            (lo..=hi).for_each(&mut each);
        }
        *self = kept;
        taken
    }

    /// Adds every value of `other`.
    pub(super) fn absorb(&mut self, other: &Dense) {
        if let Some(base) = other.base {
            for (&i, &w) in other.index.iter().zip(&other.words) {
                let mut bits = w;
                while bits != 0 {
                    let b = i64::from(bits.trailing_zeros());
                    self.insert(base + 64 * i64::from(i) + b);
                    bits &= bits - 1;
                }
            }
        }
        for &(lo, hi) in &other.rest.0 {
            for v in lo..=hi {
                self.insert(v);
            }
        }
    }

    /// Appends the set's bytes (for the spill store).
    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.base.map_or(u64::MAX, |b| b as u64).to_le_bytes());
        out.push(u8::from(self.base.is_some()));
        out.extend_from_slice(&(self.index.len() as u64).to_le_bytes());
        for (&i, &w) in self.index.iter().zip(&self.words) {
            out.extend_from_slice(&u64::from(i).to_le_bytes());
            out.extend_from_slice(&w.to_le_bytes());
        }
        self.rest.encode(out);
    }

    /// Reads a set [`Dense::encode`] wrote from the front of `bytes`,
    /// advancing it; `None` when the bytes are not one.
    pub(super) fn decode(bytes: &mut &[u8]) -> Option<Dense> {
        let base = take_u64(bytes)? as i64;
        let (&has_base, rest) = bytes.split_first()?;
        *bytes = rest;
        let n = usize::try_from(take_u64(bytes)?).ok()?;
        if n > bytes.len() / 16 {
            return None;
        }
        let (mut index, mut words) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            index.push(u32::try_from(take_u64(bytes)?).ok()?);
            words.push(take_u64(bytes)?);
        }
        let rest = Ranges::decode(bytes)?;
        Some(Dense { base: (has_base == 1).then_some(base), index, words, rest })
    }

    /// The word index and bit of `v`, when the bitmap covers it (at or
    /// above the base, within `u32::MAX` words of it).
    fn place(&self, v: i64) -> Option<(u32, u64)> {
        let offset = v.checked_sub(self.base?).filter(|&o| o >= 0)?;
        let w = u32::try_from(offset / 64).ok()?;
        Some((w, 1u64 << (offset % 64)))
    }
}

#[cfg(test)]
mod tests {
    use super::{Dense, Ranges};

    #[test]
    fn dense_gives_up_the_values_picked() {
        let mut d = Dense::default();
        for v in [3, 5, 64, 70, 1_000_000] {
            d.insert(v);
        }
        let odd = d.take_where(|v| v % 2 == 1);
        assert!([3, 5].iter().all(|&v| odd.contains(v) && !d.contains(v)));
        assert!([64, 70, 1_000_000].iter().all(|&v| d.contains(v) && !odd.contains(v)));
    }

    #[test]
    fn ranges_bridge_gaps_of_covered_values_only() {
        let mut r = Ranges::default();
        for v in [1, 2, 4, 5, 9, 20] {
            r.insert(v);
        }
        // 3 and 6..=8 are covered, 10..=19 is not.
        r.bridge(8, |v| v == 3 || (6..=8).contains(&v));
        assert_eq!(r.0, vec![(1, 9), (20, 20)]);
        let mut far = Ranges::default();
        far.insert(1);
        far.insert(100);
        far.bridge(8, |_| true);
        assert_eq!(far.0, vec![(1, 1), (100, 100)]);
    }

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
        assert!(d.words.len() <= 320, "{} words", d.words.len());
        assert_eq!(d.rest.0.len(), 3);
        // A cold key's few values cost a word each, whatever the gaps (90
        // and 64 share one).
        let mut cold = Dense::default();
        for v in [7, 100_000, 5_000_000, 90, 64] {
            cold.insert(v);
        }
        assert_eq!(cold.words.len(), 4);
        assert!([7, 100_000, 5_000_000, 90, 64].iter().all(|&v| cold.contains(v)));
        assert!(!cold.contains(8) && !cold.contains(65) && !cold.contains(100_001));
    }

    /// The difference of two sets, checked value by value against the
    /// definition, and a fingerprint that ignores how a set is split.
    #[test]
    fn ranges_minus_and_fingerprint_follow_the_sets() {
        let set = |rs: &[(i64, i64)]| {
            let mut r = Ranges::default();
            for &(lo, hi) in rs {
                r.insert_range(lo, hi);
            }
            r
        };
        let a = set(&[(1, 10), (20, 30), (40, 40), (50, 60)]);
        let b = set(&[(0, 2), (5, 6), (10, 25), (40, 40), (55, 100)]);
        let d = a.minus(&b);
        for v in -5..110 {
            assert_eq!(d.contains(v), a.contains(v) && !b.contains(v), "value {v}");
        }
        assert_eq!(d.0, vec![(3, 4), (7, 9), (26, 30), (50, 54)]);
        let mut back = d.clone();
        back.absorb(a.minus(&d));
        assert_eq!(back.0, a.0);
        assert!(a.minus(&Ranges::default()).0 == a.0 && Ranges::default().minus(&a).0.is_empty());
        let extremes = set(&[(i64::MIN, -1), (5, i64::MAX)]);
        assert_eq!(extremes.minus(&set(&[(i64::MIN, i64::MAX)])).0, vec![]);
        assert_eq!(extremes.minus(&set(&[(0, 9)])).0, vec![(i64::MIN, -1), (10, i64::MAX)]);
        // Split differently, the same set: the same fingerprint.
        let split = Ranges(vec![(1, 5), (6, 10), (20, 30), (40, 40), (50, 60)]);
        assert_eq!(split.fingerprint(), a.fingerprint());
        assert_ne!(set(&[(1, 10), (20, 30), (40, 40), (50, 61)]).fingerprint(), a.fingerprint());
    }
}
