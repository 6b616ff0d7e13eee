//! The result, on process 0.
//!
//! Every worker sends what it found (cases in the whole history's ids, an
//! inference error if any, its figures) to worker 0, which then asks the
//! windows for the operations the cases name and the owners for the keys
//! they name. A window answers with each operation's bytes as they were
//! read (found from its line: the window scans to it and reads op forms
//! from there, skipping non-client ones), so reports echo the user's ops
//! exactly. Worker 0 reads those ops into a small history of its own,
//! gives each its place in the whole history (`:index`, line, its
//! partner), renumbers the cases into it, and builds Elle's result map
//! with the single run's rules ([`crate::check::distributed_outcome`]).
//! Cases are put in a canonical order (by the first operation they name,
//! then by their text), since the order in which windows find them is not
//! the single run's.

use super::bsp::{Bsp, Traffic};
use super::window::Window;
use super::DistError;
use crate::anomaly::{Anomalies, Case, Renumber, Workload};
use crate::check::{self, CheckOptions, Outcome, Stats};
use crate::history::{Atom, History, KeyId, OpId, Value, NONE};
use rustc_hash::{FxHashMap, FxHashSet};

/// One worker's figures, for `--stats`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct WorkerStats {
    /// Its process.
    pub process: usize,
    /// Its window's client ops.
    pub ops: usize,
    /// Its window's bytes.
    pub bytes: u64,
    /// Operations (and stand-ins) and micro-ops of the keys it owns.
    pub owned_ops: usize,
    /// Micro-ops of the keys it owns.
    pub owned_mops: usize,
    /// Edges whose source is in its window.
    pub edges: usize,
    /// Traffic.
    pub traffic: Traffic,
    /// Rounds of label exchange.
    pub label_rounds: u64,
    /// Ops that migrated to it.
    pub migrants: usize,
    /// Components it analysed.
    pub components: usize,
    /// Stages (read, infer, order, route, labels, cycles): seconds, and the
    /// process's peak resident memory after it (MB).
    pub times: Vec<(String, f64, u64)>,
    /// Peak resident memory, MB.
    pub peak_mb: Option<u64>,
}

/// What one worker found.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Found {
    /// Cases (whole-history ids).
    pub anomalies: Vec<(String, Case)>,
    /// An inference error, with the ops it names first.
    pub error: Option<((OpId, OpId), String)>,
    /// Figures.
    pub stats: WorkerStats,
}

/// Worker 0's request to one worker.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Ask {
    ops: Vec<OpId>,
    keys: Vec<u32>,
}

/// One worker's answer: per op (global id, `:index`, line, partner, its
/// bytes), per key (global id, text).
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Answer {
    ops: Vec<(OpId, i64, u32, OpId, String)>,
    keys: Vec<(u32, String)>,
}

/// The result of a distributed check, on worker 0.
pub struct Report {
    /// The operations the result names, with their places in the whole.
    pub history: History,
    /// The result.
    pub outcome: Outcome,
    /// Every worker's figures.
    pub workers: Vec<WorkerStats>,
}

/// Gathers the findings on worker 0 and builds the result there (`None` on
/// the other workers).
#[allow(clippy::too_many_arguments)]
pub fn gather(
    bsp: &mut Bsp,
    win: &Window,
    input: &crate::ingest::MappedEdn,
    keys: &[String],
    workload: Workload,
    opts: &CheckOptions,
    found: Found,
    edges: usize,
) -> Result<Option<Report>, DistError> {
    let all = bsp.gather(found)?;
    let workers = bsp.peers();
    if bsp.index() == 0 && all.len() != workers {
        return Err(DistError::Cluster(format!(
            "{} of {workers} workers reported their findings; the others stopped: no result",
            all.len()
        )));
    }
    let error = all.iter().filter_map(|f| f.error.clone()).min_by_key(|e| e.0);
    let mut asks: Vec<Ask> = (0..workers).map(|_| Ask::default()).collect();
    if bsp.index() == 0 && error.is_none() {
        let (ops, keyset) = named(&all);
        for g in ops {
            asks[win.window_of(g)].ops.push(g);
        }
        for k in keyset {
            asks[(k as usize) % workers].keys.push(k);
        }
    }
    let out: Vec<(usize, Ask)> = if bsp.index() == 0 { asks.into_iter().enumerate().collect() } else { Vec::new() };
    let ask = bsp.exchange(out)?.into_iter().next().map(|(_, a)| a).unwrap_or_default();
    let answer = answer(win, input, keys, workers, &ask);
    let answers = bsp.gather(answer)?;
    if bsp.index() != 0 {
        return Ok(None);
    }
    if answers.len() != workers {
        return Err(DistError::Cluster(format!("{} of {workers} workers answered: no result", answers.len())));
    }
    let mut workers_stats: Vec<WorkerStats> = all.iter().map(|f| f.stats.clone()).collect();
    workers_stats.sort_by_key(|s| s.process);
    let mut stats = Stats {
        ops: win.whole.ops,
        nonclient_ops: win.whole.nonclient,
        realtime: win.whole.has_invokes,
        edges,
        ..Stats::default()
    };
    stats.distributed = Some((all.iter().map(|f| f.stats.process).max().map_or(1, |p| p + 1), workers));
    if let Some((_, message)) = error {
        let mut h = History::default();
        h.source = input.name.clone();
        h.nonclient_ops = win.whole.nonclient;
        h.dropped_events = win.whole.dropped;
        let outcome = check::cannot_run_outcome(workload, message, stats);
        return Ok(Some(Report { history: h, outcome, workers: workers_stats }));
    }
    let (history, mut renumber) = report_history(input, answers, win)?;
    let mut anomalies = Anomalies::new();
    for f in all {
        for (name, case) in f.anomalies {
            anomalies.entry(name).or_default().push(case);
        }
    }
    let mut keyed: Vec<(String, Vec<Case>)> = anomalies.into_iter().collect();
    for (_, cases) in &mut keyed {
        let mut sorted: Vec<(OpId, String, Case)> =
            cases.drain(..).map(|c| (first_op(&c), format!("{c:?}"), c)).collect();
        sorted.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        cases.extend(sorted.into_iter().map(|(_, _, c)| c.renumber(&mut renumber)));
    }
    let anomalies: Anomalies = keyed.into_iter().collect();
    let outcome =
        check::distributed_outcome(workload, anomalies, opts, stats).map_err(|e| DistError::Input(e.to_string()))?;
    Ok(Some(Report { history, outcome, workers: workers_stats }))
}

/// The operations and keys the cases name.
fn named(all: &[Found]) -> (Vec<OpId>, Vec<u32>) {
    struct Collect {
        ops: FxHashSet<OpId>,
        keys: FxHashSet<u32>,
    }
    impl Renumber for Collect {
        fn op(&mut self, op: OpId) -> OpId {
            if op != NONE {
                self.ops.insert(op);
            }
            op
        }
        fn key(&mut self, key: KeyId) -> KeyId {
            self.keys.insert(key.0);
            key
        }
    }
    let mut c = Collect { ops: FxHashSet::default(), keys: FxHashSet::default() };
    for f in all {
        for (_, case) in &f.anomalies {
            case.clone().renumber(&mut c);
        }
    }
    let mut ops: Vec<OpId> = c.ops.into_iter().collect();
    ops.sort_unstable();
    let mut keys: Vec<u32> = c.keys.into_iter().collect();
    keys.sort_unstable();
    (ops, keys)
}

/// The first operation a case names (for the canonical order).
fn first_op(case: &Case) -> OpId {
    struct First(OpId);
    impl Renumber for First {
        fn op(&mut self, op: OpId) -> OpId {
            self.0 = self.0.min(op);
            op
        }
        fn key(&mut self, key: KeyId) -> KeyId {
            key
        }
    }
    let mut f = First(NONE);
    case.clone().renumber(&mut f);
    f.0
}

/// A worker's answer to worker 0's request.
fn answer(win: &Window, input: &crate::ingest::MappedEdn, keys: &[String], workers: usize, ask: &Ask) -> Answer {
    let mut out = Answer::default();
    let (start, end) = win.bytes;
    // One forward scan: the asked ops are in local order, so by line.
    let (mut pos, mut line) = (start, win.first_line);
    for &g in &ask.ops {
        let Some(l) = win.local(g) else { continue };
        let op = &win.h.ops[l as usize];
        let target = u64::from(op.line);
        while line < target && pos < end {
            match input.next_line(pos, end) {
                Some(next) => {
                    pos = next;
                    line += 1;
                }
                None => pos = end,
            }
        }
        // Client ops on the same line before this one.
        let k = win.h.ops[..l as usize].iter().rev().take_while(|o| o.line == op.line).count();
        if let Some((a, b)) = input.op_span(pos, end, k) {
            let text = String::from_utf8_lossy(input.text(a, b)).into_owned();
            out.ops.push((g, op.index, op.line, win.partner(l), text));
        }
    }
    for &k in &ask.keys {
        let local = (k as usize) / workers;
        if let Some(t) = keys.get(local) {
            out.keys.push((k, t.clone()));
        }
    }
    out
}

/// Renumbers whole-history ids into the report's.
struct ToReport {
    ops: FxHashMap<OpId, OpId>,
    keys: FxHashMap<u32, KeyId>,
}

impl Renumber for ToReport {
    fn op(&mut self, op: OpId) -> OpId {
        self.ops.get(&op).copied().unwrap_or(NONE)
    }
    fn key(&mut self, key: KeyId) -> KeyId {
        self.keys.get(&key.0).copied().unwrap_or(key)
    }
}

/// Reads the echoed ops into the report's history.
fn report_history(
    input: &crate::ingest::MappedEdn,
    answers: Vec<Answer>,
    win: &Window,
) -> Result<(History, ToReport), DistError> {
    let mut ops: Vec<(OpId, i64, u32, OpId, String)> = Vec::new();
    let mut key_texts: Vec<(u32, String)> = Vec::new();
    for a in answers {
        ops.extend(a.ops);
        key_texts.extend(a.keys);
    }
    ops.sort_unstable_by_key(|o| o.0);
    let mut text = String::new();
    for o in &ops {
        text.push_str(&o.4);
        text.push('\n');
    }
    let mut h = crate::ingest::parse_edn(&input.name, text.as_bytes())?;
    if h.ops.len() != ops.len() {
        return Err(DistError::Input(format!(
            "{}: {} operations named by the result read back as {}",
            input.name,
            ops.len(),
            h.ops.len()
        )));
    }
    let pos: FxHashMap<OpId, OpId> = ops.iter().enumerate().map(|(i, o)| (o.0, i as OpId)).collect();
    for (i, o) in ops.iter().enumerate() {
        let op = &mut h.ops[i];
        op.index = o.1;
        op.line = o.2;
        op.pair = pos.get(&o.3).copied().unwrap_or(NONE);
    }
    h.source = input.name.clone();
    h.nonclient_ops = win.whole.nonclient;
    h.dropped_events = win.whole.dropped;
    h.indeterminate_txns = win.whole.indeterminate;
    let mut by_text: FxHashMap<String, KeyId> =
        h.keys.iter().enumerate().map(|(i, k)| (k.to_string(), KeyId(i as u32))).collect();
    let mut keys = FxHashMap::default();
    for (g, t) in key_texts {
        let id = *by_text.entry(t.clone()).or_insert_with(|| {
            h.keys.push(Value::Atom(Atom::Symbol(t.as_str().into())));
            KeyId(h.keys.len() as u32 - 1)
        });
        keys.insert(g, id);
    }
    Ok((h, ToReport { ops: pos, keys }))
}
