//! Bulk-synchronous supersteps on timely dataflow.
//!
//! Every phase of a distributed check is plain sequential code on each
//! worker, separated by supersteps: each worker hands a list of
//! `(destination worker, message)` to [`Bsp::exchange`], and gets back every
//! message addressed to it in that superstep, ordered by sender. A
//! superstep is one timestamp of a small timely dataflow (an input, an
//! `exchange` by destination, and an operator that files what arrives by
//! its timestamp), and ends when timely's progress tracking says that no
//! worker can still send at that timestamp: the probe after the filing
//! operator has passed it. So messages of a later superstep that arrive
//! early (a faster peer) wait for their own round, and a superstep's result
//! never depends on timing.
//!
//! Messages are typed and encoded with bincode ([`Bsp::exchange`]; variable
//! length integers, so ids, counts and small values take a byte or a few);
//! the byte counts of `--stats` are those encodings' lengths.

use super::DistError;
use bincode::Options;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Exchange, Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

/// The message encoding: bincode with variable-length integers.
fn wire() -> impl Options {
    bincode::DefaultOptions::new()
}

/// A message in the wire encoding.
pub fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, DistError> {
    wire().serialize(msg).map_err(|e| DistError::Wire(e.to_string()))
}

/// A message from worker `src`, decoded.
pub fn decode<T: DeserializeOwned>(src: usize, bytes: &[u8]) -> Result<T, DistError> {
    wire().deserialize(bytes).map_err(|e| DistError::Wire(format!("from worker {src}: {e}")))
}

/// `(destination, source, bytes)`.
type Packet = (u32, u32, Vec<u8>);

/// Traffic counters of one worker.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Traffic {
    /// Bytes this worker sent to other workers.
    pub sent: u64,
    /// Bytes this worker received from other workers.
    pub received: u64,
    /// Supersteps run.
    pub rounds: u64,
}

/// One worker's handle on the superstep dataflow.
pub struct Bsp<'w> {
    worker: &'w mut Worker,
    input: InputHandle<u64, CapacityContainerBuilder<Vec<Packet>>>,
    probe: ProbeHandle<u64>,
    inbox: Rc<RefCell<Vec<(u64, Packet)>>>,
    round: u64,
    /// What crossed between workers so far.
    pub traffic: Traffic,
}

impl<'w> Bsp<'w> {
    /// Builds the dataflow on this worker (every worker must).
    pub fn new(worker: &'w mut Worker) -> Self {
        let mut input = InputHandle::new();
        let probe = ProbeHandle::new();
        let inbox: Rc<RefCell<Vec<(u64, Packet)>>> = Rc::default();
        let filed = inbox.clone();
        worker.dataflow::<u64, _, _>(|scope| {
            scope
                .input_from(&mut input)
                .exchange(|p: &Packet| u64::from(p.0))
                .unary::<CapacityContainerBuilder<Vec<Packet>>, _, _, _>(Pipeline, "inbox", |_, _| {
                    move |input, _output| {
                        input.for_each(|cap, data: &mut Vec<Packet>| {
                            let t = cap.least().copied().unwrap_or(0);
                            filed.borrow_mut().extend(data.drain(..).map(|p| (t, p)));
                        });
                    }
                })
                .probe_with(&probe);
        });
        Bsp { worker, input, probe, inbox, round: 0, traffic: Traffic::default() }
    }

    /// This worker's index.
    pub fn index(&self) -> usize {
        self.worker.index()
    }

    /// Number of workers.
    pub fn peers(&self) -> usize {
        self.worker.peers()
    }

    /// One superstep on raw bytes.
    pub fn exchange_bytes(&mut self, out: Vec<(usize, Vec<u8>)>) -> Vec<(usize, Vec<u8>)> {
        let me = self.worker.index();
        for (dest, bytes) in out {
            if dest != me {
                self.traffic.sent += bytes.len() as u64;
            }
            self.input.send((dest as u32, me as u32, bytes));
        }
        let round = self.round;
        self.round += 1;
        self.input.advance_to(self.round);
        while self.probe.less_than(&self.round) {
            self.worker.step();
        }
        self.traffic.rounds += 1;
        let mut inbox = self.inbox.borrow_mut();
        let (mut now, later): (Vec<_>, Vec<_>) = inbox.drain(..).partition(|(t, _)| *t == round);
        *inbox = later;
        now.sort_by_key(|(_, p)| p.1);
        now.into_iter()
            .map(|(_, (_, src, bytes))| {
                if src as usize != me {
                    self.traffic.received += bytes.len() as u64;
                }
                (src as usize, bytes)
            })
            .collect()
    }

    /// One superstep: sends each `(destination, message)` and returns every
    /// message sent to this worker, ordered by sender (a sender's messages
    /// in the order it sent them).
    pub fn exchange<T: Serialize + DeserializeOwned>(
        &mut self,
        out: Vec<(usize, T)>,
    ) -> Result<Vec<(usize, T)>, DistError> {
        let mut bytes = Vec::with_capacity(out.len());
        for (dest, msg) in out {
            bytes.push((dest, encode(&msg)?));
        }
        self.exchange_bytes(bytes).into_iter().map(|(src, b)| decode(src, &b).map(|m| (src, m))).collect()
    }

    /// Every worker's `value`, by worker index.
    pub fn all_gather<T: Serialize + DeserializeOwned + Clone>(&mut self, value: &T) -> Result<Vec<T>, DistError> {
        let out = (0..self.peers()).map(|d| (d, value.clone())).collect();
        Ok(self.exchange(out)?.into_iter().map(|(_, v)| v).collect())
    }

    /// Worker 0 gets every worker's `value` (by index); the others get an
    /// empty list.
    pub fn gather<T: Serialize + DeserializeOwned>(&mut self, value: T) -> Result<Vec<T>, DistError> {
        Ok(self.exchange(vec![(0, value)])?.into_iter().map(|(_, v)| v).collect())
    }

    /// Worker 0's `value` on every worker (the others' arguments are
    /// ignored and may be `None`).
    pub fn broadcast<T: Serialize + DeserializeOwned + Clone>(&mut self, value: Option<T>) -> Result<T, DistError> {
        let out = match (self.index(), value) {
            (0, Some(v)) => (0..self.peers()).map(|d| (d, v.clone())).collect(),
            _ => Vec::new(),
        };
        self.exchange(out)?
            .into_iter()
            .next()
            .map(|(_, v)| v)
            .ok_or_else(|| DistError::Wire("worker 0 sent nothing to broadcast".into()))
    }

    /// The sum of every worker's `n`.
    pub fn sum(&mut self, n: u64) -> Result<u64, DistError> {
        Ok(self.all_gather(&n)?.into_iter().sum())
    }

    /// Ends a fallible phase on every worker together: when any worker
    /// failed, every worker returns the error of the lowest-numbered one
    /// that did, so that no worker waits for a superstep the others will
    /// never run.
    pub fn agree<T>(&mut self, local: Result<T, DistError>) -> Result<T, DistError> {
        let mine: Option<String> = local.as_ref().err().map(|e| e.to_string());
        let all = self.all_gather(&mine)?;
        match (local, all.into_iter().flatten().next()) {
            (Ok(v), None) => Ok(v),
            (Err(e), _) => Err(e),
            (Ok(_), Some(other)) => Err(DistError::Peer(other)),
        }
    }
}
