//! Histories a person can read, and as Jepsen histories `analyze` checks.
//!
//! [`HistView`] is a self-contained copy of a complete history: its
//! transactions in the order the explorer built them (an order that extends
//! session order and write-read), their reads and writes with the program's
//! values, who each read read from, and the locals' final values.
//!
//! [`HistView::to_jepsen`] writes it as a Jepsen rw-register history in
//! which every write has a value unique to its key (the program's own values
//! may repeat; the register values here are write numbers), so `analyze`
//! recovers exactly the explorer's write-read relation; the initial value
//! is `nil`. Each transaction is one `:invoke`/`:ok` pair on the process of
//! its session, one after another in the explorer's order. An aborted
//! transaction writes nothing visible, but its reads are constrained like
//! any other (Biswas–Enea, spec pitfall 3), while Jepsen's `:fail` would
//! make `analyze` ignore them: it is written as an `:ok` transaction holding
//! only its external reads, which the axioms treat identically.

use super::dpor::View;
use super::eval::Env;
use super::history::{EvKind, Hist, Status, TxnId, INIT, OWN};
use std::fmt::Write as _;

/// Who a read read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// The initial value.
    Init,
    /// The transaction's own earlier write.
    Own,
    /// A transaction: (session, index in session), both from 0.
    Txn(usize, usize),
}

/// One read or write.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventView {
    /// A read (else a write).
    pub read: bool,
    /// The key as EDN (`:x`, `[:course 3]`).
    pub key: String,
    /// The value as EDN.
    pub value: String,
    /// For a read, who it read from.
    pub from: Option<Source>,
}

/// One transaction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TxnView {
    /// Its session (from 0).
    pub session: usize,
    /// Its index in the session (from 0).
    pub index: usize,
    /// Whether it aborted.
    pub aborted: bool,
    /// Its reads and writes in program order.
    pub events: Vec<EventView>,
}

/// A complete history.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HistView {
    /// Transactions in the explorer's order.
    pub txns: Vec<TxnView>,
    /// The locals with a value, by name.
    pub locals: Vec<(String, String)>,
}

/// The label of a transaction: `T1.2` is session 1's second one (from 1).
pub fn label(session: usize, index: usize) -> String {
    format!("T{}.{}", session + 1, index + 1)
}

impl HistView {
    /// A copy of `h` with the engine's keys and values.
    pub fn new(e: &View, h: &Hist, env: &Env) -> HistView {
        let place = |t: TxnId| e.shape.place[t as usize];
        let mut txns = Vec::new();
        for &t in &h.order[1..] {
            let (session, index) = place(t);
            let log = &h.txns[t as usize];
            let events = log
                .events
                .iter()
                .map(|ev| {
                    let (name, row) = e.tables.keys[ev.key as usize];
                    EventView {
                        read: ev.kind == EvKind::Read,
                        key: e.prog.key_text(name, row),
                        value: e.tables.vals[ev.val as usize].to_string(),
                        from: (ev.kind == EvKind::Read).then(|| match ev.writer {
                            OWN => Source::Own,
                            INIT => Source::Init,
                            w => Source::Txn(place(w).0, place(w).1),
                        }),
                    }
                })
                .collect();
            txns.push(TxnView { session, index, aborted: log.status == Status::Aborted, events });
        }
        let locals = env
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (e.prog.locals[i].clone(), v.to_string())))
            .collect();
        HistView { txns, locals }
    }

    /// The history as text: one line per transaction, in session order.
    pub fn to_text(&self) -> String {
        let mut txns: Vec<&TxnView> = self.txns.iter().collect();
        txns.sort_by_key(|t| (t.session, t.index));
        let mut out = String::new();
        for t in txns {
            let _ = write!(out, "  {}{}:", label(t.session, t.index), if t.aborted { " (aborted)" } else { "" });
            for ev in &t.events {
                if ev.read {
                    let from = match ev.from {
                        Some(Source::Txn(s, i)) => label(s, i),
                        Some(Source::Own) => "own write".into(),
                        _ => "init".into(),
                    };
                    let _ = write!(out, " r {} = {} (from {from});", ev.key, ev.value);
                } else {
                    let _ = write!(out, " w {} = {};", ev.key, ev.value);
                }
            }
            if t.events.is_empty() {
                out.push_str(" (no reads or writes)");
            }
            out.push('\n');
        }
        if !self.locals.is_empty() {
            let ls: Vec<String> = self.locals.iter().map(|(n, v)| format!("{n} = {v}")).collect();
            let _ = writeln!(out, "  locals: {}", ls.join(", "));
        }
        out
    }

    /// The name `isolde analyze` gives the `i`th transaction (in the
    /// explorer's order) of [`HistView::to_jepsen`]'s history: `T` and the
    /// `:index` of its completion (each transaction is an invocation and a
    /// completion, indexed from 0 in that order).
    pub fn analyze_name(i: usize) -> String {
        format!("T{}", 2 * i + 1)
    }

    /// The transactions as `label = analyze name` pairs in session order
    /// (`T1.1 = T1`): how `isolde analyze` names them in the history
    /// [`HistView::to_jepsen`] writes.
    pub fn analyze_names(&self) -> Vec<(String, String)> {
        let mut names: Vec<(usize, usize, String)> =
            self.txns.iter().enumerate().map(|(i, t)| (t.session, t.index, HistView::analyze_name(i))).collect();
        names.sort();
        names.into_iter().map(|(s, i, n)| (label(s, i), n)).collect()
    }

    /// The history as a Jepsen rw-register EDN history with unique values
    /// (see the module documentation).
    pub fn to_jepsen(&self, program: &str, level: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(out, ";; A history of {program} consistent at {level}, written by `isolde explore`.");
        let _ = writeln!(out, ";; Processes are sessions; register values are write numbers, unique per key");
        let _ = writeln!(out, ";; (nil = initial value). Aborted transactions appear as :ok transactions holding");
        let _ = writeln!(out, ";; only their external reads: they write nothing, and their reads are constrained.");
        // The number of each write (per key), and each transaction's last
        // write of each key.
        let mut counter: Vec<(String, u64)> = Vec::new();
        let mut numbers: Vec<Vec<Option<u64>>> = Vec::new();
        for t in &self.txns {
            let mut nums = Vec::new();
            for ev in &t.events {
                if ev.read || t.aborted {
                    nums.push(None);
                    continue;
                }
                let n = match counter.iter_mut().find(|(k, _)| *k == ev.key) {
                    Some((_, c)) => {
                        *c += 1;
                        *c
                    }
                    None => {
                        counter.push((ev.key.clone(), 1));
                        1
                    }
                };
                nums.push(Some(n));
            }
            numbers.push(nums);
        }
        let last_write = |ti: usize, key: &str, before: usize| -> Option<u64> {
            let t = &self.txns[ti];
            (0..before).rev().find(|&j| !t.events[j].read && t.events[j].key == key).and_then(|j| numbers[ti][j])
        };
        let mut index = 0;
        for (ti, t) in self.txns.iter().enumerate() {
            let mut inv = Vec::new();
            let mut ok = Vec::new();
            for (j, ev) in t.events.iter().enumerate() {
                if ev.read {
                    if t.aborted && ev.from == Some(Source::Own) {
                        continue;
                    }
                    let v = match ev.from {
                        Some(Source::Txn(s, i)) => {
                            let w =
                                self.txns.iter().position(|x| x.session == s && x.index == i).expect("writer present");
                            last_write(w, &ev.key, self.txns[w].events.len())
                        }
                        Some(Source::Own) => last_write(ti, &ev.key, j),
                        _ => None,
                    };
                    inv.push(format!("[:r {} nil]", ev.key));
                    ok.push(format!("[:r {} {}]", ev.key, v.map_or("nil".into(), |n| n.to_string())));
                } else if !t.aborted {
                    let n = numbers[ti][j].expect("numbered write");
                    inv.push(format!("[:w {} {n}]", ev.key));
                    ok.push(format!("[:w {} {n}]", ev.key));
                }
            }
            let _ = writeln!(
                out,
                "{{:type :invoke, :f :txn, :value [{}], :process {}, :time {}, :index {index}}}",
                inv.join(" "),
                t.session,
                (index + 1) * 1000
            );
            index += 1;
            let _ = writeln!(
                out,
                "{{:type :ok, :f :txn, :value [{}], :process {}, :time {}, :index {index}}}",
                ok.join(" "),
                t.session,
                (index + 1) * 1000
            );
            index += 1;
        }
        out
    }
}
