//! Taking recent rounds back: when a read cannot be judged against what
//! the last rounds collected, their members go back into the window and
//! the collector's state goes back to what it was before them, so that the
//! next check sees those transactions whole.
//!
//! ## The cases
//! A round collects the prefix `P` of an execution `E` of its window and
//! keeps, per key, `E`'s last version. Two kinds of later reads show that
//! `E` was the wrong choice and cannot be explained from what is kept:
//!
//! * a transaction `T` still in the window, *flagged* on a key `k` (it
//!   conflicts with a member `M` that no known edge or fence orders before
//!   it, so `E` put `M` first only by choice), turns out to precede `M`: a
//!   later read of `M`'s version of `k` closes a cycle through `T`, which
//!   the window's check can only set aside (`isolde gen --txns 40000
//!   --seed 176` in rounds of 1,000, at `strong-session-serializable`;
//!   `--seed 9`, where `T` wrote 32 over the collected 31 that a later
//!   transaction read, and the 10M `strong-session-snapshot-isolation` run
//!   at 7.65M, before the exact check's replay changed in the thirteenth
//!   session);
//! * a read of a version collected in an assumed order that neither a
//!   [`super::flip`] nor a question to a kept round ([`super::resolve`])
//!   explains: the round's last version was read since by a transaction
//!   still held (CobraLogs' `twitter` at line 170,957), or the execution
//!   that explains the read puts a held transaction inside the round.
//!
//! Both need an execution that interleaves transactions still held with
//! collected ones.
//!
//! ## Taking rounds back
//! Each kept round records, when it collects, what it changes: the state
//! of every key its members wrote as it was before (its
//! [`super::Front`], or none), the fence positions, the flags it put on
//! staying transactions and those it removed with its members, and the
//! overwritten-unread records it added. Its members are kept with their
//! invocations and extra fields ([`super::resolve::Kept`]). Taking back
//! rounds `r..=n` (the newest round and every one since `r`, each kept
//! with its record, and no round since `r` collected without being kept)
//! restores those records newest first, so that each key ends with the
//! state before the oldest round that changed it, and puts the members'
//! ops back among the held ops by line. Keys sealed since are read back
//! first, and their state from the store is replaced.
//!
//! A key whose state before the rounds cannot be restored (a read flipped
//! its assumed order since, and its record holds only differences) is
//! *lost*, as a key whose sealed state cannot be read back is: every later
//! window sets its micro-ops aside, so checks see fewer edges and never a
//! wrong one, and the run's verdict can be `valid` no more. Before
//! (2026-12-07), the key kept its newer state: a read of the version a
//! taken-back writer wrote was still checked as a read of the initial
//! state, before that writer, and a `strong-session-snapshot-isolation`
//! run (`isolde gen rw-register --txns 200000 --fences 20 --seed 110
//! --level snapshot-isolation`) reported a `G-single-item` the batch check
//! does not find. Setting a key's micro-ops aside makes each a read of
//! the initial state of a key nothing writes; a write set aside as a
//! write of nil (as a lost sealed key's were) ordered its writer after
//! every read set aside, and the same run then closed a false cycle
//! through them.
//!
//! The collector is then exactly as it was before round `r`, but for what
//! only makes later judgments more careful (a key's last version marked
//! read) and for the values of failed transactions collected since (a read
//! of one is an aborted read whatever else happened), and the window holds
//! every transaction read since round `r` began. Its check is the one
//! round `r` would have run with the later input: every cycle and every
//! execution of those transactions is seen, without flags or assumed orders
//! between them. So a take-back never makes a verdict less sound; it only
//! replaces `unknown` by the verdict of a larger check. The check that
//! follows collects again by its own execution (which explains the read
//! that forced the take-back, since the reader is in the window).
//!
//! Nothing here depends on what read fences order, so rounds are kept for
//! take-backs at `causal-cerone` too, where questions are off.
//!
//! ## Bounds
//! The records cost memory (a copy of each written key's state per round),
//! so only the newest [`REVERT_TXNS`] collected transactions' rounds keep
//! them; a read that needs an older round is left `unknown` as before. A
//! round takes back at most [`REVERTS_PER_ROUND`] times.
//!
//! Written by hand: specific to this collector.

use rustc_hash::FxHashMap;

use super::super::assemble::Assembler;
use super::resolve::{Unresolved, REVERT_TXNS};
use super::Collector;
use crate::history::{History, KeyId, Mop, MopValue, Value};

/// The most take-backs in one round (each takes rounds back into the
/// window, so a round that needed more is left as it was).
pub(super) const REVERTS_PER_ROUND: u8 = 4;

impl Collector {
    /// Asks, while judging a read, that rounds from `round` on be taken
    /// back before the window is checked; why not when they cannot be.
    pub(super) fn want_revert(&mut self, round: u32) -> Result<(), String> {
        // Once the verdict is settled (`invalid`, or not `valid`), a larger
        // check would not change it.
        if self.invalid || self.broken.is_some() {
            return Err("the verdict is settled".into());
        }
        if self.revert_budget == 0 {
            return Err(format!("this round took rounds back {REVERTS_PER_ROUND} times already"));
        }
        if round <= self.unkept_round {
            return Err(format!("round {} since collected without being kept", self.unkept_round));
        }
        if !self.kept.revertible(round, self.unkept_round) {
            return Err(format!(
                "round {round} is older than the last {REVERT_TXNS} collected transactions, whose rounds can be \
                 taken back ({} rounds collected so far)",
                self.rounds
            ));
        }
        self.revert_to = Some(self.revert_to.map_or(round, |r| r.min(round)));
        Ok(())
    }

    /// Starts a round: its take-backs are counted afresh.
    pub fn new_round(&mut self) {
        self.revert_budget = REVERTS_PER_ROUND;
    }

    /// A read (micro-op `m` of the `:ok` transaction completed on `line`)
    /// of a collected version the window cannot judge: a version collected
    /// in an `assumed` order that neither a flip nor a question explains
    /// (`unresolved` says why), or one read by a transaction `flagged` on
    /// the key. Asks for the rounds it needs to be taken back (the read is
    /// judged again then), or says why the verdict can no longer be
    /// `valid`.
    pub(super) fn unexplained(
        &mut self,
        h: &History,
        line: u32,
        m: Mop,
        assumed: bool,
        flagged: bool,
        unresolved: Option<Unresolved>,
    ) {
        let read = match m.value {
            MopValue::Int(v) => Some(v),
            _ => None,
        };
        let name = h.key(m.key);
        let wrote = read.filter(|_| assumed).and_then(|v| self.kept.wrote(name, v));
        let flag = if flagged { self.flag_round(line) } else { Some(u32::MAX) };
        let target = flag.map(|f| f.min(wrote.unwrap_or(u32::MAX))).filter(|&r| r != u32::MAX);
        let refused = match target {
            Some(r) => match self.want_revert(r) {
                Ok(()) => return,
                Err(no) => no,
            },
            None if flagged => "no kept round flagged the reader".to_string(),
            None => "no kept round wrote the version".to_string(),
        };
        let why = unresolved.map_or_else(
            || "it was read by a transaction assumed to follow a collected writer".to_string(),
            |why| why.to_string(),
        );
        self.broken = Some(format!(
            "the read on line {line} shows a version of key {name} that --follow collected as overwritten in an \
             assumed order (no path ordered its writer before the last one, or before this transaction), and \
             {why}; the rounds it needs could not be taken back into the window ({refused}); whether the history \
             explains it is not known: check the history in one piece"
        ));
    }

    /// The oldest kept round that flagged the transaction completed on
    /// `line`, when a flag of it came from one.
    pub(super) fn flag_round(&self, line: u32) -> Option<u32> {
        self.kept.flag_round(line)
    }

    /// Whether a take-back was asked for ([`Self::want_revert`]) and done:
    /// the window must then be looked at again.
    pub fn revert_pending(&mut self, asm: &mut Assembler) -> bool {
        let Some(r) = self.revert_to.take() else { return false };
        if self.revert(r, asm) {
            return true;
        }
        self.unserved(r);
        false
    }

    /// A take-back asked for was not done (the reads that asked were left
    /// out of the window's check): the verdict can be `valid` no more.
    pub fn unserved_revert(&mut self) {
        if let Some(r) = self.revert_to.take() {
            self.unserved(r);
        }
    }

    fn unserved(&mut self, round: u32) {
        self.broken.get_or_insert_with(|| {
            format!(
                "a read needed collecting round {round} checked again with the transactions still held, and it \
                 could not be taken back; whether the history explains the read is not known: check the history \
                 in one piece"
            )
        });
    }

    /// Takes back the rounds that flagged the transactions completed on
    /// `lines` (a check found an anomaly relating them on a flagged key).
    /// `false` when one of them was flagged by no round that can be taken
    /// back.
    pub fn revert_for_flags(&mut self, lines: &[u32], asm: &mut Assembler) -> bool {
        let mut oldest = u32::MAX;
        for &line in lines {
            match self.flag_round(line) {
                Some(r) => oldest = oldest.min(r),
                None => return false,
            }
        }
        oldest != u32::MAX && self.want_revert(oldest).is_ok() && self.revert_pending(asm)
    }

    /// Takes rounds `round..` back (module docs).
    fn revert(&mut self, round: u32, asm: &mut Assembler) -> bool {
        if self.revert_budget == 0 {
            return false;
        }
        let Some(back) = self.kept.take_back(round, self.unkept_round) else { return false };
        self.revert_budget -= 1;
        for r in &back {
            let (keys, ops) = r.ops_back();
            self.collected -= r.members() as u64;
            self.reverted_txns += r.members() as u64;
            asm.insert_ops(keys, ops);
        }
        let line = u32::try_from(asm.line()).unwrap_or(u32::MAX);
        self.unseal_keys(asm.keys().0, line);
        let ids: FxHashMap<&Value, KeyId> =
            asm.keys().0.iter().enumerate().map(|(i, name)| (name, KeyId(i as u32))).collect();
        let id = |name: &Value| ids.get(name).copied();
        for r in back.iter().rev() {
            let Some(b) = r.before() else { continue };
            for (i, &(ref name, at)) in b.fronts.iter().enumerate() {
                let Some(k) = id(name) else { continue };
                match at.map(|at| b.state(i, at, self.fronts.get(&k))) {
                    Some(Ok(f)) => {
                        self.fronts.insert(k, f);
                    }
                    Some(Err(why)) => {
                        // Never guessed: the verdict can be `valid` no more,
                        // and the key leaves every later check.
                        self.broken.get_or_insert_with(|| {
                            format!("the state of key {name} before a round taken back could not be restored: {why}")
                        });
                        self.lose(name);
                    }
                    None => {
                        self.fronts.remove(&k);
                    }
                }
            }
            for (line, name) in &b.flags_added {
                let Some(k) = id(name) else { continue };
                if let Some(keys) = self.flagged.get_mut(line) {
                    keys.retain(|&x| x != k);
                    if keys.is_empty() {
                        self.flagged.remove(line);
                    }
                }
            }
            for (line, names) in &b.flags_removed {
                let e = self.flagged.entry(*line).or_default();
                e.extend(names.iter().filter_map(id));
                e.sort_unstable();
                e.dedup();
            }
            self.fence_pos = b.fence_pos;
            self.last_fence = b.last_fence.clone();
        }
        self.reverts += 1;
        true
    }
}
