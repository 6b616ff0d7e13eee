//! Running the `isolde` binary from tests: temporary directories, a run with
//! optional standard input, and a watchdog so that a run that blocks (on a
//! FIFO, say) fails the test instead of hanging it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A fresh, empty temporary directory, removed with everything in it when
/// dropped (also when the test fails): tests leave nothing behind. It
/// dereferences to its path.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A file in its own temporary directory, removed with it when dropped. It
/// dereferences to the file's path.
#[derive(Debug)]
pub struct TempFile {
    _dir: TempDir,
    path: PathBuf,
}

impl TempFile {
    /// A file `name` in `dir` (the directory itself when `name` is
    /// empty), which it removes when dropped.
    pub fn in_dir(dir: TempDir, name: &str) -> TempFile {
        let path = if name.is_empty() { dir.to_path_buf() } else { dir.join(name) };
        TempFile { _dir: dir, path }
    }
}

impl std::ops::Deref for TempFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// A fresh, empty temporary directory named after `tag` and this process,
/// removed when the returned guard drops.
pub fn temp_dir(tag: &str) -> TempDir {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("isolde-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    TempDir(dir)
}

/// What a run of the binary produced.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Standard output parsed as JSON (panics with both streams if it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} / {}", self.stdout, self.stderr))
    }
}

/// Runs `isolde` with `args`, feeding `stdin` (if any) on standard input,
/// and kills it (failing the test) if it has not finished in `limit`.
pub fn isolde(args: &[&str], stdin: Option<&[u8]>, limit: Duration) -> Run {
    run_program(std::path::Path::new(env!("CARGO_BIN_EXE_isolde")), args, stdin, limit)
}

/// Runs `program` (the binary, or a link to it under another name) as
/// [`isolde`] runs the binary.
pub fn run_program(program: &std::path::Path, args: &[&str], stdin: Option<&[u8]>, limit: Duration) -> Run {
    spawn_run(program, args, stdin.map(|b| (b.to_vec(), 1, Duration::ZERO)), limit)
}

/// Runs `isolde` as [`isolde`] does, writing `stdin` to it in `pieces`
/// with `pause` between them (a pipe that another program fills as it runs).
pub fn isolde_fed(args: &[&str], stdin: &[u8], pieces: usize, pause: Duration, limit: Duration) -> Run {
    let program = std::path::Path::new(env!("CARGO_BIN_EXE_isolde"));
    spawn_run(program, args, Some((stdin.to_vec(), pieces, pause)), limit)
}

fn spawn_run(
    program: &std::path::Path,
    args: &[&str],
    stdin: Option<(Vec<u8>, usize, Duration)>,
    limit: Duration,
) -> Run {
    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    if let (Some((bytes, pieces, pause)), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // Write from a thread so a child that stops reading cannot block us.
        std::thread::spawn(move || {
            for (i, piece) in bytes.chunks(bytes.len().div_ceil(pieces.max(1)).max(1)).enumerate() {
                if i > 0 {
                    std::thread::sleep(pause);
                }
                if pipe.write_all(piece).and_then(|_| pipe.flush()).is_err() {
                    break;
                }
            }
        });
    }
    // Drain both pipes from threads: a child whose output outgrows the pipe
    // buffer would otherwise block on writing and never exit.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("isolde {args:?} did not finish within {limit:?}");
            }
        }
    };
    let out = std::process::Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    };
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The `anomaly-types` of a JSON result map, as strings.
pub fn anomaly_types(v: &serde_json::Value) -> Vec<String> {
    v["anomaly-types"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// Runs `isolde` with `args` and `COLUMNS=columns` in its environment: the
/// width clap wraps help to when standard output is not a terminal.
pub fn isolde_columns(args: &[&str], columns: usize) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_isolde"))
        .args(args)
        .env("COLUMNS", columns.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The long options (`--name`) a help text lists, in order, without
/// repeats.
pub fn long_options(help: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for word in help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '(' || c == '`') {
        let name: String = word.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        if name.len() > 2 && name.starts_with("--") && !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen
}

/// The options a help text lists, one per entry (`  -m, --model <M>`: the
/// long name, or the short one when there is none), in order: the lines
/// clap starts with a dash two columns in (a short flag) or six (a long
/// one alone), not the option names the descriptions mention.
pub fn listed_options(help: &str) -> Vec<String> {
    help.lines()
        .filter(|l| {
            let indent = l.len() - l.trim_start_matches(' ').len();
            (indent == 2 || indent == 6) && l[indent..].starts_with('-')
        })
        .map(|l| {
            let head = l.trim_start().split("  ").next().unwrap_or_default();
            let names: Vec<&str> = head.split([',', ' ', '=', '[', '<']).filter(|w| w.starts_with('-')).collect();
            let long = names.iter().find(|w| w.starts_with("--")).or(names.first()).copied().unwrap_or_default();
            long.to_string()
        })
        .collect()
}

/// Opens `page` in headless `browser` (a 1200×1600 window, profile under
/// `dir`), checks that it ran and logged no console error or uncaught
/// exception, and returns the screenshot's PNG bytes.
pub fn screenshot(browser: &std::path::Path, page: &std::path::Path, dir: &std::path::Path) -> Vec<u8> {
    let shot = dir.join("shot.png");
    let run = run_program(
        browser,
        &[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", dir.join("profile").display()),
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600",
            "--hide-scrollbars",
            &format!("file://{}", page.display()),
        ],
        None,
        Duration::from_secs(90),
    );
    assert_eq!(run.code, 0, "{run:?}");
    // Console messages are logged as `CONSOLE(...)`; errors and exceptions
    // would show there.
    for l in run.stderr.lines().filter(|l| l.contains("CONSOLE")) {
        assert!(!l.contains("ERROR") && !l.contains("Uncaught"), "console: {l}");
    }
    std::fs::read(&shot).expect("a screenshot")
}
