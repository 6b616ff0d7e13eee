//! The command-line front ends' shared plumbing, and [`elle_cli`], the
//! argument model of elle-cli (ligurio/elle-cli) translated onto isolde.
//!
//! The `isolde` binary is a thin shell over this module: reading a history
//! with a spinner for slow inputs, checking it, writing `--directory` with a
//! progress bar, and choosing where each file's directory goes.

pub mod convert;
pub mod dist;
pub mod elle_cli;
pub mod help;
pub mod jepsen;
pub mod memory_guard;

use crate::check::{self, CheckOptions, Outcome};
use crate::history::transaction_order::{self, OrderFile};
use crate::history::History;
use crate::ingest::{self, Format, ReadOptions};
use crate::reports::directory::{self, PlotOptions};
use crate::si_check;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A history read and checked.
pub struct Checked {
    /// The history as read.
    pub history: History,
    /// The analysis.
    pub outcome: Outcome,
    /// Time spent reading.
    pub parse_time: Duration,
    /// Peak resident memory after reading, in MB (Linux only).
    pub parse_peak_mb: Option<u64>,
}

/// Reads `path` (`-` is standard input) and checks it, with a spinner on
/// stderr when stderr is a terminal and the run takes more than a second.
/// Errors are the reader's or the checker's message.
pub fn read_and_check(path: &Path, format: Format, read: ReadOptions, opts: &CheckOptions) -> Result<Checked, String> {
    read_and_check_ordered(path, format, read, opts, None)
}

/// [`read_and_check`] with a transaction order file (`--transaction-order`),
/// merged with the order the ops' own fields give.
pub fn read_and_check_ordered(
    path: &Path,
    format: Format,
    read: ReadOptions,
    opts: &CheckOptions,
    order: Option<&OrderFile>,
) -> Result<Checked, String> {
    let t0 = Instant::now();
    let size = if path.as_os_str() == "-" { 0 } else { std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) };
    let spinner = spinner(size);
    if let Some(p) = &spinner {
        p.set_message(format!("parsing {} ({:.0} MB)", path.display(), size as f64 / 1e6));
    }
    let h = ingest::read_path_with(path, format, read);
    let h = match h {
        Ok(h) => h,
        Err(e) => {
            if let Some(p) = &spinner {
                p.finish_and_clear();
            }
            return Err(e.to_string());
        }
    };
    let h = match with_order_file(h, opts, order) {
        Ok(h) => h,
        Err(e) => {
            if let Some(p) = &spinner {
                p.finish_and_clear();
            }
            return Err(e);
        }
    };
    let parse_time = t0.elapsed();
    store_notes(&h);
    let parse_peak_mb = peak_rss_mb();
    let mut watched;
    let mut opts = opts;
    if let Some(p) = &spinner {
        let what = format!("analyzing {} operations", h.ops.len());
        p.set_message(what.clone());
        if let Some(exact) = &opts.exact {
            watched = opts.clone();
            watched.exact = Some(si_check::ExactOptions { progress: Some(&EXACT_PROGRESS), ..exact.clone() });
            opts = &watched;
            show_exact_progress(p.clone(), what);
        }
    }
    let outcome = check::check(&h, opts);
    if let Some(p) = spinner {
        p.finish_and_clear();
    }
    let outcome = outcome.map_err(|e| e.to_string())?;
    Ok(Checked { history: h, outcome, parse_time, parse_peak_mb })
}

/// `h` with the order of `file` merged into its own (see
/// [`crate::history::transaction_order`]). The order gives write orders of
/// registers; a list-append history's reads already give its version
/// orders, so a file for one is refused rather than ignored.
fn with_order_file(mut h: History, opts: &CheckOptions, file: Option<&OrderFile>) -> Result<History, String> {
    let Some(file) = file else { return Ok(h) };
    if check::resolve_workload(&h, opts.workload) != crate::anomaly::Workload::RwRegister {
        return Err(format!(
            "--transaction-order {}: a transaction order gives the write orders of rw-register histories; {} is a list-append history, whose reads give its version orders",
            file.name, h.source
        ));
    }
    h.transaction_order = transaction_order::load(&h, Some(file))?.map(Box::new);
    Ok(h)
}

/// Says on stderr how much of a history read from Jepsen's `test.jepsen`
/// was recovered, and why reading stopped, when it was not read whole.
pub fn store_notes(h: &History) {
    let Some(s) = &h.store else { return };
    if let Some(p) = &s.partial {
        eprintln!("isolde: {}: {}", h.source, p.describe());
    }
    for n in &s.notes {
        eprintln!("isolde: {}: {n}", h.source);
    }
}

/// Progress of the exact check of the history being read, shown by the
/// spinner (histories are checked one at a time).
static EXACT_PROGRESS: si_check::ExactProgress = si_check::ExactProgress::new();

/// Shows the exact check's progress (level, phase, components solved,
/// decisions) after `what` on `p`, every quarter second until it finishes.
fn show_exact_progress(p: indicatif::ProgressBar, what: String) {
    std::thread::spawn(move || {
        while !p.is_finished() {
            std::thread::sleep(Duration::from_millis(250));
            match EXACT_PROGRESS.describe() {
                Some(d) => p.set_message(format!("{what}; {d}")),
                None => p.set_message(what.clone()),
            }
        }
    });
}

/// A spinner on stderr for runs that take more than about a second, only
/// when stderr is a terminal (never in pipelines or CI logs). Big inputs show
/// it at once; otherwise it stays hidden for the first second, so quick runs
/// print nothing.
pub fn spinner(input_bytes: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let p = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::hidden());
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
        p.set_style(style);
    }
    let show = |p: &indicatif::ProgressBar| {
        p.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        p.enable_steady_tick(Duration::from_millis(100));
    };
    if input_bytes >= 32 << 20 {
        show(&p);
    } else {
        let later = p.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if !later.is_finished() {
                show(&later);
            }
        });
    }
    Some(p)
}

/// Peak resident memory so far (Linux `VmHWM`), in MB.
pub fn peak_rss_mb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// Where the output directory of `file` goes: `dir` itself when one file is
/// checked, else `dir/<file name>` (escaped as [`directory::safe_file_name`]
/// does; standard input is `stdin`; a directory or a Jepsen store name,
/// `latest` or `history.edn`, is its whole path joined with `_`, as in
/// `store_my-test_latest`) so that files do not overwrite each other's
/// explanations.
pub fn directory_for(dir: &Path, file: &Path, several: bool) -> PathBuf {
    if !several {
        return dir.to_path_buf();
    }
    let jepsen_name = |n: &std::ffi::OsStr| n == "latest" || ingest::jepsen::STORE_FILES.iter().any(|f| n == *f);
    let name = if file.as_os_str() == "-" {
        "stdin".to_string()
    } else if file.file_name().is_some_and(jepsen_name) || file.is_dir() {
        // Jepsen runs (`store/*/latest`, `store/*/*/history.edn`) share
        // their last names: the whole path tells them apart.
        let parts = file.components().filter_map(|c| match c {
            std::path::Component::Normal(p) => Some(p.to_string_lossy()),
            _ => None,
        });
        parts.collect::<Vec<_>>().join("_")
    } else {
        file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| file.display().to_string())
    };
    dir.join(directory::safe_file_name(&name))
}

/// Writes the output directory, with a progress bar on stderr (when stderr
/// is a terminal) while plots render, then its notes on stderr. The verdict
/// is already out: a problem with the directory is a warning, never instead
/// of the verdict or its exit status.
pub fn write_directory(h: &History, o: &Outcome, dir: &Path, plots: &PlotOptions) {
    let bar = std::io::stderr().is_terminal().then(|| {
        let p = indicatif::ProgressBar::new(0);
        if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} plots [{elapsed}] {msg}") {
            p.set_style(style);
        }
        p.set_message(dir.display().to_string());
        p
    });
    let progress = |p: directory::Progress| {
        if let Some(b) = &bar {
            b.set_length(p.total as u64);
            b.set_position(p.done as u64);
        }
    };
    let r = directory::write_with_progress(h, o, dir, plots, &progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match r {
        Ok(notes) => {
            for n in notes {
                eprintln!("isolde: {n}");
            }
        }
        Err(e) => eprintln!("isolde: warning: could not write the output directory {}: {e}", dir.display()),
    }
}
