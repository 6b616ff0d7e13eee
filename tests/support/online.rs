//! Following a history from tests: a reader that hands its bytes out in
//! chunks of chosen sizes, and a watcher that records what the online
//! checker reported and when.

use std::io::Read;

use isolde::anomaly::Workload;
use isolde::check::{CheckOptions, WorkloadChoice};
use isolde::gen::{self, GenOptions, Inject, Level, ListAppendConfig, RwRegisterConfig};
use isolde::history::History;
use isolde::online::{self, Final, FollowOptions, Followed, RoundStatus, Watch};
use isolde::outcome::Validity;
use proptest::prelude::*;

/// Reads `bytes` in chunks whose sizes cycle through `sizes`.
pub struct Chunked {
    bytes: Vec<u8>,
    pos: usize,
    sizes: Vec<usize>,
    next: usize,
}

impl Chunked {
    /// `bytes` cut into pieces of `sizes` (cycled; zeros skipped).
    pub fn new(bytes: Vec<u8>, sizes: Vec<usize>) -> Chunked {
        let sizes = if sizes.iter().all(|&s| s == 0) { vec![4096] } else { sizes };
        Chunked { bytes, pos: 0, sizes, next: 0 }
    }
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut want = 0;
        while want == 0 {
            want = self.sizes[self.next % self.sizes.len()];
            self.next += 1;
        }
        let n = want.min(buf.len()).min(self.bytes.len() - self.pos);
        buf[..n].copy_from_slice(&self.bytes[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// What a follow reported: each anomaly with its round.
#[derive(Default)]
pub struct Recorder {
    /// (anomaly type, round).
    pub found: Vec<(String, usize)>,
    /// The cases, in the order of `found` (their op ids are positions in
    /// the history read, which later rounds only extend).
    pub cases: Vec<isolde::anomaly::Case>,
    /// Reported list-append cycles that the independent checker
    /// ([`super::check_la_cycle`]) does not justify from the history read
    /// when they were reported.
    pub unjustified: Vec<String>,
    /// Status lines, round `r` at `rounds[r - 1]`.
    pub rounds: Vec<RoundStatus>,
    /// Notes.
    pub notes: Vec<String>,
}

impl Recorder {
    /// Completed transactions read when the round that reported
    /// `found[i]` ran.
    pub fn txns_at(&self, i: usize) -> usize {
        self.rounds[self.found[i].1 - 1].txns
    }
}

impl Watch for Recorder {
    fn anomalies(&mut self, round: usize, h: &History, w: Workload, found: &[Final]) {
        for f in found {
            if let (Workload::ListAppend, isolde::anomaly::Case::Cycle(c)) = (w, &f.case) {
                if let Err(e) = super::check_la_cycle(h, c) {
                    self.unjustified.push(format!("round {round}: {e}"));
                }
            }
        }
        self.found.extend(found.iter().map(|f| (f.name.clone(), round)));
        self.cases.extend(found.iter().map(|f| f.case.clone()));
    }
    fn status(&mut self, s: &RoundStatus) {
        self.rounds.push(s.clone());
    }
    fn note(&mut self, text: &str) {
        self.notes.push(text.to_string());
    }
}

/// Follows `text` fed in chunks of `sizes`, rounds every `round_txns`.
pub fn follow(text: &str, sizes: Vec<usize>, round_txns: usize, opts: &CheckOptions) -> (Followed, Recorder) {
    follow_quiet(text, sizes, round_txns, opts, online::collect::QUIET_LINES)
}

/// [`follow`], with unread overlapping appends collected in an assumed
/// order once their key was quiet for `quiet_lines`.
pub fn follow_quiet(
    text: &str,
    sizes: Vec<usize>,
    round_txns: usize,
    opts: &CheckOptions,
    quiet_lines: u32,
) -> (Followed, Recorder) {
    follow_with(text, sizes, opts, FollowOptions { quiet_lines, ..rounds_every(round_txns) })
}

/// [`follow_quiet`], with retired keys sealed to a file in `spill_dir`
/// (`None`: the temporary directory).
pub fn follow_sealing(
    text: &str,
    round_txns: usize,
    opts: &CheckOptions,
    quiet_lines: u32,
    spill_dir: Option<std::path::PathBuf>,
) -> (Followed, Recorder) {
    follow_with(text, vec![4096], opts, FollowOptions { quiet_lines, spill_dir, ..rounds_every(round_txns) })
}

/// [`follow`] on registers with fences (collected by default since
/// `--follow-window` became the default).
pub fn follow_window(text: &str, sizes: Vec<usize>, round_txns: usize, opts: &CheckOptions) -> (Followed, Recorder) {
    follow_window_quiet(text, sizes, round_txns, opts, online::collect::QUIET_LINES)
}

/// [`follow_window`], with collected register keys sealed to the
/// temporary directory once quiet for `quiet_lines`.
pub fn follow_window_quiet(
    text: &str,
    sizes: Vec<usize>,
    round_txns: usize,
    opts: &CheckOptions,
    quiet_lines: u32,
) -> (Followed, Recorder) {
    follow_window_archiving(text, sizes, round_txns, opts, quiet_lines, online::FollowOptions::default().archive_words)
}

/// [`follow_window_quiet`], with a key's intermediate values archived to
/// the spill file once they fill `archive_words` words.
pub fn follow_window_archiving(
    text: &str,
    sizes: Vec<usize>,
    round_txns: usize,
    opts: &CheckOptions,
    quiet_lines: u32,
    archive_words: usize,
) -> (Followed, Recorder) {
    let fopts = FollowOptions { quiet_lines, archive_words, ..rounds_every(round_txns) };
    follow_with(text, sizes, opts, fopts)
}

/// [`follow`] with `--follow-all`: every transaction kept.
pub fn follow_all(text: &str, sizes: Vec<usize>, round_txns: usize, opts: &CheckOptions) -> (Followed, Recorder) {
    follow_with(text, sizes, opts, FollowOptions { keep_all: true, ..rounds_every(round_txns) })
}

/// Rounds at every `round_txns` completions, never by the clock.
fn rounds_every(round_txns: usize) -> FollowOptions {
    FollowOptions {
        round_txns,
        round_interval: std::time::Duration::from_secs(3600),
        throttle: false,
        ..FollowOptions::default()
    }
}

/// Follows `text` fed in chunks of `sizes` with `fopts`, recording what
/// was reported.
fn follow_with(text: &str, sizes: Vec<usize>, opts: &CheckOptions, fopts: FollowOptions) -> (Followed, Recorder) {
    let feed = online::feed::Feed::reader(Chunked::new(text.as_bytes().to_vec(), sizes));
    let mut rec = Recorder::default();
    let followed = online::follow_feed(feed, "test.edn", opts, &fopts, &mut rec).expect("follows");
    (followed, rec)
}

/// Anomalies the fenced register property cases plant.
pub const FENCED_INJECT: [Inject; 5] =
    [Inject::G1c, Inject::LostUpdate, Inject::WriteSkew, Inject::ReadSkew, Inject::G1a];

/// The register history a fenced property case draws: a store at
/// `LEVELS[level]` with `FENCED_INJECT[i]` planted for each `i` of
/// `inject`, `faults` in twentieths (failed, `:info`), and a fence every
/// `fences` transactions; `None` when the generator refuses the options.
pub fn fenced_case(
    seed: u64,
    (txns, processes): (usize, usize),
    level: usize,
    inject: &[usize],
    faults: (usize, usize),
    fences: usize,
) -> Option<String> {
    let inject: Vec<Inject> = inject.iter().map(|&i| FENCED_INJECT[i]).collect();
    let opts = GenOptions { level: LEVELS[level], inject, inject_count: 0, fences, ..GenOptions::default() };
    let faults = (faults.0 as f64 * 0.05, faults.1 as f64 * 0.05);
    generate(false, seed, txns, processes, faults, &opts)
}

/// A generated history, or `None` when the generator refuses the options.
pub fn generate(
    list: bool,
    seed: u64,
    txns: usize,
    processes: usize,
    faults: (f64, f64),
    opts: &GenOptions,
) -> Option<String> {
    let mut out = Vec::new();
    let r = if list {
        let cfg = ListAppendConfig {
            seed,
            txns,
            processes,
            active_keys: 6,
            fail_fraction: faults.0,
            info_fraction: faults.1,
            ..ListAppendConfig::default()
        };
        gen::list_append::write_list_append_with(&cfg, opts, &mut out)
    } else {
        let cfg = RwRegisterConfig {
            seed,
            txns,
            processes,
            keys: 12,
            min_txn_len: 1,
            max_txn_len: 4,
            fail_fraction: faults.0,
            info_fraction: faults.1,
            ..RwRegisterConfig::default()
        };
        return rw_register_text(&cfg, opts);
    };
    r.ok().map(|_| String::from_utf8(out).expect("utf-8"))
}

/// `isolde gen rw-register`'s history for `cfg` and `opts`, as text;
/// `None` when the generator refuses them.
pub fn rw_register_text(cfg: &RwRegisterConfig, opts: &GenOptions) -> Option<String> {
    let mut out = Vec::new();
    gen::rw_register::write_rw_register_with(cfg, opts, &mut out).ok()?;
    Some(String::from_utf8(out).expect("utf-8"))
}

pub fn options(list: bool, model: Option<&str>) -> CheckOptions {
    CheckOptions {
        workload: WorkloadChoice::Fixed(if list { Workload::ListAppend } else { Workload::RwRegister }),
        models: model.map(|m| vec![m.to_string()]),
        ..CheckOptions::default()
    }
}

/// A list-append history whose appends all get read back soon (keys never
/// retired, mostly reads), the shape in which the online checker collects.
pub fn generate_read_back(seed: u64, txns: usize, processes: usize, opts: &GenOptions) -> String {
    let cfg = ListAppendConfig {
        seed,
        txns,
        processes,
        active_keys: 100,
        max_writes_per_key: 1_000_000,
        read_fraction: 0.8,
        ..ListAppendConfig::default()
    };
    let mut out = Vec::new();
    gen::list_append::write_list_append_with(&cfg, opts, &mut out).expect("generates");
    String::from_utf8(out).expect("utf-8")
}

/// A list-append history in `isolde gen list-append`'s default shape
/// (Elle's: keys retired after their last appends, often never read again).
pub fn generate_elle_shaped(seed: u64, txns: usize) -> String {
    let cfg = ListAppendConfig { seed, txns, ..ListAppendConfig::default() };
    let mut out = Vec::new();
    gen::list_append::write_list_append_with(&cfg, &GenOptions::default(), &mut out).expect("generates");
    String::from_utf8(out).expect("utf-8")
}

/// The store levels the property tests generate at.
pub const LEVELS: [Level; 4] =
    [Level::StrictSerializable, Level::Serializable, Level::SnapshotIsolation, Level::ReadCommitted];
/// The anomalies they plant.
pub const INJECT: [Inject; 6] =
    [Inject::G1a, Inject::G1c, Inject::LostUpdate, Inject::WriteSkew, Inject::ReadSkew, Inject::Internal];

/// Appends to `text` a transaction of a new process, long after the rest,
/// that reads `value` of `key`, and returns the batch check of the result
/// with `opts`.
pub fn append_late_read(text: &mut String, key: &str, value: &str, opts: &CheckOptions) -> isolde::outcome::Outcome {
    for (t, ty) in [(9_000_000_000u64, "invoke"), (9_000_000_001, "ok")] {
        text.push_str(&format!(
            "{{:type :{ty}, :f :txn, :value [[:r {key} {}]], :process 99, :time {t}}}\n",
            if ty == "ok" { value } else { "nil" }
        ));
    }
    let batch = isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn).expect("parses");
    isolde::check::check(&batch, opts).expect("batch check")
}

/// The final verdict of a collecting follow, as `isolde analyze --follow`
/// gives it.
pub fn verdict(followed: &mut Followed, check: &isolde::check::CheckOptions) -> isolde::outcome::Outcome {
    isolde::online::final_check(followed, check).expect("final check")
}

/// How many cases of a property test ended `unknown` (an assumed write
/// order a later read contradicted, and nothing took it back): printed
/// once the test's cases have run (`cargo test --test online -- --nocapture
/// gives_the_batch_verdict keeps_the_batch_verdict`), so that the count
/// is in the test's output.
pub struct Tally {
    name: &'static str,
    /// Cases, and of them `unknown`, by the batch verdict: valid, invalid.
    counts: std::sync::Mutex<[(usize, usize); 2]>,
}

impl Tally {
    pub const fn new(name: &'static str) -> Tally {
        Tally { name, counts: std::sync::Mutex::new([(0, 0); 2]) }
    }

    /// Counts a case that passed (`want`: the batch verdict); prints the
    /// tally after the `of`-th.
    pub fn count(&self, followed: &Followed, want: Validity, of: usize) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let c = &mut counts[usize::from(want != Validity::Valid)];
        c.0 += 1;
        c.1 += usize::from(followed.unknown.is_some());
        let [valid, invalid] = *counts;
        if valid.0 + invalid.0 == of {
            eprintln!(
                "{}: unknown on {} of {} valid histories, {} of {} invalid ones",
                self.name, valid.1, valid.0, invalid.1, invalid.0
            );
        }
    }
}

/// The batch check's verdict on `text`.
pub fn batch_verdict(text: &str, check: &isolde::check::CheckOptions) -> Validity {
    let batch = isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn).expect("parses");
    isolde::check::check(&batch, check).expect("batch check").valid
}

/// The property both property tests hold: nothing reported on a history
/// the batch check finds valid, and the batch verdict `want` at the end,
/// or (where a read contradicted an assumed order) never `valid`, and
/// `invalid` only where the batch check says so.
pub fn agrees_with_batch(
    followed: &mut Followed,
    rec: &Recorder,
    check: &isolde::check::CheckOptions,
    want: Validity,
) -> Result<(), TestCaseError> {
    let late = followed.window.as_ref().map_or(0, |w| w.cases.len());
    if want == Validity::Valid {
        prop_assert!(rec.found.is_empty() && late == 0, "reported {:?} on a valid history", rec.found);
    }
    let got = verdict(followed, check);
    match &followed.unknown {
        None => prop_assert_eq!(got.valid, want, "{} flipped", followed.flipped),
        Some(_) => {
            prop_assert_ne!(got.valid, Validity::Valid);
            if got.valid == Validity::Invalid {
                prop_assert_eq!(want, Validity::Invalid);
            }
        }
    }
    if !rec.found.is_empty() {
        prop_assert_eq!(want, Validity::Invalid, "reported {:?}", rec.found);
    }
    Ok(())
}

/// A followed valid history: nothing reported, under 3,000 transactions
/// held after the first rounds, and `valid` (or `unknown`, with its
/// reason, where an assumed order broke).
pub fn assert_valid_in_a_small_window(followed: &mut Followed, rec: &Recorder, check: &isolde::check::CheckOptions) {
    assert!(rec.found.is_empty(), "{:?}", rec.found);
    let held_max = rec.rounds.iter().skip(2).map(|r| r.txns as u64 - r.collected.expect("collecting")).max();
    assert!(held_max.unwrap_or(0) < 3_000, "up to {held_max:?} transactions held");
    let got = verdict(followed, check).valid;
    match &followed.unknown {
        None => assert_eq!(got, Validity::Valid),
        Some(why) => assert_eq!(got, Validity::Unknown, "{why}"),
    }
}
