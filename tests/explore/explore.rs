//! `isolde explore` on the paper's figures (spec `explore.md`), the issue's
//! counter, classic anomalies, bad programs, budgets, and the command line
//! (exit codes, JSON keys, witnesses that `isolde analyze` checks).

use crate::support;

use isolde::explore::witness::Source::{self, Init, Txn};
use isolde::explore::{explore, explore_each, Level, Options, Outcome, Program, Verdict};
use isolde::si_check::Semantics;
use isolde::weak;
use std::collections::BTreeSet;
use std::time::Duration;
use support::cli::{isolde, temp_dir};
use support::explore::{assert_matches_brute_force, canon, Canon};

const RC: Level = Level::Weak(weak::Level::ReadCommitted);
const RA: Level = Level::Weak(weak::Level::ReadAtomic);
const CC: Level = Level::Weak(weak::Level::Causal);
const SI: Level = Level::Strong(Semantics::SnapshotIsolation);
const SER: Level = Level::Strong(Semantics::Serializable);

const COUNTER: &str = "; two sessions increment the same counter
{:init {:x 0}
 :sessions [[[[:r :x a] [:w :x (+ a 1)]]]
            [[[:r :x b] [:w :x (+ b 1)]]]]
 :assert (not (and (= a 0) (= b 0)))}";

/// The consistent histories of `text` at `level` (asserting none repeats)
/// and the outcome.
fn histories(text: &str, level: Level) -> (BTreeSet<Canon>, Outcome) {
    let p = Program::parse(text).expect("parses");
    let mut set = BTreeSet::new();
    let out = explore_each(&p, level, &Options::default(), |v, consistent, _| {
        if consistent {
            assert!(set.insert(canon(v)), "a history output twice at {}", level.name());
        }
    })
    .expect("runs");
    if !level.filtered() {
        assert_eq!(out.stats.blocked, 0, "explore-ce blocked");
    }
    (set, out)
}

/// A transaction of a history identity: (session, index) from 0, aborted,
/// external reads as (key, source).
type T<'a> = ((usize, usize), bool, &'a [(&'a str, Source)]);

/// A history identity.
fn h(txns: &[T]) -> Canon {
    let mut c: Canon =
        txns.iter().map(|(p, a, rs)| (*p, *a, rs.iter().map(|(k, s)| (k.to_string(), *s)).collect())).collect();
    c.sort();
    c
}

#[test]
fn counter_fails_below_snapshot_isolation_and_holds_above() {
    let p = Program::parse(COUNTER).unwrap();
    for (level, histories, verdict) in [
        (RC, 3, Verdict::Violated),
        (RA, 3, Verdict::Violated),
        (CC, 3, Verdict::Violated),
        (Level::Prefix, 3, Verdict::Violated),
        (SI, 2, Verdict::Holds),
        (SER, 2, Verdict::Holds),
    ] {
        let out = explore(&p, level, &Options { witnesses: 5, ..Options::default() }).unwrap();
        assert_eq!(out.stats.histories, histories, "{}", level.name());
        assert_eq!(out.stats.explored, 3, "{}: explored under causal", level.name());
        assert_eq!(out.verdict(), verdict, "{}", level.name());
        assert_eq!(out.witnesses.len() as u64, out.stats.violations);
        if verdict == Verdict::Violated {
            assert_eq!(out.stats.violations, 1);
            let text = out.witnesses[0].to_text();
            assert!(text.contains("T1.1: r :x = 0 (from init); w :x = 1;"), "{text}");
            assert!(text.contains("locals: a = 0, b = 0"), "{text}");
        }
    }
    assert_matches_brute_force(COUNTER);
}

#[test]
fn worked_example_i_one_read_one_write() {
    let (set, _) = histories("{:sessions [[[[:r :x a]]] [[[:w :x 1]]]]}", CC);
    let expect: BTreeSet<Canon> = [
        h(&[((0, 0), false, &[(":x", Init)]), ((1, 0), false, &[])]),
        h(&[((0, 0), false, &[(":x", Txn(1, 0))]), ((1, 0), false, &[])]),
    ]
    .into();
    assert_eq!(set, expect);
}

#[test]
fn fig12_read_latest_gives_nine_histories_once() {
    let text = "{:sessions [[[[:w :x 2]]] [[[:r :x a]]] [[[:r :x b]]] [[[:w :x 4]]]]}";
    let (set, out) = histories(text, CC);
    assert_eq!(set.len(), 9);
    assert_eq!(out.stats.histories, 9);
    assert!(out.stats.refused_swaps > 0, "readLatest must refuse some swaps here");
    assert_matches_brute_force(text);
}

#[test]
fn fig13_swapped_reads_give_four_histories_once() {
    let text = "{:sessions [[[[:r :x a]]] [[[:r :y b]]] [[[:w :y 3]]] [[[:w :x 4]]]]}";
    let (set, out) = histories(text, CC);
    assert_eq!(set.len(), 4);
    assert_eq!(out.stats.histories, 4);
    assert_matches_brute_force(text);
}

#[test]
fn fig10_read_committed_never_reads_older_after_newer() {
    let text = "{:sessions [[[[:r :x a] [:r :y b]]] [[[:w :x 2] [:w :y 2]]]]}";
    let (set, _) = histories(text, RC);
    assert_eq!(set.len(), 3);
    let fractured = h(&[((0, 0), false, &[(":x", Txn(1, 0)), (":y", Init)]), ((1, 0), false, &[])]);
    assert!(!set.contains(&fractured));
    let (ra, _) = histories(text, RA);
    assert_eq!(ra.len(), 2, "read atomic also forbids reading x's new value with y's old one");
}

#[test]
fn fig11_abort_disappears_after_a_swap() {
    let text = "{:sessions [[[[:r :x a] [:if (= a 0) [[:abort]]] [:w :y 1]] [[:r :x c]]]
                              [[[:w :y 3]] [[:w :x 4]]]]}";
    let (set, _) = histories(text, CC);
    let aborted = h(&[
        ((0, 0), true, &[(":x", Init)]),
        ((0, 1), false, &[(":x", Init)]),
        ((1, 0), false, &[]),
        ((1, 1), false, &[]),
    ]);
    let committed = h(&[
        ((0, 0), false, &[(":x", Txn(1, 1))]),
        ((0, 1), false, &[(":x", Txn(1, 1))]),
        ((1, 0), false, &[]),
        ((1, 1), false, &[]),
    ]);
    assert!(set.contains(&aborted) && set.contains(&committed), "{set:?}");
    assert_matches_brute_force(text);
}

#[test]
fn fig3_causal_violation_is_read_atomic() {
    // t1 writes x; t2 reads x from t1 and writes x; t4 reads x from t2 and
    // writes y; t3 reads y from t4 and x from t1.
    let text = "{:sessions [[[[:w :x 1]]] [[[:r :x a] [:w :x 2]]] [[[:r :x b] [:w :y 1]]] [[[:r :y c] [:r :x d]]]]}";
    let fig3 = h(&[
        ((0, 0), false, &[]),
        ((1, 0), false, &[(":x", Txn(0, 0))]),
        ((2, 0), false, &[(":x", Txn(1, 0))]),
        ((3, 0), false, &[(":y", Txn(2, 0)), (":x", Txn(0, 0))]),
    ]);
    assert!(histories(text, RA).0.contains(&fig3));
    assert!(!histories(text, CC).0.contains(&fig3));
}

#[test]
fn fig8_next_resumes_the_pending_transaction_with_the_value_read() {
    // t1 = [a := read(x); if (a == 3) write(y, 1)] reading 3 from t3 goes on
    // with write(y, 1), which t4 can then read.
    let text = "{:sessions [[[[:r :x a] [:if (= a 3) [[:w :y 1]]]]] [[[:w :x 3]]] [[[:r :y b]]]]
                 :assert (not (= b 1))}";
    let (set, out) = histories(text, CC);
    let fig8 = h(&[((0, 0), false, &[(":x", Txn(1, 0))]), ((1, 0), false, &[]), ((2, 0), false, &[(":y", Txn(0, 0))])]);
    assert!(set.contains(&fig8), "{set:?}");
    assert_eq!(out.stats.violations, 1, "only that history has b = 1");
    assert_matches_brute_force(text);
}

#[test]
fn fig9_causal_past_hides_init() {
    let text = "{:sessions [[[[:w :x 1] [:w :y 1]]] [[[:r :y a]] [[:r :x b]]]]}";
    let old = h(&[((0, 0), false, &[]), ((1, 0), false, &[(":y", Txn(0, 0))]), ((1, 1), false, &[(":x", Init)])]);
    // t1 reaches t3 by wr then so: two steps, which read atomic ignores.
    assert!(histories(text, RA).0.contains(&old));
    assert!(!histories(text, CC).0.contains(&old));
}

#[test]
fn fig7_read_atomic_forbids_reading_init_after_a_writer_of_the_key() {
    let text = "{:sessions [[[[:w :x 1] [:w :y 1]]] [[[:w :x 2]]] [[[:w :x 3]] [[:r :x b] [:r :y a]]]]}";
    let stale = h(&[
        ((0, 0), false, &[]),
        ((1, 0), false, &[]),
        ((2, 0), false, &[]),
        ((2, 1), false, &[(":x", Init), (":y", Txn(0, 0))]),
    ]);
    let other = h(&[
        ((0, 0), false, &[]),
        ((1, 0), false, &[]),
        ((2, 0), false, &[]),
        ((2, 1), false, &[(":x", Txn(1, 0)), (":y", Txn(0, 0))]),
    ]);
    assert!(histories(text, RC).0.contains(&stale));
    assert!(!histories(text, RA).0.contains(&stale));
    // t2 is outside t4's causal past, yet reading it is consistent (t2
    // commits after t1 and t3).
    assert!(histories(text, CC).0.contains(&other));
    assert_matches_brute_force(text);
}

#[test]
fn appendix_d_snapshot_isolation_is_filtered_not_explored() {
    let text = "{:sessions [[[[:r :x a] [:w :z 1] [:w :y 1]]] [[[:r :y b] [:w :z 2] [:w :x 2]]]]}";
    let (cc, _) = histories(text, CC);
    assert_eq!(cc.len(), 3);
    for level in [SI, SER] {
        let (set, out) = histories(text, level);
        assert_eq!(set.len(), 2, "{}", level.name());
        assert_eq!(out.stats.explored, 3, "explore-ce* explores every causal history");
    }
}

#[test]
fn write_skew_separates_snapshot_isolation_from_serializability() {
    let text = "{:sessions [[[[:r :x a] [:r :y b] [:if (= (+ a b) 0) [[:w :x 1]]]]]
                            [[[:r :x c] [:r :y d] [:if (= (+ c d) 0) [[:w :y 1]]]]]]
                 :assert (not (and (= a 0) (= b 0) (= c 0) (= d 0)))}";
    let p = Program::parse(text).unwrap();
    assert_eq!(explore(&p, SI, &Options::default()).unwrap().verdict(), Verdict::Violated);
    assert_eq!(explore(&p, SER, &Options::default()).unwrap().verdict(), Verdict::Holds);
    assert_matches_brute_force(text);
}

#[test]
fn row_keys_and_sets_model_a_table() {
    // Two sessions enroll a student each into a course of capacity 1.
    let text = "{:init {:enrolled #{}}
                 :sessions [[[[:r :enrolled s] [:if (< (count s) 1) [[:w :enrolled (conj s 1)] [:w [:student 1] 1]]]]]
                            [[[:r :enrolled t] [:if (< (count t) 1) [[:w :enrolled (conj t 2)] [:w [:student 2] 1]]]]]]
                 :assert (or (= (count s) 1) (= (count t) 1) (< (count (conj s 1 2)) 0))}";
    let p = Program::parse(text).unwrap();
    let cc = explore(&p, CC, &Options { witnesses: 1, ..Options::default() }).unwrap();
    assert_eq!(cc.verdict(), Verdict::Violated, "both see the course empty under causal");
    assert!(cc.witnesses[0].to_text().contains("w [:student 1] = 1"), "{}", cc.witnesses[0].to_text());
    assert_eq!(explore(&p, SI, &Options::default()).unwrap().verdict(), Verdict::Holds);
    assert_matches_brute_force(text);
}

#[test]
fn run_time_type_errors_name_the_line() {
    let p = Program::parse("{:init {:s #{1}}\n :sessions [[[[:r :s a]\n [:w :x (+ a 1)]]]]}").unwrap();
    let e = explore(&p, CC, &Options::default()).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.msg.contains("found a set"), "{e}");
}

#[test]
fn budgets_stop_without_claiming_holds() {
    let p = Program::parse("{:sessions [[[[:r :x a]]] [[[:w :x 1]]] [[[:w :x 2]]]]}").unwrap();
    let out = explore(&p, CC, &Options { max_histories: Some(1), ..Options::default() }).unwrap();
    assert_eq!(out.verdict(), Verdict::Unknown);
    assert!(out.stopped.as_deref().unwrap_or("").contains("max-histories"));
    let out = explore(&p, CC, &Options { timeout: Some(Duration::ZERO), ..Options::default() }).unwrap();
    assert_eq!(out.verdict(), Verdict::Unknown);
    // A budget large enough changes nothing.
    let out = explore(&p, CC, &Options { max_histories: Some(100), ..Options::default() }).unwrap();
    assert_eq!((out.verdict(), out.stats.histories), (Verdict::Holds, 3));
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn cli_exit_codes_and_json_keys() {
    let dir = temp_dir("explore-cli");
    let counter = write(&dir, "counter.edn", COUNTER);
    let r = isolde(&["explore", &counter, "--level", "causal-cerone", "--format", "json"], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    let j = r.json();
    assert_eq!(
        (j["histories"].as_u64(), j["violations"].as_u64(), j["explored"].as_u64()),
        (Some(3), Some(1), Some(3))
    );
    assert_eq!(j["valid?"], serde_json::json!(false));
    assert_eq!(j["witnesses"][0]["transactions"][1]["events"][0]["from"], "init");
    let r = isolde(&["explore", &counter, "--level", "serializable", "--format", "json"], None, LIMIT);
    assert_eq!(r.code, 0, "{r:?}");
    let j = r.json();
    assert_eq!(
        (j["histories"].as_u64(), j["explored"].as_u64(), j["valid?"].as_bool()),
        (Some(2), Some(3), Some(true))
    );
    let r = isolde(&["explore", &counter, "--level", "ser", "--max-histories", "1", "-f", "json"], None, LIMIT);
    assert_eq!(r.code, 3, "{r:?}");
    assert_eq!(r.json()["valid?"], "unknown");
    let r = isolde(&["explore", &counter, "--level", "transactional-causal"], None, LIMIT);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("the assertion fails in 1 of 3 histories"), "{}", r.stdout);
    let r = isolde(&["explore", &counter, "--level", "linearizable"], None, LIMIT);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown level"), "{}", r.stderr);
}

#[test]
fn cli_bad_programs_exit_2_with_file_and_line() {
    let dir = temp_dir("explore-bad");
    for (text, want) in [
        ("{:sessions [[[[:r :x a]\n [:read :x b]]]]}", "line 2: unknown statement :read"),
        ("{:sessions [[[[:r :x a]]]\n [[[:w :x (+ q 1)]]]]}", "line 2: unbound local q"),
        ("{:sessions [[[[:r :x a]]]", "expected ']' to close"),
        ("{:init {:s #{1}}\n :sessions [[[[:r :s a] [:if (> a 0) [[:w :x 1]]]]]]}", "line 2: expected an integer"),
    ] {
        let path = write(&dir, "bad.edn", text);
        let r = isolde(&["explore", &path, "--level", "read-atomic"], None, LIMIT);
        assert_eq!(r.code, 2, "{text}: {r:?}");
        assert!(r.stderr.contains(&path) && r.stderr.contains(want), "{text}: {}", r.stderr);
    }
}

#[test]
fn cli_witnesses_are_histories_analyze_accepts_and_explains() {
    let dir = temp_dir("explore-witness");
    let counter = write(&dir, "counter.edn", COUNTER);
    let out = dir.join("out");
    let out_s = out.display().to_string();
    let r = isolde(&["explore", &counter, "--level", "causal-cerone", "--all", "-d", &out_s], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    let witness = out.join("violation-1.edn");
    assert!(r.stdout.contains(&witness.display().to_string()), "{}", r.stdout);
    let w = witness.display().to_string();
    // Consistent at the level explored ...
    let r = isolde(&["analyze", &w, "--model", "causal-cerone", "-f", "json"], None, LIMIT);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json()["valid?"], serde_json::json!(true));
    // ... and the anomaly that breaks the assertion is a lost update.
    let r = isolde(&["analyze", &w, "--model", "snapshot-isolation", "-f", "json"], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("lost-update") || r.stdout.contains("G-single") || r.stdout.contains("G2"),
        "{}",
        r.stdout
    );
}
