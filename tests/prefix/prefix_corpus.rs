//! Prefix consistency on the shared corpus (recorded and published
//! histories) and on generated histories: every history known to satisfy
//! snapshot isolation is prefix consistent, the C4 TAP-b history (a causal
//! violation) is not. `cargo test --test prefix prefix_corpus:: --
//! --ignored --nocapture` prints the verdict and time of every corpus history (and of
//! the files named in `PREFIX_FILES`, separated by `:`).

use crate::support;

use isolde::ingest::{read_path, Format};
use isolde::prefix::{check_prefix, PrefixOptions, PrefixOutcome, PrefixVerdict};
use std::path::{Path, PathBuf};
use std::time::Instant;
use support::weak::workload;

/// The outcome and wall time on one file.
fn run(p: &Path) -> (PrefixOutcome, f64) {
    let h = read_path(p, Format::Auto).expect("reads");
    let t = Instant::now();
    let out = check_prefix(&h, workload(&h), &PrefixOptions::default()).expect("front end");
    (out, t.elapsed().as_secs_f64())
}

fn label(v: &PrefixVerdict) -> String {
    match v {
        PrefixVerdict::Valid(_) => "valid".into(),
        PrefixVerdict::Invalid { anomaly, .. } => format!("invalid ({anomaly})"),
        PrefixVerdict::Unknown(r) => format!("unknown ({r})"),
    }
}

/// Every history file of the corpus this test reads.
fn corpus() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let root = support::shared::root().join("corpus");
    for f in ["real/c4-text-tap-b.txt", "real/cockroachdb-12_30_20_720.bincode", "real/veristrong-RH-10k.bincode"] {
        out.push(root.join(f));
    }
    for dir in ["polysi/fig7", "polysi/fig8_9_10"] {
        let mut subs: Vec<PathBuf> =
            std::fs::read_dir(root.join(dir)).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        subs.sort();
        out.extend(subs.into_iter().map(|s| s.join("history.bincode")));
    }
    if let Some(extra) = std::env::var_os("PREFIX_FILES") {
        out.extend(std::env::split_paths(&extra));
    }
    out.retain(|p| p.exists());
    out
}

#[test]
fn the_c4_tap_b_history_is_not_prefix_consistent() {
    let Some(p) = support::shared::path("corpus/real/c4-text-tap-b.txt", "the C4 TAP-b history") else { return };
    let (out, _) = run(&p);
    assert!(matches!(out.verdict, PrefixVerdict::Invalid { .. }), "{}", label(&out.verdict));
}

#[test]
fn polysi_postgres_histories_are_prefix_consistent() {
    let Some(dir) = support::shared::path("corpus/polysi/fig8_9_10", "the PolySI histories") else { return };
    for d in ["25_400_8_10000_0.3_uniform", "25_400_8_10000_0.95_uniform"] {
        let (out, _) = run(&dir.join(d).join("history.bincode"));
        assert!(matches!(out.verdict, PrefixVerdict::Valid(_)), "{d}: {}", label(&out.verdict));
    }
}

#[test]
#[ignore]
fn print_corpus_verdicts() {
    for p in corpus() {
        let (out, secs) = run(&p);
        let s = &out.stats;
        println!(
            "{}\t{}\t{secs:.3}s\ttxns {} constraints {} known {} decisions {} conflicts {} by-order {}",
            p.display(),
            label(&out.verdict),
            s.txns,
            s.constraints,
            s.known_edges,
            s.decisions,
            s.conflicts,
            s.guessed
        );
    }
}
