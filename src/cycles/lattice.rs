//! Elle's lattice of consistency models and its lattice of anomalies
//! (`elle.consistency-model`), held as static data tables.
//!
//! Elle finds *anomalies* in a history (a G1c cycle, an aborted read, a lost
//! update, ...). This module turns such findings into claims about which
//! *consistency models* the history rules out, and, in the other direction,
//! tells the checker which anomalies a requested model prohibits. Three
//! relations drive everything:
//!
//! * the **anomaly implication DAG** ([`ANOMALY_IMPLICATIONS`]): `a ⇒ b` when
//!   every occurrence of `a` is also an occurrence of `b` (G0 is a trivial
//!   G1c; G1a, G1b and G1c are, by Adya's definition, all G1; a `-process`
//!   cycle is also a `-realtime` one because processes are single-threaded);
//! * the **model implication graph** ([`MODEL_IMPLICATIONS`]): `m → n` when
//!   every history satisfying `m` also satisfies `n` (serializable → snapshot
//!   isolation → read committed → read uncommitted, ...);
//! * the **directly proscribed anomalies** ([`DIRECT_PROSCRIBED_ANOMALIES`]):
//!   for each model only the anomalies it forbids *beyond* the models it
//!   implies.
//!
//! A model prohibits its own proscribed anomalies, those of every model it
//! implies, and every anomaly that implies one of those
//! ([`anomalies_prohibited_by`]). Conversely, an anomaly (and everything it
//! implies) rules out every model proscribing it, plus every stronger model
//! that implies a ruled-out one ([`anomalies_to_impossible_models`]); the
//! weakest of those form Elle's `:not`, the rest its `:also-not`
//! ([`friendly_boundary`]).
//!
//! Names are spelled exactly as Elle's keywords, without the colon ("G1c",
//! "PL-SI", "strong-serializable"). Sets are `BTreeSet`s, whose byte-wise
//! order equals Clojure's keyword order for these ASCII names. The tables are
//! transcribed from Elle's `src/elle/consistency_model.clj` (0.2.x) with the
//! model names spelled as in that source; canonicalisation happens once, when
//! the adjacency maps are first needed (cached in a [`OnceLock`]).

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::OnceLock;

// ---------------------------------------------------------------------------
// Data tables
// ---------------------------------------------------------------------------

/// Elle's `implied-anomalies` DAG as `(a, b)` pairs meaning "an `a` anomaly is
/// also a `b` anomaly", in Elle's source order.
///
/// Why these edges: G0 (write cycle) is a degenerate G1c; G1 is defined as
/// G1a ∪ G1b ∪ G1c; G-single-item (one item rw edge) is a special case of both
/// G-single and G-nonadjacent-item; G-nonadjacent is a G2 whose rw edges never
/// touch; every `X` is trivially an `X-process`, and every `X-process` an
/// `X-realtime`, because a process is single-threaded. Elle's richer data
/// model adds: incompatible-order and dirty-update imply G1a, future-read
/// implies G1c (a trivial T -wr-> T cycle), lost-update is write-skew and
/// G2-item, and write-skew is G2. GSIa/GSIb ⇒ GSI are Adya's SI phenomena.
pub const ANOMALY_IMPLICATIONS: &[(&str, &str)] = &[
    ("G0", "G1c"),
    ("G0", "G0-process"),
    ("G0-process", "G1c-process"),
    ("G0-process", "G0-realtime"),
    ("G0-realtime", "G1c-realtime"),
    ("G1a", "G1"),
    ("G1b", "G1"),
    ("G1c", "G1"),
    ("G1c", "G1c-process"),
    ("G1c-process", "G1c-realtime"),
    ("G1c-process", "G1-process"),
    ("G1c-realtime", "G1-realtime"),
    ("G1", "G1-process"),
    ("G1-process", "G1-realtime"),
    ("G-single-item", "G-single"),
    ("G-single-item", "G-single-item-process"),
    ("G-single-item", "G-nonadjacent-item"),
    ("G-single-item-process", "G-single-process"),
    ("G-single-item-process", "G-single-item-realtime"),
    ("G-single-item-process", "G-nonadjacent-item-process"),
    ("G-single-item-realtime", "G-single-realtime"),
    ("G-single-item-realtime", "G-nonadjacent-item-realtime"),
    ("G-single", "G-nonadjacent"),
    ("G-single", "GSIb"),
    ("G-single", "G-single-process"),
    ("G-single-process", "G-nonadjacent-process"),
    ("G-single-process", "G-single-realtime"),
    ("G-single-realtime", "G-nonadjacent-realtime"),
    ("G-nonadjacent-item", "G-nonadjacent"),
    ("G-nonadjacent-item", "G2-item"),
    ("G-nonadjacent-item", "G-nonadjacent-item-process"),
    ("G-nonadjacent-item-process", "G-nonadjacent-process"),
    ("G-nonadjacent-item-process", "G2-item-process"),
    ("G-nonadjacent-item-process", "G-nonadjacent-item-realtime"),
    ("G-nonadjacent-item-realtime", "G2-item-realtime"),
    ("G-nonadjacent-item-realtime", "G-nonadjacent-realtime"),
    ("G-nonadjacent", "G2"),
    ("G-nonadjacent", "G-nonadjacent-process"),
    ("G-nonadjacent-process", "G2-process"),
    ("G-nonadjacent-process", "G-nonadjacent-realtime"),
    ("G-nonadjacent-realtime", "G2-realtime"),
    ("G2", "G2-process"),
    ("G2-item", "G2"),
    ("G2-item", "G2-item-process"),
    ("G2-item-process", "G2-process"),
    ("G2-item-process", "G2-item-realtime"),
    ("G2-item-realtime", "G2-realtime"),
    ("G2-process", "G2-realtime"),
    ("GSIa", "GSI"),
    ("GSIb", "GSI"),
    ("incompatible-order", "G1a"),
    ("future-read", "G1c"),
    ("dirty-update", "G1a"),
    ("lost-update", "write-skew"),
    ("lost-update", "G2-item"),
    ("write-skew", "G2"),
];

/// Elle's `anomaly-severity-graph`: `(a, b)` means "`a` is worse than `b`"
/// although `a` does not imply `b` (G0 does not imply G-single, but is
/// usually worse). It is used only to order anomalies (see [`all_anomalies`]),
/// so that the cycle search looks for the worst anomalies first: pure data
/// cycles before process ones, process before realtime.
pub const ANOMALY_SEVERITY: &[(&str, &str)] = &[
    ("G0", "G1c"),
    ("G0-process", "G1c-process"),
    ("G0-realtime", "G1c-realtime"),
    ("G1c", "G-single"),
    ("G1c", "G2-item"),
    ("G1c-process", "G-single-process"),
    ("G1c-process", "G2-item-process"),
    ("G1c-realtime", "G-single-realtime"),
    ("G1c-realtime", "G2-item-realtime"),
    ("G2", "G0-process"),
    ("G2-process", "G0-realtime"),
];

/// Elle's `canonical-model-names`: `(alias, canonical)`. Many models have
/// several names in the literature; Elle works on Adya-style canonical names
/// (`PL-2`, `PL-SI`, `PL-3`, `PL-SS`, ...). "serializable" means *conflict*
/// serializability (Bernstein), and Elle deliberately treats strict and
/// strong serializability as the same model, `PL-SS`.
pub const CANONICAL_MODEL_NAMES: &[(&str, &str)] = &[
    ("consistent-view", "PL-2+"),
    ("conflict-serializable", "PL-3"),
    ("cursor-stability", "PL-CS"),
    ("forward-consistent-view", "PL-FCV"),
    ("monotonic-snapshot-read", "PL-MSR"),
    ("monotonic-view", "PL-2L"),
    ("read-committed", "PL-2"),
    ("read-uncommitted", "PL-1"),
    ("repeatable-read", "PL-2.99"),
    ("serializable", "PL-3"),
    ("snapshot-isolation", "PL-SI"),
    ("strict-serializable", "PL-SS"),
    ("strong-serializable", "PL-SS"),
    ("update-serializable", "PL-3U"),
    ("strong-session-read-uncommitted", "strong-session-PL-1"),
    ("strong-session-read-committed", "strong-session-PL-2"),
    ("strong-read-uncommitted", "strong-PL-1"),
    ("strong-read-committed", "strong-PL-2"),
];

/// Elle's `friendly-model-names`: `(canonical, friendly)`, the inverse of
/// [`CANONICAL_MODEL_NAMES`], used when reporting `:not` / `:also-not`.
///
/// Two canonical names have two aliases each. Elle forces `PL-3` to
/// `serializable`; for `PL-SS` the inversion of a Clojure hash map happens to
/// keep `strong-serializable` (so Elle reports `:not #{:strong-serializable}`
/// even when asked to check strict serializability), which is fixed here.
pub const FRIENDLY_MODEL_NAMES: &[(&str, &str)] = &[
    ("PL-2+", "consistent-view"),
    ("PL-3", "serializable"),
    ("PL-CS", "cursor-stability"),
    ("PL-FCV", "forward-consistent-view"),
    ("PL-MSR", "monotonic-snapshot-read"),
    ("PL-2L", "monotonic-view"),
    ("PL-2", "read-committed"),
    ("PL-1", "read-uncommitted"),
    ("PL-2.99", "repeatable-read"),
    ("PL-SI", "snapshot-isolation"),
    ("PL-SS", "strong-serializable"),
    ("PL-3U", "update-serializable"),
    ("strong-session-PL-1", "strong-session-read-uncommitted"),
    ("strong-session-PL-2", "strong-session-read-committed"),
    ("strong-PL-1", "strong-read-uncommitted"),
    ("strong-PL-2", "strong-read-committed"),
];

/// Maps isolde-only anomaly names onto the Elle anomaly whose model boundary
/// they share (a garbage read rules out every model, like a write cycle).
pub fn boundary_names<'a>(types: &[&'a str]) -> Vec<&'a str> {
    types.iter().map(|&t| if t == "garbage-read" { "G0" } else { t }).collect()
}

/// Elle's `models` graph, verbatim (names as spelled in Elle's source, so
/// aliases appear): `(a, b)` means "a history satisfying `a` also satisfies
/// `b`". Sources are Adya, Bailis (HATs), Cerone, Daudjee, Zuikeviciute, and
/// <https://jepsen.io/consistency>. The strong-session / strong variants are
/// Elle's own generalisations (adding process / realtime order), useful for
/// ruling out cycle searches. Vertices are canonicalised when the graph is
/// built, which can merge edges (e.g. `strict-serializable → PL-3` and
/// `strict-serializable → serializable` both become `PL-SS → PL-3`).
pub const MODEL_IMPLICATIONS: &[(&str, &str)] = &[
    ("causal-cerone", "read-atomic"),
    ("consistent-view", "cursor-stability"),
    ("consistent-view", "monotonic-view"),
    ("conflict-serializable", "view-serializable"),
    ("cursor-stability", "read-committed"),
    ("cursor-stability", "PL-2"),
    ("forward-consistent-view", "consistent-view"),
    ("PL-2", "PL-1"),
    ("PL-3", "repeatable-read"),
    ("PL-3", "update-serializable"),
    ("update-serializable", "forward-consistent-view"),
    ("monotonic-atomic-view", "read-committed"),
    ("monotonic-view", "PL-2"),
    ("monotonic-snapshot-read", "PL-2"),
    ("parallel-snapshot-isolation", "causal-cerone"),
    ("parallel-snapshot-isolation", "update-atomic"),
    ("prefix", "causal-cerone"),
    ("read-atomic", "monotonic-atomic-view"),
    ("read-committed", "read-uncommitted"),
    ("repeatable-read", "cursor-stability"),
    ("repeatable-read", "monotonic-atomic-view"),
    ("update-atomic", "read-atomic"),
    ("serializable", "repeatable-read"),
    ("serializable", "snapshot-isolation"),
    ("serializable", "view-serializable"),
    ("session-serializable", "1SR"),
    ("snapshot-isolation", "forward-consistent-view"),
    ("snapshot-isolation", "monotonic-atomic-view"),
    ("snapshot-isolation", "monotonic-snapshot-read"),
    ("snapshot-isolation", "parallel-snapshot-isolation"),
    ("snapshot-isolation", "prefix"),
    ("strict-serializable", "PL-3"),
    ("strict-serializable", "serializable"),
    ("strict-serializable", "linearizable"),
    ("strict-serializable", "snapshot-isolation"),
    ("strict-serializable", "strong-snapshot-isolation"),
    ("strict-serializable", "strong-session-serializable"),
    ("strong-session-PL-1", "PL-1"),
    ("strong-session-PL-2", "PL-2"),
    ("strong-session-PL-2", "strong-session-PL-1"),
    ("strong-PL-1", "strong-session-PL-1"),
    ("strong-PL-2", "strong-session-PL-2"),
    ("strong-PL-2", "strong-PL-1"),
    ("strong-session-serializable", "serializable"),
    ("strong-session-serializable", "strong-session-snapshot-isolation"),
    ("strong-session-snapshot-isolation", "snapshot-isolation"),
    ("strong-session-snapshot-isolation", "strong-session-PL-2"),
    ("strong-serializable", "session-serializable"),
    ("strong-snapshot-isolation", "strong-session-snapshot-isolation"),
    ("strong-snapshot-isolation", "strong-PL-2"),
    ("linearizable", "sequential"),
    ("sequential", "causal"),
    ("causal", "writes-follow-reads"),
    ("causal", "PRAM"),
    ("PRAM", "monotonic-reads"),
    ("PRAM", "monotonic-writes"),
    ("PRAM", "read-your-writes"),
];

/// Elle's `direct-proscribed-anomalies`, verbatim (keys as spelled in Elle's
/// source; they are canonicalised when the table is built, so `serializable`
/// and `PL-3` both contribute to `PL-3`).
///
/// Each model lists only what it forbids *in addition to* the models it
/// implies: PL-1 forbids write cycles (G0) plus the version-order sanity
/// checks; PL-2 adds G1; repeatable read adds item anti-dependency cycles
/// (G2-item) and lost updates; SI forbids G-SI and G-nonadjacent (cycles
/// whose rw edges are never adjacent); PL-3 forbids G2; strict serializable
/// forbids the realtime variants. Each `<M>-cycle-exists` anomaly is the
/// proof-of-existence fallback for model `M` (see [`CYCLE_EXISTS_MODELS`]).
/// Cerone-style models forbid `internal` (INT) and aborted reads.
pub const DIRECT_PROSCRIBED_ANOMALIES: &[(&str, &[&str])] = &[
    ("causal-cerone", &["internal", "G1a"]),
    ("cursor-stability", &["G1", "G-cursor", "lost-update"]),
    ("monotonic-view", &["G1", "G-monotonic"]),
    ("monotonic-snapshot-read", &["G1", "G-MSR"]),
    ("consistent-view", &["G1", "G-single"]),
    ("forward-consistent-view", &["G1", "G-SIb"]),
    ("parallel-snapshot-isolation", &["internal", "G1a"]),
    ("PL-3", &["G1", "G2", "predicate-read-miss", "PL-3-cycle-exists"]),
    ("PL-2", &["G1", "PL-2-cycle-exists"]),
    ("PL-1", &["G0", "duplicate-elements", "cyclic-versions", "PL-1-cycle-exists"]),
    ("prefix", &["internal", "G1a"]),
    ("serializable", &["internal"]),
    ("snapshot-isolation", &["internal", "G1", "G-SI", "G-nonadjacent", "PL-SI-cycle-exists"]),
    ("read-atomic", &["internal", "G1a", "future-read"]),
    ("repeatable-read", &["G1", "G2-item", "PL-2.99-cycle-exists", "lost-update"]),
    ("update-atomic", &["lost-update"]),
    ("strict-serializable", &["G1", "G1c-realtime", "G2-realtime", "PL-SS-cycle-exists"]),
    ("strong-session-PL-1", &["strong-session-PL-1-cycle-exists", "G0-process"]),
    ("strong-session-PL-2", &["strong-session-PL-2-cycle-exists", "G1c-process"]),
    ("strong-PL-1", &["strong-PL-1-cycle-exists", "G0-realtime"]),
    ("strong-PL-2", &["strong-PL-2-cycle-exists", "G1c-realtime"]),
    (
        "strong-session-snapshot-isolation",
        &["internal", "G1-process", "G-nonadjacent-process", "strong-session-snapshot-isolation-cycle-exists"],
    ),
    (
        "strong-snapshot-isolation",
        &["internal", "G1-realtime", "G-nonadjacent-realtime", "strong-snapshot-isolation-cycle-exists"],
    ),
    ("strong-session-serializable", &["G1-process", "G2-process", "strong-session-serializable-cycle-exists"]),
    ("update-serializable", &["G1", "G-update"]),
];

/// The cycle anomaly types, in the order Elle searches for them inside each
/// strongly connected component (`cycle-anomaly-specs`, a map sorted by
/// [`anomaly_depth_compare`]; i.e. [`all_anomalies`] restricted to cycle
/// types). Shallower (less implied, more severe) anomalies come first, so
/// that once a cycle of type `t` is found, everything `t` implies can be
/// skipped; pure data-dependency cycles come before `-process` ones, and
/// those before `-realtime` ones.
pub const CYCLE_SEARCH_ORDER: &[&str] = &[
    "G-single-item",
    "G0",
    "G-nonadjacent-item",
    "G-single-item-process",
    "G1c",
    "G-nonadjacent-item-process",
    "G-single",
    "G-single-item-realtime",
    "G2-item",
    "G-nonadjacent",
    "G-nonadjacent-item-realtime",
    "G2",
    "G0-process",
    "G1c-process",
    "G-single-process",
    "G2-item-process",
    "G-nonadjacent-process",
    "G2-process",
    "G0-realtime",
    "G1c-realtime",
    "G-single-realtime",
    "G2-item-realtime",
    "G-nonadjacent-realtime",
    "G2-realtime",
];

/// The canonical models of Elle's `cycle-exists-specs`, in Elle's order. For
/// each model `M` there is a subgraph (e.g. ww ∪ wr for PL-2, ww ∪ wr
/// extended by one rw hop for PL-SI) that must be acyclic if `M` holds;
/// merely proving an SCC exists there yields the anomaly
/// `<M>-cycle-exists` (see [`CYCLE_EXISTS_ANOMALIES`]) without exhibiting a
/// concrete cycle. Weaker models come first, so that a model already known
/// impossible lets the pass skip every stronger model.
pub const CYCLE_EXISTS_MODELS: &[&str] = &[
    "PL-1",
    "PL-2",
    "PL-SI",
    "PL-2.99",
    "PL-3",
    "strong-session-PL-1",
    "strong-session-PL-2",
    "strong-session-snapshot-isolation",
    "strong-session-serializable",
    "strong-PL-1",
    "strong-PL-2",
    "strong-snapshot-isolation",
    "PL-SS",
];

/// The anomaly type of each entry of [`CYCLE_EXISTS_MODELS`], index for index
/// (`<model>-cycle-exists`). Each is directly proscribed by its model.
pub const CYCLE_EXISTS_ANOMALIES: &[&str] = &[
    "PL-1-cycle-exists",
    "PL-2-cycle-exists",
    "PL-SI-cycle-exists",
    "PL-2.99-cycle-exists",
    "PL-3-cycle-exists",
    "strong-session-PL-1-cycle-exists",
    "strong-session-PL-2-cycle-exists",
    "strong-session-snapshot-isolation-cycle-exists",
    "strong-session-serializable-cycle-exists",
    "strong-PL-1-cycle-exists",
    "strong-PL-2-cycle-exists",
    "strong-snapshot-isolation-cycle-exists",
    "PL-SS-cycle-exists",
];

/// Elle's `unknown-anomaly-types` (`elle.txn`): anomalies that mean the
/// analysis could not complete rather than that the history is bad. They are
/// always reportable; when they are the only reportable ones, the verdict is
/// `:valid? :unknown`. No model proscribes them.
pub const UNKNOWN_ANOMALY_TYPES: &[&str] = &["cycle-search-timeout", "empty-transaction-graph"];

/// The models checked when the caller gives no `:consistency-models` at all
/// (Elle's default in `elle.txn/prohibited-anomaly-types`).
pub const DEFAULT_CONSISTENCY_MODELS: &[&str] = &["strict-serializable"];

// ---------------------------------------------------------------------------
// Derived structures (built once)
// ---------------------------------------------------------------------------

type Adjacency = HashMap<&'static str, Vec<&'static str>>;

/// A set of anomaly or model indices (both universes are far below 128).
type Bits = u128;

/// Everything derived from the tables, built on first use. Queries work on
/// precomputed transitive closures held as bitsets: every function of this
/// module is a union of per-element closures, so answering one is a few ORs.
struct Lattice {
    /// Canonical model graph (out-edges), for introspection and tests.
    model_out: Adjacency,
    /// Canonical model -> anomalies it directly proscribes.
    proscribes: Adjacency,

    /// Every anomaly the lattice knows, sorted by name; indices into it.
    anomalies: Vec<&'static str>,
    anomaly_index: HashMap<&'static str, usize>,
    /// Per anomaly: itself and everything it implies.
    implied: Vec<Bits>,
    /// Per anomaly: itself and everything implying it.
    implying: Vec<Bits>,
    /// Per anomaly: the models its presence rules out.
    impossible: Vec<Bits>,

    /// Every canonical model (the model graph's vertices), sorted by name.
    models: Vec<&'static str>,
    /// Every name in `all-models` -> index of its canonical model.
    model_index: HashMap<&'static str, usize>,
    /// Per canonical model: itself and every model it implies.
    model_implies: Vec<Bits>,
    /// Per canonical model: itself and every model implying it.
    model_implied_by: Vec<Bits>,
    /// Per canonical model: the anomalies it prohibits.
    prohibits: Vec<Bits>,
    /// Per canonical model: its friendly name.
    friendly: Vec<&'static str>,

    /// `all-models`, sorted.
    all_models: Vec<&'static str>,
    depths: HashMap<&'static str, usize>,
    /// `all-anomalies`, sorted by depth then name.
    all_anomalies: Vec<&'static str>,
}

fn link(adj: &mut Adjacency, from: &'static str, to: &'static str) {
    let succs = adj.entry(from).or_default();
    if !succs.contains(&to) {
        succs.push(to);
    }
}

/// Canonicalises a model name from the static tables (alias or itself).
fn canonical_static(name: &'static str) -> &'static str {
    CANONICAL_MODEL_NAMES.iter().find(|(alias, _)| *alias == name).map_or(name, |&(_, canonical)| canonical)
}

/// Breadth-first search from `starts` (included) along `adj`, as
/// `elle.graph/bfs`: names absent from the graph have no neighbours.
fn bfs(adj: &Adjacency, starts: &[&'static str]) -> Vec<&'static str> {
    let mut seen: HashSet<&'static str> = starts.iter().copied().collect();
    let mut queue: VecDeque<&'static str> = starts.iter().copied().collect();
    let mut order = Vec::new();
    while let Some(v) = queue.pop_front() {
        order.push(v);
        for &w in adj.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if seen.insert(w) {
                queue.push_back(w);
            }
        }
    }
    order
}

/// Longest-path layering (Kahn), as `elle.graph/topo-depths`: vertices with no
/// in-edges have depth 0, and each further layer one more.
fn topo_depths(edges: &[(&'static str, &'static str)]) -> HashMap<&'static str, usize> {
    let mut out: Adjacency = HashMap::new();
    let mut indegree: HashMap<&'static str, usize> = HashMap::new();
    for &(a, b) in edges {
        indegree.entry(a).or_insert(0);
        indegree.entry(b).or_insert(0);
        let succs = out.entry(a).or_default();
        if !succs.contains(&b) {
            succs.push(b);
            *indegree.get_mut(b).expect("inserted above") += 1;
        }
    }
    let mut depths = HashMap::new();
    let mut layer: Vec<&'static str> = indegree.iter().filter(|(_, &d)| d == 0).map(|(&v, _)| v).collect();
    let mut depth = 0;
    while !layer.is_empty() {
        let mut next = Vec::new();
        for &v in &layer {
            depths.insert(v, depth);
            for &w in out.get(v).map(Vec::as_slice).unwrap_or(&[]) {
                let d = indegree.get_mut(w).expect("vertex");
                *d -= 1;
                if *d == 0 {
                    next.push(w);
                }
            }
        }
        layer = next;
        depth += 1;
    }
    assert_eq!(depths.len(), indegree.len(), "anomaly graphs must be acyclic");
    depths
}

/// The bitset of `names` under `index`.
fn bits_of(index: &HashMap<&'static str, usize>, names: &[&'static str]) -> Bits {
    names.iter().fold(0, |acc, n| acc | 1 << index[n])
}

/// Iterates over the members of a bitset.
fn members(mut bits: Bits) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if bits == 0 {
            None
        } else {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(i)
        }
    })
}

impl Lattice {
    fn build() -> Lattice {
        // Anomaly implication DAG.
        let mut anomaly_out = Adjacency::new();
        let mut anomaly_in = Adjacency::new();
        for &(a, b) in ANOMALY_IMPLICATIONS {
            link(&mut anomaly_out, a, b);
            link(&mut anomaly_in, b, a);
        }

        // Model graph, with vertices canonicalised (Elle's `map-vertices`).
        let mut model_out = Adjacency::new();
        let mut model_in = Adjacency::new();
        for &(a, b) in MODEL_IMPLICATIONS {
            let (a, b) = (canonical_static(a), canonical_static(b));
            link(&mut model_out, a, b);
            link(&mut model_in, b, a);
        }

        // Direct proscriptions, keys canonicalised (duplicates merge).
        let mut proscribes = Adjacency::new();
        let mut proscribed_by = Adjacency::new();
        for &(model, anomalies) in DIRECT_PROSCRIBED_ANOMALIES {
            let model = canonical_static(model);
            for &a in anomalies {
                link(&mut proscribes, model, a);
                link(&mut proscribed_by, a, model);
            }
        }

        // anomaly-depths: topological depths of implied ∪ severity, merged
        // (by max) with depth 0 for every directly proscribed anomaly.
        let merged: Vec<(&'static str, &'static str)> =
            ANOMALY_IMPLICATIONS.iter().chain(ANOMALY_SEVERITY).copied().collect();
        let mut depths = topo_depths(&merged);
        for &a in proscribed_by.keys() {
            depths.entry(a).or_insert(0);
        }
        let mut all_anomalies: Vec<&'static str> = depths.keys().copied().collect();
        all_anomalies.sort_by(|a, b| depths[a].cmp(&depths[b]).then_with(|| a.cmp(b)));

        // Universes and indices.
        let mut anomalies = all_anomalies.clone();
        anomalies.sort();
        let anomaly_index: HashMap<&'static str, usize> = anomalies.iter().enumerate().map(|(i, &a)| (a, i)).collect();
        let models: Vec<&'static str> =
            model_out.keys().chain(model_in.keys()).copied().collect::<BTreeSet<_>>().into_iter().collect();
        assert!(anomalies.len() <= 128 && models.len() <= 128);
        let canonical_index: HashMap<&'static str, usize> = models.iter().enumerate().map(|(i, &m)| (m, i)).collect();

        // all-models: graph vertices (canonical) + alias keys + canonical names.
        let mut all: BTreeSet<&'static str> = models.iter().copied().collect();
        for &(alias, canonical) in CANONICAL_MODEL_NAMES {
            all.insert(alias);
            all.insert(canonical);
        }
        let model_index: HashMap<&'static str, usize> =
            all.iter().map(|&m| (m, canonical_index[canonical_static(m)])).collect();

        // Closures.
        let closure = |adj: &Adjacency, index: &HashMap<&'static str, usize>, v| bits_of(index, &bfs(adj, &[v]));
        let implied: Vec<Bits> = anomalies.iter().map(|&a| closure(&anomaly_out, &anomaly_index, a)).collect();
        let implying: Vec<Bits> = anomalies.iter().map(|&a| closure(&anomaly_in, &anomaly_index, a)).collect();
        let model_implies: Vec<Bits> = models.iter().map(|&m| closure(&model_out, &canonical_index, m)).collect();
        let model_implied_by: Vec<Bits> = models.iter().map(|&m| closure(&model_in, &canonical_index, m)).collect();

        // anomalies-prohibited-by for one model: the anomalies directly
        // proscribed by any implied model, closed under "implying".
        let prohibits: Vec<Bits> = model_implies
            .iter()
            .map(|&implied_models| {
                members(implied_models)
                    .flat_map(|m| proscribes.get(models[m]).into_iter().flatten())
                    .fold(0, |acc, a| acc | implying[anomaly_index[a]])
            })
            .collect();
        // anomalies->impossible-models for one anomaly: the models directly
        // proscribing anything it implies, closed under "implied by".
        let impossible: Vec<Bits> = implied
            .iter()
            .map(|&implied_anomalies| {
                members(implied_anomalies)
                    .flat_map(|a| proscribed_by.get(anomalies[a]).into_iter().flatten())
                    .fold(0, |acc, m| acc | model_implied_by[canonical_index[m]])
            })
            .collect();

        let friendly =
            models.iter().map(|&m| FRIENDLY_MODEL_NAMES.iter().find(|(c, _)| *c == m).map_or(m, |&(_, f)| f)).collect();

        Lattice {
            model_out,
            proscribes,
            anomalies,
            anomaly_index,
            implied,
            implying,
            impossible,
            models,
            model_index,
            model_implies,
            model_implied_by,
            prohibits,
            friendly,
            all_models: all.into_iter().collect(),
            depths,
            all_anomalies,
        }
    }

    fn anomaly_names(&self, bits: Bits) -> impl Iterator<Item = &'static str> + '_ {
        members(bits).map(|i| self.anomalies[i])
    }

    fn model_names(&self, bits: Bits) -> impl Iterator<Item = &'static str> + '_ {
        members(bits).map(|i| self.models[i])
    }

    /// Union of `per[i]` over the known `anomalies`; unknown ones are pushed
    /// to `unknown`.
    fn fold_anomalies<'a>(&self, anomalies: &[&'a str], per: &[Bits], unknown: &mut Vec<&'a str>) -> Bits {
        let mut bits = 0;
        for &a in anomalies {
            match self.anomaly_index.get(a) {
                Some(&i) => bits |= per[i],
                None => unknown.push(a),
            }
        }
        bits
    }

    /// Union of `per[canonical(m)]` over `models`.
    ///
    /// # Panics
    /// If a model is unknown.
    fn fold_models(&self, models: &[&str], per: &[Bits]) -> Bits {
        if let Err(e) = validate_models(models) {
            panic!("{e}");
        }
        models.iter().fold(0, |acc, m| acc | per[self.model_index[m]])
    }

    /// `anomalies` expanded along `per` (closure), unknown names kept.
    fn expand_anomalies(&self, anomalies: &[&str], per: &[Bits]) -> BTreeSet<String> {
        let mut unknown = Vec::new();
        let bits = self.fold_anomalies(anomalies, per, &mut unknown);
        let mut out: BTreeSet<String> = self.anomaly_names(bits).map(str::to_string).collect();
        out.extend(unknown.into_iter().map(str::to_string));
        out
    }
}

fn lattice() -> &'static Lattice {
    static LATTICE: OnceLock<Lattice> = OnceLock::new();
    LATTICE.get_or_init(Lattice::build)
}

// ---------------------------------------------------------------------------
// Model names
// ---------------------------------------------------------------------------

/// Error for model names Elle does not know (`validate-models` throws an
/// `IllegalArgumentException` in Elle). `unknown` holds the offending names
/// in input order; `Display` reproduces Elle's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownModelError {
    /// The unknown model names, in the order given.
    pub unknown: Vec<String>,
}

impl fmt::Display for UnknownModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kw = |names: &mut dyn Iterator<Item = &str>| names.map(|n| format!(":{n}")).collect::<Vec<_>>().join(" ");
        write!(
            f,
            "Unknown consistency model ({}); known models are:\n#{{{}}}",
            kw(&mut self.unknown.iter().map(String::as_str)),
            kw(&mut lattice().all_models.iter().copied())
        )
    }
}

impl std::error::Error for UnknownModelError {}

/// The canonical name of a consistency model (Elle's `canonical-model-name`):
/// aliases map to the Adya-style name Elle reasons with ("serializable" and
/// "conflict-serializable" → "PL-3", "strict-serializable" and
/// "strong-serializable" → "PL-SS", "read-committed" → "PL-2"); other known
/// models map to themselves. `None` if Elle does not know the name at all
/// (where Elle's own function would return it unchanged and later reject it
/// in `validate-models`).
pub fn canonical_model_name(name: &str) -> Option<&'static str> {
    let lat = lattice();
    lat.model_index.get(name).map(|&i| lat.models[i])
}

/// Whether `name` is in Elle's `all-models` (a canonical name, an alias, or
/// a vertex of the model graph).
pub fn is_known_model(name: &str) -> bool {
    lattice().model_index.contains_key(name)
}

/// Elle's `validate-models`: `Ok` if every name is a known model (aliases
/// included), otherwise the list of unknown names. Call this on user input
/// before the functions below that panic on unknown models.
///
/// # Errors
/// [`UnknownModelError`] listing every name not in [`all_model_names`].
pub fn validate_models(models: &[&str]) -> Result<(), UnknownModelError> {
    if models.iter().all(|m| is_known_model(m)) {
        return Ok(());
    }
    Err(UnknownModelError { unknown: models.iter().filter(|m| !is_known_model(m)).map(|m| m.to_string()).collect() })
}

/// The friendly (reporting) name of a canonical model, as Elle's
/// `friendly-model-name`: "PL-3" → "serializable", "PL-SS" →
/// "strong-serializable", "PL-SI" → "snapshot-isolation", "PL-2" →
/// "read-committed", ... Any other name, including non-canonical aliases
/// such as "strict-serializable" and models without an alias such as
/// "read-atomic", is returned unchanged (Elle does not canonicalise here).
pub fn friendly_model_name(name: &str) -> &str {
    FRIENDLY_MODEL_NAMES.iter().find(|(canonical, _)| *canonical == name).map_or(name, |&(_, friendly)| friendly)
}

/// Every model name Elle accepts (`all-models`: the canonical model graph's
/// vertices, every alias, every canonical name), sorted by ASCII order.
pub fn all_model_names() -> Vec<&'static str> {
    lattice().all_models.clone()
}

// ---------------------------------------------------------------------------
// Anomaly lattice
// ---------------------------------------------------------------------------

/// Elle's `all-anomalies-implying`: every anomaly whose presence would imply
/// one of `anomalies` (a breadth-first search *into* the implication DAG),
/// the given anomalies included. Asking to rule out G1 thus rules out G1a,
/// G1b, G1c, G0, dirty-update, ... Names Elle does not know are kept as-is.
pub fn all_anomalies_implying(anomalies: &[&str]) -> BTreeSet<String> {
    let lat = lattice();
    lat.expand_anomalies(anomalies, &lat.implying)
}

/// Elle's `all-implied-anomalies`: every anomaly implied by one of
/// `anomalies` (a breadth-first search *out* along the implication DAG), the
/// given anomalies included. Finding a G0 means a G1c, G0-process, G1, ...
/// are present too. Names Elle does not know are kept as-is.
pub fn all_implied_anomalies(anomalies: &[&str]) -> BTreeSet<String> {
    let lat = lattice();
    lat.expand_anomalies(anomalies, &lat.implied)
}

/// Elle's `anomaly-depths`: the depth of an anomaly in the DAG formed by the
/// implication and severity graphs (0 = implied by nothing), with every
/// directly proscribed anomaly known at depth ≥ 0. `None` for names Elle
/// does not know.
pub fn anomaly_depth(anomaly: &str) -> Option<usize> {
    lattice().depths.get(anomaly).copied()
}

/// Elle's `anomaly-depth-compare`: orders anomalies by depth (fewer
/// implications first, unknown names first of all, as Clojure's `compare`
/// puts `nil` before numbers), then by name. Sorting cycle types with it
/// gives [`CYCLE_SEARCH_ORDER`].
pub fn anomaly_depth_compare(a: &str, b: &str) -> Ordering {
    anomaly_depth(a).cmp(&anomaly_depth(b)).then_with(|| a.cmp(b))
}

/// Elle's `all-anomalies`: every anomaly the lattice knows (implication and
/// severity graph vertices plus every directly proscribed anomaly), sorted by
/// [`anomaly_depth_compare`] — a topological order, worst first.
pub fn all_anomalies() -> &'static [&'static str] {
    &lattice().all_anomalies
}

// ---------------------------------------------------------------------------
// Model lattice
// ---------------------------------------------------------------------------

/// Elle's `all-implied-models`: the canonical models implied by any of
/// `models` (breadth-first search out along the model graph, the models
/// themselves included). In Elle's lattice a serializable history is also
/// snapshot isolated, repeatable read, update serializable, read atomic,
/// read committed, ... (but not linearizable or strict serializable).
///
/// # Panics
/// If a model is unknown (Elle throws); see [`validate_models`].
pub fn all_implied_models(models: &[&str]) -> BTreeSet<&'static str> {
    let lat = lattice();
    lat.model_names(lat.fold_models(models, &lat.model_implies)).collect()
}

/// The canonical model graph as sorted `(a, b)` edges, "`a` implies `b`"
/// (Elle's `models` after canonicalisation; spec Appendix A, Table C).
pub fn canonical_model_graph() -> Vec<(&'static str, &'static str)> {
    let mut edges: Vec<(&'static str, &'static str)> =
        lattice().model_out.iter().flat_map(|(&a, bs)| bs.iter().map(move |&b| (a, b))).collect();
    edges.sort_unstable();
    edges
}

/// The anomalies a model directly proscribes (Elle's
/// `direct-proscribed-anomalies` for its canonical name, merging the entries
/// of all its spellings), without the models it implies. Empty for models
/// that add no proscription of their own (or unknown names).
pub fn directly_proscribed_anomalies(model: &str) -> BTreeSet<&'static str> {
    let lat = lattice();
    canonical_model_name(model).and_then(|m| lat.proscribes.get(m)).into_iter().flatten().copied().collect()
}

/// Elle's `anomalies-prohibited-by`: the anomalies that cannot be present if
/// all of `models` hold. Canonicalises the models, takes every model they
/// imply (themselves included), unions the anomalies those directly
/// proscribe, and closes under [`all_anomalies_implying`]. For example
/// read-committed prohibits G0, G1a, G1b, G1c, G1, dirty-update,
/// incompatible-order, future-read, cyclic-versions, duplicate-elements and
/// the PL-1 / PL-2 cycle-exists anomalies (but not internal or lost-update).
///
/// # Panics
/// If a model is unknown (Elle throws `Unknown consistency model`); see
/// [`validate_models`].
pub fn anomalies_prohibited_by(models: &[&str]) -> BTreeSet<String> {
    let lat = lattice();
    lat.anomaly_names(lat.fold_models(models, &lat.prohibits)).map(str::to_string).collect()
}

/// Elle's `all-impossible-models`: given models known not to hold, every
/// canonical model that cannot hold either — the given ones plus every model
/// that implies one of them (breadth-first search *into* the model graph).
/// If serializability fails, so does strict serializability. Accepts
/// aliases and friendly names.
///
/// # Panics
/// If a model is unknown (Elle throws); see [`validate_models`].
pub fn all_impossible_models(models: &[&str]) -> BTreeSet<&'static str> {
    let lat = lattice();
    lat.model_names(lat.fold_models(models, &lat.model_implied_by)).collect()
}

/// Elle's `anomalies->impossible-models`: the canonical models ruled out by
/// the presence of `anomalies`. Expands the anomalies to everything they
/// imply, takes every model directly proscribing one of those, and closes
/// under [`all_impossible_models`]. Unknown anomaly names rule out nothing.
pub fn anomalies_to_impossible_models(anomalies: &[&str]) -> BTreeSet<&'static str> {
    let lat = lattice();
    lat.model_names(impossible_bits(lat, anomalies)).collect()
}

fn impossible_bits(lat: &Lattice, anomalies: &[&str]) -> Bits {
    lat.fold_anomalies(anomalies, &lat.impossible, &mut Vec::new())
}

/// Bits of the known models in `models` (canonicalised); unknown names go
/// to `unknown`.
fn model_bits<'a>(lat: &Lattice, models: &[&'a str], unknown: &mut BTreeSet<&'a str>) -> Bits {
    let mut bits = 0;
    for &m in models {
        match lat.model_index.get(m) {
            Some(&i) => bits |= 1 << i,
            None => {
                unknown.insert(m);
            }
        }
    }
    bits
}

/// The members of `set` whose closure (`per`) contains no other member
/// (Elle's `most-models`).
fn most_bits(set: Bits, per: &[Bits]) -> Bits {
    members(set).filter(|&i| per[i] & set & !(1 << i) == 0).fold(0, |acc, i| acc | 1 << i)
}

/// Elle's `weakest-models`: the subset of `models` (canonicalised) implied by
/// all the rest, i.e. those that imply no other member. For
/// {serializable, strict-serializable} that is {PL-3}. This is the `:not` of
/// a boundary: the weakest models a history violates. Unknown names have no
/// relations and are kept.
pub fn weakest_models<'a>(models: &[&'a str]) -> BTreeSet<&'a str> {
    let lat = lattice();
    let mut out = BTreeSet::new();
    let bits = model_bits(lat, models, &mut out);
    for i in members(most_bits(bits, &lat.model_implies)) {
        out.insert(lat.models[i]);
    }
    out
}

/// Elle's `strongest-models`: the subset of `models` (canonicalised) that
/// implies all the rest, i.e. those implied by no other member. For
/// {serializable, strict-serializable} that is {PL-SS}. Unknown names are
/// kept.
pub fn strongest_models<'a>(models: &[&'a str]) -> BTreeSet<&'a str> {
    let lat = lattice();
    let mut out = BTreeSet::new();
    let bits = model_bits(lat, models, &mut out);
    for i in members(most_bits(bits, &lat.model_implied_by)) {
        out.insert(lat.models[i]);
    }
    out
}

/// Elle's `boundary` with canonical names: `(not, also_not)` where `not` is
/// the weakest set of models the anomalies rule out and `also_not` the
/// remaining (stronger) impossible models.
pub fn boundary(anomalies: &[&str]) -> (BTreeSet<&'static str>, BTreeSet<&'static str>) {
    let lat = lattice();
    let impossible = impossible_bits(lat, anomalies);
    let not = most_bits(impossible, &lat.model_implies);
    (lat.model_names(not).collect(), lat.model_names(impossible & !not).collect())
}

/// Elle's `friendly-boundary`: [`boundary`] mapped through
/// [`friendly_model_name`], i.e. the `:not` and `:also-not` sets of a result
/// map. A G1c yields `:not #{read-committed}` and, in `:also-not`, every
/// stronger model (serializable, snapshot-isolation, strong-serializable,
/// ...).
pub fn friendly_boundary(anomalies: &[&str]) -> (BTreeSet<String>, BTreeSet<String>) {
    let lat = lattice();
    let impossible = impossible_bits(lat, anomalies);
    let not = most_bits(impossible, &lat.model_implies);
    let friendly = |bits: Bits| members(bits).map(|i| lat.friendly[i].to_string()).collect();
    (friendly(not), friendly(impossible & !not))
}

// ---------------------------------------------------------------------------
// Helpers used by the checker (elle.txn)
// ---------------------------------------------------------------------------

/// Elle's `prohibited-anomaly-types`: the anomaly types that make a run fail.
/// `consistency_models` is `None` when the option is absent (then
/// [`DEFAULT_CONSISTENCY_MODELS`], strict serializability, applies) and
/// `Some(&[])` for an explicit nil / empty list. The extra `anomalies` are
/// expanded with [`all_anomalies_implying`] and are not validated.
///
/// # Panics
/// If a model is unknown; see [`validate_models`].
pub fn prohibited_anomaly_types(consistency_models: Option<&[&str]>, anomalies: &[&str]) -> BTreeSet<String> {
    let mut out = all_anomalies_implying(anomalies);
    out.extend(anomalies_prohibited_by(consistency_models.unwrap_or(DEFAULT_CONSISTENCY_MODELS)));
    out
}

/// Elle's `reportable-anomaly-types`: [`prohibited_anomaly_types`] plus the
/// [`UNKNOWN_ANOMALY_TYPES`], which are always worth reporting.
///
/// # Panics
/// If a model is unknown; see [`validate_models`].
pub fn reportable_anomaly_types(consistency_models: Option<&[&str]>, anomalies: &[&str]) -> BTreeSet<String> {
    let mut out = prohibited_anomaly_types(consistency_models, anomalies);
    out.extend(UNKNOWN_ANOMALY_TYPES.iter().map(|s| s.to_string()));
    out
}

/// The `<model>-cycle-exists` anomaly type of a model in
/// [`CYCLE_EXISTS_MODELS`] (canonical name), or `None`.
pub fn cycle_exists_anomaly(model: &str) -> Option<&'static str> {
    CYCLE_EXISTS_MODELS.iter().position(|&m| m == model).map(|i| CYCLE_EXISTS_ANOMALIES[i])
}

/// Elle's `cycle-exists-cases->impossible-cycle-anomalies`: given the models
/// (any spelling; Elle passes the friendly `:not` names) for which the
/// cycle-exists pass found an SCC in an SCC of the dependency graph, the
/// cycle anomaly types that *cannot* occur there: everything prohibited by
/// a cycle-exists model that was not shown impossible. The cycle search
/// skips these.
///
/// # Panics
/// If a model is unknown; see [`validate_models`].
pub fn impossible_cycle_anomalies(found_models: &[&str]) -> BTreeSet<&'static str> {
    let lat = lattice();
    let impossible = lat.fold_models(found_models, &lat.model_implied_by);
    let prohibited = CYCLE_EXISTS_MODELS
        .iter()
        .map(|m| lat.model_index[m])
        .filter(|&i| impossible & 1 << i == 0)
        .fold(0, |acc, i| acc | lat.prohibits[i]);
    CYCLE_SEARCH_ORDER.iter().copied().filter(|t| prohibited & 1 << lat.anomaly_index[t] != 0).collect()
}

/// The cycle-exists anomaly types made redundant by the other anomaly types
/// present (the rule of Elle's `remove-redundant-cycle-exists`): a
/// `<M>-cycle-exists` is dropped from a report when the anomalies not ending
/// in `-cycle-exists` already rule out `M`, since a concrete witness is more
/// useful than a proof of existence. Returns the types to drop (whether or
/// not they are in `anomaly_types`).
pub fn redundant_cycle_exists_anomalies(anomaly_types: &[&str]) -> BTreeSet<&'static str> {
    let lat = lattice();
    let others: Vec<&str> = anomaly_types.iter().copied().filter(|t| !t.ends_with("-cycle-exists")).collect();
    let impossible = impossible_bits(lat, &others);
    CYCLE_EXISTS_MODELS
        .iter()
        .zip(CYCLE_EXISTS_ANOMALIES)
        .filter(|(m, _)| impossible & 1 << lat.model_index[*m] != 0)
        .map(|(_, &t)| t)
        .collect()
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    fn sset<'a>(xs: &[&'a str]) -> BTreeSet<&'a str> {
        xs.iter().copied().collect()
    }

    /// Every anomaly type Elle can emit (spec §2.1, §2.2).
    const EMITTED: &[&str] = &[
        // cycles
        "G0",
        "G1c",
        "G-single-item",
        "G-single",
        "G-nonadjacent-item",
        "G-nonadjacent",
        "G2-item",
        "G2",
        "G0-process",
        "G1c-process",
        "G-single-item-process",
        "G-single-process",
        "G-nonadjacent-item-process",
        "G-nonadjacent-process",
        "G2-item-process",
        "G2-process",
        "G0-realtime",
        "G1c-realtime",
        "G-single-item-realtime",
        "G-single-realtime",
        "G-nonadjacent-item-realtime",
        "G-nonadjacent-realtime",
        "G2-item-realtime",
        "G2-realtime",
        // non-cycle
        "G1a",
        "G1b",
        "internal",
        "future-read",
        "dirty-update",
        "duplicate-elements",
        "incompatible-order",
        "lost-update",
        "cyclic-versions",
        "predicate-read-miss",
        "empty-transaction-graph",
        "cycle-search-timeout",
        // cycle-exists
        "PL-1-cycle-exists",
        "PL-2-cycle-exists",
        "PL-SI-cycle-exists",
        "PL-2.99-cycle-exists",
        "PL-3-cycle-exists",
        "strong-session-PL-1-cycle-exists",
        "strong-session-PL-2-cycle-exists",
        "strong-session-snapshot-isolation-cycle-exists",
        "strong-session-serializable-cycle-exists",
        "strong-PL-1-cycle-exists",
        "strong-PL-2-cycle-exists",
        "strong-snapshot-isolation-cycle-exists",
        "PL-SS-cycle-exists",
    ];

    // ---- Appendix A, transcribed from /work/shared/spec/elle.md ----

    /// Appendix A, Table A: (model, canonical, emitted subset, abstract subset).
    #[rustfmt::skip]
    const TABLE_A: &[(&str, &str, &[&str], &[&str])] = &[
        ("read-uncommitted", "PL-1", &["G0", "PL-1-cycle-exists", "cyclic-versions", "duplicate-elements"], &[]),
        ("read-committed", "PL-2", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order"], &["G1"]),
        ("monotonic-atomic-view", "monotonic-atomic-view", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order"], &["G1"]),
        ("cursor-stability", "PL-CS", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "lost-update"], &["G-cursor", "G1"]),
        ("monotonic-view", "PL-2L", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order"], &["G-monotonic", "G1"]),
        ("monotonic-snapshot-read", "PL-MSR", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order"], &["G-MSR", "G1"]),
        ("consistent-view", "PL-2+", &["G-single", "G-single-item", "G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "lost-update"], &["G-cursor", "G-monotonic", "G1"]),
        ("forward-consistent-view", "PL-FCV", &["G-single", "G-single-item", "G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "lost-update"], &["G-SIb", "G-cursor", "G-monotonic", "G1"]),
        ("update-serializable", "PL-3U", &["G-single", "G-single-item", "G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "lost-update"], &["G-SIb", "G-cursor", "G-monotonic", "G-update", "G1"]),
        ("repeatable-read", "PL-2.99", &["G-nonadjacent-item", "G-single-item", "G0", "G1a", "G1b", "G1c", "G2-item", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-2.99-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "lost-update"], &["G-cursor", "G1"]),
        ("snapshot-isolation", "PL-SI", &["G-nonadjacent", "G-nonadjacent-item", "G-single", "G-single-item", "G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-SI-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update"], &["G-MSR", "G-SI", "G-SIb", "G-cursor", "G-monotonic", "G1"]),
        ("serializable", "PL-3", &["G-nonadjacent", "G-nonadjacent-item", "G-single", "G-single-item", "G0", "G1a", "G1b", "G1c", "G2", "G2-item", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-2.99-cycle-exists", "PL-3-cycle-exists", "PL-SI-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update", "predicate-read-miss"], &["G-MSR", "G-SI", "G-SIb", "G-cursor", "G-monotonic", "G-update", "G1", "write-skew"]),
        ("conflict-serializable", "PL-3", &["G-nonadjacent", "G-nonadjacent-item", "G-single", "G-single-item", "G0", "G1a", "G1b", "G1c", "G2", "G2-item", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-2.99-cycle-exists", "PL-3-cycle-exists", "PL-SI-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update", "predicate-read-miss"], &["G-MSR", "G-SI", "G-SIb", "G-cursor", "G-monotonic", "G-update", "G1", "write-skew"]),
        ("strict-serializable", "PL-SS", &["G-nonadjacent", "G-nonadjacent-item", "G-nonadjacent-item-process", "G-nonadjacent-item-realtime", "G-nonadjacent-process", "G-nonadjacent-realtime", "G-single", "G-single-item", "G-single-item-process", "G-single-item-realtime", "G-single-process", "G-single-realtime", "G0", "G0-process", "G0-realtime", "G1a", "G1b", "G1c", "G1c-process", "G1c-realtime", "G2", "G2-item", "G2-item-process", "G2-item-realtime", "G2-process", "G2-realtime", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-2.99-cycle-exists", "PL-3-cycle-exists", "PL-SI-cycle-exists", "PL-SS-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update", "predicate-read-miss", "strong-PL-1-cycle-exists", "strong-PL-2-cycle-exists", "strong-session-PL-1-cycle-exists", "strong-session-PL-2-cycle-exists", "strong-session-serializable-cycle-exists", "strong-session-snapshot-isolation-cycle-exists", "strong-snapshot-isolation-cycle-exists"], &["G-MSR", "G-SI", "G-SIb", "G-cursor", "G-monotonic", "G-update", "G1", "G1-process", "G1-realtime", "write-skew"]),
        ("strong-serializable", "PL-SS", &["G-nonadjacent", "G-nonadjacent-item", "G-nonadjacent-item-process", "G-nonadjacent-item-realtime", "G-nonadjacent-process", "G-nonadjacent-realtime", "G-single", "G-single-item", "G-single-item-process", "G-single-item-realtime", "G-single-process", "G-single-realtime", "G0", "G0-process", "G0-realtime", "G1a", "G1b", "G1c", "G1c-process", "G1c-realtime", "G2", "G2-item", "G2-item-process", "G2-item-realtime", "G2-process", "G2-realtime", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-2.99-cycle-exists", "PL-3-cycle-exists", "PL-SI-cycle-exists", "PL-SS-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update", "predicate-read-miss", "strong-PL-1-cycle-exists", "strong-PL-2-cycle-exists", "strong-session-PL-1-cycle-exists", "strong-session-PL-2-cycle-exists", "strong-session-serializable-cycle-exists", "strong-session-snapshot-isolation-cycle-exists", "strong-snapshot-isolation-cycle-exists"], &["G-MSR", "G-SI", "G-SIb", "G-cursor", "G-monotonic", "G-update", "G1", "G1-process", "G1-realtime", "write-skew"]),
        ("strong-session-read-uncommitted", "strong-session-PL-1", &["G0", "G0-process", "PL-1-cycle-exists", "cyclic-versions", "duplicate-elements", "strong-session-PL-1-cycle-exists"], &[]),
        ("strong-session-read-committed", "strong-session-PL-2", &["G0", "G0-process", "G1a", "G1b", "G1c", "G1c-process", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "strong-session-PL-1-cycle-exists", "strong-session-PL-2-cycle-exists"], &["G1"]),
        ("strong-read-uncommitted", "strong-PL-1", &["G0", "G0-process", "G0-realtime", "PL-1-cycle-exists", "cyclic-versions", "duplicate-elements", "strong-PL-1-cycle-exists", "strong-session-PL-1-cycle-exists"], &[]),
        ("strong-read-committed", "strong-PL-2", &["G0", "G0-process", "G0-realtime", "G1a", "G1b", "G1c", "G1c-process", "G1c-realtime", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "strong-PL-1-cycle-exists", "strong-PL-2-cycle-exists", "strong-session-PL-1-cycle-exists", "strong-session-PL-2-cycle-exists"], &["G1"]),
        ("strong-session-snapshot-isolation", "strong-session-snapshot-isolation", &["G-nonadjacent", "G-nonadjacent-item", "G-nonadjacent-item-process", "G-nonadjacent-process", "G-single", "G-single-item", "G-single-item-process", "G-single-process", "G0", "G0-process", "G1a", "G1b", "G1c", "G1c-process", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-SI-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update", "strong-session-PL-1-cycle-exists", "strong-session-PL-2-cycle-exists", "strong-session-snapshot-isolation-cycle-exists"], &["G-MSR", "G-SI", "G-SIb", "G-cursor", "G-monotonic", "G1", "G1-process"]),
        ("strong-snapshot-isolation", "strong-snapshot-isolation", &["G-nonadjacent", "G-nonadjacent-item", "G-nonadjacent-item-process", "G-nonadjacent-item-realtime", "G-nonadjacent-process", "G-nonadjacent-realtime", "G-single", "G-single-item", "G-single-item-process", "G-single-item-realtime", "G-single-process", "G-single-realtime", "G0", "G0-process", "G0-realtime", "G1a", "G1b", "G1c", "G1c-process", "G1c-realtime", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-SI-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update", "strong-PL-1-cycle-exists", "strong-PL-2-cycle-exists", "strong-session-PL-1-cycle-exists", "strong-session-PL-2-cycle-exists", "strong-session-snapshot-isolation-cycle-exists", "strong-snapshot-isolation-cycle-exists"], &["G-MSR", "G-SI", "G-SIb", "G-cursor", "G-monotonic", "G1", "G1-process", "G1-realtime"]),
        ("strong-session-serializable", "strong-session-serializable", &["G-nonadjacent", "G-nonadjacent-item", "G-nonadjacent-item-process", "G-nonadjacent-process", "G-single", "G-single-item", "G-single-item-process", "G-single-process", "G0", "G0-process", "G1a", "G1b", "G1c", "G1c-process", "G2", "G2-item", "G2-item-process", "G2-process", "PL-1-cycle-exists", "PL-2-cycle-exists", "PL-2.99-cycle-exists", "PL-3-cycle-exists", "PL-SI-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update", "predicate-read-miss", "strong-session-PL-1-cycle-exists", "strong-session-PL-2-cycle-exists", "strong-session-serializable-cycle-exists", "strong-session-snapshot-isolation-cycle-exists"], &["G-MSR", "G-SI", "G-SIb", "G-cursor", "G-monotonic", "G-update", "G1", "G1-process", "write-skew"]),
        ("read-atomic", "read-atomic", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal"], &["G1"]),
        ("update-atomic", "update-atomic", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update"], &["G1"]),
        ("causal-cerone", "causal-cerone", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal"], &["G1"]),
        ("parallel-snapshot-isolation", "parallel-snapshot-isolation", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal", "lost-update"], &["G1"]),
        ("prefix", "prefix", &["G0", "G1a", "G1b", "G1c", "PL-1-cycle-exists", "PL-2-cycle-exists", "cyclic-versions", "dirty-update", "duplicate-elements", "future-read", "incompatible-order", "internal"], &["G1"]),
        ("linearizable", "linearizable", &[], &[]),
        ("sequential", "sequential", &[], &[]),
        ("causal", "causal", &[], &[]),
        ("PRAM", "PRAM", &[], &[]),
        ("read-your-writes", "read-your-writes", &[], &[]),
    ];

    /// Appendix A, Table B: (anomaly, :not, :also-not) as friendly names.
    #[rustfmt::skip]
    const TABLE_B: &[(&str, &[&str], &[&str])] = &[
        ("G-nonadjacent", &["snapshot-isolation"], &["serializable", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation"]),
        ("G-nonadjacent-item", &["repeatable-read", "snapshot-isolation"], &["serializable", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation"]),
        ("G-nonadjacent-item-process", &["strong-session-snapshot-isolation"], &["strong-serializable", "strong-session-serializable", "strong-snapshot-isolation"]),
        ("G-nonadjacent-item-realtime", &["strong-snapshot-isolation"], &["strong-serializable"]),
        ("G-nonadjacent-process", &["strong-session-snapshot-isolation"], &["strong-serializable", "strong-session-serializable", "strong-snapshot-isolation"]),
        ("G-nonadjacent-realtime", &["strong-snapshot-isolation"], &["strong-serializable"]),
        ("G-single", &["consistent-view"], &["forward-consistent-view", "serializable", "snapshot-isolation", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-serializable"]),
        ("G-single-item", &["consistent-view", "repeatable-read"], &["forward-consistent-view", "serializable", "snapshot-isolation", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-serializable"]),
        ("G-single-item-process", &["strong-session-snapshot-isolation"], &["strong-serializable", "strong-session-serializable", "strong-snapshot-isolation"]),
        ("G-single-item-realtime", &["strong-snapshot-isolation"], &["strong-serializable"]),
        ("G-single-process", &["strong-session-snapshot-isolation"], &["strong-serializable", "strong-session-serializable", "strong-snapshot-isolation"]),
        ("G-single-realtime", &["strong-snapshot-isolation"], &["strong-serializable"]),
        ("G0", &["read-uncommitted"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "read-committed", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-read-uncommitted", "strong-serializable", "strong-session-read-committed", "strong-session-read-uncommitted", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("G0-process", &["strong-session-read-uncommitted"], &["strong-read-committed", "strong-read-uncommitted", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation"]),
        ("G0-realtime", &["strong-read-uncommitted"], &["strong-read-committed", "strong-serializable", "strong-snapshot-isolation"]),
        ("G1a", &["read-committed"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("G1b", &["read-committed"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("G1c", &["read-committed"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("G1c-process", &["strong-session-read-committed"], &["strong-read-committed", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation"]),
        ("G1c-realtime", &["strong-read-committed"], &["strong-serializable", "strong-snapshot-isolation"]),
        ("G2", &["serializable"], &["strong-serializable", "strong-session-serializable"]),
        ("G2-item", &["repeatable-read"], &["serializable", "strong-serializable", "strong-session-serializable"]),
        ("G2-item-process", &["strong-session-serializable"], &["strong-serializable"]),
        ("G2-item-realtime", &["strong-serializable"], &[]),
        ("G2-process", &["strong-session-serializable"], &["strong-serializable"]),
        ("G2-realtime", &["strong-serializable"], &[]),
        ("PL-1-cycle-exists", &["read-uncommitted"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "read-committed", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-read-uncommitted", "strong-serializable", "strong-session-read-committed", "strong-session-read-uncommitted", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("PL-2-cycle-exists", &["read-committed"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("PL-2.99-cycle-exists", &["repeatable-read"], &["serializable", "strong-serializable", "strong-session-serializable"]),
        ("PL-3-cycle-exists", &["serializable"], &["strong-serializable", "strong-session-serializable"]),
        ("PL-SI-cycle-exists", &["snapshot-isolation"], &["serializable", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation"]),
        ("PL-SS-cycle-exists", &["strong-serializable"], &[]),
        ("cyclic-versions", &["read-uncommitted"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "read-committed", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-read-uncommitted", "strong-serializable", "strong-session-read-committed", "strong-session-read-uncommitted", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("dirty-update", &["read-committed"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("duplicate-elements", &["read-uncommitted"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "read-committed", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-read-uncommitted", "strong-serializable", "strong-session-read-committed", "strong-session-read-uncommitted", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("future-read", &["read-committed"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("incompatible-order", &["read-committed"], &["causal-cerone", "consistent-view", "cursor-stability", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "monotonic-view", "parallel-snapshot-isolation", "prefix", "read-atomic", "repeatable-read", "serializable", "snapshot-isolation", "strong-read-committed", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic", "update-serializable"]),
        ("internal", &["read-atomic"], &["causal-cerone", "parallel-snapshot-isolation", "prefix", "serializable", "snapshot-isolation", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-atomic"]),
        ("lost-update", &["cursor-stability", "update-atomic"], &["consistent-view", "forward-consistent-view", "parallel-snapshot-isolation", "repeatable-read", "serializable", "snapshot-isolation", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "update-serializable"]),
        ("predicate-read-miss", &["serializable"], &["strong-serializable", "strong-session-serializable"]),
        ("strong-PL-1-cycle-exists", &["strong-read-uncommitted"], &["strong-read-committed", "strong-serializable", "strong-snapshot-isolation"]),
        ("strong-PL-2-cycle-exists", &["strong-read-committed"], &["strong-serializable", "strong-snapshot-isolation"]),
        ("strong-session-PL-1-cycle-exists", &["strong-session-read-uncommitted"], &["strong-read-committed", "strong-read-uncommitted", "strong-serializable", "strong-session-read-committed", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation"]),
        ("strong-session-PL-2-cycle-exists", &["strong-session-read-committed"], &["strong-read-committed", "strong-serializable", "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation"]),
        ("strong-session-serializable-cycle-exists", &["strong-session-serializable"], &["strong-serializable"]),
        ("strong-session-snapshot-isolation-cycle-exists", &["strong-session-snapshot-isolation"], &["strong-serializable", "strong-session-serializable", "strong-snapshot-isolation"]),
        ("strong-snapshot-isolation-cycle-exists", &["strong-snapshot-isolation"], &["strong-serializable"]),
    ];

    /// Appendix A, Table C: canonical model graph, from -> [to...].
    #[rustfmt::skip]
    const TABLE_C: &[(&str, &[&str])] = &[
        ("PL-2", &["PL-1"]),
        ("PL-2+", &["PL-2L", "PL-CS"]),
        ("PL-2.99", &["PL-CS", "monotonic-atomic-view"]),
        ("PL-2L", &["PL-2"]),
        ("PL-3", &["PL-2.99", "PL-3U", "PL-SI", "view-serializable"]),
        ("PL-3U", &["PL-FCV"]),
        ("PL-CS", &["PL-2"]),
        ("PL-FCV", &["PL-2+"]),
        ("PL-MSR", &["PL-2"]),
        ("PL-SI", &["PL-FCV", "PL-MSR", "monotonic-atomic-view", "parallel-snapshot-isolation", "prefix"]),
        ("PL-SS", &["PL-3", "PL-SI", "linearizable", "session-serializable", "strong-session-serializable", "strong-snapshot-isolation"]),
        ("PRAM", &["monotonic-reads", "monotonic-writes", "read-your-writes"]),
        ("causal", &["PRAM", "writes-follow-reads"]),
        ("causal-cerone", &["read-atomic"]),
        ("linearizable", &["sequential"]),
        ("monotonic-atomic-view", &["PL-2"]),
        ("parallel-snapshot-isolation", &["causal-cerone", "update-atomic"]),
        ("prefix", &["causal-cerone"]),
        ("read-atomic", &["monotonic-atomic-view"]),
        ("sequential", &["causal"]),
        ("session-serializable", &["1SR"]),
        ("strong-PL-1", &["strong-session-PL-1"]),
        ("strong-PL-2", &["strong-PL-1", "strong-session-PL-2"]),
        ("strong-session-PL-1", &["PL-1"]),
        ("strong-session-PL-2", &["PL-2", "strong-session-PL-1"]),
        ("strong-session-serializable", &["PL-3", "strong-session-snapshot-isolation"]),
        ("strong-session-snapshot-isolation", &["PL-SI", "strong-session-PL-2"]),
        ("strong-snapshot-isolation", &["strong-PL-2", "strong-session-snapshot-isolation"]),
        ("update-atomic", &["read-atomic"]),
    ];

    // ---- Appendix A ----

    #[test]
    fn table_a_prohibited_anomalies_per_model() {
        let emitted = set(EMITTED);
        assert_eq!(emitted.len(), 49);
        assert_eq!(TABLE_A.len(), 32);
        for &(model, canonical, exp_emitted, exp_abstract) in TABLE_A {
            assert_eq!(canonical_model_name(model), Some(canonical), "{model}");
            let prohibited = anomalies_prohibited_by(&[model]);
            let got_emitted: BTreeSet<String> = prohibited.intersection(&emitted).cloned().collect();
            let got_abstract: BTreeSet<String> = prohibited.difference(&emitted).cloned().collect();
            assert_eq!(got_emitted, set(exp_emitted), "emitted subset of {model}");
            assert_eq!(got_abstract, set(exp_abstract), "abstract subset of {model}");
            // Canonical and alias spellings agree.
            assert_eq!(anomalies_prohibited_by(&[canonical]), prohibited, "{model}");
        }
    }

    #[test]
    fn table_a_headline_counts() {
        // §3.4: serializable prohibits 23 emitted types, none process/realtime;
        // strict-serializable prohibits all 47 emittable non-"unknown" types.
        let emitted = set(EMITTED);
        let ser: BTreeSet<String> =
            anomalies_prohibited_by(&["serializable"]).intersection(&emitted).cloned().collect();
        assert_eq!(ser.len(), 23);
        assert!(ser.iter().all(|a| !a.ends_with("-process") && !a.ends_with("-realtime")));
        let ss: BTreeSet<String> =
            anomalies_prohibited_by(&["strict-serializable"]).intersection(&emitted).cloned().collect();
        let mut expected = emitted.clone();
        for u in UNKNOWN_ANOMALY_TYPES {
            expected.remove(*u);
        }
        assert_eq!(ss, expected);
        assert_eq!(ss.len(), 47);
        let si = anomalies_prohibited_by(&["snapshot-isolation"]);
        for a in ["G-single", "G-single-item", "G-nonadjacent", "G-nonadjacent-item", "internal", "lost-update"] {
            assert!(si.contains(a), "SI prohibits {a}");
        }
        assert!(!si.contains("G2-item"));
    }

    #[test]
    fn table_b_friendly_boundary_per_anomaly() {
        assert_eq!(TABLE_B.len(), 47);
        for &(anomaly, not, also_not) in TABLE_B {
            let (got_not, got_also) = friendly_boundary(&[anomaly]);
            assert_eq!(got_not, set(not), ":not of {anomaly}");
            assert_eq!(got_also, set(also_not), ":also-not of {anomaly}");
        }
    }

    #[test]
    fn table_c_canonical_model_graph() {
        let lat = lattice();
        let mut expected: BTreeSet<(&str, &str)> = BTreeSet::new();
        for &(from, tos) in TABLE_C {
            for &to in tos {
                expected.insert((from, to));
            }
        }
        let edges = canonical_model_graph();
        let got: BTreeSet<(&str, &str)> = edges.iter().copied().collect();
        assert_eq!(got, expected);
        // No duplicate edges survive canonicalisation.
        assert_eq!(edges.len(), expected.len());
        // And the precomputed closures agree with it: each model's closure
        // is exactly what a search along Table C reaches.
        for (i, &m) in lat.models.iter().enumerate() {
            let mut reach: BTreeSet<&str> = BTreeSet::from([m]);
            let mut frontier = vec![m];
            while let Some(v) = frontier.pop() {
                for &(from, tos) in TABLE_C {
                    if from == v {
                        for &to in tos {
                            if reach.insert(to) {
                                frontier.push(to);
                            }
                        }
                    }
                }
            }
            let got: BTreeSet<&str> = lat.model_names(lat.model_implies[i]).collect();
            assert_eq!(got, reach, "closure of {m}");
        }
    }

    // ---- Spec examples ----

    #[test]
    fn read_committed_prohibited_set() {
        // §3.4 and consistency_model_test.clj anomalies-prohibited-by-test.
        assert_eq!(
            anomalies_prohibited_by(&["read-committed"]),
            set(&[
                "dirty-update",
                "G1a",
                "G1b",
                "G1c",
                "G1",
                "G0",
                "PL-1-cycle-exists",
                "PL-2-cycle-exists",
                "cyclic-versions",
                "duplicate-elements",
                "incompatible-order",
                "future-read",
            ])
        );
        let rc = anomalies_prohibited_by(&["read-committed"]);
        assert!(!rc.contains("internal") && !rc.contains("lost-update"));
    }

    #[test]
    fn g1c_boundary_example() {
        // §4.1 full example.
        let (not, also_not) = friendly_boundary(&["G1c"]);
        assert_eq!(not, set(&["read-committed"]));
        assert_eq!(
            also_not,
            set(&[
                "causal-cerone",
                "consistent-view",
                "cursor-stability",
                "forward-consistent-view",
                "monotonic-atomic-view",
                "monotonic-snapshot-read",
                "monotonic-view",
                "parallel-snapshot-isolation",
                "prefix",
                "read-atomic",
                "repeatable-read",
                "serializable",
                "snapshot-isolation",
                "strong-read-committed",
                "strong-serializable",
                "strong-session-read-committed",
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
                "strong-snapshot-isolation",
                "update-atomic",
                "update-serializable",
            ])
        );
    }

    #[test]
    fn empty_and_unknown_boundaries() {
        // §4.1: empty-transaction-graph proscribes nothing.
        assert_eq!(friendly_boundary(&["empty-transaction-graph"]), (BTreeSet::new(), BTreeSet::new()));
        assert_eq!(friendly_boundary(&["G1b", "G-single-item"]).0, set(&["read-committed"]));
    }

    #[test]
    fn cycle_search_order_matches_spec_and_depths() {
        // §2.4, verbatim.
        let spec = [
            "G-single-item",
            "G0",
            "G-nonadjacent-item",
            "G-single-item-process",
            "G1c",
            "G-nonadjacent-item-process",
            "G-single",
            "G-single-item-realtime",
            "G2-item",
            "G-nonadjacent",
            "G-nonadjacent-item-realtime",
            "G2",
            "G0-process",
            "G1c-process",
            "G-single-process",
            "G2-item-process",
            "G-nonadjacent-process",
            "G2-process",
            "G0-realtime",
            "G1c-realtime",
            "G-single-realtime",
            "G2-item-realtime",
            "G-nonadjacent-realtime",
            "G2-realtime",
        ];
        assert_eq!(CYCLE_SEARCH_ORDER, &spec[..]);
        // Recomputed from the tables: all-anomalies restricted to cycle types.
        let cycle_types = sset(CYCLE_SEARCH_ORDER);
        let derived: Vec<&str> = all_anomalies().iter().copied().filter(|a| cycle_types.contains(a)).collect();
        assert_eq!(derived, CYCLE_SEARCH_ORDER);
        // And sorting by anomaly_depth_compare reproduces it.
        let mut sorted = CYCLE_SEARCH_ORDER.to_vec();
        sorted.sort();
        sorted.sort_by(|a, b| anomaly_depth_compare(a, b));
        assert_eq!(sorted, CYCLE_SEARCH_ORDER);
        // The cycle types are exactly the 8 base types × {"", -process, -realtime}.
        let base = ["G0", "G1c", "G-single-item", "G-single", "G-nonadjacent-item", "G-nonadjacent", "G2-item", "G2"];
        let mut all = BTreeSet::new();
        for b in base {
            for suffix in ["", "-process", "-realtime"] {
                all.insert(format!("{b}{suffix}"));
            }
        }
        assert_eq!(all, set(CYCLE_SEARCH_ORDER));
    }

    #[test]
    fn cycle_exists_models_match_spec() {
        // §5.6 order.
        assert_eq!(
            CYCLE_EXISTS_MODELS,
            &[
                "PL-1",
                "PL-2",
                "PL-SI",
                "PL-2.99",
                "PL-3",
                "strong-session-PL-1",
                "strong-session-PL-2",
                "strong-session-snapshot-isolation",
                "strong-session-serializable",
                "strong-PL-1",
                "strong-PL-2",
                "strong-snapshot-isolation",
                "PL-SS",
            ]
        );
        assert_eq!(CYCLE_EXISTS_MODELS.len(), CYCLE_EXISTS_ANOMALIES.len());
        for (&m, &t) in CYCLE_EXISTS_MODELS.iter().zip(CYCLE_EXISTS_ANOMALIES) {
            assert_eq!(canonical_model_name(m), Some(m), "{m} is canonical");
            assert_eq!(t, format!("{m}-cycle-exists"));
            assert_eq!(cycle_exists_anomaly(m), Some(t));
            assert!(directly_proscribed_anomalies(m).contains(t), "{m} proscribes {t}");
            // The :not of a cycle-exists anomaly is its own model.
            assert_eq!(friendly_boundary(&[t]).0, set(&[friendly_model_name(m)]), "{t}");
        }
        assert_eq!(cycle_exists_anomaly("serializable"), None);
    }

    #[test]
    fn canonical_and_friendly_names() {
        // §3.1 aliases.
        let aliases = [
            ("consistent-view", "PL-2+"),
            ("conflict-serializable", "PL-3"),
            ("cursor-stability", "PL-CS"),
            ("forward-consistent-view", "PL-FCV"),
            ("monotonic-snapshot-read", "PL-MSR"),
            ("monotonic-view", "PL-2L"),
            ("read-committed", "PL-2"),
            ("read-uncommitted", "PL-1"),
            ("repeatable-read", "PL-2.99"),
            ("serializable", "PL-3"),
            ("snapshot-isolation", "PL-SI"),
            ("strict-serializable", "PL-SS"),
            ("strong-serializable", "PL-SS"),
            ("update-serializable", "PL-3U"),
            ("strong-session-read-uncommitted", "strong-session-PL-1"),
            ("strong-session-read-committed", "strong-session-PL-2"),
            ("strong-read-uncommitted", "strong-PL-1"),
            ("strong-read-committed", "strong-PL-2"),
        ];
        for (alias, canonical) in aliases {
            assert_eq!(canonical_model_name(alias), Some(canonical), "{alias}");
            assert_eq!(canonical_model_name(canonical), Some(canonical));
        }
        assert_eq!(canonical_model_name("read-atomic"), Some("read-atomic"));
        assert_eq!(canonical_model_name("1SR"), Some("1SR"));
        assert_eq!(canonical_model_name("stricct-snappshot-isolation"), None);
        assert_eq!(canonical_model_name("G1c"), None);

        assert_eq!(friendly_model_name("PL-SS"), "strong-serializable");
        assert_eq!(friendly_model_name("PL-3"), "serializable");
        assert_eq!(friendly_model_name("PL-SI"), "snapshot-isolation");
        assert_eq!(friendly_model_name("PL-2"), "read-committed");
        assert_eq!(friendly_model_name("PL-2.99"), "repeatable-read");
        assert_eq!(friendly_model_name("strong-PL-2"), "strong-read-committed");
        // Non-canonical names pass through unchanged, as in Elle.
        assert_eq!(friendly_model_name("strict-serializable"), "strict-serializable");
        assert_eq!(friendly_model_name("read-atomic"), "read-atomic");
        assert_eq!(friendly_model_name("nonsense"), "nonsense");
        // Friendly names round-trip for every canonical model with an alias,
        // and every alias's canonical maps back to some alias of it.
        for &(canonical, friendly) in FRIENDLY_MODEL_NAMES {
            assert_eq!(canonical_model_name(friendly), Some(canonical));
        }
        for &(_, canonical) in CANONICAL_MODEL_NAMES {
            assert_ne!(friendly_model_name(canonical), canonical);
        }
    }

    #[test]
    fn all_model_names_and_validation() {
        let names = all_model_names();
        assert_eq!(names.len(), 54);
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, names, "sorted and distinct");
        for n in [
            "1SR",
            "PL-1",
            "PL-SS",
            "strict-serializable",
            "read-your-writes",
            "view-serializable",
            "writes-follow-reads",
            "update-atomic",
        ] {
            assert!(names.contains(&n), "{n}");
            assert!(is_known_model(n));
        }
        assert!(!names.contains(&"ROLA"), "renamed to update-atomic");
        assert_eq!(names[0], "1SR");
        assert!(validate_models(&["serializable", "PL-SI"]).is_ok());
        let err = validate_models(&["serializable", "stricct-snappshot-isolation"]).unwrap_err();
        assert_eq!(err.unknown, vec!["stricct-snappshot-isolation".to_string()]);
        let msg = err.to_string();
        assert!(msg
            .starts_with("Unknown consistency model (:stricct-snappshot-isolation); known models are:\n#{:1SR :PL-1 "));
        assert!(msg.ends_with(":writes-follow-reads}"));
    }

    #[test]
    #[should_panic(expected = "Unknown consistency model")]
    fn anomalies_prohibited_by_rejects_unknown_models() {
        // consistency_model_test.clj "unknown anomaly".
        anomalies_prohibited_by(&["stricct-snappshot-isolation"]);
    }

    #[test]
    fn anomaly_expansions() {
        assert_eq!(all_implied_anomalies(&["G-SI"]), set(&["G-SI"]));
        assert_eq!(all_implied_anomalies(&[]), BTreeSet::new());
        assert_eq!(all_anomalies_implying(&[]), BTreeSet::new());
        assert_eq!(all_anomalies_implying(&["nonsense"]), set(&["nonsense"]));
        assert_eq!(
            all_implied_anomalies(&["G0"]),
            set(&[
                "G0",
                "G1c",
                "G0-process",
                "G1c-process",
                "G0-realtime",
                "G1c-realtime",
                "G1",
                "G1-process",
                "G1-realtime",
            ])
        );
        assert_eq!(
            all_anomalies_implying(&["G1"]),
            set(&["G1", "G1a", "G1b", "G1c", "G0", "incompatible-order", "dirty-update", "future-read"])
        );
        assert_eq!(
            all_anomalies_implying(&["G2"]),
            set(&[
                "G2",
                "G2-item",
                "G-nonadjacent",
                "G-nonadjacent-item",
                "G-single",
                "G-single-item",
                "write-skew",
                "lost-update",
            ])
        );
        assert_eq!(
            all_implied_anomalies(&["lost-update"]),
            set(&[
                "lost-update",
                "write-skew",
                "G2-item",
                "G2",
                "G2-item-process",
                "G2-process",
                "G2-item-realtime",
                "G2-realtime",
            ])
        );
    }

    #[test]
    fn all_anomalies_matches_elle_test() {
        // consistency_model_test.clj all-anomalies-test.
        let expected = [
            "G-MSR",
            "G-SI",
            "G-SIb",
            "G-cursor",
            "G-monotonic",
            "G-single-item",
            "G-update",
            "G0",
            "G1b",
            "GSIa",
            "PL-1-cycle-exists",
            "PL-2-cycle-exists",
            "PL-2.99-cycle-exists",
            "PL-3-cycle-exists",
            "PL-SI-cycle-exists",
            "PL-SS-cycle-exists",
            "cyclic-versions",
            "dirty-update",
            "duplicate-elements",
            "future-read",
            "incompatible-order",
            "internal",
            "lost-update",
            "predicate-read-miss",
            "strong-PL-1-cycle-exists",
            "strong-PL-2-cycle-exists",
            "strong-session-PL-1-cycle-exists",
            "strong-session-PL-2-cycle-exists",
            "strong-session-serializable-cycle-exists",
            "strong-session-snapshot-isolation-cycle-exists",
            "strong-snapshot-isolation-cycle-exists",
            "G-nonadjacent-item",
            "G-single-item-process",
            "G1a",
            "G1c",
            "write-skew",
            "G-nonadjacent-item-process",
            "G-single",
            "G-single-item-realtime",
            "G1",
            "G2-item",
            "G-nonadjacent",
            "G-nonadjacent-item-realtime",
            "GSIb",
            "G2",
            "GSI",
            "G0-process",
            "G1c-process",
            "G-single-process",
            "G1-process",
            "G2-item-process",
            "G-nonadjacent-process",
            "G2-process",
            "G0-realtime",
            "G1c-realtime",
            "G-single-realtime",
            "G1-realtime",
            "G2-item-realtime",
            "G-nonadjacent-realtime",
            "G2-realtime",
        ];
        assert_eq!(all_anomalies(), &expected[..]);
        assert_eq!(anomaly_depth("G0"), Some(0));
        assert_eq!(anomaly_depth("G0-process"), Some(5));
        assert_eq!(anomaly_depth("G2-realtime"), Some(14));
        assert_eq!(anomaly_depth("nonsense"), None);
        // Unknown names sort first, as nil does in Clojure.
        assert_eq!(anomaly_depth_compare("zzz", "G0"), Ordering::Less);
        assert_eq!(anomaly_depth_compare("G0", "G0"), Ordering::Equal);
        assert_eq!(anomaly_depth_compare("G1c", "G-single-item"), Ordering::Greater);
    }

    // ---- consistency_model_test.clj ----

    fn friendly_set(models: BTreeSet<&str>) -> BTreeSet<String> {
        models.into_iter().map(|m| friendly_model_name(m).to_string()).collect()
    }

    #[test]
    fn elle_weakest_models() {
        let s = |ms: &[&str]| friendly_set(weakest_models(ms));
        assert_eq!(s(&[]), set(&[]));
        assert_eq!(s(&["serializable", "strict-serializable"]), set(&["serializable"]));
        assert_eq!(
            s(&["repeatable-read", "read-committed", "sequential", "read-your-writes"]),
            set(&["read-your-writes", "read-committed"])
        );
        assert_eq!(s(&["serializable", "read-atomic"]), set(&["read-atomic"]));
        assert_eq!(s(&["read-atomic", "serializable"]), set(&["read-atomic"]));
        // Unknown names are kept, canonicalisation applies.
        assert_eq!(weakest_models(&["foo", "PL-3", "PL-SS"]), sset(&["foo", "PL-3"]));
    }

    #[test]
    fn elle_strongest_models() {
        let s = |ms: &[&str]| friendly_set(strongest_models(ms));
        assert_eq!(s(&[]), set(&[]));
        assert_eq!(s(&["serializable", "strong-serializable", "strict-serializable"]), set(&["strong-serializable"]));
        assert_eq!(
            s(&["repeatable-read", "read-committed", "sequential", "read-your-writes"]),
            set(&["repeatable-read", "sequential"])
        );
        assert_eq!(s(&["serializable", "read-atomic"]), set(&["serializable"]));
        assert_eq!(s(&["read-atomic", "serializable"]), set(&["serializable"]));
    }

    #[test]
    fn elle_anomaly_to_impossible_models() {
        let s = |anoms: &[&str]| friendly_set(anomalies_to_impossible_models(anoms));
        assert_eq!(
            s(&["G-single"]),
            set(&[
                "consistent-view",
                "forward-consistent-view",
                "strong-serializable",
                "serializable",
                "snapshot-isolation",
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
                "strong-snapshot-isolation",
                "update-serializable",
            ])
        );
        assert_eq!(
            s(&["G-SI"]),
            set(&[
                "snapshot-isolation",
                "serializable",
                "strong-serializable",
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
                "strong-snapshot-isolation",
            ])
        );
        assert_eq!(
            s(&["dirty-update"]),
            set(&[
                "read-committed",
                "monotonic-atomic-view",
                "snapshot-isolation",
                "repeatable-read",
                "update-atomic",
                "serializable",
                "strong-serializable",
                "update-serializable",
                "cursor-stability",
                "forward-consistent-view",
                "consistent-view",
                "monotonic-view",
                "monotonic-snapshot-read",
                "causal-cerone",
                "parallel-snapshot-isolation",
                "prefix",
                "read-atomic",
                "strong-session-read-committed",
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
                "strong-read-committed",
                "strong-snapshot-isolation",
            ])
        );
        assert_eq!(
            s(&["internal"]),
            set(&[
                "causal-cerone",
                "parallel-snapshot-isolation",
                "prefix",
                "read-atomic",
                "update-atomic",
                "serializable",
                "snapshot-isolation",
                "strong-serializable",
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
                "strong-snapshot-isolation",
            ])
        );
        assert_eq!(anomalies_to_impossible_models(&[]), BTreeSet::new());
        assert_eq!(anomalies_to_impossible_models(&["nonsense"]), BTreeSet::new());
    }

    #[test]
    fn elle_friendly_boundary() {
        let e: BTreeSet<String> = BTreeSet::new();
        assert_eq!(friendly_boundary(&[]), (e.clone(), e.clone()));
        assert_eq!(
            friendly_boundary(&["cyclic-versions"]),
            (
                set(&["read-uncommitted"]),
                set(&[
                    "read-committed",
                    "snapshot-isolation",
                    "causal-cerone",
                    "consistent-view",
                    "cursor-stability",
                    "forward-consistent-view",
                    "monotonic-atomic-view",
                    "monotonic-snapshot-read",
                    "monotonic-view",
                    "parallel-snapshot-isolation",
                    "prefix",
                    "read-atomic",
                    "repeatable-read",
                    "update-atomic",
                    "serializable",
                    "strong-read-committed",
                    "strong-read-uncommitted",
                    "strong-serializable",
                    "strong-session-read-committed",
                    "strong-session-read-uncommitted",
                    "strong-session-serializable",
                    "strong-session-snapshot-isolation",
                    "strong-snapshot-isolation",
                    "update-serializable",
                ])
            )
        );
        let internal_also = set(&[
            "causal-cerone",
            "parallel-snapshot-isolation",
            "prefix",
            "update-atomic",
            "serializable",
            "snapshot-isolation",
            "strong-serializable",
            "strong-session-serializable",
            "strong-session-snapshot-isolation",
            "strong-snapshot-isolation",
        ]);
        assert_eq!(friendly_boundary(&["internal"]), (set(&["read-atomic"]), internal_also.clone()));
        assert_eq!(
            friendly_boundary(&["G1a"]),
            (
                set(&["read-committed"]),
                set(&[
                    "read-atomic",
                    "update-atomic",
                    "causal-cerone",
                    "consistent-view",
                    "cursor-stability",
                    "forward-consistent-view",
                    "monotonic-atomic-view",
                    "monotonic-snapshot-read",
                    "monotonic-view",
                    "parallel-snapshot-isolation",
                    "prefix",
                    "repeatable-read",
                    "serializable",
                    "snapshot-isolation",
                    "strong-read-committed",
                    "strong-snapshot-isolation",
                    "strong-serializable",
                    "strong-session-read-committed",
                    "strong-session-serializable",
                    "strong-session-snapshot-isolation",
                    "update-serializable",
                ])
            )
        );
        assert_eq!(
            friendly_boundary(&["G-single"]),
            (
                set(&["consistent-view"]),
                set(&[
                    "snapshot-isolation",
                    "serializable",
                    "strong-serializable",
                    "strong-session-snapshot-isolation",
                    "strong-snapshot-isolation",
                    "strong-session-serializable",
                    "forward-consistent-view",
                    "update-serializable",
                ])
            )
        );
        assert_eq!(friendly_boundary(&["G2", "internal"]), (set(&["read-atomic"]), internal_also));
        assert_eq!(friendly_boundary(&["lost-update"]).0, set(&["update-atomic", "cursor-stability"]));
        assert_eq!(
            friendly_boundary(&["G-single-realtime"]),
            (set(&["strong-snapshot-isolation"]), set(&["strong-serializable"]))
        );
    }

    #[test]
    fn elle_all_impossible_models() {
        assert_eq!(
            all_impossible_models(&["strong-session-serializable"]),
            sset(&["strong-session-serializable", "PL-SS"])
        );
        // Friendly names (as Elle passes :not values) are canonicalised.
        assert_eq!(all_impossible_models(&["serializable"]), sset(&["PL-3", "PL-SS", "strong-session-serializable"]));
        assert_eq!(all_impossible_models(&[]), BTreeSet::new());
    }

    #[test]
    fn elle_all_implied_models() {
        assert_eq!(all_implied_models(&["read-committed"]), sset(&["PL-2", "PL-1"]));
        let ser = all_implied_models(&["serializable"]);
        assert!(ser.contains("PL-SI") && ser.contains("PL-2.99") && ser.contains("read-atomic"));
        assert!(!ser.contains("PL-SS") && !ser.contains("linearizable"));
    }

    // ---- txn helpers ----

    #[test]
    fn prohibited_and_reportable_types() {
        // §3.5: absent key => strict-serializable; Some(&[]) => no models.
        assert_eq!(prohibited_anomaly_types(None, &[]), anomalies_prohibited_by(&["strict-serializable"]));
        assert_eq!(prohibited_anomaly_types(Some(&[]), &[]), BTreeSet::new());
        assert_eq!(prohibited_anomaly_types(Some(&[]), &["G2"]), all_anomalies_implying(&["G2"]));
        let r = reportable_anomaly_types(Some(&[]), &["G1"]);
        assert!(r.contains("empty-transaction-graph") && r.contains("cycle-search-timeout"));
        assert!(r.contains("G1a") && r.contains("dirty-update") && !r.contains("G2"));
        let p = prohibited_anomaly_types(Some(&["serializable"]), &["G0-process"]);
        assert!(p.contains("G0-process") && p.contains("G2") && !p.contains("G1c-process"));
    }

    #[test]
    fn impossible_cycle_anomalies_pruning() {
        // No cycle-exists SCC at all: every cycle type is impossible.
        assert_eq!(impossible_cycle_anomalies(&[]), sset(CYCLE_SEARCH_ORDER));
        // Only serializability (and stronger) fails: G2-style cycles remain
        // possible, everything else is ruled out.
        let got = impossible_cycle_anomalies(&["serializable"]);
        let possible = sset(&["G2", "G2-process", "G2-realtime", "G2-item-process", "G2-item-realtime"]);
        let expected: BTreeSet<&str> = sset(CYCLE_SEARCH_ORDER).difference(&possible).copied().collect();
        assert_eq!(got, expected);
        assert_eq!(got.len(), 19);
        // PL-1 fails: nothing can be ruled out.
        assert_eq!(impossible_cycle_anomalies(&["read-uncommitted"]), BTreeSet::new());
    }

    #[test]
    fn redundant_cycle_exists() {
        let r = redundant_cycle_exists_anomalies(&["G1c", "PL-2-cycle-exists", "PL-1-cycle-exists"]);
        assert!(r.contains("PL-2-cycle-exists"));
        assert!(!r.contains("PL-1-cycle-exists"));
        assert_eq!(r.len(), 10);
        for t in ["strong-session-PL-1-cycle-exists", "strong-PL-1-cycle-exists"] {
            assert!(!r.contains(t), "{t}");
        }
        // Cycle-exists anomalies never make each other redundant.
        assert_eq!(redundant_cycle_exists_anomalies(&["PL-1-cycle-exists", "PL-SS-cycle-exists"]), BTreeSet::new());
        // G2-item-realtime (§4.1 example) rules out only PL-SS.
        assert_eq!(
            redundant_cycle_exists_anomalies(&["G2-item-realtime", "strong-snapshot-isolation-cycle-exists"]),
            sset(&["PL-SS-cycle-exists"])
        );
    }

    // ---- naive reference: plain searches over the raw tables ----

    /// Reachability over raw `(from, to)` pairs (both directions), with a
    /// vertex mapping applied first: the direct reading of Elle's code.
    fn naive_reach(
        pairs: &[(&'static str, &'static str)],
        starts: &[&'static str],
        forward: bool,
        map: fn(&'static str) -> &'static str,
    ) -> BTreeSet<&'static str> {
        let mut seen: BTreeSet<&'static str> = starts.iter().copied().collect();
        let mut stack: Vec<&'static str> = starts.to_vec();
        while let Some(v) = stack.pop() {
            for &(a, b) in pairs {
                let (a, b) = (map(a), map(b));
                let (x, y) = if forward { (a, b) } else { (b, a) };
                if x == v && seen.insert(y) {
                    stack.push(y);
                }
            }
        }
        seen
    }

    fn id(s: &'static str) -> &'static str {
        s
    }

    fn naive_prohibited(model: &'static str) -> BTreeSet<String> {
        let implied = naive_reach(MODEL_IMPLICATIONS, &[canonical_static(model)], true, canonical_static);
        let direct: Vec<&'static str> = DIRECT_PROSCRIBED_ANOMALIES
            .iter()
            .filter(|(m, _)| implied.contains(canonical_static(m)))
            .flat_map(|(_, anomalies)| anomalies.iter().copied())
            .collect();
        naive_reach(ANOMALY_IMPLICATIONS, &direct, false, id).into_iter().map(str::to_string).collect()
    }

    fn naive_impossible(anomaly: &'static str) -> BTreeSet<&'static str> {
        let implied = naive_reach(ANOMALY_IMPLICATIONS, &[anomaly], true, id);
        let direct: Vec<&'static str> = DIRECT_PROSCRIBED_ANOMALIES
            .iter()
            .filter(|(_, anomalies)| anomalies.iter().any(|a| implied.contains(a)))
            .map(|&(m, _)| canonical_static(m))
            .collect();
        naive_reach(MODEL_IMPLICATIONS, &direct, false, canonical_static)
    }

    #[test]
    fn closures_agree_with_naive_search_everywhere() {
        for &m in &all_model_names() {
            assert_eq!(anomalies_prohibited_by(&[m]), naive_prohibited(m), "{m}");
            let c = canonical_static(m);
            assert_eq!(all_implied_models(&[m]), naive_reach(MODEL_IMPLICATIONS, &[c], true, canonical_static), "{m}");
            assert_eq!(
                all_impossible_models(&[m]),
                naive_reach(MODEL_IMPLICATIONS, &[c], false, canonical_static),
                "{m}"
            );
        }
        for &a in all_anomalies() {
            assert_eq!(anomalies_to_impossible_models(&[a]), naive_impossible(a), "{a}");
            let strings = |s: BTreeSet<&str>| s.into_iter().map(str::to_string).collect::<BTreeSet<_>>();
            assert_eq!(all_implied_anomalies(&[a]), strings(naive_reach(ANOMALY_IMPLICATIONS, &[a], true, id)), "{a}");
            assert_eq!(
                all_anomalies_implying(&[a]),
                strings(naive_reach(ANOMALY_IMPLICATIONS, &[a], false, id)),
                "{a}"
            );
            // :not = impossible models implying no other impossible model.
            let impossible = naive_impossible(a);
            let not: BTreeSet<&str> = impossible
                .iter()
                .copied()
                .filter(|&m| {
                    naive_reach(MODEL_IMPLICATIONS, &[m], true, canonical_static)
                        .iter()
                        .all(|r| *r == m || !impossible.contains(r))
                })
                .collect();
            let also: BTreeSet<&str> = impossible.difference(&not).copied().collect();
            assert_eq!(boundary(&[a]), (not, also), "{a}");
        }
        // Unions: sets of inputs behave as unions of singletons.
        let (n, al) = boundary(&["G1a", "G2-item-process", "internal"]);
        assert_eq!(n, sset(&["PL-2"]));
        assert!(al.contains("strong-session-serializable") && al.contains("read-atomic"));
        assert_eq!(
            anomalies_prohibited_by(&["read-atomic", "PL-CS"]),
            &naive_prohibited("read-atomic") | &naive_prohibited("PL-CS")
        );
    }

    // ---- table hygiene ----

    #[test]
    fn tables_are_consistent() {
        // Every model mentioned by the tables is known.
        for &(a, b) in MODEL_IMPLICATIONS {
            assert!(is_known_model(a) && is_known_model(b));
        }
        for &(m, anomalies) in DIRECT_PROSCRIBED_ANOMALIES {
            assert!(is_known_model(m), "{m}");
            assert!(!anomalies.is_empty());
        }
        // Every emitted anomaly is placed in the lattice, except the unknown
        // types, which nothing proscribes.
        for a in EMITTED {
            if UNKNOWN_ANOMALY_TYPES.contains(a) {
                assert_eq!(anomaly_depth(a), None);
                assert!(anomalies_to_impossible_models(&[a]).is_empty());
            } else {
                assert!(anomaly_depth(a).is_some(), "{a}");
                assert!(!anomalies_to_impossible_models(&[a]).is_empty(), "{a}");
            }
        }
        // PL-3 gets anomalies from both its `PL-3` and `serializable` keys.
        assert_eq!(
            directly_proscribed_anomalies("serializable"),
            sset(&["G1", "G2", "predicate-read-miss", "PL-3-cycle-exists", "internal"])
        );
        assert_eq!(directly_proscribed_anomalies("strict-serializable"), directly_proscribed_anomalies("PL-SS"));
        assert!(directly_proscribed_anomalies("linearizable").is_empty());
        // Anomaly and model names are disjoint.
        for a in all_anomalies() {
            assert!(!is_known_model(a), "{a}");
        }
        assert_eq!(FRIENDLY_MODEL_NAMES.len(), 16);
    }
}
