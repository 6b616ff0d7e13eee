//! The transactions a recording runs, and their defaults: Elle's shape.
//!
//! Elle's generators (`elle.txn/wr-txns`, which `elle.rw-register/gen`
//! uses as it is and `elle.list-append/gen` with its writes turned into
//! appends) draw short transactions, 1 to 4 micro-ops, half reads, over a
//! small *window* of active keys; a key that has received its share of
//! writes retires and a fresh key takes its place, so every key has a
//! bounded number of versions and the window slides over the key space.
//! `isolde record` draws both workloads that way by default:
//!
//! * a window of [`DEFAULT_KEYS`] active keys, each equally likely
//!   (`--key-dist uniform`; Elle's default for uniform keys is 3, which
//!   eight sessions on a real server turn into a queue; `exponential`,
//!   Elle's default otherwise, makes one key take half the micro-ops, and
//!   on PostgreSQL, whose deadlock detector waits `deadlock_timeout`, 1 s by
//!   default, those hot keys deadlock most transactions), each retired after
//!   `--max-writes-per-key` writes;
//! * [`DEFAULT_MIN_TXN_LEN`]..=[`DEFAULT_TXN_LEN`] micro-ops per
//!   transaction, [`DEFAULT_SESSIONS`] sessions.
//!
//! Registers take the same window ([`Source`] turns the drawn appends into
//! writes of the same unique values); `--key-dist zipf` and `hotspot` keep
//! PolySI's fixed key space (`--keys` then defaults to
//! [`DEFAULT_KEY_SPACE`]). On stock PostgreSQL and MariaDB these defaults
//! record 2,000 transactions in a few seconds with under a third of them
//! failed at serializable (see `docs/record.md`); long transactions over
//! few hot keys (PolySI's 15 micro-ops) fail nine in ten there.
//!
//! closed-predicate takes Elle's own shape instead
//! ([`crate::gen::closed_predicate::CpSource`]): a universe of `--keys`
//! keys ([`DEFAULT_UNIVERSE`]), each mutated once, `--txn-len` and
//! `--read-fraction` as above; no window, pattern or key distribution.

use super::{Mop, RecordError, Workload};
use crate::gen::closed_predicate::{ClosedPredicateConfig, CpMop, CpSource};
use crate::gen::list_append::{KeyDist, ListAppendConfig};
use crate::gen::rw_register::{RwKeyDist, RwRegisterConfig};
use crate::gen::{DrawnMop, Pattern, TxnSource};

/// Active keys in the window (`--keys`).
pub const DEFAULT_KEYS: usize = 30;
/// Keys of the fixed key space of `--key-dist zipf|hotspot` (`--keys`).
pub const DEFAULT_KEY_SPACE: usize = 10_000;
/// Most micro-ops per transaction (`--txn-len`).
pub const DEFAULT_TXN_LEN: usize = 4;
/// Fewest micro-ops per transaction (`--min-txn-len`).
pub const DEFAULT_MIN_TXN_LEN: usize = 1;
/// Sessions (`--sessions`).
pub const DEFAULT_SESSIONS: usize = 8;
/// Keys of closed-predicate's universe (`--keys`; Elle's key count).
pub const DEFAULT_UNIVERSE: usize = 50;

/// Key distributions: `uniform` and `exponential` (Elle's) over a sliding
/// window of active keys, for both workloads; `zipf` and `hotspot` over a
/// fixed key space, for rw-register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyDistArg {
    /// Every active key equally likely.
    Uniform,
    /// Elle's exponential distribution over the active window (a few hot
    /// keys).
    Exponential,
    /// rw-register: Zipf's law with --zipf-exponent.
    Zipf,
    /// rw-register: --hot-probability of the micro-ops on the first
    /// --hot-fraction of the keys.
    Hotspot,
}

impl KeyDistArg {
    /// The distribution's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            KeyDistArg::Uniform => "uniform",
            KeyDistArg::Exponential => "exponential",
            KeyDistArg::Zipf => "zipf",
            KeyDistArg::Hotspot => "hotspot",
        }
    }
}

/// The workload knobs of `isolde record` (its flags of the same names;
/// `None`: the default).
#[derive(Clone, Debug)]
pub struct Knobs {
    /// `--workload`.
    pub workload: Workload,
    /// `--sessions`.
    pub sessions: Option<usize>,
    /// `--keys`.
    pub keys: Option<usize>,
    /// `--txn-len`.
    pub txn_len: Option<usize>,
    /// `--min-txn-len`.
    pub min_txn_len: Option<usize>,
    /// `--key-dist`.
    pub key_dist: Option<KeyDistArg>,
    /// `--read-fraction`.
    pub read_fraction: f64,
    /// `--max-writes-per-key`.
    pub max_writes_per_key: usize,
    /// `--zipf-exponent`.
    pub zipf_exponent: f64,
    /// `--hot-fraction`.
    pub hot_fraction: f64,
    /// `--hot-probability`.
    pub hot_probability: f64,
    /// `--seed`.
    pub seed: u64,
}

/// Draws a run's transactions.
pub struct Source {
    inner: Inner,
    drawn: Vec<DrawnMop>,
    cp: Vec<CpMop>,
}

enum Inner {
    /// List-append and rw-register; `true`: the source draws lists, write
    /// registers instead.
    Drawn(TxnSource, bool),
    /// Closed-predicate.
    ClosedPredicate(CpSource),
}

impl Source {
    /// Draws the next transaction into `out` (cleared first).
    pub fn next_txn(&mut self, out: &mut Vec<Mop>) {
        out.clear();
        match &mut self.inner {
            Inner::Drawn(src, appends_as_writes) => {
                src.next_txn(&mut self.drawn);
                out.extend(self.drawn.iter().map(|&m| match m {
                    DrawnMop::Append(k, v) if *appends_as_writes => Mop::Write(k, v),
                    m => Mop::from(m),
                }));
            }
            Inner::ClosedPredicate(src) => {
                src.next_txn(&mut self.cp);
                out.extend(self.cp.iter().map(|&m| Mop::from(m)));
            }
        }
    }

    /// The rows the run's `:init` inserts before any transaction
    /// (closed-predicate's universe), if the workload has one.
    pub fn init(&self) -> Option<&[(u64, u64)]> {
        match &self.inner {
            Inner::Drawn(..) => None,
            Inner::ClosedPredicate(src) => Some(src.init()),
        }
    }
}

/// The number of keys a run draws from (`--keys` or its default).
pub fn keys(a: &Knobs) -> usize {
    match (a.workload, a.key_dist) {
        (Workload::ClosedPredicate, _) => a.keys.unwrap_or(DEFAULT_UNIVERSE),
        (_, Some(KeyDistArg::Zipf | KeyDistArg::Hotspot)) => a.keys.unwrap_or(DEFAULT_KEY_SPACE),
        _ => a.keys.unwrap_or(DEFAULT_KEYS),
    }
}

/// The transaction source and the number of sessions the arguments ask
/// for (usage errors only).
pub fn source(a: &Knobs, pattern: Pattern) -> Result<(Source, usize), RecordError> {
    let bad = RecordError::Workload;
    let sessions = a.sessions.unwrap_or(DEFAULT_SESSIONS);
    let max = a.txn_len.unwrap_or(DEFAULT_TXN_LEN);
    let min = a.min_txn_len.unwrap_or(DEFAULT_MIN_TXN_LEN.min(max));
    let dist = a.key_dist.unwrap_or(KeyDistArg::Uniform);
    let window = |key_dist: KeyDist| ListAppendConfig {
        seed: a.seed,
        processes: sessions,
        min_txn_len: min,
        max_txn_len: max,
        active_keys: a.keys.unwrap_or(DEFAULT_KEYS),
        max_writes_per_key: a.max_writes_per_key,
        read_fraction: a.read_fraction,
        key_dist,
        ..ListAppendConfig::default()
    };
    let source = |inner| Source { inner, drawn: Vec::new(), cp: Vec::new() };
    let windowed = |key_dist: KeyDist, appends_as_writes: bool| {
        let inner = TxnSource::list_append(&window(key_dist), pattern).map_err(bad)?;
        Ok((source(Inner::Drawn(inner, appends_as_writes)), sessions))
    };
    if a.workload == Workload::ClosedPredicate {
        if pattern != Pattern::Mixed {
            return Err(bad(format!(
                "--pattern {}: closed-predicate transactions take Elle's shape (--pattern mixed)",
                pattern.name()
            )));
        }
        if let Some(d) = a.key_dist {
            return Err(bad(format!(
                "--key-dist {}: closed-predicate mutates each key of its universe once, in a shuffled order, \
                 and reads uniformly over it",
                d.name()
            )));
        }
        let cfg = ClosedPredicateConfig {
            seed: a.seed,
            processes: sessions,
            min_txn_len: min,
            max_txn_len: max,
            keys: keys(a),
            read_fraction: a.read_fraction,
            ..ClosedPredicateConfig::default()
        };
        let inner = CpSource::new(&cfg).map_err(bad)?;
        return Ok((source(Inner::ClosedPredicate(inner)), sessions));
    }
    match (a.workload, dist) {
        (w, KeyDistArg::Uniform) => windowed(KeyDist::Uniform, w == Workload::RwRegister),
        (w, KeyDistArg::Exponential) => windowed(KeyDist::Exponential, w == Workload::RwRegister),
        (Workload::ListAppend | Workload::ClosedPredicate, KeyDistArg::Zipf | KeyDistArg::Hotspot) => {
            Err(bad("--key-dist zipf and hotspot are for rw-register; list-append takes uniform or exponential".into()))
        }
        (Workload::RwRegister, KeyDistArg::Zipf | KeyDistArg::Hotspot) => {
            let key_dist = match dist {
                KeyDistArg::Zipf => RwKeyDist::Zipf(a.zipf_exponent),
                _ => RwKeyDist::Hotspot { hot_fraction: a.hot_fraction, hot_probability: a.hot_probability },
            };
            let cfg = RwRegisterConfig {
                seed: a.seed,
                processes: sessions,
                min_txn_len: min,
                max_txn_len: max,
                keys: a.keys.unwrap_or(DEFAULT_KEY_SPACE),
                read_fraction: a.read_fraction,
                key_dist,
                ..RwRegisterConfig::default()
            };
            let inner = TxnSource::rw_register(&cfg, pattern).map_err(bad)?;
            Ok((source(Inner::Drawn(inner, false)), sessions))
        }
    }
}
