//! Histories produced by a strict-serializable in-memory store must never be
//! flagged: the checker may only report anomalies that are really there.

use isolde::check::{check, CheckOptions, Validity};
use isolde::gen::list_append::{list_append_string, KeyDist, ListAppendConfig};
use isolde::ingest::{read_bytes, Format};
use proptest::prelude::*;

fn config() -> impl Strategy<Value = ListAppendConfig> {
    (
        any::<u64>(),
        20usize..400,
        1usize..30,
        1usize..6,
        1usize..20,
        2usize..30,
        0.0f64..0.15,
        0.0f64..0.15,
        any::<bool>(),
    )
        .prop_map(|(seed, txns, processes, max_len, keys, writes, fail, info, uniform)| ListAppendConfig {
            seed,
            txns,
            processes,
            min_txn_len: 1,
            max_txn_len: max_len,
            active_keys: keys,
            max_writes_per_key: writes,
            read_fraction: 0.5,
            key_dist: if uniform { KeyDist::Uniform } else { KeyDist::Exponential },
            fail_fraction: fail,
            info_fraction: info,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn strict_serializable_store_histories_are_valid(cfg in config()) {
        let text = list_append_string(&cfg);
        let h = read_bytes("generated.edn", text.as_bytes(), Format::Edn).expect("generated history parses");
        let outcome = check(&h, &CheckOptions::default()).expect("check runs");
        prop_assert_eq!(outcome.valid, Validity::Valid, "anomalies: {:?}", outcome.anomaly_types);
    }
}

mod registers {
    use isolde::anomaly::Workload;
    use isolde::check::{check, CheckOptions, Validity, WorkloadChoice};
    use isolde::gen::rw_register::{rw_register_string, RwKeyDist, RwRegisterConfig};
    use isolde::infer::rw_register::RwOptions;
    use isolde::ingest::{read_bytes, Format};
    use proptest::prelude::*;

    fn config() -> impl Strategy<Value = RwRegisterConfig> {
        (
            any::<u64>(),
            10usize..250,
            1usize..20,
            1usize..8,
            1usize..40,
            0.0f64..1.0,
            0.0f64..0.15,
            0.0f64..0.15,
            any::<bool>(),
        )
            .prop_map(|(seed, txns, processes, len, keys, reads, fail, info, zipf)| RwRegisterConfig {
                seed,
                txns,
                processes,
                min_txn_len: 1,
                max_txn_len: len,
                keys,
                read_fraction: reads,
                key_dist: if zipf { RwKeyDist::Zipf(1.0) } else { RwKeyDist::Uniform },
                fail_fraction: fail,
                info_fraction: info,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Valid under serializable (and strict serializable) with every
        /// combination of version-order sources.
        #[test]
        fn strict_serializable_register_histories_are_valid(cfg in config(), flags in 0u8..8) {
            let text = rw_register_string(&cfg);
            let h = read_bytes("generated.edn", text.as_bytes(), Format::Edn).expect("parses");
            let rw = RwOptions { wfr_keys: flags & 1 != 0, sequential_keys: flags & 2 != 0, linearizable_keys: flags & 4 != 0 };
            for model in ["serializable", "strict-serializable"] {
                let opts = CheckOptions {
                    workload: WorkloadChoice::Fixed(Workload::RwRegister),
                    models: Some(vec![model.to_string()]),
                    rw,
                    ..CheckOptions::default()
                };
                let o = check(&h, &opts).expect("runs");
                // Valid, or unknown only because no dependency could be inferred at all.
                let only_empty = o.anomaly_types == vec!["empty-transaction-graph".to_string()];
                prop_assert!(o.valid == Validity::Valid || only_empty, "{model} {rw:?}: {:?}", o.anomaly_types);
            }
        }
    }
}
