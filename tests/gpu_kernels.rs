//! The CUDA kernels against their CPU mirror, bit for bit: closures for
//! several windows, the constraint test, and in-place edge insertion, on
//! random DAGs. Needs a GPU, its driver and NVRTC (`scripts/nvrtc.sh`);
//! without them every test says SKIPPED and passes. Runs with
//! `--features gpu`.

mod support;

use isolde::accel::bitreach::BitReach;
use isolde::accel::gpu::{self, Gpu};
use isolde::accel::AccelStats;
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

/// (nodes, degree, span, window bits, seed): small, multi-word, windowed.
const SHAPES: &[(usize, usize, usize, usize, u64)] =
    &[(50, 2, 10, 50, 1), (700, 3, 90, 700, 2), (3000, 3, 400, 256, 3), (20_000, 4, 2000, 4096, 4)];

#[test]
fn closures_on_the_device_equal_the_mirror_bit_for_bit() {
    let Some(g) = device_or_skip("closures_on_the_device_equal_the_mirror_bit_for_bit") else { return };
    for &(n, degree, span, window, seed) in SHAPES {
        let dag = RandDag::new(n, degree, span, seed);
        let plan = dag.plan(window);
        let cpu = BitReach::closure(&plan);
        let mut stats = AccelStats::default();
        let dev = g.closure(&plan, &mut stats).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(dev.host.rows, cpu.rows, "n = {n}, window = {window}");
        assert!(cpu.rows.iter().any(|&w| w != 0));
    }
}

#[test]
fn the_constraint_test_on_the_device_equals_the_mirror() {
    let Some(g) = device_or_skip("the_constraint_test_on_the_device_equals_the_mirror") else { return };
    for &(n, degree, span, window, seed) in SHAPES {
        let dag = RandDag::new(n, degree, span, seed);
        let plan = dag.plan(window);
        let cpu = BitReach::closure(&plan);
        let mut stats = AccelStats::default();
        let dev = g.closure(&plan, &mut stats).unwrap_or_else(|e| panic!("{e}"));
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
        let dag = RandDag::new(n, degree, span, seed);
        let plan = dag.plan(window);
        let mut cpu = BitReach::closure(&plan);
        let mut stats = AccelStats::default();
        let mut dev = g.closure(&plan, &mut stats).unwrap_or_else(|e| panic!("{e}"));
        let more = dag.forward_edges(200, 2 * span, seed ^ 99);
        for &(x, y) in &more {
            cpu.insert(cpu.pos[x as usize], cpu.pos[y as usize]);
        }
        g.insert(&mut dev, &more, &mut stats).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(dev.host.rows, cpu.rows, "n = {n}");
        assert_eq!(cpu.rows, BitReach::closure(&dag.with(&more).plan(window)).rows);
    }
}
