//! Jepsen's own store file `test.jepsen`: the history of a run as Jepsen
//! leaves it, read op for op as its `history.edn`; a file cut at any byte
//! read up to its last sealed chunk and reported as recovered in part;
//! bad input refused with a message naming the file and what was read.
//!
//! The two public store files (`Deabus/braft_bug`, an rw-register test,
//! and `jerrytesting/Canonical-raft-bug-logs`, a register test) carry no
//! licence, so they are not copied here: set `ISOLDE_JEPSEN_STORES` to a
//! directory holding `braft_bug/` and `canonical-raft/`, each with the
//! repository's `test.jepsen` and `history.edn`, to check them (the test
//! says it skipped otherwise).

use crate::support;

use isolde::history::History;
use isolde::ingest::{self, Format, IngestError};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::cli::{isolde, temp_dir};
use support::jepsen_store::{history_edn, list_append_ops, Store};

const LIMIT: Duration = Duration::from_secs(120);

/// Everything of a history but its source name and store note, for
/// op-for-op comparison.
fn fingerprint(h: &History) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{} {} {} {}",
        h.ops,
        h.mops,
        h.elements,
        h.keys,
        h.values,
        h.fs,
        h.extras,
        h.nonclient_ops,
        h.dropped_events,
        h.indeterminate_txns,
        h.unsigned_values
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    std::fs::create_dir_all(dir).expect("dir");
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

#[test]
fn a_written_store_reads_as_its_history_edn_op_for_op() {
    let ops = list_append_ops(300);
    let store = Store::write(&ops, 16, true);
    let root = temp_dir("store-equal");
    let jepsen = write(&root, "test.jepsen", &store.bytes);
    let edn = write(&root.join("edn"), "history.edn", history_edn(&ops).as_bytes());
    let a = ingest::read_path(&jepsen, Format::Auto).expect("store");
    let b = ingest::read_path(&edn, Format::Auto).expect("edn");
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let note = a.store.as_ref().expect("a store note");
    assert_eq!(note.partial, None, "{note:?}");
    assert_eq!(note.name.as_deref(), Some("store-test"));
    assert_eq!(note.nodes, ["n1", "n2"]);
    assert_eq!(note.concurrency, Some(5));
    assert_eq!(note.start_time.as_deref(), Some("20260801T120000.000Z"));
    assert!(b.store.is_none());
}

#[test]
fn a_store_cut_at_every_byte_is_read_up_to_its_last_sealed_chunk() {
    let ops = list_append_ops(40);
    let store = Store::write(&ops, 8, true);
    let bytes = &store.bytes;
    let mut cuts_read = 0;
    for len in 0..=bytes.len() {
        let r = ingest::read_bytes("t/test.jepsen", &bytes[..len], Format::JepsenStore);
        let msg = |r: &Result<History, IngestError>| match r {
            Ok(h) => format!("{} ops", h.ops.len()),
            Err(e) => e.to_string(),
        };
        match store.recoverable(len) {
            None => {
                let e = r.as_ref().err().unwrap_or_else(|| panic!("cut at {len}: {}", msg(&r))).to_string();
                assert!(e.starts_with("t/test.jepsen: "), "{e}");
                assert!(
                    e.contains("cut short")
                        || e.contains("without a complete index block")
                        || e.contains("not a Jepsen")
                        || e.contains("is empty"),
                    "cut at {len}: {e}"
                );
            }
            Some(cp) if cp.ops == 0 => {
                let e = r.as_ref().err().unwrap_or_else(|| panic!("cut at {len}: {}", msg(&r))).to_string();
                assert!(e.contains("no op of its history is sealed yet"), "cut at {len}: {e}");
            }
            Some(cp) => {
                let h = r.unwrap_or_else(|e| panic!("cut at {len}: {e}"));
                let prefix = history_edn(&ops[..cp.ops]);
                let want = ingest::read_bytes("h.edn", prefix.as_bytes(), Format::Edn).expect("prefix");
                assert_eq!(fingerprint(&h), fingerprint(&want), "cut at {len}");
                let note = h.store.as_ref().expect("note");
                match (&note.partial, cp.complete) {
                    (None, true) => {}
                    (Some(p), false) => {
                        assert_eq!(p.ops, cp.ops, "cut at {len}");
                        assert!(p.offset as usize <= len, "cut at {len}: {p:?}");
                        assert!(!p.reason.is_empty());
                    }
                    (p, complete) => panic!("cut at {len}: partial {p:?}, complete {complete}"),
                }
                cuts_read += 1;
            }
        }
    }
    assert!(cuts_read > bytes.len() / 2, "{cuts_read} of {} cuts read", bytes.len());
}

#[test]
fn a_store_growing_chunk_by_chunk_reads_each_checkpoint() {
    // A run still going: the chunk being filled has a blank header.
    let ops = list_append_ops(60);
    for n in [10, 17, 33, ops.len()] {
        let store = Store::write(&ops[..n], 8, false);
        let sealed = store.checkpoints.last().expect("index").ops;
        let r = ingest::read_bytes("test.jepsen", &store.bytes, Format::Auto);
        if sealed == 0 {
            assert!(r.unwrap_err().to_string().contains("no op of its history is sealed yet"));
            continue;
        }
        let h = r.expect("read");
        let p = h.store.as_ref().and_then(|s| s.partial.clone()).expect("partial");
        assert_eq!(p.ops, sealed);
        assert!(p.reason.contains("not sealed yet"), "{p:?}");
        let want = ingest::read_bytes("h.edn", history_edn(&ops[..sealed]).as_bytes(), Format::Edn).expect("edn");
        assert_eq!(fingerprint(&h), fingerprint(&want));
    }
}

#[test]
fn damaged_blocks_end_what_is_trusted() {
    let ops = list_append_ops(40);
    let store = Store::write(&ops, 8, true);
    // Flip a byte inside the third sealed chunk: reading keeps what came before.
    let chunk_starts: Vec<usize> = store.block_starts.iter().copied().filter(|&o| store.bytes[o + 13] == 4).collect();
    let at = chunk_starts[2] + 40;
    let mut bad = store.bytes.clone();
    bad[at] ^= 0x55;
    let h = ingest::read_bytes("test.jepsen", &bad, Format::Auto).expect("read");
    let p = h.store.as_ref().and_then(|s| s.partial.clone()).expect("partial");
    assert_eq!(p.offset as usize, chunk_starts[2]);
    assert!(p.reason.contains("fails its CRC"), "{p:?}");
    assert_eq!(p.ops, 16, "two sealed chunks of 8");
}

#[test]
fn bad_input_is_refused_with_what_was_read() {
    let root = temp_dir("store-bad");
    let not = write(&root, "test.jepsen", b"{:type :invoke}");
    let e = ingest::read_path(&not, Format::JepsenStore).unwrap_err().to_string();
    assert!(e.contains("test.jepsen: is not a Jepsen store file"), "{e}");
    let mut store = Store::write(&list_append_ops(5), 8, true).bytes;
    store[6..10].copy_from_slice(&7i32.to_be_bytes());
    let e = ingest::read_bytes("v.jepsen", &store, Format::Auto).unwrap_err().to_string();
    assert!(e.contains("v.jepsen: at byte 6") && e.contains("version 7"), "{e}");
    // An op whose value holds a tag Jepsen never writes.
    let mut ops = list_append_ops(3);
    ops[1].value = support::jepsen_store::V::Tagged("my.Tag".into(), Box::new(support::jepsen_store::V::Int(3)));
    let store = Store::write(&ops, 8, true).bytes;
    let at = store.windows(7).position(|w| w[0] == 0xEF && &w[2..] == b"my.Ta").expect("the tag");
    let e = ingest::read_bytes("tag.jepsen", &store, Format::Auto).unwrap_err().to_string();
    assert!(e.contains(&format!("at byte {at}")) && e.contains("unknown Fressian tag `my.Tag`"), "{e}");
    // Still being written: nothing sealed yet.
    let e = ingest::read_bytes("run.jepsen", &Store::write(&list_append_ops(3), 100, false).bytes, Format::Auto)
        .unwrap_err()
        .to_string();
    assert!(e.contains("run.jepsen") && e.contains("no op of its history is sealed yet"), "{e}");
}

/// The JSON result of `analyze` without keys that name the input.
fn verdict(args: &[&str]) -> (i32, serde_json::Value, String) {
    let r = isolde(&[&["analyze", "-f", "json"], args].concat(), None, LIMIT);
    assert!(r.stdout.starts_with('{'), "{args:?}: {r:?}");
    let mut j = r.json();
    if let Some(m) = j.as_object_mut() {
        m.remove("history-recovered-in-part");
    }
    (r.code, j, r.stderr)
}

#[test]
fn a_store_directory_holding_only_test_jepsen_is_analyzed() {
    let ops = list_append_ops(100);
    let root = temp_dir("store-dir");
    let run = root.join("store/t/20260801T120000.000Z");
    write(&run, "test.jepsen", &Store::write(&ops, 16, true).bytes);
    std::os::unix::fs::symlink("20260801T120000.000Z", root.join("store/t/latest")).expect("latest");
    let edn = write(&root.join("edn"), "history.edn", history_edn(&ops).as_bytes());
    let want = verdict(&[edn.to_str().expect("utf8")]);
    for dir in [root.join("store/t/latest"), root.join("store/t"), run.join("test.jepsen")] {
        let got = verdict(&[dir.to_str().expect("utf8")]);
        assert_eq!((got.0, &got.1), (want.0, &want.1), "{dir:?}");
    }
    let t = isolde(&["analyze", "-f", "table", root.join("store/t/latest").to_str().expect("utf8")], None, LIMIT);
    assert!(
        t.stdout.contains("Jepsen test store-test, started 20260801T120000.000Z, nodes n1 n2, concurrency 5"),
        "{t:?}"
    );
    assert!(!t.stdout.contains("PARTIAL"), "{t:?}");
}

/// `isolde elle-cli` (elle-cli's arguments) reads a store file and a store
/// directory as it reads the history.edn beside them.
#[test]
fn elle_cli_reads_test_jepsen_as_its_history_edn() {
    let ops = invalid_ops(120);
    let root = temp_dir("store-elle-cli");
    let run = root.join("run");
    let store = write(&run, "test.jepsen", &Store::write(&ops, 16, true).bytes);
    let edn = write(&root.join("edn"), "history.edn", history_edn(&ops).as_bytes());
    let cli = |path: &Path| {
        let r = isolde(&["elle-cli", "--model", "list-append", path.to_str().expect("utf8")], None, LIMIT);
        let first = r.stdout.lines().next().unwrap_or_default();
        let verdict = first.split_once('\t').map(|(_, v)| v.trim().to_string());
        (r.code, verdict, r.stderr)
    };
    let want = cli(&edn);
    assert_eq!(want.1.as_deref(), Some("false"), "an invalid history: {want:?}");
    for path in [store, run] {
        let got = cli(&path);
        assert_eq!((got.0, &got.1), (want.0, &want.1), "{path:?}: {got:?}");
    }
}

#[test]
fn every_output_says_when_the_history_was_recovered_in_part() {
    let ops = list_append_ops(100);
    let store = Store::write(&ops, 16, true);
    // Cut inside the fifth sealed chunk.
    let fifth = store.block_starts.iter().copied().filter(|&o| store.bytes[o + 13] == 4).nth(4).expect("chunk");
    let cut = fifth + 50;
    let sealed = store.recoverable(cut).expect("checkpoint").ops;
    let root = temp_dir("store-cut");
    let run = root.join("run");
    write(&run, "test.jepsen", &store.bytes[..cut]);
    let edn = write(&root.join("edn"), "history.edn", history_edn(&ops[..sealed]).as_bytes());
    let dir = run.to_str().expect("utf8");
    let (code, json, stderr) = verdict(&[dir]);
    let want = verdict(&[edn.to_str().expect("utf8")]);
    assert_eq!((code, &json), (want.0, &want.1));
    let said = format!("{sealed} ops read; reading stopped at byte {fifth}");
    assert!(stderr.contains(&said) && stderr.contains("runs past the end of the file"), "{stderr}");
    let r = isolde(&["analyze", "-f", "json", dir], None, LIMIT);
    let part = &r.json()["history-recovered-in-part"];
    assert_eq!(part["ops"], serde_json::json!(sealed), "{}", r.stdout);
    assert_eq!(part["stopped-at-byte"], serde_json::json!(fifth));
    let e = isolde(&["analyze", "-f", "edn", dir], None, LIMIT);
    assert!(e.stdout.contains(":history-recovered-in-part {") && e.stdout.contains(&format!(":ops {sealed}")), "{e:?}");
    let t = isolde(&["analyze", "-f", "table", dir], None, LIMIT);
    // The table wraps its lines to the terminal's width.
    let words = t.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("PARTIAL: history recovered in part") && words.contains(&said), "{t:?}");
    let html = root.join("page.html");
    let h = isolde(&["analyze", "-f", "json", "--html", html.to_str().expect("utf8"), dir], None, LIMIT);
    assert!(h.code == code, "{h:?}");
    let page = std::fs::read_to_string(&html).expect("page");
    assert!(page.contains("Partial history:") && page.contains(&said), "html");
}

/// The public store files, when present (see the module docs).
fn public(name: &str) -> Option<PathBuf> {
    let Some(base) = std::env::var_os("ISOLDE_JEPSEN_STORES") else {
        eprintln!("skipped: set ISOLDE_JEPSEN_STORES to check the public store file {name}");
        return None;
    };
    let dir = PathBuf::from(base).join(name);
    match dir.join("test.jepsen").is_file() && dir.join("history.edn").is_file() {
        true => Some(dir),
        false => {
            eprintln!("skipped: {} lacks test.jepsen or history.edn", dir.display());
            None
        }
    }
}

#[test]
fn public_store_files_read_as_their_history_edn() {
    for name in ["braft_bug", "canonical-raft"] {
        let Some(dir) = public(name) else { continue };
        let a = ingest::read_path(&dir.join("test.jepsen"), Format::Auto);
        let b = ingest::read_path(&dir.join("history.edn"), Format::Auto);
        match (&a, &b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(fingerprint(a), fingerprint(b), "{name}");
                assert_eq!(a.store.as_ref().and_then(|s| s.partial.clone()), None, "{name}");
            }
            // A register test: the columnar reader refuses both alike.
            (Err(x), Err(y)) => assert_eq!(
                x.to_string().replace("test.jepsen", "F"),
                y.to_string().replace("history.edn", "F"),
                "{name}"
            ),
            _ => panic!("{name}: {:?} / {:?}", a.as_ref().map(|h| h.ops.len()), b.as_ref().map(|h| h.ops.len())),
        }
        // A store directory holding only test.jepsen gives history.edn's verdict.
        let only = temp_dir("store-public").join(name);
        std::fs::create_dir_all(&only).expect("dir");
        std::fs::copy(dir.join("test.jepsen"), only.join("test.jepsen")).expect("copy");
        let run = |p: &Path| isolde(&["analyze", "-f", "json", p.to_str().expect("utf8")], None, LIMIT);
        let (x, y) = (run(&only), run(&dir.join("history.edn")));
        assert_eq!(x.code, y.code, "{name}: {x:?} / {y:?}");
        assert_eq!(x.stdout, y.stdout, "{name}");
    }
}

/// A list-append history with a lost append in an early chunk: a read in
/// transaction 20 misses an append an earlier read saw.
fn invalid_ops(txns: usize) -> Vec<support::jepsen_store::Op> {
    use support::jepsen_store::V;
    let mut ops = list_append_ops(txns);
    let ok = ops.iter().position(|o| o.ty == "ok" && o.index > 40).expect("an ok");
    if let V::Vec(mops) = &mut ops[ok].value {
        if let V::Vec(read) = &mut mops[1] {
            read[2] = V::Vec(vec![]);
        }
    }
    ops
}

#[test]
fn follow_reads_chunks_as_they_are_sealed_and_ends_with_the_batch_verdict() {
    let ops = invalid_ops(120);
    let root = temp_dir("store-follow");
    let run = root.join("store/t/20260801T120000.000Z");
    std::fs::create_dir_all(&run).expect("run");
    std::os::unix::fs::symlink("20260801T120000.000Z", root.join("store/t/latest")).expect("latest");
    let path = run.join("test.jepsen");
    // The run as it goes: a blank-headed chunk being filled, sealed chunks,
    // and at last the test map saved again.
    let stages: Vec<Vec<u8>> = [20, 60, 150, 200].iter().map(|&n| Store::write(&ops[..n], 16, false).bytes).collect();
    let last = Store::write(&ops, 16, true).bytes;
    std::fs::write(&path, &stages[0]).expect("stage");
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || {
            // Each stage replaces the file at once (written beside it, then
            // renamed): Jepsen's file only grows, and `fs::write` would let
            // the follower see it truncated to nothing for a moment.
            let next = path.with_extension("next");
            for s in stages.iter().skip(1).chain(std::iter::once(&last)) {
                std::thread::sleep(Duration::from_millis(400));
                std::fs::write(&next, s).expect("stage");
                std::fs::rename(&next, &path).expect("stage in place");
            }
        })
    };
    let latest = root.join("store/t/latest");
    let r = isolde(
        &[
            "analyze",
            "--follow",
            latest.to_str().expect("utf8"),
            "--follow-idle",
            "20",
            "-f",
            "json",
            "--round-ms",
            "50",
        ],
        None,
        LIMIT,
    );
    writer.join().expect("writer");
    let edn = write(&root.join("edn"), "history.edn", history_edn(&ops).as_bytes());
    let whole = isolde(&["analyze", edn.to_str().expect("utf8"), "-f", "json"], None, LIMIT);
    assert_eq!(r.code, whole.code, "{r:?}");
    assert!(r.stderr.contains(&format!("the history is complete: {} ops read", ops.len())), "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines.len() > 1, "anomalies reported as chunks arrive, then the verdict: {}", r.stdout);
    let verdict: serde_json::Value = serde_json::from_str(lines.last().expect("verdict")).expect("JSON");
    assert_eq!(verdict["anomaly-types"], whole.json()["anomaly-types"], "{}", r.stdout);
}

/// A test that never finishes (no complete test map): following ends at the
/// idle limit, and the verdict says the history was recovered in part.
#[test]
fn following_an_unfinished_test_says_the_history_was_read_in_part() {
    let ops = list_append_ops(60);
    let root = temp_dir("store-follow-part");
    let store = Store::write(&ops, 16, false);
    let path = write(&root.join("run"), "test.jepsen", &store.bytes);
    let r = isolde(
        &["analyze", "--follow", path.to_str().expect("utf8"), "--follow-idle", "1", "-f", "json", "--round-ms", "50"],
        None,
        LIMIT,
    );
    let verdict: serde_json::Value = serde_json::from_str(r.stdout.lines().last().expect("a verdict")).expect("JSON");
    let part = &verdict["history-recovered-in-part"];
    let read = part["ops"].as_u64().expect("ops read");
    assert!(read > 0 && read <= ops.len() as u64, "{r:?}");
    let why = part["reason"].as_str().unwrap_or_default();
    assert!(why.contains("idle limit") && why.contains("before the test map marked the history complete"), "{r:?}");
}

/// `cargo test --test jepsen -- --ignored --nocapture reading_a_million`:
/// reading a 1M-op history from test.jepsen against reading it from
/// history.edn (best of three each).
#[test]
#[ignore]
fn reading_a_million_ops_from_test_jepsen_costs_at_most_half_again_history_edn() {
    let ops = support::jepsen_store::list_append_ops_keys(505_000, 50_000);
    assert!(ops.len() >= 1_000_000, "{}", ops.len());
    let root = temp_dir("store-speed");
    let jepsen = write(&root, "test.jepsen", &Store::write(&ops, 16_384, true).bytes);
    let edn = write(&root.join("edn"), "history.edn", history_edn(&ops).as_bytes());
    drop(ops);
    // ISOLDE_KEEP_STORE=DIR keeps both files there, for profiling.
    if let Some(keep) = std::env::var_os("ISOLDE_KEEP_STORE") {
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).expect("keep dir");
        std::fs::copy(&jepsen, keep.join("test.jepsen")).expect("copy");
        std::fs::copy(&edn, keep.join("history.edn")).expect("copy");
    }
    let time = |p: &Path| {
        (0..3)
            .map(|_| {
                let t = std::time::Instant::now();
                let h = ingest::read_path(p, Format::Auto).expect("reads");
                assert!(h.ops.len() >= 1_000_000);
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let (e, j) = (time(&edn), time(&jepsen));
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    println!(
        "history.edn {:.1} MB: {e:.3}s; test.jepsen {:.1} MB: {j:.3}s; ratio {:.2}",
        size(&edn),
        size(&jepsen),
        j / e
    );
    assert!(j <= 1.5 * e, "test.jepsen {j:.3}s, history.edn {e:.3}s");
}
