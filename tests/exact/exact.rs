//! The exact check on hand-written register histories whose write orders the
//! reads do not reveal (so Elle's inference alone cannot see the anomaly):
//! each named violation is refuted with the right name and a cycle whose
//! every step matches the history, valid histories stay valid, and `:info`
//! / `:fail` transactions are handled soundly.

use crate::support;

use isolde::anomaly::{Case, Refutation, Step, Workload};
use isolde::check::{check, CheckOptions, Outcome, Validity, WorkloadChoice};
use isolde::history::{History, MopFn, MopValue};
use isolde::ingest::{read_bytes, Format};

fn history(edn: &str) -> History {
    read_bytes("test.edn", edn.as_bytes(), Format::Edn).expect("history parses")
}

fn run(h: &History, model: &str, exact: bool) -> Outcome {
    let mut opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Workload::RwRegister),
        models: Some(vec![model.to_string()]),
        ..CheckOptions::default()
    };
    if !exact {
        opts.exact = None;
    }
    check(h, &opts).expect("check runs")
}

fn types(o: &Outcome) -> Vec<&str> {
    o.anomaly_types.iter().map(String::as_str).collect()
}

fn refutation<'a>(o: &'a Outcome, name: &str) -> &'a Refutation {
    match o.anomalies.get(name).and_then(|cs| cs.first()) {
        Some(Case::Refuted(r)) => r,
        other => panic!("no refutation under {name}: {other:?}"),
    }
}

/// The value a transaction wrote last to `key`, and the value its first
/// read of `key` observed (`Some(None)` for nil).
fn wrote(h: &History, op: u32, key: u32) -> Option<i64> {
    h.mops_of(h.op(op)).iter().rev().find_map(|m| match (m.f, m.value) {
        (MopFn::Write, MopValue::Int(v)) if m.key.0 == key => Some(v),
        _ => None,
    })
}

fn read(h: &History, op: u32, key: u32) -> Option<Option<i64>> {
    h.mops_of(h.op(op)).iter().find_map(|m| match (m.f, m.value) {
        (MopFn::Read, MopValue::Int(v)) if m.key.0 == key => Some(Some(v)),
        (MopFn::Read, MopValue::Nil) if m.key.0 == key => Some(None),
        _ => None,
    })
}

/// Every step of every case agrees with the history: a wr step's reader
/// read what its writer wrote, an rw step's reader read the older value and
/// its writer wrote the newer one, a ww step's writers wrote both values.
fn assert_steps_match_history(h: &History, r: &Refutation) {
    let cycles = r.branches.iter().map(|b| &b.cycle).chain(r.derived.iter().map(|d| &d.because));
    for c in cycles {
        assert_eq!(c.ops.len(), c.steps.len());
        for (i, s) in c.steps.iter().enumerate() {
            let (a, b) = (c.ops[i], c.ops[(i + 1) % c.ops.len()]);
            match *s {
                Step::Wr { key, value, .. } => {
                    assert_eq!(wrote(h, a, key.0), value);
                    assert_eq!(read(h, b, key.0), Some(value));
                }
                Step::Rw { key, value, value2, .. } => {
                    assert_eq!(read(h, a, key.0), Some(value));
                    assert_eq!(wrote(h, b, key.0), value2);
                    assert_ne!(value, value2);
                }
                Step::Ww { key, value, value2, .. } => {
                    assert_eq!(wrote(h, a, key.0), value);
                    assert_eq!(wrote(h, b, key.0), value2);
                }
                Step::Process { process } => {
                    assert_eq!(h.op(a).process, process);
                    assert_eq!(h.op(b).process, process);
                }
                Step::Realtime { .. } => {}
                Step::Wrp { .. } | Step::Rwp { .. } => panic!("a predicate step in a register refutation: {s:?}"),
            }
        }
    }
}

const SETUP: &str = "{:type :ok, :process 9, :value [[:w :x 1] [:w :y 1]]}\n";

#[test]
fn write_skew_is_g2_item_refuting_serializability_but_not_snapshot_isolation() {
    let h = history(&format!(
        "{SETUP}{{:type :ok, :process 1, :value [[:r :x 1] [:r :y 1] [:w :x 2]]}}
         {{:type :ok, :process 2, :value [[:r :x 1] [:r :y 1] [:w :y 2]]}}"
    ));
    assert_eq!(run(&h, "serializable", false).valid, Validity::Valid, "Elle's inference cannot see it");
    let o = run(&h, "serializable", true);
    assert_eq!(types(&o), vec!["G2-item"]);
    let r = refutation(&o, "G2-item");
    assert_eq!(r.model, "serializable");
    assert_eq!(r.branches[0].cycle.ops.len(), 2);
    assert_steps_match_history(&h, r);
    assert_eq!(run(&h, "snapshot-isolation", true).valid, Validity::Valid);
}

#[test]
fn read_skew_is_g_single_item_in_every_write_order() {
    let h = history(&format!(
        "{SETUP}{{:type :ok, :process 1, :value [[:w :x 2] [:w :y 2]]}}
         {{:type :ok, :process 2, :value [[:r :x 1] [:r :y 2]]}}"
    ));
    assert_eq!(run(&h, "snapshot-isolation", false).valid, Validity::Valid);
    let o = run(&h, "snapshot-isolation", true);
    assert_eq!(types(&o), vec!["G-single-item"]);
    let r = refutation(&o, "G-single-item");
    // Each key's order is forced by a 2-cycle (a G-single-item in the other
    // order), and the forced orders contradict each other.
    let cycles: Vec<_> = r.branches.iter().map(|b| &b.cycle).chain(r.derived.iter().map(|d| &d.because)).collect();
    assert!(cycles.len() >= 2 && cycles.iter().all(|c| c.ops.len() == 2), "{r:?}");
    assert!(r.derived.iter().all(|d| d.because.anomaly == "G-single-item"));
    assert_steps_match_history(&h, r);
}

#[test]
fn long_fork_is_g_nonadjacent_item_with_justified_write_orders() {
    let h = history(&format!(
        "{SETUP}{{:type :ok, :process 1, :value [[:w :x 2]]}}
         {{:type :ok, :process 2, :value [[:w :y 2]]}}
         {{:type :ok, :process 3, :value [[:r :x 2] [:r :y 1]]}}
         {{:type :ok, :process 4, :value [[:r :x 1] [:r :y 2]]}}"
    ));
    assert_eq!(run(&h, "snapshot-isolation", false).valid, Validity::Valid);
    let o = run(&h, "snapshot-isolation", true);
    assert_eq!(types(&o), vec!["G-nonadjacent-item"]);
    let r = refutation(&o, "G-nonadjacent-item");
    assert_eq!(r.branches.len(), 1);
    assert_eq!(r.branches[0].cycle.ops.len(), 4);
    // Both version orders (x: 1 before 2, y: 1 before 2) are justified.
    assert_eq!(r.derived.len(), 2);
    assert!(r.derived.iter().all(|d| d.order.first.1 == 1 && d.order.second.1 == 2));
    assert_steps_match_history(&h, r);
}

#[test]
fn lost_update_is_reported_by_name_and_refutes_snapshot_isolation() {
    let h = history(&format!(
        "{SETUP}{{:type :ok, :process 1, :value [[:r :x 1] [:w :x 2]]}}
         {{:type :ok, :process 2, :value [[:r :x 1] [:w :x 3]]}}"
    ));
    let o = run(&h, "snapshot-isolation", true);
    assert!(types(&o).contains(&"lost-update"), "{:?}", types(&o));
    assert_eq!(o.valid, Validity::Invalid);
    // The exact check on its own refutes it too, as a G-single-item split
    // over the two writers' order.
    let level = isolde::si_check::Level::from_model("snapshot-isolation").expect("a level");
    let out = isolde::si_check::check_level(&h, level, &Default::default()).expect("runs");
    let isolde::si_check::Verdict::Invalid(r) = out.verdict else { panic!("not refuted") };
    assert_eq!(r.branches.len(), 2);
    assert!(r.branches.iter().all(|b| b.cycle.anomaly == "G-single-item"));
    assert_steps_match_history(&h, &r);
}

#[test]
fn aborted_and_intermediate_reads_are_g1a_and_g1b() {
    let h = history(&format!(
        "{SETUP}{{:type :fail, :process 1, :value [[:w :x 5]]}}
         {{:type :ok, :process 2, :value [[:w :y 6] [:w :y 7]]}}
         {{:type :ok, :process 3, :value [[:r :x 5] [:r :y 6]]}}"
    ));
    let o = run(&h, "serializable", true);
    assert!(types(&o).contains(&"G1a") && types(&o).contains(&"G1b"), "{:?}", types(&o));
}

#[test]
fn info_transactions_count_only_when_observed() {
    // An unobserved :info write may not have happened: no violation.
    let h = history(&format!(
        "{SETUP}{{:type :info, :process 1, :value [[:w :x 2] [:w :y 2]]}}
         {{:type :ok, :process 2, :value [[:r :x 1] [:r :y 1]]}}"
    ));
    assert_eq!(run(&h, "serializable", true).valid, Validity::Valid);
    // Once a read observes it, it committed, and a read skew around it is
    // refuted.
    let h = history(&format!(
        "{SETUP}{{:type :info, :process 1, :value [[:w :x 2] [:w :y 2]]}}
         {{:type :ok, :process 2, :value [[:r :x 1] [:r :y 2]]}}"
    ));
    let o = run(&h, "snapshot-isolation", true);
    assert_eq!(types(&o), vec!["G-single-item"]);
}

#[test]
fn consistent_histories_stay_valid_at_every_level() {
    // A serial run: versions 1 < 2 < 3 of x, readers in between.
    let h = history(&format!(
        "{SETUP}{{:type :ok, :process 1, :value [[:r :x 1] [:w :x 2]]}}
         {{:type :ok, :process 2, :value [[:r :x 2] [:r :y 1]]}}
         {{:type :ok, :process 1, :value [[:w :x 3] [:w :y 3]]}}
         {{:type :ok, :process 2, :value [[:r :x 3] [:r :y 3]]}}"
    ));
    for model in [
        "strict-serializable",
        "strong-session-serializable",
        "serializable",
        "strong-snapshot-isolation",
        "strong-session-snapshot-isolation",
        "snapshot-isolation",
    ] {
        let o = run(&h, model, true);
        assert_eq!(o.valid, Validity::Valid, "{model}: {:?}", types(&o));
        assert!(!o.stats.exact.is_empty(), "{model}: the exact check ran");
    }
}

#[test]
fn too_many_write_order_constraints_is_unknown_never_valid() {
    // Five blind writers of x: ten unordered pairs.
    let h = history(
        "{:type :ok, :process 1, :value [[:w :x 1]]}
         {:type :ok, :process 2, :value [[:w :x 2]]}
         {:type :ok, :process 3, :value [[:w :x 3]]}
         {:type :ok, :process 4, :value [[:w :x 4]]}
         {:type :ok, :process 5, :value [[:w :x 5]] }
         {:type :ok, :process 6, :value [[:r :x 3]]}",
    );
    let mut opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Workload::RwRegister),
        models: Some(vec!["serializable".into()]),
        ..CheckOptions::default()
    };
    // The serial replay decides this valid history before any polygraph
    // (so the budget does not apply); the budget is the polygraph's.
    if let Some(e) = opts.exact.as_mut() {
        e.max_constraints = 1;
    }
    assert_eq!(check(&h, &opts).expect("check runs").valid, Validity::Valid);
    if let Some(e) = opts.exact.as_mut() {
        e.max_constraints = 9;
        e.serial_first = false;
    }
    let o = check(&h, &opts).expect("check runs");
    assert_eq!(o.valid, Validity::Unknown);
    assert_eq!(types(&o), vec!["exact-check-unknown"]);
    if let Some(e) = opts.exact.as_mut() {
        e.max_constraints = 10;
    }
    assert_eq!(check(&h, &opts).expect("check runs").valid, Validity::Valid);
}

/// Only the write-order pairs the known graph leaves open count against the
/// budget: a pair one of whose orders the known graph already contains (here
/// by session order) can never matter and gets no constraint.
#[test]
fn pairs_the_known_graph_orders_do_not_count_against_the_budget() {
    // One session writes x five times: all ten pairs ordered by the session.
    // Another reads the first version, which leaves the four pairs
    // (x1, xk) open: the reader's rw edge to xk is not known.
    let h = history(
        "{:type :ok, :process 1, :value [[:w :x 1]]}
         {:type :ok, :process 1, :value [[:w :x 2]]}
         {:type :ok, :process 1, :value [[:w :x 3]]}
         {:type :ok, :process 1, :value [[:w :x 4]]}
         {:type :ok, :process 1, :value [[:w :x 5]]}
         {:type :ok, :process 2, :value [[:r :x 1]]}",
    );
    let verdict = |limit: usize, prune: bool| {
        let mut opts = CheckOptions {
            workload: WorkloadChoice::Fixed(Workload::RwRegister),
            models: Some(vec!["strong-session-serializable".into()]),
            ..CheckOptions::default()
        };
        // The polygraph's budget: without the serial replay, which decides
        // this valid history before any polygraph.
        if let Some(e) = opts.exact.as_mut() {
            e.max_constraints = limit;
            e.prune = prune;
            e.serial_first = false;
        }
        check(&h, &opts).expect("check runs").valid
    };
    assert_eq!(verdict(4, true), Validity::Valid);
    assert_eq!(verdict(3, true), Validity::Unknown);
    // Without pruning every pair is a constraint.
    assert_eq!(verdict(9, false), Validity::Unknown);
    assert_eq!(verdict(10, false), Validity::Valid);
}

/// Every PolySI history (real PostgreSQL runs at REPEATABLE READ, i.e.
/// snapshot isolation) is snapshot-isolation valid with session order, and
/// gets a definite serializability verdict. Skipped when the shared corpus
/// is not beside the checkout.
#[test]
fn polysi_corpus_is_si_valid_with_definite_serializability_verdicts() {
    let Some(root) = support::shared::path("corpus/polysi", "PolySI corpus verdicts") else { return };
    let Ok(groups) = std::fs::read_dir(&root) else {
        support::shared::skip("PolySI corpus verdicts", &format!("{} is not readable", root.display()));
        return;
    };
    let mut files = Vec::new();
    for g in groups.flatten() {
        for d in std::fs::read_dir(g.path()).into_iter().flatten().flatten() {
            let f = d.path().join("history.bincode");
            if f.exists() {
                files.push(f);
            }
        }
    }
    assert!(files.len() >= 30, "found only {} histories", files.len());
    let (mut ser_valid, mut ser_invalid) = (0, 0);
    for f in &files {
        let h = isolde::ingest::read_path(f, Format::Auto).expect("corpus history reads");
        let si = run(&h, "strong-session-snapshot-isolation", true);
        assert_eq!(si.valid, Validity::Valid, "{}: {:?}", f.display(), types(&si));
        let ser = run(&h, "serializable", true);
        match ser.valid {
            Validity::Valid => ser_valid += 1,
            Validity::Invalid => {
                assert!(types(&ser).iter().all(|t| t.starts_with("G2-item")), "{}: {:?}", f.display(), types(&ser));
                ser_invalid += 1;
            }
            Validity::Unknown => panic!("{}: serializability unknown: {:?}", f.display(), types(&ser)),
        }
    }
    assert!(ser_valid > 0 && ser_invalid > 0, "valid {ser_valid}, invalid {ser_invalid}");
}

#[test]
fn refutations_are_written_to_the_output_directory_with_a_plot_per_case() {
    let h = history(&format!(
        "{SETUP}{{:type :ok, :process 1, :value [[:r :x 1] [:r :y 1] [:w :x 2]]}}
         {{:type :ok, :process 2, :value [[:r :x 1] [:r :y 1] [:w :y 2]]}}"
    ));
    let o = run(&h, "serializable", true);
    let dir = std::env::temp_dir().join(format!("isolde-exact-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plots = isolde::reports::directory::PlotOptions {
        format: "svg".into(),
        max_bytes: 1 << 20,
        timeout: std::time::Duration::from_secs(10),
        ..Default::default()
    };
    isolde::reports::directory::write(&h, &o, &dir, &plots).expect("directory written");
    let text = std::fs::read_to_string(dir.join("G2-item.txt")).expect("G2-item.txt");
    assert!(text.starts_with("G2-item #0\nNo order of the writes explains this history under serializable"), "{text}");
    assert!(text.contains("a contradiction!"));
    let dot = std::fs::read_to_string(dir.join("G2-item/0-0.dot")).expect("plot of the first case");
    assert!(dot.starts_with("digraph"), "{dot}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A check stopped by its time limit says `unknown` with what it had
/// decided so far (components satisfiable, undecided, decisions), never
/// valid; and publishes its progress while it runs.
#[test]
fn a_timed_out_check_is_unknown_and_says_what_was_decided() {
    use isolde::gen::rw_register::{rw_register_string, RwRegisterConfig};
    use isolde::si_check::{progress::Phase, ExactOptions, ExactProgress};
    // Every transaction its own process: nothing orders the writers, so
    // the solver has one large component to search.
    let text = rw_register_string(&RwRegisterConfig {
        txns: 2000,
        processes: 1_000_000,
        min_txn_len: 3,
        max_txn_len: 3,
        seed: 1,
        ..RwRegisterConfig::default()
    });
    let h = history(&text);
    static PROGRESS: ExactProgress = ExactProgress::new();
    let opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Workload::RwRegister),
        models: Some(vec!["serializable".to_string()]),
        exact: Some(ExactOptions {
            timeout: Some(std::time::Duration::from_millis(300)),
            progress: Some(&PROGRESS),
            ..ExactOptions::default()
        }),
        ..CheckOptions::default()
    };
    let o = check(&h, &opts).expect("check runs");
    assert_eq!(o.valid, Validity::Unknown, "{:?}", o.anomaly_types);
    let detail = format!("{:?}", o.anomalies.get("exact-check-unknown"));
    assert!(detail.contains("did not finish within the time limit"), "{detail}");
    assert!(detail.contains("undecided after"), "{detail}");
    assert_eq!(PROGRESS.phase(), Phase::Idle, "the check leaves the progress record idle");
}

/// A history whose transactions ran one at a time is decided valid by
/// replaying it (no pruning, no search), and the same replay never makes
/// an invalid history valid: a lost update among serial traffic is still
/// refuted.
#[test]
fn a_replayed_serial_order_decides_valid_histories_without_search() {
    use isolde::gen::rw_register::{rw_register_string, RwRegisterConfig};
    let text =
        rw_register_string(&RwRegisterConfig { txns: 400, processes: 1, seed: 3, ..RwRegisterConfig::default() });
    let o = run(&history(&text), "serializable", true);
    assert_eq!(o.valid, Validity::Valid, "{:?}", o.anomaly_types);
    assert!(o.stats.exact.iter().any(|(_, s)| s.guessed), "the replay decided it: {:?}", o.stats.exact);

    // Two transactions both read x = 1 and both write x: no serial order.
    let lost = history(
        "{:type :invoke, :process 0, :f :txn, :value [[:w :x 1]]}
         {:type :ok, :process 0, :f :txn, :value [[:w :x 1]]}
         {:type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:w :x 2]]}
         {:type :invoke, :process 2, :f :txn, :value [[:r :x nil] [:w :x 3]]}
         {:type :ok, :process 1, :f :txn, :value [[:r :x 1] [:w :x 2]]}
         {:type :ok, :process 2, :f :txn, :value [[:r :x 1] [:w :x 3]]}",
    );
    let o = run(&lost, "serializable", true);
    assert_eq!(o.valid, Validity::Invalid, "{:?}", o.anomaly_types);
    assert!(o.stats.exact.iter().all(|(_, s)| !s.guessed));
}
