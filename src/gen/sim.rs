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

use super::out::{push_u64, Sink};
use super::rng::Rng;

/// What a generator run produced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenStats {
    /// Transactions invoked (equals the config's `txns`).
    pub txns: usize,
    /// Op lines written (invocations plus completions, `2 * txns`).
    pub ops: usize,
    /// Bytes written to the output.
    pub bytes: u64,
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
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Thinking; the next event invokes a transaction.
    Idle,
    /// Invoked; the next event applies it.
    Invoked,
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
    buf.extend_from_slice(b"{:type ");
    buf.extend_from_slice(ty);
    buf.extend_from_slice(b", :f :txn, :value [");
    wl.push_mops(buf, mops, observed);
    buf.extend_from_slice(b"], :process ");
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

/// Runs the clients against `wl` and streams the history to `out`.
///
/// The caller validates its config first. The PRNG seeded with `p.seed` is
/// shared with the workload in a fixed call order, so the output is a
/// function of the parameters and the workload's own config.
pub(crate) fn run<W: Write, L: Workload>(
    p: &SimParams,
    wl: &mut L,
    out: W,
    mut trace: Option<&mut Trace>,
) -> io::Result<GenStats> {
    let mut sink = Sink::new(out);
    let mut rng = Rng::new(p.seed);
    let n = p.processes;
    let mut slots: Vec<Slot<L::Mop>> = (0..n)
        .map(|i| Slot {
            process: i as u64,
            phase: Phase::Idle,
            outcome: Outcome::Ok,
            mops: Vec::with_capacity(p.max_txn_len),
            invoke_index: 0,
        })
        .collect();
    // One pending event per slot: (logical time, slot).
    let mut events: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::with_capacity(n);
    if p.txns > 0 {
        for i in 0..n {
            let t = rng.range_inclusive(0, THINK_NS.1);
            events.push(Reverse((t, i as u32)));
        }
    }

    let mut invoked = 0usize;
    let mut in_flight = 0usize;
    let mut index = 0u64;
    // Last emitted :time; emitted times strictly increase even when events
    // coincide.
    let mut last_time: Option<u64> = None;
    let mut stamp = |t: u64| {
        let s = next_stamp(last_time, t);
        last_time = Some(s);
        s
    };

    while let Some(Reverse((t, si))) = events.pop() {
        let slot = &mut slots[si as usize];
        match slot.phase {
            Phase::Idle => {
                if invoked == p.txns {
                    continue; // this client is done
                }
                wl.gen_txn(&mut rng, &mut slot.mops);
                let r = rng.next_f64();
                slot.outcome = if r < p.fail_fraction {
                    Outcome::Fail
                } else if r < p.fail_fraction + p.info_fraction {
                    Outcome::Info(rng.chance(0.5))
                } else {
                    Outcome::Ok
                };
                slot.invoke_index = index;
                let time = stamp(t);
                write_op(&mut sink.buf, wl, b":invoke", &slot.mops, false, slot.process, time, index);
                index += 1;
                invoked += 1;
                in_flight += 1;
                slot.phase = Phase::Invoked;
                let d = rng.range_inclusive(APPLY_NS.0, APPLY_NS.1);
                events.push(Reverse((t + d, si)));
                if let Some(tr) = trace.as_deref_mut() {
                    tr.max_in_flight = tr.max_in_flight.max(in_flight);
                    tr.max_live_keys = tr.max_live_keys.max(wl.live_keys());
                }
            }
            Phase::Invoked => {
                if matches!(slot.outcome, Outcome::Ok | Outcome::Info(true)) {
                    wl.apply(&mut slot.mops);
                    if let Some(tr) = trace.as_deref_mut() {
                        tr.applied.push(slot.invoke_index);
                    }
                }
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
                let time = stamp(t);
                write_op(&mut sink.buf, wl, ty, &slot.mops, observed, slot.process, time, index);
                index += 1;
                in_flight -= 1;
                wl.release(&slot.mops);
                if let Outcome::Info(_) = slot.outcome {
                    // Jepsen retires a crashed worker's process id.
                    slot.process += n as u64;
                }
                slot.phase = Phase::Idle;
                if invoked < p.txns {
                    let d = rng.range_inclusive(THINK_NS.0, THINK_NS.1);
                    events.push(Reverse((t + d, si)));
                }
                sink.maybe_flush()?;
            }
        }
    }
    debug_assert_eq!(in_flight, 0);
    let bytes = sink.finish()?;
    Ok(GenStats { txns: invoked, ops: index as usize, bytes })
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
    }

    #[test]
    fn loop_applies_in_trace_order_and_releases_everything() {
        let p = SimParams { seed: 3, txns: 500, processes: 6, max_txn_len: 1, fail_fraction: 0.1, info_fraction: 0.1 };
        let mut wl = Counter { value: 0, released: 0 };
        let mut trace = Trace::default();
        let mut buf = Vec::new();
        let stats = run(&p, &mut wl, &mut buf, Some(&mut trace)).unwrap();
        assert_eq!(stats, GenStats { txns: 500, ops: 1000, bytes: buf.len() as u64 });
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
