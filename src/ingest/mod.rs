//! Ingest: reads a history (Jepsen `history.edn`, elle-cli JSON, dbcop
//! `history.bincode`, PolySI text, AWDIT's `test` format, or a directory of
//! Cobra client logs) into the columnar [`History`] model.
//!
//! The four polygraph- and weak-checker formats (dbcop, PolySI text, AWDIT
//! test, Cobra) describe
//! read-write register histories; each is mapped onto Elle's rw-register
//! micro-ops (`[:r k v]`, `[:w k v]`, a read of the initial state as
//! `[:r k nil]`) with one completion op per transaction and one process per
//! session, so they are analysed exactly like an EDN register history.
//!
//! Both readers are hand-written single-pass byte scanners rather than a
//! generic EDN/JSON library: a generic reader would allocate a value tree
//! (one heap object per keyword, vector and map, tens of millions for a large
//! history) and then walk it again, whereas these write straight into
//! [`crate::history::HistoryBuilder`] with no allocation per micro-op or list
//! element (the private `edn` module explains the details). They report every
//! malformed input as `file:line:column: expected X, found Y`, never panic on
//! any input, and never drop data silently: non-client ops are counted in
//! [`History::nonclient_ops`], unknown op fields are kept as extras. Files are
//! memory-mapped, and large EDN histories are parsed in parallel with a result
//! identical to a sequential parse.

mod awdit_test;
pub(crate) mod cobra;
pub(crate) mod cobra_log;
mod dbcop;
pub(crate) mod edn;
mod error;
mod fressian;
pub mod jepsen;
pub mod jepsen_store;
mod json;
mod mapped;
mod num;
pub mod op_value;
mod polysi_text;
mod repeat_reads;
mod shards;
mod stream;
mod values;

pub use error::IngestError;
pub use mapped::{map_edn, MappedEdn};
pub use stream::read_stream;
pub use values::{read_op_maps, read_op_maps_bytes, read_values, read_values_bytes, RawName, RawOpMap, ValueReader};

use crate::history::History;
use std::path::Path;

/// The syntax of a history file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// A directory of `*.log` files is Cobra; otherwise decide from the file
    /// extension (`.edn`, `.json`, `.bincode`, `.log`), else from the content.
    #[default]
    Auto,
    /// Jepsen EDN: op maps one after another, or one vector/list of them.
    Edn,
    /// elle-cli JSON: one array of op objects.
    Json,
    /// dbcop's `history.bincode` (bincode 1.x of dbcop's `History`), as
    /// produced by `dbcop run` and read by PolySI.
    Dbcop,
    /// PolySI's text format: one `r(key,value,session,txn)` or
    /// `w(key,value,session,txn)` per line.
    PolysiText,
    /// Cobra client logs: a directory with one binary `*.log` file per
    /// session (a single file is read as one session).
    Cobra,
    /// AWDIT's `test` format: sessions separated by lines of `=`,
    /// transactions by lines of `-`, events `r KEY VALUE` / `w KEY VALUE`.
    AwditTest,
    /// Jepsen's own store file `test.jepsen` (see [`jepsen_store`]): the
    /// history while a test runs, or after one crashed, possibly in part.
    JepsenStore,
}

/// The largest input read, in bytes: the columnar model addresses its arenas
/// with `u32` offsets. A larger file, stream or Cobra directory (all its logs
/// together) is an [`IngestError::TooLarge`], found before anything is read
/// where the size is known, and after at most this many bytes otherwise.
pub const MAX_INPUT_BYTES: u64 = u32::MAX as u64;

/// The largest EDN history file read: beyond [`MAX_INPUT_BYTES`] a file is
/// read only memory-mapped and in parallel chunks of at most a few tens of
/// MB (one op map starting each line, as Jepsen writes them), each
/// addressable with `u32` offsets; the columns they merge into must still
/// be (fewer than 4 billion ops, micro-ops and distinct list elements).
pub const MAX_MAPPED_EDN_BYTES: u64 = 1 << 40;

/// How to read a transaction that the input marks committed although one of
/// its events failed (dbcop's `success = 0` on an event).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FailedEvents {
    /// Read it as indeterminate (Elle's `:info`): its successful writes may
    /// or may not have taken effect, and its reads constrain nothing. A
    /// failed statement aborts a PostgreSQL-wire transaction (CockroachDB,
    /// PostgreSQL), whose `COMMIT` then answers `ROLLBACK`, while dbcop
    /// still records it as committed; under MySQL/Galera the transaction did
    /// commit without the failed statement. `:info` covers both.
    #[default]
    Indeterminate,
    /// dbcop's own reading: the transaction committed, without its failed
    /// events.
    AsCommitted,
}

/// Options for reading a history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// Transactions marked committed that hold failed events.
    pub failed_events: FailedEvents,
}

/// Reads the history in the file (or, for Cobra, the directory) at `path`;
/// `-` is standard input.
///
/// A directory is read as Cobra client logs when `format` is
/// [`Format::Auto`] or [`Format::Cobra`], and is an error otherwise. Only
/// regular files (or symbolic links to them) are read: a FIFO, a device or a
/// socket could block forever or never end, so it is refused from its
/// metadata, before it is opened; such input can be piped to standard input,
/// which is read up to [`MAX_INPUT_BYTES`]. A file is memory-mapped (falling
/// back to an ordinary, size-capped read where mapping fails) so that parsing
/// starts without a copy and parallel chunk readers fault pages in
/// concurrently. A UTF-8 byte order mark at the start of a text history is
/// skipped. An input with no operation, or only invocations, is an
/// [`IngestError::Empty`]. Errors name the path as given.
pub fn read_path(path: &Path, format: Format) -> Result<History, IngestError> {
    read_path_with(path, format, ReadOptions::default())
}

/// [`read_path`] with options.
pub fn read_path_with(path: &Path, format: Format, opts: ReadOptions) -> Result<History, IngestError> {
    if path.as_os_str() == "-" {
        return stream::read_stdin(format, opts);
    }
    let name = path.display().to_string();
    let io = |source| IngestError::Io { path: name.clone(), source };
    // `metadata` follows symbolic links and does not open the file: opening
    // a FIFO blocks until a writer appears.
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        // A Jepsen run (or test) directory: its history.edn, before any
        // Cobra reading of the jepsen.log beside it.
        if format == Format::JepsenStore {
            if let Some(store) = jepsen::store_file(path, jepsen_store::FILE_NAME) {
                return read_path_with(&store, format, opts);
            }
        }
        if format != Format::Cobra {
            if let Some(history) = jepsen::store_history(path) {
                return read_path_with(&history, format, opts);
            }
        }
        if matches!(format, Format::Auto | Format::Edn) {
            if let Some(found) = shards::find(path)? {
                return mapped::read_shards(&name, &found);
            }
        }
        if format == Format::Cobra {
            return cobra::read_dir(path).and_then(|h| require_completions(&name, h));
        }
        if format == Format::Auto {
            return match cobra::read_dir(path) {
                Err(IngestError::Unreadable { path, reason }) if reason.contains("without any `*.log`") => {
                    Err(IngestError::Unreadable {
                        path,
                        reason: format!(
                            "holds no Jepsen history ({}, directly or in `latest/`): {reason}",
                            jepsen::STORE_FILES.join(", ")
                        ),
                    })
                }
                r => r.and_then(|h| require_completions(&name, h)),
            };
        }
        return Err(IngestError::Unreadable {
            path: name,
            reason: "is a directory without a Jepsen history.edn (or history.txt, or a `latest` run holding one); \
                     only those and Cobra histories (a directory of *.log files) are read from a directory"
                .into(),
        });
    }
    regular_file(&name, &meta)?;
    // Jepsen's store file by its name, even before its magic is written.
    let format = match format {
        Format::Auto if path.extension().is_some_and(|e| e == "jepsen") => Format::JepsenStore,
        f => f,
    };
    let large = meta.len() > MAX_INPUT_BYTES;
    if meta.len() > MAX_MAPPED_EDN_BYTES || (large && !matches!(format, Format::Auto | Format::Edn)) {
        let limit = if matches!(format, Format::Auto | Format::Edn) { MAX_MAPPED_EDN_BYTES } else { MAX_INPUT_BYTES };
        return Err(IngestError::TooLarge { source_name: name, len: meta.len(), limit });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    // The path may have been replaced between the two looks.
    let meta = file.metadata().map_err(io)?;
    regular_file(&name, &meta)?;
    if meta.len() > 0 {
        // SAFETY: the map is only read, and only during this call. As with
        // any memory map, another process truncating or rewriting the file
        // while it is being read is outside our control; history files are
        // written once by Jepsen before they are checked.
        if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
            #[cfg(unix)]
            {
                let _ = map.advise(memmap2::Advice::WillNeed);
            }
            if format == Format::JepsenStore
                || (matches!(format, Format::Auto | Format::Edn) && jepsen_store::is_store(&map))
            {
                return read_store(&name, &map, opts);
            }
            if jepsen::is_gzip(&map)
                || jepsen::inner_name(&name) != name
                || (matches!(format, Format::Auto | Format::Edn) && jepsen::looks_like_history_txt(&map))
            {
                check_size(&name, map.len())?;
                return read_bytes_with(&name, &map, format, opts);
            }
            let (bytes, format) = prepare(&name, &map, format);
            if format != Format::Edn {
                check_size(&name, map.len())?;
                return read_resolved(&name, bytes, format, opts);
            }
            // Offsets into `bytes` are offsets into the map plus `skip` (a
            // byte order mark).
            let skip = bytes.as_ptr() as usize - map.as_ptr() as usize;
            let release = |from: usize, to: usize| release_pages(&map, skip + from, skip + to);
            let chunks = match edn::parse_chunks(&name, bytes, Some(&release)) {
                Ok(chunks) => chunks,
                Err(e) => return Err(other_workload(&name, bytes, hint_other_format(e, bytes, Format::Edn))),
            };
            if chunks.iter().all(|c| c.mop_count() == 0) {
                if let Some(reason) = jepsen::non_transactional(bytes) {
                    return Err(IngestError::Unreadable { path: name, reason });
                }
            }
            drop(map);
            return require_completions(&name, edn::merge(&name, chunks)?);
        }
    }
    let bytes = read_capped(&name, file, MAX_INPUT_BYTES)?;
    read_bytes_with(&name, &bytes, format, opts)
}

/// Reads EDN op maps (ops a distributed run echoes) into a history.
pub fn parse_edn(source: &str, bytes: &[u8]) -> Result<History, IngestError> {
    edn::parse(source, bytes)
}

/// Gives back the resident pages of `map[from..to]` (whole pages inside it),
/// which have been read: `MADV_DONTNEED` on a read-only file map drops the
/// pages from this process, and touching them again reads the file again,
/// so the bytes seen never change. Where the advice fails nothing changes.
fn release_pages(map: &memmap2::Mmap, from: usize, to: usize) {
    // Whole 64 KiB blocks: page-aligned for every page size up to that (the
    // map itself starts on a page boundary).
    const ALIGN: usize = 64 << 10;
    let start = from.div_ceil(ALIGN) * ALIGN;
    let end = to.min(map.len()) / ALIGN * ALIGN;
    if end > start {
        #[cfg(unix)]
        // SAFETY: the map is private and read-only, so dropping its pages
        // loses nothing: the kernel refills them from the file on access.
        unsafe {
            let _ = map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start);
        }
    }
}

/// Reads a history from a stream (standard input, a pipe) of at most
/// `max_bytes` bytes: a longer stream is an [`IngestError::TooLarge`] once
/// `max_bytes + 1` bytes have been read, so an endless stream cannot exhaust
/// memory. `source_name` is used as in [`read_bytes`]; the format is decided
/// from the content when `format` is [`Format::Auto`].
pub fn read_reader(
    source_name: &str,
    reader: impl std::io::Read,
    format: Format,
    max_bytes: u64,
) -> Result<History, IngestError> {
    let bytes = read_capped(source_name, reader, max_bytes)?;
    read_bytes(source_name, &bytes, format)
}

/// Reads all of `reader`, failing once more than `max_bytes` have been read.
pub(crate) fn read_capped(
    source_name: &str,
    reader: impl std::io::Read,
    max_bytes: u64,
) -> Result<Vec<u8>, IngestError> {
    use std::io::Read;
    let max_bytes = max_bytes.min(MAX_INPUT_BYTES);
    let mut bytes = Vec::new();
    reader
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| IngestError::Io { path: source_name.to_string(), source })?;
    if bytes.len() as u64 > max_bytes {
        return Err(IngestError::TooLarge {
            source_name: source_name.to_string(),
            len: bytes.len() as u64,
            limit: max_bytes,
        });
    }
    Ok(bytes)
}

/// Refuses anything but a regular file, naming what it is.
pub(crate) fn regular_file(name: &str, meta: &std::fs::Metadata) -> Result<(), IngestError> {
    if meta.is_file() {
        return Ok(());
    }
    let ft = meta.file_type();
    #[allow(unused_mut)]
    let mut what = if ft.is_dir() { "a directory" } else { "not a regular file" };
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            what = "a FIFO (named pipe)";
        } else if ft.is_char_device() {
            what = "a character device";
        } else if ft.is_block_device() {
            what = "a block device";
        } else if ft.is_socket() {
            what = "a socket";
        }
    }
    Err(IngestError::Unreadable {
        path: name.to_string(),
        reason: format!(
            "is {what}, not a regular file; only regular files are read (it could block or never end): \
             pipe it to standard input as `-` instead, which is read up to {MAX_INPUT_BYTES} bytes"
        ),
    })
}

/// Reads a history from `bytes`; `source_name` is used in messages and
/// stored in [`History::source`], and its extension guides [`Format::Auto`].
/// A UTF-8 byte order mark before a text history is skipped, and an input
/// with no operation, or only invocations, is an [`IngestError::Empty`].
pub fn read_bytes(source_name: &str, bytes: &[u8], format: Format) -> Result<History, IngestError> {
    read_bytes_with(source_name, bytes, format, ReadOptions::default())
}

/// [`read_bytes`] with options.
pub fn read_bytes_with(
    source_name: &str,
    bytes: &[u8],
    format: Format,
    opts: ReadOptions,
) -> Result<History, IngestError> {
    check_size(source_name, bytes.len())?;
    if format == Format::JepsenStore || (matches!(format, Format::Auto | Format::Edn) && jepsen_store::is_store(bytes))
    {
        return read_store(source_name, bytes, opts);
    }
    let inner = jepsen::inner_name(source_name);
    if jepsen::is_gzip(bytes) || inner != source_name {
        let plain = jepsen::gunzip(source_name, bytes, MAX_INPUT_BYTES)?;
        return read_plain(source_name, inner, &plain, format, opts);
    }
    read_plain(source_name, source_name, bytes, format, opts)
}

/// Reads a Jepsen store file (`test.jepsen`): its history (whole, or the
/// sealed part of it, see [`jepsen_store`]) through the EDN reader, with the
/// test's top level and any partial read recorded in [`History::store`].
///
/// Runs of chunks are decoded and parsed in parallel, each chunk parsed
/// while its text is cache-warm ([`jepsen_store::read_with`]); an input
/// this path cannot take whole (an error, or no micro-op at all) is read
/// again through the EDN text of the whole history, whose reader gives the
/// authoritative message.
fn read_store(source_name: &str, bytes: &[u8], opts: ReadOptions) -> Result<History, IngestError> {
    use rayon::prelude::*;
    let parsed = jepsen_store::read_with(
        source_name,
        bytes,
        |text_bytes| (crate::history::HistoryBuilder::with_capacity_for(source_name, text_bytes), Vec::new()),
        |part, text, before| edn::parse_op_lines_into(source_name, part, text, before + 1),
    );
    if let Ok(parts) = parsed {
        if parts.ops > 0 {
            let mut builders: Vec<_> = parts.parts.into_iter().map(|(b, _)| b).collect();
            builders.par_iter_mut().for_each(|b| drop(b.share_lists()));
            let h = edn::merge(source_name, builders)?;
            if !h.mops.is_empty() {
                let mut h = require_completions(source_name, h)?;
                h.store = Some(Box::new(parts.note));
                return Ok(h);
            }
        }
    }
    read_store_text(source_name, bytes, opts)
}

/// [`read_store`] through the EDN text of the whole history.
fn read_store_text(source_name: &str, bytes: &[u8], opts: ReadOptions) -> Result<History, IngestError> {
    let r = jepsen_store::read(source_name, bytes)?;
    if r.ops == 0 {
        let why = match &r.note.partial {
            Some(p) => format!(": reading stopped at byte {}: {}", p.offset, p.reason),
            None => String::new(),
        };
        return Err(IngestError::Empty {
            source_name: source_name.to_string(),
            reason: format!("no op of its history is sealed yet (a chunk is sealed every 16,384 ops){why}"),
        });
    }
    let mut h = read_resolved(source_name, &r.edn, Format::Edn, opts).map_err(|e| match e {
        IngestError::Syntax { source_name, line, expected, found, .. } => IngestError::Unreadable {
            path: source_name,
            reason: format!(
                "op {line} of its history (as the EDN op map Jepsen prints): expected {expected}, found {found}"
            ),
        },
        e => e,
    })?;
    h.store = Some(Box::new(r.note));
    Ok(h)
}

/// Reads uncompressed `bytes` named `source_name`, deciding the format by
/// `detect_name` (the name without `.gz`); Jepsen's `history.txt` is read
/// as the EDN it prints.
fn read_plain(
    source_name: &str,
    detect_name: &str,
    bytes: &[u8],
    format: Format,
    opts: ReadOptions,
) -> Result<History, IngestError> {
    check_size(source_name, bytes.len())?;
    if matches!(format, Format::Auto | Format::Edn) && jepsen::looks_like_history_txt(bytes) {
        let edn = jepsen::history_txt_to_edn(source_name, bytes)?;
        check_size(source_name, edn.len())?;
        return read_resolved(source_name, &edn, Format::Edn, opts);
    }
    let format = detect(detect_name, bytes, format);
    let (bytes, format) = prepare(source_name, bytes, format);
    read_resolved(source_name, bytes, format, opts)
}

/// A syntax error, or a history without a single micro-op, of an input
/// that is another Jepsen workload's history becomes a message naming that
/// workload (see [`jepsen::non_transactional`]).
fn other_workload(source_name: &str, bytes: &[u8], e: IngestError) -> IngestError {
    let syntax = match &e {
        IngestError::Syntax { .. } => true,
        IngestError::OtherFormat { inner, .. } => matches!(**inner, IngestError::Syntax { .. }),
        _ => false,
    };
    match jepsen::non_transactional(bytes) {
        Some(reason) if syntax => IngestError::Unreadable { path: source_name.to_string(), reason },
        _ => e,
    }
}

/// The format `bytes` (named `source_name`) would be read as with
/// `format`: `format` itself unless it is [`Format::Auto`], else what the
/// extension or the content says (see [`read_bytes`]).
pub fn detect(source_name: &str, bytes: &[u8], format: Format) -> Format {
    prepare(source_name, bytes, format).1
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Resolves the format, and skips a byte order mark before a text format.
/// A binary format's bytes are kept whole: there the mark would be data.
fn prepare<'a>(source_name: &str, bytes: &'a [u8], format: Format) -> (&'a [u8], Format) {
    let text = bytes.strip_prefix(BOM);
    let format = match (format, text) {
        (Format::Auto, Some(text)) => match resolve(source_name, text, format) {
            Format::Dbcop => resolve(source_name, bytes, format),
            f => f,
        },
        _ => resolve(source_name, bytes, format),
    };
    match (format, text) {
        (Format::Edn | Format::Json | Format::PolysiText | Format::AwditTest | Format::Auto, Some(text)) => {
            (text, format)
        }
        _ => (bytes, format),
    }
}

/// Parses `bytes` in the resolved `format`.
fn read_resolved(source_name: &str, bytes: &[u8], format: Format, opts: ReadOptions) -> Result<History, IngestError> {
    let h = match format {
        Format::Json => json::parse(source_name, bytes),
        Format::Dbcop => dbcop::parse(source_name, bytes, opts.failed_events),
        Format::PolysiText => polysi_text::parse(source_name, bytes),
        Format::Cobra => cobra::parse(source_name, bytes),
        Format::AwditTest => awdit_test::parse(source_name, bytes),
        Format::Edn | Format::Auto => edn::parse(source_name, bytes),
        Format::JepsenStore => return read_store(source_name, bytes, opts),
    }
    .map_err(|e| other_workload(source_name, bytes, hint_other_format(e, bytes, format)))?;
    if h.mops.is_empty() && matches!(format, Format::Edn | Format::Auto) {
        if let Some(reason) = jepsen::non_transactional(bytes) {
            return Err(IngestError::Unreadable { path: source_name.to_string(), reason });
        }
    }
    require_completions(source_name, h)
}

/// Adds a hint to a syntax error of the EDN or JSON reader when the content
/// looks like the other of the two (a JSON history named `.edn`, say).
fn hint_other_format(e: IngestError, bytes: &[u8], format: Format) -> IngestError {
    if !matches!(e, IngestError::Syntax { .. }) {
        return e;
    }
    match (format, sniff(bytes)) {
        (Format::Edn | Format::Auto, Format::Json) => {
            IngestError::OtherFormat { inner: Box::new(e), looks_like: "elle-cli JSON", flag: "json" }
        }
        (Format::Json, Format::Edn) if looks_like_edn(bytes) => {
            IngestError::OtherFormat { inner: Box::new(e), looks_like: "Jepsen EDN", flag: "edn" }
        }
        _ => e,
    }
}

/// True when the first non-blank characters are `{:`, `[{:`, `({:` or `;`.
fn looks_like_edn(bytes: &[u8]) -> bool {
    let mut it = bytes.iter().copied().filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b','));
    match it.next() {
        Some(b';') => true,
        Some(b'{') => it.next() == Some(b':'),
        Some(b'[' | b'(') => it.next() == Some(b'{') && it.next() == Some(b':'),
        _ => false,
    }
}

/// An input with no operation at all, or whose client operations are all
/// invocations, holds nothing to check (and is most likely truncated or the
/// wrong file): it is refused rather than judged. An accepted history's
/// invocations share their completions' micro-ops
/// ([`History::share_invocation_mops`]).
fn require_completions(source_name: &str, mut h: History) -> Result<History, IngestError> {
    let completions = h.ops.iter().filter(|op| !op.is_invoke()).count();
    completions_required(source_name, h.ops.len(), completions, h.nonclient_ops)?;
    h.transaction_order = crate::history::transaction_order::load(&h, None)
        .map_err(|reason| IngestError::Invalid { reason })?
        .map(Box::new);
    h.share_invocation_mops();
    Ok(h)
}

/// Refuses a history with client ops but no completion, or with no op at
/// all (a distributed run counts them over its windows).
pub fn completions_required(
    source_name: &str,
    ops: usize,
    completions: usize,
    nonclient: usize,
) -> Result<(), IngestError> {
    // Non-client ops only (ops without an integer `:process`) are a history
    // Elle reads, finding an empty transaction graph: not refused.
    if completions > 0 || (ops == 0 && nonclient > 0) {
        return Ok(());
    }
    let reason = match ops {
        0 => "no operations: the history is empty".to_string(),
        n => format!(
            "{n} invocation{} but no completion (:ok, :fail or :info): nothing to check (is the history truncated?)",
            if n == 1 { "" } else { "s" }
        ),
    };
    Err(IngestError::Empty { source_name: source_name.to_string(), reason })
}

/// Inputs are addressed with 32-bit offsets.
fn check_size(source_name: &str, len: usize) -> Result<(), IngestError> {
    if len as u64 > MAX_INPUT_BYTES {
        return Err(IngestError::TooLarge {
            source_name: source_name.to_string(),
            len: len as u64,
            limit: MAX_INPUT_BYTES,
        });
    }
    Ok(())
}

/// Decides the format of an input: an explicit choice wins; otherwise the
/// extension (`.json`, `.edn`, `.bincode`, `.log` for one Cobra log, any
/// case), otherwise a sniff of
/// the first bytes. Anything unrecognised is read as EDN, whose reader then
/// reports exactly where the input goes wrong.
fn resolve(source_name: &str, bytes: &[u8], format: Format) -> Format {
    if format != Format::Auto {
        return format;
    }
    if jepsen_store::is_store(bytes) {
        return Format::JepsenStore;
    }
    let ext = Path::new(source_name).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => Format::Json,
        Some("edn") => Format::Edn,
        Some("bincode") => Format::Dbcop,
        Some("log") => Format::Cobra,
        Some("jepsen") => Format::JepsenStore,
        _ => sniff(bytes),
    }
}

/// Guesses the format from the content: a plausible dbcop header (five
/// `u64`s, then two short UTF-8 strings) is dbcop; text whose first
/// non-blank characters are `r(` or `w(` is PolySI text, `r `, `w ` or
/// `=` AWDIT's `test` format; `{:`/`[{:`/`({:` or
/// a `;`/`#` start is EDN, `{"` or `[{"` is JSON.
fn sniff(bytes: &[u8]) -> Format {
    if dbcop::looks_like(bytes) {
        return Format::Dbcop;
    }
    let text = bytes.iter().position(|b| !b.is_ascii_whitespace()).map_or(&[][..], |i| &bytes[i..]);
    if text.len() >= 2 && matches!(text[0], b'r' | b'w') && text[1] == b'(' {
        return Format::PolysiText;
    }
    if text.len() >= 2 && matches!(text[0], b'r' | b'w') && matches!(text[1], b' ' | b'\t')
        || text.first() == Some(&b'=')
    {
        return Format::AwditTest;
    }
    let mut it = bytes.iter().copied().filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    match it.next() {
        Some(b'{') => match it.next() {
            Some(b'"') => Format::Json,
            _ => Format::Edn,
        },
        Some(b'[') => match (it.next(), it.next()) {
            (Some(b'{'), Some(b'"')) => Format::Json,
            (Some(b']'), None) => Format::Json,
            _ => Format::Edn,
        },
        _ => Format::Edn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Atom, MopValue};

    #[test]
    fn auto_detects_by_extension_then_content() {
        let edn = b"{:type :ok, :process 0, :value [[:r \"k\" [1]]]}";
        let json = br#"[{"type": "ok", "process": 0, "value": [["r", "k", [1]]]}]"#;
        assert_eq!(resolve("a.JSON", edn, Format::Auto), Format::Json);
        assert_eq!(resolve("a.edn", json, Format::Auto), Format::Edn);
        assert_eq!(resolve("history", edn, Format::Auto), Format::Edn);
        assert_eq!(resolve("history", json, Format::Auto), Format::Json);
        assert_eq!(resolve("history", b"\n [ {:type :ok}]", Format::Auto), Format::Edn);
        assert_eq!(resolve("history", b"({:type :ok})", Format::Auto), Format::Edn);
        assert_eq!(resolve("history", b"{\"type\": \"ok\"}", Format::Auto), Format::Json);
        assert_eq!(resolve("x.json", json, Format::Edn), Format::Edn);
        assert_eq!(resolve("galera.txt", b"\n r(1,0,0,0)\nw(1,1,0,0)\n", Format::Auto), Format::PolysiText);
        assert_eq!(resolve("h", b"w(1,1,0,0)", Format::Auto), Format::PolysiText);
        assert_eq!(resolve("h", b"r(:x", Format::Auto), Format::PolysiText);
        assert_eq!(resolve("h", b"[:r :x]", Format::Auto), Format::Edn);
        assert_eq!(resolve("h.txt", b"w 0 0\n=====\nr 0 0\n", Format::Auto), Format::AwditTest);
        assert_eq!(resolve("h.txt", b"\n=====\nr 0 0\n", Format::Auto), Format::AwditTest);
        let dbcop = crate::gen::dbcop::encode_events(&[vec![(vec![(true, 1, 1, true)], true)]]);
        assert_eq!(resolve("history", &dbcop, Format::Auto), Format::Dbcop);
        assert_eq!(resolve("h.BINCODE", b"", Format::Auto), Format::Dbcop);
        assert!(read_bytes("history", &dbcop, Format::Auto).is_ok_and(|h| h.mops.len() == 1));
        for input in [&edn[..], &json[..]] {
            let h = match read_bytes("history", input, Format::Auto) {
                Ok(h) => h,
                Err(e) => panic!("{e}"),
            };
            let m = h.mops_of(&h.ops[0]);
            assert_eq!(h.key(m[0].key), &Atom::Str("k".into()));
            assert!(matches!(m[0].value, MopValue::List { len: 1, .. }));
        }
    }

    /// A file large enough to be read in parallel chunks, its pages given
    /// back as they are read (and some touched again: keys and error
    /// locations point into the map), gives exactly the history read from
    /// the same bytes in memory; so does it after a byte order mark, which
    /// shifts every offset given back.
    #[test]
    fn mapped_files_given_back_as_read_parse_like_bytes_in_memory() {
        let text = crate::gen::testkit::sized_list_append(40 << 20, 11);
        let path = std::env::temp_dir().join(format!("isolde-ingest-release-{}.edn", std::process::id()));
        for bom in ["", "\u{feff}"] {
            let bytes = format!("{bom}{text}");
            assert!(std::fs::write(&path, &bytes).is_ok());
            let mapped = read_path(&path, Format::Auto).map(|h| format!("{h:?}"));
            let name = path.display().to_string();
            let memory = read_bytes(&name, bytes.as_bytes(), Format::Auto).map(|h| format!("{h:?}"));
            assert!(mapped.is_ok(), "{:?}", mapped.err());
            assert!(mapped.ok() == memory.ok(), "bom {bom:?}: the mapped file reads differently");
        }
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn read_path_maps_files_and_names_them_in_errors() {
        let dir = std::env::temp_dir().join(format!("isolde-ingest-test-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let good = dir.join("h.edn");
        let bad = dir.join("bad.edn");
        let empty = dir.join("empty.edn");
        let written = std::fs::write(
            &good,
            "\u{feff}{:type :invoke :process 0 :value [[:append :x 1]]}\n{:type :ok :process 0 :value [[:append :x 1]]}\n",
        )
            .and_then(|()| {
                std::fs::write(&bad, "{:type :ok :process 0}\n{:type :ok, :process 0, :value [[:incr :x 1]]}\n")
            })
            .and_then(|()| std::fs::write(&empty, ""));
        assert!(written.is_ok());
        let h = read_path(&good, Format::Auto);
        assert!(h.as_ref().is_ok_and(|h| h.ops.len() == 2 && h.source.ends_with("h.edn")));
        let e = read_path(&bad, Format::Auto).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.ends_with("bad.edn:2:34: expected micro-op function :append, :r, :w, or (closed-predicate) :insert, :delete or :rp, found :incr"), "{e}");
        let e = read_path(&empty, Format::Auto).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.ends_with("empty.edn: no operations: the history is empty"), "{e}");
        let e = read_path(&dir, Format::Auto).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.ends_with(": a directory without any `*.log` file (Cobra client logs)"), "{e}");
        assert!(e.contains(": holds no Jepsen history (history.edn, "), "{e}");
        let e = read_path(&dir, Format::Json).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.ends_with(
                ": is a directory without a Jepsen history.edn (or history.txt, or a `latest` run holding one); \
                 only those and Cobra histories (a directory of *.log files) are read from a directory"
            ),
            "{e}"
        );
        let missing = dir.join("missing.edn");
        let e = read_path(&missing, Format::Auto).err();
        assert!(matches!(&e, Some(IngestError::Io { path, .. }) if path.ends_with("missing.edn")));
        assert!(e.map(|e| e.to_string()).unwrap_or_default().contains("missing.edn: "));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn err_of(r: Result<History, IngestError>) -> String {
        match r {
            Ok(h) => panic!("read {} ops", h.ops.len()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn byte_order_mark_is_skipped_before_text_formats() {
        let edn = "\u{feff}{:type :ok, :process 0, :value [[:r :x nil]]}";
        let json = "\u{feff}[{\"type\": \"ok\", \"process\": 0, \"value\": [[\"r\", \"x\", null]]}]";
        let text = "\u{feff}w(1,1,0,0)\n";
        for (name, input) in [("h", edn), ("h.edn", edn), ("h", json), ("h.json", json), ("h", text)] {
            let h = read_bytes(name, input.as_bytes(), Format::Auto);
            assert!(h.is_ok_and(|h| h.ops.len() == 1), "{name}: {input}");
        }
        // Columns on the first line are counted after the mark.
        let e = err_of(read_bytes(
            "h.edn",
            "\u{feff}{:type :ok, :process 0, :value [[:incr :x 1]]}".as_bytes(),
            Format::Auto,
        ));
        assert!(e.starts_with("h.edn:1:34: "), "{e}");
    }

    #[test]
    fn json_in_edn_file_and_edn_in_json_file_hint_the_format() {
        let json = br#"[{"type": "ok", "process": 0, "value": [["append", "x", 1]]}]"#;
        let edn = b"{:type :ok, :process 0, :value [[:append :x 1]]}\n";
        let e = err_of(read_bytes("h.edn", json, Format::Auto));
        assert!(e.ends_with("; the content looks like elle-cli JSON: try `--input-format json`"), "{e}");
        let e = err_of(read_bytes("h.json", edn, Format::Auto));
        assert!(e.ends_with("; the content looks like Jepsen EDN: try `--input-format edn`"), "{e}");
        // A plain syntax error gets no hint.
        let e = err_of(read_bytes("h.edn", b"{:type :ok, :process 0, :value [[:incr :x 1]]}", Format::Auto));
        assert!(!e.contains("--input-format"), "{e}");
    }

    #[test]
    fn inputs_without_completions_are_refused() {
        let e = err_of(read_bytes("h.edn", b"", Format::Auto));
        assert_eq!(e, "h.edn: no operations: the history is empty");
        let e = err_of(read_bytes("h.edn", b" \n; only a comment\n", Format::Auto));
        assert_eq!(e, "h.edn: no operations: the history is empty");
        let e = err_of(read_bytes("h.json", b"[]", Format::Auto));
        assert_eq!(e, "h.json: no operations: the history is empty");
        let e = err_of(read_bytes("h.txt", b"\n", Format::PolysiText));
        assert_eq!(e, "h.txt: no operations: the history is empty");
        let invokes =
            b"{:type :invoke, :process 0, :value [[:r :x nil]]}\n{:type :invoke, :process 1, :value [[:r :x nil]]}";
        let e = err_of(read_bytes("h.edn", invokes, Format::Auto));
        assert!(e.starts_with("h.edn: 2 invocations but no completion"), "{e}");
        // Only non-client ops: Elle's empty transaction graph, not refused.
        assert!(read_bytes("h.edn", b"{:type :info, :process :nemesis, :f :kill}", Format::Auto).is_ok());
        // One completion is enough.
        let one = b"{:type :invoke, :process 0, :value [[:r :x nil]]}\n{:type :fail, :process 0, :value [[:r :x nil]]}";
        assert!(read_bytes("h.edn", one, Format::Auto).is_ok());
    }

    #[test]
    fn streams_are_read_up_to_the_cap() {
        let edn = b"{:type :ok, :process 0, :value [[:r :x nil]]}";
        assert!(read_reader("<stdin>", &edn[..], Format::Auto, 1000).is_ok_and(|h| h.ops.len() == 1));
        let e = err_of(read_reader("<stdin>", &edn[..], Format::Auto, 10));
        assert_eq!(e, "<stdin>: input of 11 bytes or more is larger than the limit of 10 bytes");
        // An endless stream stops at the cap.
        let e = err_of(read_reader("<stdin>", std::io::repeat(b' '), Format::Auto, 1 << 20));
        assert!(e.contains("larger than the limit of 1048576 bytes"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn non_regular_files_are_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("isolde-ingest-special-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(std::fs::create_dir_all(dir.join("cobra")).is_ok());
        let fifo = dir.join("fifo.edn");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        let e = err_of(read_path(&fifo, Format::Auto));
        assert!(e.contains("fifo.edn: is a FIFO (named pipe), not a regular file"), "{e}");
        let e = err_of(read_path(Path::new("/dev/zero"), Format::Auto));
        assert!(e.starts_with("/dev/zero: is a character device, not a regular file"), "{e}");
        let link = dir.join("zero.edn");
        assert!(std::os::unix::fs::symlink("/dev/zero", &link).is_ok());
        let e = err_of(read_path(&link, Format::Auto));
        assert!(e.contains("zero.edn: is a character device"), "{e}");
        // Inside a Cobra directory, too.
        let log = [cobra::encode::sc(b'S', 1), cobra::encode::w(1, 1, 1), cobra::encode::sc(b'C', 1)].concat();
        assert!(std::fs::write(dir.join("cobra/T1.log"), log).is_ok());
        assert!(read_path(&dir.join("cobra"), Format::Auto).is_ok());
        assert!(std::os::unix::fs::symlink("/dev/zero", dir.join("cobra/T2.log")).is_ok());
        let e = err_of(read_path(&dir.join("cobra"), Format::Auto));
        assert!(e.contains("T2.log: is a character device"), "{e}");
        assert!(std::fs::remove_file(dir.join("cobra/T2.log")).is_ok());
        let made = std::process::Command::new("mkfifo").arg(dir.join("cobra/T3.log")).status();
        assert!(made.is_ok_and(|s| s.success()));
        let e = err_of(read_path(&dir.join("cobra"), Format::Auto));
        assert!(e.contains("T3.log: is a FIFO (named pipe)"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn viper_json_logs_are_refused_by_name() {
        let viper = b"{\"value\": [[\"r\", 1, 0, false], [\"w\", 1, 5, true]], \"isInitial\": false}\n";
        let e = err_of(read_bytes("J1.log", viper, Format::Auto));
        assert!(e.starts_with("J1.log: is a Viper JSON log (one JSON transaction per line)"), "{e}");
        assert!(e.contains("not supported"), "{e}");
        let dir = std::env::temp_dir().join(format!("isolde-ingest-viper-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        assert!(std::fs::write(dir.join("J0.log"), viper).is_ok());
        let e = err_of(read_path(&dir, Format::Auto));
        assert!(e.contains("J0.log: is a Viper JSON log"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Generates a ~90 MB one-op-per-line EDN list-append history (gen's
    /// generator, see `gen::testkit::sized_list_append`: list reads of up to
    /// ~100 integers), parses it with `read_path`
    /// and prints the throughput (first and best of 7), then the sequential
    /// EDN and the JSON readers' throughput on the same history. Run with
    /// `cargo test --release -- --ignored --nocapture parse_throughput`.
    #[test]
    #[ignore]
    fn parse_throughput() {
        let path = std::env::temp_dir().join("isolde-ingest-bench-90mb.edn");
        if std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) < 90_000_000 {
            let text = crate::gen::testkit::sized_list_append(90_000_000, 42);
            assert!(std::fs::write(&path, text).is_ok());
        }
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64;
        let mb = len / 1e6;
        let time = |f: &dyn Fn() -> Result<History, IngestError>| {
            let t = std::time::Instant::now();
            let h = f();
            let dt = t.elapsed().as_secs_f64();
            match h {
                Ok(h) => (dt, h.ops.len() + h.nonclient_ops),
                Err(e) => panic!("{e}"),
            }
        };
        let runs: Vec<(f64, usize)> = (0..7).map(|_| time(&|| read_path(&path, Format::Auto))).collect();
        let first = runs[0].0;
        let best = runs.iter().map(|r| r.0).fold(f64::MAX, f64::min);
        let ops = runs[0].1;
        let bytes = std::fs::read(&path).unwrap_or_default();
        let seq = (0..3).map(|_| time(&|| edn::parse_sequential("bench", &bytes)).0).fold(f64::MAX, f64::min);
        println!(
            "EDN {mb:.1} MB ({ops} ops, {:.0} bytes/op) on {} threads: best {best:.3} s = {:.0} MB/s (first run {first:.3} s); \
             sequential {seq:.3} s = {:.0} MB/s",
            len / ops as f64,
            rayon::current_num_threads(),
            mb / best,
            mb / seq,
        );
        drop(bytes);
        let edn = crate::gen::testkit::sized_list_append(90_000_000, 42);
        let json = match crate::gen::json::edn_to_json(&edn) {
            Ok(json) => json,
            Err(e) => panic!("{e}"),
        };
        drop(edn);
        let jmb = json.len() as f64 / 1e6;
        let jt = (0..3)
            .map(|_| time(&|| read_bytes("bench.json", json.as_bytes(), Format::Auto)).0)
            .fold(f64::MAX, f64::min);
        println!("JSON {jmb:.1} MB: best {jt:.3} s = {:.0} MB/s", jmb / jt);
    }
}
