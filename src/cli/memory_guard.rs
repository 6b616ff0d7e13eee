//! Keeping a batch check off the out-of-memory killer: a history whose
//! size predicts more memory than the machine has is refused before it is
//! read, and a check that grows past the budget anyway stops with an
//! error, instead of swapping the machine to a halt or being killed
//! without a word.
//!
//! The size budget is `--max-memory` when given, else 90% of the memory
//! the system reports available (`MemAvailable` in `/proc/meminfo`, or
//! `ISOLDE_AVAILABLE_MB` when set, which the tests use) when the check
//! starts; the watch's budget is always the latter (`--max-memory` is also
//! the search cache of the linearizability checkers, which answer
//! `unknown` when it is spent: the process holds more than the cache).
//! Elsewhere than Linux there is no budget. The estimate is
//! 0.85 bytes of memory per byte of input: the least any workload was
//! measured to need (list-append in Elle's shape peaks at 0.98 bytes per
//! byte of EDN, rw-register at about 2.5, `docs/performance.md`), so a
//! refusal is certain to be right and a history that passes may still be
//! stopped by the watch. The watch samples the process's resident set
//! every 20 ms.
//!
//! Written by hand: reading two numbers from `/proc` needs no crate.

use std::path::Path;
use std::time::Duration;

/// Memory per byte of input, at least ([`crate::cli::memory_guard`]).
const BYTES_PER_INPUT_BYTE: f64 = 0.85;

/// The share of the available memory the budget takes when no
/// `--max-memory` is given.
const AVAILABLE_SHARE: f64 = 0.9;

/// How often the watch samples the resident set.
const SAMPLE: Duration = Duration::from_millis(20);

/// The budget in MB: `explicit`, else [`AVAILABLE_SHARE`] of the memory
/// available now; `None` when neither is known.
pub fn budget_mb(explicit: Option<u64>) -> Option<u64> {
    explicit.or_else(|| available_mb().map(|m| (m as f64 * AVAILABLE_SHARE) as u64))
}

/// `MemAvailable` of `/proc/meminfo` (or `ISOLDE_AVAILABLE_MB`), in MB.
fn available_mb() -> Option<u64> {
    if let Some(mb) = std::env::var("ISOLDE_AVAILABLE_MB").ok().and_then(|v| v.parse().ok()) {
        return Some(mb);
    }
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// Refuses `file` when its size predicts more than `budget_mb` (module
/// docs); standard input and unreadable paths pass (reading them reports
/// its own errors). A directory counts the files directly in it.
pub fn check_size(file: &Path, budget_mb: u64, explicit: bool) -> Result<(), String> {
    let bytes = input_bytes(file);
    let need_mb = (bytes as f64 * BYTES_PER_INPUT_BYTE / (1u64 << 20) as f64) as u64;
    if need_mb <= budget_mb {
        return Ok(());
    }
    let whose = if explicit { "the --max-memory budget" } else { "90% of the memory this machine has available" };
    Err(format!(
        "{}: {} MB of input needs at least {need_mb} MB to check, more than {budget_mb} MB ({whose}); \
         check it on a machine with more memory, or cut the history into parts",
        file.display(),
        bytes >> 20
    ))
}

/// The bytes of `file`, or of the files directly in it when it is a
/// directory; 0 for standard input or what cannot be read.
fn input_bytes(file: &Path) -> u64 {
    if file.as_os_str() == "-" {
        return 0;
    }
    match std::fs::metadata(file) {
        Ok(m) if m.is_dir() => std::fs::read_dir(file)
            .map(|d| d.filter_map(Result::ok).filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// Starts the watch: once the process holds more than 90% of the memory
/// available now, it prints why on standard error and ends the process
/// with exit status 2. No watch where that is not known.
pub fn watch() {
    let Some(budget_mb) = budget_mb(None) else { return };
    let whose = "90% of the memory available when it started";
    let spawned = std::thread::Builder::new().name("memory-guard".into()).spawn(move || loop {
        std::thread::sleep(SAMPLE);
        if let Some(rss) = crate::online::rss_mb() {
            if rss > budget_mb {
                eprintln!(
                    "isolde: stopped: the check holds {rss} MB, more than {budget_mb} MB ({whose}), and would \
                     have the machine swap or the system kill it; check the history on a machine with more \
                     memory, or cut it into parts"
                );
                std::process::exit(2);
            }
        }
    });
    // Without a thread there is no watch: the check runs as before.
    drop(spawned);
}
