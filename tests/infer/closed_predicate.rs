//! Elle's closed-predicate workload (`elle.closed-predicate`): every history
//! of Elle's `test/elle/closed_predicate_test.clj`, checked with Elle's
//! default model (strict serializability), with Elle's expected verdict,
//! anomaly types, and (where Elle's test states them) witnesses, `:not` and
//! `:also-not`; then what isolde adds: the levels the weak and prefix
//! checkers decide are `unknown` with the reason, and histories outside the
//! workload's rules are refused with a line and the rule.

use isolde::anomaly::{Case, Workload};
use isolde::check::{check, CheckOptions, ModelStatus, Outcome, Validity, WorkloadChoice};
use isolde::history::History;
use isolde::ingest::{read_bytes, Format};
use isolde::reports::{edn, result_map};

fn history(text: &str) -> History {
    read_bytes("h.edn", text.as_bytes(), Format::Edn).expect("history parses")
}

fn run(h: &History) -> Outcome {
    check(h, &CheckOptions::default()).expect("runs")
}

fn types(o: &Outcome) -> Vec<&str> {
    o.anomaly_types.iter().map(String::as_str).collect()
}

fn set(names: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

fn sorted(s: &std::collections::BTreeSet<String>) -> Vec<String> {
    s.iter().cloned().collect()
}

/// The only case of `name`: its cycle's `:index`es (first repeated at the
/// end, as Elle prints `:cycle`) and its steps as Elle prints them.
fn cycle_of(h: &History, o: &Outcome, name: &str) -> (Vec<i64>, String) {
    let cases = &o.anomalies[name];
    assert_eq!(cases.len(), 1, "{name}: {cases:?}");
    let Case::Cycle(c) = &cases[0] else { panic!("{name} is not a cycle: {:?}", cases[0]) };
    let mut ops: Vec<i64> = c.ops.iter().map(|&op| h.op(op).index).collect();
    ops.push(ops[0]);
    let node = result_map::cycle(h, Workload::ClosedPredicate, c);
    let text = edn::to_string(h, &node);
    let steps = text.split(":steps ").nth(1).unwrap_or_default().split(", :type").next().unwrap_or_default();
    (ops, steps.to_string())
}

const G1C_PREDICATE_READ_SEEN: &str = "{:process 0, :type :invoke, :f :txn, :value [[:w :x 1] [:rp :true nil]]}
         {:process 0, :type :ok,     :f :txn, :value [[:w :x 1] [:rp :true {:y 2}]]}
         {:process 1, :type :invoke, :f :txn, :value [[:w :y 2] [:rp :true nil]]}
         {:process 1, :type :ok,     :f :txn, :value [[:w :y 2] [:rp :true {:x 1}]]}";

/// `:G1c`: T1 and T2 each predicate-read the other's write.
#[test]
fn g1c_predicate_read_seen() {
    let h = history(G1C_PREDICATE_READ_SEEN);
    let o = run(&h);
    assert_eq!(o.workload, Workload::ClosedPredicate);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G1c"]);
}

const G2_PREDICATE_READ_UNSEEN: &str = "{:process 0, :type :invoke, :f :txn, :value [[:w :x 1] [:rp :true nil]]}
         {:process 0, :type :ok,     :f :txn, :value [[:w :x 1] [:rp :true {}]]}
         {:process 1, :type :invoke, :f :txn, :value [[:w :y 2] [:rp :true nil]]}
         {:process 1, :type :ok,     :f :txn, :value [[:w :y 2] [:rp :true {}]]}";

/// Both read nothing: each version set holds the other key's unborn
/// version, which the other overwrote (rwp both ways): G2, and the strong
/// SI cycle Elle's search cannot name (the realtime edge shares its pair
/// with an rwp).
#[test]
fn g2_predicate_read_unseen() {
    let h = history(G2_PREDICATE_READ_UNSEEN);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G2", "strong-snapshot-isolation-cycle-exists"]);
}

const G1C_PREDICATE_READ_UNSEEN_UNIVERSE_DELETE: &str = "{:process 0, :type :invoke, :f :init, :value {:x 0, :y 0}}
         {:process 0, :type :ok,     :f :init, :value {:x 0, :y 0}}
         {:process 0, :type :invoke, :f :txn, :value [[:delete :x] [:rp :true nil]]}
         {:process 0, :type :ok,     :f :txn, :value [[:delete :x] [:rp :true {}]]}
         {:process 1, :type :invoke, :f :txn, :value [[:delete :y] [:rp :true nil]]}
         {:process 1, :type :ok,     :f :txn, :value [[:delete :y] [:rp :true {}]]}";

/// A universe of x and y; each deletes one and reads nothing, so each
/// selected the other's dead version (wrp both ways).
#[test]
fn g1c_predicate_read_unseen_universe_delete() {
    let h = history(G1C_PREDICATE_READ_UNSEEN_UNIVERSE_DELETE);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G1c"]);
}

const G1C_PREDICATE_READ_UNSEEN_UNIVERSE_WRITE: &str = "{:process 0, :type :invoke, :f :init, :value {:x 0, :y 0}}
         {:process 0, :type :ok,     :f :init, :value {:x 0, :y 0}}
         {:process 0, :type :invoke, :f :txn, :value [[:rp [:= 0] nil]    [:w :x 1]]}
         {:process 0, :type :ok,     :f :txn, :value [[:rp [:= 0] {:x 0}] [:w :x 1]]}
         {:process 1, :type :invoke, :f :txn, :value [[:rp [:= 0] nil]     [:w :y 1]]}
         {:process 1, :type :ok,     :f :txn, :value [[:rp [:= 0] {:y 0}]  [:w :y 1]]}";

/// Each reads everything equal to 0 and sees only its own key: the other
/// key must have been at 1, the other's write.
#[test]
fn g1c_predicate_read_unseen_universe_write() {
    let h = history(G1C_PREDICATE_READ_UNSEEN_UNIVERSE_WRITE);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G1c"]);
}

const G2_PREDICATE_READ_UNSEEN_UNIVERSE_WRITE: &str = "{:process 0, :type :invoke, :f :init, :value {:x 0, :y 0}}
         {:process 0, :type :ok,     :f :init, :value {:x 0, :y 0}}
         {:process 0, :type :invoke, :f :txn, :value [[:rp [:= 1] nil] [:w :x 1]]}
         {:process 0, :type :ok,     :f :txn, :value [[:rp [:= 1] {}]  [:w :x 1]]}
         {:process 1, :type :invoke, :f :txn, :value [[:rp [:= 1] nil] [:w :y 1]]}
         {:process 1, :type :ok,     :f :txn, :value [[:rp [:= 1] {}]  [:w :y 1]]}";

/// Each reads everything equal to 1 and sees nothing: both selected 0,
/// which the other overwrote with a match (rwp both ways).
#[test]
fn g2_predicate_read_unseen_universe_write() {
    let h = history(G2_PREDICATE_READ_UNSEEN_UNIVERSE_WRITE);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G2", "strong-snapshot-isolation-cycle-exists"]);
}

const WR_G1C_ITEM: &str = "{:process 0, :type :invoke, :f :init, :value {:x 0 :z 0}}
         {:process 0, :type :ok,     :f :init, :value {:x 0 :z 0}}
         {:process 0, :type :invoke, :f :txn, :value [[:r :z nil] [:delete :x]]}
         {:process 0, :type :ok,     :f :txn, :value [[:r :z 3]   [:delete :x]]}
         {:process 1, :type :invoke, :f :txn, :value [[:r :x nil] [:insert :y 2]]}
         {:process 1, :type :ok,     :f :txn, :value [[:r :x nil] [:insert :y 2]]}
         {:process 2, :type :invoke, :f :txn, :value [[:r :y nil] [:w :z 3]]}
         {:process 2, :type :ok,     :f :txn, :value [[:r :y 2]   [:w :z 3]]}";

/// A cycle of item write-read edges, one through a read of a deleted key.
#[test]
fn wr_g1c_item() {
    let h = history(WR_G1C_ITEM);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G1c"]);
    let (ops, steps) = cycle_of(&h, &o, "G1c");
    assert_eq!(ops, [5, 7, 3, 5]);
    assert_eq!(
        steps,
        "[{:type :wr, :key :y, :value 2, :a-mop-index 1, :b-mop-index 0} \
          {:type :wr, :key :z, :value 3, :a-mop-index 1, :b-mop-index 0} \
          {:type :wr, :key :x, :value :elle/dead, :a-mop-index 1, :b-mop-index 0}]"
    );
    assert_eq!(sorted(&o.not), set(&["read-committed"]));
    assert_eq!(
        sorted(&o.also_not),
        set(&[
            "consistent-view",
            "cursor-stability",
            "forward-consistent-view",
            "monotonic-atomic-view",
            "monotonic-snapshot-read",
            "monotonic-view",
            "repeatable-read",
            "serializable",
            "snapshot-isolation",
            "strong-read-committed",
            "strong-snapshot-isolation",
            "strong-serializable",
            "strong-session-read-committed",
            "strong-session-serializable",
            "strong-session-snapshot-isolation",
            "update-serializable",
            "update-atomic",
            "causal-cerone",
            "parallel-snapshot-isolation",
            "prefix",
            "read-atomic",
        ])
    );
}

const WW_WR_RW_ITEM: &str = "{:process 0, :type :invoke, :f :init, :value {:x 0 :z 0}}
         {:process 0, :type :ok,     :f :init, :value {:x 0 :z 0}}
         {:process 0, :type :invoke, :f :txn, :value [[:delete :x] [:insert :y 1]]}
         {:process 0, :type :ok,     :f :txn, :value [[:delete :x] [:insert :y 1]]}
         {:process 1, :type :invoke, :f :txn, :value [[:r :y nil] [:r :z nil]]}
         {:process 1, :type :ok,     :f :txn, :value [[:r :y 1]   [:r :z nil]]}";

/// ww, wr and an item rw into the :init (a read of z before the universe).
#[test]
fn ww_wr_rw_item() {
    let h = history(WW_WR_RW_ITEM);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G-single-item"]);
    let (ops, steps) = cycle_of(&h, &o, "G-single-item");
    assert_eq!(ops, [5, 1, 3, 5]);
    assert_eq!(
        steps,
        "[{:type :rw, :key :z, :value :elle/unborn, :value' 0, :a-mop-index 1, :b-mop-index 0} \
          {:type :ww, :key :x, :value 0, :value' :elle/dead, :a-mop-index 0, :b-mop-index 0} \
          {:type :wr, :key :y, :value 1, :a-mop-index 1, :b-mop-index 0}]"
    );
    assert_eq!(sorted(&o.not), set(&["consistent-view", "repeatable-read"]));
    let also = [
        "forward-consistent-view",
        "serializable",
        "snapshot-isolation",
        "strong-serializable",
        "strong-session-serializable",
        "strong-session-snapshot-isolation",
        "strong-snapshot-isolation",
        "update-serializable",
    ];
    assert_eq!(sorted(&o.also_not), set(&also));
}

const FAILURE_TO_OBSERVE: &str = "{:index 0, :type :invoke, :process 0, :f :init, :value {5 3}}
         {:index 5, :type :ok, :process 0, :f :init, :value {5 3}}
         {:index 8, :type :invoke, :process 1, :f :txn, :value [[:rp [:mod 2 1] nil] [:rp [:= 3] nil]]}
         {:index 52, :type :ok, :process 1, :f :txn, :value [[:rp [:mod 2 1] {}] [:rp [:= 3] {}]]}";

/// A predicate read that matches key 5's only version and does not return
/// it: `:predicate-read-miss`, once per predicate read.
#[test]
fn failure_to_observe() {
    let h = history(FAILURE_TO_OBSERVE);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["predicate-read-miss"]);
    let cases: Vec<String> = o.anomalies["predicate-read-miss"]
        .iter()
        .map(|c| edn::to_string(&h, &result_map::case(&h, Workload::ClosedPredicate, c)))
        .collect();
    let op = "{:index 52, :type :ok, :process 1, :f :txn, :value [[:rp [:mod 2 1] {}] [:rp [:= 3] {}]]}";
    assert_eq!(
        cases,
        [
            format!("{{:op {op}, :mop [:rp [:mod 2 1] {{}}], :key 5, :versions [3]}}"),
            format!("{{:op {op}, :mop [:rp [:= 3] {{}}], :key 5, :versions [3]}}"),
        ]
    );
    assert_eq!(sorted(&o.not), set(&["serializable"]));
    assert_eq!(sorted(&o.also_not), set(&["strong-serializable", "strong-session-serializable"]));
}

const INIT_G_SINGLE_PRED: &str = "{:index 1, :type :invoke, :process 4, :f :init, :value {7 1}}
         {:index 4, :type :ok, :process 4, :f :init, :value {7 1}}
         {:index 72, :type :invoke, :process 7, :f :txn, :value [[:rp [:mod 2 0] nil] [:r 7 nil]]}
         {:index 82, :type :ok, :process 7, :f :txn, :value [[:rp [:mod 2 0] {}] [:r 7 nil]]}";

/// The predicate read selected the :init's version of 7 by elimination
/// (wrp), the item read saw 7 unborn (rw): G-single-item, since the
/// predicate step is a wrp, not an rwp.
#[test]
fn init_g_single_pred() {
    let h = history(INIT_G_SINGLE_PRED);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G-single-item"]);
    let (ops, steps) = cycle_of(&h, &o, "G-single-item");
    assert_eq!(ops, [82, 4, 82]);
    assert_eq!(
        steps,
        "[{:type :rw, :key 7, :value :elle/unborn, :value' 1, :a-mop-index 1, :b-mop-index 0} \
          {:type :wrp, :key 7, :value 1, :predicate-read [:rp [:mod 2 0] {}], :a-mop-index 0, :b-mop-index 0}]"
    );
    assert_eq!(sorted(&o.not), set(&["consistent-view", "repeatable-read"]));
}

const G1C_MULTI_KEY_DELETE: &str = "{:type :invoke, :process 2, :f :init, :value {26 0, 31 0, 38 0}}
         {:type :ok, :process 2, :f :init, :value {26 0, 38 0}}
         {:type :invoke, :process 2, :f :txn, :value [[:delete 38] [:w 31 8] [:delete 26] [:w 40 9]]}
         {:type :ok, :process 2, :f :txn, :value [[:delete 38 nil] [:w 31 8] [:delete 26 nil] [:w 40 9]]}
         {:type :invoke, :process 3, :f :txn, :value [[:rp :true nil]]}
         {:type :ok, :process 3, :f :txn, :value [[:rp :true {31 0, 38 0}]]}";

/// T2 deletes 38 (which T1's predicate read returned: rwp) and 26 (which
/// it did not: it selected the dead version, wrp): G-single, a predicate
/// anomaly.
#[test]
fn g1c_multi_key_delete() {
    let h = history(G1C_MULTI_KEY_DELETE);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(types(&o), ["G-single"]);
    let (ops, steps) = cycle_of(&h, &o, "G-single");
    assert_eq!(ops, [5, 3, 5]);
    assert_eq!(
        steps,
        "[{:type :rwp, :key 38, :value 0, :value' :elle/dead, :predicate? true, \
          :predicate-read [:rp :true {31 0, 38 0}], :a-mop-index 0, :b-mop-index 0} \
          {:type :wrp, :key 26, :value :elle/dead, :predicate-read [:rp :true {31 0, 38 0}], \
          :a-mop-index 2, :b-mop-index 0}]"
    );
    assert_eq!(sorted(&o.not), set(&["consistent-view"]));
}

/// The cycle's explanation, in Elle's closed-predicate words.
#[test]
fn predicate_steps_explain_in_elles_words() {
    let h = history(G1C_MULTI_KEY_DELETE);
    let o = run(&h);
    let Case::Cycle(c) = &o.anomalies["G-single"][0] else { panic!("not a cycle") };
    let text = isolde::reports::text::explain_cycle(&h, Workload::ClosedPredicate, c);
    assert!(
        text.contains(
            "T1 < T2, because T1 performed a predicate read [:rp :true {31 0, 38 0}] of key 38 and selected \
             version 0, which was overwritten by T2's write of :elle/dead, which also changed whether the \
             predicate would have matched. Note that key 38's version order was [0 :elle/dead]."
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "However, T2 < T1, because T2 set key 26 to :elle/dead, which was in the version set of predicate \
             read [:rp :true {31 0, 38 0}]. Note that the version order of key 26 was [0 :elle/dead]: a \
             contradiction!"
        ),
        "{text}"
    );
    assert!(text.contains("T1 = {:index 5, :type :ok, :process 3, :f :txn, :value [[:rp :true {31 0, 38 0}]]}"));
}

/// A history with no anomaly: T2 overwrites a version T1's predicate read
/// selected, without changing whether it matches (no rwp).
const VALID: &str = "{:index 0, :type :invoke, :process 0, :f :init, :value {:x 0}}
     {:index 1, :type :ok, :process 0, :f :init, :value {:x 0}}
     {:index 2, :type :invoke, :process 1, :f :txn, :value [[:rp :true nil]]}
     {:index 3, :type :ok, :process 1, :f :txn, :value [[:rp :true {:x 0}]]}
     {:index 4, :type :invoke, :process 2, :f :txn, :value [[:w :x 1] [:r :x nil]]}
     {:index 5, :type :ok, :process 2, :f :txn, :value [[:w :x 1] [:r :x 1]]}";

#[test]
fn a_valid_history_is_valid_where_elle_decides() {
    let h = history(VALID);
    let o = run(&h);
    assert_eq!(o.valid, Validity::Valid, "{:?}", o.anomalies);
    let models = ["serializable", "snapshot-isolation", "repeatable-read", "read-committed"];
    let o = check(&h, &CheckOptions { models: Some(models.map(String::from).to_vec()), ..CheckOptions::default() })
        .expect("runs");
    assert_eq!(o.valid, Validity::Valid, "{:?}", o.anomalies);
}

/// The weak and prefix checkers have no predicate reads: asked for, their
/// levels are `unknown` with the reason, never a silent `valid`.
#[test]
fn levels_only_other_checkers_decide_are_unknown() {
    let h = history(VALID);
    for model in ["read-atomic", "causal-cerone", "read-committed-be", "prefix"] {
        let o = check(&h, &CheckOptions { models: Some(vec![model.into()]), ..CheckOptions::default() }).expect("runs");
        assert_eq!(o.valid, Validity::Unknown, "{model}");
        let unknown = &o.anomalies["exact-check-unknown"];
        assert!(
            unknown.iter().any(|c| matches!(c, Case::ExactCheckUnknown { model: m, detail }
                if m == model && detail.contains("no predicate reads"))),
            "{model}: {unknown:?}"
        );
        let row = o.levels.iter().find(|r| r.level.model == model).expect("a row");
        assert_eq!(row.status, ModelStatus::Unknown, "{model}");
        assert!(row.reason.contains("no predicate reads"), "{model}: {}", row.reason);
    }
    // With the whole ladder, serializability (Elle's, every version known)
    // holds and answers the weak levels it implies.
    let o = check(&h, &CheckOptions { ladder: true, ..CheckOptions::default() }).expect("runs");
    assert_eq!(o.valid, Validity::Valid);
    let row = |m: &str| o.levels.iter().find(|r| r.level.model == m).expect("a row").status.clone();
    assert_eq!(row("serializable"), ModelStatus::Holds);
    assert_eq!(row("read-atomic"), ModelStatus::Holds);
}

/// A failing history leaves the weak levels violated, not unknown.
#[test]
fn weak_levels_an_anomaly_rules_out_are_violated() {
    let h = history(
        "{:process 0, :type :invoke, :f :txn, :value [[:w :x 1] [:rp :true nil]]}
         {:process 0, :type :ok,     :f :txn, :value [[:w :x 1] [:rp :true {:y 2}]]}
         {:process 1, :type :invoke, :f :txn, :value [[:w :y 2] [:rp :true nil]]}
         {:process 1, :type :ok,     :f :txn, :value [[:w :y 2] [:rp :true {:x 1}]]}",
    );
    let o = check(&h, &CheckOptions { ladder: true, ..CheckOptions::default() }).expect("runs");
    let row = |m: &str| o.levels.iter().find(|r| r.level.model == m).expect("a row").status.clone();
    assert_eq!(row("read-committed"), ModelStatus::Violated("G1c".into()));
    assert!(matches!(row("read-atomic"), ModelStatus::Violated(_)), "{:?}", row("read-atomic"));
}

fn refusal(text: &str, workload: WorkloadChoice) -> String {
    let h = history(text);
    let o = check(&h, &CheckOptions { workload, ..CheckOptions::default() }).expect("runs");
    assert_eq!(o.valid, Validity::Unknown);
    o.error.expect("an error")
}

/// Histories outside the workload's rules are refused with the line and
/// the rule, never guessed at.
#[test]
fn histories_outside_the_rules_are_refused() {
    let two_writers = "{:process 0, :type :ok, :f :init, :value {:x 0}}
         {:process 0, :type :ok, :f :txn, :value [[:w :x 1]]}
         {:process 1, :type :ok, :f :txn, :value [[:w :x 2] [:rp :true {:x 2}]]}";
    let e = refusal(two_writers, WorkloadChoice::Auto);
    assert!(e.contains("line 3") && e.contains("key :x is written by two transactions (lines 2 and 3)"), "{e}");
    let late_init = "{:process 0, :type :ok, :f :txn, :value [[:rp :true {}]]}
         {:process 1, :type :ok, :f :init, :value {:x 0}}";
    let e = refusal(late_init, WorkloadChoice::Auto);
    assert!(e.contains("line 2") && e.contains("an :init completing after a transaction"), "{e}");
    let bad_pred = "{:process 0, :type :ok, :f :txn, :value [[:rp [:< 3] {}]]}";
    let e = refusal(bad_pred, WorkloadChoice::Auto);
    assert!(e.contains("line 1") && e.contains("[:< 3] is not a predicate"), "{e}");
    let not_int = "{:process 0, :type :ok, :f :init, :value {:x \"a\"}}
         {:process 1, :type :ok, :f :txn, :value [[:rp [:mod 2 0] {}]]}";
    let e = refusal(not_int, WorkloadChoice::Auto);
    assert!(e.contains("line 2") && e.contains("not an integer"), "{e}");
    let e = refusal(bad_pred, WorkloadChoice::Fixed(Workload::RwRegister));
    assert!(e.contains("rw-register") && e.contains(":rp micro-op at line 1"), "{e}");
    let e = refusal("{:process 0, :type :ok, :f :init, :value {:x 0}}", WorkloadChoice::Fixed(Workload::ListAppend));
    assert!(e.contains("list-append") && e.contains(":init op with a map :value at line 1"), "{e}");
}

/// Malformed predicate reads are ingest errors with the position.
#[test]
fn malformed_predicate_reads_name_the_position() {
    let bad = |text: &str| read_bytes("h.edn", text.as_bytes(), Format::Edn).expect_err("refused").to_string();
    let e = bad("{:process 0, :type :ok, :f :txn, :value [[:rp :true [1 2]]]}");
    assert!(e.contains("h.edn:1:") && e.contains("a predicate read's result: nil or a map"), "{e}");
    let e = bad("{:process 0, :type :ok, :f :txn, :value [[:rp :true {:x}]]}");
    assert!(e.contains("a value for each key of the map"), "{e}");
    let e = bad("{:process 0, :type :ok, :f :txn, :value [[:rp]]}");
    assert!(e.contains("a predicate (:true, [:= v] or [:mod m r]) after :rp"), "{e}");
}

/// Every history of Elle's test, as above (the valid one too).
const ELLE_CASES: [&str; 11] = [
    G1C_PREDICATE_READ_SEEN,
    G2_PREDICATE_READ_UNSEEN,
    G1C_PREDICATE_READ_UNSEEN_UNIVERSE_DELETE,
    G1C_PREDICATE_READ_UNSEEN_UNIVERSE_WRITE,
    G2_PREDICATE_READ_UNSEEN_UNIVERSE_WRITE,
    WR_G1C_ITEM,
    WW_WR_RW_ITEM,
    FAILURE_TO_OBSERVE,
    INIT_G_SINGLE_PRED,
    G1C_MULTI_KEY_DELETE,
    VALID,
];

/// The EDN text of a check's result map with the keyword keys `:x`, `:y`,
/// `:z` spelled as strings: JSON has no keywords, so a history converted to
/// JSON names those keys `"x"`, `"y"`, `"z"` (integer keys stay integers).
fn keys_as_strings(text: &str) -> String {
    let mut out = text.to_string();
    for k in ["x", "y", "z"] {
        for end in [" ", ",", "}", "]"] {
            out = out.replace(&format!(":{k}{end}"), &format!("\"{k}\"{end}"));
        }
    }
    out
}

/// Each history converted to elle-cli JSON (as `isolde convert --to json`
/// writes it) reads back to the same verdict, anomalies, levels and result
/// map, at the default model and with the whole ladder.
#[test]
fn json_round_trip_gives_the_same_result() {
    for (i, text) in ELLE_CASES.iter().enumerate() {
        let json = isolde::gen::json::edn_to_json(text).unwrap_or_else(|e| panic!("case {i}: {e}"));
        let e = history(text);
        let j = read_bytes("h.json", json.as_bytes(), Format::Json).unwrap_or_else(|e| panic!("case {i}: {e}\n{json}"));
        for opts in [CheckOptions::default(), CheckOptions { ladder: true, ..CheckOptions::default() }] {
            let (oe, oj) = (check(&e, &opts).expect("runs"), check(&j, &opts).expect("runs"));
            assert_eq!(oj.workload, Workload::ClosedPredicate, "case {i}");
            assert_eq!((oe.valid, &oe.anomaly_types), (oj.valid, &oj.anomaly_types), "case {i}");
            assert_eq!((&oe.not, &oe.also_not), (&oj.not, &oj.also_not), "case {i}");
            let rows =
                |o: &Outcome| o.levels.iter().map(|r| format!("{} {:?}", r.level.model, r.status)).collect::<Vec<_>>();
            assert_eq!(rows(&oe), rows(&oj), "case {i}");
            let (me, mj) = (result_map::result_map(&e, &oe), result_map::result_map(&j, &oj));
            assert_eq!(keys_as_strings(&edn::to_string(&e, &me)), edn::to_string(&j, &mj), "case {i}");
        }
    }
}
