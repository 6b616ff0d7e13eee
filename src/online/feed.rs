//! The bytes of a history that is still being written.
//!
//! Three sources: standard input (a pipe: `isolde gen … -o - | isolde analyze
//! --follow -`), read by a thread in blocks handed over a bounded channel so
//! that the checker can wake up on a timer while no bytes arrive; and a file
//! that another process appends to (Jepsen's `history.edn` during a run),
//! read to its current end and polled for growth, like `tail -f`. A file has
//! no end of its own: it ends after `idle` without growth when that is set,
//! otherwise only on a signal. And a directory of Cobra client logs, which a
//! thread reads and writes as EDN ops (`online::cobra`). SIGINT and
//! SIGTERM end any source (the checker then gives its verdict on everything
//! read).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes per read.
const BLOCK: usize = 1 << 20;

/// How often a file is polled for growth.
const POLL: Duration = Duration::from_millis(50);

/// Set by the SIGINT/SIGTERM handler.
static STOP: AtomicBool = AtomicBool::new(false);

/// Installs the SIGINT/SIGTERM handler once (later calls do nothing; a
/// process that already has a handler keeps it, and then only the end of
/// the input ends the run).
pub fn install_signal_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
    });
}

/// Whether a signal asked the run to stop.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// What one wait for input gave.
#[derive(Debug)]
pub enum Next {
    /// New bytes.
    Bytes(Vec<u8>),
    /// Nothing new within the wait.
    Quiet,
    /// The input ended: end of a pipe, or a file idle for the idle limit.
    End(EndReason),
    /// The input cannot be read on past a malformed record (Cobra logs:
    /// the bytes before it were handed over).
    Malformed(crate::ingest::IngestError),
}

/// What a reading thread hands over.
#[derive(Debug)]
pub enum Chunk {
    /// Bytes of the history.
    Bytes(Vec<u8>),
    /// The source failed.
    Failed(std::io::Error),
    /// A malformed record: nothing follows.
    Malformed(crate::ingest::IngestError),
}

/// Why the input ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// End of file of a pipe or standard input.
    Eof,
    /// A followed file did not grow for the idle limit.
    Idle,
    /// SIGINT or SIGTERM.
    Signal,
}

/// A source of bytes that may still grow.
pub enum Feed {
    /// A pipe (standard input, or any reader), read by a thread.
    Pipe(mpsc::Receiver<Chunk>),
    /// A directory of Cobra client logs, written as EDN by a thread.
    Logs {
        /// What the thread writes.
        rx: mpsc::Receiver<Chunk>,
        /// The number of clients (logs): the processes `0..clients`.
        clients: usize,
    },
    /// A file, polled for growth.
    File {
        /// The open file, positioned after what was read.
        file: File,
        /// Its path, for messages.
        path: PathBuf,
        /// When it last grew.
        grew: Instant,
        /// End after this long without growth.
        idle: Option<Duration>,
        /// Set once the writer has finished: the file ends at its end.
        done: Option<Arc<AtomicBool>>,
    },
}

impl Feed {
    /// Standard input.
    pub fn stdin() -> Feed {
        Feed::reader(std::io::stdin())
    }

    /// Any reader, read to its end by a thread (tests feed chunks this way).
    pub fn reader(mut input: impl Read + Send + 'static) -> Feed {
        let (tx, rx) = mpsc::sync_channel(4);
        std::thread::spawn(move || loop {
            let mut buf = vec![0u8; BLOCK];
            match input.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    buf.truncate(n);
                    if tx.send(Chunk::Bytes(buf)).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Chunk::Failed(e));
                    break;
                }
            }
        });
        Feed::Pipe(rx)
    }

    /// A file that may still grow; `idle` ends it after that long without
    /// growth, `done` (set by its writer once it has written everything) at
    /// its end.
    pub fn file(path: &Path, idle: Option<Duration>, done: Option<Arc<AtomicBool>>) -> std::io::Result<Feed> {
        let file = File::open(path)?;
        Ok(Feed::File { file, path: path.to_path_buf(), grew: Instant::now(), idle, done })
    }

    /// For a directory of Cobra logs: the number of clients, each of which
    /// is a process from the start.
    pub fn clients(&self) -> Option<usize> {
        match self {
            Feed::Logs { clients, .. } => Some(*clients),
            _ => None,
        }
    }

    /// Waits up to `wait` for input.
    pub fn next(&mut self, wait: Duration) -> Result<Next, String> {
        if stop_requested() {
            return Ok(Next::End(EndReason::Signal));
        }
        match self {
            Feed::Pipe(rx) | Feed::Logs { rx, .. } => match rx.recv_timeout(wait) {
                Ok(Chunk::Bytes(b)) => Ok(Next::Bytes(b)),
                Ok(Chunk::Failed(e)) => Err(format!("input: {e}")),
                Ok(Chunk::Malformed(e)) => Ok(Next::Malformed(e)),
                Err(mpsc::RecvTimeoutError::Timeout) => Ok(Next::Quiet),
                Err(mpsc::RecvTimeoutError::Disconnected) => Ok(Next::End(EndReason::Eof)),
            },
            Feed::File { file, path, grew, idle, done } => {
                let deadline = Instant::now() + wait;
                loop {
                    // Looked at before reading: a writer sets it after its
                    // last write, so a read that then finds nothing is the end.
                    let finished = done.as_ref().is_some_and(|d| d.load(Ordering::SeqCst));
                    let mut buf = vec![0u8; BLOCK];
                    let n = file.read(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
                    if n > 0 {
                        buf.truncate(n);
                        *grew = Instant::now();
                        return Ok(Next::Bytes(buf));
                    }
                    if finished {
                        return Ok(Next::End(EndReason::Eof));
                    }
                    if idle.is_some_and(|d| grew.elapsed() >= d) {
                        return Ok(Next::End(EndReason::Idle));
                    }
                    if stop_requested() {
                        return Ok(Next::End(EndReason::Signal));
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        return Ok(Next::Quiet);
                    }
                    std::thread::sleep(POLL.min(deadline - now));
                }
            }
        }
    }
}
