//! `isolde analyze --follow`: the online checker gives the batch verdict on
//! everything read, reports only anomalies the batch check confirms, reports
//! a planted anomaly before the input ends, and handles a stream's edges
//! (a line still being written, a malformed line, a vector, signals' and
//! idle ends, the memory limit).

use crate::support;

use std::io::Write;
use std::time::Duration;

use isolde::gen::{GenOptions, Inject};
use proptest::prelude::*;
use support::cli::{isolde, isolde_fed, temp_dir};
use support::online::{follow, generate, options, INJECT, LEVELS};

const MODELS: [Option<&str>; 4] = [None, Some("serializable"), Some("snapshot-isolation"), Some("causal-cerone")];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Followed in random chunks with frequent rounds, a history ends with
    /// exactly the ops and the verdict of the batch check, and every
    /// anomaly reported on the way is one the batch check finds.
    #[test]
    fn following_gives_the_batch_verdict(
        list in any::<bool>(),
        seed in 0u64..1_000_000,
        txns in 60usize..260,
        processes in 2usize..7,
        level in 0usize..4,
        inject in proptest::collection::vec(0usize..6, 0..3),
        faults in (0usize..3, 0usize..3),
        model in 0usize..4,
        sizes in proptest::collection::vec(1usize..700, 1..6),
        round in 5usize..60,
    ) {
        let inject: Vec<Inject> = inject.iter().map(|&i| INJECT[i]).collect();
        let opts = GenOptions { level: LEVELS[level], inject, inject_count: 0, ..GenOptions::default() };
        let faults = (faults.0 as f64 * 0.05, faults.1 as f64 * 0.05);
        let Some(text) = generate(list, seed, txns, processes, faults, &opts) else { return Ok(()) };
        let check = options(list, MODELS[model]);
        let (followed, rec) = follow(&text, sizes, round, &check);
        let batch = isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn)
            .expect("parses");
        prop_assert_eq!(followed.history.ops.len(), batch.ops.len());
        prop_assert!(matches!(followed.ending, isolde::online::Ending::End(_)));
        let want = isolde::check::check(&batch, &check).expect("batch check");
        let got = isolde::check::check(&followed.history, &check).expect("final check");
        prop_assert_eq!(got.valid, want.valid);
        prop_assert_eq!(&got.anomaly_types, &want.anomaly_types);
        // Sound: whatever was reported, the batch check refutes the model
        // too (a weak level's check reports one witness of its choice, so
        // the types may differ), and every reported list-append cycle is
        // justified step by step by the history read when it was reported.
        if let Some((name, _)) = rec.found.first() {
            prop_assert!(want.valid != isolde::outcome::Validity::Valid, "reported {} but the batch check is valid", name);
        }
        prop_assert!(rec.unjustified.is_empty(), "{:?}", rec.unjustified);
    }
}

/// An anomaly planted halfway through a history is reported by a round,
/// before the input ends.
#[test]
fn a_planted_anomaly_is_reported_before_the_end() {
    for (list, inject) in [(true, Inject::G1c), (false, Inject::G1c), (false, Inject::LostUpdate), (true, Inject::G1a)]
    {
        let opts = GenOptions { inject: vec![inject], ..GenOptions::default() };
        let text = generate(list, 7, 4_000, 5, (0.0, 0.0), &opts).expect("generates");
        let total = text.lines().filter(|l| !l.contains(":invoke")).count();
        let (followed, rec) = follow(&text, vec![2048], 200, &options(list, None));
        assert!(!rec.found.is_empty(), "{inject} in {}: nothing reported while following", list);
        assert!(rec.txns_at(0) < total, "{inject}: reported only after the last transaction");
        assert_eq!(followed.history.ops.len(), 2 * total);
    }
}

/// A valid history streams without a single report, in several rounds.
#[test]
fn a_valid_history_reports_nothing() {
    let text = generate(false, 3, 3_000, 8, (0.02, 0.02), &GenOptions::default()).expect("generates");
    let check = options(false, Some("strict-serializable"));
    let (mut followed, rec) = follow(&text, vec![1000, 17, 4096], 250, &check);
    assert!(rec.found.is_empty(), "{:?}", rec.found);
    assert!(rec.rounds.len() >= 3, "{} rounds", rec.rounds.len());
    // Collected by realtime: the verdict covers the collected transactions.
    assert!(followed.collected > 0, "nothing collected");
    assert_eq!(followed.unknown, None);
    let o = isolde::online::final_check(&mut followed, &check).expect("final check");
    assert_eq!(o.valid, isolde::outcome::Validity::Valid);
}

const LIMIT: Duration = Duration::from_secs(60);

fn sample() -> String {
    let opts = GenOptions { inject: vec![Inject::G1c], ..GenOptions::default() };
    generate(true, 11, 1_500, 4, (0.0, 0.0), &opts).expect("generates")
}

/// `-` follows a pipe: anomaly lines, then the result map on one line.
#[test]
fn a_pipe_is_followed_to_its_end() {
    let text = sample();
    // Fed as a generator would, in pieces: rounds run while it arrives
    // (a pipe filled at once may end before a throttled round).
    let args = ["analyze", "--follow", "-", "--round-txns", "100", "-f", "json"];
    let run = isolde_fed(&args, text.as_bytes(), 12, Duration::from_millis(250), LIMIT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let lines: Vec<serde_json::Value> =
        run.stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    assert!(lines.len() >= 2, "{}", run.stdout);
    let online: Vec<&serde_json::Value> = lines.iter().filter(|l| l.get("round").is_some()).collect();
    assert!(!online.is_empty() && online.iter().all(|l| l["anomaly"] == "G1c"), "{}", run.stdout);
    let last = lines.last().expect("verdict");
    assert_eq!(last["valid?"], false);
    assert!(run.stderr.contains("round 1:"), "{}", run.stderr);
}

/// A file another process appends to is followed until it stops growing
/// for --follow-idle; ops written in pieces, mid-line, are waited for.
#[test]
fn a_growing_file_is_followed_until_idle() {
    let dir = temp_dir("follow-file");
    let path = dir.join("history.edn");
    let text = sample();
    let (head, tail) = text.split_at(text.len() / 2);
    std::fs::write(&path, head).expect("writes");
    let tail = tail.as_bytes().to_vec();
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().append(true).open(writer_path).expect("opens");
        for piece in tail.chunks(tail.len() / 5 + 1) {
            std::thread::sleep(Duration::from_millis(150));
            f.write_all(piece).expect("appends");
            f.flush().expect("flushes");
        }
    });
    let p = path.to_str().expect("utf-8 path");
    let run =
        isolde(&["analyze", "--follow", p, "--follow-idle", "1.5", "-f", "json", "--round-ms", "100"], None, LIMIT);
    writer.join().expect("writer");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let last: serde_json::Value = serde_json::from_str(run.stdout.lines().last().expect("verdict")).expect("JSON");
    let whole = isolde(&["analyze", p, "-f", "json"], None, LIMIT).json();
    assert_eq!(last["anomaly-types"], whole["anomaly-types"]);
    let _ = std::fs::remove_dir_all(dir);
}

/// A malformed line in the middle of the stream stops the reading with its
/// line number; the verdict covers what came before, and the exit is 2.
#[test]
fn a_malformed_line_stops_with_the_verdict_before_it() {
    let text = sample();
    let mut lines: Vec<&str> = text.lines().collect();
    let at = lines.len() / 2;
    lines.insert(at, "{:type :ok, :f :txn, :value [[:append 1 2] :process 3}");
    let broken = lines.join("\n") + "\n";
    let run = isolde(&["analyze", "--follow", "-", "-f", "json"], Some(broken.as_bytes()), LIMIT);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains(&format!(":{}:", at + 1)), "{}", run.stderr);
    let last: serde_json::Value = serde_json::from_str(run.stdout.lines().last().expect("verdict")).expect("JSON");
    assert!(last.get("valid?").is_some(), "{}", run.stdout);
}

/// A last line without its newline is an op like any other at the end.
#[test]
fn a_last_line_without_newline_is_read() {
    let text = sample();
    let trimmed = text.trim_end();
    let run = isolde(&["analyze", "--follow", "-", "-f", "json"], Some(trimmed.as_bytes()), LIMIT);
    let whole = isolde(&["analyze", "-", "-f", "json"], Some(text.as_bytes()), LIMIT).json();
    let completions = text.lines().filter(|l| !l.contains(":type :invoke")).count();
    assert!(run.stderr.contains(&format!(": {completions} transactions read")), "{}", run.stderr);
    let last: serde_json::Value = serde_json::from_str(run.stdout.lines().last().expect("verdict")).expect("JSON");
    assert_eq!(last["anomaly-types"], whole["anomaly-types"]);
}

/// A history written as one vector cannot be followed op by op: refused,
/// naming what to do.
#[test]
fn a_vector_history_is_refused() {
    let run = isolde(&["analyze", "--follow", "-"], Some(b"[{:type :invoke, :f :txn, :value [], :process 0}]"), LIMIT);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("drop --follow"), "{}", run.stderr);
}

/// --max-memory stops the reading and turns a valid verdict into unknown.
#[test]
fn the_memory_limit_answers_unknown() {
    let text = generate(false, 5, 2_000, 4, (0.0, 0.0), &GenOptions::default()).expect("generates");
    let run = isolde(&["analyze", "--follow", "-", "--max-memory", "1", "-f", "json"], Some(text.as_bytes()), LIMIT);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("--max-memory 1 MB"), "{}", run.stderr);
}

/// The follow options say they need --follow.
#[test]
fn follow_options_need_follow() {
    let run = isolde(&["analyze", "--round-txns", "10", "x.edn"], None, LIMIT);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--follow"), "{}", run.stderr);
}

/// `gen --fences N`: each client runs a fence (a read-modify-write of
/// `:isolde/fence`) after every N transactions, and a fenced history of a
/// serializable store checks valid.
#[test]
fn gen_writes_fences() {
    let run =
        isolde(&["gen", "rw-register", "--txns", "600", "--processes", "4", "--fences", "5", "-o", "-"], None, LIMIT);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fences = run.stdout.lines().filter(|l| l.contains(":ok") && l.contains(":isolde/fence")).count();
    assert!((80..=120).contains(&fences), "{fences} fences");
    assert!(run
        .stdout
        .lines()
        .filter(|l| l.contains(":isolde/fence"))
        .all(|l| l.contains("[[:r :isolde/fence") && l.matches(":isolde/fence").count() == 2));
    let check = isolde(
        &["analyze", "-", "-m", "strong-session-serializable", "-f", "json"],
        Some(run.stdout.as_bytes()),
        LIMIT,
    );
    assert_eq!(check.code, 0, "{}", check.stdout);
    let refused = isolde(&["gen", "list-append", "--fences", "5"], None, LIMIT);
    assert_eq!(refused.code, 2);
    assert!(refused.stderr.contains("--fences"), "{}", refused.stderr);
}

/// A Jepsen store directory is followed through its history.edn (the file a
/// running test appends to), also through a test's `latest`.
#[test]
fn a_store_directory_is_followed_through_its_history() {
    let dir = temp_dir("follow-store");
    let run_dir = dir.join("my-test").join("20261126T000000");
    std::fs::create_dir_all(&run_dir).expect("dirs");
    std::fs::write(run_dir.join("history.edn"), sample()).expect("writes");
    std::os::unix::fs::symlink("20261126T000000", dir.join("my-test").join("latest")).expect("links");
    let test_dir = dir.join("my-test");
    let run = isolde(
        &["analyze", "--follow", test_dir.to_str().expect("utf-8"), "--follow-idle", "0.3", "-f", "json"],
        None,
        LIMIT,
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("history.edn"), "{}", run.stderr);
    std::fs::remove_file(run_dir.join("history.edn")).expect("removes");
    std::fs::write(run_dir.join("history.txt"), "x").expect("writes");
    let refused = isolde(&["analyze", "--follow", test_dir.to_str().expect("utf-8")], None, LIMIT);
    assert_eq!(refused.code, 2);
    assert!(refused.stderr.contains("drop --follow"), "{}", refused.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

/// `record --check` checks while it records (SQLite, embedded) and writes
/// a fence per session every `--fences` transactions (20 by default with
/// `--check`); the whole run is valid at strong session serializability.
#[test]
fn record_check_follows_and_fences() {
    let dir = temp_dir("record-follow");
    let out = dir.join("h.edn");
    let o = out.to_str().expect("utf-8");
    let run = isolde(
        &[
            "record",
            "--workload",
            "rw-register",
            "--txns",
            "2100",
            "--sessions",
            "4",
            "--check",
            "-m",
            "strong-session-serializable",
            "-o",
            o,
        ],
        None,
        LIMIT,
    );
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    let text = std::fs::read_to_string(&out).expect("history");
    let fences = text.lines().filter(|l| l.contains(":ok") && l.contains("[:r :isolde/fence")).count();
    assert!((90..=110).contains(&fences), "{fences} fences");
    let none = isolde(
        &["record", "--workload", "rw-register", "--txns", "300", "--fences", "0", "--check", "-o", o],
        None,
        LIMIT,
    );
    assert_eq!(none.code, 0, "{}", none.stderr);
    assert!(!std::fs::read_to_string(&out).expect("history").contains("isolde/fence"));
    let _ = std::fs::remove_dir_all(dir);
}

/// `--follow` holds a window of a fenced register run at a session level
/// with no other flag; `--follow-all` keeps every transaction;
/// `--follow-window` (the flag that asked for the window before) is still
/// accepted. All three give the batch verdict on a valid run.
#[test]
fn follow_holds_a_window_by_default_and_follow_all_keeps_everything() {
    let gen =
        isolde(&["gen", "rw-register", "--txns", "6000", "--fences", "20", "--seed", "7", "-o", "-"], None, LIMIT);
    assert_eq!(gen.code, 0, "{}", gen.stderr);
    let held = |run: &support::cli::Run| -> Vec<(u64, u64)> {
        let number_before =
            |l: &str, word: &str| -> Option<u64> { l.split(word).next()?.rsplit(' ').next()?.parse().ok() };
        run.stderr
            .lines()
            .filter(|l| l.starts_with("isolde: round "))
            .filter_map(|l| Some((number_before(l, " txns read")?, number_before(l, " held")?)))
            .collect()
    };
    let base = ["analyze", "--follow", "-", "-m", "strong-session-serializable", "--round-txns", "1000", "-f", "json"];
    for (flag, collects) in [(None, true), (Some("--follow-window"), true), (Some("--follow-all"), false)] {
        let args: Vec<&str> = base.iter().copied().chain(flag).collect();
        let run = isolde(&args, Some(gen.stdout.as_bytes()), LIMIT);
        assert_eq!(run.code, 0, "{flag:?}: {}", run.stderr);
        let last: serde_json::Value = serde_json::from_str(run.stdout.lines().last().expect("verdict")).expect("JSON");
        assert_eq!(last["valid?"], true, "{flag:?}: {}", run.stdout);
        let rounds = held(&run);
        if collects {
            assert!(rounds.len() >= 5, "{flag:?}: {}", run.stderr);
            let (read, kept) = *rounds.last().expect("a round");
            assert!(kept * 3 < read, "{flag:?}: held {kept} of {read}: {}", run.stderr);
        } else {
            // A round that keeps everything has nothing to say it holds.
            assert!(rounds.is_empty() && run.stderr.contains("isolde: round 1:"), "{}", run.stderr);
            assert!(run.stderr.contains("--follow-all keeps every transaction"), "{}", run.stderr);
            assert!(run.stderr.contains("(12000 ops held at the end)"), "{}", run.stderr);
        }
    }
    let both = isolde(&["analyze", "--follow", "-", "--follow-all", "--follow-window"], Some(b""), LIMIT);
    assert_eq!(both.code, 2, "{}", both.stderr);
}

/// Each collecting round's status line names the rule that collects, and
/// every round whose window grew says what holds it (or why collection
/// waits).
#[test]
fn the_status_line_names_the_rule_and_what_holds_a_growing_window() {
    let cases = [
        (&["gen", "list-append", "--txns", "8000", "--seed", "3", "-o", "-"][..], "strict-serializable", "realtime"),
        (
            &["gen", "rw-register", "--txns", "8000", "--fences", "20", "--seed", "3", "-o", "-"],
            "causal-cerone",
            "fences",
        ),
    ];
    for (gen_args, model, rule) in cases {
        let gen = isolde(gen_args, None, LIMIT);
        assert_eq!(gen.code, 0, "{}", gen.stderr);
        let args = ["analyze", "--follow", "-", "-m", model, "--round-txns", "700"];
        let run = isolde(&args, Some(gen.stdout.as_bytes()), LIMIT);
        assert_eq!(run.code, 0, "{model}: {}", run.stderr);
        let rounds: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("isolde: round ")).collect();
        assert!(rounds.len() >= 8, "{model}: {}", run.stderr);
        let held = |l: &str| -> u64 {
            let before = l.split(" held (").next().expect("held");
            before.rsplit(' ').next().expect("count").parse().expect("a count")
        };
        let mut last = 0;
        let mut explained = 0;
        for l in &rounds {
            assert!(l.contains(&format!(" held ({rule}")), "{model}: {l}");
            let n = held(l);
            if n > last {
                assert!(l.contains("; held by ") || l.contains("; collection waits"), "{model}: {l}");
                explained += 1;
            } else {
                assert!(!l.contains("; held by "), "{model}: {l}");
            }
            last = n;
        }
        assert!(explained >= 2, "{model}: {}", run.stderr);
    }
}

/// A take-back that cannot restore a key's state (a read flipped its
/// assumed order since) takes the key out of every later check. Before,
/// the key kept its newer state, and on this stream (valid at
/// `strong-session-snapshot-isolation`: an SI store, checked whole) a read
/// of the version a taken-back writer wrote was checked as a read of the
/// initial state: the run reported a `G-single-item` that is not there.
/// Now it ends `valid` or `unknown`, reporting nothing.
#[test]
fn a_key_a_take_back_cannot_restore_reports_no_false_anomaly() {
    let gen = isolde(
        &[
            "gen",
            "rw-register",
            "--txns",
            "200000",
            "--fences",
            "20",
            "--seed",
            "110",
            "--level",
            "snapshot-isolation",
            "-o",
            "-",
        ],
        None,
        LIMIT,
    );
    assert_eq!(gen.code, 0, "{}", gen.stderr);
    // Before the first fix, the false G-single-item came at about 130,000
    // transactions; before the second, a write of the lost key, set aside
    // as a write of nil, ordered its writer after every read set aside and
    // closed a cycle through them, at about 137,000 (whose report then
    // panicked, naming a key the history read has not got).
    let args = ["analyze", "--follow", "-", "-m", "strong-session-snapshot-isolation", "-f", "json"];
    let run = isolde(&args, Some(gen.stdout.as_bytes()), Duration::from_secs(300));
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "anomalies reported: {}", run.stdout);
    let last: serde_json::Value = serde_json::from_str(lines[0]).expect("JSON");
    assert_ne!(last["valid?"], false, "{}", run.stderr);
    assert!(run.code == 0 || run.code == 3, "{}", run.stderr);
}
