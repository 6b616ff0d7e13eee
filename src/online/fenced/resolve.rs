//! Re-solving a recent round: deciding an assumed write order the other way
//! when a later read shows it and no [`super::flip`] was filed for it.
//!
//! ## The case
//! A round collects its prefix `P` of an execution `E` and keeps, per key,
//! only `E`'s last version. Where two writers of a key `x` in `P` were
//! ordered by `E` alone (`W_a` first, `W_L` last, nothing had read either),
//! a later read of `a` by a transaction that follows both needs another
//! execution of `P`, one that ends with `a`. [`super::flip`] looks for one
//! while the round still holds its window, by replaying a short range of
//! `E` greedily; it misses executions that move a transaction past other
//! orders `E` chose on other keys (`W_a` also wrote a key `y` that `E`
//! placed before another writer's version of `y`, which a transaction
//! after the range read). On a 2M-transaction `isolde gen` stream, every
//! read that ended the run `unknown` was of that kind, and the exact
//! check found an execution ending with `a` for each one tried.
//!
//! ## What is kept
//! The members of the last rounds (at most [`KEPT_TXNS`] transactions in
//! all, oldest rounds dropped first), each round as a small history of its
//! own: the members' completions in `E`'s order, with their keys by name
//! (a key's id changes when it is sealed and comes back), and the versions
//! a later flip made last. Memory stays bounded by the constant.
//!
//! ## The question asked
//! When a read of an assumed version `a` of `x` finds no filed flip, the
//! newest kept round whose members wrote `a` is asked, with the exact
//! check at serializability with sessions (`si_check`), whether its
//! members have a serial execution that starts from the state before the
//! round and ends in the state the round left, except that `x`'s last
//! version is `a`. The question is a history of its own:
//!
//! * a transaction `T0` writes every version the members read that they
//!   did not write (the state before the round) and a start marker, which
//!   each process's first member reads: `T0` comes first;
//! * the members, in their sessions, as they were read;
//! * each process's last member writes an end marker of its process, and
//!   a transaction `Tend` reads them all (`Tend` comes last), `a` on `x`,
//!   and the round's last version of every other key the members wrote
//!   whose last version is *pinned* (below).
//!
//! ## Which last versions are pinned
//! A key's last version after the round matters to what came later only
//! through reads of it. So `Tend` leaves two kinds of keys free:
//!
//! * *overwritten unread*: a writer of a later round that follows the
//!   round overwrote it, and nothing read it while it was last (recorded
//!   when the later round collected that writer, from the key's
//!   [`super::Front::seen`]). Any version of the key `E'` leaves is then
//!   overwritten before anything reads it; a later read of an older one is
//!   a read of an overwritten version whatever `E'` is;
//! * *last and unseen*: the key's state is still the one the round left
//!   and nothing read it since. The answer's execution says which version
//!   it leaves last, and the key's state takes that version (the version
//!   it replaces joins the assumed ones), as a flip does, without marking
//!   it read. A key whose state is sealed to the spill store stays pinned.
//!
//! All other keys are pinned: flipped ones, and those whose last version
//! was read. Without this, a question pinned a hot key that both writers
//! wrote (the 10M-transaction `isolde gen` stream at line 2,976,673), whose
//! order in every execution ending with `a` is the other way round, and
//! found no execution although the history is valid.
//!
//! A serial execution of that history restricted to the members is a
//! serial execution `E'` of `P` (session order and reads-from are kept, so
//! the fences still order every later transaction after all of `P`) that
//! reads what `P` read from the state before the round, and leaves the
//! same state as `E` on every pinned key but `x`, where it leaves `a`. It is a
//! valid execution at snapshot isolation too (every transaction commits
//! before the next begins). The conditions under which the read may use it
//! are [`super::flip`]'s: `x`'s state is still the one the round left (its
//! last version and its writer's line are the round's) and nothing read
//! that version since. Then `E'` followed by the later rounds' executions
//! is an execution of everything collected, as for a flip; the run records
//! `a` as the round's last version of `x`, so that a later question about
//! the same round keeps it. The state before the round is the one its
//! members read: a later change of it (a flip of an earlier round) touches
//! only keys the round neither read nor wrote (any read of the earlier
//! round's last version, or a write over it, rules that flip out).
//!
//! A question is asked only while the run can still be `valid` (once one
//! read went unexplained, the verdict is `unknown` or `invalid` whatever
//! the others show), within [`RESOLVE_TIME`]; an answer other than valid,
//! a key or value written twice in the round, or a round no longer kept
//! leave the read unexplained by the round alone: the rounds from the one
//! that wrote the version on are then taken back into the window when they
//! can be ([`super::revert`]), and otherwise the run says why.
//!
//! Written by hand: specific to this collector.

use std::collections::VecDeque;
use std::time::Duration;

use rustc_hash::{FxHashMap, FxHashSet};

use super::super::cut::Txn;
use super::record::Before;
use super::Collector;
use crate::history::{Atom, History, KeyId, Mop, MopFn, MopValue, Op, OpType, Value};

/// The most member transactions the kept rounds hold together.
pub(super) const KEPT_TXNS: usize = 50_000;

/// An invocation's `mop_len` in [`KeptRound::invokes`] when its micro-ops
/// are its completion's with every read nil (not stored).
const DERIVED: u32 = u32::MAX;

/// The most collected transactions whose rounds keep their records, so
/// that they can be taken back ([`super::revert`]).
pub(super) const REVERT_TXNS: usize = KEPT_TXNS;

/// How long one question to the exact check may take.
const RESOLVE_TIME: Duration = Duration::from_secs(2);

/// One kept round.
pub(super) struct KeptRound {
    /// The collecting round's number (as in [`super::flip::Flip::round`]).
    round: u32,
    /// Its members' completions in the execution's order, keys interned
    /// afresh.
    h: History,
    /// Keys whose last version a flip changed: (value, its writer's line).
    /// A question keeps them.
    flipped: FxHashMap<KeyId, (i64, u32)>,
    /// Keys whose last version an answer changed without any read of it
    /// ([`Collector::free_fronts`]): a question may change them again.
    moved: FxHashMap<KeyId, (i64, u32)>,
    /// Per member (as in `h.ops`), its invocation, micro-ops in `h.mops`
    /// (`None`: the member had none).
    invokes: Vec<Option<Op>>,
    /// What the round changed, to take it back ([`super::revert`]); `None`
    /// once older than the newest [`REVERT_TXNS`]
    /// collected transactions.
    before: Option<Before>,
}

/// The members of the last rounds ([`KEPT_TXNS`] at most).
#[derive(Default)]
pub(super) struct Kept {
    rounds: VecDeque<KeptRound>,
    txns: usize,
    /// The lines of the kept rounds' members.
    lines: FxHashSet<u32>,
    /// Last versions of kept rounds, as (their writer's line, value), that
    /// a writer of a later round overwrote before any read of them: a
    /// question leaves them free.
    overwritten: FxHashSet<(u32, i64)>,
}

impl Kept {
    /// Keeps round `round`'s members (`members`, in the order `ranks`
    /// gives them) of window `full`, with their invocations and what the
    /// round changed (`before`), dropping the oldest rounds beyond
    /// [`KEPT_TXNS`].
    pub(super) fn keep(
        &mut self,
        round: u32,
        full: &History,
        txns: &[Txn],
        ranks: &[u32],
        members: &[bool],
        before: Before,
    ) {
        let mut order: Vec<usize> = (0..txns.len()).filter(|&t| members[t] && txns[t].done.is_some()).collect();
        if order.is_empty() {
            return;
        }
        order.sort_unstable_by_key(|&t| txns[t].done.map_or(u32::MAX, |d| ranks[d]));
        let mut h = History::default();
        h.fs = full.fs.clone();
        // Key names to their ids in `h`, while it is built.
        let mut key_ids: FxHashMap<&Value, KeyId> = FxHashMap::default();
        let mut invokes = Vec::with_capacity(order.len());
        // Copies `op` of `full` into `h` (micro-ops, extra fields).
        let mut copy = |h: &mut History, op: &Op| {
            let start = h.mops.len();
            for m in full.mops_of(op) {
                let key = *key_ids.entry(full.key(m.key)).or_insert_with(|| {
                    h.keys.push(full.key(m.key).clone());
                    KeyId(h.keys.len() as u32 - 1)
                });
                h.mops.push(Mop { key, ..*m });
            }
            let mut op = *op;
            op.mop_start = start as u32;
            op.mop_len = (h.mops.len() - start) as u32;
            op.pair = u32::MAX;
            op.extras = full.extras.get(op.extras as usize).map_or(u32::MAX, |e| {
                h.extras.push(e.clone());
                h.extras.len() as u32 - 1
            });
            op
        };
        for &t in &order {
            let Some(d) = txns[t].done else { continue };
            let op = copy(&mut h, &full.ops[d]);
            h.ops.push(op);
        }
        for &t in &order {
            let Some(d) = txns[t].done.filter(|&d| d != txns[t].inv) else {
                invokes.push(None);
                continue;
            };
            let inv = &full.ops[txns[t].inv];
            // Jepsen's invocation: its completion's micro-ops with every
            // read nil. Not copied (`ops_back` makes it again).
            let (im, dm) = (full.mops_of(inv), full.mops_of(&full.ops[d]));
            let derived = im.len() == dm.len()
                && im
                    .iter()
                    .zip(dm)
                    .all(|(i, c)| *i == if c.f == MopFn::Read { Mop { value: MopValue::Nil, ..*c } } else { *c });
            let op = if derived {
                let mut op = *inv;
                op.mop_len = DERIVED;
                op.extras = full.extras.get(op.extras as usize).map_or(u32::MAX, |e| {
                    h.extras.push(e.clone());
                    h.extras.len() as u32 - 1
                });
                op
            } else {
                copy(&mut h, inv)
            };
            invokes.push(Some(op));
        }
        self.txns += h.ops.len();
        self.lines.extend(h.ops.iter().map(|op| op.line));
        self.rounds.push_back(KeptRound {
            round,
            h,
            flipped: FxHashMap::default(),
            moved: FxHashMap::default(),
            invokes,
            before: Some(before),
        });
        // Only the newest rounds can be taken back.
        let mut newer = 0;
        for r in self.rounds.iter_mut().rev() {
            if newer > REVERT_TXNS {
                if r.before.take().is_none() {
                    break;
                }
                r.invokes = Vec::new();
            }
            newer += r.h.ops.len();
        }
        while self.txns > KEPT_TXNS {
            let Some(old) = self.rounds.pop_front() else { break };
            self.forget(&old);
        }
    }

    /// Drops what the kept set holds about round `r`, which leaves it:
    /// its members' count, lines and overwritten-unread records.
    fn forget(&mut self, r: &KeptRound) {
        self.txns -= r.h.ops.len();
        for op in &r.h.ops {
            self.lines.remove(&op.line);
            for m in r.h.mops_of(op) {
                if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                    self.overwritten.remove(&(op.line, v));
                }
            }
        }
    }

    /// Records that `value`, the last version of a key that the member
    /// completed on `line` left, was overwritten by a later round's writer
    /// that follows it, and that nothing read it while it was last.
    /// Whether it was recorded.
    pub(super) fn overwritten_unread(&mut self, line: u32, value: i64) -> bool {
        self.lines.contains(&line) && self.overwritten.insert((line, value))
    }

    /// The newest kept round that wrote `value` to the key named `name`.
    pub(super) fn wrote(&self, name: &Value, value: i64) -> Option<u32> {
        self.rounds.iter().rev().find(|r| writer(r, name, value).is_some()).map(|r| r.round)
    }

    /// Whether rounds `round..` can be taken back ([`super::revert`]):
    /// `round` is kept, every round since is kept with its record, and none
    /// since collected without being kept (`unkept`: the last that did).
    pub(super) fn revertible(&self, round: u32, unkept: u32) -> bool {
        round > unkept
            && self.rounds.iter().any(|r| r.round == round)
            && self.rounds.iter().filter(|r| r.round >= round).all(|r| r.before.is_some())
    }

    /// Removes rounds `round..` when [`Self::revertible`], oldest first.
    pub(super) fn take_back(&mut self, round: u32, unkept: u32) -> Option<Vec<KeptRound>> {
        if !self.revertible(round, unkept) {
            return None;
        }
        let at = self.rounds.iter().position(|r| r.round >= round)?;
        let back: Vec<KeptRound> = self.rounds.drain(at..).collect();
        for r in &back {
            self.forget(r);
            for lv in r.before.iter().flat_map(|b| &b.overwrote) {
                self.overwritten.remove(lv);
            }
        }
        Some(back)
    }

    /// The oldest kept round that flagged the transaction completed on
    /// `line`, when one did and its record is kept.
    pub(super) fn flag_round(&self, line: u32) -> Option<u32> {
        self.rounds
            .iter()
            .filter_map(|r| Some((r.round, r.before.as_ref()?)))
            .find(|(_, b)| b.flags_added.iter().any(|&(l, _)| l == line))
            .map(|(round, _)| round)
    }

    /// Records that a flip of round `round` made `value` (written by the
    /// transaction completed on `line`) the last version of `key`.
    pub(super) fn flipped(&mut self, round: u32, key: &Value, value: i64, line: u32) {
        if let Some(r) = self.rounds.iter_mut().find(|r| r.round == round) {
            if let Some(k) = r.key(key) {
                r.flipped.insert(k, (value, line));
            }
        }
    }
}

impl Collector {
    /// Takes the read of `x`'s assumed version `a` as deciding the order
    /// the other way when the newest kept round that wrote `a` has a
    /// serial execution ending with it (module docs); otherwise says why
    /// not.
    pub(super) fn resolve(&mut self, h: &History, x: KeyId, a: i64) -> Result<(), Unresolved> {
        // The question is asked with sessions, not realtime: at strict
        // serializability its answer could break a realtime order.
        if self.broken.is_some() || !self.read_fences || self.realtime {
            return Err(Unresolved::Off);
        }
        let name = h.key(x);
        let front = self.fronts.get(&x).ok_or(Unresolved::Off)?;
        if front.seen {
            return Err(Unresolved::Seen);
        }
        let (value, line) = (front.value, front.line);
        let (r, k, found) = self
            .kept
            .rounds
            .iter()
            .rev()
            .find_map(|r| {
                let (k, found) = writer(r, name, a)?;
                Some((r, k, found))
            })
            .ok_or(Unresolved::NotKept)?;
        let finals = r.finals().ok_or(Unresolved::Repeated)?;
        let mut free = self.free_fronts(h, r, &finals);
        free.remove(&k);
        let moved = r.ask(k, a, (value, line), &finals, &self.kept.overwritten, &free)?;
        let round = r.round;
        for &(rk, (v, l)) in &moved {
            let Some(f) = free.get(&rk).and_then(|c| self.fronts.get_mut(c)) else { continue };
            let old = std::mem::replace(&mut f.value, v);
            f.assumed.insert(old);
            f.assumed.absorb(std::mem::take(&mut f.stale));
            f.line = l;
            f.flips.clear();
        }
        if let Some(r) = self.kept.rounds.iter_mut().find(|r| r.round == round) {
            r.flipped.insert(k, (a, found));
            r.moved.extend(moved);
        }
        let front = self.fronts.get_mut(&x).expect("looked up above");
        let old = std::mem::replace(&mut front.value, a);
        front.assumed.insert(old);
        front.assumed.absorb(std::mem::take(&mut front.stale));
        front.line = found;
        front.seen = true;
        front.flips.clear();
        self.flipped_rounds.insert(round);
        self.flipped += 1;
        self.resolved += 1;
        Ok(())
    }

    /// The keys of kept round `r` whose last version is still the one the
    /// round left and that nothing has read since (by their id in `r`, with
    /// their id in the collector): a question leaves them free, and the
    /// answer says what each one's last version becomes. Keys whose state
    /// is sealed away are not among them.
    fn free_fronts(
        &self,
        h: &History,
        r: &KeptRound,
        finals: &FxHashMap<KeyId, (i64, u32)>,
    ) -> FxHashMap<KeyId, KeyId> {
        let ids: FxHashMap<&Value, KeyId> =
            h.keys.iter().enumerate().map(|(i, name)| (name, KeyId(i as u32))).collect();
        finals
            .iter()
            .filter(|(k, _)| !r.flipped.contains_key(k))
            .filter_map(|(&k, &(v, l))| {
                let c = *ids.get(&r.h.keys[k.0 as usize])?;
                let f = self.fronts.get(&c)?;
                (f.value == v && f.line == l && !f.seen).then_some((k, c))
            })
            .collect()
    }
}

/// Why a read of an assumed version was not decided by a kept round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unresolved {
    /// Questions are not asked (the run can no longer be `valid`, the
    /// level orders nothing by read fences, or realtime orders the run:
    /// the question keeps sessions, not realtime).
    Off,
    /// The key's last version was read since it became last.
    Seen,
    /// No kept round wrote the version (rounds older than the last
    /// [`KEPT_TXNS`] collected transactions are dropped).
    NotKept,
    /// The key's last version is no longer the one the round left.
    Changed,
    /// The round wrote a value twice, or read two versions of a key from
    /// before it: its reads cannot be told apart.
    Repeated,
    /// The exact check found no serial execution of the round ending with
    /// the version read (round's number).
    NoExecution(u32),
    /// The exact check did not decide within [`RESOLVE_TIME`].
    Undecided(u32),
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unresolved::Off => write!(f, "no flip of its round explains it"),
            Unresolved::Seen => write!(
                f,
                "the key's last version had been read since, by a transaction the kept round does not hold \
                 (its order against the round's writers is not the round's to change)"
            ),
            Unresolved::NotKept => write!(
                f,
                "no flip explains it and the round that wrote it is no longer kept (the last {KEPT_TXNS} \
                 collected transactions are)"
            ),
            Unresolved::Changed => write!(f, "the key's last version changed since its round"),
            Unresolved::Repeated => write!(f, "its round wrote a value twice or read two versions of a key"),
            Unresolved::NoExecution(r) => {
                write!(f, "the exact check found no execution of collecting round {r} that ends with it")
            }
            Unresolved::Undecided(r) => write!(
                f,
                "the exact check did not decide within {} s whether collecting round {r} has an execution \
                 ending with it",
                RESOLVE_TIME.as_secs()
            ),
        }
    }
}

/// The key named `name` in `r` and the line of the member that wrote `a`
/// to it last, when one did (values are written once per key).
fn writer(r: &KeptRound, name: &Value, a: i64) -> Option<(KeyId, u32)> {
    let k = r.key(name)?;
    r.h.ops.iter().find(|op| last_write(&r.h, op, k) == Some(a)).map(|op| (k, op.line))
}

/// The last value `op` wrote to `k`.
fn last_write(h: &History, op: &Op, k: KeyId) -> Option<i64> {
    h.mops_of(op).iter().rev().find_map(|m| match (m.f, m.value) {
        (MopFn::Write, MopValue::Int(v)) if m.key == k => Some(v),
        _ => None,
    })
}

impl KeptRound {
    /// How many members the round collected.
    pub(super) fn members(&self) -> usize {
        self.h.ops.len()
    }

    /// What the round changed ([`super::revert`]).
    pub(super) fn before(&self) -> Option<&Before> {
        self.before.as_ref()
    }

    /// The members' ops as they were read (invocations and completions,
    /// micro-ops keyed into the returned key table, extra fields), to put
    /// back into the window.
    pub(super) fn ops_back(&self) -> (&[Value], Vec<crate::history::OpBack>) {
        let h = &self.h;
        let extras = |op: &Op| h.extras.get(op.extras as usize).cloned();
        let nil = |m: &Mop| if m.f == MopFn::Read { Mop { value: MopValue::Nil, ..*m } } else { *m };
        let mut ops = Vec::with_capacity(2 * h.ops.len());
        for (i, op) in h.ops.iter().enumerate() {
            if let Some(Some(inv)) = self.invokes.get(i) {
                let mops = if inv.mop_len == DERIVED {
                    h.mops_of(op).iter().map(nil).collect()
                } else {
                    h.mops_of(inv).to_vec()
                };
                ops.push((*inv, mops, extras(inv)));
            }
            ops.push((*op, h.mops_of(op).to_vec(), extras(op)));
        }
        (&h.keys, ops)
    }

    /// The id in `h` of the key named `name` (looked up only when a read
    /// needs a question answered: rare, so no index is kept).
    fn key(&self, name: &Value) -> Option<KeyId> {
        self.h.keys.iter().position(|k| k == name).map(|i| KeyId(i as u32))
    }

    /// Whether `front` (value, writer's line) is still the round's last
    /// version of `x` in `finals` ([`KeptRound::finals`]) and the exact
    /// check finds a serial execution of the round that ends with `a` on
    /// `x` and the round's state on every other pinned key: `Ok` with the
    /// free keys whose last version it changes, or why not.
    fn ask(
        &self,
        x: KeyId,
        a: i64,
        front: (i64, u32),
        finals: &FxHashMap<KeyId, (i64, u32)>,
        overwritten: &FxHashSet<(u32, i64)>,
        free: &FxHashMap<KeyId, KeyId>,
    ) -> Result<Vec<(KeyId, (i64, u32))>, Unresolved> {
        if finals.get(&x) != Some(&front) {
            return Err(Unresolved::Changed);
        }
        let pinned: FxHashMap<KeyId, (i64, u32)> = finals
            .iter()
            .filter(|&(k, &(v, l))| {
                *k == x || self.flipped.contains_key(k) || !(overwritten.contains(&(l, v)) || free.contains_key(k))
            })
            .map(|(&k, &f)| (k, f))
            .collect();
        let question = self.question(x, a, &pinned).ok_or(Unresolved::Repeated)?;
        let level = crate::si_check::Level {
            semantics: crate::si_check::Semantics::Serializable,
            order: crate::si_check::OrderKind::Session,
        };
        let exact =
            crate::si_check::ExactOptions { timeout: Some(RESOLVE_TIME), keep_serial: true, ..Default::default() };
        let order = match crate::si_check::serial_order_by_replay(&question, level, &exact) {
            Ok(Some((_, order))) => order,
            _ => match crate::si_check::check_level(&question, level, &exact) {
                Ok(out) => match out.verdict {
                    crate::si_check::Verdict::Valid => out.stats.serial_order,
                    crate::si_check::Verdict::Invalid(_) => return Err(Unresolved::NoExecution(self.round)),
                    crate::si_check::Verdict::Unknown(_) => return Err(Unresolved::Undecided(self.round)),
                },
                Err(_) => return Err(Unresolved::Undecided(self.round)),
            },
        };
        self.moved(&order, finals, free).ok_or(Unresolved::Undecided(self.round))
    }

    /// The free keys ([`Collector::free_fronts`]) whose last version the
    /// serial execution `order` of a question (its completions) leaves
    /// other than `finals` says, with the version it leaves and its
    /// writer's line. `None` when the order is not a whole execution.
    fn moved(
        &self,
        order: &[crate::history::OpId],
        finals: &FxHashMap<KeyId, (i64, u32)>,
        free: &FxHashMap<KeyId, KeyId>,
    ) -> Option<Vec<(KeyId, (i64, u32))>> {
        // The question's ops: `T0`, then the members in order, then `Tend`.
        if order.len() != self.h.ops.len() + 2 {
            return None;
        }
        let mut last: FxHashMap<KeyId, (i64, u32)> = FxHashMap::default();
        for &q in order {
            let Some(op) = (q as usize).checked_sub(1).and_then(|i| self.h.ops.get(i)) else { continue };
            for m in self.h.mops_of(op) {
                if let (MopFn::Write, MopValue::Int(v), true) = (m.f, m.value, free.contains_key(&m.key)) {
                    last.insert(m.key, (v, op.line));
                }
            }
        }
        Some(last.into_iter().filter(|(k, f)| finals.get(k) != Some(f)).collect())
    }

    /// Per key the members wrote: its last version and its writer's line,
    /// flips included. `None` when a value was written twice.
    fn finals(&self) -> Option<FxHashMap<KeyId, (i64, u32)>> {
        let mut finals: FxHashMap<KeyId, (i64, u32)> = FxHashMap::default();
        let mut seen: FxHashSet<(KeyId, i64)> = FxHashSet::default();
        for op in &self.h.ops {
            for m in self.h.mops_of(op) {
                if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                    if !seen.insert((m.key, v)) {
                        return None;
                    }
                    finals.insert(m.key, (v, op.line));
                }
            }
        }
        finals.extend(self.moved.iter().map(|(&k, &f)| (k, f)));
        finals.extend(self.flipped.iter().map(|(&k, &f)| (k, f)));
        Some(finals)
    }

    /// The history whose serial executions are the round's that start
    /// from the state before it and end in its state with `a` last on `x`
    /// (module docs). `None` when the members read two versions of a key
    /// from before the round.
    fn question(&self, x: KeyId, a: i64, finals: &FxHashMap<KeyId, (i64, u32)>) -> Option<History> {
        let r = &self.h;
        let mut before: FxHashMap<KeyId, i64> = FxHashMap::default();
        let mut written: FxHashSet<(KeyId, i64)> = FxHashSet::default();
        for op in &r.ops {
            let mops = r.mops_of(op);
            for (k, v) in super::flip::external_reads_of(mops) {
                if let Some(v) = v.filter(|&v| !written.contains(&(k, v))) {
                    if *before.entry(k).or_insert(v) != v {
                        return None;
                    }
                }
            }
            written.extend(mops.iter().filter_map(|m| match (m.f, m.value) {
                (MopFn::Write, MopValue::Int(v)) => Some((m.key, v)),
                _ => None,
            }));
        }
        let mut q = History::default();
        q.keys = r.keys.clone();
        q.fs = r.fs.clone();
        let marker = |q: &mut History, name: String| {
            q.keys.push(Value::Atom(Atom::Str(format!("\u{0}isolde-{name}").into())));
            KeyId(q.keys.len() as u32 - 1)
        };
        let start = marker(&mut q, "start".into());
        let processes: FxHashSet<i64> = r.ops.iter().map(|o| o.process).collect();
        let outside = processes.iter().max().copied().unwrap_or(0).max(-1) + 1;
        let mut first: FxHashSet<i64> = FxHashSet::default();
        let last: FxHashMap<i64, usize> = r.ops.iter().enumerate().map(|(i, o)| (o.process, i)).collect();
        let mut ends = Vec::new();
        push(&mut q, outside, |q| {
            q.mops.push(Mop { f: MopFn::Write, key: start, value: MopValue::Int(1) });
            q.mops.extend(before.iter().map(|(&key, &v)| Mop { f: MopFn::Write, key, value: MopValue::Int(v) }));
        });
        for (i, op) in r.ops.iter().enumerate() {
            let end = (last[&op.process] == i).then(|| marker(&mut q, format!("end-{}", op.process)));
            ends.extend(end);
            push(&mut q, op.process, |q| {
                if first.insert(op.process) {
                    q.mops.push(Mop { f: MopFn::Read, key: start, value: MopValue::Int(1) });
                }
                q.mops.extend_from_slice(r.mops_of(op));
                if let Some(key) = end {
                    q.mops.push(Mop { f: MopFn::Write, key, value: MopValue::Int(1) });
                }
            });
        }
        push(&mut q, outside + 1, |q| {
            q.mops.extend(ends.iter().map(|&key| Mop { f: MopFn::Read, key, value: MopValue::Int(1) }));
            q.mops.push(Mop { f: MopFn::Read, key: x, value: MopValue::Int(a) });
            q.mops.extend(finals.iter().filter(|&(&k, _)| k != x).map(|(&key, &(v, _))| Mop {
                f: MopFn::Read,
                key,
                value: MopValue::Int(v),
            }));
        });
        Some(q)
    }
}

/// Appends an `:ok` completion of `process` whose micro-ops `mops` pushes.
fn push(q: &mut History, process: i64, mops: impl FnOnce(&mut History)) {
    let start = q.mops.len();
    mops(q);
    q.ops.push(Op {
        index: q.ops.len() as i64,
        time: -1,
        op_type: OpType::Ok,
        process,
        f: 0,
        mop_start: start as u32,
        mop_len: (q.mops.len() - start) as u32,
        pair: u32::MAX,
        extras: u32::MAX,
        line: 0,
        fields: 0,
    });
}
