//! Long values shown around what matters, for people: a read of 500
//! elements prints as `[… 497 elements … 17 *18* 19]`, the element a step
//! is about marked `*18*`, and a transaction of 40 micro-ops prints the
//! micro-ops the explanation uses and how many others there are.
//!
//! Only the table, `--verbose`, the HTML page and (unless `--full-values`)
//! the output directory's `.txt` explanations shorten values; the EDN and
//! JSON result maps always hold them whole. Values no longer than
//! [`LIST_WHOLE`] elements and transactions of at most [`MOPS_WHOLE`]
//! micro-ops print exactly as Elle prints them.

use super::{edn, tree, tree::Node};
use crate::anomaly::{Cycle, Step};
use crate::history::{History, MopValue, OpId};

/// Lists of at most this many elements print whole.
pub const LIST_WHOLE: usize = 10;

/// Transactions of at most this many micro-ops print whole.
pub const MOPS_WHOLE: usize = 8;

/// Elements shown on each side of a marked one.
const CONTEXT: usize = 1;

/// Elements shown at the end of a long list (the version it read).
const TAIL: usize = 3;

/// What an explanation is about in one op: the micro-ops it uses, by
/// index, each with the element (appended, read or overwritten) it is
/// about, if one.
pub type Focus = Vec<(u32, Option<i64>)>;

/// `xs` as an EDN vector, whole when short; a long one shows the elements
/// at `marks` (positions, marked `*x*`) with one neighbour each side and
/// its last elements, the rest counted: `[1 2 … 214 elements … 17 *18* 19]`.
pub fn list_marked(h: &History, xs: &[i64], marks: &[usize]) -> String {
    if xs.len() <= LIST_WHOLE {
        return edn::to_string(h, &tree::vals(h, xs));
    }
    let mut keep = vec![false; xs.len()];
    for &m in marks.iter().filter(|&&m| m < xs.len()) {
        let end = (m + CONTEXT).min(xs.len() - 1);
        keep[m.saturating_sub(CONTEXT)..=end].fill(true);
    }
    for k in keep.iter_mut().rev().take(TAIL) {
        *k = true;
    }
    let mut parts: Vec<String> = Vec::new();
    let mut gap = 0usize;
    for (i, &x) in xs.iter().enumerate() {
        if !keep[i] {
            gap += 1;
            continue;
        }
        if gap > 0 {
            parts.push(gap_text(gap));
            gap = 0;
        }
        let v = h.value_text(x);
        parts.push(if marks.contains(&i) { format!("*{v}*") } else { v });
    }
    if gap > 0 {
        parts.push(gap_text(gap));
    }
    format!("[{}]", parts.join(" "))
}

fn gap_text(n: usize) -> String {
    format!("… {n} element{} …", if n == 1 { "" } else { "s" })
}

/// [`list_marked`] marking the (last) position of each of `about`.
pub fn list_about(h: &History, xs: &[i64], about: &[i64]) -> String {
    let marks: Vec<usize> = about.iter().filter_map(|a| xs.iter().rposition(|x| x == a)).collect();
    list_marked(h, xs, &marks)
}

/// A micro-op as Elle prints it, its list shortened around `about` (the
/// version read, its last element, when `about` is empty).
pub fn mop_text(h: &History, op: OpId, mop: u32, about: &[i64]) -> String {
    edn::to_string(h, &mop_node(h, op, mop, about))
}

fn mop_node(h: &History, op: OpId, mop: u32, about: &[i64]) -> Node {
    let mops = h.mops_of(h.op(op));
    let Some(m) = mops.get(mop as usize) else { return Node::Nil };
    match m.value {
        MopValue::Entries(_) => tree::mop_at(h, mops, mop as usize),
        MopValue::List { .. } if h.list(m.value).len() > LIST_WHOLE => {
            let xs = h.list(m.value);
            let text = if about.is_empty() { list_marked(h, xs, &[]) } else { list_about(h, xs, about) };
            Node::Vector(vec![Node::Keyword(m.f.name().to_string()), tree::value(h.key(m.key)), Node::Symbol(text)])
        }
        _ => tree::mop(h, m),
    }
}

/// An op as Jepsen prints it, with long reads shortened around `focus`
/// and, in a long transaction (or one whose text would still pass
/// [`OP_BUDGET`]), only the focused micro-ops and a count of the others
/// (`… 37 other micro-ops`).
pub fn op_text(h: &History, id: OpId, focus: &Focus) -> String {
    let text = op_text_with(h, id, focus, false);
    if text.chars().count() <= OP_BUDGET || focus.is_empty() {
        return text;
    }
    op_text_with(h, id, focus, true)
}

/// An op printed by [`op_text`] longer than this many characters shows
/// only the micro-ops in focus, however few it has.
pub const OP_BUDGET: usize = 150;

fn op_text_with(h: &History, id: OpId, focus: &Focus, only_focus: bool) -> String {
    let Node::Map(mut fields) = tree::op(h, id) else { return String::new() };
    let mops = h.mops_of(h.op(id));
    // Closed-predicate ops print whole: their steps count micro-ops as
    // Elle does, a predicate read with its entries as one.
    let predicate = h.op(id).fields & crate::history::field::VALUE_MAP != 0
        || mops.iter().any(|m| m.f == crate::history::MopFn::PredRead);
    if predicate {
        return edn::to_string(h, &Node::Map(fields));
    }
    let long_txn = mops.len() > MOPS_WHOLE || only_focus;
    let long_list = mops.iter().any(|m| matches!(m.value, MopValue::List { .. }) && h.list(m.value).len() > LIST_WHOLE);
    if long_txn || long_list {
        if let Some(entry) = fields.iter_mut().find(|(k, _)| *k == Node::Keyword("value".into())) {
            if matches!(entry.1, Node::Vector(_)) {
                let about = |i: u32| focus.iter().filter(|(m, _)| *m == i).filter_map(|(_, e)| *e).collect::<Vec<_>>();
                let shown: Vec<u32> = if long_txn {
                    let mut s: Vec<u32> =
                        focus.iter().map(|(m, _)| *m).filter(|&m| (m as usize) < mops.len()).collect();
                    s.sort_unstable();
                    s.dedup();
                    if s.is_empty() {
                        s = (0..MOPS_WHOLE as u32 / 2).collect();
                    }
                    s
                } else {
                    (0..mops.len() as u32).collect()
                };
                let mut v: Vec<Node> = shown.iter().map(|&i| mop_node(h, id, i, &about(i))).collect();
                if shown.len() < mops.len() {
                    let n = mops.len() - shown.len();
                    v.push(Node::Symbol(format!("… {n} other micro-op{}", if n == 1 { "" } else { "s" })));
                }
                entry.1 = Node::Vector(v);
            }
        }
    }
    edn::to_string(h, &Node::Map(fields))
}

/// What each step of `c` is about in each of its transactions, by the
/// cycle's positions: a write-read step is about the element written and
/// read, a read-write step about the version read and the element
/// appended after it, a write-write step about both appends.
pub fn cycle_focus(c: &Cycle) -> Vec<Focus> {
    let n = c.ops.len();
    let mut f: Vec<Focus> = vec![Vec::new(); n];
    for (i, st) in c.steps.iter().enumerate() {
        let (a, b) = (i, (i + 1) % n.max(1));
        let (am, bm, av, bv) = match st {
            Step::Ww { value, value2, a_mop, b_mop, .. } => (a_mop, b_mop, *value, *value2),
            Step::Wr { value, a_mop, b_mop, .. } => (a_mop, b_mop, *value, *value),
            Step::Rw { value, value2, a_mop, b_mop, .. } => (a_mop, b_mop, *value, *value2),
            _ => continue,
        };
        if let (Some(m), Some(fa)) = (am, f.get_mut(a)) {
            fa.push((*m, av));
        }
        if let (Some(m), Some(fb)) = (bm, f.get_mut(b)) {
            fb.push((*m, bv));
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> History {
        let read: Vec<String> = (1..=40).map(|i| i.to_string()).collect();
        let appends: Vec<String> = (0..20).map(|i| format!("[:append :y {i}]")).collect();
        let text = format!("{{:type :ok, :process 0, :value [[:r :x [{}]] {}]}}\n", read.join(" "), appends.join(" "));
        crate::ingest::read_bytes("h.edn", text.as_bytes(), crate::ingest::Format::Edn).expect("parses")
    }

    #[test]
    fn long_lists_show_what_matters() {
        let h = history();
        let xs = h.list(h.mops_of(h.op(0))[0].value).to_vec();
        let pos = |v: i64| xs.iter().position(|x| h.value_text(*x) == v.to_string()).expect("there");
        let s = list_marked(&h, &xs, &[pos(18)]);
        assert_eq!(s, "[… 16 elements … 17 *18* 19 … 18 elements … 38 39 40]");
        assert_eq!(list_marked(&h, &xs[..10], &[0]), "[1 2 3 4 5 6 7 8 9 10]");
        assert_eq!(list_marked(&h, &xs, &[]), "[… 37 elements … 38 39 40]");
    }

    #[test]
    fn long_transactions_show_the_micro_ops_used() {
        let h = history();
        let xs = h.list(h.mops_of(h.op(0))[0].value).to_vec();
        let s = op_text(&h, 0, &vec![(0, Some(xs[4])), (3, None)]);
        assert!(s.contains("[:r :x [… 3 elements … 4 *5* 6 … 31 elements … 38 39 40]] [:append :y 2]"), "{s}");
        assert!(s.ends_with("… 19 other micro-ops]}"), "{s}");
        assert!(s.len() < 200, "{s}");
    }
}
