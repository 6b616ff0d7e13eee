//! The bank checker (elle-cli's `elle-cli.bank`, Jepsen's
//! `jepsen.tests.bank/checker`).
//!
//! A bank test transfers amounts between accounts (`:transfer` ops with
//! `{:from a, :to b, :amount n}`) and reads every balance at once (`:read`
//! ops whose `:ok` value maps accounts to balances). Transfers conserve
//! money, so under snapshot isolation or anything stronger every read sums
//! to the same total. Each `:ok` read is checked, in this order (the first
//! that applies is its error, as in Jepsen's `check-op`):
//!
//! - `:unexpected-key`: an account outside the known accounts (those of the
//!   first `:ok` read);
//! - `:nil-balance`: an account read as `nil`;
//! - `:wrong-total`: balances summing to other than the total (`-o
//!   --total-amount`, else the first read's sum);
//! - `:negative-value`: a negative balance, unless negative balances are
//!   allowed (`-n --allow-negative-balances`).
//!
//! The result map is elle-cli's: `:read-count`, `:error-count`,
//! `:first-error`, and per error type `:count`, `:first`, `:worst`, `:last`
//! (and for wrong totals `:lowest` / `:highest`). isolde adds
//! `:transfer-count` (per outcome: `:ok`, `:fail`, `:info`, pending) and,
//! with `--max-transfer`, `:oversized-transfer-count` (transfers larger than
//! the generator's maximum, which do not make the history invalid). One
//! pass over the ops: linear time. As in Jepsen, a history without an `:ok`
//! read is valid: no read contradicts it.

use super::result::{count, kw, map, CheckResult, Node, Validity};
use super::{int_of, is_nil, name_of, JepsenError, OpType, Ops};
use crate::history::Value;
use crate::ingest::op_value::{Balance, Key, OpValue};
use rustc_hash::FxHashSet;
use std::borrow::Cow;

/// The bank checker's options (elle-cli's).
#[derive(Clone, Debug, Default)]
pub struct BankOptions {
    /// Whether negative balances are allowed.
    pub negative_balances: bool,
    /// The expected total; the first read's sum when `None`.
    pub total_amount: Option<i64>,
    /// The largest transfer the generator issues (reported, not an error).
    pub max_transfer: Option<i64>,
}

const EXPECTS: &str = ":transfer ops with values {:from a, :to b, :amount n} and :read ops whose :ok value maps accounts to integer balances";

/// The error types, in Jepsen's order.
const TYPES: [&str; 4] = ["unexpected-key", "nil-balance", "wrong-total", "negative-value"];

struct BankError {
    /// Index into [`TYPES`].
    kind: usize,
    op: usize,
    detail: (&'static str, Node),
    total: i128,
    badness: f64,
}

/// A balance, `None` when read as `nil`.
fn balance(b: &Balance) -> Option<i64> {
    (!b.nil).then_some(b.amount)
}

/// A transfer's `:amount` (the first entry so named, keyword or string).
fn amount(ops: &Ops, v: &OpValue) -> Option<i64> {
    match v {
        OpValue::Transfer(t) => Some(t.amount),
        OpValue::Balances(bs) => {
            bs.iter().find(|b| name_of(&b.key.value(&ops.keys)) == Some("amount")).and_then(|b| balance(b))
        }
        OpValue::Other(v) => match &**v {
            Value::Map(e) => e.iter().find(|(k, _)| name_of(k) == Some("amount")).and_then(|(_, v)| int_of(v)),
            _ => None,
        },
        _ => None,
    }
}

/// The model error for op `i`, saying what in its value does not fit.
fn misfit(ops: &Ops, i: usize) -> JepsenError {
    let v = ops.value(i);
    let detail = match (&*ops.ops[i].f, &*v) {
        ("read", Value::Map(e)) => match e.iter().find(|(_, b)| int_of(b).is_none() && !is_nil(b)) {
            Some((k, b)) => format!("; account {k} has the balance {b}, not an integer or nil"),
            None => String::new(),
        },
        ("read", v) => format!("; the read's value {v} is not a map"),
        ("transfer", _) => "; the transfer's value has no integer :amount".to_string(),
        _ => String::new(),
    };
    ops.model_error_in(i, "bank", EXPECTS, detail)
}

/// Checks a bank history.
pub fn check(ops: &Ops, opts: &BankOptions) -> Result<CheckResult, JepsenError> {
    // Model fit first: every client op is a read or a transfer of the
    // right shape.
    let mut reads: Vec<(usize, Cow<[Balance]>)> = Vec::new();
    let mut transfers = [0usize; 4];
    let mut oversized = 0usize;
    for i in ops.clients() {
        let o = &ops.ops[i];
        match &*o.f {
            "read" => {
                if o.op_type != OpType::Ok {
                    continue;
                }
                let balances = match &o.value {
                    OpValue::Balances(bs) => Cow::Borrowed(&bs[..]),
                    // A read that happens to have a transfer's shape.
                    OpValue::Transfer(t) => match t.as_balances(&ops.keys) {
                        Some(bs) => Cow::Owned(bs.to_vec()),
                        None => return Err(misfit(ops, i)),
                    },
                    _ => return Err(misfit(ops, i)),
                };
                reads.push((i, balances));
            }
            "transfer" => {
                // Only invocations are checked: a completion may carry
                // the database's answer (`[:negative 2 -1]`) instead.
                if o.op_type != OpType::Invoke {
                    continue;
                }
                let Some(amount) = amount(ops, &o.value) else { return Err(misfit(ops, i)) };
                if opts.max_transfer.is_some_and(|m| amount > m) {
                    oversized += 1;
                }
                match ops.completion(i).map(|c| c.op_type) {
                    Some(OpType::Ok) => transfers[0] += 1,
                    Some(OpType::Fail) => transfers[1] += 1,
                    Some(OpType::Info) => transfers[2] += 1,
                    _ => transfers[3] += 1,
                }
            }
            _ => return Err(ops.model_error(i, "bank", EXPECTS)),
        }
    }
    let mut extra = vec![(
        kw("transfer-count"),
        map(vec![
            ("ok", count(transfers[0])),
            ("fail", count(transfers[1])),
            ("info", count(transfers[2])),
            ("pending", count(transfers[3])),
        ]),
    )];
    if let Some(m) = opts.max_transfer {
        extra.push((kw("max-transfer"), Node::Int(m)));
        extra.push((kw("oversized-transfer-count"), count(oversized)));
    }
    let first: &[Balance] = reads.first().map(|(_, b)| &b[..]).unwrap_or(&[]);
    let accts: FxHashSet<Key> = first.iter().map(|b| b.key).collect();
    let total: i128 = match opts.total_amount {
        Some(t) => t.into(),
        None => first.iter().map(|b| b.amount as i128).sum(),
    };
    let mut errors: Vec<BankError> = Vec::new();
    for (i, balances) in &reads {
        let sum: i128 = balances.iter().map(|b| b.amount as i128).sum();
        let key = |b: &Balance| crate::reports::tree::value(&b.key.value(&ops.keys));
        let unexpected: Vec<Node> = balances.iter().filter(|b| !accts.contains(&b.key)).map(key).collect();
        let e = if !unexpected.is_empty() {
            let n = unexpected.len();
            Some((0, ("unexpected", Node::List(unexpected)), n as f64))
        } else if balances.iter().any(|b| b.nil) {
            let nils: Vec<(Node, Node)> = balances.iter().filter(|b| b.nil).map(|b| (key(b), Node::Nil)).collect();
            let n = nils.len();
            Some((1, ("nils", Node::Map(nils)), n as f64))
        } else if sum != total {
            let badness = if total > 0 { ((sum - total) as f64 / total as f64).abs() } else { 0.0 };
            Some((2, ("total", big(sum)), badness))
        } else if !opts.negative_balances && balances.iter().any(|b| balance(b).is_some_and(|b| b < 0)) {
            let neg: Vec<i64> = balances.iter().filter_map(|b| balance(b).filter(|&b| b < 0)).collect();
            let badness = -(neg.iter().map(|&b| b as f64).sum::<f64>());
            Some((3, ("negative", Node::List(neg.into_iter().map(Node::Int).collect())), badness))
        } else {
            None
        };
        if let Some((kind, detail, badness)) = e {
            errors.push(BankError { kind, op: *i, detail, total: sum, badness });
        }
    }
    let node = |e: &BankError| {
        map(vec![("type", kw(TYPES[e.kind])), (e.detail.0, e.detail.1.clone()), ("op", ops.node(e.op))])
    };
    let mut by_type = Vec::new();
    let mut firsts = Vec::new();
    for (t, name) in TYPES.iter().enumerate() {
        let errs: Vec<&BankError> = errors.iter().filter(|e| e.kind == t).collect();
        let (Some(first), Some(last)) = (errs.first(), errs.last()) else { continue };
        firsts.push(*first);
        let worst = errs.iter().fold(*first, |w, e| if e.badness > w.badness { e } else { w });
        let mut m =
            vec![("count", count(errs.len())), ("first", node(first)), ("worst", node(worst)), ("last", node(last))];
        if t == 2 {
            let lowest = errs.iter().fold(*first, |w, e| if e.total < w.total { e } else { w });
            let highest = errs.iter().fold(*first, |w, e| if e.total > w.total { e } else { w });
            m.push(("lowest", node(lowest)));
            m.push(("highest", node(highest)));
        }
        by_type.push((kw(name), map(m)));
    }
    let first_error = firsts.iter().min_by_key(|e| ops.ops[e.op].index).map(|e| node(e)).unwrap_or(Node::Nil);
    let valid = if errors.is_empty() { Validity::Valid } else { Validity::Invalid };
    let mut entries = vec![
        (kw("read-count"), count(reads.len())),
        (kw("error-count"), count(errors.len())),
        (kw("first-error"), first_error),
        (kw("errors"), Node::Map(by_type)),
        (kw("total-amount"), big(total)),
    ];
    entries.extend(extra);
    Ok(CheckResult::new(valid, entries))
}

fn big(x: i128) -> Node {
    match i64::try_from(x) {
        Ok(v) => Node::Int(v),
        Err(_) => Node::BigInt(x.to_string()),
    }
}
