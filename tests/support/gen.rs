//! Proptest strategies for generator configurations, shared by the property
//! tests that judge generated histories with the checker.

use isolde::gen::list_append::{KeyDist, ListAppendConfig};
use isolde::gen::rw_register::{RwKeyDist, RwRegisterConfig};
use proptest::prelude::*;
use std::ops::Range;

/// List-append configurations: 1 to 5 micro-ops per transaction, half reads,
/// uniform or exponential keys, fail and info fractions below `faults`.
pub fn list_append_configs(
    txns: Range<usize>,
    processes: Range<usize>,
    active_keys: Range<usize>,
    writes_per_key: Range<usize>,
    faults: f64,
) -> impl Strategy<Value = ListAppendConfig> {
    (any::<u64>(), txns, processes, 1usize..6, active_keys, writes_per_key, 0.0..faults, 0.0..faults, any::<bool>())
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

/// rw-register configurations: 1 to 7 micro-ops per transaction, uniform,
/// zipfian or hotspot keys, fail and info fractions below `faults`.
pub fn rw_register_configs(
    txns: Range<usize>,
    processes: Range<usize>,
    keys: Range<usize>,
    read_fraction: Range<f64>,
    faults: f64,
) -> impl Strategy<Value = RwRegisterConfig> {
    (any::<u64>(), txns, processes, 1usize..8, keys, read_fraction, 0.0..faults, 0.0..faults, 0u8..3).prop_map(
        |(seed, txns, processes, len, keys, reads, fail, info, dist)| RwRegisterConfig {
            seed,
            txns,
            processes,
            min_txn_len: 1,
            max_txn_len: len,
            keys,
            read_fraction: reads,
            key_dist: match dist {
                0 => RwKeyDist::Uniform,
                1 => RwKeyDist::Zipf(1.0),
                _ => RwKeyDist::Hotspot { hot_fraction: 0.2, hot_probability: 0.8 },
            },
            fail_fraction: fail,
            info_fraction: info,
        },
    )
}

/// Checks a generated EDN history as `workload` under one model, with the
/// default options (exact check included).
pub fn analyze(text: &str, workload: isolde::anomaly::Workload, model: &str) -> isolde::check::Outcome {
    let h = isolde::ingest::read_bytes("generated.edn", text.as_bytes(), isolde::ingest::Format::Edn)
        .expect("generated history parses");
    let opts = isolde::check::CheckOptions {
        workload: isolde::check::WorkloadChoice::Fixed(workload),
        models: Some(vec![model.to_string()]),
        ..isolde::check::CheckOptions::default()
    };
    isolde::check::check(&h, &opts).expect("check runs")
}
