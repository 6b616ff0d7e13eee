//! Explanations that stay short on long lists: a list-append history whose
//! reads hold hundreds of elements, with planted anomalies, prints every
//! line of its table and `--verbose` output under 200 columns at any width
//! and within 80 at `COLUMNS=80`; each explanation still shows the elements
//! that prove its steps; JSON keeps every value, and `-d` writes short
//! `.txt` explanations unless `--full-values` asks for them whole.

use crate::support;

use std::time::Duration;
use support::cli::{isolde, isolde_columns, temp_dir};

const LIMIT: Duration = Duration::from_secs(120);

/// A snapshot-isolation store over two keys with up to 1000 appends each
/// (reads of hundreds of elements, write skew among them), plus planted
/// anomalies of other kinds.
fn long_history(dir: &std::path::Path) -> String {
    let path = dir.join("long.edn").to_string_lossy().into_owned();
    let r = isolde(
        &[
            "gen",
            "list-append",
            "--max-writes-per-key",
            "1000",
            "--active-keys",
            "2",
            "--txns",
            "2000",
            "--level",
            "snapshot-isolation",
            "--read-fraction",
            "0.7",
            "--inject",
            "G1c,lost-update,G1b,internal",
            "--seed",
            "3",
            "-o",
            &path,
        ],
        None,
        LIMIT,
    );
    assert_eq!(r.code, 0, "{r:?}");
    path
}

/// The explanations of `out`, split at their headings (`G2-item #0`).
fn explanations(out: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for l in out.lines() {
        let heading = l.split_once(" #").is_some_and(|(t, n)| !t.contains(' ') && n.parse::<usize>().is_ok());
        if heading {
            all.push(String::new());
        } else if let Some(last) = all.last_mut() {
            last.push_str(l);
            last.push('\n');
        }
    }
    all
}

/// The numbers a step sentence is about: `append of 17`, `appended 17`.
fn step_elements(then: &str) -> Vec<String> {
    let words: Vec<&str> = then.split_whitespace().collect();
    let mut out = Vec::new();
    for w in words.windows(3) {
        if (w[0] == "append" && w[1] == "of") || w[0] == "appended" {
            let n = if w[0] == "appended" { w[1] } else { w[2] };
            if n.chars().all(|c| c.is_ascii_digit()) {
                out.push(n.to_string());
            }
        }
    }
    out
}

#[test]
fn long_lists_are_shown_around_what_matters() {
    let dir = temp_dir("short-values");
    let path = long_history(&dir);
    // Elided lists do appear: the reads really are long.
    let wide = isolde_columns(&["analyze", &path, "-f", "table", "-v"], 1000);
    assert_eq!(wide.code, 1, "{wide:?}");
    assert!(wide.stdout.contains(" elements … "), "{}", wide.stdout);
    for (cols, max) in [(1000usize, 199usize), (80, 80)] {
        for verbose in [false, true] {
            let mut args = vec!["analyze", path.as_str(), "-f", "table"];
            if verbose {
                args.push("-v");
            }
            let r = isolde_columns(&args, cols);
            for l in r.stdout.lines() {
                assert!(l.chars().count() <= max, "COLUMNS={cols}: {} columns: {l}", l.chars().count());
            }
        }
    }
    // Each cycle's explanation shows the elements its steps are about.
    let mut cycles = 0;
    for e in explanations(&wide.stdout) {
        let Some((lets, then)) = e.split_once("Then:") else { continue };
        cycles += 1;
        for n in step_elements(then) {
            let shown = lets.split(|c: char| !c.is_ascii_digit()).any(|w| w == n);
            assert!(shown, "{n} is not shown in:\n{e}");
        }
    }
    assert!(cycles >= 5, "{}", wide.stdout);
    // Anomalies that are not cycles are explained in words (read across
    // the lines they wrap over).
    let words = wide.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("each wrote it") && words.contains("(a lost update)"), "{}", wide.stdout);
    assert!(words.contains("an intermediate read"), "{}", wide.stdout);
    // --full-values prints reads whole.
    let full = isolde_columns(&["analyze", &path, "-f", "table", "-v", "--full-values"], 1000);
    assert!(!full.stdout.contains(" elements … "), "--full-values");
    assert!(
        full.stdout.len() > 3 * wide.stdout.len(),
        "--full-values keeps long reads whole: {} vs {} bytes",
        full.stdout.len(),
        wide.stdout.len()
    );
}

#[test]
fn json_keeps_every_value_and_the_directory_is_short_unless_asked() {
    let dir = temp_dir("short-values-dir");
    let path = long_history(&dir);
    let json = isolde(&["analyze", &path, "-f", "json"], None, LIMIT);
    assert!(!json.stdout.contains('…'), "JSON holds values whole");
    assert!(json.stdout.len() > 100_000, "long reads in the JSON: {} bytes", json.stdout.len());
    let short = dir.join("short");
    let r = isolde(&["analyze", &path, "-f", "json", "-d", short.to_str().expect("utf8")], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    let txt = std::fs::read_to_string(short.join("G2-item.txt")).expect("G2-item.txt");
    assert!(txt.contains(" elements … "), "{txt}");
    let full = dir.join("full");
    let r = isolde(&["analyze", &path, "-f", "json", "--full-values", "-d", full.to_str().expect("utf8")], None, LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    let txt = std::fs::read_to_string(full.join("G2-item.txt")).expect("G2-item.txt");
    assert!(!txt.contains('…') && txt.len() > 10_000, "{} bytes", txt.len());
}
