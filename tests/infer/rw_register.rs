//! One small, hand-written rw-register history per register anomaly and per
//! version-order option, checked end to end.

use isolde::anomaly::{Case, Expected, Step, Workload};
use isolde::check::{check, CheckOptions, Outcome, Validity, WorkloadChoice};
use isolde::infer::rw_register::RwOptions;
use isolde::ingest::{read_bytes, Format};

/// Elle's inference only (these tests pin what it infers); the exact check
/// is exercised by `exact`.
fn run(edn: &str, models: Option<&[&str]>, anomalies: &[&str], rw: RwOptions) -> Outcome {
    run_with(edn, models, anomalies, rw, false)
}

fn exact(edn: &str, models: Option<&[&str]>) -> Outcome {
    run_with(edn, models, &[], PLAIN, true)
}

fn run_with(edn: &str, models: Option<&[&str]>, anomalies: &[&str], rw: RwOptions, exact: bool) -> Outcome {
    let h = read_bytes("test.edn", edn.as_bytes(), Format::Edn).expect("history parses");
    let mut opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Workload::RwRegister),
        models: models.map(|ms| ms.iter().map(|s| s.to_string()).collect()),
        anomalies: anomalies.iter().map(|s| s.to_string()).collect(),
        rw,
        ..CheckOptions::default()
    };
    if !exact {
        opts.exact = None;
    }
    check(&h, &opts).expect("check runs")
}

fn types(o: &Outcome) -> Vec<&str> {
    o.anomaly_types.iter().map(String::as_str).collect()
}

const PLAIN: RwOptions = RwOptions { wfr_keys: false, sequential_keys: false, linearizable_keys: false };
const WFR: RwOptions = RwOptions { wfr_keys: true, sequential_keys: false, linearizable_keys: false };
const SEQUENTIAL: RwOptions = RwOptions { wfr_keys: false, sequential_keys: true, linearizable_keys: false };
const LINEARIZABLE: RwOptions = RwOptions { wfr_keys: false, sequential_keys: false, linearizable_keys: true };

#[test]
fn auto_workload_picks_registers_for_writes_without_appends() {
    let h = read_bytes("t.edn", b"{:type :ok, :process 0, :value [[:w :x 1]]}", Format::Edn).expect("parses");
    let o = check(&h, &CheckOptions::default()).expect("runs");
    assert_eq!(o.workload, Workload::RwRegister);
}

#[test]
fn g1a_read_of_a_failed_write() {
    let o = run(
        "{:type :fail, :process 0, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:r :x 1]]}",
        Some(&["read-committed"]),
        &[],
        PLAIN,
    );
    assert!(types(&o).contains(&"G1a"), "{:?}", types(&o));
    let Case::BadRead { writer, element, .. } = &o.anomalies["G1a"][0] else { panic!() };
    assert_eq!((*writer, *element), (0, None));
    // Not garbage: the failed op did write it.
    assert!(!types(&o).contains(&"garbage-read"));
}

#[test]
fn g1b_read_of_an_overwritten_value() {
    let o = run(
        "{:type :ok, :process 0, :value [[:w :x 1] [:w :x 2]]}
         {:type :ok, :process 1, :value [[:r :x 1]]}",
        Some(&["read-committed"]),
        &[],
        PLAIN,
    );
    assert_eq!(types(&o), vec!["G1b", "empty-transaction-graph"]);
}

#[test]
fn internal_read_disagreeing_with_own_write() {
    let o = run("{:type :ok, :process 0, :value [[:w :x 1] [:r :x 2]]}", Some(&[]), &["internal"], PLAIN);
    let Case::Internal { expected, .. } = &o.anomalies["internal"][0] else { panic!() };
    assert_eq!(*expected, Expected::Register(Some(1)));
    // A nil read followed by a non-nil one inside a txn is internal too.
    let o = run(
        "{:type :ok, :process 0, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:r :x nil] [:r :x 1]]}",
        Some(&[]),
        &["internal"],
        PLAIN,
    );
    assert!(types(&o).contains(&"internal"));
}

#[test]
fn lost_update_two_increments_of_the_same_version() {
    let o = run(
        "{:type :ok, :process 0, :value [[:w :x 0]]}
         {:type :ok, :process 1, :value [[:r :x 0] [:w :x 1]]}
         {:type :ok, :process 2, :value [[:r :x 0] [:w :x 2]]}",
        Some(&["cursor-stability"]),
        &[],
        PLAIN,
    );
    assert_eq!(types(&o), vec!["lost-update"]);
}

#[test]
fn g1c_through_write_read_edges() {
    let o = run(
        "{:type :ok, :process 0, :value [[:w :x 1] [:r :y 1]]}
         {:type :ok, :process 1, :value [[:w :y 1] [:r :x 1]]}",
        Some(&["read-committed"]),
        &[],
        PLAIN,
    );
    assert_eq!(types(&o), vec!["G1c"]);
}

#[test]
fn g_single_item_from_the_initial_state() {
    // T1 read x = nil but saw T0's write of y; T0 also wrote x.
    let o = run(
        "{:type :ok, :process 0, :value [[:w :y 1] [:w :x 2]]}
         {:type :ok, :process 1, :value [[:r :x nil] [:r :y 1]]}",
        Some(&["serializable"]),
        &[],
        PLAIN,
    );
    assert_eq!(types(&o), vec!["G-single-item"]);
    let Case::Cycle(c) = &o.anomalies["G-single-item"][0] else { panic!() };
    assert!(c.steps.iter().any(|s| matches!(s, Step::Rw { value: None, value2: Some(2), .. })));
}

#[test]
fn wfr_keys_orders_a_read_before_the_same_txns_write() {
    let h = "{:type :ok, :process 0, :value [[:w :y 1]]}
             {:type :ok, :process 0, :value [[:r :y 1] [:w :x 1] [:w :y 2]]}
             {:type :ok, :process 1, :value [[:r :x 1] [:r :y 1]]}";
    assert_eq!(run(h, Some(&["serializable"]), &[], PLAIN).valid, Validity::Valid);
    let o = run(h, Some(&["serializable"]), &[], WFR);
    assert_eq!(types(&o), vec!["G-single-item"]);
    // The exact check needs no version-order option: T1 read y = 1 and
    // wrote y = 2, so y's versions are 1, 2; T2 read y = 1 after x = 1.
    let o = exact(h, Some(&["serializable"]));
    assert_eq!(types(&o), vec!["G-single-item"]);
    let Case::Refuted(r) = &o.anomalies["G-single-item"][0] else { panic!("not a refutation") };
    assert_eq!(r.model, "serializable");
    assert_eq!(r.branches.len(), 1);
    assert!(r.branches[0].assume.is_empty());
}

#[test]
fn sequential_keys_order_versions_by_process() {
    let h = "{:type :invoke, :process 0, :value [[:w :x 1] [:w :y 2]]}
             {:type :ok, :process 0, :value [[:w :x 1] [:w :y 2]]}
             {:type :invoke, :process 1, :value [[:w :x 2] [:w :y 1]]}
             {:type :ok, :process 1, :value [[:w :x 2] [:w :y 1]]}
             {:type :invoke, :process 0, :value [[:r :x nil]]}
             {:type :ok, :process 0, :value [[:r :x 2]]}
             {:type :invoke, :process 1, :value [[:r :y nil]]}
             {:type :ok, :process 1, :value [[:r :y 2]]}";
    assert_eq!(run(h, Some(&[]), &["G0"], PLAIN).valid, Validity::Valid);
    let o = run(h, Some(&[]), &["G0"], SEQUENTIAL);
    assert_eq!(types(&o), vec!["G0"]);
}

#[test]
fn cyclic_versions_drop_the_contradicting_source() {
    // Process 0 writes 1, then 2, then reads 1: sequential order says 1 < 2
    // and 2 < 1.
    let h = "{:type :invoke, :process 0, :value [[:w :x 1]]}
             {:type :ok, :process 0, :value [[:w :x 1]]}
             {:type :invoke, :process 0, :value [[:w :x 2]]}
             {:type :ok, :process 0, :value [[:w :x 2]]}
             {:type :invoke, :process 0, :value [[:r :x nil]]}
             {:type :ok, :process 0, :value [[:r :x 1]]}";
    let o = run(h, None, &[], SEQUENTIAL);
    assert_eq!(types(&o), vec!["cyclic-versions"]);
    let Case::CyclicVersions { scc, sources, .. } = &o.anomalies["cyclic-versions"][0] else { panic!() };
    assert_eq!(scc, &vec![Some(1), Some(2)]);
    assert_eq!(sources, &vec!["initial-state".to_string(), "sequential-keys".to_string()]);
    assert!(o.not.contains("read-uncommitted"));
    // Linearizable keys see the same contradiction through realtime order.
    let o = run(h, None, &[], LINEARIZABLE);
    assert!(types(&o).contains(&"cyclic-versions"));
}

#[test]
fn linearizable_keys_find_a_stale_read() {
    // T1 writes x = 1 and completes; T2 then writes x = 2 and completes;
    // T3, later still, reads x = 1 while also reading T2's y.
    let h = "{:type :invoke, :process 0, :value [[:w :x 1]]}
             {:type :ok, :process 0, :value [[:w :x 1]]}
             {:type :invoke, :process 1, :value [[:w :x 2] [:w :y 1]]}
             {:type :ok, :process 1, :value [[:w :x 2] [:w :y 1]]}
             {:type :invoke, :process 2, :value [[:r :y nil] [:r :x nil]]}
             {:type :ok, :process 2, :value [[:r :y 1] [:r :x 1]]}";
    assert_eq!(run(h, Some(&["serializable"]), &[], PLAIN).valid, Validity::Valid);
    let o = run(h, Some(&["serializable"]), &[], LINEARIZABLE);
    assert_ne!(o.valid, Validity::Valid, "{:?}", types(&o));
}

#[test]
fn g1c_realtime() {
    let o = run(
        "{:type :invoke, :process 0, :value [[:r :x nil]]}
         {:type :ok, :process 0, :value [[:r :x 4]]}
         {:type :invoke, :process 1, :value [[:w :x 4]]}
         {:type :ok, :process 1, :value [[:w :x 4]]}",
        None,
        &[],
        PLAIN,
    );
    assert_eq!(types(&o), vec!["G1c-realtime"]);
}

#[test]
fn garbage_read_of_a_value_nobody_wrote() {
    let o = run(
        "{:type :invoke, :process 0, :value [[:w :x 1]]}
         {:type :ok, :process 0, :value [[:w :x 1]]}
         {:type :invoke, :process 0, :value [[:r :x nil]]}
         {:type :ok, :process 0, :value [[:r :x 2]]}",
        None,
        &[],
        LINEARIZABLE,
    );
    assert_eq!(types(&o), vec!["garbage-read"]);
    assert_eq!(o.valid, Validity::Invalid);
    let Case::GarbageRead { value, .. } = &o.anomalies["garbage-read"][0] else { panic!() };
    assert_eq!(*value, 2);
}

#[test]
fn repeated_writes_give_no_wr_edge_and_no_error() {
    let o = run(
        "{:type :ok, :process 0, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:w :x 1]]}
         {:type :ok, :process 2, :value [[:r :x 1]]}",
        None,
        &[],
        PLAIN,
    );
    assert_eq!(o.error, None);
    // No wr edge: the read of 1 has two candidate writers.
    assert_eq!(o.anomaly_types, vec!["empty-transaction-graph".to_string()]);
    let o = exact(
        "{:type :ok, :process 0, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:w :x 1]]}
         {:type :ok, :process 2, :value [[:r :x 1]]}",
        None,
    );
    assert_eq!(o.valid, Validity::Valid);
}

/// A transaction that reads a value it writes only later, and that nobody
/// else wrote, read from the future: Elle's `future-read`, reported with the
/// reading micro-op, at every model (alone or among other transactions), by
/// the inference and by the exact check alike.
#[test]
fn future_read_of_a_later_own_write() {
    let alone = "{:type :invoke, :process 0, :value [[:r :x nil] [:w :x 6]]}
                 {:type :ok, :process 0, :value [[:r :x 6] [:w :x 6]]}";
    let among = "{:type :ok, :process 1, :value [[:w :x 1] [:w :y 2]]}
                 {:type :ok, :process 0, :value [[:r :y 2] [:r :x 6] [:w :x 6]]}
                 {:type :ok, :process 2, :value [[:r :x 6]]}";
    for h in [alone, among] {
        for models in [None, Some(&["serializable"][..]), Some(&["read-committed"][..])] {
            for o in [run(h, models, &[], PLAIN), exact(h, models)] {
                assert_eq!(o.valid, Validity::Invalid, "{models:?}: {:?}", types(&o));
                assert!(types(&o).contains(&"future-read"), "{:?}", types(&o));
                let Case::FutureRead { mop, element } = &o.anomalies["future-read"][0] else { panic!() };
                assert_eq!(*element, 6);
                assert_eq!(mop.mop, if h == alone { 0 } else { 1 });
            }
        }
    }
}

/// Not a future read: the transaction wrote the value before reading it, or
/// another transaction also wrote it (then the read may come from there).
#[test]
fn no_future_read_when_the_value_has_another_source() {
    let own_earlier = "{:type :ok, :process 0, :value [[:w :x 6] [:r :x 6] [:w :x 6]]}";
    let failed_other = "{:type :fail, :process 1, :value [[:w :x 6]]}
                        {:type :ok, :process 0, :value [[:r :x 6] [:w :x 6]]}";
    let o = run(own_earlier, Some(&["serializable"]), &[], PLAIN);
    assert!(!types(&o).contains(&"future-read"), "{:?}", types(&o));
    let o = run(failed_other, Some(&["serializable"]), &[], PLAIN);
    assert!(!types(&o).contains(&"future-read"), "{:?}", types(&o));
    assert!(types(&o).contains(&"G1a"), "{:?}", types(&o));
}

/// C4's `tap-c` shape in PolySI/Plume text: the same future read, found
/// whatever the input format.
#[test]
fn future_read_in_text_format() {
    let h = read_bytes("tap-c.txt", b"w(1,1,0,0)\nr(1,2,1,1)\nw(1,2,1,1)\n", Format::PolysiText).expect("parses");
    let o = check(&h, &CheckOptions::default()).expect("runs");
    assert_eq!(o.valid, Validity::Invalid);
    assert!(types(&o).contains(&"future-read"), "{:?}", types(&o));
}

/// A read-only history of scalar reads is a register history in every
/// format, and gets one verdict (a garbage read), not `unknown` in EDN and
/// `garbage-read` elsewhere; list reads still mean list-append.
#[test]
fn auto_workload_decides_read_only_histories_from_read_values() {
    let inputs: [(&str, &[u8], Format); 3] = [
        ("ro.edn", b"{:type :ok, :process 0, :value [[:r 1 2]]}", Format::Edn),
        ("ro.json", br#"[{"type": "ok", "process": 0, "value": [["r", 1, 2]]}]"#, Format::Json),
        ("ro.txt", b"r(1,2,0,0)\n", Format::PolysiText),
    ];
    for (name, bytes, format) in inputs {
        let h = read_bytes(name, bytes, format).expect("parses");
        let o = check(&h, &CheckOptions::default()).expect("runs");
        assert_eq!(o.workload, Workload::RwRegister, "{name}");
        assert_eq!(o.valid, Validity::Invalid, "{name}: {:?}", types(&o));
        assert!(types(&o).contains(&"garbage-read"), "{name}: {:?}", types(&o));
    }
    let h = read_bytes("l.edn", b"{:type :ok, :process 0, :value [[:r :x [1]]]}", Format::Edn).expect("parses");
    assert_eq!(check(&h, &CheckOptions::default()).expect("runs").workload, Workload::ListAppend);
}
