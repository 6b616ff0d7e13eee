//! `isolde analyze --follow` on register histories checked at strict
//! serializability alone, without fences (Elle's default for a Jepsen
//! register test): realtime orders the old before the new
//! (`online::fenced`, "Realtime in place of fences"), so old transactions
//! are collected. The batch verdict, or `unknown` where a later read
//! contradicts an assumed write order (never `valid` then, and `invalid`
//! only when the batch check says so); nothing reported on a valid
//! history; a small window; a planted stale read reported while following.

use crate::support;

use isolde::gen::{GenOptions, Inject, RwRegisterConfig};
use isolde::outcome::Validity;
use proptest::prelude::*;
use support::online::{
    agrees_with_batch, append_late_read, assert_valid_in_a_small_window, batch_verdict, follow_window,
    follow_window_archiving, generate, options, rw_register_text, verdict, Tally, LEVELS,
};

/// The level checked.
const STRICT: &str = "strict-serializable";

/// Anomalies the property cases plant: the realtime one, and those every
/// level forbids.
const INJECT: [Inject; 6] =
    [Inject::StaleRealtimeRead, Inject::G1c, Inject::LostUpdate, Inject::WriteSkew, Inject::ReadSkew, Inject::G1a];

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    /// Followed in random chunks with frequent rounds, twelve hot keys (so
    /// that concurrent writes are often collected in an assumed order),
    /// failed and indeterminate transactions, quiet keys sealed to disk
    /// and read back, stores at four levels and planted anomalies: the
    /// batch verdict, or `unknown` where an assumed order broke, and
    /// nothing reported on a history the batch check finds valid.
    #[test]
    fn collecting_registers_by_realtime_gives_the_batch_verdict(
        seed in 0u64..1_000_000,
        txns in 60usize..400,
        processes in 2usize..8,
        level in prop_oneof![Just(0usize), 0usize..4],
        inject in prop_oneof![Just(Vec::new()), proptest::collection::vec(0usize..6, 1..2)],
        faults in (0usize..3, 0usize..2),
        sizes in proptest::collection::vec(1usize..700, 1..6),
        round in 3usize..40,
        quiet in prop_oneof![Just(2_000u32), 0u32..60],
        archive in prop_oneof![Just(isolde::online::FollowOptions::default().archive_words), Just(1usize)],
    ) {
        let inject: Vec<Inject> = inject.iter().map(|&i| INJECT[i]).collect();
        let opts = GenOptions { level: LEVELS[level], inject, inject_count: 0, ..GenOptions::default() };
        let faults = (faults.0 as f64 * 0.05, faults.1 as f64 * 0.05);
        let Some(text) = generate(false, seed, txns, processes, faults, &opts) else { return Ok(()) };
        let check = options(false, Some(STRICT));
        let want = batch_verdict(&text, &check);
        let (mut followed, rec) = follow_window_archiving(&text, sizes, round, &check, quiet, archive);
        prop_assert!(matches!(followed.ending, isolde::online::Ending::End(_)));
        if want == Validity::Valid {
            prop_assert!(followed.collected > 0 || rec.rounds.len() < 3, "nothing collected in {} rounds: {:?}", rec.rounds.len(), rec.notes);
        }
        agrees_with_batch(&mut followed, &rec, &check, want)?;
        COLLECTING.count(&followed, want, 300);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, failure_persistence: None, ..ProptestConfig::default() })]

    /// Longer histories over more keys and processes, so that writes
    /// nobody read yet are collected and read long after (flips), with and
    /// without planted anomalies.
    #[test]
    fn collecting_longer_histories_by_realtime_keeps_the_batch_verdict(
        seed in 0u64..1_000_000,
        txns in 1_000usize..3_000,
        processes in 8usize..30,
        keys in 50usize..1_000,
        level in prop_oneof![Just(0usize), 0usize..4],
        inject in prop_oneof![Just(Vec::new()), proptest::collection::vec(0usize..6, 1..2)],
        round in 20usize..200,
    ) {
        let inject: Vec<Inject> = inject.iter().map(|&i| INJECT[i]).collect();
        let opts = GenOptions { level: LEVELS[level], inject, inject_count: 0, ..GenOptions::default() };
        let cfg = RwRegisterConfig { seed, txns, processes, keys, min_txn_len: 4, max_txn_len: 12, ..RwRegisterConfig::default() };
        let Some(text) = rw_register_text(&cfg, &opts) else { return Ok(()) };
        let check = options(false, Some(STRICT));
        let want = batch_verdict(&text, &check);
        let (mut followed, rec) = follow_window(&text, vec![4096], round, &check);
        agrees_with_batch(&mut followed, &rec, &check, want)?;
        LONGER.count(&followed, want, 40);
    }
}

static COLLECTING: Tally = Tally::new("collecting_registers_by_realtime_gives_the_batch_verdict");
static LONGER: Tally = Tally::new("collecting_longer_histories_by_realtime_keeps_the_batch_verdict");

/// `isolde gen rw-register --txns TXNS --seed SEED` (no fences), with
/// `inject` planted.
fn generate_plain(seed: u64, txns: usize, inject: Vec<Inject>) -> String {
    let cfg = RwRegisterConfig { seed, txns, ..RwRegisterConfig::default() };
    let opts = GenOptions { inject, ..GenOptions::default() };
    rw_register_text(&cfg, &opts).expect("generates")
}

/// `isolde gen rw-register --txns 30000` followed at strict
/// serializability in rounds of 1,000: every round names the realtime
/// rule, the window stays small, nothing is reported, and the verdict is
/// the batch check's, `valid`.
#[test]
fn a_long_register_history_is_held_in_a_small_window_by_realtime() {
    let text = generate_plain(3, 30_000, Vec::new());
    let check = options(false, Some(STRICT));
    let (mut followed, rec) = follow_window(&text, vec![4096], 1_000, &check);
    assert!(rec.rounds.iter().skip(1).all(|r| r.rule == Some("realtime")), "{:?}", rec.rounds.last());
    assert!(followed.collected > 28_000, "{} collected", followed.collected);
    assert_eq!(followed.unknown, None);
    assert_valid_in_a_small_window(&mut followed, &rec, &check);
}

/// A read of a version that transactions completed before it began had
/// overwritten (`--inject stale-realtime-read`), planted among 30k
/// transactions: reported while following as the batch check names it,
/// and the run ends `invalid`.
#[test]
fn a_planted_stale_read_is_reported_while_following_by_realtime() {
    let text = generate_plain(5, 30_000, vec![Inject::StaleRealtimeRead]);
    let check = options(false, Some(STRICT));
    let batch = isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn).expect("parses");
    let batch = isolde::check::check(&batch, &check).expect("batch check");
    assert!(batch.anomalies.contains_key("G-single-item-realtime"), "{:?}", batch.anomalies.keys());
    let (mut followed, rec) = follow_window(&text, vec![4096], 1_000, &check);
    let found: Vec<&str> = rec.found.iter().map(|(n, _)| n.as_str()).collect();
    assert!(found.contains(&"G-single-item-realtime"), "{found:?}");
    assert!(followed.collected > 20_000, "{} collected", followed.collected);
    assert_eq!(verdict(&mut followed, &check).valid, Validity::Invalid);
}

/// A transaction long after the rest reads the initial state of the
/// hottest key, which transactions completed before it began had
/// overwritten: invalid, and reported while following against the
/// collected versions as `G-single-item-realtime` (a cycle with one
/// anti-dependency; the batch check's cycle search names a `G2-item-realtime`
/// through the same read).
#[test]
fn a_late_read_of_an_overwritten_version_is_reported_by_realtime() {
    let mut text = generate_plain(9, 20_000, Vec::new());
    let check = options(false, Some(STRICT));
    let batch = append_late_read(&mut text, "1", "nil", &check);
    assert_eq!(batch.valid, Validity::Invalid, "{:?}", batch.anomalies.keys());
    let (mut followed, rec) = follow_window(&text, vec![4096], 1_000, &check);
    assert!(rec.found.is_empty(), "{:?}", rec.found);
    assert!(followed.collected > 19_000, "{} collected", followed.collected);
    let got = verdict(&mut followed, &check);
    assert_eq!(got.valid, Validity::Invalid);
    let cases = got.anomalies.get("G-single-item-realtime").map_or(&[][..], |c| &c[..]);
    assert!(
        matches!(cases, [isolde::anomaly::Case::CollectedWrite { value: None, realtime: true, .. }]),
        "{:?}",
        got.anomalies.keys()
    );
}

/// The same read as a completion without an invocation: realtime orders
/// nothing before it (the batch check places it first, `valid`), so it is
/// not judged against the collected versions. Nothing is reported and the
/// run, which collected before it came, ends `unknown`, not `invalid`.
#[test]
fn a_completion_without_an_invocation_is_not_judged_against_collected_versions() {
    let mut text = generate_plain(9, 20_000, Vec::new());
    text.push_str("{:type :ok, :f :txn, :value [[:r 1 nil]], :process 99, :time 9000000001}\n");
    let check = options(false, Some(STRICT));
    let batch = isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn).expect("parses");
    assert_eq!(isolde::check::check(&batch, &check).expect("batch check").valid, Validity::Valid);
    let (mut followed, rec) = follow_window(&text, vec![4096], 1_000, &check);
    assert!(rec.found.is_empty(), "{:?}", rec.found);
    assert!(followed.collected > 19_000, "{} collected", followed.collected);
    assert!(followed.unknown.as_deref().is_some_and(|w| w.contains("without an invocation")), "{:?}", followed.unknown);
    assert_eq!(verdict(&mut followed, &check).valid, Validity::Unknown);
}
