//! How the weak-level checks treat what real histories contain (weak.md §4):
//! `:info` and `:fail` transactions, repeated values, session order and its
//! absence, list-append reads; and the model names on the command line.

use crate::support;

use isolde::weak::front::Sessions;
use isolde::weak::witness::Cause;
use isolde::weak::{check_front, Level, Options, Verdict};
use std::time::Duration;
use support::cli::{anomaly_types, isolde, temp_dir};
use support::weak::{edn, front_of, history, ops_edn as ops, weak_ladder};

const T: bool = true;
const F: bool = false;

#[test]
fn an_observed_info_transaction_committed_and_its_writes_count() {
    let h = edn(&ops(&[("info", 0, "[[:w :x 1] [:w :y 1]]"), ("ok", 1, "[[:r :y nil] [:r :x 1]]")]));
    assert_eq!(weak_ladder(&h), ([T, F, F], Some('k')));
}

#[test]
fn an_unobserved_info_transaction_is_dropped() {
    let h = edn(&ops(&[("info", 0, "[[:w :x 1] [:w :y 1]]"), ("ok", 1, "[[:r :y nil] [:r :x nil]]")]));
    assert_eq!(weak_ladder(&h), ([T, T, T], None));
}

#[test]
fn an_invocation_nothing_completed_may_have_committed() {
    // Jepsen's and Elle's reading of an invocation without completion
    // (and, while following, a transaction still running): `:info`. Its
    // write explains the read; a value nobody wrote or invoked does not.
    let h = edn(&ops(&[("invoke", 0, "[[:w :x 1]]"), ("invoke", 1, "[[:r :x nil]]"), ("ok", 1, "[[:r :x 1]]")]));
    assert_eq!(weak_ladder(&h), ([T, T, T], None));
    let garbage = edn(&ops(&[("invoke", 0, "[[:w :x 1]]"), ("invoke", 1, "[[:r :x nil]]"), ("ok", 1, "[[:r :x 2]]")]));
    assert_eq!(weak_ladder(&garbage), ([F, F, F], Some('a')));
}

#[test]
fn info_ends_a_session() {
    // Without the :info in between, the last read is E-RA-s (read atomic ✗).
    let plain = edn(&ops(&[("ok", 0, "[[:w :x 1]]"), ("ok", 0, "[[:r :x nil]]")]));
    assert_eq!(weak_ladder(&plain).0, [T, F, F]);
    let h = edn(&ops(&[("ok", 0, "[[:w :x 1]]"), ("info", 0, "[[:w :y 5]]"), ("ok", 0, "[[:r :x nil]]")]));
    assert_eq!(weak_ladder(&h).0, [T, T, T]);
}

#[test]
fn a_read_of_a_failed_write_breaks_every_level() {
    let h = edn(&ops(&[("fail", 0, "[[:w :x 1]]"), ("ok", 1, "[[:r :x 1]]")]));
    assert_eq!(weak_ladder(&h), ([F, F, F], Some('b')));
}

#[test]
fn repeated_values_valid_when_some_writer_explains_them() {
    let h = history(&[(0, "[[:w :x 1]]"), (1, "[[:w :x 1]]"), (2, "[[:r :x 1]]")]);
    assert_eq!(weak_ladder(&h), ([T, T, T], None));
}

#[test]
fn repeated_values_invalid_only_when_every_writer_fails() {
    // x = 1 came from T0 or T1; either way y = nil is a fractured read.
    let h = history(&[(0, "[[:w :x 1] [:w :y 1]]"), (1, "[[:w :x 1] [:w :y 2]]"), (2, "[[:r :y nil] [:r :x 1]]")]);
    assert_eq!(weak_ladder(&h).0, [T, F, F]);
    let f = front_of(&h, Sessions::Process);
    let Verdict::Invalid(v) = check_front(&f, Level::ReadAtomic, &Options::default()) else { panic!("invalid") };
    assert_eq!((v.assignments, v.assumed.len()), (2, 1));
    // One writer fails, the other does not: valid, with the witness.
    let h = history(&[(0, "[[:w :x 1] [:w :y 1]]"), (1, "[[:w :x 1]]"), (2, "[[:r :y nil] [:r :x 1]]")]);
    assert_eq!(weak_ladder(&h).0, [T, T, T]);
}

#[test]
fn too_many_writer_assignments_is_unknown_never_valid() {
    let mut lines: Vec<(i64, String)> = (0..3).map(|p| (p, "[[:w :x 1] [:w :y 1]]".to_string())).collect();
    let reads: Vec<String> = (0..6).map(|_| "[:r :x 1] [:r :y 1]".to_string()).collect();
    lines.push((9, format!("[{}]", reads.join(" "))));
    let refs: Vec<(i64, &str)> = lines.iter().map(|(p, v)| (*p, v.as_str())).collect();
    let h = history(&refs);
    let f = front_of(&h, Sessions::Process);
    let opts = Options { max_assignments: 16, ..Options::default() };
    assert!(matches!(check_front(&f, Level::Causal, &opts), Verdict::Unknown(_)));
    // A violation that holds without the ambiguous reads is still found.
    let mut with_bad = refs.clone();
    with_bad.push((7, "[[:w :z 1]]"));
    with_bad.push((7, "[[:r :z nil]]"));
    let f = front_of(&history(&with_bad), Sessions::Process);
    assert!(matches!(check_front(&f, Level::ReadAtomic, &opts), Verdict::Invalid(_)));
}

#[test]
fn without_sessions_only_data_dependencies_count() {
    let h = history(&[(0, "[[:w :x 1]]"), (0, "[[:r :x nil]]")]);
    for (sessions, want) in [(Sessions::Process, false), (Sessions::None, true)] {
        let f = front_of(&h, sessions);
        let v = check_front(&f, Level::Causal, &Options { sessions, ..Options::default() });
        assert_eq!(matches!(v, Verdict::Valid(_)), want, "{sessions:?}");
    }
}

#[test]
fn list_append_uses_the_last_element_and_version_edges() {
    // E-RA with lists.
    let h = history(&[(0, "[[:append :x 1] [:append :y 1]]"), (1, "[[:r :y []] [:r :x [1]]]")]);
    assert_eq!(weak_ladder(&h), ([T, F, F], Some('k')));
    // Two reads disagree on the order of the appends: a cycle of version
    // edges, which breaks every level.
    let h =
        history(&[(0, "[[:append :x 1]]"), (1, "[[:append :x 2]]"), (2, "[[:r :x [2 1]]]"), (3, "[[:r :x [1 2]]]")]);
    let f = front_of(&h, Sessions::Process);
    let Verdict::Invalid(v) = check_front(&f, Level::ReadCommitted, &Options::default()) else { panic!("invalid") };
    assert!(matches!(v.cause, Cause::Cycle(_)));
    assert_eq!((v.tap, v.anomaly_name().as_str()), ('g', "G0"));
}

/// A list-append transaction that reads a key twice and sees it grow is a
/// non-repeatable read, which Biswas–Enea read committed allows (Elle calls
/// it `internal`); seeing it shrink reads an older version after a newer
/// one, which read committed forbids.
#[test]
fn list_append_non_repeatable_read_at_read_committed() {
    let dir = temp_dir("weak-semantics-lists");
    let t = Duration::from_secs(60);
    let run = |name: &str, reads: &str, model: &str| {
        let p = dir.join(name);
        let text = ops(&[("ok", 0, "[[:append :x 1]]"), ("ok", 1, "[[:append :x 2]]"), ("ok", 2, reads)]);
        std::fs::write(&p, text).expect("write");
        isolde(&["analyze", &p.to_string_lossy(), "--format", "json", "-m", model], None, t)
    };
    let grows = run("grows.edn", "[[:r :x [1]] [:r :x [1 2]]]", "read-committed-be");
    assert_eq!(grows.code, 0, "{grows:?}");
    assert_eq!(grows.json()["valid?"], serde_json::Value::Bool(true));
    // Any model that prohibits Elle's `internal` still counts it.
    assert_eq!(run("grows-ra.edn", "[[:r :x [1]] [:r :x [1 2]]]", "read-atomic").code, 1);
    let shrinks = run("shrinks.edn", "[[:r :x [1 2]] [:r :x [1]]]", "read-committed-be");
    assert_eq!(shrinks.code, 1, "{shrinks:?}");
}

#[test]
fn cli_sessions_flag_and_model_names() {
    let dir = temp_dir("weak-semantics");
    let p = dir.join("e-ra-s.edn");
    std::fs::write(&p, ops(&[("ok", 0, "[[:w :x 1]]"), ("ok", 0, "[[:r :x nil]]")])).expect("write");
    let path = p.to_string_lossy();
    let t = Duration::from_secs(60);
    let r = isolde(&["analyze", &path, "--format", "json", "-m", "read-atomic"], None, t);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(anomaly_types(&r.json()), vec!["fractured-read".to_string()]);
    let not: Vec<String> = serde_json::from_value(r.json()["not"].clone()).expect("not");
    assert!(not.contains(&"read-atomic".to_string()), "{not:?}");
    // The violation needs session order: plain serializability is not ruled out.
    let also: Vec<String> = serde_json::from_value(r.json()["also-not"].clone()).expect("also-not");
    assert!(!also.contains(&"serializable".to_string()) && also.contains(&"strong-session-serializable".to_string()));
    let r = isolde(&["analyze", &path, "--format", "json", "-m", "read-atomic", "--sessions", "none"], None, t);
    assert_eq!(r.code, 0, "{r:?}");
    let r = isolde(&["analyze", &path, "--format", "json", "-m", "read-committed-be"], None, t);
    assert_eq!(r.code, 0, "{r:?}");
    let r = isolde(&["analyze", &path, "-m", "read-atomik"], None, t);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("read-committed-be") && r.stderr.contains("transactional-causal"), "{}", r.stderr);
}

#[test]
fn model_all_prints_the_ladder_with_the_weakest_violated_level() {
    let dir = temp_dir("weak-ladder");
    let p = dir.join("e-cc.edn");
    std::fs::write(
        &p,
        ops(&[("ok", 0, "[[:w :x 1]]"), ("ok", 1, "[[:r :x 1] [:w :y 1]]"), ("ok", 2, "[[:r :y 1] [:r :x nil]]")]),
    )
    .expect("write");
    let path = p.to_string_lossy();
    let t = Duration::from_secs(60);
    let r = isolde(&["analyze", &path, "--format", "table", "-m", "all"], None, t);
    assert_eq!(r.code, 1, "{r:?}");
    // The table of levels: one row per level, its verdict and how.
    let row = |model: &str| {
        r.stdout
            .lines()
            .find(|l| l.split(['│', '┆']).nth(1).is_some_and(|c| c.trim() == model))
            .unwrap_or_else(|| panic!("{model} row: {}", r.stdout))
            .to_string()
    };
    assert!(row("read-committed-be").contains(" valid "), "{}", r.stdout);
    assert!(row("read-atomic").contains(" valid "), "{}", row("read-atomic"));
    let cc = row("causal-cerone");
    assert!(cc.contains("invalid") && cc.contains("causal-violation (weak)"), "{}", r.stdout);
    assert!(row("prefix").contains("invalid"), "prefix implies causal: {}", r.stdout);
    assert!(row("strong-session-serializable").contains("invalid"));
    let r = isolde(&["analyze", &path, "--format", "json", "-m", "all"], None, t);
    assert!(anomaly_types(&r.json()).contains(&"causal-violation".to_string()), "{:?}", r.json());
}

#[test]
fn cli_undecided_is_exit_3_and_no_committed_transaction_is_not_valid() {
    let dir = temp_dir("weak-unknown");
    let t = Duration::from_secs(60);
    // Nine reads, each of a value two transactions wrote: 512 assignments.
    let mut lines: Vec<(&str, i64, String)> =
        (0..9).flat_map(|k| [("ok", 0, format!("[[:w {k} 1]]")), ("ok", 1, format!("[[:w {k} 1]]"))]).collect();
    let reads: Vec<String> = (0..9).map(|k| format!("[:r {k} 1]")).collect();
    lines.push(("ok", 2, format!("[{}]", reads.join(" "))));
    let refs: Vec<(&str, i64, &str)> = lines.iter().map(|(a, b, c)| (*a, *b, c.as_str())).collect();
    let p = dir.join("repeated.edn");
    std::fs::write(&p, ops(&refs)).expect("write");
    let r = isolde(&["analyze", &p.to_string_lossy(), "--format", "json", "-m", "read-atomic"], None, t);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(anomaly_types(&r.json()).contains(&"exact-check-unknown".to_string()), "{:?}", r.json());
    // Only an indeterminate transaction: nothing committed, never valid.
    let p = dir.join("info-only.edn");
    std::fs::write(&p, ops(&[("info", 0, "[[:w :x 1]]")])).expect("write");
    let r = isolde(&["analyze", &p.to_string_lossy(), "--format", "json", "-m", "causal-cerone"], None, t);
    assert_ne!(r.code, 0, "{r:?}");
}

#[test]
fn prefix_is_decided_exactly() {
    let dir = temp_dir("weak-prefix");
    let t = Duration::from_secs(60);
    let run = |name: &str, lines: &[(&str, i64, &str)]| {
        let p = dir.join(format!("{name}.edn"));
        std::fs::write(&p, ops(lines)).expect("write");
        isolde(&["analyze", &p.to_string_lossy(), "--format", "json", "-m", "prefix"], None, t).code
    };
    // E-PC, a long fork: causal, not prefix consistent.
    let long_fork = [
        ("ok", 0, "[[:w :x 1]]"),
        ("ok", 1, "[[:w :y 1]]"),
        ("ok", 2, "[[:r :x 1] [:r :y nil]]"),
        ("ok", 3, "[[:r :y 1] [:r :x nil]]"),
    ];
    assert_eq!(run("long-fork", &long_fork), 1);
    // A lost update: prefix consistent (snapshot isolation is not).
    let lost = [("ok", 0, "[[:r :x nil] [:w :x 1]]"), ("ok", 1, "[[:r :x nil] [:w :x 2]]")];
    assert_eq!(run("lost-update", &lost), 0);
    // Session snapshot isolation holds, so prefix consistency does.
    assert_eq!(run("plain", &[("ok", 0, "[[:w :x 1]]"), ("ok", 1, "[[:r :x 1]]")]), 0);
    // A causal violation refutes it.
    let e_cc = [("ok", 0, "[[:w :x 1]]"), ("ok", 1, "[[:r :x 1] [:w :y 1]]"), ("ok", 2, "[[:r :y 1] [:r :x nil]]")];
    assert_eq!(run("e-cc", &e_cc), 1);
}
