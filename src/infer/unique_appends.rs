//! Unique appends: the first pair of transactions appending one element to
//! one key, as Elle refuses such a history.
//!
//! Uniqueness is what makes list reads traceable. Completions with no
//! invocation are checked only when the history has no invocations at all
//! (completion-only histories), where they are the only record of intent.
//! Completions are also checked among themselves: each completion is one
//! transaction's own record of what it did, and a completion that disagrees
//! with its invocation (a `:fail` whose value lists an append that was never
//! invoked, as some harnesses write) may list an element another
//! transaction appends. Such an element has two writers, so a read of it
//! could name either: it is reported as a duplicate append rather than
//! blamed on whichever record came first. The pair reported is the first in
//! history order (the smallest `(first op, second op, key, element)`), so
//! how independent processes' lines interleave does not change the answer.
//!
//! # How
//!
//! Per `(key, element)` the check keeps the two smallest distinct
//! invocations and the two smallest distinct completions appending it. Keys
//! whose elements are compact integers (Jepsen appends 1, 2, 3, ... per key;
//! interned values are numbered densely too) keep them in one flat array
//! indexed by key offset and element, which is linear and cache-friendly;
//! other keys use a hash map. Which store holds a key changes nothing found.

use crate::history::{History, MopFn, MopValue, Op, OpId, NONE};
use rustc_hash::FxHashMap;

/// A duplicate: the two ops, in history order, the key and the element.
pub type Duplicate = (OpId, OpId, u32, i64);

/// The two smallest distinct invocations and completions of one element.
type Writers = [OpId; 4];

/// Where each key's elements are kept.
enum Place {
    /// Offset of the key's `min..=max` range in the flat array.
    Dense {
        offset: usize,
        min: i64,
        len: usize,
    },
    Sparse,
}

/// The first duplicate append of `h` (see the module docs), if any.
pub fn first_duplicate(h: &History) -> Option<Duplicate> {
    let nkeys = h.key_count();
    let places = places(h, nkeys);
    let dense_len = places.iter().map(|p| if let Place::Dense { len, .. } = p { *len } else { 0 }).sum();
    let mut dense: Vec<Writers> = vec![[NONE; 4]; dense_len];
    let mut sparse: FxHashMap<(u32, i64), Writers> = FxHashMap::default();
    let has_invokes = h.ops.iter().any(Op::is_invoke);
    for (i, op) in h.ops.iter().enumerate() {
        let slot = if op.is_invoke() || !has_invokes { 0 } else { 2 };
        for m in h.stored_mops_of(op) {
            if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
                let e = match places[m.key.0 as usize] {
                    Place::Dense { offset, min, .. } => &mut dense[offset + v.wrapping_sub(min) as usize],
                    Place::Sparse => sparse.entry((m.key.0, v)).or_insert([NONE; 4]),
                };
                note(e, slot, i as u32);
            }
        }
    }
    let candidates = |e: &Writers, k: u32, v: i64| [(e[0], e[1], k, v), (e[2], e[3], k, v)];
    let from_dense = places.iter().enumerate().flat_map(|(k, p)| {
        let (offset, min, len) = match *p {
            Place::Dense { offset, min, len } => (offset, min, len),
            Place::Sparse => (0, 0, 0),
        };
        dense[offset..offset + len].iter().enumerate().flat_map(move |(j, e)| candidates(e, k as u32, min + j as i64))
    });
    let from_sparse = sparse.iter().flat_map(|(&(k, v), e)| candidates(e, k, v));
    from_dense.chain(from_sparse).filter(|d| d.1 != NONE).min()
}

/// Records op `i` as a writer in the pair at `slot` (0: invocations, 2:
/// completions) of `e`, keeping the two smallest distinct ops.
#[inline]
fn note(e: &mut Writers, slot: usize, i: OpId) {
    let (a, b) = (e[slot], e[slot + 1]);
    if i < a {
        e[slot] = i;
        e[slot + 1] = a;
    } else if i > a && i < b {
        e[slot + 1] = i;
    }
}

/// Each key's store: dense when its appended elements span a range at most
/// about four times their number.
fn places(h: &History, nkeys: usize) -> Vec<Place> {
    let mut bounds: Vec<(i64, i64, usize)> = vec![(i64::MAX, i64::MIN, 0); nkeys];
    // Every op's appends, an invocation's too (the stored micro-ops: an
    // invocation's appends are its completion's).
    for m in h.ops.iter().flat_map(|op| h.stored_mops_of(op)) {
        if let (MopFn::Append, MopValue::Int(v)) = (m.f, m.value) {
            let b = &mut bounds[m.key.0 as usize];
            b.0 = b.0.min(v);
            b.1 = b.1.max(v);
            b.2 += 1;
        }
    }
    let mut offset = 0;
    bounds
        .into_iter()
        .map(|(min, max, count)| {
            let span = max as i128 - min as i128 + 1;
            if count > 0 && span <= 4 * count as i128 + 64 {
                let len = span as usize;
                offset += len;
                Place::Dense { offset: offset - len, min, len }
            } else {
                Place::Sparse
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Atom, HistoryBuilder, Mop, OpType, RawOp};

    /// A history of ops (type, process, appends as (key, element)).
    fn history(ops: &[(OpType, i64, &[(u32, i64)])]) -> History {
        let mut b = HistoryBuilder::new("t");
        let keys: Vec<_> = (0..3).map(|k| b.key(Atom::Int(k))).collect();
        for &(t, p, appends) in ops {
            let s = b.mop_count();
            for &(k, v) in appends {
                let v = b.int_value(v);
                b.push_mop(Mop { f: MopFn::Append, key: keys[k as usize], value: MopValue::Int(v) });
            }
            let f = Atom::Keyword("txn".into());
            b.push_op(RawOp { index: None, time: None, op_type: t, process: Some(p), f, extras: vec![], line: 1 }, s);
        }
        b.finish()
    }

    #[test]
    fn the_first_pair_in_history_order_is_reported_from_either_store() {
        use OpType::{Invoke as I, Ok as K};
        let unique = history(&[(I, 0, &[(0, 1), (1, 1)]), (K, 0, &[(0, 1), (1, 1)]), (I, 1, &[(0, 2)])]);
        assert_eq!(first_duplicate(&unique), None);
        // Key 0 dense (1, 2, 3), key 1 sparse (elements far apart).
        let dup = history(&[
            (I, 0, &[(0, 1), (1, 1 << 40)]),
            (I, 1, &[(0, 2), (1, 5)]),
            (I, 2, &[(1, 5)]),
            (I, 3, &[(0, 2)]),
            (I, 4, &[(0, 3)]),
        ]);
        assert_eq!(first_duplicate(&dup), Some((1, 2, 1, 5)));
        let dup = history(&[(I, 0, &[(0, 3)]), (I, 1, &[(0, 1)]), (I, 2, &[(0, 3)]), (I, 3, &[(0, 1)])]);
        assert_eq!(first_duplicate(&dup), Some((0, 2, 0, 3)));
    }

    #[test]
    fn completions_count_among_themselves_and_alone_only_without_invocations() {
        use OpType::{Fail as F, Invoke as I, Ok as K};
        // An invocation and its completion append the same element: fine.
        let paired = history(&[(I, 0, &[(2, 7)]), (K, 0, &[(2, 7)])]);
        assert_eq!(first_duplicate(&paired), None);
        // Two completions listing one element: a duplicate.
        let two = history(&[(I, 0, &[(2, 7)]), (K, 0, &[(2, 7)]), (I, 1, &[(2, 8)]), (F, 1, &[(2, 7)])]);
        assert_eq!(first_duplicate(&two), Some((1, 3, 2, 7)));
        // Completion-only: completions are the record of intent.
        let only = history(&[(K, 0, &[(2, 7)]), (K, 1, &[(2, 7)])]);
        assert_eq!(first_duplicate(&only), Some((0, 1, 2, 7)));
    }
}
