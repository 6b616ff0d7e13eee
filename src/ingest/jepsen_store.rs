//! Jepsen's own store file, `test.jepsen`: the history while a test runs,
//! and after a test that crashed.
//!
//! Jepsen writes `history.edn` only once a run's history is complete. Until
//! then (and forever, for a run that crashed) the history is only in
//! `test.jepsen`, the binary file of `jepsen.store.format`.
//!
//! # Layout (all integers big-endian, signed)
//!
//! * File header, 18 bytes: `JEPSEN`, a 32-bit version (0 or 1), the
//!   64-bit offset of the newest index block (0: none yet).
//! * Blocks, one after another. A block header is 28 bytes: a 64-bit
//!   length (header included), a 32-bit CRC32, then Jepsen's 16-byte type
//!   field whose first two bytes hold the type (`block-type-size` is 16
//!   bytes; the other 14 are zero). The CRC is that of the data, continued
//!   over the 28 header bytes with the CRC field zeroed.
//! * Types: 1 index (32-bit root id, then 32-bit block id and 64-bit
//!   offset pairs), 2 Fressian (one value), 3 PartialMap (32-bit id of the
//!   rest, then a Fressian map), 4 FressianStream (values until the block
//!   ends), 5 BigVector (64-bit count, then 64-bit first index and 32-bit
//!   block id per chunk).
//!
//! The root block is the test map. Its `:history` is a `block-ref`: in
//! version 1, a BigVector whose chunks are FressianStream blocks of up to
//! 16,384 `jepsen.history.Op` records; in version 0, a Fressian block
//! holding the list of op maps. [`super::fressian`] reads the values.
//!
//! # What is trusted
//!
//! Jepsen seals a chunk (writes its header and CRC), then writes a new
//! BigVector block naming every sealed chunk, then a new index block, then
//! points the file header at it; the chunk being filled has a blank
//! header. So the file is read block by block from its start, checking
//! each CRC; the first block that fails its CRC, runs past the end of the
//! file, or is not sealed yet ends what can be trusted. The newest index
//! block before that point names the history read: every sealed chunk of
//! that checkpoint, nothing after it, nothing guessed. The history is
//! whole only when the root test map was written after the history's
//! BigVector (Jepsen rewrites the test once the history writer closes,
//! `save-1!`); otherwise [`Partial`] says how many ops were read, where and
//! why reading stopped, and every report says so.
//!
//! # Ops
//!
//! Each op is written as the EDN op map Jepsen prints in `history.edn`
//! (one per line), and the EDN reader builds the history from that text:
//! the same fields, the same echo of the user's values, the same
//! `:index`; "line N" in messages is the Nth op of the store file.

use super::fressian::{Decoder, FressianError};
use super::IngestError;
use crate::history::{StoreNote, StorePartial, Value};
use rayon::prelude::*;

/// The magic bytes that start a store file.
pub const MAGIC: &[u8; 6] = b"JEPSEN";
/// The name Jepsen gives its store file.
pub const FILE_NAME: &str = "test.jepsen";
const FILE_HEADER: usize = 18;
const BLOCK_HEADER: usize = 28;

const INDEX: u16 = 1;
const FRESSIAN: u16 = 2;
const PARTIAL_MAP: u16 = 3;
const STREAM: u16 = 4;
const BIG_VECTOR: u16 = 5;

/// Whether `bytes` begin as a Jepsen store file.
pub fn is_store(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

fn type_name(t: u16) -> &'static str {
    match t {
        INDEX => "index",
        FRESSIAN => "Fressian",
        PARTIAL_MAP => "PartialMap",
        STREAM => "FressianStream",
        BIG_VECTOR => "BigVector",
        _ => "unknown",
    }
}

/// A block whose whole extent lies in the file and whose CRC checks.
#[derive(Clone, Copy, Debug)]
struct Block {
    offset: u64,
    len: u64,
    ty: u16,
}

impl Block {
    fn data<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[self.offset as usize + BLOCK_HEADER..(self.offset + self.len) as usize]
    }
    fn data_offset(&self) -> u64 {
        self.offset + BLOCK_HEADER as u64
    }
}

/// Where and why a sequential read of the blocks stopped before the end
/// of the file.
#[derive(Clone, Debug)]
struct Stop {
    offset: u64,
    reason: String,
}

/// Reads the block headers from the first block on, checking CRCs.
fn scan(bytes: &[u8]) -> (Vec<Block>, Option<Stop>) {
    let mut blocks = Vec::new();
    let stop = scan_from(bytes, FILE_HEADER, &mut blocks);
    (blocks, stop)
}

/// [`scan`] from the block at `from`, adding to `blocks`.
fn scan_from(bytes: &[u8], from: usize, blocks: &mut Vec<Block>) -> Option<Stop> {
    let mut off = from;
    let end = bytes.len();
    while off < end {
        let stop = |reason: String| Some(Stop { offset: off as u64, reason });
        if end - off < BLOCK_HEADER {
            return stop(format!("the block header at byte {off} is cut short ({} of its 28 bytes)", end - off));
        }
        let h = &bytes[off..off + BLOCK_HEADER];
        let len = i64::from_be_bytes(h[0..8].try_into().unwrap_or_default());
        let crc = u32::from_be_bytes(h[8..12].try_into().unwrap_or_default());
        let ty = u16::from_be_bytes([h[12], h[13]]);
        if len == 0 && crc == 0 && ty == 0 {
            return stop(format!("the block at byte {off} is not sealed yet (a history chunk being written)"));
        }
        if len < BLOCK_HEADER as i64 {
            return stop(format!("the block at byte {off} has length {len}, less than its 28-byte header"));
        }
        let len = len as u64;
        if len > (end - off) as u64 {
            return stop(format!("the block at byte {off} ({len} bytes) runs past the end of the file at byte {end}"));
        }
        let data = &bytes[off + BLOCK_HEADER..off + len as usize];
        let mut zeroed = [0u8; BLOCK_HEADER];
        zeroed.copy_from_slice(h);
        zeroed[8..12].fill(0);
        let mut c = flate2::Crc::new();
        c.update(data);
        c.update(&zeroed);
        if c.sum() != crc {
            return stop(format!("the block at byte {off} fails its CRC (stored {crc:08x}, computed {:08x})", c.sum()));
        }
        blocks.push(Block { offset: off as u64, len, ty });
        off += len as usize;
    }
    None
}

/// A test map's top level and its history, as read from a store file.
pub struct StoreRead {
    /// The history as EDN op maps, one per line.
    pub edn: Vec<u8>,
    /// Ops read.
    pub ops: usize,
    /// The test's name, start, nodes, concurrency, and whether the
    /// history was read whole.
    pub note: StoreNote,
}

/// Builds the error messages of one file.
struct Ctx<'a> {
    name: &'a str,
}

impl Ctx<'_> {
    fn bad(
        &self,
        offset: u64,
        record: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> IngestError {
        IngestError::Binary {
            source_name: self.name.to_string(),
            record: record.into(),
            offset,
            expected: expected.into(),
            found: found.into(),
        }
    }
    fn fressian(&self, record: impl Into<String>, e: FressianError) -> IngestError {
        self.bad(e.offset, record, e.expected, e.found)
    }
    fn unreadable(&self, reason: impl Into<String>) -> IngestError {
        IngestError::Unreadable { path: self.name.to_string(), reason: reason.into() }
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes(b.try_into().unwrap_or_default())
}
fn be_i64(b: &[u8]) -> i64 {
    i64::from_be_bytes(b.try_into().unwrap_or_default())
}

/// The block index: root id and (id, offset) pairs.
struct Index {
    root: i32,
    blocks: rustc_hash::FxHashMap<i32, u64>,
}

/// Reads a store file's test map and the history its newest trusted
/// checkpoint holds, as EDN text. Errors name `name` and what was read.
pub fn read(name: &str, bytes: &[u8]) -> Result<StoreRead, IngestError> {
    let parts = read_with(name, bytes, Vec::with_capacity, |edn: &mut Vec<u8>, text, _| {
        edn.extend_from_slice(text);
        Ok(())
    })?;
    Ok(StoreRead { edn: parts.parts.concat(), ops: parts.ops, note: parts.note })
}

/// Text handed to one parse call, at most (about): see [`read_with`].
const RUN_TEXT: usize = 32 << 20;

/// A store file's history read chunk by chunk: what `parse` made of each
/// run of chunks, in history order.
pub struct StoreParts<T> {
    /// One per run of contiguous history chunks.
    pub parts: Vec<T>,
    /// Ops read.
    pub ops: usize,
    /// As in [`StoreRead`].
    pub note: StoreNote,
}

/// [`read`], handing the ops of each history chunk (as EDN lines) to
/// `parse` as soon as the chunk is decoded, on the thread that decoded it,
/// with the number of ops before the chunk: chunks are read in runs of
/// contiguous chunks, one part per run made by `start` (given about how
/// many bytes of text the run holds), so each chunk's text is parsed while
/// it is cache-warm and the whole history never exists as text.
pub fn read_with<T: Send>(
    name: &str,
    bytes: &[u8],
    start: impl Fn(usize) -> T + Sync + Send,
    parse: impl Fn(&mut T, &[u8], usize) -> Result<(), IngestError> + Sync + Send,
) -> Result<StoreParts<T>, IngestError> {
    let cx = Ctx { name };
    if bytes.is_empty() {
        return Err(cx.unreadable("is empty: a Jepsen store file with nothing written yet"));
    }
    if bytes.len() < FILE_HEADER {
        if MAGIC.starts_with(&bytes[..bytes.len().min(6)]) {
            return Err(cx.unreadable(format!(
                "is a Jepsen store file cut short: {} bytes, less than its 18-byte header (still being written?)",
                bytes.len()
            )));
        }
        return Err(cx.unreadable("is not a Jepsen store file: it does not begin with `JEPSEN`"));
    }
    if !is_store(bytes) {
        return Err(cx.unreadable("is not a Jepsen store file: it does not begin with `JEPSEN`"));
    }
    let version = be_i32(&bytes[6..10]);
    if !(0..=1).contains(&version) {
        return Err(cx.bad(
            6,
            "",
            "format version 0 or 1 (jepsen.store.format)",
            format!("version {version}, which this reader does not know"),
        ));
    }
    let header_index = be_i64(&bytes[10..18]);
    let (blocks, stop) = scan(bytes);
    let Some(index_block) = blocks.iter().rev().find(|b| b.ty == INDEX).copied() else {
        let why = match &stop {
            Some(s) => format!("; reading stopped at byte {}: {}", s.offset, s.reason),
            None => String::new(),
        };
        return Err(cx.unreadable(format!(
            "is a Jepsen store file without a complete index block yet (header points at byte {header_index}): \
             nothing of the test can be trusted (still being written?){why}"
        )));
    };
    let by_offset: rustc_hash::FxHashMap<u64, Block> = blocks.iter().map(|b| (b.offset, *b)).collect();
    let index = read_index(&cx, bytes, index_block)?;
    let block = |id: i32, what: &str| -> Result<Block, IngestError> {
        let off = *index.blocks.get(&id).ok_or_else(|| {
            cx.bad(
                index_block.offset,
                format!("index block at byte {}", index_block.offset),
                format!("{what} (block {id}) in the index"),
                "no such block",
            )
        })?;
        by_offset.get(&off).copied().ok_or_else(|| {
            cx.bad(
                off,
                format!("block {id}"),
                format!("{what}: a whole block with a valid CRC"),
                "no block starting there",
            )
        })
    };
    // The test map.
    let root = block(index.root, "the root test map")?;
    let test_edn = decode_value(&cx, bytes, root, true)?;
    let test = super::edn::parse_values(name, &test_edn)
        .map_err(|e| cx.unreadable(format!("its test map (block at byte {}) did not read back: {e}", root.offset)))?;
    let test = match test.into_iter().next() {
        Some((Value::Map(m), _)) => m,
        _ => return Err(cx.bad(root.data_offset(), "the root block", "the test map", "another value")),
    };
    let mut note = StoreNote { version, ..StoreNote::default() };
    let mut history_id = None;
    for (k, v) in &test {
        let Value::Atom(crate::history::Atom::Keyword(k)) = k else { continue };
        match &**k {
            "name" => note.name = text_of(v),
            "start-time" => note.start_time = text_of(v),
            "concurrency" => {
                if let Value::Atom(crate::history::Atom::Int(c)) = v {
                    note.concurrency = Some(*c);
                }
            }
            "nodes" => {
                if let Value::Vector(ns) | Value::List(ns) | Value::Set(ns) = v {
                    note.nodes = ns.iter().map(|n| text_of(n).unwrap_or_else(|| n.to_string())).collect();
                }
            }
            "history" => {
                if let Value::Tagged(t, id) = v {
                    if &**t == "block-ref" {
                        if let Value::Atom(crate::history::Atom::Int(id)) = **id {
                            history_id = i32::try_from(id).ok();
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let Some(history_id) = history_id else {
        return Err(cx.unreadable(format!(
            "holds no history yet: its test map (block at byte {}) has no :history (Jepsen's version-0 files hold \
             the history only once the run ends{})",
            root.offset,
            stop.as_ref().map(|s| format!("; reading stopped at byte {}: {}", s.offset, s.reason)).unwrap_or_default()
        )));
    };
    let history = block(history_id, "the history")?;
    let chunks: Vec<(Block, i64)> = match history.ty {
        BIG_VECTOR => big_vector_chunks(&cx, bytes, history, &block)?,
        FRESSIAN => vec![(history, 0)],
        t => {
            return Err(cx.bad(
                history.offset,
                format!("block {history_id}"),
                "the history: a BigVector or Fressian block",
                format!("a {} block (type {t})", type_name(t)),
            ))
        }
    };
    // Each chunk has its own Fressian caches: read them in parallel, in
    // runs of contiguous chunks (about as much text per run as the EDN
    // reader parses per task, so that merging copies a few large parts,
    // not one per 16k ops). A chunk's ops are numbered from its BigVector
    // first index; that the first indices count the ops before each chunk
    // is checked after.
    let text_bytes: usize = chunks.iter().map(|(c, _)| c.data(bytes).len() * 3).sum();
    let runs = rayon::current_num_threads().max(text_bytes / RUN_TEXT).min(chunks.len().max(1));
    let per_run = chunks.len().div_ceil(runs).max(1);
    let parts: Vec<Result<(T, Vec<usize>), IngestError>> = chunks
        .par_chunks(per_run)
        .map(|run| {
            let mut part = start(run.iter().map(|(c, _)| c.data(bytes).len() * 3).sum());
            let mut text = Vec::new();
            let mut counts = Vec::with_capacity(run.len());
            for &(c, first) in run {
                text.clear();
                counts.push(chunk_ops(&cx, bytes, c, &mut text)?);
                parse(&mut part, &text, usize::try_from(first).unwrap_or(0))?;
            }
            Ok((part, counts))
        })
        .collect();
    let mut out = Vec::with_capacity(parts.len());
    let mut ops = 0usize;
    for (p, run) in parts.into_iter().zip(chunks.chunks(per_run)) {
        let (part, counts) = p?;
        for (&(c, first), n) in run.iter().zip(counts) {
            if first != ops as i64 {
                return Err(cx.bad(
                    history.data_offset(),
                    format!("BigVector block {history_id}"),
                    format!("{ops} as the first index of the chunk at byte {} (the ops before it)", c.offset),
                    format!("{first}"),
                ));
            }
            ops += n;
        }
        out.push(part);
    }
    if history.ty == BIG_VECTOR {
        let count = be_i64(&history.data(bytes)[..8]);
        if count != ops as i64 {
            return Err(cx.bad(
                history.data_offset(),
                format!("BigVector block {history_id}"),
                format!("{count} ops, its count"),
                format!("{ops} ops in its chunks"),
            ));
        }
    }
    // Jepsen rewrites the test map once the history writer has closed:
    // a root written after the history marks it complete.
    let complete = root.offset > history.offset;
    if !complete {
        let (offset, reason) = match &stop {
            Some(s) => (s.offset, s.reason.clone()),
            None => (
                bytes.len() as u64,
                "the file ends before Jepsen marked the history complete (the test map was not rewritten after \
                 the history; the run is still going, or crashed)"
                    .to_string(),
            ),
        };
        note.partial = Some(StorePartial { ops, offset, reason });
    } else if let Some(s) = &stop {
        note.notes
            .push(format!("the history is whole; what follows it is damaged from byte {} ({})", s.offset, s.reason));
    }
    if (index_block.offset as i64) != header_index && complete {
        note.notes.push(format!(
            "the header points at byte {header_index}, not at the newest whole index block (byte {})",
            index_block.offset
        ));
    }
    Ok(StoreParts { parts: out, ops, note })
}

/// A value's text (a string, or a tagged string such as a date-time).
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::Atom(crate::history::Atom::Str(s)) => Some(s.to_string()),
        Value::Atom(crate::history::Atom::Keyword(s)) => Some(s.to_string()),
        Value::Tagged(_, inner) => text_of(inner),
        _ => None,
    }
}

fn read_index(cx: &Ctx<'_>, bytes: &[u8], b: Block) -> Result<Index, IngestError> {
    let d = b.data(bytes);
    if d.len() < 4 || (d.len() - 4) % 12 != 0 {
        return Err(cx.bad(
            b.data_offset(),
            format!("index block at byte {}", b.offset),
            "a root id and 12-byte (id, offset) pairs",
            format!("{} bytes", d.len()),
        ));
    }
    let root = be_i32(&d[..4]);
    let blocks = d[4..].chunks_exact(12).map(|p| (be_i32(&p[..4]), be_i64(&p[4..]) as u64)).collect();
    Ok(Index { root, blocks })
}

/// The chunk blocks of a BigVector, checked against its first indices.
fn big_vector_chunks(
    cx: &Ctx<'_>,
    bytes: &[u8],
    b: Block,
    block: &dyn Fn(i32, &str) -> Result<Block, IngestError>,
) -> Result<Vec<(Block, i64)>, IngestError> {
    let d = b.data(bytes);
    let record = format!("BigVector block at byte {}", b.offset);
    if d.len() < 8 || (d.len() - 8) % 12 != 0 {
        return Err(cx.bad(
            b.data_offset(),
            record,
            "a count and 12-byte (index, block id) pairs",
            format!("{} bytes", d.len()),
        ));
    }
    let mut out = Vec::new();
    for p in d[8..].chunks_exact(12) {
        let id = be_i32(&p[8..]);
        let c = block(id, "a history chunk")?;
        if !matches!(c.ty, STREAM | FRESSIAN) {
            return Err(cx.bad(
                c.offset,
                format!("block {id}"),
                "a history chunk: a FressianStream or Fressian block",
                format!("a {} block", type_name(c.ty)),
            ));
        }
        out.push((c, be_i64(&p[..8])));
    }
    Ok(out)
}

/// One value of a Fressian or PartialMap block, as EDN.
fn decode_value(cx: &Ctx<'_>, bytes: &[u8], b: Block, lenient: bool) -> Result<Vec<u8>, IngestError> {
    let (data, base) = match b.ty {
        FRESSIAN => (b.data(bytes), b.data_offset()),
        PARTIAL_MAP if b.len as usize >= BLOCK_HEADER + 4 => (&b.data(bytes)[4..], b.data_offset() + 4),
        t => {
            return Err(cx.bad(
                b.offset,
                format!("block at byte {}", b.offset),
                "the test map: a Fressian or PartialMap block",
                format!("a {} block", type_name(t)),
            ))
        }
    };
    let mut d = Decoder::new(data, base);
    d.lenient = lenient;
    let mut out = Vec::new();
    d.value(&mut out).map_err(|e| cx.fressian(format!("{} block at byte {}", type_name(b.ty), b.offset), e))?;
    Ok(out)
}

/// Appends the ops of one history chunk to `out` as EDN lines; returns
/// their count.
fn chunk_ops(cx: &Ctx<'_>, bytes: &[u8], b: Block, out: &mut Vec<u8>) -> Result<usize, IngestError> {
    let data = b.data(bytes);
    let mut d = Decoder::new(data, b.data_offset());
    // Jepsen's Fressian is about a third the size of the EDN it reads as.
    out.reserve(data.len() * 3 + 64);
    let record = |n: usize| format!("{} block at byte {}, op {n} of the block", type_name(b.ty), b.offset);
    let mut n = 0usize;
    if b.ty == STREAM {
        while !d.at_end() {
            d.value(out).map_err(|e| cx.fressian(record(n), e))?;
            out.push(b'\n');
            n += 1;
        }
        return Ok(n);
    }
    // A Fressian block: nil (no op yet) or one list of ops.
    n = d.list_lines(out).map_err(|e| cx.fressian(record(0), e))?;
    if !d.at_end() {
        return Err(cx.bad(d.offset(), record(n), "the end of the block after the history", "more bytes"));
    }
    Ok(n)
}

/// Follows a store file that Jepsen is writing: each [`Follower::poll`]
/// reads what was appended since the last one and returns the ops of the
/// chunks sealed since, as EDN lines, in history order.
pub struct Follower {
    name: String,
    path: std::path::PathBuf,
    /// The file up to the end of the last whole block, then what follows.
    bytes: Vec<u8>,
    /// End of the last whole block.
    trusted: usize,
    blocks: Vec<Block>,
    /// Offset of the index block last read.
    index_at: u64,
    /// Chunks already handed over, and their ops.
    chunks: usize,
    /// Ops handed over.
    pub ops: usize,
    /// Whether the test map marks the history complete.
    pub complete: bool,
    /// Why the last poll stopped short of the end of the file.
    pub stop: Option<String>,
}

impl Follower {
    /// Bytes of the file read and trusted so far (the end of the last whole
    /// block).
    pub fn trusted(&self) -> usize {
        self.trusted
    }

    /// A follower of the store file at `path` (nothing read yet).
    pub fn new(path: &std::path::Path) -> Follower {
        Follower {
            name: path.display().to_string(),
            path: path.to_path_buf(),
            bytes: Vec::new(),
            trusted: 0,
            blocks: Vec::new(),
            index_at: 0,
            chunks: 0,
            ops: 0,
            complete: false,
            stop: None,
        }
    }

    /// Reads what was appended; returns the ops of newly sealed chunks
    /// (empty when none). Errors are those of [`read`].
    pub fn poll(&mut self) -> Result<Vec<u8>, IngestError> {
        use std::io::{Read, Seek, SeekFrom};
        let name = self.name.clone();
        let cx = Ctx { name: &name };
        let io = |source| IngestError::Io { path: name.clone(), source };
        let mut f = std::fs::File::open(&self.path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len() as usize;
        if len < self.bytes.len() {
            return Err(cx.unreadable(format!("shrank from {} to {len} bytes while being followed", self.bytes.len())));
        }
        let from = self.trusted;
        self.bytes.truncate(from);
        f.seek(SeekFrom::Start(from as u64)).map_err(io)?;
        f.take((len - from) as u64).read_to_end(&mut self.bytes).map_err(io)?;
        if self.bytes.len() < FILE_HEADER {
            return Ok(Vec::new());
        }
        if !is_store(&self.bytes) {
            return Err(cx.unreadable("is not a Jepsen store file: it does not begin with `JEPSEN`"));
        }
        let version = be_i32(&self.bytes[6..10]);
        if !(0..=1).contains(&version) {
            return Err(cx.bad(6, "", "format version 0 or 1 (jepsen.store.format)", format!("version {version}")));
        }
        let start = if self.trusted == 0 { FILE_HEADER } else { self.trusted };
        let before = self.blocks.len();
        self.stop = scan_from(&self.bytes, start, &mut self.blocks).map(|s| format!("byte {}: {}", s.offset, s.reason));
        if let Some(b) = self.blocks.last() {
            self.trusted = (b.offset + b.len) as usize;
        }
        let Some(index_block) = self.blocks[before..].iter().rev().find(|b| b.ty == INDEX).copied() else {
            return Ok(Vec::new());
        };
        if index_block.offset <= self.index_at {
            return Ok(Vec::new());
        }
        self.index_at = index_block.offset;
        let bytes = &self.bytes;
        let by_offset: rustc_hash::FxHashMap<u64, Block> = self.blocks.iter().map(|b| (b.offset, *b)).collect();
        let index = read_index(&cx, bytes, index_block)?;
        let block = |id: i32, what: &str| -> Result<Block, IngestError> {
            let off = *index.blocks.get(&id).ok_or_else(|| {
                cx.bad(index_block.offset, "the index", format!("{what} (block {id}) in the index"), "no such block")
            })?;
            by_offset.get(&off).copied().ok_or_else(|| cx.bad(off, format!("block {id}"), "a whole block", "none"))
        };
        let root = block(index.root, "the root test map")?;
        let test_edn = decode_value(&cx, bytes, root, true)?;
        let history_id = test_history_id(&test_edn);
        let Some(history_id) = history_id else { return Ok(Vec::new()) };
        let history = block(history_id, "the history")?;
        let chunks = match history.ty {
            BIG_VECTOR => big_vector_chunks(&cx, bytes, history, &block)?,
            FRESSIAN => vec![(history, 0)],
            _ => return Ok(Vec::new()),
        };
        self.complete = root.offset > history.offset;
        let mut out = Vec::new();
        // A version-0 history is one Fressian block, written once whole.
        let new =
            if history.ty == FRESSIAN && self.chunks > 0 { &[][..] } else { &chunks[self.chunks.min(chunks.len())..] };
        for &(c, _) in new {
            self.ops += chunk_ops(&cx, bytes, c, &mut out)?;
        }
        self.chunks = chunks.len();
        Ok(out)
    }
}

/// The block id the test map's `:history` names, from its EDN.
fn test_history_id(test_edn: &[u8]) -> Option<i32> {
    let v = super::edn::parse_values("test map", test_edn).ok()?;
    let Some((Value::Map(m), _)) = v.into_iter().next() else { return None };
    m.iter().find_map(|(k, v)| match (k, v) {
        (Value::Atom(crate::history::Atom::Keyword(k)), Value::Tagged(t, id))
            if &**k == "history" && &**t == "block-ref" =>
        {
            match **id {
                Value::Atom(crate::history::Atom::Int(id)) => i32::try_from(id).ok(),
                _ => None,
            }
        }
        _ => None,
    })
}
