//! Generator of Elle's closed-predicate histories (`isolde gen
//! closed-predicate`), and the transaction drawer `isolde record --workload
//! closed-predicate` shares with it.
//!
//! # Workload
//!
//! As Elle's `elle.closed-predicate/gen`: keys are the integers
//! `0..keys`, shuffled; each is mutated at most once, in that order, by the
//! kind Elle's `gen-key-type` gives it (`k mod 3`: 0 an `[:insert k v]`,
//! 1 a `[:w k v]`, 2 a `[:delete k]`; every one an insert with
//! `insert_only`). An `:init` op first sets up the universe: every key of
//! kind `:w` or `:delete` at a random value, 0 or 1. Then each
//! transaction has `min_txn_len..=max_txn_len` micro-ops, each a read with
//! probability `read_fraction` (an item read `[:r k nil]` of a random key or
//! a predicate read `[:rp PRED nil]`, equally likely, PRED one of `[:= 0]`,
//! `[:= 1]`, `[:mod 2 0]`, `[:mod 2 1]` and `:true` as Elle draws them),
//! else a mutation of the next unmutated key with a fresh value `2, 3, ...`
//! (unique in the whole history). Once every key has been mutated, every
//! micro-op is a read (Elle's generator stops there; here the run keeps its
//! `txns`). `txns` counts the transactions after the `:init`.
//!
//! # Execution
//!
//! `processes` simulated clients invoke transactions against an in-memory
//! store, each applied atomically at one instant between its invocation and
//! completion (reads see the transaction's own earlier writes), so the
//! history is strict serializable; at [`Level::Serializable`] a read-only
//! transaction reads a consistent snapshot up to a few commits old instead
//! (serializable, not strict). `fail_fraction` and `info_fraction` work as
//! in the other generators (a `:fail` has no effect, an `:info` takes effect
//! or not, and moves its client to a new process).
//!
//! # Injection
//!
//! Planted scenarios ([`Inject`]: `G1c`, `write-skew`,
//! `predicate-write-skew`, `predicate-read-miss`) run on keys beyond the
//! universe's `0..keys` (never read by an item read of the traffic) with
//! fresh values. A predicate read covers every key, so the traffic's
//! predicate reads see the scenarios' keys, and a scenario's own predicate
//! reads are `[:= V]` of a fresh value `V`, which no other key ever holds
//! (their result on every other key is empty, whatever the store holds).
//! The transactions of one scenario are invoked on distinct clients, all
//! before one instant at which their writes are installed together, and
//! complete after it: the scenario sits at one point of the store's serial
//! order, so every cycle of the history lies among its own transactions.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::io::{self, Write};

use super::inject::{Inject, InjectCounts, InjectWorkload};
use super::out::{push_u64, Sink};
use super::rng::Rng;
use super::sim::{check_clients, check_faults, check_fraction, invalid, next_stamp, push_op_line};
use super::sim::{GenOptions, GenStats, Level, OutputFormat};

/// Parameters of a generated closed-predicate history.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedPredicateConfig {
    /// Seed of the PRNG; the whole history is a function of the config.
    pub seed: u64,
    /// Transactions to invoke after the `:init` (each an invoke and a
    /// completion line).
    pub txns: usize,
    /// Concurrent clients (initial process ids `0..processes`).
    pub processes: usize,
    /// Fewest micro-ops per transaction (at least 1).
    pub min_txn_len: usize,
    /// Most micro-ops per transaction (at least `min_txn_len`).
    pub max_txn_len: usize,
    /// Keys of the universe, `0..keys` (Elle's `:key-count`), each mutated
    /// at most once.
    pub keys: usize,
    /// Probability that a micro-op reads (an item read or a predicate read,
    /// equally likely) rather than mutates, in `[0, 1]`.
    pub read_fraction: f64,
    /// Elle's `:insert-only?`: the `:init` sets up no key and every
    /// mutation is an insert.
    pub insert_only: bool,
    /// Probability that a transaction completes `:fail` (no effect).
    pub fail_fraction: f64,
    /// Probability that a transaction completes `:info` (taking effect or
    /// not).
    pub info_fraction: f64,
}

impl Default for ClosedPredicateConfig {
    /// Elle's defaults: 50 keys, transactions of 1 to 4 micro-ops, a third
    /// each item reads, predicate reads and mutations; 100 transactions by
    /// 10 clients; no faults; seed 0.
    fn default() -> Self {
        ClosedPredicateConfig {
            seed: 0,
            txns: 100,
            processes: 10,
            min_txn_len: 1,
            max_txn_len: 4,
            keys: 50,
            read_fraction: 2.0 / 3.0,
            insert_only: false,
            fail_fraction: 0.0,
            info_fraction: 0.0,
        }
    }
}

impl ClosedPredicateConfig {
    /// Checks that the parameters describe a generable workload.
    pub fn validate(&self) -> Result<(), String> {
        check_clients(self.processes, self.min_txn_len, self.max_txn_len)?;
        if self.keys == 0 {
            return Err("keys must be at least 1".into());
        }
        check_fraction("read_fraction", self.read_fraction)?;
        check_faults(self.fail_fraction, self.info_fraction)
    }
}

/// A predicate of a predicate read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    /// `:true`: every row.
    True,
    /// `[:= v]`: rows whose value is `v`.
    Eq(u64),
    /// `[:mod m r]`: rows whose value `v` has `v mod m = r` (`m > 0`).
    Mod(u64, u64),
}

impl Pred {
    /// Whether a row of value `v` matches.
    pub fn matches(self, v: u64) -> bool {
        match self {
            Pred::True => true,
            Pred::Eq(x) => v == x,
            Pred::Mod(m, r) => m > 0 && v % m == r,
        }
    }

    /// Appends the predicate as Elle writes it.
    pub fn push_edn(self, buf: &mut Vec<u8>) {
        match self {
            Pred::True => buf.extend_from_slice(b":true"),
            Pred::Eq(x) => {
                buf.extend_from_slice(b"[:= ");
                push_u64(buf, x);
                buf.push(b']');
            }
            Pred::Mod(m, r) => {
                buf.extend_from_slice(b"[:mod ");
                push_u64(buf, m);
                buf.push(b' ');
                push_u64(buf, r);
                buf.push(b']');
            }
        }
    }
}

/// A micro-op of the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpMop {
    /// `[:r k v]`.
    Read(u64),
    /// `[:w k v]`: sets an existing key.
    Write(u64, u64),
    /// `[:insert k v]`: creates a key.
    Insert(u64, u64),
    /// `[:delete k]`.
    Delete(u64),
    /// `[:rp PRED {k v ...}]`.
    PredRead(Pred),
}

impl CpMop {
    /// Whether the micro-op reads.
    pub fn reads(self) -> bool {
        matches!(self, CpMop::Read(_) | CpMop::PredRead(_))
    }
}

/// What a read observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpSeen {
    /// An item read: the key's value, `None` when it has no row.
    Value(Option<u64>),
    /// A predicate read: the rows it returned, `(key, value)` by key.
    Rows(Vec<(u64, u64)>),
}

/// Appends `[k v]` pairs as an EDN map `{k v, ...}`.
fn push_map(buf: &mut Vec<u8>, rows: &[(u64, u64)]) {
    buf.push(b'{');
    for (i, &(k, v)) in rows.iter().enumerate() {
        if i > 0 {
            buf.extend_from_slice(b", ");
        }
        push_u64(buf, k);
        buf.push(b' ');
        push_u64(buf, v);
    }
    buf.push(b'}');
}

/// Appends the space-separated micro-ops (the inside of `:value [...]`);
/// with `seen` (one entry per read, in order) reads print what they
/// observed, otherwise `nil`.
pub fn push_mops(buf: &mut Vec<u8>, mops: &[CpMop], seen: Option<&[CpSeen]>) {
    let mut seen = seen.map(|s| s.iter());
    for (i, m) in mops.iter().enumerate() {
        if i > 0 {
            buf.push(b' ');
        }
        let observed = if m.reads() { seen.as_mut().and_then(|s| s.next()) } else { None };
        match *m {
            CpMop::Read(k) => {
                buf.extend_from_slice(b"[:r ");
                push_u64(buf, k);
                match observed {
                    Some(CpSeen::Value(Some(v))) => {
                        buf.push(b' ');
                        push_u64(buf, *v);
                    }
                    _ => buf.extend_from_slice(b" nil"),
                }
                buf.push(b']');
            }
            CpMop::Write(k, v) | CpMop::Insert(k, v) => {
                buf.extend_from_slice(if matches!(m, CpMop::Write(..)) { b"[:w " } else { b"[:insert " });
                push_u64(buf, k);
                buf.push(b' ');
                push_u64(buf, v);
                buf.push(b']');
            }
            CpMop::Delete(k) => {
                buf.extend_from_slice(b"[:delete ");
                push_u64(buf, k);
                buf.push(b']');
            }
            CpMop::PredRead(p) => {
                buf.extend_from_slice(b"[:rp ");
                p.push_edn(buf);
                match observed {
                    Some(CpSeen::Rows(rows)) => {
                        buf.push(b' ');
                        push_map(buf, rows);
                    }
                    _ => buf.extend_from_slice(b" nil"),
                }
                buf.push(b']');
            }
        }
    }
}

/// Appends one `:init` op line, `{:type <ty>, :f :init, :value {k v ...},
/// :process p, :time t, :index i}`.
pub fn push_init_line(buf: &mut Vec<u8>, ty: &[u8], process: u64, time: u64, index: u64, init: &[(u64, u64)]) {
    super::sim::push_op_line_of(buf, ty, b":init", process, time, index, |buf| push_map(buf, init));
}

/// How a key of the universe is mutated (Elle's `gen-key-type`).
fn key_kind(insert_only: bool, k: u64) -> u8 {
    if insert_only {
        0
    } else {
        (k % 3) as u8
    }
}

/// The transactions of the workload, deterministic per seed: the universe
/// its `:init` sets up, then an endless stream of transactions (the order
/// in which concurrent clients take them is up to the clients).
pub struct CpSource {
    rng: Rng,
    min_len: usize,
    max_len: usize,
    read_fraction: f64,
    keys: u64,
    insert_only: bool,
    /// Keys still to mutate, the next one last.
    todo: Vec<u64>,
    init: Vec<(u64, u64)>,
    next_value: u64,
}

impl CpSource {
    /// The source of `cfg`'s transactions (its seed, lengths, keys, read
    /// mix and `insert_only`; the client and fault fields are not used).
    pub fn new(cfg: &ClosedPredicateConfig) -> Result<CpSource, String> {
        cfg.validate()?;
        let mut rng = Rng::new(cfg.seed);
        let keys = cfg.keys as u64;
        let mut order: Vec<u64> = (0..keys).collect();
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        let mut init: Vec<(u64, u64)> =
            order.iter().filter(|&&k| key_kind(cfg.insert_only, k) != 0).map(|&k| (k, rng.below(2))).collect();
        init.sort_unstable();
        order.reverse();
        Ok(CpSource {
            rng,
            min_len: cfg.min_txn_len,
            max_len: cfg.max_txn_len,
            read_fraction: cfg.read_fraction,
            keys,
            insert_only: cfg.insert_only,
            todo: order,
            init,
            next_value: 2,
        })
    }

    /// The universe the `:init` sets up, by key.
    pub fn init(&self) -> &[(u64, u64)] {
        &self.init
    }

    /// A value no micro-op has written yet.
    pub fn fresh_value(&mut self) -> u64 {
        self.next_value += 1;
        self.next_value - 1
    }

    /// Keys not mutated yet.
    pub fn mutations_left(&self) -> usize {
        self.todo.len()
    }

    /// Elle's `gen-pred`.
    fn pred(&mut self) -> Pred {
        match self.rng.below(3) {
            0 => Pred::Eq(self.rng.below(2)),
            1 => Pred::Mod(2, self.rng.below(2)),
            _ => Pred::True,
        }
    }

    fn read(&mut self) -> CpMop {
        if self.rng.chance(0.5) {
            CpMop::Read(self.rng.below(self.keys))
        } else {
            CpMop::PredRead(self.pred())
        }
    }

    /// Draws the next transaction into `out` (cleared first).
    pub fn next_txn(&mut self, out: &mut Vec<CpMop>) {
        out.clear();
        let len = self.rng.range_inclusive(self.min_len as u64, self.max_len as u64);
        for _ in 0..len {
            if self.rng.chance(self.read_fraction) {
                let m = self.read();
                out.push(m);
                continue;
            }
            let Some(k) = self.todo.pop() else {
                let m = self.read();
                out.push(m);
                continue;
            };
            let m = match key_kind(self.insert_only, k) {
                0 => CpMop::Insert(k, self.fresh_value()),
                1 => CpMop::Write(k, self.fresh_value()),
                _ => CpMop::Delete(k),
            };
            out.push(m);
        }
    }
}

/// The store: every key's versions, `(commit, value)` in commit order,
/// `None` for no row; keys in order, so predicate reads list rows by key.
#[derive(Default)]
struct Store {
    versions: BTreeMap<u64, Vec<(u64, Option<u64>)>>,
    now: u64,
}

impl Store {
    fn at(&self, k: u64, ts: u64) -> Option<u64> {
        let vs = self.versions.get(&k)?;
        let i = vs.partition_point(|x| x.0 <= ts);
        vs[..i].last().and_then(|x| x.1)
    }

    /// Runs `mops` against the state as of commit `ts` plus the
    /// transaction's own earlier writes, recording what reads see; returns
    /// the writes, last value per key, in order of first write.
    fn run(&self, mops: &[CpMop], ts: u64, seen: &mut Vec<CpSeen>) -> Vec<(u64, Option<u64>)> {
        let mut own: Vec<(u64, Option<u64>)> = Vec::new();
        let value = |own: &[(u64, Option<u64>)], k: u64| match own.iter().find(|x| x.0 == k) {
            Some(&(_, v)) => v,
            None => self.at(k, ts),
        };
        seen.clear();
        for &m in mops {
            let write = match m {
                CpMop::Read(k) => {
                    seen.push(CpSeen::Value(value(&own, k)));
                    continue;
                }
                CpMop::PredRead(p) => {
                    let mut rows: Vec<(u64, u64)> = self
                        .versions
                        .keys()
                        .filter(|k| !own.iter().any(|x| x.0 == **k))
                        .filter_map(|&k| self.at(k, ts).map(|v| (k, v)))
                        .chain(own.iter().filter_map(|&(k, v)| v.map(|v| (k, v))))
                        .filter(|&(_, v)| p.matches(v))
                        .collect();
                    rows.sort_unstable();
                    seen.push(CpSeen::Rows(rows));
                    continue;
                }
                CpMop::Write(k, v) | CpMop::Insert(k, v) => (k, Some(v)),
                CpMop::Delete(k) => (k, None),
            };
            match own.iter_mut().find(|x| x.0 == write.0) {
                Some(slot) => slot.1 = write.1,
                None => own.push(write),
            }
        }
        own
    }

    /// Installs writes as one commit.
    fn commit(&mut self, writes: &[(u64, Option<u64>)]) {
        if writes.is_empty() {
            return;
        }
        self.now += 1;
        for &(k, v) in writes {
            self.versions.entry(k).or_default().push((self.now, v));
        }
    }
}

/// A transaction of a planted scenario, its reads' results fixed.
struct ScriptTxn {
    mops: Vec<CpMop>,
    seen: Vec<CpSeen>,
}

/// The scripted transactions of one `kind` scenario on the fresh keys `a`,
/// `b` (beyond the universe), with fresh values from `src`; keys the
/// `:init` must set up go to `init`.
fn scenario(kind: Inject, a: u64, b: u64, src: &mut CpSource, init: &mut Vec<(u64, u64)>) -> Vec<ScriptTxn> {
    let t = |mops: Vec<CpMop>, seen: Vec<CpSeen>| ScriptTxn { mops, seen };
    let none = || CpSeen::Rows(Vec::new());
    match kind {
        // Each predicate-reads the other's insert: wrp both ways.
        Inject::G1c => {
            let (v1, v2) = (src.fresh_value(), src.fresh_value());
            vec![
                t(vec![CpMop::Insert(a, v1), CpMop::PredRead(Pred::Eq(v2))], vec![CpSeen::Rows(vec![(b, v2)])]),
                t(vec![CpMop::Insert(b, v2), CpMop::PredRead(Pred::Eq(v1))], vec![CpSeen::Rows(vec![(a, v1)])]),
            ]
        }
        // Each reads the other's key before its insert: rw both ways.
        Inject::WriteSkew => {
            let (v1, v2) = (src.fresh_value(), src.fresh_value());
            vec![
                t(vec![CpMop::Read(b), CpMop::Insert(a, v1)], vec![CpSeen::Value(None)]),
                t(vec![CpMop::Read(a), CpMop::Insert(b, v2)], vec![CpSeen::Value(None)]),
            ]
        }
        // Each sees no row of value v, then inserts one: rwp both ways.
        Inject::PredicateWriteSkew => {
            let v = src.fresh_value();
            vec![
                t(vec![CpMop::PredRead(Pred::Eq(v)), CpMop::Insert(a, v)], vec![none()]),
                t(vec![CpMop::PredRead(Pred::Eq(v)), CpMop::Insert(b, v)], vec![none()]),
            ]
        }
        // `a` holds v from the :init on and is never written: a read of
        // [:= v] must return it.
        Inject::PredicateReadMiss => {
            let v = src.fresh_value();
            init.push((a, v));
            vec![t(vec![CpMop::PredRead(Pred::Eq(v))], vec![none()])]
        }
        // Refused up front (`Inject::applies_to`): plant the closest one.
        _ => scenario(Inject::G1c, a, b, src, init),
    }
}

/// Delay ranges of the simulated clients, in logical nanoseconds.
const THINK_NS: (u64, u64) = (10_000, 1_000_000);
/// Invocation to the apply instant.
const APPLY_NS: (u64, u64) = (1_000, 500_000);
/// Apply instant to completion.
const COMPLETE_NS: (u64, u64) = (1_000, 500_000);
/// How many commits back a serializable read-only transaction's snapshot
/// may lie.
const STALE_COMMITS: u64 = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fail,
    /// Indeterminate; `true` if it takes effect.
    Info(bool),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    /// Invoked; the next event applies it (a scenario's: waits for the
    /// rest of its scenario, whose last invocation applies them all).
    Invoked,
    /// Invoked, part of a scenario whose other transactions are not all
    /// invoked yet; no event pending.
    Waiting,
    /// Applied (or skipped); the next event completes it.
    Applied,
}

struct Client {
    process: u64,
    phase: Phase,
    outcome: Outcome,
    mops: Vec<CpMop>,
    seen: Vec<CpSeen>,
    /// The scenario of the current transaction, if scripted.
    scenario: Option<usize>,
}

/// Writes a closed-predicate history of `cfg` to `out` (see the module
/// documentation); `opts` picks the level (strict serializable or
/// serializable) and the scenarios to plant.
pub fn write_closed_predicate_with<W: Write>(
    cfg: &ClosedPredicateConfig,
    opts: &GenOptions,
    out: W,
) -> io::Result<GenStats> {
    validate(cfg, opts).map_err(invalid)?;
    let mut src = CpSource::new(cfg).map_err(invalid)?;
    // Scenarios are drawn first: the :init sets up their keys.
    let n_scenarios = opts.scenarios();
    let mut init = src.init().to_vec();
    let mut scripts: Vec<(Inject, Vec<ScriptTxn>)> = Vec::with_capacity(n_scenarios);
    let mut next_key = cfg.keys as u64;
    for i in 0..n_scenarios {
        let kind = opts.inject[i % opts.inject.len()];
        let (a, b) = (next_key, next_key + 1);
        next_key += kind.keys();
        scripts.push((kind, scenario(kind, a, b, &mut src, &mut init)));
    }
    init.sort_unstable();

    let mut sink = Sink::new(out);
    let mut rng = Rng::new(cfg.seed ^ 0x636c_6f73_6564);
    let mut store = Store::default();
    let mut last_time = None;
    let mut stamp = |t: u64| {
        let s = next_stamp(last_time, t);
        last_time = Some(s);
        s
    };
    let mut index = 0u64;
    // The :init, before everything.
    for (t, ty) in [(0, &b":invoke"[..]), (1, &b":ok"[..])] {
        push_init_line(&mut sink.buf, ty, 0, stamp(t), index, &init);
        index += 1;
    }
    let writes: Vec<(u64, Option<u64>)> = init.iter().map(|&(k, v)| (k, Some(v))).collect();
    store.commit(&writes);

    let n = cfg.processes;
    let mut clients: Vec<Client> = (0..n)
        .map(|i| Client {
            process: i as u64,
            phase: Phase::Idle,
            outcome: Outcome::Ok,
            mops: Vec::with_capacity(cfg.max_txn_len),
            seen: Vec::new(),
            scenario: None,
        })
        .collect();
    let mut events: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::with_capacity(n);
    if cfg.txns > 0 {
        for i in 0..n {
            events.push(Reverse((2 + rng.range_inclusive(0, THINK_NS.1), i as u32)));
        }
    }
    // Scripted transactions waiting for a client: (scenario, transaction).
    let mut queue: VecDeque<(usize, ScriptTxn)> = VecDeque::new();
    // Per scenario: its transactions not yet invoked, and its clients.
    let mut pending: Vec<usize> = scripts.iter().map(|(_, s)| s.len()).collect();
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); n_scenarios];
    let mut next_scenario = 0usize;
    let mut injected = InjectCounts::default();
    let mut invoked = 0usize;
    let mut writes = Vec::new();

    while let Some(Reverse((t, ci))) = events.pop() {
        match clients[ci as usize].phase {
            Phase::Idle => {
                let c = &mut clients[ci as usize];
                if invoked == cfg.txns {
                    continue;
                }
                while next_scenario < n_scenarios && invoked >= (next_scenario + 1) * cfg.txns / (n_scenarios + 1) {
                    let (kind, txns) = &mut scripts[next_scenario];
                    queue.extend(std::mem::take(txns).into_iter().map(|s| (next_scenario, s)));
                    injected.add(*kind);
                    next_scenario += 1;
                }
                c.scenario = None;
                if let Some((s, script)) = queue.pop_front() {
                    c.mops = script.mops;
                    c.seen = script.seen;
                    c.outcome = Outcome::Ok;
                    c.scenario = Some(s);
                } else {
                    src.next_txn(&mut c.mops);
                    let r = rng.next_f64();
                    c.outcome = if r < cfg.fail_fraction {
                        Outcome::Fail
                    } else if r < cfg.fail_fraction + cfg.info_fraction {
                        Outcome::Info(rng.chance(0.5))
                    } else {
                        Outcome::Ok
                    };
                }
                let time = stamp(t);
                push_op_line(&mut sink.buf, b":invoke", c.process, time, index, |b| push_mops(b, &c.mops, None));
                index += 1;
                invoked += 1;
                match c.scenario {
                    Some(s) => {
                        members[s].push(ci);
                        pending[s] -= 1;
                        if pending[s] == 0 {
                            c.phase = Phase::Invoked;
                            events.push(Reverse((t + rng.range_inclusive(APPLY_NS.0, APPLY_NS.1), ci)));
                        } else {
                            c.phase = Phase::Waiting;
                        }
                    }
                    None => {
                        c.phase = Phase::Invoked;
                        events.push(Reverse((t + rng.range_inclusive(APPLY_NS.0, APPLY_NS.1), ci)));
                    }
                }
            }
            Phase::Invoked => match clients[ci as usize].scenario {
                Some(s) => {
                    // The whole scenario takes effect at this instant.
                    writes.clear();
                    let mut scratch = Vec::new();
                    for &m in &members[s] {
                        let m = &clients[m as usize];
                        writes.extend(store.run(&m.mops, store.now, &mut scratch));
                    }
                    store.commit(&writes);
                    for &m in &members[s] {
                        clients[m as usize].phase = Phase::Applied;
                        events.push(Reverse((t + rng.range_inclusive(COMPLETE_NS.0, COMPLETE_NS.1), m)));
                    }
                }
                None => {
                    let c = &mut clients[ci as usize];
                    if matches!(c.outcome, Outcome::Ok | Outcome::Info(true)) {
                        let read_only = c.mops.iter().all(|m| m.reads());
                        let ts = if opts.level == Level::Serializable && read_only {
                            // A consistent snapshot a few commits old, never
                            // before the :init (commit 1).
                            store.now.saturating_sub(rng.below(STALE_COMMITS + 1)).max(1)
                        } else {
                            store.now
                        };
                        let w = store.run(&c.mops, ts, &mut c.seen);
                        store.commit(&w);
                    }
                    c.phase = Phase::Applied;
                    events.push(Reverse((t + rng.range_inclusive(COMPLETE_NS.0, COMPLETE_NS.1), ci)));
                }
            },
            Phase::Waiting => unreachable!("a waiting transaction has no event"),
            Phase::Applied => {
                let c = &mut clients[ci as usize];
                let (ty, seen): (&[u8], _) = match c.outcome {
                    Outcome::Ok => (b":ok", Some(&c.seen[..])),
                    Outcome::Fail => (b":fail", None),
                    Outcome::Info(_) => (b":info", None),
                };
                let time = stamp(t);
                push_op_line(&mut sink.buf, ty, c.process, time, index, |b| push_mops(b, &c.mops, seen));
                index += 1;
                if let Outcome::Info(_) = c.outcome {
                    c.process += n as u64;
                }
                c.phase = Phase::Idle;
                if invoked < cfg.txns {
                    events.push(Reverse((t + rng.range_inclusive(THINK_NS.0, THINK_NS.1), ci)));
                }
                sink.maybe_flush()?;
            }
        }
    }
    debug_assert!(queue.is_empty());
    let bytes = sink.finish()?;
    Ok(GenStats { txns: invoked, ops: index as usize, bytes, conflicts: 0, injected })
}

/// Checks that `cfg` and `opts` describe a history the generator writes
/// (the reason when not): the level is strict serializable or serializable,
/// the output Jepsen EDN, the scenarios closed-predicate ones.
pub fn validate(cfg: &ClosedPredicateConfig, opts: &GenOptions) -> Result<(), String> {
    cfg.validate()?;
    opts.validate(InjectWorkload::ClosedPredicate, cfg.txns, cfg.processes, cfg.info_fraction)?;
    if !matches!(opts.level, Level::StrictSerializable | Level::Serializable) {
        return Err(format!(
            "closed-predicate histories are generated at strict-serializable or serializable, not {}",
            opts.level.name()
        ));
    }
    if opts.txns_per_session.is_some() {
        return Err("closed-predicate histories have no sessions of fixed length".into());
    }
    if opts.output_format != OutputFormat::Edn {
        return Err("closed-predicate histories are written as Jepsen EDN (or JSON from it)".into());
    }
    // Every scenario but the single read runs two transactions at once.
    if cfg.processes < 2 && opts.inject.iter().any(|i| *i != Inject::PredicateReadMiss) {
        return Err("a scenario's transactions run concurrently, each on a client of its own: plant with at least 2 \
                    processes"
            .into());
    }
    Ok(())
}

/// Generates a closed-predicate history of `cfg` at strict serializability
/// with nothing planted, as a string.
pub fn closed_predicate_string(cfg: &ClosedPredicateConfig) -> String {
    closed_predicate_string_with(cfg, &GenOptions::default())
}

/// Generates a closed-predicate history of `cfg` with `opts`, as a string
/// (panics on a config [`validate`] refuses).
pub fn closed_predicate_string_with(cfg: &ClosedPredicateConfig, opts: &GenOptions) -> String {
    super::sim::to_string("closed-predicate generator", |buf| write_closed_predicate_with(cfg, opts, buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(cfg: &ClosedPredicateConfig, opts: &GenOptions) -> String {
        let mut out = Vec::new();
        write_closed_predicate_with(cfg, opts, &mut out).expect("generates");
        String::from_utf8(out).expect("ascii")
    }

    #[test]
    fn sources_draw_elles_shape() {
        let cfg = ClosedPredicateConfig { keys: 30, ..ClosedPredicateConfig::default() };
        let mut src = CpSource::new(&cfg).unwrap();
        // Keys of kinds :w and :delete are in the universe, at 0 or 1.
        let init: Vec<u64> = src.init().iter().map(|kv| kv.0).collect();
        assert_eq!(init, (0..30).filter(|k| k % 3 != 0).collect::<Vec<u64>>());
        assert!(src.init().iter().all(|kv| kv.1 < 2));
        let mut mutated = std::collections::HashSet::new();
        let mut values = std::collections::HashSet::new();
        let mut t = Vec::new();
        for _ in 0..200 {
            src.next_txn(&mut t);
            assert!((1..=4).contains(&t.len()));
            for m in &t {
                match *m {
                    CpMop::Insert(k, v) | CpMop::Write(k, v) => {
                        assert_eq!((k % 3 == 0), matches!(m, CpMop::Insert(..)));
                        assert!(mutated.insert(k) && values.insert(v) && v >= 2);
                    }
                    CpMop::Delete(k) => assert!(k % 3 == 2 && mutated.insert(k)),
                    CpMop::Read(k) => assert!(k < 30),
                    CpMop::PredRead(p) => {
                        assert!(matches!(p, Pred::True | Pred::Eq(0 | 1) | Pred::Mod(2, 0 | 1)), "{p:?}")
                    }
                }
            }
        }
        // Every key mutated once, then only reads.
        assert_eq!(mutated.len(), 30);
        assert_eq!(src.mutations_left(), 0);
        let only = ClosedPredicateConfig { insert_only: true, ..cfg };
        assert!(CpSource::new(&only).unwrap().init().is_empty());
    }

    #[test]
    fn histories_render_as_elle_writes_them_and_are_deterministic() {
        let cfg = ClosedPredicateConfig { txns: 40, processes: 3, keys: 6, ..ClosedPredicateConfig::default() };
        let h = text(&cfg, &GenOptions::default());
        assert_eq!(h, text(&cfg, &GenOptions::default()));
        assert_ne!(h, text(&ClosedPredicateConfig { seed: 1, ..cfg.clone() }, &GenOptions::default()));
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines.len(), 2 + 2 * 40);
        assert!(lines[0].starts_with("{:type :invoke, :f :init, :value {1 "), "{}", lines[0]);
        assert!(lines[1].starts_with("{:type :ok, :f :init, :value {1 "), "{}", lines[1]);
        assert!(h.contains("[:rp "), "{h}");
        assert!(lines.iter().any(|l| l.starts_with("{:type :ok") && l.contains("[:rp :true {")), "{h}");
        for (i, l) in lines.iter().enumerate() {
            assert!(l.ends_with(&format!(", :index {i}}}")), "{l}");
        }
    }

    #[test]
    fn predicates_and_store_reads() {
        assert!(Pred::Mod(2, 1).matches(5) && !Pred::Mod(2, 1).matches(4));
        assert!(Pred::Eq(3).matches(3) && Pred::True.matches(0));
        let mut s = Store::default();
        s.commit(&[(1, Some(0)), (2, Some(1))]);
        let mut seen = Vec::new();
        let w = s.run(
            &[CpMop::Insert(4, 6), CpMop::PredRead(Pred::Mod(2, 0)), CpMop::Delete(1), CpMop::Read(1)],
            s.now,
            &mut seen,
        );
        assert_eq!(seen, [CpSeen::Rows(vec![(1, 0), (4, 6)]), CpSeen::Value(None)]);
        assert_eq!(w, [(4, Some(6)), (1, None)]);
        s.commit(&w);
        assert_eq!((s.at(1, 1), s.at(1, 2), s.at(4, 1), s.at(4, 2)), (Some(0), None, None, Some(6)));
        let mut buf = Vec::new();
        push_mops(&mut buf, &[CpMop::PredRead(Pred::Eq(1)), CpMop::Delete(3), CpMop::Read(2)], Some(&seen));
        assert_eq!(String::from_utf8(buf).unwrap(), "[:rp [:= 1] {1 0, 4 6}] [:delete 3] [:r 2 nil]");
    }
}
