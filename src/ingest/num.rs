//! Fast scanning of decimal digit runs, shared by the EDN and JSON readers.
//!
//! List reads make up most of a large history's bytes, so integer parsing is
//! the hottest loop of ingest. Instead of one data-dependent branch per digit
//! (whose exit is mispredicted for every number of varying length), eight
//! bytes are loaded at once, the length of the digit run is found with a
//! carry-free SWAR test, and up to eight digits are converted with three
//! multiplications.

const ONES_F0: u64 = 0xF0F0_F0F0_F0F0_F0F0;
const THREES: u64 = 0x3030_3030_3030_3030;

/// `0x80` in every byte of `x` that is not an ASCII digit, valid up to and
/// including the first such byte (later bytes may be disturbed by a carry,
/// which never matters: only the first non-digit is used).
#[inline(always)]
fn nondigit_mask(x: u64) -> u64 {
    // High nibble must be 3 (0x30..=0x3F) ...
    let hi = (x & ONES_F0) ^ THREES;
    // ... and adding 6 must keep it 3 (<= 0x39).
    let lo = (x.wrapping_add(0x0606_0606_0606_0606) & ONES_F0) ^ THREES;
    let v = hi | lo;
    ((v & 0x7F7F_7F7F_7F7F_7F7F).wrapping_add(0x7F7F_7F7F_7F7F_7F7F) | v) & 0x8080_8080_8080_8080
}

/// Converts eight ASCII digits (the first, most significant, in the lowest
/// byte; zero bytes count as leading zeros) to their value.
#[inline(always)]
fn parse8(x: u64) -> u64 {
    let x = ((x & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561)) >> 8;
    let x = ((x & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601)) >> 16;
    ((x & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001)) >> 32
}

/// Scans the run of ASCII digits starting at `s[i]`: returns its value and
/// length. The value is exact when the length is at most 19 (it always fits
/// a `u64` then); longer runs wrap and must be rejected by the caller.
#[inline(always)]
pub(crate) fn scan_digits(s: &[u8], i: usize) -> (u64, usize) {
    if let Some(w) = s.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        let x = u64::from_le_bytes(word);
        let n = (nondigit_mask(x).trailing_zeros() / 8) as usize;
        if n < 8 {
            if n == 0 {
                return (0, 0);
            }
            return (parse8(x << (8 * (8 - n))), n);
        }
        let (v, j) = continue_digits(s, i + 8, parse8(x));
        return (v, j - i);
    }
    let (v, j) = continue_digits(s, i, 0);
    (v, j - i)
}

/// Extends the value `v` with the digits from `s[j]` on, byte by byte;
/// returns the value and the position after the last digit.
#[inline(always)]
fn continue_digits(s: &[u8], mut j: usize, mut v: u64) -> (u64, usize) {
    while let Some(&c) = s.get(j) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        j += 1;
    }
    (v, j)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(s: &[u8], i: usize) -> (u64, usize) {
        let n = s[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        let v = s[i..i + n].iter().fold(0u64, |v, &b| v.wrapping_mul(10).wrapping_add((b - b'0') as u64));
        (v, n)
    }

    #[test]
    fn scans_digit_runs_of_every_length() {
        for n in 0..25 {
            for tail in ["", " ", "]", "x", "\u{ff}", "/", ":", "9"] {
                let digits: String = (0..n).map(|k| char::from(b'1' + (k % 9) as u8)).collect();
                let s = format!("[{digits}{tail}    ");
                assert_eq!(scan_digits(s.as_bytes(), 1), naive(s.as_bytes(), 1), "{s:?}");
            }
        }
        assert_eq!(scan_digits(b"12345678", 0), (12_345_678, 8));
        assert_eq!(scan_digits(b"0000000100 ", 0), (100, 10));
        assert_eq!(scan_digits(b"9223372036854775807 ", 0), (i64::MAX as u64, 19));
    }

    proptest! {
        #[test]
        fn matches_naive_scan(bytes in proptest::collection::vec(prop_oneof![b'0'..=b'9', any::<u8>()], 0..40), at in 0usize..40) {
            let i = at.min(bytes.len());
            prop_assert_eq!(scan_digits(&bytes, i), naive(&bytes, i));
        }
    }
}
