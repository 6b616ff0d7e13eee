//! Every command the README shows runs as shown.
//!
//! The README's command lines (the lines of its `sh` blocks, and the `$ `
//! lines of its other blocks, a trailing `\` joining the next line) are
//! listed below with how this test runs each one; a README command missing
//! from the list, or a listed one the README no longer shows, fails the
//! test, so the list follows the README. Each runs with `sh` in a scratch
//! directory holding the repository's `examples/`, with the built `isolde`
//! first on `PATH`, in the README's order (a later command reads what an
//! earlier one wrote, as `isolde analyze h.edn` after `isolde record … -o
//! h.edn`). The placeholders the README uses for the reader's own files
//! (`store/my-test/latest`, `history.edn`, `h1.edn`, ...) are made from
//! `examples/sample.edn`, so those commands run too. What is not run as
//! shown says why: cargo's own commands (CI runs them), `echo $?` (the
//! exit status it shows is checked), a command that needs a database
//! server (run when `ISOLDE_TEST_POSTGRES` names one), a change to the
//! reader's home directory, and three long runs, run shorter.

use crate::support;

use std::path::Path;
use std::time::Duration;

use support::cli::{run_program, temp_dir};

/// How the test runs one README command.
enum How {
    /// As shown; the exit status it must end with.
    Run(i32),
    /// As the given command instead (a shorter run of the same options),
    /// with the exit status; the reason is in the comment beside it.
    Shorter(&'static str, i32),
    /// Needs a PostgreSQL server: run with the URL of
    /// `ISOLDE_TEST_POSTGRES` in place of the README's, else skipped.
    Postgres(i32),
    /// Not run; why.
    Not(&'static str),
}

/// The README's commands, in its order, and how each is run.
const COMMANDS: &[(&str, How)] = &[
    ("cargo install --locked --path .", How::Not("cargo's own; .ci/run builds and tests the clone")),
    ("cargo test", How::Not("cargo's own; .ci/run runs it")),
    ("isolde analyze examples/sample.edn", How::Run(1)),
    ("echo $?", How::Not("prints the exit status of the command above, which this test checks")),
    ("isolde record --txns 2000 --sessions 8 -o h.edn", How::Run(0)),
    ("isolde analyze h.edn", How::Run(0)),
    (
        "isolde record --db postgres://USER:PASS@localhost/DB --isolation repeatable-read --pattern write-skew \
         --keys 4 --key-dist uniform --txns 1500 --sessions 8 -o pg.edn",
        How::Postgres(0),
    ),
    ("isolde analyze pg.edn -c serializable", How::Postgres(1)),
    ("isolde hermitage", How::Run(0)),
    ("isolde explore examples/counter.edn --level causal-cerone -d out", How::Run(1)),
    ("isolde analyze out/violation-1.edn --model snapshot-isolation", How::Run(1)),
    // The placeholder history is complete: it would wait out --follow-idle.
    (
        "isolde analyze --follow store/my-test/latest --follow-idle 30",
        How::Shorter("isolde analyze --follow store/my-test/latest --follow-idle 1", 1),
    ),
    // Ten million transactions take minutes; a hundred thousand, seconds.
    (
        "isolde gen list-append --txns 10000000 -o - | isolde analyze --follow - -m strict-serializable",
        How::Shorter("isolde gen list-append --txns 100000 -o - | isolde analyze --follow - -m strict-serializable", 0),
    ),
    // Ten minutes of recording; two seconds show the same run.
    ("isolde record --check --duration 600", How::Shorter("isolde record --check --duration 2", 0)),
    // A million transactions take a minute on two cores; a hundred thousand, seconds.
    (
        "isolde gen list-append --txns 1000000 -o big.edn",
        How::Shorter("isolde gen list-append --txns 100000 -o big.edn", 0),
    ),
    ("isolde analyze big.edn --local-processes 3", How::Run(0)),
    (
        "isolde analyze /shared/big.edn --processes 3 --process 0 --hostfile hosts.txt --threads 8",
        How::Not("needs three hosts; tests/dist runs the same options over loopback"),
    ),
    ("isolde analyze store/my-test/latest -c snapshot-isolation", How::Run(1)),
    ("isolde analyze store/*/latest --format json", How::Run(1)),
    ("isolde analyze history.edn.gz", How::Run(1)),
    // history.edn is now the one `isolde record --check` wrote (valid).
    ("cat history.edn | isolde analyze -", How::Run(0)),
    ("isolde elle-cli -m list-append -c serializable h1.edn h2.edn", How::Run(1)),
    ("ln -s \"$(command -v isolde)\" ~/.cargo/bin/elle-cli", How::Not("changes the reader's ~/.cargo/bin")),
];

/// The command lines of `readme` (see the module docs), comments dropped,
/// whitespace runs made one space.
pub fn readme_commands(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut block, mut shell, mut pending) = (false, false, String::new());
    for line in readme.lines() {
        if let Some(lang) = line.strip_prefix("```") {
            (block, shell) = (!block, !block && lang.trim() == "sh");
            continue;
        }
        let text = match (block, shell) {
            (true, true) if !line.trim_start().starts_with('#') => line,
            (true, false) => match line.strip_prefix("$ ") {
                Some(command) => command,
                None => continue,
            },
            _ => continue,
        };
        let text = match text.find(" #") {
            Some(i) => &text[..i],
            None => text,
        };
        let text = text.trim();
        if let Some(head) = text.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(text);
        let command = pending.split_whitespace().collect::<Vec<_>>().join(" ");
        pending.clear();
        if !command.is_empty() {
            out.push(command);
        }
    }
    out
}

fn normalized(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn readme_commands_are_read_from_its_blocks() {
    let readme = "text `isolde no`\n```sh\nisolde a x   # a comment\nisolde b \\\n   --c d\n# a note\n```\n\
                  ```\n$ isolde e\noutput isolde f\n```\n";
    assert_eq!(readme_commands(readme), ["isolde a x", "isolde b --c d", "isolde e"]);
}

#[test]
fn every_readme_command_is_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let listed: Vec<String> = COMMANDS.iter().map(|(c, _)| normalized(c)).collect();
    assert_eq!(readme_commands(&readme), listed, "the README's commands vs this test's list");
}

/// A scratch directory like a fresh clone's root for the README's
/// commands: `examples/`, and the placeholders made from
/// `examples/sample.edn`.
fn scratch(root: &Path, dir: &Path) {
    let sample = std::fs::read(root.join("examples/sample.edn")).expect("sample");
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("examples") {
            let p = entry.expect("entry").path();
            if p.is_file() {
                std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
            }
        }
    };
    copy(&root.join("examples"), &dir.join("examples"));
    std::fs::create_dir_all(dir.join("store/my-test/latest")).expect("store");
    for name in ["store/my-test/latest/history.edn", "history.edn", "h1.edn", "h2.edn"] {
        std::fs::write(dir.join(name), &sample).expect("placeholder");
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &sample).expect("gzip");
    std::fs::write(dir.join("history.edn.gz"), gz.finish().expect("gzip")).expect("history.edn.gz");
}

#[test]
fn readme_commands_run_as_shown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = temp_dir("readme");
    scratch(root, &dir);
    let bin = Path::new(env!("CARGO_BIN_EXE_isolde")).parent().expect("bin dir");
    let postgres = std::env::var("ISOLDE_TEST_POSTGRES").ok().filter(|u| !u.is_empty());
    let mut ran = 0;
    for (shown, how) in COMMANDS {
        let (command, code) = match how {
            How::Run(code) => (normalized(shown), *code),
            How::Shorter(command, code) => (normalized(command), *code),
            How::Postgres(code) => match &postgres {
                Some(url) => (normalized(shown).replace("postgres://USER:PASS@localhost/DB", url), *code),
                None => {
                    eprintln!("SKIPPED (part): ISOLDE_TEST_POSTGRES unset: {shown}");
                    continue;
                }
            },
            How::Not(why) => {
                eprintln!("not run: {shown}: {why}");
                continue;
            }
        };
        let script = format!("cd '{}' && PATH='{}':\"$PATH\" && {command}", dir.display(), bin.display());
        let r = run_program(Path::new("/bin/sh"), &["-c", &script], None, Duration::from_secs(300));
        assert_eq!(r.code, code, "README: {shown}\nran: {command}\nstdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
        assert!(!r.stderr.contains("Usage:"), "a usage error: {command}\n{}", r.stderr);
        ran += 1;
    }
    assert!(ran >= 16, "only {ran} README commands ran");
}
