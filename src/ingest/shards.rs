//! A directory of time-ordered shards (`h.000.edn`, `h.001.edn`, …) read as
//! one history: the shards in the order of their numbers, as if they were
//! concatenated (`cat h.000.edn h.001.edn …`). Ops, `:index` rules and the
//! pairing of invocations with completions run on from one shard into the
//! next, and an op's line is its line in that concatenation; an error in a
//! shard names the shard file and its own line.
//!
//! A wrong guess about which files form the stream would drop or reorder
//! data without a word, so every doubt is an error naming the fix:
//!
//! * a shard is a regular file named `STEM.N.edn`, `N` decimal digits, and
//!   every shard of a directory has the same `STEM`;
//! * the numbers run from the smallest with no gap, and no number is
//!   written twice (`h.1.edn` beside `h.01.edn`);
//! * another `.edn` file beside the shards is refused (it belongs to no
//!   place in the stream); files of other kinds (a README, `jepsen.log`) and
//!   hidden files are left alone;
//! * gzipped shards (`STEM.N.edn.gz`) are refused with the fix: a gzip
//!   stream can only be read from its start, so it cannot be cut into the
//!   windows of a distributed run, and both runs read the same inputs;
//! * every shard but the last ends with a newline, so that no op line runs
//!   on from one shard into the next (checked once mapped, see
//!   [`super::mapped`]).
//!
//! This module only finds the shards; they are mapped and read by
//! [`super::mapped`] (one process: like one file, in parallel chunks, one
//! shard after the other, pages given back as they are read).

use super::IngestError;
use std::path::{Path, PathBuf};

/// The shard files of `dir`, in stream order; `None` when `dir` holds no
/// file named like a shard (then it is some other kind of directory).
pub(crate) fn find(dir: &Path) -> Result<Option<Vec<PathBuf>>, IngestError> {
    let name = dir.display().to_string();
    let refuse = |reason: String| IngestError::Unreadable { path: name.clone(), reason };
    let entries = std::fs::read_dir(dir).map_err(|source| IngestError::Io { path: name.clone(), source })?;
    let mut shards: Vec<(u64, String, PathBuf)> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    let mut gzipped: Vec<String> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| IngestError::Io { path: name.clone(), source })?;
        let file = entry.file_name().to_string_lossy().into_owned();
        if file.starts_with('.') {
            continue;
        }
        if let Some(inner) = file.strip_suffix(".gz").filter(|f| f.ends_with(".edn")) {
            if shard_name(inner).is_some() {
                gzipped.push(file);
            }
            continue;
        }
        if !file.ends_with(".edn") {
            continue;
        }
        match shard_name(&file) {
            Some((stem, n)) => shards.push((n, stem.to_string(), entry.path())),
            None => others.push(file),
        }
    }
    if shards.is_empty() && gzipped.is_empty() {
        return Ok(None);
    }
    if let Some(first) = gzipped.iter().min() {
        return Err(refuse(format!(
            "holds gzipped shards ({first}, {} in all); a gzip stream can only be read from its start, so a \
             shard cannot be cut into windows: unpack them first (`gunzip -k {}/*.edn.gz`)",
            gzipped.len(),
            dir.display()
        )));
    }
    shards.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
    let file_of = |p: &Path| p.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned());
    if let Some(other) = others.iter().min() {
        return Err(refuse(format!(
            "holds shards ({}, …) and also {other}, which is not named like a shard (STEM.N.edn): move it out of \
             the directory, or give the shards' own directory",
            file_of(&shards[0].2)
        )));
    }
    if let Some(w) = shards.windows(2).find(|w| w[0].1 != w[1].1) {
        return Err(refuse(format!(
            "holds shards of two streams ({} and {}): every shard is named STEM.N.edn with one STEM; give each \
             stream its own directory",
            file_of(&w[0].2),
            file_of(&w[1].2)
        )));
    }
    for w in shards.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(refuse(format!(
                "holds two shards numbered {} ({} and {}): keep one",
                w[0].0,
                file_of(&w[0].2),
                file_of(&w[1].2)
            )));
        }
        if w[1].0 != w[0].0 + 1 {
            return Err(refuse(format!(
                "is missing shard {} of {} (between {} and {}): a gap in the stream would drop its ops; restore \
                 it, or renumber the shards if it never existed",
                w[0].0 + 1,
                w[0].1,
                file_of(&w[0].2),
                file_of(&w[1].2)
            )));
        }
    }
    for (_, _, path) in &shards {
        let meta =
            std::fs::metadata(path).map_err(|source| IngestError::Io { path: path.display().to_string(), source })?;
        super::regular_file(&path.display().to_string(), &meta)?;
    }
    Ok(Some(shards.into_iter().map(|s| s.2).collect()))
}

/// `STEM.N.edn` → `(STEM, N)`.
fn shard_name(file: &str) -> Option<(&str, u64)> {
    let base = file.strip_suffix(".edn")?;
    let (stem, digits) = base.rsplit_once('.')?;
    if stem.is_empty() || digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stem, digits.parse().ok()?))
}
