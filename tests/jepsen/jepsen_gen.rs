//! `isolde gen bank | counter | set`: without faults every checker answers
//! valid; each injected fault is reported by the checker that should see
//! it; and a large history is checked quickly (the 1M-op timing is in
//! docs/jepsen.md, measured with the release build).

use crate::support;

use isolde::cli::jepsen::{check_ops, JepsenOptions};
use isolde::gen::jepsen::{generate, Fault, JepsenGenConfig, Kind};
use isolde::ingest::Format;
use isolde::jepsen::detect::Workload;
use isolde::jepsen::Ops;
use isolde::outcome::Validity;
use std::time::Duration;
use support::cli::{isolde, temp_dir};

fn run(kind: Kind, faults: &[Fault], ops: usize, seed: u64) -> (Ops, Vec<(Fault, u64)>) {
    let cfg = JepsenGenConfig { kind, seed, ops, info_fraction: 0.05, faults: faults.to_vec(), ..Default::default() };
    let mut out = Vec::new();
    let planted = generate(&cfg, &mut out).expect("generates");
    (Ops::read_bytes("gen.edn", &out, Format::Edn).expect("reads"), planted.faults)
}

fn check(ops: &Ops, w: Workload, linearizable: bool) -> isolde::jepsen::CheckResult {
    let mut o = JepsenOptions::default();
    o.set_full.linearizable = linearizable;
    check_ops(ops, w, &o).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn fault_free_histories_are_valid() {
    for seed in 0..3 {
        let (ops, _) = run(Kind::Bank, &[], 20_000, seed);
        assert_eq!(check(&ops, Workload::Bank, false).valid, Validity::Valid);
        let (ops, _) = run(Kind::Counter, &[], 20_000, seed);
        assert_eq!(check(&ops, Workload::Counter, false).valid, Validity::Valid);
        let (ops, _) = run(Kind::Set, &[], 20_000, seed);
        assert_eq!(check(&ops, Workload::Set, false).valid, Validity::Valid);
        let r = check(&ops, Workload::SetFull, true);
        assert_eq!(r.valid, Validity::Valid, "{}", r.to_table(200));
    }
}

fn errors_at(r: &isolde::jepsen::CheckResult) -> String {
    r.to_edn()
}

#[test]
fn each_injected_fault_is_reported() {
    // bank: a negative balance and a wrong total, each at its planted op.
    let (ops, planted) = run(Kind::Bank, &[Fault::NegativeBalance, Fault::WrongTotal], 20_000, 1);
    assert_eq!(planted.len(), 2);
    let r = check(&ops, Workload::Bank, false);
    assert_eq!(r.valid, Validity::Invalid);
    let edn = errors_at(&r);
    for (fault, index) in planted {
        let kind = if fault == Fault::NegativeBalance { ":negative-value" } else { ":wrong-total" };
        assert!(edn.contains(&format!("{kind} {{:count 1")), "{fault:?}: {edn}");
        assert!(edn.contains(&format!(":index {index}}}")), "{fault:?} at {index}: {edn}");
    }
    // counter: a read above what may have been added, one below what was
    // acknowledged.
    let (ops, planted) = run(Kind::Counter, &[Fault::WrongTotal, Fault::StaleRead], 20_000, 2);
    assert_eq!(planted.len(), 2);
    let r = check(&ops, Workload::Counter, false);
    assert_eq!((r.valid, r.get("error-count").map(isolde::jepsen::result::edn)), (Validity::Invalid, Some("2".into())));
    // set: the lost element is lost for set and set-full; the stale read is
    // stale for set-full (invalid only with --linearizable).
    let (ops, planted) = run(Kind::Set, &[Fault::LostElement], 20_000, 3);
    assert_eq!(planted.len(), 1);
    let r = check(&ops, Workload::Set, false);
    assert_eq!((r.valid, r.get("lost-count").map(isolde::jepsen::result::edn)), (Validity::Invalid, Some("1".into())));
    let r = check(&ops, Workload::SetFull, false);
    assert_eq!((r.valid, r.get("lost-count").map(isolde::jepsen::result::edn)), (Validity::Invalid, Some("1".into())));
    let (ops, planted) = run(Kind::Set, &[Fault::StaleRead], 20_000, 4);
    assert_eq!(planted.len(), 1);
    assert_eq!(check(&ops, Workload::Set, false).valid, Validity::Valid, "the final read has it");
    let r = check(&ops, Workload::SetFull, false);
    assert_eq!((r.valid, r.get("stale-count").map(isolde::jepsen::result::edn)), (Validity::Valid, Some("1".into())));
    assert_eq!(check(&ops, Workload::SetFull, true).valid, Validity::Invalid);
}

#[test]
fn faults_that_do_not_apply_are_refused() {
    let cfg = JepsenGenConfig { kind: Kind::Counter, faults: vec![Fault::NegativeBalance], ..Default::default() };
    assert!(generate(&cfg, &mut Vec::new()).is_err());
    assert!(Fault::parse("bogus").is_err());
}

/// The command line: gen reports each fault on stderr, analyze finds it.
#[test]
fn gen_then_analyze() {
    let dir = temp_dir("jepsen-gen");
    let f = dir.join("bank.edn");
    let f = f.to_string_lossy();
    let limit = Duration::from_secs(120);
    let r = isolde(&["gen", "bank", "--ops", "200000", "--inject", "wrong-total", "-o", &f], None, limit);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("injected 1 x wrong-total (op :index"), "{}", r.stderr);
    let t0 = std::time::Instant::now();
    let r = isolde(&["analyze", "-f", "json", &f], None, limit);
    let took = t0.elapsed();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.json()["errors"]["wrong-total"]["count"], serde_json::json!(1));
    // 200k operations (400k op maps): well within a second on a quiet core.
    assert!(took < Duration::from_secs(10), "{took:?}");
}
