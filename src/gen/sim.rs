//! The simulated clients and strict-serializable store loop shared by the
//! workload generators.
//!
//! # Execution
//!
//! `processes` simulated clients share one in-memory store, owned by a
//! [`Workload`]. A discrete-event loop over logical time (nanoseconds) drives
//! them: every process repeatedly
//!
//! 1. invokes a transaction (emitting `:invoke`),
//! 2. after a random delay *applies* it atomically against the store, in one
//!    event that touches no other transaction (reads observe every write
//!    applied before, including the transaction's own earlier writes),
//! 3. after a further random delay completes it (emitting `:ok`, `:fail` or
//!    `:info`), then thinks for a while before invoking the next one.
//!
//! Transactions of different processes overlap freely. Because each
//! transaction takes effect at a single instant inside its own
//! invoke..complete window, the order in which transactions are applied is a
//! serial order that explains every read *and* extends the real-time order
//! (if `T1` completes before `T2` is invoked, `T1` applied before `T1`
//! completed, hence before `T2` was invoked, hence before `T2` applied). The
//! emitted histories are therefore strict serializable by construction; the
//! workloads' tests replay that hidden apply order (see [`Trace`]) to prove it.
//!
//! Optional faults: a fraction of transactions `:fail` (no effect; the
//! completion repeats the invocation's value, reads `nil`), and a fraction are
//! indeterminate `:info` (taking effect or not, at random; the completion again
//! repeats the invocation). After an `:info` the client's process id becomes
//! `p + processes`, as Jepsen does when a worker thread crashes.
//!
//! # Output
//!
//! One EDN op map per line, in Jepsen's key order, with dense `:index` values
//! in output order and strictly increasing `:time`. The workload renders only
//! the micro-ops inside `:value [...]`; this module writes the rest.
//!
//! Memory stays bounded by the workload's store: ops are written as they are
//! emitted and only in-flight transactions are held.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, Write};

use std::collections::VecDeque;

use super::dbcop::DbcopWriter;
use super::inject::{Inject, InjectCounts, InjectWorkload};
use super::out::{push_u64, Sink};
use super::rng::Rng;

/// What a generator run produced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenStats {
    /// Transactions invoked (equals the config's `txns`).
    pub txns: usize,
    /// Operations (invocations plus completions, `2 * txns`); with dbcop
    /// output only completions are written, but both are counted.
    pub ops: usize,
    /// Bytes written to the output.
    pub bytes: u64,
    /// Transactions the store aborted (`:fail`) on a write-write conflict
    /// (first committer wins, under snapshot isolation and read committed).
    pub conflicts: usize,
    /// Injected anomaly scenarios, per kind.
    pub injected: InjectCounts,
}

/// The isolation level the in-memory store runs transactions at.
///
/// Every level yields histories valid at that level by construction (and so
/// at every weaker one); see the module documentation for how each executes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Level {
    /// Each transaction takes effect atomically at one instant inside its
    /// invocation..completion window (the original generator).
    #[default]
    StrictSerializable,
    /// Update transactions as above; read-only transactions read a slightly
    /// stale consistent snapshot (up to a few commits before they began), so
    /// the serial order need not respect real time.
    Serializable,
    /// Each transaction reads the snapshot of its start and buffers writes;
    /// at commit, a transaction that writes a key some other transaction
    /// committed since its snapshot aborts (first committer wins).
    SnapshotIsolation,
    /// Each key is read at its first access, from the latest committed
    /// state at a random instant between start and commit (later accesses
    /// see that value plus the transaction's own writes); writes are
    /// installed at commit; a writer of a key committed by someone else
    /// since its first access aborts (first committer wins, as with row
    /// locks).
    ReadCommitted,
}

impl Level {
    /// Every level, strongest first.
    pub const ALL: [Level; 4] =
        [Level::StrictSerializable, Level::Serializable, Level::SnapshotIsolation, Level::ReadCommitted];

    /// The level's (Elle model) name.
    pub fn name(self) -> &'static str {
        match self {
            Level::StrictSerializable => "strict-serializable",
            Level::Serializable => "serializable",
            Level::SnapshotIsolation => "snapshot-isolation",
            Level::ReadCommitted => "read-committed",
        }
    }

    /// Parses a level name (also `si`, `ser`, `strict-ser`, `rc`).
    pub fn parse(s: &str) -> Option<Level> {
        match s.trim() {
            "strict-serializable" | "strict-ser" => Some(Level::StrictSerializable),
            "serializable" | "ser" => Some(Level::Serializable),
            "snapshot-isolation" | "si" => Some(Level::SnapshotIsolation),
            "read-committed" | "rc" => Some(Level::ReadCommitted),
            _ => None,
        }
    }

    /// Elle models a history generated at this level satisfies: the level
    /// itself and the weaker ones in Elle's model lattice.
    pub fn satisfied_models(self) -> &'static [&'static str] {
        match self {
            Level::StrictSerializable => &[
                "strict-serializable",
                "serializable",
                "snapshot-isolation",
                "repeatable-read",
                "read-committed",
                "read-uncommitted",
            ],
            Level::Serializable => {
                &["serializable", "snapshot-isolation", "repeatable-read", "read-committed", "read-uncommitted"]
            }
            Level::SnapshotIsolation => &["snapshot-isolation", "read-committed", "read-uncommitted"],
            Level::ReadCommitted => &["read-committed", "read-uncommitted"],
        }
    }
}

/// The on-disk format a generator writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// Jepsen EDN, one op map per line (streamed).
    #[default]
    Edn,
    /// dbcop's `history.bincode` (rw-register only; see [`super::dbcop`]).
    Dbcop,
}

/// Options shared by both generators beyond their workload configs: the
/// isolation level, anomaly injection, sessions and output format.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GenOptions {
    /// Isolation level of the simulated store.
    pub level: Level,
    /// Anomalies to plant, cycled through `inject_count` times (each kind at
    /// least once if `inject_count` is smaller than the list).
    pub inject: Vec<Inject>,
    /// Number of scenarios to plant; `0` means one per listed kind.
    pub inject_count: usize,
    /// If set, every process (session) runs exactly this many transactions,
    /// and `txns` must equal `processes * txns_per_session` (dbcop's shape).
    pub txns_per_session: Option<usize>,
    /// Output format.
    pub output_format: OutputFormat,
    /// Cobra's fence transactions: after every `fences` transactions each
    /// client runs one read-modify-write of the reserved epoch key
    /// (`:isolde/fence`), which the online checker uses to collect old
    /// transactions (isolde help online). `0`: none. rw-register only.
    pub fences: usize,
}

impl GenOptions {
    /// Number of scenarios a run plants.
    pub fn scenarios(&self) -> usize {
        if self.inject.is_empty() {
            0
        } else {
            self.inject_count.max(self.inject.len())
        }
    }

    /// Checks the options against the workload-independent parameters.
    pub(crate) fn validate(&self, w: InjectWorkload, txns: usize, processes: usize, info: f64) -> Result<(), String> {
        for i in &self.inject {
            if !i.applies_to(w) {
                let ok: Vec<&str> = Inject::ALL.iter().filter(|j| j.applies_to(w)).map(|j| j.name()).collect();
                return Err(format!(
                    "{i} cannot be injected into {} histories (these can: {})",
                    w.name(),
                    ok.join(", ")
                ));
            }
        }
        let own = self.inject.iter().any(|i| i.own_sessions());
        if own && self.txns_per_session.is_some() {
            return Err("the weak-level scenarios cannot be injected into sessions of fixed length".into());
        }
        if own && processes < MAX_SCENARIO_TXNS {
            return Err(format!(
                "the weak-level scenarios run each transaction on its own client: they need at least {MAX_SCENARIO_TXNS} processes"
            ));
        }
        let n = self.scenarios();
        if n > 0 && txns / (n + 1) < 2 * MAX_SCENARIO_TXNS {
            return Err(format!(
                "{n} injected scenarios need at least {} transactions",
                (n + 1) * 2 * MAX_SCENARIO_TXNS
            ));
        }
        if self.fences > 0 && w != InjectWorkload::RwRegister {
            return Err(format!(
                "--fences: fence transactions are read-modify-writes of a register; {} histories take none",
                w.name()
            ));
        }
        if self.fences > 0 && self.output_format != OutputFormat::Edn {
            return Err("--fences: fence transactions are written to Jepsen EDN histories only".into());
        }
        if let Some(per) = self.txns_per_session {
            if per == 0 || processes.checked_mul(per) != Some(txns) {
                return Err(format!("txns ({txns}) must equal processes ({processes}) * txns_per_session ({per})"));
            }
        }
        if self.output_format == OutputFormat::Dbcop {
            if w != InjectWorkload::RwRegister {
                return Err("dbcop output is for rw-register histories only".into());
            }
            if info != 0.0 {
                return Err("dbcop has no indeterminate transactions: info_fraction must be 0".into());
            }
            if self.txns_per_session.is_none() {
                return Err("dbcop output needs txns_per_session (sessions of equal length)".into());
            }
        }
        Ok(())
    }
}

/// Most transactions in one injected scenario.
pub(crate) const MAX_SCENARIO_TXNS: usize = 4;

/// A scripted transaction of an injected scenario: its micro-ops with their
/// (fixed) observed values, and its completion type.
pub(crate) struct Scripted<M> {
    /// Micro-ops, reads already holding what they "observed".
    pub mops: Vec<M>,
    /// Completes `:fail` instead of `:ok`.
    pub fail: bool,
    /// Not invoked before every earlier scripted transaction has completed.
    pub wait_prev: bool,
}

/// Delay ranges of the simulated clients, in logical nanoseconds.
const THINK_NS: (u64, u64) = (10_000, 1_000_000);
/// Invocation to the atomic apply instant.
const APPLY_NS: (u64, u64) = (10_000, 2_000_000);
/// Apply instant to completion.
const COMPLETE_NS: (u64, u64) = (10_000, 2_000_000);

/// Multiplicative integer hasher (FxHash-style); keys are small integers.
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A hash map from integer keys, hashed with [`IntHasher`].
pub(crate) type IntMap<V> = HashMap<u64, V, BuildHasherDefault<IntHasher>>;

// ---------------------------------------------------------------------------
// Shared config validation
// ---------------------------------------------------------------------------

/// Checks that `x` is a probability.
pub(crate) fn check_fraction(name: &str, x: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&x) {
        Ok(())
    } else {
        Err(format!("{name} must be within [0, 1], got {x}"))
    }
}

/// Checks the client count and the transaction length range.
pub(crate) fn check_clients(processes: usize, min_txn_len: usize, max_txn_len: usize) -> Result<(), String> {
    if processes == 0 {
        return Err("processes must be at least 1".into());
    }
    if processes > u32::MAX as usize {
        return Err("processes must fit in 32 bits".into());
    }
    if min_txn_len == 0 {
        return Err("min_txn_len must be at least 1".into());
    }
    if max_txn_len < min_txn_len {
        return Err(format!("max_txn_len ({max_txn_len}) must be at least min_txn_len ({min_txn_len})"));
    }
    Ok(())
}

/// Checks the fault probabilities, separately and together.
pub(crate) fn check_faults(fail_fraction: f64, info_fraction: f64) -> Result<(), String> {
    check_fraction("fail_fraction", fail_fraction)?;
    check_fraction("info_fraction", info_fraction)?;
    if fail_fraction + info_fraction > 1.0 {
        return Err("fail_fraction + info_fraction must be at most 1".into());
    }
    Ok(())
}

/// Turns a config validation message into the generators' I/O error.
pub(crate) fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

// ---------------------------------------------------------------------------
// The event loop
// ---------------------------------------------------------------------------

/// Runs a generator into memory and returns its text; `who` names the caller
/// in the panic for an invalid configuration.
pub(crate) fn to_string(who: &str, write: impl FnOnce(&mut Vec<u8>) -> io::Result<GenStats>) -> String {
    let mut buf = Vec::new();
    if let Err(e) = write(&mut buf) {
        panic!("{who}: {e}");
    }
    String::from_utf8(buf).expect("generator emits ASCII")
}

/// The workload-independent part of a generator config.
pub(crate) struct SimParams {
    /// Seed of the PRNG shared by the loop and the workload.
    pub seed: u64,
    /// Transactions to invoke.
    pub txns: usize,
    /// Concurrent clients.
    pub processes: usize,
    /// Upper bound on micro-ops per transaction (a capacity hint).
    pub max_txn_len: usize,
    /// Probability that a transaction completes `:fail`.
    pub fail_fraction: f64,
    /// Probability that a transaction completes `:info`.
    pub info_fraction: f64,
}

/// A data model and its in-memory store, driven by [`run`].
///
/// The loop calls [`gen_txn`](Workload::gen_txn) at invocation,
/// [`apply`](Workload::apply) at the apply instant (only for transactions
/// that take effect), and [`release`](Workload::release) right after writing
/// the completion; [`push_mops`](Workload::push_mops) renders micro-ops for
/// both lines.
pub(crate) trait Workload {
    /// A micro-op of an in-flight transaction.
    type Mop;

    /// Fills `mops` (cleared first) with a fresh transaction.
    fn gen_txn(&mut self, rng: &mut Rng, mops: &mut Vec<Self::Mop>);

    /// Fills `mops` (cleared first) with a fence transaction: a read of the
    /// reserved epoch key and a write of a fresh value to it (only called
    /// for workloads whose options validated [`GenOptions::fences`]).
    fn fence_txn(&mut self, mops: &mut Vec<Self::Mop>) {
        mops.clear();
    }

    /// Applies a transaction atomically, recording in `mops` what its reads
    /// observe.
    fn apply(&mut self, mops: &mut [Self::Mop]);

    /// Called once the transaction's completion has been written, whether or
    /// not it took effect.
    fn release(&mut self, mops: &[Self::Mop]);

    /// Appends the space-separated micro-ops (the inside of `:value [...]`).
    /// With `observed`, reads print what they saw at apply time; otherwise
    /// `nil` (invocations, `:fail`, `:info`).
    fn push_mops(&self, buf: &mut Vec<u8>, mops: &[Self::Mop], observed: bool);

    /// Number of keys the store currently holds (for memory tests).
    fn live_keys(&self) -> usize;

    // ---- multi-version execution (levels other than strict serializable)

    /// The key a micro-op accesses and whether it writes.
    fn access(&self, m: &Self::Mop) -> (u64, bool);

    /// The key's state (see [`MvStore`]) after the write `m` on state `s`.
    fn write_state(&self, m: &Self::Mop, s: u64) -> u64;

    /// Records that the read `m` observed state `s`.
    fn observe(&self, m: &mut Self::Mop, s: u64);

    /// Installs a committed write (beyond the state the [`MvStore`] keeps).
    fn install(&mut self, m: &Self::Mop);

    /// The multi-version store.
    fn mv(&mut self) -> &mut MvStore;

    // ---- injection and dbcop output

    /// Appends the scripted transactions of a `kind` scenario on fresh keys.
    fn scenario(&mut self, kind: Inject, out: &mut Vec<Scripted<Self::Mop>>);

    /// The dbcop event `(write, variable, value)` of a micro-op; reads that
    /// observed nothing (or whose result is unknown) read `0`.
    fn dbcop_event(&self, m: &Self::Mop, observed: bool) -> (bool, u64, u64);
}

/// Committed versions of every key, for the levels that read the past.
///
/// A key's *state* is a `u64` chosen by the workload (a register's value, a
/// list's length); `0` is the initial state. Commits are numbered `1, 2, ...`
/// (`now` is the latest); a key's versions are `(commit, state)` pairs in
/// commit order. Versions no in-flight transaction can read any more (older
/// than the newest one at or before the oldest active read point) are
/// pruned whenever the key is written, so memory stays proportional to the
/// keys written plus the writes of the last few in-flight windows.
#[derive(Default)]
pub(crate) struct MvStore {
    versions: IntMap<Vec<(u64, u64)>>,
    /// The latest commit number.
    pub now: u64,
}

impl MvStore {
    /// The state of `key` as of commit `ts`.
    #[inline]
    pub fn state_at(&self, key: u64, ts: u64) -> u64 {
        match self.versions.get(&key) {
            Some(v) => {
                let i = v.partition_point(|x| x.0 <= ts);
                if i == 0 {
                    0
                } else {
                    v[i - 1].1
                }
            }
            None => 0,
        }
    }

    /// The commit that last wrote `key` (`0` for none).
    #[inline]
    pub fn last_commit(&self, key: u64) -> u64 {
        self.versions.get(&key).and_then(|v| v.last()).map_or(0, |x| x.0)
    }

    /// Records a version of `key` at commit `now`, pruning versions nobody
    /// reading at or after `min_active` can see.
    #[inline]
    pub fn push(&mut self, key: u64, state: u64, min_active: u64) {
        let now = self.now;
        let v = self.versions.entry(key).or_default();
        v.push((now, state));
        let i = v.partition_point(|x| x.0 <= min_active);
        if i > 1 {
            v.drain(..i - 1);
        }
    }

    /// Forgets a key entirely (a retired list-append key).
    pub fn remove(&mut self, key: u64) {
        self.versions.remove(&key);
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.versions.len()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Thinking; the next event invokes a transaction.
    Idle,
    /// Invoked; the next event applies it (strict serializable) or begins
    /// it (the other levels).
    Invoked,
    /// Begun (its read point fixed); the next event commits it.
    Begun,
    /// Applied (or skipped); the next event completes it.
    Applied,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fail,
    /// Indeterminate; `true` if it takes effect.
    Info(bool),
}

/// One simulated client.
struct Slot<M> {
    process: u64,
    phase: Phase,
    outcome: Outcome,
    mops: Vec<M>,
    /// `:index` of the current transaction's invocation.
    invoke_index: u64,
    /// The current transaction is scripted (an injected scenario's).
    scripted: bool,
    /// Read point (commit number) fixed when the transaction began.
    start: u64,
    /// The last injected scenario this client ran a transaction of.
    last_scenario: Option<usize>,
    /// Transactions this client invoked.
    count: usize,
    /// Transactions this client invoked since its last fence.
    since_fence: usize,
}

/// Test instrumentation: the hidden apply order and memory high-water marks.
#[derive(Default)]
pub(crate) struct Trace {
    /// `:index` of the invocation of each transaction that took effect, in
    /// the order they were applied.
    pub applied: Vec<u64>,
    /// Most keys held in the store at once (sampled at invocations).
    pub max_live_keys: usize,
    /// Most transactions in flight at once.
    pub max_in_flight: usize,
    /// Most versions of keys kept by the multi-version store (sampled at
    /// invocations).
    pub max_mv_keys: usize,
}

/// Appends one op line.
#[allow(clippy::too_many_arguments)]
fn write_op<L: Workload>(
    buf: &mut Vec<u8>,
    wl: &L,
    ty: &[u8],
    mops: &[L::Mop],
    observed: bool,
    process: u64,
    time: u64,
    index: u64,
) {
    push_op_line(buf, ty, process, time, index, |buf| wl.push_mops(buf, mops, observed));
}

/// Appends one Jepsen op line of a transaction, in Jepsen's key order:
/// `{:type <ty>, :f :txn, :value [<mops>], :process p, :time t, :index i}`,
/// where `push_mops` renders the micro-ops inside the value's brackets.
pub(crate) fn push_op_line(
    buf: &mut Vec<u8>,
    ty: &[u8],
    process: u64,
    time: u64,
    index: u64,
    push_mops: impl FnOnce(&mut Vec<u8>),
) {
    push_op_line_of(buf, ty, b":txn", process, time, index, |buf| {
        buf.push(b'[');
        push_mops(buf);
        buf.push(b']');
    });
}

/// [`push_op_line`] with any `:f`, `push_value` rendering the whole value.
pub(crate) fn push_op_line_of(
    buf: &mut Vec<u8>,
    ty: &[u8],
    f: &[u8],
    process: u64,
    time: u64,
    index: u64,
    push_value: impl FnOnce(&mut Vec<u8>),
) {
    buf.extend_from_slice(b"{:type ");
    buf.extend_from_slice(ty);
    buf.extend_from_slice(b", :f ");
    buf.extend_from_slice(f);
    buf.extend_from_slice(b", :value ");
    push_value(buf);
    buf.extend_from_slice(b", :process ");
    push_u64(buf, process);
    buf.extend_from_slice(b", :time ");
    push_u64(buf, time);
    buf.extend_from_slice(b", :index ");
    push_u64(buf, index);
    buf.extend_from_slice(b"}\n");
}

/// The `:time` to emit for an event at logical time `t` after a line stamped
/// `last`: `t` itself unless that would not strictly increase.
#[inline]
pub(crate) fn next_stamp(last: Option<u64>, t: u64) -> u64 {
    match last {
        Some(l) if t <= l => l + 1,
        _ => t,
    }
}

/// Invocation to the begin instant, for the multi-version levels.
const BEGIN_NS: (u64, u64) = (1_000, 500_000);
/// How many commits back a serializable read-only transaction's snapshot
/// may lie.
const STALE_COMMITS: u64 = 8;
/// Commits between recomputations of the oldest active read point.
const MIN_ACTIVE_EVERY: u64 = 16;

/// One key's state inside a committing multi-version transaction.
struct Local {
    key: u64,
    /// Read point of the key (commit number).
    point: u64,
    state: u64,
    wrote: bool,
}

/// Executes a transaction's micro-ops against the multi-version store at
/// `level` and commits it, or returns `false` if first-committer-wins aborts
/// it. `start` is its read point (fixed when it began).
fn mv_commit<L: Workload>(
    wl: &mut L,
    mops: &mut [L::Mop],
    level: Level,
    start: u64,
    rng: &mut Rng,
    min_active: u64,
    local: &mut Vec<Local>,
) -> bool {
    local.clear();
    let now = wl.mv().now;
    let read_only = mops.iter().all(|m| !wl.access(m).1);
    let mut last_point = start;
    for m in mops.iter_mut() {
        let (key, write) = wl.access(m);
        let i = match local.iter().position(|l| l.key == key) {
            Some(i) => i,
            None => {
                let point = match level {
                    Level::SnapshotIsolation => start,
                    Level::ReadCommitted => {
                        // The first access happens at a random instant
                        // between begin and now, in micro-op order.
                        last_point = rng.range_inclusive(last_point, now);
                        last_point
                    }
                    Level::Serializable if read_only => start,
                    Level::Serializable | Level::StrictSerializable => now,
                };
                let state = wl.mv().state_at(key, point);
                local.push(Local { key, point, state, wrote: false });
                local.len() - 1
            }
        };
        let l = &mut local[i];
        if write {
            l.state = wl.write_state(m, l.state);
            l.wrote = true;
        } else {
            wl.observe(m, l.state);
        }
    }
    if matches!(level, Level::SnapshotIsolation | Level::ReadCommitted) {
        let mv = wl.mv();
        if local.iter().any(|l| l.wrote && mv.last_commit(l.key) > l.point) {
            return false;
        }
    }
    if read_only {
        return true;
    }
    wl.mv().now += 1;
    for m in mops.iter() {
        if wl.access(m).1 {
            wl.install(m);
        }
    }
    for l in local.iter().filter(|l| l.wrote) {
        wl.mv().push(l.key, l.state, min_active);
    }
    true
}

/// Where completed transactions go.
enum Emit<W: Write> {
    Edn(Sink<W>),
    Dbcop(W, DbcopWriter),
}

/// Runs the clients against `wl` and streams the history to `out`.
///
/// The caller validates its config (and `opts`, see [`GenOptions`]) first.
/// The PRNG seeded with `p.seed` is shared with the workload in a fixed call
/// order, so the output is a function of the parameters and the workload's
/// own config. `dbcop_variables` is the key count written in a dbcop header.
pub(crate) fn run<W: Write, L: Workload>(
    p: &SimParams,
    opts: &GenOptions,
    wl: &mut L,
    out: W,
    dbcop_variables: u64,
    mut trace: Option<&mut Trace>,
) -> io::Result<GenStats> {
    let mut emit = match opts.output_format {
        OutputFormat::Edn => Emit::Edn(Sink::new(out)),
        OutputFormat::Dbcop => Emit::Dbcop(out, DbcopWriter::new(p.processes)),
    };
    let mut rng = Rng::new(p.seed);
    let n = p.processes;
    let level = opts.level;
    let mut slots: Vec<Slot<L::Mop>> = (0..n)
        .map(|i| Slot {
            process: i as u64,
            phase: Phase::Idle,
            outcome: Outcome::Ok,
            mops: Vec::with_capacity(p.max_txn_len),
            invoke_index: 0,
            scripted: false,
            start: 0,
            last_scenario: None,
            count: 0,
            since_fence: 0,
        })
        .collect();
    let cap = opts.txns_per_session.unwrap_or(usize::MAX);
    // One pending event per slot: (logical time, slot).
    let mut events: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::with_capacity(n);
    if p.txns > 0 {
        for i in 0..n {
            let t = rng.range_inclusive(0, THINK_NS.1);
            events.push(Reverse((t, i as u32)));
        }
    }

    let scenarios = opts.scenarios();
    let mut next_scenario = 0usize;
    // Scripted transactions, with their scenario and whether each of its
    // transactions needs a client of its own.
    let mut queue: VecDeque<(Scripted<L::Mop>, usize, bool)> = VecDeque::new();
    let mut script_buf: Vec<Scripted<L::Mop>> = Vec::new();
    let mut scripted_in_flight = 0usize;
    let mut injected = InjectCounts::default();
    let mut conflicts = 0usize;
    let mut local: Vec<Local> = Vec::new();
    let mut min_active = 0u64;

    let mut invoked = 0usize;
    let mut in_flight = 0usize;
    let mut index = 0u64;
    let mut t_end = 0u64;
    // Last emitted :time; emitted times strictly increase even when events
    // coincide.
    let mut last_time: Option<u64> = None;
    let mut stamp = |t: u64| {
        let s = next_stamp(last_time, t);
        last_time = Some(s);
        s
    };

    while let Some(Reverse((t, si))) = events.pop() {
        t_end = t;
        let slot = &mut slots[si as usize];
        match slot.phase {
            Phase::Idle => {
                if invoked == p.txns || slot.count == cap {
                    continue; // this client is done
                }
                while next_scenario < scenarios && invoked >= (next_scenario + 1) * p.txns / (scenarios + 1) {
                    let kind = opts.inject[next_scenario % opts.inject.len()];
                    wl.scenario(kind, &mut script_buf);
                    queue.extend(script_buf.drain(..).map(|s| (s, next_scenario, kind.own_sessions())));
                    injected.add(kind);
                    next_scenario += 1;
                }
                slot.scripted = false;
                if let Some((front, scenario, own)) = queue.front() {
                    let mine = *own && slot.last_scenario == Some(*scenario);
                    if (!front.wait_prev || scripted_in_flight == 0) && !mine {
                        if let Some((s, scenario, _)) = queue.pop_front() {
                            slot.mops.clear();
                            slot.mops.extend(s.mops);
                            slot.outcome = if s.fail { Outcome::Fail } else { Outcome::Ok };
                            slot.scripted = true;
                            slot.last_scenario = Some(scenario);
                            scripted_in_flight += 1;
                        }
                    } else if p.txns - invoked <= queue.len() {
                        // Keep the remaining budget for the script.
                        let d = rng.range_inclusive(THINK_NS.0, THINK_NS.1);
                        events.push(Reverse((t + d, si)));
                        continue;
                    }
                }
                if !slot.scripted && opts.fences > 0 && slot.since_fence == opts.fences {
                    slot.since_fence = 0;
                    wl.fence_txn(&mut slot.mops);
                    slot.outcome = Outcome::Ok;
                } else if !slot.scripted {
                    slot.since_fence += 1;
                    wl.gen_txn(&mut rng, &mut slot.mops);
                    let r = rng.next_f64();
                    slot.outcome = if r < p.fail_fraction {
                        Outcome::Fail
                    } else if r < p.fail_fraction + p.info_fraction {
                        Outcome::Info(rng.chance(0.5))
                    } else {
                        Outcome::Ok
                    };
                }
                slot.invoke_index = index;
                if let Emit::Edn(sink) = &mut emit {
                    let time = stamp(t);
                    write_op(&mut sink.buf, wl, b":invoke", &slot.mops, false, slot.process, time, index);
                }
                index += 1;
                invoked += 1;
                slot.count += 1;
                in_flight += 1;
                slot.phase = Phase::Invoked;
                let d = if level == Level::StrictSerializable || slot.scripted {
                    rng.range_inclusive(APPLY_NS.0, APPLY_NS.1)
                } else {
                    rng.range_inclusive(BEGIN_NS.0, BEGIN_NS.1)
                };
                events.push(Reverse((t + d, si)));
                if let Some(tr) = trace.as_deref_mut() {
                    tr.max_in_flight = tr.max_in_flight.max(in_flight);
                    tr.max_live_keys = tr.max_live_keys.max(wl.live_keys());
                    tr.max_mv_keys = tr.max_mv_keys.max(wl.mv().len());
                }
            }
            Phase::Invoked if level != Level::StrictSerializable && !slot.scripted => {
                let now = wl.mv().now;
                slot.start = if level == Level::Serializable {
                    now.saturating_sub(rng.below(STALE_COMMITS + 1)).max(min_active)
                } else {
                    now
                };
                slot.phase = Phase::Begun;
                let d = rng.range_inclusive(APPLY_NS.0, APPLY_NS.1);
                events.push(Reverse((t + d, si)));
            }
            Phase::Invoked | Phase::Begun => {
                if !slot.scripted && matches!(slot.outcome, Outcome::Ok | Outcome::Info(true)) {
                    let took_effect = if level == Level::StrictSerializable {
                        wl.apply(&mut slot.mops);
                        true
                    } else {
                        let start = slot.start;
                        let ok = mv_commit(wl, &mut slot.mops, level, start, &mut rng, min_active, &mut local);
                        let now = wl.mv().now;
                        if now.is_multiple_of(MIN_ACTIVE_EVERY) {
                            let slot_start = |s: &Slot<L::Mop>| (s.phase == Phase::Begun).then_some(s.start);
                            min_active = slots.iter().filter_map(slot_start).min().unwrap_or(now);
                        }
                        ok
                    };
                    let slot = &mut slots[si as usize];
                    if took_effect {
                        if let Some(tr) = trace.as_deref_mut() {
                            tr.applied.push(slot.invoke_index);
                        }
                    } else {
                        conflicts += 1;
                        slot.outcome = match slot.outcome {
                            Outcome::Ok => Outcome::Fail,
                            _ => Outcome::Info(false),
                        };
                    }
                }
                let slot = &mut slots[si as usize];
                slot.phase = Phase::Applied;
                let d = rng.range_inclusive(COMPLETE_NS.0, COMPLETE_NS.1);
                events.push(Reverse((t + d, si)));
            }
            Phase::Applied => {
                let (ty, observed): (&[u8], bool) = match slot.outcome {
                    Outcome::Ok => (b":ok", true),
                    Outcome::Fail => (b":fail", false),
                    Outcome::Info(_) => (b":info", false),
                };
                match &mut emit {
                    Emit::Edn(sink) => {
                        let time = stamp(t);
                        write_op(&mut sink.buf, wl, ty, &slot.mops, observed, slot.process, time, index);
                    }
                    Emit::Dbcop(_, d) => {
                        let events = slot.mops.iter().map(|m| wl.dbcop_event(m, observed));
                        d.push_txn(si as usize, events, observed);
                    }
                }
                index += 1;
                in_flight -= 1;
                if slot.scripted {
                    scripted_in_flight -= 1;
                } else {
                    wl.release(&slot.mops);
                }
                if let Outcome::Info(_) = slot.outcome {
                    // Jepsen retires a crashed worker's process id.
                    slot.process += n as u64;
                }
                slot.phase = Phase::Idle;
                if invoked < p.txns && slot.count < cap {
                    let d = rng.range_inclusive(THINK_NS.0, THINK_NS.1);
                    events.push(Reverse((t + d, si)));
                }
                if let Emit::Edn(sink) = &mut emit {
                    sink.maybe_flush()?;
                }
            }
        }
    }
    debug_assert_eq!(in_flight, 0);
    debug_assert!(queue.is_empty());
    let bytes = match emit {
        Emit::Edn(sink) => sink.finish()?,
        Emit::Dbcop(w, d) => {
            let params = super::dbcop::Params {
                id: p.seed,
                n_node: n as u64,
                n_variable: dbcop_variables,
                n_transaction: opts.txns_per_session.unwrap_or(0) as u64,
                n_event: p.max_txn_len as u64,
            };
            d.finish(w, &params, t_end)?
        }
    };
    Ok(GenStats { txns: invoked, ops: index as usize, bytes, conflicts, injected })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_strictly_increase_on_ties() {
        assert_eq!(next_stamp(None, 0), 0);
        assert_eq!(next_stamp(None, 17), 17);
        assert_eq!(next_stamp(Some(5), 9), 9);
        assert_eq!(next_stamp(Some(5), 5), 6);
        assert_eq!(next_stamp(Some(5), 3), 6);
    }

    #[test]
    fn validation_helpers() {
        assert!(check_fraction("x", 0.0).is_ok());
        assert!(check_fraction("x", 1.0).is_ok());
        assert_eq!(check_fraction("x", -0.1).unwrap_err(), "x must be within [0, 1], got -0.1");
        assert!(check_fraction("x", f64::NAN).is_err());
        assert!(check_clients(1, 1, 1).is_ok());
        assert!(check_clients(0, 1, 1).is_err());
        assert!(check_clients(1, 0, 1).is_err());
        assert!(check_clients(1, 2, 1).is_err());
        assert!(check_faults(0.5, 0.5).is_ok());
        assert!(check_faults(0.6, 0.5).is_err());
        assert!(check_faults(0.0, 1.1).is_err());
    }

    /// A workload with one counter: a transaction is a single increment whose
    /// "read" is the counter value it produced. Exercises the loop alone.
    struct Counter {
        value: u64,
        released: u64,
        mv: MvStore,
    }

    impl Workload for Counter {
        type Mop = u64;
        fn gen_txn(&mut self, _rng: &mut Rng, mops: &mut Vec<u64>) {
            mops.clear();
            mops.push(0);
        }
        fn apply(&mut self, mops: &mut [u64]) {
            self.value += 1;
            mops[0] = self.value;
        }
        fn release(&mut self, _mops: &[u64]) {
            self.released += 1;
        }
        fn push_mops(&self, buf: &mut Vec<u8>, mops: &[u64], observed: bool) {
            buf.extend_from_slice(b"[:inc ");
            if observed {
                push_u64(buf, mops[0]);
            } else {
                buf.extend_from_slice(b"nil");
            }
            buf.push(b']');
        }
        fn live_keys(&self) -> usize {
            1
        }
        fn access(&self, _m: &u64) -> (u64, bool) {
            (0, true)
        }
        fn write_state(&self, _m: &u64, s: u64) -> u64 {
            s + 1
        }
        fn observe(&self, m: &mut u64, s: u64) {
            *m = s;
        }
        fn install(&mut self, _m: &u64) {}
        fn mv(&mut self) -> &mut MvStore {
            &mut self.mv
        }
        fn scenario(&mut self, _kind: Inject, _out: &mut Vec<Scripted<u64>>) {}
        fn dbcop_event(&self, m: &u64, _observed: bool) -> (bool, u64, u64) {
            (true, 0, *m)
        }
    }

    #[test]
    fn loop_applies_in_trace_order_and_releases_everything() {
        let p = SimParams { seed: 3, txns: 500, processes: 6, max_txn_len: 1, fail_fraction: 0.1, info_fraction: 0.1 };
        let mut wl = Counter { value: 0, released: 0, mv: MvStore::default() };
        let mut trace = Trace::default();
        let mut buf = Vec::new();
        let stats = run(&p, &GenOptions::default(), &mut wl, &mut buf, 0, Some(&mut trace)).unwrap();
        assert_eq!(stats, GenStats { txns: 500, ops: 1000, bytes: buf.len() as u64, ..GenStats::default() });
        assert_eq!(wl.released, 500);
        assert_eq!(wl.value, trace.applied.len() as u64);
        assert!(trace.max_in_flight <= 6 && trace.max_in_flight > 1);
        let h = String::from_utf8(buf).unwrap();
        // The k-th applied transaction is the one whose :ok shows k (when ok).
        let lines: Vec<&str> = h.lines().collect();
        let ok_values: Vec<u64> = lines
            .iter()
            .filter(|l| l.starts_with("{:type :ok"))
            .map(|l| l["{:type :ok, :f :txn, :value [[:inc ".len()..].split(']').next().unwrap().parse().unwrap())
            .collect();
        assert!(ok_values.len() > 300);
        for w in ok_values.windows(2) {
            assert_ne!(w[0], w[1]);
        }
        for (i, &inv) in trace.applied.iter().enumerate() {
            assert!(lines[inv as usize].starts_with("{:type :invoke, :f :txn, :value [[:inc nil]]"));
            assert!(lines[inv as usize].ends_with(&format!(":index {inv}}}")), "{i}");
        }
    }
}
