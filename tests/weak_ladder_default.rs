//! The terminal default of `isolde analyze` (no `--model`): the Elle verdict,
//! then the ladder of every level; piped and JSON output unchanged.

mod support;

use isolde::cli::shows_ladder;
use std::time::Duration;
use support::cli::{isolde, run_program, temp_dir};

/// weak.md's E-RA: a fractured read (read committed holds, read atomic
/// fails), which the default strict-serializable verdict calls G-single.
const FRACTURED: &str = "{:type :ok, :f :txn, :process 0, :value [[:w :x 1] [:w :y 1]], :index 0}\n\
{:type :ok, :f :txn, :process 1, :value [[:r :y nil] [:r :x 1]], :index 1}\n";

#[test]
fn when_the_ladder_is_shown() {
    let all = Some(vec!["all".to_string()]);
    let ser = Some(vec!["serializable".to_string()]);
    assert!(shows_ladder(&None, true, true));
    assert!(!shows_ladder(&None, true, false), "piped table: unchanged");
    assert!(!shows_ladder(&None, false, true), "json/edn: unchanged");
    assert!(shows_ladder(&all, true, false));
    assert!(!shows_ladder(&ser, true, true), "a model asked for: its table only");
}

#[test]
fn a_terminal_gets_the_ladder_after_the_verdict() {
    let dir = temp_dir("weak-ladder-default");
    let p = dir.join("fractured.edn");
    std::fs::write(&p, FRACTURED).expect("write");
    let path = p.to_string_lossy().to_string();
    let piped = isolde(&["analyze", &path, "--format", "table"], None, Duration::from_secs(30));
    assert_eq!(piped.code, 1, "{piped:?}");
    assert!(!piped.stdout.contains("read committed (Biswas–Enea)"), "{}", piped.stdout);
    // `script` runs the command on a pseudo-terminal.
    let Ok(script) = which("script") else {
        eprintln!("skipped: no `script` to give isolde a terminal");
        return;
    };
    let cmd = format!("{} analyze {path}", env!("CARGO_BIN_EXE_isolde"));
    let tty = run_program(&script, &["-qec", &cmd, "/dev/null"], None, Duration::from_secs(60));
    assert_eq!(tty.code, 1, "the exit status is the Elle verdict's: {tty:?}");
    let out = tty.stdout.replace('\r', "");
    let verdict = out.find(&piped.stdout.lines().next().unwrap_or("?").to_string()).expect("verdict first");
    let ladder = out.find("read committed (Biswas–Enea)").expect("ladder shown");
    assert!(verdict < ladder, "{out}");
    let row = |label: &str| out.lines().find(|l| l.contains(label)).unwrap_or_default().to_string();
    assert!(row("read committed (Biswas–Enea)").contains("valid"), "{out}");
    assert!(row("read atomic").contains("INVALID (weakest violated)"), "{out}");
    assert!(row("read atomic").contains("fractured-read"), "{out}");
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()))
        .ok_or(())
}
