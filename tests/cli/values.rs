//! Histories whose keys and values are not integers (strings, keywords,
//! UUIDs, vectors, big integers), end to end through the `isolde` binary:
//! the verdict, and every value printed back as it was written. Also the
//! echo of ops that lack `:f` or `:time`.

use crate::support;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::cli::anomaly_types;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// Writes `text` to a fresh temporary file named `name` (removed, with its
/// directory, when the returned guard drops).
fn temp_file(name: &str, text: &str) -> support::cli::TempFile {
    let p = support::cli::TempFile::in_dir(support::cli::temp_dir("values"), name);
    std::fs::write(&*p, text).expect("writes");
    p
}

/// Runs `isolde analyze <path> <extra>`: exit code, stdout, stderr.
fn run(path: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_isolde")).arg("analyze").arg(path).args(extra).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn edn(path: &Path, extra: &[&str]) -> (i32, String) {
    let (code, out, err) = run(path, &[&["--format", "edn"], extra].concat());
    assert!(code == 0 || code == 1, "{}: exit {code}: {err}", path.display());
    (code, out)
}

fn json(path: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let (code, out, err) = run(path, &[&["--format", "json"], extra].concat());
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: not JSON ({e}): {out} {err}", path.display()));
    (code, v)
}

#[test]
fn string_list_append_g1c_prints_strings_back() {
    let p = data("strings-append.edn");
    let (code, out) = edn(&p, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("{:valid? false, :anomaly-types (:G1c), "), "{out}");
    // The cycle's ops and steps, values as written.
    assert!(
        out.contains(
            r#"{:index 2, :time 20, :type :ok, :process 0, :f :txn, :value [[:append "k1" "a"] [:r "k2" ["b"]]]}"#
        ),
        "{out}"
    );
    assert!(out.contains(r#"{:type :wr, :key "k1", :value "a", :a-mop-index 0, :b-mop-index 1}"#), "{out}");
    assert!(out.contains(r#"{:type :wr, :key "k2", :value "b", :a-mop-index 0, :b-mop-index 1}"#), "{out}");
    // JSON: strings stay JSON strings.
    let (_, j) = json(&p, &[]);
    assert_eq!(anomaly_types(&j), vec!["G1c"]);
    let steps = &j["anomalies"]["G1c"][0]["steps"];
    assert_eq!(steps[0]["value"], "b");
    assert_eq!(steps[0]["key"], "k2");
    let op = &j["anomalies"]["G1c"][0]["cycle"][0];
    assert_eq!(op["value"], serde_json::json!([["append", "k2", "b"], ["r", "k1", ["a"]]]));
    // Elle's explanation, with the values as written.
    let dir = support::cli::temp_dir("values-dir");
    let (_, _) = edn(&p, &["--directory", dir.to_str().unwrap_or_default()]);
    let txt = std::fs::read_to_string(dir.join("G1c.txt")).expect("G1c.txt");
    // Transactions are named by their :index (T3 is index 3), as in the table.
    assert!(txt.contains(r#"because T2 observed T3's append of "b" to key "k2"."#), "{txt}");
    assert!(txt.contains(r#"T3 observed T2's append of "a" to key "k1": a contradiction!"#), "{txt}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn string_register_g2_and_garbage_read_print_values_and_only_given_fields() {
    let p = data("strings-register.edn");
    let (code, out) = edn(&p, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(":anomaly-types (:G2-item :garbage-read)"), "{out}");
    let uuid = r#"#uuid "8f1e5c1a-0000-4000-8000-000000000001""#;
    // Ops without :f and :time are echoed without them.
    assert!(out.contains(r#"{:index 1, :type :ok, :process 0, :value [[:w :x "v1"] [:r :y nil]]}"#), "{out}");
    assert!(
        out.contains(&format!("{{:index 3, :type :ok, :process 1, :value [[:w :y {uuid}] [:r :x nil]]}}")),
        "{out}"
    );
    assert!(!out.contains(":f nil") && !out.contains(":time -1"), "{out}");
    assert!(out.contains(&format!(":value' {uuid}")), "{out}");
    assert!(out.contains(r#":value' "v1""#), "{out}");
    // The garbage read of a string.
    assert!(
        out.contains(r#":garbage-read [{:op {:index 7, :type :ok, :process 3, :value [[:r :x "never written"]]}, :mop [:r :x "never written"], :key :x, :value "never written"}]"#),
        "{out}"
    );
    let (_, j) = json(&p, &[]);
    let g = &j["anomalies"]["garbage-read"][0];
    assert_eq!(g["value"], "never written");
    assert_eq!(g["key"], "x");
    assert_eq!(
        g["op"],
        serde_json::json!({"index": 7, "type": "ok", "process": 3, "value": [["r", "x", "never written"]]})
    );
    // The table names the value too.
    let (_, table, _) = run(&p, &["--format", "table"]);
    assert!(table.contains(r#"T7 read "never written" of key :x which nobody wrote"#), "{table}");
}

#[test]
fn serial_string_histories_are_valid() {
    let p = temp_file(
        "ok.edn",
        r#"{:type :ok, :f :txn, :value [[:append "k" "a"] [:append :k :b]], :process 0, :time 1}
{:type :ok, :f :txn, :value [[:r "k" ["a"]] [:r :k [:b]] [:append "k" ["nested" 1]]], :process 0, :time 2}
{:type :ok, :f :txn, :value [[:r "k" ["a" ["nested" 1]]]], :process 1, :time 3}
"#,
    );
    let (code, j) = json(&p, &[]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["valid?"], true);
    let p = temp_file(
        "reg.edn",
        "{:type :ok, :value [[:w :x \"v1\"]], :process 0}\n{:type :ok, :value [[:r :x \"v1\"] [:w :x :v2]], :process 0}\n\
         {:type :ok, :value [[:r :x :v2]], :process 1}\n",
    );
    let (code, j) = json(&p, &["--model", "serializable"]);
    assert_eq!(code, 0, "{j}");
}

/// `1`, `1.0`, `"1"` and `:1`-like values are all different values; `1N`
/// and `1` are the same (as in Clojure).
#[test]
fn values_compare_by_edn_equality() {
    // T2 reads the string "1", which only T3 wrote (as the integer 1 is a
    // different value): wr T3 -> T2; and T2 -> ... no cycle. But the read of
    // 1.0 was written by nobody: a garbage read.
    let p = temp_file(
        "eq.edn",
        "{:type :ok, :value [[:w :x 1]], :process 0}\n{:type :ok, :value [[:w :x \"1\"]], :process 1}\n\
         {:type :ok, :value [[:r :x 1N] [:r :y 1.0]], :process 2}\n{:type :ok, :value [[:w :y 1]], :process 3}\n",
    );
    let (_, out) = edn(&p, &["--model", "read-committed"]);
    assert!(out.contains(":anomaly-types (:garbage-read)"), "{out}");
    assert!(out.contains(":mop [:r :y 1.0], :key :y, :value 1.0}"), "{out}");
    // The read of 1N is the write of 1: no garbage read of :x.
    assert!(!out.contains(":key :x, :value"), "{out}");
    // A value is printed as it was first written (`1N` and `1` are one
    // value, and `1` came first here).
    assert!(out.contains("[[:r :x 1] [:r :y 1.0]]"), "{out}");
    let p = temp_file(
        "n.edn",
        "{:type :ok, :value [[:w :x 5N]], :process 0}\n{:type :ok, :value [[:r :x 5]], :process 1}\n\
         {:type :ok, :value [[:r :x 6N]], :process 2}\n",
    );
    let (_, out) = edn(&p, &[]);
    assert!(out.contains(":anomaly-types (:garbage-read)"), "{out}");
    assert!(out.contains(":mop [:r :x 6N], :key :x, :value 6N}"), "{out}");
}

#[test]
fn big_integers_as_values_and_keys() {
    let p = temp_file(
        "big.edn",
        "{:type :ok, :value [[:w 123456789012345678901234 99999999999999999999N]], :process 0}\n\
         {:type :ok, :value [[:r 123456789012345678901234N 99999999999999999999]], :process 1}\n\
         {:type :ok, :value [[:r 123456789012345678901234 -99999999999999999999]], :process 2}\n",
    );
    let (code, out) = edn(&p, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(":anomaly-types (:garbage-read)"), "{out}");
    assert!(out.contains(":key 123456789012345678901234, :value -99999999999999999999}"), "{out}");
    let (_, raw, _) = run(&p, &["--format", "json"]);
    assert!(raw.contains("\"value\": -99999999999999999999\n"), "{raw}");
    // JSON input with a big integer value.
    let p = temp_file(
        "big.json",
        r#"[{"type": "ok", "process": 0, "value": [["w", "x", 18446744073709551616]]},
            {"type": "ok", "process": 1, "value": [["r", "x", 18446744073709551617]]}]"#,
    );
    let (_, j) = json(&p, &[]);
    assert!(anomaly_types(&j).contains(&"garbage-read".to_string()), "{j}");
    let (_, raw, _) = run(&p, &["--format", "json"]);
    assert!(raw.contains("\"value\": 18446744073709551617\n"), "{raw}");
}

#[test]
fn json_string_values_and_missing_fields() {
    let p = temp_file(
        "s.json",
        r#"[{"type": "ok", "process": 0, "value": [["append", "k", "a"], ["r", "j", []]]},
            {"type": "ok", "process": 1, "time": 5, "value": [["append", "j", "b"], ["r", "k", []]]}]"#,
    );
    let (code, j) = json(&p, &[]);
    assert_eq!(code, 1);
    assert_eq!(anomaly_types(&j), vec!["G2-item"]);
    let cycle = &j["anomalies"]["G2-item"][0]["cycle"];
    let ops: Vec<&serde_json::Value> = cycle.as_array().map(|a| a.iter().collect()).unwrap_or_default();
    let first = ops.iter().find(|o| o["index"] == 0).expect("op 0 in the cycle");
    assert_eq!(
        **first,
        serde_json::json!({"index": 0, "type": "ok", "process": 0, "value": [["append", "k", "a"], ["r", "j", []]]})
    );
    let second = ops.iter().find(|o| o["index"] == 1).expect("op 1 in the cycle");
    assert_eq!(second["time"], 5);
    assert!(second.get("f").is_none());
}

#[test]
fn keyword_values_print_as_json_strings_without_colon() {
    let p = temp_file(
        "kw.edn",
        "{:type :ok, :value [[:w :x :v1]], :process 0}\n{:type :ok, :value [[:r :x :v2]], :process 1}\n",
    );
    let (_, out) = edn(&p, &[]);
    assert!(out.contains(":mop [:r :x :v2], :key :x, :value :v2}"), "{out}");
    let (_, j) = json(&p, &[]);
    assert_eq!(j["anomalies"]["garbage-read"][0]["value"], "v2");
}

/// `:time nil`, `:f nil` and `:value nil` are echoed as given.
#[test]
fn nil_fields_are_echoed_as_given() {
    let p = temp_file(
        "nil.edn",
        "{:type :invoke, :f nil, :time nil, :value nil, :process 0}\n{:type :ok, :f nil, :time nil, :value [[:r :x 7]], :process 0}\n\
         {:type :ok, :value [[:w :y 1]], :process 1}\n{:type :ok, :value [[:r :y 1]], :process 2}\n",
    );
    let (_, out) = edn(&p, &[]);
    assert!(
        out.contains("{:op {:index 1, :time nil, :type :ok, :process 0, :f nil, :value [[:r :x 7]]}, :mop [:r :x 7]"),
        "{out}"
    );
}

/// Ops that have every field still print exactly as Elle prints them.
#[test]
fn complete_ops_print_in_elles_order() {
    let p = temp_file(
        "full.edn",
        "{:type :ok, :f :txn, :value [[:r :x 7]], :process 0, :time 5, :index 0, :error [:x \"y\"]}\n\
         {:type :ok, :f :txn, :value [[:w :y 1]], :process 1, :time 6, :index 1}\n\
         {:type :ok, :f :txn, :value [[:r :y 1]], :process 2, :time 7, :index 2}\n",
    );
    let (_, out) = edn(&p, &[]);
    assert!(
        out.contains(
            r#"{:op {:index 0, :time 5, :type :ok, :process 0, :f :txn, :value [[:r :x 7]], :error [:x "y"]}"#
        ),
        "{out}"
    );
}

mod roundtrip {
    //! Property: any history of EDN values, integers among them, parses and
    //! prints back exactly as written (EDN and JSON echo), in one chunk or
    //! many.
    use isolde::history::History;
    use isolde::ingest::{read_bytes, Format};
    use isolde::reports::{edn, json, tree};
    use proptest::prelude::*;

    /// Spellings that print back unchanged and that no other spelling in
    /// the pool equals (so "the first spelling seen" is the only one).
    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            (0i64..5).prop_map(|n| n.to_string()),
            "[a-z \"\\\\]{0,6}".prop_map(|s| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))),
            "[a-z][a-z0-9-]{0,5}".prop_map(|s| format!(":{s}")),
            (1u64..1000).prop_map(|n| format!("{}.5", n)),
            (0u32..3).prop_map(|n| format!("#uuid \"00000000-0000-4000-8000-00000000000{n}\"")),
            (0u32..3).prop_map(|n| format!("1234567890123456789012{n}N")),
            Just("nil".to_string()),
            Just("true".to_string()),
        ]
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => scalar().prop_filter("nil has a meaning of its own", |s| s != "nil"),
            1 => proptest::collection::vec(scalar(), 0..3).prop_map(|v| format!("[{}]", v.join(" "))),
        ]
    }

    fn mop() -> impl Strategy<Value = String> {
        let key = prop_oneof![scalar().prop_filter("nil key", |s| s != "nil"), (0i64..3).prop_map(|k| k.to_string())];
        prop_oneof![
            (key.clone(), value()).prop_map(|(k, v)| format!("[:append {k} {v}]")),
            (key.clone(), value()).prop_map(|(k, v)| format!("[:w {k} {v}]")),
            (key.clone(), proptest::collection::vec(value(), 0..4))
                .prop_map(|(k, v)| format!("[:r {k} [{}]]", v.join(" "))),
            key.prop_map(|k| format!("[:r {k} nil]")),
        ]
    }

    fn history() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::vec((proptest::collection::vec(mop(), 0..4), any::<bool>()), 1..30).prop_map(|ops| {
            ops.into_iter()
                .enumerate()
                .map(|(i, (mops, timed))| {
                    let time = if timed { format!(", :time {}", i * 10) } else { String::new() };
                    format!("{{:index {i}{time}, :type :ok, :process {}, :value [{}]}}", i % 3, mops.join(" "))
                })
                .collect()
        })
    }

    fn echo(h: &History) -> Vec<String> {
        (0..h.ops.len() as u32).map(|i| edn::to_string(h, &tree::op(h, i))).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn values_print_back_as_written(ops in history(), pad in 0usize..2) {
            let mut text = ops.join("\n");
            text.push('\n');
            // Optionally a large history, so the parallel reader cuts it.
            let copies = if pad == 1 { (1 << 21) / text.len() + 2 } else { 1 };
            let big = text.repeat(copies);
            let h = read_bytes("p.edn", big.as_bytes(), Format::Edn).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let printed = echo(&h);
            prop_assert_eq!(printed.len(), ops.len() * copies);
            for (i, line) in printed.iter().enumerate() {
                prop_assert_eq!(line, &ops[i % ops.len()]);
            }
            // The JSON echo of the same history is read back to the same
            // values as JSON (keywords as strings without colon).
            let h1 = read_bytes("p.edn", text.as_bytes(), Format::Edn).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for i in 0..h1.ops.len() as u32 {
                let j = json::to_string(&h1, &tree::op(&h1, i));
                prop_assert!(serde_json::from_str::<serde_json::Value>(&j).is_ok(), "{}", j);
            }
        }
    }
}

/// Errors that name a value print it as written.
#[test]
fn duplicate_string_appends_and_writes_name_the_value() {
    let p = temp_file("da.edn", "{:type :ok, :value [[:append \"k\" \"a\"]], :process 0}\n{:type :ok, :value [[:append \"k\" \"a\"]], :process 1}\n");
    let (_, out, _) = run(&p, &["--format", "edn"]);
    assert!(out.contains(r#"key \"k\": value \"a\" was appended by more than one operation"#), "{out}");
    let p = temp_file(
        "dw.edn",
        "{:type :ok, :value [[:w :k \"a\"]], :process 0}\n{:type :ok, :value [[:w :k \"a\"]], :process 1}\n{:type :ok, :value [[:r :k \"a\"]], :process 2}\n",
    );
    // Registers accept a repeated value: the read has two candidate
    // writers, and either explains it.
    let (code, out, _) = run(&p, &["--format", "edn", "-m", "serializable"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains(":error"), "{out}");
}
