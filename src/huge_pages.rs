//! Transparent huge pages for the heap: the `isolde` binary restarts itself
//! once, before anything else, with glibc's `glibc.malloc.hugetlb=1`
//! tunable, so that the allocator asks the kernel for 2 MiB pages.
//!
//! **Why.** A check fills its columns, edge lists and hash tables once each,
//! front to back, so a good part of its time is page faults on fresh
//! memory: one fault, and one 4 KiB page zeroed, at a time (about a fifth
//! of the CPU time of the 1M list-append check, most of it in the kernel).
//! Most Linux systems run transparent huge pages in `madvise` mode
//! (`/sys/kernel/mm/transparent_hugepage/enabled` reads `… [madvise] …`),
//! where only memory a process marks with `madvise(MADV_HUGEPAGE)` gets
//! 2 MiB pages: one fault per 2 MiB. glibc (2.35 and later) marks its heap
//! and its mapped chunks itself when the `glibc.malloc.hugetlb=1` tunable is
//! set, but it reads tunables only from the environment at start. A user
//! should not have to know that, so the binary sets it for itself.
//!
//! **Why a restart and not an allocator.** A global allocator that advises
//! each large block after `malloc` returns it was tried first and measured
//! slower than the tunable and 60 MB larger at 1M list-append (glibc also
//! advises its heap as it grows with `brk`, where the many mid-sized blocks
//! of a check live, and rounds that growth to whole huge pages; an
//! allocator wrapper cannot reach either). jemalloc and mimalloc have
//! options of their own, but would replace an allocator the distributed
//! processes tune (`dist::cluster`) and whose memory figures the docs hold.
//!
//! **What it does.** [`restart_with_huge_pages`] returns at once, changing
//! nothing, unless all of these hold: Linux with glibc; THP in `madvise`
//! mode (in `always` mode every page already may be huge, in `never` none
//! can be); `GLIBC_TUNABLES` does not already name `glibc.malloc.hugetlb`
//! (the user's choice stands); `ISOLDE_NO_HUGE_PAGES` is unset; and
//! [`RESTARTED`] is unset. Then it replaces the process
//! image with the same executable (`/proc/self/exe`), the same arguments
//! (argument 0 included, which `elle-cli` links rely on), the same open
//! files and the environment plus the tunable (appended to any tunables
//! already there) and [`RESTARTED`], which keeps the new process from
//! restarting again even where glibc drops `GLIBC_TUNABLES` from the
//! environment (a setuid binary). If the restart fails, the process goes
//! on as it was.
//! The tunable changes where glibc places memory, never what a program
//! computes: results are byte for byte the same (`scripts/
//! compare-outputs.sh`). The variable stays set, so isolde processes this
//! one starts (`--local-processes`) inherit it without restarting.
//!
//! Measured on the 2-core development machine in paired runs
//! (docs/performance.md, "After issue 55's second changes"): the 1M
//! list-append default check 4.3–4.5 s → 3.4–3.9 s, the weak levels' rows
//! 10–20% faster, the same peak memory; a tiny history 2 ms slower.

/// The glibc tunable that turns on transparent huge pages in `malloc`.
pub const TUNABLE: &str = "glibc.malloc.hugetlb";

/// Set (to anything) to keep the process as it is (for comparisons).
pub const OPT_OUT: &str = "ISOLDE_NO_HUGE_PAGES";

/// Set by the restart in the new process's environment: never restart twice.
pub const RESTARTED: &str = "ISOLDE_HUGE_PAGES_RESTARTED";

/// `GLIBC_TUNABLES` with the huge-page tunable added, or `None` when it
/// names that tunable already (the user's value stands).
pub fn tunables_with_huge_pages(current: Option<&str>) -> Option<String> {
    match current.filter(|c| !c.is_empty()) {
        None => Some(format!("{TUNABLE}=1")),
        Some(c) if c.split(':').any(|t| t.split('=').next() == Some(TUNABLE)) => None,
        Some(c) => Some(format!("{c}:{TUNABLE}=1")),
    }
}

/// Whether the kernel's THP mode (the text of
/// `/sys/kernel/mm/transparent_hugepage/enabled`) is `madvise`.
pub fn madvise_mode(enabled: &str) -> bool {
    enabled.split_whitespace().any(|w| w == "[madvise]")
}

/// Restarts the process with glibc's huge-page tunable when that helps (see
/// the module doc); returns only when it does not restart.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn restart_with_huge_pages() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(OPT_OUT).is_some() || std::env::var_os(RESTARTED).is_some() {
        return;
    }
    let Ok(enabled) = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled") else { return };
    if !madvise_mode(&enabled) {
        return;
    }
    let current = std::env::var_os("GLIBC_TUNABLES");
    let current = match current.as_deref().map(|c| c.to_str()) {
        Some(None) => return, // not UTF-8: leave it alone
        Some(Some(c)) => Some(c),
        None => None,
    };
    let Some(tunables) = tunables_with_huge_pages(current) else { return };
    let mut args = std::env::args_os();
    let Some(arg0) = args.next() else { return };
    // `exec` only returns on failure; the process then goes on unchanged.
    let _ = std::process::Command::new("/proc/self/exe")
        .arg0(arg0)
        .args(args)
        .env("GLIBC_TUNABLES", tunables)
        .env(RESTARTED, "1")
        .exec();
}

/// Elsewhere the allocator is left as it is.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn restart_with_huge_pages() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tunable_is_added_once_and_a_users_choice_stands() {
        assert_eq!(tunables_with_huge_pages(None).as_deref(), Some("glibc.malloc.hugetlb=1"));
        assert_eq!(tunables_with_huge_pages(Some("")).as_deref(), Some("glibc.malloc.hugetlb=1"));
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.arena_max=2")).as_deref(),
            Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1")
        );
        assert_eq!(tunables_with_huge_pages(Some("glibc.malloc.hugetlb=0")), None);
        assert_eq!(tunables_with_huge_pages(Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2")), None);
        // A tunable whose name only begins the same is another tunable.
        assert!(tunables_with_huge_pages(Some("glibc.malloc.hugetlbx=1")).is_some());
    }

    #[test]
    fn only_madvise_mode_is_worth_a_restart() {
        assert!(madvise_mode("always [madvise] never\n"));
        assert!(!madvise_mode("[always] madvise never\n"));
        assert!(!madvise_mode("always madvise [never]\n"));
        assert!(!madvise_mode(""));
    }
}
