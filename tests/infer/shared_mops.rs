//! Invocations that share their completion's micro-ops (the history's
//! memory work for large register histories): ingest keeps one copy, and
//! every reader still sees each operation's micro-ops exactly as written.

use isolde::history::{History, KeyId, Mop, MopFn, MopValue, OpType};
use isolde::ingest::{read_bytes, Format};

fn read(edn: &str) -> History {
    read_bytes("shared.edn", edn.as_bytes(), Format::Edn).expect("history parses")
}

fn mop(f: MopFn, key: u32, value: MopValue) -> Mop {
    Mop { f, key: KeyId(key), value }
}

/// A transaction whose invocation reads `nil` shares its completion's
/// micro-ops: one copy is stored, and the invocation still reads `nil`.
#[test]
fn an_invocation_with_nil_reads_shares_and_reads_nil() {
    let h = read(
        "{:type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:w :x 2] [:r :y nil]]}\n\
         {:type :ok, :process 0, :f :txn, :value [[:r :x 1] [:w :x 2] [:r :y 7]]}\n",
    );
    assert_eq!(h.mops.len(), 3, "the invocation's copy is not stored");
    let (inv, ok) = (h.ops[0], h.ops[1]);
    assert_eq!(inv.op_type, OpType::Invoke);
    assert!(h.shares_mops(&inv));
    assert!(!h.shares_mops(&ok));
    assert_eq!(
        h.mops_of(&inv),
        [
            mop(MopFn::Read, 0, MopValue::Nil),
            mop(MopFn::Write, 0, MopValue::Int(2)),
            mop(MopFn::Read, 1, MopValue::Nil)
        ]
    );
    assert_eq!(
        h.mops_of(&ok),
        [
            mop(MopFn::Read, 0, MopValue::Int(1)),
            mop(MopFn::Write, 0, MopValue::Int(2)),
            mop(MopFn::Read, 1, MopValue::Int(7))
        ]
    );
    // The stored micro-ops are the completion's (same functions, keys and
    // written values).
    assert_eq!(h.stored_mops_of(&inv), h.mops_of(&ok));
}

/// An invocation whose micro-ops differ from its completion's beyond the
/// values read (here a read value given at invocation, and a different
/// write) keeps its own, as written.
#[test]
fn an_invocation_that_differs_keeps_its_own() {
    let h = read(
        "{:type :invoke, :process 0, :f :txn, :value [[:r :x 5]]}\n\
         {:type :ok, :process 0, :f :txn, :value [[:r :x 1]]}\n\
         {:type :invoke, :process 1, :f :txn, :value [[:w :x 3]]}\n\
         {:type :info, :process 1, :f :txn, :value [[:w :x 4]]}\n",
    );
    assert_eq!(h.mops.len(), 4);
    assert!(h.ops.iter().all(|o| !h.shares_mops(o)));
    assert_eq!(h.mops_of(&h.ops[0]), [mop(MopFn::Read, 0, MopValue::Int(5))]);
    assert_eq!(h.mops_of(&h.ops[2]), [mop(MopFn::Write, 0, MopValue::Int(3))]);
}

/// Unpaired invocations keep their micro-ops; paired ones of `:fail` and
/// `:info` completions share like `:ok` ones, and every op's micro-ops
/// read back as written whatever was shared around it.
#[test]
fn sharing_keeps_every_other_op_in_place() {
    let edn = "{:type :invoke, :process 0, :f :txn, :value [[:w :x 1]]}\n\
               {:type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:w :y 2]]}\n\
               {:type :fail, :process 1, :f :txn, :value [[:r :x nil] [:w :y 2]]}\n\
               {:type :invoke, :process 1, :f :txn, :value [[:r :y nil]]}\n\
               {:type :info, :process 1, :f :txn, :value [[:r :y nil]]}\n\
               {:type :invoke, :process 2, :f :txn, :value [[:r :x nil]]}\n";
    let h = read(edn);
    let shared: Vec<bool> = h.ops.iter().map(|o| h.shares_mops(o)).collect();
    assert_eq!(shared, [false, true, false, true, false, false]);
    assert_eq!(h.mops.len(), 1 + 2 + 1 + 1);
    let written = [
        vec![mop(MopFn::Write, 0, MopValue::Int(1))],
        vec![mop(MopFn::Read, 0, MopValue::Nil), mop(MopFn::Write, 1, MopValue::Int(2))],
        vec![mop(MopFn::Read, 0, MopValue::Nil), mop(MopFn::Write, 1, MopValue::Int(2))],
        vec![mop(MopFn::Read, 1, MopValue::Nil)],
        vec![mop(MopFn::Read, 1, MopValue::Nil)],
        vec![mop(MopFn::Read, 0, MopValue::Nil)],
    ];
    for (op, want) in h.ops.iter().zip(&written) {
        assert_eq!(h.mops_of(op), &want[..], "op {}", op.index);
    }
}

/// Sharing is the same whatever the format: a JSON history reads back to
/// the same micro-ops per op as its EDN twin.
#[test]
fn json_and_edn_share_alike() {
    let edn = read(
        "{:type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:w :x 2]]}\n\
         {:type :ok, :process 0, :f :txn, :value [[:r :x 1] [:w :x 2]]}\n",
    );
    let json = read_bytes(
        "shared.json",
        br#"[{"type":"invoke","process":0,"f":"txn","value":[["r","x",null],["w","x",2]]},
             {"type":"ok","process":0,"f":"txn","value":[["r","x",1],["w","x",2]]}]"#,
        Format::Json,
    )
    .expect("json parses");
    assert_eq!(json.mops.len(), edn.mops.len());
    for (a, b) in edn.ops.iter().zip(&json.ops) {
        assert_eq!(edn.mops_of(a), json.mops_of(b));
    }
}
