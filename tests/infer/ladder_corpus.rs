//! The ladder (`--model all`, and the default check's) on every transactional history of the test
//! data and of the shared corpus (Elle's fixtures, the recorded and
//! published histories, PolySI's PostgreSQL histories): every level gets a
//! verdict. A row may stay undecided only for a reason the theory accepts,
//! listed in [`JUSTIFIED`]; any other `unknown` or `not checked` row fails
//! the test, which lists each one with its file and reason.

use crate::support;

use isolde::check::{check, CheckOptions, ModelStatus, Outcome};
use isolde::ingest::{read_path, Format};
use std::path::{Path, PathBuf};

/// Reasons a row may stay undecided, each a true limit rather than a
/// missing checker: a history none of whose operations is a client
/// operation (Elle's rule: only ops with an integer `:process` are
/// checked), so a verdict on what is left would say nothing of the history;
/// and a closed-predicate history's levels that only the weak or prefix
/// checker decides, which have no predicate reads.
const JUSTIFIED: &[&str] = &["no client operation to check", isolde::check::PREDICATES_UNKNOWN];

/// The ladder's outcome on one file, or `None` when the file is not a
/// transactional history (Elle's monotonic-key graphs).
fn ladder(p: &Path) -> Option<Outcome> {
    let h = read_path(p, Format::Auto).ok()?;
    let opts = CheckOptions { models: Some(vec!["all".into()]), ..CheckOptions::default() };
    Some(check(&h, &opts).expect("`all` is a valid model"))
}

/// The default check with the ladder after it (what `analyze` does
/// without `--model`), on one file.
fn default_ladder(p: &Path) -> Option<Outcome> {
    let h = read_path(p, Format::Auto).ok()?;
    Some(check(&h, &CheckOptions { ladder: true, ..CheckOptions::default() }).expect("the default model"))
}

/// Every history file under `dir` (recursively) with one of `exts`, sorted.
fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p, exts));
        } else {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let expected = name.ends_with(".expected.edn");
            if !expected && exts.iter().any(|x| name.ends_with(x)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Each undecided row without a justified reason: `file: level (why)`.
fn unjustified(p: &Path, o: &Outcome) -> Vec<String> {
    o.levels
        .iter()
        .filter(|r| matches!(r.status, ModelStatus::Unknown | ModelStatus::NotChecked))
        .filter(|r| !JUSTIFIED.iter().any(|j| r.reason.starts_with(j)))
        .map(|r| format!("{}: {} {:?} ({})", p.display(), r.level.model, r.status, r.reason))
        .collect()
}

/// Runs `--model all` and the default check's ladder over `paths`;
/// returns how many checks ran on transactional histories (two per
/// history) and every unjustified undecided row.
fn survey(paths: &[PathBuf]) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut bad = Vec::new();
    for p in paths {
        for o in [ladder(p), default_ladder(p)].into_iter().flatten() {
            checked += 1;
            assert_eq!(o.levels.len(), isolde::levels::LEVELS.len(), "{}: one row per level", p.display());
            bad.extend(unjustified(p, &o));
        }
    }
    (checked, bad)
}

#[test]
fn every_rung_is_decided_on_the_test_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The README's example has two non-client ops beside its client ones.
    let files = ["tests/data/strings-append.edn", "tests/data/strings-register.edn", "examples/sample.edn"];
    let paths: Vec<PathBuf> = files.iter().map(|f| root.join(f)).collect();
    let (checked, bad) = survey(&paths);
    assert_eq!(checked, 6);
    assert!(bad.is_empty(), "undecided rows:\n{}", bad.join("\n"));
}

#[test]
fn every_rung_is_decided_on_elles_fixtures_and_the_recorded_histories() {
    let Some(corpus) = support::shared::path("corpus", "the ladder on the shared corpus") else { return };
    let mut paths = files(&corpus.join("elle"), &[".edn", ".json"]);
    paths.extend(files(&corpus.join("real"), &[".txt", ".bincode"]));
    let (checked, bad) = survey(&paths);
    assert!(checked >= 100, "only {checked} checks on {} files ran on transactional histories", paths.len());
    assert!(bad.is_empty(), "undecided rows:\n{}", bad.join("\n"));
}

#[test]
fn every_rung_is_decided_on_polysis_postgres_histories() {
    let Some(dir) = support::shared::path("corpus/polysi", "the ladder on PolySI's histories") else { return };
    let paths = files(&dir, &[".bincode"]);
    let (checked, bad) = survey(&paths);
    assert_eq!(checked, 2 * paths.len(), "every PolySI history reads");
    assert!(checked >= 60, "only {} PolySI histories", checked / 2);
    assert!(bad.is_empty(), "undecided rows:\n{}", bad.join("\n"));
}

/// An empty dependency graph decides the levels (no cycle): a history
/// whose one transaction failed satisfies every level, and a read of an
/// aborted write breaks read committed but not read uncommitted.
#[test]
fn an_empty_graph_decides_every_rung() {
    let Some(elle) = support::shared::path("corpus/elle", "Elle's empty-graph fixtures") else { return };
    let o = ladder(&elle.join("la-dirty-update-none.edn")).expect("reads");
    assert!(o.levels.iter().all(|r| r.status == ModelStatus::Holds), "{:?}", o.levels);
    let o = ladder(&elle.join("la-g1a.edn")).expect("reads");
    assert_eq!(o.level("read-uncommitted").map(|r| &r.status), Some(&ModelStatus::Holds));
    assert_eq!(o.level("read-committed").map(|r| &r.status), Some(&ModelStatus::Violated("G1a".into())));
}

/// A history whose operations all lack an integer `:process` has no
/// client operation: every row is unknown and says why (a `valid` of the
/// empty remainder would hide the G-single of Elle's paper example).
#[test]
fn a_history_without_client_operations_leaves_every_rung_unknown_with_the_reason() {
    let Some(elle) = support::shared::path("corpus/elle", "Elle's paper example without processes") else { return };
    let o = ladder(&elle.join("la-paper-example-no-process.edn")).expect("reads");
    for r in &o.levels {
        assert_eq!(r.status, ModelStatus::Unknown, "{}", r.level.model);
        assert!(r.reason.starts_with(JUSTIFIED[0]), "{}: {}", r.level.model, r.reason);
    }
}
