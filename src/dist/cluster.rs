//! Starting the workers: one process's threads, or one process of a cluster.
//!
//! timely is configured explicitly ([`timely::Config`]), never from the
//! command line (its getopts flags would clash with the CLI's): a number of
//! threads in this process, or `Cluster` with this process's index and every
//! process's `host:port`. timely has no fault tolerance, so this module
//! supplies what a user needs around it:
//!
//! * its own address is tried before timely binds it, so a port in use is
//!   reported at once;
//! * a start deadline: timely retries connections every second, forever;
//!   when the workers have not all met by the deadline, the process prints
//!   which peers it waited for and exits with status 2;
//! * a peer that dies makes timely's communication threads panic on every
//!   other process ("socket closed"): while a cluster runs, a panic anywhere
//!   ends the process with a message and status 2, never a partial result.

use super::bsp::Bsp;
use super::{run_worker, DistError, Finished};
use crate::check::CheckOptions;
use crate::ingest::map_edn;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Workers of this process that have finished their part (their result,
/// or the error every worker agreed on, is known).
static FINISHED: AtomicUsize = AtomicUsize::new(0);
/// Workers of this process.
static WORKERS: AtomicUsize = AtomicUsize::new(usize::MAX);
use std::sync::Arc;
use std::time::Duration;

/// How the workers are laid out.
#[derive(Clone, Debug)]
pub enum Topology {
    /// `workers` threads in this process; `binary` sends every message
    /// through byte channels (the encoding a cluster uses) instead of
    /// typed ones.
    InProcess {
        /// Worker threads.
        workers: usize,
        /// Exchange through bytes.
        binary: bool,
    },
    /// One process of a cluster.
    Cluster {
        /// Processes in all.
        processes: usize,
        /// This process's index.
        process: usize,
        /// Worker threads per process.
        threads: usize,
        /// Every process's `host:port`, by index.
        addresses: Vec<String>,
    },
}

impl Topology {
    /// The timely configuration.
    fn config(&self) -> timely::Config {
        let communication = match self {
            Topology::InProcess { workers, binary: false } => timely::CommunicationConfig::Process((*workers).max(1)),
            Topology::InProcess { workers, binary: true } => {
                timely::CommunicationConfig::ProcessBinary((*workers).max(1))
            }
            Topology::Cluster { process, threads, addresses, .. } => timely::CommunicationConfig::Cluster {
                threads: (*threads).max(1),
                process: *process,
                addresses: addresses.clone(),
                report: false,
                zerocopy: false,
            },
        };
        timely::Config { communication, worker: timely::WorkerConfig::default() }
    }

    fn process(&self) -> usize {
        match self {
            Topology::InProcess { .. } => 0,
            Topology::Cluster { process, .. } => *process,
        }
    }
}

/// Reads a hostfile: one `host:port` per line, blank lines and `#`
/// comments ignored; at least `processes` of them.
pub fn read_hostfile(path: &Path, processes: usize) -> Result<Vec<String>, DistError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| DistError::Cluster(format!("cannot read the hostfile {}: {e}", path.display())))?;
    let hosts: Vec<String> =
        text.lines().map(|l| l.split('#').next().unwrap_or("").trim().to_string()).filter(|l| !l.is_empty()).collect();
    for (i, h) in hosts.iter().enumerate() {
        if !h.contains(':') {
            return Err(DistError::Cluster(format!(
                "{}: entry {} is `{h}`, not `host:port` (one process per line, in process order)",
                path.display(),
                i + 1
            )));
        }
    }
    if hosts.len() < processes {
        return Err(DistError::Cluster(format!(
            "{} lists {} host:port lines for --processes {processes}: give one line per process, in process order",
            path.display(),
            hosts.len()
        )));
    }
    Ok(hosts[..processes].to_vec())
}

/// Checks the layout before anything starts.
fn validate(topo: &Topology) -> Result<(), DistError> {
    if let Topology::Cluster { processes, process, addresses, threads } = topo {
        if *processes == 0 || *threads == 0 {
            return Err(DistError::Cluster("--processes and --threads must be at least 1".into()));
        }
        if process >= processes {
            return Err(DistError::Cluster(format!(
                "--process {process} is out of range for --processes {processes}: processes are numbered 0 to {}",
                processes - 1
            )));
        }
        if addresses.len() != *processes {
            return Err(DistError::Cluster(format!("{} addresses for {processes} processes", addresses.len())));
        }
        // timely binds every address in this process's entry; try first, so
        // that a port in use is an error now rather than a hang.
        for addr in addresses[*process].split_whitespace() {
            std::net::TcpListener::bind(addr).map_err(|e| {
                DistError::Cluster(format!(
                    "process {process} cannot listen on {addr} ({e}): the port is in use or the address is not this \
                     host's; choose a free port in the hostfile"
                ))
            })?;
        }
    }
    Ok(())
}

/// Has glibc's allocator give large freed blocks back to the system at
/// once. By default glibc raises its mmap threshold to the size of every
/// mmapped block freed (up to 32 MB), so once a stage frees its columns,
/// the next stage's allocations of up to 32 MB come from the heap, and
/// memory freed in the middle of the heap stays resident. A distributed
/// run's stages free and allocate large columns in turn (the window's
/// micro-ops once sent, the encoded shuffle as it is decoded, the
/// inference's edges once converted), so its largest process peaked about
/// 170 MB (19%) higher at 2M transactions than with a fixed threshold of
/// 128 KB, in the same time (`docs/distributed.md`). Blocks of 128 KB and
/// more are then mapped and unmapped on their own (a large vector grows and
/// shrinks by `mremap`, without a copy).
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called before
    // the workers start, and a refusal (0) leaves glibc's defaults.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10);
    }
}

/// Checks the history at `path` with the workers of `topo`; returns the
/// report on the process holding worker 0 (`None` elsewhere) and the exit
/// status every process takes. On a cluster,
/// a start that does not complete within `deadline`, or a peer that dies,
/// ends this process with status 2 after a message on stderr.
pub fn run(path: &Path, opts: &CheckOptions, topo: Topology, deadline: Duration) -> Result<Finished, DistError> {
    validate(&topo)?;
    let input = Arc::new(map_edn(path)?);
    let opts = Arc::new(opts.clone());
    let process = topo.process();
    let cluster = matches!(topo, Topology::Cluster { .. });
    let started = Arc::new(AtomicBool::new(false));
    if cluster {
        install_panic_exit();
        watch_start(started.clone(), deadline, &topo);
        give_back_freed_memory();
    }
    let config = topo.config();
    WORKERS.store(
        match &topo {
            Topology::InProcess { workers, .. } => (*workers).max(1),
            Topology::Cluster { threads, .. } => (*threads).max(1),
        },
        Ordering::SeqCst,
    );
    FINISHED.store(0, Ordering::SeqCst);
    // timely prints "awaiting connections" on standard output while it
    // connects; standard output is the result's (JSON for machines).
    let _quiet = cluster.then(QuietStdout::new);
    let (inp, op, st) = (input.clone(), opts.clone(), started.clone());
    let guards = timely::execute(config, move |worker| {
        let mut bsp = Bsp::new(worker);
        // Every worker has met the others once the first superstep ends.
        let met = bsp.sum(0);
        if met.is_ok() {
            st.store(true, Ordering::SeqCst);
        }
        let done = met.and_then(|_| run_worker(&mut bsp, &inp, &op, process));
        FINISHED.fetch_add(1, Ordering::SeqCst);
        done
    })
    .map_err(|e| DistError::Cluster(format!("cannot start the workers: {e}")))?;
    let mut report = None;
    let mut status = 2;
    let mut first_error = None;
    for r in guards.join() {
        match r {
            Ok(Ok(f)) => {
                status = f.status;
                if f.report.is_some() {
                    report = f.report;
                }
            }
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(panic) => {
                first_error.get_or_insert(DistError::Cluster(format!("a worker failed: {panic}")));
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(Finished { report, status }),
    }
}

/// Standard output sent to /dev/null until dropped (nothing of isolde's
/// own is printed while the workers run).
struct QuietStdout {
    #[cfg(unix)]
    saved: Option<i32>,
}

impl QuietStdout {
    fn new() -> QuietStdout {
        #[cfg(unix)]
        {
            use std::io::Write;
            let _ = std::io::stdout().flush();
            // SAFETY: plain descriptor calls; on any failure stdout is left
            // as it was.
            let saved = unsafe {
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
                let saved = libc::dup(1);
                let ok = null >= 0 && saved >= 0 && libc::dup2(null, 1) >= 0;
                if null >= 0 {
                    libc::close(null);
                }
                if ok {
                    Some(saved)
                } else {
                    if saved >= 0 {
                        libc::close(saved);
                    }
                    None
                }
            };
            QuietStdout { saved }
        }
        #[cfg(not(unix))]
        QuietStdout {}
    }
}

impl Drop for QuietStdout {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(fd) = self.saved.take() {
            // SAFETY: `fd` is the descriptor saved in `new`.
            unsafe {
                libc::dup2(fd, 1);
                libc::close(fd);
            }
        }
    }
}

/// While a cluster runs, a panic (timely's reaction to a peer that died) ends
/// the process with a message and status 2; after every worker here has
/// finished, a panic of timely's connections (a peer that exited first) is
/// ignored.
fn install_panic_exit() {
    std::panic::set_hook(Box::new(|info| {
        // Once every worker here has its result (or the error all agreed
        // on), a peer closing its connections first is the run's end, not
        // a failure.
        if FINISHED.load(Ordering::SeqCst) >= WORKERS.load(Ordering::SeqCst) {
            return;
        }
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("a worker failed");
        eprintln!(
            "isolde: distributed run failed: {msg}\nisolde: a peer process ended or cannot be reached; nothing was \
             reported; run every process again"
        );
        std::process::exit(2);
    }));
}

/// Ends the process with status 2 when the workers have not met by the
/// deadline.
fn watch_start(started: Arc<AtomicBool>, deadline: Duration, topo: &Topology) {
    let peers = match topo {
        Topology::Cluster { addresses, process, .. } => addresses
            .iter()
            .enumerate()
            .filter(|(i, _)| i != process)
            .map(|(i, a)| format!("process {i} at {a}"))
            .collect::<Vec<_>>()
            .join(", "),
        Topology::InProcess { .. } => String::new(),
    };
    std::thread::spawn(move || {
        let step = Duration::from_millis(100);
        let mut waited = Duration::ZERO;
        while waited < deadline {
            if started.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(step);
            waited += step;
        }
        if !started.load(Ordering::SeqCst) {
            eprintln!(
                "isolde: the processes did not all connect within {:.0} s (waiting for {peers}): start every \
                 process with the same --processes and --hostfile, each with its own --process, and check that the \
                 hosts can reach each other",
                deadline.as_secs_f64()
            );
            std::process::exit(2);
        }
    });
}
