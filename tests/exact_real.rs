//! Real histories' dialects that the exact check must read right: dbcop
//! transactions marked committed that hold failed events (read as `:info`
//! unless `--failed-events as-committed`), and register histories whose
//! write values repeat. Tests on the published samples run only where
//! `../shared` sits beside the checkout.

use isolde::anomaly::Workload;
use isolde::check::{check, CheckOptions, Outcome, Validity, WorkloadChoice};
use isolde::history::{History, OpType};
use isolde::ingest::{read_bytes_with, read_path_with, FailedEvents, Format, ReadOptions};
use std::path::{Path, PathBuf};

fn run(h: &History, model: &str) -> Outcome {
    let opts = CheckOptions {
        workload: WorkloadChoice::Fixed(Workload::RwRegister),
        models: Some(vec![model.to_string()]),
        ..CheckOptions::default()
    };
    check(h, &opts).expect("check runs")
}

fn real(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/real").join(name);
    p.exists().then_some(p)
}

/// An event: (write, variable, value, success).
type Event = (bool, u64, u64, bool);

/// Encodes sessions of (events, success) transactions in dbcop's bincode.
fn dbcop(sessions: &[Vec<(Vec<Event>, bool)>]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [1u64, sessions.len() as u64, 2, 1, 2] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for s in ["CockroachDB", "start", "end"] {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&(sessions.len() as u64).to_le_bytes());
    for s in sessions {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        for (events, ok) in s {
            out.extend_from_slice(&(events.len() as u64).to_le_bytes());
            for &(w, k, v, e_ok) in events {
                out.push(w as u8);
                out.extend_from_slice(&k.to_le_bytes());
                out.extend_from_slice(&v.to_le_bytes());
                out.push(e_ok as u8);
            }
            out.push(*ok as u8);
        }
    }
    out
}

/// Write skew, except that one side's transaction holds a failed statement:
/// the server rolled it back, so the history is serializable; dbcop's own
/// reading (committed) makes it a G2-item.
#[test]
fn committed_dbcop_transactions_with_failed_events_are_indeterminate() {
    let bytes = dbcop(&[
        vec![(vec![(false, 1, 0, true), (true, 0, 1, true), (true, 1, 7, false)], true)],
        vec![(vec![(false, 0, 0, true), (true, 1, 1, true)], true)],
    ]);
    let read = |failed_events| {
        read_bytes_with("h.bincode", &bytes, Format::Dbcop, ReadOptions { failed_events }).expect("parses")
    };
    let h = read(FailedEvents::Indeterminate);
    assert_eq!(h.indeterminate_txns, 1);
    assert_eq!(h.ops[0].op_type, OpType::Info);
    assert_eq!(run(&h, "serializable").valid, Validity::Valid);
    let h = read(FailedEvents::AsCommitted);
    assert_eq!(h.indeterminate_txns, 0);
    let o = run(&h, "serializable");
    assert_eq!(o.valid, Validity::Invalid);
    assert!(o.anomaly_types.iter().any(|t| t == "G2-item"), "{:?}", o.anomaly_types);
}

/// The published CockroachDB run (serializable) is serializable once its
/// rolled-back transactions are read as indeterminate; dbcop's reading
/// refutes it.
#[test]
fn cockroachdb_sample_is_serializable() {
    let Some(path) = real("cockroachdb-12_30_20_720.bincode") else { return };
    let read = |failed_events| read_path_with(&path, Format::Auto, ReadOptions { failed_events }).expect("parses");
    let h = read(FailedEvents::Indeterminate);
    assert_eq!(h.indeterminate_txns, 11);
    for model in ["serializable", "snapshot-isolation"] {
        let o = run(&h, model);
        assert_eq!(o.valid, Validity::Valid, "{model}: {:?}", o.anomaly_types);
    }
    assert_eq!(run(&read(FailedEvents::AsCommitted), "serializable").valid, Validity::Invalid);
}
