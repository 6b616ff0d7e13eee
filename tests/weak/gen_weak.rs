//! `isolde gen rw-register --level read-committed-be|read-atomic|
//! causal-cerone|prefix`: every generated history satisfies its level
//! (checked by `isolde::weak::check`, and for prefix consistency by the
//! exhaustive enumerator on small histories), and some seeds break the next
//! stronger level, so no store is trivially stronger than its level.

use crate::support;

use isolde::gen::rw_register::RwRegisterConfig;
use isolde::gen::weak::WeakLevel;
use isolde::weak::front::Sessions;
use isolde::weak::oracle::{enumerate, Axiom};
use support::weak::{edn, front_of, implied_index as implied, weak_store_history as history, weak_verdicts};

const LEVELS: [WeakLevel; 4] = [WeakLevel::ReadCommitted, WeakLevel::ReadAtomic, WeakLevel::Causal, WeakLevel::Prefix];

#[test]
fn generated_histories_satisfy_their_level() {
    for level in LEVELS {
        for seed in 0..6 {
            let faults = if seed % 2 == 0 { 0.0 } else { 0.1 };
            let h = edn(&history(level, seed, 600, 5, 12, faults));
            let got = weak_verdicts(&h);
            for (i, v) in got.iter().enumerate().take(implied(level) + 1) {
                assert_eq!(*v, Some(true), "{level:?} seed {seed}: level {i} of {got:?}");
            }
        }
    }
}

#[test]
fn small_prefix_histories_satisfy_prefix_consistency() {
    support::weak::assert_small_prefix_histories_hold(history);
}

/// Some seed breaks the next stronger level: read committed's store gives
/// fractured reads, read atomic's causality violations, causal's long
/// forks, prefix's lost updates.
#[test]
fn each_store_can_break_the_next_stronger_level() {
    for level in LEVELS {
        let broken = (0..400u64).any(|seed| {
            let h = edn(&history(level, seed, 7, 3, 2, 0.0));
            let f = front_of(&h, Sessions::Process);
            let own = match level {
                WeakLevel::ReadCommitted => Axiom::ReadCommitted,
                WeakLevel::ReadAtomic => Axiom::ReadAtomic,
                WeakLevel::Causal => Axiom::Causal,
                WeakLevel::Prefix => Axiom::Prefix,
            };
            let next = match level {
                WeakLevel::ReadCommitted => Axiom::ReadAtomic,
                WeakLevel::ReadAtomic => Axiom::Causal,
                WeakLevel::Causal => Axiom::Prefix,
                WeakLevel::Prefix => Axiom::SnapshotIsolation,
            };
            assert_eq!(enumerate(&f, own), Some(true), "{level:?} seed {seed}");
            enumerate(&f, next) == Some(false)
        });
        assert!(broken, "{level:?}: no seed breaks the next level");
    }
}

/// Each weak-level injection (and the TAP-named existing ones) is found at
/// the level it breaks and at every stronger one, and not at a weaker level
/// that allows it; the strict serializable traffic around it is valid at
/// every level.
#[test]
fn injected_weak_anomalies_break_exactly_their_level() {
    use isolde::gen::rw_register::rw_register_string_with;
    use isolde::gen::{GenOptions, Inject, Level};
    for i in Inject::ALL.into_iter().filter(|i| i.tap().is_some()) {
        let breaks = i.weak_level().unwrap_or(0);
        for seed in 0..3 {
            let cfg = RwRegisterConfig {
                seed,
                txns: 300,
                processes: 6,
                min_txn_len: 1,
                max_txn_len: 4,
                keys: 20,
                ..RwRegisterConfig::default()
            };
            let opts = GenOptions { level: Level::StrictSerializable, inject: vec![i], ..GenOptions::default() };
            let h = edn(&rw_register_string_with(&cfg, &opts));
            let got = weak_verdicts(&h);
            let want: Vec<Option<bool>> = (0..3).map(|l| Some(l < breaks)).collect();
            assert_eq!(got.to_vec(), want, "{i} (TAP-{:?}) seed {seed}", i.tap());
        }
    }
}

/// Biswas–Enea read committed allows non-repeatable reads, which Elle's
/// rw-register analysis calls `internal`: `-m read-committed-be` accepts a
/// history of the read committed store, `-m read-atomic` does not.
#[test]
fn read_committed_store_passes_the_cli_at_its_level() {
    use std::time::Duration;
    use support::cli::{isolde, temp_dir};
    let dir = temp_dir("gen-weak-rc");
    let p = dir.join("rc.edn");
    let text = history(WeakLevel::ReadCommitted, 3, 400, 5, 6, 0.0);
    let h = edn(&text);
    assert_eq!(weak_verdicts(&h)[..2], [Some(true), Some(false)]);
    std::fs::write(&p, text).expect("write");
    let path = p.to_string_lossy();
    let run = |m: &str| isolde(&["analyze", &path, "-m", m, "--format", "json"], None, Duration::from_secs(60));
    let rc = run("read-committed-be");
    assert_eq!(rc.code, 0, "{rc:?}");
    assert_eq!(run("read-atomic").code, 1);
    // With a model that prohibits Elle's internal, it stays prohibited.
    assert_eq!(run("read-committed-be,read-atomic").code, 1);
}

/// The command line: each weak level generates a history that `analyze`
/// accepts at that level; the weak levels refuse `--inject`.
#[test]
fn gen_cli_weak_levels() {
    use std::time::Duration;
    use support::cli::{isolde, temp_dir};
    let dir = temp_dir("gen-weak-cli");
    for level in LEVELS {
        let p = dir.join(format!("{}.edn", level.name()));
        let path = p.to_string_lossy();
        let args = [
            "gen",
            "rw-register",
            "--level",
            level.name(),
            "--txns",
            "300",
            "--keys",
            "10",
            "--seed",
            "5",
            "-o",
            &path,
        ];
        let r = isolde(&args, None, Duration::from_secs(60));
        assert_eq!(r.code, 0, "{r:?}");
        let model = if level == WeakLevel::Prefix { "causal-cerone" } else { level.name() };
        let r = isolde(&["analyze", &path, "-m", model, "--format", "json"], None, Duration::from_secs(60));
        assert_eq!(r.code, 0, "{level:?}: {r:?}");
    }
    let r = isolde(&["gen", "list-append", "--level", "read-atomic", "--inject", "G0"], None, Duration::from_secs(30));
    assert!(r.code == 2 && r.stderr.contains("--inject"), "{r:?}");
    let r = isolde(&["gen", "rw-register", "--level", "read-atomic", "--inject", "G1a"], None, Duration::from_secs(30));
    assert!(r.code == 2 && r.stderr.contains("--inject"), "{r:?}");
}
