//! Generic reading of EDN and JSON histories into [`Value`]s, one per op,
//! for the checkers whose ops the columnar [`crate::history::History`] does
//! not model (Jepsen's bank, counter, set, long-fork and Knossos workloads,
//! see `crate::jepsen`). The same tokenizers as the columnar readers, so
//! the same syntax, the same `file:line:column` errors and no panics.

pub use super::edn::{RawName, RawOpMap, ValueReader};
use super::{edn, json, prepare, Format, IngestError, MAX_INPUT_BYTES};
use crate::history::Value;
use std::io::Read;
use std::path::Path;

/// Reads the forms of a history file (`-` is standard input): each op
/// value with its 1-based line. EDN and JSON only (by extension or content
/// with [`Format::Auto`]); any other format is an error.
pub fn read_values(path: &Path, format: Format) -> Result<Vec<(Value, u32)>, IngestError> {
    let bytes = read_all(path)?;
    read_values_bytes(&path.display().to_string(), &bytes, format)
}

/// Reads a history file (`-` is standard input) op map by op map, turning
/// each into the caller's op with `f` (in input order; the maps borrow
/// from the file's bytes). EDN is read in parallel, without allocating for
/// the usual fields, and with `values.fast` the compact `:value`s straight
/// from the text; JSON through its values. The outer error is the reader's,
/// the inner one `f`'s first.
pub fn read_op_maps<T: Send, E: Send>(
    path: &Path,
    format: Format,
    values: ValueReader<'_>,
    f: &(dyn for<'a> Fn(RawOpMap<'a>) -> Result<T, E> + Sync),
) -> Result<Result<Vec<T>, E>, IngestError> {
    let bytes = read_all(path)?;
    read_op_maps_bytes(&path.display().to_string(), &bytes, format, values, f)
}

/// [`read_op_maps`] of bytes in memory.
pub fn read_op_maps_bytes<T: Send, E: Send>(
    source_name: &str,
    bytes: &[u8],
    format: Format,
    values: ValueReader<'_>,
    f: &(dyn for<'a> Fn(RawOpMap<'a>) -> Result<T, E> + Sync),
) -> Result<Result<Vec<T>, E>, IngestError> {
    let (text, mut resolved) = prepare(source_name, bytes, format);
    if resolved == Format::Edn && super::jepsen_store::is_store(bytes) {
        resolved = Format::JepsenStore;
    }
    match resolved {
        Format::JepsenStore => {
            let store = super::jepsen_store::read(source_name, bytes)?;
            edn::parse_op_maps_with(source_name, &store.edn, values, f)
        }
        Format::Edn | Format::Auto => edn::parse_op_maps_with(source_name, text, values, f),
        _ => {
            let forms = read_values_bytes(source_name, bytes, format)?;
            let mut out = Vec::with_capacity(forms.len());
            for (v, line) in forms {
                let mut m = RawOpMap::new(line);
                match v {
                    Value::Map(entries) => entries.into_iter().for_each(|(k, v)| m.insert(k, v, values.keys)),
                    other => {
                        let mut found = other.to_string();
                        if found.len() > 60 {
                            found.truncate(found.floor_char_boundary(60));
                            found.push_str(" ...");
                        }
                        return Err(IngestError::Syntax {
                            source_name: source_name.to_string(),
                            line,
                            column: 1,
                            expected: "an op object like {\"type\": \"invoke\", \"f\": \"read\", \"process\": 0}"
                                .into(),
                            found,
                        });
                    }
                }
                match f(m) {
                    Ok(t) => out.push(t),
                    Err(e) => return Ok(Err(e)),
                }
            }
            Ok(Ok(out))
        }
    }
}

/// A file's bytes: memory-mapped, or read (standard input, or where
/// mapping fails).
enum Bytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Read(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

fn read_all(path: &Path) -> Result<Bytes, IngestError> {
    let name = path.display().to_string();
    let io = |source| IngestError::Io { path: name.clone(), source };
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin().lock().take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    } else {
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(IngestError::Unreadable { path: name, reason: "is not a regular file".into() });
        }
        if meta.len() > MAX_INPUT_BYTES {
            return Err(IngestError::TooLarge { source_name: name, len: meta.len(), limit: MAX_INPUT_BYTES });
        }
        let file = std::fs::File::open(path).map_err(io)?;
        if meta.len() > 0 {
            // SAFETY: the map is only read, and only while this read lasts;
            // as for every history file (see `read_path_with`), a file
            // rewritten by another process meanwhile is outside our control.
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                if map.len() as u64 <= MAX_INPUT_BYTES {
                    return Ok(Bytes::Mapped(map));
                }
            }
        }
        file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(IngestError::TooLarge { source_name: name, len: bytes.len() as u64, limit: MAX_INPUT_BYTES });
    }
    Ok(Bytes::Read(bytes))
}

/// [`read_values`] of bytes in memory, named `source_name` in errors.
pub fn read_values_bytes(source_name: &str, bytes: &[u8], format: Format) -> Result<Vec<(Value, u32)>, IngestError> {
    let (bytes, format) = prepare(source_name, bytes, format);
    match format {
        Format::JepsenStore => edn::parse_values(source_name, &super::jepsen_store::read(source_name, bytes)?.edn),
        Format::Json => json::parse_values(source_name, bytes),
        Format::Edn | Format::Auto => edn::parse_values(source_name, bytes),
        other => Err(IngestError::Unreadable {
            path: source_name.to_string(),
            reason: format!("is {other:?}, which holds register transactions, not Jepsen ops (EDN or JSON only)"),
        }),
    }
}
