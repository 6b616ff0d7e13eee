//! `isolde gen closed-predicate` end to end: generated histories check
//! valid, every planted anomaly is found with its Elle anomaly type (the
//! JSON result map's `anomaly-types`) and nothing else, a seed gives the
//! same bytes, JSON output checks as the EDN does, and the examples of
//! docs/usage.md run as shown.

use crate::support;

use std::path::Path;
use std::time::Duration;
use support::cli::{anomaly_types, isolde, temp_dir};

const LIMIT: Duration = Duration::from_secs(120);

/// Generates with `args` into `out`; returns the generator's stderr.
fn gen(out: &Path, args: &[&str]) -> String {
    let r = isolde(&[&["gen", "closed-predicate", "-o", out.to_str().unwrap()][..], args].concat(), None, LIMIT);
    assert_eq!(r.code, 0, "{args:?}: {r:?}");
    r.stderr
}

/// `isolde analyze --format json -m MODELS`: the exit code and the result
/// map.
fn analyze(path: &Path, models: &str) -> (i32, serde_json::Value) {
    let r = isolde(&["analyze", path.to_str().unwrap(), "--format", "json", "-m", models], None, LIMIT);
    (r.code, r.json())
}

#[test]
fn generated_histories_are_valid_at_serializable_and_strict() {
    let dir = temp_dir("gen-cp-valid");
    for (seed, extra) in [
        ("1", &[][..]),
        ("2", &["--fail-fraction", "0.1", "--info-fraction", "0.1"][..]),
        ("3", &["--insert-only", "--processes", "4"][..]),
        ("4", &["--max-txn-len", "8", "--read-fraction", "0.5"][..]),
    ] {
        let h = dir.path().join(format!("valid-{seed}.edn"));
        gen(&h, &[&["--seed", seed, "--txns", "400", "--keys", "150"][..], extra].concat());
        let text = std::fs::read_to_string(&h).unwrap();
        assert!(text.starts_with("{:type :invoke, :f :init, :value {"), "{extra:?}");
        assert!(text.lines().any(|l| l.starts_with("{:type :ok") && l.contains("[:rp ") && !l.contains("{}]")));
        let (code, v) = analyze(&h, "serializable,strict-serializable");
        assert_eq!((code, &v["valid?"]), (0, &serde_json::json!(true)), "seed {seed} {extra:?}: {v}");
    }
    // At serializable, read-only transactions may read a stale snapshot.
    let h = dir.path().join("ser.edn");
    gen(&h, &["--seed", "5", "--txns", "400", "--keys", "150", "--level", "serializable"]);
    let (code, v) = analyze(&h, "serializable");
    assert_eq!((code, &v["valid?"]), (0, &serde_json::json!(true)), "{v}");
}

/// Each scenario alone, at both models and two seeds: its type and only
/// its type.
#[test]
fn each_planted_anomaly_is_found_with_its_elle_type() {
    let dir = temp_dir("gen-cp-inject");
    for (inject, ty) in [
        ("G1c", "G1c"),
        ("write-skew", "G2-item"),
        ("predicate-write-skew", "G2"),
        ("predicate-read-miss", "predicate-read-miss"),
    ] {
        for seed in ["1", "7"] {
            let h = dir.path().join(format!("{inject}-{seed}.edn"));
            let err = gen(&h, &["--seed", seed, "--txns", "300", "--keys", "120", "--inject", inject]);
            assert!(err.contains(&format!("injected 1 x {inject}")), "{err}");
            for model in ["serializable", "strict-serializable"] {
                let (code, v) = analyze(&h, model);
                assert_eq!(code, 1, "{inject} {seed} {model}: {v}");
                assert_eq!(anomaly_types(&v), [ty], "{inject} {seed} {model}");
            }
        }
    }
    // All at once, with faults, twice round: each as many times as planted.
    let h = dir.path().join("all.edn");
    let all = "G1c,write-skew,predicate-write-skew,predicate-read-miss";
    gen(
        &h,
        &[
            "--txns",
            "500",
            "--keys",
            "150",
            "--inject",
            all,
            "--inject-count",
            "8",
            "--fail-fraction",
            "0.05",
            "--info-fraction",
            "0.05",
        ],
    );
    let (code, v) = analyze(&h, "serializable");
    assert_eq!(code, 1);
    assert_eq!(anomaly_types(&v), ["G1c", "G2", "G2-item", "predicate-read-miss"]);
    for ty in ["G1c", "G2", "G2-item", "predicate-read-miss"] {
        assert_eq!(v["anomalies"][ty].as_array().map(Vec::len), Some(2), "{ty}: {v}");
    }
}

#[test]
fn a_seed_gives_the_same_history() {
    let dir = temp_dir("gen-cp-seed");
    let args = ["--txns", "200", "--keys", "80", "--inject", "predicate-write-skew", "--info-fraction", "0.1"];
    let (a, b, c) = (dir.path().join("a.edn"), dir.path().join("b.edn"), dir.path().join("c.edn"));
    gen(&a, &[&args[..], &["--seed", "9"]].concat());
    gen(&b, &[&args[..], &["--seed", "9"]].concat());
    gen(&c, &[&args[..], &["--seed", "10"]].concat());
    let read = |p: &Path| std::fs::read(p).unwrap();
    assert_eq!(read(&a), read(&b));
    assert_ne!(read(&a), read(&c));
}

/// `--output-format json` is `isolde convert --to json` of the EDN, and
/// checks to the same result map.
#[test]
fn json_output_is_the_converted_edn_and_checks_the_same() {
    let dir = temp_dir("gen-cp-json");
    let args = ["--seed", "4", "--txns", "300", "--keys", "100", "--inject", "predicate-write-skew,G1c"];
    let (edn, json) = (dir.path().join("h.edn"), dir.path().join("h.json"));
    gen(&edn, &args);
    gen(&json, &[&args[..], &["--output-format", "json"]].concat());
    let converted = isolde(&["convert", edn.to_str().unwrap(), "--to", "json"], None, LIMIT);
    assert_eq!(converted.code, 0, "{converted:?}");
    assert_eq!(converted.stdout, std::fs::read_to_string(&json).unwrap());
    for model in ["serializable", "strict-serializable", "snapshot-isolation"] {
        let (ce, ve) = analyze(&edn, model);
        let (cj, vj) = analyze(&json, model);
        assert_eq!(ce, cj, "{model}");
        assert_eq!(ve, vj, "{model}");
    }
}

#[test]
fn options_it_cannot_honour_are_usage_errors() {
    for (args, want) in [
        (&["--level", "snapshot-isolation"][..], "strict-serializable or serializable"),
        (&["--level", "read-atomic"][..], "strict-serializable or serializable"),
        (&["--fences", "3"][..], "closed-predicate histories take none"),
        (&["--inject", "G0"][..], "G0 cannot be injected into closed-predicate histories"),
        (&["--inject", "G1c", "--processes", "1"][..], "at least 2 processes"),
        (&["--keys", "0"][..], "keys must be at least 1"),
    ] {
        let r = isolde(&[&["gen", "closed-predicate"][..], args].concat(), None, LIMIT);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains(want) && r.stdout.is_empty(), "{args:?}: {}", r.stderr);
    }
}

/// The example of docs/usage.md (*Closed predicates*), as shown.
#[test]
fn the_usage_example_runs_as_shown() {
    let usage = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/usage.md")).expect("usage.md");
    let dir = temp_dir("gen-cp-docs");
    let commands = [
        ("isolde gen closed-predicate --txns 500 --keys 200 --inject predicate-write-skew,predicate-read-miss -o cp.edn", 0),
        ("isolde analyze cp.edn -m serializable", 1),
        ("isolde gen closed-predicate --txns 500 --keys 200 --output-format json -o cp.json", 0),
        ("isolde analyze cp.json -m strict-serializable", 0),
    ];
    for (command, code) in commands {
        let shown = [" ", "\n"].iter().any(|end| usage.contains(&format!("\n{command}{end}")));
        assert!(shown, "{command} is not in docs/usage.md");
        let args: Vec<String> = command
            .split_whitespace()
            .skip(1)
            .map(|a| if a.starts_with("cp.") { dir.path().join(a).display().to_string() } else { a.to_string() })
            .collect();
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        if args[0] == "analyze" {
            args.extend(["--format", "json"]);
        }
        let r = isolde(&args, None, LIMIT);
        assert_eq!(r.code, code, "{command}: {r:?}");
        if command.contains("analyze cp.edn") {
            assert_eq!(anomaly_types(&r.json()), ["G2", "predicate-read-miss"], "{command}");
        }
    }
}
