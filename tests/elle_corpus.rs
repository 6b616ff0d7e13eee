//! Pins isolde's behaviour where it deliberately differs from Elle on the
//! shared conformance corpus (see tests/elle-deviations.txt), and checks the
//! files Elle writes. Runs only where ../shared sits beside the checkout.

mod support;

use isolde::check::{check, CheckOptions, Validity};
use isolde::ingest::{read_path, Format};
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/elle").join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipping: {} not present", p.display());
        None
    }
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
