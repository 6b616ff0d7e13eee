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
