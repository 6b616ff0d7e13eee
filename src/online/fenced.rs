//! Collecting old transactions while following a register history with
//! fence transactions, checked at a session level (strong session
//! serializability, strong session snapshot isolation, Cerone's causal
//! consistency): memory that does not grow with the run.
//!
//! ## Fences order the old before the new
//! A fence (Cobra's, `isolde gen --fences`, `isolde record --fences`) is a
//! read-modify-write of the reserved key `:isolde/fence`. Each fence reads
//! the value the previous one wrote, so the fences form one chain by
//! reads-from, and a fence's *position* is one more than that of the fence
//! it read. For a transaction `T` of a client, `prev(T)` is the position of
//! the client's last fence before `T` and `next(T)` that of its first fence
//! after. When `next(T) ≤ prev(U)`, `T ⇝ U` by session order and reads-from
//! (`T`, its client's next fence, the chain, `U`'s client's fence before
//! `U`, `U`): every valid execution at a session level puts `T` first
//! (serially, in the commit order, or in causal order). Two fences with the
//! same position (the chain forked: a lost update of the fence key) end
//! collection for the run: positions no longer imply paths.
//!
//! ## Read fences
//! Cobra's clients also run *read fences*: a client that reads a newer
//! epoch than its own adopts it without writing. A `:ok` transaction whose
//! micro-ops all read the fence key, the value of the write fence at
//! position `p`, is a read fence at `p`: for its client's later
//! transactions `prev = p` (reads-from), for its earlier ones
//! `next = p + 1`. The second half is an anti-dependency: the write fence
//! `p + 1` read `p`'s value and overwrote it, so the read fence `→rw` it.
//! Under serializability every serial order then puts the read fence, and
//! so what precedes it in its session, before fence `p + 1`. Under
//! snapshot isolation the read fence started before `p + 1` committed (its
//! snapshot misses it), so a transaction before it in its session committed
//! before `p + 1` did, and every transaction after a later fence started
//! after that (session order and reads-from are commit-before-start): it
//! sees the earlier one. At causal-cerone an anti-dependency orders nothing,
//! so there a read fence keeps only the first half
//! ([`Collector::with_read_fences`]): reads-from and session order are
//! causal order, so its client's later transactions follow the write
//! fence at `p`, but nothing orders its earlier ones before `p + 1` (their
//! `next` comes from the client's next write fence). Before (2026-11-27),
//! a read fence was an ordinary transaction there, and on CobraLogs
//! `chengRM`, whose clients mostly run read fences, `A` stayed 0 and
//! nothing was collected. Two read fences at the same `p` do
//! not fork the chain; only write fences must not share a position. A
//! path "by fences" may thus hold an anti-dependency; what rests on it (a
//! collected version ordered before the last one, a later read of it
//! reported) is forbidden at both levels all the same.
//!
//! Let `A` be the least, over live clients, of the position of their last
//! fence. Every transaction still open, and every one yet to come, is
//! after its client's last fence, so `T` with `next(T) ≤ A` precedes all of
//! them. Such a `T` is *frozen*. A client not seen yet has no fence: when
//! the clients are known from the start (Cobra's logs,
//! [`Collector::with_clients`]), one that has shown nothing keeps `A` at 0. A
//! client that has run no fence yet follows nothing collected: a
//! transaction of it may be ordered before every collected one, so (until
//! its client's first fence) it is *unordered*
//! ([`Collector::unordered_by_fences`]): a read of a collected overwritten
//! version by it is not reported (the run says it cannot tell, `unknown`),
//! and it is flagged on the collected keys it touches, so that no anomaly
//! resting on it following the collected ones is reported. Before
//! (2026-12-08) such a read was reported as `G-single-item-process`, an
//! anomaly a valid history need not have (a new client's stale read of an
//! old version, which the batch check accepts). A client new since the
//! first collecting round does not hold `A` until its first fence (the
//! first round's clients do): Jepsen gives a crashed client's successor a
//! new process, which has no fence for its first transactions, and a
//! stream with 2% `:info` used to collect almost nothing. There is no
//! clean cut (every client has
//! transactions around each position), so which frozen transactions may
//! go is decided transaction by transaction.
//!
//! ## Which transactions go, and what stays of them
//! The round's check returns a serial execution of its window (the
//! replay's, or the one the solver's model describes, with its unread
//! writes settled by completion: [`crate::check::CheckOptions::keep_order`],
//! `si_check::model_order`). The collected set
//! `P` is its longest prefix of frozen `:ok` transactions that read only
//! values written before them in it (`cut.rs`). `P` followed by the rest is
//! a valid execution, so **the rest, started from the state `P` leaves, is
//! valid iff the history is** in one direction: a valid rest makes the
//! history valid (the prefix, then the rest). That state is, per key, the
//! value of the member of `P` that writes it last; later reads of that *last
//! version* are checked as reads of the initial state ([`Collector::apply`]).
//!
//! The other direction needs the rest to follow `P` in *every* valid
//! execution. A staying transaction that conflicts with a member (a common
//! key, one of them writing it) follows it where the member reaches it by
//! known edges (session order and reads-from; fences are chained
//! read-modify-writes); where not, it is *flagged* on that key, and an
//! anomaly whose witness relates it on that key is set aside
//! ([`super::collect::Window::set_aside`]): the rounds that flagged it are
//! taken back into the window when they can be ([`revert`]) and the window
//! is checked again; otherwise the verdict is then not `valid`, and the
//! anomaly is not reported as such.
//!
//! Every transaction that came later follows every collected one by
//! fences, so it must read each collected key's last version or a newer
//! one. The other versions collected transactions wrote are kept per key,
//! as ranges of values (`isolde gen` and Jepsen write increasing values per
//! key, so a key keeps a few ranges), and a read of one is reported at once
//! ([`Case::CollectedWrite`]):
//!
//! * a version whose writer reaches the last writer by known edges or by
//!   fences, or reaches a transaction that read the last version, and the
//!   initial state: `T →rw` the last writer `⇝ T`, a cycle with one
//!   anti-dependency (`G-single-item-process`);
//! * a value the writer itself overwrote: an intermediate read (`G1b`);
//! * a version that only the serial execution placed before the last one
//!   (two concurrent writes nothing had read yet): another valid execution
//!   could have written it last, so the read cannot be judged without the
//!   forgotten transactions, unless the round that collected it filed a
//!   [`flip`]: a replay of its execution in which that version ends last
//!   (then the read makes it the last version), or the exact check finds
//!   such an execution of the round's members, kept for a while
//!   ([`resolve`]). Otherwise the run says so
//!   ([`Collector::broken`]) and its
//!   verdict is `invalid` or `unknown`, never `valid`. When the last version
//!   changes, the old one and these become ordered versions (the new last
//!   writer follows all of them, unless it was flagged on the key).
//!
//! This is why the rule is behind `--follow-window`: on `isolde gen`'s
//! shape about one version in 150 is collected in an assumed order, and a
//! read showing another order comes every few hundred thousand
//! transactions (flips and re-solved rounds decided all 44 on a 2M
//! stream). A read whose order depends on a transaction held beside the
//! round takes the rounds it needs back into the window ([`revert`]); one
//! that needs a round whose record is no longer kept still makes the run
//! `unknown`.
//!
//! ## Realtime in place of fences
//! Checked at strict serializability alone ([`Collector::with_realtime`]),
//! a register history needs no fences: realtime orders the old before the
//! new. A transaction's `prev` is the line of its invocation and its
//! `next` the line of its `:ok` completion (`realtime_positions`), so
//! `next(T) ≤ prev(U)` says `T` completed before `U` began, and every
//! execution at the level puts `T` first. `A` is the line of the oldest
//! open invocation (every later transaction is invoked after what was
//! read): a frozen transaction completed before every open and future one
//! began. Realtime joins the known edges ([`cut`]'s reachability, reduced
//! to each transaction's frontier of concurrent predecessors), so a
//! staying transaction invoked after a member completed is not flagged,
//! and a collected version whose writer completed before the last writer
//! began (or reaches it by reads-from and realtime) is ordered: a later
//! read of it is `G-single-item-realtime`. The round's execution is the
//! strict-serializable check's; one that breaks a realtime edge is
//! refused by the cut, which then collects nothing. The argument above
//! holds as it is: later transactions follow `P` (realtime), `P` is a
//! prefix of an execution that respects realtime (so no staying
//! transaction completed before a member began, and `P` then the rest is
//! an execution at the level), and staying transactions that a member
//! does not reach are flagged. An `:info` transaction never completes in
//! realtime: it pins nothing, and a member that completed after it was
//! invoked and conflicts with it flags it ([`cut`]'s `indeterminate`).
//! Flips replay with realtime among the known edges; the exact-check
//! question ([`resolve`]) is not asked, since it is posed with sessions
//! and its answer could break a realtime order.
//!
//! ## Snapshot isolation
//! A history valid at `strong-session-snapshot-isolation` need not have a
//! serial execution (a write skew, allowed there, has none). Its round then
//! collects by an *execution* at that level instead: the begin and commit
//! events of a topological order of the exact check's model, confirmed by
//! the definition (`si_check::snapshot`), with the transactions ranked by
//! their commits. A version's order is the order of its writers' commits,
//! every transaction reads versions committed before it began (so before
//! it in the ranking), and session order and reads-from put a commit
//! before the next begin, so the fences' argument holds as it is. The one
//! change: `P` ends only where no transaction is running (every member
//! committed before any later transaction began; `cut`'s `open`). There,
//! `P`'s events followed by the rest's are an execution, and the rest,
//! started from `P`'s state, is one iff the history has one, in the same
//! sense as for a serial execution. A cut where a reader of an old
//! version was still running, its writer's successor committed, would
//! leave that reader judged against a newer last version: the run would
//! say `unknown` where the history is valid (a 60k `isolde gen --level
//! snapshot-isolation` stream held every transaction before this rule,
//! and with a cut at every commit it went `unknown` at line 20,477).
//!
//! ## After an anomaly
//! A round whose window has an anomaly has no serial execution. Once the
//! run has reported one (final: nothing later can undo it), its verdict is
//! `invalid` whatever comes, and only the soundness of later reports
//! matters, not that of a later `valid`. Such rounds then collect by an
//! order of the window's *known* edges (session order and reads-from,
//! completion order among the unordered: `cut::known_order`) instead,
//! so that memory stays flat after a violation, as Aion's does. Nothing a
//! later report rests on changes: versions no known edge or fence orders
//! before the last one are assumed, and a read of one is not reported
//! (the run says so), exactly as for a serial execution's order.
//!
//! The same holds once a read contradicted an assumed order
//! ([`Collector::broken`]): the verdict can be `valid` no more, and a
//! window that the collected state's assumptions leave without a serial
//! execution would otherwise never be collected again (at
//! `causal-cerone`, a 10M `isolde gen` stream held 445k transactions by
//! 6.3M, from round 1,166 on).
//!
//! A cycle of known edges (a `G1c`) has no such order: the known order
//! ranks the cycles as units (strongly connected components, in a
//! topological order), a cycle goes whole or not at all, the edges inside
//! it are left out of the reachability that orders versions and spares
//! staying transactions their flags, and a version a transaction on it
//! wrote or overwrote is assumed, never ordered. Before (2026-11-27), a
//! cycle and everything after it by known edges (by fences: everything)
//! had no rank, so nothing was collected from a `G1c` on and, worse, the
//! transactions after it were not flagged: reads of versions collected
//! beside them were reported as `G-single-item` anomalies the history does
//! not have (`isolde gen rw-register --inject G1c`, 40k transactions).
//!
//! The values a collected transaction overwrote itself (*intermediate*
//! values: a later read of one is `G1b`) are the one part of a key's state
//! that grows with its versions; once a key's fill [`ARCHIVE_WORDS`]
//! bitmap words they are archived to the spill file and looked up there
//! only when a read of a collected version other than the last comes
//! ([`archive`]).
//!
//! A failed transaction is in no execution: all it can explain is an
//! aborted read of a value it wrote. So once nothing in the window has
//! read its values, it goes (in any round that collects) and only its
//! values stay, per key, in a bitmap ([`Dense`]); a later read of one is
//! reported at once as `G1a` ([`Case::CollectedAborted`]), and a later
//! write of one makes reads of it ambiguous (the run says so, as for a
//! repeated collected version). `:info` transactions stay (one may take
//! effect at any later point, so what conflicts with it stays too), unless
//! the execution places one and a frozen transaction read from it: it took
//! effect before that reader, so it goes like an `:ok` one
//! (`frozen_by_readers`). Transactions whose round found no serial
//! execution (an anomaly, or a window only the solver decides) stay.
//!
//! Written by hand: no crate implements online collection for isolation
//! checking.

mod archive;
mod flip;
mod record;
mod resolve;
mod revert;
mod seal;

pub use archive::ARCHIVE_WORDS;

use rustc_hash::{FxHashMap, FxHashSet};

use super::collect::Window;
use super::cut::{self, transactions, Txn};
use super::values::{Dense, Ranges};
use crate::anomaly::Case;
use crate::history::{Atom, History, KeyId, MopFn, MopValue, OpType, Value, NONE as UNPAIRED};

/// The name of the fence key (`:isolde/fence`).
pub const FENCE_KEY: &str = "isolde/fence";

/// A position no fence has: not known, or none yet.
const NO_FENCE: u32 = cut::NO_FENCE;

/// The widest run of aborted values joined into a key's ordered versions
/// ([`Collector::bridge_aborted`]).
const BRIDGE_GAP: i64 = 64;

/// Each transaction's place among the fences: `lo` orders what follows it
/// in its session (`prev`), `hi` what precedes it (`next`); equal for a
/// write fence, `hi = lo + 1` for a read fence, `NO_FENCE` for the others.
struct Fences {
    lo: Vec<u32>,
    hi: Vec<u32>,
}

/// Whether a transaction's micro-ops are reads of the fence key alone.
fn is_read_fence(mops: &[crate::history::Mop], fence: KeyId) -> bool {
    let value = mops.first().map(|m| m.value);
    !mops.is_empty() && mops.iter().all(|m| m.key == fence && m.f == MopFn::Read && Some(m.value) == value)
}

/// Realtime's positions (see "Realtime in place of fences"): each
/// transaction's `prev` is the line of its invocation (0 for a completion
/// without one: nothing precedes it) and its `next` the
/// line of its `:ok` completion (`NO_FENCE` for any other: an open, `:info`
/// or failed transaction precedes nothing in realtime). Returns `A`: the
/// line of the oldest open invocation, or `NO_FENCE - 1` when none is open
/// (every transaction still to come is invoked after the window's last
/// line).
fn realtime_positions(h: &History, txns: &mut [Txn]) -> u32 {
    let mut agree = NO_FENCE - 1;
    for t in txns.iter_mut() {
        // A completion without an invocation follows nothing in realtime.
        t.prev = if t.done == Some(t.inv) { 0 } else { h.ops[t.inv].line };
        t.next = match (t.done, t.kind) {
            (Some(d), Some(OpType::Ok)) => h.ops[d].line,
            _ => NO_FENCE,
        };
        if t.done.is_none() {
            agree = agree.min(t.prev);
        }
    }
    agree
}

/// `frozen` with the transactions of the execution (`ranks`) that reach a
/// frozen one by reads-from and session order (known edges at every level
/// that collects): one that took effect before a transaction every later
/// one follows precedes them too, so it may be collected. These are the
/// `:info` transactions a frozen one read from, and the `:ok` ones whose
/// client ran no fence after them (it crashed, and Jepsen gave its
/// successor a new process) that one read from, with what precedes them.
/// Without this, such a transaction sat in the execution forever and ended
/// every later round's prefix before it: a 50k `isolde gen
/// --info-fraction 0.02` stream collected 122 transactions before the
/// `:info` half (2026-12-07), 860 before the `:ok` half (2026-12-08).
fn frozen_by_readers(h: &History, txns: &[Txn], ranks: &[u32], mut frozen: Vec<bool>) -> Vec<bool> {
    let ranked = |t: &Txn| t.done.is_some_and(|d| ranks.get(d).is_some_and(|&r| r != u32::MAX));
    let candidate =
        |t: usize| !frozen[t] && matches!(txns[t].kind, Some(OpType::Info | OpType::Ok)) && ranked(&txns[t]);
    let mut writer: FxHashMap<(KeyId, i64), usize> = FxHashMap::default();
    for t in (0..txns.len()).filter(|&t| candidate(t)) {
        for m in h.mops_of(&h.ops[txns[t].op()]) {
            if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                writer.insert((m.key, v), t);
            }
        }
    }
    if writer.is_empty() {
        return frozen;
    }
    // Each transaction's place in its client's list (session order).
    let mut sessions: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
    let mut place = vec![0usize; txns.len()];
    for (t, txn) in txns.iter().enumerate() {
        let s = sessions.entry(txn.process).or_default();
        place[t] = s.len();
        s.push(t);
    }
    let mut stack: Vec<usize> = (0..txns.len()).filter(|&t| frozen[t]).collect();
    while let Some(t) = stack.pop() {
        let mut reached: Vec<usize> = Vec::new();
        for m in h.mops_of(&h.ops[txns[t].op()]) {
            if let (MopFn::Read, MopValue::Int(v)) = (m.f, m.value) {
                reached.extend(writer.get(&(m.key, v)).copied());
            }
        }
        for w in reached {
            if frozen[w] {
                continue;
            }
            // `w` and what precedes it in its session, back to the first
            // transaction already frozen.
            let s = &sessions[&txns[w].process];
            for &u in s[..=place[w]].iter().rev() {
                if frozen[u] {
                    break;
                }
                if matches!(txns[u].kind, Some(OpType::Info | OpType::Ok)) && ranked(&txns[u]) {
                    frozen[u] = true;
                    stack.push(u);
                }
            }
        }
    }
    frozen
}

/// Whether `h` names the fence key ([`FENCE_KEY`]).
pub fn names_fence_key(h: &History) -> bool {
    let name = Value::from(Atom::Keyword(FENCE_KEY.into()));
    h.keys.iter().any(|k| *k == name)
}

/// What stays of a key that collected transactions wrote.
#[derive(Debug)]
struct Front {
    /// The version they left last.
    value: i64,
    /// The line on which its writer completed.
    line: u32,
    /// Versions they wrote that are ordered before `value`, and the values
    /// they overwrote within one transaction (also in `intermediate`).
    stale: Ranges,
    /// Versions before `value` only in the serial execution's order.
    assumed: Ranges,
    /// Values they overwrote within one transaction (those not archived).
    intermediate: Dense,
    /// Whether some of those were archived to the spill store
    /// ([`archive`]).
    archived: bool,
    /// Whether values of collected failed transactions that lie among
    /// `stale` were archived there ([`archive`]).
    aborted_archived: bool,
    /// Whether a read of `value` was seen since it became the last version
    /// (no assumed version may flip after one: [`flip`]).
    seen: bool,
    /// Assumed versions a later read may show last ([`flip`]).
    flips: Vec<flip::Flip>,
}

/// What the collector holds between rounds.
#[derive(Default)]
pub struct Collector {
    fronts: FxHashMap<KeyId, Front>,
    /// The fence key, once a history named it.
    fence_key: Option<KeyId>,
    /// The position of the last collected fence (the fence key's `Front`).
    fence_pos: Option<u32>,
    /// Per client, the position of its last collected fence.
    last_fence: FxHashMap<i64, u32>,
    /// Clients whose last transaction ended `:info` (Jepsen never reuses a
    /// process): they hold nothing back, even once that transaction was
    /// collected.
    gone: FxHashSet<i64>,
    /// The clients of the first collecting round: each holds `A` until its
    /// first fence (a client new since follows nothing collected instead).
    original: Option<FxHashSet<i64>>,
    /// Transactions collected so far.
    pub collected: u64,
    /// Versions collected as overwritten in an assumed order.
    pub assumed: u64,
    /// Assumed orders a later read decided the other way ([`flip`]).
    pub flipped: u64,
    /// Collecting rounds so far (a flip's round).
    rounds: u32,
    /// Rounds one of whose assumed versions flipped.
    flipped_rounds: FxHashSet<u32>,
    /// Of `flipped`, those the exact check on a kept round decided
    /// ([`resolve`]).
    pub resolved: u64,
    /// The members of the last rounds, for [`resolve`].
    kept: resolve::Kept,
    /// Whether a transaction that only reads the fence key is a read fence
    /// (see "Read fences"; not at causal-cerone).
    read_fences: bool,
    /// The clients of the run, when known from the start (processes
    /// `0..n`: a directory of Cobra logs).
    clients: Option<usize>,
    /// Why the last collection stopped early, when it did.
    pub held_back: Option<String>,
    /// What holds the oldest transaction the last collection kept (the
    /// status line shows it when the window grows).
    pub holder: Option<String>,
    /// The live process whose last fence is the least (`A`), as the last
    /// round found it.
    pinned: Option<i64>,
    /// Set when a read showed a version collected in an assumed order (the
    /// run's verdict can then be `valid` no more): why.
    pub broken: Option<String>,
    /// Why collection stopped for the rest of the run.
    stopped: Option<String>,
    /// Realtime orders transactions in place of fences: the run is checked
    /// at strict serializability (see "Realtime in place of fences").
    realtime: bool,
    /// Staying transactions (by completion line) assumed to follow
    /// collected ones on these keys ([`cut`]).
    flagged: FxHashMap<u32, Vec<KeyId>>,
    /// Per key, the values collected failed transactions wrote.
    aborted: FxHashMap<KeyId, Dense>,
    /// Failed transactions collected so far.
    pub failed: u64,
    /// Where quiet keys' states go ([`seal`]).
    spill: super::spill::Spill,
    /// Lines a key stays quiet before it is sealed.
    quiet_lines: u32,
    /// Key ids below this one were looked up in the store already.
    known_keys: u32,
    /// Per key read back from the store: the line by then.
    unsealed_at: FxHashMap<KeyId, u32>,
    /// Names of keys whose sealed state could not be read back, or whose
    /// state a take-back could not restore ([`Self::lose`]).
    lost: FxHashSet<Vec<u8>>,
    /// Such keys that have no name in the store (never sealed: compound
    /// keys).
    lost_other: Vec<Value>,
    /// Keys sealed and read back so far.
    pub sealed: u64,
    pub unsealed: u64,
    /// Why sealing stopped, once a write to the store failed.
    pub spill_failed: Option<String>,
    /// Words of a key's intermediate values kept in memory before they
    /// are archived ([`archive`]; 0: [`ARCHIVE_WORDS`]).
    pub archive_words: usize,
    /// Set once the run reported an anomaly: its verdict is `invalid`
    /// whatever comes, so a round with no serial execution collects by the
    /// known edges alone (see "After an anomaly").
    pub invalid: bool,
    /// The oldest round a read judged in this round's [`Self::apply`]
    /// asked to take back ([`revert`]).
    revert_to: Option<u32>,
    /// Take-backs left to this round ([`revert::REVERTS_PER_ROUND`]).
    revert_budget: u8,
    /// The last round that collected without being kept: no take-back
    /// reaches it.
    unkept_round: u32,
    /// Take-backs so far, and the transactions they put back.
    pub reverts: u64,
    pub reverted_txns: u64,
}

impl Collector {
    /// An empty collector that seals keys quiet for
    /// [`super::collect::QUIET_LINES`] into a store in the system's
    /// temporary directory.
    pub fn new() -> Collector {
        Collector::with_spill_dir(super::collect::QUIET_LINES, None)
    }

    /// An empty collector that seals keys quiet for `quiet_lines` into a
    /// store in `dir` (the system's temporary directory when `None`).
    pub fn with_spill_dir(quiet_lines: u32, dir: Option<&std::path::Path>) -> Collector {
        Collector {
            spill: super::spill::Spill::new(dir),
            quiet_lines,
            revert_budget: revert::REVERTS_PER_ROUND,
            ..Collector::default()
        }
    }

    /// Takes transactions that only read the fence key as read fences in
    /// both directions (sound at strong session serializability and
    /// snapshot isolation alone: see "Read fences"); without, they order
    /// only their client's later transactions.
    pub fn with_read_fences(mut self, on: bool) -> Collector {
        self.read_fences = on;
        self
    }

    /// Orders transactions by realtime instead of fences (a history checked
    /// at strict serializability alone, with or without fences: see
    /// "Realtime in place of fences").
    pub fn with_realtime(mut self, on: bool) -> Collector {
        self.realtime = on;
        self
    }

    /// Whether realtime orders the run's transactions (the status line's
    /// rule).
    pub fn realtime(&self) -> bool {
        self.realtime
    }

    /// Knows the run's clients from the start: processes `0..n`; one that
    /// has shown no transaction yet holds collection back.
    pub fn with_clients(mut self, n: Option<usize>) -> Collector {
        self.clients = n;
        self
    }

    /// The history to check for `h`: reads of each collected key's last
    /// version checked as reads of the initial state, and the reads of
    /// other collected versions moved aside and reported.
    pub fn apply(&mut self, h: &History) -> Window {
        self.unseal(h);
        if self.realtime {
            self.unordered_completions(h);
        }
        let mut w = Window::new(h.clone());
        if !self.flagged.is_empty() {
            for (i, op) in h.ops.iter().enumerate().filter(|(_, o)| !o.is_invoke()) {
                if let Some(keys) = self.flagged.get(&op.line) {
                    w.flag(i as u32, keys.clone());
                }
            }
        }
        if self.fronts.is_empty() && self.aborted.is_empty() && self.lost.is_empty() && self.lost_other.is_empty() {
            return w;
        }
        let aside = w.aside_key();
        let unordered = self.unordered_by_fences(h);
        for (i, op) in h.ops.iter().enumerate() {
            if op.is_invoke() {
                continue;
            }
            let unordered = unordered.contains(&(i as u32));
            if unordered {
                self.flag_unordered(&mut w, h, i);
            }
            for mi in op.mop_start..op.mop_start + op.mop_len {
                let m = w.check.mops[mi as usize];
                if self.lost(h, m.key) || self.aborted_value(&mut w, h, i as u32, m) {
                    // A read of the initial state of a key nothing writes:
                    // it implies nothing. (A write moved there as a write
                    // of nil would order its writer after every such read.)
                    w.check.mops[mi as usize] =
                        crate::history::Mop { f: MopFn::Read, key: aside, value: MopValue::Nil };
                    continue;
                }
                let Some(f) = self.fronts.get_mut(&m.key) else { continue };
                let read = match (m.f, m.value) {
                    (MopFn::Read, MopValue::Int(v)) => Some(v),
                    (MopFn::Read, MopValue::Nil) => None,
                    (MopFn::Write, MopValue::Int(v)) => {
                        let again = v == f.value || f.stale.contains(v) || f.assumed.contains(v);
                        if again && self.broken.is_none() {
                            self.broken = Some(format!(
                                "the write on line {} repeats a value of key {} that a transaction --follow \
                                 collected wrote; reads of it cannot be told apart: check the history in one piece",
                                op.line,
                                h.key(m.key)
                            ));
                        }
                        continue;
                    }
                    _ => continue,
                };
                if read == Some(f.value) {
                    f.seen = true;
                    w.check.mops[mi as usize].value = MopValue::Nil;
                    w.rewrite(m.key, f.value);
                    continue;
                }
                let mut intermediate = read.is_some_and(|v| f.intermediate.contains(v));
                let stale = read.is_none_or(|v| f.stale.contains(v));
                let assumed = read.is_some_and(|v| f.assumed.contains(v));
                if !(intermediate || stale || assumed) {
                    continue;
                }
                let (frontier, line, archived, aborted_archived) = (f.value, f.line, f.archived, f.aborted_archived);
                let ok = op.op_type == OpType::Ok;
                // A failed transaction's value archived among the ordered
                // versions: an aborted read, as if it were in memory.
                if let (Some(v), true, true) = (read, aborted_archived, stale) {
                    let found = self.archived_aborted(&h.keys[m.key.0 as usize], v);
                    if let Err(e) = &found {
                        self.broken.get_or_insert_with(|| {
                            format!(
                                "the read on line {} of key {} could not be judged: its archived values of \
                                 failed transactions could not be read back from the spill file ({e})",
                                op.line,
                                h.key(m.key)
                            )
                        });
                    }
                    if found.as_ref().map_or(true, |&f| f) {
                        if ok && found.is_ok() {
                            w.cases.push((
                                "G1a".to_string(),
                                Case::CollectedAborted { op: i as u32, key: m.key, value: v },
                            ));
                        }
                        w.check.mops[mi as usize] = crate::history::Mop { key: aside, value: MopValue::Nil, ..m };
                        continue;
                    }
                }
                if let (Some(v), true, false) = (read, archived, intermediate) {
                    match self.archived_intermediate(&h.keys[m.key.0 as usize], v) {
                        Ok(found) => intermediate = found,
                        Err(e) => {
                            // Which anomaly it is cannot be told: not reported.
                            self.broken.get_or_insert_with(|| {
                                format!(
                                    "the read on line {} of key {} could not be judged: its archived intermediate \
                                     values could not be read back from the spill file ({e})",
                                    op.line,
                                    h.key(m.key)
                                )
                            });
                            w.check.mops[mi as usize] = crate::history::Mop { key: aside, value: MopValue::Nil, ..m };
                            continue;
                        }
                    }
                }
                // A staying transaction flagged on the key need not follow
                // the collected writers (only after an anomaly can one read
                // an overwritten version, see "After an anomaly").
                let flagged = self.flagged.get(&op.line).is_some_and(|keys| keys.binary_search(&m.key).is_ok());
                if unordered && !intermediate {
                    // Neither reported nor explained: nothing orders the
                    // reader after the collected writers.
                    if ok {
                        self.broken.get_or_insert_with(|| {
                            format!(
                                "the read on line {} shows a version of key {} that --follow collected as \
                                 overwritten, by process {}, which had run no fence since transactions were \
                                 collected (a client new since then, as after a crash): nothing orders it after \
                                 them, and whether the history explains the read is not known: check the history \
                                 in one piece",
                                op.line,
                                h.key(m.key),
                                op.process
                            )
                        });
                    }
                    w.check.mops[mi as usize] = crate::history::Mop { key: aside, value: MopValue::Nil, ..m };
                    continue;
                }
                let mut unresolved = None;
                if let (Some(v), true, false, false, true) = (read, assumed && !stale, flagged, intermediate, ok) {
                    // An assumed order the read decides the other way.
                    let why = if self.flip(h, m.key, v) { Ok(()) } else { self.resolve(h, m.key, v) };
                    match why {
                        Ok(()) => {
                            w.check.mops[mi as usize].value = MopValue::Nil;
                            w.rewrite(m.key, v);
                            continue;
                        }
                        Err(why) => unresolved = Some(why),
                    }
                }
                if ((assumed && !stale) || flagged) && !intermediate {
                    if ok && self.broken.is_none() {
                        self.unexplained(h, op.line, m, assumed, flagged, unresolved);
                    }
                } else if ok {
                    let name = match (intermediate, self.realtime) {
                        (true, _) => "G1b",
                        (false, true) => "G-single-item-realtime",
                        (false, false) => "G-single-item-process",
                    };
                    let realtime = self.realtime;
                    let case = Case::CollectedWrite {
                        op: i as u32,
                        key: m.key,
                        value: read,
                        frontier,
                        line,
                        intermediate,
                        realtime,
                    };
                    w.cases.push((name.to_string(), case));
                }
                w.check.mops[mi as usize] = crate::history::Mop { key: aside, value: MopValue::Nil, ..m };
            }
        }
        w
    }

    /// After a round's check of `h` (as [`Self::apply`] returned it):
    /// collects what the fence rule allows and returns, per op of `h`,
    /// whether it is still held. `ranks` is each op's position in a serial
    /// execution explaining `h` ([`crate::outcome::Outcome::order`]);
    /// empty when the round found none, and then nothing is collected.
    /// `full` is `h` as read, before [`Self::apply`] set reads aside: a
    /// staying transaction conflicts with a member through those reads too
    /// (a later round may judge them against another last version).
    /// `open` marks, per op, where a prefix of `ranks` may not end (an
    /// execution under snapshot isolation: see "Snapshot isolation");
    /// empty when any may. `serial`: `ranks` is a serial execution (its
    /// collected writers' assumed orders may flip: [`flip`]).
    pub fn collect(&mut self, h: &History, full: &History, ranks: &[u32], open: &[bool], serial: bool) -> Vec<bool> {
        self.holder = None;
        let keep = self.collect_round(h, full, ranks, open, serial);
        if self.holder.is_none() {
            self.holder = self.held_back.clone();
        }
        keep
    }

    /// [`Self::collect`], less what holds the window when it stops early.
    fn collect_round(&mut self, h: &History, full: &History, ranks: &[u32], open: &[bool], serial: bool) -> Vec<bool> {
        let mut keep = vec![true; h.ops.len()];
        self.held_back = None;
        self.new_round();
        if let Some(why) = &self.stopped {
            self.held_back = Some(why.clone());
            return keep;
        }
        let known_order;
        // Whether `ranks` is an execution the round's check found (not the
        // known edges' order of a run that can be valid no more).
        let execution = ranks.len() == h.ops.len() && !self.invalid;
        let (ranks, component, open, serial) = if ranks.len() == h.ops.len() {
            (ranks, &[][..], open, serial && open.is_empty() && !self.invalid)
        } else if self.invalid || self.broken.is_some() {
            known_order = cut::known_order(h, self.realtime);
            (&known_order.ranks[..], &known_order.component[..], &[][..], false)
        } else {
            self.held_back =
                Some("collection waits for a round whose window an execution at the level explains".into());
            return keep;
        };
        let mut txns = transactions(h);
        let (fences, agree) = if self.realtime {
            let agree = realtime_positions(h, &mut txns);
            (Fences { lo: vec![NO_FENCE; txns.len()], hi: Vec::new() }, agree)
        } else {
            let Some(fence) = self.fence_key(h) else {
                self.held_back = Some(format!("collection waits for fence transactions (on the key :{FENCE_KEY})"));
                return keep;
            };
            let fences = match self.fence_positions(h, &txns, fence) {
                Ok(f) => f,
                Err(why) => {
                    self.stopped = Some(why.clone());
                    self.held_back = Some(why);
                    return keep;
                }
            };
            let agree = self.sessions(h, &mut txns, &fences);
            (fences, agree)
        };
        let frozen: Vec<bool> = txns
            .iter()
            .map(|t| {
                t.kind == Some(OpType::Ok)
                    && t.next != NO_FENCE
                    && t.next <= agree
                    && t.done.is_some_and(|d| ranks[d] != u32::MAX)
            })
            .collect();
        let frozen = frozen_by_readers(h, &txns, ranks, frozen);
        let Some(cut) = cut::cut(h, full, &txns, ranks, &frozen, component, open, self.realtime) else {
            self.held_back = Some("collection waits: the round's serial execution breaks a known edge".into());
            return keep;
        };
        self.holder = Some(self.holder_of(h, &txns, cut.first_staying, &frozen, agree));
        let keeping = execution && self.broken.is_none();
        let mut before = record::Before::of(self, keeping);
        for (u, keys) in &cut.flagged {
            if let Some(d) = txns[*u].done {
                let line = h.ops[d].line;
                let e = self.flagged.entry(line).or_default();
                for &k in keys {
                    if !e.contains(&k) {
                        e.push(k);
                        before.flags_added.push((line, h.key(k).clone()));
                    }
                }
                e.sort_unstable();
            }
        }
        let (members, known) = (cut.members, cut.known);
        let cyclic = |t: usize| txns[t].done.is_some_and(|d| component.get(d).is_some_and(|&c| c != u32::MAX));
        self.rounds += 1;
        let flips = serial.then_some(full);
        self.advance(h, &txns, ranks, &members, &fences.lo, &known, &cyclic, flips, &mut before);
        self.collect_failed(h, &txns, &mut keep);
        self.bridge_aborted(h, &keep);
        for (t, _) in txns.iter().enumerate().filter(|&(t, _)| members[t]) {
            keep[txns[t].inv] = false;
            if let Some(d) = txns[t].done {
                keep[d] = false;
                if let Some(keys) = self.flagged.remove(&h.ops[d].line) {
                    before.flags_removed.push((h.ops[d].line, keys.iter().map(|&k| h.key(k).clone()).collect()));
                }
            }
        }
        // Kept only while a question could still be asked (`resolve`, not
        // at causal-cerone) or the round taken back (`revert`).
        if keeping {
            before.compact(&self.fronts);
            self.kept.keep(self.rounds, full, &txns, ranks, &members, before);
        } else if self.broken.is_some() {
            self.kept = resolve::Kept::default();
        } else if members.iter().any(|&m| m) {
            self.unkept_round = self.rounds;
        }
        keep
    }

    /// What holds the window after a round's cut: the first transaction of
    /// the execution that stays (`first`), or the oldest open one.
    fn holder_of(&self, h: &History, txns: &[Txn], first: Option<usize>, frozen: &[bool], agree: u32) -> String {
        let Some(t) = first else {
            return match txns.iter().find(|t| t.done.is_none()) {
                Some(t) => {
                    format!("held by process {}'s open transaction, invoked on line {}", t.process, h.ops[t.inv].line)
                }
                None => "held by nothing the round could collect".into(),
            };
        };
        let txn = &txns[t];
        let who = format!("held by process {}'s transaction on line {}", txn.process, h.ops[txn.op()].line);
        if txn.kind == Some(OpType::Info) {
            format!("{who}, which ended :info (it may take effect at any later point)")
        } else if frozen[t] {
            format!("{who}: the round's execution cannot end before it (it reads a later write, or runs beside one)")
        } else if self.realtime {
            match txns.iter().filter(|t| t.done.is_none()).min_by_key(|t| t.prev) {
                Some(o) => format!(
                    "{who}, which completed after process {}'s open transaction was invoked on line {}",
                    o.process, o.prev
                ),
                None => format!("{who}: the round's execution cannot end before it"),
            }
        } else if txn.next == NO_FENCE {
            format!("{who}: its process has run no fence since")
        } else {
            let laggard = self.pinned.map(|p| format!(": process {p}'s last fence is at {agree}")).unwrap_or_default();
            format!("{who}, which waits for every process to pass fence position {}{laggard}", txn.next)
        }
    }

    /// Joins the ranges of ordered versions of the keys written by the ops
    /// `keep` lets go across values of the key that collected failed
    /// transactions wrote: a read of one is a `G1a` before anything else
    /// ([`Self::apply`]), so the ranges may hold them, and without this
    /// every aborted write splits a range (a snapshot-isolation store
    /// aborts many: 570,000 ranges by 400k transactions, growing).
    fn bridge_aborted(&mut self, h: &History, keep: &[bool]) {
        let mut keys: FxHashSet<KeyId> = FxHashSet::default();
        for (op, _) in h.ops.iter().zip(keep).filter(|&(o, &k)| !k && !o.is_invoke()) {
            keys.extend(h.mops_of(op).iter().filter(|m| m.f == MopFn::Write).map(|m| m.key));
        }
        for k in keys {
            if let (Some(front), Some(aborted)) = (self.fronts.get_mut(&k), self.aborted.get(&k)) {
                front.stale.bridge(BRIDGE_GAP, |v| aborted.contains(v));
                self.archive_aborted(h, k);
            }
        }
    }

    /// Whether micro-op `m` of op `i` reads or writes a value a collected
    /// failed transaction wrote; a read by an `:ok` transaction is reported
    /// (an aborted read), a write makes reads of the value ambiguous.
    fn aborted_value(&mut self, w: &mut Window, h: &History, i: u32, m: crate::history::Mop) -> bool {
        let (MopFn::Read | MopFn::Write, MopValue::Int(v)) = (m.f, m.value) else { return false };
        if !self.aborted.get(&m.key).is_some_and(|d| d.contains(v)) {
            return false;
        }
        let op = &h.ops[i as usize];
        if m.f == MopFn::Write {
            if self.broken.is_none() {
                self.broken = Some(format!(
                    "the write on line {} repeats a value of key {} that a failed transaction --follow \
                     collected wrote; reads of it cannot be told apart: check the history in one piece",
                    op.line,
                    h.key(m.key)
                ));
            }
            return false;
        }
        if op.op_type == OpType::Ok {
            w.cases.push(("G1a".to_string(), Case::CollectedAborted { op: i, key: m.key, value: v }));
        }
        true
    }

    /// Collects the failed transactions of `h` none of whose written
    /// values a completed transaction in `h` read (those stay, so that the
    /// window's own check reports the aborted read with its writer),
    /// keeping their values per key.
    fn collect_failed(&mut self, h: &History, txns: &[Txn], keep: &mut [bool]) {
        let mut read: rustc_hash::FxHashSet<(KeyId, i64)> = rustc_hash::FxHashSet::default();
        for op in h.ops.iter().filter(|o| !o.is_invoke() && o.op_type != OpType::Fail) {
            for m in h.mops_of(op) {
                if let (MopFn::Read, MopValue::Int(v)) = (m.f, m.value) {
                    read.insert((m.key, v));
                }
            }
        }
        for txn in txns.iter().filter(|t| t.kind == Some(OpType::Fail)) {
            let Some(d) = txn.done else { continue };
            let writes = || {
                h.mops_of(&h.ops[d]).iter().filter_map(|m| match (m.f, m.value) {
                    (MopFn::Write, MopValue::Int(v)) => Some((m.key, v)),
                    _ => None,
                })
            };
            if writes().any(|kv| read.contains(&kv)) {
                continue;
            }
            for (k, v) in writes() {
                self.aborted.entry(k).or_default().insert(v);
            }
            keep[txn.inv] = false;
            keep[d] = false;
            self.flagged.remove(&h.ops[d].line);
            self.failed += 1;
            self.collected += 1;
        }
    }

    /// Realtime mode: a completion without an invocation has no realtime
    /// predecessor (the batch check gives it none), so it need not follow
    /// what was collected. The first one stops collection for the run;
    /// once something was collected, it is flagged on every key it touches
    /// (an anomaly relying on it following the collected transactions is
    /// set aside, its reads of collected versions judged as unexplained)
    /// and the run can be `valid` no more.
    fn unordered_completions(&mut self, h: &History) {
        for op in h.ops.iter().filter(|o| !o.is_invoke() && o.pair == UNPAIRED && o.op_type == OpType::Ok) {
            let why = format!(
                "line {}: a completion without an invocation, which realtime does not order after the \
                 transactions --follow collected",
                op.line
            );
            self.stopped.get_or_insert_with(|| format!("collection stopped at {why}"));
            if self.collected == 0 {
                continue;
            }
            self.broken.get_or_insert_with(|| format!("{why}: check the history in one piece"));
            let mut keys: Vec<KeyId> = h.mops_of(op).iter().map(|m| m.key).collect();
            keys.sort_unstable();
            keys.dedup();
            self.flagged.entry(op.line).or_insert(keys);
        }
    }

    /// The fence key's id in `h` (ids are stable from round to round).
    fn fence_key(&mut self, h: &History) -> Option<KeyId> {
        if self.fence_key.is_none() {
            let name = Value::from(Atom::Keyword(FENCE_KEY.into()));
            self.fence_key = h.keys.iter().position(|k| *k == name).map(|i| KeyId(i as u32));
        }
        self.fence_key
    }

    /// The completions (positions in `h`) of the transactions that follow
    /// no collected one by fences: those of a client new since the first
    /// collecting round (Jepsen's new process after a crash) before its
    /// first fence. Collected writers reach them by nothing known, so a
    /// read of an overwritten collected version by one may be valid (it
    /// may be ordered before the collected transactions): such a read is
    /// not reported. (Any other client was live and fenced at every
    /// collection, so its later transactions follow everything collected,
    /// `A` being at most its last fence; those held through a collection
    /// were flagged by the cut where no known edge ordered them.) Empty at strict
    /// serializability (realtime orders a transaction after every one
    /// that completed before it began: `unordered_completions` stops
    /// collection at one that began nowhere).
    fn unordered_by_fences(&mut self, h: &History) -> FxHashSet<u32> {
        let mut unordered = FxHashSet::default();
        if self.realtime {
            return unordered;
        }
        let txns = transactions(h);
        let lo = match self.fence_key(h).map(|f| self.fence_positions(h, &txns, f)) {
            Some(Ok(f)) => f.lo,
            _ => vec![NO_FENCE; txns.len()],
        };
        let original = |p: &i64| self.original.as_ref().is_some_and(|o| o.contains(p));
        let mut fenced: FxHashSet<i64> = FxHashSet::default();
        for (t, txn) in txns.iter().enumerate() {
            if lo[t] != NO_FENCE {
                fenced.insert(txn.process);
            } else if !fenced.contains(&txn.process)
                && !self.last_fence.contains_key(&txn.process)
                && !original(&txn.process)
            {
                if let Some(d) = txn.done {
                    unordered.insert(d as u32);
                }
            }
        }
        unordered
    }

    /// Flags the transaction completed at `i`, which follows no collected
    /// one ([`Self::unordered_by_fences`]), on every key it touches that
    /// collected transactions wrote: the window's check assumes otherwise.
    fn flag_unordered(&self, w: &mut Window, h: &History, i: usize) {
        let mut keys: Vec<KeyId> =
            h.mops_of(&h.ops[i]).iter().map(|m| m.key).filter(|k| self.fronts.contains_key(k)).collect();
        if keys.is_empty() {
            return;
        }
        keys.extend(self.flagged.get(&h.ops[i].line).into_iter().flatten());
        keys.sort_unstable();
        keys.dedup();
        w.flag(i as u32, keys);
    }

    /// Each `:ok` fence's place in the chain (`lo`, `hi`: `NO_FENCE` for a
    /// transaction that is not one, or whose read names no known fence), or
    /// why collection must stop (the chain of write fences forked).
    fn fence_positions(&self, h: &History, txns: &[Txn], fence: KeyId) -> Result<Fences, String> {
        let mut pos = vec![NO_FENCE; txns.len()];
        // (value written, transaction) and each fence's read.
        let mut writer: FxHashMap<i64, usize> = FxHashMap::default();
        let mut reads: Vec<(usize, Option<i64>)> = Vec::new();
        let mut read_only: Vec<(usize, Option<i64>)> = Vec::new();
        for (t, txn) in txns.iter().enumerate() {
            let (Some(d), Some(OpType::Ok)) = (txn.done, txn.kind) else { continue };
            let mops = h.mops_of(&h.ops[d]);
            let read = mops.iter().find(|m| m.key == fence && m.f == MopFn::Read);
            let wrote = mops.iter().rev().find(|m| m.key == fence && m.f == MopFn::Write);
            let value = |m: &crate::history::Mop| if let MopValue::Int(x) = m.value { Some(x) } else { None };
            if let (Some(r), Some(MopValue::Int(v))) = (read, wrote.map(|m| m.value)) {
                writer.insert(v, t);
                reads.push((t, value(r)));
            } else if let Some(r) = read.filter(|_| is_read_fence(mops, fence)) {
                read_only.push((t, value(r)));
            }
        }
        // A read of nil reads the last collected fence (its reads were
        // rewritten) or, before any, the initial state. Read from `h` as
        // it came ([`Self::unordered_by_fences`]), it shows that fence's
        // value.
        let base = self.fence_pos.unwrap_or(0);
        let collected = self.fronts.get(&fence).map(|f| f.value);
        let mut progress = true;
        while progress {
            progress = false;
            for &(t, read) in &reads {
                if pos[t] != NO_FENCE {
                    continue;
                }
                let p = match read {
                    None => base + 1,
                    Some(v) if collected == Some(v) => base + 1,
                    Some(v) => match writer.get(&v) {
                        Some(&w) if pos[w] != NO_FENCE => pos[w] + 1,
                        _ => continue,
                    },
                };
                pos[t] = p;
                progress = true;
            }
        }
        let mut seen: FxHashMap<u32, usize> = FxHashMap::default();
        for (t, &p) in pos.iter().enumerate().filter(|&(_, &p)| p != NO_FENCE) {
            if let Some(&other) = seen.get(&p) {
                let line = |t: usize| txns[t].done.map_or(0, |d| h.ops[d].line);
                return Err(format!(
                    "collection stopped: the fence transactions on lines {} and {} read the same fence \
                     (a lost update of :{FENCE_KEY}), so fences no longer order transactions; memory grows \
                     from here",
                    line(other),
                    line(t)
                ));
            }
            seen.insert(p, t);
        }
        let mut fences = Fences { lo: pos.clone(), hi: pos };
        // A read fence at `p`: after the write fence at `p`, and (not at
        // causal-cerone) before the one at `p + 1` (see "Read fences").
        for (t, read) in read_only {
            let p = match read {
                None => base,
                Some(v) if collected == Some(v) => base,
                Some(v) => match writer.get(&v) {
                    Some(&w) if fences.lo[w] != NO_FENCE => fences.lo[w],
                    _ => continue,
                },
            };
            fences.lo[t] = p;
            if self.read_fences {
                fences.hi[t] = p + 1;
            }
        }
        Ok(fences)
    }

    /// Fills each transaction's `prev` and `next` from its client's fences
    /// and returns `A`: the least position of a live client's last fence.
    fn sessions(&mut self, h: &History, txns: &mut [Txn], fences: &Fences) -> u32 {
        let mut by_process: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
        for (t, txn) in txns.iter().enumerate() {
            by_process.entry(txn.process).or_default().push(t);
        }
        let mut agree = NO_FENCE;
        let mut pinned = None;
        if self.original.is_none() {
            self.original = Some(by_process.keys().copied().collect());
        }
        for (&p, ts) in &by_process {
            let mut last = self.last_fence.get(&p).copied().unwrap_or(0);
            let mut fenced = self.last_fence.contains_key(&p);
            for &t in ts {
                if fences.lo[t] != NO_FENCE {
                    last = fences.lo[t];
                    fenced = true;
                }
                txns[t].prev = last;
            }
            let mut next = NO_FENCE;
            for &t in ts.iter().rev() {
                if fences.hi[t] != NO_FENCE {
                    next = fences.hi[t];
                }
                txns[t].next = next;
            }
            // A client whose last transaction ended :info is gone (Jepsen
            // never reuses its process).
            let gone = ts.last().is_some_and(|&t| txns[t].kind == Some(OpType::Info));
            if gone {
                self.gone.insert(p);
            }
            // A client new since the first round that has run no fence
            // yet (Jepsen's new process after a crash) follows nothing
            // collected: its transactions are flagged instead
            // ([`Self::unordered_by_fences`]), and it holds nothing back.
            // The first round's clients hold `A` until their first fence,
            // so that a run's start flags nothing.
            if !gone && !fenced && !self.original.as_ref().is_some_and(|o| o.contains(&p)) {
                continue;
            }
            if !gone && last < agree {
                agree = last;
                pinned = Some((p, ts.last().and_then(|&t| txns[t].done).map_or(0, |d| h.ops[d].line)));
            }
        }
        for (&p, &last) in &self.last_fence {
            if !by_process.contains_key(&p) && !self.gone.contains(&p) && last < agree {
                agree = last;
                pinned = Some((p, 0));
            }
        }
        // A client known from the start that has shown nothing yet.
        let unseen = (0..self.clients.unwrap_or(0) as i64)
            .find(|p| !by_process.contains_key(p) && !self.last_fence.contains_key(p));
        if let Some(p) = unseen {
            agree = 0;
            pinned = Some((p, 0));
        }
        self.pinned = pinned.map(|(p, _)| p);
        if let Some((p, _)) = pinned.filter(|_| agree == 0) {
            self.held_back = Some(format!("collection waits for process {p}'s first fence transaction"));
        }
        agree
    }

    /// Records what the collected `members` leave: each key's last version
    /// and the versions before it, the fences' positions. A version
    /// written by a transaction on a cycle of known edges (`cyclic`, after
    /// a `G1c`), or overwritten by one, is never taken as ordered: paths
    /// through the cycle order nothing.
    #[allow(clippy::too_many_arguments)]
    fn advance(
        &mut self,
        h: &History,
        txns: &[Txn],
        ranks: &[u32],
        members: &[bool],
        positions: &[u32],
        known: &cut::Known,
        cyclic: &dyn Fn(usize) -> bool,
        flips: Option<&History>,
        before: &mut record::Before,
    ) {
        // Per key: (rank, transaction, last value) of each collected writer.
        let mut writers: FxHashMap<KeyId, Vec<(u32, usize, i64)>> = FxHashMap::default();
        let mut overwritten: FxHashMap<KeyId, Vec<i64>> = FxHashMap::default();
        for (t, txn) in txns.iter().enumerate().filter(|&(t, _)| members[t]) {
            let Some(d) = txn.done else { continue };
            let mut last: FxHashMap<KeyId, i64> = FxHashMap::default();
            for m in h.mops_of(&h.ops[d]) {
                if let (MopFn::Write, MopValue::Int(v)) = (m.f, m.value) {
                    if let Some(before) = last.insert(m.key, v) {
                        overwritten.entry(m.key).or_default().push(before);
                    }
                }
            }
            for (k, v) in last {
                writers.entry(k).or_default().push((ranks[d], t, v));
            }
            self.collected += 1;
            if positions[t] != NO_FENCE {
                let e = self.last_fence.entry(txn.process).or_insert(0);
                *e = (*e).max(positions[t]);
            }
        }
        let mut last_writer: FxHashMap<KeyId, usize> = FxHashMap::default();
        for (&k, ws) in writers.iter_mut() {
            ws.sort_unstable();
            last_writer.insert(k, ws.last().expect("a collected writer").1);
        }
        // Who read each last version of a key with earlier writers in the
        // round: a reader of it that a writer of the key reaches by known
        // edges shows that writer overwritten.
        let mut readers: FxHashMap<(KeyId, i64), Vec<usize>> = writers
            .iter()
            .filter(|(_, ws)| ws.len() > 1)
            .map(|(&k, ws)| ((k, ws[ws.len() - 1].2), Vec::new()))
            .collect();
        if !readers.is_empty() {
            for (t, txn) in txns.iter().enumerate().filter(|(_, t)| t.kind == Some(OpType::Ok)) {
                for m in h.mops_of(&h.ops[txn.op()]) {
                    if let (MopFn::Read, MopValue::Int(v)) = (m.f, m.value) {
                        if let Some(r) = readers.get_mut(&(m.key, v)) {
                            r.push(t);
                        }
                    }
                }
            }
        }
        let mut grown = Vec::new();
        // Versions this round assumed, by their writers: (key, writer, value).
        let mut assumed_here = Vec::new();
        for (k, ws) in writers {
            let &(_, last_t, value) = ws.last().expect("a collected writer");
            let last = &txns[last_t];
            let shown_to = readers.get(&(k, value)).map_or(&[][..], |r| &r[..]);
            // The earlier collected writers of the key precede this one
            // unless it was flagged on the key when they went (it may then
            // have come before them).
            let after_earlier = !last
                .done
                .and_then(|d| self.flagged.get(&h.ops[d].line))
                .is_some_and(|keys| keys.binary_search(&k).is_ok());
            let old = self.fronts.remove(&k);
            if before.recording {
                before.front(k, h.key(k), old.as_ref());
            }
            let mut front = match old {
                Some(old) if after_earlier => {
                    if !old.seen && self.kept.overwritten_unread(old.line, old.value) {
                        before.overwrote.push((old.line, old.value));
                    }
                    let mut stale = old.stale;
                    stale.insert(old.value);
                    stale.absorb(old.assumed);
                    Front {
                        value,
                        line: 0,
                        stale,
                        assumed: Ranges::default(),
                        intermediate: old.intermediate,
                        archived: old.archived,
                        aborted_archived: old.aborted_archived,
                        seen: false,
                        flips: Vec::new(),
                    }
                }
                Some(old) => {
                    // Reported only with the writer that overwrote them:
                    // which one that is, is not known here.
                    let mut assumed = old.assumed;
                    assumed.insert(old.value);
                    assumed.absorb(old.stale);
                    self.assumed += 1;
                    Front {
                        value,
                        line: 0,
                        stale: Ranges::default(),
                        assumed,
                        intermediate: old.intermediate,
                        archived: old.archived,
                        aborted_archived: old.aborted_archived,
                        seen: false,
                        flips: Vec::new(),
                    }
                }
                None => Front {
                    value,
                    line: 0,
                    stale: Ranges::default(),
                    assumed: Ranges::default(),
                    intermediate: Dense::default(),
                    archived: false,
                    aborted_archived: false,
                    seen: false,
                    flips: Vec::new(),
                },
            };
            front.line = last.done.map_or(0, |d| h.ops[d].line);
            for &(_, t, v) in &ws[..ws.len() - 1] {
                let w = &txns[t];
                let ordered = !cyclic(t)
                    && !cyclic(last_t)
                    && (w.next <= last.prev
                        || known.reaches(t, last_t)
                        || shown_to.iter().any(|&r| r != last_t && known.reaches(t, r)));
                if ordered {
                    front.stale.insert(v);
                } else {
                    front.assumed.insert(v);
                    self.assumed += 1;
                    assumed_here.push((k, t, v));
                }
            }
            for v in overwritten.remove(&k).unwrap_or_default() {
                // In `stale` too, so that its runs of values stay whole
                // (an intermediate read is named by `intermediate` first).
                front.intermediate.insert(v);
                front.stale.insert(v);
            }
            if Some(k) == self.fence_key {
                self.fence_pos = Some(positions[last_t]);
            }
            if front.intermediate.words() >= self.archive_limit() {
                grown.push(k);
            }
            self.fronts.insert(k, front);
        }
        if let Some(full) = flips.filter(|_| !assumed_here.is_empty()) {
            let round = flip::Round::new(full, txns, ranks, members, known, &last_writer);
            for (k, t, v) in assumed_here.into_iter().filter(|&(k, _, _)| Some(k) != self.fence_key) {
                if let (Some(f), Some(front)) = (round.flip(t, k, v, self.rounds), self.fronts.get_mut(&k)) {
                    front.flips.push(f);
                }
            }
        }
        self.archive_intermediate(h, grown.into_iter());
    }
}
