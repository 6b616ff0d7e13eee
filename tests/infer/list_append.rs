//! One small, hand-written list-append history per anomaly type, checked end
//! to end (ingest, inference, cycle search, result map).

use isolde::anomaly::Case;
use isolde::check::{check, CheckOptions, Outcome, Validity};
use isolde::ingest::{read_bytes, Format};
use std::time::Duration;

fn run_with(edn: &str, models: Option<&[&str]>, anomalies: &[&str], timeout_ms: u64) -> Outcome {
    let h = read_bytes("test.edn", edn.as_bytes(), Format::Edn).expect("history parses");
    let opts = CheckOptions {
        models: models.map(|ms| ms.iter().map(|s| s.to_string()).collect()),
        anomalies: anomalies.iter().map(|s| s.to_string()).collect(),
        cycle_search_timeout: Duration::from_millis(timeout_ms),
        ..CheckOptions::default()
    };
    check(&h, &opts).expect("check runs")
}

fn run(edn: &str, models: Option<&[&str]>) -> Outcome {
    run_with(edn, models, &[], 5000)
}

fn types(o: &Outcome) -> Vec<&str> {
    o.anomaly_types.iter().map(String::as_str).collect()
}

#[test]
fn g0_write_cycle() {
    let o = run(
        "{:type :ok, :process 0, :value [[:append :x 1] [:append :y 2]]}
         {:type :ok, :process 1, :value [[:append :x 2] [:append :y 1]]}
         {:type :ok, :process 2, :value [[:r :x [1 2]] [:r :y [1 2]]]}",
        Some(&["read-uncommitted"]),
    );
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), vec!["G0"]);
    assert!(o.not.contains("read-uncommitted"));
    let Case::Cycle(c) = &o.anomalies["G0"][0] else { panic!("G0 is a cycle") };
    assert_eq!(c.ops.len(), 2);
    assert!(c.steps.iter().all(|s| s.type_name() == "ww"));
}

#[test]
fn g1a_aborted_read() {
    let o = run(
        "{:type :fail, :process 0, :value [[:append :x 1]]}
         {:type :ok, :process 1, :value [[:r :x [1]]]}",
        Some(&["read-committed"]),
    );
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), vec!["G1a", "empty-transaction-graph"]);
    let Case::BadRead { writer, element, .. } = &o.anomalies["G1a"][0] else { panic!() };
    assert_eq!(*writer, 0);
    assert_eq!(*element, Some(1));
}

#[test]
fn g1b_intermediate_read() {
    let o = run(
        "{:type :ok, :process 0, :value [[:append :x 1] [:append :x 2]]}
         {:type :ok, :process 1, :value [[:r :x [1]]]}",
        Some(&["read-committed"]),
    );
    assert_eq!(types(&o), vec!["G1b"]);
    assert!(o.not.contains("read-committed"));
}

#[test]
fn g1c_circular_information_flow() {
    let o = run(
        "{:type :ok, :process 0, :value [[:append :x 1] [:r :y [1]]]}
         {:type :ok, :process 1, :value [[:append :y 1] [:r :x [1]]]}",
        Some(&["read-committed"]),
    );
    assert_eq!(types(&o), vec!["G1c"]);
    let Case::Cycle(c) = &o.anomalies["G1c"][0] else { panic!() };
    assert!(c.steps.iter().all(|s| s.type_name() == "wr"));
}

#[test]
fn g_single_item_read_skew() {
    let o = run(
        "{:type :ok, :process 0, :value [[:append :x 1] [:append :y 1]]}
         {:type :ok, :process 1, :value [[:r :x nil] [:r :y [1]]]}",
        Some(&["snapshot-isolation"]),
    );
    assert_eq!(types(&o), vec!["G-single-item"]);
    assert_eq!(o.not.iter().map(String::as_str).collect::<Vec<_>>(), vec!["consistent-view", "repeatable-read"]);
}

#[test]
fn g2_item_write_skew_is_allowed_by_snapshot_isolation() {
    let h = "{:type :ok, :process 0, :value [[:r :x nil] [:append :y 1]]}
             {:type :ok, :process 1, :value [[:r :y nil] [:append :x 1]]}";
    assert_eq!(run(h, Some(&["snapshot-isolation"])).valid, Validity::Valid);
    let o = run(h, Some(&["serializable"]));
    assert_eq!(types(&o), vec!["G2-item"]);
    assert!(o.not.contains("repeatable-read"));
}

#[test]
fn g_nonadjacent_item_long_fork() {
    let o = run(
        "{:type :ok, :process 0, :value [[:r :x nil] [:r :y [1]]]}
         {:type :ok, :process 1, :value [[:append :x 1]]}
         {:type :ok, :process 2, :value [[:r :x [1]] [:r :y nil]]}
         {:type :ok, :process 3, :value [[:append :y 1]]}",
        Some(&["snapshot-isolation"]),
    );
    assert_eq!(types(&o), vec!["G-nonadjacent-item"]);
    let Case::Cycle(c) = &o.anomalies["G-nonadjacent-item"][0] else { panic!() };
    assert_eq!(c.ops.len(), 4);
}

#[test]
fn g_single_item_realtime_stale_read() {
    let o = run(
        "{:type :invoke, :process 0, :value [[:append :x 1]]}
         {:type :ok, :process 0, :value [[:append :x 1]]}
         {:type :invoke, :process 1, :value [[:r :x nil]]}
         {:type :ok, :process 1, :value [[:r :x nil]]}",
        None,
    );
    assert_eq!(types(&o), vec!["G-single-item-realtime"]);
    assert!(o.not.contains("strong-snapshot-isolation"));
    // Serializability alone allows it.
    assert_eq!(
        run(
            "{:type :invoke, :process 0, :value [[:append :x 1]]}
             {:type :ok, :process 0, :value [[:append :x 1]]}
             {:type :invoke, :process 1, :value [[:r :x nil]]}
             {:type :ok, :process 1, :value [[:r :x nil]]}",
            Some(&["serializable"])
        )
        .valid,
        Validity::Valid
    );
}

#[test]
fn g1c_process_read_your_writes_violation() {
    let o = run(
        "{:type :ok, :process 0, :value [[:r :x [1]]]}
         {:type :ok, :process 0, :value [[:append :x 1]]}",
        Some(&["strong-session-snapshot-isolation"]),
    );
    assert_eq!(types(&o), vec!["G1c-process"]);
}

#[test]
fn internal_inconsistency() {
    let o = run_with("{:type :ok, :process 0, :value [[:append :x 3] [:r :x [1 2]]]}", Some(&[]), &["internal"], 1000);
    assert_eq!(o.valid, Validity::Invalid);
    let Case::Internal { expected, .. } = &o.anomalies["internal"][0] else { panic!() };
    assert_eq!(*expected, isolde::anomaly::Expected::List { unknown_prefix: true, elems: vec![3] });
}

#[test]
fn future_read() {
    let o = run("{:type :ok, :process 0, :value [[:r :x [1]] [:append :x 1]]}", Some(&["read-committed"]));
    assert_eq!(types(&o), vec!["empty-transaction-graph", "future-read"]);
}

#[test]
fn dirty_update_through_an_indeterminate_append() {
    let o = run_with(
        "{:type :fail, :process 0, :value [[:append :x 1]]}
         {:type :info, :process 1, :value [[:append :x 2]]}
         {:type :ok, :process 2, :value [[:append :x 3]]}
         {:type :ok, :process 3, :value [[:r :x [1 2 3]]]}",
        Some(&[]),
        &["dirty-update"],
        1000,
    );
    assert_eq!(types(&o), vec!["dirty-update"]);
    let Case::DirtyUpdate { values, txns, .. } = &o.anomalies["dirty-update"][0] else { panic!() };
    assert_eq!(values, &vec![1, 2, 3]);
    assert_eq!(txns, &[0, 2]);
}

#[test]
fn duplicate_elements() {
    let o = run(
        "{:type :ok, :process 0, :value [[:append :x 1]]}
                 {:type :ok, :process 1, :value [[:r :x [1 1]]]}",
        Some(&["read-uncommitted"]),
    );
    assert!(types(&o).contains(&"duplicate-elements"));
    let Case::DuplicateElements { duplicates, .. } = &o.anomalies["duplicate-elements"][0] else { panic!() };
    assert_eq!(duplicates, &vec![(1, 2)]);
}

#[test]
fn incompatible_order() {
    let o = run(
        "{:type :ok, :process 0, :value [[:append :x 1] [:append :x 2]]}
         {:type :ok, :process 1, :value [[:r :x [1 2]]]}
         {:type :ok, :process 2, :value [[:r :x [2 1]]]}",
        Some(&["read-committed"]),
    );
    assert!(types(&o).contains(&"incompatible-order"));
}

#[test]
fn lost_update() {
    let o = run(
        "{:type :ok, :process 0, :value [[:append :x 0]]}
         {:type :ok, :process 1, :value [[:r :x [0]] [:append :x 1]]}
         {:type :ok, :process 2, :value [[:r :x [0]] [:append :x 2]]}",
        Some(&["cursor-stability"]),
    );
    assert_eq!(types(&o), vec!["lost-update"]);
    let Case::LostUpdate { txns, .. } = &o.anomalies["lost-update"][0] else { panic!() };
    assert_eq!(txns, &vec![1, 2]);
}

#[test]
fn garbage_read_is_reported_not_a_crash() {
    let o = run(
        "{:type :ok, :process 0, :value [[:append :x 1]]}
         {:type :ok, :process 1, :value [[:r :x [1 7]]]}",
        Some(&["read-uncommitted"]),
    );
    assert_eq!(o.valid, Validity::Invalid);
    let Case::GarbageRead { value, .. } = &o.anomalies["garbage-read"][0] else { panic!() };
    assert_eq!(*value, 7);
}

#[test]
fn timeout_yields_a_timeout_anomaly_and_never_valid() {
    let o = run_with(
        "{:type :ok, :process 0, :value [[:r :x nil] [:append :y 1]]}
         {:type :ok, :process 1, :value [[:r :y nil] [:append :x 1]]}",
        Some(&["serializable"]),
        &[],
        0,
    );
    assert!(types(&o).contains(&"cycle-search-timeout"), "{:?}", types(&o));
    assert_ne!(o.valid, Validity::Valid);
}

#[test]
fn empty_graph_is_unknown() {
    let o = run("{:type :ok, :process 0, :value [[:r :x nil]]}", Some(&["serializable"]));
    assert_eq!(o.valid, Validity::Unknown);
    assert_eq!(types(&o), vec!["empty-transaction-graph"]);
}

#[test]
fn valid_serial_history() {
    let o = run(
        "{:type :invoke, :process 0, :value [[:append :x 1]]}
         {:type :ok, :process 0, :value [[:append :x 1]]}
         {:type :invoke, :process 1, :value [[:r :x nil] [:append :x 2]]}
         {:type :ok, :process 1, :value [[:r :x [1]] [:append :x 2]]}
         {:type :invoke, :process 0, :value [[:r :x nil]]}
         {:type :ok, :process 0, :value [[:r :x [1 2]]]}",
        None,
    );
    assert_eq!(o.valid, Validity::Valid, "{:?}", o.anomalies);
}

#[test]
fn model_table_distinguishes_holds_violated_and_not_checked() {
    use isolde::outcome::ModelStatus;
    // Write skew: allowed by snapshot isolation, not by serializability.
    let h = "{:type :ok, :process 0, :value [[:r :x nil] [:append :y 1]]}
             {:type :ok, :process 1, :value [[:r :y nil] [:append :x 1]]}";
    let o = run(h, Some(&["serializable"]));
    assert_eq!(o.status("serializable"), ModelStatus::Violated("G2-item".into()));
    assert_eq!(o.status("snapshot-isolation"), ModelStatus::Holds);
    assert_eq!(o.status("read-committed"), ModelStatus::Holds);
    // Checking serializability does not look at realtime order.
    assert_eq!(o.status("strong-snapshot-isolation"), ModelStatus::NotChecked);
    let rendered = isolde::reports::table::render(
        &isolde::ingest::read_bytes("t.edn", h.as_bytes(), isolde::ingest::Format::Edn).expect("parses"),
        &o,
        true,
    );
    let row = |m: &str| rendered.lines().find(|l| l.split('┆').next().is_some_and(|c| c.trim_matches(['│', ' ']) == m));
    assert!(row("serializable").is_some_and(|l| l.contains("invalid") && l.contains("G2-item")), "{rendered}");
    assert!(row("snapshot-isolation").is_some_and(|l| l.contains("valid") && !l.contains("invalid")), "{rendered}");
    assert!(rendered.contains("because T1 observed the initial (nil) state of"), "{rendered}");
}
