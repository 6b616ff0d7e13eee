//! Clojure's hash of a long, which Elle's output depends on in two places:
//! the colours of its incompatible-order tables, and (through `:index`) the
//! order in which its graphs iterate operations.

/// Clojure's `hash` of a long (Murmur3 `hashLong`).
pub fn hash_long(x: i64) -> i32 {
    if x == 0 {
        return 0;
    }
    fn mix_k1(k: u32) -> u32 {
        k.wrapping_mul(0xcc9e_2d51).rotate_left(15).wrapping_mul(0x1b87_3593)
    }
    fn mix_h1(h: u32, k: u32) -> u32 {
        (h ^ k).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64)
    }
    let (low, high) = (x as u64 as u32, ((x as u64) >> 32) as u32);
    let mut h = mix_h1(0, mix_k1(low));
    h = mix_h1(h, mix_k1(high));
    h ^= 8;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_clojure() {
        assert_eq!(hash_long(0), 0);
        // (hash 1) in Clojure.
        assert_eq!(hash_long(1), 1_392_991_556);
    }
}
