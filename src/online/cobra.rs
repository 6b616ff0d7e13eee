//! Following a directory of Cobra client logs (`isolde analyze --follow
//! DIR`): the logs, one per client, are read a transaction at a time and
//! handed to the follow engine as one stream of Jepsen EDN ops, so that
//! `--follow-window` can collect them with Cobra's own fences.
//!
//! ## The stream
//! Each log is read with the batch reader's record parser
//! (`ingest/cobra_log.rs`), after a first pass over its bytes that
//! finds its layout (as the batch reader does), one transaction ahead of
//! the one being written. Every transaction becomes an `:invoke` and an
//! `:ok` line (`:info` for one still open at the end of its log),
//! `:process` the log's position in the batch reader's order, keys and
//! values as the batch reader's history holds them: keys as unsigned
//! numbers, write ids as their two's complement (signed, so that the EDN
//! reader keeps them as integers; the history is marked unsigned and prints
//! them as the batch reader does). Cobra's epoch key is written as
//! `:isolde/fence` ([`super::fenced::FENCE_KEY`]): its fences become
//! isolde's fences. The clients are known from the start (one per log:
//! [`super::fenced::Collector::with_clients`]), so that collection waits
//! until each has shown a fence.
//!
//! ## Cobra's epoch key
//! CobraBench names it `FZVERSION` (`Config.EPOCH_KEY`); its logs hold the
//! key's 64-bit xxHash of the name's UTF-16LE bytes (`LongHashFunction.xx()
//! .hashChars`), which CobraVerifier computes as `VERSION_KEY_HASH`:
//! `0xb887_3aa8_2ef6_c6d3` (−5150083154858031405 signed). Only fences touch
//! it: a *write fence* reads it and writes the next epoch, a *read fence*
//! only reads it (the client adopts a newer epoch).
//!
//! ## The order of the stream
//! A check of a prefix must not see a read before the write it read: a
//! completed read of a value no transaction in the prefix wrote is a final
//! `garbage-read`. So a transaction's completion is written only once
//! every write it reads has been completed (or is its own), each log's
//! transactions in their order.
//!
//! Cobra's transaction ids look like a counter taken at each transaction's
//! start (in the CobraLogs `scaling` histories they interleave across logs
//! and increase along every one),
//! and a client starts its next transaction once the last one answered. So
//! a transaction's invocation is written at its own id and its completion
//! at the id of the transaction after it in its log (the log's last one
//! answers last), all events in that order: the stream shows the overlaps
//! of a real run, the clients pass their fences about together, and the
//! completion order is about the order in which transactions answered,
//! which the collector's settling of unread versions takes for the order
//! in which they committed. Two simpler orders collected less on CobraLogs
//! `scaling`: whole transactions by the position of each client's last
//! fence (`chengRW`: the window's serial replay failed from the third round
//! on and nothing more was collected), and whole transactions by id (the
//! window grew after a third of `chengRW`, and `chengRM` took 92 s and
//! 844 MB). Only the interleaving of the logs is chosen, and the verdict
//! does not depend on it (no realtime order is written: no `:time`, and the
//! levels that collect have none); ids in another order only cost memory.
//!
//! When no log's next event is ready, a read waits for a write that
//! no log has shown yet: a read of a value never written, or reads-from and
//! log order in a cycle. Either is an anomaly of the history, but which one
//! is known only once the writes are read. Then the rest of every log is
//! written in one block, so that no round checks a read without its
//! writer: the check sees the whole history, as the batch check does
//! (memory then grows with the rest of the run).
//!
//! ## Memory
//! Per log: a read buffer and its next two transactions. Across logs: the
//! write ids written so far, to know whether a read is ready (8 bytes each in a
//! hash set: this grows with the run, as the collector's record of the
//! versions it collected does with Cobra's unordered write ids).
//!
//! Written by hand: the format is Cobra's, and no crate reads it.

use std::fs::File;
use std::io::{BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use rustc_hash::FxHashSet;

use super::feed::Chunk;
use crate::ingest::cobra_log::{timestamped, LogError, LogMop, LogReader, TxnEnd};
use crate::ingest::IngestError;

/// The hash of Cobra's epoch key `FZVERSION` as its logs hold it.
pub const EPOCH_KEY_HASH: u64 = 0xb887_3aa8_2ef6_c6d3;

/// Transactions sent at a time (a round can start after each block).
const BLOCK_TXNS: usize = 32;

/// One client's log as it is read.
struct Client {
    log: LogReader<BufReader<File>>,
    /// Its path, for messages.
    name: String,
    /// Its next transaction not completed yet: micro-ops, end, id.
    head: Option<(Vec<LogMop>, TxnEnd, i64)>,
    /// Whether the head's invocation was written.
    invoked: bool,
    /// The transaction after the head (its id is when the head answered).
    ahead: Ahead,
    /// Whether its log has ended.
    done: bool,
}

/// A log's transaction after the head.
enum Ahead {
    /// Not read yet.
    Unread,
    /// A transaction: micro-ops, end, id.
    Txn(Vec<LogMop>, TxnEnd, i64),
    /// The end of the log.
    End,
    /// A malformed record (reported once the transactions before it are
    /// written).
    Failed(IngestError),
}

impl Client {
    /// The next transaction of the log.
    fn read(&mut self) -> Ahead {
        let mut mops = Vec::new();
        match self.log.next_txn(&mut mops) {
            Ok(Some(end)) => Ahead::Txn(mops, end, self.log.txn_id()),
            Ok(None) => Ahead::End,
            Err(LogError::Bad(b)) => Ahead::Failed(b.into_ingest(&self.name)),
            Err(LogError::Io(source)) => Ahead::Failed(IngestError::Io { path: self.name.clone(), source }),
        }
    }

    /// When its next event happens: the head's id for its invocation, the
    /// next transaction's id for its completion (the client started that
    /// one once the head answered; the log's last answers last).
    fn when(&self) -> i64 {
        match (&self.head, self.invoked, &self.ahead) {
            (Some((_, _, id)), false, _) => *id,
            (_, _, Ahead::Txn(_, _, id)) => *id,
            _ => i64::MAX,
        }
    }
}

/// The logs of `dir` (its `*.log` files, in the batch reader's order),
/// checked as the batch reader checks them and opened; each file's layout
/// found by a first pass.
fn open_logs(dir: &Path) -> Result<Vec<Client>, String> {
    let files = crate::ingest::cobra::log_files(dir).map_err(|e| e.to_string())?;
    if files.is_empty() {
        return Err(format!("{}: a directory without any `*.log` file (Cobra client logs)", dir.display()));
    }
    files.iter().map(open_log).collect()
}

fn open_log(path: &PathBuf) -> Result<Client, String> {
    let name = path.display().to_string();
    let io = |e: std::io::Error| format!("{name}: {e}");
    let meta = std::fs::metadata(path).map_err(io)?;
    crate::ingest::regular_file(&name, &meta).map_err(|e| e.to_string())?;
    if starts_as_json(File::open(path).map_err(io)?).map_err(io)? {
        return Err(crate::ingest::cobra::viper_refusal(&name).to_string());
    }
    let ts = timestamped(BufReader::new(File::open(path).map_err(io)?)).map_err(io)?;
    let log = LogReader::new(BufReader::new(File::open(path).map_err(io)?), ts);
    Ok(Client { log, name, head: None, invoked: false, ahead: Ahead::Unread, done: false })
}

/// Whether the first byte of `file` that is not white space is `{` (a
/// Viper JSON log; the batch reader's test, read as far as it needs).
fn starts_as_json(file: File) -> std::io::Result<bool> {
    use std::io::Read as _;
    for b in BufReader::new(file).bytes() {
        let b = b?;
        if !b.is_ascii_whitespace() {
            return Ok(b == b'{');
        }
    }
    Ok(false)
}

/// Starts reading the logs of `dir` on a thread; returns the stream of EDN
/// chunks it writes and the number of clients (logs).
pub fn spawn(dir: &Path) -> Result<(Receiver<Chunk>, usize), String> {
    let clients = open_logs(dir)?;
    let n = clients.len();
    let (tx, rx) = sync_channel(4);
    std::thread::spawn(move || Stream::new(clients, tx).run());
    Ok((rx, n))
}

/// The writer of the stream.
struct Stream {
    clients: Vec<Client>,
    tx: SyncSender<Chunk>,
    out: Vec<u8>,
    /// Transactions in `out`.
    pending: usize,
    /// Write ids written so far.
    written: FxHashSet<u64>,
}

/// Why the stream stopped early.
enum Stop {
    /// The engine is gone (the receiver was dropped).
    Gone,
    /// A log could not be read on.
    Failed(IngestError),
}

impl Stream {
    fn new(clients: Vec<Client>, tx: SyncSender<Chunk>) -> Stream {
        Stream { clients, tx, out: Vec::new(), pending: 0, written: FxHashSet::default() }
    }

    fn run(mut self) {
        match self.order() {
            Ok(()) => {
                let _ = self.send();
            }
            Err(Stop::Failed(e)) => {
                let _ = self.tx.send(Chunk::Malformed(e));
            }
            Err(Stop::Gone) => {}
        }
    }

    /// Writes each transaction's invocation and completion in the order
    /// of their Cobra ids, each completion once the writes it reads are
    /// written; at a standstill, the rest of every log in one block.
    fn order(&mut self) -> Result<(), Stop> {
        loop {
            for c in 0..self.clients.len() {
                if let Err(e) = self.refill(c) {
                    self.send()?;
                    return Err(Stop::Failed(e));
                }
            }
            let next = (0..self.clients.len())
                .filter(|&c| self.ready(&self.clients[c]))
                .min_by_key(|&c| (self.clients[c].when(), c));
            match next {
                Some(c) if !self.clients[c].invoked => self.invoke(c),
                Some(c) => {
                    self.complete(c);
                    self.pending += 1;
                    if self.pending >= BLOCK_TXNS {
                        self.send()?;
                    }
                }
                None if self.clients.iter().all(|c| c.done && c.head.is_none()) => return Ok(()),
                None => {
                    self.send()?;
                    return self.rest();
                }
            }
        }
    }

    /// Moves client `c`'s next transaction into `head` when none waits,
    /// and reads the one after it.
    fn refill(&mut self, c: usize) -> Result<(), IngestError> {
        let client = &mut self.clients[c];
        if client.head.is_some() || client.done {
            return Ok(());
        }
        if matches!(client.ahead, Ahead::Unread) {
            client.ahead = client.read();
        }
        match std::mem::replace(&mut client.ahead, Ahead::Unread) {
            Ahead::Txn(mops, end, id) => {
                client.head = Some((mops, end, id));
                client.invoked = false;
                client.ahead = client.read();
            }
            Ahead::End | Ahead::Unread => client.done = true,
            Ahead::Failed(e) => return Err(e),
        }
        Ok(())
    }

    /// Whether client's next event can be written: an invocation always, a
    /// completion once every write it read is written.
    fn ready(&self, client: &Client) -> bool {
        match &client.head {
            Some((mops, _, _)) => !client.invoked || self.reads_written(mops),
            None => false,
        }
    }

    /// Whether every write `mops` read has been written (or is its own).
    fn reads_written(&self, mops: &[LogMop]) -> bool {
        mops.iter().all(|m| match *m {
            LogMop::Read { write_id: Some(w), .. } => {
                self.written.contains(&w)
                    || mops.iter().any(|o| matches!(*o, LogMop::Write { write_id, .. } if write_id == w))
            }
            _ => true,
        })
    }

    /// Writes the rest of every log, client by client, as one block (none
    /// of it when a log turns out malformed: what was sent before stands).
    fn rest(&mut self) -> Result<(), Stop> {
        for c in 0..self.clients.len() {
            loop {
                if let Err(e) = self.refill(c) {
                    self.out.clear();
                    return Err(Stop::Failed(e));
                }
                if self.clients[c].head.is_none() {
                    break;
                }
                if !self.clients[c].invoked {
                    self.invoke(c);
                }
                self.complete(c);
            }
        }
        Ok(())
    }

    /// Writes client `c`'s head's invocation.
    fn invoke(&mut self, c: usize) {
        let client = &mut self.clients[c];
        if let Some((mops, _, _)) = &client.head {
            write_op(&mut self.out, "invoke", c, mops, false);
            client.invoked = true;
        }
    }

    /// Writes client `c`'s head's completion.
    fn complete(&mut self, c: usize) {
        let Some((mops, end, _)) = self.clients[c].head.take() else { return };
        for m in &mops {
            if let LogMop::Write { write_id, .. } = *m {
                self.written.insert(write_id);
            }
        }
        let done = if end == TxnEnd::Committed { "ok" } else { "info" };
        write_op(&mut self.out, done, c, &mops, true);
    }

    fn send(&mut self) -> Result<(), Stop> {
        if self.out.is_empty() {
            return Ok(());
        }
        self.pending = 0;
        let chunk = std::mem::take(&mut self.out);
        self.tx.send(Chunk::Bytes(chunk)).map_err(|_| Stop::Gone)
    }
}

/// Appends one op line: `{:type :ok, :f :txn, :value [...], :process c}`;
/// an invocation's reads are `nil`.
fn write_op(out: &mut Vec<u8>, kind: &str, process: usize, mops: &[LogMop], done: bool) {
    let _ = write!(out, "{{:type :{kind}, :f :txn, :value [");
    for (i, m) in mops.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        let (f, key, value) = match *m {
            LogMop::Write { key, write_id } => ("w", key, Some(write_id)),
            LogMop::Read { key, write_id } => ("r", key, write_id.filter(|_| done)),
        };
        let _ = write!(out, "{sep}[:{f} ");
        if key == EPOCH_KEY_HASH {
            let _ = write!(out, ":{}", super::fenced::FENCE_KEY);
        } else {
            let _ = write!(out, "{key}");
        }
        match value {
            Some(v) => {
                let _ = write!(out, " {}]", v as i64);
            }
            None => out.extend_from_slice(b" nil]"),
        }
    }
    let _ = writeln!(out, "], :process {process}}}");
}
