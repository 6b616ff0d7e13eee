//! What a collecting round changed, recorded so that it can be taken back
//! ([`super::revert`]): the states of the keys its members wrote as they
//! were before it, the fence positions, and the flags it added and
//! removed. Kept with the round ([`super::resolve`]).
//!
//! ## States as differences
//! A key's ordered and assumed versions are a few ranges when its values
//! increase (Jepsen's, `isolde gen`'s), but one range per version when
//! they do not (Cobra's write ids are hashes): a hot key's state then grows
//! with the run, and a copy of it per kept round made the records grow
//! with it. So once a round has collected, a state of more than
//! [`DELTA_RANGES`] ranges keeps only what the round added to those two
//! sets and what it removed from them, with fingerprints of the sets it
//! left. A take-back restores the newer rounds first, so the key's sets
//! are then those this round left, unless something between the rounds
//! changed them (a read that [`super::flip`]s an assumed order): the
//! fingerprints tell, and then the state is not guessed (the run says it
//! could not be restored, and its verdict can be `valid` no more).
//!
//! Written by hand: specific to this collector.

use rustc_hash::FxHashMap;

use super::{Collector, Front};
use crate::history::{KeyId, Value};
use crate::online::values::Ranges;

/// The ranges (ordered and assumed versions together) past which a key's
/// state before a kept round is kept as a difference from the state the
/// round left (module docs). Increasing values keep a handful.
const DELTA_RANGES: usize = 4;

/// A large state before a round, as its difference from the state the
/// round left (the rest of the state is encoded in full, without the sets).
struct Delta {
    stale: SetDelta,
    assumed: SetDelta,
}

/// One version set before a round, as its difference from the set the
/// round left.
struct SetDelta {
    added: Ranges,
    removed: Ranges,
    /// The fingerprint of the set the round left.
    left: (u64, u64),
}

impl SetDelta {
    fn of(before: &Ranges, now: &Ranges) -> SetDelta {
        SetDelta { added: now.minus(before), removed: before.minus(now), left: now.fingerprint() }
    }

    /// The set before the round, from `now` when it is the set the round
    /// left; `None` when it is not.
    fn undo(&self, now: &Ranges) -> Option<Ranges> {
        (now.fingerprint() == self.left).then(|| {
            let mut set = now.minus(&self.added);
            set.absorb(self.removed.clone());
            set
        })
    }
}

/// What a collecting round changed, to undo it.
#[derive(Default)]
pub(super) struct Before {
    /// Per key its members wrote (by name): its state before the round, as
    /// a range of `states` (`None`: the key had none).
    pub(super) fronts: Vec<(Value, Option<(u32, u32)>)>,
    /// The states, encoded as the spill store holds them (a few bytes per
    /// key where a copy would take hundreds).
    states: Vec<u8>,
    /// The position of the last collected fence before the round.
    pub(super) fence_pos: Option<u32>,
    /// Per client, its last collected fence's position before the round.
    pub(super) last_fence: FxHashMap<i64, u32>,
    /// Flags the round put on staying transactions: (line, key).
    pub(super) flags_added: Vec<(u32, Value)>,
    /// Flags its members carried when they went: (line, keys).
    pub(super) flags_removed: Vec<(u32, Vec<Value>)>,
    /// Overwritten-unread records it added ([`super::resolve::Kept`]).
    pub(super) overwrote: Vec<(u32, i64)>,
    /// Whether the round will be kept (otherwise the keys' states are not
    /// copied).
    pub(super) recording: bool,
    /// The entries of `fronts` whose state is large, with the key's id in
    /// the round's window ([`Self::compact`]).
    large: Vec<(usize, KeyId)>,
    /// Per entry of `fronts`: the large states, as differences.
    deltas: FxHashMap<usize, Delta>,
}

impl Before {
    /// Records `front` as the state of key `name` (`key` in the round's
    /// window) before the round.
    pub(super) fn front(&mut self, key: KeyId, name: &Value, front: Option<&Front>) {
        let at = front.map(|f| {
            if f.stale.len() + f.assumed.len() > DELTA_RANGES {
                self.large.push((self.fronts.len(), key));
            }
            let start = self.states.len() as u32;
            super::seal::encode_into(Some(f), None, &mut self.states);
            (start, self.states.len() as u32 - start)
        });
        self.fronts.push((name.clone(), at));
    }

    /// Once the round has collected (`fronts`: the states it left), keeps
    /// each large state as its difference from the one the round left
    /// (module docs).
    pub(super) fn compact(&mut self, fronts: &FxHashMap<KeyId, Front>) {
        if self.large.is_empty() {
            return;
        }
        let large: FxHashMap<usize, KeyId> = std::mem::take(&mut self.large).into_iter().collect();
        // The states again: the large ones without their sets, each
        // decoded once.
        let old = std::mem::take(&mut self.states);
        for (i, entry) in self.fronts.iter_mut().enumerate() {
            let Some((start, len)) = entry.1 else { continue };
            let bytes = &old[start as usize..(start + len) as usize];
            let begin = self.states.len() as u32;
            let now = large.get(&i).and_then(|k| fronts.get(k));
            match (now, super::seal::decode(bytes)) {
                (Some(now), Some((Some(mut before), _))) => {
                    let stale = SetDelta::of(&before.stale, &now.stale);
                    let assumed = SetDelta::of(&before.assumed, &now.assumed);
                    self.deltas.insert(i, Delta { stale, assumed });
                    before.stale = Ranges::default();
                    before.assumed = Ranges::default();
                    super::seal::encode_into(Some(&before), None, &mut self.states);
                }
                _ => self.states.extend_from_slice(bytes),
            }
            entry.1 = Some((begin, self.states.len() as u32 - begin));
        }
        self.states.shrink_to_fit();
    }

    /// The state of entry `i` of `fronts` (recorded at `at`) before the
    /// round, given the key's state `now` (once the newer rounds are taken
    /// back: the state this round left); `Err` with the reason when it
    /// cannot be restored exactly.
    pub(super) fn state(&self, i: usize, at: (u32, u32), now: Option<&Front>) -> Result<Front, &'static str> {
        let mut f = self.decoded(at).ok_or("its record could not be read back")?;
        let Some(d) = self.deltas.get(&i) else { return Ok(f) };
        let now = now.ok_or("the key has no state to restore it from")?;
        match (d.stale.undo(&now.stale), d.assumed.undo(&now.assumed)) {
            (Some(stale), Some(assumed)) => {
                (f.stale, f.assumed) = (stale, assumed);
                Ok(f)
            }
            _ => Err("its versions changed after the round (a later read flipped an assumed order)"),
        }
    }

    /// The state encoded at `at`.
    fn decoded(&self, (start, len): (u32, u32)) -> Option<Front> {
        let bytes = self.states.get(start as usize..(start + len) as usize)?;
        super::seal::decode(bytes)?.0
    }

    /// The record of a round about to collect, from the collector's state;
    /// `recording`: the round will be kept.
    pub(super) fn of(c: &Collector, recording: bool) -> Before {
        let last_fence = if recording { c.last_fence.clone() } else { FxHashMap::default() };
        Before { fence_pos: c.fence_pos, last_fence, recording, ..Before::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::values::Dense;

    fn ranges(rs: &[(i64, i64)]) -> Ranges {
        let mut r = Ranges::default();
        for &(lo, hi) in rs {
            r.insert_range(lo, hi);
        }
        r
    }

    fn front(value: i64, stale: &[(i64, i64)], assumed: &[(i64, i64)]) -> Front {
        Front {
            value,
            line: 7,
            stale: ranges(stale),
            assumed: ranges(assumed),
            intermediate: Dense::default(),
            archived: false,
            aborted_archived: false,
            seen: true,
            flips: Vec::new(),
        }
    }

    fn same(a: &Front, b: &Front) -> bool {
        a.value == b.value
            && a.line == b.line
            && a.seen == b.seen
            && a.stale.fingerprint() == b.stale.fingerprint()
            && a.assumed.fingerprint() == b.assumed.fingerprint()
    }

    /// A large state comes back exactly from its difference with the
    /// state the round left, whatever the round added to or took from its
    /// sets; a state changed since is refused, not guessed.
    #[test]
    fn a_large_state_is_restored_from_its_difference_or_refused() {
        let key = KeyId(3);
        let pre = front(90, &[(1, 1), (5, 5), (9, 9), (13, 13), (17, 17), (21, 21)], &[(30, 30), (33, 33)]);
        let small = front(4, &[(1, 3)], &[]);
        let mut before = Before { recording: true, ..Before::default() };
        before.front(KeyId(1), &Value::Atom(crate::history::Atom::Int(1)), Some(&small));
        before.front(key, &Value::Atom(crate::history::Atom::Int(2)), Some(&pre));
        before.front(KeyId(5), &Value::Atom(crate::history::Atom::Int(5)), None);
        // The round made 90 and the assumed versions ordered, dropped 13
        // (a take-back of a newer round could), and assumed 95.
        let post = front(99, &[(1, 1), (5, 5), (9, 9), (17, 17), (21, 21), (30, 30), (33, 33), (90, 90)], &[(95, 95)]);
        let fronts: FxHashMap<KeyId, Front> = [(key, post), (KeyId(1), front(8, &[(1, 4)], &[]))].into_iter().collect();
        let full_bytes = before.states.len();
        before.compact(&fronts);
        assert!(before.states.len() < full_bytes, "{} of {full_bytes} bytes", before.states.len());
        assert_eq!(before.deltas.len(), 1);
        let at = |i: usize| before.fronts[i].1.expect("recorded");
        let back = before.state(1, at(1), fronts.get(&key)).expect("restored");
        assert!(same(&back, &pre));
        assert!(back.stale.contains(13) && !back.stale.contains(90) && !back.assumed.contains(95));
        // A small state is kept whole, whatever the key holds now.
        assert!(same(&before.state(0, at(0), fronts.get(&KeyId(1))).expect("whole"), &small));
        assert!(before.fronts[2].1.is_none());
        // The key's sets changed after the round: refused.
        let flipped =
            front(95, &[(1, 1), (5, 5), (9, 9), (17, 17), (21, 21), (30, 30), (33, 33), (90, 90), (99, 99)], &[]);
        assert!(before.state(1, at(1), Some(&flipped)).is_err());
        assert!(before.state(1, at(1), None).is_err());
    }
}
