//! Real histories' dialects that the exact check must read right: dbcop
//! transactions marked committed that hold failed events (read as `:info`
//! unless `--failed-events as-committed`), and register histories whose
//! write values repeat. Tests on the published samples run only where
//! `../shared` sits beside the checkout.

use crate::support;

use isolde::anomaly::Workload;
use isolde::check::{check, CheckOptions, Outcome, Validity, WorkloadChoice};
use isolde::history::{History, OpType};
use isolde::ingest::{read_bytes_with, read_path_with, FailedEvents, Format, ReadOptions};
use std::path::PathBuf;

fn run(h: &History, model: &str) -> Outcome {
    let opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Workload::RwRegister),
        models: Some(vec![model.to_string()]),
        ..CheckOptions::default()
    };
    check(h, &opts).expect("check runs")
}

fn real(name: &str) -> Option<PathBuf> {
    support::shared::path(&format!("corpus/real/{name}"), &format!("real history {name}"))
}

/// An event: (write, variable, value, success).
use isolde::gen::dbcop::encode_events as dbcop;

/// Write skew, except that one side's transaction holds a failed statement:
/// the server rolled it back, so the history is serializable; dbcop's own
/// reading (committed) makes it a G2-item.
#[test]
fn committed_dbcop_transactions_with_failed_events_are_indeterminate() {
    let bytes = dbcop(&[
        vec![(vec![(false, 1, 0, true), (true, 0, 1, true), (true, 1, 7, false)], true)],
        vec![(vec![(false, 0, 0, true), (true, 1, 1, true)], true)],
    ]);
    let read = |failed_events| {
        read_bytes_with("h.bincode", &bytes, Format::Dbcop, ReadOptions { failed_events }).expect("parses")
    };
    let h = read(FailedEvents::Indeterminate);
    assert_eq!(h.indeterminate_txns, 1);
    assert_eq!(h.ops[0].op_type, OpType::Info);
    assert_eq!(run(&h, "serializable").valid, Validity::Valid);
    let h = read(FailedEvents::AsCommitted);
    assert_eq!(h.indeterminate_txns, 0);
    let o = run(&h, "serializable");
    assert_eq!(o.valid, Validity::Invalid);
    assert!(o.anomaly_types.iter().any(|t| t == "G2-item"), "{:?}", o.anomaly_types);
}

/// The published CockroachDB run (serializable) is serializable once its
/// rolled-back transactions are read as indeterminate; dbcop's reading
/// refutes it.
#[test]
fn cockroachdb_sample_is_serializable() {
    let Some(path) = real("cockroachdb-12_30_20_720.bincode") else { return };
    let read = |failed_events| read_path_with(&path, Format::Auto, ReadOptions { failed_events }).expect("parses");
    let h = read(FailedEvents::Indeterminate);
    assert_eq!(h.indeterminate_txns, 11);
    for model in ["serializable", "snapshot-isolation"] {
        let o = run(&h, model);
        assert_eq!(o.valid, Validity::Valid, "{model}: {:?}", o.anomaly_types);
    }
    assert_eq!(run(&read(FailedEvents::AsCommitted), "serializable").valid, Validity::Invalid);
}

fn edn(text: &str) -> History {
    isolde::ingest::read_bytes("test.edn", text.as_bytes(), Format::Edn).expect("history parses")
}

/// Two transactions wrote x = 1; the reader saw x = 1 but y still nil,
/// while both writers also wrote y. Whichever it read x from, it missed
/// that writer's y: a G-single cycle in every case, and the refutation has
/// one case per candidate writer.
#[test]
fn a_read_of_a_repeated_value_is_refuted_case_by_candidate() {
    let h = edn("{:type :ok, :process 0, :value [[:w :x 1] [:w :y 5]]}
         {:type :ok, :process 1, :value [[:w :x 1] [:w :y 6]]}
         {:type :ok, :process 2, :value [[:r :x 1] [:r :y nil]]}");
    let o = run(&h, "snapshot-isolation");
    assert_eq!(o.valid, Validity::Invalid, "{:?}", o.anomaly_types);
    assert_eq!(o.anomaly_types, vec!["G-single-item".to_string()]);
    let Some(isolde::anomaly::Case::Refuted(r)) = o.anomalies["G-single-item"].first() else { panic!("no refutation") };
    let mut writers: Vec<u32> = r.branches.iter().flat_map(|b| b.reads.iter().map(|rf| rf.writer)).collect();
    writers.sort_unstable();
    assert_eq!(writers, vec![0, 1], "a case per candidate writer");
    for b in &r.branches {
        assert_eq!(b.reads.len(), 1);
        assert_eq!(b.reads[0].candidates, vec![0, 1]);
        assert_eq!(b.reads[0].reader, 2);
        assert!(b.cycle.ops.contains(&b.reads[0].writer));
    }
    let text = isolde::reports::text::explain_refutation(&h, r);
    assert!(text.contains("observed the write of index 0 (written by indexes 0, 1)"), "{text}");
}

/// The same reads, explained by the second writer: valid.
#[test]
fn a_read_of_a_repeated_value_is_valid_when_some_writer_explains_it() {
    let h = edn("{:type :ok, :process 0, :value [[:w :x 1] [:w :y 5]]}
         {:type :ok, :process 1, :value [[:w :x 1] [:w :y 6]]}
         {:type :ok, :process 2, :value [[:r :x 1] [:r :y 6]]}");
    for model in ["serializable", "snapshot-isolation"] {
        assert_eq!(run(&h, model).valid, Validity::Valid, "{model}");
    }
}

/// A repeated value's candidate that is `:info` may not have committed: a
/// refutation would rest on a guess, so the exact check answers unknown.
#[test]
fn an_info_candidate_of_a_repeated_value_makes_refutations_unknown() {
    let h = edn("{:type :info, :process 0, :value [[:w :x 1] [:w :y 5]]}
         {:type :ok, :process 1, :value [[:w :x 1] [:w :y 6]]}
         {:type :ok, :process 2, :value [[:r :x 1] [:r :y nil]]}");
    let level = isolde::si_check::Level::from_model("serializable").expect("level");
    let out = isolde::si_check::check_level(&h, level, &Default::default()).expect("runs");
    assert!(matches!(out.verdict, isolde::si_check::Verdict::Unknown(_)), "{:?}", out.verdict);
}

/// VeriStrong's published 10k benchmark repeats 25 written values (456
/// reads of them): decided, not unknown, at both levels.
#[test]
fn veristrong_repeated_value_benchmark_is_decided() {
    let Some(path) = real("veristrong-RH-10k.bincode") else { return };
    let h = read_path_with(&path, Format::Auto, ReadOptions::default()).expect("parses");
    for model in ["serializable", "snapshot-isolation"] {
        let o = run(&h, model);
        assert_eq!(o.error, None);
        assert_eq!(o.valid, Validity::Valid, "{model}: {:?}", o.anomaly_types);
    }
}

fn elle_only(h: &History) -> Outcome {
    let opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Workload::RwRegister),
        models: Some(vec!["serializable".to_string()]),
        exact: None,
        ..CheckOptions::default()
    };
    check(h, &opts).expect("check runs")
}

/// A read is G1a only if every other writer of its value failed, G1b only
/// if every such write was intermediate, and two reads of a repeated value
/// are no lost update (they may have seen different versions).
#[test]
fn aborted_intermediate_and_lost_update_rules_hold_for_every_writer() {
    let types = |text: &str| elle_only(&edn(text)).found_types;
    // Only a failed op wrote 1: G1a.
    let t = types(
        "{:type :fail, :process 0, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:r :x 1]]}",
    );
    assert!(t.contains(&"G1a".to_string()), "{t:?}");
    // A committed op wrote 1 too: the read may be of its write.
    let t = types(
        "{:type :fail, :process 0, :value [[:w :x 1]]}
         {:type :ok, :process 2, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:r :x 1]]}",
    );
    assert!(!t.contains(&"G1a".to_string()), "{t:?}");
    // 1 is intermediate in one op but final in another: no G1b.
    let t = types(
        "{:type :ok, :process 0, :value [[:w :x 1] [:w :x 2]]}
         {:type :ok, :process 2, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:r :x 1]]}",
    );
    assert!(!t.contains(&"G1b".to_string()), "{t:?}");
    // Two read-modify-writes of a repeated value: no lost update.
    let t = types(
        "{:type :ok, :process 0, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:w :x 1]]}
         {:type :ok, :process 2, :value [[:r :x 1] [:w :x 3]]}
         {:type :ok, :process 3, :value [[:r :x 1] [:w :x 4]]}",
    );
    assert!(!t.contains(&"lost-update".to_string()), "{t:?}");
}

/// `isolde analyze --failed-events` on the CockroachDB sample: the default
/// reports the indeterminate transactions and is valid; `as-committed` is
/// dbcop's reading, invalid.
#[test]
fn failed_events_flag_on_the_command_line() {
    let Some(path) = real("cockroachdb-12_30_20_720.bincode") else { return };
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_isolde"))
            .args(["analyze", path.to_str().unwrap_or_default(), "-m", "serializable"])
            .args(extra)
            .output()
            .expect("isolde runs")
    };
    let out = run(&["-f", "edn"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "{:valid? true, :info-txn-count 11}");
    let out = run(&["-f", "edn", "--failed-events", "as-committed"]);
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["-f", "table"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("11 transactions marked committed held a failed event"));
}
