//! Elle's changes of 2026 (jepsen-io/elle after 0.2.7), each as a case of
//! Elle's own tests: nil-then-value internal reads (commit 8a5e27b, both
//! workloads, in Elle's case shape `{:op … :mop … :expected …}`), the
//! rw-register version-order cycle that did not exist (commit 5cc2eca), and
//! the database's commit order as known write orders (`:transaction-order`,
//! pull request #31), through inference, the exact check and the ladder.

use isolde::anomaly::{Case, Step, Workload};
use isolde::check::{check, CheckOptions, ModelStatus, Outcome, Validity, WorkloadChoice};
use isolde::history::transaction_order::{self, OrderFile};
use isolde::history::History;
use isolde::infer::rw_register::RwOptions;
use isolde::ingest::{read_bytes, Format};
use isolde::outcome::DecidedBy;
use isolde::reports::{edn, result_map};

fn history(text: &str) -> History {
    read_bytes("h.edn", text.as_bytes(), Format::Edn).expect("history parses")
}

/// `h` with the order `{index number …}` as if from `--transaction-order`.
fn ordered(mut h: History, order: &str) -> History {
    let file = OrderFile {
        name: "order.edn".into(),
        entries: transaction_order::parse("order.edn", order).expect("order parses"),
    };
    h.transaction_order = transaction_order::load(&h, Some(&file)).expect("order resolves").map(Box::new);
    h
}

fn opts(workload: Workload, models: &[&str], exact: bool) -> CheckOptions {
    CheckOptions {
        workload: WorkloadChoice::Fixed(workload),
        models: Some(models.iter().map(|s| s.to_string()).collect()),
        exact: if exact { CheckOptions::default().exact } else { None },
        ..CheckOptions::default()
    }
}

fn types(o: &Outcome) -> Vec<&str> {
    o.anomaly_types.iter().map(String::as_str).collect()
}

/// The `:internal` cases of `h` as Elle prints them.
fn internal_cases(h: &History, w: Workload) -> Vec<String> {
    let o = check(h, &CheckOptions { anomalies: vec!["internal".into()], ..opts(w, &[], false) }).expect("runs");
    let cases = o.anomalies.get("internal").map(Vec::as_slice).unwrap_or_default();
    cases.iter().map(|c| edn::to_string(h, &result_map::case(h, w, c))).collect()
}

// --- nil, then a value (Elle 8a5e27b) -------------------------------------

/// Elle's list-append "read nil, then something": `(pair (op "rxrx2"))`.
#[test]
fn list_append_read_nil_then_something() {
    let h = history(
        "{:index 0, :time 0, :type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:r :x nil]]}
         {:index 1, :time 0, :type :ok, :process 0, :f :txn, :value [[:r :x nil] [:r :x [2]]]}",
    );
    assert_eq!(
        internal_cases(&h, Workload::ListAppend),
        vec![
            "{:op {:index 1, :time 0, :type :ok, :process 0, :f :txn, :value [[:r :x nil] [:r :x [2]]]}, \
             :mop [:r :x [2]], :expected nil}"
        ]
    );
}

/// Elle compares with `=`: nil is not the empty list, either way round;
/// an append after a nil read makes the state a definite list.
#[test]
fn list_append_nil_is_not_the_empty_list() {
    let one = |value: &str| {
        let h = history(&format!("{{:index 0, :type :ok, :process 0, :f :txn, :value {value}}}"));
        internal_cases(&h, Workload::ListAppend)
            .iter()
            .map(|c| c.split(", :mop ").nth(1).unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(one("[[:r :x nil] [:r :x []]]"), vec!["[:r :x []], :expected nil}"]);
    assert_eq!(one("[[:r :x []] [:r :x nil]]"), vec!["[:r :x nil], :expected []}"]);
    assert_eq!(one("[[:r :x nil] [:r :x nil]]"), Vec::<String>::new());
    assert_eq!(one("[[:r :x nil] [:append :x 3] [:r :x [3]]]"), Vec::<String>::new());
    assert_eq!(one("[[:r :x nil] [:append :x 3] [:r :x nil]]"), vec!["[:r :x nil], :expected [3]}"]);
    assert_eq!(one("[[:append :x 3] [:r :x nil]]"), vec!["[:r :x nil], :expected [... 3]}"]);
}

/// Elle's rw-register "nil read": `(op "rx_rx2")`.
#[test]
fn rw_register_nil_read() {
    let h = history("{:index 0, :time 0, :type :ok, :process 0, :f :txn, :value [[:r :x nil] [:r :x 2]]}");
    assert_eq!(
        internal_cases(&h, Workload::RwRegister),
        vec![
            "{:op {:index 0, :time 0, :type :ok, :process 0, :f :txn, :value [[:r :x nil] [:r :x 2]]}, \
             :mop [:r :x 2], :expected nil}"
        ]
    );
    let fine = history("{:index 0, :type :ok, :process 0, :f :txn, :value [[:r :x nil] [:w :x 2] [:r :x 2]]}");
    assert_eq!(internal_cases(&fine, Workload::RwRegister), Vec::<String>::new());
}

// --- the cycle that was not there (Elle 5cc2eca) ---------------------------

/// Elle's `cyclic-versions-bug-test`: with linearizable keys, Elle once
/// inferred a cyclic version order of key 1 here (a shared mutable set of
/// downstream ops); the history is serializable.
#[test]
fn rw_register_no_version_cycle_from_unrelated_ops() {
    let h = history(
        "{:index 1,   :time 33189116, :type :invoke, :process 0, :f :txn, :value []}
         {:index 2,   :time 34621247, :type :ok,     :process 0, :f :txn, :value []}
         {:index 3,   :time 36022782, :type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}
         {:index 4,   :time 36230324, :type :invoke, :process 1, :f :txn, :value [[:w 1 4]]}
         {:index 5,   :time 36827540, :type :invoke, :process 2, :f :txn, :value []}
         {:index 320, :time 37708797, :type :ok,     :process 0, :f :txn, :value [[:r 1 nil]]}
         {:index 322, :time 37894295, :type :ok,     :process 1, :f :txn, :value [[:w 1 4]]}
         {:index 323, :time 37992467, :type :ok,     :process 2, :f :txn, :value []}
         {:index 324, :time 38532405, :type :invoke, :process 0, :f :txn, :value []}
         {:index 325, :time 39475568, :type :ok,     :process 0, :f :txn, :value []}
         {:index 326, :time 39956694, :type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}
         {:index 327, :time 40746079, :type :ok,     :process 0, :f :txn, :value [[:r 1 4]]}",
    );
    for exact in [false, true] {
        let mut o = opts(Workload::RwRegister, &["serializable"], exact);
        o.rw = RwOptions { linearizable_keys: true, ..RwOptions::default() };
        let out = check(&h, &o).expect("runs");
        assert_eq!(out.valid, Validity::Valid, "exact {exact}: {:?}", types(&out));
        assert!(!out.anomalies.contains_key("cyclic-versions"));
    }
}

// --- the database's commit order (Elle PR #31) -----------------------------

/// Elle's "G-single transaction-order": T1 `rx_wy2`, T2 `wx3wy4`, order
/// `{0 2, 1 1}` (T2 committed first).
const G_SINGLE: &str = "{:index 0, :type :ok, :process 0, :value [[:r :x nil] [:w :y 2]]}
                        {:index 1, :type :ok, :process 0, :value [[:w :x 3] [:w :y 4]]}";

/// Elle's "G2-item transaction-order": order T1, T3, T4, T2.
const G2_ITEM: &str = "{:index 0, :type :ok, :process 0, :value [[:w :x 1] [:w :y 2] [:w :z 3]]}
                       {:index 1, :type :ok, :process 0, :value [[:r :x 1] [:w :y 5]]}
                       {:index 2, :type :ok, :process 0, :value [[:r :z 3] [:w :x 4]]}
                       {:index 3, :type :ok, :process 0, :value [[:w :z 7] [:w :y 8]]}";

fn steps(o: &Outcome, anomaly: &str) -> Vec<String> {
    let Some(Case::Cycle(c)) = o.anomalies.get(anomaly).and_then(|cs| cs.first()) else {
        panic!("no {anomaly} cycle: {:?}", o.anomalies.keys().collect::<Vec<_>>())
    };
    c.steps
        .iter()
        .map(|s| match s {
            Step::Ww { value, value2, .. } => format!("ww {value:?} {value2:?}"),
            Step::Rw { value, value2, .. } => format!("rw {value:?} {value2:?}"),
            Step::Wr { value, .. } => format!("wr {value:?}"),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn g_single_transaction_order() {
    let h = history(G_SINGLE);
    let without = check(&h, &opts(Workload::RwRegister, &["serializable"], false)).expect("runs");
    assert_eq!(without.valid, Validity::Valid);
    let h = ordered(h, "{0 2, 1 1}");
    let o = check(&h, &opts(Workload::RwRegister, &["serializable"], false)).expect("runs");
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), vec!["G-single-item"]);
    let not: Vec<&str> = o.not.iter().map(String::as_str).collect();
    assert_eq!(not, vec!["consistent-view", "repeatable-read"]);
    assert_eq!(steps(&o, "G-single-item"), vec!["rw None Some(3)", "ww Some(4) Some(2)"]);
    let Some(Case::Cycle(c)) = o.anomalies["G-single-item"].first() else { panic!() };
    assert_eq!(c.ops.iter().map(|&op| h.op(op).index).collect::<Vec<_>>(), vec![0, 1]);
}

#[test]
fn g2_item_transaction_order() {
    let h = history(G2_ITEM);
    let without = check(&h, &opts(Workload::RwRegister, &["serializable"], false)).expect("runs");
    assert_eq!(without.valid, Validity::Valid);
    // JSON, adya's form.
    let mut h = h;
    let file = OrderFile {
        name: "order.json".into(),
        entries: transaction_order::parse("order.json", r#"{"0": 1, "1": 4, "2": 2, "3": 3}"#).expect("parses"),
    };
    h.transaction_order = transaction_order::load(&h, Some(&file)).expect("resolves").map(Box::new);
    let o = check(&h, &opts(Workload::RwRegister, &["serializable"], false)).expect("runs");
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), vec!["G2-item"]);
    let not: Vec<&str> = o.not.iter().map(String::as_str).collect();
    assert_eq!(not, vec!["repeatable-read"]);
    assert_eq!(steps(&o, "G2-item"), vec!["rw Some(1) Some(4)", "rw Some(3) Some(7)", "ww Some(8) Some(5)"]);
}

/// The exact check uses the order too: its serial replay and its
/// polygraph accept only executions that install each key's versions in the
/// order's order, so the same history is serializable under one order and
/// not under the other.
#[test]
fn exact_check_uses_the_order() {
    // T1 and T2 write x; T3 reads 1 and writes z = 5; T4 reads x = 2 and z = 5.
    let text = "{:index 0, :type :ok, :process 0, :value [[:w :x 1]]}
                {:index 1, :type :ok, :process 1, :value [[:w :x 2]]}
                {:index 2, :type :ok, :process 2, :value [[:r :x 1] [:w :z 5]]}
                {:index 3, :type :ok, :process 3, :value [[:r :x 2] [:r :z 5]]}";
    let ser = opts(Workload::RwRegister, &["serializable"], true);
    let proved = |o: &Outcome| o.stats.exact_valid.iter().any(|l| l.model() == "serializable");
    let plain = check(&history(text), &ser).expect("runs");
    assert_eq!(plain.valid, Validity::Valid);
    assert!(proved(&plain), "T1 T3 T2 T4 is a serial execution");
    let agrees = check(&ordered(history(text), "{0 0, 1 1}"), &ser).expect("runs");
    assert_eq!(agrees.valid, Validity::Valid, "{:?}", types(&agrees));
    assert!(proved(&agrees), "T1 T3 T2 T4 installs 1 before 2");
    let contradicts = check(&ordered(history(text), "{0 1, 1 0}"), &ser).expect("runs");
    assert_eq!(contradicts.valid, Validity::Invalid);
    assert!(!proved(&contradicts), "2 before 1 leaves the read of 1 after the read of 2's z");
}

/// An order that contradicts the reads is an anomaly with a witness: T2
/// read T1's x and overwrote it, yet the order says T2 committed first.
#[test]
fn an_order_contradicting_the_reads_is_reported() {
    let h = ordered(
        history(
            "{:index 0, :type :ok, :process 0, :value [[:w :x 1]]}
             {:index 1, :type :ok, :process 1, :value [[:r :x 1] [:w :x 2]]}",
        ),
        "{0 1, 1 0}",
    );
    let o = check(&h, &opts(Workload::RwRegister, &["read-committed"], true)).expect("runs");
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), vec!["G1c"]);
    let mut s = steps(&o, "G1c");
    s.sort();
    assert_eq!(s, vec!["wr Some(1)", "ww Some(2) Some(1)"]);
    // With writes-follow-reads the same facts are a version cycle, reported
    // with the sources that made it.
    let mut wfr = opts(Workload::RwRegister, &["read-committed"], false);
    wfr.rw = RwOptions { wfr_keys: true, ..RwOptions::default() };
    let o = check(&h, &wfr).expect("runs");
    let Some(Case::CyclicVersions { sources, .. }) = o.anomalies.get("cyclic-versions").and_then(|c| c.first()) else {
        panic!("no cyclic-versions: {:?}", types(&o))
    };
    assert_eq!(sources, &["initial-state", "transaction-order-keys", "wfr-keys"]);
}

/// Levels proved by checkers that ignore the order (the weak levels) are
/// not shown as proved by them; violations stand.
#[test]
fn ladder_does_not_prove_levels_with_order_blind_checkers() {
    let h = ordered(history(G_SINGLE), "{0 2, 1 1}");
    let o =
        check(&h, &CheckOptions { ladder: true, ..opts(Workload::RwRegister, &["serializable"], true) }).expect("runs");
    assert_eq!(o.stats.transaction_order, 2);
    for row in &o.levels {
        let weak_proof = row.status == ModelStatus::Holds
            && matches!(row.decided_by, DecidedBy::Checker(isolde::levels::Decider::Weak));
        assert!(!weak_proof, "{} proved by the weak check, which ignores the order", row.level.model);
    }
    let ser = o.levels.iter().find(|r| r.level.model == "serializable").expect("row");
    assert!(matches!(ser.status, ModelStatus::Violated(_)));
}

/// Ops carry the order themselves in `:transaction-order`; writes of ops
/// it does not place, and of `:info` ops it places, are used as far as they
/// are known.
#[test]
fn op_fields_give_the_order() {
    let h = history(
        "{:index 0, :type :ok, :process 0, :value [[:r :x nil] [:w :y 2]], :transaction-order 2}
         {:index 1, :type :ok, :process 0, :value [[:w :x 3] [:w :y 4]], :transaction-order 1}",
    );
    let order = h.transaction_order.as_deref().expect("order from fields");
    assert_eq!(order.ranked(), &[(1, 1), (2, 0)]);
    let o = check(&h, &opts(Workload::RwRegister, &["serializable"], false)).expect("runs");
    assert_eq!(types(&o), vec!["G-single-item"]);
    // An :info write between two ok ones does not hide their order.
    let h = ordered(
        history(
            "{:index 0, :type :ok, :process 0, :value [[:w :x 1]]}
             {:index 1, :type :info, :process 1, :value [[:w :x 2]]}
             {:index 2, :type :ok, :process 2, :value [[:w :x 3] [:r :y nil]]}
             {:index 3, :type :ok, :process 3, :value [[:w :y 1] [:r :x 1]]}",
        ),
        "{0 0, 1 1, 2 2}",
    );
    let o = check(&h, &opts(Workload::RwRegister, &["serializable"], false)).expect("runs");
    assert_eq!(types(&o), vec!["G2-item"], "T3 -rw(x 1 < 3)-> T2 -rw(y nil < 1)-> T3");
}

/// Bad orders are errors that name the file and the place.
#[test]
fn bad_orders_are_clear_errors() {
    let h = history(
        "{:index 0, :type :invoke, :process 0, :value [[:w :x 1]]}
         {:index 1, :type :ok, :process 0, :value [[:w :x 1]]}
         {:index 2, :type :fail, :process 1, :value [[:w :x 2]]}",
    );
    let load = |text: &str| {
        let file = OrderFile { name: "o.edn".into(), entries: transaction_order::parse("o.edn", text)? };
        transaction_order::load(&h, Some(&file))
    };
    assert_eq!(load("{7 0}").err().unwrap_or_default(), "o.edn:1:2: no client operation of h.edn has :index 7");
    assert_eq!(
        load("{1 0\n 0 1}").err().unwrap_or_default(),
        "o.edn:2:2: :index 0 is an invocation in h.edn; the order maps completions (:ok or :info) to order numbers"
    );
    let order = load("{1 0, 2 1}").expect("a failed op is ignored").expect("an order");
    assert_eq!((order.len(), order.ignored_failed), (1, 1));
    let field =
        read_bytes("f.edn", b"{:index 0, :type :ok, :process 0, :value [], :transaction-order :soon}", Format::Edn);
    let e = field.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.starts_with("f.edn line 1: the op field :transaction-order must be an integer"), "{e}");
    let both = history("{:index 0, :type :ok, :process 0, :value [[:w :x 1]], :transaction-order 3}");
    let file = OrderFile { name: "o.edn".into(), entries: transaction_order::parse("o.edn", "{0 4}").expect("parses") };
    assert_eq!(
        transaction_order::load(&both, Some(&file)).err().unwrap_or_default(),
        "o.edn:1:2: :index 0 is given order number 4, but h.edn line 1 gives it 3"
    );
}
