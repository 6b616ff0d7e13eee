//! The example programs of `isolde explore` (examples/explore/): every one
//! parses, and the client programs translated from the PLDI'23 artifact give
//! the numbers of consistent histories that tests/data/explore-f1.tsv
//! records beside the paper's Table F.1 (examples/explore/README.md explains
//! each difference with the paper).

use crate::support;

use isolde::explore::{explore, Level, Options, Program};
use std::path::{Path, PathBuf};
use support::explore::assert_matches_brute_force;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/explore")
}

/// Every `.edn` file under `dir`, recursively, sorted.
fn edn_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = entry.expect("directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "edn") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn parse(path: &Path) -> Program {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Program::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_example_parses() {
    let files = edn_files(&examples_dir());
    assert!(files.len() >= 25, "expected the 25 client programs and more, found {}", files.len());
    for f in &files {
        let p = parse(f);
        assert!(p.txn_count() > 0, "{}: no transactions", f.display());
    }
}

/// The examples small enough to enumerate (the scaling programs of one
/// session of 3 transactions; those of 3 sessions of 1 transaction read so
/// many keys that the enumeration runs out of memory) give, at every level,
/// exactly the histories of a brute-force enumeration filtered by
/// `analyze`'s checkers.
#[test]
fn small_examples_match_brute_force() {
    let mut n = 0;
    for f in edn_files(&examples_dir()) {
        let text = std::fs::read_to_string(&f).expect("example");
        let one_session = f.file_name().is_some_and(|n| n.to_string_lossy().ends_with("-s1.edn"));
        if one_session && parse(&f).sessions.len() == 1 {
            assert_matches_brute_force(&text);
            n += 1;
        }
    }
    assert!(n >= 5, "expected the one-session scaling programs, found {n}");
}

/// One row of tests/data/explore-f1.tsv.
struct Row {
    program: String,
    /// isolde's counts at CC, SI, SER.
    ours: [u64; 3],
    /// 0: checked by `f1_counts`; 1: by the ignored `f1_counts_heavy`; 2:
    /// tens of seconds, by scripts/bench-explore.sh only.
    heavy: u8,
}

fn f1_rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/explore-f1.tsv");
    let text = std::fs::read_to_string(&path).expect("tests/data/explore-f1.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert!(f.len() >= 8, "explore-f1.tsv: expected 9 tab-separated fields: {l}");
            let n = |i: usize| f[i].parse::<u64>().unwrap_or_else(|e| panic!("explore-f1.tsv: field {i} of {l}: {e}"));
            Row { program: f[0].to_string(), ours: [n(4), n(5), n(6)], heavy: n(7) as u8 }
        })
        .collect()
}

const LEVELS: [&str; 3] = ["causal-cerone", "snapshot-isolation", "serializable"];

fn check_counts(heavy: u8) {
    let rows = f1_rows();
    assert!(!rows.is_empty());
    for row in rows.iter().filter(|r| r.heavy == heavy) {
        let p = parse(&examples_dir().join(format!("{}.edn", row.program)));
        for (i, name) in LEVELS.iter().enumerate() {
            let level = Level::from_name(name).expect("a level");
            let out = explore(&p, level, &Options::default()).unwrap_or_else(|e| panic!("{}: {e}", row.program));
            assert!(out.stopped.is_none(), "{} at {name}: stopped", row.program);
            assert_eq!(out.stats.histories, row.ours[i], "{} at {name}: consistent histories", row.program);
            assert_eq!(out.stats.blocked, 0, "{} at {name}: blocked explorations", row.program);
            // explore-ce*(CC, L) visits exactly the histories explore-ce(CC)
            // outputs (spec §5): the end states equal the CC count.
            assert_eq!(out.stats.explored, row.ours[0], "{} at {name}: end states", row.program);
        }
    }
}

/// The F.1 programs that take well under a second per level.
#[test]
fn f1_counts() {
    check_counts(0);
}

/// The F.1 programs with tens of thousands of histories (a few seconds in
/// the optimized test profile): `cargo test --test explore
/// explore_examples:: -- --ignored`.
#[test]
#[ignore = "heavier programs (several seconds); run with --ignored"]
fn f1_counts_heavy() {
    check_counts(1);
}
