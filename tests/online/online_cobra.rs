//! `isolde analyze --follow DIR` on a directory of Cobra client logs
//! (`online::cobra`): the logs are streamed to the follow engine with
//! Cobra's epoch key as isolde's fence key. The verdict is the batch
//! reader's, transactions are collected (by default; Cobra's
//! read fences order both ways at the serializable and snapshot levels,
//! only what follows them at causal-cerone), and a malformed record ends the run with the batch
//! reader's error, after the verdict on what came before it.

use crate::support;

use std::time::Duration;

use isolde::check::CheckOptions;
use isolde::online::{self, FollowOptions, Followed};
use support::cli::{isolde, temp_dir, Run};
use support::cobra::{write_dir, Plant, Shape};
use support::online::{options, Recorder};

const LIMIT: Duration = Duration::from_secs(120);

fn shape(clients: usize, txns: usize, seed: u64) -> Shape {
    Shape { clients, txns, keys: 12, fence_every: 5, readers_only: Vec::new(), seed }
}

/// The batch run and the follow run (a window, by default; small rounds) of
/// `dir` at `model`.
fn both(dir: &std::path::Path, model: &str) -> (Run, Run) {
    let d = dir.to_str().expect("utf-8 path");
    let batch = isolde(&["analyze", d, "-m", model, "--format", "json"], None, LIMIT);
    let follow =
        isolde(&["analyze", "--follow", d, "--round-txns", "40", "-m", model, "--format", "json"], None, LIMIT);
    (batch, follow)
}

/// The verdict and anomaly types of a follow run's JSON result (its last
/// line; the lines before it are the anomalies reported while following).
fn verdict(run: &Run) -> (serde_json::Value, Vec<String>) {
    let line = run.stdout.lines().last().unwrap_or_default();
    let v: serde_json::Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {} / {}", run.stdout, run.stderr));
    (v["valid?"].clone(), support::cli::anomaly_types(&v))
}

/// The verdict and anomaly types of a batch run's JSON result.
fn batch_verdict(run: &Run) -> (serde_json::Value, Vec<String>) {
    let v = run.json();
    (v["valid?"].clone(), support::cli::anomaly_types(&v))
}

/// The offset of the first `W` record at or after `from` in a log.
fn write_record_after(log: &[u8], from: usize) -> usize {
    let mut i = 0;
    while i < log.len() {
        if i >= from && log[i] == b'W' {
            return i;
        }
        i += match log[i] {
            b'S' | b'C' => 9,
            b'W' => 25,
            _ => 33,
        };
    }
    panic!("no write record after byte {from}")
}

/// Follows `dir` through the library (holding a window) at `model`,
/// rounds every `round_txns` transactions.
fn follow(dir: &std::path::Path, model: &str, round_txns: usize) -> (Followed, Recorder) {
    let opts: CheckOptions = options(false, Some(model));
    let fopts = FollowOptions {
        round_txns,
        round_interval: Duration::from_secs(3600),
        throttle: false,
        ..FollowOptions::default()
    };
    let mut rec = Recorder::default();
    let followed = online::follow(dir, &opts, &fopts, &mut rec).expect("follows");
    (followed, rec)
}

#[test]
fn a_valid_directory_gets_the_batch_verdict() {
    for (seed, model) in
        [(1, "strong-session-serializable"), (2, "strong-session-snapshot-isolation"), (3, "causal-cerone")]
    {
        let dir = temp_dir("cobra-valid");
        write_dir(&dir, &shape(4, 120, seed), Plant::None);
        let (batch, follow) = both(&dir, model);
        assert_eq!(batch.code, 0, "{}", batch.stderr);
        assert_eq!(follow.code, batch.code, "{model}: {}", follow.stderr);
        assert_eq!(verdict(&follow), batch_verdict(&batch), "{model}");
        // At causal-cerone only write fences order (few, in so short a run).
        let collected = follow.stderr.contains("transactions were collected while following");
        assert!(collected || model == "causal-cerone", "{}", follow.stderr);
    }
}

#[test]
fn a_planted_stale_read_is_found_as_the_batch_check_finds_it() {
    for model in ["strong-session-serializable", "strong-session-snapshot-isolation", "causal-cerone"] {
        let dir = temp_dir("cobra-stale");
        write_dir(&dir, &shape(4, 150, 7), Plant::StaleRead(300));
        let (batch, follow) = both(&dir, model);
        assert_eq!(batch.code, 1, "{}", batch.stdout);
        assert_eq!(follow.code, 1, "{model}: {}", follow.stderr);
        let (b, f) = (batch_verdict(&batch), verdict(&follow));
        assert_eq!(f.0, b.0);
        assert!(b.1.iter().all(|t| f.1.contains(t)), "{model}: batch {:?}, follow {:?}", b.1, f.1);
        // Reported while following, before the end of the input.
        assert!(follow.stdout.lines().count() > 1, "{}", follow.stdout);
    }
}

#[test]
fn a_read_of_a_write_nobody_made_waits_and_gets_the_batch_verdict() {
    let dir = temp_dir("cobra-garbage");
    write_dir(&dir, &shape(3, 100, 11), Plant::GarbageRead(40));
    let (batch, follow) = both(&dir, "strong-session-serializable");
    assert_eq!(batch.code, 1, "{}", batch.stdout);
    assert_eq!(follow.code, 1, "{}", follow.stderr);
    assert_eq!(verdict(&follow), batch_verdict(&batch));
}

#[test]
fn a_longer_directory_is_held_in_a_small_window() {
    let dir = temp_dir("cobra-long");
    let total = write_dir(&dir, &Shape { keys: 40, ..shape(8, 1500, 5) }, Plant::None);
    let (followed, rec) = follow(&dir, "strong-session-serializable", 500);
    assert!(followed.collected as usize > total / 2, "{} of {total} collected", followed.collected);
    let held: Vec<u64> = rec.rounds.iter().map(|s| (s.txns as u64).saturating_sub(s.collected.unwrap_or(0))).collect();
    let late = &held[held.len() / 2..];
    assert!(late.iter().all(|&h| h < 1500), "held per round: {held:?}");
}

#[test]
fn read_fences_order_both_ways_at_serializability_and_only_what_follows_at_causal_cerone() {
    let dir = temp_dir("cobra-readers");
    // Client 1 never writes the epoch key: only its read fences order it.
    let s = Shape { readers_only: vec![1], keys: 40, ..shape(3, 400, 9) };
    write_dir(&dir, &s, Plant::None);
    let (ser, _) = follow(&dir, "strong-session-serializable", 100);
    assert!(ser.collected > 0, "nothing collected with read fences");
    // At causal-cerone its read fences order its later transactions
    // (reads-from), so collection no longer waits for its first fence,
    // but nothing orders its transactions before a later fence. Those a
    // frozen transaction read from, and what precedes them in its session,
    // precede it causally, and so every later transaction: they are
    // collected (before 2026-12-08 none was, and the collected prefix of
    // each round's execution stopped at client 1's first transaction).
    let (mut causal, rec) = follow(&dir, "causal-cerone", 100);
    assert!(causal.collected > 0, "{:?}", rec.notes);
    assert!(!rec.notes.iter().any(|n| n.contains("waits for process 1's first fence")), "{:?}", rec.notes);
    let check = options(false, Some("causal-cerone"));
    assert!(rec.found.is_empty(), "{:?}", rec.found);
    assert_eq!(support::online::verdict(&mut causal, &check).valid, isolde::outcome::Validity::Valid);
}

#[test]
fn a_truncated_record_ends_the_run_with_the_batch_error_after_a_verdict() {
    let dir = temp_dir("cobra-truncated");
    write_dir(&dir, &shape(3, 200, 13), Plant::None);
    let log = dir.join("T1.log");
    let bytes = std::fs::read(&log).expect("reads the log");
    let cut = write_record_after(&bytes, bytes.len() / 2) + 10;
    std::fs::write(&log, &bytes[..cut]).expect("truncates the log");
    let d = dir.to_str().expect("utf-8 path");
    let batch = isolde(&["analyze", d, "-m", "strong-session-serializable"], None, LIMIT);
    assert_eq!(batch.code, 2);
    let error = batch.stderr.lines().find(|l| l.contains("T1.log: record")).expect("the batch error").to_string();
    let at = error.find("T1.log").expect("names the file");
    let expected = "expected a complete 'W' record of 25 bytes, found end of input after 10 bytes";
    assert!(error.contains(&format!(", at byte {}: {expected}", cut - 10)), "{error}");
    let follow =
        isolde(&["analyze", "--follow", d, "-m", "strong-session-serializable", "--format", "json"], None, LIMIT);
    assert_eq!(follow.code, 2, "{}", follow.stderr);
    assert!(follow.stderr.contains(&error[at..]), "batch: {error}\nfollow: {}", follow.stderr);
    assert_eq!(verdict(&follow).0, serde_json::Value::Bool(true), "{}", follow.stdout);
}

#[test]
fn a_client_that_starts_late_holds_collection_back() {
    use support::cobra::{r, sc, INIT_ID};
    let dir = temp_dir("cobra-late");
    write_dir(&dir, &Shape { keys: 12, ..shape(3, 300, 17) }, Plant::None);
    // A fourth client whose transactions all start after the others' and
    // read the initial state of every key: valid (serialized first), but
    // only if what the others wrote was not collected before it showed up.
    let late: Vec<u8> = (0..10i64)
        .flat_map(|i| {
            let id = 0x7000_0000_0000 + i;
            let reads = (1..=12).flat_map(|k| r(INIT_ID, INIT_ID, k, 0));
            sc(b'S', id).into_iter().chain(reads).chain(sc(b'C', id))
        })
        .collect();
    std::fs::write(dir.join("T3.log"), late).expect("writes the late log");
    let (mut followed, rec) = follow(&dir, "strong-session-serializable", 50);
    assert!(rec.found.is_empty(), "reported: {:?}", rec.found);
    assert_eq!(followed.collected, 0, "{:?}", rec.notes);
    assert!(rec.notes.iter().any(|n| n.contains("process 3")), "{:?}", rec.notes);
    let outcome =
        online::final_check(&mut followed, &options(false, Some("strong-session-serializable"))).expect("final check");
    assert_eq!(outcome.valid, isolde::outcome::Validity::Valid);
}
