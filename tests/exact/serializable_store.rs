//! Histories produced by a strict-serializable in-memory store must never be
//! flagged: the checker may only report anomalies that are really there.

use isolde::check::{check, CheckOptions, Validity};
use isolde::gen::list_append::{list_append_string, ListAppendConfig};
use isolde::ingest::{read_bytes, Format};
use proptest::prelude::*;

use crate::support;

fn config() -> impl Strategy<Value = ListAppendConfig> {
    support::gen::list_append_configs(20..400, 1..30, 1..20, 2..30, 0.15)
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
    use isolde::gen::rw_register::{rw_register_string, RwRegisterConfig};
    use isolde::infer::rw_register::RwOptions;
    use isolde::ingest::{read_bytes, Format};
    use proptest::prelude::*;

    fn config() -> impl Strategy<Value = RwRegisterConfig> {
        crate::support::gen::rw_register_configs(10..250, 1..20, 1..40, 0.0..1.0, 0.15)
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
