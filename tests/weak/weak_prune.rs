//! Causal consistency's forced edges and the exact SI/SER check (weak.md
//! §3.6): adding the forced write orders to the polygraph never changes an
//! exact verdict, and a causal violation answers the session levels of
//! `--model all` without an exact search, but not Elle's plain levels
//! when the violation needs session order.

use crate::support;

use isolde::check::{check, CheckOptions, Validity};
use isolde::gen::weak::WeakLevel;
use isolde::si_check::{Level, OrderKind, Semantics};
use proptest::prelude::*;
use support::weak::{edn, exact_verdict, raw_txns, render, weak_store_history as store};

/// The exact levels compared: with and without session order.
const LEVELS: [Level; 4] = [
    Level { semantics: Semantics::Serializable, order: OrderKind::Session },
    Level { semantics: Semantics::SnapshotIsolation, order: OrderKind::Session },
    Level { semantics: Semantics::Serializable, order: OrderKind::None },
    Level { semantics: Semantics::SnapshotIsolation, order: OrderKind::None },
];

/// The exact verdicts of `text` with and without the forced write orders
/// agree at every level.
fn same_verdicts(text: &str) {
    let h = edn(text);
    for level in LEVELS {
        let (without, _) = exact_verdict(&h, level, false);
        let (with, added) = exact_verdict(&h, level, true);
        assert_eq!(with, without, "{} with {added} forced orders\n{text}", level.model());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random histories: failed and indeterminate transactions, repeated
    /// values, reads of anything written anywhere.
    #[test]
    fn random_histories_keep_their_exact_verdicts(t in raw_txns(9), keys in 1u8..4, repeat in any::<bool>()) {
        same_verdicts(&render(false, &t, keys, repeat));
    }

    /// Histories of causal, prefix and read-atomic stores, which satisfy
    /// causal consistency (or nearly) and break SI or serializability in
    /// many ways, with faults.
    #[test]
    fn store_histories_keep_their_exact_verdicts(
        seed in any::<u64>(),
        level in 0usize..3,
        txns in 4usize..24,
        processes in 1usize..5,
        keys in 1usize..4,
        faulty in any::<bool>(),
    ) {
        let level = [WeakLevel::Causal, WeakLevel::Prefix, WeakLevel::ReadAtomic][level];
        same_verdicts(&store(level, seed, txns, processes, keys, if faulty { 0.15 } else { 0.0 }));
    }
}

/// The forced orders are exercised: a fixed batch of store histories
/// adds some (the property tests above count theirs too, but run in any
/// order).
#[test]
fn forced_orders_reach_the_polygraph() {
    let mut added = 0;
    for seed in 0..40 {
        let h = edn(&store(WeakLevel::Causal, seed, 30, 3, 3, 0.0));
        for level in LEVELS {
            let (with, n) = exact_verdict(&h, level, true);
            assert_eq!(with, exact_verdict(&h, level, false).0, "seed {seed} {}", level.model());
            added += n;
        }
    }
    assert!(added > 0, "no forced write order was added");
}

/// The check of a history at `models` (`all` for the ladder).
fn run(text: &str, models: &[&str], cc_orders: bool) -> isolde::check::Outcome {
    let mut opts =
        CheckOptions { models: Some(models.iter().map(|m| m.to_string()).collect()), ..CheckOptions::default() };
    if let Some(e) = opts.exact.as_mut() {
        e.cc_orders = cc_orders;
    }
    check(&edn(text), &opts).expect("runs")
}

/// The `--model all` check of a history with extra models.
fn all(text: &str, extra: &[&str], cc_orders: bool) -> isolde::check::Outcome {
    let mut models = vec!["all"];
    models.extend_from_slice(extra);
    run(text, &models, cc_orders)
}

/// x = 1 and x = 2 are each read after the other was seen: a causal
/// violation no session order is needed for, and no version order of `x`
/// Elle can infer.
const FORK: &str = "\
{:type :ok, :f :txn, :process 0, :value [[:w :x 1]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:w :x 2]], :index 1}
{:type :ok, :f :txn, :process 2, :value [[:r :x 2] [:w :y 1]], :index 2}
{:type :ok, :f :txn, :process 3, :value [[:r :y 1] [:r :x 1]], :index 3}
{:type :ok, :f :txn, :process 4, :value [[:r :x 1] [:w :z 1]], :index 4}
{:type :ok, :f :txn, :process 5, :value [[:r :z 1] [:r :x 2]], :index 5}
";

/// The same, but `x = 2` reaches the reader of `x = 1` only through its
/// writer's session: without session order the history is serializable.
const SESSION_FORK: &str = "\
{:type :ok, :f :txn, :process 0, :value [[:w :x 1]], :index 0}
{:type :ok, :f :txn, :process 1, :value [[:w :x 2]], :index 1}
{:type :ok, :f :txn, :process 1, :value [[:w :y 1]], :index 2}
{:type :ok, :f :txn, :process 3, :value [[:r :y 1] [:r :x 1]], :index 3}
{:type :ok, :f :txn, :process 4, :value [[:r :x 1] [:w :z 1]], :index 4}
{:type :ok, :f :txn, :process 5, :value [[:r :z 1] [:r :x 2]], :index 5}
";

const SESSION_LEVELS: [&str; 2] = ["strong-session-snapshot-isolation", "strong-session-serializable"];

#[test]
fn a_causal_violation_answers_the_session_levels_without_search() {
    let o = all(FORK, &["serializable", "snapshot-isolation"], true);
    assert_eq!(o.valid, Validity::Invalid);
    assert!(o.anomaly_types.iter().any(|t| t == "causal-violation"), "{:?}", o.anomaly_types);
    // No exact search ran: the violation persists without sessions, so the
    // plain levels are refuted too.
    assert!(o.stats.exact.is_empty(), "searched {:?}", o.stats.exact.iter().map(|e| &e.0).collect::<Vec<_>>());
    for m in SESSION_LEVELS.iter().chain(&["serializable", "snapshot-isolation"]) {
        assert!(o.stats.exact_implied.iter().any(|x| x == m), "{m} not implied: {:?}", o.stats.exact_implied);
        assert!(o.also_not.contains(*m) || o.not.contains(*m), "{m} not ruled out");
    }
    // The exact search, when it runs (no weak level asked for), agrees: it
    // refutes the first level it tries, which rules out the others.
    let searched = run(FORK, &["serializable", "snapshot-isolation", "strong-session-serializable"], false);
    assert_eq!(searched.valid, Validity::Invalid);
    assert!(!searched.stats.exact.is_empty() && searched.stats.exact_implied.is_empty());
    assert!(searched.stats.exact_valid.is_empty());
    for m in SESSION_LEVELS.iter().chain(&["serializable", "snapshot-isolation"]) {
        assert!(searched.also_not.contains(*m) || searched.not.contains(*m), "{m} not ruled out by the search");
    }
}

#[test]
fn a_session_only_violation_leaves_the_plain_levels_to_the_search() {
    // The session levels asked for beside causal consistency: the weak
    // check's violation refutes them, no search.
    let mut models = vec!["causal-cerone", "serializable"];
    models.extend(SESSION_LEVELS);
    let o = run(SESSION_FORK, &models, true);
    assert_eq!(o.valid, Validity::Invalid);
    for m in SESSION_LEVELS {
        assert!(o.stats.exact_implied.iter().any(|x| x == m), "{m} not implied: {:?}", o.stats.exact_implied);
    }
    plain_searched_session_not(&o);
    // The whole ladder searches strict serializability first (realtime
    // order is not known to contain session order, so the weak violation
    // does not refute it); its refutation, or the weak violation, rules out
    // the session levels without a search of their own.
    let o = all(SESSION_FORK, &["serializable"], true);
    assert_eq!(o.valid, Validity::Invalid);
    let strict = Level { semantics: Semantics::Serializable, order: OrderKind::Realtime };
    assert!(o.stats.exact_refuted.iter().any(|(l, _)| *l == strict), "{:?}", o.stats.exact_refuted);
    plain_searched_session_not(&o);
}

/// The session levels were neither searched nor left standing; plain
/// serializability (no session order) was searched and holds.
fn plain_searched_session_not(o: &isolde::check::Outcome) {
    for m in SESSION_LEVELS {
        assert!(!o.stats.exact.iter().any(|e| e.0 == m), "{m} searched");
        assert!(o.also_not.contains(m) || o.not.contains(m), "{m} not ruled out");
    }
    assert!(o.stats.exact.iter().any(|e| e.0 == "serializable"), "plain level not searched");
    let plain = Level { semantics: Semantics::Serializable, order: OrderKind::None };
    assert!(o.stats.exact_valid.contains(&plain), "{:?}", o.stats.exact_valid);
    assert!(!o.also_not.contains("serializable") && !o.not.contains("serializable"));
}

/// With the orders on, `--model all` adds them on a causal history and
/// answers as without them.
#[test]
fn the_ladder_passes_forced_orders_to_the_exact_check() {
    let text = (0..20).map(|seed| store(WeakLevel::Causal, seed, 40, 3, 3, 0.0)).find(|t| {
        let o = all(t, &[], true);
        o.stats.exact.iter().any(|(_, s)| s.known_orders > 0)
    });
    let text = text.expect("some causal history gives the exact check forced orders");
    let (on, off) = (all(&text, &[], true), all(&text, &[], false));
    assert_eq!(on.valid, off.valid);
    assert_eq!((&on.not, &on.also_not), (&off.not, &off.also_not));
    assert_eq!(on.stats.exact_valid, off.stats.exact_valid);
    assert!(off.stats.exact.iter().all(|(_, s)| s.known_orders == 0));
}

/// A level refuted without search shows as violated in the table, never as
/// holding: nothing Elle's lattice knows rules it out.
#[test]
fn the_table_shows_implied_levels_violated() {
    use isolde::outcome::ModelStatus;
    let o = run(FORK, &["causal-cerone", "strong-session-serializable"], false);
    assert!(o.stats.exact.is_empty());
    for m in ["strong-session-serializable", "strong-session-snapshot-isolation", "serializable"] {
        assert!(matches!(o.status(m), ModelStatus::Violated(_)), "{m}: {:?}", o.status(m));
    }
    // The session-only violation leaves plain serializability searched and
    // holding.
    let o = run(SESSION_FORK, &["causal-cerone", "strong-session-serializable", "serializable"], false);
    assert!(matches!(o.status("strong-session-serializable"), ModelStatus::Violated(_)));
    assert_eq!(o.status("serializable"), ModelStatus::Holds);
}
