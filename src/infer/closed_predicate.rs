//! Dependency inference for Elle's closed-predicate workload
//! (`elle.closed-predicate`): item and predicate dependencies over a closed
//! universe of keys.
//!
//! # The workload
//!
//! An `:init` op establishes the universe, `{:f :init, :value {:x 1, :y 2}}`
//! (trusted to be in the database before any transaction runs); then
//! transactions of `[:w k v]`, `[:insert k v]`, `[:delete k]`, item reads
//! `[:r k v]` and predicate reads `[:rp PRED {k v ...}]`, whose predicate is
//! `:true` (every live version), `[:= v]` or `[:mod m r]` (`v mod m = r`,
//! Clojure's `mod`). Unborn and dead versions (Elle's `:elle/unborn` and
//! `:elle/dead`, here [`UNBORN`] and [`DEAD`]) match no predicate; a read of
//! `nil` is unborn or dead, whichever the key's versions allow.
//!
//! # Version orders
//!
//! Every version of every key is assumed known: a key's versions are its
//! `:init` value (or the unborn version when `:init` does not give it) and
//! then every write of an `:ok` or `:info` transaction, in history order.
//! That order is only an assumption when two transactions write one key, so
//! (unlike Elle) such a history is refused: each key is written by at most
//! one transaction after `:init`, as Elle's generator guarantees, and then
//! the order is forced.
//!
//! # Version sets
//!
//! Adya's predicate dependencies cover the version a predicate read
//! *selected* of every key, matched or not: its version set `VSet(P)`. A key
//! the read returned was selected at that version. A key it did not return
//! was selected at a version `P` does not match; when exactly one version of
//! the key does not match, that one was selected; when none does, the read
//! should have returned the key (`:predicate-read-miss`), and Elle charitably
//! takes the unborn version; with two or more, nothing is known.
//!
//! # Dependencies
//!
//! * **ww**: the writer of a key's previous version precedes a writer of the
//!   next (Elle's own graph takes this from `:insert` and `:delete` only, its
//!   `:w` case being spelled `:write`; isolde takes `:w` too, as Elle's
//!   explainer does: see docs/differences.md);
//! * **wr** / **rw**: an item read of a version follows its writer and
//!   precedes the writer of the next version;
//! * **wrp**: the writer of a version in a predicate read's version set
//!   precedes the read (the unborn version has no writer);
//! * **rwp**: a predicate read precedes the writer of every later version of
//!   a key in its version set that changes whether the predicate matches.
//!
//! Only `:ok` transactions read; no edge joins a transaction to itself.
//! Cycles are then named as Elle names them: a cycle with an rwp step is a
//! predicate anomaly (G-single, G-nonadjacent, G2), one without an item
//! anomaly (G-single-item, G2-item, ...), see [`crate::cycles::classify`].

use super::{Explain, InferError, Inference};
use crate::anomaly::{add, rel, Anomalies, Case, MopRef, Rels, Step, Workload};
use crate::graph::Edge;
use crate::history::{field, Atom, History, KeyId, Mop, MopFn, MopValue, Op, OpId, OpType, Value, DEAD, UNBORN};
use rustc_hash::FxHashMap;

/// A predicate of a predicate read.
#[derive(Clone, Debug, PartialEq)]
pub enum Predicate {
    /// `:true`: every live version.
    True,
    /// `[:= v]`: versions equal to `v` (Clojure's `=`, canonical forms).
    Eq(Value),
    /// `[:mod m r]`: integer versions `x` with `(mod x m) = r`.
    Mod(i64, i64),
}

impl Predicate {
    /// Reads a predicate as written (`:true`, `[:= 2]`, `[:mod 2 0]`).
    pub fn parse(v: &Value) -> Result<Predicate, String> {
        let bad = || format!("{v} is not a predicate: expected :true, [:= v] or [:mod m r]");
        match v {
            Value::Atom(Atom::Keyword(k)) if &**k == "true" => Ok(Predicate::True),
            Value::Vector(xs) | Value::List(xs) => match xs.as_slice() {
                [Value::Atom(Atom::Keyword(f)), x] if &**f == "=" => Ok(Predicate::Eq(x.canonical())),
                [Value::Atom(Atom::Keyword(f)), Value::Atom(Atom::Int(m)), Value::Atom(Atom::Int(r))]
                    if &**f == "mod" =>
                {
                    if *m == 0 {
                        return Err(format!("{v}: a modulus of 0 divides by zero"));
                    }
                    Ok(Predicate::Mod(*m, *r))
                }
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }

    /// Whether the predicate matches version `v` (a value identity of `h`,
    /// or [`UNBORN`] / [`DEAD`], which match nothing); an error when a
    /// `[:mod m r]` meets a version that is not an integer.
    pub fn matches(&self, h: &History, v: i64) -> Result<bool, String> {
        if v == UNBORN || v == DEAD {
            return Ok(false);
        }
        match self {
            Predicate::True => Ok(true),
            Predicate::Eq(x) => Ok(version_value(h, v).canonical() == *x),
            Predicate::Mod(m, r) => match version_value(h, v) {
                Value::Atom(Atom::Int(x)) => Ok(clojure_mod(x, *m) == *r),
                other => Err(format!("[:mod {m} {r}] cannot take the version {other}, which is not an integer")),
            },
        }
    }
}

/// The value a version identity stands for.
fn version_value(h: &History, v: i64) -> Value {
    match h.value(v) {
        Some(x) => x.into_owned(),
        None => Value::Atom(Atom::Int(v)),
    }
}

/// Clojure's `mod`: the remainder with the divisor's sign.
fn clojure_mod(x: i64, m: i64) -> i64 {
    let r = x.wrapping_rem(m);
    if r != 0 && ((r < 0) != (m < 0)) {
        r + m
    } else {
        r
    }
}

/// Whether `op` is the universe's `:init`.
fn is_init(h: &History, op: &Op) -> bool {
    matches!(h.f_of(op), Atom::Keyword(k) if &**k == "init")
}

/// Whether the op's writes took (or may have taken) effect (Elle's
/// `h/possible`).
fn possible(op: &Op) -> bool {
    matches!(op.op_type, OpType::Ok | OpType::Info)
}

/// A written value as a version: `nil` (a `:delete`) is [`DEAD`].
fn written(m: &Mop) -> Option<i64> {
    match (m.f, m.value) {
        (MopFn::Write | MopFn::Insert, MopValue::Int(v)) => Some(v),
        (MopFn::Delete, _) => Some(DEAD),
        _ => None,
    }
}

/// The external writes of an op (Elle's `ext-writes-op`): the last version
/// each key was set to, in order of first write.
fn ext_writes(h: &History, op: &Op) -> Vec<(KeyId, i64)> {
    let mut out: Vec<(KeyId, i64)> = Vec::new();
    for m in h.mops_of(op) {
        let Some(v) = written(m) else { continue };
        match out.iter_mut().find(|(k, _)| *k == m.key) {
            Some(slot) => slot.1 = v,
            None => out.push((m.key, v)),
        }
    }
    out
}

/// Elle's `write-mop-index`: the first micro-op of `op` that set `k` to
/// `v` (Elle's count; 0 for the `:init`), `None` when there is none.
fn write_mop_index(h: &History, op: &Op, k: KeyId, v: i64) -> Option<u32> {
    if is_init(h, op) {
        return h.mops_of(op).iter().any(|m| m.key == k && written(m) == Some(v)).then_some(0);
    }
    h.elle_mops(op).position(|(_, m)| m.key == k && written(m) == Some(v)).map(|i| i as u32)
}

/// Elle's index of the micro-op stored at position `at` of `op`.
fn elle_index(h: &History, op: &Op, at: usize) -> u32 {
    h.elle_mops(op).take_while(|(i, _)| *i < at).count() as u32
}

/// Every version of every key, in version order, keys in order of first
/// version.
#[derive(Default)]
struct Versions {
    order: Vec<KeyId>,
    of: FxHashMap<KeyId, Vec<i64>>,
}

impl Versions {
    fn get(&self, k: KeyId) -> &[i64] {
        self.of.get(&k).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Adds a version; a key met first gets the unborn version before it.
    fn push(&mut self, k: KeyId, v: i64) {
        let vs = self.of.entry(k).or_insert_with(|| {
            self.order.push(k);
            vec![UNBORN]
        });
        vs.push(v);
    }

    /// Elle's `version-before`: the version right before the first `v`.
    fn before(&self, k: KeyId, v: i64) -> Option<i64> {
        let vs = self.get(k);
        let i = vs.iter().position(|&x| x == v)?;
        i.checked_sub(1).map(|j| vs[j])
    }

    /// Elle's `version-after`: the version right after the first `v`; after
    /// the unborn version, the first version that is not unborn.
    fn after(&self, k: KeyId, v: i64) -> Option<i64> {
        let vs = self.get(k);
        if v == UNBORN {
            return vs.iter().copied().find(|&x| x != UNBORN);
        }
        let i = vs.iter().position(|&x| x == v)?;
        vs.get(i + 1).copied()
    }

    /// Elle's `versions-after`: the versions after the first `v` (none when
    /// `v` is not among them: an `:init` key has no unborn version).
    fn all_after(&self, k: KeyId, v: i64) -> &[i64] {
        let vs = self.get(k);
        match vs.iter().position(|&x| x == v) {
            Some(i) => &vs[i + 1..],
            None => &[],
        }
    }

    /// Elle's `version<`: `a` comes before `b`.
    fn less(&self, k: KeyId, a: i64, b: i64) -> bool {
        let vs = self.get(k);
        vs.iter().position(|&x| x == a).is_some_and(|i| vs[i + 1..].contains(&b))
    }

    /// Elle's `resolve-version` of an item read: `nil` is unborn, or dead
    /// when the key's last version is dead and its first is not unborn;
    /// `None` when it could be either.
    fn resolve(&self, k: KeyId, v: MopValue) -> Option<i64> {
        match v {
            MopValue::Int(x) => Some(x),
            _ => {
                let vs = self.get(k);
                let unborn = vs.first() == Some(&UNBORN);
                let dead = vs.last() == Some(&DEAD);
                match (unborn, dead) {
                    (true, true) => None,
                    (false, true) => Some(DEAD),
                    _ => Some(UNBORN),
                }
            }
        }
    }
}

/// What the whole analysis shares: versions, writers, and each predicate
/// read's predicate and version set.
struct Universe {
    versions: Versions,
    writer: FxHashMap<(KeyId, i64), OpId>,
    /// Per predicate read `(op, stored position)`: its predicate and version
    /// set (returned entries first, in the read's order, then the inferred
    /// ones, in key order).
    reads: FxHashMap<(OpId, u32), (Predicate, Vec<(KeyId, i64)>)>,
}

fn universe_error(h: &History, op: &Op, message: String) -> InferError {
    let _ = h;
    InferError::ClosedPredicate { line: op.line, message }
}

/// Builds the versions of every key (see the module doc), refusing a key
/// two transactions write and a second or late `:init`.
fn versions(h: &History) -> Result<Versions, InferError> {
    let mut vs = Versions::default();
    let mut first_writer: FxHashMap<KeyId, OpId> = FxHashMap::default();
    let mut seen_txn = false;
    let mut init_seen = false;
    for (id, op) in h.ops.iter().enumerate().filter(|(_, o)| possible(o)) {
        if is_init(h, op) {
            if init_seen || seen_txn {
                let what = if init_seen { "a second :init" } else { "an :init completing after a transaction" };
                return Err(universe_error(
                    h,
                    op,
                    format!("{what}; the universe is set up once, before any transaction"),
                ));
            }
            init_seen = true;
            for m in h.mops_of(op) {
                let v =
                    written(m).ok_or_else(|| universe_error(h, op, "an :init value must be a map {k v ...}".into()))?;
                vs.order.push(m.key);
                vs.of.entry(m.key).or_default().push(v);
            }
            continue;
        }
        seen_txn = true;
        for m in h.mops_of(op) {
            let Some(v) = written(m) else { continue };
            let w = *first_writer.entry(m.key).or_insert(id as OpId);
            if w != id as OpId {
                let other = h.op(w).line;
                let msg = format!(
                    "key {} is written by two transactions (lines {other} and {}); the workload knows a key's \
                     version order only when one transaction writes it after :init",
                    h.key(m.key),
                    op.line
                );
                return Err(universe_error(h, op, msg));
            }
            vs.push(m.key, v);
        }
    }
    Ok(vs)
}

/// Which op installed each version (Elle's `ext-writes`); two writers of
/// one version are an error, as in Elle.
fn writers(h: &History) -> Result<FxHashMap<(KeyId, i64), OpId>, InferError> {
    let mut out: FxHashMap<(KeyId, i64), OpId> = FxHashMap::default();
    for (id, op) in h.ops.iter().enumerate().filter(|(_, o)| possible(o)) {
        for (k, v) in ext_writes(h, op) {
            if let Some(&other) = out.get(&(k, v)) {
                return Err(InferError::DuplicateValue {
                    workload: "closed-predicate",
                    key: h.key(k).to_string(),
                    value: h.value_text(v),
                    places: vec![format!("line {}", h.op(other).line), format!("line {}", op.line)],
                });
            }
            out.insert((k, v), id as OpId);
        }
    }
    Ok(out)
}

/// The predicate reads of `:ok` transactions with their predicates and
/// version sets, and the `:predicate-read-miss` cases.
fn predicate_reads(h: &History, u: &mut Universe, anomalies: &mut Anomalies) -> Result<(), InferError> {
    for (id, op) in h.ops.iter().enumerate().filter(|(_, o)| o.op_type == OpType::Ok && !is_init(h, o)) {
        let mops = h.mops_of(op);
        for (at, m) in mops.iter().enumerate().filter(|(_, m)| m.f == MopFn::PredRead) {
            let pred = Predicate::parse(h.key(m.key)).map_err(|e| universe_error(h, op, e))?;
            let entries = History::pred_entries(mops, at);
            let (vset, misses) = version_set(h, &u.versions, &pred, entries).map_err(|e| universe_error(h, op, e))?;
            for key in misses {
                let versions = u.versions.get(key).to_vec();
                let mop = MopRef { op: id as OpId, mop: at as u32 };
                add(anomalies, "predicate-read-miss", Case::PredicateReadMiss { mop, key, versions });
            }
            u.reads.insert((id as OpId, at as u32), (pred, vset));
        }
    }
    Ok(())
}

/// A predicate read's version set and the keys it missed: the entries it
/// returned, then each unreturned key's only version the predicate does
/// not match (the unborn version when none is unmatched, a miss).
#[allow(clippy::type_complexity)]
fn version_set(
    h: &History,
    vs: &Versions,
    pred: &Predicate,
    entries: &[Mop],
) -> Result<(Vec<(KeyId, i64)>, Vec<KeyId>), String> {
    let mut vset: Vec<(KeyId, i64)> =
        entries.iter().filter_map(|e| if let MopValue::Int(v) = e.value { Some((e.key, v)) } else { None }).collect();
    let mut misses = Vec::new();
    for &k in &vs.order {
        if entries.iter().any(|e| e.key == k) {
            continue;
        }
        let mut unmatched = Vec::new();
        for &v in vs.get(k) {
            if !pred.matches(h, v)? {
                unmatched.push(v);
            }
        }
        match unmatched.as_slice() {
            [] => {
                misses.push(k);
                vset.push((k, UNBORN));
            }
            [v] => vset.push((k, *v)),
            _ => {}
        }
    }
    Ok((vset, misses))
}

/// Runs the inference.
pub fn infer(h: &History) -> Result<Inference, InferError> {
    refuse_foreign_ops(h)?;
    let mut u = Universe { versions: versions(h)?, writer: writers(h)?, reads: FxHashMap::default() };
    let mut anomalies = Anomalies::new();
    predicate_reads(h, &mut u, &mut anomalies)?;
    let mut edges = Vec::new();
    ww_edges(h, &u, &mut edges);
    read_edges(h, &u, &mut edges).map_err(|(line, e)| InferError::ClosedPredicate { line, message: e })?;
    Ok(Inference {
        workload: Workload::ClosedPredicate,
        edges: vec![edges],
        anomalies,
        explainer: Box::new(Explainer { u }),
    })
}

/// List appends have no place in the workload.
fn refuse_foreign_ops(h: &History) -> Result<(), InferError> {
    for op in &h.ops {
        if let Some(m) = h.stored_mops_of(op).iter().find(|m| m.f == MopFn::Append) {
            return Err(InferError::UnexpectedMop { workload: "closed-predicate", mop: m.f.name(), line: op.line });
        }
        if op.fields & field::VALUE_MAP != 0 && !is_init(h, op) {
            let msg = format!("only an :init op takes a map as its :value (this op's :f is {})", h.f_of(op));
            return Err(InferError::ClosedPredicate { line: op.line, message: msg });
        }
    }
    Ok(())
}

fn link(edges: &mut Vec<Edge>, from: Option<&OpId>, to: OpId, rels: Rels) {
    if let Some(&from) = from {
        if from != to {
            edges.push(Edge { from, to, rels });
        }
    }
}

/// ww: each version's writer after its predecessor's writer.
fn ww_edges(h: &History, u: &Universe, edges: &mut Vec<Edge>) {
    for (id, op) in h.ops.iter().enumerate().filter(|(_, o)| possible(o) && !is_init(h, o)) {
        for m in h.mops_of(op) {
            let Some(v2) = written(m) else { continue };
            if let Some(v1) = u.versions.before(m.key, v2) {
                link(edges, u.writer.get(&(m.key, v1)), id as OpId, rel::WW);
            }
        }
    }
}

/// wr, rw, wrp and rwp edges of every `:ok` transaction's reads.
fn read_edges(h: &History, u: &Universe, edges: &mut Vec<Edge>) -> Result<(), (u32, String)> {
    for (id, op) in h.ops.iter().enumerate().filter(|(_, o)| o.op_type == OpType::Ok && !is_init(h, o)) {
        let id = id as OpId;
        for (at, m) in h.mops_of(op).iter().enumerate() {
            match m.f {
                MopFn::Read => item_read_edges(u, id, m, edges),
                MopFn::PredRead => {
                    let Some((pred, vset)) = u.reads.get(&(id, at as u32)) else { continue };
                    predicate_read_edges(h, u, id, pred, vset, edges).map_err(|e| (op.line, e))?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn item_read_edges(u: &Universe, id: OpId, m: &Mop, edges: &mut Vec<Edge>) {
    let Some(v) = u.versions.resolve(m.key, m.value) else { return };
    link(edges, u.writer.get(&(m.key, v)), id, rel::WR);
    if let Some(v2) = u.versions.after(m.key, v) {
        if let Some(&w) = u.writer.get(&(m.key, v2)) {
            link(edges, Some(&id), w, rel::RW);
        }
    }
}

fn predicate_read_edges(
    h: &History,
    u: &Universe,
    id: OpId,
    pred: &Predicate,
    vset: &[(KeyId, i64)],
    edges: &mut Vec<Edge>,
) -> Result<(), String> {
    for &(k, v) in vset {
        if v != UNBORN {
            link(edges, u.writer.get(&(k, v)), id, rel::WRP);
        }
        let before = pred.matches(h, v)?;
        for &v2 in u.versions.all_after(k, v) {
            if pred.matches(h, v2)? != before {
                if let Some(&w) = u.writer.get(&(k, v2)) {
                    link(edges, Some(&id), w, rel::RWP);
                }
            }
        }
    }
    Ok(())
}

/// Justifies edges as Elle's closed-predicate explainers do: ww, then wr
/// (item, then predicate), then rw (item, then predicate).
struct Explainer {
    u: Universe,
}

impl Explain for Explainer {
    fn explain(&self, h: &History, a: OpId, b: OpId, rels: Rels) -> Option<Step> {
        let tries: [(Rels, &dyn Fn() -> Option<Step>); 5] = [
            (rel::WW, &|| self.ww(h, a, b)),
            (rel::WR, &|| self.wr(h, a, b)),
            (rel::WRP, &|| self.wrp(h, a, b)),
            (rel::RW, &|| self.rw(h, a, b)),
            (rel::RWP, &|| self.rwp(h, a, b)),
        ];
        tries.iter().filter(|(r, _)| rels & r != 0).find_map(|(_, f)| f())
    }
}

impl Explainer {
    fn ww(&self, h: &History, a: OpId, b: OpId) -> Option<Step> {
        let (oa, ob) = (h.op(a), h.op(b));
        let aw = ext_writes(h, oa);
        ext_writes(h, ob).into_iter().find_map(|(k, v2)| {
            let v1 = self.u.versions.before(k, v2)?;
            aw.contains(&(k, v1)).then(|| Step::Ww {
                key: k,
                value: Some(v1),
                value2: Some(v2),
                a_mop: write_mop_index(h, oa, k, v1),
                b_mop: write_mop_index(h, ob, k, v2),
            })
        })
    }

    fn wr(&self, h: &History, a: OpId, b: OpId) -> Option<Step> {
        let (oa, ob) = (h.op(a), h.op(b));
        let aw = ext_writes(h, oa);
        h.elle_mops(ob).enumerate().find_map(|(i, (_, m))| {
            if m.f != MopFn::Read {
                return None;
            }
            let v = self.u.versions.resolve(m.key, m.value)?;
            aw.contains(&(m.key, v)).then(|| Step::Wr {
                key: m.key,
                value: Some(v),
                a_mop: write_mop_index(h, oa, m.key, v),
                b_mop: Some(i as u32),
            })
        })
    }

    fn wrp(&self, h: &History, a: OpId, b: OpId) -> Option<Step> {
        let (oa, ob) = (h.op(a), h.op(b));
        let aw = ext_writes(h, oa);
        h.elle_mops(ob).filter(|(_, m)| m.f == MopFn::PredRead).find_map(|(at, _)| {
            let (_, vset) = self.u.reads.get(&(b, at as u32))?;
            let &(k, v) = vset.iter().find(|kv| aw.contains(kv))?;
            Some(Step::Wrp {
                key: k,
                value: v,
                a_mop: write_mop_index(h, oa, k, v),
                b_mop: elle_index(h, ob, at),
                versions: self.u.versions.get(k).to_vec(),
            })
        })
    }

    fn rw(&self, h: &History, a: OpId, b: OpId) -> Option<Step> {
        let (oa, ob) = (h.op(a), h.op(b));
        let bw = ext_writes(h, ob);
        h.elle_mops(oa).enumerate().find_map(|(i, (_, m))| {
            if m.f != MopFn::Read {
                return None;
            }
            let v = self.u.versions.resolve(m.key, m.value)?;
            let v2 = self.u.versions.after(m.key, v)?;
            bw.contains(&(m.key, v2)).then(|| Step::Rw {
                key: m.key,
                value: Some(v),
                value2: Some(v2),
                a_mop: Some(i as u32),
                b_mop: write_mop_index(h, ob, m.key, v2),
            })
        })
    }

    fn rwp(&self, h: &History, a: OpId, b: OpId) -> Option<Step> {
        let (oa, ob) = (h.op(a), h.op(b));
        let bw = ext_writes(h, ob);
        h.elle_mops(oa).filter(|(_, m)| m.f == MopFn::PredRead).find_map(|(at, _)| {
            let (pred, vset) = self.u.reads.get(&(a, at as u32))?;
            bw.iter().find_map(|&(k, v2)| {
                let &(_, v) = vset.iter().find(|(k2, _)| *k2 == k)?;
                let changes = pred.matches(h, v).ok()? != pred.matches(h, v2).ok()?;
                (self.u.versions.less(k, v, v2) && changes).then(|| Step::Rwp {
                    key: k,
                    value: v,
                    value2: v2,
                    a_mop: elle_index(h, oa, at),
                    b_mop: write_mop_index(h, ob, k, v2),
                    versions: self.u.versions.get(k).to_vec(),
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clojure_mod_takes_the_divisor_sign() {
        assert_eq!(clojure_mod(5, 3), 2);
        assert_eq!(clojure_mod(-3, 2), 1);
        assert_eq!(clojure_mod(3, -2), -1);
        assert_eq!(clojure_mod(6, 3), 0);
    }

    fn vs(k: KeyId, versions: &[i64]) -> Versions {
        let mut v = Versions::default();
        v.order.push(k);
        v.of.insert(k, versions.to_vec());
        v
    }

    #[test]
    fn versions_after_and_before_as_elle() {
        let k = KeyId(0);
        let v = vs(k, &[1, 2, 3, 4]);
        assert_eq!(v.all_after(k, 2), &[3, 4]);
        assert!(v.all_after(k, 4).is_empty());
        assert!(v.all_after(KeyId(9), 4).is_empty());
        assert_eq!(v.after(k, 1), Some(2));
        assert_eq!(v.after(k, 4), None);
        assert_eq!(v.before(k, 1), None);
        assert_eq!(v.before(k, 3), Some(2));
        assert!(v.less(k, 1, 3) && !v.less(k, 3, 1));
        // An :init key has no unborn version: nothing follows it there.
        let init = vs(k, &[7, DEAD]);
        assert!(init.all_after(k, UNBORN).is_empty());
        assert_eq!(init.after(k, UNBORN), Some(7));
        assert_eq!(init.resolve(k, MopValue::Nil), Some(DEAD));
        let both = vs(k, &[UNBORN, 7, DEAD]);
        assert_eq!(both.resolve(k, MopValue::Nil), None);
    }

    #[test]
    fn predicates_evaluate_as_elle() {
        let h = History::default();
        // One value per document: wrapped, as a vector of it.
        let value = |s: &str| match crate::ingest::edn::parse_values("t", format!("[{s}]").as_bytes()) {
            Ok(mut vs) if vs.len() == 1 => vs.remove(0).0,
            other => panic!("{s}: {other:?}"),
        };
        let p = |s: &str| Predicate::parse(&value(s)).expect("predicate");
        assert!(!p(":true").matches(&h, UNBORN).expect("evaluates"));
        assert!(!p(":true").matches(&h, DEAD).expect("evaluates"));
        assert!(p(":true").matches(&h, 5).expect("evaluates"));
        assert!(p("[:= 5]").matches(&h, 5).expect("evaluates"));
        assert!(!p("[:= 5]").matches(&h, 4).expect("evaluates"));
        assert!(!p("[:mod 3 2]").matches(&h, 4).expect("evaluates"));
        assert!(p("[:mod 3 2]").matches(&h, 5).expect("evaluates"));
        assert!(!p("[:mod 3 2]").matches(&h, 6).expect("evaluates"));
        let bad = value("[:< 3]");
        assert!(Predicate::parse(&bad).is_err());
    }
}
