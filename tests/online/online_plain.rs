//! `isolde analyze --follow -m serializable` (or `snapshot-isolation`) on
//! register histories with fence transactions collects at the strong
//! session level of the same family (`online::plain`): it gives the batch
//! verdict at the level asked, or `unknown` with a reason where an answer
//! would rest on session order (never `valid` then, and never an anomaly
//! the batch check does not find), holds a small window, and reports a
//! planted anomaly while following. A client new since transactions were
//! collected (Jepsen's process after a crash) follows none of them: its
//! stale read is not reported, at the plain levels or the session ones.

use crate::support;

use isolde::gen::{GenOptions, Inject, RwRegisterConfig};
use isolde::online::plain::PLAIN_MODELS;
use isolde::online::FENCED_MODELS;
use isolde::outcome::Validity;
use proptest::prelude::*;
use support::online::{
    agrees_with_batch, append_late_read, assert_valid_in_a_small_window, batch_verdict, fenced_case, follow_window,
    options, rw_register_text, verdict, Tally,
};

static PLAIN: Tally = Tally::new("collecting_at_plain_levels_gives_the_batch_verdict");

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, failure_persistence: None, ..ProptestConfig::default() })]

    /// Followed in random chunks with frequent rounds, with fences every
    /// few transactions, `:info` and `:fail` transactions and planted
    /// anomalies: the batch verdict at the plain level, or `unknown` (the
    /// tally is printed), and nothing reported on a history the batch
    /// check finds valid. A valid history ends `unknown` only where the
    /// batch check at the session level finds it invalid (`isolde gen`'s
    /// serializable and SI stores serve a client snapshots older than its
    /// own last write).
    #[test]
    fn collecting_at_plain_levels_gives_the_batch_verdict(
        seed in 0u64..1_000_000,
        txns in 60usize..400,
        processes in 2usize..6,
        level in 0usize..4,
        inject in proptest::collection::vec(0usize..5, 0..2),
        faults in (0usize..3, 0usize..2),
        fences in 1usize..6,
        model in 0usize..2,
        sizes in proptest::collection::vec(1usize..700, 1..6),
        round in 3usize..40,
    ) {
        let Some(text) = fenced_case(seed, (txns, processes), level, &inject, faults, fences) else { return Ok(()) };
        let check = options(false, Some(PLAIN_MODELS[model].0));
        let want = batch_verdict(&text, &check);
        let (mut followed, rec) = follow_window(&text, sizes, round, &check);
        prop_assert!(matches!(followed.ending, isolde::online::Ending::End(_)));
        agrees_with_batch(&mut followed, &rec, &check, want)?;
        // A valid history ends `unknown` only where it breaks session order,
        // which collecting at the plain level assumes.
        if want == Validity::Valid && followed.unknown.is_some() {
            let session = options(false, Some(PLAIN_MODELS[model].1));
            prop_assert_eq!(batch_verdict(&text, &session), Validity::Invalid, "{:?}", followed.unknown);
        }
        PLAIN.count(&followed, want, 160);
    }
}

/// `isolde gen rw-register --fences 20 --txns 12000 --seed SEED` with
/// `opts`, as text.
fn generate_fenced(seed: u64, opts: &GenOptions) -> String {
    let cfg = RwRegisterConfig { seed, txns: 12_000, processes: 10, ..RwRegisterConfig::default() };
    rw_register_text(&cfg, &GenOptions { fences: 20, ..opts.clone() }).expect("generates")
}

/// A long valid fenced history followed at each plain level: a small
/// window at every round, nothing reported, most transactions collected,
/// and `valid`.
#[test]
fn a_fenced_history_is_held_in_a_small_window_at_the_plain_levels() {
    let text = generate_fenced(3, &GenOptions::default());
    for (model, _) in PLAIN_MODELS {
        let check = options(false, Some(model));
        let (mut followed, rec) = follow_window(&text, vec![4096], 500, &check);
        assert!(followed.plain, "{model}: not collected at its session level");
        assert!(followed.collected > 9_000, "{model}: {} collected", followed.collected);
        assert_valid_in_a_small_window(&mut followed, &rec, &check);
        assert_eq!(followed.unknown, None, "{model}");
    }
}

/// Anomalies the plain level forbids, planted in a fenced history, are
/// reported while following (before the last transaction), and the
/// verdict is `invalid`; a write skew, which snapshot isolation allows,
/// leaves it `valid` there.
#[test]
fn a_planted_anomaly_is_reported_at_the_plain_levels() {
    for inject in [Inject::ReadSkew, Inject::G1c, Inject::LostUpdate, Inject::WriteSkew] {
        let text = generate_fenced(5, &GenOptions { inject: vec![inject], ..GenOptions::default() });
        let total = text.lines().filter(|l| !l.contains(":invoke")).count();
        for (model, _) in PLAIN_MODELS {
            let check = options(false, Some(model));
            let want = batch_verdict(&text, &check);
            let (mut followed, rec) = follow_window(&text, vec![2048], 500, &check);
            assert!(followed.collected > 2_000, "{inject} at {model}: {} collected", followed.collected);
            let got = verdict(&mut followed, &check).valid;
            if inject == Inject::WriteSkew && model == "snapshot-isolation" {
                assert_eq!((want, got), (Validity::Valid, Validity::Valid), "{inject} at {model}");
                assert!(rec.found.is_empty(), "{inject} at {model}: reported {:?}", rec.found);
                continue;
            }
            assert_eq!(
                (want, got),
                (Validity::Invalid, Validity::Invalid),
                "{inject} at {model}: {:?}",
                followed.unknown
            );
            assert!(!rec.found.is_empty(), "{inject} at {model}: nothing reported while following");
            assert!(rec.txns_at(0) < total, "{inject} at {model}: reported only after the last transaction");
        }
    }
}

/// The key and a value of it that was overwritten early on, in `text`.
fn an_early_overwritten_value(text: &str) -> (String, String) {
    let line = text.lines().find(|l| l.contains(":type :ok") && l.contains("[:w 5 ")).expect("a write of key 5");
    let at = line.find("[:w 5 ").expect("the write") + "[:w 5 ".len();
    let value: String = line[at..].chars().take_while(char::is_ascii_digit).collect();
    ("5".to_string(), value)
}

/// A client that appears long after its key's early version was
/// overwritten and collected (a new process, as Jepsen starts after a
/// crash), and reads that version: nothing orders it after the collected
/// writers, and the batch check places it before them, so the history is
/// valid at every level here. Following reports nothing and says
/// `unknown` with the reason (before 2026-12-08 the session levels
/// reported it as `G-single-item-process`).
#[test]
fn a_new_clients_stale_read_is_not_reported() {
    let text = generate_fenced(3, &GenOptions::default());
    let (key, value) = an_early_overwritten_value(&text);
    for model in [PLAIN_MODELS[0].0, PLAIN_MODELS[1].0, FENCED_MODELS[0], FENCED_MODELS[1], FENCED_MODELS[2]] {
        let check = options(false, Some(model));
        let mut late = text.clone();
        let batch = append_late_read(&mut late, &key, &value, &check);
        assert_eq!(batch.valid, Validity::Valid, "{model}: the batch check");
        let (mut followed, rec) = follow_window(&late, vec![4096], 500, &check);
        assert!(followed.collected > 9_000, "{model}: {} collected", followed.collected);
        assert!(rec.found.is_empty(), "{model}: reported {:?}", rec.found);
        let why = followed.unknown.clone().unwrap_or_default();
        assert!(why.contains("had run no fence"), "{model}: {why}");
        assert_eq!(verdict(&mut followed, &check).valid, Validity::Unknown, "{model}");
    }
}

/// A history that breaks session order (a client reads, after its own
/// write of a newer version, an older one) but is serializable: the
/// batch check says `valid` at serializable; following, which collects by
/// session order, says `unknown` and why, never `invalid`.
#[test]
fn a_history_serializable_only_without_sessions_is_unknown_not_invalid() {
    let text = generate_fenced(3, &GenOptions::default());
    let (key, value) = an_early_overwritten_value(&text);
    // Process 0 reads the early version at the end: after its own later
    // transactions, which followed the overwrite by fences.
    let mut late = text.clone();
    for (t, ty) in [(9_000_000_000u64, "invoke"), (9_000_000_001, "ok")] {
        let read = if ty == "ok" { value.as_str() } else { "nil" };
        late.push_str(&format!("{{:type :{ty}, :f :txn, :value [[:r {key} {read}]], :process 0, :time {t}}}\n"));
    }
    let check = options(false, Some("serializable"));
    assert_eq!(batch_verdict(&late, &check), Validity::Valid);
    assert_eq!(batch_verdict(&late, &options(false, Some("strong-session-serializable"))), Validity::Invalid);
    let (mut followed, rec) = follow_window(&late, vec![4096], 500, &check);
    assert!(rec.found.is_empty(), "reported {:?}", rec.found);
    assert_eq!(verdict(&mut followed, &check).valid, Validity::Unknown);
    let why = followed.unknown.unwrap_or_default();
    assert!(why.contains("session order"), "{why}");
}
