//! Generators of Jepsen bank, counter and set histories (`isolde gen bank |
//! counter | set`), with injectable faults, for tests and benchmarks of
//! [`crate::jepsen`]'s checkers.
//!
//! A simulated store is driven by `processes` clients: at each step a
//! random client either invokes its next op or completes the one it has in
//! flight. Every op takes effect at its completion, which lies inside its
//! invocation-completion window, so without faults the history is
//! linearizable and every checker answers valid. Time advances 1 ms per
//! event. Faults are planted at evenly spaced points of the run:
//!
//! | fault | workloads | what is written | found by |
//! |---|---|---|---|
//! | `negative-balance` | bank | one read moves 1 + the balance of an account to another (total kept, one balance negative) | bank: `:negative-value` |
//! | `wrong-total` | bank, counter | bank: one read shows an account 1 higher; counter: one read returns the upper bound + 1 | bank `:wrong-total`; counter error |
//! | `stale-read` | counter, set | counter: a read returns 1 less than the adds acknowledged before it began; set: a read omits an element acknowledged before it began (later reads hold it) | counter error; set-full `:stale` (invalid with `--linearizable`) |
//! | `lost-element` | set, queue | an acknowledged element vanishes from the store | set and set-full: `:lost`; total-queue: `:lost` |
//! | `unexpected-element` | queue | a dequeue returns an element never enqueued | total-queue: `:unexpected`; queue: `can't dequeue` |
//! | `duplicate-element` | queue, unique-ids | queue: a dequeued element is delivered again later; unique-ids: an id is returned twice | total-queue: `:duplicated` (valid, as in Jepsen); queue: `can't dequeue`; unique-ids: `:duplicated` |
//!
//! The queue and unique-ids generators are in [`super::jepsen_queue`],
//! which shares this file's settings and faults.

use super::rng::Rng;
use std::io::{self, Write};

/// Which history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Transfers between accounts and reads of every balance.
    Bank,
    /// Adds to a counter and reads of it.
    Counter,
    /// Adds of unique elements to a set, reads of the whole set, and a
    /// final read.
    Set,
    /// Enqueues of unique elements, dequeues, and a final drain.
    Queue,
    /// Generations of unique ids.
    UniqueIds,
}

/// A fault to plant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An acknowledged set element vanishes.
    LostElement,
    /// A bank read shows a negative balance.
    NegativeBalance,
    /// A bank read's total is off; a counter read exceeds what may have
    /// been added.
    WrongTotal,
    /// A read misses what was acknowledged before it began.
    StaleRead,
    /// A dequeue returns an element never enqueued.
    UnexpectedElement,
    /// An element is dequeued twice; an id is generated twice.
    DuplicateElement,
}

/// Every fault.
const FAULTS: [Fault; 6] = [
    Fault::LostElement,
    Fault::NegativeBalance,
    Fault::WrongTotal,
    Fault::StaleRead,
    Fault::UnexpectedElement,
    Fault::DuplicateElement,
];

impl Fault {
    /// The fault's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Fault::LostElement => "lost-element",
            Fault::NegativeBalance => "negative-balance",
            Fault::WrongTotal => "wrong-total",
            Fault::StaleRead => "stale-read",
            Fault::UnexpectedElement => "unexpected-element",
            Fault::DuplicateElement => "duplicate-element",
        }
    }

    /// Parses a fault name.
    pub fn parse(s: &str) -> Result<Fault, String> {
        FAULTS.into_iter().find(|f| f.name() == s.trim()).ok_or_else(|| {
            let names: Vec<&str> = FAULTS.iter().map(|f| f.name()).collect();
            format!("unknown fault {s:?}: one of {}", names.join(", "))
        })
    }

    /// Whether the fault applies to a workload.
    pub fn applies(self, k: Kind) -> bool {
        matches!(
            (self, k),
            (Fault::NegativeBalance | Fault::WrongTotal, Kind::Bank)
                | (Fault::WrongTotal | Fault::StaleRead, Kind::Counter)
                | (Fault::LostElement | Fault::StaleRead, Kind::Set)
                | (Fault::LostElement | Fault::UnexpectedElement | Fault::DuplicateElement, Kind::Queue)
                | (Fault::DuplicateElement, Kind::UniqueIds)
        )
    }
}

/// A generator's settings.
#[derive(Clone, Debug)]
pub struct JepsenGenConfig {
    /// The workload.
    pub kind: Kind,
    /// Random seed.
    pub seed: u64,
    /// Operations (each an invocation and a completion).
    pub ops: usize,
    /// Concurrent clients.
    pub processes: usize,
    /// bank: accounts; each starts with 10.
    pub accounts: usize,
    /// bank, counter: fraction of operations that are reads; set: reads
    /// spread over the run (besides the final read) are `reads`.
    pub read_fraction: f64,
    /// set: reads during the run.
    pub reads: usize,
    /// Fraction of ops that complete `:info` (they take effect or not,
    /// at random).
    pub info_fraction: f64,
    /// Faults to plant, each once.
    pub faults: Vec<Fault>,
}

impl Default for JepsenGenConfig {
    fn default() -> Self {
        JepsenGenConfig {
            kind: Kind::Bank,
            seed: 0,
            ops: 10_000,
            processes: 10,
            accounts: 10,
            read_fraction: 0.2,
            reads: 10,
            info_fraction: 0.0,
            faults: Vec::new(),
        }
    }
}

/// What was planted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Planted {
    /// Each planted fault, with the `:index` of the op that shows it.
    pub faults: Vec<(Fault, u64)>,
}

/// The workloads this file's simulation writes (the others are
/// [`super::jepsen_queue`]'s).
#[derive(Clone, Copy)]
enum Basic {
    Bank,
    Counter,
    Set,
}

#[derive(Clone, Copy)]
enum InFlight {
    Idle,
    Transfer { from: usize, to: usize, amount: i64 },
    Read { acked_at_invoke: i64, last_acked: Option<i64> },
    Add { value: i64 },
}

/// Writes a history to `out`; returns the faults planted.
pub fn generate(cfg: &JepsenGenConfig, out: &mut dyn Write) -> io::Result<Planted> {
    for f in &cfg.faults {
        if !f.applies(cfg.kind) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("fault {} does not apply to this workload", f.name()),
            ));
        }
    }
    let kind = match cfg.kind {
        Kind::Bank => Basic::Bank,
        Kind::Counter => Basic::Counter,
        Kind::Set => Basic::Set,
        Kind::Queue | Kind::UniqueIds => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "queue and unique-ids histories are written by gen::jepsen_queue::generate",
            ))
        }
    };
    let mut w = io::BufWriter::with_capacity(1 << 20, out);
    let mut rng = Rng::new(cfg.seed);
    let procs = cfg.processes.max(1);
    let mut flight = vec![InFlight::Idle; procs];
    let mut index = 0u64;
    let mut time = 0i64;
    let mut issued = 0usize;
    let mut planted = Planted::default();
    // Fault k is due after op (k + 1) * ops / (faults + 1).
    let due: Vec<usize> = (0..cfg.faults.len()).map(|k| (k + 1) * cfg.ops / (cfg.faults.len() + 1)).collect();
    let mut next_fault = 0usize;
    // State.
    let mut balances = vec![10i64; cfg.accounts.max(2)];
    let (mut counter, mut acked, mut attempted) = (0i64, 0i64, 0i64);
    let mut set: Vec<bool> = Vec::new();
    let mut acked_order: Vec<i64> = Vec::new();
    let mut next_element = 0i64;
    let read_every = if cfg.kind == Kind::Set { (cfg.ops / (cfg.reads + 1)).max(1) } else { 0 };
    let info_permille = (cfg.info_fraction.clamp(0.0, 1.0) * 1000.0) as u64;
    let read_permille = (cfg.read_fraction.clamp(0.0, 1.0) * 1000.0) as u64;
    let mut active = 0usize;
    let mut set_reads_issued = 0usize;
    while issued < cfg.ops || active > 0 {
        let p = rng.below(procs as u64) as usize;
        time += 1_000_000;
        let fault_due = next_fault < due.len() && issued >= due[next_fault];
        match flight[p] {
            InFlight::Idle => {
                if issued >= cfg.ops {
                    continue;
                }
                issued += 1;
                active += 1;
                let read = match cfg.kind {
                    Kind::Set => {
                        let want = (issued / read_every).min(cfg.reads);
                        let r = set_reads_issued < want;
                        if r {
                            set_reads_issued += 1;
                        }
                        r
                    }
                    _ => rng.below(1000) < read_permille,
                };
                if read {
                    let last_acked = acked_order.last().copied();
                    flight[p] = InFlight::Read { acked_at_invoke: acked, last_acked };
                    writeln!(w, "{{:type :invoke, :f :read, :value nil, :process {p}, :time {time}, :index {index}}}")?;
                } else {
                    match kind {
                        Basic::Bank => {
                            let n = balances.len();
                            let from = rng.below(n as u64) as usize;
                            let to = (from + 1 + rng.below(n as u64 - 1) as usize) % n;
                            let amount = 1 + rng.below(5) as i64;
                            flight[p] = InFlight::Transfer { from, to, amount };
                            writeln!(w, "{{:type :invoke, :f :transfer, :value {{:from {from}, :to {to}, :amount {amount}}}, :process {p}, :time {time}, :index {index}}}")?;
                        }
                        Basic::Counter => {
                            let value = 1 + rng.below(5) as i64;
                            attempted += value;
                            flight[p] = InFlight::Add { value };
                            writeln!(w, "{{:type :invoke, :f :add, :value {value}, :process {p}, :time {time}, :index {index}}}")?;
                        }
                        Basic::Set => {
                            let value = next_element;
                            next_element += 1;
                            set.push(false);
                            flight[p] = InFlight::Add { value };
                            writeln!(w, "{{:type :invoke, :f :add, :value {value}, :process {p}, :time {time}, :index {index}}}")?;
                        }
                    }
                }
            }
            InFlight::Transfer { from, to, amount } => {
                active -= 1;
                flight[p] = InFlight::Idle;
                let info = rng.below(1000) < info_permille;
                let possible = balances[from] >= amount;
                let applied = possible && (!info || rng.below(2) == 0);
                if applied {
                    balances[from] -= amount;
                    balances[to] += amount;
                }
                let t = if info {
                    "info"
                } else if applied {
                    "ok"
                } else {
                    "fail"
                };
                writeln!(w, "{{:type :{t}, :f :transfer, :value {{:from {from}, :to {to}, :amount {amount}}}, :process {p}, :time {time}, :index {index}}}")?;
            }
            InFlight::Add { value } => {
                active -= 1;
                flight[p] = InFlight::Idle;
                let info = rng.below(1000) < info_permille;
                let applied = !info || rng.below(2) == 0;
                match cfg.kind {
                    Kind::Counter if applied => counter += value,
                    Kind::Set if applied => set[value as usize] = true,
                    _ => {}
                }
                if !info {
                    acked += value;
                    if cfg.kind == Kind::Set {
                        acked_order.push(value);
                    }
                }
                if cfg.kind == Kind::Set && !info && fault_due && cfg.faults[next_fault] == Fault::LostElement {
                    set[value as usize] = false;
                    planted.faults.push((Fault::LostElement, index));
                    next_fault += 1;
                }
                let t = if info { "info" } else { "ok" };
                writeln!(w, "{{:type :{t}, :f :add, :value {value}, :process {p}, :time {time}, :index {index}}}")?;
            }
            InFlight::Read { acked_at_invoke, last_acked } => {
                active -= 1;
                flight[p] = InFlight::Idle;
                let fault = if fault_due { Some(cfg.faults[next_fault]) } else { None };
                match kind {
                    Basic::Bank => {
                        let mut shown = balances.clone();
                        match fault {
                            Some(Fault::NegativeBalance) => {
                                let moved = shown[0] + 1;
                                shown[0] -= moved;
                                shown[1] += moved;
                            }
                            Some(Fault::WrongTotal) => shown[0] += 1,
                            _ => {}
                        }
                        if let Some(f) = fault {
                            planted.faults.push((f, index));
                            next_fault += 1;
                        }
                        write!(w, "{{:type :ok, :f :read, :value {{")?;
                        for (a, b) in shown.iter().enumerate() {
                            if a > 0 {
                                w.write_all(b", ")?;
                            }
                            write!(w, "{a} {b}")?;
                        }
                        writeln!(w, "}}, :process {p}, :time {time}, :index {index}}}")?;
                    }
                    Basic::Counter => {
                        let value = match fault {
                            Some(Fault::WrongTotal) => attempted + 1,
                            Some(Fault::StaleRead) => acked_at_invoke - 1,
                            _ => counter,
                        };
                        if let Some(f) = fault {
                            planted.faults.push((f, index));
                            next_fault += 1;
                        }
                        writeln!(
                            w,
                            "{{:type :ok, :f :read, :value {value}, :process {p}, :time {time}, :index {index}}}"
                        )?;
                    }
                    Basic::Set => {
                        let omit = match (fault, last_acked) {
                            (Some(Fault::StaleRead), Some(e)) if set[e as usize] => {
                                planted.faults.push((Fault::StaleRead, index));
                                next_fault += 1;
                                Some(e)
                            }
                            _ => None,
                        };
                        write_set(&mut w, &set, omit, p, time, index)?;
                    }
                }
            }
        }
        index += 1;
    }
    if cfg.kind == Kind::Set {
        // The final read.
        time += 1_000_000;
        writeln!(w, "{{:type :invoke, :f :read, :value nil, :process 0, :time {time}, :index {index}}}")?;
        index += 1;
        time += 1_000_000;
        write_set(&mut w, &set, None, 0, time, index)?;
    }
    w.flush()?;
    Ok(planted)
}

fn write_set(w: &mut impl Write, set: &[bool], omit: Option<i64>, p: usize, time: i64, index: u64) -> io::Result<()> {
    w.write_all(b"{:type :ok, :f :read, :value #{")?;
    let mut first = true;
    for (e, &present) in set.iter().enumerate() {
        if present && Some(e as i64) != omit {
            if !first {
                w.write_all(b" ")?;
            }
            first = false;
            write!(w, "{e}")?;
        }
    }
    writeln!(w, "}}, :process {p}, :time {time}, :index {index}}}")
}
