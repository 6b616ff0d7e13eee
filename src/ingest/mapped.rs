//! A Jepsen EDN history mapped into memory for a distributed run
//! (`crate::dist`): every process maps the same input and reads its own
//! windows of it.
//!
//! The input is one file, or the shards of a directory ([`super::shards`])
//! taken as their concatenation. Offsets are *logical*: the bytes of every
//! part (after a byte order mark) laid end to end, so a window may begin in
//! one shard and end in a later one. Each part keeps its own map; nothing
//! is copied. Where the ops of a part begin and end is found per part (a
//! shard may be one vector of ops, as a file may), and the bytes between
//! parts' ops (a closing `]`, the next one's `[`) are counted for lines but
//! never parsed. Every part but the last ends with a newline, so an op line
//! never runs from one part into the next and a line starting at a logical
//! offset starts in one part.

use super::{edn, error, jepsen, IngestError};
use crate::history::{History, HistoryBuilder};
use std::path::{Path, PathBuf};

/// One mapped file of the input.
pub(crate) struct Part {
    /// The file, as named in messages.
    pub name: String,
    map: Option<memmap2::Mmap>,
    /// Bytes skipped at the start (a byte order mark).
    skip: usize,
    /// The logical offset of its first byte.
    at: usize,
}

impl Part {
    /// The part's bytes (after any byte order mark).
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().map_or(&[][..], |m| &m[self.skip..])
    }

    /// Gives back the resident pages of `bytes()[from..to]`.
    pub fn release(&self, from: usize, to: usize) {
        if let Some(map) = &self.map {
            super::release_pages(map, self.skip + from, self.skip + to);
        }
    }

    /// Where its ops begin and end, in its own bytes (`edn::plan_windows`).
    fn ops(&self) -> Result<(usize, usize), IngestError> {
        let cuts = edn::plan_windows(self.bytes(), 1)
            .map_err(|reason| IngestError::Unreadable { path: self.name.clone(), reason })?;
        Ok((cuts[0], cuts[cuts.len() - 1]))
    }

    fn end(&self) -> usize {
        self.at + self.bytes().len()
    }
}

/// The mapped input ([`map_edn`]): one file, or a directory's shards.
pub struct MappedEdn {
    /// The file or directory, as named in messages.
    pub name: String,
    parts: Vec<Part>,
}

impl MappedEdn {
    /// Maps the shards of the directory `name`, in order.
    pub(crate) fn map_shards(name: &str, shards: &[PathBuf]) -> Result<MappedEdn, IngestError> {
        let mut parts: Vec<Part> = Vec::with_capacity(shards.len());
        for path in shards {
            let at = parts.last().map_or(0, Part::end);
            let part = map_part(path, at)?;
            if let Some(prev) = parts.last() {
                if prev.bytes().last().is_some_and(|&b| b != b'\n') {
                    return Err(IngestError::Unreadable {
                        path: prev.name.clone(),
                        reason: format!(
                            "does not end with a newline, so its last line would run on into {}; end every shard \
                             with a newline (`echo >> {}`)",
                            part.name, prev.name
                        ),
                    });
                }
            }
            parts.push(part);
        }
        Ok(MappedEdn { name: name.to_string(), parts })
    }

    /// The mapped files, in stream order.
    pub(crate) fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The input's length in bytes (every file's, byte order marks
    /// included).
    pub fn len(&self) -> u64 {
        self.parts.iter().map(|p| p.map.as_ref().map_or(0, |m| m.len() as u64)).sum()
    }

    /// Whether the input is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The logical length: the parts' bytes laid end to end.
    fn logical_len(&self) -> usize {
        self.parts.last().map_or(0, Part::end)
    }

    /// The part holding logical offset `at` (the last part for the end).
    fn part_at(&self, at: usize) -> Option<&Part> {
        let i = self.parts.partition_point(|p| p.end() <= at);
        self.parts.get(i).or(self.parts.last())
    }

    /// A fingerprint of the input to compare between processes: its
    /// parts' names and lengths, and a hash of 64 samples of 4 KiB spread
    /// over the logical bytes.
    pub fn fingerprint(&self) -> (u64, u64) {
        use std::hash::Hasher;
        const SAMPLES: usize = 64;
        const SAMPLE: usize = 4096;
        let mut h = rustc_hash::FxHasher::default();
        for p in &self.parts {
            let file = Path::new(&p.name).file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned());
            h.write(file.as_bytes());
            h.write_usize(p.bytes().len());
        }
        let len = self.logical_len();
        for i in 0..SAMPLES {
            let at = len.saturating_sub(SAMPLE) / SAMPLES * i;
            if let Some(p) = self.part_at(at) {
                let local = at - p.at;
                h.write(&p.bytes()[local.min(p.bytes().len())..(local + SAMPLE).min(p.bytes().len())]);
            }
        }
        (self.len(), h.finish())
    }

    /// `n + 1` logical offsets cutting the ops into `n` windows at op
    /// lines (see `edn::plan_windows`); with shards, at equal shares of the
    /// bytes of all parts' ops, each cut at the next op line of its part.
    pub fn plan_windows(&self, n: usize) -> Result<Vec<usize>, IngestError> {
        if let [one] = &self.parts[..] {
            return edn::plan_windows(one.bytes(), n)
                .map_err(|reason| IngestError::Unreadable { path: self.name.clone(), reason });
        }
        let regions: Vec<(usize, usize)> = self.parts.iter().map(Part::ops).collect::<Result<_, _>>()?;
        let total: usize = regions.iter().map(|r| r.1 - r.0).sum();
        let n = n.max(1);
        let (first, last) = match (self.parts.first(), self.parts.last()) {
            (Some(f), Some(l)) => (f.at + regions[0].0, l.at + regions[regions.len() - 1].1),
            _ => (0, 0),
        };
        let mut bounds = vec![first];
        for i in 1..n {
            let mut share = total / n * i;
            let mut cut = last;
            for (p, &(s, e)) in self.parts.iter().zip(&regions) {
                if share < e - s {
                    cut = p.at + edn::next_op_line(p.bytes(), s + share, e);
                    break;
                }
                share -= e - s;
            }
            bounds.push(cut.max(*bounds.last().unwrap_or(&first)));
        }
        bounds.push(last.max(*bounds.last().unwrap_or(&first)));
        Ok(bounds)
    }

    /// Parses the window `start..end` (logical offsets), its first byte on
    /// line `first_line` (0: counted from the window's start); returns the
    /// builder and the line of `end`. Each part's share is read by
    /// `edn::parse_window` (errors name the part and its own line), its
    /// pages given back as they are read, so a process holds what it
    /// parsed, not the input's bytes.
    pub fn parse_window(
        &self,
        start: usize,
        end: usize,
        first_line: usize,
    ) -> Result<(HistoryBuilder, usize), IngestError> {
        let mut whole: Option<HistoryBuilder> = None;
        let (mut cursor, mut line) = (start, first_line);
        for p in self.parts.iter().filter(|p| p.end() > start && p.at < end) {
            let (s, e) = self.region(p)?;
            let (from, to) = ((p.at + s).max(start), (p.at + e).min(end));
            if from >= to {
                continue;
            }
            line += self.newlines(cursor, from);
            let release = |a: usize, b: usize| p.release(a, b);
            let (piece, next) = edn::parse_window(&p.name, p.bytes(), from - p.at, to - p.at, line, Some(&release))?;
            match &mut whole {
                None => whole = Some(piece),
                Some(b) if b.can_append(&piece) => b.append(piece),
                Some(_) => {
                    return Err(IngestError::Unreadable {
                        path: self.name.clone(),
                        reason: "holds more than 4 billion operations, micro-operations or distinct list elements \
                                 in one window, beyond the columnar model's u32 offsets: use more workers"
                            .into(),
                    })
                }
            }
            (cursor, line) = (to, next);
        }
        line += self.newlines(cursor, end.max(cursor));
        Ok((whole.unwrap_or_else(|| HistoryBuilder::new(&self.name)), line))
    }

    /// Where part `p`'s ops lie in its bytes: a single file is read whole
    /// (as `edn::parse_window` reads it); a shard, between its ops' first
    /// and last byte ([`Part::ops`]).
    fn region(&self, p: &Part) -> Result<(usize, usize), IngestError> {
        if self.parts.len() == 1 {
            Ok((0, p.bytes().len()))
        } else {
            p.ops()
        }
    }

    /// The newlines in the logical bytes `from..to`.
    fn newlines(&self, from: usize, to: usize) -> usize {
        self.parts
            .iter()
            .filter(|p| p.end() > from && p.at < to)
            .map(|p| error::count_newlines(&p.bytes()[from.max(p.at) - p.at..to.min(p.end()) - p.at]))
            .sum()
    }

    /// The number of newlines before logical offset `end`.
    pub fn lines_before(&self, end: usize) -> usize {
        self.newlines(0, end)
    }

    /// The start of the line after the one holding logical offset `pos`,
    /// when a newline ends that line before `end`.
    pub fn next_line(&self, pos: usize, end: usize) -> Option<usize> {
        let p = self.part_at(pos).filter(|p| pos >= p.at && pos < end)?;
        let bytes = &p.bytes()[pos - p.at..end.min(p.end()) - p.at];
        bytes.iter().position(|&b| b == b'\n').map(|nl| pos + nl + 1)
    }

    /// The logical span of the `k`-th client op (from 0) read from `from`
    /// on, before `end`, within the ops of the part holding `from`.
    pub fn op_span(&self, from: usize, end: usize, k: usize) -> Option<(usize, usize)> {
        let p = self.part_at(from).filter(|p| from >= p.at && from <= end)?;
        let (s, e) = self.region(p).ok()?;
        let (a, b) = ((from - p.at).max(s), (end.min(p.end()) - p.at).min(e));
        if a >= b {
            return None;
        }
        edn::client_op_span(p.bytes(), a, b, k).map(|(x, y)| (p.at + x, p.at + y))
    }

    /// The logical bytes `from..to`, which lie in one part.
    pub fn text(&self, from: usize, to: usize) -> &[u8] {
        match self.part_at(from) {
            Some(p) if to <= p.end() => &p.bytes()[from - p.at..to - p.at],
            _ => &[],
        }
    }
}

/// Maps one file as the part at logical offset `at`, refusing what cannot
/// be cut into windows (see [`map_edn`]).
fn map_part(path: &Path, at: usize) -> Result<Part, IngestError> {
    let name = path.display().to_string();
    let refuse = |reason: String| IngestError::Unreadable { path: name.clone(), reason };
    let io = |source| IngestError::Io { path: name.clone(), source };
    let meta = std::fs::metadata(path).map_err(io)?;
    super::regular_file(&name, &meta)?;
    let file = std::fs::File::open(path).map_err(io)?;
    if meta.len() == 0 {
        return Ok(Part { name, map: None, skip: 0, at });
    }
    // SAFETY: the map is only read. As with any memory map, another process
    // truncating or rewriting the file while it is read is outside our
    // control: every process checks the input's size and sampled bytes
    // against the others' before any work (`crate::dist`).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    if jepsen::is_gzip(&map) || jepsen::inner_name(&name) != name {
        return Err(refuse(
            "is gzipped, and a gzip stream can only be read from its start, so it cannot be cut into windows; \
             unpack it first (`gunzip -k FILE`) and give the .edn file"
                .into(),
        ));
    }
    if jepsen::looks_like_history_txt(&map) {
        return Err(refuse(
            "is Jepsen's history.txt, which a distributed run does not read; give the history.edn beside it".into(),
        ));
    }
    let (bytes, format) = super::prepare(&name, &map, super::Format::Auto);
    if format != super::Format::Edn {
        return Err(refuse(format!(
            "is not Jepsen EDN (it reads as {format:?}); a distributed run reads Jepsen EDN histories; check this \
             one on one process"
        )));
    }
    let skip = bytes.as_ptr() as usize - map.as_ptr() as usize;
    Ok(Part { name, map: Some(map), skip, at })
}

/// Maps a Jepsen EDN history (a file, a store directory holding
/// history.edn, or a directory of shards) for a distributed run. Inputs
/// that cannot be cut into windows are refused with the fix: gzip (a
/// stream with no place to start reading but its beginning), history.txt,
/// and the other formats.
pub fn map_edn(path: &Path) -> Result<MappedEdn, IngestError> {
    let name = path.display().to_string();
    let refuse = |reason: String| IngestError::Unreadable { path: name.clone(), reason };
    if path.as_os_str() == "-" {
        return Err(refuse(
            "standard input cannot be cut into windows: every process reads the same file; write the history to a \
             file (on shared storage, or copied to every host) and give its path"
                .into(),
        ));
    }
    let meta = std::fs::metadata(path).map_err(|source| IngestError::Io { path: name.clone(), source })?;
    if meta.is_dir() {
        if let Some(history) = jepsen::store_history(path) {
            return map_edn(&history);
        }
        return match super::shards::find(path)? {
            Some(shards) => MappedEdn::map_shards(&name, &shards),
            None => Err(refuse(format!(
                "is a directory without a Jepsen history ({}, directly or in `latest/`) or shards (STEM.N.edn)",
                jepsen::STORE_FILES.join(", ")
            ))),
        };
    }
    Ok(MappedEdn { parts: vec![map_part(path, 0)?], name })
}

/// Reads the shards (from [`super::shards::find`]) of the directory named `name` as one
/// history, as the single-file reader reads one file.
pub(crate) fn read_shards(name: &str, shards: &[PathBuf]) -> Result<History, IngestError> {
    let input = MappedEdn::map_shards(name, shards)?;
    let mut chunks = Vec::new();
    let mut lines = 0;
    for part in input.parts() {
        let bytes = part.bytes();
        let release = |from: usize, to: usize| part.release(from, to);
        let mut read = edn::parse_chunks(&part.name, bytes, Some(&release))
            .map_err(|e| super::other_workload(&part.name, bytes, e))?;
        for chunk in &mut read {
            chunk.offset_lines(lines);
        }
        lines += super::error::count_newlines(bytes);
        chunks.extend(read);
    }
    if chunks.iter().all(|c| c.mop_count() == 0) {
        if let Some(reason) = input.parts().first().and_then(|p| jepsen::non_transactional(p.bytes())) {
            return Err(IngestError::Unreadable { path: name.to_string(), reason });
        }
    }
    drop(input);
    let mut h = edn::merge(name, chunks)?;
    h.source = name.to_string();
    super::require_completions(name, h)
}
