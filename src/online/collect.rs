//! Collecting old transactions while following a list-append history
//! checked for strict serializability: memory that does not grow with the
//! run.
//!
//! ## Which transactions can go (the realtime rule)
//! Strict serializability forbids every cycle of the dependency graph
//! together with realtime order (`a → b` when `a` completed before `b` was
//! invoked). A history has a cycle iff it has a *chordless* one, and a
//! chordless cycle is temporally local: let `E` be its member that completes
//! first. `E` precedes in realtime every member invoked after it completed,
//! and in a chordless cycle only one of those edges can be a cycle edge, so
//! at most one member (`L`) was invoked after `E` completed.
//!
//! Let `b` be a position of the history such that every transaction still
//! held, still open, or yet to come is invoked at or after `b`, and let the
//! *collected* ones be the `:ok` transactions completed before `b`. A
//! chordless cycle through a collected `M` has a collected `E` (it completes
//! no later than `M`), so at most one member is held or future; every other
//! member is collected and precedes that one in realtime, a chord unless it
//! is `E`. So the cycle is `L → E → L`: a held or future `L` with a data
//! edge into a collected `E` that completed before `L` was invoked. Cycles
//! among collected transactions alone were complete, hence checked, when
//! their last member completed (no member is collected while another is
//! open: `b` precedes every open invocation). What remains to check about the
//! collected transactions is therefore the two-transaction cycles, and they
//! need only each key's version order:
//!
//! * `L →rw E`: `L` read a list of `k` that `E`'s element follows — a read
//!   shorter than what transactions completed before it began had made the
//!   list (a stale read, Elle's `G-single-item-realtime`);
//! * `L →ww E`: `L`'s element precedes `E`'s in `k`'s order — a later read
//!   then shows `L`'s element inside the collected prefix
//!   (`incompatible-order`, as the whole history would show it);
//! * `L →wr E`: `E` read `L`'s element — never collected: a transaction is
//!   collected only when every element it read has a known appender.
//!
//! So for each key the collector keeps the *collected prefix* of its version
//! order (the elements collected transactions appended, in the order reads
//! showed them) and the *pending* elements (appended by collected
//! transactions, not yet placed by any read). Every later read of the key —
//! by a transaction invoked after each of those appenders completed — must
//! begin with the prefix, then show every pending element before any other:
//!
//! * a read missing a collected element: with `X` the appender of the
//!   element after the read's end, `T →rw X →ww … →ww M →rt T` is a cycle
//!   with one rw edge (`G-single-item-realtime`);
//! * a read showing another element before a pending one: somewhere in
//!   between a held or later transaction's element directly precedes a
//!   collected one, `A →ww M →rt A` (`G0-realtime`);
//! * a read that contradicts the prefix otherwise: `incompatible-order`
//!   with the read that placed the prefix; an element repeated from the
//!   prefix: `duplicate-elements`.
//!
//! Those reads are reported here and left out of the round's check. The
//! others are stripped of the prefix and the pending elements (the first
//! read that shows the pending elements places them: they join the prefix),
//! so the check sees the suffix, whose dependency edges among held
//! transactions are exactly those of the whole history.
//!
//! A transaction with an element no read placed yet is collected when
//! the key's unread elements among the candidates have appenders ordered by
//! realtime (each completed before the next was invoked), no held
//! transaction's element of the key is unread, and the key's reads agree:
//! the elements join the key's pending elements in that order, after those
//! already pending (whose appenders were collected earlier, hence completed
//! before these were invoked). Realtime forces that order, so no later read
//! can add an edge among collected transactions that realtime does not
//! already give; a read that shows them in another order is `G0-realtime`.
//! Unread elements of one key whose appenders overlap in time could be
//! placed in either order later. They are collected once their key has
//! been quiet for a while (no held transaction touches it, nothing did for
//! [`QUIET_LINES`]: a key the workload retired), in an *assumed* order: a
//! topological order of the round's dependency graph, realtime included.
//! The edges that order adds go forward in a topological order, so the
//! graph keeps its strongly connected components: no cycle closes through
//! them, and later collections add no path back into these transactions
//! (an edge from a later transaction into a collected one is a read
//! reported against the prefix). So while later reads show the assumed
//! order, the checks saw every edge of the history. A read that shows the
//! elements in an order realtime allows but that is not the assumed one
//! cannot be judged without the collected transactions: it sets
//! [`Collector::broken`], and the run's verdict is then `invalid` (from
//! anomalies found) or `unknown`, never `valid`. Keys revisited after
//! their last appends were quiet are rare in Jepsen's and `isolde gen`'s
//! workloads (they retire keys), so the wait keeps that rare; overlapping
//! unread appends of a key that is not quiet stay held, and with them
//! (realtime) every transaction invoked after they completed.
//!
//! Transactions that failed stay held (their appends must stay visible to
//! the aborted-read and dirty-update checks), and an `:info` transaction,
//! which may take effect at any later point, holds `b` at its invocation:
//! collection waits while one is in flight, and the status line says so.
//!
//! ## What it costs
//! Per key in memory, the collected prefix, delta-coded ([`super::packed`]:
//! about a byte per element when the workload appends increasing values,
//! plus a sorted copy for the duplicate check once a key has hundreds), and
//! about a hundred bytes of bookkeeping. Keys the workload retired are
//! sealed (`seal` module, [`super::spill::Sealing`]): their state goes to a spill file ([`super::spill`])
//! and they leave the key table, so what stays in memory per retired key
//! is an 8-byte index entry. The held transactions are those of the last
//! few rounds. Values must be integers (they are, in list-append
//! histories from Jepsen and `isolde gen`); otherwise nothing is collected.

use rustc_hash::FxHashMap;

use super::packed::Packed;
use super::spill::{self, Spill};
use crate::anomaly::Case;
use crate::history::{History, KeyId, Mop, MopFn, MopValue, OpId, OpType, NONE};

mod seal;

/// A key's collected prefix.
#[derive(Default, Debug)]
struct Prefix {
    /// The elements, in version order (delta-coded: a key the workload
    /// still uses keeps its prefix in memory).
    elems: Packed,
    /// Elements collected transactions appended that no read placed yet,
    /// in the order later reads must show them (realtime's where it orders
    /// their appenders, else the assumed one, see [`Collector::collect`]).
    pending: Vec<i64>,
    /// Per pending element, its appender's invocation and completion lines.
    times: Vec<(u32, u32)>,
    /// The latest line on which one of their appenders completed.
    line: u32,
    /// The line by which the state was read back from the spill store,
    /// when it was (a key read again is not sealed again at once; not
    /// stored).
    unsealed_at: u32,
}

/// What the collector holds between rounds.
#[derive(Default)]
pub struct Collector {
    prefixes: FxHashMap<KeyId, Prefix>,
    /// Transactions collected so far.
    pub collected: u64,
    /// Elements collected so far in an assumed order (their appenders
    /// overlapped in time and no read had shown them).
    pub assumed: u64,
    /// Why the last collection stopped early, when it did.
    pub held_back: Option<String>,
    /// What holds the oldest transaction the last collection kept (the
    /// status line shows it when the window grows).
    pub holder: Option<String>,
    /// Set when a read showed collected appends in an order other than the
    /// one assumed when they were collected (the run's verdict can then be
    /// `valid` no more, only `invalid` or `unknown`): why.
    pub broken: Option<String>,
    /// Lines a key must have been quiet for before unread appends of it
    /// whose appenders overlap are collected in an assumed order, and
    /// before its state is sealed (`seal` module, [`super::spill::Sealing`]).
    quiet_lines: u32,
    /// Where sealed keys' states go.
    spill: Spill,
    /// Keys of the history below this id were looked up in the spill
    /// store already (a key interned later may be a sealed one).
    known_keys: u32,
    /// Names of sealed keys whose state could not be read back: their
    /// reads are not checked (and [`Collector::broken`] says so).
    lost: rustc_hash::FxHashSet<Vec<u8>>,
    /// Keys sealed so far, and keys taken back from the store.
    pub sealed: u64,
    /// Sealed keys an op mentioned again (their state was read back).
    pub unsealed: u64,
    /// Why keys are no longer sealed, once the store failed.
    pub spill_failed: Option<String>,
}

/// Unread appends whose appenders overlap in time are collected in an
/// assumed order only once nothing touched their key for this many lines
/// (by default: a key the workload has retired, as Elle's generator
/// retires keys): a later read that shows another order makes the verdict
/// `unknown`, so the wait keeps that rare.
pub const QUIET_LINES: u32 = 2_000;

/// A round's history as the checks see it ([`Collector::apply`]).
pub struct Window {
    /// The history to check: reads stripped of the collected prefixes.
    pub check: History,
    /// Reads that contradict a collected prefix.
    pub cases: Vec<(String, Case)>,
    /// Per key, the prefix stripped from its reads.
    stripped: FxHashMap<KeyId, Vec<i64>>,
    /// The key reads set aside were moved to, once one was.
    aside: Option<KeyId>,
    /// Registers ([`super::fenced`]): per key, the collected last version
    /// whose reads the checked history shows as reads of the initial state.
    rewritten: FxHashMap<KeyId, i64>,
    /// Registers: transactions (completion ops) the check assumes follow
    /// collected ones on these keys ([`super::cut`]).
    flagged: FxHashMap<OpId, Vec<KeyId>>,
}

impl Window {
    /// A window checking `check` as it is.
    pub(super) fn new(check: History) -> Window {
        Window {
            check,
            cases: Vec::new(),
            stripped: FxHashMap::default(),
            aside: None,
            rewritten: FxHashMap::default(),
            flagged: FxHashMap::default(),
        }
    }

    /// Records that the check assumes transaction `op` follows collected
    /// ones on `keys`.
    pub(super) fn flag(&mut self, op: OpId, keys: Vec<KeyId>) {
        self.flagged.insert(op, keys);
    }

    /// Removes from `anomalies` the cases whose witness relies on a
    /// flagged transaction following collected ones on a flagged key (an
    /// assumption, see [`super::cut`]), and says why when it removed one:
    /// such a case may not be an anomaly of the whole history.
    pub fn set_aside(&self, anomalies: &mut crate::anomaly::Anomalies) -> Option<String> {
        if self.flagged.is_empty() {
            return None;
        }
        let mut why = None;
        for (name, cases) in anomalies.iter_mut() {
            let before = cases.len();
            cases.retain(|c| !self.relies_on_flags(c));
            if cases.len() < before && why.is_none() {
                why = Some(format!(
                    "a {name} found among transactions that --follow assumed to follow collected ones \
                     (no fence, realtime order or read ordered them) may not be an anomaly of the whole history: check the \
                     history in one piece"
                ));
            }
        }
        anomalies.retain(|_, cases| !cases.is_empty());
        why
    }

    /// Whether a read of `key` that an anomaly quotes as `value` (restored
    /// or not) is a read of a collected version: the window shows it as a
    /// read of the initial state ([`super::plain`]).
    pub fn reads_collected(&self, key: KeyId, value: Option<i64>) -> bool {
        self.rewritten.get(&key).is_some_and(|&v| value.is_none_or(|x| x == v))
    }

    /// Whether the check assumes some transaction follows collected ones.
    pub fn has_flags(&self) -> bool {
        !self.flagged.is_empty()
    }

    /// The lines of the flagged transactions that the cases
    /// [`Self::set_aside`] would leave out rely on.
    pub fn flags_relied_on(&self, anomalies: &crate::anomaly::Anomalies) -> Vec<u32> {
        let relied = std::cell::RefCell::new(Vec::new());
        for cases in anomalies.values() {
            for c in cases {
                self.relies_on_flags_with(c, &|op| relied.borrow_mut().push(op));
            }
        }
        let mut lines: Vec<u32> = relied.into_inner().into_iter().map(|op| self.check.ops[op as usize].line).collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    /// Whether a step of `case` on a key relates a transaction flagged on
    /// that key, or (for a case without steps) it names a flagged one.
    fn relies_on_flags(&self, case: &Case) -> bool {
        self.relies_on_flags_with(case, &|_| {})
    }

    /// [`Self::relies_on_flags`], telling `seen` each flagged op relied on.
    fn relies_on_flags_with(&self, case: &Case, seen: &dyn Fn(OpId)) -> bool {
        use crate::anomaly::Step;
        let flagged = |op: OpId, k: KeyId| {
            let yes = self.flagged.get(&op).is_some_and(|ks| ks.contains(&k));
            if yes {
                seen(op);
            }
            yes
        };
        // Every flagged op is told (no short cut): a take-back goes to the
        // oldest round any of them needs.
        let any = |it: &mut dyn Iterator<Item = bool>| it.fold(false, |a, b| a | b);
        let pair = |a: OpId, b: OpId, k: KeyId| flagged(a, k) | flagged(b, k);
        let cycle = |c: &crate::anomaly::Cycle| {
            any(&mut c.steps.iter().enumerate().map(|(i, step)| match step {
                Step::Ww { key, .. } | Step::Wr { key, .. } | Step::Rw { key, .. } => {
                    pair(c.ops[i], c.ops[(i + 1) % c.ops.len()], *key)
                }
                _ => false,
            }))
        };
        match case {
            Case::Cycle(c) => cycle(c),
            Case::Refuted(r) => {
                let branches = any(&mut r.branches.iter().map(|b| {
                    cycle(&b.cycle)
                        | any(&mut b.assume.iter().map(|o| pair(o.first.0, o.second.0, o.key)))
                        | any(&mut b.reads.iter().map(|rf| pair(rf.reader, rf.writer, rf.key)))
                }));
                let derived = any(&mut r
                    .derived
                    .iter()
                    .map(|d| cycle(&d.because) | pair(d.order.first.0, d.order.second.0, d.order.key)));
                branches | derived
            }
            Case::Weak(_) => {
                let mut named = false;
                let node = crate::reports::result_map::case(&self.check, crate::anomaly::Workload::RwRegister, case);
                super::finality::walk_ops(&node, &mut |op| {
                    if self.flagged.contains_key(&op) {
                        named = true;
                        seen(op);
                    }
                });
                named
            }
            _ => false,
        }
    }

    /// A key of its own for reads the check must not see (so that they
    /// imply nothing and every micro-op keeps its position).
    pub(super) fn aside_key(&mut self) -> KeyId {
        if let Some(k) = self.aside {
            return k;
        }
        let aside = KeyId(self.check.keys.len() as u32);
        self.aside = Some(aside);
        self.check
            .keys
            .push(crate::history::Value::from(crate::history::Atom::Keyword("isolde/collected-read".into())));
        aside
    }

    /// Records that reads of `key`'s version `value` are checked as reads
    /// of the initial state.
    pub(super) fn rewrite(&mut self, key: KeyId, value: i64) {
        self.rewritten.insert(key, value);
    }

    /// Puts the stripped prefixes back into the lists that anomalies found
    /// in [`Window::check`] quote, and the collected register versions
    /// into the steps that quote them as the initial state, so that they
    /// print the reads as read.
    pub fn restore(&self, anomalies: &mut crate::anomaly::Anomalies) {
        if let Some(aside) = self.aside {
            for case in anomalies.values_mut().flatten() {
                initial_not_aside(aside, case);
            }
        }
        if !self.rewritten.is_empty() {
            for case in anomalies.values_mut().flatten() {
                restore_registers(&self.rewritten, case);
            }
        }
        if self.stripped.is_empty() {
            return;
        }
        let whole = |k: KeyId, l: &mut Vec<i64>| {
            if let Some(p) = self.stripped.get(&k) {
                l.splice(0..0, p.iter().copied());
            }
        };
        for case in anomalies.values_mut().flatten() {
            match case {
                Case::IncompatibleOrder { key, values } => values.iter_mut().for_each(|v| whole(*key, v)),
                Case::Internal { mop, expected: crate::anomaly::Expected::List { unknown_prefix: false, elems } } => {
                    let key = self.check.mops_of(self.check.op(mop.op))[mop.mop as usize].key;
                    whole(key, elems);
                }
                // A read stripped to nothing read the prefix's last element.
                Case::Cycle(c) => {
                    for step in &mut c.steps {
                        if let crate::anomaly::Step::Rw { key, value: v @ None, .. } = step {
                            *v = self.stripped.get(key).and_then(|p| p.last().copied());
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// A weak-level cycle may pass from `⊥` (the initial state) to a
/// transaction through one of its reads set aside (a read of the aside key
/// is a read of its initial state): `⊥` precedes every transaction anyway,
/// so the step is session order's `⊥ before everyone`, which names no key
/// outside the history.
fn initial_not_aside(aside: KeyId, case: &mut Case) {
    use crate::anomaly::weak::{Cause, WStep};
    if let Case::Weak(v) = case {
        if let Cause::Cycle(c) = &mut v.cause {
            for (i, step) in c.steps.iter_mut().enumerate() {
                if matches!(step, WStep::Wr { key, .. } if *key == aside) && c.txns[i].is_none() {
                    *step = WStep::So;
                }
            }
        }
    }
}

/// Puts each rewritten key's collected version back into the steps of
/// `case` that quote a read of it as a read of the initial state.
fn restore_registers(rewritten: &FxHashMap<KeyId, i64>, case: &mut Case) {
    use crate::anomaly::Step;
    let fix = |steps: &mut Vec<Step>| {
        for step in steps {
            if let Step::Rw { key, value: v @ None, .. } = step {
                *v = rewritten.get(key).copied();
            }
        }
    };
    match case {
        Case::Cycle(c) => fix(&mut c.steps),
        Case::Refuted(r) => {
            for b in &mut r.branches {
                fix(&mut b.cycle.steps);
            }
            for d in &mut r.derived {
                fix(&mut d.because.steps);
            }
        }
        _ => {}
    }
}

/// Which transaction of the history each op belongs to and how it ended.
struct Txn {
    inv: usize,
    done: usize,
    kind: OpType,
}

impl Collector {
    /// An empty collector that assumes orders after `quiet_lines` (see
    /// [`QUIET_LINES`]).
    pub fn new(quiet_lines: u32) -> Collector {
        Collector { quiet_lines, ..Collector::default() }
    }

    /// [`Collector::new`], sealing keys to a file in `dir` (`None`:
    /// [`std::env::temp_dir`]).
    pub fn with_spill_dir(quiet_lines: u32, dir: Option<&std::path::Path>) -> Collector {
        Collector { quiet_lines, spill: Spill::new(dir), ..Collector::default() }
    }

    /// Elements held in collected prefixes.
    pub fn prefix_elements(&self) -> usize {
        self.prefixes.values().map(|p| p.elems.len() + p.pending.len()).sum()
    }

    /// The history to check for `h`: each key's collected prefix (and
    /// pending elements) stripped from its reads, and the reads that do not
    /// fit it, as anomalies. Those reads are moved to a key of their own in
    /// the checked history (so that they imply nothing and every micro-op
    /// keeps its position). The first read that shows a key's pending
    /// elements places them.
    pub fn apply(&mut self, h: &History) -> Window {
        self.unseal(h);
        let mut w = Window::new(h.clone());
        if self.prefixes.is_empty() && self.lost.is_empty() {
            return w;
        }
        let lost = self.lost_keys(h);
        let aside = w.aside_key();
        let ops = std::mem::take(&mut w.check.ops);
        for (i, op) in ops.iter().enumerate() {
            for mi in op.mop_start..op.mop_start + op.mop_len {
                let m = &mut w.check.mops[mi as usize];
                if m.f == MopFn::Read && lost.contains(&m.key) {
                    *m = Mop { key: aside, value: MopValue::List { start: 0, len: 0 }, ..*m };
                    continue;
                }
                let (MopFn::Read, MopValue::List { start: s, len }, Some(p)) =
                    (m.f, m.value, self.prefixes.get_mut(&m.key))
                else {
                    continue;
                };
                let read = &h.elements[s as usize..(s + len) as usize];
                match p.fit(read, op.op_type == OpType::Ok) {
                    Ok(Fit { n, reordered }) => {
                        if reordered && op.op_type == OpType::Ok && self.broken.is_none() {
                            self.broken = Some(format!(
                                "the read on line {} shows appends to key {} in an order other than the one \
                                 assumed when --follow collected them (their appenders overlapped in time and \
                                 nothing had read them); whether that order closes a cycle through collected \
                                 transactions is not known: check the history in one piece",
                                op.line,
                                h.keys.get(m.key.0 as usize).map_or_else(|| m.key.0.to_string(), |k| k.to_string()),
                            ));
                        }
                        m.value = MopValue::List { start: s + n, len: len - n };
                        if n > 0 {
                            w.stripped.entry(m.key).or_insert_with(|| read[..n as usize].to_vec());
                        }
                    }
                    Err(name) => {
                        if op.op_type == OpType::Ok {
                            w.cases.push((
                                name.to_string(),
                                Case::CollectedPrefix {
                                    op: i as OpId,
                                    key: m.key,
                                    read: read.to_vec(),
                                    prefix: p.elems.to_vec(),
                                    pending: p.pending.clone(),
                                    line: p.line,
                                },
                            ));
                        }
                        // A failed or indeterminate transaction's read says
                        // nothing here either.
                        *m = Mop { key: aside, value: MopValue::List { start: 0, len: 0 }, ..*m };
                    }
                }
            }
        }
        w.check.ops = ops;
        w
    }

    /// After a round's check of `h` (as [`Self::apply`] returned it):
    /// collects what the realtime rule allows, extending the prefixes, and
    /// returns, per op of `h`, whether it is still held.
    ///
    /// `ranks` (per op of `h`, empty when unknown) is a topological order
    /// of the components of the round's dependency graph, realtime
    /// included ([`crate::outcome::Outcome::order`]). Unread appends of a key
    /// whose appenders overlap in time are collected, once their key has
    /// been quiet for [`QUIET_LINES`], in that order. Sound: the graph with
    /// the edges of that order added has the same components as the graph
    /// without them (each added edge goes forward in a topological order),
    /// so no cycle closes through it; later collections cannot add a path
    /// back into these transactions (an edge from a later transaction into
    /// a collected one is a read reported against the prefix). So while
    /// reads show the assumed order, the history's edges are those the
    /// checks saw; a read that shows another order (one realtime allows)
    /// sets [`Collector::broken`].
    pub fn collect(&mut self, h: &History, ranks: &[u32]) -> Vec<bool> {
        let txns = transactions(h);
        let (bound, why) = open_bound(h, &txns);
        self.held_back = why;
        let appender = appenders(h, &txns);
        let longest = longest_reads(h, &txns);
        let mut order = Order::new(h, &longest, ranks, self.quiet_lines);
        let mut why: Vec<Option<Why>> = txns
            .iter()
            .map(|t| match () {
                _ if t.kind != OpType::Ok => Some(Why::NotOk),
                _ if t.done >= bound => Some(Why::Bound),
                _ if !reads_explained(h, t, &appender) => Some(Why::Unexplained),
                _ => None,
            })
            .collect();
        let mut cand: Vec<bool> = why.iter().map(Option::is_none).collect();
        let mut settled = false;
        for _ in 0..256 {
            if !self.hold_back(h, &txns, &appender, &mut order, &mut cand, &mut why) {
                settled = true;
                break;
            }
        }
        self.holder = holder(h, &txns, bound, &why);
        if !settled {
            return vec![true; h.ops.len()];
        }
        self.extend(h, &longest, &appender, &txns, &cand, &order.chosen);
        let mut keep = vec![true; h.ops.len()];
        for (t, _) in txns.iter().zip(&cand).filter(|(_, &c)| c) {
            keep[t.inv] = false;
            keep[t.done] = false;
            self.collected += 1;
        }
        keep
    }

    /// Unread elements: a candidate's element that no read placed yet
    /// (every candidate element of a key that already has pending elements
    /// counts as unread) can go only as one of its key's *pending*
    /// elements, after the prefix and the pending elements already there
    /// (its appender was invoked after theirs completed), and before every
    /// element of a transaction invoked after it completed. When the
    /// candidates' unread elements of a key have appenders ordered by
    /// realtime (each completed before the next was invoked), that order is
    /// forced, and no later read can add an edge among them that realtime
    /// does not already give. Otherwise they go in the order of `ranks` (see
    /// [`Collector::collect`]), once the key is quiet: no held transaction
    /// touches it and nothing did for [`QUIET_LINES`]. Either way they need
    /// no held transaction's element of the key to be unread and the key's
    /// order to be settled. The first of them is recorded in `order.virt`
    /// (so that held reads and elements directly before it hold its
    /// appender) and the order in `order.chosen`; otherwise every candidate
    /// with an unread element of the key stays held (returned).
    fn place_unread(
        &self,
        h: &History,
        txns: &[Txn],
        held: &[bool],
        order: &mut Order,
        cand: &[bool],
    ) -> Vec<Option<KeyId>> {
        let mut unread: FxHashMap<KeyId, (Vec<(usize, i64)>, bool)> = FxHashMap::default();
        for (i, t) in txns.iter().enumerate().filter(|&(i, _)| cand[i] || held[i]) {
            for (k, e) in appends(h, t).filter(|&(k, e)| self.unplaced(order, k, e)) {
                let entry = unread.entry(k).or_default();
                if cand[i] {
                    entry.0.push((i, e));
                } else {
                    entry.1 = true;
                }
            }
        }
        let mut hold = vec![None; txns.len()];
        order.virt.clear();
        order.chosen.clear();
        // Keys a held transaction touches, built when first needed.
        let mut held_keys: Option<rustc_hash::FxHashSet<KeyId>> = None;
        for (k, (mut c, held_unread)) in unread {
            if c.is_empty() {
                continue;
            }
            c.sort_by_key(|&(i, _)| txns[i].done);
            let chained = c.windows(2).all(|p| p[0].0 == p[1].0 || txns[p[0].0].done < txns[p[1].0].inv);
            let settled = !held_unread && !matches!(order.longest.get(&k), Some(None));
            let assumed = settled
                && !chained
                && order.quiet.contains(&k)
                && !held_keys.get_or_insert_with(|| held_touches(h, txns, held)).contains(&k);
            if assumed {
                // Topological order; realtime edges are in the graph, so it
                // keeps every realtime order among them.
                c.sort_by_key(|&(i, _)| (order.ranks[txns[i].done], txns[i].done));
            } else if !(settled && chained) {
                c.iter().for_each(|&(i, _)| hold[i] = Some(k));
                continue;
            }
            order.virt.insert(k, c[0].1);
            let line = |op: usize| h.ops[op].line;
            let elems = c.iter().map(|&(i, e)| (e, (line(txns[i].inv), line(txns[i].done)))).collect();
            order.chosen.insert(k, (elems, assumed));
        }
        hold
    }

    /// Whether a candidate's element `e` of `k` goes to the key's pending
    /// elements rather than along its longest read: no read placed it, or
    /// the key has pending elements already (reads that show the key's
    /// later elements without placing the pending ones do not place them).
    fn unplaced(&self, order: &Order, k: KeyId, e: i64) -> bool {
        !order.placed(k, e) || self.prefixes.get(&k).is_some_and(|p| !p.pending.is_empty())
    }

    /// One pass of the rules that keep a candidate held; whether any did.
    /// A candidate stays held when a held transaction has an edge into it
    /// (realtime: it completed before the candidate was invoked; data: its
    /// read is followed by the candidate's element, its element directly
    /// precedes the candidate's, or the candidate read its element), or
    /// when it appended an element no read placed yet while a held
    /// transaction that touches the same key was invoked before it
    /// completed (that one's read or element may still turn out to
    /// directly precede it).
    fn hold_back(
        &self,
        h: &History,
        txns: &[Txn],
        appender: &FxHashMap<(KeyId, i64), u32>,
        order: &mut Order,
        cand: &mut [bool],
        why: &mut [Option<Why>],
    ) -> bool {
        let held: Vec<bool> = (0..txns.len()).map(|i| !cand[i] && txns[i].kind != OpType::Fail).collect();
        let first_done = (0..txns.len()).filter(|&i| held[i]).map(|i| txns[i].done).min().unwrap_or(usize::MAX);
        let unplaced_hold = self.place_unread(h, txns, &held, order, cand);
        let mut unsettled: rustc_hash::FxHashSet<KeyId> = rustc_hash::FxHashSet::default();
        let mut hold: Vec<Option<Why>> = vec![None; txns.len()];
        let of = |k: KeyId, e: i64| appender.get(&(k, e)).copied().filter(|&w| w != u32::MAX).map(|w| w as usize);
        for (i, t) in txns.iter().enumerate() {
            if !held[i] {
                continue;
            }
            for m in h.mops_of(&h.ops[t.done]) {
                let next = match (m.f, m.value) {
                    (MopFn::Read, v @ MopValue::List { .. }) => order.after_len(m.key, h.list(v).len()),
                    (MopFn::Append, MopValue::Int(e)) => order.after(m.key, e),
                    _ => Next::None,
                };
                match next {
                    Next::Element(e) => {
                        if let Some(w) = of(m.key, e) {
                            hold[w] = Some(Why::Next(m.key));
                        }
                    }
                    Next::Unknown => {
                        unsettled.insert(m.key);
                    }
                    Next::None => {}
                }
            }
        }
        let mut changed = false;
        for (i, t) in txns.iter().enumerate() {
            if !cand[i] {
                continue;
            }
            if let Some((k, _)) = appends(h, t).find(|(k, _)| unsettled.contains(k)) {
                hold[i] = Some(Why::Unsettled(k));
            }
            let reads_held = h.mops_of(&h.ops[t.done]).iter().any(|m| match (m.f, m.value) {
                (MopFn::Read, v @ MopValue::List { .. }) => {
                    h.list(v).iter().any(|&e| of(m.key, e).is_some_and(|w| held[w]))
                }
                _ => false,
            });
            let because = hold[i]
                .or(unplaced_hold[i].map(Why::Unread))
                .or((t.inv > first_done).then_some(Why::After))
                .or(reads_held.then_some(Why::ReadsHeld));
            if let Some(w) = because {
                cand[i] = false;
                why[i] = Some(w);
                changed = true;
            }
        }
        changed
    }

    /// Places the collected transactions' elements: along each key's
    /// longest read while its elements are theirs (the prefix grows), the
    /// rest pending.
    fn extend(
        &mut self,
        h: &History,
        longest: &FxHashMap<KeyId, Option<(u32, u32)>>,
        appender: &FxHashMap<(KeyId, i64), u32>,
        txns: &[Txn],
        cand: &[bool],
        chosen: &FxHashMap<KeyId, (Vec<(i64, (u32, u32))>, bool)>,
    ) {
        let collected = |k: KeyId, e: i64| appender.get(&(k, e)).is_some_and(|&w| w != u32::MAX && cand[w as usize]);
        let mut placed: rustc_hash::FxHashSet<(KeyId, i64)> = rustc_hash::FxHashSet::default();
        for (&k, l) in longest {
            let Some((s, len)) = *l else { continue };
            if self.prefixes.get(&k).is_some_and(|p| !p.pending.is_empty()) {
                continue;
            }
            let elems = &h.elements[s as usize..(s + len) as usize];
            let n = elems.iter().take_while(|&&e| collected(k, e)).count();
            if n > 0 {
                let p = self.prefixes.entry(k).or_default();
                p.elems.extend(&elems[..n]);
                placed.extend(elems[..n].iter().map(|&e| (k, e)));
            }
        }
        let mut touched: FxHashMap<KeyId, u32> = FxHashMap::default();
        let mut unplaced: FxHashMap<KeyId, usize> = FxHashMap::default();
        for t in txns.iter().zip(cand).filter(|(_, &c)| c).map(|(t, _)| t) {
            let op = h.ops[t.done];
            for m in h.mops_of(&op) {
                let (MopFn::Append, MopValue::Int(e)) = (m.f, m.value) else { continue };
                let line = touched.entry(m.key).or_default();
                *line = (*line).max(op.line);
                if !placed.contains(&(m.key, e)) {
                    *unplaced.entry(m.key).or_default() += 1;
                }
            }
        }
        // Pending elements in the order `place_unread` chose: realtime's,
        // or the assumed one.
        for (k, n) in unplaced {
            let order = chosen.get(&k).map_or(&[][..], |c| c.0.as_slice());
            if chosen.get(&k).is_some_and(|c| c.1) {
                self.assumed += n as u64;
            }
            debug_assert_eq!(order.len(), n, "every unplaced element of a collected transaction was ordered");
            let p = self.prefixes.entry(k).or_default();
            for &(e, times) in order.iter().filter(|(e, _)| !placed.contains(&(k, *e))) {
                p.pending.push(e);
                p.times.push(times);
            }
        }
        // Every placed element was appended by a collected transaction: its
        // key is among these.
        for (k, line) in touched {
            if let Some(p) = self.prefixes.get_mut(&k) {
                p.line = p.line.max(line);
                p.index();
            }
        }
    }
}

impl Prefix {
    /// Whether `e` is one of the prefix's or pending elements.
    fn holds(&self, e: i64) -> bool {
        self.elems.contains(e) || self.pending.contains(&e)
    }

    /// Keeps the vectors tight after a change.
    fn index(&mut self) {
        self.pending.shrink_to_fit();
        self.times.shrink_to_fit();
    }

    /// How many leading elements of `read` the prefix and pending elements
    /// account for, or the anomaly the read shows; with `place`, a read
    /// that shows the pending elements places them (in the order it shows).
    fn fit(&mut self, read: &[i64], place: bool) -> Result<Fit, &'static str> {
        let n = self.elems.len();
        if !self.elems.is_prefix_of(read) {
            return Err(if self.elems.starts_with(read) { STALE } else { "incompatible-order" });
        }
        let rest = &read[n..];
        let k = self.pending.len();
        let mut reordered = false;
        if k > 0 {
            let shown = rest.iter().filter(|e| self.pending.contains(e)).count();
            if shown < k {
                return Err(STALE);
            }
            // Another element before a pending one: its appender, invoked
            // after theirs completed, precedes one of them.
            if rest[..k].iter().any(|e| !self.pending.contains(e)) {
                return Err("G0-realtime");
            }
            if rest[..k] != self.pending[..] {
                if self.against_realtime(&rest[..k]) {
                    return Err("G0-realtime");
                }
                reordered = true;
            }
        }
        if rest[k..].iter().any(|e| self.holds(*e)) {
            return Err("duplicate-elements");
        }
        if k > 0 && place {
            // This read places the pending elements.
            self.elems.extend(&rest[..k]);
            self.pending.clear();
            self.times.clear();
        }
        Ok(Fit { n: (n + k) as u32, reordered })
    }

    /// Whether `shown` (the pending elements, in another order) puts an
    /// element before one whose appender completed before its own was
    /// invoked.
    fn against_realtime(&self, shown: &[i64]) -> bool {
        let times = |e: &i64| self.pending.iter().position(|p| p == e).map(|i| self.times[i]);
        shown.iter().enumerate().any(|(i, a)| {
            shown[i + 1..].iter().any(|b| match (times(a), times(b)) {
                (Some((a_inv, _)), Some((_, b_done))) => b_done < a_inv,
                _ => false,
            })
        })
    }
}

/// How a read fits a key's collected prefix.
#[derive(Debug, PartialEq, Eq)]
struct Fit {
    /// Leading elements the prefix and pending elements account for.
    n: u32,
    /// Whether it shows the pending elements in an order other than the
    /// assumed one (one realtime allows).
    reordered: bool,
}

/// Keys nothing in `h` touched (no op, invocations included) for `lines`
/// lines before its last op.
fn quiet_keys(h: &History, lines: u32) -> rustc_hash::FxHashSet<KeyId> {
    let mut last: FxHashMap<KeyId, u32> = FxHashMap::default();
    for op in &h.ops {
        for m in h.mops_of(op) {
            let l = last.entry(m.key).or_default();
            *l = (*l).max(op.line);
        }
    }
    let end = h.ops.last().map_or(0, |o| o.line);
    last.into_iter().filter(|&(_, l)| end.saturating_sub(l) >= lines).map(|(k, _)| k).collect()
}

/// Keys the `held` transactions touch.
fn held_touches(h: &History, txns: &[Txn], held: &[bool]) -> rustc_hash::FxHashSet<KeyId> {
    txns.iter()
        .zip(held)
        .filter(|(_, &held)| held)
        .flat_map(|(t, _)| h.mops_of(&h.ops[t.done]).iter().map(|m| m.key))
        .collect()
}

/// Elle's name for a cycle of one rw edge, ww edges and realtime.
const STALE: &str = "G-single-item-realtime";

/// What a held transaction's read or append is directly followed by in
/// its key's version order.
enum Next {
    /// This element.
    Element(i64),
    /// Nothing known to follow.
    None,
    /// The key's order is not settled (its reads disagree).
    Unknown,
}

/// Each key's version order as far as its longest read shows it.
struct Order<'a> {
    h: &'a History,
    longest: &'a FxHashMap<KeyId, Option<(u32, u32)>>,
    pos: FxHashMap<(KeyId, i64), u32>,
    /// Per key, the one unread element of a candidate that would follow
    /// the longest read (see [`Collector::hold_back`]).
    virt: FxHashMap<KeyId, i64>,
    /// Per key, the candidates' unread elements in the order they go
    /// pending, with their appenders' invocation and completion lines, and
    /// whether that order is assumed (not forced by realtime).
    chosen: FxHashMap<KeyId, (Vec<(i64, (u32, u32))>, bool)>,
    /// The round's topological ranks per op (empty: not known).
    ranks: &'a [u32],
    /// Keys quiet long enough for an assumed order ([`quiet_keys`]; empty
    /// without ranks).
    quiet: rustc_hash::FxHashSet<KeyId>,
}

impl<'a> Order<'a> {
    fn new(
        h: &'a History,
        longest: &'a FxHashMap<KeyId, Option<(u32, u32)>>,
        ranks: &'a [u32],
        quiet_lines: u32,
    ) -> Order<'a> {
        let mut pos = FxHashMap::default();
        for (&k, l) in longest {
            if let Some((s, len)) = *l {
                for (j, &e) in h.elements[s as usize..(s + len) as usize].iter().enumerate() {
                    pos.insert((k, e), j as u32);
                }
            }
        }
        let ranks = if ranks.len() == h.ops.len() { ranks } else { &[] };
        let quiet = if ranks.is_empty() { Default::default() } else { quiet_keys(h, quiet_lines) };
        Order { h, longest, pos, virt: FxHashMap::default(), chosen: FxHashMap::default(), ranks, quiet }
    }

    fn elems(&self, k: KeyId) -> Option<&'a [i64]> {
        match self.longest.get(&k) {
            Some(Some((s, len))) => Some(&self.h.elements[*s as usize..(*s + *len) as usize]),
            _ => None,
        }
    }

    /// The element after a read of `len` elements.
    fn after_len(&self, k: KeyId, len: usize) -> Next {
        if matches!(self.longest.get(&k), Some(None)) {
            return Next::Unknown;
        }
        let elems = self.elems(k).unwrap_or(&[]);
        match elems.get(len) {
            Some(&e) => Next::Element(e),
            None if len == elems.len() => self.virt.get(&k).map_or(Next::None, |&e| Next::Element(e)),
            None => Next::None,
        }
    }

    /// The element after `e`.
    fn after(&self, k: KeyId, e: i64) -> Next {
        if matches!(self.longest.get(&k), Some(None)) {
            return Next::Unknown;
        }
        match self.pos.get(&(k, e)) {
            Some(&j) => self.after_len(k, j as usize + 1),
            None => Next::None,
        }
    }

    /// Whether a read placed `e`.
    fn placed(&self, k: KeyId, e: i64) -> bool {
        self.pos.contains_key(&(k, e))
    }
}

/// The (key, element) appends of a transaction.
fn appends<'h>(h: &'h History, t: &Txn) -> impl Iterator<Item = (KeyId, i64)> + 'h {
    h.mops_of(&h.ops[t.done]).iter().filter_map(|m| match (m.f, m.value) {
        (MopFn::Append, MopValue::Int(e)) => Some((m.key, e)),
        _ => None,
    })
}

/// Each completed transaction: its invocation and completion positions
/// (a completion without an invocation is its own).
fn transactions(h: &History) -> Vec<Txn> {
    h.ops
        .iter()
        .enumerate()
        .filter(|(_, o)| !o.is_invoke())
        .map(|(i, o)| Txn { inv: if o.pair == NONE { i } else { o.pair as usize }, done: i, kind: o.op_type })
        .collect()
}

/// The first position no collected transaction may reach: the earliest
/// invocation still open or indeterminate, with the reason when it is one.
fn open_bound(h: &History, txns: &[Txn]) -> (usize, Option<String>) {
    let mut bound = h.ops.len();
    let mut why = None;
    for (i, o) in h.ops.iter().enumerate() {
        if o.is_invoke() && o.pair == NONE && i < bound {
            bound = i;
            why = None;
        }
    }
    for t in txns.iter().filter(|t| t.kind == OpType::Info) {
        if t.inv < bound {
            bound = t.inv;
            why = Some(format!(
                "collection held back by the :info transaction at line {} (it may take effect at any later point)",
                h.ops[t.done].line
            ));
        }
    }
    (bound, why)
}

/// Why a transaction was not collected (see [`Collector::collect`]).
#[derive(Clone, Copy, Debug)]
enum Why {
    /// Failed or `:info`.
    NotOk,
    /// Completed after the bound: an open or `:info` transaction was
    /// invoked before.
    Bound,
    /// It read an element no completed transaction appended (yet).
    Unexplained,
    /// A held transaction's read or append of the key ends just before its
    /// element.
    Next(KeyId),
    /// The key's order past the collected prefix is not settled.
    Unsettled(KeyId),
    /// Its append to the key is unread and overlaps another in time.
    Unread(KeyId),
    /// Invoked after a held transaction completed.
    After,
    /// It read an element a held transaction appended.
    ReadsHeld,
}

/// What holds the window's oldest transaction after a collection: the
/// held transaction that completed first, or the open (or `:info`) one
/// the bound stops at.
fn holder(h: &History, txns: &[Txn], bound: usize, why: &[Option<Why>]) -> Option<String> {
    let oldest = |fail: bool| {
        (0..txns.len())
            .filter(|&i| why[i].is_some() && (txns[i].kind == OpType::Fail) == fail)
            .min_by_key(|&i| txns[i].done)
    };
    let Some(first) = oldest(false) else {
        // Only failed transactions are held.
        let op = &h.ops[txns[oldest(true)?].done];
        return Some(format!(
            "held by process {}'s failed transaction on line {} (failed appends stay visible to the aborted-read \
             checks)",
            op.process, op.line
        ));
    };
    let t = &txns[first];
    let op = &h.ops[t.done];
    let who = format!("held by process {}'s transaction on line {}", op.process, op.line);
    let key = |k: KeyId| h.key(k).to_string();
    Some(match why[first]? {
        Why::NotOk | Why::Bound if bound < h.ops.len() => {
            let b = &h.ops[bound];
            if b.is_invoke() && b.pair == NONE {
                format!("held by process {}'s open transaction, invoked on line {}", b.process, b.line)
            } else {
                format!("held by process {}'s :info transaction (line {}), which may take effect at any later point", b.process, b.line)
            }
        }
        Why::NotOk | Why::Bound => who,
        Why::Unexplained => format!("{who}, which read an element no completed transaction has appended yet"),
        Why::Next(k) | Why::Unsettled(k) => format!("{who}: the order of key {} after it is not known yet", key(k)),
        Why::Unread(k) => format!(
            "{who}: its append to key {} is unread and overlaps another (it waits for a read, or for the key to go quiet)",
            key(k)
        ),
        Why::After => format!("{who}, invoked after a held transaction completed"),
        Why::ReadsHeld => format!("{who}, which read an element a held transaction appended"),
    })
}

/// (key, element) → the transaction (index into `txns`) that appended it,
/// or `u32::MAX` when a transaction that is not `:ok` did, or several did.
fn appenders(h: &History, txns: &[Txn]) -> FxHashMap<(KeyId, i64), u32> {
    let mut map: FxHashMap<(KeyId, i64), u32> = FxHashMap::default();
    for (ti, t) in txns.iter().enumerate() {
        let op = &h.ops[t.done];
        for m in h.mops_of(op) {
            if let (MopFn::Append, MopValue::Int(e)) = (m.f, m.value) {
                let who = if t.kind == OpType::Ok { ti as u32 } else { u32::MAX };
                map.entry((m.key, e)).and_modify(|w| *w = u32::MAX).or_insert(who);
            }
        }
    }
    // Appends of open transactions: not ok (yet).
    for o in h.ops.iter().filter(|o| o.is_invoke() && o.pair == NONE) {
        for m in h.mops_of(o) {
            if let (MopFn::Append, MopValue::Int(e)) = (m.f, m.value) {
                map.insert((m.key, e), u32::MAX);
            }
        }
    }
    map
}

/// Per key, the longest read among `:ok` and `:info` completions (its
/// position in the element arena), or `None` when the key's reads are not
/// all prefixes of it (Elle reports those; the prefix is not extended).
fn longest_reads(h: &History, txns: &[Txn]) -> FxHashMap<KeyId, Option<(u32, u32)>> {
    let mut best: FxHashMap<KeyId, Option<(u32, u32)>> = FxHashMap::default();
    let reads = || {
        txns.iter().filter(|t| matches!(t.kind, OpType::Ok | OpType::Info)).flat_map(|t| {
            h.mops_of(&h.ops[t.done]).iter().filter_map(|m| match (m.f, m.value) {
                (MopFn::Read, MopValue::List { start, len }) => Some((m.key, start, len)),
                _ => None,
            })
        })
    };
    for (k, s, l) in reads() {
        let e = best.entry(k).or_insert(Some((s, l)));
        if let Some((_, bl)) = e {
            if l > *bl {
                *e = Some((s, l));
            }
        }
    }
    for (k, s, l) in reads() {
        if let Some(Some((bs, _))) = best.get(&k) {
            let (bs, s) = (*bs as usize, s as usize);
            if h.elements[s..s + l as usize] != h.elements[bs..bs + l as usize] {
                best.insert(k, None);
            }
        }
    }
    best
}

/// Whether every element `t` read has an `:ok` appender or lies in a
/// collected prefix (its reads were stripped of the prefix already).
fn reads_explained(h: &History, t: &Txn, appender: &FxHashMap<(KeyId, i64), u32>) -> bool {
    h.mops_of(&h.ops[t.done]).iter().all(|m| match (m.f, m.value) {
        (MopFn::Read, v @ MopValue::List { .. }) => {
            h.list(v).iter().all(|&e| appender.get(&(m.key, e)).is_some_and(|&w| w != u32::MAX))
        }
        _ => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefix whose pending elements' appenders ran one after another
    /// (each invoked after the previous one completed).
    fn prefix(elems: &[i64], pending: &[i64]) -> Prefix {
        let times = (0..pending.len() as u32).map(|i| (2 * i, 2 * i + 1)).collect();
        let mut p = Prefix { elems: Packed::from_slice(elems), pending: pending.to_vec(), times, ..Prefix::default() };
        p.index();
        p
    }

    fn fits(n: u32) -> Result<Fit, &'static str> {
        Ok(Fit { n, reordered: false })
    }

    #[test]
    fn reads_fit_or_name_their_anomaly() {
        let mut p = prefix(&[1, 2, 3], &[]);
        assert_eq!(p.fit(&[1, 2, 3], true), fits(3));
        assert_eq!(p.fit(&[1, 2, 3, 7, 8], true), fits(3));
        assert_eq!(p.fit(&[1, 2], true), Err(STALE));
        assert_eq!(p.fit(&[], true), Err(STALE));
        assert_eq!(p.fit(&[1, 3, 2], true), Err("incompatible-order"));
        assert_eq!(p.fit(&[1, 2, 3, 9, 2], true), Err("duplicate-elements"));
    }

    #[test]
    fn pending_elements_come_first_and_are_placed_once() {
        // 5's appender completed before 4's was invoked.
        let mut p = prefix(&[1], &[5, 4]);
        assert_eq!(p.fit(&[1, 4], true), Err(STALE));
        assert_eq!(p.fit(&[1, 5], true), Err(STALE));
        assert_eq!(p.fit(&[1, 9, 5, 4], true), Err("G0-realtime"));
        assert_eq!(p.fit(&[1, 4, 5], true), Err("G0-realtime"));
        // A failed transaction's read places nothing.
        assert_eq!(p.fit(&[1, 5, 4, 9], false), fits(3));
        assert_eq!(p.pending, vec![5, 4]);
        assert_eq!(p.fit(&[1, 5, 4, 9], true), fits(3));
        assert_eq!((p.elems.to_vec(), p.pending.len()), (vec![1, 5, 4], 0));
        assert_eq!(p.fit(&[1, 4, 5], true), Err("incompatible-order"));
    }

    #[test]
    fn pending_elements_of_overlapping_appenders_may_show_in_another_order() {
        // 5's and 4's appenders overlapped: 5 then 4 was assumed; 6's
        // appender was invoked after both completed.
        let mut p = prefix(&[1], &[5, 4, 6]);
        p.times = vec![(0, 3), (1, 2), (4, 5)];
        assert_eq!(p.fit(&[1, 5, 4, 6], false), fits(4));
        assert_eq!(p.fit(&[1, 6, 4, 5], false), Err("G0-realtime"));
        assert_eq!(p.fit(&[1, 4, 6, 5], false), Err("G0-realtime"));
        assert_eq!(p.fit(&[1, 4, 5], false), Err(STALE));
        assert_eq!(p.fit(&[1, 4, 5, 6, 7], true), Ok(Fit { n: 4, reordered: true }));
        assert_eq!((p.elems.to_vec(), p.pending.len(), p.times.len()), (vec![1, 4, 5, 6], 0, 0));
    }

    #[test]
    fn long_prefixes_are_held_packed() {
        let elems: Vec<i64> = (1..=200).collect();
        let mut p = prefix(&elems, &[1000]);
        assert_eq!(p.elems.heap_bytes(), 200);
        assert!(p.holds(1000) && p.holds(1) && p.holds(200) && !p.holds(201));
        let read: Vec<i64> = (1..=200).chain([1000, 2000]).collect();
        assert_eq!(p.fit(&read, true), fits(201));
        assert_eq!(p.fit(&read[..150], true), Err(STALE));
        assert_eq!(p.fit(&[&read[..], &[7]].concat(), true), Err("duplicate-elements"));
    }
}
