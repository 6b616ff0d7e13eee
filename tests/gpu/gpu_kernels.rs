//! The CUDA kernels against their CPU mirror, bit for bit: closures for
//! several windows, the constraint test, and in-place edge insertion, on
//! random DAGs. Needs a GPU, its driver and NVRTC (`scripts/nvrtc.sh`);
//! without them every test says SKIPPED and passes. Runs with
//! `--features gpu`.

use crate::support;

use isolde::accel::bitreach::BitReach;
use isolde::accel::gpu::{self, Gpu};
use isolde::accel::{AccelOptions, AccelStats, CpuPath, Engine, GpuMode, ReachPath};
use isolde::ingest::{read_bytes, Format};
use isolde::si_check::prune::{self, PruneOptions};
use isolde::si_check::{builder, txns, Level};
use std::sync::Arc;
use support::accel::RandDag;

fn device_or_skip(test: &str) -> Option<Arc<Gpu>> {
    match gpu::shared() {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("SKIPPED {test}: no usable GPU ({e})");
            None
        }
    }
}

/// A random DAG's closure on the CPU mirror and on the device.
struct Closed {
    dag: RandDag,
    cpu: BitReach,
    dev: isolde::accel::gpu::DeviceClosure,
    stats: AccelStats,
}

fn closed(g: &Gpu, n: usize, degree: usize, span: usize, window: usize, seed: u64) -> Closed {
    let dag = RandDag::new(n, degree, span, seed);
    let plan = dag.plan(window);
    let cpu = BitReach::closure(&plan);
    let mut stats = AccelStats::default();
    let dev = g.closure(&plan, &mut stats).unwrap_or_else(|e| panic!("{e}"));
    Closed { dag, cpu, dev, stats }
}

/// (nodes, degree, span, window bits, seed): small, multi-word, windowed.
const SHAPES: &[(usize, usize, usize, usize, u64)] =
    &[(50, 2, 10, 50, 1), (700, 3, 90, 700, 2), (3000, 3, 400, 256, 3), (20_000, 4, 2000, 4096, 4)];

#[test]
fn closures_on_the_device_equal_the_mirror_bit_for_bit() {
    let Some(g) = device_or_skip("closures_on_the_device_equal_the_mirror_bit_for_bit") else { return };
    for &(n, degree, span, window, seed) in SHAPES {
        let Closed { cpu, dev, .. } = closed(&g, n, degree, span, window, seed);
        assert_eq!(dev.host().rows, cpu.rows, "n = {n}, window = {window}");
        assert!(cpu.rows.iter().any(|&w| w != 0));
    }
}

#[test]
fn the_constraint_test_on_the_device_equals_the_mirror() {
    let Some(g) = device_or_skip("the_constraint_test_on_the_device_equals_the_mirror") else { return };
    for &(n, degree, span, window, seed) in SHAPES {
        let Closed { dag, cpu, dev, mut stats } = closed(&g, n, degree, span, window, seed);
        let (ptr, nodes) = dag.sides(5000, seed);
        let pairs: Vec<[u32; 2]> = nodes.iter().map(|&[a, b]| [dag.pos[a as usize], dag.pos[b as usize]]).collect();
        let want = cpu.test_flat(&ptr, &pairs);
        let got = g.test(&dev, &ptr, &pairs, &mut stats).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, want, "n = {n}");
    }
}

#[test]
fn inserting_edges_on_the_device_equals_the_mirror() {
    let Some(g) = device_or_skip("inserting_edges_on_the_device_equals_the_mirror") else { return };
    for &(n, degree, span, window, seed) in SHAPES {
        let Closed { dag, mut cpu, mut dev, mut stats } = closed(&g, n, degree, span, window, seed);
        let more = dag.forward_edges(200, 2 * span, seed ^ 99);
        for &(x, y) in &more {
            cpu.insert(cpu.pos[x as usize], cpu.pos[y as usize]);
        }
        g.insert(&mut dev, &more, &mut stats).unwrap_or_else(|e| panic!("{e}"));
        // The failure fallback (plan + inserted edges on the CPU) first,
        // then the device's rows.
        assert_eq!(dev.on_cpu().rows, cpu.rows, "n = {n}, CPU fallback");
        assert_eq!(dev.host().rows, cpu.rows, "n = {n}");
        assert_eq!(cpu.rows, BitReach::closure(&dag.with(&more).plan(window)).rows);
    }
}

#[test]
fn pruning_on_the_device_equals_pruning_on_the_cpu() {
    if device_or_skip("pruning_on_the_device_equals_pruning_on_the_cpu").is_none() {
        return;
    }
    let cfg = isolde::gen::rw_register::RwRegisterConfig { txns: 12_000, keys: 12_000, ..Default::default() };
    let text = isolde::gen::rw_register::rw_register_string(&cfg);
    let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).expect("generated histories parse");
    let t = txns::extract(&h).expect("transactions");
    let level = Level::from_model("strict-serializable").expect("a level");
    let priority = prune::time_estimate(&h, &t);
    // A window of 2048 bits, then the full closure.
    for reach_bytes in [24_000 * 2048 / 8, 1 << 28] {
        let run = |gpu: GpuMode| {
            let mut e = Engine::new(AccelOptions { gpu, cpu: CpuPath::Classic }, 2 * t.len()).expect("engine");
            let filter = builder::PairFilter { priority: &priority, reach_bytes, engine: &mut e };
            let built = builder::build(&h, &t, level, 10_000_000, Some(filter)).expect("builds");
            let opts = PruneOptions { reach_bytes, enabled: true, deadline: None };
            let pr = prune::prune(&built.graph, &priority, opts, built.known_reach, &mut e);
            let edges: Vec<_> = pr.edges.iter().map(|r| (r.e, r.round, r.why)).collect();
            (built.graph.constraints.len(), pr.open, pr.pos, edges, e.stats)
        };
        let cpu = run(GpuMode::Off);
        let dev = run(GpuMode::On);
        assert_eq!(dev.4.gpu_error, None);
        assert_eq!(dev.4.closure.path, ReachPath::Gpu, "{}", dev.4);
        assert_eq!(cpu.0, dev.0, "constraints built");
        assert_eq!(cpu.1, dev.1, "open constraints");
        assert_eq!(cpu.2, dev.2, "order");
        assert_eq!(cpu.3, dev.3, "derived edges");
        assert!(cpu.3.iter().any(|e| e.1 > 0), "pruning derived nothing");
        eprintln!("reach_bytes {reach_bytes}: cpu {} / gpu {}", cpu.4, dev.4);
    }
}
