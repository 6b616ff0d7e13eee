//! Register histories from simulated stores that give exactly one weak
//! level: Biswas–Enea read committed, read atomic, causal consistency, or
//! prefix consistency (`isolde gen rw-register --level read-committed-be|
//! read-atomic|causal-cerone|prefix`).
//!
//! # The stores, and why each history satisfies its level
//!
//! Every transaction that takes effect gets a commit stamp from one global
//! counter when it commits; the commit order `co` is stamp order. Each read
//! returns a committed write, or the transaction's own latest write of the
//! key, so `wr ⊆ co`; a session runs one transaction at a time, so
//! `so ⊆ co`. What differs is which writes a read may see:
//!
//! * **read committed** (`read-committed-be`): one store; the transactions
//!   of all sessions run interleaved, micro-op by micro-op, and every read
//!   returns the latest committed write at that instant. If the reader read
//!   `t₂` earlier and `t₂` writes `x`, `t₂` had committed before that, so
//!   the latest committed writer of `x` at the later read commits no
//!   earlier: every forced edge goes forward in `co`. Two reads of one
//!   transaction may see a commit between them (a fractured read), so read
//!   atomic can fail.
//! * **read atomic** and **causal** (`causal-cerone`): one replica per
//!   session; a transaction runs alone at its session's replica, reading the
//!   replica's state, and is then shipped to every other replica, which
//!   applies it atomically, some time later. A replica keeps per key the
//!   write with the highest commit stamp it has applied (last writer wins).
//!   A transaction's session predecessors and the transactions it read from
//!   are applied at its replica before it runs, so any writer it must see
//!   (read atomic: one `so ∪ wr` step) has a stamp no higher than the
//!   writer it read from. For causal consistency replicas apply remote
//!   transactions in causal order (a transaction only after everything its
//!   origin had applied when it committed), so every causal predecessor is
//!   applied too. For read atomic they apply each origin's transactions in
//!   order but with no regard to other origins, so a transaction can be
//!   visible before one it depends on (a causality violation).
//! * **prefix**: one log of committed transactions; each session sees a
//!   prefix of it that only grows (and always includes its own commits); a
//!   transaction reads the state of a prefix chosen between its session's
//!   last one and the whole log, and appends itself to the log at commit.
//!   Everything a transaction must see is in its prefix, and the writer it
//!   read from is the last writer of the key in that prefix. Two
//!   transactions can both update a key from the same prefix (a lost
//!   update), so snapshot isolation can fail.
//!
//! Faults: a `:fail` transaction has no effect; an `:info` one takes effect
//! with probability one half, and its process is retired (Jepsen's new
//! process id is `process + processes`), which starts a new session at the
//! same replica. Operations are written as `:invoke` then completion, with
//! strictly increasing `:time`; the history says nothing about real time.

use super::out::push_u64;
use super::rng::Rng;
use super::rw_register::RwRegisterConfig;
use super::txn::{DrawnMop, Pattern, TxnSource};
use std::collections::HashMap;
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

/// The write a register shows: (commit stamp, value); `(0, 0)` is initial.
type Version = (u64, u64);

/// The outcome a transaction will have.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fail,
    Info(bool),
}

/// Writes a history of `cfg.txns` transactions from the store of `level`
/// (`cfg`'s clients, lengths, keys, read mix and faults) as Jepsen EDN.
pub fn write_weak<W: Write>(cfg: &RwRegisterConfig, level: WeakLevel, out: W) -> io::Result<()> {
    let mut src = TxnSource::rw_register(cfg, Pattern::Mixed).map_err(io::Error::other)?;
    super::sim::check_faults(cfg.fail_fraction, cfg.info_fraction).map_err(io::Error::other)?;
    let mut g = Gen {
        rng: Rng::new(cfg.seed ^ 0x5eed_3a7e),
        out: io::BufWriter::with_capacity(1 << 20, out),
        buf: Vec::with_capacity(256),
        index: 0,
        processes: (0..cfg.processes as u64).collect(),
        fail: cfg.fail_fraction,
        info: cfg.info_fraction,
    };
    let p = cfg.processes;
    match level {
        WeakLevel::ReadCommitted => read_committed(&mut g, &mut src, cfg.txns, p),
        WeakLevel::ReadAtomic => replicated(&mut g, &mut src, cfg.txns, p, false),
        WeakLevel::Causal => replicated(&mut g, &mut src, cfg.txns, p, true),
        WeakLevel::Prefix => prefix(&mut g, &mut src, cfg.txns, p),
    }?;
    g.out.flush()
}

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
    /// (`reads[i]` the value micro-op `i` observed, 0 = initial), and retires
    /// the process after an `:info`.
    fn emit(&mut self, c: usize, mops: &[DrawnMop], reads: &[u64], outcome: Outcome) -> io::Result<()> {
        let process = self.processes[c];
        for ty in [&b":invoke"[..], completion(outcome)] {
            let observed = ty == b":ok";
            let (index, buf) = (self.index, &mut self.buf);
            buf.clear();
            super::sim::push_op_line(buf, ty, process, index + 1, index, |buf| {
                for (i, m) in mops.iter().enumerate() {
                    if i > 0 {
                        buf.push(b' ');
                    }
                    let (w, k, v) = match *m {
                        DrawnMop::Write(k, v) => (true, k, v),
                        DrawnMop::Read(k) => (false, k, if observed { reads[i] } else { 0 }),
                        DrawnMop::Append(k, v) => (true, k, v),
                    };
                    buf.extend_from_slice(if w { b"[:w " } else { b"[:r " });
                    push_u64(buf, k);
                    if v == 0 {
                        buf.extend_from_slice(b" nil]");
                    } else {
                        buf.push(b' ');
                        push_u64(buf, v);
                        buf.push(b']');
                    }
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

fn completion(o: Outcome) -> &'static [u8] {
    match o {
        Outcome::Ok => b":ok",
        Outcome::Fail => b":fail",
        Outcome::Info(_) => b":info",
    }
}

fn takes_effect(o: Outcome) -> bool {
    matches!(o, Outcome::Ok | Outcome::Info(true))
}

/// Runs `mops` against `state` (own writes first): the values read, and the
/// writes in order.
fn run_txn(mops: &[DrawnMop], mut state: impl FnMut(u64) -> u64, reads: &mut Vec<u64>) {
    reads.clear();
    let mut own: Vec<(u64, u64)> = Vec::new();
    for m in mops {
        match *m {
            DrawnMop::Read(k) => {
                let v = own.iter().rev().find(|w| w.0 == k).map_or_else(|| state(k), |w| w.1);
                reads.push(v);
            }
            DrawnMop::Write(k, v) | DrawnMop::Append(k, v) => {
                own.push((k, v));
                reads.push(0);
            }
        }
    }
}

fn writes(mops: &[DrawnMop]) -> impl Iterator<Item = (u64, u64)> + '_ {
    mops.iter().filter_map(|m| match *m {
        DrawnMop::Write(k, v) | DrawnMop::Append(k, v) => Some((k, v)),
        DrawnMop::Read(_) => None,
    })
}

/// Read committed: interleaved transactions over one store.
fn read_committed<W: Write>(g: &mut Gen<W>, src: &mut TxnSource, txns: usize, p: usize) -> io::Result<()> {
    struct Client {
        mops: Vec<DrawnMop>,
        reads: Vec<u64>,
        own: Vec<(u64, u64)>,
        next: usize,
        outcome: Outcome,
    }
    let mut store: HashMap<u64, u64> = HashMap::new();
    let mut clients: Vec<Option<Client>> = (0..p).map(|_| None).collect();
    let (mut started, mut done) = (0usize, 0usize);
    while done < txns {
        let c = g.rng.below(p as u64) as usize;
        if clients[c].is_none() {
            if started == txns {
                continue;
            }
            let mut mops = Vec::new();
            src.next_txn(&mut mops);
            let outcome = g.outcome();
            clients[c] = Some(Client { mops, reads: Vec::new(), own: Vec::new(), next: 0, outcome });
            started += 1;
        }
        let Some(cl) = clients[c].as_mut() else { continue };
        if cl.next < cl.mops.len() {
            match cl.mops[cl.next] {
                DrawnMop::Read(k) => {
                    let v =
                        cl.own.iter().rev().find(|w| w.0 == k).map_or_else(|| *store.get(&k).unwrap_or(&0), |w| w.1);
                    cl.reads.push(v);
                }
                DrawnMop::Write(k, v) | DrawnMop::Append(k, v) => {
                    cl.own.push((k, v));
                    cl.reads.push(0);
                }
            }
            cl.next += 1;
            continue;
        }
        let Some(cl) = clients[c].take() else { continue };
        if takes_effect(cl.outcome) {
            store.extend(cl.own.iter().copied());
        }
        g.emit(c, &cl.mops, &cl.reads, cl.outcome)?;
        done += 1;
    }
    Ok(())
}

/// Read atomic (`causal == false`) and causal consistency: a replica per
/// client, transactions shipped to the others and applied atomically later.
fn replicated<W: Write>(g: &mut Gen<W>, src: &mut TxnSource, txns: usize, p: usize, causal: bool) -> io::Result<()> {
    struct Shipped {
        stamp: u64,
        writes: Vec<(u64, u64)>,
        /// Per origin, how many of its transactions the committing replica
        /// had applied (causal delivery only).
        deps: Vec<u32>,
    }
    let mut state: Vec<HashMap<u64, Version>> = (0..p).map(|_| HashMap::new()).collect();
    // log[o]: transactions of origin o that took effect, in order.
    let mut log: Vec<Vec<Shipped>> = (0..p).map(|_| Vec::new()).collect();
    // applied[r][o]: how many of log[o] replica r has applied.
    let mut applied: Vec<Vec<u32>> = vec![vec![0; p]; p];
    let mut stamp = 0u64;
    let (mut mops, mut reads) = (Vec::new(), Vec::new());
    for _ in 0..txns {
        let c = g.rng.below(p as u64) as usize;
        // Deliver some of what the other replicas shipped.
        for o in 0..p {
            if o == c || !g.rng.chance(0.5) {
                continue;
            }
            let lag = g.rng.below(4) as usize;
            while (applied[c][o] as usize) + lag < log[o].len() {
                let t = &log[o][applied[c][o] as usize];
                if causal && t.deps.iter().zip(&applied[c]).enumerate().any(|(i, (&d, &a))| i != o && d > a) {
                    break;
                }
                for &(k, v) in &t.writes {
                    let e = state[c].entry(k).or_insert((0, 0));
                    if t.stamp >= e.0 {
                        *e = (t.stamp, v);
                    }
                }
                applied[c][o] += 1;
            }
        }
        src.next_txn(&mut mops);
        let outcome = g.outcome();
        let here = &state[c];
        run_txn(&mops, |k| here.get(&k).map_or(0, |v| v.1), &mut reads);
        if takes_effect(outcome) {
            stamp += 1;
            let w: Vec<(u64, u64)> = writes(&mops).collect();
            for &(k, v) in &w {
                state[c].insert(k, (stamp, v));
            }
            let deps = if causal { applied[c].clone() } else { Vec::new() };
            log[c].push(Shipped { stamp, writes: w, deps });
            applied[c][c] += 1;
        }
        g.emit(c, &mops, &reads, outcome)?;
    }
    Ok(())
}

/// Prefix consistency: sessions read growing prefixes of one log.
fn prefix<W: Write>(g: &mut Gen<W>, src: &mut TxnSource, txns: usize, p: usize) -> io::Result<()> {
    // Per key, (log position, value) of every write, in log order.
    let mut versions: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    let mut log_len = 0u64;
    let mut seen = vec![0u64; p];
    let (mut mops, mut reads) = (Vec::new(), Vec::new());
    for _ in 0..txns {
        let c = g.rng.below(p as u64) as usize;
        let behind = log_len - seen[c];
        seen[c] += g.rng.below(behind.min(8) + 1).max(behind.saturating_sub(8));
        let snap = seen[c];
        src.next_txn(&mut mops);
        let outcome = g.outcome();
        run_txn(
            &mops,
            |k| {
                let vs = versions.get(&k).map_or(&[][..], Vec::as_slice);
                let i = vs.partition_point(|v| v.0 < snap);
                if i == 0 {
                    0
                } else {
                    vs[i - 1].1
                }
            },
            &mut reads,
        );
        if takes_effect(outcome) {
            for (k, v) in writes(&mops) {
                versions.entry(k).or_default().push((log_len, v));
            }
            log_len += 1;
            seen[c] = log_len;
        }
        g.emit(c, &mops, &reads, outcome)?;
    }
    Ok(())
}
