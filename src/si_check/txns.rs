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
//!
//! **Repeated values.** When more than one operation wrote a read's value,
//! its *candidates* are the other included transactions whose final write
//! of the key is that value (reading an intermediate or aborted write is
//! G1b/G1a whatever else happens, so those are no alternative). One
//! candidate resolves the read as usual; several make it a [`Choice`], which
//! the polygraph turns into a search over its writers. An `:info`
//! transaction among several candidates is not known to have committed: it
//! is left out unless something else shows it committed, which keeps a
//! `Valid` verdict sound (the explanation found has it aborted) but not an
//! `Invalid` one, so [`Txns::uncertain_info`] tells the caller to answer
//! unknown instead of refuting. When every candidate is such an `:info`
//! transaction, they are all included (one of them committed), with the
//! same caveat.

use crate::history::{History, KeyId, MopFn, MopValue, OpId, OpType};
use rayon::prelude::*;
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
    /// One of several transactions that wrote the value read: the index of
    /// the [`Choice`] in [`Txns::choices`].
    Choice(u32),
}

/// An external read whose value more than one included transaction wrote
/// last to its key.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Choice {
    /// The reading transaction.
    pub reader: TxnId,
    /// The key.
    pub key: KeyId,
    /// The value read.
    pub value: i64,
    /// Index of the read micro-op in its op.
    pub mop: u32,
    /// The transactions it could have read from (at least two), in order.
    pub cands: Vec<TxnId>,
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
    /// Reads with several candidate writers.
    pub choices: Vec<Choice>,
    /// Reads whose candidates include `:info` transactions not known to have
    /// committed: a refutation would be unsound (see the module docs).
    pub uncertain_info: usize,
}

impl Txns {
    /// The same transactions with the candidates `dead` rules out removed
    /// (`dead[j][i]`: choice `j` cannot have read from its `i`-th
    /// candidate): a read left with one candidate reads from it, the others
    /// stay choices over what is left. Returns `None` when nothing changes or
    /// a read would have no candidate left.
    pub fn restrict(&self, dead: &[Vec<bool>]) -> Option<Txns> {
        if dead.len() != self.choices.len() || !dead.iter().flatten().any(|&d| d) {
            return None;
        }
        let mut out = Txns { choices: Vec::new(), reads: Vec::with_capacity(self.reads.len()), ..self.clone() };
        let mut renumber = vec![Source::Init; self.choices.len()];
        for (j, ch) in self.choices.iter().enumerate() {
            let live: Vec<TxnId> = ch.cands.iter().zip(&dead[j]).filter(|(_, &d)| !d).map(|(&w, _)| w).collect();
            renumber[j] = match live.len() {
                0 => return None,
                1 => Source::Txn(live[0], ch.value),
                _ => {
                    out.choices.push(Choice { cands: live, ..ch.clone() });
                    Source::Choice(out.choices.len() as u32 - 1)
                }
            };
        }
        out.reads = self
            .reads
            .iter()
            .map(|r| match r.from {
                Source::Choice(j) => Read { from: renumber[j as usize], ..*r },
                _ => *r,
            })
            .collect();
        Some(out)
    }

    /// The transactions `range` alone, renumbered from 0, as a history of
    /// their own (see [`super::windows`]): their writes, and the reads whose
    /// every possible writer is among them (the initial state included);
    /// the other reads are dropped (counted in
    /// [`dropped_reads`](Txns::dropped_reads)). Dropping a read only removes
    /// constraints, so a serial order of all transactions, restricted to
    /// `range`, is one of the window: a window with no serial order refutes
    /// the whole history. [`uncertain_info`](Txns::uncertain_info) is the
    /// whole history's, so a refutation stays as uncertain as it would be
    /// there.
    pub fn window(&self, range: std::ops::Range<TxnId>) -> Txns {
        let lo = range.start;
        let inside = |w: TxnId| range.contains(&w);
        let mut out = Txns {
            op: self.op[lo as usize..range.end as usize].to_vec(),
            process: self.process[lo as usize..range.end as usize].to_vec(),
            uncertain_info: self.uncertain_info,
            ..Txns::default()
        };
        out.read_start.push(0);
        out.write_start.push(0);
        for t in range.clone() {
            for r in self.reads_of(t) {
                let from = match r.from {
                    Source::Init => Some(Source::Init),
                    Source::Txn(w, v) => inside(w).then_some(Source::Txn(w - lo, v)),
                    Source::Choice(c) => {
                        let ch = &self.choices[c as usize];
                        ch.cands.iter().all(|&w| inside(w)).then(|| {
                            let cands = ch.cands.iter().map(|&w| w - lo).collect();
                            out.choices.push(Choice { reader: t - lo, cands, ..ch.clone() });
                            Source::Choice(out.choices.len() as u32 - 1)
                        })
                    }
                };
                match from {
                    Some(from) => out.reads.push(Read { from, ..*r }),
                    None => out.dropped_reads += 1,
                }
            }
            out.writes.extend_from_slice(self.writes_of(t));
            out.read_start.push(out.reads.len() as u32);
            out.write_start.push(out.writes.len() as u32);
        }
        out
    }

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

/// Why the transactions could not be extracted (nothing, since repeated
/// values are decided; kept as the one error type of the infer module).
pub type TxnsError = crate::infer::InferError;

/// The value `op` wrote last to `key`, if it wrote it.
fn final_write(h: &History, op: OpId, key: KeyId) -> Option<i64> {
    h.mops_of(h.op(op)).iter().rev().find(|m| m.key == key && m.f == MopFn::Write).and_then(|m| match m.value {
        MopValue::Int(v) => Some(v),
        _ => None,
    })
}

/// Every `(key, value)` written by an `:ok` or `:info` op, with its
/// writers, as one sorted array of packed `(key, value, op)` entries (16
/// bytes a write, no hash table: at ten million transactions a table of
/// the writes needed a power-of-two number of buckets, several gigabytes).
struct Writers {
    entries: Vec<u128>,
    /// Where each key's entries start (one past the last key too): a
    /// lookup searches its key's entries only.
    key_start: Vec<u32>,
}

impl Writers {
    fn pack(key: KeyId, value: i64, op: OpId) -> u128 {
        // The value's sign bit flipped: unsigned order is signed order.
        ((key.0 as u128) << 96) | ((((value as u64) ^ (1 << 63)) as u128) << 32) | op as u128
    }

    fn unpack(e: u128) -> (KeyId, i64, OpId) {
        (KeyId((e >> 96) as u32), (((e >> 32) as u64) ^ (1 << 63)) as i64, e as u32)
    }

    fn of(h: &History) -> Writers {
        let writes = |op: &crate::history::Op| {
            matches!(op.op_type, OpType::Ok | OpType::Info)
                .then(|| h.mops_of(op).iter().filter(|m| m.f == MopFn::Write && matches!(m.value, MopValue::Int(_))))
                .into_iter()
                .flatten()
        };
        let count: usize = h.ops.iter().map(|op| writes(op).count()).sum();
        let mut entries = Vec::with_capacity(count);
        for (i, op) in h.ops.iter().enumerate() {
            for m in writes(op) {
                if let MopValue::Int(v) = m.value {
                    entries.push(Writers::pack(m.key, v, i as OpId));
                }
            }
        }
        entries.par_sort_unstable();
        entries.dedup();
        let mut key_start = vec![0u32; h.key_count() + 1];
        for &e in &entries {
            key_start[Writers::unpack(e).0 .0 as usize + 1] += 1;
        }
        for k in 0..h.key_count() {
            key_start[k + 1] += key_start[k];
        }
        Writers { entries, key_start }
    }

    /// The entries of `(key, value)`, in op order: a binary search among
    /// the key's entries for the first, then a walk over the group (most
    /// have one entry), galloping where it is long.
    fn group(&self, key: KeyId, value: i64) -> &[u128] {
        let Some(&[from, to]) = self.key_start.get(key.0 as usize..key.0 as usize + 2) else { return &[] };
        let of_key = &self.entries[from as usize..to as usize];
        let lo = of_key.partition_point(|&e| e < Writers::pack(key, value, 0));
        let last = Writers::pack(key, value, OpId::MAX);
        let rest = &of_key[lo..];
        let mut hi = 0;
        let mut step = 1;
        while hi < rest.len() && rest[hi] <= last {
            hi = (hi + step).min(rest.len());
            step *= 2;
        }
        // Every entry before `hi - step / 2` is in the group; the end is
        // among the next `step / 2`.
        let known = hi.saturating_sub(step / 2);
        let end = known + rest[known..hi].partition_point(|&e| e <= last);
        &rest[..end]
    }

    /// The first op that wrote `value` to `key`, and whether another did
    /// too.
    fn get(&self, key: KeyId, value: i64) -> Option<(OpId, bool)> {
        let g = self.group(key, value);
        g.first().map(|&e| (Writers::unpack(e).2, g.len() > 1))
    }

    /// Whether some value was written by more than one op.
    fn any_repeated(&self) -> bool {
        self.entries.windows(2).any(|w| (w[0] >> 32) == (w[1] >> 32))
    }

    /// Every `(key, value)` written by more than one op.
    fn repeated(&self) -> impl Iterator<Item = (KeyId, i64)> + '_ {
        self.entries.windows(2).filter(|w| (w[0] >> 32) == (w[1] >> 32)).map(|w| {
            let (k, v, _) = Writers::unpack(w[0]);
            (k, v)
        })
    }
}

/// Extracts the transactions of a register history.
pub fn extract(h: &History) -> Result<Txns, TxnsError> {
    // Every value written by a completion that may have committed: its
    // first writer, and whether another op wrote it too.
    let writer = Writers::of(h);
    let any_repeated = writer.any_repeated();
    // Every writer of the repeated values (only built when there are some).
    let mut repeated: FxHashMap<(KeyId, i64), Vec<OpId>> =
        if any_repeated { writer.repeated().map(|kv| (kv, Vec::new())).collect() } else { FxHashMap::default() };
    if !repeated.is_empty() {
        for (i, op) in h.ops.iter().enumerate() {
            if !matches!(op.op_type, OpType::Ok | OpType::Info) {
                continue;
            }
            for m in h.mops_of(op) {
                if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                    if let Some(ws) = repeated.get_mut(&(m.key, v)) {
                        if ws.last() != Some(&(i as OpId)) {
                            ws.push(i as OpId);
                        }
                    }
                }
            }
        }
    }
    // The ops other than `reader` whose final write of `k` is `v`.
    let finals = |k: KeyId, v: i64, reader: OpId| -> Vec<OpId> {
        repeated
            .get(&(k, v))
            .map(|ws| ws.iter().copied().filter(|&w| w != reader && final_write(h, w, k) == Some(v)).collect())
            .unwrap_or_default()
    };
    // Which :info ops were observed by a committed read (certainly
    // committed), and which are only possible writers.
    let mut observed_info = vec![false; h.ops.len()];
    let mut possible_info: Vec<OpId> = Vec::new();
    let mut uncertain_cands: Vec<OpId> = Vec::new();
    for (r, op) in h.ops.iter().enumerate().filter(|(_, o)| o.op_type == OpType::Ok) {
        for m in h.mops_of(op) {
            if let (MopFn::Read, MopValue::Int(v)) = (m.f, m.value) {
                match writer.get(m.key, v) {
                    Some((w, false)) if h.op(w).op_type == OpType::Info => observed_info[w as usize] = true,
                    Some((_, false)) => {}
                    Some((_, true)) => {
                        let cands = finals(m.key, v, r as OpId);
                        let info: Vec<OpId> =
                            cands.iter().copied().filter(|&c| h.op(c).op_type == OpType::Info).collect();
                        if cands.len() == 1 {
                            if let Some(&w) = info.first() {
                                observed_info[w as usize] = true;
                            }
                        } else if info.len() == cands.len() {
                            possible_info.extend(info);
                        } else {
                            uncertain_cands.extend(info);
                        }
                    }
                    None => {}
                }
            }
        }
    }
    let mut uncertain_info = 0;
    uncertain_cands.extend_from_slice(&possible_info);
    for &w in &uncertain_cands {
        uncertain_info += usize::from(!observed_info[w as usize]);
    }
    let mut include_info = observed_info.clone();
    for &w in &possible_info {
        include_info[w as usize] = true;
    }
    let mut txn_of_op: Vec<u32> = vec![u32::MAX; h.ops.len()];
    let mut t = Txns { uncertain_info, ..Txns::default() };
    for (i, op) in h.ops.iter().enumerate() {
        let include = op.op_type == OpType::Ok || (op.op_type == OpType::Info && include_info[i]);
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
                (MopFn::Read, MopValue::Int(v)) => match writer.get(m.key, v) {
                    Some((w, false)) => match txn_of_op[w as usize] {
                        w if w != u32::MAX && w != ti as u32 => {
                            t.reads.push(Read { key: m.key, from: Source::Txn(w, v), mop: mi as u32 })
                        }
                        _ => t.dropped_reads += 1,
                    },
                    Some((_, true)) => {
                        let cands: Vec<TxnId> = finals(m.key, v, o)
                            .into_iter()
                            .map(|w| txn_of_op[w as usize])
                            .filter(|&w| w != u32::MAX)
                            .collect();
                        match cands[..] {
                            [] => t.dropped_reads += 1,
                            [w] => t.reads.push(Read { key: m.key, from: Source::Txn(w, v), mop: mi as u32 }),
                            _ => {
                                let c = t.choices.len() as u32;
                                t.choices.push(Choice {
                                    reader: ti as TxnId,
                                    key: m.key,
                                    value: v,
                                    mop: mi as u32,
                                    cands,
                                });
                                t.reads.push(Read { key: m.key, from: Source::Choice(c), mop: mi as u32 });
                            }
                        }
                    }
                    None => t.dropped_reads += 1,
                },
                _ => t.dropped_reads += usize::from(m.f == MopFn::Read),
            }
        }
        t.read_start.push(t.reads.len() as u32);
        t.write_start.push(t.writes.len() as u32);
    }
    Ok(t)
}

/// A history from EDN text and its transactions (for the unit tests of
/// the modules that work on them).
#[cfg(test)]
pub(crate) fn from_edn(edn: &str) -> (History, Txns) {
    let h = crate::ingest::read_bytes("t.edn", edn.as_bytes(), crate::ingest::Format::Edn).expect("parses");
    let txns = extract(&h).expect("transactions");
    (h, txns)
}
