//! Pins isolde's behaviour where it deliberately differs from Elle on the
//! shared conformance corpus (see tests/elle-deviations.txt), and checks the
//! files Elle writes. Runs only where ../shared sits beside the checkout.

use crate::support;

use isolde::check::{check, CheckOptions, Validity};
use isolde::ingest::{read_path, Format};
use std::path::PathBuf;

fn corpus(name: &str) -> Option<PathBuf> {
    support::shared::path(&format!("corpus/elle/{name}"), &format!("Elle corpus case {name}"))
}

/// A history of invocations only (none completed) is bad input for isolde;
/// Elle reports an empty transaction graph (`:valid? :unknown`).
#[test]
fn invocations_only_history_is_refused() {
    let Some(path) = corpus("rw-g0-invokes-only.edn") else { return };
    let e = read_path(&path, Format::Auto).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        e.ends_with(
            ": 2 invocations but no completion (:ok, :fail or :info): nothing to check (is the history truncated?)"
        ),
        "{e}"
    );
}

/// Elle times out on this real Jepsen history and reports a fallback G2-item
/// cycle; isolde finds the G-single-item-realtime cycle Elle was searching
/// for. Every step of every reported cycle must be justified by the history.
#[test]
fn huge_scc_finds_the_realtime_read_skew_elle_times_out_on() {
    let Some(path) = corpus("la-huge-scc.edn") else { return };
    let h = read_path(&path, Format::Auto).expect("parses");
    let o = check(&h, &CheckOptions::default()).expect("runs");
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(o.anomaly_types, vec!["G-single-item-realtime".to_string()]);
    assert_eq!(o.not.iter().cloned().collect::<Vec<_>>(), vec!["strong-snapshot-isolation".to_string()]);
    assert!(support::check_all_la_cycles(&h, &o).expect("witness holds") >= 1);
}

/// Every cycle isolde reports on the list-append corpus is justified.
#[test]
fn every_corpus_cycle_is_justified() {
    let Some(dir) = corpus("") else { return };
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("corpus dir") {
        let p = entry.expect("entry").path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if !(name.starts_with("la-") || name.starts_with("cli-list"))
            || !name.ends_with(".edn")
            || name.contains(".expected")
        {
            continue;
        }
        let h = read_path(&p, Format::Auto).expect("parses");
        for models in [None, Some(vec!["serializable".to_string()])] {
            let o = check(&h, &CheckOptions { models, ..CheckOptions::default() }).expect("runs");
            checked += support::check_all_la_cycles(&h, &o).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    assert!(checked > 10, "only {checked} cycles checked");
}

/// Elle's rw-register tests read values that no operation in the history
/// wrote. isolde reports each as `garbage-read` and otherwise agrees with
/// Elle: its anomaly types are exactly Elle's plus `garbage-read`.
#[test]
fn register_garbage_reads_are_the_only_difference_from_elle() {
    use isolde::infer::rw_register::RwOptions;
    // (case, models, anomalies, wfr, sequential, linearizable, Elle's anomaly types)
    type Run = (
        &'static str,
        Option<&'static [&'static str]>,
        &'static [&'static str],
        bool,
        bool,
        bool,
        &'static [&'static str],
    );
    let runs: &[Run] = &[
        ("cli-rw-register", Some(&["strict-serializable"]), &["G0"], false, false, false, &[]),
        (
            "rw-cyclic-versions-linearizable",
            Some(&["strict-serializable"]),
            &[],
            false,
            false,
            true,
            &["cyclic-versions"],
        ),
        ("rw-g2-item-linearizable-rc-valid", Some(&["read-committed"]), &[], false, false, true, &[]),
        ("rw-lost-update", None, &[], false, false, false, &["lost-update"]),
        (
            "rw-scc-sort-bug",
            Some(&["strong-serializable"]),
            &[],
            true,
            false,
            true,
            &["G1c-realtime", "cyclic-versions"],
        ),
        ("rw-version-order-cyclic-versions-file", Some(&["strong-snapshot-isolation"]), &[], false, false, true, &[]),
        ("rw-wfr-keys", Some(&["serializable"]), &[], false, false, false, &[]),
        ("rw-wfr-keys", Some(&["serializable"]), &[], true, false, false, &["G-single-item"]),
        ("rw-garbage-read-not-detected", Some(&["strict-serializable"]), &[], false, false, true, &[]),
    ];
    for &(case, models, anomalies, wfr_keys, sequential_keys, linearizable_keys, elle) in runs {
        let Some(path) = corpus(&format!("{case}.edn")) else { return };
        let h = read_path(&path, Format::Auto).expect("parses");
        let opts = CheckOptions {
            workload: isolde::check::WorkloadChoice::Fixed(isolde::anomaly::Workload::RwRegister),
            models: models.map(|ms| ms.iter().map(|s| s.to_string()).collect()),
            anomalies: anomalies.iter().map(|s| s.to_string()).collect(),
            rw: RwOptions { wfr_keys, sequential_keys, linearizable_keys },
            ..CheckOptions::default()
        };
        let o = check(&h, &opts).expect("runs");
        let mut want: Vec<String> = elle.iter().map(|s| s.to_string()).collect();
        want.push("garbage-read".into());
        want.sort();
        assert_eq!(o.anomaly_types, want, "{case}");
        assert_eq!(o.valid, Validity::Invalid, "{case}");
    }
}

/// With no model, isolde does not report the garbage reads of `rw-internal`
/// (so its anomaly types are Elle's), but they still rule out
/// read-uncommitted, which is the weakest model `:not` names.
#[test]
fn register_internal_case_differs_only_in_not() {
    let Some(path) = corpus("rw-internal.edn") else { return };
    let h = read_path(&path, Format::Auto).expect("parses");
    let opts = CheckOptions {
        workload: isolde::check::WorkloadChoice::Fixed(isolde::anomaly::Workload::RwRegister),
        models: Some(vec![]),
        anomalies: vec!["internal".to_string()],
        ..CheckOptions::default()
    };
    let o = check(&h, &opts).expect("runs");
    assert_eq!(o.anomaly_types, vec!["empty-transaction-graph".to_string(), "internal".to_string()]);
    assert_eq!(o.valid, Validity::Invalid);
    assert_eq!(o.not.iter().cloned().collect::<Vec<_>>(), vec!["read-uncommitted".to_string()]);
}

/// The files Elle's own tests read back from `:directory`, byte for byte.
#[test]
fn directory_files_match_elles_expected_text() {
    use isolde::anomaly::Workload;
    use isolde::check::WorkloadChoice;
    use isolde::reports::directory::{write, PlotOptions};
    // Elle's text, except that ops are echoed as read: the corpus ops have
    // no :time and no :f, which Elle prints as `:time -1` and `:f nil`.
    let cases: [(&str, Workload, &str, &str); 2] = [
        (
            "rw-g1c.edn",
            Workload::RwRegister,
            "G1c.txt",
            "G1c #0\nLet:\n  T1 = {:index 0, :type :ok, :process 0, :value [[:w :x 1] [:r :y 1]]}\n  T2 = {:index 1, :type :ok, :process 0, :value [[:w :y 1] [:r :x 1]]}\n\nThen:\n  - T1 < T2, because T1 wrote :x = 1, which was read by T2.\n  - However, T2 < T1, because T2 wrote :y = 1, which was read by T1: a contradiction!",
        ),
        (
            "la-incompatible-order.edn",
            Workload::ListAppend,
            "incompatible-order/:x.html",
            "<html><head><style>th { text-align: left; }</style></head><body><h1>All Reads of :x</h1><table><thead><tr><th>Index</th><th>Time (s)</th><th>Process</th><th>Fun</th><th colspan=\"32\">Value</th></tr></thead><tbody><tr><td>3</td><td>0.00</td><td>0</td><td>txn</td><td>1</td><td style=\"background: #d6aa9d\">3</td></tr><tr><td>4</td><td>0.00</td><td>0</td><td>txn</td><td>1</td><td>2</td><td>3</td></tr></tbody></table></body></html>",
        ),
    ];
    for (case, workload, file, expected) in cases {
        let Some(path) = corpus(case) else { return };
        let h = read_path(&path, Format::Auto).expect("parses");
        let opts = CheckOptions {
            workload: WorkloadChoice::Fixed(workload),
            models: Some(vec![]),
            anomalies: vec!["G1".to_string()],
            ..CheckOptions::default()
        };
        let o = check(&h, &opts).expect("runs");
        let dir = support::cli::temp_dir(&format!("corpus-files-{case}"));
        write(&h, &o, &dir, &PlotOptions::default()).expect("writes");
        let got = std::fs::read_to_string(dir.join(file)).expect("file written");
        assert_eq!(got, expected, "{case}: {file}");
    }
}

/// The first Clojure string literal in `text` that starts with `prefix`,
/// unescaped.
fn clojure_string_starting(text: &str, prefix: &str) -> Option<String> {
    let start = text.find(&format!("\"{prefix}"))? + 1;
    let mut out = String::new();
    let mut chars = text[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// Elle's text with the fields Elle invents for an op that lacks them
/// (`:time -1`, `:f nil`) taken out: isolde echoes ops as they were read.
fn without_invented_fields(elle: &str) -> String {
    elle.replace(", :time -1, ", ", ").replace(", :f nil, ", ", ")
}

/// Elle's cycle explanation for `la-core-g2-explanation`, letter for letter,
/// including which transaction it calls T1 (the first in Elle's iteration
/// order, which isolde follows), except for the fields the history's ops lack
/// (see [`without_invented_fields`]). The expected text is read from the
/// corpus.
#[test]
fn g2_explanation_matches_elles_text() {
    use isolde::anomaly::{Case, Workload};
    let Some(path) = corpus("la-core-g2-explanation.edn") else { return };
    let Some(expected_path) = corpus("la-core-g2-explanation.expected.edn") else { return };
    let expected_file = std::fs::read_to_string(expected_path).expect("reads");
    let expected = clojure_string_starting(&expected_file, "Let:").expect("the expectation holds a cycle text");
    let input = std::fs::read_to_string(&path).expect("reads");
    assert!(!input.contains(":time") && !input.contains(":f "), "the ops lack :time and :f");
    let expected = without_invented_fields(&expected);
    let h = read_path(&path, Format::Auto).expect("parses");
    let o = check(&h, &CheckOptions::default()).expect("runs");
    let cycles: Vec<_> = o
        .anomalies
        .values()
        .flatten()
        .filter_map(|c| match c {
            Case::Cycle(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(cycles.len(), 1, "one SCC, one cycle");
    let got = isolde::reports::text::explain_cycle(&h, Workload::ListAppend, cycles[0]);
    assert_eq!(got, expected);
}
