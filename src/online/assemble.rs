//! Whole ops out of a byte stream that may stop mid-line.
//!
//! The text held is cut at the last line that starts an op (the cuts of the
//! streaming reader, [`crate::ingest`]'s `last_cut`), and everything before
//! the cut is parsed into the history being built. An op that is still
//! being written is never an error: it stays held until the line after it
//! starts, the input has been quiet with the text ending in a newline, or
//! the input ends. A malformed op is an error once a later op has started
//! after it (so it cannot be an op still being written), or at the end of
//! the input; the error names its line in the whole stream.

use crate::history::{History, HistoryBuilder};
use crate::ingest::{edn, IngestError};

/// Ops parsed so far and the text not yet parsed.
pub struct Assembler {
    source: String,
    built: HistoryBuilder,
    held: Vec<u8>,
    /// Line of the stream on which `held` starts (1-based).
    line: usize,
    /// Whether the first non-blank byte has been looked at.
    started: bool,
    completions: usize,
}

impl Assembler {
    /// An empty history read from `source`.
    pub fn new(source: &str) -> Assembler {
        Assembler {
            source: source.to_string(),
            built: HistoryBuilder::new(source),
            held: Vec::new(),
            line: 1,
            started: false,
            completions: 0,
        }
    }

    /// Marks the history as read from a binary register format (Cobra's
    /// logs, written as EDN by [`super::cobra`]): its values print as
    /// unsigned 64-bit numbers and `--workload auto` takes registers, as
    /// for the batch reader's history.
    pub fn binary_registers(&mut self) {
        self.built.set_registers_only();
        self.built.set_unsigned_values();
    }

    /// Adds bytes read; parses the ops they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), IngestError> {
        self.held.extend_from_slice(bytes);
        self.check_start()?;
        let Some(cut) = edn::last_cut(&self.held) else { return Ok(()) };
        match edn::parse_segment(&self.source, &self.held[..cut], self.line, None) {
            Ok(chunks) => {
                self.take(chunks, cut);
                Ok(())
            }
            Err(e) => {
                // An error on the segment's last op may be a multi-line op
                // cut at an inner line: wait for more. Before it, it is not.
                let last = self.line + edn_newlines(&self.held[..cut]).saturating_sub(1);
                match syntax_line(&e) {
                    Some(l) if l < last => Err(e),
                    _ => Ok(()),
                }
            }
        }
    }

    /// The input has been quiet: parses the held text when it ends with a
    /// newline and reads as whole ops (otherwise it is still being written).
    pub fn settle(&mut self) {
        if self.held.last() != Some(&b'\n') || self.held.iter().all(|b| b.is_ascii_whitespace()) {
            return;
        }
        if let Ok(chunks) = edn::parse_segment(&self.source, &self.held, self.line, None) {
            let n = self.held.len();
            self.take(chunks, n);
        }
    }

    /// The input ended: parses what is held; an error now is final.
    pub fn finish_input(&mut self) -> Result<(), IngestError> {
        self.check_start()?;
        if self.held.iter().all(|b| b.is_ascii_whitespace()) {
            self.held.clear();
            return Ok(());
        }
        let chunks = edn::parse_segment(&self.source, &self.held, self.line, None)?;
        let n = self.held.len();
        self.take(chunks, n);
        Ok(())
    }

    fn take(&mut self, chunks: Vec<HistoryBuilder>, cut: usize) {
        for c in chunks {
            self.completions += c.completions();
            self.built.append(c);
        }
        self.line += edn_newlines(&self.held[..cut]);
        self.held.drain(..cut);
    }

    /// A history written as one vector cannot be followed op by op.
    fn check_start(&mut self) -> Result<(), IngestError> {
        if self.started {
            return Ok(());
        }
        let text = self.held.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&self.held);
        let Some(&first) = text.iter().find(|b| !b.is_ascii_whitespace()) else { return Ok(()) };
        self.started = true;
        if first == b'[' {
            return Err(IngestError::Syntax {
                source_name: self.source.clone(),
                line: 1 + edn_newlines(&text[..text.iter().position(|&b| b == b'[').unwrap_or(0)]) as u32,
                column: 1,
                expected: "one op per line (Jepsen's history.edn) to follow; a history written as one \
                           vector is read whole: drop --follow"
                    .into(),
                found: "`[`".into(),
            });
        }
        Ok(())
    }

    /// Completions (`:ok`, `:fail`, `:info`) read so far.
    pub fn completions(&self) -> usize {
        self.completions
    }

    /// Whether values are interned (not all integers).
    pub fn interned(&self) -> bool {
        self.built.interned()
    }

    /// Forgets the ops at the positions `keep` refuses (collected
    /// transactions; see [`super::collect`]).
    pub fn retain(&mut self, keep: &[bool]) {
        self.built.retain_ops(|i| keep.get(i).copied().unwrap_or(true));
    }

    /// Puts back collected ops among the held ones by line
    /// ([`HistoryBuilder::insert_ops`]).
    pub fn insert_ops(&mut self, keys: &[crate::history::Value], ops: Vec<crate::history::OpBack>) {
        self.built.insert_ops(keys, ops);
    }

    /// The key table, and per key whether a held op mentions it.
    pub fn keys(&self) -> (&[crate::history::Value], Vec<bool>) {
        (self.built.keys(), self.built.used_keys())
    }

    /// Forgets the keys `drop` marks that no held op mentions, renumbering
    /// the others ([`HistoryBuilder::drop_keys`]); returns the renumbering.
    pub fn drop_keys(&mut self, drop: &[bool]) -> Vec<u32> {
        self.built.drop_keys(drop)
    }

    /// Ops read so far.
    pub fn ops(&self) -> usize {
        self.built.op_count()
    }

    /// The line the next unparsed text starts on.
    pub fn line(&self) -> usize {
        self.line
    }

    /// Bytes held while an op is being written.
    pub fn held_bytes(&self) -> usize {
        self.held.len()
    }

    /// The history read so far; the assembler reads on.
    pub fn snapshot(&self) -> History {
        self.built.snapshot()
    }

    /// The history read, ending the assembly.
    pub fn into_history(self) -> History {
        self.built.finish()
    }
}

fn edn_newlines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// The line a syntax error names.
fn syntax_line(e: &IngestError) -> Option<usize> {
    match e {
        IngestError::Syntax { line, .. } => Some(*line as usize),
        _ => None,
    }
}
