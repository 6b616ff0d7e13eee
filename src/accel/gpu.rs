//! The CUDA path (cargo feature `gpu`): `kernels/reach.cu`, compiled at run
//! time by NVRTC, launched through `cudarc`.
//!
//! Nothing here links against CUDA: `cudarc` loads `libcuda.so` and
//! `libnvrtc.so` with `dlopen` on first use, and panics when they are
//! missing, so every entry point first probes for the libraries
//! (`is_culib_present`) and runs the rest under `catch_unwind`; a machine
//! without a driver gets an `Err`, never a panic. NVRTC is looked up where
//! the dynamic loader looks, or at the path in `ISOLDE_NVRTC` (what
//! `scripts/nvrtc.sh` prints), which is loaded first so that the later
//! lookup by name finds it already in the process.
//!
//! The device keeps the rows of the current closure; each phase copies its
//! inputs over, runs its kernels (timed by CUDA events) and copies the rows
//! back, so the host copy answers the queries pruning makes edge by edge.
//! The rows and the plan must fit the device's free memory; otherwise the
//! phase fails (under `--gpu auto` the CPU mirror takes over).

use super::bitreach::{BitReach, Plan};
use super::AccelStats;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The kernels' sources, embedded: `(file name, source)`.
pub const KERNEL_SOURCES: &[(&str, &str)] = &[("reach.cu", include_str!("../../kernels/reach.cu"))];

/// The kernels' entry points.
pub const KERNEL_NAMES: &[&str] = &["closure_band", "test_sides", "insert_edge"];

/// The environment variable naming `libnvrtc.so` (see the module docs).
pub const NVRTC_ENV: &str = "ISOLDE_NVRTC";

/// A failure of the GPU path.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No CUDA driver library.
    #[error("no CUDA driver (libcuda.so) could be loaded")]
    NoDriver,
    /// No NVRTC library.
    #[error("NVRTC (libnvrtc.so) could not be loaded; install it (scripts/nvrtc.sh) and set {NVRTC_ENV}")]
    NoNvrtc,
    /// The driver has no device.
    #[error("the CUDA driver reports no device")]
    NoDevice,
    /// A kernel does not compile.
    #[error("NVRTC cannot compile {file}: {log}")]
    Compile {
        /// The kernel file.
        file: &'static str,
        /// NVRTC's log.
        log: String,
    },
    /// A driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(String),
    /// Not enough device memory.
    #[error("the reachability rows need {need} MB of device memory, {free} MB are free")]
    Memory {
        /// Needed, MB.
        need: usize,
        /// Free, MB.
        free: usize,
    },
    /// The GPU was dropped after an earlier failure.
    #[error("the GPU was given up after an earlier failure")]
    Gone,
    /// `cudarc` panicked (a library it needs is missing or broken).
    #[error("CUDA library failure: {0}")]
    Panicked(String),
}

impl From<cudarc::driver::DriverError> for GpuError {
    fn from(e: cudarc::driver::DriverError) -> Self {
        GpuError::Driver(e.to_string())
    }
}

/// Runs `f`, turning a panic of the CUDA libraries into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, GpuError>) -> Result<T, GpuError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(GpuError::Panicked(msg))
        }
    }
}

/// Loads the NVRTC named by [`NVRTC_ENV`] (and its builtins beside it) into
/// the process, once, so that `cudarc`'s lookup by name finds it.
fn preload_nvrtc() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let Some(path) = std::env::var_os(NVRTC_ENV) else { return };
        let path = std::path::PathBuf::from(path);
        // The builtins first: NVRTC loads them by name when it compiles.
        if let Some(dir) = path.parent() {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries.flatten() {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with("libnvrtc-builtins.so") {
                        // SAFETY: NVIDIA's library; its initialisers have no
                        // preconditions. Leaked: it must stay loaded.
                        if let Ok(lib) = unsafe { libloading::Library::new(e.path()) } {
                            std::mem::forget(lib);
                        }
                    }
                }
            }
        }
        // SAFETY: as above.
        if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
            std::mem::forget(lib);
        }
    });
}

/// Whether NVRTC can be loaded (after [`NVRTC_ENV`]'s preload).
pub fn nvrtc_present() -> bool {
    preload_nvrtc();
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Compiles every kernel to PTX with NVRTC: `(file name, PTX)`. Needs NVRTC
/// only, no driver or device.
pub fn compile_kernels() -> Result<Vec<(&'static str, String)>, GpuError> {
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    KERNEL_SOURCES.iter().map(|&(file, src)| compile_source(file, src).map(|ptx| (file, ptx))).collect()
}

/// Compiles one CUDA source to PTX with NVRTC (for the target NVRTC picks
/// by default; the driver JIT-compiles it for the device at load time).
pub fn compile_source(file: &'static str, src: &str) -> Result<String, GpuError> {
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    guarded(|| {
        let opts = cudarc::nvrtc::CompileOptions { name: Some(file.into()), ..Default::default() };
        match cudarc::nvrtc::compile_ptx_with_opts(src, opts) {
            Ok(ptx) => Ok(ptx.to_src()),
            Err(cudarc::nvrtc::CompileError::CompileError { log, .. }) => {
                Err(GpuError::Compile { file, log: log.to_string_lossy().into_owned() })
            }
            Err(e) => Err(GpuError::Compile { file, log: e.to_string() }),
        }
    })
}

/// A device with the kernels loaded.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    closure_band: CudaFunction,
    test_sides: CudaFunction,
    insert_edge: CudaFunction,
    name: String,
}

/// The process's GPU, probed and set up once.
///
/// Before it is used, the device computes the closure of a fixed
/// pseudo-random DAG (with a window narrower than the graph, so windowed
/// rows are exercised too) and must agree with the CPU mirror bit for bit:
/// a device, driver or kernel that computes anything else is refused (the
/// CPU then runs under `auto`) rather than trusted with a verdict.
pub fn shared() -> Result<Arc<Gpu>, String> {
    static GPU: OnceLock<Result<Arc<Gpu>, String>> = OnceLock::new();
    GPU.get_or_init(|| {
        let gpu = Gpu::new().map_err(|e| e.to_string())?;
        self_check(&gpu)?;
        Ok(Arc::new(gpu))
    })
    .clone()
}

/// Compares the device's closure of a fixed DAG with the CPU mirror's.
fn self_check(gpu: &Gpu) -> Result<(), String> {
    // 600 nodes in topological order 0..600, each with up to 3 successors
    // among the next 100 (a fixed linear congruential sequence).
    let n = 600u32;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut offsets = vec![0u32];
    let mut targets = Vec::new();
    for v in 0..n {
        let mut succ: Vec<u32> = (0..3)
            .filter_map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let d = 1 + (x >> 33) as u32 % 100;
                (v + d < n).then_some(v + d)
            })
            .collect();
        succ.sort_unstable();
        succ.dedup();
        targets.extend(succ);
        offsets.push(targets.len() as u32);
    }
    let order: Vec<u32> = (0..n).collect();
    let dag = super::reach::Dag { offsets: &offsets, targets: &targets, order: &order, pos: &order };
    let plan = super::bitreach::Plan::new(&dag, 256);
    let cpu = super::bitreach::BitReach::closure(&plan);
    let mut stats = AccelStats::default();
    let dev = gpu.closure(&plan, &mut stats).map_err(|e| format!("GPU self-check failed: {e}"))?;
    if dev.host().rows != cpu.rows {
        return Err("GPU self-check failed: the device's reachability differs from the CPU mirror's".into());
    }
    Ok(())
}

/// The rows of a closure, resident on the device.
///
/// Pruning's rounds read them only through kernels (the constraint test,
/// batched pair queries, edge insertion), which return small results. A
/// host copy is made only when something asks for single pairs on the host
/// ([`DeviceClosure::host`]): downloaded once, or, if the download fails,
/// recomputed on the CPU mirror from the plan and the edges inserted since,
/// so a query never goes unanswered and never differs from the device.
pub struct DeviceClosure {
    plan: Plan,
    /// Edges (positions) inserted since the closure, in order.
    inserted: Vec<(u32, u32)>,
    rows: CudaSlice<u64>,
    stream: Arc<CudaStream>,
    host: OnceLock<BitReach>,
}

/// Host copies of device rows made so far, and their time in nanoseconds
/// (drained into [`AccelStats`] by [`take_host_copies`]).
static HOST_COPIES: AtomicU64 = AtomicU64::new(0);
static HOST_COPY_NS: AtomicU64 = AtomicU64::new(0);

/// The host copies made since the last call, and their time.
pub fn take_host_copies() -> (u64, Duration) {
    (HOST_COPIES.swap(0, Ordering::Relaxed), Duration::from_nanos(HOST_COPY_NS.swap(0, Ordering::Relaxed)))
}

impl DeviceClosure {
    /// Topological positions by node.
    pub fn pos(&self) -> &[u32] {
        &self.plan.pos
    }

    /// Window words per row.
    pub fn words(&self) -> usize {
        self.plan.words
    }

    /// The rows on the host: downloaded on first use (or recomputed on the
    /// CPU if the device fails; see the type's docs).
    pub fn host(&self) -> &BitReach {
        self.host.get_or_init(|| {
            let t = Instant::now();
            let mut rows = vec![0u64; self.plan.n * self.plan.stride()];
            let got = guarded(|| {
                self.stream.memcpy_dtoh(&self.rows, &mut rows)?;
                self.stream.synchronize()?;
                Ok(())
            });
            HOST_COPIES.fetch_add(1, Ordering::Relaxed);
            HOST_COPY_NS.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            match got {
                Ok(()) => BitReach { pos: self.plan.pos.clone(), words: self.plan.words, rows },
                Err(e) => {
                    eprintln!("warning: copying the GPU's reachability rows failed ({e}); recomputing them on the CPU");
                    self.on_cpu()
                }
            }
        })
    }

    /// The same rows computed by the CPU mirror: the plan's closure with
    /// the inserted edges (the GPU failure fallback).
    pub fn on_cpu(&self) -> BitReach {
        if let Some(h) = self.host.get() {
            return h.clone();
        }
        let mut b = BitReach::closure(&self.plan);
        for &(s, d) in &self.inserted {
            b.insert(s, d);
        }
        b
    }
}

const BLOCK: u32 = 256;

/// Threads per block of the closure: one warp, so that the few hundred to
/// few thousand column threads of a closure spread over every SM.
const COLUMN_BLOCK: u32 = 32;

fn column_grid(threads: u64) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (threads.div_ceil(COLUMN_BLOCK as u64) as u32, 1, 1),
        block_dim: (COLUMN_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn grid(threads: u64) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (threads.div_ceil(BLOCK as u64) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl Gpu {
    /// Probes the libraries, opens device 0 and loads the kernels.
    pub fn new() -> Result<Gpu, GpuError> {
        // SAFETY: only tries to dlopen the library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        if !nvrtc_present() {
            return Err(GpuError::NoNvrtc);
        }
        let ptx = compile_kernels()?;
        guarded(|| {
            if CudaContext::device_count()? < 1 {
                return Err(GpuError::NoDevice);
            }
            let ctx = CudaContext::new(0)?;
            let stream = ctx.default_stream();
            let (_, src) = &ptx[0];
            let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(src.clone()))?;
            let name = ctx.name()?;
            Ok(Gpu {
                closure_band: module.load_function("closure_band")?,
                test_sides: module.load_function("test_sides")?,
                insert_edge: module.load_function("insert_edge")?,
                name,
                ctx,
                stream,
            })
        })
    }

    /// The device, in words.
    pub fn describe(&self) -> String {
        let mem = self.ctx.total_mem().map(|b| format!(", {} MB", b >> 20)).unwrap_or_default();
        format!("{}{mem}", self.name)
    }

    fn check_memory(&self, need: usize) -> Result<(), GpuError> {
        let (free, _) = self.ctx.mem_get_info()?;
        if need > free {
            return Err(GpuError::Memory { need: need >> 20, free: free >> 20 });
        }
        Ok(())
    }

    /// Runs `launch` between two timing events and adds its time to
    /// `stats.kernel`.
    fn timed(&self, stats: &mut AccelStats, launch: impl FnOnce() -> Result<(), GpuError>) -> Result<(), GpuError> {
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.ctx.new_event(flags)?;
        let end = self.ctx.new_event(flags)?;
        start.record(&self.stream)?;
        launch()?;
        end.record(&self.stream)?;
        end.synchronize()?;
        let ms = start.elapsed_ms(&end)?;
        stats.kernel += Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1000.0);
        Ok(())
    }

    /// The closure of `plan` on the device (one launch: a thread per column
    /// word, see `kernels/reach.cu`); the rows stay there.
    pub fn closure(&self, plan: &Plan, stats: &mut AccelStats) -> Result<DeviceClosure, GpuError> {
        guarded(|| {
            let bytes = plan.row_bytes() + 4 * (plan.offsets.len() + plan.targets.len());
            self.check_memory(bytes)?;
            stats.device_bytes = stats.device_bytes.max(bytes);
            let t = Instant::now();
            let offsets = self.stream.clone_htod(&plan.offsets)?;
            let targets = self.stream.clone_htod(&plan.targets)?;
            let mut rows = self.stream.alloc_zeros::<u64>(plan.n * plan.stride())?;
            self.stream.synchronize()?;
            stats.transfer += t.elapsed();
            let (n, words, columns) = (plan.n as u32, plan.words as u32, plan.columns() as u32);
            self.timed(stats, || {
                let mut args = self.stream.launch_builder(&self.closure_band);
                args.arg(&mut rows).arg(&offsets).arg(&targets).arg(&n).arg(&words).arg(&columns);
                // SAFETY: the arguments match the kernel's signature; every
                // index it forms is within the buffers (see reach.cu).
                unsafe { args.launch(column_grid(u64::from(columns))) }?;
                Ok(())
            })?;
            Ok(DeviceClosure {
                plan: plan.clone(),
                inserted: Vec::new(),
                rows,
                stream: self.stream.clone(),
                host: OnceLock::new(),
            })
        })
    }

    /// The constraint test on the device: sides as in
    /// [`BitReach::test_flat`] (positions).
    pub fn test(
        &self,
        dc: &DeviceClosure,
        side_ptr: &[u32],
        pairs: &[[u32; 2]],
        stats: &mut AccelStats,
    ) -> Result<Vec<u32>, GpuError> {
        guarded(|| {
            let sides = side_ptr.len().saturating_sub(1);
            if sides == 0 {
                return Ok(Vec::new());
            }
            let bytes = dc.plan.row_bytes() + 4 * (side_ptr.len() + 2 * pairs.len() + sides);
            stats.device_bytes = stats.device_bytes.max(bytes);
            self.check_memory(4 * (side_ptr.len() + 2 * pairs.len() + sides))?;
            let t = Instant::now();
            let flat: &[u32] = pairs.as_flattened();
            let d_ptr = self.stream.clone_htod(side_ptr)?;
            let d_pairs = self.stream.clone_htod(flat)?;
            let mut out = self.stream.alloc_zeros::<u32>(sides)?;
            self.stream.synchronize()?;
            stats.transfer += t.elapsed();
            let (words, n) = (dc.plan.words as u32, sides as u32);
            self.timed(stats, || {
                let mut args = self.stream.launch_builder(&self.test_sides);
                args.arg(&dc.rows).arg(&words).arg(&d_ptr).arg(&d_pairs).arg(&n).arg(&mut out);
                // SAFETY: as in `closure`.
                unsafe { args.launch(grid(u64::from(n))) }?;
                Ok(())
            })?;
            let t = Instant::now();
            let r = self.stream.clone_dtoh(&out)?;
            stats.transfer += t.elapsed();
            Ok(r)
        })
    }

    /// Inserts `edges` (begin/commit node pairs, forward in the order) into
    /// the closure on the device, one launch per edge; the host copy, if
    /// any, is dropped (the next host query makes a new one).
    pub fn insert(&self, dc: &mut DeviceClosure, edges: &[(u32, u32)], stats: &mut AccelStats) -> Result<(), GpuError> {
        guarded(|| {
            let (words, stride) = (dc.plan.words, dc.plan.stride());
            let width = words * 64;
            let w32 = words as u32;
            let DeviceClosure { plan, inserted, rows, host, .. } = dc;
            *host = OnceLock::new();
            self.timed(stats, || {
                for &(x, y) in edges {
                    let (s, d) = (plan.pos[x as usize] as usize, plan.pos[y as usize] as usize);
                    if d <= s || d - s >= width {
                        continue;
                    }
                    let lo = (d + 1).saturating_sub(width);
                    let (lo32, s32, d32) = (lo as u32, s as u32, d as u32);
                    let mut args = self.stream.launch_builder(&self.insert_edge);
                    args.arg(&mut *rows).arg(&w32).arg(&lo32).arg(&s32).arg(&d32);
                    // SAFETY: as in `closure`.
                    unsafe { args.launch(grid(((s - lo + 1) * stride) as u64)) }?;
                    inserted.push((s32, d32));
                }
                Ok(())
            })
        })
    }
}
