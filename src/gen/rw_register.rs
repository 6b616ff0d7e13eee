//! Generator of strict-serializable Jepsen read/write-register histories.
//!
//! # Workload
//!
//! The workload follows Jepsen's `wr` (rw-register) transactions and the
//! shape of PolySI's generator: every transaction has
//! `min_txn_len..=max_txn_len` micro-operations, each either a read
//! `[:r k nil]` or a write `[:w k v]` of an integer key `k` in `0..keys`,
//! drawn uniformly, Zipf-distributed, or from a hotspot (see [`RwKeyDist`]).
//! Write values are `1, 2, 3, ...` per key, so every written value is unique
//! per key. Values are allocated when a transaction is generated, so writes
//! of failed transactions use up values too (as in Jepsen, where the generator
//! runs before the client). A transaction may read and write the same key any
//! number of times.
//!
//! # Execution
//!
//! `processes` simulated clients share one in-memory register store. A
//! discrete-event loop over logical time (nanoseconds) drives them: every
//! process repeatedly
//!
//! 1. invokes a transaction (emitting `:invoke`),
//! 2. after a random delay *applies* it atomically against the store, in one
//!    event that touches no other transaction: micro-ops run in order, so a
//!    read observes the latest committed write of its key, or the
//!    transaction's own latest earlier write of it (internal consistency),
//! 3. after a further random delay completes it (emitting `:ok`, `:fail` or
//!    `:info`), then thinks for a while before invoking the next one.
//!
//! Transactions of different processes overlap freely. Because each
//! transaction takes effect at a single instant inside its own
//! invoke..complete window, the order in which transactions are applied is a
//! serial order that explains every read *and* extends the real-time order,
//! so the emitted histories are strict serializable by construction; the
//! tests replay that hidden apply order to prove it.
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
//! in output order and strictly increasing `:time`. Completed reads show the
//! value observed, or `nil` for a key never written:
//!
//! ```text
//! {:type :invoke, :f :txn, :value [[:r 5 nil] [:w 7 1]], :process 3, :time 1000, :index 0}
//! {:type :ok, :f :txn, :value [[:r 5 2] [:w 7 1]], :process 3, :time 2000, :index 1}
//! ```
//!
//! Memory stays bounded: ops are written as they are emitted, only in-flight
//! transactions are held, and the store keeps just two integers per key (the
//! current value and the last value handed out), in flat arrays indexed by
//! key for key spaces up to 2^24 keys (allocated zeroed, so only the pages of
//! keys actually written are committed), and beyond that in a hash map of the
//! keys written so far.

use std::io::{self, Write};

use super::inject::{Inject, InjectWorkload};
use super::out::push_u64;
use super::rng::Rng;
use super::sim::{self, invalid, GenOptions, IntMap, MvStore, Scripted, SimParams, Workload};
use super::txn::{draw_txn, Draw, Pattern, RwKeyPicker, Shape};

pub use super::config::{RwKeyDist, RwRegisterConfig};
pub use super::sim::GenStats;

/// Key spaces up to this many keys are stored in flat arrays (allocated
/// zeroed, so the OS commits only the pages of keys actually touched);
/// larger ones in a hash map of the keys written so far.
const DENSE_KEYS: usize = 1 << 24;

/// Generates an rw-register history per `cfg` and streams it to `out`.
///
/// Output is buffered internally (in ~64 KiB chunks, always whole lines), so
/// an unbuffered `File` or `Stdout` is fine; wrapping it in a `BufWriter`
/// is harmless but only adds a copy. `out` is flushed before returning.
/// Fails with `InvalidInput` if [`RwRegisterConfig::validate`] rejects `cfg`,
/// or with the writer's error.
pub fn write_rw_register<W: Write>(cfg: &RwRegisterConfig, out: W) -> io::Result<GenStats> {
    run(cfg, &GenOptions::default(), out, None)
}

/// Like [`write_rw_register`], with an isolation level, injected anomalies,
/// sessions of equal length and the output format per [`GenOptions`].
/// Injected scenarios use keys `keys, keys + 1, ...` (outside the normal key
/// space). With [`OutputFormat::Dbcop`](super::sim::OutputFormat::Dbcop) the
/// history is written as dbcop's `history.bincode` (see [`super::dbcop`]):
/// that needs `txns_per_session` and `info_fraction == 0`, because dbcop
/// cannot represent indeterminate transactions. Fails with `InvalidInput`
/// for an invalid config or options, or with the writer's error.
pub fn write_rw_register_with<W: Write>(cfg: &RwRegisterConfig, opts: &GenOptions, out: W) -> io::Result<GenStats> {
    run(cfg, opts, out, None)
}

/// Like [`rw_register_string`], with [`GenOptions`] (EDN output only).
///
/// # Panics
///
/// If `cfg` or `opts` is invalid, or `opts` asks for dbcop output.
pub fn rw_register_string_with(cfg: &RwRegisterConfig, opts: &GenOptions) -> String {
    sim::to_string("rw_register_string_with", |buf| write_rw_register_with(cfg, opts, buf))
}

/// Generates an rw-register history per `cfg` into a `String` (for tests and
/// small examples).
///
/// # Panics
///
/// If `cfg` is invalid (see [`RwRegisterConfig::validate`]).
pub fn rw_register_string(cfg: &RwRegisterConfig) -> String {
    sim::to_string("rw_register_string", |buf| write_rw_register(cfg, buf))
}

// ---------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------

/// A micro-op of an in-flight transaction. For writes `val` is the value
/// written; for reads it is the value observed at apply time, `0` standing
/// for `nil` (written values start at 1).
#[derive(Clone, Copy)]
struct Mop {
    write: bool,
    key: u64,
    val: u64,
}

/// One register: its committed value and the last write value allocated to
/// it by the workload (`0` for none).
#[derive(Clone, Copy, Default)]
struct Reg {
    cur: u64,
    last: u64,
}

/// The register store.
enum Registers {
    /// Indexed by key; for key spaces up to [`DENSE_KEYS`].
    Dense { cur: Vec<u64>, last: Vec<u64> },
    /// Only keys that have been handed a write value.
    Sparse(IntMap<Reg>),
}

impl Registers {
    fn new(keys: usize) -> Self {
        if keys <= DENSE_KEYS {
            // vec![0; n] of integers is a zeroed allocation: untouched pages
            // cost no memory.
            Registers::Dense { cur: vec![0; keys], last: vec![0; keys] }
        } else {
            Registers::Sparse(IntMap::default())
        }
    }

    /// Hands out the next write value of `key`.
    #[inline]
    fn alloc(&mut self, key: u64) -> u64 {
        let last = match self {
            Registers::Dense { last, .. } => &mut last[key as usize],
            Registers::Sparse(m) => &mut m.entry(key).or_default().last,
        };
        *last += 1;
        *last
    }

    /// Commits a write.
    #[inline]
    fn write(&mut self, key: u64, val: u64) {
        match self {
            Registers::Dense { cur, .. } => cur[key as usize] = val,
            Registers::Sparse(m) => m.get_mut(&key).expect("written keys were allocated").cur = val,
        }
    }

    /// The committed value of `key` (`0` for never written).
    #[inline]
    fn read(&self, key: u64) -> u64 {
        match self {
            Registers::Dense { cur, .. } => cur[key as usize],
            Registers::Sparse(m) => m.get(&key).map_or(0, |r| r.cur),
        }
    }

    fn len(&self) -> usize {
        match self {
            Registers::Dense { cur, .. } => cur.len(),
            Registers::Sparse(m) => m.len(),
        }
    }
}

/// The register store and key picker, driven by [`sim::run`].
struct Gen<'a> {
    cfg: &'a RwRegisterConfig,
    picker: RwKeyPicker,
    regs: Registers,
    /// Committed versions (values), for the multi-version levels.
    mv: MvStore,
    /// Next reserved key for injected scenarios.
    next_reserved: u64,
    /// The epoch key of fence transactions ([`FENCE_KEY`]).
    fence: Reg,
}

/// The key of fence transactions, written `:isolde/fence` in the history.
const FENCE_KEY: u64 = u64::MAX;

/// The register key space as [`draw_txn`] sees it: keys from the picker,
/// values from the store.
struct RegDraw<'a> {
    picker: &'a RwKeyPicker,
    regs: &'a mut Registers,
    mops: &'a mut Vec<Mop>,
}

impl Draw for RegDraw<'_> {
    type Slot = u64;

    #[inline]
    fn pick(&mut self, rng: &mut Rng) -> u64 {
        self.picker.pick(rng)
    }

    #[inline]
    fn key(&self, key: u64) -> u64 {
        key
    }

    #[inline]
    fn read(&mut self, key: u64) {
        self.mops.push(Mop { write: false, key, val: 0 });
    }

    #[inline]
    fn write(&mut self, key: u64) {
        self.mops.push(Mop { write: true, key, val: self.regs.alloc(key) });
    }
}

fn w(key: u64, val: u64) -> Mop {
    Mop { write: true, key, val }
}

/// A scripted read that observed `val` (`0` for nil).
fn r(key: u64, val: u64) -> Mop {
    Mop { write: false, key, val }
}

fn txn(mops: Vec<Mop>) -> Scripted<Mop> {
    Scripted { mops, fail: false, wait_prev: false }
}

impl Workload for Gen<'_> {
    type Mop = Mop;

    /// Draws each micro-op's key and kind, allocating write values.
    fn gen_txn(&mut self, rng: &mut Rng, mops: &mut Vec<Mop>) {
        mops.clear();
        let shape = Shape {
            min_len: self.cfg.min_txn_len,
            max_len: self.cfg.max_txn_len,
            read_fraction: self.cfg.read_fraction,
        };
        let mut d = RegDraw { picker: &self.picker, regs: &mut self.regs, mops };
        draw_txn(rng, &shape, Pattern::Mixed, &mut d);
    }

    fn fence_txn(&mut self, mops: &mut Vec<Mop>) {
        mops.clear();
        self.fence.last += 1;
        mops.extend([r(FENCE_KEY, 0), w(FENCE_KEY, self.fence.last)]);
    }

    /// Runs the micro-ops in order: writes commit, reads record what they see
    /// (so a read after the transaction's own write sees that write).
    fn apply(&mut self, mops: &mut [Mop]) {
        for m in mops.iter_mut() {
            if m.key == FENCE_KEY {
                match m.write {
                    true => self.fence.cur = m.val,
                    false => m.val = self.fence.cur,
                }
            } else if m.write {
                self.regs.write(m.key, m.val);
            } else {
                m.val = self.regs.read(m.key);
            }
        }
    }

    /// Registers hold no per-transaction state.
    fn release(&mut self, _mops: &[Mop]) {}

    /// Reads print the value they saw, `nil` for a never-written key.
    fn push_mops(&self, buf: &mut Vec<u8>, mops: &[Mop], observed: bool) {
        for (i, m) in mops.iter().enumerate() {
            if i > 0 {
                buf.push(b' ');
            }
            buf.extend_from_slice(if m.write { b"[:w " } else { b"[:r " });
            if m.key == FENCE_KEY {
                buf.extend_from_slice(b":isolde/fence");
            } else {
                push_u64(buf, m.key);
            }
            if m.write || (observed && m.val != 0) {
                buf.push(b' ');
                push_u64(buf, m.val);
                buf.push(b']');
            } else {
                buf.extend_from_slice(b" nil]");
            }
        }
    }

    fn live_keys(&self) -> usize {
        self.regs.len()
    }

    fn access(&self, m: &Mop) -> (u64, bool) {
        (m.key, m.write)
    }

    /// A register's state is its value.
    fn write_state(&self, m: &Mop, _s: u64) -> u64 {
        m.val
    }

    fn observe(&self, m: &mut Mop, s: u64) {
        m.val = s;
    }

    /// The [`MvStore`] holds the whole register.
    fn install(&mut self, _m: &Mop) {}

    fn mv(&mut self) -> &mut MvStore {
        &mut self.mv
    }

    fn scenario(&mut self, kind: Inject, out: &mut Vec<Scripted<Mop>>) {
        let a = self.next_reserved;
        let b = a + 1;
        self.next_reserved += kind.keys();
        match kind {
            // Registers reveal no write order without extra assumptions, so
            // G0 and duplicate elements are rejected up front; plant the
            // closest visible anomaly (a G1c) should they get here anyway.
            Inject::G0 | Inject::G1c => {
                out.extend([txn(vec![w(a, 1), r(b, 1)]), txn(vec![w(b, 1), r(a, 1)])]);
            }
            Inject::G1a => {
                out.push(Scripted { mops: vec![w(a, 1)], fail: true, wait_prev: false });
                out.push(txn(vec![r(a, 1)]));
            }
            Inject::G1b => out.extend([txn(vec![w(a, 1), w(a, 2)]), txn(vec![r(a, 1)])]),
            Inject::LostUpdate => {
                out.extend([txn(vec![r(a, 0), w(a, 1)]), txn(vec![r(a, 0), w(a, 2)])]);
            }
            // The predicate scenarios are closed-predicate's (refused up
            // front); here they plant their item counterparts.
            Inject::WriteSkew | Inject::PredicateWriteSkew => {
                out.extend([txn(vec![r(b, 0), w(a, 1)]), txn(vec![r(a, 0), w(b, 1)])]);
            }
            Inject::LongFork => out.extend([
                txn(vec![w(a, 1)]),
                txn(vec![w(b, 1)]),
                txn(vec![r(a, 1), r(b, 0)]),
                txn(vec![r(a, 0), r(b, 1)]),
            ]),
            Inject::ReadSkew => out.extend([txn(vec![w(a, 1), w(b, 1)]), txn(vec![r(a, 1), r(b, 0)])]),
            Inject::Internal => out.push(txn(vec![w(a, 1), r(a, 0)])),
            Inject::DuplicateElements | Inject::GarbageRead | Inject::PredicateReadMiss => out.push(txn(vec![r(a, 1)])),
            Inject::StaleRealtimeRead => {
                out.push(txn(vec![w(a, 1)]));
                out.push(Scripted { mops: vec![r(a, 0)], fail: false, wait_prev: true });
            }
            Inject::NonMonotonicRead => {
                out.extend([txn(vec![w(a, 1)]), txn(vec![r(a, 1), w(a, 2), w(b, 2)]), txn(vec![r(b, 2), r(a, 1)])])
            }
            Inject::NonMonotonicReadAo => out.extend([
                txn(vec![w(a, 1), w(b, 1)]),
                txn(vec![w(a, 2), w(b, 2)]),
                txn(vec![r(b, 2), r(a, 1)]),
                txn(vec![r(a, 1), r(b, 2)]),
            ]),
            Inject::FracturedRead => out.extend([txn(vec![w(a, 1), w(b, 1)]), txn(vec![r(b, 0), r(a, 1)])]),
            Inject::FracturedReadAo => {
                out.extend([txn(vec![w(a, 1), w(b, 1)]), txn(vec![w(a, 2), w(b, 2)]), txn(vec![r(a, 1), r(b, 2)])])
            }
            Inject::NonRepeatableRead => {
                out.extend([txn(vec![w(a, 1)]), txn(vec![w(a, 2)]), txn(vec![r(a, 1), r(a, 2)])])
            }
            Inject::CausalityViolation => {
                out.extend([txn(vec![w(a, 1)]), txn(vec![r(a, 1), w(b, 1)]), txn(vec![r(b, 1), r(a, 0)])])
            }
            Inject::FutureRead => out.push(txn(vec![r(a, 1), w(a, 1)])),
            Inject::NotMyOwnWrite => out.extend([txn(vec![w(a, 1)]), txn(vec![w(a, 2), r(a, 1)])]),
            Inject::NotMyLastWrite => out.push(txn(vec![w(a, 1), w(a, 2), r(a, 1)])),
        }
    }

    fn dbcop_event(&self, m: &Mop, observed: bool) -> (bool, u64, u64) {
        let val = if m.write || observed { m.val } else { 0 };
        (m.write, m.key, val)
    }
}

/// Validates `cfg` and runs the simulation (with optional test tracing).
fn run<W: Write>(
    cfg: &RwRegisterConfig,
    opts: &GenOptions,
    out: W,
    trace: Option<&mut sim::Trace>,
) -> io::Result<GenStats> {
    cfg.validate().map_err(invalid)?;
    opts.validate(InjectWorkload::RwRegister, cfg.txns, cfg.processes, cfg.info_fraction).map_err(invalid)?;
    let mut g = Gen {
        cfg,
        picker: RwKeyPicker::new(cfg.key_dist, cfg.keys as u64),
        regs: Registers::new(cfg.keys),
        mv: MvStore::default(),
        next_reserved: cfg.keys as u64,
        fence: Reg::default(),
    };
    let reserved: u64 = (0..opts.scenarios()).map(|i| opts.inject[i % opts.inject.len()].keys()).sum();
    let p = SimParams {
        seed: cfg.seed,
        txns: cfg.txns,
        processes: cfg.processes,
        max_txn_len: cfg.max_txn_len,
        fail_fraction: cfg.fail_fraction,
        info_fraction: cfg.info_fraction,
    };
    sim::run(&p, opts, &mut g, out, cfg.keys as u64 + reserved, trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashMap, HashSet};

    use crate::gen::testkit::{self, check_info_process_ids, check_realtime, check_shape, pair, Cur};

    // ---- micro-ops of the format we emit ----------------------------------

    #[derive(Clone, Debug, PartialEq)]
    enum PMop {
        /// `[:w k v]`
        Write(u64, u64),
        /// `[:r k v]`, `None` for `nil`.
        Read(u64, Option<u64>),
    }

    impl PMop {
        fn key(&self) -> u64 {
            match *self {
                PMop::Write(k, _) | PMop::Read(k, _) => k,
            }
        }
    }

    type POp = testkit::POp<PMop>;

    fn parse_mop(c: &mut Cur) -> PMop {
        if c.eat("w ") {
            let k = c.num();
            c.expect(" ");
            return PMop::Write(k, c.num());
        }
        c.expect("r ");
        let k = c.num();
        c.expect(" ");
        PMop::Read(k, if c.eat("nil") { None } else { Some(c.num()) })
    }

    fn parse(h: &str) -> Vec<POp> {
        testkit::parse(h, parse_mop)
    }

    fn cfg(seed: u64) -> RwRegisterConfig {
        RwRegisterConfig { seed, txns: 3_000, ..Default::default() }
    }

    /// Small, contended and faulty: few keys, so reads often see writes of
    /// concurrent and of their own transactions.
    fn faulty(seed: u64) -> RwRegisterConfig {
        RwRegisterConfig {
            seed,
            txns: 3_000,
            processes: 7,
            min_txn_len: 1,
            max_txn_len: 8,
            keys: 8,
            key_dist: RwKeyDist::Uniform,
            fail_fraction: 0.1,
            info_fraction: 0.1,
            ..Default::default()
        }
    }

    fn hotspot(seed: u64) -> RwRegisterConfig {
        RwRegisterConfig {
            key_dist: RwKeyDist::Hotspot { hot_fraction: 0.01, hot_probability: 0.9 },
            keys: 1_000,
            ..faulty(seed)
        }
    }

    fn traced(cfg: &RwRegisterConfig) -> (String, sim::Trace) {
        let mut trace = sim::Trace::default();
        let mut buf = Vec::new();
        let stats = run(cfg, &GenOptions::default(), &mut buf, Some(&mut trace)).unwrap();
        let s = String::from_utf8(buf).unwrap();
        assert_eq!(stats.bytes, s.len() as u64);
        // Tracing must not perturb the output.
        assert_eq!(s, rw_register_string(cfg));
        (s, trace)
    }

    /// How often each key is accessed by the invocations of `h`.
    fn key_counts(h: &str) -> HashMap<u64, usize> {
        let mut n = HashMap::new();
        for op in parse(h).iter().filter(|o| o.ty == "invoke") {
            for m in &op.mops {
                *n.entry(m.key()).or_default() += 1;
            }
        }
        n
    }

    // ---- tests -----------------------------------------------------------

    /// Pins the exact bytes for one small seed: the output must stay
    /// reproducible across releases (benchmark files are cached by seed).
    /// This seed shows a nil read, a read of the transaction's own write
    /// (`[:r 0 1]` at index 4), and a transaction invoked later (index 1)
    /// serialized before one invoked earlier (index 0): index 6 reads key 0
    /// as 1, so the apply order was index 1, then index 0.
    #[test]
    fn golden_small_history() {
        let c = RwRegisterConfig {
            seed: 7,
            txns: 4,
            processes: 2,
            min_txn_len: 1,
            max_txn_len: 3,
            keys: 3,
            ..Default::default()
        };
        let expected = "\
{:type :invoke, :f :txn, :value [[:w 0 1] [:r 0 nil] [:r 2 nil]], :process 1, :time 278751, :index 0}
{:type :invoke, :f :txn, :value [[:w 0 2] [:w 1 1] [:r 1 nil]], :process 0, :time 700577, :index 1}
{:type :ok, :f :txn, :value [[:w 0 2] [:w 1 1] [:r 1 1]], :process 0, :time 1327781, :index 2}
{:type :invoke, :f :txn, :value [[:r 0 nil]], :process 0, :time 1982624, :index 3}
{:type :ok, :f :txn, :value [[:w 0 1] [:r 0 1] [:r 2 nil]], :process 1, :time 2704305, :index 4}
{:type :invoke, :f :txn, :value [[:r 2 nil] [:w 0 3]], :process 1, :time 2888053, :index 5}
{:type :ok, :f :txn, :value [[:r 0 1]], :process 0, :time 3882834, :index 6}
{:type :ok, :f :txn, :value [[:r 2 nil] [:w 0 3]], :process 1, :time 5122828, :index 7}
";
        assert_eq!(rw_register_string(&c), expected);
    }

    #[test]
    fn exact_format_of_lines() {
        let h = rw_register_string(&RwRegisterConfig { txns: 50, ..cfg(3) });
        let first = h.lines().next().unwrap();
        assert!(first.starts_with("{:type :invoke, :f :txn, :value [[:"), "{first}");
        assert!(first.ends_with(", :index 0}"), "{first}");
        // Every line round-trips through the strict parser; invocations never
        // carry read values.
        let ops = parse(&h);
        for op in &ops {
            if op.ty == "invoke" {
                assert!(op.mops.iter().all(|m| !matches!(m, PMop::Read(_, Some(_)))));
            }
        }
        // Completed reads show plain integers, or nil for unwritten keys.
        let h = rw_register_string(&RwRegisterConfig { txns: 500, read_fraction: 1.0, ..cfg(3) });
        assert!(parse(&h).iter().all(|o| o.mops.iter().all(|m| *m == PMop::Read(m.key(), None))));
        let ops = parse(&rw_register_string(&cfg(4)));
        let ok_reads = ops.iter().filter(|o| o.ty == "ok").flat_map(|o| &o.mops);
        let (some, none) = ok_reads.fold((0, 0), |(s, n), m| match m {
            PMop::Read(_, Some(_)) => (s + 1, n),
            PMop::Read(_, None) => (s, n + 1),
            PMop::Write(..) => (s, n),
        });
        // Zipf's cold tail is rarely written, so nil reads are common but
        // still the minority.
        assert!(some > 2 * none && none > 100, "{some} valued / {none} nil reads");
    }

    #[test]
    fn deterministic_per_seed() {
        for c in [cfg(42), faulty(42), hotspot(42), RwRegisterConfig { key_dist: RwKeyDist::Uniform, ..cfg(42) }] {
            let a = rw_register_string(&c);
            assert_eq!(a, rw_register_string(&c));
            assert_ne!(a, rw_register_string(&RwRegisterConfig { seed: 43, ..c.clone() }));
        }
    }

    /// PolySI's shape: 20 processes, exactly 15 micro-ops per transaction,
    /// half reads, keys `0..10_000`.
    #[test]
    fn default_is_polysi_shape() {
        let d = RwRegisterConfig::default();
        assert_eq!((d.processes, d.min_txn_len, d.max_txn_len, d.keys, d.txns), (20, 15, 15, 10_000, 10_000));
        assert_eq!(d.key_dist, RwKeyDist::Zipf(1.0));
        assert_eq!((d.read_fraction, d.fail_fraction, d.info_fraction), (0.5, 0.0, 0.0));
        let ops = parse(&rw_register_string(&d));
        check_shape(&ops, d.txns, d.processes, 15);
        assert!(ops.iter().all(|o| o.mops.len() == 15));
        assert!(ops.iter().all(|o| o.ty == "invoke" || o.ty == "ok"));
        assert!(ops.iter().all(|o| o.process < 20));
        assert_eq!(ops.iter().map(|o| o.process).collect::<HashSet<_>>().len(), 20);
        let mops: Vec<&PMop> = ops.iter().filter(|o| o.ty == "invoke").flat_map(|o| &o.mops).collect();
        let reads = mops.iter().filter(|m| matches!(m, PMop::Read(..))).count() as f64 / mops.len() as f64;
        assert!((0.49..0.51).contains(&reads), "read fraction {reads}");
        assert!(mops.iter().all(|m| m.key() < 10_000));
    }

    #[test]
    fn counts_indices_times_and_echoes() {
        for c in [
            cfg(1),
            faulty(2),
            hotspot(3),
            RwRegisterConfig { txns: 1, ..cfg(3) },
            RwRegisterConfig { processes: 50, ..faulty(4) },
        ] {
            let mut buf = Vec::new();
            let stats = write_rw_register(&c, &mut buf).unwrap();
            let h = String::from_utf8(buf).unwrap();
            let ops = parse(&h);
            check_shape(&ops, c.txns, c.processes, c.max_txn_len);
            assert_eq!(stats, GenStats { txns: c.txns, ops: 2 * c.txns, bytes: h.len() as u64, ..GenStats::default() });
            for t in pair(&ops) {
                let (inv, comp) = (&ops[t.invoke], &ops[t.complete]);
                assert!(inv.mops.len() >= c.min_txn_len);
                assert_eq!(inv.mops.len(), comp.mops.len());
                for (a, b) in inv.mops.iter().zip(&comp.mops) {
                    match (a, b) {
                        (PMop::Write(k1, v1), PMop::Write(k2, v2)) => assert_eq!((k1, v1), (k2, v2)),
                        (PMop::Read(k1, None), PMop::Read(k2, r)) => {
                            assert_eq!(k1, k2);
                            // Only :ok completions report what reads saw.
                            if comp.ty != "ok" {
                                assert_eq!(*r, None, "{comp:?}");
                            }
                        }
                        _ => panic!("mismatched mops {a:?} / {b:?}"),
                    }
                }
            }
        }
        assert_eq!(rw_register_string(&RwRegisterConfig { txns: 0, ..cfg(1) }), "");
    }

    #[test]
    fn write_values_unique_and_dense_per_key() {
        for c in [cfg(11), faulty(12), hotspot(13)] {
            let ops = parse(&rw_register_string(&c));
            let mut per_key: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
            for op in ops.iter().filter(|o| o.ty == "invoke") {
                for m in &op.mops {
                    if let PMop::Write(k, v) = m {
                        per_key.entry(*k).or_default().push(*v);
                    }
                }
            }
            assert!(!per_key.is_empty());
            // Values are handed out in invocation order: 1, 2, 3, ...
            for (k, vs) in per_key {
                assert_eq!(vs, (1..=vs.len() as u64).collect::<Vec<_>>(), "key {k}");
            }
        }
    }

    /// Checks read values without the hidden trace: every value an `:ok` read
    /// returns was written to that key by a transaction that did not fail,
    /// and a read after the transaction's own write of the key returns the
    /// latest such write.
    #[test]
    fn reads_are_internally_consistent_and_see_real_writes() {
        for c in [faulty(21), faulty(22), hotspot(23), RwRegisterConfig { keys: 2, max_txn_len: 15, ..faulty(24) }] {
            let ops = parse(&rw_register_string(&c));
            let txns = pair(&ops);
            let mut maybe_written: HashSet<(u64, u64)> = HashSet::new();
            for t in txns.iter().filter(|t| ops[t.complete].ty != "fail") {
                for m in &ops[t.invoke].mops {
                    if let PMop::Write(k, v) = m {
                        maybe_written.insert((*k, *v));
                    }
                }
            }
            let (mut own_reads, mut foreign_reads) = (0, 0);
            for op in ops.iter().filter(|o| o.ty == "ok") {
                let mut own: HashMap<u64, u64> = HashMap::new();
                for m in &op.mops {
                    match *m {
                        PMop::Write(k, v) => {
                            own.insert(k, v);
                        }
                        PMop::Read(k, r) => {
                            if let Some(&mine) = own.get(&k) {
                                assert_eq!(r, Some(mine), "read of {k} misses own write {mine}: {op:?}");
                                own_reads += 1;
                            } else if let Some(v) = r {
                                assert!(maybe_written.contains(&(k, v)), "key {k}: {v} never written");
                                foreign_reads += 1;
                            }
                        }
                    }
                }
            }
            assert!(own_reads > 100 && foreign_reads > 1_000, "{own_reads} own / {foreign_reads} other reads");
        }
    }

    /// Replays the hidden apply order and proves strict serializability:
    /// re-executing the applied transactions in that order reproduces every
    /// `:ok` read, includes every `:ok` and no `:fail` transaction, and the
    /// order extends real time (a transaction completed before another was
    /// invoked is applied before it).
    #[test]
    fn strict_serializable_by_replay() {
        let configs = [
            cfg(51),
            faulty(52),
            faulty(53),
            hotspot(54),
            RwRegisterConfig { processes: 50, ..faulty(55) },
            RwRegisterConfig { keys: 1, ..faulty(56) },
            RwRegisterConfig { processes: 1, ..cfg(57) },
            RwRegisterConfig { keys: 1 << 40, key_dist: RwKeyDist::Zipf(1.2), ..faulty(58) },
        ];
        for c in configs {
            let (h, trace) = traced(&c);
            let ops = parse(&h);
            let txns = pair(&ops);
            let by_invoke: HashMap<usize, &testkit::Txn> = txns.iter().map(|t| (t.invoke, t)).collect();

            // Replay in apply order against a fresh store.
            let mut store: HashMap<u64, u64> = HashMap::new();
            let mut pos: HashMap<usize, usize> = HashMap::new();
            let mut reads_checked = 0;
            for (p, &inv) in trace.applied.iter().enumerate() {
                let t = by_invoke[&(inv as usize)];
                assert!(pos.insert(t.invoke, p).is_none(), "applied twice");
                let comp = &ops[t.complete];
                assert_ne!(comp.ty, "fail", "a :fail txn took effect");
                for (i, m) in ops[t.invoke].mops.iter().enumerate() {
                    match *m {
                        PMop::Write(k, v) => {
                            store.insert(k, v);
                        }
                        PMop::Read(k, _) => {
                            if comp.ty == "ok" {
                                let now = store.get(&k).copied();
                                assert_eq!(comp.mops[i], PMop::Read(k, now), "seed {} txn at {}", c.seed, t.invoke);
                                reads_checked += 1;
                            }
                        }
                    }
                }
            }
            assert!(reads_checked > c.txns, "{reads_checked}");
            let (mut infos, mut infos_applied) = (0, 0);
            for t in &txns {
                match ops[t.complete].ty.as_str() {
                    "ok" => assert!(pos.contains_key(&t.invoke), "ok txn at {} never applied", t.invoke),
                    "info" => {
                        infos += 1;
                        infos_applied += pos.contains_key(&t.invoke) as usize;
                    }
                    _ => assert!(!pos.contains_key(&t.invoke)),
                }
            }
            if infos > 50 {
                assert!(infos_applied > 0 && infos_applied < infos, "info txns should sometimes apply");
            }
            // Real time: each applied txn is after every applied txn that
            // completed before its invocation.
            assert!(check_realtime(&ops, &txns, &pos) > c.txns / 2);
        }
    }

    #[test]
    fn fail_and_info_semantics() {
        let c = RwRegisterConfig { fail_fraction: 0.3, info_fraction: 0.2, ..faulty(41) };
        let (h, trace) = traced(&c);
        let ops = parse(&h);
        let txns = pair(&ops);
        let count = |ty: &str| ops.iter().filter(|o| o.ty == ty).count() as f64 / c.txns as f64;
        assert!((0.27..0.33).contains(&count("fail")), "{}", count("fail"));
        assert!((0.17..0.23).contains(&count("info")), "{}", count("info"));
        let infos = check_info_process_ids(&ops, c.processes);
        assert!(infos > c.txns / 6);
        // The hidden apply order holds exactly the :ok transactions and
        // about half the :info ones.
        let applied: HashSet<usize> = trace.applied.iter().map(|&i| i as usize).collect();
        let (mut info_applied, mut info_total) = (0usize, 0usize);
        for t in &txns {
            match ops[t.complete].ty.as_str() {
                "ok" => assert!(applied.contains(&t.invoke)),
                "fail" => assert!(!applied.contains(&t.invoke)),
                _ => {
                    info_total += 1;
                    info_applied += applied.contains(&t.invoke) as usize;
                }
            }
        }
        let share = info_applied as f64 / info_total as f64;
        assert!((0.4..0.6).contains(&share), "{share} of :info txns applied");
        // Failed writes are never observed by anyone.
        let failed: HashSet<(u64, u64)> = txns
            .iter()
            .filter(|t| ops[t.complete].ty == "fail")
            .flat_map(|t| &ops[t.invoke].mops)
            .filter_map(|m| match *m {
                PMop::Write(k, v) => Some((k, v)),
                _ => None,
            })
            .collect();
        assert!(failed.len() > 500);
        for op in ops.iter().filter(|o| o.ty == "ok") {
            for m in &op.mops {
                if let PMop::Read(k, Some(v)) = *m {
                    assert!(!failed.contains(&(k, v)), "failed write {k}={v} visible");
                }
            }
        }
        // Without faults no :info appears and ids stay 0..processes.
        let ops = parse(&rw_register_string(&faulty_free(41)));
        assert!(ops.iter().all(|o| (o.ty == "invoke" || o.ty == "ok") && o.process < c.processes as u64));
    }

    fn faulty_free(seed: u64) -> RwRegisterConfig {
        RwRegisterConfig { fail_fraction: 0.0, info_fraction: 0.0, ..faulty(seed) }
    }

    /// Zipf concentrates accesses: the hottest key is key 0 and is accessed
    /// far more often than the median key, unlike under the uniform
    /// distribution.
    #[test]
    fn zipf_skew() {
        let skew = |d: RwKeyDist| {
            let c = RwRegisterConfig { key_dist: d, ..cfg(71) };
            let n = key_counts(&rw_register_string(&c));
            let mut counts: Vec<usize> = (0..c.keys as u64).map(|k| n.get(&k).copied().unwrap_or(0)).collect();
            let hottest = (0..c.keys).max_by_key(|&k| counts[k]).unwrap();
            let total: usize = counts.iter().sum();
            counts.sort_unstable();
            let (top, median) = (counts[c.keys - 1], counts[c.keys / 2]);
            (hottest, top as f64 / total as f64, top as f64 / median.max(1) as f64)
        };
        // Zipf(1) over 10k keys: P(key 0) = 1 / H_10000 ~ 0.102; the median
        // key (rank ~5000) expects under one access in 45k.
        let (hottest, top_share, ratio) = skew(RwKeyDist::Zipf(1.0));
        assert_eq!(hottest, 0);
        assert!((0.095..0.11).contains(&top_share), "top share {top_share}");
        assert!(ratio > 1_000.0, "top / median {ratio}");
        // Uniform over 10k keys: 4.5 expected accesses per key.
        let (_, top_share, ratio) = skew(RwKeyDist::Uniform);
        assert!(top_share < 0.001 && ratio < 5.0, "uniform top share {top_share}, ratio {ratio}");
        // A milder exponent is less skewed.
        let (hottest, top_share, _) = skew(RwKeyDist::Zipf(0.5));
        assert_eq!(hottest, 0);
        assert!(top_share < 0.01, "{top_share}");
    }

    #[test]
    fn hotspot_concentrates_on_the_hot_set() {
        let c = RwRegisterConfig {
            key_dist: RwKeyDist::Hotspot { hot_fraction: 0.05, hot_probability: 0.8 },
            keys: 2_000,
            ..cfg(72)
        };
        let n = key_counts(&rw_register_string(&c));
        let total: usize = n.values().sum();
        let hot: usize = n.iter().filter(|(&k, _)| k < 100).map(|(_, &c)| c).sum();
        let share = hot as f64 / total as f64;
        assert!((0.79..0.81).contains(&share), "hot share {share}");
        assert_eq!(n.keys().filter(|&&k| k < 100).count(), 100, "every hot key is used");
        assert!(n.keys().all(|&k| k < 2_000));
        assert!(n.len() > 1_900, "cold keys are used too: {}", n.len());
        // Everything hot: plain uniform over all keys.
        let c = RwRegisterConfig {
            key_dist: RwKeyDist::Hotspot { hot_fraction: 1.0, hot_probability: 0.0 },
            keys: 50,
            ..cfg(73)
        };
        let n = key_counts(&rw_register_string(&c));
        assert_eq!(n.len(), 50);
        assert!(n.keys().all(|&k| k < 50));
        // The hot set is hot_fraction of the keys, despite float rounding.
        for (f, keys, hot) in [(0.07, 100, 7), (0.001, 100, 1), (0.5, 3, 2), (1.0, 9, 9)] {
            match RwKeyPicker::new(RwKeyDist::Hotspot { hot_fraction: f, hot_probability: 0.5 }, keys) {
                RwKeyPicker::Hotspot { hot: h, cold, .. } => assert_eq!((h, cold), (hot, keys - hot), "{f} of {keys}"),
                _ => unreachable!(),
            }
        }
    }

    #[test]
    fn huge_key_spaces_stay_sparse() {
        let c = RwRegisterConfig { keys: 1 << 40, key_dist: RwKeyDist::Uniform, txns: 2_000, ..cfg(81) };
        let (h, trace) = traced(&c);
        let ops = parse(&h);
        let written: HashSet<u64> = ops
            .iter()
            .filter(|o| o.ty == "invoke")
            .flat_map(|o| &o.mops)
            .filter_map(|m| match *m {
                PMop::Write(k, _) => Some(k),
                _ => None,
            })
            .collect();
        // Uniform keys from 2^40 barely collide; the store holds only keys
        // that were written.
        assert!(written.len() > 14_000, "{}", written.len());
        assert!(trace.max_live_keys <= written.len(), "{} > {}", trace.max_live_keys, written.len());
        assert!(ops.iter().flat_map(|o| &o.mops).any(|m| m.key() > 1 << 39));
        // A dense key space is allocated once, up front.
        let (_, trace) = traced(&RwRegisterConfig { txns: 200, ..cfg(82) });
        assert_eq!(trace.max_live_keys, 10_000);
        assert!(trace.max_in_flight <= 20);
    }

    #[test]
    fn invalid_configs_are_rejected() {
        let bad = [
            RwRegisterConfig { processes: 0, ..cfg(0) },
            RwRegisterConfig { min_txn_len: 0, ..cfg(0) },
            RwRegisterConfig { min_txn_len: 3, max_txn_len: 2, ..cfg(0) },
            RwRegisterConfig { keys: 0, ..cfg(0) },
            RwRegisterConfig { read_fraction: -0.1, ..cfg(0) },
            RwRegisterConfig { key_dist: RwKeyDist::Zipf(-1.0), ..cfg(0) },
            RwRegisterConfig { key_dist: RwKeyDist::Zipf(f64::NAN), ..cfg(0) },
            RwRegisterConfig { key_dist: RwKeyDist::Zipf(f64::INFINITY), ..cfg(0) },
            RwRegisterConfig { key_dist: RwKeyDist::Hotspot { hot_fraction: 0.0, hot_probability: 0.5 }, ..cfg(0) },
            RwRegisterConfig { key_dist: RwKeyDist::Hotspot { hot_fraction: 1.5, hot_probability: 0.5 }, ..cfg(0) },
            RwRegisterConfig { key_dist: RwKeyDist::Hotspot { hot_fraction: 0.1, hot_probability: 2.0 }, ..cfg(0) },
            RwRegisterConfig { fail_fraction: 0.6, info_fraction: 0.6, ..cfg(0) },
            RwRegisterConfig { info_fraction: f64::NAN, ..cfg(0) },
        ];
        for c in bad {
            assert!(c.validate().is_err(), "{c:?}");
            let err = write_rw_register(&c, Vec::new()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        }
        assert!(RwRegisterConfig::default().validate().is_ok());
        assert!(RwRegisterConfig { key_dist: RwKeyDist::Zipf(0.0), ..cfg(0) }.validate().is_ok());
    }

    #[test]
    fn writer_errors_propagate() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = write_rw_register(&cfg(1), Broken).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
    }
}
