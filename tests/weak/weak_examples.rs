//! The minimal separating examples of weak.md §1.4: each history's verdict
//! at read committed, read atomic, causal, prefix, snapshot isolation and
//! serializability (Biswas–Enea, sessions from `:process`), from the fast
//! checkers, the saturation oracle and the exhaustive enumerator.

use crate::support;

use isolde::weak::front::Sessions;
use support::weak::{history, ladder};

const T: bool = true;
const F: bool = false;

fn expect(name: &str, ops: &[(i64, &str)], want: [bool; 6]) {
    let h = history(ops);
    assert_eq!(ladder(&h, Sessions::Process), want, "{name}: [RC RA CC PC SI SER]");
}

#[test]
fn e_rc_non_monotonic_read() {
    expect(
        "E-RC",
        &[(0, "[[:w :x 1]]"), (1, "[[:r :x 1] [:w :x 2] [:w :y 2]]"), (2, "[[:r :y 2] [:r :x 1]]")],
        [F, F, F, F, F, F],
    );
}

#[test]
fn e_rc_s_reads_own_sessions_future() {
    expect("E-RC-s", &[(0, "[[:r :x 1]]"), (0, "[[:w :x 1]]")], [F, F, F, F, F, F]);
}

#[test]
fn e_ra_fractured_read() {
    expect("E-RA", &[(0, "[[:w :x 1] [:w :y 1]]"), (1, "[[:r :y nil] [:r :x 1]]")], [T, F, F, F, F, F]);
    // Swapping the reads breaks read committed too.
    expect("E-RA swapped", &[(0, "[[:w :x 1] [:w :y 1]]"), (1, "[[:r :x 1] [:r :y nil]]")], [F, F, F, F, F, F]);
}

#[test]
fn e_ra_s_read_your_writes_across_transactions() {
    expect("E-RA-s", &[(0, "[[:w :x 1]]"), (0, "[[:r :x nil]]")], [T, F, F, F, F, F]);
}

#[test]
fn e_ra_j_non_repeatable_read() {
    expect("E-RA-j", &[(0, "[[:w :x 1]]"), (1, "[[:w :x 2]]"), (2, "[[:r :x 1] [:r :x 2]]")], [T, F, F, F, F, F]);
}

#[test]
fn e_cc_causal_violation() {
    expect(
        "E-CC",
        &[(0, "[[:w :x 1]]"), (1, "[[:r :x 1] [:w :y 1]]"), (2, "[[:r :y 1] [:r :x nil]]")],
        [T, T, F, F, F, F],
    );
}

#[test]
fn e_cc_s_sessions_disagree_on_write_order() {
    expect(
        "E-CC-s",
        &[
            (0, "[[:w :x 1]]"),
            (1, "[[:w :x 2]]"),
            (2, "[[:r :x 1]]"),
            (2, "[[:r :x 2]]"),
            (3, "[[:r :x 2]]"),
            (3, "[[:r :x 1]]"),
        ],
        [T, T, F, F, F, F],
    );
}

#[test]
fn e_pc_long_fork() {
    expect(
        "E-PC",
        &[(0, "[[:w :x 1]]"), (1, "[[:w :y 1]]"), (2, "[[:r :x 1] [:r :y nil]]"), (3, "[[:r :y 1] [:r :x nil]]")],
        [T, T, T, F, F, F],
    );
}

#[test]
fn e_si_lost_update() {
    expect("E-SI", &[(0, "[[:r :x nil] [:w :x 1]]"), (1, "[[:r :x nil] [:w :x 2]]")], [T, T, T, T, F, F]);
}

#[test]
fn e_ser_write_skew() {
    expect(
        "E-SER",
        &[(0, "[[:r :x nil] [:r :y nil] [:w :x 1]]"), (1, "[[:r :x nil] [:r :y nil] [:w :y 1]]")],
        [T, T, T, T, T, F],
    );
}

#[test]
fn awdit_rc_fix_example_is_caught() {
    // weak.md §3.2: AWDIT's "two earliest reads" bookkeeping misses this one.
    expect(
        "RC FIX",
        &[(0, "[[:w :x 1]]"), (1, "[[:r :x 1] [:w :x 2] [:w :y 2]]"), (2, "[[:r :y 2] [:r :x 2] [:r :x 2] [:r :x 1]]")],
        [F, F, F, F, F, F],
    );
}
