//! Checking a history while it is being written (`isolde analyze --follow`).
//!
//! A database run lasts hours or days; its history grows line by line (a
//! Jepsen `history.edn` being appended, a pipe from `isolde gen … -o -` or
//! from a recorder). The online checker reads it as it grows ([`feed`]),
//! parses the ops each read completes ([`assemble`]), and checks what it has
//! read in *rounds*: after every `round_txns` completed transactions, or
//! every `round_interval` when fewer arrive, the history read so far is
//! checked with the same checkers, models and options as `isolde analyze`,
//! and every anomaly that has become *final* is reported at once (one line
//! each), then never again. At the end of the input (end of a pipe,
//! `--follow-idle` without growth for a file, SIGINT or SIGTERM) the caller
//! gives the usual verdict on everything read.
//!
//! ## Why a prefix's anomalies can be reported ([`finality`])
//! Every check is monotone in what the history reveals: more transactions
//! add edges, reads and constraints, never remove them. So an anomaly among
//! transactions that have all completed `:ok` or `:fail` is an anomaly of
//! every longer history: it is final. A case that names a transaction still
//! open, or `:info`, waits (its outcome and its reads may still change
//! what it proves). "Valid so far" is never printed as valid: rounds print
//! anomalies and a status line, and only the end of the input gives a
//! verdict.
//!
//! ## Memory: what is collected
//! List-append checked for strict serializability alone collects old
//! transactions ([`collect`]: chordless cycles are temporally local, so a
//! transaction every later one follows in realtime is only needed through
//! its key's version order, kept as a per-key prefix, and a key the
//! workload retired is sealed to a spill file, [`spill`]); its rounds run
//! at every `round_txns`, each costing what it reads. Registers with fence
//! transactions checked at a session level collect too ([`fenced`]: exact
//! but for concurrent writes nothing read before they were collected, which
//! can make the verdict `unknown`), and so do they at plain serializability
//! and snapshot isolation, by the session level's rule ([`plain`]: a valid
//! verdict is exact, an answer resting on session order is `unknown`). `--follow-all` turns collection off.
//! Every other check keeps the whole history and checks it all each
//! round, spaced so that checking takes at most half of the time (a round
//! waits at least as long as the previous one took), which keeps the total work linear in the rounds'
//! growth but lets the lag and memory grow with the run; the checker says so
//! once, and `max_memory_mb` ends the run with `unknown` and the reason
//! instead of letting the machine swap. Collecting at the other levels needs
//! Cobra's fence-and-epoch argument with the transitive edges of the
//! collected transactions carried into the live graph (`docs/online.md`).

pub mod assemble;
pub mod cobra;
pub mod collect;
mod cut;
pub mod feed;
pub mod fenced;
pub mod finality;
pub mod jepsen_store;
pub mod packed;
pub mod plain;
pub mod spill;
mod values;

use std::path::Path;
use std::time::{Duration, Instant};

use crate::anomaly::Workload;
use crate::check::{self, CheckOptions};
use crate::history::History;
use crate::ingest::IngestError;

pub use feed::EndReason;

/// The anomaly name of a check that found no dependency edge.
const EMPTY_GRAPH: &str = "empty-transaction-graph";
pub use finality::Final;

/// How rounds are paced and when following stops.
#[derive(Clone, Debug)]
pub struct FollowOptions {
    /// A round after this many newly completed transactions.
    pub round_txns: usize,
    /// A round after this long when fewer have completed (and at least one).
    pub round_interval: Duration,
    /// A file ends after this long without growth (`None`: only a signal
    /// ends it). Standard input ends at its end of file.
    pub idle: Option<Duration>,
    /// Stop reading once the process holds more than this many MB.
    pub max_memory_mb: Option<u64>,
    /// Space rounds so that checking takes at most half of the time (a
    /// round never starts sooner after the previous one than that one
    /// took). Off, a round runs at every `round_txns` however long rounds
    /// take (tests that need rounds at known points).
    pub throttle: bool,
    /// For a file: set by its writer once it has written everything (the
    /// file then ends at its end), as `record --check` does.
    pub done: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// When collecting list-append transactions: how many lines a key must
    /// have been quiet before unread appends of it whose appenders overlap
    /// go in an assumed order ([`collect::QUIET_LINES`] by default).
    pub quiet_lines: u32,
    /// Keep every transaction read and check it all each round, as the
    /// batch check would (`--follow-all`). Off (the default), a run holds
    /// only a window wherever a collection rule exists: list-append at
    /// strict serializability ([`collect`]), registers with fences at a
    /// session level ([`FENCED_MODELS`], [`fenced`]) or a plain one
    /// ([`plain::PLAIN_MODELS`], [`plain`]: the write order of
    /// concurrent writes nothing has read yet is assumed, and a later read
    /// that shows another order makes the verdict `unknown`).
    pub keep_all: bool,
    /// When collecting list-append transactions: the directory of the file
    /// that retired keys are sealed to ([`spill`]; `None`:
    /// [`std::env::temp_dir`], that is `$TMPDIR`).
    pub spill_dir: Option<std::path::PathBuf>,
    /// When collecting registers: how many bitmap words of a key's
    /// intermediate values stay in memory before they are archived to the
    /// spill file ([`fenced::ARCHIVE_WORDS`] by default; tests set 1).
    pub archive_words: usize,
}

impl Default for FollowOptions {
    fn default() -> Self {
        FollowOptions {
            round_txns: 5_000,
            round_interval: Duration::from_secs(1),
            idle: None,
            max_memory_mb: None,
            throttle: true,
            done: None,
            quiet_lines: collect::QUIET_LINES,
            keep_all: false,
            spill_dir: None,
            archive_words: fenced::ARCHIVE_WORDS,
        }
    }
}

/// What the online checker tells its caller as it goes.
pub trait Watch {
    /// Anomalies that became final in a round (never repeated).
    fn anomalies(&mut self, round: usize, h: &History, workload: Workload, found: &[Final]);
    /// One line of status after each round.
    fn status(&mut self, s: &RoundStatus);
    /// A note printed once (what the run keeps, why a round failed).
    fn note(&mut self, text: &str);
}

/// The state after a round.
#[derive(Clone, Debug)]
pub struct RoundStatus {
    /// Round number, from 1.
    pub round: usize,
    /// Client ops read.
    pub ops: usize,
    /// Completed transactions read (and checked).
    pub txns: usize,
    /// Line the next op starts on.
    pub line: usize,
    /// Resident memory, MB (Linux).
    pub rss_mb: Option<u64>,
    /// Time the round's check took.
    pub check: Duration,
    /// From the arrival of the oldest byte this round checked to the end of
    /// its check: how far behind the input the reports are.
    pub lag: Duration,
    /// Anomalies reported so far.
    pub anomalies: usize,
    /// Transactions collected so far (`None`: this run keeps everything).
    pub collected: Option<u64>,
    /// The rule that collects, when one does: `realtime` (list-append or
    /// registers at strict serializability) or `fences` (registers at a
    /// session level).
    pub rule: Option<&'static str>,
    /// When the window grew this round: what holds its oldest transaction
    /// (an open one, a process's last fence, a key's unsettled order), as
    /// "held by …", or why collection waits.
    pub holder: Option<String>,
}

impl std::fmt::Display for RoundStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rss = self.rss_mb.map(|m| format!(", {m} MB")).unwrap_or_default();
        let held = self.collected.map_or(String::new(), |c| {
            let n = (self.txns as u64).saturating_sub(c);
            match (self.rule, &self.holder) {
                (Some(r), Some(by)) => format!(", {n} held ({r}; {by})"),
                (Some(r), None) => format!(", {n} held ({r})"),
                (None, _) => format!(", {n} held"),
            }
        });
        write!(
            f,
            "round {}: line {}, {} txns read and checked{held}{rss}, check {:.2} s, lag {:.2} s, {} anomalies",
            self.round,
            self.line,
            self.txns,
            self.check.as_secs_f64(),
            self.lag.as_secs_f64(),
            self.anomalies
        )
    }
}

/// Why following stopped, besides the ends of [`EndReason`].
#[derive(Debug)]
pub enum Ending {
    /// The input ended (or was ended) normally.
    End(EndReason),
    /// A malformed op: the history holds every op before it.
    Malformed(IngestError),
    /// `max_memory_mb` was reached: the history holds what was read.
    Memory(String),
}

/// What following read.
pub struct Followed {
    /// Every op read (up to a malformed one, or the memory limit), less
    /// the transactions collected ([`Followed::collected`]).
    pub history: History,
    /// Completed transactions read in all, collected ones included.
    pub txns_read: usize,
    /// Why it stopped.
    pub ending: Ending,
    /// Rounds checked.
    pub rounds: usize,
    /// Anomalies reported while following.
    pub reported: usize,
    /// Their types.
    pub reported_types: std::collections::BTreeSet<String>,
    /// Transactions collected (not in [`Followed::history`]); 0 when the
    /// run kept everything.
    pub collected: u64,
    /// When transactions were collected: [`Followed::history`] as the
    /// checks see it (reads stripped of the collected prefixes), with the
    /// reads that contradict them.
    pub window: Option<collect::Window>,
    /// Whether some round's check found dependency edges (the final
    /// history alone may have none once the rest was collected).
    pub edges_seen: bool,
    /// Why a `valid` verdict cannot be given, when a read contradicted an
    /// order assumed while collecting ([`collect::Collector::broken`]).
    pub unknown: Option<String>,
    /// Elements collected in an assumed order.
    pub assumed: u64,
    /// Assumed orders a later read decided the other way, and the run went
    /// on (`fenced`'s flips).
    pub flipped: u64,
    /// Of `flipped`, those the exact check on a kept round decided.
    pub resolved: u64,
    /// Times recent rounds were taken back into the window (`fenced`'s
    /// `revert`), and the collected transactions they put back.
    pub reverted: (u64, u64),
    /// Keys sealed to disk ([`spill`]).
    pub sealed: Sealed,
    /// Time spent reading and checking rounds.
    pub elapsed: Duration,
    /// Whether the run collected at a session level for a plain one
    /// ([`plain`]): the final check reports only what holds without
    /// sessions.
    pub plain: bool,
}

/// What a run sealed to its spill file ([`spill`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sealed {
    /// Keys sealed (a key sealed, read back and sealed again counts twice).
    pub keys: u64,
    /// Sealed keys read back because an op mentioned them again.
    pub read_back: u64,
    /// Bytes written to the file.
    pub bytes: u64,
}

/// Follows `path` (`-`: standard input), checking in rounds with `opts`,
/// reporting to `watch`. The caller checks [`Followed::history`] once more
/// for the final verdict (the last round may not have seen the last ops).
pub fn follow(
    path: &Path,
    opts: &CheckOptions,
    fopts: &FollowOptions,
    watch: &mut dyn Watch,
) -> Result<Followed, String> {
    let stdin = path.as_os_str() == "-";
    // A Jepsen store directory (or a test's, through `latest`): its
    // history.edn, the file a running test appends to. Otherwise a
    // directory of Cobra client logs.
    let store;
    let path = match path.is_dir().then(|| crate::ingest::jepsen::store_history(path)) {
        // Jepsen's own store file (a running test has no history.edn yet):
        // its sealed history chunks as they arrive.
        Some(Some(p)) if p.file_name().is_some_and(|n| n == crate::ingest::jepsen_store::FILE_NAME) => {
            return follow_store(&p, opts, fopts, watch);
        }
        None if is_store_file(path) => return follow_store(path, opts, fopts, watch),
        None => path,
        Some(Some(p)) if p.file_name().is_some_and(|n| n == "history.edn") => {
            store = p;
            &store
        }
        Some(Some(p)) => {
            return Err(format!(
                "{}: --follow reads a Jepsen store's history.edn as it is written; {} is read whole: drop --follow",
                path.display(),
                p.display()
            ))
        }
        Some(None) => {
            let (rx, clients) = cobra::spawn(path).map_err(|e| {
                format!(
                    "{e}; --follow on a directory reads a Jepsen store's history.edn or Cobra client logs (to follow \
                     shards h.000.edn, h.001.edn, …, pipe them: `cat DIR/h.*.edn | isolde analyze --follow -`)"
                )
            })?;
            let feed = feed::Feed::Logs { rx, clients };
            feed::install_signal_handler();
            return follow_feed(feed, &path.display().to_string(), opts, fopts, watch);
        }
    };
    let source = if stdin { "stdin".to_string() } else { path.display().to_string() };
    let feed = if stdin {
        feed::Feed::stdin()
    } else {
        feed::Feed::file(path, fopts.idle, fopts.done.clone()).map_err(|e| format!("{source}: {e}"))?
    };
    feed::install_signal_handler();
    follow_feed(feed, &source, opts, fopts, watch)
}

/// Whether `path` is a file that begins as Jepsen's store file does.
fn is_store_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 6];
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok()
        && crate::ingest::jepsen_store::is_store(&head)
}

/// [`follow`] on Jepsen's store file `test.jepsen` ([`jepsen_store`]).
fn follow_store(
    path: &Path,
    opts: &CheckOptions,
    fopts: &FollowOptions,
    watch: &mut dyn Watch,
) -> Result<Followed, String> {
    let (rx, progress) = jepsen_store::spawn(path, fopts.idle);
    feed::install_signal_handler();
    let mut followed = follow_feed(feed::Feed::Pipe(rx), &path.display().to_string(), opts, fopts, watch)?;
    // A run ended before Jepsen marked the history complete checked part
    // of it: every report says so, as for a store file read after a crash.
    let why = match followed.ending {
        Ending::End(EndReason::Signal) => "following was stopped by a signal",
        Ending::End(_) => "following ended without a new chunk for the idle limit",
        Ending::Malformed(_) => "a malformed block ended following",
        Ending::Memory(_) => "the memory limit ended following",
    };
    let partial = progress.lock().ok().and_then(|p| p.partial(why));
    if let Some(partial) = partial {
        if matches!(followed.ending, Ending::End(EndReason::Signal)) {
            eprintln!("isolde: {}: {}", path.display(), partial.describe());
        }
        let note = followed.history.store.get_or_insert_with(Default::default);
        note.partial = Some(partial);
    }
    Ok(followed)
}

/// [`follow`] on a feed named `source` in messages.
pub fn follow_feed(
    mut feed: feed::Feed,
    source: &str,
    opts: &CheckOptions,
    fopts: &FollowOptions,
    watch: &mut dyn Watch,
) -> Result<Followed, String> {
    let t0 = Instant::now();
    steady_allocator();
    let mut asm = assemble::Assembler::new(source);
    let clients = feed.clients();
    if clients.is_some() {
        asm.binary_registers();
    }
    let mut rounds = Rounds::new(fopts);
    let mut reported = finality::Reported::default();
    let mut decided = false;
    let mut edges_seen = false;
    let mut collector: Option<Collecting> = None;
    let mut held_note: Option<String> = None;
    // Transactions held after the last round (the status line says what
    // holds the window when it grows).
    let mut last_held: u64 = 0;
    // Collecting rounds also ask for the graph's topological order.
    let mut round_opts = opts.clone();
    // At a plain level, rounds collect at its session level ([`plain`]).
    let mut plain: Option<plain::Plain> = None;
    let ending = loop {
        let next = feed.next(rounds.wait())?;
        match next {
            feed::Next::Bytes(b) => {
                rounds.arrived();
                if let Err(e) = asm.push(&b) {
                    break Ending::Malformed(e);
                }
            }
            feed::Next::Quiet => asm.settle(),
            feed::Next::End(r) => match asm.finish_input() {
                Ok(()) => break Ending::End(r),
                Err(e) => break Ending::Malformed(e),
            },
            feed::Next::Malformed(e) => match asm.finish_input() {
                Ok(()) => break Ending::Malformed(e),
                Err(held) => break Ending::Malformed(held),
            },
        }
        if let (Some(limit), Some(rss)) = (fopts.max_memory_mb, rss_mb()) {
            if rss > limit {
                break Ending::Memory(format!(
                    "stopped reading at line {}: {rss} MB held, over --max-memory {limit} MB; \
                     the verdict covers the ops before that line",
                    asm.line()
                ));
            }
        }
        if !rounds.due(asm.completions()) {
            continue;
        }
        let t = Instant::now();
        let (full, window, checked) = look(&mut collector, &mut asm, &round_opts, true);
        match checked {
            None => {}
            Some(Ok(mut o)) => {
                edges_seen |= !o.anomalies.contains_key(EMPTY_GRAPH);
                if let Some(w) = &window {
                    if let Some(why) = w.set_aside(&mut o.anomalies) {
                        if let Some(c) = collector.as_mut() {
                            c.broken().get_or_insert(why);
                        }
                    }
                    for (name, case) in &w.cases {
                        crate::anomaly::add(&mut o.anomalies, name, case.clone());
                    }
                    let collected = collector.as_ref().is_some_and(|c| c.collected() > 0);
                    if let Some(why) = plain.as_ref().and_then(|p| p.sift_round(w, collected, &mut o.anomalies)) {
                        if let Some(c) = collector.as_mut() {
                            c.broken().get_or_insert(why);
                        }
                    }
                }
                let found = reported.take_new(&full, o.workload, &o.anomalies);
                if !found.is_empty() {
                    watch.anomalies(rounds.count + 1, &full, o.workload, &found);
                }
                if !decided {
                    decided = true;
                    let fences = fenced::names_fence_key(&full);
                    collector = start_collecting(o.workload, opts, asm.interned(), fopts, clients, fences, watch);
                    // A round then costs what it reads, not what was read
                    // before: rounds at every `round_txns` keep the lag short.
                    rounds.throttle &= collector.is_none();
                    round_opts.keep_order = collector.is_some();
                    if let (Some(Collecting::Registers(_)), Some(e)) = (&collector, round_opts.exact.as_mut()) {
                        e.keep_serial = true;
                    }
                    let plain_models = plain_sessions(opts).filter(|_| fences);
                    if let (Some(Collecting::Registers(_)), Some(models)) = (&collector, plain_models) {
                        plain = Some(plain::Plain { asked: opts.clone() });
                        round_opts.models = Some(models);
                    }
                }
                if let Some(c) = collector.as_mut() {
                    if reported.count() > 0 {
                        c.reported_anomaly();
                    }
                    let checked = window.as_ref().map_or(&full, |w| &w.check);
                    let keep = c.collect(checked, &full, &o.order, &o.order_open, o.order_serial);
                    drop((window, full));
                    asm.retain(&keep);
                    if let Some(why) = c.seal(&mut asm) {
                        watch.note(&why);
                    }
                    release_freed_memory();
                    if let Some(why) = c.held_back().take().filter(|w| held_note.as_deref() != Some(w.as_str())) {
                        watch.note(&why);
                        held_note = Some(why);
                    }
                }
            }
            Some(Err(e)) => watch.note(&format!("round {}: {e}", rounds.count + 1)),
        }
        let status = rounds.done(t.elapsed(), asm.completions());
        watch.status(&RoundStatus {
            ops: asm.ops(),
            txns: asm.completions(),
            line: asm.line(),
            rss_mb: rss_mb(),
            anomalies: reported.count(),
            collected: collector.as_ref().map(|c| c.collected()),
            rule: collector.as_ref().map(|c| c.rule()),
            holder: collector.as_mut().and_then(|c| c.holder(asm.completions(), &mut last_held)),
            ..status
        });
    };
    // The final check sees what the last look at the window needs taken
    // back, as a round would.
    if let Some(Collecting::Registers(c)) = collector.as_mut() {
        c.new_round();
        drop(look(&mut collector, &mut asm, &round_opts, false));
    }
    let txns_read = asm.completions();
    let history = asm.into_history();
    let window = collector.as_mut().map(|c| c.apply(&history));
    if let Some(Collecting::Registers(c)) = collector.as_mut() {
        c.unserved_revert();
    }
    Ok(Followed {
        txns_read,
        history,
        ending,
        rounds: rounds.count,
        reported: reported.count(),
        reported_types: reported.types,
        unknown: collector.as_mut().and_then(|c| c.broken().take()),
        assumed: collector.as_ref().map_or(0, |c| c.assumed()),
        flipped: match &collector {
            Some(Collecting::Registers(c)) => c.flipped,
            _ => 0,
        },
        resolved: match &collector {
            Some(Collecting::Registers(c)) => c.resolved,
            _ => 0,
        },
        reverted: match &collector {
            Some(Collecting::Registers(c)) => (c.reverts, c.reverted_txns),
            _ => (0, 0),
        },
        sealed: match &collector {
            Some(Collecting::Lists(c)) => Sealed { keys: c.sealed, read_back: c.unsealed, bytes: c.spill_bytes() },
            Some(Collecting::Registers(c)) => Sealed { keys: c.sealed, read_back: c.unsealed, bytes: c.spill_bytes() },
            None => Sealed::default(),
        },
        collected: collector.map(|c| c.collected()).unwrap_or(0),
        window,
        edges_seen,
        elapsed: t0.elapsed(),
        plain: plain.is_some(),
    })
}

/// A round's look at the held ops: the history, the collector's window of
/// it and its check (`None` when `wanted` is false and nothing in the
/// window is flagged), taking back the collected rounds that a read or an
/// anomaly relying on a flag needs ([`fenced`]'s `revert`) until none
/// does.
#[allow(clippy::type_complexity)]
fn look(
    collector: &mut Option<Collecting>,
    asm: &mut assemble::Assembler,
    opts: &CheckOptions,
    wanted: bool,
) -> (History, Option<collect::Window>, Option<Result<crate::outcome::Outcome, check::CheckError>>) {
    loop {
        let full = asm.snapshot();
        let window = collector.as_mut().map(|c| c.apply(&full));
        if collector.as_mut().is_some_and(|c| c.revert_pending(asm)) {
            continue;
        }
        if !wanted && !window.as_ref().is_some_and(|w| w.has_flags()) {
            return (full, window, None);
        }
        let mut checked = check::check(window.as_ref().map_or(&full, |w| &w.check), opts);
        if let (Ok(o), Some(w)) = (checked.as_mut(), &window) {
            w.restore(&mut o.anomalies);
            let lines = w.flags_relied_on(&o.anomalies);
            if !lines.is_empty() && collector.as_mut().is_some_and(|c| c.revert_for_flags(&lines, asm)) {
                continue;
            }
        }
        return (full, window, Some(checked));
    }
}

/// The session models a run at plain levels alone collects at
/// ([`plain::session_model`]), or `None` when a model asked is not plain.
fn plain_sessions(opts: &CheckOptions) -> Option<Vec<String>> {
    let models = opts.models.as_deref().filter(|m| !m.is_empty())?;
    models.iter().map(|m| plain::session_model(m).map(str::to_string)).collect()
}

/// The session levels at which fence transactions let register histories
/// be collected ([`fenced`]): each includes session order, none realtime.
pub const FENCED_MODELS: [&str; 3] =
    ["strong-session-serializable", "strong-session-snapshot-isolation", "causal-cerone"];

/// The levels of [`FENCED_MODELS`] at which a read fence orders the
/// transactions around it ([`fenced`]): those whose anti-dependencies order
/// transactions (serializability, snapshot isolation).
pub const READ_FENCE_MODELS: [&str; 2] = ["strong-session-serializable", "strong-session-snapshot-isolation"];

/// What collects old transactions, by workload.
enum Collecting {
    /// List-append at strict serializability: the realtime rule.
    Lists(collect::Collector),
    /// Registers at a session level (the fence rule) or at strict
    /// serializability (realtime in place of fences).
    Registers(fenced::Collector),
}

impl Collecting {
    /// Takes back the rounds a read judged by [`Self::apply`] asked for
    /// ([`fenced`]'s `revert`): whether the window must be looked at again.
    fn revert_pending(&mut self, asm: &mut assemble::Assembler) -> bool {
        match self {
            Collecting::Lists(_) => false,
            Collecting::Registers(c) => c.revert_pending(asm),
        }
    }

    /// Takes back the rounds that flagged the transactions on `lines`, on
    /// which a check's anomaly relies: whether it did.
    fn revert_for_flags(&mut self, lines: &[u32], asm: &mut assemble::Assembler) -> bool {
        match self {
            Collecting::Lists(_) => false,
            Collecting::Registers(c) => c.revert_for_flags(lines, asm),
        }
    }

    fn apply(&mut self, h: &History) -> collect::Window {
        match self {
            Collecting::Lists(c) => c.apply(h),
            Collecting::Registers(c) => c.apply(h),
        }
    }

    /// Collects after a round that checked `h` (`full` as read: the
    /// register rule flags conflicts through reads the window set aside),
    /// by the round's `order` (`open`: where a prefix of it may not end).
    fn collect(&mut self, h: &History, full: &History, order: &[u32], open: &[bool], serial: bool) -> Vec<bool> {
        match self {
            Collecting::Lists(c) => c.collect(h, order),
            Collecting::Registers(c) => c.collect(h, full, order, open, serial),
        }
    }

    /// After a round's collection: seals the quiet list-append keys and
    /// drops the keys nothing holds from the key table ([`collect`]'s
    /// sealing rule); says why once the spill file failed.
    fn seal(&mut self, asm: &mut assemble::Assembler) -> Option<String> {
        match self {
            Collecting::Lists(c) => seal_quiet_keys(c, asm),
            Collecting::Registers(c) => seal_quiet_keys(c, asm),
        }
    }

    /// Tells the collector that the run reported an anomaly (its verdict
    /// is `invalid` from now on).
    fn reported_anomaly(&mut self) {
        if let Collecting::Registers(c) = self {
            c.invalid = true;
        }
    }

    fn collected(&self) -> u64 {
        match self {
            Collecting::Lists(c) => c.collected,
            Collecting::Registers(c) => c.collected,
        }
    }

    /// The rule that collects, as the status line names it.
    fn rule(&self) -> &'static str {
        match self {
            Collecting::Lists(_) => "realtime",
            Collecting::Registers(c) if c.realtime() => "realtime",
            Collecting::Registers(_) => "fences",
        }
    }

    /// What holds the window's oldest transaction, when the window grew
    /// since the last round (`last_held`: the count held then, updated).
    fn holder(&mut self, txns: usize, last_held: &mut u64) -> Option<String> {
        let held = (txns as u64).saturating_sub(self.collected());
        let grew = held > *last_held;
        *last_held = held;
        let holder = match self {
            Collecting::Lists(c) => c.holder.take(),
            Collecting::Registers(c) => c.holder.take(),
        };
        holder.filter(|_| grew)
    }

    fn assumed(&self) -> u64 {
        match self {
            Collecting::Lists(c) => c.assumed,
            Collecting::Registers(c) => c.assumed,
        }
    }

    fn held_back(&mut self) -> &mut Option<String> {
        match self {
            Collecting::Lists(c) => &mut c.held_back,
            Collecting::Registers(c) => &mut c.held_back,
        }
    }

    fn broken(&mut self) -> &mut Option<String> {
        match self {
            Collecting::Lists(c) => &mut c.broken,
            Collecting::Registers(c) => &mut c.broken,
        }
    }
}

/// Seals `c`'s quiet keys and drops the keys nothing holds from the key
/// table; says why once the spill file failed.
fn seal_quiet_keys(c: &mut impl spill::Sealing, asm: &mut assemble::Assembler) -> Option<String> {
    let failed = c.spill_failed().is_some();
    let line = u32::try_from(asm.line()).unwrap_or(u32::MAX);
    let (keys, used) = asm.keys();
    let drop = c.seal_keys(keys, &used, line);
    if drop.contains(&true) {
        let map = asm.drop_keys(&drop);
        c.remap_keys(&map);
    }
    c.spill_failed().filter(|_| !failed).map(str::to_string)
}

/// What collects this run's old transactions, if anything can: list-append
/// checked for strict serializability alone ([`collect`]'s realtime rule),
/// or registers checked at session levels alone ([`FENCED_MODELS`],
/// [`fenced`]'s fence rule), with integer values; nothing with
/// [`FollowOptions::keep_all`]. Says once what the run keeps.
fn start_collecting(
    workload: Workload,
    opts: &CheckOptions,
    interned: bool,
    fopts: &FollowOptions,
    clients: Option<usize>,
    fences: bool,
    watch: &mut dyn Watch,
) -> Option<Collecting> {
    let models = opts.models.as_deref().unwrap_or(&[]);
    let strict_only = models.len() == 1 && models[0] == "strict-serializable";
    // At a plain level, rounds collect at its session level ([`plain`]),
    // when the history has fences (without, every round would check the
    // whole history twice and collect nothing).
    let plain = plain_sessions(opts).filter(|_| fences);
    let models = plain.as_deref().unwrap_or(models);
    let sessions_only = !models.is_empty() && models.iter().all(|m| FENCED_MODELS.contains(&m.as_str()));
    if fopts.keep_all {
        watch.note(
            "--follow-all keeps every transaction it reads and checks them all each round, as the batch \
             check does: memory grows with the run",
        );
        return None;
    }
    let can = !opts.ladder && !interned;
    if can && workload == Workload::ListAppend && strict_only {
        watch.note(
            "--follow collects transactions that every later one follows in realtime: memory stays flat \
             (isolde help online)",
        );
        return Some(Collecting::Lists(collect::Collector::with_spill_dir(
            fopts.quiet_lines,
            fopts.spill_dir.as_deref(),
        )));
    } else if can && workload == Workload::RwRegister && strict_only {
        watch.note(
            "--follow collects transactions that every later one follows in realtime: memory stays flat; \
             the write order of concurrent writes nothing has read yet is assumed, and a later read that \
             shows another makes the verdict unknown unless a replay of the round that collected them \
             explains it (--follow-all keeps everything instead; isolde help online)",
        );
        let mut collector =
            fenced::Collector::with_spill_dir(fopts.quiet_lines, fopts.spill_dir.as_deref()).with_realtime(true);
        collector.archive_words = fopts.archive_words;
        return Some(Collecting::Registers(collector));
    } else if can && workload == Workload::RwRegister && sessions_only {
        watch.note(&format!(
            "--follow collects transactions that fence transactions (on :{}) order before every later one: \
             memory stays flat when the history has fences; the write order of concurrent writes nothing has \
             read yet is assumed, and a later read that shows another makes the verdict unknown unless a \
             replay of the round that collected them explains it (--follow-all keeps everything instead; \
             isolde help online)",
            fenced::FENCE_KEY
        ));
        if plain.is_some() {
            watch.note(
                "fences order transactions only through each client's order: like Cobra, collecting at a plain \
                 level assumes the database keeps it (strong session serializability or snapshot isolation). A \
                 valid verdict is exact; an anomaly is reported only where it holds without that assumption, and \
                 one that needs it makes the verdict unknown (isolde help online)",
            );
        }
        // Read fences order by anti-dependencies: not at causal-cerone.
        let read_fences = models.iter().all(|m| READ_FENCE_MODELS.contains(&m.as_str()));
        let mut collector = fenced::Collector::with_spill_dir(fopts.quiet_lines, fopts.spill_dir.as_deref())
            .with_read_fences(read_fences)
            .with_clients(clients);
        collector.archive_words = fopts.archive_words;
        return Some(Collecting::Registers(collector));
    }
    watch.note(&format!(
        "--follow keeps every transaction it reads: transactions are collected only for list-append and \
         registers checked with -m strict-serializable alone, and for registers with fence transactions \
         checked at {}, serializable or snapshot-isolation (isolde help online); memory grows with the run",
        FENCED_MODELS.join(", ")
    ));
    None
}

/// When rounds run: after `round_txns` new completions, or `round_interval`
/// with at least one, and never sooner after a round than that round took.
struct Rounds {
    round_txns: usize,
    interval: Duration,
    count: usize,
    checked: usize,
    last_end: Instant,
    last_cost: Duration,
    throttle: bool,
    /// When the oldest bytes not yet checked arrived.
    oldest: Option<Instant>,
}

impl Rounds {
    fn new(o: &FollowOptions) -> Rounds {
        Rounds {
            round_txns: o.round_txns.max(1),
            interval: o.round_interval,
            count: 0,
            checked: 0,
            last_end: Instant::now(),
            last_cost: Duration::ZERO,
            throttle: o.throttle,
            oldest: None,
        }
    }

    fn arrived(&mut self) {
        self.oldest.get_or_insert_with(Instant::now);
    }

    /// How long to wait for input before looking at the clock again.
    fn wait(&self) -> Duration {
        let next = self.last_end + self.interval.max(self.last_cost);
        next.saturating_duration_since(Instant::now()).clamp(Duration::from_millis(10), Duration::from_millis(250))
    }

    fn due(&self, completions: usize) -> bool {
        let new = completions - self.checked;
        let since = self.last_end.elapsed();
        new > 0 && (!self.throttle || since >= self.last_cost) && (new >= self.round_txns || since >= self.interval)
    }

    fn done(&mut self, check: Duration, completions: usize) -> RoundStatus {
        self.count += 1;
        self.checked = completions;
        self.last_end = Instant::now();
        self.last_cost = check;
        let lag = self.oldest.take().map(|t| t.elapsed()).unwrap_or_default();
        RoundStatus {
            round: self.count,
            ops: 0,
            txns: completions,
            line: 0,
            rss_mb: None,
            check,
            lag,
            anomalies: 0,
            collected: None,
            rule: None,
            holder: None,
        }
    }
}

/// Hands the memory a collecting round freed back to the system. glibc
/// keeps freed blocks in its per-thread arenas (each round frees a window's
/// columns and the check's graph, built on several threads), so without
/// this the resident size creeps up with the run (about 30 MB per million
/// list-append transactions) while what the collector holds stays flat.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointers; it only releases free memory
    // at the top of glibc's heaps.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Above this many bytes, glibc serves every allocation with its own
/// mapping ([`steady_allocator`]).
const MMAP_ABOVE: i32 = 1 << 20;

/// Makes glibc give large blocks back to the system when they are freed.
/// Each collecting round copies the held history, checks the copy and
/// frees both: blocks of a few MB. glibc serves blocks above its mmap
/// threshold with a mapping of their own, unmapped on free, but it raises
/// that threshold each time such a block is freed (up to 32 MB), after
/// which the rounds' blocks come from its heaps, where what a round frees
/// among what it keeps stays resident (`malloc_trim` returns only whole
/// free pages). A fixed threshold keeps the rounds' large blocks out of the
/// heaps: measured on list-append at strict serializability (3M
/// transactions), the resident size between rounds falls from a median of
/// 35 MB (18–48) to 11 MB, for 5–10% more time (`docs/performance.md`).
fn steady_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` takes no pointers; it sets a tunable of glibc's
    // allocator, which any thread may do at any time.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_ABOVE);
    }
}

/// Resident memory now, MB (Linux; `None` elsewhere).
pub fn rss_mb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096 / (1 << 20))
}

/// The verdict on everything `followed` read: the check of the history it
/// holds and, when transactions were collected, what that check cannot see
/// (the reads that contradict the collected prefixes, the types of the
/// anomalies reported while following, whose transactions may be gone: any
/// of them makes the verdict invalid). A held history without dependency
/// edges says nothing when earlier rounds had some: its
/// `empty-transaction-graph` goes.
///
/// A held case whose witness relies on an order `--follow` assumed
/// ([`collect::Window::set_aside`]), or, at a plain level, on sessions
/// ([`plain::sift`]), is left out, and the verdict is then not `valid`;
/// the reason joins [`Followed::unknown`].
pub fn final_check(followed: &mut Followed, opts: &CheckOptions) -> Result<crate::outcome::Outcome, check::CheckError> {
    let Some(w) = &followed.window else { return check::check(&followed.history, opts) };
    let mut outcome = check::check(&w.check, opts)?;
    w.restore(&mut outcome.anomalies);
    let set_aside = w.set_aside(&mut outcome.anomalies);
    if let Some(why) = &set_aside {
        followed.unknown.get_or_insert_with(|| why.clone());
        outcome.anomaly_types.retain(|t| outcome.anomalies.contains_key(t));
        if outcome.valid == crate::outcome::Validity::Invalid && outcome.anomaly_types.is_empty() {
            outcome.valid = crate::outcome::Validity::Unknown;
        }
    }
    if followed.edges_seen && outcome.anomalies.remove(EMPTY_GRAPH).is_some() {
        outcome.anomaly_types.retain(|t| t != EMPTY_GRAPH);
        if outcome.valid == crate::outcome::Validity::Unknown && outcome.anomalies.is_empty() {
            outcome.valid = crate::outcome::Validity::Valid;
        }
    }
    let mut types: std::collections::BTreeSet<String> = outcome.anomaly_types.iter().cloned().collect();
    for (name, case) in &w.cases {
        types.insert(name.clone());
        crate::anomaly::add(&mut outcome.anomalies, name, case.clone());
    }
    if followed.plain {
        if let Some(why) = plain::sift(w, &mut outcome.anomalies) {
            followed.unknown.get_or_insert(why);
            types.retain(|t| outcome.anomalies.contains_key(t));
            outcome.anomaly_types.retain(|t| outcome.anomalies.contains_key(t));
            if outcome.valid == crate::outcome::Validity::Invalid && types.is_empty() {
                outcome.valid = crate::outcome::Validity::Unknown;
            }
        }
    }
    types.extend(followed.reported_types.iter().cloned());
    if types.len() > outcome.anomaly_types.len() {
        outcome.valid = crate::outcome::Validity::Invalid;
        outcome.anomaly_types = types.into_iter().collect();
    }
    if (followed.unknown.is_some() || set_aside.is_some()) && outcome.valid == crate::outcome::Validity::Valid {
        outcome.valid = crate::outcome::Validity::Unknown;
    }
    Ok(outcome)
}
