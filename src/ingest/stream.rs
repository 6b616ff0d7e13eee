//! Reading a history from a stream (standard input, a pipe) as it arrives.
//!
//! A file is memory-mapped and parsed in parallel chunks; a pipe cannot be
//! mapped, and holding all of its text before parsing doubles the memory a
//! large history needs and leaves the parser idle while the writer (a `zcat`,
//! a Jepsen run copying its store) is still producing. So a Jepsen EDN
//! stream is parsed in segments while it is read:
//!
//! * a reader thread reads fixed-size blocks and hands them over a bounded
//!   channel, so reading and parsing overlap;
//! * the parser cuts the text it holds at the last line that starts (after
//!   blanks) with `{` or `#`, the same cuts the parallel file reader uses,
//!   and parses everything before the cut as whole ops (itself in parallel
//!   chunks), then drops that text;
//! * a cut that falls inside an op (a pretty-printed op with such a line)
//!   makes the segment before it fail to parse; the text is then kept and
//!   the cut retried further on, once more is read. A segment that parses
//!   ends at an op boundary, so what follows starts at one too;
//! * at the end of the stream the rest is parsed, and an error there is the
//!   authoritative one, located by line and column in the whole stream;
//! * a history written as one vector (`[{...} {...}]`) is streamed too: its
//!   opening bracket is found in the first block, and the last segment must
//!   end with the matching bracket.
//!
//! An input that fits in the first block, or whose format is not EDN, is read
//! whole and parsed as a file is: the result, and every message, is the
//! same as for the same bytes in a file.

use std::io::Read;
use std::sync::mpsc;

use super::error::count_newlines;
use super::{edn, read_bytes_with, Format, IngestError, ReadOptions, MAX_INPUT_BYTES};
use crate::history::{History, HistoryBuilder};

/// Bytes per read from the stream.
const READ_BLOCK: usize = 4 << 20;

/// Text held before the parser cuts a segment.
pub(crate) const SEGMENT: usize = 32 << 20;

/// Reads a history from standard input, streaming a Jepsen EDN history.
pub(crate) fn read_stdin(format: Format, opts: ReadOptions) -> Result<History, IngestError> {
    read_stream("<stdin>", ReadStdin, format, opts, SEGMENT)
}

/// Standard input, locked by the reader thread that reads it.
struct ReadStdin;

impl Read for ReadStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        std::io::stdin().lock().read(buf)
    }
}

/// Reads a history from `reader`, parsing EDN in segments of about
/// `segment` bytes while it is read (see the module documentation). The
/// stream may hold at most [`MAX_INPUT_BYTES`] bytes.
pub fn read_stream(
    source_name: &str,
    reader: impl Read + Send,
    format: Format,
    opts: ReadOptions,
    segment: usize,
) -> Result<History, IngestError> {
    let segment = segment.max(1);
    let (tx, rx) = mpsc::sync_channel::<std::io::Result<Vec<u8>>>(4);
    std::thread::scope(|scope| {
        scope.spawn(move || read_blocks(reader, tx, segment.min(READ_BLOCK)));
        let mut blocks = Blocks { rx, total: 0, source_name };
        let result = parse_blocks(source_name, &mut blocks, format, opts, segment);
        // Stop the reader (it sees the channel closed) before joining it.
        drop(blocks);
        result
    })
}

/// Sends blocks of `reader` until its end (an empty block) or an error, or
/// until the receiver goes away.
fn read_blocks(mut reader: impl Read, tx: mpsc::SyncSender<std::io::Result<Vec<u8>>>, block: usize) {
    loop {
        let mut buf = vec![0u8; block];
        let mut filled = 0;
        while filled < block {
            match reader.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        buf.truncate(filled);
        let end = filled == 0;
        if tx.send(Ok(buf)).is_err() || end {
            return;
        }
    }
}

/// The receiving end of the reader thread, counting bytes against the cap.
struct Blocks<'a> {
    rx: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    total: u64,
    source_name: &'a str,
}

impl Blocks<'_> {
    /// Appends blocks to `buf` until it holds at least `want` bytes; returns
    /// true at the end of the stream.
    fn fill(&mut self, buf: &mut Vec<u8>, want: usize) -> Result<bool, IngestError> {
        while buf.len() < want {
            let block = match self.rx.recv() {
                Ok(Ok(block)) => block,
                Ok(Err(source)) => return Err(IngestError::Io { path: self.source_name.to_string(), source }),
                // The reader ended after sending its last (empty) block.
                Err(_) => return Ok(true),
            };
            if block.is_empty() {
                return Ok(true);
            }
            self.total += block.len() as u64;
            if self.total > MAX_INPUT_BYTES {
                return Err(IngestError::TooLarge {
                    source_name: self.source_name.to_string(),
                    len: self.total,
                    limit: MAX_INPUT_BYTES,
                });
            }
            buf.extend_from_slice(&block);
        }
        Ok(false)
    }
}

fn parse_blocks(
    source_name: &str,
    blocks: &mut Blocks<'_>,
    format: Format,
    opts: ReadOptions,
    segment: usize,
) -> Result<History, IngestError> {
    let mut buf = Vec::new();
    let mut eof = blocks.fill(&mut buf, segment)?;
    // A gzipped stream (a `cat history.edn.gz |`), or Jepsen's history.txt:
    // read whole, then as a file is.
    let whole = super::jepsen::is_gzip(&buf)
        || (matches!(format, Format::Auto | Format::Edn) && super::jepsen::looks_like_history_txt(&buf));
    while whole && !eof {
        let want = buf.len() + segment;
        eof = blocks.fill(&mut buf, want)?;
    }
    if whole {
        return read_bytes_with(source_name, &buf, format, opts);
    }
    // Kept to name another Jepsen workload's history (see `jepsen`).
    let head = buf[..buf.len().min(64 << 10)].to_vec();
    let (text, resolved) = super::prepare(source_name, &buf, format);
    let bom = buf.len() - text.len();
    let opening = match (eof, resolved) {
        (false, Format::Edn) => edn::stream_opening(text),
        _ => None,
    };
    let Some(opening) = opening else {
        // Small, not EDN, or nothing but comments in the first segment: read
        // the rest and parse it whole, as a file is.
        while !eof {
            let want = buf.len() + segment;
            eof = blocks.fill(&mut buf, want)?;
        }
        return read_bytes_with(source_name, &buf, format, opts);
    };
    let mut line = 1 + count_newlines(&buf[..bom + opening.ops_start]);
    buf.drain(..bom + opening.ops_start);
    let mut history: Option<HistoryBuilder> = None;
    let mut want = segment;
    loop {
        if !eof {
            eof = blocks.fill(&mut buf, want)?;
        }
        if eof {
            let chunks = edn::parse_segment(source_name, &buf, line, opening.vector.as_ref()).map_err(|e| {
                super::other_workload(source_name, &head, super::hint_other_format(e, &buf, Format::Edn))
            })?;
            append(&mut history, source_name, chunks);
            break;
        }
        let parsed = match edn::last_cut(&buf) {
            Some(cut) => edn::parse_segment(source_name, &buf[..cut], line, None).ok().map(|c| (cut, c)),
            None => None,
        };
        match parsed {
            Some((cut, chunks)) => {
                append(&mut history, source_name, chunks);
                line += count_newlines(&buf[..cut]);
                buf.drain(..cut);
                want = segment;
            }
            // No op boundary yet, or the cut fell inside an op: read more.
            None => want = buf.len() + segment,
        }
    }
    let h = history.unwrap_or_else(|| HistoryBuilder::new(source_name)).finish();
    if h.mops.is_empty() {
        if let Some(reason) = super::jepsen::non_transactional(&head) {
            return Err(IngestError::Unreadable { path: source_name.to_string(), reason });
        }
    }
    super::require_completions(source_name, h)
}

/// Appends parsed chunks, in order, to the history read so far.
fn append(history: &mut Option<HistoryBuilder>, source_name: &str, chunks: Vec<HistoryBuilder>) {
    for chunk in chunks {
        match history {
            Some(b) => b.append(chunk),
            None => *history = Some(chunk),
        }
    }
    if history.is_none() {
        *history = Some(HistoryBuilder::new(source_name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::testkit;

    /// The history (or the message) streaming `text` in segments of
    /// `segment` bytes gives, as text for comparison.
    fn streamed(text: &str, segment: usize) -> Result<String, String> {
        read_stream("<stdin>", text.as_bytes(), Format::Auto, ReadOptions::default(), segment)
            .map(|h| format!("{h:?}"))
            .map_err(|e| e.to_string())
    }

    /// What reading the same bytes whole gives.
    fn whole(text: &str) -> Result<String, String> {
        read_bytes_with("<stdin>", text.as_bytes(), Format::Auto, ReadOptions::default())
            .map(|h| format!("{h:?}"))
            .map_err(|e| e.to_string())
    }

    fn assert_streams_as_whole(text: &str, segments: &[usize]) {
        let expected = whole(text);
        for &segment in segments {
            assert_eq!(streamed(text, segment), expected, "segment of {segment} bytes");
        }
    }

    #[test]
    fn a_generated_history_streams_as_it_reads_whole() {
        let text = testkit::sized_list_append(1 << 20, 3);
        assert!(whole(&text).is_ok());
        assert_streams_as_whole(&text, &[4 << 10, 100 << 10, 4 << 20]);
        // The same ops in one vector, and with a byte order mark, CRLF line
        // ends and comments between ops.
        assert_streams_as_whole(&format!("[{}]\n", text.trim_end()), &[4 << 10, 100 << 10]);
        let dressed = format!("\u{feff}; a history\n{}", text.replace('\n', "\r\n; note\r\n"));
        assert!(whole(&dressed).is_ok());
        assert_streams_as_whole(&dressed, &[4 << 10]);
    }

    #[test]
    fn cuts_inside_multi_line_ops_are_retried_further_on() {
        let mut s = String::from("[\n");
        for i in 0..300 {
            s.push_str(&format!(
                "{{:type :ok :process {i} :value [[:append 1 {i}]] :note \"x\n{{:type :ok :process 99}}\n\"}}\n"
            ));
            s.push_str(&format!("{{:type :ok :process {i}\n:value [[:r 1\n[{i}]]]}}\n"));
        }
        s.push_str("]\n");
        assert!(whole(&s).is_ok());
        assert_streams_as_whole(&s, &[16, 100, 1000, 10_000]);
    }

    #[test]
    fn errors_name_the_line_in_the_whole_stream() {
        let text = testkit::sized_list_append(200 << 10, 5);
        let lines = text.lines().count();
        // A bad op at the end; a vector never closed; text after the vector;
        // an op that is not a map in the middle.
        let bad_end = format!("{text}{{:type :ok :process 1 :value [[:append 1 #_]]}}\n");
        let unclosed = format!("[{text}");
        let trailing = format!("[{text}]\n{{:type :ok}}\n");
        let mut mid: Vec<&str> = text.lines().collect();
        mid.insert(lines / 2, "{:type :ok :process 1 :value [[:append 1 2]]} 17");
        let mid = mid.join("\n");
        for bad in [&bad_end, &unclosed, &trailing, &mid] {
            let expected = whole(bad);
            assert!(expected.is_err());
            for segment in [1 << 10, 32 << 10] {
                assert_eq!(streamed(bad, segment), expected, "segment of {segment} bytes");
            }
        }
        let message = streamed(&unclosed, 1 << 10).err().unwrap_or_default();
        assert!(message.contains("opened at 1:1"), "{message}");
        let message = streamed(&bad_end, 1 << 10).err().unwrap_or_default();
        assert!(message.contains(&format!(":{}:", lines + 1)), "{message}");
    }

    #[test]
    fn other_formats_and_small_inputs_are_read_whole() {
        let json = r#"[{"type":"invoke","process":0,"value":[["append",1,1]]},
                       {"type":"ok","process":0,"value":[["append",1,1]]}]"#;
        assert!(whole(json).is_ok());
        assert_streams_as_whole(json, &[8, 1 << 20]);
        let edn = "{:type :ok :process 0 :value [[:append 1 1]]}\n";
        assert_streams_as_whole(edn, &[8, 1 << 20]);
        assert_streams_as_whole("", &[8]);
        assert_streams_as_whole(";; only a comment\n", &[4]);
    }
}
