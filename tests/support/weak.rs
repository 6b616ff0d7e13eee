//! Helpers for the weak-level tests: tiny histories written inline, and the
//! verdicts of the fast checkers, the saturation oracle and the enumerator
//! side by side.

use isolde::anomaly::Workload;
use isolde::check::resolve_workload;
use isolde::history::History;
use isolde::ingest::{read_bytes, Format};
use isolde::weak::front::{self, Front, Sessions};
use isolde::weak::oracle::{self, Axiom};
use isolde::weak::{check_front, Level, Options, Verdict};
use proptest::prelude::*;

/// EDN text of transactions, one `(type, process, value)` per operation in
/// history order (`type` as in `:ok`, without the colon; `value` an EDN
/// vector of micro-ops).
pub fn ops_edn(ops: &[(&str, i64, &str)]) -> String {
    ops.iter()
        .enumerate()
        .map(|(i, (ty, p, v))| format!("{{:type :{ty}, :f :txn, :process {p}, :value {v}, :index {i}}}\n"))
        .collect()
}

/// A history of `:ok` transactions, one `(process, value)` pair per
/// operation in history order, `value` an EDN vector of micro-ops.
pub fn history(ops: &[(i64, &str)]) -> History {
    let typed: Vec<(&str, i64, &str)> = ops.iter().map(|&(p, v)| ("ok", p, v)).collect();
    edn(&ops_edn(&typed))
}

/// A history from EDN text.
pub fn edn(text: &str) -> History {
    read_bytes("test.edn", text.as_bytes(), Format::Edn).expect("test history parses")
}

/// The front end of `h` (workload decided as the CLI does).
pub fn front_of(h: &History, sessions: Sessions) -> Front {
    let w = resolve_workload(h, isolde::check::WorkloadChoice::Auto);
    front::build(h, w, sessions).expect("front end")
}

/// The workload the CLI picks.
pub fn workload(h: &History) -> Workload {
    resolve_workload(h, isolde::check::WorkloadChoice::Auto)
}

/// The fast checker's verdict at `level`: `Some(true)` valid, `Some(false)`
/// invalid, `None` unknown.
pub fn fast(f: &Front, level: Level, sessions: Sessions) -> Option<bool> {
    match check_front(f, level, &Options { sessions, ..Options::default() }) {
        Verdict::Valid(_) => Some(true),
        Verdict::Invalid(_) => Some(false),
        Verdict::Unknown(_) => None,
    }
}

/// Verdicts at RC, RA, CC, PC, SI, SER. RC, RA and CC come from the fast
/// checker, which must agree with the saturation oracle and (for small
/// histories) the enumerator; the stronger three from the enumerator.
pub fn ladder(h: &History, sessions: Sessions) -> [bool; 6] {
    let f = front_of(h, sessions);
    let mut out = [false; 6];
    for (i, level) in Level::ALL.into_iter().enumerate() {
        let fast = fast(&f, level, sessions).unwrap_or_else(|| panic!("{level:?} undecided"));
        assert_eq!(fast, oracle::saturate(&f, level), "fast vs saturation at {level:?}");
        if let Some(e) = oracle::enumerate(&f, level.into()) {
            assert_eq!(fast, e, "fast vs enumeration at {level:?}");
        }
        out[i] = fast;
    }
    for (i, a) in [Axiom::Prefix, Axiom::SnapshotIsolation, Axiom::Serializable].into_iter().enumerate() {
        out[3 + i] = oracle::enumerate(&f, a).expect("small enough to enumerate");
    }
    out
}

/// A history in the PolySI / Plume / C4 text format (`r(k,v,s,t)`,
/// `w(k,v,s,t)`, `t = -1` for aborted writes).
pub fn text(t: &str) -> History {
    read_bytes("test.txt", t.as_bytes(), Format::PolysiText).expect("test history parses")
}

/// The fast checker's verdicts at RC, RA and CC (which must agree with the
/// saturation oracle and the enumerator), and the Plume TAP letter of the
/// violation at the strongest level, if any.
pub fn weak_ladder(h: &History) -> ([bool; 3], Option<char>) {
    let f = front_of(h, Sessions::Process);
    let mut out = [false; 3];
    let mut tap = None;
    for (i, level) in Level::ALL.into_iter().enumerate() {
        let v = check_front(&f, level, &Options::default());
        out[i] = matches!(v, Verdict::Valid(_));
        assert!(!matches!(v, Verdict::Unknown(_)), "{level:?} undecided");
        assert_eq!(out[i], oracle::saturate(&f, level), "fast vs saturation at {level:?}");
        if let Some(e) = oracle::enumerate(&f, level.into()) {
            assert_eq!(out[i], e, "fast vs enumeration at {level:?}");
        }
        if let Verdict::Invalid(v) = v {
            if f.choices.is_empty() {
                let wr = isolde::weak::resolve(&f, &[]);
                check_witness(&f, &wr, &v).unwrap_or_else(|e| panic!("{level:?} witness: {e}"));
            }
            tap = Some(v.tap);
        }
    }
    (out, tap)
}

/// A history in AWDIT's `test` format, read by isolde's reader (a first
/// session of writes of 0 is the initial state).
pub fn awdit_test(t: &str) -> History {
    read_bytes("test.txt", t.as_bytes(), Format::AwditTest).expect("test history parses")
}

/// The weak verdicts of `h` (RC, RA, CC: `Some(valid)`, `None` unknown).
pub fn weak_verdicts(h: &History) -> [Option<bool>; 3] {
    let w = workload(h);
    Level::ALL.map(|l| match isolde::weak::check(h, w, l, &Options::default()) {
        Verdict::Valid(_) => Some(true),
        Verdict::Invalid(_) => Some(false),
        Verdict::Unknown(_) => None,
    })
}

/// `h` written in `format` and read back.
pub fn round_trip(h: &History, format: isolde::gen::TextFormat, pin_initial: bool) -> History {
    let mut out = Vec::new();
    isolde::gen::write_text(h, format, isolde::gen::registers::ExportOptions { pin_initial }, &mut out)
        .expect("writes");
    let f = match format {
        isolde::gen::TextFormat::Plume => Format::PolysiText,
        isolde::gen::TextFormat::AwditTest => Format::AwditTest,
    };
    read_bytes("round-trip.txt", &out, f).expect("reads back")
}

/// The committed transactions of `h` per session, each as its micro-ops'
/// text (`r 1 nil`, `w 1 5`), the sessions sorted (formats may reorder them).
pub fn sessions_text(h: &History) -> Vec<Vec<String>> {
    use isolde::history::{MopValue, OpType};
    let mut order: Vec<i64> = Vec::new();
    let mut out: Vec<Vec<String>> = Vec::new();
    for op in h.ops.iter().filter(|o| o.op_type == OpType::Ok) {
        let s = match order.iter().position(|&p| p == op.process) {
            Some(s) => s,
            None => {
                order.push(op.process);
                out.push(Vec::new());
                out.len() - 1
            }
        };
        let mops: Vec<String> = h
            .mops_of(op)
            .iter()
            .map(|m| {
                let v = match m.value {
                    MopValue::Int(v) => h.value_text(v),
                    _ => "nil".into(),
                };
                format!("{} {} {v}", m.f.name(), h.key(m.key))
            })
            .collect();
        out[s].push(mops.join(", "));
    }
    out.sort();
    out
}

/// Checks a violation's witness against the history, step by step, without
/// the checkers' own data structures: every session step is session order,
/// every read step a read of the key from that writer, every forced step a
/// read of the key from the next transaction by a reader that had to see
/// this one, which writes the key; the cycle closes. `wr` gives the writers
/// assumed for reads of repeated values.
pub fn check_witness(f: &Front, wr: &[u32], v: &isolde::weak::witness::Violation) -> Result<(), String> {
    use isolde::weak::witness::{Cause, WStep};
    use isolde::weak::Kind;
    let Cause::Cycle(c) = &v.cause else { return Ok(()) };
    let txn = |o: Option<u32>| o.map_or(0, |o| f.txn_of_op[o as usize]);
    let n = c.txns.len();
    if n < 2 || c.steps.len() != n {
        return Err(format!("malformed cycle {c:?}"));
    }
    // The writer of the read micro-op `mop` of transaction `t`.
    let writer_of = |t: u32, mop: u32| -> Option<u32> {
        let base = f.read_start[t as usize] as usize;
        f.reads_of(t).iter().position(|r| r.mop == mop).map(|i| wr[base + i])
    };
    let so = |a: u32, b: u32| {
        a == 0 || (f.session[a as usize] == f.session[b as usize] && f.pos[a as usize] < f.pos[b as usize])
    };
    for i in 0..n {
        let (a, b) = (txn(c.txns[i]), txn(c.txns[(i + 1) % n]));
        let ok = match &c.steps[i] {
            WStep::So => so(a, b),
            WStep::Wr { key, mop } => {
                writer_of(b, *mop) == Some(a) && f.reads_of(b).iter().any(|r| r.mop == *mop && r.key == *key)
            }
            WStep::Version { key, .. } => f.version_edges.iter().any(|e| e.from == a && e.to == b && e.key == *key),
            WStep::Forced { kind, reader, key, read_mop, via_mop } => {
                let t3 = f.txn_of_op[*reader as usize];
                let reads_next = writer_of(t3, *read_mop) == Some(b);
                let writes = f.writes_key(a, *key);
                let premise = match (kind, via_mop) {
                    (Kind::NonMonotonic, Some(q)) => q < read_mop && writer_of(t3, *q) == Some(a),
                    (Kind::FracturedWr, Some(q)) => writer_of(t3, *q) == Some(a),
                    (Kind::FracturedSo, _) => so(a, t3),
                    (Kind::Causal, _) => v.level == isolde::weak::Level::Causal,
                    _ => false,
                };
                reads_next && writes && premise
            }
        };
        if !ok {
            return Err(format!("step {i} ({:?}) from txn {a} to txn {b} is not justified", c.steps[i]));
        }
    }
    Ok(())
}

/// One micro-op before values are fixed: (is_write, key, pick).
pub type RawMop = (bool, u8, u8);

/// A random history as EDN (for the property tests): `txns` transactions of 1 to 4 micro-ops over
/// `keys` keys. Writes get fresh values (or, rarely, a repeated one); a read
/// returns nil or any value written to its key anywhere in the history.
pub fn render(list: bool, txns: &[(u8, u8, Vec<RawMop>)], keys: u8, repeat: bool) -> String {
    let mut written: Vec<Vec<i64>> = vec![Vec::new(); keys as usize];
    let mut next = 1i64;
    let mut values: Vec<Vec<Option<i64>>> = Vec::new();
    for (_, _, mops) in txns {
        let mut vs = Vec::new();
        for &(w, k, pick) in mops {
            let k = (k % keys) as usize;
            if w {
                let v = if repeat && !list && pick % 7 == 0 && !written[k].is_empty() {
                    written[k][pick as usize % written[k].len()]
                } else {
                    next += 1;
                    next
                };
                written[k].push(v);
                vs.push(Some(v));
            } else {
                vs.push(None);
            }
        }
        values.push(vs);
    }
    let mut out = String::new();
    for (i, (process, kind, mops)) in txns.iter().enumerate() {
        let ty = match kind % 10 {
            0 => "fail",
            1 => "info",
            _ => "ok",
        };
        let mut ms = Vec::new();
        for (j, &(w, k, pick)) in mops.iter().enumerate() {
            let key = k % keys;
            if w {
                let v = values[i][j].unwrap_or(0);
                ms.push(if list { format!("[:append {key} {v}]") } else { format!("[:w {key} {v}]") });
            } else {
                let ws = &written[key as usize];
                let n = ws.len() + 1;
                let idx = pick as usize % n;
                if list {
                    // A list: a few distinct written elements in some order.
                    let len = idx.min(ws.len());
                    let start = (pick as usize / 3) % (ws.len().max(1));
                    let elems: Vec<String> = (0..len).map(|x| ws[(start + x) % ws.len()].to_string()).collect();
                    ms.push(format!("[:r {key} [{}]]", elems.join(" ")));
                } else if idx == 0 {
                    ms.push(format!("[:r {key} nil]"));
                } else {
                    ms.push(format!("[:r {key} {}]", ws[idx - 1]));
                }
            }
        }
        out.push_str(&format!("{{:type :{ty}, :f :txn, :process {process}, :value [{}], :index {i}}}\n", ms.join(" ")));
    }
    out
}

pub fn raw_txns(max: usize) -> impl Strategy<Value = Vec<(u8, u8, Vec<RawMop>)>> {
    prop::collection::vec(
        (0u8..3, any::<u8>(), prop::collection::vec((any::<bool>(), any::<u8>(), any::<u8>()), 1..5)),
        1..=max,
    )
}

/// The exact check's verdict at `level` (`Some(true)` valid, `Some(false)`
/// invalid, `None` unknown), with causal consistency's forced write orders
/// (computed with the level's session semantics) as known edges or
/// without; and how many of them the polygraph added.
pub fn exact_verdict(h: &History, level: isolde::si_check::Level, with_orders: bool) -> (Option<bool>, usize) {
    use isolde::si_check::{self, ExactOptions, OrderKind};
    let sessions = if level.order == OrderKind::Session { Sessions::Process } else { Sessions::None };
    let known = if with_orders { isolde::weak::strong::known_orders(h, sessions, &Options::default()) } else { None };
    let opts = ExactOptions { known, ..ExactOptions::default() };
    let out = si_check::check_level(h, level, &opts).expect("extracts");
    let v = match out.verdict {
        si_check::Verdict::Valid => Some(true),
        si_check::Verdict::Invalid(_) => Some(false),
        si_check::Verdict::Unknown(_) => None,
    };
    (v, out.stats.known_orders)
}

/// The text of a small history from one of `isolde gen`'s weak
/// rw-register stores (`faults` is the share of failed and of
/// indeterminate transactions each).
pub fn weak_store_history(
    level: isolde::gen::weak::WeakLevel,
    seed: u64,
    txns: usize,
    processes: usize,
    keys: usize,
    faults: f64,
) -> String {
    use isolde::gen::rw_register::{RwKeyDist, RwRegisterConfig};
    let cfg = RwRegisterConfig {
        seed,
        txns,
        processes,
        min_txn_len: 1,
        max_txn_len: 4,
        keys,
        read_fraction: 0.5,
        key_dist: RwKeyDist::Uniform,
        fail_fraction: faults,
        info_fraction: faults,
    };
    let mut out = Vec::new();
    isolde::gen::weak::write_weak(&cfg, level, &mut out).expect("generates");
    String::from_utf8(out).expect("utf-8")
}

/// The same from one of the weak list-append stores.
pub fn weak_list_store_history(
    level: isolde::gen::weak::WeakLevel,
    seed: u64,
    txns: usize,
    processes: usize,
    keys: usize,
    faults: f64,
) -> String {
    use isolde::gen::list_append::{KeyDist, ListAppendConfig};
    let cfg = ListAppendConfig {
        seed,
        txns,
        processes,
        min_txn_len: 1,
        max_txn_len: 4,
        active_keys: keys,
        max_writes_per_key: 30,
        read_fraction: 0.5,
        key_dist: KeyDist::Uniform,
        fail_fraction: faults,
        info_fraction: faults,
    };
    let mut out = Vec::new();
    isolde::gen::weak::write_weak_list_append(&cfg, level, &mut out).expect("generates");
    String::from_utf8(out).expect("utf-8")
}

/// The weakest level index (RC 0, RA 1, CC 2) a store's level implies.
pub fn implied_index(level: isolde::gen::weak::WeakLevel) -> usize {
    use isolde::gen::weak::WeakLevel;
    match level {
        WeakLevel::ReadCommitted => 0,
        WeakLevel::ReadAtomic => 1,
        WeakLevel::Causal | WeakLevel::Prefix => 2,
    }
}

/// A store history builder, as [`weak_store_history`] and
/// [`weak_list_store_history`].
pub type StoreHistory = fn(isolde::gen::weak::WeakLevel, u64, usize, usize, usize, f64) -> String;

/// Small histories of the prefix store satisfy prefix consistency, as the
/// exhaustive enumerator decides it (60 seeds, 7 transactions).
pub fn assert_small_prefix_histories_hold(history: StoreHistory) {
    for seed in 0..60 {
        let h = edn(&history(isolde::gen::weak::WeakLevel::Prefix, seed, 7, 3, 2, 0.0));
        let f = front_of(&h, Sessions::Process);
        assert_eq!(oracle::enumerate(&f, Axiom::Prefix), Some(true), "seed {seed}");
    }
}
