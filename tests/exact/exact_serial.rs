//! The serial replay that runs before the exact check builds a polygraph
//! (`si_check::serial`): it decides the generator's valid histories at
//! scale, backtracking where greed goes wrong, and it never decides an
//! invalid one (the brute-force comparison is in `exact_oracle.rs`).

use isolde::gen::rw_register::{rw_register_string_with, RwKeyDist, RwRegisterConfig};
use isolde::gen::{GenOptions, Inject, Level as GenLevel};
use isolde::ingest::{read_bytes, Format};
use isolde::si_check::{check_level, ExactOptions, Level, Verdict};

fn history(cfg: &RwRegisterConfig, opts: &GenOptions) -> isolde::history::History {
    let text = rw_register_string_with(cfg, opts);
    read_bytes("gen.edn", text.as_bytes(), Format::Edn).expect("generated history reads")
}

/// Hot keys and 20 concurrent clients, at strict serializability (realtime
/// guides the replay) and at plain serializability (read-only transactions
/// read stale snapshots, so realtime does not hold): every history is
/// decided valid by the replay alone, and some needed backtracking.
#[test]
fn valid_histories_are_decided_by_the_replay() {
    let mut backtracked = 0;
    for (gen_level, model) in
        [(GenLevel::StrictSerializable, "strict-serializable"), (GenLevel::Serializable, "serializable")]
    {
        for seed in 1..=3 {
            for key_dist in [RwKeyDist::Zipf(1.0), RwKeyDist::Uniform] {
                let cfg = RwRegisterConfig {
                    seed,
                    txns: 3000,
                    processes: 20,
                    keys: 200,
                    key_dist,
                    ..RwRegisterConfig::default()
                };
                let h = history(&cfg, &GenOptions { level: gen_level, ..GenOptions::default() });
                for m in [model, "snapshot-isolation"] {
                    let level = Level::from_model(m).expect("exact level");
                    let out = check_level(&h, level, &ExactOptions::default()).expect("register history");
                    assert_eq!(out.verdict, Verdict::Valid, "seed {seed} {key_dist:?} {m}");
                    assert!(out.stats.serial, "seed {seed} {key_dist:?} {m}: not decided by the replay");
                    if out.stats.serial_backtracks > 0 {
                        backtracked += 1;
                    }
                }
            }
        }
    }
    assert!(backtracked >= 4, "only {backtracked} histories needed backtracking");
}

/// Histories with planted anomalies are never decided valid by the
/// replay: the exact check refutes them, with the replay on or off.
#[test]
fn injected_anomalies_are_not_replayed_away() {
    for inject in [Inject::LostUpdate, Inject::WriteSkew, Inject::ReadSkew] {
        for seed in 1..=3 {
            let cfg = RwRegisterConfig { seed, txns: 800, processes: 8, keys: 40, ..RwRegisterConfig::default() };
            let opts = GenOptions { inject: vec![inject], inject_count: 2, ..GenOptions::default() };
            let h = history(&cfg, &opts);
            let level = Level::from_model("serializable").expect("exact level");
            for serial_first in [true, false] {
                let out = check_level(&h, level, &ExactOptions { serial_first, ..ExactOptions::default() })
                    .expect("register history");
                assert!(
                    matches!(out.verdict, Verdict::Invalid(_)),
                    "{inject} seed {seed} serial_first={serial_first}: {:?}",
                    out.verdict
                );
                assert!(!out.stats.serial);
            }
        }
    }
}

/// Histories recorded without timestamps (dbcop: sessions only), with hot
/// keys and many writes: the replay guided by session order keeps the
/// write orders causal consistency forces under it (what the driver
/// passes as `session_orders`) and decides them; without those orders the
/// exact check still answers valid (by the replay after pruning or the
/// polygraph), never anything else.
#[test]
fn untimed_session_histories_are_decided_by_the_replay_with_session_orders() {
    use isolde::gen::rw_register::write_rw_register_with;
    use isolde::gen::OutputFormat;
    use isolde::weak::front::Sessions;
    use isolde::weak::Options as WeakOptions;
    for seed in 1..=3 {
        let cfg = RwRegisterConfig {
            seed,
            txns: 4000,
            processes: 20,
            min_txn_len: 8,
            max_txn_len: 8,
            keys: 2000,
            read_fraction: 0.3,
            key_dist: RwKeyDist::Zipf(1.0),
            ..RwRegisterConfig::default()
        };
        let opts =
            GenOptions { txns_per_session: Some(200), output_format: OutputFormat::Dbcop, ..GenOptions::default() };
        let mut out = Vec::new();
        write_rw_register_with(&cfg, &opts, &mut out).expect("generates");
        let h = read_bytes("gen.bincode", &out, Format::Dbcop).expect("generated history reads");
        let weak = WeakOptions { sessions: Sessions::Process, ..WeakOptions::default() };
        let orders = isolde::weak::strong::known_orders(&h, Sessions::Process, &weak);
        assert!(orders.as_ref().is_some_and(|o| !o.orders.is_empty()), "seed {seed}: no forced orders");
        for m in ["serializable", "snapshot-isolation"] {
            let level = Level::from_model(m).expect("exact level");
            let with = ExactOptions { session_orders: orders.clone(), ..ExactOptions::default() };
            let out = check_level(&h, level, &with).expect("register history");
            assert_eq!(out.verdict, Verdict::Valid, "seed {seed} {m}");
            assert!(out.stats.serial, "seed {seed} {m}: not decided by the replay");
            let out = check_level(&h, level, &ExactOptions::default()).expect("register history");
            assert_eq!(out.verdict, Verdict::Valid, "seed {seed} {m} without session orders");
        }
    }
}
