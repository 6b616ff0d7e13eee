//! The HTML page: `index.html` in the output directory and `--html FILE`,
//! self-contained (no script, no stylesheet or image from elsewhere), with
//! the verdict, the levels, each anomaly's first cases and their cycles
//! drawn, the transactions named with their history lines; bounded for
//! histories with thousands of anomalies; and, where Chromium is
//! installed, loaded in a headless browser without console errors into a
//! screenshot that is not blank.

use crate::support;

use std::path::Path;
use std::time::Duration;
use support::cli::{isolde, temp_dir};

const LIMIT: Duration = Duration::from_secs(120);
const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sample.edn");

/// Every `http` in `page` is an SVG namespace: nothing is fetched.
fn self_contained(page: &str) {
    for bad in ["<script", "<link", " src=", "@import", "url(http"] {
        assert!(!page.contains(bad), "{bad} in the page");
    }
    for (at, _) in page.match_indices("http") {
        let before = &page[at.saturating_sub(16)..at];
        assert!(before.contains("xmlns"), "a link outside the page: {}", &page[at..(at + 60).min(page.len())]);
    }
}

#[test]
fn the_directory_and_html_write_one_page() {
    let dir = temp_dir("html-page");
    let out = dir.join("out");
    let page = dir.join("page.html");
    let r = isolde(
        &["analyze", SAMPLE, "-f", "json", "-d", out.to_str().expect("utf8"), "--html", page.to_str().expect("utf8")],
        None,
        LIMIT,
    );
    assert_eq!(r.code, 1, "{r:?}");
    for p in [out.join("index.html"), page] {
        let html = std::fs::read_to_string(&p).expect("the page");
        self_contained(&html);
        assert!(html.contains("id=\"verdict\">INVALID"), "{p:?}");
        assert!(html.contains("<table id=\"levels\">") && html.contains("<td>strict-serializable</td>"), "{p:?}");
        for a in ["G-single-item", "G2-item", "lost-update"] {
            assert!(html.contains(&format!("<h2 id=\"a-{a}\">{a} (1)</h2>")), "{a} in {p:?}");
        }
        // The levels link to their witness; each cycle is drawn.
        assert!(html.contains("<a href=\"#a-G-single-item\">G-single-item</a>"), "{p:?}");
        assert!(html.matches("<svg").count() >= 2, "{p:?}");
        // Transactions link to their entry, which gives the history line.
        assert!(html.contains("<a href=\"#T15\">T15</a>"), "{p:?}");
        let t15 = html.split("<tr id=\"T15\">").nth(1).expect("T15's entry");
        assert!(t15.contains("sample.edn#L") && t15.contains(":index 15"), "{t15}");
        assert!(html.contains("Stage times: parse"), "{p:?}");
        assert!(html.contains("16 client ops"), "{p:?}");
    }
    // One page for one history.
    let r = isolde(&["analyze", SAMPLE, SAMPLE, "--html", dir.join("x.html").to_str().expect("utf8")], None, LIMIT);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--html FILE writes the page of one history"), "{r:?}");
}

#[test]
fn pages_of_histories_with_thousands_of_anomalies_stay_small() {
    let mut text = String::new();
    for i in 0..3000 {
        let (x, y) = (2 * i, 2 * i + 1);
        text.push_str(&format!("{{:type :ok, :process 0, :value [[:append {x} 1] [:r {y} [1]]]}}\n"));
        text.push_str(&format!("{{:type :ok, :process 1, :value [[:append {y} 1] [:r {x} [1]]]}}\n"));
    }
    let dir = temp_dir("html-many");
    let h = dir.join("h.edn");
    std::fs::write(&h, text).expect("write");
    let page = dir.join("p.html");
    let r = isolde(
        &["analyze", h.to_str().expect("utf8"), "-f", "json", "--html", page.to_str().expect("utf8")],
        None,
        LIMIT,
    );
    assert_eq!(r.code, 1, "{r:?}");
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(html.contains("<h2 id=\"a-G1c\">G1c (3000)</h2>"), "the count is the total");
    assert!(html.contains("2990 more G1c cases not shown"), "bounded");
    assert_eq!(html.matches("<div class=\"case\">").count(), 10);
    assert!(html.len() < 100_000, "{} bytes", html.len());
}

/// Chromium's binary, if installed.
fn chromium() -> Option<std::path::PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// A PNG's width and height from its header.
fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    if png.len() < 24 || &png[..8] != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&png[16..20]), be(&png[20..24])))
}

#[test]
fn a_headless_browser_shows_the_page() {
    let Some(browser) = chromium() else {
        eprintln!("SKIPPED a_headless_browser_shows_the_page: no chromium installed");
        return;
    };
    let dir = temp_dir("html-browser");
    let page = dir.join("index.html");
    let r = isolde(&["analyze", SAMPLE, "-f", "json", "--html", page.to_str().expect("utf8")], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    let png = support::cli::screenshot(&browser, &page, &dir);
    assert_eq!(png_size(&png), Some((1200, 1600)), "a PNG of the window");
    // A blank page compresses to almost nothing; text, tables and plots do not.
    assert!(png.len() > 40_000, "the screenshot looks blank: {} bytes", png.len());
    if let Some(keep) = std::env::var_os("ISOLDE_SCREENSHOT") {
        let _ = std::fs::write(Path::new(&keep), &png);
    }
}
