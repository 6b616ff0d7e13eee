//! Prefix consistency decided exactly: the separating examples of weak.md
//! §1.4 (long fork invalid though causal; lost update valid though not
//! snapshot isolation; write skew valid though not serializable), lists,
//! repeated values, `:info` writers, witnesses, and histories of the prefix
//! store generator.

use crate::support;

use isolde::anomaly::Case;
use isolde::prefix::{check_prefix, PrefixOptions, PrefixVerdict};
use isolde::weak::front::Sessions;
use isolde::weak::oracle::{self, Axiom};
use support::prefix::{outcome, verdict};
use support::weak::{edn, front_of, history, ladder, ops_edn, workload};

/// The exact verdict, checked against the enumerator and with its witness
/// checked.
fn pc(h: &isolde::history::History) -> bool {
    let f = front_of(h, Sessions::Process);
    let v = verdict(h, &f, Sessions::Process, "").expect("decided");
    assert_eq!(Some(v), oracle::enumerate(&f, Axiom::Prefix), "enumerator disagrees");
    v
}

/// The anomaly name of an invalid verdict.
fn anomaly(h: &isolde::history::History) -> String {
    let f = front_of(h, Sessions::Process);
    match outcome(h, &f, Sessions::Process).verdict {
        PrefixVerdict::Invalid { anomaly, .. } => anomaly,
        v => panic!("expected invalid, got {v:?}"),
    }
}

#[test]
fn long_fork_is_causal_but_not_prefix_consistent() {
    let h = history(&[
        (0, "[[:w :x 1]]"),
        (1, "[[:w :y 1]]"),
        (2, "[[:r :x 1] [:r :y nil]]"),
        (3, "[[:r :y 1] [:r :x nil]]"),
    ]);
    assert_eq!(ladder(&h, Sessions::Process), [true, true, true, false, false, false]);
    assert!(!pc(&h));
    // Two anti-dependencies, each after a read: no single write order is
    // open (both reads are of the initial state), one case.
    assert_eq!(anomaly(&h), "G-nonadjacent-item");
}

#[test]
fn lost_update_is_prefix_consistent() {
    let h = history(&[(0, "[[:r :x nil] [:w :x 1]]"), (1, "[[:r :x nil] [:w :x 2]]")]);
    assert_eq!(ladder(&h, Sessions::Process), [true, true, true, true, false, false]);
    assert!(pc(&h));
    // And seen afterwards by a third transaction: still fine.
    let h = history(&[(0, "[[:r :x nil] [:w :x 1]]"), (1, "[[:r :x nil] [:w :x 2]]"), (2, "[[:r :x 2]]")]);
    assert!(pc(&h));
}

#[test]
fn write_skew_is_prefix_consistent() {
    let h = history(&[(0, "[[:r :x nil] [:r :y nil] [:w :x 1]]"), (1, "[[:r :x nil] [:r :y nil] [:w :y 1]]")]);
    assert_eq!(ladder(&h, Sessions::Process), [true, true, true, true, true, false]);
    assert!(pc(&h));
}

#[test]
fn a_lost_append_is_prefix_consistent_but_a_missing_session_write_is_not_read() {
    // Both appends read the empty list; 2's append is lost. PC allows it
    // (an append is a read-modify-write), snapshot isolation does not.
    let h = history(&[(0, "[[:append :x 1]]"), (1, "[[:append :x 2]]"), (2, "[[:r :x [1]]]")]);
    assert_eq!(workload(&h), isolde::anomaly::Workload::ListAppend);
    assert!(pc(&h));
    // Session order: after appending 2 the session reads [1, 2] then [1]:
    // 2 was visible, so its version follows 1's and [1] cannot be latest.
    let h = history(&[(0, "[[:append :x 1]]"), (1, "[[:append :x 2]]"), (2, "[[:r :x [1 2]]]"), (2, "[[:r :x [1]]]")]);
    assert!(!pc(&h));
}

#[test]
fn a_write_order_case_split_is_explained_case_by_case() {
    // t3 reads x from t1 after seeing t2 (through y), and t4 reads x from
    // t2 after seeing t1 (through z): whichever of t1, t2 commits first,
    // one reader should have read the other.
    let h = history(&[
        (0, "[[:w :x 1] [:w :z 1]]"),
        (1, "[[:w :x 2] [:w :y 2]]"),
        (2, "[[:r :y 2] [:r :x 1]]"),
        (3, "[[:r :z 1] [:r :x 2]]"),
    ]);
    assert!(!pc(&h));
    let f = front_of(&h, Sessions::Process);
    let PrefixVerdict::Invalid { case, .. } = outcome(&h, &f, Sessions::Process).verdict else { panic!("invalid") };
    let Case::Refuted(r) = *case else { panic!("a refutation") };
    assert_eq!(r.branches.len(), 2, "one case per order of the two writes of x: {r:?}");
    assert!(r.branches.iter().all(|b| b.assume.len() == 1));
}

#[test]
fn reads_nothing_explains_break_prefix_consistency_with_their_elle_name() {
    let h = history(&[(0, "[[:w :x 1]]"), (1, "[[:r :x 7]]")]);
    assert!(!pc(&h));
    assert_eq!(anomaly(&h), "garbage-read");
}

#[test]
fn repeated_values_try_every_writer() {
    // Two writers of 1; the reader saw y from the second, so reading x = 1
    // from the first would be a fork, but from the second it is fine.
    let h = history(&[(0, "[[:w :x 1]]"), (1, "[[:w :x 1] [:w :y 1]]"), (2, "[[:r :y 1] [:r :x 1]]")]);
    assert!(pc(&h));
}

#[test]
fn an_unobserved_info_write_may_not_have_happened() {
    let text = ops_edn(&[("ok", 0, "[[:r :x nil]]"), ("info", 1, "[[:w :x 1]]"), ("ok", 0, "[[:r :x nil]]")]);
    assert!(pc(&edn(&text)));
}

#[test]
fn the_entry_point_reads_the_workload_and_reports_stats() {
    let h = history(&[
        (0, "[[:w :x 1]]"),
        (1, "[[:w :y 1]]"),
        (2, "[[:r :x 1] [:r :y nil]]"),
        (3, "[[:r :y 1] [:r :x nil]]"),
    ]);
    let out = check_prefix(&h, workload(&h), &PrefixOptions::default()).expect("front end");
    assert!(matches!(out.verdict, PrefixVerdict::Invalid { .. }));
    assert_eq!(out.stats.txns, 4);
    assert!(out.stats.known_edges > 0);
}

#[test]
fn prefix_store_histories_are_decided_valid() {
    use isolde::gen::weak::WeakLevel;
    for seed in 0..40 {
        let text = support::weak::weak_store_history(WeakLevel::Prefix, seed, 60, 4, 3, 0.1);
        let h = edn(&text);
        let f = front_of(&h, Sessions::Process);
        assert_eq!(verdict(&h, &f, Sessions::Process, &text), Some(true), "seed {seed}");
        let text = support::weak::weak_list_store_history(WeakLevel::Prefix, seed, 60, 4, 3, 0.1);
        let h = edn(&text);
        let f = front_of(&h, Sessions::Process);
        assert_eq!(verdict(&h, &f, Sessions::Process, &text), Some(true), "list seed {seed}");
    }
}
