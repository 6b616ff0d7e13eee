//! All-concurrent register histories (every transaction its own process,
//! every invocation before every completion): nothing observable orders the
//! transactions, the serial replay gets lost, and a hot key's write order is
//! one solver variable per pair of its writers. The solver's theory
//! propagation (`si_check::closure`) decides them with few decisions; the
//! solver without it needed tens of millions at 2,000 transactions and did
//! not finish in a minute.

use isolde::gen::rw_register::{rw_register_string_with, RwRegisterConfig};
use isolde::gen::{GenOptions, Inject};
use isolde::ingest::{read_bytes, Format};
use isolde::si_check::{check_level, ExactOptions, Level, Verdict};
use std::time::Duration;

fn all_concurrent(seed: u64, txns: usize, inject: Vec<Inject>) -> isolde::history::History {
    let cfg = RwRegisterConfig {
        seed,
        txns,
        processes: 1_000_000,
        min_txn_len: 3,
        max_txn_len: 3,
        ..RwRegisterConfig::default()
    };
    let opts = GenOptions { inject, ..GenOptions::default() };
    let text = rw_register_string_with(&cfg, &opts);
    read_bytes("gen.edn", text.as_bytes(), Format::Edn).expect("generated history reads")
}

/// Valid all-concurrent histories of 2,000 transactions are decided valid
/// at serializability and snapshot isolation by the solver (not the
/// replay), with theory propagation doing the work: few decisions, many
/// implied literals.
#[test]
fn valid_all_concurrent_histories_are_decided_by_propagation() {
    let mut solved = 0;
    for seed in 1..=2 {
        let h = all_concurrent(seed, 2000, Vec::new());
        for m in ["serializable", "snapshot-isolation"] {
            let level = Level::from_model(m).expect("exact level");
            let opts = ExactOptions { timeout: Some(Duration::from_secs(120)), ..ExactOptions::default() };
            let out = check_level(&h, level, &opts).expect("register history");
            assert_eq!(out.verdict, Verdict::Valid, "seed {seed} {m}");
            if out.stats.serial {
                continue;
            }
            assert!(out.stats.solver.theory_props > 0, "seed {seed} {m}: nothing propagated");
            assert!(out.stats.decisions < 100_000, "seed {seed} {m}: {} decisions", out.stats.decisions);
            solved += 1;
        }
    }
    assert!(solved >= 2, "the replay decided all but {solved}: the solver was not exercised");
}

/// A write skew among all-concurrent traffic: serializability is refuted
/// (a G2-item witness), snapshot isolation holds (the serializable attempt
/// made first at snapshot isolation fails and the level itself decides).
#[test]
fn all_concurrent_write_skew_refutes_serializability_only() {
    let h = all_concurrent(5, 1500, vec![Inject::WriteSkew]);
    let opts = ExactOptions { timeout: Some(Duration::from_secs(120)), ..ExactOptions::default() };
    let ser = check_level(&h, Level::from_model("serializable").expect("level"), &opts).expect("register history");
    match &ser.verdict {
        Verdict::Invalid(r) => {
            let name = isolde::si_check::witness::refutation_name(r);
            assert!(name.starts_with("G2"), "named {name}");
        }
        v => panic!("serializable: {v:?}"),
    }
    let si = check_level(&h, Level::from_model("snapshot-isolation").expect("level"), &opts).expect("register history");
    assert_eq!(si.verdict, Verdict::Valid);
}
