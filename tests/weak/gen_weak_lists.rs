//! `isolde gen list-append --level read-committed-be|read-atomic|
//! causal-cerone|prefix`: every generated list-append history satisfies its
//! level, as the analysis decides it (the exact weak checker, Elle's list
//! checks at that model, and for prefix consistency the exhaustive
//! enumerator on small histories), and seeds break the next stronger
//! level, so no store is stronger than its level in disguise. The
//! weak-level injections are found at the level they break and not below.

use crate::support;

use isolde::anomaly::Workload;
use isolde::check::Validity;
use isolde::gen::list_append::ListAppendConfig;
use isolde::gen::weak::WeakLevel;
use isolde::weak::front::Sessions;
use isolde::weak::oracle::{enumerate, Axiom};
use support::gen::analyze;
use support::weak::{edn, front_of, implied_index as implied, weak_list_store_history as history, weak_verdicts};

const LEVELS: [WeakLevel; 4] = [WeakLevel::ReadCommitted, WeakLevel::ReadAtomic, WeakLevel::Causal, WeakLevel::Prefix];

/// The model `analyze` decides the level with: prefix consistency has no
/// exact check (it answers `unknown` unless snapshot isolation holds), so
/// its histories are checked at causal consistency, which it implies, and
/// at prefix consistency by the enumerator.
fn model(level: WeakLevel) -> &'static str {
    match level {
        WeakLevel::Prefix => "causal-cerone",
        l => l.name(),
    }
}

#[test]
fn generated_list_histories_satisfy_their_level() {
    for level in LEVELS {
        for seed in 0..5 {
            let faults = if seed % 2 == 0 { 0.0 } else { 0.1 };
            let text = history(level, seed, 500, 5, 6, faults);
            let got = weak_verdicts(&edn(&text));
            for (i, v) in got.iter().enumerate().take(implied(level) + 1) {
                assert_eq!(*v, Some(true), "{level:?} seed {seed}: level {i} of {got:?}");
            }
            // Elle's list checks at the model too (incompatible order,
            // internal, G1…): reads are prefixes of one list per key.
            let o = analyze(&text, Workload::ListAppend, model(level));
            assert_eq!(o.valid, Validity::Valid, "{level:?} seed {seed}: {:?}", o.anomaly_types);
        }
    }
}

#[test]
fn small_list_prefix_histories_satisfy_prefix_consistency() {
    support::weak::assert_small_prefix_histories_hold(history);
}

/// Seeds break the next stronger level: read committed's store gives
/// fractured reads, read atomic's causality violations (both seen by the
/// fast checker on 1000 transactions, in most seeds), causal's long forks
/// and prefix's lost updates (seen by the enumerator on 8 transactions, in
/// 8 and 27 of 100 seeds: a long fork needs four transactions in one shape).
#[test]
fn each_list_store_breaks_the_next_stronger_level() {
    for level in [WeakLevel::ReadCommitted, WeakLevel::ReadAtomic] {
        let next = implied(level) + 1;
        let broken = (0..10u64)
            .filter(|&seed| {
                let got = weak_verdicts(&edn(&history(level, seed, 1_000, 5, 4, 0.0)));
                assert_eq!(got[next - 1], Some(true), "{level:?} seed {seed}");
                got[next] == Some(false)
            })
            .count();
        eprintln!("{level:?}: {broken} of 10");
        assert!(broken >= 5, "{level:?}: only {broken} of 10 seeds break the next level");
    }
    for (level, own, next) in [
        (WeakLevel::Causal, Axiom::Causal, Axiom::Prefix),
        (WeakLevel::Prefix, Axiom::Prefix, Axiom::SnapshotIsolation),
    ] {
        let broken = (0..100u64)
            .filter(|&seed| {
                let f = front_of(&edn(&history(level, seed, 8, 3, 2, 0.0)), Sessions::Process);
                assert_eq!(enumerate(&f, own), Some(true), "{level:?} seed {seed}");
                enumerate(&f, next) == Some(false)
            })
            .count();
        eprintln!("{level:?}: {broken} of 100");
        assert!(broken >= 5, "{level:?}: only {broken} of 100 seeds break the next level");
    }
}

/// Each weak-level injection (and the TAP-named existing ones) planted in
/// strict serializable list-append traffic is found by the exact checker at
/// the level it breaks and every stronger one, and not at a weaker level
/// that allows it; the analysis at the level reports its anomaly type, and
/// at the level below it finds nothing.
#[test]
fn injected_weak_anomalies_break_exactly_their_level_in_lists() {
    use isolde::gen::list_append::list_append_string_with;
    use isolde::gen::{GenOptions, Inject, InjectWorkload, Level};
    for i in Inject::ALL.into_iter().filter(|i| i.tap().is_some()) {
        let breaks = i.weak_level().unwrap_or(0);
        for seed in 0..3 {
            let cfg = ListAppendConfig { seed, txns: 300, processes: 6, ..ListAppendConfig::default() };
            let opts = GenOptions { level: Level::StrictSerializable, inject: vec![i], ..GenOptions::default() };
            let text = list_append_string_with(&cfg, &opts);
            let got = weak_verdicts(&edn(&text));
            let want: Vec<Option<bool>> = (0..3).map(|l| Some(l < breaks)).collect();
            assert_eq!(got.to_vec(), want, "{i} (TAP-{:?}) seed {seed}", i.tap());
            let o = analyze(&text, Workload::ListAppend, i.detecting_model());
            let expected = i.expected_type(InjectWorkload::ListAppend);
            assert!(o.anomaly_types.iter().any(|t| t == expected), "{i} seed {seed}: {:?}", o.anomaly_types);
            // A list that changes within a transaction is Elle's `internal`,
            // which `read-committed-be` refiles as a non-repeatable read.
            if breaks > 0 {
                let below = ["read-committed-be", "read-atomic"][breaks - 1];
                let o = analyze(&text, Workload::ListAppend, below);
                assert_eq!(o.valid, Validity::Valid, "{i} seed {seed} at {below}: {:?}", o.anomaly_types);
            }
        }
    }
}

/// The command line: each weak level generates a list-append history that
/// `analyze` accepts at that level; the weak levels refuse `--inject`, and
/// an injection a workload cannot show is refused naming those it can.
#[test]
fn gen_cli_weak_list_levels() {
    use std::time::Duration;
    use support::cli::{isolde, temp_dir};
    let dir = temp_dir("gen-weak-lists-cli");
    for level in LEVELS {
        let p = dir.join(format!("{}.edn", level.name()));
        let path = p.to_string_lossy();
        let args = [
            "gen",
            "list-append",
            "--level",
            level.name(),
            "--txns",
            "300",
            "--active-keys",
            "6",
            "--seed",
            "5",
            "-o",
            &path,
        ];
        let r = isolde(&args, None, Duration::from_secs(60));
        assert_eq!(r.code, 0, "{r:?}");
        let text = std::fs::read_to_string(&p).expect("written");
        assert!(text.contains("[:append ") && text.contains("[:r "), "{level:?}");
        let r = isolde(&["analyze", &path, "-m", model(level), "--format", "json"], None, Duration::from_secs(60));
        assert_eq!(r.code, 0, "{level:?}: {r:?}");
    }
    let r = isolde(&["gen", "list-append", "--level", "prefix", "--inject", "G1a"], None, Duration::from_secs(30));
    assert!(r.code == 2 && r.stderr.contains("--inject"), "{r:?}");
    let r = isolde(&["gen", "rw-register", "--inject", "G0", "--txns", "100"], None, Duration::from_secs(30));
    assert!(r.code != 0 && r.stderr.contains("G0 cannot be injected into rw-register histories"), "{r:?}");
    assert!(r.stderr.contains("fractured-read"), "{r:?}");
}
