//! The HTML page of `isolde explore -d DIR` and `isolde hermitage -d DIR`:
//! `index.html` beside the histories written, one entry per history
//! (violating first) with the tool's finding and what `isolde analyze`
//! shows of it (levels, anomalies, cycle drawings, transactions), ids
//! prefixed per entry; explore's transaction names beside analyze's; and,
//! where Chromium is installed, loaded in a headless browser without
//! console errors.

use crate::support;

use std::time::Duration;
use support::cli::{isolde, temp_dir};

const LIMIT: Duration = Duration::from_secs(120);

/// Two sessions increment one counter: at causal consistency both may
/// read 0 (a lost update).
const COUNTER: &str = "{:init {:x 0}
 :sessions [[[[:r :x a] [:w :x (+ a 1)]]]
            [[[:r :x b] [:w :x (+ b 1)]]]]
 :assert (not (and (= a 0) (= b 0)))}";

/// Nothing on the page is fetched from elsewhere and nothing runs.
fn self_contained(page: &str) {
    for bad in ["<script", "<link", " src=", "@import", "url(http"] {
        assert!(!page.contains(bad), "{bad} in the page");
    }
}

#[test]
fn explore_writes_a_page_of_its_violating_histories() {
    let dir = temp_dir("html-explore");
    let program = dir.join("counter.edn");
    std::fs::write(&program, COUNTER).expect("write");
    let out = dir.join("out");
    let r = isolde(
        &[
            "explore",
            program.to_str().expect("utf8"),
            "--level",
            "causal-cerone",
            "--all",
            "-d",
            out.to_str().expect("utf8"),
        ],
        None,
        LIMIT,
    );
    assert_eq!(r.code, 1, "{r:?}");
    // The text names the transactions as analyze does.
    assert!(r.stdout.contains("analyze names its transactions T1.1 = T1, T2.1 = T3 (4 client ops"), "{}", r.stdout);
    let html = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    self_contained(&html);
    assert!(html.contains("1 of 3 consistent histories break the assertion; 1 written here."), "{html}");
    assert!(html.contains("<a href=\"#h0\">violation-1.edn</a>"), "{html}");
    assert!(html.contains("consistent at causal-cerone, breaks the assertion (2 transactions: 4 client ops"), "{html}");
    // analyze's own check of the file: invalid above causal, a cycle drawn.
    assert!(html.contains("id=\"h0-verdict\">INVALID"), "{html}");
    assert!(html.contains("<table id=\"h0-levels\">"), "{html}");
    assert!(html.contains("<h2 id=\"h0-a-G2-item\">") || html.contains("<h2 id=\"h0-a-lost-update\">"), "{html}");
    assert!(html.contains("<svg"), "{html}");
    // Both names of each transaction, and analyze's entries for them with
    // their lines in the file; analyze counts their 4 ops, as explore says.
    assert!(html.contains("<tr><td>T1.1</td><td>T1</td>"), "{html}");
    assert!(html.contains("<tr><td>T2.1</td><td>T3</td>"), "{html}");
    assert!(html.contains("<tr id=\"h0-T3\"><td>T3</td><td><a href=\"violation-1.edn#L"), "{html}");
    assert!(html.contains("rw-register history: 4 client ops"), "{html}");
    let a = isolde(&["analyze", out.join("violation-1.edn").to_str().expect("utf8"), "-f", "table"], None, LIMIT);
    assert!(a.stdout.contains("4 client ops") && a.stdout.contains("T1 -rw-> T3"), "{a:?}");
}

#[test]
fn hermitage_writes_a_page_of_every_scenario() {
    let dir = temp_dir("html-hermitage");
    let out = dir.join("out");
    let r = isolde(&["hermitage", "-d", out.to_str().expect("utf8")], None, LIMIT);
    assert_eq!(r.code, 0, "{r:?}");
    let html = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    self_contained(&html);
    // SQLite: one level, every scenario prevented and valid.
    let entries = html.matches("<section id=\"h").count();
    assert!(entries >= 10, "{entries} entries");
    assert!(html.contains(&format!("{entries} scenario runs at serializable (actual: serializable)")), "{html}");
    assert!(html.contains("the anomaly occurred in 0."), "{html}");
    assert!(html.contains("<a href=\"#h0\">serializable/g0.edn</a>"), "{html}");
    assert!(html.contains("<span class=\"v valid\">not violating</span>"), "{html}");
    assert!(!html.contains("<span class=\"v invalid\">violating</span>"), "{html}");
    assert_eq!(html.matches("-verdict\">VALID").count(), entries, "{html}");
    assert!(html.contains(": prevented ("), "{html}");
    // Each entry links its history file, which is there.
    assert!(html.contains("<a href=\"serializable/g1c.edn\">"), "{html}");
    assert!(out.join("serializable/g1c.edn").is_file());
}

/// Chromium's binary, if installed.
fn chromium() -> Option<std::path::PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

#[test]
fn a_headless_browser_shows_the_explore_page() {
    let Some(browser) = chromium() else {
        eprintln!("SKIPPED a_headless_browser_shows_the_explore_page: no chromium installed");
        return;
    };
    let dir = temp_dir("html-explore-browser");
    let program = dir.join("counter.edn");
    std::fs::write(&program, COUNTER).expect("write");
    let out = dir.join("out");
    let args = ["explore", program.to_str().expect("utf8"), "-l", "causal-cerone", "-d", out.to_str().expect("utf8")];
    assert_eq!(isolde(&args, None, LIMIT).code, 1);
    let png = support::cli::screenshot(&browser, &out.join("index.html"), &dir);
    assert!(png.len() > 20_000, "the screenshot looks blank: {} bytes", png.len());
}
