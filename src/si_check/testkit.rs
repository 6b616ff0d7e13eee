//! Test helpers shared by the exact check's unit tests.

/// A xorshift generator from `seed` (non-zero): each call `r(m)` gives a
/// number below `m`. Deterministic, so a failing random case reproduces.
pub(crate) fn xorshift(seed: u64) -> impl FnMut(u64) -> u32 {
    let mut x = seed;
    move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m) as u32
    }
}
