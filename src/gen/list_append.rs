//! Generator of strict-serializable Jepsen list-append histories.
//!
//! # Workload
//!
//! The workload follows Elle's `elle.txn/wr-txns` generator: every transaction
//! has `min_txn_len..=max_txn_len` micro-operations, each either a read
//! `[:r k nil]` or an append `[:append k v]` of key `k` drawn from a window of
//! `active_keys` keys (uniformly, or with Elle's exponential distribution).
//! Append values are `1, 2, 3, ...` per key, so every appended value is unique
//! per key. Once a key has been handed `max_writes_per_key` appends it is
//! retired and its slot in the window is taken by a fresh key (the next unused
//! integer), exactly as Elle's `fresh-key` does. Values are allocated when a
//! transaction is generated, so appends of failed transactions use up values
//! too (as in Jepsen, where the generator runs before the client).
//!
//! # Execution
//!
//! `processes` simulated clients share one in-memory multi-version list store.
//! A discrete-event loop over logical time (nanoseconds) drives them: every
//! process repeatedly
//!
//! 1. invokes a transaction (emitting `:invoke`),
//! 2. after a random delay *applies* it atomically against the store, in one
//!    event that touches no other transaction (reads observe every append
//!    applied before, including the transaction's own earlier appends),
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
//! in output order and strictly increasing `:time`:
//!
//! ```text
//! {:type :invoke, :f :txn, :value [[:append 11 1] [:r 11 nil]], :process 10, :time 14532933, :index 0}
//! {:type :ok, :f :txn, :value [[:append 11 1] [:r 11 [1]]], :process 10, :time 31076248, :index 2}
//! ```
//!
//! Memory stays bounded: ops are written as they are emitted, only in-flight
//! transactions are held, and a retired key's list is dropped as soon as no
//! in-flight transaction mentions it.

use std::io::{self, Write};

use super::inject::{Inject, InjectWorkload};
use super::out::push_u64;
use super::rng::Rng;
use super::sim::{self, invalid, GenOptions, IntMap, MvStore, Scripted, SimParams, Workload};
use super::txn::{draw_txn, Draw, Pattern, Shape, Window};

pub use super::config::{KeyDist, ListAppendConfig};
pub use super::sim::GenStats;

/// Generates a list-append history per `cfg` and streams it to `out`.
///
/// Output is buffered internally (in ~64 KiB chunks, always whole lines), so
/// an unbuffered `File` or `Stdout` is fine; wrapping it in a `BufWriter`
/// is harmless but only adds a copy. `out` is flushed before returning.
/// Fails with `InvalidInput` if [`ListAppendConfig::validate`] rejects `cfg`,
/// or with the writer's error.
pub fn write_list_append<W: Write>(cfg: &ListAppendConfig, out: W) -> io::Result<GenStats> {
    run(cfg, &GenOptions::default(), out, None)
}

/// Like [`write_list_append`], with an isolation level, injected anomalies
/// and sessions per [`GenOptions`]. Appends conflict with each other: under
/// snapshot isolation and read committed, a transaction appending to a key
/// another transaction committed an append to since its read point aborts
/// (first committer wins), so committed reads are always prefixes of one
/// list per key. Fails with `InvalidInput` for an invalid config or options
/// (dbcop output is not available for list-append).
pub fn write_list_append_with<W: Write>(cfg: &ListAppendConfig, opts: &GenOptions, out: W) -> io::Result<GenStats> {
    run(cfg, opts, out, None)
}

/// Like [`list_append_string`], with [`GenOptions`].
///
/// # Panics
///
/// If `cfg` or `opts` is invalid.
pub fn list_append_string_with(cfg: &ListAppendConfig, opts: &GenOptions) -> String {
    sim::to_string("list_append_string_with", |buf| write_list_append_with(cfg, opts, buf))
}

/// Generates a list-append history per `cfg` into a `String` (for tests and
/// small examples).
///
/// # Panics
///
/// If `cfg` is invalid (see [`ListAppendConfig::validate`]).
pub fn list_append_string(cfg: &ListAppendConfig) -> String {
    sim::to_string("list_append_string", |buf| write_list_append(cfg, buf))
}

// ---------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------

type KeyMap = IntMap<KeyState>;

/// The store's view of one key.
struct KeyState {
    /// Values appended by applied transactions, in apply order, pre-rendered
    /// as EDN (`"3 1 2"`): reads print a prefix of it with one copy instead
    /// of formatting every element again.
    text: Vec<u8>,
    /// `ends[i]` is the length of `text` rendering the first `i + 1` values.
    ends: Vec<u32>,
    /// Micro-ops of in-flight (invoked, not completed) transactions on this key.
    refs: u32,
    /// No longer in the window; dropped once `refs` reaches 0.
    retired: bool,
}

impl KeyState {
    fn new() -> Self {
        KeyState { text: Vec::new(), ends: Vec::new(), refs: 0, retired: false }
    }

    /// Appends `v` to the key's list.
    #[inline]
    fn push(&mut self, v: u64) {
        if !self.text.is_empty() {
            self.text.push(b' ');
        }
        push_u64(&mut self.text, v);
        self.ends.push(u32::try_from(self.text.len()).expect("list text under 4 GiB"));
    }

    /// The rendering of the first `len` values.
    #[inline]
    fn prefix(&self, len: usize) -> &[u8] {
        match len {
            0 => &[],
            n => &self.text[..self.ends[n - 1] as usize],
        }
    }
}

#[derive(Clone, Copy)]
enum MopKind {
    Append,
    Read,
    /// A scripted read whose observed list is `lits[val]`.
    Lit,
}

/// A micro-op of an in-flight transaction. For appends `val` is the value;
/// for reads it is the length of the list observed at apply time (lists are
/// append-only, so the observed value is that prefix of the key's list).
#[derive(Clone, Copy)]
struct Mop {
    kind: MopKind,
    key: u64,
    val: u64,
}

/// The list store and the key window, driven by [`sim::run`].
struct Gen<'a> {
    cfg: &'a ListAppendConfig,
    window: Window,
    keys: KeyMap,
    /// Committed versions (list lengths), for the multi-version levels.
    mv: MvStore,
    /// Observed lists of scripted reads.
    lits: Vec<Vec<u64>>,
}

impl Gen<'_> {
    /// A reserved key: the next unused integer, never put in the window.
    fn fresh(&mut self) -> u64 {
        self.window.fresh()
    }

    fn lit(&mut self, key: u64, vs: &[u64]) -> Mop {
        self.lits.push(vs.to_vec());
        Mop { kind: MopKind::Lit, key, val: self.lits.len() as u64 - 1 }
    }
}

/// The window of list keys as [`draw_txn`] sees it: every micro-op takes a
/// reference on its key's state; a retired key's replacement gets a state.
struct ListDraw<'a> {
    window: &'a mut Window,
    keys: &'a mut KeyMap,
    mops: &'a mut Vec<Mop>,
}

impl Draw for ListDraw<'_> {
    type Slot = usize;

    #[inline]
    fn pick(&mut self, rng: &mut Rng) -> usize {
        self.window.pick(rng)
    }

    #[inline]
    fn key(&self, pos: usize) -> u64 {
        self.window.key(pos)
    }

    #[inline]
    fn read(&mut self, pos: usize) {
        let key = self.window.key(pos);
        self.keys.get_mut(&key).expect("window keys are live").refs += 1;
        self.mops.push(Mop { kind: MopKind::Read, key, val: 0 });
    }

    #[inline]
    fn write(&mut self, pos: usize) {
        let a = self.window.append(pos);
        let ks = self.keys.get_mut(&a.key).expect("window keys are live");
        ks.refs += 1;
        self.mops.push(Mop { kind: MopKind::Append, key: a.key, val: a.val });
        if let Some(fresh) = a.replaced_by {
            ks.retired = true;
            self.keys.insert(fresh, KeyState::new());
        }
    }
}

fn app(key: u64, val: u64) -> Mop {
    Mop { kind: MopKind::Append, key, val }
}

fn txn(mops: Vec<Mop>) -> Scripted<Mop> {
    Scripted { mops, fail: false, wait_prev: false }
}

impl Workload for Gen<'_> {
    type Mop = Mop;

    /// Fills `mops` with a fresh transaction, allocating append values and
    /// retiring keys that reach `max_writes_per_key`.
    fn gen_txn(&mut self, rng: &mut Rng, mops: &mut Vec<Mop>) {
        mops.clear();
        let shape = Shape {
            min_len: self.cfg.min_txn_len,
            max_len: self.cfg.max_txn_len,
            read_fraction: self.cfg.read_fraction,
        };
        let mut d = ListDraw { window: &mut self.window, keys: &mut self.keys, mops };
        draw_txn(rng, &shape, Pattern::Mixed, &mut d);
    }

    /// Appends extend lists; reads record the length of the list they observe.
    fn apply(&mut self, mops: &mut [Mop]) {
        for m in mops.iter_mut() {
            let ks = self.keys.get_mut(&m.key).expect("in-flight keys are live");
            match m.kind {
                MopKind::Append => ks.push(m.val),
                MopKind::Read | MopKind::Lit => m.val = ks.ends.len() as u64,
            }
        }
    }

    /// Drops the completed transaction's references, freeing retired keys
    /// nobody mentions any more.
    fn release(&mut self, mops: &[Mop]) {
        for m in mops {
            let ks = self.keys.get_mut(&m.key).expect("in-flight keys are live");
            ks.refs -= 1;
            if ks.refs == 0 && ks.retired {
                self.keys.remove(&m.key);
                self.mv.remove(m.key);
            }
        }
    }

    /// Reads print the prefix of the key's list they saw.
    fn push_mops(&self, buf: &mut Vec<u8>, mops: &[Mop], observed: bool) {
        for (i, m) in mops.iter().enumerate() {
            if i > 0 {
                buf.push(b' ');
            }
            match m.kind {
                MopKind::Append => {
                    buf.extend_from_slice(b"[:append ");
                    push_u64(buf, m.key);
                    buf.push(b' ');
                    push_u64(buf, m.val);
                    buf.push(b']');
                }
                MopKind::Lit => {
                    buf.extend_from_slice(b"[:r ");
                    push_u64(buf, m.key);
                    if observed {
                        buf.extend_from_slice(b" [");
                        for (i, v) in self.lits[m.val as usize].iter().enumerate() {
                            if i > 0 {
                                buf.push(b' ');
                            }
                            push_u64(buf, *v);
                        }
                        buf.extend_from_slice(b"]]");
                    } else {
                        buf.extend_from_slice(b" nil]");
                    }
                }
                MopKind::Read => {
                    buf.extend_from_slice(b"[:r ");
                    push_u64(buf, m.key);
                    if observed {
                        buf.extend_from_slice(b" [");
                        buf.extend_from_slice(self.keys[&m.key].prefix(m.val as usize));
                        buf.extend_from_slice(b"]]");
                    } else {
                        buf.extend_from_slice(b" nil]");
                    }
                }
            }
        }
    }

    fn live_keys(&self) -> usize {
        self.keys.len()
    }

    fn access(&self, m: &Mop) -> (u64, bool) {
        (m.key, matches!(m.kind, MopKind::Append))
    }

    /// A list's state is its length.
    fn write_state(&self, _m: &Mop, s: u64) -> u64 {
        s + 1
    }

    /// A read records the length it saw; committed reads are prefixes of the
    /// key's list (first committer wins guarantees the transaction's own
    /// appends land right after what it read).
    fn observe(&self, m: &mut Mop, s: u64) {
        m.val = s;
    }

    fn install(&mut self, m: &Mop) {
        self.keys.get_mut(&m.key).expect("in-flight keys are live").push(m.val);
    }

    fn mv(&mut self) -> &mut MvStore {
        &mut self.mv
    }

    fn scenario(&mut self, kind: Inject, out: &mut Vec<Scripted<Mop>>) {
        let a = self.fresh();
        let b = if kind.keys() > 1 { self.fresh() } else { a };
        match kind {
            Inject::G0 => {
                out.push(txn(vec![app(a, 1), app(b, 1)]));
                out.push(txn(vec![app(a, 2), app(b, 2)]));
                let r = vec![self.lit(a, &[1, 2]), self.lit(b, &[2, 1])];
                out.push(txn(r));
            }
            Inject::G1a => {
                out.push(Scripted { mops: vec![app(a, 1)], fail: true, wait_prev: false });
                let r = vec![self.lit(a, &[1])];
                out.push(txn(r));
            }
            Inject::G1b => {
                out.push(txn(vec![app(a, 1), app(a, 2)]));
                let r = vec![self.lit(a, &[1])];
                out.push(txn(r));
            }
            Inject::G1c => {
                let t1 = vec![app(a, 1), self.lit(b, &[1])];
                let t2 = vec![app(b, 1), self.lit(a, &[1])];
                out.extend([txn(t1), txn(t2)]);
            }
            Inject::LostUpdate => {
                let t1 = vec![self.lit(a, &[]), app(a, 1)];
                let t2 = vec![self.lit(a, &[]), app(a, 2)];
                let t3 = vec![self.lit(a, &[1, 2])];
                out.extend([txn(t1), txn(t2), txn(t3)]);
            }
            // The predicate scenarios are closed-predicate's (refused up
            // front); here they plant their item counterparts.
            Inject::WriteSkew | Inject::PredicateWriteSkew => {
                let t1 = vec![self.lit(a, &[]), self.lit(b, &[]), app(a, 1)];
                let t2 = vec![self.lit(a, &[]), self.lit(b, &[]), app(b, 1)];
                let t3 = vec![self.lit(a, &[1]), self.lit(b, &[1])];
                out.extend([txn(t1), txn(t2), txn(t3)]);
            }
            Inject::LongFork => {
                let t3 = vec![self.lit(a, &[1]), self.lit(b, &[])];
                let t4 = vec![self.lit(a, &[]), self.lit(b, &[1])];
                out.extend([txn(vec![app(a, 1)]), txn(vec![app(b, 1)]), txn(t3), txn(t4)]);
            }
            Inject::ReadSkew => {
                let t2 = vec![self.lit(a, &[1]), self.lit(b, &[])];
                let t3 = vec![self.lit(b, &[1])];
                out.extend([txn(vec![app(a, 1), app(b, 1)]), txn(t2), txn(t3)]);
            }
            Inject::Internal => {
                let t = vec![app(a, 1), self.lit(a, &[])];
                out.push(txn(t));
            }
            Inject::DuplicateElements => {
                let r = vec![self.lit(a, &[1, 1])];
                out.extend([txn(vec![app(a, 1)]), txn(r)]);
            }
            Inject::GarbageRead | Inject::PredicateReadMiss => {
                let r = vec![self.lit(a, &[1])];
                out.push(txn(r));
            }
            Inject::StaleRealtimeRead => {
                let t1 = vec![app(a, 1), self.lit(a, &[1])];
                let t2 = vec![self.lit(a, &[])];
                out.push(txn(t1));
                out.push(Scripted { mops: t2, fail: false, wait_prev: true });
            }
            // The weak-level scenarios: list versions of the register
            // ones (an append is a write; a read of `[.. e]` reads from the
            // appender of `e` and orders the appenders of its elements).
            Inject::NonMonotonicRead => {
                let t2 = vec![self.lit(a, &[1]), app(a, 2), app(b, 1)];
                let t3 = vec![self.lit(b, &[1]), self.lit(a, &[1])];
                out.extend([txn(vec![app(a, 1)]), txn(t2), txn(t3)]);
            }
            // The "-ao" variants: the list read orders the two writers
            // (no causal path), and a forced edge orders them back.
            Inject::NonMonotonicReadAo => {
                let t3 = vec![self.lit(b, &[1, 2]), self.lit(a, &[1])];
                out.extend([txn(vec![app(a, 1), app(b, 1)]), txn(vec![app(a, 2), app(b, 2)]), txn(t3)]);
            }
            Inject::FracturedRead => {
                let t2 = vec![self.lit(b, &[]), self.lit(a, &[1])];
                out.extend([txn(vec![app(a, 1), app(b, 1)]), txn(t2)]);
            }
            Inject::FracturedReadAo => {
                let t3 = vec![self.lit(a, &[1]), self.lit(b, &[1, 2])];
                out.extend([txn(vec![app(a, 1), app(b, 1)]), txn(vec![app(a, 2), app(b, 2)]), txn(t3)]);
            }
            Inject::NonRepeatableRead => {
                let t3 = vec![self.lit(a, &[1]), self.lit(a, &[1, 2])];
                out.extend([txn(vec![app(a, 1)]), txn(vec![app(a, 2)]), txn(t3)]);
            }
            Inject::CausalityViolation => {
                let t2 = vec![self.lit(a, &[1]), app(b, 1)];
                let t3 = vec![self.lit(b, &[1]), self.lit(a, &[])];
                out.extend([txn(vec![app(a, 1)]), txn(t2), txn(t3)]);
            }
            Inject::FutureRead => {
                let t = vec![self.lit(a, &[1]), app(a, 1)];
                out.push(txn(t));
            }
            Inject::NotMyOwnWrite => {
                let t2 = vec![app(a, 2), self.lit(a, &[1])];
                out.extend([txn(vec![app(a, 1)]), txn(t2)]);
            }
            Inject::NotMyLastWrite => {
                let t = vec![app(a, 1), app(a, 2), self.lit(a, &[1])];
                out.push(txn(t));
            }
        }
    }

    /// Not used: dbcop output is rejected for list-append.
    fn dbcop_event(&self, m: &Mop, _observed: bool) -> (bool, u64, u64) {
        (matches!(m.kind, MopKind::Append), m.key, 0)
    }
}

/// Validates `cfg` and runs the simulation (with optional test tracing).
fn run<W: Write>(
    cfg: &ListAppendConfig,
    opts: &GenOptions,
    out: W,
    trace: Option<&mut sim::Trace>,
) -> io::Result<GenStats> {
    cfg.validate().map_err(invalid)?;
    opts.validate(InjectWorkload::ListAppend, cfg.txns, cfg.processes, cfg.info_fraction).map_err(invalid)?;
    let mut g = Gen {
        cfg,
        window: Window::new(cfg.key_dist, cfg.active_keys, cfg.max_writes_per_key),
        keys: KeyMap::default(),
        mv: MvStore::default(),
        lits: Vec::new(),
    };
    for k in 0..cfg.active_keys as u64 {
        g.keys.insert(k, KeyState::new());
    }
    let p = SimParams {
        seed: cfg.seed,
        txns: cfg.txns,
        processes: cfg.processes,
        max_txn_len: cfg.max_txn_len,
        fail_fraction: cfg.fail_fraction,
        info_fraction: cfg.info_fraction,
    };
    sim::run(&p, opts, &mut g, out, 0, trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashMap as StdMap, HashSet};

    use crate::gen::testkit::{self, check_info_process_ids, check_realtime, check_shape, pair, Cur, Txn};

    // ---- micro-ops of the format we emit ----------------------------------

    #[derive(Clone, Debug, PartialEq)]
    enum PMop {
        Append(u64, u64),
        Read(u64, Option<Vec<u64>>),
    }

    type POp = testkit::POp<PMop>;

    fn parse_mop(c: &mut Cur) -> PMop {
        if c.eat("append ") {
            let k = c.num();
            c.expect(" ");
            return PMop::Append(k, c.num());
        }
        c.expect("r ");
        let k = c.num();
        c.expect(" ");
        if c.eat("nil") {
            return PMop::Read(k, None);
        }
        c.expect("[");
        let mut vs = Vec::new();
        while !c.eat("]") {
            if !vs.is_empty() {
                c.expect(" ");
            }
            vs.push(c.num());
        }
        PMop::Read(k, Some(vs))
    }

    fn parse(h: &str) -> Vec<POp> {
        testkit::parse(h, parse_mop)
    }

    fn cfg(seed: u64) -> ListAppendConfig {
        ListAppendConfig { seed, txns: 3_000, ..Default::default() }
    }

    fn faulty(seed: u64) -> ListAppendConfig {
        ListAppendConfig {
            seed,
            txns: 3_000,
            processes: 7,
            max_writes_per_key: 20,
            active_keys: 8,
            fail_fraction: 0.1,
            info_fraction: 0.1,
            ..Default::default()
        }
    }

    fn traced(cfg: &ListAppendConfig) -> (String, sim::Trace) {
        let mut trace = sim::Trace::default();
        let mut buf = Vec::new();
        let stats = run(cfg, &GenOptions::default(), &mut buf, Some(&mut trace)).unwrap();
        let s = String::from_utf8(buf).unwrap();
        assert_eq!(stats.bytes, s.len() as u64);
        // Tracing must not perturb the output.
        assert_eq!(s, list_append_string(cfg));
        (s, trace)
    }

    // ---- tests -----------------------------------------------------------

    #[test]
    fn exact_format_of_lines() {
        let h = list_append_string(&ListAppendConfig { txns: 50, ..cfg(3) });
        let first = h.lines().next().unwrap();
        assert!(first.starts_with("{:type :invoke, :f :txn, :value [["), "{first}");
        assert!(first.ends_with(", :index 0}"), "{first}");
        // Every line round-trips through the strict parser.
        for op in parse(&h) {
            if op.ty == "invoke" {
                assert!(op.mops.iter().all(|m| !matches!(m, PMop::Read(_, Some(_)))));
            }
        }
        // Reads of never-appended keys show an empty list, not nil.
        let h = list_append_string(&ListAppendConfig { txns: 200, read_fraction: 1.0, ..cfg(3) });
        assert!(h.contains(" []]"));
        assert!(parse(&h)
            .iter()
            .filter(|o| o.ty == "ok")
            .all(|o| o.mops.iter().all(|m| matches!(m, PMop::Read(_, Some(_))))));
    }

    /// Pins the exact bytes for one small seed: the output must stay
    /// reproducible across releases (benchmark files are cached by seed).
    #[test]
    fn golden_small_history() {
        let c =
            ListAppendConfig { seed: 1, txns: 3, processes: 2, max_txn_len: 3, active_keys: 3, ..Default::default() };
        let expected = "\
{:type :invoke, :f :txn, :value [[:append 1 1] [:r 1 nil]], :process 1, :time 520437, :index 0}
{:type :invoke, :f :txn, :value [[:append 2 1] [:append 2 2]], :process 0, :time 702922, :index 1}
{:type :ok, :f :txn, :value [[:append 1 1] [:r 1 [1]]], :process 1, :time 2426178, :index 2}
{:type :ok, :f :txn, :value [[:append 2 1] [:append 2 2]], :process 0, :time 2586284, :index 3}
{:type :invoke, :f :txn, :value [[:append 2 3] [:r 1 nil]], :process 0, :time 2659420, :index 4}
{:type :ok, :f :txn, :value [[:append 2 3] [:r 1 [1]]], :process 0, :time 5150854, :index 5}
";
        assert_eq!(list_append_string(&c), expected);
    }

    #[test]
    fn deterministic_per_seed() {
        let a = list_append_string(&cfg(42));
        let b = list_append_string(&cfg(42));
        let c = list_append_string(&cfg(43));
        assert_eq!(a, b);
        assert_ne!(a, c);
        let fa = list_append_string(&faulty(5));
        assert_eq!(fa, list_append_string(&faulty(5)));
    }

    #[test]
    fn counts_indices_and_times() {
        for c in
            [cfg(1), faulty(2), ListAppendConfig { txns: 1, ..cfg(3) }, ListAppendConfig { processes: 50, ..cfg(4) }]
        {
            let mut buf = Vec::new();
            let stats = write_list_append(&c, &mut buf).unwrap();
            let h = String::from_utf8(buf).unwrap();
            check_shape(&parse(&h), c.txns, c.processes, c.max_txn_len);
            assert_eq!(stats, GenStats { txns: c.txns, ops: 2 * c.txns, bytes: h.len() as u64, ..GenStats::default() });
        }
        assert_eq!(list_append_string(&ListAppendConfig { txns: 0, ..cfg(1) }), "");
    }

    #[test]
    fn processes_alternate_and_completions_echo_invocations() {
        for c in [cfg(7), faulty(8), ListAppendConfig { processes: 50, ..faulty(9) }] {
            let ops = parse(&list_append_string(&c));
            let txns = pair(&ops);
            assert_eq!(txns.len(), c.txns);
            check_shape(&ops, c.txns, c.processes, c.max_txn_len);
            for t in &txns {
                let (inv, comp) = (&ops[t.invoke], &ops[t.complete]);
                assert_eq!(inv.mops.len(), comp.mops.len());
                for (a, b) in inv.mops.iter().zip(&comp.mops) {
                    match (a, b) {
                        (PMop::Append(k1, v1), PMop::Append(k2, v2)) => {
                            assert_eq!((k1, v1), (k2, v2))
                        }
                        (PMop::Read(k1, None), PMop::Read(k2, r)) => {
                            assert_eq!(k1, k2);
                            assert_eq!(r.is_some(), comp.ty == "ok", "{comp:?}");
                        }
                        _ => panic!("mismatched mops {a:?} / {b:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn append_values_unique_and_dense_per_key() {
        for c in [cfg(11), faulty(12), ListAppendConfig { key_dist: KeyDist::Uniform, ..cfg(13) }] {
            let ops = parse(&list_append_string(&c));
            let mut per_key: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
            for op in ops.iter().filter(|o| o.ty == "invoke") {
                for m in &op.mops {
                    if let PMop::Append(k, v) = m {
                        per_key.entry(*k).or_default().push(*v);
                    }
                }
            }
            assert!(!per_key.is_empty());
            for (k, mut vs) in per_key {
                let n = vs.len();
                vs.sort_unstable();
                vs.dedup();
                assert_eq!(vs.len(), n, "duplicate append value on key {k}");
                assert_eq!(vs, (1..=n as u64).collect::<Vec<_>>(), "key {k}");
            }
        }
    }

    #[test]
    fn reads_are_prefixes_of_one_list_per_key() {
        for c in [
            cfg(21),
            faulty(22),
            ListAppendConfig { processes: 40, key_dist: KeyDist::Uniform, active_keys: 5, ..cfg(23) },
        ] {
            let ops = parse(&list_append_string(&c));
            let txns = pair(&ops);
            // Values appended by transactions that did not definitely fail.
            let mut maybe_written: HashSet<(u64, u64)> = HashSet::new();
            let mut failed: HashSet<(u64, u64)> = HashSet::new();
            for t in &txns {
                let set = if ops[t.complete].ty == "fail" { &mut failed } else { &mut maybe_written };
                for m in &ops[t.invoke].mops {
                    if let PMop::Append(k, v) = m {
                        set.insert((*k, *v));
                    }
                }
            }
            let mut longest: StdMap<u64, Vec<u64>> = StdMap::new();
            let mut reads: Vec<(u64, Vec<u64>)> = Vec::new();
            for op in ops.iter().filter(|o| o.ty == "ok") {
                let mut own: StdMap<u64, Vec<u64>> = StdMap::new();
                for m in &op.mops {
                    match m {
                        PMop::Append(k, v) => own.entry(*k).or_default().push(*v),
                        PMop::Read(k, Some(vs)) => {
                            // A read after the txn's own appends ends with them.
                            if let Some(mine) = own.get(k) {
                                assert!(vs.ends_with(mine), "read {vs:?} misses own appends {mine:?}");
                            }
                            let l = longest.entry(*k).or_default();
                            if vs.len() > l.len() {
                                *l = vs.clone();
                            }
                            reads.push((*k, vs.clone()));
                        }
                        PMop::Read(_, None) => panic!("ok read with nil"),
                    }
                }
            }
            let mut nonempty = 0;
            for (k, vs) in &reads {
                assert!(longest[k].starts_with(vs), "key {k}: {vs:?} is not a prefix of {:?}", longest[k]);
                nonempty += !vs.is_empty() as usize;
            }
            assert!(nonempty > reads.len() / 2, "most reads should see data");
            for (k, l) in &longest {
                let mut seen = HashSet::new();
                for v in l {
                    assert!(seen.insert(*v), "key {k}: value {v} read twice");
                    assert!(maybe_written.contains(&(*k, *v)), "key {k}: {v} was never appended");
                    assert!(!failed.contains(&(*k, *v)), "key {k}: failed append {v} visible");
                }
            }
        }
    }

    #[test]
    fn keys_retire_after_max_writes() {
        let c = ListAppendConfig {
            txns: 4_000,
            max_writes_per_key: 5,
            active_keys: 10,
            key_dist: KeyDist::Uniform,
            ..cfg(31)
        };
        let ops = parse(&list_append_string(&c));
        let mut writes: StdMap<u64, u64> = StdMap::new();
        let mut retired_at: StdMap<u64, usize> = StdMap::new();
        let mut used: HashSet<u64> = HashSet::new();
        let n = c.active_keys as u64;
        for (i, op) in ops.iter().enumerate().filter(|(_, o)| o.ty == "invoke") {
            for m in &op.mops {
                let k = match m {
                    PMop::Append(k, _) | PMop::Read(k, _) => *k,
                };
                if let Some(&at) = retired_at.get(&k) {
                    assert_eq!(at, i, "key {k} used by invoke {i} after retirement at {at}");
                }
                // Fresh keys are the next unused integers: key n + j enters
                // the window at the (j + 1)-th retirement.
                if k >= n {
                    assert!(retired_at.len() as u64 > k - n, "key {k} used before it could exist");
                }
                used.insert(k);
                if let PMop::Append(..) = m {
                    let w = writes.entry(k).or_default();
                    *w += 1;
                    assert!(*w <= 5, "key {k} got more than 5 appends");
                    if *w == 5 {
                        retired_at.insert(k, i);
                    }
                }
            }
        }
        assert!(retired_at.len() > 100, "only {} keys retired", retired_at.len());
        // Keys that exist but went unused are only those still in the window.
        let created = n + retired_at.len() as u64;
        assert!(used.iter().all(|&k| k < created));
        assert!(created - used.len() as u64 <= n);
    }

    #[test]
    fn info_ops_switch_process_ids() {
        let c = ListAppendConfig { info_fraction: 0.2, ..cfg(41) };
        let ops = parse(&list_append_string(&c));
        pair(&ops);
        let infos = check_info_process_ids(&ops, c.processes);
        assert!(infos > c.txns / 10);
        // Without faults no :info appears and ids stay 0..processes.
        let ops = parse(&list_append_string(&cfg(41)));
        assert!(ops.iter().all(|o| o.ty == "invoke" || o.ty == "ok"));
        assert!(ops.iter().all(|o| o.process < c.processes as u64));
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
            ListAppendConfig { processes: 50, max_txn_len: 8, ..faulty(54) },
            ListAppendConfig { key_dist: KeyDist::Uniform, active_keys: 3, ..faulty(55) },
            ListAppendConfig { processes: 1, ..cfg(56) },
        ];
        for c in configs {
            let (h, trace) = traced(&c);
            let ops = parse(&h);
            let txns = pair(&ops);
            let by_invoke: StdMap<usize, &Txn> = txns.iter().map(|t| (t.invoke, t)).collect();

            // Replay in apply order against a fresh store.
            let mut store: StdMap<u64, Vec<u64>> = StdMap::new();
            let mut pos: StdMap<usize, usize> = StdMap::new();
            for (p, &inv) in trace.applied.iter().enumerate() {
                let t = by_invoke[&(inv as usize)];
                assert!(pos.insert(t.invoke, p).is_none(), "applied twice");
                let comp = &ops[t.complete];
                assert_ne!(comp.ty, "fail", "a :fail txn took effect");
                for (i, m) in ops[t.invoke].mops.iter().enumerate() {
                    match m {
                        PMop::Append(k, v) => store.entry(*k).or_default().push(*v),
                        PMop::Read(k, _) => {
                            let now = store.get(k).cloned().unwrap_or_default();
                            if comp.ty == "ok" {
                                assert_eq!(
                                    comp.mops[i],
                                    PMop::Read(*k, Some(now)),
                                    "seed {} txn at {}",
                                    c.seed,
                                    t.invoke
                                );
                            }
                        }
                    }
                }
            }
            let mut infos_applied = 0;
            let mut infos = 0;
            for t in &txns {
                match ops[t.complete].ty.as_str() {
                    "ok" => assert!(pos.contains_key(&t.invoke), "ok txn at {} never applied", t.invoke),
                    "info" => {
                        infos += 1;
                        infos_applied += pos.contains_key(&t.invoke) as usize;
                    }
                    _ => {}
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
    fn memory_stays_bounded() {
        let c = ListAppendConfig { txns: 20_000, max_writes_per_key: 10, processes: 20, ..cfg(61) };
        let (_, trace) = traced(&c);
        assert!(trace.max_in_flight <= c.processes);
        // Window keys plus retired keys still mentioned by in-flight txns.
        let bound = c.active_keys + c.processes * c.max_txn_len;
        assert!(trace.max_live_keys <= bound, "{} live keys > {bound}", trace.max_live_keys);
    }

    #[test]
    fn key_distributions_differ() {
        let count = |d: KeyDist| {
            let c = ListAppendConfig { key_dist: d, max_writes_per_key: 1_000_000, read_fraction: 1.0, ..cfg(71) };
            let mut n: StdMap<u64, usize> = StdMap::new();
            for op in parse(&list_append_string(&c)).iter().filter(|o| o.ty == "invoke") {
                for m in &op.mops {
                    if let PMop::Read(k, _) = m {
                        *n.entry(*k).or_default() += 1;
                    }
                }
            }
            let total: usize = n.values().sum();
            (n.len(), n.get(&99).copied().unwrap_or(0) as f64 / total as f64)
        };
        let (uniform_keys, uniform_top) = count(KeyDist::Uniform);
        assert_eq!(uniform_keys, 100);
        assert!(uniform_top < 0.03);
        let (exp_keys, exp_top) = count(KeyDist::Exponential);
        assert!(exp_keys < 30, "{exp_keys}");
        assert!((0.45..0.55).contains(&exp_top), "top key share {exp_top}");
    }

    #[test]
    fn invalid_configs_are_rejected() {
        let bad = [
            ListAppendConfig { processes: 0, ..cfg(0) },
            ListAppendConfig { min_txn_len: 0, ..cfg(0) },
            ListAppendConfig { min_txn_len: 3, max_txn_len: 2, ..cfg(0) },
            ListAppendConfig { active_keys: 0, ..cfg(0) },
            ListAppendConfig { max_writes_per_key: 0, ..cfg(0) },
            ListAppendConfig { read_fraction: 1.5, ..cfg(0) },
            ListAppendConfig { fail_fraction: 0.6, info_fraction: 0.6, ..cfg(0) },
            ListAppendConfig { info_fraction: f64::NAN, ..cfg(0) },
        ];
        for c in bad {
            assert!(c.validate().is_err(), "{c:?}");
            let err = write_list_append(&c, Vec::new()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        }
        assert!(ListAppendConfig::default().validate().is_ok());
    }

    #[test]
    fn huge_windows_and_long_txns_work() {
        let c = ListAppendConfig { active_keys: 5_000, max_txn_len: 20, min_txn_len: 20, txns: 500, ..cfg(81) };
        let ops = parse(&list_append_string(&c));
        assert!(ops.iter().all(|o| o.mops.len() == 20));
        // Exponential over 5000 keys still lands on the hot top of the window.
        assert!(ops.iter().flat_map(|o| &o.mops).all(|m| match m {
            PMop::Append(k, _) | PMop::Read(k, _) => *k >= 4_000,
        }));
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
        let err = write_list_append(&cfg(1), Broken).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
    }
}
