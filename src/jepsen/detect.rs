//! The workloads of Jepsen histories, and which one a history is, from its
//! client ops' `:f` values and value shapes.

use super::{elements, name_of, OpType, Ops};
use crate::history::Value;
use crate::ingest::op_value::OpValue;

/// A Jepsen or Knossos workload (elle-cli's model names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// `bank`.
    Bank,
    /// `counter`.
    Counter,
    /// `set`.
    Set,
    /// `set-full`.
    SetFull,
    /// `long-fork`.
    LongFork,
    /// `comments`.
    Comments,
    /// `sequential`.
    Sequential,
    /// `register`: Knossos's register (read, write).
    Register,
    /// `cas-register`: Knossos's CAS register (read, write, cas).
    CasRegister,
    /// `mutex`: Knossos's mutex (acquire, release).
    Mutex,
    /// `kv`: Porcupine's key-value model (get, put, append per `:key`).
    Kv,
    /// `queue`: Jepsen's queue checker (every dequeue came from an enqueue).
    Queue,
    /// `total-queue`: Jepsen's total-queue checker (what goes in comes out).
    TotalQueue,
    /// `unique-ids`: Jepsen's unique-id checker (no id generated twice).
    UniqueIds,
}

/// Every workload: elle-cli's order, then Jepsen's checkers elle-cli lacks.
pub const ALL: [Workload; 14] = [
    Workload::Bank,
    Workload::Counter,
    Workload::Set,
    Workload::SetFull,
    Workload::LongFork,
    Workload::Comments,
    Workload::Sequential,
    Workload::Register,
    Workload::CasRegister,
    Workload::Mutex,
    Workload::Kv,
    Workload::Queue,
    Workload::TotalQueue,
    Workload::UniqueIds,
];

impl Workload {
    /// The model's name, as elle-cli spells it.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Bank => "bank",
            Workload::Counter => "counter",
            Workload::Set => "set",
            Workload::SetFull => "set-full",
            Workload::LongFork => "long-fork",
            Workload::Comments => "comments",
            Workload::Sequential => "sequential",
            Workload::Register => "register",
            Workload::CasRegister => "cas-register",
            Workload::Mutex => "mutex",
            Workload::Kv => "kv",
            Workload::Queue => "queue",
            Workload::TotalQueue => "total-queue",
            Workload::UniqueIds => "unique-ids",
        }
    }

    /// The workload of a model name.
    pub fn from_name(s: &str) -> Option<Workload> {
        ALL.into_iter().find(|w| w.name() == s)
    }

    /// Whether this is a linearizability check (Knossos's models).
    pub fn is_linearizable(self) -> bool {
        matches!(self, Workload::Register | Workload::CasRegister | Workload::Mutex | Workload::Kv)
    }
}

/// Decides the workload from the client ops: `:transfer` is bank;
/// `:acquire`/`:release` mutex; `:cas` cas-register; `:add` with integer
/// reads counter, with collection reads set (one `:ok` read) or set-full
/// (several); `:read`/`:write` of micro-op vectors long-fork, of plain
/// values register; `:enqueue`/`:dequeue`/`:drain` a queue (total-queue
/// when the history drains the queue, else queue); `:generate` unique-ids.
/// Fails with what was found when none fits.
pub fn detect(ops: &Ops) -> Result<Workload, String> {
    let mut fs: Vec<&str> = Vec::new();
    let (mut int_reads, mut coll_reads, mut map_reads, mut txn_values) = (0usize, 0usize, 0usize, 0usize);
    for i in ops.clients() {
        let o = &ops.ops[i];
        if !fs.contains(&&*o.f) {
            fs.push(&o.f);
        }
        let shape = shape(&o.value);
        if shape == Shape::Txn {
            txn_values += 1;
        }
        if &*o.f == "read" && o.op_type == OpType::Ok {
            match shape {
                Shape::Map => map_reads += 1,
                Shape::Int => int_reads += 1,
                Shape::Coll => coll_reads += 1,
                _ => {}
            }
        }
    }
    let has = |f: &str| fs.contains(&f);
    let only = |allowed: &[&str]| fs.iter().all(|f| allowed.contains(f));
    let found = || format!("ops with :f {}", fs.iter().map(|f| format!(":{f}")).collect::<Vec<_>>().join(", "));
    if has("transfer") || (only(&["read"]) && map_reads > 0) {
        return Ok(Workload::Bank);
    }
    if (has("enqueue") || has("dequeue") || has("drain")) && only(&["enqueue", "dequeue", "drain"]) {
        return Ok(if has("drain") { Workload::TotalQueue } else { Workload::Queue });
    }
    if has("generate") && only(&["generate"]) {
        return Ok(Workload::UniqueIds);
    }
    if has("acquire") || has("release") {
        return Ok(Workload::Mutex);
    }
    if has("cas") {
        return Ok(Workload::CasRegister);
    }
    if only(&["get", "put", "append"]) && (has("put") || has("append")) {
        return Ok(Workload::Kv);
    }
    if has("add") && only(&["add", "read"]) {
        if int_reads > 0 && coll_reads == 0 {
            return Ok(Workload::Counter);
        }
        if coll_reads > 0 && int_reads == 0 {
            return Ok(if coll_reads == 1 { Workload::Set } else { Workload::SetFull });
        }
        if int_reads + coll_reads == 0 {
            return Err(format!(
                "{}: adds and no :ok read, which fits counter and set alike: give --workload counter or --workload set",
                found()
            ));
        }
        return Err(format!(
            "{}: an add/read history whose reads are neither all integers (counter) nor all collections (set)",
            found()
        ));
    }
    if only(&["read", "write"]) && !fs.is_empty() {
        if txn_values > 0 {
            return Ok(Workload::LongFork);
        }
        let plain = ops.clients().all(|i| matches!(shape(&ops.ops[i].value), Shape::Int | Shape::Atom));
        if plain {
            return Ok(Workload::Register);
        }
    }
    Err(format!("{}: not one of the Jepsen workloads isolde detects", found()))
}

/// What detection looks at in a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// A map.
    Map,
    /// An integer.
    Int,
    /// Any other atom (`nil` included).
    Atom,
    /// A non-empty collection of micro-ops `[f k v]`.
    Txn,
    /// Any other vector, list or set.
    Coll,
    /// Anything else.
    Other,
}

fn shape(v: &OpValue) -> Shape {
    match v {
        OpValue::Nil => Shape::Atom,
        OpValue::Int(_) => Shape::Int,
        OpValue::Transfer(_) | OpValue::Balances(_) => Shape::Map,
        OpValue::Ints(..) => Shape::Coll,
        OpValue::Other(v) => match &**v {
            Value::Map(_) => Shape::Map,
            Value::Atom(_) => Shape::Atom,
            v => match elements(v) {
                Some(xs) if !xs.is_empty() && xs.iter().all(is_mop) => Shape::Txn,
                Some(_) => Shape::Coll,
                None => Shape::Other,
            },
        },
    }
}

/// Whether a value looks like a micro-op `[f k v]` with a named `f`.
fn is_mop(m: &Value) -> bool {
    matches!(elements(m), Some([f, _, _]) if name_of(f).is_some())
}
