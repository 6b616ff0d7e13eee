//! Generators of Jepsen queue and unique-id histories (`isolde gen queue |
//! unique-ids`), for tests and benchmarks of [`crate::jepsen::queue`] and
//! [`crate::jepsen::unique_ids`].
//!
//! As in [`super::jepsen`]: `processes` clients, each with at most one op in
//! flight; at each step a random client invokes its next op or completes
//! the one in flight, and the op takes effect at its completion; time
//! advances 1 ms per event; faults are planted at evenly spaced points.
//!
//! **Queue.** A FIFO store. Clients enqueue unique elements 0, 1, 2, ...
//! and dequeue (`read_fraction` of the ops): a dequeue takes the head, or
//! fails (`:fail`) on an empty queue. An `:info` enqueue takes effect or
//! not at random (a dequeue of it is then `:recovered`); an `:info` dequeue
//! takes nothing (so that it loses nothing). The history ends with one
//! `:drain` of what is left, so a fault-free history is valid under
//! `queue` (both models) and `total-queue`. Faults: `lost-element` (an
//! acknowledged enqueue never reaches the store), `unexpected-element` (a
//! dequeue returns a negative element, never enqueued), `duplicate-element`
//! (a dequeued element is put back at the tail, delivered again later).
//!
//! **Unique ids.** A counter handing out 0, 1, 2, ...; an `:info`
//! generation may have consumed an id or not. Fault: `duplicate-element`
//! (one generation returns the previous id again).

use super::jepsen::{Fault, JepsenGenConfig, Kind, Planted};
use super::rng::Rng;
use std::collections::VecDeque;
use std::io::{self, Write};

/// The run shared by both generators: clients, clock, index, fault plan.
struct Run<'a> {
    w: io::BufWriter<&'a mut dyn Write>,
    rng: Rng,
    index: u64,
    time: i64,
    issued: usize,
    active: usize,
    due: Vec<usize>,
    next_fault: usize,
    planted: Planted,
    info_permille: u64,
    read_permille: u64,
}

impl<'a> Run<'a> {
    fn new(cfg: &JepsenGenConfig, out: &'a mut dyn Write) -> Run<'a> {
        let n = cfg.faults.len();
        Run {
            w: io::BufWriter::with_capacity(1 << 20, out),
            rng: Rng::new(cfg.seed),
            index: 0,
            time: 0,
            issued: 0,
            active: 0,
            due: (0..n).map(|k| (k + 1) * cfg.ops / (n + 1)).collect(),
            next_fault: 0,
            planted: Planted::default(),
            info_permille: (cfg.info_fraction.clamp(0.0, 1.0) * 1000.0) as u64,
            read_permille: (cfg.read_fraction.clamp(0.0, 1.0) * 1000.0) as u64,
        }
    }

    /// The fault due now, if any.
    fn due_fault(&self, cfg: &JepsenGenConfig) -> Option<Fault> {
        (self.next_fault < self.due.len() && self.issued >= self.due[self.next_fault])
            .then(|| cfg.faults[self.next_fault])
    }

    /// Records the due fault as planted at the current op.
    fn plant(&mut self, f: Fault) {
        self.planted.faults.push((f, self.index));
        self.next_fault += 1;
    }

    fn coin(&mut self, permille: u64) -> bool {
        self.rng.below(1000) < permille
    }

    /// Writes one op map (`value` as EDN text).
    fn op(&mut self, t: &str, f: &str, value: &str, p: usize) -> io::Result<()> {
        let (time, index) = (self.time, self.index);
        writeln!(self.w, "{{:type :{t}, :f :{f}, :value {value}, :process {p}, :time {time}, :index {index}}}")?;
        self.index += 1;
        Ok(())
    }
}

/// Writes a queue or unique-ids history to `out`; returns the faults
/// planted.
pub fn generate(cfg: &JepsenGenConfig, out: &mut dyn Write) -> io::Result<Planted> {
    for f in &cfg.faults {
        if !f.applies(cfg.kind) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("fault {} does not apply to this workload", f.name()),
            ));
        }
    }
    let mut run = Run::new(cfg, out);
    match cfg.kind {
        Kind::UniqueIds => unique_ids(cfg, &mut run)?,
        Kind::Queue => queue(cfg, &mut run)?,
        Kind::Bank | Kind::Counter | Kind::Set => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "bank, counter and set histories are written by gen::jepsen::generate",
            ))
        }
    }
    run.w.flush()?;
    Ok(run.planted)
}

#[derive(Clone, Copy)]
enum QueueOp {
    Idle,
    Enqueue(i64),
    Dequeue,
}

fn queue(cfg: &JepsenGenConfig, run: &mut Run) -> io::Result<()> {
    let procs = cfg.processes.max(1);
    let mut flight = vec![QueueOp::Idle; procs];
    let mut store: VecDeque<i64> = VecDeque::new();
    let mut next = 0i64;
    while run.issued < cfg.ops || run.active > 0 {
        let p = run.rng.below(procs as u64) as usize;
        run.time += 1_000_000;
        match flight[p] {
            QueueOp::Idle if run.issued >= cfg.ops => continue,
            QueueOp::Idle => {
                run.issued += 1;
                run.active += 1;
                if run.coin(run.read_permille) {
                    flight[p] = QueueOp::Dequeue;
                    run.op("invoke", "dequeue", "nil", p)?;
                } else {
                    flight[p] = QueueOp::Enqueue(next);
                    run.op("invoke", "enqueue", &next.to_string(), p)?;
                    next += 1;
                }
            }
            QueueOp::Enqueue(v) => {
                run.active -= 1;
                flight[p] = QueueOp::Idle;
                complete_enqueue(cfg, run, &mut store, v, p)?;
            }
            QueueOp::Dequeue => {
                run.active -= 1;
                flight[p] = QueueOp::Idle;
                complete_dequeue(cfg, run, &mut store, p)?;
            }
        }
    }
    // The final drain of what is left.
    run.time += 1_000_000;
    run.op("invoke", "drain", "nil", 0)?;
    run.time += 1_000_000;
    let left: Vec<String> = store.iter().map(|e| e.to_string()).collect();
    run.op("ok", "drain", &format!("[{}]", left.join(" ")), 0)
}

fn complete_enqueue(
    cfg: &JepsenGenConfig,
    run: &mut Run,
    store: &mut VecDeque<i64>,
    v: i64,
    p: usize,
) -> io::Result<()> {
    let info = run.coin(run.info_permille);
    let applied = !info || run.rng.below(2) == 0;
    if !info && run.due_fault(cfg) == Some(Fault::LostElement) {
        run.plant(Fault::LostElement);
    } else if applied {
        store.push_back(v);
    }
    run.op(if info { "info" } else { "ok" }, "enqueue", &v.to_string(), p)
}

fn complete_dequeue(cfg: &JepsenGenConfig, run: &mut Run, store: &mut VecDeque<i64>, p: usize) -> io::Result<()> {
    if run.coin(run.info_permille) {
        return run.op("info", "dequeue", "nil", p);
    }
    match run.due_fault(cfg) {
        Some(Fault::UnexpectedElement) => {
            let v = -1 - run.planted.faults.len() as i64;
            run.plant(Fault::UnexpectedElement);
            return run.op("ok", "dequeue", &v.to_string(), p);
        }
        Some(Fault::DuplicateElement) if !store.is_empty() => {
            if let Some(&v) = store.front() {
                // Delivered now and again later.
                store.push_back(v);
                run.plant(Fault::DuplicateElement);
            }
        }
        _ => {}
    }
    match store.pop_front() {
        Some(v) => run.op("ok", "dequeue", &v.to_string(), p),
        None => run.op("fail", "dequeue", "nil", p),
    }
}

fn unique_ids(cfg: &JepsenGenConfig, run: &mut Run) -> io::Result<()> {
    let procs = cfg.processes.max(1);
    let mut busy = vec![false; procs];
    let mut next = 0i64;
    let mut last: Option<i64> = None;
    while run.issued < cfg.ops || run.active > 0 {
        let p = run.rng.below(procs as u64) as usize;
        run.time += 1_000_000;
        if !busy[p] {
            if run.issued >= cfg.ops {
                continue;
            }
            run.issued += 1;
            run.active += 1;
            busy[p] = true;
            run.op("invoke", "generate", "nil", p)?;
            continue;
        }
        run.active -= 1;
        busy[p] = false;
        if run.coin(run.info_permille) {
            next += run.rng.below(2) as i64;
            run.op("info", "generate", "nil", p)?;
            continue;
        }
        let id = match (run.due_fault(cfg), last) {
            (Some(Fault::DuplicateElement), Some(prev)) => {
                run.plant(Fault::DuplicateElement);
                prev
            }
            _ => {
                next += 1;
                next - 1
            }
        };
        last = Some(id);
        run.op("ok", "generate", &id.to_string(), p)?;
    }
    Ok(())
}
