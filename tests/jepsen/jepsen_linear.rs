//! Linearizability (Knossos's register, cas-register and mutex; Porcupine's
//! kv): elle-cli's Knossos histories and Porcupine's test data give their
//! suites' verdicts; `:info` ops may take effect or not; a witness names
//! the op that cannot be placed; a timeout is unknown, never valid.

use crate::support;

use isolde::cli::jepsen::{check_ops, JepsenOptions};
use isolde::ingest::Format;
use isolde::jepsen::detect::Workload;
use isolde::jepsen::Ops;
use isolde::linear::{check_prepared, porcupine, LinearOptions, Model};
use isolde::outcome::Validity;
use std::path::Path;
use std::time::Duration;
use support::cli::{isolde, temp_dir};

const LIMIT: Duration = Duration::from_secs(120);

fn data(rel: &str) -> String {
    format!("{}/tests/data/jepsen/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// elle-cli's test.sh for Knossos's models (hazelcast.edn, absent from
/// elle-cli's repository snapshot, is left out).
const TEST_SH: &[(&str, &str, i32)] = &[
    ("cas-register", "knossos/cas-register/bad/bad-analysis.edn", 1),
    ("cas-register", "knossos/cas-register/bad/cas-failure.edn", 1),
    ("cas-register", "knossos/cas-register/bad/mongodb-v0-ack-rollback-6.edn", 1),
    ("cas-register", "knossos/cas-register/bad/rethink-fail.edn", 1),
    ("cas-register", "knossos/cas-register/bad/rethink-fail-minimal.edn", 1),
    ("cas-register", "knossos/cas-register/bad/rethink-fail-smaller.edn", 1),
    ("cas-register", "knossos/cas-register/good/memstress3-9.edn", 0),
    ("cas-register", "knossos/cas-register/good/memstress3-9.json", 0),
    ("mutex", "knossos/mutex/bad/etcd.edn", 1),
    ("mutex", "knossos/mutex/bad/etcd.json", 1),
];

#[test]
fn knossos_histories_through_elle_cli_and_analyze() {
    for (model, file, code) in TEST_SH {
        let f = data(&format!("elle-cli/{file}"));
        let r = isolde(&["elle-cli", "-m", model, &f], None, LIMIT);
        let verdict = if *code == 0 { "true" } else { "false" };
        assert_eq!((r.code, r.stdout.clone()), (*code, format!("{f} \t {verdict}\n")), "{file}: {r:?}");
        // analyze: given the workload, and detected from :f (a
        // cas-register history without a :cas is a register's).
        for args in [&["analyze", "--workload", model, "-f", "json", &f][..], &["analyze", "-f", "json", &f]] {
            let r = isolde(args, None, LIMIT);
            assert_eq!(r.code, *code, "{file} {args:?}: {r:?}");
            let v = r.json();
            assert_eq!(v["valid?"], serde_json::json!(*code == 0), "{file}: {v}");
            let w = v["workload"].as_str().unwrap_or_default();
            assert!(w == *model || (*model == "cas-register" && w == "register"), "{file}: {v}");
        }
    }
}

/// porcupine_test.go's verdicts on its etcd logs, read by the etcd-log
/// reader (102 logs; etcd_095.log is empty and has no test).
#[test]
fn porcupine_etcd_logs_give_porcupines_verdicts() {
    let verdicts = std::fs::read_to_string(data("porcupine/etcd_verdicts.txt")).expect("verdicts");
    let mut checked = 0;
    for line in verdicts.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (n, v) = line.split_once(',').expect("n, verdict");
        let name = format!("porcupine/jepsen/etcd_{:03}.log", n.trim().parse::<u32>().expect("n"));
        let text = std::fs::read_to_string(data(&name)).expect("log");
        assert!(porcupine::is_etcd_log(text.as_bytes()), "{name}");
        let mut p = porcupine::read_etcd_log(&name, &text).expect("reads");
        let none = |_| isolde::jepsen::Node::Nil;
        let r = check_prepared(&mut p, Model::CasRegister, &LinearOptions::default(), &none, &|_| None);
        let want = if v.trim() == "true" { Validity::Valid } else { Validity::Invalid };
        assert_eq!(r.valid, want, "{name}: {}", r.to_edn());
        checked += 1;
    }
    assert_eq!(checked, 102);
    // Through the command line, detected by content.
    let r = isolde(&["analyze", "-f", "edn", &data("porcupine/jepsen/etcd_000.log")], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains(":workload :cas-register") && r.stdout.contains(":final-paths"), "{}", r.stdout);
}

/// porcupine_test.go's kv verdicts (TestKv*: partitioned per key).
#[test]
fn porcupine_kv_data_gives_porcupines_verdicts() {
    for (name, valid) in [
        ("c01-ok", true),
        ("c01-bad", false),
        ("c10-ok", true),
        ("c10-bad", false),
        ("c50-ok", true),
        ("c50-bad", false),
    ] {
        let ops = Ops::read(Path::new(&data(&format!("porcupine/kv/{name}.txt"))), Format::Edn).expect("reads");
        assert_eq!(isolde::jepsen::detect::detect(&ops), Ok(Workload::Kv), "{name}");
        let r = check_ops(&ops, Workload::Kv, &JepsenOptions::default()).expect("checks");
        let want = if valid { Validity::Valid } else { Validity::Invalid };
        assert_eq!(r.valid, want, "{name}: {}", r.to_edn());
    }
}

fn check(text: &str, w: Workload) -> isolde::jepsen::CheckResult {
    let ops = Ops::read_bytes("t.edn", text.as_bytes(), Format::Edn).expect("reads");
    check_ops(&ops, w, &JepsenOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// `:info` ops may take effect at any later point, or never; `:fail` ops
/// never did.
#[test]
fn info_ops_may_or_may_not_take_effect() {
    let w = |p: i32, v: i32, t: &str| {
        format!("{{:type :invoke, :f :write, :value {v}, :process {p}}}\n{{:type :{t}, :f :write, :value {v}, :process {p}}}\n")
    };
    let r = |p: i32, v: &str| {
        format!("{{:type :invoke, :f :read, :value nil, :process {p}}}\n{{:type :ok, :f :read, :value {v}, :process {p}}}\n")
    };
    for (h, valid) in [
        ([w(0, 1, "ok"), w(1, 2, "info"), r(2, "2"), r(3, "2")].concat(), Validity::Valid),
        ([w(0, 1, "ok"), w(1, 2, "info"), r(2, "1"), r(3, "1")].concat(), Validity::Valid),
        ([w(0, 1, "ok"), w(1, 2, "info"), r(2, "2"), r(3, "1")].concat(), Validity::Invalid),
        ([w(0, 1, "ok"), w(1, 2, "fail"), r(2, "2")].concat(), Validity::Invalid),
        ([w(0, 1, "ok"), r(2, "3")].concat(), Validity::Invalid),
        ([w(0, 1, "ok"), r(2, "nil")].concat(), Validity::Invalid),
    ] {
        assert_eq!(check(&h, Workload::Register).valid, valid, "{h}");
    }
    let m = |p: i32, f: &str, t: &str| {
        format!("{{:type :invoke, :f :{f}, :process {p}}}\n{{:type :{t}, :f :{f}, :process {p}}}\n")
    };
    let h = [m(0, "acquire", "info"), m(1, "acquire", "ok"), m(1, "release", "ok"), m(2, "acquire", "ok")].concat();
    assert_eq!(check(&h, Workload::Mutex).valid, Validity::Valid, "an :info acquire may never have happened");
    let h = [m(0, "acquire", "ok"), m(1, "acquire", "ok")].concat();
    assert_eq!(check(&h, Workload::Mutex).valid, Validity::Invalid);
}

/// The witness: the read of 3 cannot be placed after the prefix, and the
/// final paths show the states it contradicts (Knossos's keys).
#[test]
fn witness_names_the_op_and_the_states() {
    let f = data("elle-cli/knossos/cas-register/bad/rethink-fail-minimal.edn");
    let r = isolde(&["analyze", "--workload", "cas-register", "-f", "json", &f], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    let v = r.json();
    assert_eq!(v["op"]["value"], serde_json::json!(3), "{v}");
    assert_eq!(v["op"]["f"], serde_json::json!("read"), "{v}");
    // The longest prefix: write 0, write 4; then the read of 3 contradicts
    // the state 4.
    assert_eq!(
        (v["last-op"]["f"].clone(), v["last-op"]["value"].clone()),
        (serde_json::json!("write"), serde_json::json!(4)),
        "{v}"
    );
    assert_eq!(v["state"], serde_json::json!(4), "{v}");
    let paths = v["final-paths"].as_array().expect("final paths");
    assert!(
        paths
            .iter()
            .any(|p| p[1]["model"] == serde_json::json!("inconsistent") && p[1]["op"]["value"] == serde_json::json!(3)),
        "{v}"
    );
    assert!(v["longest-prefix-count"].as_i64().is_some_and(|n| n >= 1), "{v}");
}

/// A search past --timeout answers unknown (exit 3), never valid.
#[test]
fn timeout_is_unknown() {
    let dir = temp_dir("linear-timeout");
    let text = std::fs::read_to_string(data("porcupine/kv/c50-bad.txt")).expect("kv");
    // Key "0" alone: linearizable, with a search too long for 0.3 s.
    let key0: String = text.lines().filter(|l| l.contains(":key \"0\"")).map(|l| format!("{l}\n")).collect();
    let f = dir.join("key0.edn");
    std::fs::write(&f, key0).expect("write");
    let f = f.to_string_lossy();
    let r = isolde(&["analyze", "--workload", "kv", "--timeout", "0.3", "-f", "json", &f], None, LIMIT);
    assert_eq!(r.code, 3, "{r:?}");
    let v = r.json();
    assert_eq!(v["valid?"], serde_json::json!("unknown"), "{v}");
    assert!(v["error"].as_str().is_some_and(|e| e.contains("timed out")), "{v}");
}

#[test]
fn ops_of_another_model_are_an_error() {
    let f = data("elle-cli/jepsen/bank.edn");
    for model in ["register", "cas-register", "mutex"] {
        let r = isolde(&["analyze", "--workload", model, &f], None, LIMIT);
        assert_eq!(r.code, 2, "{model}: {r:?}");
        assert!(r.stderr.contains("wrong model selected?") && r.stderr.contains("\"bank\""), "{model}: {}", r.stderr);
    }
    let _ = LinearOptions::default();
}

/// The search (with its cache and its dominance pruning of reads) agrees
/// with brute force on random small cas-register histories with crashed
/// ops: every order of the ops (crashed ones included or left out) that
/// respects real time and the model.
#[test]
fn search_agrees_with_brute_force() {
    use isolde::history::{Atom, Value};
    use isolde::linear::model::step;
    use isolde::linear::search::search;
    use isolde::linear::{Budget, CasOutcome, Input, Interner, LinOp, Outcome};
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rand = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let (mut valid, mut invalid) = (0, 0);
    for _ in 0..3000 {
        let mut it = Interner::new();
        let vals: Vec<u32> = (0..3).map(|v| it.value(&Value::Atom(Atom::Int(v)))).collect();
        let n = 2 + rand(5) as usize;
        // Random intervals over 2n time points; some ops crash.
        let mut ops = Vec::new();
        for i in 0..n {
            let call = rand(2 * n as u64);
            let crashed = rand(6) == 0;
            let ret = if crashed { u64::MAX } else { call + 1 + rand(4) };
            let v = |r: u64| vals[r as usize];
            let input = match rand(4) {
                0 => Input::Read(if crashed { None } else { Some(if rand(4) == 0 { 0 } else { v(rand(3)) }) }),
                1 => Input::Write(v(rand(3))),
                2 => Input::Cas {
                    from: v(rand(3)),
                    to: v(rand(3)),
                    outcome: if crashed { CasOutcome::Unknown } else { CasOutcome::Ok },
                },
                _ => Input::Cas {
                    from: v(rand(3)),
                    to: v(rand(3)),
                    outcome: if crashed { CasOutcome::Unknown } else { CasOutcome::Fail },
                },
            };
            ops.push(LinOp { call: 2 * call, ret: if ret == u64::MAX { ret } else { 2 * ret + 1 }, input, origin: i });
        }
        let budget = Budget { deadline: None, max_bytes: usize::MAX, cancel: None };
        let (outcome, _) = search(&ops, 0, &mut it, &budget);
        let brute = brute_force(&ops, &mut it);
        match outcome {
            Outcome::Linearizable(order) => {
                assert!(brute, "search says linearizable, brute force not: {ops:?} {order:?}");
                valid += 1;
            }
            Outcome::NotLinearizable(_) => {
                assert!(!brute, "search says not linearizable, brute force finds an order: {ops:?}");
                invalid += 1;
            }
            Outcome::Unknown(..) => panic!("no budget was set"),
        }
    }
    // Both verdicts were exercised.
    assert!(valid > 300 && invalid > 300, "{valid} valid, {invalid} invalid");

    fn brute_force(ops: &[LinOp], it: &mut Interner) -> bool {
        fn go(ops: &[LinOp], used: &mut Vec<bool>, state: u32, it: &mut Interner) -> bool {
            // Every op that returned must be placed; crashed ones may not be.
            if ops.iter().zip(used.iter()).all(|(o, &u)| u || o.ret == u64::MAX) {
                return true;
            }
            for i in 0..ops.len() {
                if used[i] {
                    continue;
                }
                // Real time: no unplaced op returned before this one's call.
                if ops.iter().enumerate().any(|(j, o)| !used[j] && j != i && o.ret < ops[i].call) {
                    continue;
                }
                if let Some(next) = step(state, &ops[i].input, it) {
                    used[i] = true;
                    if go(ops, used, next, it) {
                        return true;
                    }
                    used[i] = false;
                }
            }
            false
        }
        go(ops, &mut vec![false; ops.len()], 0, it)
    }
}
