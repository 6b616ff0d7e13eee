//! The generator's isolation levels and anomaly injection, judged by the
//! checker itself: uninjected histories generated at a level are valid under
//! that level's Elle model and every weaker one, and every injected anomaly
//! is detected with its expected type (and nothing unrelated).

use isolde::anomaly::Workload;
use isolde::check::Validity;
use isolde::gen::closed_predicate::{closed_predicate_string_with, ClosedPredicateConfig};
use isolde::gen::list_append::{list_append_string_with, KeyDist, ListAppendConfig};
use isolde::gen::rw_register::{rw_register_string_with, RwRegisterConfig};
use isolde::gen::{GenOptions, Inject, InjectWorkload, Level};
use proptest::prelude::*;

use crate::support;

use support::gen::analyze;

fn level() -> impl Strategy<Value = Level> {
    prop::sample::select(Level::ALL.to_vec())
}

fn la_config() -> impl Strategy<Value = ListAppendConfig> {
    support::gen::list_append_configs(100..400, 2..12, 2..10, 2..20, 0.1)
}

fn rw_config() -> impl Strategy<Value = RwRegisterConfig> {
    support::gen::rw_register_configs(100..300, 2..12, 2..30, 0.2..0.8, 0.1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn list_append_valid_at_level_and_weaker(cfg in la_config(), level in level()) {
        let text = list_append_string_with(&cfg, &GenOptions { level, ..GenOptions::default() });
        for &model in level.satisfied_models() {
            let o = analyze(&text, Workload::ListAppend, model);
            prop_assert_eq!(o.valid, Validity::Valid, "{} history under {}: {:?}", level.name(), model, o.anomaly_types);
        }
    }

    #[test]
    fn rw_register_valid_at_level_and_weaker(cfg in rw_config(), level in level()) {
        let text = rw_register_string_with(&cfg, &GenOptions { level, ..GenOptions::default() });
        for &model in level.satisfied_models() {
            let o = analyze(&text, Workload::RwRegister, model);
            // Sound but incomplete: no anomaly may be reported (an empty
            // dependency graph is "unknown", not an anomaly).
            let only_empty = o.anomaly_types == vec!["empty-transaction-graph".to_string()];
            prop_assert!(o.valid == Validity::Valid || only_empty, "{} history under {}: {:?}", level.name(), model, o.anomaly_types);
        }
    }
}

/// The weaker levels really are weaker: with enough contention their
/// histories show anomalies the stronger models prohibit (so the levels are
/// not all strict serializable in disguise), and snapshot isolation aborts
/// write-write conflicts.
#[test]
fn weaker_levels_exhibit_their_anomalies() {
    let cfg = ListAppendConfig {
        seed: 9,
        txns: 3_000,
        processes: 20,
        active_keys: 4,
        key_dist: KeyDist::Uniform,
        ..ListAppendConfig::default()
    };
    let gen = |level| list_append_string_with(&cfg, &GenOptions { level, ..GenOptions::default() });
    let ser = analyze(&gen(Level::Serializable), Workload::ListAppend, "strict-serializable");
    assert_eq!(ser.valid, Validity::Invalid, "stale reads should break real time");
    assert!(ser.anomaly_types.iter().all(|t| t.ends_with("-realtime")), "{:?}", ser.anomaly_types);
    let si = analyze(&gen(Level::SnapshotIsolation), Workload::ListAppend, "serializable");
    assert_eq!(si.valid, Validity::Invalid, "SI should show write skew");
    assert!(si.anomaly_types.iter().any(|t| t.starts_with("G2")), "{:?}", si.anomaly_types);
    let rc = analyze(&gen(Level::ReadCommitted), Workload::ListAppend, "snapshot-isolation");
    assert_eq!(rc.valid, Validity::Invalid, "RC should show read skew");
    let mut buf = Vec::new();
    let stats = isolde::gen::list_append::write_list_append_with(
        &cfg,
        &GenOptions { level: Level::SnapshotIsolation, ..GenOptions::default() },
        &mut buf,
    )
    .unwrap();
    assert!(stats.conflicts > 50, "first committer wins should abort conflicts: {}", stats.conflicts);
    assert_eq!(String::from_utf8(buf).unwrap().matches(":type :fail").count(), stats.conflicts);
}

/// Types the analysis may report for an injection of `i`: the expected type,
/// its `-process`/`-realtime` variants, and the documented collateral types.
fn allowed(i: Inject, w: InjectWorkload) -> Vec<String> {
    let mut v = Vec::new();
    for t in std::iter::once(i.expected_type(w)).chain(i.collateral(w).iter().copied()) {
        v.push(t.to_string());
        v.push(format!("{t}-process"));
        v.push(format!("{t}-realtime"));
    }
    v
}

fn check_injection(i: Inject, w: InjectWorkload, level: Level, seed: u64) {
    let opts = GenOptions { level, inject: vec![i], inject_count: 3, ..GenOptions::default() };
    let (text, workload) = match w {
        InjectWorkload::ListAppend => {
            let cfg = ListAppendConfig { seed, txns: 600, processes: 6, ..ListAppendConfig::default() };
            (list_append_string_with(&cfg, &opts), Workload::ListAppend)
        }
        InjectWorkload::RwRegister => {
            let cfg = RwRegisterConfig {
                seed,
                txns: 600,
                processes: 6,
                keys: 50,
                max_txn_len: 4,
                min_txn_len: 1,
                ..RwRegisterConfig::default()
            };
            (rw_register_string_with(&cfg, &opts), Workload::RwRegister)
        }
        InjectWorkload::ClosedPredicate => {
            let cfg = ClosedPredicateConfig {
                seed,
                txns: 600,
                processes: 6,
                keys: 150,
                fail_fraction: 0.05,
                info_fraction: 0.05,
                ..ClosedPredicateConfig::default()
            };
            (closed_predicate_string_with(&cfg, &opts), Workload::ClosedPredicate)
        }
    };
    let o = analyze(&text, workload, i.detecting_model());
    assert_eq!(o.valid, Validity::Invalid);
    let expected = i.expected_type(w);
    assert!(
        o.anomaly_types.iter().any(|t| t == expected),
        "{i} in {w:?} at {}: expected {expected}, got {:?}",
        level.name(),
        o.anomaly_types
    );
    let ok = allowed(i, w);
    for t in &o.anomaly_types {
        assert!(ok.contains(t), "{i} in {w:?} at {}: unexpected {t} among {:?}", level.name(), o.anomaly_types);
    }
}

#[test]
fn every_injection_is_detected_with_its_type() {
    for w in [InjectWorkload::ListAppend, InjectWorkload::RwRegister, InjectWorkload::ClosedPredicate] {
        for i in Inject::ALL.into_iter().filter(|i| i.applies_to(w)) {
            check_injection(i, w, Level::StrictSerializable, 1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Injections stand out at every level and seed: the traffic around them
    /// never adds anomaly types of its own that the strict model would see
    /// (only at strict serializable is the traffic itself free of them, so
    /// other levels are checked with their own model).
    #[test]
    fn injections_detected_at_any_seed(seed in any::<u64>(), k in 0usize..12, rw in any::<bool>()) {
        let w = if rw { InjectWorkload::RwRegister } else { InjectWorkload::ListAppend };
        let i = Inject::ALL[k];
        prop_assume!(i.applies_to(w));
        check_injection(i, w, Level::StrictSerializable, seed);
    }

    /// Closed-predicate: every scenario at either of the generator's
    /// levels, any seed.
    #[test]
    fn closed_predicate_injections_detected_at_any_seed(seed in any::<u64>(), k in 0usize..4, ser in any::<bool>()) {
        let w = InjectWorkload::ClosedPredicate;
        let i = Inject::ALL.into_iter().filter(|i| i.applies_to(w)).nth(k).expect("four scenarios");
        let level = if ser { Level::Serializable } else { Level::StrictSerializable };
        check_injection(i, w, level, seed);
    }

    /// Closed-predicate histories are valid at the generator's level and
    /// every weaker model.
    #[test]
    fn closed_predicate_valid_at_level_and_weaker(
        seed in any::<u64>(),
        processes in 2usize..12,
        keys in 5usize..200,
        ser in any::<bool>(),
        insert_only in any::<bool>(),
    ) {
        let level = if ser { Level::Serializable } else { Level::StrictSerializable };
        let cfg = ClosedPredicateConfig {
            seed,
            txns: 300,
            processes,
            keys,
            insert_only,
            fail_fraction: 0.05,
            info_fraction: 0.05,
            ..ClosedPredicateConfig::default()
        };
        let text = closed_predicate_string_with(&cfg, &GenOptions { level, ..GenOptions::default() });
        for &model in level.satisfied_models() {
            let o = analyze(&text, Workload::ClosedPredicate, model);
            prop_assert_eq!(o.valid, Validity::Valid, "{} history under {}: {:?}", level.name(), model, o.anomaly_types);
        }
    }
}

/// dbcop output of a generated history: the header carries the session
/// shape, and every session holds exactly `txns_per_session` transactions of
/// `txn_len` events (18 bytes each), in the layout of `history.bincode`.
#[test]
fn dbcop_output_has_the_session_shape() {
    use isolde::gen::rw_register::write_rw_register_with;
    use isolde::gen::OutputFormat;
    let cfg = RwRegisterConfig {
        seed: 3,
        txns: 12,
        processes: 3,
        min_txn_len: 2,
        max_txn_len: 2,
        keys: 5,
        ..RwRegisterConfig::default()
    };
    let opts = GenOptions {
        level: Level::SnapshotIsolation,
        txns_per_session: Some(4),
        output_format: OutputFormat::Dbcop,
        ..GenOptions::default()
    };
    let mut out = Vec::new();
    let stats = write_rw_register_with(&cfg, &opts, &mut out).unwrap();
    assert_eq!(stats.bytes, out.len() as u64);
    let u = |at: usize| u64::from_le_bytes(out[at..at + 8].try_into().unwrap());
    assert_eq!([u(0), u(8), u(16), u(24), u(32)], [3, 3, 5, 4, 2]);
    assert_eq!(u(40), 6);
    assert_eq!(&out[48..54], b"isolde");
    assert_eq!(u(54), 25);
    assert_eq!(&out[62..87], b"2000-01-01T00:00:00+00:00");
    let end_len = u(87) as usize;
    let end = std::str::from_utf8(&out[95..95 + end_len]).unwrap();
    assert!(end.starts_with("2000-01-01T00:00:") && end.ends_with("+00:00"), "{end}");
    let mut at = 95 + end_len;
    assert_eq!(u(at), 3);
    at += 8;
    for _ in 0..3 {
        assert_eq!(u(at), 4);
        at += 8;
        for _ in 0..4 {
            assert_eq!(u(at), 2);
            at += 8;
            let success = out[at + 2 * 18];
            for _ in 0..2 {
                let (write, var, val, ok) = (out[at], u(at + 1), u(at + 9), out[at + 17]);
                assert!(write <= 1 && var < 5 && ok == success);
                // Writes never write 0 (dbcop's initial value).
                assert!(write == 0 || val > 0);
                at += 18;
            }
            assert!(success <= 1);
            at += 1;
        }
    }
    assert_eq!(at, out.len());
}
