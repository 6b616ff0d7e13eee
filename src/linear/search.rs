//! The Wing–Gong–Lowe search for one partition (one key), with Lowe's
//! memoization of configurations, as Porcupine's `checkSingle`.
//!
//! The history is a doubly linked list of call and return entries in real
//! time order. The search walks it from the front: at a call whose
//! operation can be applied to the current state (and whose resulting
//! configuration — the set of linearized operations and the state — was
//! not seen before), it linearizes the operation (lifts its call and
//! return out of the list) and restarts from the front; at a return, the
//! operation returning there was not linearized before its return, so the
//! search backtracks: it undoes the last linearized operation and tries
//! the next entry after it. The list empties exactly when every operation
//! has been linearized; the search fails when it must backtrack with
//! nothing linearized. Each configuration is entered at most once (the
//! cache), so the search is exponential only in the concurrency, not in
//! the length of the history.

use super::model::{step, Id, Input, Interner};
use rustc_hash::FxHashSet;
use std::time::Instant;

/// An operation of a partition: its call and return positions in real
/// time order and its input and output. `ret == u64::MAX` for an operation
/// that never returned (`:info`, pending): it may take effect at any time
/// after its call, or never (where its effect is impossible it is
/// linearized as having none; linearizing it last is the same as never).
#[derive(Clone, Copy, Debug)]
pub struct LinOp {
    /// Call position.
    pub call: u64,
    /// Return position (`u64::MAX`: none).
    pub ret: u64,
    /// Input and output.
    pub input: Input,
    /// The op's position in its history (for reporting).
    pub origin: usize,
}

/// Budgets of a search.
#[derive(Clone, Copy, Debug)]
pub struct Budget<'a> {
    /// Give up (unknown) after this instant.
    pub deadline: Option<Instant>,
    /// Give up (unknown) when the cache holds more bytes than this.
    pub max_bytes: usize,
    /// Give up (unknown) when this is set (another partition decided).
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
}

/// The deepest configuration reached when a partition is not
/// linearizable: what a person can check.
#[derive(Clone, Debug)]
pub struct Witness {
    /// Ops (indices into the partition) of the longest linearizable
    /// prefix, in linearization order.
    pub prefix: Vec<usize>,
    /// The state after the prefix.
    pub state: Id,
    /// The op whose return was reached before it could be linearized.
    pub blocked: usize,
    /// The ops that could have come next (called before that return), each
    /// with the state it would leave, `None` when it contradicts the state.
    pub candidates: Vec<(usize, Option<Id>)>,
}

/// A partition's verdict.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Linearizable, with a linearization (ops in order).
    Linearizable(Vec<usize>),
    /// Not linearizable.
    NotLinearizable(Witness),
    /// Gave up: why, and how many configurations were explored.
    Unknown(String, u64),
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    op: u32,
    /// For a call, its return's node (always present: operations that
    /// never returned get a return after every other entry).
    matching: u32,
    is_call: bool,
    prev: u32,
    next: u32,
}

/// The set of linearized operations: a bitset, held inline for up to 512
/// operations (so that the cache's keys need no allocation), boxed beyond.
trait Bits: Clone + Eq + std::hash::Hash {
    fn with_len(n: usize) -> Self;
    fn set(&mut self, i: usize);
    fn clear(&mut self, i: usize);
    fn bytes(&self) -> usize;
}

impl<const W: usize> Bits for [u64; W] {
    fn with_len(_: usize) -> Self {
        [0; W]
    }
    #[inline(always)]
    fn set(&mut self, i: usize) {
        self[i / 64] |= 1 << (i % 64);
    }
    #[inline(always)]
    fn clear(&mut self, i: usize) {
        self[i / 64] &= !(1 << (i % 64));
    }
    fn bytes(&self) -> usize {
        W * 8
    }
}

impl Bits for Box<[u64]> {
    fn with_len(n: usize) -> Self {
        vec![0; n.div_ceil(64).max(1)].into_boxed_slice()
    }
    fn set(&mut self, i: usize) {
        self[i / 64] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: usize) {
        self[i / 64] &= !(1 << (i % 64));
    }
    fn bytes(&self) -> usize {
        self.len() * 8 + 16
    }
}

/// Runs the search over `ops` from state `init`. Returns the outcome and
/// the number of configurations explored.
pub fn search(ops: &[LinOp], init: Id, interner: &mut Interner, budget: &Budget) -> (Outcome, u64) {
    match ops.len().div_ceil(64) {
        0 | 1 => run::<[u64; 1]>(ops, init, interner, budget),
        2 => run::<[u64; 2]>(ops, init, interner, budget),
        3 | 4 => run::<[u64; 4]>(ops, init, interner, budget),
        5..=8 => run::<[u64; 8]>(ops, init, interner, budget),
        _ => run::<Box<[u64]>>(ops, init, interner, budget),
    }
}

fn run<B: Bits>(ops: &[LinOp], init: Id, interner: &mut Interner, budget: &Budget) -> (Outcome, u64) {
    let n = ops.len();
    // Entries: (position, is return, op). Calls before returns at equal
    // positions (Porcupine's order); never-returned ops return last.
    let mut entries: Vec<(u64, bool, u32)> = Vec::with_capacity(2 * n + 1);
    for (i, o) in ops.iter().enumerate() {
        entries.push((o.call, false, i as u32));
        entries.push((o.ret, true, i as u32));
    }
    entries.sort_unstable();
    // Node 0 is the head sentinel.
    let mut nodes: Vec<Node> = Vec::with_capacity(entries.len() + 1);
    nodes.push(Node { op: NIL, matching: NIL, is_call: false, prev: NIL, next: NIL });
    let mut ret_node = vec![NIL; n];
    for (k, &(_, is_ret, op)) in entries.iter().enumerate() {
        let id = (k + 1) as u32;
        nodes.push(Node { op, matching: NIL, is_call: !is_ret, prev: id - 1, next: NIL });
        nodes[k].next = id;
        if is_ret {
            ret_node[op as usize] = id;
        }
    }
    for node in nodes.iter_mut().skip(1) {
        if node.is_call {
            node.matching = ret_node[node.op as usize];
        }
    }
    let mut linearized = B::with_len(n);
    let mut cache: FxHashSet<(B, Id)> = FxHashSet::default();
    cache.reserve(1 << 12);
    let entry_bytes = linearized.bytes() + 16;
    // Linearized calls: node, state before, and whether it was forced (see
    // `preserves`): a forced op has no alternative worth trying.
    let mut calls: Vec<(u32, Id, bool)> = Vec::new();
    let mut state = init;
    let mut entry = nodes[0].next;
    let mut explored = 0u64;
    let mut best: Option<Witness> = None;
    let lift = |nodes: &mut Vec<Node>, e: u32| {
        let (p, nx) = (nodes[e as usize].prev, nodes[e as usize].next);
        nodes[p as usize].next = nx;
        if nx != NIL {
            nodes[nx as usize].prev = p;
        }
        let m = nodes[e as usize].matching;
        let (p, nx) = (nodes[m as usize].prev, nodes[m as usize].next);
        nodes[p as usize].next = nx;
        if nx != NIL {
            nodes[nx as usize].prev = p;
        }
    };
    let unlift = |nodes: &mut Vec<Node>, e: u32| {
        let m = nodes[e as usize].matching;
        let (p, nx) = (nodes[m as usize].prev, nodes[m as usize].next);
        nodes[p as usize].next = m;
        if nx != NIL {
            nodes[nx as usize].prev = m;
        }
        let (p, nx) = (nodes[e as usize].prev, nodes[e as usize].next);
        nodes[p as usize].next = e;
        if nx != NIL {
            nodes[nx as usize].prev = e;
        }
    };
    while nodes[0].next != NIL {
        explored += 1;
        if explored & 0xfff == 0 {
            if budget.cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                return (Outcome::Unknown("cancelled: another partition decided".into(), explored), explored);
            }
            if budget.deadline.is_some_and(|d| Instant::now() >= d) {
                return (Outcome::Unknown(format!("timed out after {explored} search steps"), explored), explored);
            }
            if cache.len().saturating_mul(entry_bytes) + interner.bytes() > budget.max_bytes {
                return (
                    Outcome::Unknown(
                        format!("the search's cache reached the memory budget ({} configurations)", cache.len()),
                        explored,
                    ),
                    explored,
                );
            }
        }
        let node = nodes[entry as usize];
        let mut dead = false;
        if node.is_call {
            let op = node.op as usize;
            let stepped = step(state, &ops[op].input, interner);
            let forced = stepped.is_some() && preserves(&ops[op].input);
            // An op that never returned may also never take effect.
            let next = stepped.or((ops[op].ret == u64::MAX).then_some(state));
            match next {
                Some(next) => {
                    linearized.set(op);
                    if cache.insert((linearized.clone(), next)) {
                        calls.push((entry, state, forced));
                        state = next;
                        lift(&mut nodes, entry);
                        entry = nodes[0].next;
                    } else {
                        linearized.clear(op);
                        // A forced op's configuration failed before: so
                        // does every extension of this prefix.
                        dead = forced;
                        entry = node.next;
                    }
                }
                None => entry = node.next,
            }
            if !dead {
                continue;
            }
        }
        {
            // A return reached (its op was not linearized in time), or a
            // dead prefix: backtrack.
            if !dead && best.as_ref().is_none_or(|b| calls.len() > b.prefix.len()) {
                let mut candidates = Vec::new();
                let mut c = nodes[0].next;
                while c != NIL && c != entry {
                    let cn = nodes[c as usize];
                    if cn.is_call {
                        let o = cn.op as usize;
                        candidates.push((o, step(state, &ops[o].input, interner)));
                    }
                    c = cn.next;
                }
                best = Some(Witness {
                    prefix: calls.iter().map(|&(e, _, _)| nodes[e as usize].op as usize).collect(),
                    state,
                    blocked: node.op as usize,
                    candidates,
                });
            }
            // Pop forced ops (their alternatives are dominated), then the
            // last free choice, and try what follows it.
            loop {
                let Some((e, prev, forced)) = calls.pop() else {
                    let w = best.unwrap_or(Witness {
                        prefix: Vec::new(),
                        state,
                        blocked: node.op as usize,
                        candidates: Vec::new(),
                    });
                    return (Outcome::NotLinearizable(w), explored);
                };
                let op = nodes[e as usize].op as usize;
                linearized.clear(op);
                state = prev;
                unlift(&mut nodes, e);
                if !forced {
                    entry = nodes[e as usize].next;
                    break;
                }
            }
        }
    }
    (Outcome::Linearizable(calls.iter().map(|&(e, _, _)| nodes[e as usize].op as usize).collect()), explored)
}

/// Whether an op never changes the state when it applies (reads, gets,
/// CASes known to have failed). Such an op, once it can be linearized, is
/// linearized at once and never tried later: any linearization that places
/// it later stays one when it is moved to this point (it reads the same
/// state here, moving it changes no other op's state, and every op that
/// returned before it was called is already linearized, or the search
/// would have met that return first). This prunes the search without
/// changing its verdict.
fn preserves(input: &Input) -> bool {
    matches!(input, Input::Read(_) | Input::Get(_) | Input::Cas { outcome: super::model::CasOutcome::Fail, .. })
}
