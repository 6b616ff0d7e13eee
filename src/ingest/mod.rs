//! Ingest: reads a history (Jepsen `history.edn`, elle-cli JSON, dbcop
//! `history.bincode`, PolySI text, or a directory of Cobra client logs) into
//! the columnar [`History`] model.
//!
//! The three polygraph-checker formats (dbcop, PolySI text, Cobra) describe
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

mod cobra;
mod dbcop;
mod edn;
mod error;
mod json;
mod num;
mod polysi_text;
#[cfg(test)]
mod testgen;

pub use error::IngestError;

use crate::history::History;
use std::path::Path;

/// The syntax of a history file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// A directory of `*.log` files is Cobra; otherwise decide from the file
    /// extension (`.edn`, `.json`, `.bincode`), else from the content.
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
}

/// Reads the history in the file (or, for Cobra, the directory) at `path`.
///
/// A directory is read as Cobra client logs when `format` is
/// [`Format::Auto`] or [`Format::Cobra`], and is an error otherwise. A
/// file is memory-mapped (falling back to an ordinary read for things
/// that cannot be mapped, such as pipes) so that parsing starts without a
/// copy and parallel chunk readers fault pages in concurrently. Errors name
/// the path as given.
pub fn read_path(path: &Path, format: Format) -> Result<History, IngestError> {
    let name = path.display().to_string();
    let io = |source| IngestError::Io { path: name.clone(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        if matches!(format, Format::Auto | Format::Cobra) {
            return cobra::read_dir(path);
        }
        return Err(IngestError::Unreadable {
            path: name,
            reason: "is a directory; only Cobra histories (a directory of *.log files) are read from one".into(),
        });
    }
    if meta.len() > u64::from(u32::MAX) {
        return Err(IngestError::TooLarge { source_name: name, len: meta.len() });
    }
    if meta.is_file() && meta.len() > 0 {
        // SAFETY: the map is only read, and only during this call. As with
        // any memory map, another process truncating or rewriting the file
        // while it is being read is outside our control; history files are
        // written once by Jepsen before they are checked.
        match unsafe { memmap2::Mmap::map(&file) } {
            Ok(map) => {
                #[cfg(unix)]
                {
                    let _ = map.advise(memmap2::Advice::WillNeed);
                }
                let format = resolve(&name, &map, format);
                if format != Format::Edn {
                    return read_bytes(&name, &map, format);
                }
                check_size(&name, map.len())?;
                let chunks = edn::parse_chunks(&name, &map)?;
                // Unmap before merging: the merge copies chunks, and the
                // input need not be resident while it does.
                drop(map);
                return Ok(edn::merge(&name, chunks));
            }
            Err(_) => {
                // Fall through to an ordinary read.
            }
        }
    }
    let bytes = std::fs::read(path).map_err(io)?;
    read_bytes(&name, &bytes, format)
}

/// Reads a history from `bytes`; `source_name` is used in messages and
/// stored in [`History::source`], and its extension guides [`Format::Auto`].
pub fn read_bytes(source_name: &str, bytes: &[u8], format: Format) -> Result<History, IngestError> {
    check_size(source_name, bytes.len())?;
    match resolve(source_name, bytes, format) {
        Format::Json => json::parse(source_name, bytes),
        Format::Dbcop => dbcop::parse(source_name, bytes),
        Format::PolysiText => polysi_text::parse(source_name, bytes),
        Format::Cobra => cobra::parse(source_name, bytes),
        Format::Edn | Format::Auto => edn::parse(source_name, bytes),
    }
}

/// Inputs are addressed with 32-bit offsets.
fn check_size(source_name: &str, len: usize) -> Result<(), IngestError> {
    if u32::try_from(len).is_err() {
        return Err(IngestError::TooLarge { source_name: source_name.to_string(), len: len as u64 });
    }
    Ok(())
}

/// Decides the format of an input: an explicit choice wins; otherwise the
/// extension (`.json`, `.edn`, `.bincode`, any case), otherwise a sniff of
/// the first bytes. Anything unrecognised is read as EDN, whose reader then
/// reports exactly where the input goes wrong.
fn resolve(source_name: &str, bytes: &[u8], format: Format) -> Format {
    if format != Format::Auto {
        return format;
    }
    let ext = Path::new(source_name).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => Format::Json,
        Some("edn") => Format::Edn,
        Some("bincode") => Format::Dbcop,
        _ => sniff(bytes),
    }
}

/// Guesses the format from the content: a plausible dbcop header (five
/// `u64`s, then two short UTF-8 strings) is dbcop; text whose first
/// non-blank characters are `r(` or `w(` is PolySI text; `{:`/`[{:`/`({:` or
/// a `;`/`#` start is EDN, `{"` or `[{"` is JSON.
fn sniff(bytes: &[u8]) -> Format {
    if dbcop::looks_like(bytes) {
        return Format::Dbcop;
    }
    let text = bytes.iter().position(|b| !b.is_ascii_whitespace()).map_or(&[][..], |i| &bytes[i..]);
    if text.len() >= 2 && matches!(text[0], b'r' | b'w') && text[1] == b'(' {
        return Format::PolysiText;
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
        assert_eq!(resolve("h", b"r :x", Format::Auto), Format::Edn);
        let dbcop = dbcop::encode::history(&[vec![(vec![(true, 1, 1, true)], true)]]);
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

    #[test]
    fn read_path_maps_files_and_names_them_in_errors() {
        let dir = std::env::temp_dir().join(format!("isolde-ingest-test-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let good = dir.join("h.edn");
        let bad = dir.join("bad.edn");
        let empty = dir.join("empty.edn");
        let written = std::fs::write(&good, "{:type :invoke :process 0 :value [[:append :x 1]]}\n")
            .and_then(|()| {
                std::fs::write(&bad, "{:type :ok :process 0}\n{:type :ok, :process 0, :value [[:incr :x 1]]}\n")
            })
            .and_then(|()| std::fs::write(&empty, ""));
        assert!(written.is_ok());
        let h = read_path(&good, Format::Auto);
        assert!(h.as_ref().is_ok_and(|h| h.ops.len() == 1 && h.source.ends_with("h.edn")));
        let e = read_path(&bad, Format::Auto).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.ends_with("bad.edn:2:34: expected micro-op function :append, :r or :w, found :incr"), "{e}");
        assert!(read_path(&empty, Format::Auto).is_ok_and(|h| h.ops.is_empty()));
        let e = read_path(&dir, Format::Auto).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.ends_with(": a directory without any `*.log` file (Cobra client logs)"), "{e}");
        let e = read_path(&dir, Format::Json).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.ends_with(": is a directory; only Cobra histories (a directory of *.log files) are read from one"),
            "{e}"
        );
        let missing = dir.join("missing.edn");
        let e = read_path(&missing, Format::Auto).err();
        assert!(matches!(&e, Some(IngestError::Io { path, .. }) if path.ends_with("missing.edn")));
        assert!(e.map(|e| e.to_string()).unwrap_or_default().contains("missing.edn: "));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Generates a ~90 MB one-op-per-line EDN history (~180k ops of ~490
    /// bytes, list reads of up to ~100 integers), parses it with `read_path`
    /// and prints the throughput (first and best of 7), then the sequential
    /// EDN and the JSON readers' throughput on the same history. Run with
    /// `cargo test --release -- --ignored --nocapture parse_throughput`.
    #[test]
    #[ignore]
    fn parse_throughput() {
        let path = std::env::temp_dir().join("isolde-ingest-bench-90mb.edn");
        if std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) < 90_000_000 {
            let text = testgen::edn_history(90_000_000, 42);
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
        let json = testgen::to_json(&testgen::ops(90_000_000, 42));
        let jmb = json.len() as f64 / 1e6;
        let jt = (0..3)
            .map(|_| time(&|| read_bytes("bench.json", json.as_bytes(), Format::Auto)).0)
            .fold(f64::MAX, f64::min);
        println!("JSON {jmb:.1} MB: best {jt:.3} s = {:.0} MB/s", jmb / jt);
    }
}
