//! `isolde elle-cli` and the binary run through a link named `elle-cli`:
//! elle-cli's command lines (from its README and test.sh) on Elle's
//! histories give elle-cli's verdicts, output lines and exit statuses.

mod support;

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

/// A link named `elle-cli` to the binary, in a fresh directory.
fn elle_cli_link() -> PathBuf {
    let dir = temp_dir("elle-cli-link");
    let link = dir.join("elle-cli");
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_isolde"), &link).expect("symlink");
    #[cfg(not(unix))]
    std::fs::copy(env!("CARGO_BIN_EXE_isolde"), &link).expect("copy");
    link
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
    let link = elle_cli_link();
    let r = run_program(&link, &["--help"], None, LIMIT);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("Usage: elle-cli -m model [options] files"), "{}", r.stdout);
    let Some(f) = corpus("cli-paper-example.edn", "elle-cli link") else { return };
    let r = run_program(&link, &["-m", "list-append", &f], None, LIMIT);
    assert_eq!((r.code, r.stdout.clone()), (1, line(&f, "false")), "{r:?}");
    assert_eq!(r.stdout, elle_cli(&["-m", "list-append", &f]).stdout);
}

/// elle-cli's other models are clear errors naming the checker to use.
#[test]
fn unchecked_models_name_the_tool_that_checks_them() {
    let dir = temp_dir("elle-cli-bank");
    let f = dir.join("bank.edn");
    std::fs::write(&f, "{:type :ok, :f :read, :value {0 10}, :process 0}\n").expect("write");
    let f = f.to_string_lossy();
    for (model, tool) in
        [("bank", "jepsen.tests.bank"), ("cas-register", "Knossos"), ("set-full", "set-full"), ("counter", "counter")]
    {
        let r = elle_cli(&["-m", model, &f]);
        assert_eq!(r.code, 255, "{model}: {r:?}");
        assert!(r.stdout.is_empty(), "{model}: {}", r.stdout);
        assert!(r.stderr.contains(tool) && r.stderr.contains("elle-cli"), "{model}: {}", r.stderr);
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
