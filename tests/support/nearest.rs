//! The previous derivation of the `sequential-keys` / `linearizable-keys`
//! version edges, kept as the oracle for `isolde::infer::nearest`: Elle's
//! `ext-key-graph` traversal, which walks the order once in reverse keeping,
//! for every transaction, a map from every key touched downstream to its
//! nearest touchers. Quadratic, but obviously the definition.

use isolde::graph::Graph;
use isolde::history::{History, MopFn, MopValue, Op, OpType};
use std::collections::{BTreeMap, BTreeSet, HashMap};

const NIL: i64 = i64::MIN;

/// A transaction's external access to one key: the first access's value if
/// it was a read, and the last write's value.
#[derive(Clone, Copy)]
struct Ext {
    key: u32,
    read: Option<i64>,
    write: Option<i64>,
}

fn value_of(v: MopValue) -> i64 {
    match v {
        MopValue::Int(i) => i,
        _ => NIL,
    }
}

fn exts(h: &History, op: &Op) -> Vec<Ext> {
    let mut out: Vec<Ext> = Vec::new();
    if op.is_invoke() {
        return out;
    }
    for m in h.mops_of(op) {
        let slot = out.iter().position(|e| e.key == m.key.0);
        match (m.f, slot) {
            (MopFn::Read, None) => out.push(Ext { key: m.key.0, read: Some(value_of(m.value)), write: None }),
            (MopFn::Read, Some(_)) => {}
            (_, Some(i)) => out[i].write = Some(value_of(m.value)),
            (_, None) => out.push(Ext { key: m.key.0, read: None, write: Some(value_of(m.value)) }),
        }
    }
    out
}

fn touches(op: &Op, e: &Ext) -> bool {
    match op.op_type {
        OpType::Ok => true,
        OpType::Info => e.write.is_some(),
        _ => false,
    }
}

/// Version edges `(key, v1, v2)` from `order` (edges pointing forward in the
/// history), sorted and deduplicated, as Elle's traversal computes them.
pub fn order_version_edges(h: &History, order: &Graph) -> Vec<(u32, i64, i64)> {
    let n = h.ops.len();
    let ext: Vec<Vec<Ext>> = h.ops.iter().map(|op| exts(h, op)).collect();
    let local =
        |b: usize| -> BTreeSet<u32> { ext[b].iter().filter(|e| touches(&h.ops[b], e)).map(|e| e.key).collect() };
    // downstream[a]: key -> nearest touchers reachable from a (a excluded).
    let mut downstream: Vec<BTreeMap<u32, BTreeSet<u32>>> = vec![BTreeMap::new(); n];
    let mut out = BTreeSet::new();
    for a in (0..n).rev() {
        let mut d: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for &b in order.out(a as u32).0 {
            assert!(b as usize > a, "order points forward");
            let lb = local(b as usize);
            for &k in &lb {
                d.entry(k).or_default().insert(b);
            }
            for (k, ops) in &downstream[b as usize] {
                if !lb.contains(k) {
                    d.entry(*k).or_default().extend(ops.iter().copied());
                }
            }
        }
        let oa = &h.ops[a];
        for ea in &ext[a] {
            let v1 = match oa.op_type {
                OpType::Ok => ea.write.or(ea.read).unwrap_or(NIL),
                OpType::Info => match ea.write {
                    Some(w) => w,
                    None => continue,
                },
                _ => continue,
            };
            let Some(bs) = d.get(&ea.key) else { continue };
            for &b in bs {
                let ob = &h.ops[b as usize];
                let eb: HashMap<u32, Ext> = ext[b as usize].iter().map(|e| (e.key, *e)).collect();
                let eb = eb.get(&ea.key);
                let v2 = match ob.op_type {
                    OpType::Ok => match eb {
                        Some(e) => e.read.filter(|&r| r != NIL).or(e.write).unwrap_or(NIL),
                        None => NIL,
                    },
                    OpType::Info => match eb.and_then(|e| e.write) {
                        Some(w) => w,
                        None => continue,
                    },
                    _ => continue,
                };
                if v1 != v2 {
                    out.insert((ea.key, v1, v2));
                }
            }
        }
        downstream[a] = d;
    }
    out.into_iter().collect()
}
