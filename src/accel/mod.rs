//! Where pruning's reachability runs: today's CPU rows, their data-parallel
//! mirror, or CUDA kernels.
//!
//! Pruning (see [`crate::si_check::prune`]) needs three things from a
//! bit-matrix over the begin/commit graph in a topological order: the
//! *closure* (windowed reachability rows), the *constraint test* (does some
//! edge of a side have a reverse path?) and, after a round derives edges,
//! an *update* of the closure. Three paths compute them:
//! - [`ReachPath::Classic`]: [`crate::accel::reach::WindowReach`], rows
//!   by node id, recomputed each round;
//! - [`ReachPath::Mirror`]: [`bitreach`], the same relation laid out as the
//!   GPU kernels lay it out (rows by position in a band of absolute words,
//!   closed column block by column block), with
//!   in-place updates when a round's edges keep the order;
//! - [`ReachPath::Gpu`] (cargo feature `gpu`): `kernels/reach.cu` run by
//!   [`gpu`], word for word the mirror's algorithm.
//!
//! All three compute the same relation, so the pruned constraints, the
//! verdict and the witnesses do not depend on the path (the property tests
//! in `tests/exact/accel.rs` and `tests/gpu/gpu_kernels.rs` check it). The relation is
//! windowed by the memory budget the same way on every path, so a history
//! whose rows do not fit device memory is refused by the GPU (under `auto`
//! the CPU takes over; rows never exceed `--reach-memory` by more than the
//! band layout's one word per node, see [`bitreach`]).

pub mod bitreach;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod reach;

use bitreach::{BitReach, Plan};
use reach::{Dag, Reach, WindowReach};
use std::fmt;
use std::time::{Duration, Instant};

/// Whether to use a GPU (`isolde analyze --gpu`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuMode {
    /// When the `gpu` feature is built, a device is present and the graph is
    /// large enough to gain; any GPU failure falls back to the CPU.
    #[default]
    Auto,
    /// Always; no usable GPU, or a GPU failure, is an error.
    On,
    /// Never touch CUDA.
    Off,
}

/// Which CPU computation serves when the GPU does not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuPath {
    /// [`WindowReach`], recomputed every round.
    Classic,
    /// The mirror of the GPU kernels ([`bitreach`]): the default, as its
    /// column-block closure measured faster than classic rows on every
    /// shape measured but one within noise (`docs/performance.md`).
    #[default]
    Mirror,
}

/// How pruning computes reachability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccelOptions {
    /// GPU use.
    pub gpu: GpuMode,
    /// The CPU computation.
    pub cpu: CpuPath,
}

/// Graphs with fewer begin/commit nodes than this stay on the CPU under
/// [`GpuMode::Auto`]: transfers and launches cost more than they save. On
/// an H100 against the band mirror on 16 cores (docs/gpu.md) the mirror
/// won up to 30,000 nodes and the GPU from 40,000.
pub const GPU_MIN_NODES: usize = 40_000;

/// The computation that ran a phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReachPath {
    /// The phase did not run.
    #[default]
    None,
    /// [`WindowReach`].
    Classic,
    /// [`bitreach`] on the CPU.
    Mirror,
    /// The CUDA kernels.
    Gpu,
}

impl fmt::Display for ReachPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReachPath::None => "-",
            ReachPath::Classic => "cpu-classic",
            ReachPath::Mirror => "cpu-mirror",
            ReachPath::Gpu => "gpu",
        })
    }
}

/// One phase's path, runs and time.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseStats {
    /// The path of the last run (a GPU failure switches to the CPU).
    pub path: ReachPath,
    /// Runs.
    pub runs: u32,
    /// Time, transfers included.
    pub time: Duration,
}

impl PhaseStats {
    fn add(&mut self, path: ReachPath, since: Instant) {
        self.path = path;
        self.runs += 1;
        self.time += since.elapsed();
    }
}

impl fmt::Display for PhaseStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} x{} {:.3}s", self.path, self.runs, self.time.as_secs_f64())
    }
}

/// What ran where during pruning, for `--stats`.
#[derive(Clone, Debug, Default)]
pub struct AccelStats {
    /// Closures computed from scratch.
    pub closure: PhaseStats,
    /// Constraint tests.
    pub test: PhaseStats,
    /// In-place updates after a round (edges inserted counted as runs).
    pub update: PhaseStats,
    /// Host-device copies (GPU only).
    pub transfer: Duration,
    /// Kernel time (GPU only, by CUDA events).
    pub kernel: Duration,
    /// Host copies of device rows (GPU only: rows stay on the device
    /// unless a host query needs them; their time is in `transfer`).
    pub host_copies: u64,
    /// Largest device allocation, bytes (GPU only).
    pub device_bytes: usize,
    /// Why the GPU was not used or was left (`auto`), if it was wanted.
    pub fallback: Option<String>,
    /// A GPU failure under [`GpuMode::On`]: the check stops with it.
    pub gpu_error: Option<String>,
}

impl AccelStats {
    /// Adds another pass's figures (narrowing runs several).
    pub fn add(&mut self, o: &AccelStats) {
        for (a, b) in [(&mut self.closure, o.closure), (&mut self.test, o.test), (&mut self.update, o.update)] {
            if b.runs > 0 {
                a.path = b.path;
            }
            a.runs += b.runs;
            a.time += b.time;
        }
        self.transfer += o.transfer;
        self.kernel += o.kernel;
        self.host_copies += o.host_copies;
        self.device_bytes = self.device_bytes.max(o.device_bytes);
        if o.fallback.is_some() {
            self.fallback.clone_from(&o.fallback);
        }
        if o.gpu_error.is_some() {
            self.gpu_error.clone_from(&o.gpu_error);
        }
    }
}

impl fmt::Display for AccelStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reach: closure {}  test {}  update {}", self.closure, self.test, self.update)?;
        if self.closure.path == ReachPath::Gpu || self.test.path == ReachPath::Gpu {
            write!(
                f,
                "  transfer {:.3}s  kernels {:.3}s  device memory {} MB  host copies {}",
                self.transfer.as_secs_f64(),
                self.kernel.as_secs_f64(),
                self.device_bytes >> 20,
                self.host_copies
            )?;
        }
        if let Some(w) = &self.fallback {
            write!(f, "  (gpu not used: {w})")?;
        }
        Ok(())
    }
}

/// A computed closure, on whichever path.
pub enum Closure {
    /// [`WindowReach`].
    Classic(WindowReach),
    /// [`BitReach`] on the host.
    Mirror(BitReach),
    /// Rows resident on the device (a host copy made on demand).
    #[cfg(feature = "gpu")]
    Gpu(gpu::DeviceClosure),
}

impl Closure {
    /// The band layout's positions by node and window words, when the
    /// path uses it (not for classic rows). Never copies device rows.
    pub fn layout(&self) -> Option<(&[u32], usize)> {
        match self {
            Closure::Classic(_) => None,
            Closure::Mirror(b) => Some((&b.pos, b.words)),
            #[cfg(feature = "gpu")]
            Closure::Gpu(d) => Some((d.pos(), d.words())),
        }
    }

    /// The host rows in the band layout, when the path has them (a device
    /// closure is copied to the host on first use).
    pub fn bits(&self) -> Option<&BitReach> {
        match self {
            Closure::Classic(_) => None,
            Closure::Mirror(b) => Some(b),
            #[cfg(feature = "gpu")]
            Closure::Gpu(d) => Some(d.host()),
        }
    }
}

impl Reach for Closure {
    #[inline]
    fn reaches(&self, from: u32, to: u32) -> bool {
        match self {
            Closure::Classic(r) => r.reaches(from, to),
            Closure::Mirror(r) => r.reaches(from, to),
            #[cfg(feature = "gpu")]
            Closure::Gpu(d) => d.host().reaches(from, to),
        }
    }
}

/// Errors of [`Engine::new`].
#[derive(Debug, thiserror::Error)]
pub enum AccelError {
    /// `--gpu on` and no usable GPU.
    #[error("--gpu on: {0}")]
    NoGpu(String),
}

/// Computes closures, tests and updates on the chosen path, keeping
/// [`AccelStats`].
pub struct Engine {
    opts: AccelOptions,
    #[cfg(feature = "gpu")]
    gpu: Option<std::sync::Arc<gpu::Gpu>>,
    /// What ran.
    pub stats: AccelStats,
}

/// Whether a usable GPU is present (always `Err` without the `gpu` feature);
/// never panics, and touches CUDA only through run-time probes.
pub fn gpu_probe() -> Result<String, String> {
    #[cfg(feature = "gpu")]
    {
        gpu::shared().map(|g| g.describe())
    }
    #[cfg(not(feature = "gpu"))]
    {
        Err("this isolde was built without the `gpu` feature".into())
    }
}

impl Engine {
    /// An engine for graphs of `nodes` begin/commit nodes. Under
    /// [`GpuMode::On`] fails when no GPU is usable.
    pub fn new(opts: AccelOptions, nodes: usize) -> Result<Engine, AccelError> {
        let mut stats = AccelStats::default();
        #[cfg(feature = "gpu")]
        let mut gpu = None;
        match opts.gpu {
            GpuMode::Off => {}
            GpuMode::On => match gpu_probe() {
                Ok(_) => {
                    #[cfg(feature = "gpu")]
                    {
                        gpu = gpu::shared().ok();
                    }
                }
                Err(e) => return Err(AccelError::NoGpu(e)),
            },
            GpuMode::Auto if nodes < GPU_MIN_NODES => {}
            GpuMode::Auto => match gpu_probe() {
                Ok(_) => {
                    #[cfg(feature = "gpu")]
                    {
                        gpu = gpu::shared().ok();
                    }
                }
                // Without the feature, auto simply means the CPU.
                Err(e) => {
                    if cfg!(feature = "gpu") {
                        stats.fallback = Some(e);
                    }
                }
            },
        }
        Ok(Engine {
            opts,
            #[cfg(feature = "gpu")]
            gpu,
            stats,
        })
    }

    /// Whether a GPU failure is fatal.
    #[cfg(feature = "gpu")]
    fn strict(&self) -> bool {
        self.opts.gpu == GpuMode::On
    }

    /// Records a GPU failure: under `auto` the GPU is dropped for the rest
    /// of the check and the CPU takes over; under `on` it is kept as the
    /// check's error.
    #[cfg(feature = "gpu")]
    fn gpu_failed(&mut self, e: String) {
        self.gpu = None;
        if self.strict() {
            self.stats.gpu_error = Some(e);
        } else {
            eprintln!("warning: GPU pruning failed, continuing on the CPU: {e}");
            self.stats.fallback = Some(e);
        }
    }

    /// Whether the check must stop (a GPU failure under `--gpu on`).
    pub fn failed(&self) -> Option<&str> {
        self.stats.gpu_error.as_deref()
    }

    /// The closure of `dag` with rows of `window_bits` bits.
    pub fn closure(&mut self, dag: &Dag<'_>, window_bits: usize) -> Closure {
        self.note_host_copies();
        let t = Instant::now();
        if self.opts.cpu == CpuPath::Classic && !self.wants_gpu() {
            let r = WindowReach::new(dag, window_bits);
            self.stats.closure.add(ReachPath::Classic, t);
            return Closure::Classic(r);
        }
        let plan = Plan::new(dag, window_bits);
        #[cfg(feature = "gpu")]
        if let Some(g) = self.gpu.clone() {
            match g.closure(&plan, &mut self.stats) {
                Ok(d) => {
                    self.stats.closure.add(ReachPath::Gpu, t);
                    return Closure::Gpu(d);
                }
                Err(e) => self.gpu_failed(e.to_string()),
            }
        }
        let r = BitReach::closure(&plan);
        self.stats.closure.add(ReachPath::Mirror, t);
        Closure::Mirror(r)
    }

    fn wants_gpu(&self) -> bool {
        #[cfg(feature = "gpu")]
        {
            self.gpu.is_some()
        }
        #[cfg(not(feature = "gpu"))]
        {
            false
        }
    }

    /// Whether the in-place update applies to `closure` for edges (given as
    /// begin/commit node pairs) `edges`: every edge goes forward in the
    /// order, and inserting them is estimated cheaper than recomputing a
    /// closure over `graph_edges` edges.
    pub fn can_update(&self, closure: &Closure, edges: &[(u32, u32)], graph_edges: usize) -> bool {
        let Some((pos, words)) = closure.layout() else { return false };
        if !edges.iter().all(|&(x, y)| pos[x as usize] < pos[y as usize]) {
            return false;
        }
        // A closure ORs one row per edge of the graph; an insertion ORs a
        // row into every row of the window before it that reaches its
        // source and does not reach its target yet (assumed: a quarter).
        let span = (words * 64).min(pos.len());
        edges.len().saturating_mul(span / 4) < graph_edges
    }

    /// Inserts `edges` (begin/commit node pairs, forward in the order; see
    /// [`Engine::can_update`]) into `closure` in place.
    pub fn update(&mut self, closure: &mut Closure, edges: &[(u32, u32)]) {
        self.note_host_copies();
        let t = Instant::now();
        match closure {
            Closure::Classic(_) => unreachable!("can_update refuses classic closures"),
            Closure::Mirror(b) => {
                for &(x, y) in edges {
                    let (s, d) = (b.pos[x as usize], b.pos[y as usize]);
                    b.insert(s, d);
                }
                self.stats.update.path = ReachPath::Mirror;
            }
            #[cfg(feature = "gpu")]
            Closure::Gpu(dc) => {
                let g = self.gpu.clone();
                let res = match g {
                    Some(g) => g.insert(dc, edges, &mut self.stats),
                    None => Err(gpu::GpuError::Gone),
                };
                match res {
                    Ok(()) => self.stats.update.path = ReachPath::Gpu,
                    Err(e) => {
                        self.gpu_failed(e.to_string());
                        // The mirror recomputes the closure before this
                        // call (plan and edges inserted so far; inserting
                        // an edge twice changes nothing): finish from there.
                        let mut b = dc.on_cpu();
                        for &(x, y) in edges {
                            let (s, d) = (b.pos[x as usize], b.pos[y as usize]);
                            b.insert(s, d);
                        }
                        *closure = Closure::Mirror(b);
                        self.stats.update.path = ReachPath::Mirror;
                    }
                }
            }
        }
        self.stats.update.runs += edges.len() as u32;
        self.stats.update.time += t.elapsed();
    }

    /// The constraint test: for every side `(a, b)` node pairs given by
    /// `side_ptr`/`pairs` (flattened as [`BitReach::test_flat`] takes them,
    /// but in node ids), the first blocked edge or
    /// [`bitreach::NOT_BLOCKED`]. Only GPU closures run it here; the CPU
    /// paths test constraint by constraint as they are read (the same
    /// predicate, without building the flat arrays).
    #[cfg(feature = "gpu")]
    pub fn test_on_device(&mut self, closure: &Closure, side_ptr: &[u32], pairs: &[[u32; 2]]) -> Option<Vec<u32>> {
        let Closure::Gpu(dc) = closure else { return None };
        let g = self.gpu.clone()?;
        let t = Instant::now();
        let pos_pairs: Vec<[u32; 2]> =
            pairs.iter().map(|&[a, b]| [dc.pos()[a as usize], dc.pos()[b as usize]]).collect();
        match g.test(dc, side_ptr, &pos_pairs, &mut self.stats) {
            Ok(r) => {
                self.stats.test.add(ReachPath::Gpu, t);
                Some(r)
            }
            Err(e) => {
                self.gpu_failed(e.to_string());
                None
            }
        }
    }

    /// `reaches(x, y)` for every node pair of `pairs`, in one batch: on a
    /// device closure one `test_sides` launch (a one-pair side `[y, x]` is
    /// blocked exactly when `x` reaches `y`), so the rows stay on the
    /// device; elsewhere (or if the device fails) on the host.
    pub fn reaches_batch(&mut self, closure: &Closure, pairs: &[(u32, u32)]) -> Vec<bool> {
        self.note_host_copies();
        #[cfg(feature = "gpu")]
        if let (Closure::Gpu(dc), Some(g)) = (closure, self.gpu.clone()) {
            if pairs.is_empty() {
                return Vec::new();
            }
            let t = Instant::now();
            let pos = dc.pos();
            let side_ptr: Vec<u32> = (0..=pairs.len() as u32).collect();
            let flat: Vec<[u32; 2]> = pairs.iter().map(|&(x, y)| [pos[y as usize], pos[x as usize]]).collect();
            match g.test(dc, &side_ptr, &flat, &mut self.stats) {
                Ok(r) => {
                    self.stats.test.add(ReachPath::Gpu, t);
                    return r.into_iter().map(|k| k != bitreach::NOT_BLOCKED).collect();
                }
                Err(e) => self.gpu_failed(e.to_string()),
            }
        }
        pairs.iter().map(|&(x, y)| closure.reaches(x, y)).collect()
    }

    /// Moves the host copies of device rows made since the last call into
    /// the stats.
    pub fn note_host_copies(&mut self) {
        #[cfg(feature = "gpu")]
        {
            let (n, t) = gpu::take_host_copies();
            self.stats.host_copies += n;
            self.stats.transfer += t;
        }
    }

    /// Whether the constraint test should go to the device.
    pub fn tests_on_device(&self, closure: &Closure) -> bool {
        #[cfg(feature = "gpu")]
        {
            matches!(closure, Closure::Gpu(_)) && self.gpu.is_some()
        }
        #[cfg(not(feature = "gpu"))]
        {
            let _ = closure;
            false
        }
    }

    /// Records a CPU constraint test that started at `since`.
    pub fn cpu_test_done(&mut self, closure: &Closure, since: Instant) {
        let path = if matches!(closure, Closure::Classic(_)) { ReachPath::Classic } else { ReachPath::Mirror };
        self.stats.test.add(path, since);
    }
}
