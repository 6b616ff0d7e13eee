//! The result must not depend on how independent processes' lines
//! interleave in the file: any interleaving that keeps each process's order
//! describes the same transactions, and without a realtime model the same
//! dependencies, so it must give the same anomalies and verdict. Completions
//! that disagree with their invocations are read the same way whichever
//! record comes first.

use isolde::anomaly::Workload;
use isolde::check::{Outcome, Validity};
use isolde::gen::inject::parse_list;
use isolde::gen::list_append::list_append_string_with;
use isolde::gen::rw_register::rw_register_string_with;
use isolde::gen::{GenOptions, Level};
use proptest::prelude::*;

use crate::support;

use support::gen::analyze;

/// The anomaly types found, the verdict, and the analysis error if any.
fn summary(o: &Outcome) -> (Vec<String>, Validity, Option<String>) {
    (o.found_types.clone(), o.valid, o.error.clone())
}

/// Drops `:index` and `:time` (an interleaving renumbers ops and reorders
/// their times) and returns the lines grouped by process, in order.
fn by_process(text: &str) -> Vec<Vec<String>> {
    let mut procs: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut kept: Vec<&str> = Vec::new();
        for field in line.trim_start_matches('{').trim_end_matches('}').split(", :") {
            let f = field.trim_start_matches(':');
            if !f.starts_with("index ") && !f.starts_with("time ") {
                kept.push(f);
            }
        }
        let line = format!("{{:{}}}", kept.join(", :"));
        let p = kept.iter().find_map(|f| f.strip_prefix("process ")).unwrap_or("?").to_string();
        match procs.iter_mut().find(|(q, _)| *q == p) {
            Some((_, ls)) => ls.push(line),
            None => procs.push((p, vec![line])),
        }
    }
    procs.into_iter().map(|(_, ls)| ls).collect()
}

/// One interleaving of the processes' lines, chosen by `picks`.
fn interleave(procs: &[Vec<String>], picks: &[usize]) -> String {
    let mut next = vec![0usize; procs.len()];
    let mut out = String::new();
    let mut k = 0;
    loop {
        let live: Vec<usize> = (0..procs.len()).filter(|&p| next[p] < procs[p].len()).collect();
        if live.is_empty() {
            return out;
        }
        let p = live[picks.get(k).copied().unwrap_or(0) % live.len()];
        k += 1;
        out.push_str(&procs[p][next[p]]);
        out.push('\n');
        next[p] += 1;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// List-append histories with failures, indeterminate transactions and
    /// planted anomalies: every interleaving gives the same anomaly types.
    #[test]
    fn list_append_result_is_independent_of_interleaving(
        cfg in support::gen::list_append_configs(100..200, 2..8, 2..6, 2..10, 0.2),
        a in proptest::collection::vec(any::<usize>(), 700),
        b in proptest::collection::vec(any::<usize>(), 700),
    ) {
        let inject = parse_list("G1a,G1b,G1c,internal,lost-update,duplicate-elements,G0").expect("names");
        let opts = GenOptions { level: Level::ReadCommitted, inject, inject_count: 3, ..GenOptions::default() };
        let procs = by_process(&list_append_string_with(&cfg, &opts));
        for model in ["serializable", "read-committed"] {
            let x = summary(&analyze(&interleave(&procs, &a), Workload::ListAppend, model));
            let y = summary(&analyze(&interleave(&procs, &b), Workload::ListAppend, model));
            prop_assert_eq!(x, y, "model {}", model);
        }
    }

    /// The same for registers (Elle's inference and the exact check).
    #[test]
    fn rw_register_result_is_independent_of_interleaving(
        cfg in support::gen::rw_register_configs(80..160, 2..8, 2..12, 0.3..0.7, 0.2),
        a in proptest::collection::vec(any::<usize>(), 500),
        b in proptest::collection::vec(any::<usize>(), 500),
    ) {
        let inject = parse_list("G1a,G1b,G1c,internal,lost-update,write-skew").expect("names");
        let opts = GenOptions { level: Level::ReadCommitted, inject, inject_count: 2, ..GenOptions::default() };
        let procs = by_process(&rw_register_string_with(&cfg, &opts));
        for model in ["serializable", "snapshot-isolation"] {
            let x = summary(&analyze(&interleave(&procs, &a), Workload::RwRegister, model));
            let y = summary(&analyze(&interleave(&procs, &b), Workload::RwRegister, model));
            prop_assert_eq!(x, y, "model {}", model);
        }
    }
}

/// A `:fail` completion listing an append its invocation did not (element 2
/// here), which another transaction also appends: the element has two
/// writers, reported as a duplicate append (no G1a blamed on either), and
/// the answer is the same whichever completion comes first.
#[test]
fn completion_disagreeing_with_its_invocation() {
    let head = "{:type :invoke, :process 0, :value [[:append :x 1]]}
{:type :invoke, :process 1, :value [[:append :x 2]]}\n";
    let fail = "{:type :fail, :process 0, :value [[:append :x 1] [:append :x 2]]}\n";
    let ok = "{:type :ok, :process 1, :value [[:append :x 2]]}\n";
    let tail = "{:type :invoke, :process 2, :value [[:r :x nil]]}
{:type :ok, :process 2, :value [[:r :x [2]]]}\n";
    let one = analyze(&format!("{head}{fail}{ok}{tail}"), Workload::ListAppend, "serializable");
    let two = analyze(&format!("{head}{ok}{fail}{tail}"), Workload::ListAppend, "serializable");
    assert_eq!(summary(&one), summary(&two));
    assert_eq!(one.valid, Validity::Unknown);
    let e = one.error.unwrap_or_default();
    assert!(e.contains("key :x: value 2 was appended by more than one operation (line 3, line 4)"), "{e}");
    // The same extra append with no other writer is the failed
    // transaction's own: reading it is G1a, in either order.
    let head = "{:type :invoke, :process 0, :value [[:append :x 1]]}
{:type :invoke, :process 1, :value [[:append :x 3]]}\n";
    let solo = "{:type :ok, :process 1, :value [[:append :x 3]]}\n";
    let one = analyze(&format!("{head}{fail}{solo}{tail}"), Workload::ListAppend, "serializable");
    let two = analyze(&format!("{head}{solo}{fail}{tail}"), Workload::ListAppend, "serializable");
    assert_eq!(summary(&one), summary(&two));
    assert!(one.found_types.contains(&"G1a".to_string()), "{:?}", one.found_types);
}
