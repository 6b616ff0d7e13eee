//! AWDIT's regression histories (`histories/tests/{read-committed,
//! read-atomic,causal,none}` in github.com/lassemoldrup/AWDIT): a history in
//! directory `L` satisfies level `L` and, for the hand-written ones, breaks
//! the next stronger level (`none`: breaks read committed). The small
//! hand-written ones are kept here; the generated ones are read from a git
//! mirror of AWDIT named by `AWDIT_GIT_DIR`, when set.

use crate::support;

use support::weak::{awdit_test, weak_ladder};

/// (AWDIT directory and file, content, verdicts [RC, RA, CC]).
const HAND_WRITTEN: &[(&str, &str, [bool; 3])] = &[
    ("causal/fully-ser", "w 0 0\nw 1 1\n=====\nw 0 2\n=====\nr 0 2\n-----\nr 1 1", [true, true, true]),
    (
        "causal/long-fork",
        "w 0 0\nw 1 0\n=====\nw 0 1\n-----\nr 0 1\nr 1 0\n=====\nw 1 1\n-----\nr 1 1\nr 0 0",
        [true, true, true],
    ),
    ("causal/lost-update", "w 0 0\n=====\nr 0 0\nw 0 1\n=====\nr 0 0\nw 0 2", [true, true, true]),
    ("none/hb-cycle", "r 1 1\n-----\nw 0 0\n=====\nr 0 0\n-----\nw 1 1", [false, false, false]),
    (
        "read-atomic/biswas-enea",
        "w 0 1\n-----\nw 0 2\n=====\nr 0 2\nw 1 1\n=====\nr 0 1\nr 1 1",
        [true, true, false],
    ),
    (
        "read-atomic/test-ra",
        "w 0 0\nw 1 0\nw 2 0\nw 3 0\nw 4 0\n=====\nr 0 0\n=====\nr 2 2\nr 4 0\n=====\nr 3 0\nw 2 1\n-----\nr 1 0\n-----\nw 2 2\n=====\nr 2 1\n-----\nr 2 0\nr 2 0",
        [true, true, false],
    ),
    (
        "read-committed/biswas-enea",
        "w 0 1\nw 1 1\n=====\nw 0 2\nw 1 2\n=====\nw 2 2\n=====\nr 0 1\nr 1 2\nr 2 2",
        [true, false, false],
    ),
    ("read-committed/non-repeatable-read", "w 0 0\n=====\nw 0 1\n=====\nr 0 0\nr 0 1", [true, false, false]),
    (
        "read-committed/test-rc",
        "w 0 0\nw 1 0\nw 2 0\nw 3 0\nw 4 0\n=====\nr 0 0\n=====\nr 2 1\nr 2 2\n=====\nw 2 1\n-----\nr 1 0\n-----\nw 2 2\n=====\nr 2 1\n-----\nr 2 0\nr 2 1",
        [true, false, false],
    ),
];

#[test]
fn hand_written_regression_histories() {
    for &(name, text, want) in HAND_WRITTEN {
        assert_eq!(weak_ladder(&awdit_test(text)).0, want, "{name}: [RC RA CC]");
    }
}

#[test]
fn generated_regression_histories_satisfy_their_level() {
    let Ok(git_dir) = std::env::var("AWDIT_GIT_DIR") else { return };
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").arg("--git-dir").arg(&git_dir).args(args).output().expect("git");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let files = git(&["ls-tree", "-r", "--name-only", "HEAD", "histories/tests"]);
    let mut n = 0;
    for f in files.lines().filter(|f| f.contains("/generated/")) {
        let level = match f.split('/').nth(2) {
            Some("read-committed") => 0,
            Some("read-atomic") => 1,
            Some("causal") => 2,
            _ => continue,
        };
        let (got, _) = weak_ladder(&awdit_test(&git(&["show", &format!("HEAD:{f}")])));
        assert!(got[..=level].iter().all(|&v| v), "{f}: {got:?}");
        n += 1;
    }
    assert!(n >= 13, "only {n} generated histories found");
}
