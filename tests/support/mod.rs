//! An independent checker of reported cycles: every step must be justified by
//! the raw history, without using isolde's inference.

#![allow(dead_code)]

pub mod accel;
pub mod cli;
pub mod cobra;
pub mod explore;
pub mod fuzz;
pub mod gen;
pub mod imports;
pub mod jepsen_readers;
pub mod jepsen_store;
pub mod nearest;
pub mod online;
pub mod prefix;
pub mod record;
pub mod shared;
pub mod weak;

use isolde::anomaly::{Case, Cycle, Step};
use isolde::check::Outcome;
use isolde::history::{History, KeyId, MopFn, MopValue, OpType};

fn appended(h: &History, op: u32, k: KeyId, v: i64) -> bool {
    h.mops_of(h.op(op)).iter().any(|m| m.f == MopFn::Append && m.key == k && m.value == MopValue::Int(v))
}

/// All list reads of `k` among ok/info ops.
fn reads(h: &History, k: KeyId) -> Vec<&[i64]> {
    h.ops
        .iter()
        .filter(|o| matches!(o.op_type, OpType::Ok | OpType::Info))
        .flat_map(|o| h.mops_of(o).iter())
        .filter(|m| m.f == MopFn::Read && m.key == k)
        .map(|m| h.list(m.value))
        .collect()
}

/// Some read shows `next` right after `prev` (`None` = initial state), or
/// `next` was never observed and `prev` is the last element ever observed.
fn follows(h: &History, k: KeyId, prev: Option<i64>, next: i64) -> bool {
    let rs = reads(h, k);
    let observed = rs.iter().any(|r| r.contains(&next));
    if observed {
        rs.iter().any(|r| match prev {
            None => r.first() == Some(&next),
            Some(p) => r.windows(2).any(|w| w[0] == p && w[1] == next),
        })
    } else {
        let longest = rs.iter().max_by_key(|r| r.len()).copied().unwrap_or(&[]);
        longest.last().copied() == prev
    }
}

/// Checks one list-append step `a -> b`.
pub fn check_la_step(h: &History, a: u32, b: u32, s: &Step) -> Result<(), String> {
    let (oa, ob) = (h.op(a), h.op(b));
    let ok = match *s {
        Step::Ww { key, value: Some(v), value2: Some(v2), .. } => {
            appended(h, a, key, v) && appended(h, b, key, v2) && follows(h, key, Some(v), v2)
        }
        Step::Wr { key, value: Some(v), .. } => {
            appended(h, a, key, v)
                && h.mops_of(ob)
                    .iter()
                    .any(|m| m.f == MopFn::Read && m.key == key && h.list(m.value).last() == Some(&v))
        }
        Step::Rw { key, value, value2: Some(v2), .. } => {
            let read_it = h
                .mops_of(oa)
                .iter()
                .any(|m| m.f == MopFn::Read && m.key == key && h.list(m.value).last().copied() == value);
            read_it && appended(h, b, key, v2) && follows(h, key, value, v2)
        }
        Step::Realtime { a_completion, b_invocation } => {
            a_completion == a && h.op(b_invocation).pair == b && a < b_invocation && oa.op_type == OpType::Ok
        }
        Step::Process { process } => oa.process == process && ob.process == process && a < b,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("step {s:?} from op {} to op {} is not justified by the history", oa.index, ob.index))
    }
}

/// Checks every step of a list-append cycle.
pub fn check_la_cycle(h: &History, c: &Cycle) -> Result<(), String> {
    let n = c.ops.len();
    if n < 2 || c.steps.len() != n {
        return Err(format!("malformed cycle {c:?}"));
    }
    let mut seen = c.ops.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != n {
        return Err("cycle repeats a transaction".into());
    }
    for i in 0..n {
        check_la_step(h, c.ops[i], c.ops[(i + 1) % n], &c.steps[i])?;
    }
    Ok(())
}

/// Checks every cycle in an outcome.
pub fn check_all_la_cycles(h: &History, o: &Outcome) -> Result<usize, String> {
    let mut n = 0;
    for cases in o.anomalies.values() {
        for c in cases {
            if let Case::Cycle(cy) = c {
                check_la_cycle(h, cy)?;
                n += 1;
            }
        }
    }
    Ok(n)
}
