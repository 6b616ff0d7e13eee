//! Histories from simulated stores that give exactly one weak level:
//! Biswas–Enea read committed, read atomic, causal consistency, or prefix
//! consistency (`isolde gen rw-register|list-append --level
//! read-committed-be|read-atomic|causal-cerone|prefix`).
//!
//! # Versions
//!
//! Both workloads run on one model: every key has a sequence of committed
//! *versions*, numbered `1, 2, …` in commit order (`0` is the initial
//! state), one per committing transaction that writes the key. A store only
//! decides which version of a key each read sees; the workload ([`Data`])
//! says what a version holds and how a read of it is written:
//!
//! * a register ([`register`]) holds the transaction's last write of the
//!   key, and a read of version `v` returns that value (`nil` for `0`);
//! * a list ([`list`]) holds the transaction's appends to the key, and a
//!   read of version `v` returns every append of versions `1..=v` in commit
//!   order. In the Biswas–Enea reading of list-append (weak.md §4.5: an
//!   append is a write, a read of `[1 2 3]` reads from the appender of `3`
//!   and orders the appenders of `1`, `2`, `3`), that read reads from the
//!   writer of version `v`, and every version order edge it implies goes
//!   forward in commit order, so the arguments below carry over unchanged.
//!   Reads are prefixes of one list per key, so Elle's list checks
//!   (incompatible order) have nothing to find either.
//!
//! A read after the transaction's own write of the key returns that write
//! (registers) or the version seen followed by its own appends (lists).
//!
//! # The stores, and why each history satisfies its level
//!
//! The commit order `co` is the order in which transactions take effect.
//! Each read sees a committed version (or the transaction's own writes), so
//! `wr ⊆ co`; a session runs one transaction at a time, so `so ⊆ co`. What
//! differs is which versions a read may see ([`stores`]):
//!
//! * **read committed** (`read-committed-be`): one store; the transactions
//!   of all sessions run interleaved, micro-op by micro-op, and every read
//!   sees the latest committed version at that instant. If the reader read
//!   `t₂` earlier and `t₂` writes `x`, `t₂` had committed before that, so
//!   the latest committed writer of `x` at the later read commits no
//!   earlier: every forced edge goes forward in `co`. Two reads of one
//!   transaction may see a commit between them (a fractured read), so read
//!   atomic can fail. Lists: a transaction aborts (`:fail`) when it read a
//!   key twice and saw two versions, or read its own append of a key and
//!   another transaction committed an append to the key before it commits
//!   (first committer wins). So a list never changes within a transaction
//!   (Elle files that as `internal`, which isolde's `read-committed-be`
//!   check on list-append counts), and a list read after an append is a
//!   prefix of the key's list; fractured reads across keys still break
//!   read atomic.
//! * **read atomic** and **causal** (`causal-cerone`): one replica per
//!   session; a transaction runs alone at its session's replica, reading the
//!   replica's state, and is then shipped to every other replica, which
//!   applies it atomically, some time later. A replica keeps per key the
//!   latest version it has applied (last writer wins). A transaction's
//!   session predecessors and the transactions it read from are applied at
//!   its replica before it runs, so any writer it must see (read atomic:
//!   one `so ∪ wr` step) commits no later than the writer it read from. For
//!   causal consistency replicas apply remote transactions in causal order
//!   (a transaction only after everything its origin had applied when it
//!   committed), so every causal predecessor is applied too. For read
//!   atomic they apply each origin's transactions in order but with no
//!   regard to other origins, so a transaction can be visible before one it
//!   depends on (a causality violation). Lists: a replica applies a key's
//!   versions in order only (so a list it shows holds every append
//!   committed before its last one), and before a transaction that appends
//!   to a key runs, its replica applies the key's latest version and,
//!   first, everything that needs (earlier versions, the origin's earlier
//!   transactions, for causal delivery what the origin had applied), so
//!   its own append extends the whole list.
//! * **prefix**: one log of committed transactions; each session sees a
//!   prefix of it that only grows (and always includes its own commits); a
//!   transaction reads the state of a prefix chosen between its session's
//!   last one and the whole log, and appends itself to the log at commit.
//!   Everything a transaction must see is in its prefix, and the writer it
//!   read from is the last writer of the key in that prefix. Two
//!   transactions can both update a key from the same prefix (a lost
//!   update), so snapshot isolation can fail. Lists: a transaction that
//!   reads its own append of a key reads a prefix holding every version of
//!   that key.
//!
//! Faults: a `:fail` transaction has no effect; an `:info` one takes effect
//! with probability one half, and its process is retired (Jepsen's new
//! process id is `process + processes`), which starts a new session at the
//! same replica. Operations are written as `:invoke` then completion, with
//! strictly increasing `:time`; the history says nothing about real time.

mod list;
mod register;
mod stores;

use super::config::{ListAppendConfig, RwRegisterConfig};
use super::rng::Rng;
use super::txn::{DrawnMop, Pattern, TxnSource};
use std::io::{self, Write};

/// A level a weak store gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeakLevel {
    /// Biswas–Enea read committed.
    ReadCommitted,
    /// Read atomic.
    ReadAtomic,
    /// Causal consistency.
    Causal,
    /// Prefix consistency.
    Prefix,
}

impl WeakLevel {
    /// The model name (as `isolde analyze -m` takes it).
    pub fn name(self) -> &'static str {
        match self {
            WeakLevel::ReadCommitted => "read-committed-be",
            WeakLevel::ReadAtomic => "read-atomic",
            WeakLevel::Causal => "causal-cerone",
            WeakLevel::Prefix => "prefix",
        }
    }
}

/// Writes a register history of `cfg.txns` transactions from the store of
/// `level` (`cfg`'s clients, lengths, keys, read mix and faults) as Jepsen
/// EDN.
pub fn write_weak<W: Write>(cfg: &RwRegisterConfig, level: WeakLevel, out: W) -> io::Result<()> {
    let src = TxnSource::rw_register(cfg, Pattern::Mixed).map_err(io::Error::other)?;
    let faults = (cfg.fail_fraction, cfg.info_fraction);
    run(src, register::Registers::default(), level, (cfg.seed, cfg.txns, cfg.processes), faults, out)
}

/// Writes a list-append history of `cfg.txns` transactions from the store
/// of `level` (`cfg`'s clients, lengths, key window, read mix and faults)
/// as Jepsen EDN.
pub fn write_weak_list_append<W: Write>(cfg: &ListAppendConfig, level: WeakLevel, out: W) -> io::Result<()> {
    let src = TxnSource::list_append(cfg, Pattern::Mixed).map_err(io::Error::other)?;
    let faults = (cfg.fail_fraction, cfg.info_fraction);
    run(src, list::Lists::default(), level, (cfg.seed, cfg.txns, cfg.processes), faults, out)
}

/// Runs the store of `level` over `src`'s transactions, `(seed, txns,
/// processes)`, with `(fail, info)` fractions.
fn run<D: Data, W: Write>(
    mut src: TxnSource,
    mut data: D,
    level: WeakLevel,
    (seed, txns, p): (u64, usize, usize),
    (fail, info): (f64, f64),
    out: W,
) -> io::Result<()> {
    super::sim::check_faults(fail, info).map_err(io::Error::other)?;
    let mut g = Gen {
        rng: Rng::new(seed ^ 0x5eed_3a7e),
        out: io::BufWriter::with_capacity(1 << 20, out),
        buf: Vec::with_capacity(256),
        index: 0,
        processes: (0..p as u64).collect(),
        fail,
        info,
    };
    let d = &mut data;
    match level {
        WeakLevel::ReadCommitted => stores::read_committed(&mut g, &mut src, d, txns, p),
        WeakLevel::ReadAtomic => stores::replicated(&mut g, &mut src, d, txns, p, false),
        WeakLevel::Causal => stores::replicated(&mut g, &mut src, d, txns, p, true),
        WeakLevel::Prefix => stores::prefix(&mut g, &mut src, d, txns, p),
    }?;
    g.out.flush()
}

/// What the keys of a workload hold, as the stores see them: a sequence of
/// committed versions per key, and how micro-ops are written.
trait Data {
    /// Whether a read of version `v` shows every version before it (lists).
    /// The stores then make a key's versions visible in order, and keep
    /// each list a transaction reads a prefix of the key's list that does
    /// not change within the transaction (Elle's list checks call anything
    /// else `incompatible-order` or `internal`). Registers show only the
    /// latest version, and a replica may skip versions.
    const IN_ORDER: bool;

    /// Commits what `mops` write to `key` as the key's next version and
    /// returns its number (`1` for the first).
    fn commit(&mut self, key: u64, mops: &[DrawnMop]) -> u32;

    /// Writes micro-op `mops[i]` as EDN; `seen` is the version a read saw,
    /// `None` when the read's result is not written (`nil`).
    fn push_mop(&self, buf: &mut Vec<u8>, mops: &[DrawnMop], i: usize, seen: Option<u32>);
}

/// The outcome a transaction will have.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fail,
    Info(bool),
}

impl Outcome {
    fn takes_effect(self) -> bool {
        matches!(self, Outcome::Ok | Outcome::Info(true))
    }

    /// The outcome of a transaction the store aborts instead.
    fn aborted(self) -> Outcome {
        match self {
            Outcome::Ok | Outcome::Fail => Outcome::Fail,
            Outcome::Info(_) => Outcome::Info(false),
        }
    }

    fn completion(self) -> &'static [u8] {
        match self {
            Outcome::Ok => b":ok",
            Outcome::Fail => b":fail",
            Outcome::Info(_) => b":info",
        }
    }
}

/// The history writer and the randomness the stores share.
struct Gen<W: Write> {
    rng: Rng,
    out: io::BufWriter<W>,
    buf: Vec<u8>,
    index: u64,
    /// Current process of each client.
    processes: Vec<u64>,
    fail: f64,
    info: f64,
}

impl<W: Write> Gen<W> {
    fn outcome(&mut self) -> Outcome {
        let r = self.rng.next_f64();
        if r < self.fail {
            Outcome::Fail
        } else if r < self.fail + self.info {
            Outcome::Info(self.rng.chance(0.5))
        } else {
            Outcome::Ok
        }
    }

    /// Writes the invocation and completion of client `c`'s transaction
    /// (`seen[i]` the version micro-op `i` read), and retires the process
    /// after an `:info`.
    fn emit<D: Data>(&mut self, d: &D, c: usize, mops: &[DrawnMop], seen: &[u32], outcome: Outcome) -> io::Result<()> {
        let process = self.processes[c];
        for ty in [&b":invoke"[..], outcome.completion()] {
            let observed = ty == b":ok";
            let (index, buf) = (self.index, &mut self.buf);
            buf.clear();
            super::sim::push_op_line(buf, ty, process, index + 1, index, |buf| {
                for (i, &v) in seen.iter().enumerate().take(mops.len()) {
                    if i > 0 {
                        buf.push(b' ');
                    }
                    d.push_mop(buf, mops, i, observed.then_some(v));
                }
            });
            self.out.write_all(&self.buf)?;
            self.index += 1;
        }
        if let Outcome::Info(_) = outcome {
            self.processes[c] += self.processes.len() as u64;
        }
        Ok(())
    }
}

/// The keys `mops` write, each once, in first-write order.
fn written_keys(mops: &[DrawnMop]) -> Vec<u64> {
    let mut keys: Vec<u64> = Vec::new();
    for m in mops {
        if let DrawnMop::Write(k, _) | DrawnMop::Append(k, _) = *m {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys
}

/// Whether `mops[i]` reads a key an earlier micro-op of the transaction
/// wrote.
fn reads_own_write(mops: &[DrawnMop], i: usize) -> bool {
    match mops[i] {
        DrawnMop::Read(k) => mops[..i].iter().any(|m| !matches!(m, DrawnMop::Read(_)) && m.key() == k),
        _ => false,
    }
}
