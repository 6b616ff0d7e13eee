//! Repeated list reads: a read whose text begins with the text of the
//! previous read of its key is parsed only past that text.
//!
//! # Why
//!
//! In a list-append history every read of a key returns the key's list so
//! far, so each read repeats the previous one and adds the elements appended
//! since. In Elle's paper shape the reads' elements are most of the input
//! (about 74 per transaction), and parsing them element by element was most
//! of the reader's time. Comparing bytes is an order of magnitude cheaper
//! than parsing them.
//!
//! # The rule, and why it reads the same elements
//!
//! For each key the reader remembers its latest list read in the current
//! chunk: where its text lies in the input (between the brackets) and where
//! its elements lie in the builder's arena. A new list read of the key whose
//! text starts with exactly those bytes, followed by whitespace or a closing
//! bracket, holds the same elements first: the remembered text is a run of
//! complete forms (its closing bracket followed it outside any form, string
//! or comment), and every form ends at a byte it decides by itself or at the
//! first delimiter after it, so the same bytes followed by a delimiter are
//! read as the same forms, and the same forms have the same value
//! identities (equal values always get one identity, see
//! [`crate::history`]). The reader then takes those elements from the arena
//! ([`HistoryBuilder::repeat_list`]: in place when they end the arena,
//! copied otherwise) and parses only the rest. Anything else (another text,
//! a shorter read, a read whose remembered elements are gone) is parsed in
//! full, as before; so is every error, which the repeated text cannot hold.
//!
//! A read is remembered only once its op is known to be a client op: a
//! non-client op's micro-ops are discarded with their elements
//! ([`HistoryBuilder::push_op_with`]), so reads are held pending until the
//! op is finished ([`RepeatReads::commit`] or [`RepeatReads::discard`]).
//!
//! [`HistoryBuilder::repeat_list`]: crate::history::HistoryBuilder::repeat_list
//! [`HistoryBuilder::push_op_with`]: crate::history::HistoryBuilder::push_op_with

use crate::history::KeyId;

/// A list read: its text in the input and its elements in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ListRead {
    /// Offset of the first byte after the opening bracket.
    pub text_start: usize,
    /// Offset of the closing bracket.
    pub text_end: usize,
    /// First element in the arena.
    pub start: u32,
    /// Number of elements.
    pub len: u32,
}

impl ListRead {
    fn text_len(&self) -> usize {
        self.text_end - self.text_start
    }
}

/// The latest list read of each key, and the reads of the op being read.
#[derive(Default)]
pub(crate) struct RepeatReads {
    /// By `KeyId`: the key's latest remembered read.
    latest: Vec<Option<ListRead>>,
    /// Reads of the op being read, remembered once it is a client op.
    pending: Vec<(KeyId, ListRead)>,
}

impl RepeatReads {
    /// The remembered read of `key` whose text the list whose text starts at
    /// `text_start` in `src` repeats, followed by whitespace or a closing
    /// bracket; `None` when there is none.
    #[inline]
    pub fn repeated(&self, key: KeyId, src: &[u8], text_start: usize) -> Option<ListRead> {
        let prev = (*self.latest.get(key.0 as usize)?)?;
        let n = prev.text_len();
        let old = src.get(prev.text_start..prev.text_end)?;
        let new = src.get(text_start..text_start + n)?;
        let after = *src.get(text_start + n)?;
        let ends_form = matches!(after, b' ' | b',' | b'\n' | b'\t' | b'\r' | 0x0b | 0x0c | b']' | b')');
        (ends_form && n > 0 && new == old).then_some(prev)
    }

    /// Records a list read of `key` of the op being read.
    #[inline]
    pub fn note(&mut self, key: KeyId, read: ListRead) {
        self.pending.push((key, read));
    }

    /// The op being read is a client op: its reads become the latest of
    /// their keys, unless shorter than the one remembered (a stale read;
    /// the longer one is the likelier base for the reads to come).
    pub fn commit(&mut self) {
        for (key, read) in self.pending.drain(..) {
            let i = key.0 as usize;
            if i >= self.latest.len() {
                self.latest.resize(i + 1, None);
            }
            let slot = &mut self.latest[i];
            if slot.is_none_or(|old| old.len <= read.len) {
                *slot = Some(read);
            }
        }
    }

    /// The op being read was discarded (not a client op): forget its reads.
    pub fn discard(&mut self) {
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text_start: usize, text_end: usize, len: u32) -> ListRead {
        ListRead { text_start, text_end, start: 0, len }
    }

    #[test]
    fn a_read_is_repeated_only_up_to_a_form_boundary() {
        let src = b"[1 2] [1 2 3] [1 23] [1 2] [1 2,4] [1 2";
        let mut r = RepeatReads::default();
        r.note(KeyId(0), read(1, 4, 2));
        r.commit();
        assert_eq!(r.repeated(KeyId(0), src, 7), Some(read(1, 4, 2)), "[1 2 3] goes on after [1 2");
        assert_eq!(r.repeated(KeyId(0), src, 15), None, "[1 23]: 2 is not a whole form");
        assert_eq!(r.repeated(KeyId(0), src, 22), Some(read(1, 4, 2)), "the same list again");
        assert_eq!(r.repeated(KeyId(0), src, 28), Some(read(1, 4, 2)), "a comma ends a form");
        assert_eq!(r.repeated(KeyId(0), src, 36), None, "input ends before a delimiter");
        assert_eq!(r.repeated(KeyId(1), src, 7), None, "another key");
    }

    #[test]
    fn discarded_and_shorter_reads_are_not_remembered() {
        let mut r = RepeatReads::default();
        r.note(KeyId(2), read(1, 4, 2));
        r.discard();
        r.commit();
        assert_eq!(r.latest.get(2).copied().flatten(), None);
        r.note(KeyId(2), read(10, 20, 5));
        r.commit();
        r.note(KeyId(2), read(30, 33, 2));
        r.commit();
        assert_eq!(r.latest[2], Some(read(10, 20, 5)));
    }
}
