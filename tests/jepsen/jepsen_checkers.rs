//! Jepsen's checkers (bank, counter, set, set-full, long-fork, comments,
//! sequential): elle-cli's own histories give the verdicts elle-cli's
//! test.sh states, through `isolde elle-cli` and `isolde analyze`; small
//! histories pin each checker's semantics; histories of another model are
//! errors naming the op.

use crate::support;

use isolde::cli::jepsen::{check_ops, JepsenOptions};
use isolde::ingest::Format;
use isolde::jepsen::detect::{detect, Workload};
use isolde::jepsen::{JepsenError, Ops};
use isolde::outcome::Validity;
use std::time::Duration;
use support::cli::{isolde, temp_dir, Run};

const LIMIT: Duration = Duration::from_secs(120);

fn data(rel: &str) -> String {
    format!("{}/tests/data/jepsen/elle-cli/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// elle-cli's test.sh lines for these models: (model, extra options, file,
/// expected exit status).
const TEST_SH: &[(&str, &[&str], &str, i32)] = &[
    ("counter", &[], "jepsen/counter.edn", 0),
    ("counter", &[], "jepsen/counter.json", 0),
    ("set-full", &[], "jepsen/set_full.edn", 1),
    ("set-full", &[], "jepsen/set_full.json", 1),
    ("set", &[], "jepsen/set.edn", 0),
    ("bank", &[], "jepsen/bank.edn", 0),
    ("bank", &[], "jepsen/bank.json", 0),
    ("bank", &[], "jepsen/bank-tidb.edn", 1),
    ("bank", &[], "jepsen/bank-neg.edn", 0),
    ("bank", &[], "jepsen/bank-negative-balances.json", 1),
    ("long-fork", &["--group-size", "3"], "jepsen/long-fork.edn", 1),
];

#[test]
fn elle_cli_test_sh_verdicts_through_elle_cli() {
    for (model, extra, file, code) in TEST_SH {
        let f = data(file);
        let args = [&["elle-cli", "--model", model], *extra, &[f.as_str()]].concat();
        let r = isolde(&args, None, LIMIT);
        let verdict = if *code == 0 { "true" } else { "false" };
        assert_eq!(r.code, *code, "{model} {file}: {r:?}");
        assert_eq!(r.stdout, format!("{f} \t {verdict}\n"), "{model} {file}: {r:?}");
    }
}

#[test]
fn elle_cli_test_sh_verdicts_through_analyze() {
    for (model, extra, file, code) in TEST_SH {
        let f = data(file);
        let extra: Vec<&str> = extra.iter().map(|x| if *x == "--group-size" { "-g" } else { x }).collect();
        let args = [&["analyze", "--workload", model, "-f", "json"][..], &extra, &[f.as_str()]].concat();
        let r = isolde(&args, None, LIMIT);
        assert_eq!(r.code, *code, "{model} {file}: {r:?}");
        let v = r.json();
        assert_eq!(v["valid?"], serde_json::json!(*code == 0), "{model} {file}: {v}");
        assert_eq!(v["workload"], serde_json::json!(model), "{model} {file}: {v}");
    }
}

/// Without --workload, the Jepsen workload is detected from the ops
/// (counter.edn has adds and no read, which a set history could have too;
/// set_full.edn has a single read, so it is detected as `set`, which the
/// detection test pins).
#[test]
fn analyze_detects_jepsen_workloads() {
    for (model, _, file, code) in TEST_SH.iter().filter(|t| !matches!(t.0, "counter" | "set-full")) {
        let f = data(file);
        let r = isolde(&["analyze", "-f", "edn", &f], None, LIMIT);
        assert_eq!(r.code, *code, "{model} {file}: {r:?}");
        assert!(r.stdout.contains(&format!(":workload :{model}")), "{model} {file}: {}", r.stdout);
    }
    let r = isolde(&["analyze", &data("jepsen/counter.edn")], None, LIMIT);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--workload counter or --workload set"), "{}", r.stderr);
    let r = isolde(&["analyze", "-f", "table", &data("jepsen/bank-tidb.edn")], None, LIMIT);
    assert!(r.stdout.contains("bank history") && r.stdout.contains("verdict: INVALID"), "{r:?}");
    assert!(r.stdout.contains(":wrong-total"), "{}", r.stdout);
}

fn ops(text: &str) -> Ops {
    Ops::read_bytes("t.edn", text.as_bytes(), Format::Edn).expect("reads")
}

fn check(text: &str, w: Workload, o: &JepsenOptions) -> isolde::jepsen::CheckResult {
    check_ops(&ops(text), w, o).unwrap_or_else(|e| panic!("{e}"))
}

fn get(r: &isolde::jepsen::CheckResult, key: &str) -> String {
    r.get(key).map(isolde::jepsen::result::edn).unwrap_or_else(|| panic!("no {key} in {}", r.to_edn()))
}

#[test]
fn bank_errors_in_jepsens_order() {
    let o = JepsenOptions::default();
    let base = "{:type :invoke, :f :read, :process 0}\n{:type :ok, :f :read, :value {0 10, 1 10}, :process 0}\n";
    let valid = check(base, Workload::Bank, &o);
    assert_eq!(valid.valid, Validity::Valid, "{}", valid.to_edn());
    for (read, kind) in [
        ("{0 15, 1 10}", "wrong-total"),
        ("{0 25, 1 -5}", "negative-value"),
        ("{0 10, 1 10, 2 0}", "unexpected-key"),
        ("{0 20, 1 nil}", "nil-balance"),
    ] {
        let h = format!(
            "{base}{{:type :invoke, :f :read, :process 1}}\n{{:type :ok, :f :read, :value {read}, :process 1}}\n"
        );
        let r = check(&h, Workload::Bank, &o);
        assert_eq!(r.valid, Validity::Invalid, "{read}");
        assert!(get(&r, "errors").starts_with(&format!("{{:{kind} {{:count 1")), "{read}: {}", r.to_edn());
        assert_eq!(get(&r, "error-count"), "1");
    }
    // -n allows negative balances; -o fixes the total.
    let h = format!("{base}{{:type :ok, :f :read, :value {{0 25, 1 -5}}, :process 1}}\n");
    let mut o = JepsenOptions::default();
    o.bank.negative_balances = true;
    assert_eq!(check(&h, Workload::Bank, &o).valid, Validity::Valid);
    o.bank.total_amount = Some(30);
    let r = check(&h, Workload::Bank, &o);
    assert_eq!((r.valid, get(&r, "error-count")), (Validity::Invalid, "2".into()), "{}", r.to_edn());
}

#[test]
fn counter_bounds_count_info_adds_as_possible() {
    let o = JepsenOptions::default();
    let h = "{:type :invoke, :f :add, :value 1, :process 0}\n{:type :ok, :f :add, :value 1, :process 0}\n\
             {:type :invoke, :f :add, :value 5, :process 1}\n{:type :info, :f :add, :value 5, :process 1}\n\
             {:type :invoke, :f :add, :value 7, :process 2}\n{:type :fail, :f :add, :value 7, :process 2}\n\
             {:type :invoke, :f :read, :process 3}\n{:type :ok, :f :read, :value READ, :process 3}\n";
    for (read, valid) in [(1, Validity::Valid), (6, Validity::Valid), (0, Validity::Invalid), (8, Validity::Invalid)] {
        let r = check(&h.replace("READ", &read.to_string()), Workload::Counter, &o);
        assert_eq!(r.valid, valid, "read {read}: {}", r.to_edn());
        assert_eq!(get(&r, "reads"), format!("[[1 {read} 6]]"));
    }
}

#[test]
fn set_lost_unexpected_recovered() {
    let o = JepsenOptions::default();
    let h = "{:type :invoke, :f :add, :value 1, :process 0}\n{:type :ok, :f :add, :value 1, :process 0}\n\
             {:type :invoke, :f :add, :value 2, :process 0}\n{:type :ok, :f :add, :value 2, :process 0}\n\
             {:type :invoke, :f :add, :value 3, :process 1}\n{:type :info, :f :add, :value 3, :process 1}\n\
             {:type :invoke, :f :read, :process 2}\n{:type :ok, :f :read, :value READ, :process 2}\n";
    let r = check(&h.replace("READ", "#{1 2 3}"), Workload::Set, &o);
    assert_eq!((r.valid, get(&r, "recovered")), (Validity::Valid, "\"#{3}\"".into()), "{}", r.to_edn());
    let r = check(&h.replace("READ", "[1 9]"), Workload::Set, &o);
    assert_eq!(r.valid, Validity::Invalid);
    assert_eq!((get(&r, "lost"), get(&r, "unexpected")), ("\"#{2}\"".into(), "\"#{9}\"".into()));
    let r = check(&h.replace("{:type :ok, :f :read, :value READ, :process 2}\n", ""), Workload::Set, &o);
    assert_eq!(r.valid, Validity::Unknown, "never read: {}", r.to_edn());
}

/// set-full: a lost element, a stale one (invalid only with
/// --linearizable), duplicates and elements never added.
#[test]
fn set_full_timelines() {
    let add = |e: i32, p: i32, t: i64| {
        format!(
            "{{:type :invoke, :f :add, :value {e}, :process {p}, :time {t}}}\n{{:type :ok, :f :add, :value {e}, :process {p}, :time {}}}\n",
            t + 1
        )
    };
    let read = |v: &str, p: i32, t: i64| {
        format!(
            "{{:type :invoke, :f :read, :process {p}, :time {t}}}\n{{:type :ok, :f :read, :value {v}, :process {p}, :time {}}}\n",
            t + 1
        )
    };
    let mut o = JepsenOptions::default();
    // 1 and 2 added; 2 missing from a read 5 ms later, then present: stale.
    let h = [add(1, 0, 0), add(2, 0, 10), read("[1]", 1, 5_000_010), read("[1 2]", 1, 9_000_000)].concat();
    let r = check(&h, Workload::SetFull, &o);
    assert_eq!((r.valid, get(&r, "stale")), (Validity::Valid, "(2)".into()), "{}", r.to_edn());
    assert_eq!(get(&r, "stable-count"), "2");
    o.set_full.linearizable = true;
    assert_eq!(check(&h, Workload::SetFull, &o).valid, Validity::Invalid);
    o.set_full.linearizable = false;
    // 2 seen, then gone for good: lost.
    let h = [add(1, 0, 0), add(2, 0, 10), read("[1 2]", 1, 100), read("[1]", 1, 200)].concat();
    let r = check(&h, Workload::SetFull, &o);
    assert_eq!((r.valid, get(&r, "lost")), (Validity::Invalid, "(2)".into()), "{}", r.to_edn());
    // A duplicate, an element never added.
    for v in ["[1 1 2]", "[1 2 7]"] {
        let h = [add(1, 0, 0), add(2, 0, 10), read(v, 1, 100)].concat();
        let r = check(&h, Workload::SetFull, &o);
        assert_eq!(r.valid, Validity::Invalid, "{v}: {}", r.to_edn());
    }
    // Nothing read after the adds: unknown.
    let r = check(&add(1, 0, 0), Workload::SetFull, &o);
    assert_eq!(r.valid, Validity::Unknown);
}

#[test]
fn long_fork_and_its_unknowns() {
    let o = JepsenOptions { group_size: 2, ..Default::default() };
    let w = |k: i32| {
        format!("{{:type :invoke, :f :write, :value [[:w {k} 1]], :process 9}}\n{{:type :ok, :f :write, :value [[:w {k} 1]], :process 9}}\n")
    };
    let r = |a: &str, b: &str| format!("{{:type :ok, :f :read, :value [[:r 0 {a}] [:r 1 {b}]], :process 3}}\n");
    let chain = [w(0), w(1), r("nil", "nil"), r("1", "nil"), r("1", "1")].concat();
    assert_eq!(check(&chain, Workload::LongFork, &o).valid, Validity::Valid);
    let fork = [w(0), w(1), r("1", "nil"), r("nil", "1")].concat();
    let res = check(&fork, Workload::LongFork, &o);
    assert_eq!(res.valid, Validity::Invalid);
    assert!(get(&res, "forks").starts_with("[[{:type :ok"), "{}", res.to_edn());
    let twice = [w(0), w(0), r("1", "nil")].concat();
    let res = check(&twice, Workload::LongFork, &o);
    assert_eq!((res.valid, get(&res, "error")), (Validity::Unknown, "[:multiple-writes 0]".into()));
    let o3 = JepsenOptions { group_size: 3, ..Default::default() };
    assert_eq!(check(&chain, Workload::LongFork, &o3).valid, Validity::Unknown);
}

#[test]
fn comments_and_sequential() {
    let o = JepsenOptions::default();
    let r = check_ops(
        &Ops::read(std::path::Path::new(&data("custom/comments.edn")), Format::Auto).expect("reads"),
        Workload::Comments,
        &o,
    )
    .expect("checks");
    assert_eq!(r.valid, Validity::Invalid, "{}", r.to_edn());
    assert!(get(&r, "errors").contains(":missing #{425}"), "{}", r.to_edn());
    let ok = "{:type :invoke, :f :write, :value 1, :process 0}\n{:type :ok, :f :write, :value 1, :process 0}\n\
              {:type :invoke, :f :write, :value 2, :process 0}\n{:type :ok, :f :write, :value 2, :process 0}\n\
              {:type :ok, :f :read, :value #{1 2}, :process 1}\n";
    assert_eq!(check(ok, Workload::Comments, &o).valid, Validity::Valid);
    let seq = |v: &str| format!("{{:type :ok, :f :read, :value [\"k\" {v}], :process 0}}\n");
    assert_eq!(check(&seq("[nil 2 1]"), Workload::Sequential, &o).valid, Validity::Valid);
    let r = check(&seq("[2 nil 1]"), Workload::Sequential, &o);
    assert_eq!((r.valid, get(&r, "bad-count")), (Validity::Invalid, "1".into()));
}

#[test]
fn detection_from_f_values() {
    for (file, w) in [
        ("jepsen/bank.edn", Workload::Bank),
        ("jepsen/bank-negative-balances.json", Workload::Bank),
        ("jepsen/set.edn", Workload::Set),
        // One :ok read: set (set-full needs --workload).
        ("jepsen/set_full.edn", Workload::Set),
        ("jepsen/long-fork.edn", Workload::LongFork),
        ("knossos/cas-register/bad/cas-failure.edn", Workload::CasRegister),
        ("knossos/mutex/bad/etcd.json", Workload::Mutex),
    ] {
        let o = Ops::read(std::path::Path::new(&data(file)), Format::Auto).expect("reads");
        assert_eq!(detect(&o), Ok(w), "{file}");
    }
}

/// Ops of another model are an error naming the op, its line and what the
/// model expects: exit 2 in analyze, elle-cli's exit 1.
#[test]
fn wrong_model_is_an_error_naming_the_op() {
    let f = data("jepsen/set.edn");
    for model in ["bank", "counter", "long-fork", "comments"] {
        let r = isolde(&["analyze", "--workload", model, &f], None, LIMIT);
        assert_eq!(r.code, 2, "{model}: {r:?}");
        assert!(r.stderr.contains("set.edn:") && r.stderr.contains("wrong model selected?"), "{model}: {r:?}");
        assert!(r.stderr.contains("looks like a \"set\" workload"), "{model}: {}", r.stderr);
        let r = isolde(&["elle-cli", "-m", model, &f], None, LIMIT);
        assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{model}: {r:?}");
    }
    let e = check_ops(&ops("{:type :ok, :f :read, :value 3, :process 0}\n"), Workload::Bank, &JepsenOptions::default());
    assert!(matches!(e, Err(JepsenError::Model { line: 1, model: "bank", .. })), "{e:?}");
}

#[test]
fn malformed_input_is_an_error_with_its_line() {
    let dir = temp_dir("jepsen-bad");
    for (text, want) in [
        (
            "{:type :ok, :f :read, :value {0 1}}\n{:type :ok, :f :read, :value {0 1}\n",
            "to close the op map opened at 2:1",
        ),
        ("{:type :ok, :f :read}\n[1 2]\n", "t.edn:2:1: expected an op map"),
        ("{:type :maybe, :f :read}\n", "t.edn:1: expected :type"),
    ] {
        let f = dir.join("t.edn");
        std::fs::write(&f, text).expect("write");
        let r: Run = isolde(&["analyze", "--workload", "bank", &f.to_string_lossy()], None, LIMIT);
        assert_eq!(r.code, 2, "{text}: {r:?}");
        assert!(r.stderr.contains(want), "{text}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}
