//! What a collecting round changed, recorded so that it can be taken back
//! ([`super::revert`]): the states of the keys its members wrote as they
//! were before it, the fence positions, and the flags it added and
//! removed. Kept with the round ([`super::resolve`]).
//!
//! Written by hand: specific to this collector.

use rustc_hash::FxHashMap;

use super::{Collector, Front};
use crate::history::Value;

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
}

impl Before {
    /// Records `front` as key `name`'s state before the round.
    pub(super) fn front(&mut self, name: &Value, front: Option<&Front>) {
        let at = front.map(|f| {
            let start = self.states.len() as u32;
            super::seal::encode_into(Some(f), None, &mut self.states);
            (start, self.states.len() as u32 - start)
        });
        self.fronts.push((name.clone(), at));
    }

    /// The state recorded at `at` ([`Self::front`]).
    pub(super) fn state(&self, (start, len): (u32, u32)) -> Option<Front> {
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
