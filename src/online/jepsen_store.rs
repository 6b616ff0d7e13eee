//! `--follow` on Jepsen's store file `test.jepsen` while a test runs: a
//! thread polls the file and hands the ops of each newly sealed history
//! chunk (16,384 ops, sealed with a new index block) to the checker as EDN
//! lines, the same feed a growing `history.edn` gives; rounds then run as
//! chunks arrive. The thread ends the feed when the test map marks the
//! history complete (Jepsen rewrites the test once the history writer
//! closes), after `idle` without a new chunk, or on a malformed file; the
//! checker ends it on SIGINT/SIGTERM. What was and was not read is said
//! on stderr when the feed ends.

use super::feed::Chunk;
use crate::history::StorePartial;
use crate::ingest::jepsen_store::Follower;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How far the thread has read, for the note a run ended early leaves.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Ops handed over.
    pub ops: usize,
    /// Bytes trusted (the end of the last whole block).
    pub trusted: usize,
    /// Whether the test map marked the history complete.
    pub complete: bool,
    /// Why the last poll stopped short of the end of the file.
    pub stop: Option<String>,
}

impl Progress {
    /// What a run that ended before the history was complete read, as the
    /// store note every report shows; `None` when it was complete.
    pub fn partial(&self, why: &str) -> Option<StorePartial> {
        (!self.complete).then(|| StorePartial {
            ops: self.ops,
            offset: self.trusted as u64,
            reason: format!(
                "{why}, before the test map marked the history complete{}",
                self.stop.as_deref().map(|s| format!(" ({s})")).unwrap_or_default()
            ),
        })
    }
}

/// How often the file is polled.
const POLL: Duration = Duration::from_millis(100);

/// Starts the thread following `path`; its receiver is a pipe feed, and
/// the progress it shares says how far it read.
pub fn spawn(path: &Path, idle: Option<Duration>) -> (mpsc::Receiver<Chunk>, Arc<Mutex<Progress>>) {
    let (tx, rx) = mpsc::sync_channel(4);
    let mut f = Follower::new(path);
    let name = path.display().to_string();
    let progress = Arc::new(Mutex::new(Progress::default()));
    let shared = progress.clone();
    std::thread::spawn(move || {
        let mut grew = Instant::now();
        loop {
            let polled = f.poll();
            if let Ok(mut p) = shared.lock() {
                *p = Progress { ops: f.ops, trusted: f.trusted(), complete: f.complete, stop: f.stop.clone() };
            }
            match polled {
                Ok(edn) if !edn.is_empty() => {
                    grew = Instant::now();
                    if tx.send(Chunk::Bytes(edn)).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(Chunk::Malformed(e));
                    return;
                }
            }
            if f.complete {
                eprintln!("isolde: {name}: the history is complete: {} ops read", f.ops);
                return;
            }
            if idle.is_some_and(|d| grew.elapsed() >= d) {
                let why = f.stop.as_deref().unwrap_or("the file ends there");
                eprintln!(
                    "isolde: {name}: history recovered in part from test.jepsen: {} ops read (every sealed chunk); \
                     no new chunk for the idle limit; reading stopped at {why}",
                    f.ops
                );
                return;
            }
            std::thread::sleep(POLL);
        }
    });
    (rx, progress)
}
