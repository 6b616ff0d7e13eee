//! `isolde analyze --processes N --process I [--hostfile F] [--threads T]`
//! and `--local-processes N`: the command line of a distributed check
//! ([`crate::dist`]).
//!
//! Every process of a cluster gets the same arguments except `--process`;
//! without `--hostfile`, process `i` listens on `127.0.0.1:2101+i` (timely's
//! default ports). `--local-processes N` starts processes 1 to N-1 itself (this
//! process is 0), on free loopback ports written to a hostfile in a
//! temporary directory, with standard output discarded (process 0 prints the
//! result); a child that fails on its own ends this process with its message.

use super::Checked;
use crate::check::CheckOptions;
use crate::dist::{self, Topology, WorkerStats};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct DistArgs {
    /// `--processes`.
    pub processes: Option<usize>,
    /// `--process`.
    pub process: Option<usize>,
    /// `--hostfile`.
    pub hostfile: Option<PathBuf>,
    /// `--threads`.
    pub threads: usize,
    /// `--local-processes`.
    pub local_processes: Option<usize>,
    /// `--start-timeout`, seconds.
    pub start_timeout: f64,
}

impl DistArgs {
    /// Whether a distributed run was asked for.
    pub fn wanted(&self) -> bool {
        self.processes.is_some() || self.local_processes.is_some()
    }
}

/// A distributed check's result on this process.
pub struct DistChecked {
    /// Process 0's result (`None` on the others).
    pub checked: Option<Checked>,
    /// The exit status every process takes.
    pub status: u8,
    /// Every worker's figures (process 0).
    pub workers: Vec<WorkerStats>,
}

/// Runs this process's part of a distributed check of `file`.
pub fn check(file: &Path, opts: &CheckOptions, args: &DistArgs) -> Result<DistChecked, String> {
    let t0 = Instant::now();
    let deadline = Duration::from_secs_f64(args.start_timeout.max(0.1));
    let mut children = Vec::new();
    let mut temp = None;
    let topo = match (args.local_processes, args.processes) {
        (Some(n), _) if n <= 1 => Topology::InProcess { workers: args.threads.max(1), binary: false },
        (Some(n), _) => {
            let addresses = free_ports(n)?;
            let (dir, hostfile) = temp_hostfile(&addresses)?;
            temp = Some(dir);
            children = spawn_children(n, &hostfile, args)?;
            watch_children(&mut children);
            Topology::Cluster { processes: n, process: 0, threads: args.threads, addresses }
        }
        (None, Some(n)) => {
            let process = args.process.ok_or("--processes needs --process I (this process's index, from 0)")?;
            let addresses = match &args.hostfile {
                Some(f) => dist::cluster::read_hostfile(f, n).map_err(|e| e.to_string())?,
                None => (0..n).map(|i| format!("127.0.0.1:{}", 2101 + i)).collect(),
            };
            Topology::Cluster { processes: n, process, threads: args.threads, addresses }
        }
        (None, None) => return Err("no distributed run was asked for".into()),
    };
    let run = dist::run(file, opts, topo, deadline);
    let failed = run.is_err();
    finish_children(children, failed);
    if let Some(dir) = temp {
        let _ = std::fs::remove_dir_all(dir);
    }
    let finished = run.map_err(|e| e.to_string())?;
    let parse_time = t0.elapsed();
    let workers = finished.report.as_ref().map(|r| r.workers.clone()).unwrap_or_default();
    let checked = finished.report.map(|r| Checked {
        history: r.history,
        outcome: r.outcome,
        parse_time,
        parse_peak_mb: super::peak_rss_mb(),
    });
    Ok(DistChecked { checked, status: finished.status, workers })
}

/// `n` free loopback addresses (bound once to find them, then released).
fn free_ports(n: usize) -> Result<Vec<String>, String> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot find free loopback ports: {e}"))?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.to_string()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot find free loopback ports: {e}"))
}

/// Writes the hostfile into a fresh temporary directory.
fn temp_hostfile(addresses: &[String]) -> Result<(PathBuf, PathBuf), String> {
    let dir = std::env::temp_dir().join(format!("isolde-local-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let file = dir.join("hosts.txt");
    std::fs::write(&file, addresses.join("\n") + "\n").map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok((dir, file))
}

/// Starts processes 1 to `n - 1` with this process's arguments.
fn spawn_children(n: usize, hostfile: &Path, args: &DistArgs) -> Result<Vec<Child>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to start it again: {e}"))?;
    let mut argv: Vec<std::ffi::OsString> = Vec::new();
    let mut skip = false;
    for a in std::env::args_os().skip(1) {
        if skip {
            skip = false;
            continue;
        }
        let s = a.to_string_lossy();
        // Replaced below: the user's own --local-processes and --threads.
        if s == "--local-processes" || s == "--threads" {
            skip = true;
            continue;
        }
        if s.starts_with("--local-processes=") || s.starts_with("--threads=") {
            continue;
        }
        argv.push(a);
    }
    let mut children = Vec::new();
    for i in 1..n {
        let child = Command::new(&exe)
            .args(&argv)
            .arg("--processes")
            .arg(n.to_string())
            .arg("--process")
            .arg(i.to_string())
            .arg("--hostfile")
            .arg(hostfile)
            .arg("--threads")
            .arg(args.threads.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start local process {i}: {e}"))?;
        children.push(child);
    }
    Ok(children)
}

/// Ends this process (status 2, with the child's message) when a child
/// fails before the run has gone far: a child that cannot even start its
/// part (a usage error, a file it cannot read) would otherwise leave this
/// process waiting out the start deadline. Takes each child's stderr, read
/// by the watching thread.
fn watch_children(children: &mut [Child]) {
    let pids: Vec<u32> = children.iter().map(Child::id).collect();
    for (i, c) in children.iter_mut().enumerate() {
        let Some(mut err) = c.stderr.take() else { continue };
        let pid = pids[i];
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            // stderr closes when the child ends; a failed child said why.
            let status = wait_status(pid);
            // A child's lost connection is this process's to report (its
            // own error, or the peer that died).
            let own = !text.contains("distributed run failed");
            if status.is_some_and(|code| code == 2) && own && !text.trim().is_empty() {
                eprintln!("isolde: local process {} failed: {}", i + 1, text.trim());
                std::process::exit(2);
            }
        });
    }
}

/// The exit status of child `pid` once it has ended (without reaping it,
/// so that [`finish_children`] still can).
fn wait_status(pid: u32) -> Option<i32> {
    #[cfg(unix)]
    {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid with WNOWAIT only reads the child's state.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r != 0 {
            return None;
        }
        // SAFETY: filled by waitid for an exited child.
        let code = unsafe { info.si_status() };
        let exited = info.si_code == libc::CLD_EXITED;
        exited.then_some(code)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        None
    }
}

/// Waits for the children (killing them when this process failed).
fn finish_children(children: Vec<Child>, failed: bool) {
    for mut c in children {
        if failed {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
}

/// The `--stats` lines of a distributed run: per process, its windows' ops,
/// traffic and stage times.
pub fn print_stats(workers: &[WorkerStats], txns: usize) {
    let processes = workers.iter().map(|w| w.process).max().map_or(0, |p| p + 1);
    let (mut sent, mut recv) = (0u64, 0u64);
    for p in 0..processes {
        let ws: Vec<&WorkerStats> = workers.iter().filter(|w| w.process == p).collect();
        let sum = |f: &dyn Fn(&WorkerStats) -> u64| ws.iter().map(|w| f(w)).sum::<u64>();
        let (s, r) = (sum(&|w| w.traffic.sent), sum(&|w| w.traffic.received));
        sent += s;
        recv += r;
        let mut times: Vec<(String, f64, u64)> = Vec::new();
        for w in &ws {
            for (name, t, mb) in &w.times {
                match times.iter_mut().find(|(n, _, _)| n == name) {
                    Some(x) => (x.1, x.2) = (x.1.max(*t), x.2.max(*mb)),
                    None => times.push((name.clone(), *t, *mb)),
                }
            }
        }
        let times: Vec<String> = times.iter().map(|(n, t, mb)| format!("{n} {t:.3}s ({mb} MB)")).collect();
        eprintln!(
            "process {p}: {} workers, ops owned {}, bytes {}, owned micro-ops {}, edges {}, sent {} B, received {} B, \
             label rounds {}, migrants {}, components {}, peak {} MB\n  {}",
            ws.len(),
            sum(&|w| w.ops as u64),
            sum(&|w| w.bytes),
            sum(&|w| w.owned_mops as u64),
            sum(&|w| w.edges as u64),
            s,
            r,
            ws.iter().map(|w| w.label_rounds).max().unwrap_or(0),
            sum(&|w| w.migrants as u64),
            sum(&|w| w.components as u64),
            ws.iter().filter_map(|w| w.peak_mb).max().map_or("?".into(), |m| m.to_string()),
            times.join("  ")
        );
    }
    eprintln!(
        "distributed: {} processes, {} workers; {:.0} bytes exchanged per transaction ({} B sent in all)",
        processes,
        workers.len(),
        sent as f64 / txns.max(1) as f64,
        sent
    );
    let _ = recv;
}
