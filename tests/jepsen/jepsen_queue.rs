//! Jepsen's queue, total-queue and unique-ids checkers: the histories of
//! Jepsen's own `checker_test.clj` (`queue-test`, `total-queue-test`,
//! `unique-ids-test`) give its result maps; drains expand to dequeues; the
//! FIFO model; detection; the generators' planted faults are found, and
//! fault-free runs are valid; other workloads' ops are errors.

use crate::support;

use isolde::cli::jepsen::{check_ops, JepsenOptions};
use isolde::ingest::Format;
use isolde::jepsen::detect::{detect, Workload};
use isolde::jepsen::queue::QueueModel;
use isolde::jepsen::{CheckResult, JepsenError, Ops};
use isolde::outcome::Validity;
use std::time::Duration;
use support::cli::{isolde, temp_dir};

const LIMIT: Duration = Duration::from_secs(120);

fn ops(text: &str) -> Ops {
    Ops::read_bytes("q.edn", text.as_bytes(), Format::Edn).unwrap_or_else(|e| panic!("{e}"))
}

fn check(text: &str, w: Workload) -> CheckResult {
    check_ops(&ops(text), w, &JepsenOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn fifo(text: &str) -> CheckResult {
    let o = JepsenOptions { queue_model: QueueModel::Fifo, ..Default::default() };
    check_ops(&ops(text), Workload::Queue, &o).unwrap_or_else(|e| panic!("{e}"))
}

/// An op map line (Jepsen's test helpers: `invoke-op`, `ok-op`, ...).
fn op(t: &str, p: i64, f: &str, v: &str) -> String {
    format!("{{:type :{t}, :process {p}, :f :{f}, :value {v}}}\n")
}

/// Jepsen's `queue-test`.
#[test]
fn jepsen_queue_test() {
    let cases = [
        (op("invoke", 1, "enqueue", "1"), true, "Possible enqueue but no dequeue"),
        (op("ok", 1, "enqueue", "1"), true, "Definite enqueue but no dequeue"),
        (
            [op("invoke", 2, "dequeue", "nil"), op("invoke", 1, "enqueue", "1"), op("ok", 2, "dequeue", "1")].concat(),
            true,
            "concurrent enqueue/dequeue",
        ),
        (op("ok", 1, "dequeue", "1"), false, "dequeue but no enqueue"),
    ];
    for (h, valid, what) in cases {
        let r = check(&h, Workload::Queue);
        assert_eq!(r.valid == Validity::Valid, valid, "{what}: {}", r.to_edn());
    }
    let r = check(&op("ok", 1, "dequeue", "1"), Workload::Queue);
    assert!(r.to_edn().starts_with("{:valid? false, :error \"can't dequeue 1\""), "{}", r.to_edn());
    let r = check(&op("invoke", 1, "enqueue", "1"), Workload::Queue);
    assert_eq!(r.to_edn(), "{:valid? true, :final-queue #knossos.model.UnorderedQueue {:pending #{1}}}");
}

/// `queue` feeds every enqueue invocation to the model, a failed one too
/// (Jepsen's filter), and only `:ok` dequeues; drains are not looked at.
#[test]
fn queue_reads_what_jepsens_filter_keeps() {
    let h = [op("invoke", 1, "enqueue", "5"), op("fail", 1, "enqueue", "5"), op("ok", 2, "dequeue", "5")].concat();
    assert_eq!(check(&h, Workload::Queue).valid, Validity::Valid);
    let h = [op("invoke", 2, "dequeue", "nil"), op("fail", 2, "dequeue", "7"), op("ok", 3, "drain", "[8 9]")].concat();
    assert_eq!(check(&h, Workload::Queue).valid, Validity::Valid);
    // Knossos's message prints the value with `str`: a string bare.
    let r = check(&op("ok", 1, "dequeue", "\"a\""), Workload::Queue);
    assert_eq!(r.get("error").map(isolde::jepsen::result::edn), Some("\"can't dequeue a\"".to_string()));
}

/// The FIFO model: a dequeue must take the head.
#[test]
fn fifo_model_takes_the_head() {
    let enq = |v: &str| [op("invoke", 1, "enqueue", v), op("ok", 1, "enqueue", v)].concat();
    let deq = |v: &str| op("ok", 2, "dequeue", v);
    let r = fifo(&[enq("1"), enq("2"), deq("1"), deq("2")].concat());
    assert_eq!(r.valid, Validity::Valid, "{}", r.to_edn());
    let r = fifo(&[enq("1"), enq("2"), deq("2")].concat());
    assert_eq!(r.get("error").map(isolde::jepsen::result::edn), Some("\"can't dequeue 2\"".to_string()));
    let r = fifo(&deq("3"));
    assert_eq!(
        r.get("error").map(isolde::jepsen::result::edn),
        Some("\"can't dequeue 3 from empty queue\"".to_string())
    );
    // Unordered, the same history is valid.
    assert_eq!(check(&[enq("1"), enq("2"), deq("2")].concat(), Workload::Queue).valid, Validity::Valid);
}

/// Jepsen's `total-queue-test`, "sane" and "pathological": the whole maps.
#[test]
fn jepsen_total_queue_test() {
    let sane = [
        op("invoke", 1, "enqueue", "1"),
        op("invoke", 2, "enqueue", "2"),
        op("ok", 2, "enqueue", "2"),
        op("invoke", 3, "dequeue", "1"),
        op("ok", 3, "dequeue", "1"),
        op("invoke", 3, "dequeue", "2"),
        op("ok", 3, "dequeue", "2"),
    ]
    .concat();
    assert_eq!(
        check(&sane, Workload::TotalQueue).to_edn(),
        "{:valid? true, :attempt-count 2, :acknowledged-count 1, :ok-count 2, :unexpected-count 0, \
         :duplicated-count 0, :lost-count 0, :recovered-count 1, :lost #{}, :unexpected #{}, :duplicated #{}, \
         :recovered #{1}}"
    );
    let pathological = [
        op("invoke", 1, "enqueue", ":hung"),
        op("invoke", 2, "enqueue", ":enqueued"),
        op("ok", 2, "enqueue", ":enqueued"),
        op("invoke", 3, "enqueue", ":dup"),
        op("ok", 3, "enqueue", ":dup"),
        op("invoke", 4, "dequeue", "nil"),
        op("invoke", 5, "dequeue", "nil"),
        op("ok", 5, "dequeue", ":wtf"),
        op("invoke", 6, "dequeue", "nil"),
        op("ok", 6, "dequeue", ":dup"),
        op("invoke", 7, "dequeue", "nil"),
        op("ok", 7, "dequeue", ":dup"),
    ]
    .concat();
    assert_eq!(
        check(&pathological, Workload::TotalQueue).to_edn(),
        "{:valid? false, :attempt-count 3, :acknowledged-count 2, :ok-count 1, :unexpected-count 1, \
         :duplicated-count 1, :lost-count 1, :recovered-count 0, :lost #{:enqueued}, :unexpected #{:wtf}, \
         :duplicated #{:dup}, :recovered #{}}"
    );
}

/// Drains expand to one dequeue per element; a duplicate counts as often
/// as it repeats; a crashed drain cannot be expanded (Jepsen throws:
/// unknown, with its message).
#[test]
fn total_queue_expands_drains() {
    let h = [
        op("invoke", 1, "enqueue", "1"),
        op("ok", 1, "enqueue", "1"),
        op("invoke", 1, "enqueue", "2"),
        op("ok", 1, "enqueue", "2"),
        op("invoke", 2, "drain", "nil"),
        op("ok", 2, "drain", "[1 2 2 2]"),
    ]
    .concat();
    let r = check(&h, Workload::TotalQueue);
    assert_eq!(r.valid, Validity::Valid, "{}", r.to_edn());
    assert_eq!(r.get("duplicated").map(isolde::jepsen::result::edn), Some("#{2 2}".into()));
    assert_eq!(r.get("duplicated-count").map(isolde::jepsen::result::edn), Some("2".into()));
    assert_eq!(r.get("ok-count").map(isolde::jepsen::result::edn), Some("2".into()));
    let h = [op("invoke", 1, "enqueue", "1"), op("ok", 1, "enqueue", "1"), op("info", 2, "drain", "nil")].concat();
    let r = check(&h, Workload::TotalQueue);
    assert_eq!(r.valid, Validity::Unknown);
    let err = r.get("error").map(isolde::jepsen::result::edn).unwrap_or_default();
    assert!(err.contains("Not sure how to handle a crashed drain operation: {:type :info, :f :drain"), "{err}");
    // Without the drain, the acknowledged 1 is lost.
    let h = [op("invoke", 1, "enqueue", "1"), op("ok", 1, "enqueue", "1")].concat();
    let r = check(&h, Workload::TotalQueue);
    assert_eq!((r.valid, r.get("lost").map(isolde::jepsen::result::edn)), (Validity::Invalid, Some("#{1}".into())));
}

/// Jepsen's `unique-ids-test`.
#[test]
fn jepsen_unique_ids_test() {
    let gen = |p: i64, v: &str| [op("invoke", p, "generate", "nil"), op("ok", p, "generate", v)].concat();
    let h = [gen(0, "0"), gen(1, "1"), gen(2, "0"), gen(3, "0"), op("invoke", 4, "generate", "nil")].concat()
        + &op("info", 4, "generate", "nil");
    assert_eq!(
        check(&h, Workload::UniqueIds).to_edn(),
        "{:valid? false, :attempted-count 5, :acknowledged-count 4, :duplicated-count 1, :duplicated {0 3}, \
         :range [0 1]}"
    );
    let h = op("invoke", 0, "generate", "nil");
    assert_eq!(
        check(&h, Workload::UniqueIds).to_edn(),
        "{:valid? true, :attempted-count 1, :acknowledged-count 0, :duplicated-count 0, :duplicated {}, \
         :range [nil nil]}"
    );
}

/// `:duplicated` keeps the 48 most frequent duplicates (ties: the greatest
/// ids), sorted by id; `:duplicated-count` counts them all.
#[test]
fn unique_ids_shows_48_duplicates() {
    let mut h = String::new();
    for id in 0..60 {
        let times = if id == 7 { 5 } else { 2 };
        for _ in 0..times {
            h += &op("invoke", 0, "generate", "nil");
            h += &op("ok", 0, "generate", &id.to_string());
        }
    }
    let r = check(&h, Workload::UniqueIds);
    assert_eq!(r.get("duplicated-count").map(isolde::jepsen::result::edn), Some("60".into()));
    let shown = r.get("duplicated").map(isolde::jepsen::result::edn).unwrap_or_default();
    // 7 (five times), then the 47 greatest of the rest: 13..59.
    let want: Vec<String> = std::iter::once("7 5".to_string()).chain((13..60).map(|i| format!("{i} 2"))).collect();
    assert_eq!(shown, format!("{{{}}}", want.join(", ")));
}

#[test]
fn detection_and_model_errors() {
    let q = [op("invoke", 1, "enqueue", "1"), op("ok", 1, "enqueue", "1")].concat();
    assert_eq!(detect(&ops(&q)), Ok(Workload::Queue));
    let tq = q.clone() + &op("invoke", 2, "drain", "nil") + &op("ok", 2, "drain", "[1]");
    assert_eq!(detect(&ops(&tq)), Ok(Workload::TotalQueue));
    let u = [op("invoke", 1, "generate", "nil"), op("ok", 1, "generate", "1")].concat();
    assert_eq!(detect(&ops(&u)), Ok(Workload::UniqueIds));
    // Another workload's op, or a drain whose value is not a collection.
    for (h, w) in [
        (q.clone() + &op("ok", 1, "add", "1"), Workload::TotalQueue),
        (op("ok", 1, "drain", "3"), Workload::Queue),
        (u.clone() + &op("ok", 1, "read", "nil"), Workload::UniqueIds),
    ] {
        match check_ops(&ops(&h), w, &JepsenOptions::default()) {
            Err(e @ JepsenError::Model { .. }) => {
                let msg = e.to_string();
                assert!(msg.starts_with("q.edn:") && msg.contains("wrong model selected?"), "{msg}");
            }
            other => panic!("{h}: {other:?}"),
        }
    }
}

/// `isolde gen queue | unique-ids`: fault-free runs are valid under every
/// checker; each planted fault is found where the generator's table says.
#[test]
fn generated_histories_and_planted_faults() {
    let dir = temp_dir("gen-queue");
    let gen = |kind: &str, inject: &str, name: &str| {
        let f = dir.join(name);
        let path = f.to_str().expect("utf8").to_string();
        let mut args = vec!["gen", kind, "--ops", "3000", "--info-fraction", "0.05", "--read-fraction", "0.4", "-o"];
        args.push(&path);
        if !inject.is_empty() {
            args.extend(["--inject", inject]);
        }
        let r = isolde(&args, None, LIMIT);
        assert_eq!(r.code, 0, "{r:?}");
        (path, r.stderr)
    };
    let analyze = |w: &str, f: &str| {
        let r = isolde(&["analyze", "--workload", w, "-f", "json", f], None, LIMIT);
        (r.code, r.json())
    };
    let (clean, _) = gen("queue", "", "clean.edn");
    for w in ["queue", "total-queue"] {
        assert_eq!(analyze(w, &clean).0, 0, "{w}");
    }
    // FIFO: the model takes enqueues in invocation order, so concurrent
    // enqueues that land in the other order are refused (Jepsen's queue
    // looks for no other order); one client's history is FIFO.
    let one = dir.join("one.edn");
    let one = one.to_str().expect("utf8");
    let r = isolde(
        &["gen", "queue", "--ops", "2000", "--processes", "1", "--read-fraction", "0.4", "-o", one],
        None,
        LIMIT,
    );
    assert_eq!(r.code, 0, "{r:?}");
    let r = isolde(&["analyze", "--workload", "queue", "--queue-model", "fifo", "-f", "json", one], None, LIMIT);
    assert_eq!(r.code, 0, "{r:?}");
    // Detected as total-queue (it drains).
    let r = isolde(&["analyze", "-f", "json", &clean], None, LIMIT);
    assert_eq!((r.code, r.json()["workload"].clone()), (0, serde_json::json!("total-queue")), "{r:?}");

    let (lost, err) = gen("queue", "lost-element", "lost.edn");
    assert!(err.contains("injected 1 x lost-element"), "{err}");
    let (code, v) = analyze("total-queue", &lost);
    assert_eq!((code, v["lost-count"].clone()), (1, serde_json::json!(1)), "{v}");

    let (unexpected, _) = gen("queue", "unexpected-element", "unexpected.edn");
    let (code, v) = analyze("total-queue", &unexpected);
    assert_eq!((code, v["unexpected"].clone()), (1, serde_json::json!([-1])), "{v}");
    assert_eq!(analyze("queue", &unexpected).1["error"], serde_json::json!("can't dequeue -1"));

    let (dup, _) = gen("queue", "duplicate-element", "dup.edn");
    let (code, v) = analyze("total-queue", &dup);
    assert_eq!((code, v["duplicated-count"].clone()), (0, serde_json::json!(1)), "duplicates do not invalidate: {v}");
    assert_eq!(analyze("queue", &dup).0, 1);

    let (ids, _) = gen("unique-ids", "", "ids.edn");
    let (code, v) = analyze("unique-ids", &ids);
    assert_eq!((code, v["duplicated-count"].clone()), (0, serde_json::json!(0)), "{v}");
    let (ids, _) = gen("unique-ids", "duplicate-element", "ids-dup.edn");
    let (code, v) = analyze("unique-ids", &ids);
    assert_eq!((code, v["duplicated-count"].clone()), (1, serde_json::json!(1)), "{v}");
    // A fault the workload does not have is refused.
    let r = isolde(&["gen", "unique-ids", "--inject", "lost-element"], None, LIMIT);
    assert_eq!(r.code, 2, "{r:?}");
}
