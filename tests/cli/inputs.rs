//! Reading real and awkward inputs through the `isolde` binary: C4's aborted
//! transactions, standard input, non-regular files, empty histories.

use crate::support;

use std::time::Duration;
use support::cli::{anomaly_types, isolde, temp_dir};

const LIMIT: Duration = Duration::from_secs(60);

/// C4 / Plume test case `tap-b` (aborted read): the first two lines belong to
/// an aborted transaction (id `-1`), whose write a committed one then reads.
const TAP_B: &str = "w(1,1,0,-1)\nw(2,1,0,-1)\nr(1,1,0,1)";

#[test]
fn c4_aborted_transactions_are_read_and_an_aborted_read_is_found() {
    let dir = temp_dir("inputs");
    let p = dir.join("tap-b.txt");
    std::fs::write(&p, TAP_B).expect("write");
    let mut paths = vec![p];
    if let Some(shared) = support::shared::path("corpus/real/c4-text-tap-b.txt", "the published C4 TAP-b history") {
        paths.push(shared);
    }
    for p in paths {
        let path = p.to_string_lossy();
        for model in ["read-atomic", "read-committed", "snapshot-isolation", "serializable"] {
            let r = isolde(&["analyze", &path, "--format", "json", "-m", model], None, LIMIT);
            assert_eq!(r.code, 1, "{path} {model}: {r:?}");
            let v = r.json();
            assert!(anomaly_types(&v).contains(&"G1a".to_string()), "{path} {model}: {v}");
            let not: Vec<&str> =
                v["not"].as_array().map(|a| a.iter().filter_map(|t| t.as_str()).collect()).unwrap_or_default();
            assert!(not.contains(&"read-committed"), "{path}: {not:?}");
        }
    }
}

#[test]
fn dash_reads_standard_input() {
    let r = isolde(&["analyze", "-", "--format", "json"], Some(TAP_B.as_bytes()), LIMIT);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(anomaly_types(&r.json()).contains(&"G1a".to_string()));
    let edn = b"{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 1, :value [[:r :x [1]]]}\n";
    let r = isolde(&["analyze", "-", "--format", "json", "-m", "strict-serializable"], Some(edn), LIMIT);
    assert_eq!((r.code, r.json()), (0, serde_json::json!({"valid?": true})), "{r:?}");
}

#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_at_once() {
    let dir = temp_dir("inputs");
    let fifo = dir.join("h.edn");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    for path in [fifo.to_string_lossy().into_owned(), "/dev/zero".to_string()] {
        let r = isolde(&["analyze", &path], None, Duration::from_secs(20));
        assert_eq!(r.code, 2, "{path}: {r:?}");
        assert!(r.stderr.contains("not a regular file"), "{path}: {}", r.stderr);
    }
}

#[test]
fn empty_and_invocation_only_histories_are_input_errors() {
    let dir = temp_dir("inputs");
    let empty = dir.join("empty.edn");
    std::fs::write(&empty, "").expect("write");
    let r = isolde(&["analyze", &empty.to_string_lossy()], None, LIMIT);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("empty.edn: no operations: the history is empty"), "{}", r.stderr);
    let inv = dir.join("inv.edn");
    std::fs::write(&inv, "{:type :invoke, :process 0, :value [[:append :x 1]]}\n").expect("write");
    let r = isolde(&["analyze", &inv.to_string_lossy()], None, LIMIT);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("1 invocation but no completion"), "{}", r.stderr);
}
