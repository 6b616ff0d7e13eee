//! Standing fuzz campaign: one proptest target per reader (EDN, JSON, dbcop,
//! PolySI text, Cobra) fed mutated seed histories and random bytes, and one
//! for the checker on random EDN histories (every parsed history is checked
//! too). No input may panic; each must give a history with a verdict or a
//! clean error. Every failure found is shrunk and kept under
//! `tests/fuzz-regressions/<target>/`, and `regressions_replay_cleanly` runs
//! all of those on every `cargo test`.
//!
//! By default each target runs a few hundred cases (seconds); set
//! `ISOLDE_FUZZ_CASES=<n>` for a longer campaign, e.g.
//! `ISOLDE_FUZZ_CASES=20000 cargo test --release --test infer fuzz::`.
//! (`cargo fuzz` would need a nightly toolchain and is not used.)

use crate::support;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use support::fuzz::{cases, histories, inputs, regression_dir, run, save, Target};

/// Runs `target` on `cases` inputs from `strategy`; a failure is shrunk,
/// saved as a regression file, and fails the test.
fn campaign(target: Target, strategy: impl Strategy<Value = Vec<u8>>, default_cases: u32) {
    let config = Config { cases: cases(default_cases), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let ran = std::cell::Cell::new(0usize);
    let start = std::time::Instant::now();
    let result = runner.run(&strategy, |bytes| {
        ran.set(ran.get() + 1);
        run(target, &bytes).map_err(TestCaseError::fail)
    });
    eprintln!("{target:?}: {} inputs in {:.1} s", ran.get(), start.elapsed().as_secs_f64());
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, bytes)) => {
            let path = save(target, &bytes);
            panic!("{target:?}: {why}; input kept as {}", path.display());
        }
        Err(e) => panic!("{target:?}: {e}"),
    }
}

#[test]
fn fuzz_edn() {
    campaign(Target::Edn, inputs(Target::Edn), 3000);
}

#[test]
fn fuzz_json() {
    campaign(Target::Json, inputs(Target::Json), 3000);
}

#[test]
fn fuzz_dbcop() {
    campaign(Target::Dbcop, inputs(Target::Dbcop), 3000);
}

#[test]
fn fuzz_polysi_text() {
    campaign(Target::PolysiText, inputs(Target::PolysiText), 3000);
}

#[test]
fn fuzz_cobra() {
    campaign(Target::Cobra, inputs(Target::Cobra), 3000);
}

#[test]
fn fuzz_check() {
    campaign(Target::Check, histories(), 1000);
}

/// Every kept input still gives a verdict or a clean error.
#[test]
fn regressions_replay_cleanly() {
    let mut n = 0;
    for target in Target::ALL {
        let Ok(entries) = std::fs::read_dir(regression_dir(target)) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_file() {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if let Err(why) = run(target, &bytes) {
                panic!("{}: {why}", path.display());
            }
            n += 1;
        }
    }
    eprintln!("{n} regression inputs replayed");
}

/// The seeds are valid histories (so mutations start from deep inside the
/// readers), and most random histories parse, so the checker is exercised.
#[test]
fn seeds_are_histories() {
    use isolde::ingest::{read_bytes, Format};
    use proptest::strategy::ValueTree;
    for (target, format) in [
        (Target::Edn, Format::Edn),
        (Target::Json, Format::Json),
        (Target::Dbcop, Format::Dbcop),
        (Target::PolysiText, Format::PolysiText),
        (Target::Cobra, Format::Cobra),
    ] {
        let seeds = support::fuzz::seeds(target);
        assert!(!seeds.is_empty());
        for s in seeds {
            let h = read_bytes("seed", &s, format).unwrap_or_else(|e| panic!("{target:?}: {e}"));
            assert!(!h.ops.is_empty(), "{target:?}");
        }
    }
    let mut runner = TestRunner::deterministic();
    let strategy = histories();
    let (mut parsed, mut valid, mut invalid, mut unknown) = (0, 0, 0, 0);
    let mut types = std::collections::BTreeSet::new();
    for _ in 0..300 {
        let bytes = strategy.new_tree(&mut runner).map(|t| t.current()).unwrap_or_default();
        let Ok(h) = read_bytes("h.edn", &bytes, Format::Edn) else { continue };
        parsed += 1;
        let Ok(o) = isolde::check::check(&h, &isolde::check::CheckOptions::default()) else { continue };
        match o.valid {
            isolde::check::Validity::Valid => valid += 1,
            isolde::check::Validity::Invalid => invalid += 1,
            _ => unknown += 1,
        }
        types.extend(o.anomaly_types);
    }
    eprintln!("{parsed} parsed: {valid} valid, {invalid} invalid, {unknown} unknown; anomalies seen: {types:?}");
    assert!(parsed > 250, "{parsed} of 300 random histories parse");
    assert!(valid > 10 && invalid > 10, "{valid} valid, {invalid} invalid");
    assert!(types.len() > 5, "{types:?}");
}
