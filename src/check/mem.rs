//! Memory per stage, for `--stats`: how many bytes each stage's data
//! structure holds, and the process's resident memory when the stage ends.
//!
//! Two measures, because neither alone says where the bytes go. The
//! structure size is exact and independent of the allocator (the capacity of
//! every column, edge list or graph array the stage keeps), but it misses
//! transient buffers. The resident set (`VmRSS`) and its high-water mark
//! (`VmHWM`) read from `/proc/self/status` after each stage include those
//! buffers, the memory-mapped input and the allocator's slack; a stage that
//! raised the high-water mark is where the peak happened. The high-water
//! mark is never reset here, so `/usr/bin/time` still sees the true peak.

pub use crate::outcome::StageMemory;

/// The process's current resident set and its high-water mark, in bytes
/// (`(0, 0)` where `/proc/self/status` cannot be read, e.g. off Linux).
pub fn resident() -> (u64, u64) {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else {
        return (0, 0);
    };
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Records the end of `stage`, whose kept structures hold `bytes`.
pub fn record(stage: &'static str, bytes: u64) -> StageMemory {
    let (rss, peak) = resident();
    StageMemory { stage, bytes, rss, peak }
}

/// Heap bytes of a vector's buffer (its capacity, not its length).
pub fn vec_bytes<T>(v: &Vec<T>) -> u64 {
    (v.capacity() * std::mem::size_of::<T>()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vec_bytes_counts_capacity() {
        let v: Vec<u64> = Vec::with_capacity(10);
        assert_eq!(vec_bytes(&v), 80);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn resident_memory_is_read_and_peak_bounds_it() {
        let (rss, peak) = resident();
        assert!(rss > 0);
        assert!(peak >= rss);
    }
}
