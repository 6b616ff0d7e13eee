//! Jepsen's habits around a history: its store layout, gzipped files,
//! `history.txt`, and the histories of other Jepsen checkers.
//!
//! * A Jepsen run leaves `store/<test>/<time>/history.edn` (and
//!   `history.txt`, the same ops as tab-separated columns), with
//!   `store/<test>/latest` linking the newest run. A directory holding
//!   either file, or a `latest` directory that does, is read through it
//!   ([`store_history`]): `isolde analyze store/my-test/latest`, or
//!   `store/*/latest` for every test at once.
//! * A gzipped history (`.gz`, or any input starting with gzip's magic
//!   bytes `1f 8b`) is decompressed first ([`is_gzip`], [`gunzip`]); the
//!   format is then decided by the name without `.gz`.
//! * `history.txt` ([`looks_like_history_txt`]) is turned back into one
//!   EDN op map per line ([`history_txt_to_edn`]).
//! * A history of a linearizability workload (Knossos's registers, locks,
//!   queues, sets, a bank) is no transactional history: it is refused with
//!   a message naming what it is ([`non_transactional`]) instead of a
//!   syntax error about its first `:value`.

use super::IngestError;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The history files of a Jepsen run directory, in order of preference.
/// Jepsen's own store file `test.jepsen` comes last: it is the only history
/// while a test runs, and after one crashed (see [`super::jepsen_store`]).
pub const STORE_FILES: &[&str] = &["history.edn", "history.edn.gz", "history.txt", "history.txt.gz", "test.jepsen"];

/// The history a Jepsen store directory holds: `dir/history.edn` (or one
/// of [`STORE_FILES`]), else the same inside `dir/latest` (a test's
/// directory, whose `latest` links its newest run). `None` when there is
/// none.
pub fn store_history(dir: &Path) -> Option<PathBuf> {
    let found = |d: &Path| STORE_FILES.iter().map(|f| d.join(f)).find(|p| p.is_file());
    found(dir).or_else(|| found(&dir.join("latest")))
}

/// `dir/file`, else `dir/latest/file`, when it is a file.
pub fn store_file(dir: &Path, file: &str) -> Option<PathBuf> {
    [dir.join(file), dir.join("latest").join(file)].into_iter().find(|p| p.is_file())
}

/// gzip's magic bytes.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `bytes` start as a gzip stream does.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// The name a gzipped input is read as: without its `.gz`.
pub fn inner_name(name: &str) -> &str {
    name.strip_suffix(".gz").or_else(|| name.strip_suffix(".GZ")).unwrap_or(name)
}

/// Decompresses a gzip stream (all its members, as `zcat` does) of at most
/// `max_bytes` decompressed bytes; errors name `source_name`.
pub fn gunzip(source_name: &str, reader: impl Read, max_bytes: u64) -> Result<Vec<u8>, IngestError> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(reader).take(max_bytes.saturating_add(1)).read_to_end(&mut out).map_err(|e| {
        IngestError::Unreadable { path: source_name.to_string(), reason: format!("is not a valid gzip stream: {e}") }
    })?;
    if out.len() as u64 > max_bytes {
        return Err(IngestError::TooLarge {
            source_name: source_name.to_string(),
            len: out.len() as u64,
            limit: max_bytes,
        });
    }
    Ok(out)
}

/// The op types Jepsen writes.
const TYPES: &[&str] = &[":invoke", ":ok", ":fail", ":info"];

/// Whether `bytes` look like Jepsen's `history.txt`: the first non-blank
/// line has at least four tab-separated fields, the second or third of
/// which is an op type (`:invoke`, `:ok`, `:fail`, `:info`).
pub fn looks_like_history_txt(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64 << 10)];
    let Some(line) = head.split(|&b| b == b'\n').find(|l| l.iter().any(|b| !b.is_ascii_whitespace())) else {
        return false;
    };
    let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
    fields.len() >= 4 && type_field(&fields).is_some()
}

/// The position of the op type among a line's first fields (1 in
/// `process type f value [error]`, 2 with a leading index).
fn type_field(fields: &[&[u8]]) -> Option<usize> {
    (1..3).find(|&i| fields.get(i).is_some_and(|f| TYPES.iter().any(|t| t.as_bytes() == f.trim_ascii())))
}

/// Jepsen's `history.txt` (`process \t type \t f \t value [\t error]`, one
/// op per line, optionally led by the op's index) as EDN op maps, one per
/// line, so that line numbers in messages stay those of the file. A line
/// that is not such an op is an error naming its line.
pub fn history_txt_to_edn(source_name: &str, bytes: &[u8]) -> Result<Vec<u8>, IngestError> {
    let text = std::str::from_utf8(bytes).map_err(|e| IngestError::Unreadable {
        path: source_name.to_string(),
        reason: format!("is not UTF-8 text (at byte {})", e.valid_up_to()),
    })?;
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            out.push('\n');
            continue;
        }
        let fields: Vec<&str> = line.splitn(6, '\t').collect();
        let bad = |what: &str| IngestError::Syntax {
            source_name: source_name.to_string(),
            line: u32::try_from(n + 1).unwrap_or(u32::MAX),
            column: 1,
            expected: "a history.txt line: process, type, f and value separated by tabs".into(),
            found: what.to_string(),
        };
        let raw: Vec<&[u8]> = fields.iter().map(|f| f.as_bytes()).collect();
        let t = type_field(&raw).ok_or_else(|| bad(&excerpt(line)))?;
        let (index, rest) = if t == 2 { (Some(fields[0].trim()), &fields[1..]) } else { (None, &fields[..]) };
        if rest.len() < 4 {
            return Err(bad(&excerpt(line)));
        }
        out.push('{');
        if let Some(i) = index {
            out.push_str(&format!(":index {i}, "));
        }
        out.push_str(&format!(":process {}, :type {}, :f {}, :value {}", rest[0], rest[1].trim(), rest[2], rest[3]));
        if let Some(e) = rest.get(4) {
            out.push_str(&format!(", :error {e}"));
        }
        out.push_str("}\n");
    }
    Ok(out.into_bytes())
}

/// The start of a line, for a message.
fn excerpt(line: &str) -> String {
    let s: String = line.chars().take(40).collect();
    if s.len() < line.len() {
        format!("{s}…")
    } else {
        s
    }
}

/// What a history of another Jepsen workload is, from the `:f`s of its
/// first 64 KiB: `None` when some op is a transaction (`:f :txn`) or no
/// `:f` names another workload. The answer names the workload, the first
/// line with such an op, and what checks it.
pub fn non_transactional(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(64 << 10)];
    let mut first: Option<(usize, String)> = None;
    let mut fs: Vec<String> = Vec::new();
    for (n, line) in head.split(|&b| b == b'\n').enumerate() {
        let line = String::from_utf8_lossy(line);
        let mut rest = line.as_ref();
        while let Some(at) = rest.find(":f ") {
            rest = &rest[at + 3..];
            let f: String = rest
                .trim_start()
                .trim_start_matches(':')
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '?' | '!'))
                .collect();
            if f == "txn" {
                return None;
            }
            if first.is_none() && workload(std::slice::from_ref(&f)).is_some() {
                first = Some((n + 1, f.clone()));
            }
            if !f.is_empty() && !fs.contains(&f) {
                fs.push(f);
            }
        }
    }
    let what = workload(&fs)?;
    let (line, f) = first?;
    Some(format!(
        "is {what} (line {line}: `:f :{f}`), not a transactional history: isolde checks transactions \
         (`:f :txn` with micro-ops like [[:append k v] [:r k nil]] or [[:w k v] [:r k v]]); \
         a linearizability checker (Knossos, or Jepsen's own checker for that workload) checks this one"
    ))
}

/// The workload a set of `:f` names belongs to, when it is not
/// transactional.
fn workload(fs: &[String]) -> Option<&'static str> {
    let has = |names: &[&str]| fs.iter().any(|f| names.contains(&f.as_str()));
    if has(&["transfer"]) {
        Some("a Jepsen bank history (:transfer and :read of balances)")
    } else if has(&["cas", "write"]) {
        Some("a Knossos/linearizability register history (:read, :write, :cas on single values)")
    } else if has(&["acquire", "release"]) {
        Some("a Knossos/linearizability lock history (:acquire, :release)")
    } else if has(&["enqueue", "dequeue", "drain"]) {
        Some("a Jepsen queue history (:enqueue, :dequeue)")
    } else if has(&["add"]) {
        Some("a Jepsen set or counter history (:add, :read)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_txt_becomes_edn_line_for_line() {
        let txt = b"0\t:invoke\t:txn\t[[:append :x 1]]\n0\t:ok\t:txn\t[[:append :x 1]]\n\n:nemesis\t:info\t:kill\tnil\t\"boom\"\n";
        assert!(looks_like_history_txt(txt));
        let edn = String::from_utf8(history_txt_to_edn("h.txt", txt).expect("converts")).expect("utf8");
        let lines: Vec<&str> = edn.lines().collect();
        assert_eq!(lines[0], "{:process 0, :type :invoke, :f :txn, :value [[:append :x 1]]}");
        assert_eq!(lines[2], "");
        assert_eq!(lines[3], "{:process :nemesis, :type :info, :f :kill, :value nil, :error \"boom\"}");
        let indexed = b"7\t3\t:ok\t:txn\t[[:r :x nil]]\n";
        assert!(looks_like_history_txt(indexed));
        let edn = String::from_utf8(history_txt_to_edn("h.txt", indexed).expect("converts")).expect("utf8");
        assert_eq!(edn, "{:index 7, :process 3, :type :ok, :f :txn, :value [[:r :x nil]]}\n");
        assert!(!looks_like_history_txt(b"{:type :ok, :process 0, :value []}\n"));
        let e = history_txt_to_edn("h.txt", b"0\t:ok\t:txn\t[]\ngarbage line\n").expect_err("bad line").to_string();
        assert!(e.starts_with("h.txt:2:1: expected a history.txt line"), "{e}");
    }

    #[test]
    fn other_workloads_are_named() {
        let reg =
            b"{:type :invoke, :f :write, :value 3, :process 0}\n{:type :invoke, :f :cas, :value [3 4], :process 1}\n";
        let m = non_transactional(reg).expect("a register");
        assert!(m.starts_with("is a Knossos/linearizability register history"), "{m}");
        assert!(m.contains("(line 1: `:f :write`)"), "{m}");
        let bank = b"{:type :ok, :f :read, :value {1 10}}\n{:type :ok, :f :transfer, :value {:from 1}}\n";
        let m = non_transactional(bank).expect("bank");
        assert!(m.contains("bank history") && m.contains("(line 2: `:f :transfer`)"), "{m}");
        assert!(non_transactional(b"{:type :ok, :f :acquire, :process 0}").expect("lock").contains("lock history"));
        assert_eq!(non_transactional(b"{:f :txn, :value [[:r :x nil]]}\n{:f :write}"), None);
        assert_eq!(non_transactional(b"{:f :read, :value [[:r :x nil]]}"), None);
    }

    #[test]
    fn gzip_by_magic_and_every_member() {
        use std::io::Write;
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        assert!(z.write_all(b"hello ").is_ok());
        let mut bytes = z.finish().expect("gzip");
        let mut z2 = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        assert!(z2.write_all(b"world").is_ok());
        bytes.extend(z2.finish().expect("gzip"));
        assert!(is_gzip(&bytes));
        assert_eq!(gunzip("h.gz", &bytes[..], 100).expect("gunzips"), b"hello world");
        assert!(gunzip("h.gz", &bytes[..], 5).is_err());
        let e = gunzip("h.gz", &b"\x1f\x8bnot really"[..], 100).expect_err("corrupt").to_string();
        assert!(e.starts_with("h.gz: is not a valid gzip stream"), "{e}");
        assert_eq!(inner_name("store/x/history.edn.gz"), "store/x/history.edn");
    }
}
