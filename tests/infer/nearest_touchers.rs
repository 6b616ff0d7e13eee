//! The `sequential-keys` / `linearizable-keys` version edges computed per key
//! (`isolde::infer::nearest`) are exactly those of Elle's traversal (the
//! oracle in `tests/support/nearest.rs`), on random raw histories (ok, info
//! and fail ops, unpaired completions, repeated and nil values) and on
//! generated ones, for realtime and process order.

use crate::support;

use isolde::graph::Graph;
use isolde::history::History;
use isolde::infer::order::{process_edges, realtime_edges};
use isolde::infer::rw_register::order_version_edges;
use isolde::ingest::{read_bytes, Format};
use proptest::prelude::*;

/// One transaction of a random history: its process, completion type
/// (0 ok, 1 info, 2 fail), whether it has an invocation, and its micro-ops
/// `(write?, key, value)` with value 0 read as nil.
type Txn = (u8, u8, bool, Vec<(bool, u8, u8)>);

fn mops_edn(mops: &[(bool, u8, u8)], invoke: bool) -> String {
    let keys = ["x", "y", "z", "w"];
    let mut s = String::from("[");
    for &(write, k, v) in mops {
        let f = if write { "w" } else { "r" };
        let v = if v == 0 || (invoke && !write) { "nil".to_string() } else { v.to_string() };
        s.push_str(&format!("[:{f} :{} {v}]", keys[k as usize % keys.len()]));
    }
    s.push(']');
    s
}

/// An EDN history: each process runs its transactions one at a time, the
/// processes' invocations and completions interleaved by `schedule`.
fn history(txns: &[Txn], schedule: &[u8]) -> History {
    let mut per_process: Vec<Vec<&Txn>> = vec![Vec::new(); 4];
    for t in txns {
        per_process[t.0 as usize % 4].push(t);
    }
    // Each process: position in its list, and whether it is inside a txn.
    let mut at = [0usize; 4];
    let mut open = [false; 4];
    let mut out = String::new();
    let mut step = |p: usize, out: &mut String| -> bool {
        let Some(t) = per_process[p].get(at[p]) else { return false };
        let (_, ty, invoke, mops) = t;
        if *invoke && !open[p] {
            out.push_str(&format!("{{:type :invoke, :process {p}, :value {}}}\n", mops_edn(mops, true)));
            open[p] = true;
        } else {
            let ty = ["ok", "info", "fail"][*ty as usize % 3];
            out.push_str(&format!("{{:type :{ty}, :process {p}, :value {}}}\n", mops_edn(mops, false)));
            open[p] = false;
            at[p] += 1;
        }
        true
    };
    let mut i = 0;
    loop {
        let start = schedule.get(i % schedule.len().max(1)).copied().unwrap_or(0) as usize;
        i += 1;
        if !(0..4).any(|d| step((start + d) % 4, &mut out)) {
            break;
        }
    }
    read_bytes("random.edn", out.as_bytes(), Format::Edn).expect("random history parses")
}

fn same_edges(h: &History) -> Result<(), TestCaseError> {
    for (name, edges) in [("realtime", realtime_edges(h)), ("process", process_edges(h))] {
        let g = Graph::from_edges(h.ops.len(), &edges);
        let got = order_version_edges(h, &g);
        let want = support::nearest::order_version_edges(h, &g);
        prop_assert_eq!(got, want, "{} order", name);
    }
    Ok(())
}

fn txn() -> impl Strategy<Value = Txn> {
    (
        0u8..4,
        prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
        prop_oneof![9 => Just(true), 1 => Just(false)],
        prop::collection::vec((any::<bool>(), 0u8..4, 0u8..7), 1..5),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn random_histories_link_the_same_versions(
        txns in prop::collection::vec(txn(), 1..40),
        schedule in prop::collection::vec(0u8..4, 1..60),
    ) {
        same_edges(&history(&txns, &schedule))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn generated_histories_link_the_same_versions(
        cfg in support::gen::rw_register_configs(50..400, 2..10, 2..40, 0.2..0.8, 0.15),
    ) {
        let text = isolde::gen::rw_register::rw_register_string(&cfg);
        let h = read_bytes("gen.edn", text.as_bytes(), Format::Edn).expect("generated histories parse");
        same_edges(&h)?;
    }
}

/// A path may go around a toucher: `a` (writes 1) precedes `c` (reads 1,
/// writes 2) and `x`, both precede `b` (reads 3), and only `c` touches the
/// key; then `b` is nearest to `a` too, and `1 -> 3` is inferred besides
/// `2 -> 3` (`a -> c` links 1 to c's first value, 1: nothing).
#[test]
fn a_path_around_a_toucher_links_past_it() {
    let h = read_bytes(
        "around.edn",
        b"{:type :invoke, :process 0, :value [[:w :k 1]]}
          {:type :ok, :process 0, :value [[:w :k 1]]}
          {:type :invoke, :process 1, :value [[:r :k nil] [:w :k 2]]}
          {:type :invoke, :process 2, :value [[:w :j 9]]}
          {:type :ok, :process 1, :value [[:r :k 1] [:w :k 2]]}
          {:type :ok, :process 2, :value [[:w :j 9]]}
          {:type :invoke, :process 0, :value [[:r :k nil]]}
          {:type :ok, :process 0, :value [[:r :k 3]]}",
        Format::Edn,
    )
    .expect("parses");
    let g = Graph::from_edges(h.ops.len(), &realtime_edges(&h));
    let k = order_version_edges(&h, &g).into_iter().map(|(_, a, b)| (a, b)).collect::<Vec<_>>();
    assert_eq!(k, vec![(1, 3), (2, 3)]);
    assert_eq!(order_version_edges(&h, &g), support::nearest::order_version_edges(&h, &g));
}
