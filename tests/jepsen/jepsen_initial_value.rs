//! `--initial-value V`: a register's initial value (Knossos's model
//! argument). For register and cas-register, the linearizability search
//! starts from it, and a violation whose op reads a value no write wrote
//! before any write returned names it; for rw-register, reads of it that
//! can only be of the initial version are reads of the initial version
//! (not garbage or G1a), and a read that could be either is refused.
//!
//! The public Canonical Raft register run (jerrytesting/Canonical-raft-bug-logs,
//! no licence, not copied here) is checked when `ISOLDE_JEPSEN_STORES`
//! holds its `canonical-raft/history.edn`; the hand-made history below has
//! its shape: reads of 0 before the first write returns.

use crate::support;

use isolde::anomaly::Workload as Elle;
use isolde::check::{check, CheckOptions, WorkloadChoice};
use isolde::cli::jepsen::{check_ops, JepsenOptions};
use isolde::history::{Atom, Value};
use isolde::ingest::{read_bytes, Format};
use isolde::jepsen::detect::Workload;
use isolde::jepsen::Ops;
use isolde::outcome::Validity;
use std::path::PathBuf;
use std::time::Duration;
use support::cli::{isolde, temp_dir};

const LIMIT: Duration = Duration::from_secs(120);

/// The Canonical Raft shape: a read of 0 completes before any write
/// returns, then writes and reads of the written values.
const REGISTER: &str = "\
{:type :invoke, :f :read, :value nil, :process 0, :index 0}
{:type :invoke, :f :write, :value 3, :process 1, :index 1}
{:type :ok, :f :read, :value 0, :process 0, :index 2}
{:type :ok, :f :write, :value 3, :process 1, :index 3}
{:type :invoke, :f :read, :value nil, :process 0, :index 4}
{:type :ok, :f :read, :value 3, :process 0, :index 5}
";

/// [`REGISTER`] and a CAS.
const CAS: &str = "\
{:type :invoke, :f :cas, :value [3 4], :process 2, :index 6}
{:type :ok, :f :cas, :value [3 4], :process 2, :index 7}
";

fn int(n: i64) -> Value {
    Value::Atom(Atom::Int(n))
}

fn linear(text: &str, w: Workload, initial: Option<Value>) -> isolde::jepsen::CheckResult {
    let ops = Ops::read_bytes("r.edn", text.as_bytes(), Format::Edn).expect("reads");
    let mut o = JepsenOptions::default();
    o.linear.initial = initial;
    check_ops(&ops, w, &o).unwrap_or_else(|e| panic!("{e}"))
}

fn explanation(r: &isolde::jepsen::CheckResult) -> String {
    r.get("explanation").map(isolde::jepsen::result::edn).unwrap_or_default()
}

#[test]
fn register_starts_at_the_initial_value() {
    for w in [Workload::Register, Workload::CasRegister] {
        let text = if w == Workload::Register { REGISTER.to_string() } else { format!("{REGISTER}{CAS}") };
        let r = linear(&text, w, Some(int(0)));
        assert_eq!(r.valid, Validity::Valid, "{w:?}: {}", r.to_edn());
        let r = linear(&text, w, None);
        assert_eq!(r.valid, Validity::Invalid, "{w:?}");
        let why = explanation(&r);
        assert!(
            why.contains("reads 0, which no write wrote") && why.contains("pass --initial-value 0"),
            "{w:?}: {}",
            r.to_edn()
        );
        // A wrong initial value is named as given.
        let r = linear(&text, w, Some(int(7)));
        assert_eq!(r.valid, Validity::Invalid);
        assert!(explanation(&r).contains("initial value 7 (--initial-value 7)"), "{}", r.to_edn());
    }
}

/// A CAS from a value no write wrote, before any write returned, names the
/// initial value too; a read of an unwritten value after a write returned
/// does not (the register no longer holds its initial value).
#[test]
fn explanation_only_where_the_initial_value_could_explain() {
    let cas = "{:type :invoke, :f :cas, :value [0 1], :process 0}\n{:type :ok, :f :cas, :value [0 1], :process 0}\n";
    let r = linear(cas, Workload::CasRegister, None);
    assert!(explanation(&r).contains("compares-and-sets from 0"), "{}", r.to_edn());
    assert_eq!(linear(cas, Workload::CasRegister, Some(int(0))).valid, Validity::Valid);
    let late = "{:type :invoke, :f :write, :value 1, :process 0}\n{:type :ok, :f :write, :value 1, :process 0}\n\
                {:type :invoke, :f :read, :value nil, :process 1}\n{:type :ok, :f :read, :value 0, :process 1}\n";
    let r = linear(late, Workload::Register, None);
    assert_eq!((r.valid, explanation(&r)), (Validity::Invalid, String::new()), "{}", r.to_edn());
}

#[test]
fn cli_flag_for_analyze_and_elle_cli() {
    let dir = temp_dir("initial-value");
    let f = dir.join("r.edn");
    std::fs::write(&f, format!("{REGISTER}{CAS}")).expect("write");
    let f = f.to_str().expect("utf8");
    let r = isolde(&["analyze", "--initial-value", "0", "-f", "json", f], None, LIMIT);
    assert_eq!((r.code, r.json()["workload"].clone()), (0, serde_json::json!("cas-register")), "{r:?}");
    let r = isolde(&["analyze", f], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("pass --initial-value 0"), "{}", r.stdout);
    let r = isolde(&["elle-cli", "-m", "cas-register", "--initial-value", "0", f], None, LIMIT);
    assert_eq!((r.code, r.stdout.clone()), (0, format!("{f} \t true\n")), "{r:?}");
    // Not a value; a workload without an initial value.
    let r = isolde(&["analyze", "--initial-value", "[1", f], None, LIMIT);
    assert!(r.code == 2 && r.stderr.contains("--initial-value"), "{r:?}");
    let r = isolde(&["analyze", "--workload", "mutex", "--initial-value", "0", f], None, LIMIT);
    assert!(r.code == 2 && r.stderr.contains("applies to the register"), "{r:?}");
}

fn rw(edn: &str, initial: Option<i64>) -> Result<isolde::check::Outcome, String> {
    let h = read_bytes("rw.edn", edn.as_bytes(), Format::Edn).expect("parses");
    let opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Elle::RwRegister),
        models: Some(vec!["serializable".into()]),
        initial_value: initial.map(int),
        ..CheckOptions::default()
    };
    check(&h, &opts).map_err(|e| e.to_string())
}

/// rw-register: a read of the initial value no transaction writes is a
/// read of the initial version (without the flag: garbage); one only a
/// failed transaction wrote is not G1a; both still form the cycles a read
/// of nil would.
#[test]
fn rw_register_reads_of_the_initial_value() {
    let garbage = "{:type :ok, :process 0, :value [[:r :x 0] [:w :y 1]]}\n";
    let o = rw(garbage, None).expect("runs");
    assert!(o.anomaly_types.iter().any(|a| a == "garbage-read"), "{:?}", o.anomaly_types);
    let o = rw(garbage, Some(0)).expect("runs");
    assert_eq!(o.valid, Validity::Valid, "{:?}", o.anomaly_types);
    let g1a = "{:type :fail, :process 0, :value [[:w :x 0]]}\n{:type :ok, :process 1, :value [[:r :x 0]]}\n";
    assert!(rw(g1a, None).expect("runs").anomaly_types.iter().any(|a| a == "G1a"));
    assert_eq!(rw(g1a, Some(0)).expect("runs").valid, Validity::Valid);
    // Write skew through reads of the initial 0: G2-item, as with nil.
    let skew = "{:type :ok, :process 0, :value [[:r :x 0] [:r :y 0] [:w :x 1]]}\n\
                {:type :ok, :process 1, :value [[:r :x 0] [:r :y 0] [:w :y 1]]}\n";
    let o = rw(skew, Some(0)).expect("runs");
    assert_eq!(o.valid, Validity::Invalid);
    assert!(o.anomaly_types.iter().any(|a| a == "G2-item"), "{:?}", o.anomaly_types);
    let as_nil = rw(&skew.replace(" 0]", " nil]"), None).expect("runs");
    assert_eq!(o.anomaly_types, as_nil.anomaly_types);
}

/// A read of the initial value that completed before any write of that
/// value began is of the initial version; one after such a write began
/// could be either, and is refused with its line.
#[test]
fn rw_register_ambiguous_reads_are_refused() {
    let before = "{:type :invoke, :process 0, :value [[:r :x nil]]}\n{:type :ok, :process 0, :value [[:r :x 0]]}\n\
                  {:type :invoke, :process 1, :value [[:w :x 0]]}\n{:type :ok, :process 1, :value [[:w :x 0]]}\n";
    assert!(rw(before, Some(0)).is_ok());
    let after = "{:type :invoke, :process 1, :value [[:w :x 0]]}\n{:type :ok, :process 1, :value [[:w :x 0]]}\n\
                 {:type :invoke, :process 0, :value [[:r :x nil]]}\n{:type :ok, :process 0, :value [[:r :x 0]]}\n";
    let e = rw(after, Some(0)).expect_err("ambiguous");
    assert!(e.starts_with("rw.edn:4: --initial-value 0") && e.contains("key :x"), "{e}");
    // A transaction's read of its own write is not a read of the initial value.
    let own = "{:type :ok, :process 0, :value [[:w :x 0] [:r :x 0]]}\n";
    assert_eq!(rw(own, Some(0)).expect("runs").valid, Validity::Valid);
    // List-append has no initial value.
    let h = read_bytes("la.edn", b"{:type :ok, :process 0, :value [[:append :x 1]]}", Format::Edn).expect("parses");
    let opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Elle::ListAppend),
        initial_value: Some(int(0)),
        ..CheckOptions::default()
    };
    assert!(check(&h, &opts).is_err());
}

fn public(name: &str) -> Option<PathBuf> {
    let Some(base) = std::env::var_os("ISOLDE_JEPSEN_STORES") else {
        eprintln!("skipped: set ISOLDE_JEPSEN_STORES to check the public history {name}");
        return None;
    };
    let f = PathBuf::from(base).join(name).join("history.edn");
    f.is_file().then_some(f).or_else(|| {
        eprintln!("skipped: {name}/history.edn not found");
        None
    })
}

/// The done-when: Canonical Raft's register run is valid with
/// `--initial-value 0`, and invalid without, saying what the verdict
/// hinges on.
#[test]
fn canonical_raft_history() {
    let Some(f) = public("canonical-raft") else { return };
    let f = f.to_str().expect("utf8");
    let r = isolde(&["analyze", "--initial-value", "0", "-f", "json", f], None, LIMIT);
    assert_eq!((r.code, r.json()["valid?"].clone()), (0, serde_json::json!(true)), "{r:?}");
    let r = isolde(&["analyze", "-f", "json", f], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    let why = r.json()["explanation"].as_str().unwrap_or_default().to_string();
    assert!(why.contains("reads 0") && why.contains("pass --initial-value 0"), "{why}");
}
