//! The `isolde` binary: exit codes, output formats, and error messages.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn isolde(args: &[&str], input: &str) -> (i32, String, String) {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("isolde-cli-{}-{n}", std::process::id()));
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
    assert_eq!(out.split_whitespace().collect::<String>(), "{\"valid?\":true}");
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
    let d = dir.to_string_lossy().into_owned();
    let (code, _, _) = isolde(&["--format", "json", "--directory", &d], G1C);
    assert_eq!(code, 1);
    let text = std::fs::read_to_string(dir.join("G1c.txt")).expect("G1c.txt written");
    assert!(text.starts_with("G1c #0\nLet:\n  T1 = {:index "), "{text}");
    assert!(text.ends_with(": a contradiction!"), "{text}");
}

#[test]
fn directory_plots_cycles_and_sccs_as_dot_and_svg() {
    let dir = std::env::temp_dir().join(format!("isolde-cli-plots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
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
