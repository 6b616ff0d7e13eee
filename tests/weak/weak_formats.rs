//! The Plume/PolySI/AWDIT text format and AWDIT's `test` format, written
//! and read back: the same transactions per session and the same verdicts
//! at every weak level; `isolde convert` to every format with a writer;
//! bad input located by line.

use crate::support;

use isolde::gen::rw_register::{rw_register_string_with, RwKeyDist, RwRegisterConfig};
use isolde::gen::{GenOptions, Inject, Level, TextFormat};
use isolde::ingest::{read_bytes, Format};
use std::time::Duration;
use support::cli::{isolde, temp_dir};
use support::weak::{awdit_test, edn, round_trip, sessions_text, text, weak_verdicts};

const FORMATS: [TextFormat; 2] = [TextFormat::Plume, TextFormat::AwditTest];

fn generated(seed: u64, txns: usize, fail: f64, info: f64, inject: Vec<Inject>) -> String {
    let cfg = RwRegisterConfig {
        seed,
        txns,
        processes: 4,
        min_txn_len: 1,
        max_txn_len: 4,
        keys: 6,
        read_fraction: 0.5,
        key_dist: RwKeyDist::Uniform,
        fail_fraction: fail,
        info_fraction: info,
    };
    let opts = GenOptions { level: Level::SnapshotIsolation, inject, ..GenOptions::default() };
    rw_register_string_with(&cfg, &opts)
}

/// Without `:info` transactions both formats keep every committed
/// transaction of every session exactly, and every verdict.
#[test]
fn round_trip_keeps_transactions_and_verdicts() {
    for seed in 0..12 {
        let inject = match seed % 4 {
            0 => vec![],
            1 => vec![Inject::ReadSkew],
            2 => vec![Inject::G1a],
            _ => vec![Inject::LongFork, Inject::Internal],
        };
        let h = edn(&generated(seed, 80, 0.1, 0.0, inject));
        let want = weak_verdicts(&h);
        for f in FORMATS {
            for pin in [false, true] {
                let back = round_trip(&h, f, pin);
                assert_eq!(weak_verdicts(&back), want, "seed {seed} {f:?} pin {pin}");
                if !pin {
                    assert_eq!(sessions_text(&back), sessions_text(&h), "seed {seed} {f:?}");
                }
            }
        }
    }
}

/// `:info` transactions: written with their writes when someone read them,
/// left out otherwise; the verdicts stay.
#[test]
fn info_transactions_keep_the_verdicts() {
    for seed in 0..8 {
        let h = edn(&generated(seed, 80, 0.05, 0.2, vec![]));
        assert!(h.ops.iter().any(|o| o.op_type == isolde::history::OpType::Info));
        let want = weak_verdicts(&h);
        for f in FORMATS {
            assert_eq!(weak_verdicts(&round_trip(&h, f, false)), want, "seed {seed} {f:?}");
        }
    }
    // A read of an :info write: valid only if the writer is kept.
    let h = edn(concat!(
        "{:type :invoke, :f :txn, :process 0, :value [[:w 1 5]], :index 0}\n",
        "{:type :info, :f :txn, :process 0, :value [[:w 1 5]], :index 1}\n",
        "{:type :ok, :f :txn, :process 1, :value [[:r 1 5]], :index 2}\n",
        "{:type :ok, :f :txn, :process 0, :value [[:r 1 5]], :index 3}\n",
    ));
    for f in FORMATS {
        let back = round_trip(&h, f, false);
        assert_eq!(weak_verdicts(&back), [Some(true); 3], "{f:?}");
        // The :info writer and the later transaction of process 0 are in
        // different sessions.
        assert_eq!(sessions_text(&back).len(), 3, "{f:?}");
    }
}

/// Keys and values that are not positive integers are renumbered; equal
/// values stay equal, so a repeated value stays repeated.
#[test]
fn named_keys_and_values_are_renumbered() {
    let h = edn(concat!(
        "{:type :ok, :f :txn, :process 0, :value [[:w :x \"a\"] [:w :y 0]], :index 0}\n",
        "{:type :ok, :f :txn, :process 1, :value [[:r :x nil] [:r :y 0]], :index 1}\n",
    ));
    let want = weak_verdicts(&h);
    assert_eq!(want, [Some(true), Some(false), Some(false)]);
    let mut out = Vec::new();
    isolde::gen::write_text(&h, TextFormat::Plume, Default::default(), &mut out).expect("writes");
    assert_eq!(String::from_utf8(out).expect("utf-8"), "w(0,1,0,0)\nw(1,1,0,0)\nr(0,0,1,1)\nr(1,1,1,1)\n");
    for f in FORMATS {
        assert_eq!(weak_verdicts(&round_trip(&h, f, false)), want, "{f:?}");
    }
    let lists = edn("{:type :ok, :f :txn, :process 0, :value [[:append :x 1]], :index 0}\n");
    let e = isolde::gen::write_text(&lists, TextFormat::Plume, Default::default(), &mut Vec::new());
    assert!(e.is_err_and(|e| e.contains("line 1: list-append histories cannot be written")));
}

/// Pinning adds one read of a fresh key's initial value per session, and
/// the `test` format's initial session writes that key.
#[test]
fn pinning_starts_each_session_with_an_initial_read() {
    let h = text("w(1,1,0,0)\nr(1,1,1,1)\nr(1,0,1,2)");
    let mut out = Vec::new();
    let pin = isolde::gen::registers::ExportOptions { pin_initial: true };
    isolde::gen::write_text(&h, TextFormat::AwditTest, pin, &mut out).expect("writes");
    assert_eq!(
        String::from_utf8(out).expect("utf-8"),
        "w 1 0\nw 2 0\nw 3 0\n=====\nr 2 0\nw 1 1\n=====\nr 3 0\nr 1 1\n-----\nr 1 0\n"
    );
    let mut out = Vec::new();
    isolde::gen::write_text(&h, TextFormat::Plume, pin, &mut out).expect("writes");
    assert_eq!(String::from_utf8(out).expect("utf-8"), "r(2,0,0,0)\nw(1,1,0,0)\nr(3,0,1,1)\nr(1,1,1,1)\nr(1,0,1,2)\n");
}

/// AWDIT's regression files, read by the reader: the initial session, and
/// the hb-cycle file (no initial session) as read out of order.
#[test]
fn awdit_files_read_directly() {
    let h = awdit_test("w 0 0\n=====\nw 0 1\n=====\nr 0 0\nr 0 1");
    assert_eq!(weak_verdicts(&h), [Some(true), Some(false), Some(false)]);
    let h = awdit_test("r 1 1\n-----\nw 0 0\n=====\nr 0 0\n-----\nw 1 1");
    assert_eq!(weak_verdicts(&h), [Some(false); 3]);
}

#[test]
fn bad_test_format_input_names_file_line_and_column() {
    let dir = temp_dir("weak-formats-bad");
    let p = dir.join("bad.txt");
    std::fs::write(&p, "w 0 0\n=====\nr 0 0\nr 0\n").expect("write");
    let path = p.to_string_lossy();
    let r = isolde(&["analyze", &path, "--input-format", "awdit-test"], None, Duration::from_secs(30));
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("bad.txt:4:4: expected a space after the key, found end of line"), "{r:?}");
    // Auto-detected as the test format.
    let r = isolde(&["analyze", &path], None, Duration::from_secs(30));
    assert!(r.stderr.contains("bad.txt:4:4: "), "{r:?}");
    assert!(read_bytes("x.txt", b"=====\nr 0 0 0\n", Format::Auto)
        .is_err_and(|e| e.to_string() == "x.txt:2:6: expected end of line after the value, found a space"));
}

/// `isolde convert` to every format with a writer, then `analyze` of each:
/// the same verdict as the original (`gen --output-format` uses the same
/// writers).
#[test]
fn convert_to_every_format_keeps_the_verdict() {
    let dir = temp_dir("weak-formats-convert");
    for (name, inject) in [("valid", vec![]), ("fractured", vec![Inject::ReadSkew])] {
        let src = dir.join(format!("{name}.edn"));
        std::fs::write(&src, generated(7, 80, 0.1, 0.0, inject)).expect("write");
        let src = src.to_string_lossy().to_string();
        let analyze = |p: &str| {
            let r = isolde(&["analyze", p, "-m", "causal-cerone", "--format", "json"], None, Duration::from_secs(60));
            assert!(r.code <= 1, "{p}: {r:?}");
            r.code
        };
        let want = analyze(&src);
        for to in ["json", "dbcop", "plume", "awdit-test"] {
            let out = dir.join(format!("{name}.{to}"));
            let out = out.to_string_lossy();
            let r = isolde(&["convert", &src, "--to", to, "-o", &out], None, Duration::from_secs(60));
            assert_eq!(r.code, 0, "{to}: {r:?}");
            let r = isolde(
                &["analyze", &out, "--input-format", to, "-m", "causal-cerone", "--format", "json"],
                None,
                Duration::from_secs(60),
            );
            assert_eq!(r.code, want, "{name} -> {to}: {r:?}");
        }
    }
    // json only from EDN; a refusal writes no file.
    let txt = dir.join("h.txt");
    std::fs::write(&txt, "w(1,1,0,0)\n").expect("write");
    let out = dir.join("h.json");
    let r = isolde(
        &["convert", &txt.to_string_lossy(), "--to", "json", "-o", &out.to_string_lossy()],
        None,
        Duration::from_secs(30),
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("json is written from Jepsen EDN input only"), "{r:?}");
    assert!(!out.exists());
}

#[test]
fn gen_writes_both_text_formats() {
    // Pinned: the text format starts with the first session's pinning read,
    // the test format with the initial session.
    for (fmt, first) in [("plume", "r("), ("awdit-test", "w ")] {
        let r = isolde(
            &["gen", "rw-register", "--txns", "50", "--keys", "5", "--output-format", fmt, "--pin-initial"],
            None,
            Duration::from_secs(30),
        );
        assert_eq!(r.code, 0, "{r:?}");
        assert!(r.stdout.starts_with(first), "{fmt}: {}", r.stdout);
        let f = if fmt == "plume" { Format::PolysiText } else { Format::AwditTest };
        let h = read_bytes("g.txt", r.stdout.as_bytes(), f).expect("reads back");
        assert_eq!(weak_verdicts(&h), [Some(true); 3], "{fmt}");
    }
}
