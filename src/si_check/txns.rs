//! The transactions a polygraph is built over, reduced to what the exact
//! check needs: who read which version from whom, and who wrote what.
//!
//! Only transactions that may have committed take part. `:ok` ones did;
//! `:fail` ones did not (a read of their writes is G1a, which the Elle-style
//! analysis reports); an `:info` one may have, so it is included exactly when
//! a committed read observed one of its writes (then it certainly committed).
//! An unobserved `:info` transaction is left out, which is sound: aborting it
//! explains the history at least as well as committing it. The reads of an
//! `:info` transaction are unknown (Jepsen records only the invocation), so
//! they are ignored, which can only remove constraints.
//!
//! A transaction's *external* read of a key is its first read of the key
//! before it writes the key; later reads are internal and checked by the
//! Elle-style analysis (`internal`). Reads that no included write explains
//! (garbage, aborted or own future writes) are dropped here: they are
//! reported by the Elle-style analysis, and dropping a read only removes
//! constraints, so the exact verdict stays sound.

use crate::history::{History, KeyId, MopFn, MopValue, OpId, OpType};
use rustc_hash::FxHashMap;

/// Dense index of a transaction taking part in the polygraph.
pub type TxnId = u32;

/// Who produced the version a read observed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    /// The initial state (`nil`).
    Init,
    /// A write of the given transaction, with the value read.
    Txn(TxnId, i64),
}

/// An external read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Read {
    /// The key.
    pub key: KeyId,
    /// Where the value came from.
    pub from: Source,
    /// Index of the read micro-op in its op.
    pub mop: u32,
}

/// A transaction's last write of a key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Write {
    /// The key.
    pub key: KeyId,
    /// The final value written.
    pub value: i64,
    /// Index of the write micro-op in its op.
    pub mop: u32,
}

/// The transactions of a history, in history order, in flat arrays.
#[derive(Clone, Debug, Default)]
pub struct Txns {
    /// The completion op of each transaction.
    pub op: Vec<OpId>,
    /// Its process (session).
    pub process: Vec<i64>,
    /// External reads of transaction `t`: `reads[read_start[t]..read_start[t+1]]`.
    pub reads: Vec<Read>,
    /// Offsets into `reads`.
    pub read_start: Vec<u32>,
    /// Final writes of `t`: `writes[write_start[t]..write_start[t+1]]`, one per key.
    pub writes: Vec<Write>,
    /// Offsets into `writes`.
    pub write_start: Vec<u32>,
    /// Reads dropped because no included write explains them.
    pub dropped_reads: usize,
}

impl Txns {
    /// Number of transactions.
    pub fn len(&self) -> usize {
        self.op.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.op.is_empty()
    }

    /// External reads of `t`.
    pub fn reads_of(&self, t: TxnId) -> &[Read] {
        &self.reads[self.read_start[t as usize] as usize..self.read_start[t as usize + 1] as usize]
    }

    /// Final writes of `t`.
    pub fn writes_of(&self, t: TxnId) -> &[Write] {
        &self.writes[self.write_start[t as usize] as usize..self.write_start[t as usize + 1] as usize]
    }

    /// `t`'s final write of `key`, if any.
    pub fn write_of(&self, t: TxnId, key: KeyId) -> Option<&Write> {
        self.writes_of(t).iter().find(|w| w.key == key)
    }

    /// `t`'s external read of `key`, if any.
    pub fn read_of(&self, t: TxnId, key: KeyId) -> Option<&Read> {
        self.reads_of(t).iter().find(|r| r.key == key)
    }
}

/// Why the transactions could not be extracted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TxnsError {
    /// Two transactions wrote the same value to a key, so reads of it are
    /// ambiguous (the unique-value assumption of every polygraph checker).
    #[error(
        "key {key} was written with value {value} by two transactions (ops {a} and {b}); reads of it are ambiguous"
    )]
    DuplicateWrite {
        /// The key as printed.
        key: String,
        /// The value.
        value: i64,
        /// `:index` of one writer.
        a: i64,
        /// `:index` of the other.
        b: i64,
    },
}

/// Extracts the transactions of a register history.
pub fn extract(h: &History) -> Result<Txns, TxnsError> {
    // Every value written by a completion that may have committed.
    let mut writer: FxHashMap<(KeyId, i64), OpId> = FxHashMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        if !matches!(op.op_type, OpType::Ok | OpType::Info) {
            continue;
        }
        for m in h.mops_of(op) {
            if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                if let Some(prev) = writer.insert((m.key, v), i as OpId) {
                    if prev != i as OpId {
                        return Err(TxnsError::DuplicateWrite {
                            key: h.key(m.key).to_string(),
                            value: v,
                            a: h.op(prev).index,
                            b: op.index,
                        });
                    }
                }
            }
        }
    }
    // Which :info ops were observed by a committed read.
    let mut observed_info = vec![false; h.ops.len()];
    for op in h.ops.iter().filter(|o| o.op_type == OpType::Ok) {
        for m in h.mops_of(op) {
            if let (MopFn::Read, MopValue::Int(v)) = (m.f, m.value) {
                if let Some(&w) = writer.get(&(m.key, v)) {
                    if h.op(w).op_type == OpType::Info {
                        observed_info[w as usize] = true;
                    }
                }
            }
        }
    }
    let mut txn_of_op: Vec<u32> = vec![u32::MAX; h.ops.len()];
    let mut t = Txns::default();
    for (i, op) in h.ops.iter().enumerate() {
        let include = op.op_type == OpType::Ok || (op.op_type == OpType::Info && observed_info[i]);
        if include {
            txn_of_op[i] = t.op.len() as u32;
            t.op.push(i as OpId);
            t.process.push(op.process);
        }
    }
    t.read_start.push(0);
    t.write_start.push(0);
    let mut seen: Vec<KeyId> = Vec::new();
    for (ti, &o) in t.op.clone().iter().enumerate() {
        let op = h.op(o);
        let mops = h.mops_of(op);
        seen.clear();
        let ok = op.op_type == OpType::Ok;
        for (mi, m) in mops.iter().enumerate() {
            if seen.contains(&m.key) {
                if m.f == MopFn::Write {
                    if let (Some(w), MopValue::Int(v)) =
                        (t.writes[t.write_start[ti] as usize..].iter_mut().find(|w| w.key == m.key), m.value)
                    {
                        w.value = v;
                        w.mop = mi as u32;
                    } else if let MopValue::Int(v) = m.value {
                        t.writes.push(Write { key: m.key, value: v, mop: mi as u32 });
                    }
                }
                continue;
            }
            seen.push(m.key);
            match (m.f, m.value) {
                (MopFn::Write, MopValue::Int(v)) => t.writes.push(Write { key: m.key, value: v, mop: mi as u32 }),
                (MopFn::Read, _) if !ok => {}
                (MopFn::Read, MopValue::Nil) => t.reads.push(Read { key: m.key, from: Source::Init, mop: mi as u32 }),
                (MopFn::Read, MopValue::Int(v)) => {
                    let from = writer.get(&(m.key, v)).map(|&w| txn_of_op[w as usize]);
                    match from {
                        Some(w) if w != u32::MAX && w != ti as u32 => {
                            t.reads.push(Read { key: m.key, from: Source::Txn(w, v), mop: mi as u32 })
                        }
                        _ => t.dropped_reads += 1,
                    }
                }
                _ => t.dropped_reads += usize::from(m.f == MopFn::Read),
            }
        }
        t.read_start.push(t.reads.len() as u32);
        t.write_start.push(t.writes.len() as u32);
    }
    Ok(t)
}
