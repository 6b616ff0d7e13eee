//! Plume's / C4's test cases for each TAP (tap-a … tap-n, C4's
//! `History/testcase/text`), with their verdicts at Biswas–Enea read
//! committed, read atomic and causal consistency, the TAP isolde names, and
//! the anomaly type the CLI reports. Under these semantics Plume's `tap-j`
//! case is a read of another transaction's value after the reader wrote the
//! key itself (TAP-d), and its `tap-i` case satisfies read committed and
//! breaks read atomic through two forced edges (TAP-l), as weak.md §3.7 notes.

use crate::support;

use std::time::Duration;
use support::cli::{anomaly_types, isolde, temp_dir};
use support::weak::{text, weak_ladder};

const T: bool = true;
const F: bool = false;

/// (case, history, [RC, RA, CC], TAP named, anomaly type at causal-cerone)
const CASES: &[(&str, &str, [bool; 3], char, &str)] = &[
    ("tap-a", "r(1,1,0,0)\nr(2,1,0,0)", [F, F, F], 'a', "garbage-read"),
    ("tap-b", "w(1,1,0,-1)\nw(2,1,0,-1)\nr(1,1,0,1)", [F, F, F], 'b', "G1a"),
    ("tap-c", "r(1,1,0,0)\nw(1,1,0,0)", [F, F, F], 'c', "future-read"),
    ("tap-d", "w(1,1,0,0)\nw(1,2,1,1)\nr(1,1,1,1)", [F, F, F], 'd', "internal"),
    ("tap-e", "w(1,1,0,0)\nw(1,2,0,0)\nr(1,1,0,0)", [F, F, F], 'e', "internal"),
    ("tap-f", "w(1,1,0,0)\nw(1,2,0,0)\nr(1,1,1,1)", [F, F, F], 'f', "G1b"),
    ("tap-g", "r(1,1,0,0)\nw(2,1,0,0)\nr(2,1,1,1)\nw(1,1,1,2)", [F, F, F], 'g', "G1c-process"),
    (
        "tap-h",
        "w(1,2,0,0)\nr(1,2,1,1)\nw(1,1,1,2)\nw(2,1,1,2)\nr(2,1,2,3)\nr(1,2,2,3)",
        [F, F, F],
        'h',
        "non-monotonic-read",
    ),
    (
        "tap-i",
        "w(1,1,0,0)\nw(2,1,0,0)\nw(1,2,1,1)\nw(2,2,1,1)\nr(2,2,2,2)\nr(1,1,2,2)",
        [T, F, F],
        'l',
        "fractured-read",
    ),
    ("tap-j", "w(1,2,0,0)\nw(1,1,1,1)\nr(1,1,1,1)\nr(1,2,1,1)", [F, F, F], 'd', "internal"),
    (
        "tap-k",
        "w(1,2,0,0)\nr(1,2,1,1)\nw(1,1,1,2)\nw(2,1,1,2)\nr(1,2,2,3)\nr(2,1,2,3)",
        [T, F, F],
        'k',
        "fractured-read",
    ),
    (
        "tap-l",
        "w(1,1,0,0)\nw(2,1,0,0)\nw(1,2,1,1)\nw(2,2,1,1)\nr(1,1,2,2)\nr(2,2,2,2)",
        [T, F, F],
        'l',
        "fractured-read",
    ),
    (
        "tap-m",
        "w(1,2,0,0)\nr(1,2,1,1)\nw(1,1,1,2)\nw(2,1,1,2)\nr(2,1,2,3)\nr(1,2,2,4)",
        [T, T, F],
        'm',
        "causal-violation",
    ),
    (
        "tap-n",
        "w(1,2,0,0)\nr(1,2,1,1)\nw(1,1,1,2)\nw(2,1,1,2)\nr(2,1,2,3)\nr(1,2,2,4)\nr(1,2,3,5)\nr(1,1,3,6)",
        [T, T, F],
        // C4's tap-n case begins with its tap-m case, whose cycle (one
        // forced edge) is the shortest witness.
        'm',
        "causal-violation",
    ),
];

/// weak.md §1.4's E-CC-s, the TAP-n pattern on its own: two sessions
/// disagree on the order of two writes, a cycle of two causal forced edges.
#[test]
fn two_sessions_disagreeing_on_write_order_is_tap_n() {
    let t = "w(1,1,0,0)\nw(1,2,1,1)\nr(1,1,2,2)\nr(1,2,2,3)\nr(1,2,3,4)\nr(1,1,3,5)";
    assert_eq!(weak_ladder(&text(t)), ([T, T, F], Some('n')));
}

#[test]
fn every_tap_has_its_verdict_and_name_at_each_level() {
    for &(name, t, want, tap, _) in CASES {
        let (got, named) = weak_ladder(&text(t));
        assert_eq!(got, want, "{name}: [RC RA CC]");
        assert_eq!(named, Some(tap), "{name}: TAP named");
    }
}

#[test]
fn the_cli_reports_each_tap_under_its_anomaly_type() {
    let dir = temp_dir("weak-taps");
    for &(name, t, want, _, anomaly) in CASES {
        let p = dir.join(format!("{name}.txt"));
        std::fs::write(&p, t).expect("write");
        let path = p.to_string_lossy();
        let models = [("read-committed-be", want[0]), ("read-atomic", want[1]), ("causal-cerone", want[2])];
        for (model, valid) in models {
            let r = isolde(&["analyze", &path, "--format", "json", "-m", model], None, Duration::from_secs(60));
            assert_eq!(r.code, if valid { 0 } else { 1 }, "{name} {model}: {r:?}");
        }
        let r = isolde(
            &["analyze", &path, "--format", "json", "-m", "transactional-causal"],
            None,
            Duration::from_secs(60),
        );
        assert!(anomaly_types(&r.json()).contains(&anomaly.to_string()), "{name}: {:?}", r.json());
    }
}

/// The cases that pass read committed all break causal consistency, while
/// Elle's single-object `causal` (which proscribes nothing) accepts them: the
/// names keep their meanings.
#[test]
fn elle_causal_keeps_its_meaning() {
    let dir = temp_dir("weak-taps-causal");
    for &(name, t, want, _, _) in CASES.iter().filter(|c| c.2[0]) {
        let p = dir.join(format!("{name}.txt"));
        std::fs::write(&p, t).expect("write");
        let path = p.to_string_lossy();
        let r = isolde(&["analyze", &path, "--format", "json", "-m", "causal"], None, Duration::from_secs(60));
        assert_ne!(r.code, 1, "{name}: Elle's causal proscribes nothing: {r:?}");
        assert!(!want[2], "{name} is a causal violation");
    }
}

/// Every TAP case written in the Plume text format and in AWDIT's `test`
/// format (with and without the initial-state pinning) and read back keeps
/// its verdicts at every level. (The `test` format has no aborted
/// transactions: tap-b's aborted write is left out, and its read becomes a
/// read of a value nobody wrote, which breaks every level just the same.)
#[test]
fn every_tap_keeps_its_verdicts_in_the_peers_formats() {
    use isolde::gen::TextFormat;
    use support::weak::round_trip;
    for &(name, t, want, _, _) in CASES {
        for f in [TextFormat::Plume, TextFormat::AwditTest] {
            for pin in [false, true] {
                let back = round_trip(&text(t), f, pin);
                assert_eq!(weak_ladder(&back).0, want, "{name} {f:?} pin {pin}");
            }
        }
    }
}

/// C4's own files for each case (`History/testcase/{text,dbcop}` of a git
/// mirror of C4 named by `C4_GIT_DIR`, when set), read by isolde's readers:
/// the same verdicts as the cases above.
#[test]
fn c4_files_read_directly() {
    use isolde::ingest::{read_bytes, Format};
    let Ok(git_dir) = std::env::var("C4_GIT_DIR") else { return };
    let show = |path: &str| {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&git_dir)
            .args(["show", &format!("HEAD:{path}")])
            .output()
            .expect("git");
        out.status.success().then_some(out.stdout)
    };
    let mut n = 0;
    for &(name, _, want, _, _) in CASES {
        for (path, format) in [
            (format!("History/testcase/text/{name}.txt"), Format::PolysiText),
            (format!("History/testcase/dbcop/{name}/history.bincode"), Format::Dbcop),
        ] {
            let Some(bytes) = show(&path) else { continue };
            let h = read_bytes(&path, &bytes, format).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(weak_ladder(&h).0, want, "{path}");
            n += 1;
        }
    }
    assert!(n >= 25, "only {n} of C4's files found");
}
