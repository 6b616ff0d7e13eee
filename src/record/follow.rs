//! `isolde record --check`: the history is checked while it is recorded.
//!
//! The sessions write the history file line by line; a thread follows it
//! with the online checker ([`crate::online`]), which prints each anomaly
//! as soon as it is final (a table row on stdout) and a status line per
//! round (stderr). When recording ends the writer marks the file done, the
//! follower reads to its end, and the verdict on the whole history is
//! printed as the table `analyze` prints.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::RecordError;
use crate::anomaly::Workload;
use crate::check::{CheckOptions, Validity};
use crate::history::History;
use crate::online::{self, Final, FollowOptions, Followed, RoundStatus, Watch};
use crate::reports::{self, online::LineFormat};

/// A thread checking the history file as it is written.
pub struct Follower {
    path: PathBuf,
    models: Vec<String>,
    done: Arc<AtomicBool>,
    thread: JoinHandle<Result<Followed, String>>,
}

impl Follower {
    /// Starts following `path` (already created), checking `models`;
    /// `keep_all`: hold every transaction ([`FollowOptions::keep_all`]).
    pub fn start(path: &Path, models: Vec<String>, status: bool, keep_all: bool) -> Follower {
        let done = Arc::new(AtomicBool::new(false));
        let fopts = FollowOptions { done: Some(done.clone()), keep_all, ..FollowOptions::default() };
        let opts = CheckOptions { models: Some(models.clone()), ..CheckOptions::default() };
        let file = path.to_path_buf();
        let thread = std::thread::spawn(move || online::follow(&file, &opts, &fopts, &mut Printer { status }));
        Follower { path: path.to_path_buf(), models, done, thread }
    }

    /// Recording ended: reads the rest, checks the whole history, prints its
    /// table, and returns the verdict's exit status.
    pub fn finish(self) -> Result<u8, RecordError> {
        self.done.store(true, Ordering::SeqCst);
        let err = |message: String| RecordError::Check { path: self.path.display().to_string(), message };
        let mut followed = match self.thread.join() {
            Ok(r) => r.map_err(err)?,
            Err(_) => return Err(err("the checking thread failed".into())),
        };
        if let online::Ending::Malformed(e) = &followed.ending {
            return Err(err(e.to_string()));
        }
        let opts = CheckOptions { models: Some(self.models), ..CheckOptions::default() };
        // The whole run's verdict, collected transactions included.
        let outcome = online::final_check(&mut followed, &opts).map_err(|e| err(e.to_string()))?;
        if let Some(why) = &followed.unknown {
            eprintln!("isolde: {why}");
        }
        print!("{}", reports::table::render(&followed.history, &outcome, false));
        Ok(match outcome.valid {
            Validity::Valid => 0,
            Validity::Invalid => 1,
            Validity::Unknown => 3,
        })
    }
}

/// Anomaly rows on stdout as they become final; status lines on stderr
/// unless the recorder shows its own progress there.
struct Printer {
    status: bool,
}

impl Watch for Printer {
    fn anomalies(&mut self, round: usize, h: &History, w: Workload, found: &[Final]) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for f in found {
            let _ = out
                .write_all(reports::online::anomaly_line(h, w, round, &f.name, &f.case, LineFormat::Table).as_bytes());
        }
        let _ = out.flush();
    }

    fn status(&mut self, s: &RoundStatus) {
        if self.status {
            eprintln!("isolde: check {s}");
        }
    }

    fn note(&mut self, _text: &str) {}
}
