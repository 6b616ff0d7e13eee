//! The exact check against brute force: for small random register histories,
//! the polygraph verdict must equal a search over every commit order (and,
//! for snapshot isolation, every choice of snapshot), at every level.

use isolde::ingest::{read_bytes, Format};
use isolde::si_check::{check_level, ExactOptions, Level, OrderKind, Semantics, Verdict};
use proptest::prelude::*;

/// One generated transaction.
#[derive(Clone, Debug)]
struct Txn {
    process: u32,
    /// (is_write, key, value or None for a nil read)
    mops: Vec<(bool, u8, Option<i64>)>,
    /// 0 ok, 1 fail, 2 info.
    outcome: u8,
}

/// Raw draws: per txn (process, outcome, mops as (write?, key, pick)).
type Draw = Vec<(u32, u8, Vec<(bool, u8, u8)>)>;

/// Turns draws into a history: writes get unique per-key values in draw
/// order, reads pick nil or any value written to the key anywhere.
fn build(draw: &Draw, keys: u8) -> Vec<Txn> {
    let mut next = vec![1i64; keys as usize];
    let mut written: Vec<Vec<i64>> = vec![Vec::new(); keys as usize];
    let mut txns: Vec<Txn> = draw
        .iter()
        .map(|(p, o, ms)| Txn {
            process: *p,
            outcome: match o % 10 {
                0 => 1,
                1 => 2,
                _ => 0,
            },
            mops: ms
                .iter()
                .map(|&(w, k, _)| {
                    let k = k % keys;
                    if w {
                        let v = next[k as usize];
                        next[k as usize] += 1;
                        written[k as usize].push(v);
                        (true, k, Some(v))
                    } else {
                        (false, k, None)
                    }
                })
                .collect(),
        })
        .collect();
    for (t, (_, _, ms)) in txns.iter_mut().zip(draw) {
        for (m, &(_, _, pick)) in t.mops.iter_mut().zip(ms) {
            if !m.0 {
                let ws = &written[m.1 as usize];
                let i = pick as usize % (ws.len() + 1);
                m.2 = if i == 0 { None } else { Some(ws[i - 1]) };
            }
        }
    }
    txns
}

/// Serial history order: each process runs its transactions one after
/// another, processes interleaved by txn position so that some overlap.
/// Returns EDN text and, per txn, (invoke position, completion position).
fn edn(txns: &[Txn]) -> (String, Vec<(usize, usize)>) {
    // Events: txn i invokes at 2i and completes at 2i + 3 (so neighbours overlap).
    let mut events: Vec<(usize, bool, usize)> = Vec::new();
    let mut last_end: std::collections::HashMap<u32, usize> = Default::default();
    for (i, t) in txns.iter().enumerate() {
        let mut start = 2 * i;
        if let Some(&e) = last_end.get(&t.process) {
            start = start.max(e + 1);
        }
        let end = start + 3;
        last_end.insert(t.process, end);
        events.push((start, true, i));
        events.push((end, false, i));
    }
    events.sort();
    let mut pos = vec![(0, 0); txns.len()];
    let mut s = String::new();
    let kw = ["x", "y", "z"];
    for (n, &(_, inv, i)) in events.iter().enumerate() {
        let t = &txns[i];
        let ty = if inv {
            pos[i].0 = n;
            "invoke"
        } else {
            pos[i].1 = n;
            ["ok", "fail", "info"][t.outcome as usize]
        };
        let mops: Vec<String> = t
            .mops
            .iter()
            .map(|&(w, k, v)| {
                let shown = if inv && !w { None } else { v };
                format!(
                    "[:{} :{} {}]",
                    if w { "w" } else { "r" },
                    kw[k as usize],
                    shown.map(|x| x.to_string()).unwrap_or_else(|| "nil".into())
                )
            })
            .collect();
        s.push_str(&format!(
            "{{:type :{ty}, :f :txn, :process {}, :time {n}, :value [{}]}}\n",
            t.process,
            mops.join(" ")
        ));
    }
    (s, pos)
}

/// The brute-force oracle (see the module docs): which transactions take
/// part and their external reads follow the exact check's documented rules.
fn oracle(txns: &[Txn], pos: &[(usize, usize)], level: Level) -> bool {
    let writer_of = |k: u8, v: i64| {
        txns.iter().position(|t| t.outcome != 1 && t.mops.iter().any(|m| m.0 && m.1 == k && m.2 == Some(v)))
    };
    // Included: ok, and info observed by an ok external read.
    let mut include: Vec<bool> = txns.iter().map(|t| t.outcome == 0).collect();
    for t in txns.iter().filter(|t| t.outcome == 0) {
        for m in t.mops.iter().filter(|m| !m.0) {
            if let Some(w) = m.2.and_then(|v| writer_of(m.1, v)) {
                if txns[w].outcome == 2 {
                    include[w] = true;
                }
            }
        }
    }
    let ids: Vec<usize> = (0..txns.len()).filter(|&i| include[i]).collect();
    // External reads: (key, Some(writer) or None for init); unexplained dropped.
    let ext: Vec<Vec<(u8, Option<usize>)>> = ids
        .iter()
        .map(|&i| {
            let t = &txns[i];
            let mut seen = Vec::new();
            let mut out = Vec::new();
            for m in &t.mops {
                if seen.contains(&m.1) {
                    continue;
                }
                seen.push(m.1);
                if m.0 || t.outcome != 0 {
                    continue;
                }
                match m.2 {
                    None => out.push((m.1, None)),
                    Some(v) => {
                        if let Some(w) = writer_of(m.1, v) {
                            if w != i && include[w] {
                                out.push((m.1, Some(w)));
                            }
                        }
                    }
                }
            }
            out
        })
        .collect();
    let writes = |i: usize, k: u8| txns[i].mops.iter().any(|m| m.0 && m.1 == k);
    let n = ids.len();
    // Must `a` precede `b` (in commit order and, for SI, in b's snapshot)?
    let before = |a: usize, b: usize| -> bool {
        match level.order {
            OrderKind::None => false,
            OrderKind::Session => txns[a].process == txns[b].process && a < b,
            OrderKind::Realtime => {
                (txns[a].process == txns[b].process && a < b) || (txns[a].outcome == 0 && pos[a].1 < pos[b].0)
            }
        }
    };
    let mut perm: Vec<usize> = (0..n).collect();
    permutations(&mut perm, 0, &mut |order: &[usize]| {
        // order[j] = index into ids.
        let Some(at) = positions_respecting(order, |x, y| before(ids[x], ids[y])) else {
            return false;
        };
        (0..n).all(|x| {
            let p = at[x];
            // Snapshot = the first `s` committed transactions.
            let snaps: Vec<usize> = match level.semantics {
                Semantics::Serializable => vec![p],
                Semantics::SnapshotIsolation | Semantics::Prefix => (0..=p).collect(),
            };
            snaps.into_iter().any(|s| {
                let visible = &order[..s];
                let reads_ok = ext[x].iter().all(|&(k, from)| {
                    let latest = visible.iter().rev().find(|&&y| writes(ids[y], k)).map(|&y| ids[y]);
                    latest == from
                });
                // Prefix consistency drops snapshot isolation's conflict rule.
                let conflicts_ok = level.semantics == Semantics::Prefix
                    || order[s..p].iter().all(|&y| !txns[ids[y]].mops.iter().any(|m| m.0 && writes(ids[x], m.1)));
                let order_ok = order[s..p].iter().all(|&y| !before(ids[y], ids[x]));
                reads_ok && conflicts_ok && order_ok
            })
        })
    })
}

/// Calls `f` on every permutation until it returns true.
fn permutations(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize]) -> bool) -> bool {
    if k == v.len() {
        return f(v);
    }
    for i in k..v.len() {
        v.swap(k, i);
        if permutations(v, k + 1, f) {
            v.swap(k, i);
            return true;
        }
        v.swap(k, i);
    }
    false
}

fn levels() -> Vec<Level> {
    let mut out = Vec::new();
    for semantics in [Semantics::Serializable, Semantics::SnapshotIsolation, Semantics::Prefix] {
        for order in [OrderKind::None, OrderKind::Session, OrderKind::Realtime] {
            out.push(Level { semantics, order });
        }
    }
    out
}

fn draws() -> impl Strategy<Value = (Draw, u8)> {
    (
        prop::collection::vec(
            (0u32..3, 0u8..10, prop::collection::vec((any::<bool>(), 0u8..3, any::<u8>()), 1..4)),
            1..9,
        ),
        1u8..4,
    )
}

/// Runs 1,000 random histories of up to 8 transactions at every level,
/// with and without pruning, and checks that both verdicts occur often (so
/// the comparison is not vacuous).
#[test]
fn exact_verdicts_match_brute_force() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let valid = AtomicUsize::new(0);
    let invalid = AtomicUsize::new(0);
    let mut runner =
        proptest::test_runner::TestRunner::new(ProptestConfig { cases: 1000, ..ProptestConfig::default() });
    let result = runner.run(&draws(), |(draw, keys)| {
        let txns = build(&draw, keys);
        let (text, pos) = edn(&txns);
        let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for level in levels() {
            let expected = oracle(&txns, &pos, level);
            if expected { &valid } else { &invalid }.fetch_add(1, Relaxed);
            for prune in [true, false] {
                let opts = ExactOptions { prune, ..ExactOptions::default() };
                let out = check_level(&h, level, &opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
                match &out.verdict {
                    Verdict::Valid => {
                        prop_assert!(expected, "{level:?} prune={prune}: exact says valid, brute force refutes\n{text}")
                    }
                    Verdict::Invalid(r) => {
                        prop_assert!(
                            !expected,
                            "{level:?} prune={prune}: exact refutes, brute force finds an order\n{text}"
                        );
                        prop_assert!(!r.branches.is_empty());
                        // The name claimed must hold: anything short of G2
                        // refutes snapshot isolation at this order too.
                        let name = isolde::si_check::witness::refutation_name(r);
                        if !name.starts_with("G2") {
                            let si = Level { semantics: Semantics::SnapshotIsolation, ..level };
                            prop_assert!(!oracle(&txns, &pos, si), "{level:?}: named {name} but {si:?} holds\n{text}");
                        }
                        for b in &r.branches {
                            prop_assert_eq!(b.cycle.ops.len(), b.cycle.steps.len());
                        }
                    }
                    Verdict::Unknown(why) => prop_assert!(false, "unknown: {why}"),
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (v, i) = (valid.load(Relaxed), invalid.load(Relaxed));
    assert!(v > 1000 && i > 1000, "valid {v}, invalid {i}");
}

/// Every invocation before every completion (with every transaction its
/// own process, neither session nor realtime order relates two of them:
/// the exact check then skips its stronger attempts, and under
/// serializability drops the write orders between lone writers whose
/// versions nobody reads). Transaction `i` must be process `i`.
fn concurrent(txns: &[Txn]) -> (String, Vec<(usize, usize)>) {
    let n = txns.len();
    let lone = txns;
    let mut s = String::new();
    let kw = ["x", "y", "z"];
    for (e, inv) in [(0usize, true), (1, false)] {
        for t in lone {
            let mops: Vec<String> = t
                .mops
                .iter()
                .map(|&(w, k, v)| {
                    let shown = if inv && !w { None } else { v };
                    let v = shown.map(|x| x.to_string()).unwrap_or_else(|| "nil".into());
                    format!("[:{} :{} {v}]", if w { "w" } else { "r" }, kw[k as usize])
                })
                .collect();
            let ty = if inv { "invoke" } else { ["ok", "fail", "info"][t.outcome as usize] };
            let at = e * n + t.process as usize;
            s.push_str(&format!(
                "{{:type :{ty}, :f :txn, :process {}, :time {at}, :value [{}]}}\n",
                t.process,
                mops.join(" ")
            ));
        }
    }
    (s, (0..n).map(|i| (i, n + i)).collect())
}

/// All-concurrent, write-heavy random histories (most writes blind and
/// unread): the verdict at every level matches brute force.
#[test]
fn all_concurrent_verdicts_match_brute_force() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let valid = AtomicUsize::new(0);
    let invalid = AtomicUsize::new(0);
    let writes = prop::collection::vec(
        (0u32..1, 0u8..10, prop::collection::vec((prop::bool::weighted(0.6), 0u8..3, any::<u8>()), 1..4)),
        2..8,
    );
    let mut runner =
        proptest::test_runner::TestRunner::new(ProptestConfig { cases: 2000, ..ProptestConfig::default() });
    let result = runner.run(&(writes, 1u8..4), |(draw, keys)| {
        let txns: Vec<Txn> =
            build(&draw, keys).into_iter().enumerate().map(|(i, t)| Txn { process: i as u32, ..t }).collect();
        let (text, pos) = concurrent(&txns);
        let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for level in levels() {
            let expected = oracle(&txns, &pos, level);
            if expected { &valid } else { &invalid }.fetch_add(1, Relaxed);
            let out =
                check_level(&h, level, &ExactOptions::default()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            match &out.verdict {
                Verdict::Valid => prop_assert!(expected, "{level:?}: exact says valid, brute force refutes\n{text}"),
                Verdict::Invalid(_) => {
                    prop_assert!(!expected, "{level:?}: exact refutes, brute force finds an order\n{text}")
                }
                Verdict::Unknown(why) => prop_assert!(false, "unknown: {why}"),
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (v, i) = (valid.load(Relaxed), invalid.load(Relaxed));
    assert!(v > 1500 && i > 300, "valid {v}, invalid {i}");
}

/// Like [`build`], but every write takes value 1 or 2 (so values repeat
/// across transactions) and transactions are only `:ok` or `:fail`.
fn build_repeated(draw: &Draw, keys: u8) -> Vec<Txn> {
    let mut txns = build(draw, keys);
    let mut written: Vec<Vec<i64>> = vec![Vec::new(); keys as usize];
    for (t, (_, o, ms)) in txns.iter_mut().zip(draw) {
        t.outcome = if o % 10 == 0 { 1 } else { 0 };
        for (m, &(_, _, pick)) in t.mops.iter_mut().zip(ms) {
            if m.0 {
                let v = 1 + i64::from(pick % 2);
                m.2 = Some(v);
                written[m.1 as usize].push(v);
            }
        }
    }
    for (t, (_, _, ms)) in txns.iter_mut().zip(draw) {
        for (m, &(_, _, pick)) in t.mops.iter_mut().zip(ms) {
            if !m.0 {
                let ws = &written[m.1 as usize];
                let i = pick as usize % (ws.len() + 1);
                m.2 = if i == 0 { None } else { Some(ws[i - 1]) };
            }
        }
    }
    txns
}

/// Brute force for histories with repeated values (`:ok`/`:fail` only): a
/// commit order (and snapshots) in which every external read sees, as the
/// latest visible write of its key, a write of the value it read. Reads of
/// values no other committed transaction wrote last are left out, as the
/// exact check leaves them to the Elle-style analysis.
fn oracle_repeated(txns: &[Txn], pos: &[(usize, usize)], level: Level) -> bool {
    let ids: Vec<usize> = (0..txns.len()).filter(|&i| txns[i].outcome == 0).collect();
    let last = |i: usize, k: u8| txns[i].mops.iter().rev().find(|m| m.0 && m.1 == k).and_then(|m| m.2);
    let writers = |k: u8, v: i64| {
        (0..txns.len())
            .filter(|&i| txns[i].outcome != 1 && txns[i].mops.iter().any(|m| m.0 && m.1 == k && m.2 == Some(v)))
            .collect::<Vec<_>>()
    };
    // External reads: (key, the one writer if only one op wrote the value,
    // else the value; None for nil); unexplained ones dropped.
    type Seen = Option<Result<usize, i64>>;
    let ext: Vec<Vec<(u8, Seen)>> = ids
        .iter()
        .map(|&i| {
            let mut seen = Vec::new();
            let mut out = Vec::new();
            for m in &txns[i].mops {
                if seen.contains(&m.1) {
                    continue;
                }
                seen.push(m.1);
                if m.0 {
                    continue;
                }
                let Some(v) = m.2 else {
                    out.push((m.1, None));
                    continue;
                };
                let ws = writers(m.1, v);
                if ws.len() == 1 {
                    if ws[0] != i {
                        out.push((m.1, Some(Ok(ws[0]))));
                    }
                } else if ids.iter().any(|&w| w != i && last(w, m.1) == Some(v)) {
                    out.push((m.1, Some(Err(v))));
                }
            }
            out
        })
        .collect();
    let writes = |i: usize, k: u8| txns[i].mops.iter().any(|m| m.0 && m.1 == k);
    let n = ids.len();
    let before = |a: usize, b: usize| -> bool {
        match level.order {
            OrderKind::None => false,
            OrderKind::Session => txns[a].process == txns[b].process && a < b,
            OrderKind::Realtime => {
                (txns[a].process == txns[b].process && a < b) || (txns[a].outcome == 0 && pos[a].1 < pos[b].0)
            }
        }
    };
    let mut perm: Vec<usize> = (0..n).collect();
    permutations(&mut perm, 0, &mut |order: &[usize]| {
        // order[j] = index into ids.
        let Some(at) = positions_respecting(order, |x, y| before(ids[x], ids[y])) else {
            return false;
        };
        (0..n).all(|x| {
            let p = at[x];
            let snaps: Vec<usize> = match level.semantics {
                Semantics::Serializable => vec![p],
                Semantics::SnapshotIsolation | Semantics::Prefix => (0..=p).collect(),
            };
            snaps.into_iter().any(|s| {
                let visible = &order[..s];
                let reads_ok = ext[x].iter().all(|&(k, v)| {
                    let latest = visible.iter().rev().find(|&&y| writes(ids[y], k)).map(|&y| ids[y]);
                    match v {
                        None => latest.is_none(),
                        Some(Ok(w)) => latest == Some(w),
                        Some(Err(v)) => latest.and_then(|y| last(y, k)) == Some(v),
                    }
                });
                // Prefix consistency drops snapshot isolation's conflict rule.
                let conflicts_ok = level.semantics == Semantics::Prefix
                    || order[s..p].iter().all(|&y| !txns[ids[y]].mops.iter().any(|m| m.0 && writes(ids[x], m.1)));
                let order_ok = order[s..p].iter().all(|&y| !before(ids[y], ids[x]));
                reads_ok && conflicts_ok && order_ok
            })
        })
    })
}

/// Histories whose write values repeat: the exact verdict (searching over
/// the writers of ambiguous reads) equals brute force at every level, with
/// and without pruning, and every refutation's cases name the candidates.
#[test]
fn exact_verdicts_with_repeated_values_match_brute_force() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let (valid, invalid, ambiguous) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    // Checks that ruled out candidates and started again (narrowing).
    let narrowed = AtomicUsize::new(0);
    let mut runner =
        proptest::test_runner::TestRunner::new(ProptestConfig { cases: 1000, ..ProptestConfig::default() });
    let result = runner.run(&draws(), |(draw, keys)| {
        let txns = build_repeated(&draw, keys);
        let (text, pos) = edn(&txns);
        let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let has_choice = isolde::si_check::txns::extract(&h).map(|t| !t.choices.is_empty()).unwrap_or(false);
        for level in levels() {
            let expected = oracle_repeated(&txns, &pos, level);
            if has_choice {
                ambiguous.fetch_add(1, Relaxed);
                if expected { &valid } else { &invalid }.fetch_add(1, Relaxed);
            }
            for prune in [true, false] {
                let opts = ExactOptions { prune, ..ExactOptions::default() };
                let out = check_level(&h, level, &opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
                if out.stats.narrowing_passes > 0 {
                    narrowed.fetch_add(1, Relaxed);
                }
                match &out.verdict {
                    Verdict::Valid => {
                        prop_assert!(expected, "{level:?} prune={prune}: exact says valid, brute force refutes\n{text}")
                    }
                    Verdict::Invalid(r) => {
                        prop_assert!(
                            !expected,
                            "{level:?} prune={prune}: exact refutes, brute force finds an order\n{text}"
                        );
                        prop_assert!(!r.branches.is_empty());
                        for b in &r.branches {
                            prop_assert_eq!(b.cycle.ops.len(), b.cycle.steps.len());
                            for rf in &b.reads {
                                prop_assert!(rf.candidates.len() >= 2 && rf.candidates.contains(&rf.writer));
                            }
                        }
                    }
                    Verdict::Unknown(why) => prop_assert!(false, "unknown: {why}"),
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (v, i, a) = (valid.load(Relaxed), invalid.load(Relaxed), ambiguous.load(Relaxed));
    eprintln!("with ambiguous reads: valid {v}, invalid {i} (of {a} level checks)");
    assert!(v > 300 && i > 300, "with ambiguous reads: valid {v}, invalid {i} (of {a})");
    let n = narrowed.load(Relaxed);
    eprintln!("checks that narrowed candidates: {n}");
    assert!(n > 100, "narrowing ran in only {n} checks");
}

/// Each item's position in `order` (a permutation of `0..n`), or `None` when
/// the order puts some `y` before an `x` that `before(x, y)` requires first.
fn positions_respecting(order: &[usize], before: impl Fn(usize, usize) -> bool) -> Option<Vec<usize>> {
    let n = order.len();
    let mut at = vec![0; n];
    for (j, &x) in order.iter().enumerate() {
        at[x] = j;
    }
    for x in 0..n {
        for y in 0..n {
            if x != y && before(x, y) && at[x] > at[y] {
                return None;
            }
        }
    }
    Some(at)
}

/// The serial replay that runs before any polygraph (`si_check::serial`)
/// against brute force: whenever it finds an order at a level's order,
/// that order is a serial execution by the definition and brute force finds
/// the level (and snapshot isolation at the same order) valid; and it
/// decides a good share of the valid histories by itself, also when the
/// time estimate is useless (every transaction concurrent).
#[test]
fn serial_replay_is_sound_and_decides_most_valid_histories() {
    use isolde::si_check::{prune, serial, txns};
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let valid = AtomicUsize::new(0);
    let decided = AtomicUsize::new(0);
    let mut runner =
        proptest::test_runner::TestRunner::new(ProptestConfig { cases: 1500, ..ProptestConfig::default() });
    let result = runner.run(&(draws(), any::<bool>()), |((draw, keys), all_concurrent)| {
        let txns = build(&draw, keys);
        let (text, pos) = if all_concurrent {
            let lone: Vec<Txn> = txns.iter().enumerate().map(|(i, t)| Txn { process: i as u32, ..t.clone() }).collect();
            let (text, pos) = concurrent(&lone);
            return check_serial(&lone, &text, &pos, &valid, &decided);
        } else {
            edn(&txns)
        };
        check_serial(&txns, &text, &pos, &valid, &decided)
    });
    fn check_serial(
        txns: &[Txn],
        text: &str,
        pos: &[(usize, usize)],
        valid: &AtomicUsize,
        decided: &AtomicUsize,
    ) -> Result<(), TestCaseError> {
        let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let Ok(t) = txns::extract(&h) else { return Ok(()) };
        let priority = prune::time_estimate(&h, &t);
        for order in [OrderKind::None, OrderKind::Session, OrderKind::Realtime] {
            let ser = Level { semantics: Semantics::Serializable, order };
            let si = Level { semantics: Semantics::SnapshotIsolation, order };
            let expected = oracle(txns, pos, ser);
            if expected {
                valid.fetch_add(1, Relaxed);
            }
            let how = serial::Search {
                priority: &priority,
                known: None,
                session_known: None,
                budget: std::time::Duration::from_secs(1),
            };
            if let Ok(d) = serial::decide(&h, &t, order, true, true, &how) {
                decided.fetch_add(1, Relaxed);
                prop_assert!(serial::explains(&h, &t, order, &d.order));
                prop_assert!(expected, "{ser:?}: the serial replay found {:?}, brute force refutes\n{text}", d.order);
                prop_assert!(
                    oracle(txns, pos, si),
                    "{si:?}: the serial replay found {:?}, brute force refutes\n{text}",
                    d.order
                );
            }
        }
        Ok(())
    }
    if let Err(e) = result {
        panic!("{e}");
    }
    let (v, d) = (valid.load(Relaxed), decided.load(Relaxed));
    eprintln!("serial replay: {d} of {v} valid (history, order) pairs decided");
    assert!(v > 1000 && d * 20 >= v * 19, "decided {d} of {v} valid");
}
