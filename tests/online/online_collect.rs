//! `isolde analyze --follow` on list-append checked for strict
//! serializability collects old transactions (`online::collect`'s realtime
//! rule): it still gives the batch verdict on every history, never reports
//! an anomaly a valid history does not have, holds only the recent
//! transactions, and reports a planted anomaly before the input ends.

use crate::support;

use isolde::gen::{GenOptions, Inject};
use isolde::outcome::Validity;
use proptest::prelude::*;
use support::online::{
    follow, follow_quiet, generate, generate_elle_shaped, generate_read_back, options, INJECT, LEVELS,
};

/// The final verdict of a collecting follow, as `isolde analyze --follow`
/// gives it.
fn verdict(followed: &mut isolde::online::Followed, check: &isolde::check::CheckOptions) -> isolde::outcome::Outcome {
    isolde::online::final_check(followed, check).expect("final check")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, failure_persistence: None, ..ProptestConfig::default() })]

    /// Followed in random chunks with frequent rounds (so that most
    /// transactions are collected), a history gets the batch verdict, and
    /// nothing is reported on a history the batch check finds valid. Keys
    /// are declared quiet after a random wait (none, short, the default),
    /// so that unread overlapping appends are often collected in an
    /// assumed order: when a later read shows another order the verdict
    /// may be `unknown` (never `valid`, and `invalid` only when the batch
    /// check says so too), and only then.
    #[test]
    fn collecting_gives_the_batch_verdict(
        seed in 0u64..1_000_000,
        txns in 60usize..400,
        processes in 2usize..7,
        level in 0usize..4,
        inject in proptest::collection::vec(0usize..6, 0..3),
        faults in (0usize..3, 0usize..3),
        sizes in proptest::collection::vec(1usize..700, 1..6),
        round in 3usize..40,
        quiet in prop_oneof![Just(0u32), 1u32..200, Just(isolde::online::collect::QUIET_LINES)],
    ) {
        let inject: Vec<Inject> = inject.iter().map(|&i| INJECT[i]).collect();
        let opts = GenOptions { level: LEVELS[level], inject, inject_count: 0, ..GenOptions::default() };
        let faults = (faults.0 as f64 * 0.05, faults.1 as f64 * 0.05);
        let Some(text) = generate(true, seed, txns, processes, faults, &opts) else { return Ok(()) };
        let check = options(true, Some("strict-serializable"));
        let batch = isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn)
            .expect("parses");
        let want = isolde::check::check(&batch, &check).expect("batch check");
        let (mut followed, rec) = follow_quiet(&text, sizes, round, &check, quiet);
        prop_assert!(matches!(followed.ending, isolde::online::Ending::End(_)));
        let late = followed.window.as_ref().map_or(0, |w| w.cases.len());
        let valid_online = rec.found.is_empty() && late == 0;
        if want.valid == Validity::Valid {
            prop_assert!(valid_online, "reported {:?} on a valid history", rec.found);
        }
        let got = verdict(&mut followed, &check);
        match &followed.unknown {
            None => prop_assert_eq!(got.valid, want.valid),
            Some(why) => {
                prop_assert!(why.contains("assumed"), "{}", why);
                prop_assert_ne!(got.valid, Validity::Valid);
                if got.valid == Validity::Invalid {
                    prop_assert_eq!(want.valid, Validity::Invalid);
                }
            }
        }
        prop_assert!(rec.unjustified.is_empty(), "{:?}", rec.unjustified);
    }
}

/// A long valid history whose appends get read is collected as it goes:
/// few transactions held at any round, nothing reported, the batch verdict
/// at the end.
#[test]
fn a_long_valid_history_is_held_in_a_small_window() {
    let text = generate_read_back(11, 20_000, 8, &GenOptions::default());
    let check = options(true, Some("strict-serializable"));
    let (mut followed, rec) = follow(&text, vec![4096, 333], 500, &check);
    assert!(rec.found.is_empty(), "{:?}", rec.found);
    assert!(rec.rounds.len() >= 30, "{} rounds", rec.rounds.len());
    let held_max = rec.rounds.iter().map(|r| r.txns as u64 - r.collected.expect("collecting")).max().unwrap_or(0);
    assert!(held_max < 2_000, "up to {held_max} transactions held");
    assert!(followed.collected > 18_000, "{} collected", followed.collected);
    assert!(rec.notes.iter().any(|n| n.contains("collects")), "{:?}", rec.notes);
    assert_eq!(verdict(&mut followed, &check).valid, Validity::Valid);
}

/// An anomaly planted in a long history is reported by a round before the
/// input ends, although most transactions before it were collected.
#[test]
fn a_planted_anomaly_is_reported_while_collecting() {
    for inject in [Inject::G1c, Inject::G1a, Inject::ReadSkew, Inject::LostUpdate] {
        let opts = GenOptions { inject: vec![inject], ..GenOptions::default() };
        let text = generate_read_back(5, 8_000, 6, &opts);
        let total = text.lines().filter(|l| !l.contains(":invoke")).count();
        let check = options(true, Some("strict-serializable"));
        let (mut followed, rec) = follow(&text, vec![2048], 200, &check);
        assert!(!rec.found.is_empty(), "{inject}: nothing reported while following");
        assert!(rec.txns_at(0) < total, "{inject}: reported only after the last transaction");
        assert!(followed.collected > 4_000, "{inject}: {} collected", followed.collected);
        assert_eq!(verdict(&mut followed, &check).valid, Validity::Invalid, "{inject}");
    }
}

/// A stale read of a collected element is reported with the collected
/// prefix as its witness, in Elle's cycle name.
#[test]
fn a_stale_read_of_a_collected_prefix_is_reported() {
    // Two processes take turns; process 1's last read misses the elements
    // appended long before it began.
    let mut text = String::new();
    let mut idx = 0;
    let mut op = |text: &mut String, ty: &str, p: u32, v: &str| {
        text.push_str(&format!("{{:type :{ty}, :f :txn, :value {v}, :process {p}, :index {idx}}}\n"));
        idx += 1;
    };
    for i in 1..=200 {
        op(&mut text, "invoke", 0, &format!("[[:append :x {i}]]"));
        op(&mut text, "ok", 0, &format!("[[:append :x {i}]]"));
        op(&mut text, "invoke", 1, "[[:r :x nil]]");
        let seen: Vec<String> = (1..=i).map(|e| e.to_string()).collect();
        op(&mut text, "ok", 1, &format!("[[:r :x [{}]]]", seen.join(" ")));
    }
    op(&mut text, "invoke", 1, "[[:r :x nil]]");
    op(&mut text, "ok", 1, "[[:r :x [1 2 3]]]");
    let check = options(true, Some("strict-serializable"));
    let batch = isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn).expect("parses");
    assert_eq!(isolde::check::check(&batch, &check).expect("batch").valid, Validity::Invalid);
    let (mut followed, rec) = follow(&text, vec![700], 20, &check);
    assert!(followed.collected > 300, "{} collected", followed.collected);
    let mut names: Vec<String> = rec.found.iter().map(|(n, _)| n.clone()).collect();
    names.extend(followed.window.iter().flat_map(|w| w.cases.iter().map(|(n, _)| n.clone())));
    assert!(names.iter().any(|n| n == "G-single-item-realtime"), "{names:?}");
    assert_eq!(verdict(&mut followed, &check).valid, Validity::Invalid);
}

/// A history of one process appending twice to each key, never read until
/// the end: the two unread elements of a key are ordered by realtime, so
/// they are collected as pending elements (collection does not stall), and
/// a last read that shows them in the other order is `G0-realtime`.
#[test]
fn unread_elements_ordered_by_realtime_are_collected() {
    let history = |last: &str| {
        let mut text = String::new();
        let mut idx = 0;
        let mut op = |text: &mut String, ty: &str, p: u32, v: &str| {
            text.push_str(&format!("{{:type :{ty}, :f :txn, :value {v}, :process {p}, :index {idx}}}\n"));
            idx += 1;
        };
        for k in 0..150 {
            for e in 1..=2 {
                op(&mut text, "invoke", 0, &format!("[[:append {k} {e}]]"));
                op(&mut text, "ok", 0, &format!("[[:append {k} {e}]]"));
            }
        }
        op(&mut text, "invoke", 1, "[[:r 0 nil]]");
        op(&mut text, "ok", 1, &format!("[[:r 0 {last}]]"));
        text
    };
    let check = options(true, Some("strict-serializable"));
    for (last, valid) in [("[1 2]", Validity::Valid), ("[2 1]", Validity::Invalid)] {
        let text = history(last);
        let batch =
            isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn).expect("parses");
        assert_eq!(isolde::check::check(&batch, &check).expect("batch").valid, valid, "{last}");
        let (mut followed, rec) = follow(&text, vec![500], 20, &check);
        assert!(followed.collected > 250, "{last}: {} collected", followed.collected);
        let mut names: Vec<String> = rec.found.iter().map(|(n, _)| n.clone()).collect();
        names.extend(followed.window.iter().flat_map(|w| w.cases.iter().map(|(n, _)| n.clone())));
        match valid {
            Validity::Valid => assert!(names.is_empty(), "{names:?}"),
            _ => assert!(names.iter().any(|n| n == "G0-realtime"), "{names:?}"),
        }
        assert_eq!(verdict(&mut followed, &check).valid, valid, "{last}");
    }
}

/// Four transactions append to two keys, all four overlapping in time:
/// `A1`, `A2` to `k`, `B1`, `B2` to `m`; `B1` reads `A2`'s element of `x`
/// and `A1` reads `B2`'s of `y`. Nothing reads `k` or `m` for a long while,
/// so both pairs are collected in an assumed order, then a last
/// transaction reads both keys. Every order of the two pairs is tried:
/// the verdict is the batch check's, or `unknown` when the read
/// contradicts an assumed order; `[a1 a2]` with `[b1 b2]` closes the cycle
/// `A1 →ww A2 →wr B1 →ww B2 →wr A1` and is never `valid`.
#[test]
fn overlapping_unread_appends_are_collected_in_an_assumed_order() {
    let history = |k: &str, m: &str| {
        let mut text = String::new();
        let mut idx = 0;
        let mut op = |text: &mut String, ty: &str, p: u32, v: &str| {
            text.push_str(&format!("{{:type :{ty}, :f :txn, :value {v}, :process {p}, :index {idx}}}\n"));
            idx += 1;
        };
        op(&mut text, "invoke", 0, "[[:append :k 1] [:r :y nil]]");
        op(&mut text, "invoke", 1, "[[:append :k 2] [:append :x 1]]");
        op(&mut text, "invoke", 2, "[[:append :m 1] [:r :x nil]]");
        op(&mut text, "invoke", 3, "[[:append :m 2] [:append :y 1]]");
        op(&mut text, "ok", 1, "[[:append :k 2] [:append :x 1]]");
        op(&mut text, "ok", 3, "[[:append :m 2] [:append :y 1]]");
        op(&mut text, "ok", 2, "[[:append :m 1] [:r :x [1]]]");
        op(&mut text, "ok", 0, "[[:append :k 1] [:r :y [1]]]");
        for i in 0..300 {
            let v = format!("[[:append {i} 1] [:r {i} [1]]]");
            op(&mut text, "invoke", 4, &v.replace("[1]]]", "nil]]"));
            op(&mut text, "ok", 4, &v);
        }
        op(&mut text, "invoke", 5, "[[:r :k nil] [:r :m nil]]");
        op(&mut text, "ok", 5, &format!("[[:r :k {k}] [:r :m {m}]]"));
        text
    };
    let check = options(true, Some("strict-serializable"));
    let mut valid_online = 0;
    for (k, m) in [("[1 2]", "[1 2]"), ("[1 2]", "[2 1]"), ("[2 1]", "[1 2]"), ("[2 1]", "[2 1]")] {
        let text = history(k, m);
        let batch =
            isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn).expect("parses");
        let want = isolde::check::check(&batch, &check).expect("batch").valid;
        assert_eq!(want == Validity::Invalid, (k, m) == ("[1 2]", "[1 2]"), "{k} {m}: batch {want:?}");
        let (mut followed, rec) = follow_quiet(&text, vec![300], 20, &check, 50);
        assert!(followed.collected > 280, "{k} {m}: {} collected", followed.collected);
        assert_eq!(followed.assumed, 4, "{k} {m}: both pairs go in an assumed order");
        assert!(rec.found.is_empty(), "{k} {m}: {:?}", rec.found);
        let got = verdict(&mut followed, &check).valid;
        match &followed.unknown {
            None => assert_eq!(got, want, "{k} {m}"),
            Some(why) => {
                assert!(why.contains("assumed") && why.contains("line 610"), "{why}");
                assert_eq!(got, Validity::Unknown, "{k} {m}");
            }
        }
        valid_online += usize::from(got == Validity::Valid);
    }
    assert_eq!(valid_online, 1, "exactly the assumed orders are accepted");
}

/// `isolde gen list-append` at its default (Elle's) shape retires keys
/// after their last appends, which often overlap and are never read: they
/// are collected in an assumed order, so memory stays flat.
#[test]
fn an_elle_shaped_stream_is_collected() {
    let text = generate_elle_shaped(3, 20_000);
    let check = options(true, Some("strict-serializable"));
    let (mut followed, rec) = follow(&text, vec![1 << 16], 1_000, &check);
    assert!(rec.found.is_empty(), "{:?}", rec.found);
    let held_max = rec.rounds.iter().map(|r| r.txns as u64 - r.collected.expect("collecting")).max().unwrap_or(0);
    assert!(held_max < 5_000, "up to {held_max} transactions held");
    assert!(followed.collected > 15_000, "{} collected", followed.collected);
    assert!(followed.assumed > 0 && followed.unknown.is_none());
    assert_eq!(verdict(&mut followed, &check).valid, Validity::Valid);
}

/// `isolde record --check` on SQLite (list-append, strict serializability
/// promised) collects as it records, with keys read back (never retired),
/// and ends with a valid verdict.
#[test]
fn record_check_collects_on_sqlite() {
    let dir = support::cli::temp_dir("record-collect");
    let out = dir.join("h.edn");
    let run = support::cli::isolde(
        &[
            "record",
            "--txns",
            "20000",
            "--sessions",
            "4",
            "--read-fraction",
            "0.8",
            "--max-writes-per-key",
            "1000000",
            "--keys",
            "100",
            "--check",
            "-o",
            out.to_str().expect("utf-8"),
        ],
        None,
        std::time::Duration::from_secs(120),
    );
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    // Each status line: "N txns read and checked, M held (realtime…)".
    let rounds: Vec<(u64, u64)> = run
        .stderr
        .lines()
        .filter_map(|l| {
            let (read, rest) = l.split_once(" txns read and checked, ")?;
            let held = rest.split_once(" held (")?.0.parse().ok()?;
            Some((read.rsplit(' ').next()?.parse().ok()?, held))
        })
        .collect();
    assert!(!rounds.is_empty(), "no status line says what is held: {}", run.stderr);
    // Some round had collected thousands of transactions, a good part of
    // what it had read (a round may read a burst faster than it collects,
    // on a loaded machine; without collection every round holds all).
    let collects = |&(read, held): &(u64, u64)| {
        let gone = read.saturating_sub(held);
        gone >= 2_000 && gone * 5 >= read * 2
    };
    assert!(rounds.iter().any(collects), "{rounds:?}");
    let _ = std::fs::remove_dir_all(dir);
}
