//! Rendering a weak-level [`Violation`] for people: a one-line summary, a
//! step-by-step explanation naming the operations, and a result-map value.

use crate::history::{History, OpId};
use crate::reports::tree::{self, Node};
use crate::weak::front::{FindingKind, Sessions};
use crate::weak::witness::{Cause, Violation, WStep};
use crate::weak::Kind;

fn kw(s: &str) -> Node {
    Node::Keyword(s.to_string())
}

fn txn(h: &History, t: Option<OpId>) -> String {
    match t {
        Some(o) => format!("T{}", h.op(o).index),
        None => "⊥".to_string(),
    }
}

/// A micro-op, a long read shortened to its last elements (the version
/// it read; see [`crate::reports::elide`]).
fn mop_text(h: &History, op: OpId, mop: u32) -> String {
    crate::reports::elide::mop_text(h, op, mop, &[])
}

/// An op, long reads shortened, a long transaction shown by the micro-ops
/// `mops` (see [`crate::reports::elide::op_text`]).
fn op_text(h: &History, op: OpId, mops: &[u32]) -> String {
    crate::reports::elide::op_text(h, op, &mops.iter().map(|&m| (m, None)).collect())
}

/// The Plume TAP name of a letter (weak.md §7).
pub fn tap_name(tap: char) -> &'static str {
    match tap {
        'a' => "ThinAirRead",
        'b' => "AbortedRead",
        'c' => "FutureRead",
        'd' => "NotMyOwnWrite",
        'e' => "NotMyLastWrite",
        'f' => "IntermediateRead",
        'g' => "CyclicCO",
        'h' => "NonMonoReadCO",
        'i' => "NonMonoReadAO",
        'j' => "NonRepeatableRead",
        'k' => "FracturedReadCO",
        'l' => "FracturedReadAO",
        'm' => "COConflictAO",
        'n' => "ConflictAO",
        _ => "?",
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::NonMonotonic => "non-monotonic",
        Kind::FracturedSo => "fractured-so",
        Kind::FracturedWr => "fractured-wr",
        Kind::Causal => "causal",
    }
}

fn step_tag(s: &WStep) -> String {
    match s {
        WStep::So => "so".into(),
        WStep::Wr { .. } => "wr".into(),
        WStep::Version { .. } => "ww".into(),
        WStep::Forced { kind, .. } => format!("co[{}]", kind_name(*kind)),
    }
}

/// A one-line summary: level, TAP, and the cycle's transactions.
pub fn short(h: &History, v: &Violation) -> String {
    let head = format!("{} violated (TAP-{} {})", v.level.model(), v.tap, tap_name(v.tap));
    let body = match &v.cause {
        Cause::Read(f) => format!("{} read {}", txn(h, Some(f.op)), mop_text(h, f.op, f.mop)),
        Cause::NonRepeatable { reader, mops, .. } => format!(
            "{} read {} then {}",
            txn(h, Some(*reader)),
            mop_text(h, *reader, mops[0]),
            mop_text(h, *reader, mops[1])
        ),
        Cause::Cycle(c) => {
            let mut s = String::new();
            for (i, st) in c.steps.iter().enumerate() {
                s.push_str(&format!("{} -{}-> ", txn(h, c.txns[i]), step_tag(st)));
            }
            s.push_str(&txn(h, c.txns.first().copied().flatten()));
            s
        }
    };
    format!("{head}: {body}")
}

/// The reason `a` must commit before `b`, in words.
fn step_sentence(h: &History, s: &WStep, a: &str, b: &str, b_op: Option<OpId>) -> String {
    match s {
        WStep::So if a == "⊥" => format!("the initial state precedes every transaction, {b} included"),
        WStep::So => format!("{a} precedes {b} in session order"),
        WStep::Wr { mop, .. } => match b_op {
            Some(o) => format!("{b} read {} from {a}", mop_text(h, o, *mop)),
            None => format!("{b} read from {a}"),
        },
        WStep::Version { op, mop, .. } => {
            format!("T{}'s read {} shows {a}'s append right before {b}'s", h.op(*op).index, mop_text(h, *op, *mop))
        }
        WStep::Forced { kind, reader, read_mop, via_mop, .. } => {
            let r = format!("T{}", h.op(*reader).index);
            let read = mop_text(h, *reader, *read_mop);
            let seen = match (kind, via_mop) {
                (Kind::NonMonotonic, Some(q)) => format!("{r} read {} from {a} before that", mop_text(h, *reader, *q)),
                (Kind::FracturedWr, Some(q)) => format!("{r} also read {} from {a}", mop_text(h, *reader, *q)),
                (Kind::FracturedSo, _) => format!("{a} precedes {r} in its session"),
                _ => format!("{a} causally precedes {r} (a chain of session and read steps)"),
            };
            format!("{r} read {read} from {b}, and {seen}, and {a} writes that key too, so {a}'s write must be the older one")
        }
    }
}

/// A step-by-step explanation naming every operation involved.
pub fn explain(h: &History, v: &Violation) -> String {
    let mut s = format!(
        "The history violates {} (TAP-{} {}){}.\n",
        v.level.model(),
        v.tap,
        tap_name(v.tap),
        if v.sessions == Sessions::None { ", even without session order" } else { "" }
    );
    if let Some(e) = v.elle_analogue() {
        s.push_str(&format!(
            "Read as anti-dependencies, its forced edges make this cycle Elle's {e}, which Elle attributes to \
             stronger models and sees only when it knows the version order.\n"
        ));
    }
    match &v.cause {
        Cause::Read(f) => {
            let what = match f.kind {
                FindingKind::ThinAir => "a value no transaction wrote".to_string(),
                FindingKind::Aborted { writer } => format!("a value written by the failed T{}", h.op(writer).index),
                FindingKind::Future => "a value it writes only later".to_string(),
                FindingKind::NotMyOwnWrite => "another transaction's value after writing the key itself".to_string(),
                FindingKind::NotMyLastWrite => "its own earlier write, not its last one".to_string(),
                FindingKind::Intermediate { writer } => {
                    format!("a value T{} overwrote in the same transaction", h.op(writer).index)
                }
            };
            s.push_str(&format!(
                "  {} = {}\n  its read {} returned {what}.\n",
                txn(h, Some(f.op)),
                op_text(h, f.op, &[f.mop]),
                mop_text(h, f.op, f.mop)
            ));
        }
        Cause::NonRepeatable { reader, mops, writers, .. } => {
            s.push_str(&format!(
                "  {} = {}\n  it read {} from {} and {} from {}: each writer was visible to it, so each must \
                 commit before the other.\n",
                txn(h, Some(*reader)),
                op_text(h, *reader, &mops[..]),
                mop_text(h, *reader, mops[0]),
                txn(h, writers[0]),
                mop_text(h, *reader, mops[1]),
                txn(h, writers[1])
            ));
        }
        Cause::Cycle(c) => {
            s.push_str("Let:\n");
            for &t in &c.txns {
                match t {
                    Some(o) => s.push_str(&format!("  {} = {}\n", txn(h, t), op_text(h, o, &[]))),
                    None => s.push_str("  ⊥ = the initial state (every key's initial value)\n"),
                }
            }
            s.push_str("Then:\n");
            let n = c.steps.len();
            for (i, st) in c.steps.iter().enumerate() {
                let (a, b) = (txn(h, c.txns[i]), txn(h, c.txns[(i + 1) % n]));
                let why = step_sentence(h, st, &a, &b, c.txns[(i + 1) % n]);
                if i + 1 == n {
                    s.push_str(&format!("  - However, {a} < {b}, because {why}: a contradiction!\n"));
                } else {
                    s.push_str(&format!("  - {a} < {b}, because {why}.\n"));
                }
            }
        }
    }
    if !v.assumed.is_empty() {
        s.push_str(&format!(
            "Some reads returned repeated values; this shows one of the {} writer assignments, and every one fails:\n",
            v.assignments
        ));
        for a in &v.assumed {
            s.push_str(&format!(
                "  {} read {} assumed from T{} (candidates {})\n",
                txn(h, Some(a.op)),
                mop_text(h, a.op, a.mop),
                h.op(a.writer).index,
                a.candidates.iter().map(|&c| format!("T{}", h.op(c).index)).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    s
}

/// The violation as a result-map value.
pub fn node(h: &History, v: &Violation) -> Node {
    let op = |t: Option<OpId>| t.map(Node::Op).unwrap_or_else(|| kw("init"));
    let mut m = vec![
        (kw("level"), kw(v.level.model())),
        (kw("tap"), Node::Str(format!("tap-{}", v.tap))),
        (kw("tap-name"), Node::Str(tap_name(v.tap).to_string())),
    ];
    if let Some(e) = v.elle_analogue() {
        m.push((kw("elle-analogue"), kw(&e)));
    }
    m.push((kw("sessions"), Node::Bool(v.sessions == Sessions::Process)));
    match &v.cause {
        Cause::Read(f) => {
            m.push((kw("op"), Node::Op(f.op)));
            m.push((kw("mop"), tree::mop(h, &h.mops_of(h.op(f.op))[f.mop as usize])));
        }
        Cause::NonRepeatable { reader, mops, writers, .. } => {
            m.push((kw("op"), Node::Op(*reader)));
            m.push((
                kw("mops"),
                Node::Vector(mops.iter().map(|&i| tree::mop(h, &h.mops_of(h.op(*reader))[i as usize])).collect()),
            ));
            m.push((kw("writers"), Node::Vector(writers.iter().map(|&w| op(w)).collect())));
        }
        Cause::Cycle(c) => {
            let mut ops: Vec<Node> = c.txns.iter().map(|&t| op(t)).collect();
            if let Some(&first) = c.txns.first() {
                ops.push(op(first));
            }
            m.push((kw("cycle"), Node::Vector(ops)));
            let steps = c
                .steps
                .iter()
                .map(|s| {
                    let mut e = vec![(kw("type"), kw(&step_tag(s)))];
                    match s {
                        WStep::So => {}
                        WStep::Wr { key, .. } | WStep::Version { key, .. } => {
                            e.push((kw("key"), tree::value(h.key(*key))));
                        }
                        WStep::Forced { kind, reader, key, read_mop, via_mop } => {
                            e.push((kw("premise"), kw(kind_name(*kind))));
                            e.push((kw("key"), tree::value(h.key(*key))));
                            e.push((kw("reader"), Node::Op(*reader)));
                            e.push((kw("read"), tree::mop(h, &h.mops_of(h.op(*reader))[*read_mop as usize])));
                            if let Some(q) = via_mop {
                                e.push((kw("after"), tree::mop(h, &h.mops_of(h.op(*reader))[*q as usize])));
                            }
                        }
                    }
                    Node::Map(e)
                })
                .collect();
            m.push((kw("steps"), Node::Vector(steps)));
        }
    }
    m.push((kw("explanation"), Node::Str(explain(h, v))));
    Node::Map(m)
}
