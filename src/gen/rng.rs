//! A small, fast, seedable PRNG for the history generators.
//!
//! The generators must be reproducible from a single `u64` seed across
//! platforms and releases, so we carry our own generator instead of depending
//! on `rand` (whose stream is not guaranteed stable across versions). The core
//! is xoshiro256** (Blackman & Vigna), seeded by expanding the `u64` seed with
//! splitmix64 as its authors recommend.

/// One step of splitmix64: advances `state` and returns the next output.
///
/// Used to expand a single `u64` seed into the 256-bit xoshiro state; it is
/// also a decent standalone hash of a counter.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A xoshiro256** pseudo-random generator: deterministic per seed, not
/// cryptographic.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// Creates a generator whose whole output stream is a function of `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        let mut s = [0u64; 4];
        for w in &mut s {
            *w = splitmix64(&mut sm);
        }
        // xoshiro must not start from the all-zero state; splitmix64 cannot
        // produce four zero words in a row, but be defensive anyway.
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// Returns the next 64 uniformly distributed bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Returns a uniform integer in `0..n` (`n > 0`), using Lemire's
    /// multiply-shift with rejection so the result is exactly unbiased.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0, "Rng::below(0)");
        let mut m = (self.next_u64() as u128) * (n as u128);
        let mut lo = m as u64;
        if lo < n {
            let threshold = n.wrapping_neg() % n;
            while lo < threshold {
                m = (self.next_u64() as u128) * (n as u128);
                lo = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Returns a uniform integer in the inclusive range `lo..=hi` (`lo <= hi`).
    #[inline]
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi);
        match (hi - lo).checked_add(1) {
            Some(n) => lo + self.below(n),
            None => self.next_u64(),
        }
    }

    /// Returns a uniform `f64` in `[0, 1)` with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Returns `true` with probability `p` (`p <= 0` never, `p >= 1` always).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_per_seed_and_seeds_differ() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..16).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..16).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::new(8);
            (0..16).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1);
        let mut seen = [0u32; 7];
        for _ in 0..70_000 {
            let x = r.below(7);
            assert!(x < 7);
            seen[x as usize] += 1;
        }
        // Each bucket expects 10_000; a gross bias would fail this.
        for &c in &seen {
            assert!((9_000..11_000).contains(&c), "{seen:?}");
        }
        for _ in 0..1000 {
            let x = r.range_inclusive(3, 5);
            assert!((3..=5).contains(&x));
        }
        // The full range must not overflow; it yields distinct raw outputs.
        let (a, b) = (r.range_inclusive(0, u64::MAX), r.range_inclusive(0, u64::MAX));
        assert_ne!(a, b);
        assert_eq!(r.range_inclusive(9, 9), 9);
    }

    #[test]
    fn f64_in_unit_interval() {
        let mut r = Rng::new(99);
        let mut sum = 0.0;
        for _ in 0..10_000 {
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
            sum += x;
        }
        let mean = sum / 10_000.0;
        assert!((0.45..0.55).contains(&mean), "mean {mean}");
    }
}
