//! `isolde elle-cli` and the binary run through a link named `elle-cli`:
//! elle-cli's command lines (from its README and test.sh) on Elle's
//! histories give elle-cli's verdicts, output lines and exit statuses.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::cli::{isolde, run_program, temp_dir, Run};

const LIMIT: Duration = Duration::from_secs(120);

fn corpus(name: &str, test: &str) -> Option<String> {
    support::shared::path(&format!("corpus/elle/{name}"), test).map(|p| p.to_string_lossy().into_owned())
}

fn elle_cli(args: &[&str]) -> Run {
    isolde(&[&["elle-cli"], args].concat(), None, LIMIT)
}

/// A link named `elle-cli` to the binary, in a fresh directory (removed
/// when the returned guard drops).
fn elle_cli_link() -> (support::cli::TempDir, PathBuf) {
    let dir = temp_dir("elle-cli-link");
    let link = dir.join("elle-cli");
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_isolde"), &link).expect("symlink");
    #[cfg(not(unix))]
    std::fs::copy(env!("CARGO_BIN_EXE_isolde"), &link).expect("copy");
    (dir, link)
}

/// elle-cli's `(println path "\t" valid?)`.
fn line(path: &str, verdict: &str) -> String {
    format!("{path} \t {verdict}\n")
}

/// test.sh: the paper example is invalid under the defaults (exit 1), in
/// EDN and JSON, and with each of the plot and search options spelled out.
#[test]
fn paper_example_is_invalid_as_in_elle_cli_test_sh() {
    let (Some(edn), Some(json)) =
        (corpus("cli-paper-example.edn", "paper example"), corpus("cli-paper-example.json", "paper example"))
    else {
        return;
    };
    for (file, extra) in [
        (&edn, &[][..]),
        (&json, &[]),
        (&json, &["--plot-format", "svg"]),
        (&edn, &["--cycle-search-timeout", "1000"]),
        (&edn, &["--plot-timeout", "5000"]),
        (&edn, &["--max-plot-bytes", "65536"]),
    ] {
        let r = elle_cli(&[&["--model", "list-append", file.as_str()], extra].concat());
        assert_eq!(r.code, 1, "{extra:?}: {r:?}");
        assert_eq!(r.stdout, line(file, "false"), "{extra:?}");
    }
}

/// test.sh: `list-append-gh-30.edn --consistency-models serializable` is
/// invalid; README's form `-m list-append -c serializable` is the same.
#[test]
fn gh_30_is_not_serializable() {
    let Some(f) = corpus("cli-list-append-gh-30.edn", "gh-30") else { return };
    for args in [
        &["-m", "list-append", "-c", "serializable", &f][..],
        &["--model", "list-append", &f, "--consistency-models", "serializable"],
    ] {
        let r = elle_cli(args);
        assert_eq!(r.code, 1, "{r:?}");
        assert_eq!(r.stdout, line(&f, "false"));
    }
}

/// test.sh expects `rw-register.edn`/`.json` valid (exit 0), but that
/// history reads `x = 3`, which no transaction wrote: Elle does not look
/// for such garbage reads, isolde does, and reports it (one of the
/// deliberate differences in ../shared/conformance/deviations.json).
/// Without a consistency model to prohibit it (`-c ""`), the verdict is
/// elle-cli's.
#[test]
fn rw_register_example_differs_only_by_the_garbage_read() {
    let (Some(edn), Some(json)) =
        (corpus("cli-rw-register.edn", "rw-register example"), corpus("cli-rw-register.json", "rw-register example"))
    else {
        return;
    };
    for f in [&edn, &json] {
        let r = elle_cli(&["-m", "rw-register", f]);
        assert_eq!((r.code, r.stdout.clone()), (1, line(f, "false")), "{r:?}");
        let r = elle_cli(&["-m", "rw-register", "--verbose", f]);
        let v = r.json();
        assert_eq!(v["anomaly-types"], serde_json::json!(["garbage-read"]), "{v}");
        let r = elle_cli(&["-m", "rw-register", "-c", "", f]);
        assert_eq!((r.code, r.stdout), (0, line(f, "true")));
    }
}

/// Several files in one call: one line each, in order; exit 1 when any is
/// invalid, 0 when all are valid.
#[test]
fn several_files_one_line_each_and_exit_1_if_any_invalid() {
    let (Some(valid), Some(invalid)) = (
        corpus("la-lost-update-single-txn-double-write.edn", "several files"),
        corpus("cli-paper-example.edn", "several files"),
    ) else {
        return;
    };
    let r = elle_cli(&["-m", "list-append", &valid, &invalid, &valid]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stdout, [line(&valid, "true"), line(&invalid, "false"), line(&valid, "true")].concat());
    let r = elle_cli(&["-m", "list-append", &valid, &valid]);
    assert_eq!((r.code, r.stdout), (0, [line(&valid, "true"), line(&valid, "true")].concat()));
}

/// `:valid? :unknown` prints `unknown` and exits 0, as elle-cli does.
#[test]
fn unknown_prints_unknown_and_exits_0() {
    let Some(f) = corpus("la-paper-example-no-process.edn", "unknown verdict") else { return };
    let r = elle_cli(&["-m", "list-append", "-c", "serializable", &f]);
    assert_eq!((r.code, r.stdout.clone()), (0, line(&f, "unknown")), "{r:?}");
}

/// Through a link named `elle-cli`, the binary is elle-cli: same lines,
/// same exit status, elle-cli's usage.
#[test]
fn a_link_named_elle_cli_behaves_as_elle_cli() {
    let (_dir, link) = elle_cli_link();
    let r = run_program(&link, &["--help"], None, LIMIT);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("Usage: elle-cli -m model [options] files"), "{}", r.stdout);
    let Some(f) = corpus("cli-paper-example.edn", "elle-cli link") else { return };
    let r = run_program(&link, &["-m", "list-append", &f], None, LIMIT);
    assert_eq!((r.code, r.stdout.clone()), (1, line(&f, "false")), "{r:?}");
    assert_eq!(r.stdout, elle_cli(&["-m", "list-append", &f]).stdout);
}

/// elle-cli's other models are checked (tests/jepsen/jepsen_checkers.rs has
/// their corpus); a history of another model is elle-cli's "wrong model
/// selected?" error, exit 1.
#[test]
fn other_models_check_or_name_the_mismatch() {
    let dir = temp_dir("elle-cli-bank");
    let f = dir.join("bank.edn");
    std::fs::write(&f, "{:type :ok, :f :read, :value {0 10}, :process 0}\n").expect("write");
    let f = f.to_string_lossy();
    let r = elle_cli(&["-m", "bank", &f]);
    assert_eq!((r.code, r.stdout.clone()), (0, line(&f, "true")), "{r:?}");
    for model in ["cas-register", "set-full", "counter", "mutex"] {
        let r = elle_cli(&["-m", model, &f]);
        assert_eq!(r.code, 1, "{model}: {r:?}");
        assert!(r.stdout.is_empty(), "{model}: {}", r.stdout);
        assert!(r.stderr.contains("wrong model selected?") && r.stderr.contains("\"bank\""), "{model}: {}", r.stderr);
    }
}

/// Usage, help and option errors exit as elle-cli's do.
#[test]
fn usage_help_and_option_errors() {
    let r = elle_cli(&[]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("Usage: elle-cli"), "{r:?}");
    let r = elle_cli(&["-h"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("--consistency-models"), "{r:?}");
    for bad in [
        &["-m", "list-append", "--bogus", "x.edn"][..],
        &["-m", "nonsense", "x.edn"],
        &["-m", "list-append", "-s", "soon", "x.edn"],
        &["-m"],
    ] {
        let r = elle_cli(bad);
        assert_eq!(r.code, 1, "{bad:?}: {r:?}");
        assert!(r.stdout.is_empty() && !r.stderr.is_empty(), "{bad:?}: {r:?}");
    }
}

/// A consistency model Elle does not know is Elle's exception (255); an
/// anomaly name it does not know is ignored (with a warning here).
#[test]
fn unknown_model_is_an_error_and_unknown_anomaly_a_warning() {
    let Some(f) = corpus("cli-paper-example.edn", "unknown names") else { return };
    let r = elle_cli(&["-m", "list-append", "-c", "serializible", &f]);
    assert_eq!(r.code, 255, "{r:?}");
    assert!(r.stderr.contains("serializible"), "{}", r.stderr);
    let r = elle_cli(&["-m", "list-append", "-a", "G0,not-an-anomaly", &f]);
    assert_eq!((r.code, r.stdout.clone()), (1, line(&f, "false")), "{r:?}");
    assert!(r.stderr.contains("ignoring anomaly \"not-an-anomaly\""), "{}", r.stderr);
}

/// `-c "" -a G1` (no model, only G1 anomalies) on a G1c history from Elle's
/// tests is invalid; `-a G0` alone is valid, as Elle's tests expect.
#[test]
fn anomalies_without_models() {
    let Some(f) = corpus("la-g1c.edn", "anomalies without models") else { return };
    let r = elle_cli(&["-m", "list-append", "-c", "", "-a", "G1", &f]);
    assert_eq!((r.code, r.stdout.clone()), (1, line(&f, "false")), "{r:?}");
    let r = elle_cli(&["-m", "list-append", "-c", "", "-a", "G0", &f]);
    assert_eq!((r.code, r.stdout.clone()), (0, line(&f, "true")), "{r:?}");
    let r = elle_cli(&["-m", "list-append", "-c", "", "-a", "G1", "-v", "json", &f]);
    assert_eq!(r.json()["anomaly-types"], serde_json::json!(["G1c"]));
}

/// A model that does not fit the history is elle-cli's mismatch error
/// (exit 1), naming the workload it looks like.
#[test]
fn wrong_model_is_a_mismatch() {
    let Some(f) = corpus("cli-paper-example.edn", "model mismatch") else { return };
    let r = elle_cli(&["-m", "rw-register", &f]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("does not match this history") && r.stderr.contains("\"list-append\""), "{}", r.stderr);
}

/// `-d` writes Elle's explanation file, transactions named as Elle names
/// them (T1, T2, ... along each cycle).
#[test]
fn directory_gets_elles_files() {
    let Some(f) = corpus("cli-paper-example.edn", "-d") else { return };
    let dir = temp_dir("elle-cli-d");
    let d = dir.to_string_lossy();
    let r = elle_cli(&["-m", "list-append", "-d", &d, &f]);
    assert_eq!(r.code, 1, "{r:?}");
    let text = std::fs::read_to_string(Path::new(&*d).join("G-single-item.txt")).expect("written");
    assert!(text.starts_with("G-single-item #0\nLet:\n  T1 = {"), "{text}");
    assert!(text.contains("T2 = {"), "{text}");
}

/// The plot options do what elle-cli's help says: `-b` skips plots whose
/// DOT text is larger, `-p png` renders PNG (when graphviz is installed).
#[test]
fn plot_options_apply() {
    let Some(f) = corpus("cli-paper-example.edn", "plot options") else { return };
    let small = temp_dir("elle-cli-b");
    let r = elle_cli(&["-m", "list-append", "-b", "10", "-d", &small.to_string_lossy(), &f]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("skipped plot") && r.stderr.contains("exceed 10"), "{}", r.stderr);
    assert!(!small.join("G-single-item/0.dot").exists());
    assert!(small.join("G-single-item.txt").exists(), "explanations are written whatever the plots");
    let png = temp_dir("elle-cli-p");
    let r = elle_cli(&["-m", "list-append", "-p", "png", "-t", "60000", "-d", &png.to_string_lossy(), &f]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(png.join("G-single-item/0.dot").exists(), "{}", r.stderr);
    if isolde::reports::dot::dot_available() {
        assert!(png.join("G-single-item/0.png").exists(), "{}", r.stderr);
        assert!(!png.join("G-single-item/0.svg").exists());
    } else {
        support::shared::skip("PNG rendering", "graphviz `dot` is not installed");
    }
}

/// One run of a corpus case, as elle-cli flags: `-c`/`-a` from Elle's
/// `:consistency-models` and `:anomalies` (absent anomalies are `-a ""`,
/// since elle-cli's default is `[:G0]` where Elle's is none), and the
/// expected verdict. `None` for runs whose options elle-cli cannot express.
fn elle_cli_run(line: &str) -> Option<(Vec<String>, String)> {
    let opts_start = line.find(":opts {")? + ":opts {".len();
    let opts = &line[opts_start..opts_start + line[opts_start..].find('}')?];
    if ["-keys?", ":transaction-order", ":analyzer"].iter().any(|k| opts.contains(k)) {
        return None;
    }
    let list = |key: &str| -> Option<Option<String>> {
        let at = opts.find(key)? + key.len();
        let rest = opts[at..].trim_start();
        if rest.starts_with("nil") {
            return Some(None);
        }
        let inner = &rest[rest.find('[')? + 1..rest.find(']')?];
        Some(Some(inner.split_whitespace().map(|k| k.trim_start_matches(':')).collect::<Vec<_>>().join(",")))
    };
    let mut args = Vec::new();
    match list(":consistency-models") {
        Some(Some(ms)) => args.extend(["-c".to_string(), ms]),
        Some(None) => args.extend(["-c".to_string(), String::new()]),
        None => {}
    }
    match list(":anomalies") {
        Some(Some(a)) => args.extend(["-a".to_string(), a]),
        _ => args.extend(["-a".to_string(), String::new()]),
    }
    let expected = &line[line.find(":expected {:valid? ")? + ":expected {:valid? ".len()..];
    let valid = expected.split([',', '}']).next()?.trim().trim_start_matches(':').to_string();
    Some((args, valid))
}

/// Every list-append and rw-register run of Elle's test corpus whose
/// options elle-cli can express, as an elle-cli command line: the printed
/// verdict and exit status are Elle's, except the runs where isolde
/// deliberately differs (../shared/conformance/deviations.json, each with
/// its reason), which give isolde's documented verdict.
#[test]
fn elle_corpus_as_elle_cli_command_lines() {
    let Some(dir) = support::shared::path("corpus/elle", "Elle corpus through elle-cli") else { return };
    let Some(dev) = support::shared::path("conformance/deviations.json", "Elle corpus through elle-cli") else {
        return;
    };
    let deviations: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dev).expect("reads")).expect("deviations.json is JSON");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".expected.edn"))
        .collect();
    cases.sort();
    let (mut checked, mut deviating) = (0, 0);
    for expected_path in cases {
        let text = std::fs::read_to_string(&expected_path).expect("reads");
        let model = if text.contains(":workload :list-append") {
            "list-append"
        } else if text.contains(":workload :rw-register") {
            "rw-register"
        } else {
            continue;
        };
        let name =
            expected_path.file_name().map(|n| n.to_string_lossy().replace(".expected.edn", "")).unwrap_or_default();
        let history = dir.join(format!("{name}.edn"));
        let history = history.to_string_lossy();
        let runs = text.lines().filter(|l| l.contains(":opts {"));
        for (i, run) in runs.enumerate() {
            let Some((args, mut valid)) = elle_cli_run(run) else { continue };
            if let Some(d) = deviations.get(format!("{name}#{i}")) {
                valid = match &d["valid?"] {
                    serde_json::Value::Bool(b) => b.to_string(),
                    other => other.as_str().unwrap_or_default().to_string(),
                };
                deviating += 1;
            }
            let mut cmd: Vec<&str> = vec!["-m", model];
            cmd.extend(args.iter().map(String::as_str));
            cmd.push(&history);
            let r = elle_cli(&cmd);
            if REFUSED.contains(&name.as_str()) {
                // Elle: :unknown (an empty graph); isolde's reader refuses a
                // history with nothing to check, which elle-cli's caller
                // sees as a run that could not check the file (255).
                assert_eq!(r.code, 255, "{name}#{i}: {r:?}");
                assert!(r.stdout.is_empty() && r.stderr.contains("nothing to check"), "{name}#{i}: {r:?}");
                continue;
            }
            assert_eq!(r.stdout, line(&history, &valid), "{name}#{i}: elle-cli {cmd:?}: {}", r.stderr);
            assert_eq!(r.code, i32::from(valid == "false"), "{name}#{i}: elle-cli {cmd:?}");
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} runs checked");
    assert!(deviating < checked / 4, "{deviating} of {checked} runs deviate");
}

/// Corpus histories isolde's reader refuses: only invocations, no
/// completion (Elle answers :unknown with an empty transaction graph).
const REFUSED: &[&str] = &["rw-g0-invokes-only"];
