//! Test helpers shared by the generators' tests: a strict parser for exactly
//! the line format [`sim`](super::sim) emits, invocation/completion pairing,
//! and the workload-independent history checks.

use std::collections::{HashMap, HashSet};

/// A cursor over one line, for hand-written strict parsing.
pub(crate) struct Cur<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    /// Consumes `lit` if the input continues with it.
    pub(crate) fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    /// Consumes `lit`, panicking if the input does not continue with it.
    pub(crate) fn expect(&mut self, lit: &str) {
        assert!(self.eat(lit), "expected {lit:?} at {} in {:?}", self.i, String::from_utf8_lossy(self.s));
    }

    /// Consumes a non-empty run of decimal digits.
    pub(crate) fn num(&mut self) -> u64 {
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        assert!(self.i > start, "expected a number at {start} in {:?}", String::from_utf8_lossy(self.s));
        std::str::from_utf8(&self.s[start..self.i]).unwrap().parse().unwrap()
    }

    /// Consumes a run of ASCII letters.
    pub(crate) fn word(&mut self) -> String {
        let start = self.i;
        while self.s[self.i].is_ascii_alphabetic() {
            self.i += 1;
        }
        String::from_utf8(self.s[start..self.i].to_vec()).unwrap()
    }
}

/// A parsed op line with micro-ops of type `M`.
#[derive(Clone, Debug)]
pub(crate) struct POp<M> {
    /// `invoke`, `ok`, `fail` or `info`.
    pub ty: String,
    pub mops: Vec<M>,
    pub process: u64,
    pub time: u64,
    pub index: u64,
}

/// Parses one line; `mop` parses a micro-op's body between `[:` and `]`.
pub(crate) fn parse_line<M>(line: &str, mop: &impl Fn(&mut Cur) -> M) -> POp<M> {
    let mut c = Cur { s: line.as_bytes(), i: 0 };
    c.expect("{:type :");
    let ty = c.word();
    c.expect(", :f :txn, :value [");
    let mut mops = Vec::new();
    while !c.eat("]") {
        if !mops.is_empty() {
            c.expect(" ");
        }
        c.expect("[:");
        mops.push(mop(&mut c));
        c.expect("]");
    }
    c.expect(", :process ");
    let process = c.num();
    c.expect(", :time ");
    let time = c.num();
    c.expect(", :index ");
    let index = c.num();
    c.expect("}");
    assert_eq!(c.i, line.len(), "trailing bytes in {line:?}");
    POp { ty, mops, process, time, index }
}

/// Parses a whole history (newline-terminated lines).
pub(crate) fn parse<M>(h: &str, mop: impl Fn(&mut Cur) -> M) -> Vec<POp<M>> {
    assert!(h.is_empty() || h.ends_with('\n'));
    h.lines().map(|l| parse_line(l, &mop)).collect()
}

/// A generated transaction: the positions of its two lines.
pub(crate) struct Txn {
    pub invoke: usize,
    pub complete: usize,
}

/// Pairs each invocation with its completion through the process id,
/// asserting per-process alternation along the way. Sorted by invocation.
pub(crate) fn pair<M>(ops: &[POp<M>]) -> Vec<Txn> {
    let mut open: HashMap<u64, usize> = HashMap::new();
    let mut txns = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if op.ty == "invoke" {
            assert!(open.insert(op.process, i).is_none(), "process {} invoked twice in a row at {i}", op.process);
        } else {
            assert!(["ok", "fail", "info"].contains(&op.ty.as_str()), "bad type {}", op.ty);
            let inv = open.remove(&op.process).unwrap_or_else(|| panic!("completion without invoke at {i}"));
            txns.push(Txn { invoke: inv, complete: i });
        }
    }
    assert!(open.is_empty(), "unfinished invocations: {open:?}");
    txns.sort_by_key(|t| t.invoke);
    txns
}

/// Checks the shape every generated history has: `txns` invocations and as
/// many completions, dense `:index`, strictly increasing `:time`, 1 to
/// `max_txn_len` micro-ops per line, at most `processes` transactions open
/// at once, and (with enough transactions) real overlap between them.
pub(crate) fn check_shape<M>(ops: &[POp<M>], txns: usize, processes: usize, max_txn_len: usize) {
    let invokes = ops.iter().filter(|o| o.ty == "invoke").count();
    assert_eq!(invokes, txns);
    assert_eq!(ops.len() - invokes, txns);
    let (mut open, mut max_open, mut overlapping) = (0usize, 0usize, 0usize);
    for (i, op) in ops.iter().enumerate() {
        assert_eq!(op.index, i as u64);
        assert!(!op.mops.is_empty() && op.mops.len() <= max_txn_len);
        if i > 0 {
            assert!(op.time > ops[i - 1].time, "time not increasing at {i}");
        }
        if op.ty == "invoke" {
            open += 1;
            overlapping += (open > 1) as usize;
        } else {
            open -= 1;
        }
        max_open = max_open.max(open);
    }
    assert!(max_open <= processes, "concurrency {max_open} > {processes}");
    if processes > 1 && txns >= 1_000 {
        assert!(overlapping > txns / 2, "transactions should overlap");
    }
}

/// Checks that the apply order extends real time: each applied transaction
/// is applied after every applied transaction that completed before it was
/// invoked. `pos` maps invocation line to apply position. Returns how many
/// transactions had such a predecessor (so callers can assert the check bit).
pub(crate) fn check_realtime<M>(ops: &[POp<M>], txns: &[Txn], pos: &HashMap<usize, usize>) -> usize {
    let complete_of: HashMap<usize, usize> = txns.iter().map(|t| (t.complete, t.invoke)).collect();
    let mut max_done: Option<usize> = None;
    let mut checked = 0;
    for (i, op) in ops.iter().enumerate() {
        if op.ty == "invoke" {
            if let (Some(&p), Some(bound)) = (pos.get(&i), max_done) {
                assert!(p > bound, "txn invoked at {i} applied before a txn that completed earlier");
                checked += 1;
            }
        } else if let Some(&p) = pos.get(&complete_of[&i]) {
            max_done = Some(max_done.map_or(p, |m| m.max(p)));
        }
    }
    checked
}

/// Checks Jepsen's process-id discipline around `:info`: a process id is
/// never used again after its `:info`, and the client slot continues (if it
/// invokes again) as `p + processes`. Returns the number of `:info` ops.
pub(crate) fn check_info_process_ids<M>(ops: &[POp<M>], processes: usize) -> usize {
    let infos: Vec<&POp<M>> = ops.iter().filter(|o| o.ty == "info").collect();
    let mut last_use: HashMap<u64, usize> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        last_use.insert(op.process, i);
    }
    for op in &infos {
        assert_eq!(last_use[&op.process], op.index as usize, "process {} reused after :info", op.process);
    }
    // Every process id p belongs to client slot p % processes; each :info
    // adds exactly one new id (unused if its slot never invokes again).
    let n = processes as u64;
    let ids: HashSet<u64> = ops.iter().map(|o| o.process).collect();
    assert!(ids.len() <= processes + infos.len());
    assert!(ids.len() >= infos.len());
    for op in &infos {
        let next = op.process + n;
        let later = ops[op.index as usize..].iter().any(|o| o.process == next);
        let slot_busy_later = ops[op.index as usize + 1..].iter().any(|o| o.process % n == op.process % n);
        assert_eq!(later, slot_busy_later, "slot of {} should continue as {next}", op.process);
    }
    infos.len()
}

/// A list-append history of at least `min_bytes` bytes for the readers'
/// tests and throughput benchmark, from [`super::list_append`]: 30 clients,
/// 2 to 6 micro-ops per transaction (60% reads) over 8 live keys retired after
/// 100 appends (so reads return lists of up to ~100 elements), 2% `:fail` and
/// 2% `:info`. Like a real Jepsen history, it is then given an `:error` on
/// every `:fail`/`:info` completion (an extra field) and a nemesis op every
/// 100 lines (a non-client op), with `:index` renumbered densely.
pub(crate) fn sized_list_append(min_bytes: usize, seed: u64) -> String {
    use super::list_append::{list_append_string, KeyDist, ListAppendConfig};
    let cfg = |txns| ListAppendConfig {
        seed,
        txns,
        processes: 30,
        min_txn_len: 2,
        max_txn_len: 6,
        active_keys: 8,
        max_writes_per_key: 100,
        read_fraction: 0.6,
        key_dist: KeyDist::Uniform,
        fail_fraction: 0.02,
        info_fraction: 0.02,
    };
    let sample = list_append_string(&cfg(2000)).len().max(1);
    let mut txns = (min_bytes as f64 / sample as f64 * 2000.0 * 0.98) as usize + 10;
    loop {
        let text = decorate(&list_append_string(&cfg(txns)));
        if text.len() >= min_bytes {
            return text;
        }
        txns += txns / 10 + 10;
    }
}

/// Adds `:error` fields and nemesis ops to generated EDN (see
/// [`sized_list_append`]).
fn decorate(edn: &str) -> String {
    let mut out = String::with_capacity(edn.len() + edn.len() / 20);
    let mut index = 0u64;
    for (n, line) in edn.lines().enumerate() {
        let Some(at) = line.rfind(", :index ") else { continue };
        let body = &line[..at];
        if n % 100 == 99 {
            let time = body.rfind(":time ").map_or("0", |t| &body[t + 6..]);
            out.push_str(&format!(
                "{{:type :info, :f :start-partition, :value [:isolated {{\"n1\" #{{\"n2\" \"n3\"}}}}], \
                 :process :nemesis, :time {time}, :index {index}}}\n"
            ));
            index += 1;
        }
        out.push_str(body);
        if line.starts_with("{:type :fail") {
            out.push_str(", :error \"conflict\"");
        } else if line.starts_with("{:type :info") {
            out.push_str(", :error \"timeout\"");
        }
        out.push_str(&format!(", :index {index}}}\n"));
        index += 1;
    }
    out
}

/// An op's micro-ops as `"w 1 5, r 2 nil"` (f, key, value), for compact
/// assertions in the format readers' tests.
pub(crate) fn mops_text(h: &crate::history::History, op: &crate::history::Op) -> String {
    let mops: Vec<String> = h
        .mops_of(op)
        .iter()
        .map(|m| {
            let v = match m.value {
                crate::history::MopValue::Int(v) => h.value_text(v),
                _ => "nil".into(),
            };
            format!("{} {} {v}", m.f.name(), h.key(m.key))
        })
        .collect();
    mops.join(", ")
}
