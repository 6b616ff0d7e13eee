//! The CPU mirror of the GPU kernels (`isolde::accel::bitreach`) against
//! today's reachability (`WindowReach`) and brute force: the same relation
//! for every window, in-place updates equal to recomputing, the same
//! constraint test; and on generated histories the same pruning (open
//! constraints, derived edges, order, ending) and the same verdicts.

use crate::support;

use isolde::accel::bitreach::{BitReach, NOT_BLOCKED};
use isolde::accel::reach::{Reach, WindowReach};
use isolde::accel::{AccelOptions, CpuPath, Engine, GpuMode};
use isolde::ingest::{read_bytes, Format};
use isolde::si_check::prune::{self, Ending, PruneOptions};
use isolde::si_check::{builder, check_level, txns, ExactOptions, Level};
use proptest::prelude::*;
use support::accel::RandDag;

fn engine(cpu: CpuPath) -> Engine {
    Engine::new(AccelOptions { gpu: GpuMode::Off, cpu }, 0).expect("no GPU wanted")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mirror_rows_are_the_classic_relation_for_every_window(
        n in 2usize..260, degree in 1usize..4, span in 1usize..90, wide in 0u8..3, seed in any::<u64>(),
    ) {
        let g = RandDag::new(n, degree, span, seed);
        let window = match wide { 0 => 64, 1 => 130, _ => n };
        let classic = WindowReach::new(&g.dag(), window);
        let mirror = BitReach::closure(&g.plan(window));
        let exact = g.closure();
        for a in 0..n as u32 {
            for b in 0..n as u32 {
                let m = mirror.reaches(a, b);
                prop_assert_eq!(m, classic.reaches(a, b), "{} -> {}", a, b);
                let d = g.pos[b as usize] as i64 - g.pos[a as usize] as i64;
                if d > 0 && (d as usize) < mirror.words * 64 {
                    prop_assert_eq!(m, exact[a as usize][b as usize], "in window {} -> {}", a, b);
                } else {
                    prop_assert!(!m || exact[a as usize][b as usize]);
                }
            }
        }
    }

    #[test]
    fn inserting_edges_in_place_equals_recomputing(
        n in 2usize..260, span in 1usize..60, k in 0usize..30, wide in 0u8..2, seed in any::<u64>(),
    ) {
        let g = RandDag::new(n, 2, span, seed);
        let window = if wide == 0 { 64 } else { n };
        let more = g.forward_edges(k, 2 * span, seed ^ 0x5555);
        let mut inc = BitReach::closure(&g.plan(window));
        for &(x, y) in &more {
            inc.insert(inc.pos[x as usize], inc.pos[y as usize]);
        }
        let fresh = BitReach::closure(&g.with(&more).plan(window));
        prop_assert_eq!(inc.rows, fresh.rows);
    }

    #[test]
    fn the_flat_constraint_test_finds_the_first_reverse_path(
        n in 2usize..200, span in 1usize..60, seed in any::<u64>(),
    ) {
        let g = RandDag::new(n, 2, span, seed);
        let r = BitReach::closure(&g.plan(n));
        let exact = g.closure();
        let (ptr, node_pairs) = g.sides(64, seed ^ 7);
        let pos_pairs: Vec<[u32; 2]> =
            node_pairs.iter().map(|&[a, b]| [g.pos[a as usize], g.pos[b as usize]]).collect();
        let got = r.test_flat(&ptr, &pos_pairs);
        for i in 0..ptr.len() - 1 {
            let side = &node_pairs[ptr[i] as usize..ptr[i + 1] as usize];
            let want = side.iter().position(|&[a, b]| exact[b as usize][a as usize]).map_or(NOT_BLOCKED, |k| k as u32);
            prop_assert_eq!(got[i], want, "side {}", i);
        }
    }

    #[test]
    fn pruning_is_the_same_on_the_classic_and_mirror_paths(
        cfg in support::gen::rw_register_configs(20..160, 2..8, 2..12, 0.2..0.8, 0.1),
        model in prop::sample::select(vec!["serializable", "snapshot-isolation", "strong-session-serializable"]),
        narrow in any::<bool>(),
    ) {
        let text = isolde::gen::rw_register::rw_register_string(&cfg);
        let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).expect("generated histories parse");
        let Ok(t) = txns::extract(&h) else { return Ok(()) };
        let level = Level::from_model(model).expect("a level");
        let Ok(built) = builder::build(&h, &t, level, 1_000_000, None) else { return Ok(()) };
        let g = built.graph;
        let priority = prune::time_estimate(&h, &t);
        // A window of 64 bits when `narrow`: far pairs read as unknown.
        let reach_bytes = if narrow { 8 } else { 1 << 24 };
        let opts = PruneOptions { reach_bytes, enabled: true, deadline: None };
        let a = prune::prune(&g, &priority, opts, None, &mut engine(CpuPath::Classic));
        let b = prune::prune(&g, &priority, opts, None, &mut engine(CpuPath::Mirror));
        prop_assert_eq!(&a.open, &b.open);
        prop_assert_eq!(a.rounds, b.rounds);
        prop_assert_eq!(&a.pos, &b.pos);
        let edges = |p: &prune::Pruned| p.edges.iter().map(|r| (r.e, r.round, r.why)).collect::<Vec<_>>();
        prop_assert_eq!(edges(&a), edges(&b));
        let ds = |p: &prune::Pruned| {
            p.derivations.iter().map(|d| (d.constraint, d.a_first, d.blocked, d.round)).collect::<Vec<_>>()
        };
        prop_assert_eq!(ds(&a), ds(&b));
        let ending = |p: &prune::Pruned| match &p.ending {
            Ending::Open => (0, 0, 0),
            Ending::BothSides { constraint, round, .. } => (1, *constraint, *round),
            Ending::Cycle { round } => (2, 0, *round),
        };
        prop_assert_eq!(ending(&a), ending(&b));
    }

    #[test]
    fn verdicts_are_the_same_on_the_classic_and_mirror_paths(
        cfg in support::gen::rw_register_configs(20..120, 2..8, 2..10, 0.2..0.8, 0.1),
        model in prop::sample::select(vec!["serializable", "snapshot-isolation", "strict-serializable"]),
    ) {
        let text = isolde::gen::rw_register::rw_register_string(&cfg);
        let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).expect("generated histories parse");
        let level = Level::from_model(model).expect("a level");
        let run = |cpu| {
            let opts = ExactOptions { accel: AccelOptions { gpu: GpuMode::Off, cpu }, ..ExactOptions::default() };
            check_level(&h, level, &opts)
        };
        match (run(CpuPath::Classic), run(CpuPath::Mirror)) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(&a.verdict, &b.verdict);
                prop_assert_eq!(a.stats.constraints_after, b.stats.constraints_after);
                prop_assert_eq!(a.stats.rounds, b.stats.rounds);
                prop_assert!(a.stats.accel.closure.runs == 0 || a.stats.accel.closure.path == isolde::accel::ReachPath::Classic);
                prop_assert!(b.stats.accel.closure.runs == 0 || b.stats.accel.closure.path == isolde::accel::ReachPath::Mirror);
            }
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "one path failed: {:?} / {:?}", a.is_ok(), b.is_ok()),
        }
    }
}

#[test]
fn gpu_on_without_a_usable_gpu_is_an_error_and_off_never_probes() {
    // Whatever this machine has, `off` builds an engine without asking.
    assert!(Engine::new(AccelOptions { gpu: GpuMode::Off, cpu: CpuPath::Mirror }, 1 << 20).is_ok());
    let on = Engine::new(AccelOptions { gpu: GpuMode::On, cpu: CpuPath::Mirror }, 10);
    match isolde::accel::gpu_probe() {
        Ok(_) => assert!(on.is_ok()),
        Err(why) => {
            let e = on.err().expect("--gpu on without a GPU must fail").to_string();
            assert!(e.contains(&why), "{e}");
        }
    }
}

/// Builds `h`'s polygraph at `level` with the pair filter and prunes it,
/// both on `cpu`'s path: (constraints built, pruning, engine).
fn build_and_prune(
    h: &isolde::history::History,
    t: &txns::Txns,
    level: Level,
    reach_bytes: usize,
    cpu: CpuPath,
) -> (usize, prune::Pruned, Engine) {
    let mut e = engine(cpu);
    let priority = prune::time_estimate(h, t);
    let filter = builder::PairFilter { priority: &priority, reach_bytes, engine: &mut e };
    let built = builder::build(h, t, level, 10_000_000, Some(filter)).expect("builds");
    let opts = PruneOptions { reach_bytes, enabled: true, deadline: None };
    let pr = prune::prune(&built.graph, &priority, opts, built.known_reach, &mut e);
    (built.graph.constraints.len(), pr, e)
}

#[test]
fn pruning_a_default_shape_history_derives_the_same_edges_on_both_paths() {
    let cfg = isolde::gen::rw_register::RwRegisterConfig { txns: 3000, keys: 3000, ..Default::default() };
    let text = isolde::gen::rw_register::rw_register_string(&cfg);
    let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).expect("generated histories parse");
    let t = txns::extract(&h).expect("transactions");
    let level = Level::from_model("serializable").expect("a level");
    // A window of 512 bits (of 6000 nodes), then the full closure.
    for reach_bytes in [6000 * 512 / 8, 1 << 26] {
        let (ca, a, classic) = build_and_prune(&h, &t, level, reach_bytes, CpuPath::Classic);
        let (cb, b, mirror) = build_and_prune(&h, &t, level, reach_bytes, CpuPath::Mirror);
        assert_eq!(ca, cb);
        assert!(!a.derivations.is_empty(), "pruning decided nothing");
        assert!(matches!(a.ending, Ending::Open));
        assert_eq!(a.open, b.open);
        assert_eq!(a.pos, b.pos);
        let edges = |p: &prune::Pruned| p.edges.iter().map(|r| (r.e, r.round, r.why)).collect::<Vec<_>>();
        assert_eq!(edges(&a), edges(&b));
        assert_eq!(classic.stats.closure.path, isolde::accel::ReachPath::Classic);
        assert_eq!(mirror.stats.closure.path, isolde::accel::ReachPath::Mirror);
        eprintln!(
            "reach_bytes {reach_bytes}: constraints {ca} -> {}; {} / {}",
            a.open.len(),
            classic.stats,
            mirror.stats
        );
    }
}
