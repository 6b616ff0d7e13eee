//! `isolde analyze --follow` on list-append checked for strict
//! serializability seals retired keys to a spill file
//! (`online::spill`): a read of a sealed key is checked exactly as if its
//! state had stayed in memory, and the file does not outlive the run.

use crate::support;

use isolde::outcome::Validity;
use support::online::{follow_sealing, generate_elle_shaped, options};

/// One process appends 1..=40 to `:x`, another reads `:x` after each
/// append (so the elements join `:x`'s collected prefix), then 300
/// transactions on other keys leave `:x` quiet, then a last transaction
/// reads `:x` as `last`.
fn revisited(last: &str) -> String {
    let mut text = String::new();
    let mut idx = 0;
    let mut op = |text: &mut String, ty: &str, p: u32, v: &str| {
        text.push_str(&format!("{{:type :{ty}, :f :txn, :value {v}, :process {p}, :index {idx}}}\n"));
        idx += 1;
    };
    for i in 1..=40 {
        op(&mut text, "invoke", 0, &format!("[[:append :x {i}]]"));
        op(&mut text, "ok", 0, &format!("[[:append :x {i}]]"));
        op(&mut text, "invoke", 1, "[[:r :x nil]]");
        let seen: Vec<String> = (1..=i).map(|e| e.to_string()).collect();
        op(&mut text, "ok", 1, &format!("[[:r :x [{}]]]", seen.join(" ")));
    }
    for k in 0..300 {
        op(&mut text, "invoke", 2, &format!("[[:append {k} 1] [:r {k} nil]]"));
        op(&mut text, "ok", 2, &format!("[[:append {k} 1] [:r {k} [1]]]"));
    }
    op(&mut text, "invoke", 3, "[[:r :x nil]]");
    op(&mut text, "ok", 3, &format!("[[:r :x {last}]]"));
    text
}

/// What a follow found: every anomaly type reported while following or
/// left for the final check, the cases left for it, and the verdict.
fn found(text: &str, quiet_lines: u32) -> (Vec<String>, Vec<String>, Validity, isolde::online::Sealed) {
    let check = options(true, Some("strict-serializable"));
    let (mut followed, rec) = follow_sealing(text, 20, &check, quiet_lines, None);
    let mut names: Vec<String> = rec.found.iter().map(|(n, _)| n.clone()).collect();
    let late = followed.window.as_ref().map_or(Vec::new(), |w| w.cases.clone());
    names.extend(late.iter().map(|(n, _)| n.clone()));
    // Key ids differ once the key table dropped sealed keys: each case
    // names its key by how it was written.
    let mut cases: Vec<String> = rec.cases.iter().map(|c| without_key_id(&format!("{c:?}"))).collect();
    if let Some(w) = &followed.window {
        for (_, c) in &late {
            let isolde::anomaly::Case::CollectedPrefix { key, .. } = c else { panic!("{c:?}") };
            cases.push(format!("{} on {}", without_key_id(&format!("{c:?}")), w.check.keys[key.0 as usize]));
        }
    }
    let verdict = isolde::online::final_check(&mut followed, &check).expect("final check").valid;
    assert!(followed.collected > 300, "{} collected", followed.collected);
    (names, cases, verdict, followed.sealed)
}

/// `case` (printed) without the key ids it names.
fn without_key_id(case: &str) -> String {
    case.split("KeyId(")
        .enumerate()
        .map(|(i, part)| if i == 0 { part } else { part.split_once(')').map_or(part, |p| p.1) })
        .collect()
}

/// A sealed key read again with its whole list is valid; read with a
/// collected element missing, it is the same anomaly, with the same
/// witness, as when the key's state stayed in memory.
#[test]
fn a_sealed_key_read_again_is_checked_as_if_it_had_stayed() {
    let whole: Vec<String> = (1..=40).map(|e| e.to_string()).collect();
    let stale: Vec<String> = (1..=30).map(|e| e.to_string()).collect();
    let gap: Vec<String> = (1..=40).filter(|&e| e != 7).map(|e| e.to_string()).collect();
    let check = options(true, Some("strict-serializable"));
    for (last, want) in [
        (format!("[{}]", whole.join(" ")), Validity::Valid),
        (format!("[{}]", stale.join(" ")), Validity::Invalid),
        (format!("[{}]", gap.join(" ")), Validity::Invalid),
    ] {
        let text = revisited(&last);
        let batch =
            isolde::ingest::read_bytes("batch.edn", text.as_bytes(), isolde::ingest::Format::Edn).expect("parses");
        assert_eq!(isolde::check::check(&batch, &check).expect("batch").valid, want, "{last}");
        // Quiet after 50 lines: `:x` is sealed, then read back for the
        // last read. Never quiet: it stays in memory.
        let sealed = found(&text, 50);
        let kept = found(&text, u32::MAX);
        assert!(sealed.3.keys >= 1 && sealed.3.read_back >= 1, "{last}: sealed and read back {:?}", sealed.3);
        assert!(sealed.3.bytes > 0, "{last}: {:?}", sealed.3);
        assert_eq!(kept.3, isolde::online::Sealed::default(), "{last}: nothing sealed");
        assert_eq!(sealed.2, want, "{last}");
        assert_eq!((&sealed.0, &sealed.1, sealed.2), (&kept.0, &kept.1, kept.2), "{last}");
        match want {
            Validity::Valid => assert!(sealed.0.is_empty(), "{last}: {:?}", sealed.0),
            _ => assert!(!sealed.0.is_empty(), "{last}"),
        }
    }
    let (names, ..) = found(&revisited(&format!("[{}]", stale.join(" "))), 50);
    assert!(names.iter().any(|n| n == "G-single-item-realtime"), "{names:?}");
}

/// The spill file lives in the chosen directory only while the run lasts
/// (on Unix it has no name at all): after a run that sealed and read back
/// many keys, the directory is empty.
#[test]
fn the_spill_file_is_gone_after_the_run() {
    let dir = std::env::temp_dir().join(format!("isolde-spill-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("creates a directory");
    let text = generate_elle_shaped(5, 20_000);
    let check = options(true, Some("strict-serializable"));
    let (mut followed, rec) = follow_sealing(&text, 1_000, &check, 0, Some(dir.clone()));
    assert!(rec.found.is_empty(), "{:?}", rec.found);
    // Sealed as soon as no held op mentions them, many keys come back.
    assert!(followed.sealed.keys > 100 && followed.sealed.read_back > 10, "{:?} sealed", followed.sealed);
    assert_ne!(isolde::online::final_check(&mut followed, &check).expect("final").valid, Validity::Invalid);
    let left: Vec<_> = std::fs::read_dir(&dir).expect("reads the directory").collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir(&dir).expect("removes the empty directory");
}
