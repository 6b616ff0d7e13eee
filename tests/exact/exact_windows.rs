//! Histories whose whole polygraph is over the constraint limit: a window of
//! consecutive transactions refutes a level the history violates, with a
//! witness whose every step is a read or write of the whole history, and a
//! window never makes a history valid.

use isolde::anomaly::{Refutation, Step};
use isolde::gen::rw_register::{rw_register_string_with, RwRegisterConfig};
use isolde::gen::{GenOptions, Level as StoreLevel};
use isolde::history::{History, MopFn, MopValue};
use isolde::ingest::{read_bytes, Format};
use isolde::si_check::{check_level, ExactOptions, Level, Verdict};
use std::time::Duration;

/// A history of `txns` transactions from the store at `level`, 15
/// micro-ops each over Zipf-distributed keys (the default shape).
fn generated(seed: u64, txns: usize, level: StoreLevel) -> History {
    let cfg = RwRegisterConfig { seed, txns, ..RwRegisterConfig::default() };
    let opts = GenOptions { level, ..GenOptions::default() };
    let text = rw_register_string_with(&cfg, &opts);
    read_bytes("gen.edn", text.as_bytes(), Format::Edn).expect("generated history reads")
}

fn opts(max_constraints: usize) -> ExactOptions {
    ExactOptions { max_constraints, timeout: Some(Duration::from_secs(120)), ..ExactOptions::default() }
}

/// Whether op `o` of `h` has a micro-op `f` of `key` with `value` (`None`:
/// a read of nil).
fn has_mop(h: &History, o: u32, f: MopFn, key: u32, value: Option<i64>) -> bool {
    h.mops_of(h.op(o)).iter().any(|m| {
        m.f == f
            && m.key.0 == key
            && match (m.value, value) {
                (MopValue::Int(v), Some(w)) => v == w,
                (MopValue::Nil, None) => true,
                _ => false,
            }
    })
}

/// Every data step of every cycle of `r` is a read or write of `h`.
fn steps_are_the_history(h: &History, r: &Refutation) {
    let mut checked = 0;
    for b in &r.branches {
        let c = &b.cycle;
        for (i, s) in c.steps.iter().enumerate() {
            let (a, z) = (c.ops[i], c.ops[(i + 1) % c.ops.len()]);
            match *s {
                Step::Wr { key, value, .. } => {
                    assert!(has_mop(h, a, MopFn::Write, key.0, value), "wr step {i}: {a} wrote {key:?}={value:?}");
                    assert!(has_mop(h, z, MopFn::Read, key.0, value), "wr step {i}: {z} read {key:?}={value:?}");
                }
                Step::Rw { key, value, value2, .. } => {
                    assert!(has_mop(h, a, MopFn::Read, key.0, value), "rw step {i}: {a} read {key:?}={value:?}");
                    assert!(has_mop(h, z, MopFn::Write, key.0, value2), "rw step {i}: {z} wrote {key:?}");
                }
                Step::Ww { key, value, value2, .. } => {
                    assert!(has_mop(h, a, MopFn::Write, key.0, value), "ww step {i}: {a} wrote {key:?}");
                    assert!(has_mop(h, z, MopFn::Write, key.0, value2), "ww step {i}: {z} wrote {key:?}");
                }
                _ => continue,
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "the refutation has data steps");
}

/// A snapshot-isolation store's history (write skews) at serializability,
/// with a limit the whole polygraph passes: refuted by a window, with a
/// witness over the whole history's reads and writes; the same history
/// with room for the whole polygraph is refuted too.
#[test]
fn an_over_limit_history_is_refuted_by_a_window() {
    let h = generated(7, 8000, StoreLevel::SnapshotIsolation);
    let level = Level::from_model("serializable").expect("exact level");
    let out = check_level(&h, level, &opts(100_000)).expect("register history");
    assert!(out.stats.over_limit, "the whole polygraph needs more than 100000 constraints");
    let w = out.stats.windows.expect("the window search ran");
    let (first, last) = w.refuted_by.unwrap_or_else(|| panic!("no window refuted: {w:?} {:?}", out.verdict));
    assert!(first < last && w.largest < out.stats.txns as u32, "{w:?}");
    match &out.verdict {
        Verdict::Invalid(r) => steps_are_the_history(&h, r),
        v => panic!("expected a refutation, got {v:?}"),
    }
    let whole = check_level(&h, level, &opts(50_000_000)).expect("register history");
    assert!(!whole.stats.over_limit && whole.stats.windows.is_none());
    assert!(matches!(whole.verdict, Verdict::Invalid(_)), "{:?}", whole.verdict);
}

/// A serializable store's history over the limit (the serial replay off,
/// so the polygraph is built): windows look, none refutes, and the verdict
/// stays unknown, never valid.
#[test]
fn an_over_limit_valid_history_stays_unknown() {
    let h = generated(8, 3000, StoreLevel::Serializable);
    let level = Level::from_model("serializable").expect("exact level");
    let o = ExactOptions { serial_first: false, ..opts(1_000) };
    let out = check_level(&h, level, &o).expect("register history");
    assert!(out.stats.over_limit);
    let w = out.stats.windows.expect("the window search ran");
    assert!(w.windows > 0 && w.refuted_by.is_none(), "{w:?}");
    assert!(matches!(out.verdict, Verdict::Unknown(_)), "{:?}", out.verdict);
}

/// The count in the unknown verdict's message is the same on every run.
#[test]
fn the_over_limit_count_is_deterministic() {
    let h = generated(9, 3000, StoreLevel::Serializable);
    let level = Level::from_model("serializable").expect("exact level");
    let o = ExactOptions { serial_first: false, ..opts(1_000) };
    let msgs: Vec<String> = (0..3)
        .map(|_| match check_level(&h, level, &o).expect("register history").verdict {
            Verdict::Unknown(m) => m,
            v => panic!("expected unknown, got {v:?}"),
        })
        .collect();
    assert!(msgs[0].contains("write-order constraints"), "{}", msgs[0]);
    assert!(msgs.iter().all(|m| *m == msgs[0]), "{msgs:?}");
}
