//! The knobs of the simulated workloads: [`ListAppendConfig`] and
//! [`RwRegisterConfig`], with their key distributions ([`KeyDist`],
//! [`RwKeyDist`]) and their validation.
//!
//! Plain data, read by the generators that run a workload against an
//! in-memory store ([`super::list_append`], [`super::rw_register`]) and by
//! the transaction drawer they share with `isolde record`
//! ([`super::txn::TxnSource`]): it sits below all three, so the drawer can
//! take a config without importing a generator. Each generator re-exports
//! its own config, so `gen::list_append::ListAppendConfig` still names it.

use super::sim::{check_clients, check_faults, check_fraction};

/// How keys are drawn from the window of active keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyDist {
    /// Every active key is equally likely.
    Uniform,
    /// Elle's exponential distribution with base 2: the key at window
    /// position `i` is twice as likely as the one at `i - 1`, so a few keys
    /// are hot (and get retired and replaced often) while the rest are cold.
    /// This is Elle's default and produces the most contention.
    Exponential,
}

/// Parameters of a generated list-append history.
///
/// Every field is plain data so callers (the CLI, tests, benchmarks) can use
/// struct-update syntax on top of [`ListAppendConfig::default`].
#[derive(Clone, Debug, PartialEq)]
pub struct ListAppendConfig {
    /// Seed of the PRNG; the whole history is a function of the config.
    pub seed: u64,
    /// Number of transactions to invoke (each yields one invoke and one
    /// completion line).
    pub txns: usize,
    /// Number of concurrent clients (initial process ids `0..processes`).
    pub processes: usize,
    /// Minimum number of micro-ops per transaction (at least 1).
    pub min_txn_len: usize,
    /// Maximum number of micro-ops per transaction (at least `min_txn_len`).
    pub max_txn_len: usize,
    /// Size of the window of keys transactions draw from (at least 1).
    pub active_keys: usize,
    /// Appends a key receives before it is retired and replaced by a fresh
    /// key (at least 1).
    pub max_writes_per_key: usize,
    /// Probability that a micro-op is a read rather than an append, in `[0, 1]`.
    pub read_fraction: f64,
    /// Distribution of keys over the active window.
    pub key_dist: KeyDist,
    /// Probability that a transaction completes `:fail` (and has no effect).
    pub fail_fraction: f64,
    /// Probability that a transaction completes `:info` (and may or may not
    /// have taken effect). `fail_fraction + info_fraction` must be `<= 1`.
    pub info_fraction: f64,
}

impl Default for ListAppendConfig {
    /// 10k transactions of 1..=5 micro-ops (half reads) by 10 processes over
    /// a window of 100 exponentially distributed keys, each retired after 100
    /// appends; no faults; seed 0.
    fn default() -> Self {
        ListAppendConfig {
            seed: 0,
            txns: 10_000,
            processes: 10,
            min_txn_len: 1,
            max_txn_len: 5,
            active_keys: 100,
            max_writes_per_key: 100,
            read_fraction: 0.5,
            key_dist: KeyDist::Exponential,
            fail_fraction: 0.0,
            info_fraction: 0.0,
        }
    }
}

impl ListAppendConfig {
    /// Checks that the parameters describe a generable workload, returning a
    /// human-readable reason when they do not.
    pub fn validate(&self) -> Result<(), String> {
        check_clients(self.processes, self.min_txn_len, self.max_txn_len)?;
        if self.active_keys == 0 {
            return Err("active_keys must be at least 1".into());
        }
        if self.max_writes_per_key == 0 {
            return Err("max_writes_per_key must be at least 1".into());
        }
        check_fraction("read_fraction", self.read_fraction)?;
        check_faults(self.fail_fraction, self.info_fraction)
    }
}

/// How each micro-op's key is drawn from `0..keys`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RwKeyDist {
    /// Every key is equally likely.
    Uniform,
    /// Zipf's law with the given exponent `s >= 0`: key `i` is drawn with
    /// probability proportional to `(i + 1)^-s`, so key 0 is the hottest.
    /// `1.0` is the classic Zipf distribution (PolySI's default); `0.0` is
    /// uniform; larger exponents are more skewed.
    Zipf(f64),
    /// A hot set and a cold set, as in YCSB's hotspot distribution: the first
    /// `hot_fraction * keys` keys (rounded, at least 1) are hot; with probability
    /// `hot_probability` a micro-op picks a uniform hot key, otherwise a
    /// uniform cold one (a hot one if every key is hot).
    Hotspot {
        /// Fraction of the key space that is hot, in `(0, 1]`.
        hot_fraction: f64,
        /// Probability that a micro-op targets the hot set, in `[0, 1]`.
        hot_probability: f64,
    },
}

/// Parameters of a generated rw-register history.
///
/// Every field is plain data so callers (the CLI, tests, benchmarks) can use
/// struct-update syntax on top of [`RwRegisterConfig::default`].
#[derive(Clone, Debug, PartialEq)]
pub struct RwRegisterConfig {
    /// Seed of the PRNG; the whole history is a function of the config.
    pub seed: u64,
    /// Number of transactions to invoke (each yields one invoke and one
    /// completion line).
    pub txns: usize,
    /// Number of concurrent clients (initial process ids `0..processes`).
    pub processes: usize,
    /// Minimum number of micro-ops per transaction (at least 1).
    pub min_txn_len: usize,
    /// Maximum number of micro-ops per transaction (at least `min_txn_len`).
    pub max_txn_len: usize,
    /// Size of the key space: keys are the integers `0..keys` (at least 1).
    pub keys: usize,
    /// Probability that a micro-op is a read rather than a write, in `[0, 1]`.
    pub read_fraction: f64,
    /// Distribution of keys over the key space.
    pub key_dist: RwKeyDist,
    /// Probability that a transaction completes `:fail` (and has no effect).
    pub fail_fraction: f64,
    /// Probability that a transaction completes `:info` (and may or may not
    /// have taken effect). `fail_fraction + info_fraction` must be `<= 1`.
    pub info_fraction: f64,
}

impl Default for RwRegisterConfig {
    /// PolySI's default shape: 10k transactions of exactly 15 micro-ops (half
    /// reads) by 20 processes over 10k Zipf-distributed keys (exponent 1);
    /// no faults; seed 0.
    fn default() -> Self {
        RwRegisterConfig {
            seed: 0,
            txns: 10_000,
            processes: 20,
            min_txn_len: 15,
            max_txn_len: 15,
            keys: 10_000,
            read_fraction: 0.5,
            key_dist: RwKeyDist::Zipf(1.0),
            fail_fraction: 0.0,
            info_fraction: 0.0,
        }
    }
}

impl RwRegisterConfig {
    /// Checks that the parameters describe a generable workload, returning a
    /// human-readable reason when they do not.
    pub fn validate(&self) -> Result<(), String> {
        check_clients(self.processes, self.min_txn_len, self.max_txn_len)?;
        if self.keys == 0 {
            return Err("keys must be at least 1".into());
        }
        check_fraction("read_fraction", self.read_fraction)?;
        match self.key_dist {
            RwKeyDist::Uniform => {}
            RwKeyDist::Zipf(s) => {
                if !(s.is_finite() && s >= 0.0) {
                    return Err(format!("zipf exponent must be finite and at least 0, got {s}"));
                }
            }
            RwKeyDist::Hotspot { hot_fraction, hot_probability } => {
                if !(hot_fraction > 0.0 && hot_fraction <= 1.0) {
                    return Err(format!("hot_fraction must be within (0, 1], got {hot_fraction}"));
                }
                check_fraction("hot_probability", hot_probability)?;
            }
        }
        check_faults(self.fail_fraction, self.info_fraction)
    }
}
