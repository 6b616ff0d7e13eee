//! The `isolde` binary: exit codes, output formats, and error messages.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Removes a temporary file or directory when dropped (also when the test
/// fails).
struct Cleanup(std::path::PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
    }
}

fn isolde(args: &[&str], input: &str) -> (i32, String, String) {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("isolde-cli-{}-{n}", std::process::id()));
    let _cleanup = Cleanup(dir.clone());
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("h.edn");
    std::fs::write(&file, input).expect("write history");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_isolde"));
    cmd.arg("analyze").arg(&file).args(args);
    let out = cmd.output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const G1C: &str = "{:type :ok, :process 0, :value [[:append :x 1] [:r :y [1]]]}
{:type :ok, :process 1, :value [[:append :y 1] [:r :x [1]]]}
";

#[test]
fn invalid_history_exits_1_with_elle_json() {
    let (code, out, _) = isolde(&["--format", "json"], G1C);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["valid?"], serde_json::Value::Bool(false));
    assert_eq!(v["anomaly-types"], serde_json::json!(["G1c"]));
    assert_eq!(v["not"], serde_json::json!(["read-committed"]));
    let step = &v["anomalies"]["G1c"][0]["steps"][0];
    assert_eq!(step["type"], "wr");
}

#[test]
fn edn_output_is_elles_result_map() {
    let (code, out, _) = isolde(&["--format", "edn", "--model", "rc"], G1C);
    assert_eq!(code, 1);
    assert!(out.starts_with("{:valid? false, :anomaly-types (:G1c), :anomalies {:G1c [{:cycle [{:index "), "{out}");
    assert!(out.contains(":not #{:read-committed}"));
}

#[test]
fn valid_history_exits_0() {
    let (code, out, _) = isolde(
        &["--format", "json"],
        "{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 0, :value [[:r :x [1]]]}\n",
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["valid?"], true, "{out}");
    // The default check decides every level of the ladder.
    let levels = v["levels"].as_array().expect("levels");
    assert!(levels.iter().all(|l| l["valid?"] == true || l["valid?"] == "not-checked"), "{out}");
    assert!(levels.iter().any(|l| l["level"] == "strict-serializable" && l["valid?"] == true), "{out}");
    let (code, out, _) = isolde(
        &["--format", "json", "-m", "strict-serializable"],
        "{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 0, :value [[:r :x [1]]]}\n",
    );
    assert_eq!(code, 0);
    assert_eq!(out.split_whitespace().collect::<String>(), "{\"valid?\":true}", "a named model: Elle's map");
}

#[test]
fn unknown_exits_3() {
    let (code, _, _) =
        isolde(&["--format", "json", "--model", "serializable"], "{:type :ok, :process 0, :value [[:r :x nil]]}\n");
    assert_eq!(code, 3);
}

#[test]
fn malformed_input_names_file_line_and_column() {
    let (code, _, err) = isolde(
        &[],
        "{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 0, :value [[:incr :x 1]]}\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("h.edn:2:"), "{err}");
    assert!(err.contains("expected"), "{err}");
}

#[test]
fn unknown_model_is_a_usage_error() {
    let (code, _, err) = isolde(&["--model", "bogus"], G1C);
    assert_eq!(code, 2);
    assert!(err.contains("unknown consistency model"), "{err}");
}

#[test]
fn directory_gets_elles_explanation_file() {
    let dir = std::env::temp_dir().join(format!("isolde-cli-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _cleanup = Cleanup(dir.clone());
    let d = dir.to_string_lossy().into_owned();
    let (code, _, _) = isolde(&["--format", "json", "--directory", &d], G1C);
    assert_eq!(code, 1);
    let text = std::fs::read_to_string(dir.join("G1c.txt")).expect("G1c.txt written");
    // One numbering: each transaction is T<its :index>, as in the table.
    assert!(text.starts_with("G1c #0\nLet:\n  T"), "{text}");
    let lets: Vec<&str> = text.lines().filter(|l| l.starts_with("  T")).collect();
    assert_eq!(lets.len(), 2, "{text}");
    for l in lets {
        let (name, rest) = l.trim_start().split_once(" = {:index ").expect("T<n> = {:index <n>");
        let index = rest.split(',').next().unwrap_or_default();
        assert_eq!(name, format!("T{index}"), "{text}");
    }
    assert!(text.ends_with(": a contradiction!"), "{text}");
}

#[test]
fn directory_plots_cycles_and_sccs_as_dot_and_svg() {
    let dir = std::env::temp_dir().join(format!("isolde-cli-plots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _cleanup = Cleanup(dir.clone());
    let d = dir.to_string_lossy().into_owned();
    let (code, _, err) = isolde(&["--format", "json", "--directory", &d], G1C);
    assert_eq!(code, 1);
    let dot = std::fs::read_to_string(dir.join("G1c/0.dot")).expect("cycle plot written");
    assert!(dot.starts_with("digraph G {"), "{dot}");
    assert!(dot.contains("label=\"wr :y\""), "{dot}");
    assert!(dot.contains("color=\"#C000A5\""), "{dot}");
    assert!(dir.join("sccs/0.dot").exists());
    let have_dot = Command::new("dot").arg("-V").output().is_ok_and(|o| o.status.success());
    if have_dot {
        let svg = std::fs::read_to_string(dir.join("G1c/0.svg")).expect("rendered with dot");
        assert!(svg.contains("<svg"), "{svg}");
    } else {
        assert!(err.contains("not installed"), "{err}");
    }
}

/// Empty or unknown model and anomaly names are usage errors (exit 2) that
/// list the valid names; they are never ignored, which would turn a check
/// of an invalid history into a vacuous `valid`.
#[test]
fn meaningless_models_and_anomalies_are_usage_errors() {
    for args in [
        &["-m", ""][..],
        &["-m", ","],
        &["-m", "serializable,"],
        &["-m", "none,serializable"],
        &["-a", "bogus"],
        &["-a", ""],
        &["-a", "G1c,"],
        &["-m", "none", "-a", "bogus"],
    ] {
        let (code, out, err) = isolde(args, G1C);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains("empty") || err.contains("known"), "{args:?}: {err}");
    }
    let (_, _, err) = isolde(&["-a", "bogus"], G1C);
    assert!(err.contains("unknown anomaly \"bogus\"") && err.contains("G1c") && err.contains("G2-item"), "{err}");
}

/// Anomaly names match case-insensitively (Elle's `:G1c` as `G1C`), and a
/// named anomaly alone (no model) is checked.
#[test]
fn anomaly_names_are_case_insensitive() {
    for a in ["G1C", "g1c", ":G1c", "G1c"] {
        let (code, out, err) = isolde(&["-m", "none", "-a", a, "--format", "json"], G1C);
        assert_eq!(code, 1, "{a}: {out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(v["anomaly-types"], serde_json::json!(["G1c"]), "{a}");
    }
    let (code, _, err) = isolde(&["-m", "SERIALIZABLE", "--format", "json"], G1C);
    assert_eq!(code, 1, "{err}");
}

/// Keys that are not file names (`a/b`, 300 characters) get escaped,
/// shortened file names in `--directory`, and the verdict is printed.
#[test]
fn directory_file_names_are_safe_for_any_key() {
    let long = "k".repeat(300);
    let history = format!(
        "{{:type :ok, :process 0, :value [[:append \"a/b\" 1] [:append \"{long}\" 1]]}}
{{:type :ok, :process 1, :value [[:append \"a/b\" 2] [:append \"{long}\" 2]]}}
{{:type :ok, :process 2, :value [[:r \"a/b\" [1 2]] [:r \"{long}\" [1 2]]]}}
{{:type :ok, :process 3, :value [[:r \"a/b\" [2 1]] [:r \"{long}\" [2 1]]]}}
"
    );
    let dir = std::env::temp_dir().join(format!("isolde-cli-keys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _cleanup = Cleanup(dir.clone());
    let d = dir.to_string_lossy().into_owned();
    let (code, out, err) = isolde(&["--format", "json", "--directory", &d, "--workload", "list-append"], &history);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("verdict printed");
    assert!(v["anomaly-types"].as_array().is_some_and(|a| a.iter().any(|t| t == "incompatible-order")), "{out}");
    let names: Vec<String> = std::fs::read_dir(dir.join("incompatible-order"))
        .expect("written")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    assert!(names.contains(&"%22a%2Fb%22.html".to_string()), "{names:?}");
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().all(|n| n.len() < 255), "{names:?}");
    assert!(!err.contains("could not write"), "{err}");
}

/// A directory that cannot be written is a warning after the verdict, with
/// the verdict's exit status, never instead of it.
#[test]
fn unwritable_directory_is_a_warning_after_the_verdict() {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let blocker = std::env::temp_dir().join(format!("isolde-cli-blocker-{}-{n}", std::process::id()));
    let _cleanup = Cleanup(blocker.clone());
    std::fs::write(&blocker, "a file where the directory should go").expect("write");
    let d = blocker.join("out").to_string_lossy().into_owned();
    let (code, out, err) = isolde(&["--format", "json", "--directory", &d], G1C);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("\"G1c\""), "{out}");
    assert!(err.contains("warning: could not write the output directory"), "{err}");
}

/// Graphviz's warnings are drained as `dot` writes them: a plot whose
/// rendering prints far more than a pipe holds (64 KiB) still finishes.
#[test]
fn dot_warnings_do_not_block_rendering() {
    if !isolde::reports::dot::dot_available() {
        eprintln!("skipped: graphviz `dot` is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("isolde-cli-dot-{}", std::process::id()));
    let _cleanup = Cleanup(dir.clone());
    std::fs::create_dir_all(&dir).expect("dir");
    let mut text = String::from("digraph {\n");
    for i in 0..3000 {
        text.push_str(&format!("n{i} [color=notacolor{i}];\n"));
    }
    text.push_str("}\n");
    let src = dir.join("warn.dot");
    std::fs::write(&src, text).expect("write");
    let r = isolde::reports::dot::render(&src, &dir.join("warn.svg"), "svg", std::time::Duration::from_secs(60));
    assert_eq!(r, Ok(()));
    assert!(dir.join("warn.svg").exists());
}

/// Flag values at the edge of their types give an answer, never a panic:
/// timeouts too long for the clock saturate.
#[test]
fn huge_timeouts_and_budgets_do_not_panic() {
    let registers = "{:type :ok, :process 0, :value [[:w :x 1]]}\n{:type :ok, :process 1, :value [[:r :x 1]]}\n";
    let max = u64::MAX.to_string();
    let usize_max = usize::MAX.to_string();
    for args in [
        &["--exact-timeout", &max][..],
        &["--cycle-search-timeout", &max],
        &["--reach-memory", &usize_max],
        &["--max-constraints", &usize_max],
        &["--plot-timeout", &max],
    ] {
        let (code, out, err) = isolde(&[args, &["--format", "json", "-m", "serializable"]].concat(), registers);
        assert_eq!(code, 0, "{args:?}: {out}{err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
