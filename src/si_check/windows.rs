//! Refuting a history too large for its polygraph by one of its windows.
//!
//! A key written by thousands of transactions that no dependency orders
//! needs a constraint per pair of its write chains, and past
//! [`super::ExactOptions::max_constraints`] the whole polygraph is not
//! built: the verdict would be `unknown`. Many such histories violate the
//! level in many places, each violation among a few transactions that ran
//! close together, and a much smaller history shows it.
//!
//! **The restriction argument.** Take a *window*, a run of consecutive
//! transactions, and keep of their reads only those whose every possible
//! writer is in the window (reads of the initial state included); drop the
//! others ([`super::txns::Txns::window`]). Let `S` be any serial order of
//! the whole history that respects the level's order. Restricted to the
//! window it is a serial order of the window: a kept read read, in `S`, the
//! last write of its key before it, that writer is in the window, and
//! removing transactions puts no new writer between the two (for a read of
//! the initial state: no writer before it in `S`, so none in the window
//! either); session order restricted to a subset is the window's session
//! order, and realtime edges between window transactions are realtime
//! edges of the history. So a window that has no serial order proves that
//! the history has none: its refutation is the history's. The same holds
//! at the snapshot-isolation and prefix levels, whose executions are also
//! orders in which each read sees the last write visible to it (its
//! snapshot): restricted to the window, a kept read's writer is still the
//! last visible one, and two window transactions that did not overlap on a
//! key still do not.
//!
//! The refutation is checkable on the whole history as it stands: its
//! cycles run over concrete transactions, each wr step is a read of the
//! history, each rw and ww step follows from such reads and writes under
//! the case it is in, and its case split is over the order of two writers
//! of a key, which every serial order of the whole history also decides.
//! Write orders derived from outside the polygraph (causal consistency's
//! forced orders) are not given to windows, so nothing in the refutation is
//! left unexplained.
//!
//! The converse does not hold: every window may be valid while the history
//! is not. A window never makes a verdict `Valid`; when no window refutes,
//! the verdict stays the whole polygraph's `unknown`.
//!
//! **The search.** Windows of [`FIRST_WINDOW`] transactions first, each
//! starting half a window after the previous one (so every pair of
//! transactions less than half a window apart shares a window), then
//! windows [`GROWTH`] times larger, until a window would hold the whole
//! history, a window's own polygraph is over the limit, or the search's
//! time ([`budget`]) runs out. When a window of the first size is already
//! over the limit, windows [`GROWTH`] times smaller are tried instead (down
//! to [`MIN_WINDOW`]), and the search never grows again. A window the serial replay explains is
//! skipped; the others get the exact check at the level (the first
//! refutation, in the order above, is the answer, so the outcome does not
//! depend on threads).

use super::options::{ExactOptions, ExactOutcome, Verdict, WindowStats};
use super::txns::{TxnId, Txns};
use super::Level;
use crate::history::History;
use std::time::{Duration, Instant};

/// Transactions in the first windows.
pub const FIRST_WINDOW: u32 = 1024;

/// Transactions in the smallest windows (tried when the first ones are
/// over the constraint limit).
pub const MIN_WINDOW: u32 = 64;

/// How much larger each next size of windows is.
pub const GROWTH: u32 = 4;

/// At most this long for the whole search.
const MAX_BUDGET: Duration = Duration::from_secs(60);

/// How long the search over windows may take: a quarter of the time left
/// before `deadline`, at most [`MAX_BUDGET`] (that, without a deadline).
fn budget(deadline: Option<Instant>) -> Duration {
    deadline.map_or(MAX_BUDGET, |d| (d.saturating_duration_since(Instant::now()) / 4).min(MAX_BUDGET))
}

/// The windows of `size` transactions over `n`, in order: each starts half
/// a window after the previous one, and the last one ends at `n`.
fn windows(n: u32, size: u32) -> impl Iterator<Item = std::ops::Range<TxnId>> {
    let step = (size / 2).max(1);
    (0..)
        .map(move |i: u32| i.saturating_mul(step))
        .take_while(move |&lo| lo == 0 || lo.saturating_add(size - step) < n)
        .map(move |lo| lo..lo.saturating_add(size).min(n))
}

/// Looks for a window of `txns` that refutes `level` (see the module
/// docs), within [`budget`] of `deadline`. Returns the refuting window's
/// outcome (its verdict is the whole history's), and what the search did
/// either way.
pub fn refute(
    h: &History,
    txns: &Txns,
    level: Level,
    opts: &ExactOptions,
    deadline: Option<Instant>,
) -> (Option<ExactOutcome>, WindowStats) {
    let start = Instant::now();
    let until = start + budget(deadline);
    let mut st = WindowStats::default();
    // Facts from outside the polygraph stay out (see the module docs);
    // progress is the whole check's.
    let wopts = ExactOptions { known: None, session_orders: None, progress: None, ..opts.clone() };
    let n = txns.len() as u32;
    let mut size = FIRST_WINDOW;
    // Whether the windows have grown: then a window over the limit ends
    // the search (larger ones would be over it too); before, smaller
    // windows are tried.
    let mut grown = false;
    let mut shrunk = false;
    'sizes: while size < n {
        for range in windows(n, size) {
            if Instant::now() >= until {
                break 'sizes;
            }
            st.windows += 1;
            st.largest = st.largest.max(range.end - range.start);
            match check_window(h, txns, range.clone(), level, &wopts, until) {
                Window::Explained | Window::Open => {}
                Window::Refuted(out) => {
                    st.searched += 1;
                    let first = txns.op[range.start as usize];
                    let last = txns.op[range.end as usize - 1];
                    st.refuted_by = Some((first, last));
                    st.time = start.elapsed();
                    return (Some(*out), st);
                }
                Window::Searched => st.searched += 1,
                Window::OverLimit => {
                    st.searched += 1;
                    if grown || size <= MIN_WINDOW {
                        break 'sizes;
                    }
                    size = (size / GROWTH).max(MIN_WINDOW);
                    shrunk = true;
                    continue 'sizes;
                }
            }
        }
        if shrunk {
            break;
        }
        size = size.saturating_mul(GROWTH);
        grown = true;
    }
    st.time = start.elapsed();
    (None, st)
}

/// What checking one window found.
enum Window {
    /// The serial replay explains it.
    Explained,
    /// It has no read left to explain.
    Open,
    /// No serial order: the history is refuted.
    Refuted(Box<ExactOutcome>),
    /// Searched without a refutation.
    Searched,
    /// Its own polygraph is over the constraint limit.
    OverLimit,
}

/// Checks the window `range` of `txns` at `level`, by the serial replay
/// and then the exact check, until `until`.
fn check_window(
    h: &History,
    txns: &Txns,
    range: std::ops::Range<TxnId>,
    level: Level,
    opts: &ExactOptions,
    until: Instant,
) -> Window {
    let sub = txns.window(range);
    if sub.reads.is_empty() {
        return Window::Open;
    }
    let recorded = (super::has_realtime_order(h, &sub), super::has_session_order(&sub));
    let budget = super::serial_budget(Some(until), sub.len());
    if super::replay(h, &sub, level, opts, recorded, budget).is_ok() {
        return Window::Explained;
    }
    let out = super::check_exactly(h, &sub, level, opts, Some(until));
    match out.verdict {
        Verdict::Invalid(_) => Window::Refuted(Box::new(out)),
        _ if out.stats.over_limit => Window::OverLimit,
        _ => Window::Searched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(edn: &str) -> History {
        crate::ingest::read_bytes("t.edn", edn.as_bytes(), crate::ingest::Format::Edn).expect("parses")
    }

    #[test]
    fn a_window_keeps_the_reads_of_its_own_writers_and_of_the_initial_state() {
        let h = history(
            "{:type :ok, :process 1, :value [[:w :x 1] [:w :y 1]]}
             {:type :ok, :process 2, :value [[:r :x 1] [:w :z 1]]}
             {:type :ok, :process 3, :value [[:r :z 1] [:r :y 1] [:r :u nil]]}",
        );
        let all = super::super::txns::extract(&h).expect("txns");
        let w = all.window(1..3);
        assert_eq!(w.len(), 2);
        assert_eq!(&w.op[..], &all.op[1..3]);
        // Txn 1's read of x comes from txn 0, outside: dropped. Txn 2 reads
        // z from txn 1 (now 0), y from outside (dropped), u initial.
        assert!(w.reads_of(0).is_empty());
        let r: Vec<_> = w.reads_of(1).iter().map(|r| r.from).collect();
        assert_eq!(r, vec![super::super::txns::Source::Txn(0, 1), super::super::txns::Source::Init]);
        assert_eq!(w.dropped_reads, 2);
        assert_eq!(w.writes_of(0), all.writes_of(1));
    }

    #[test]
    fn windows_overlap_by_half_and_cover_the_end() {
        let w: Vec<_> = windows(10, 4).collect();
        assert_eq!(w, vec![0..4, 2..6, 4..8, 6..10]);
        let w: Vec<_> = windows(9, 4).collect();
        assert_eq!(w, vec![0..4, 2..6, 4..8, 6..9]);
        let w: Vec<_> = windows(3, 4).collect();
        assert_eq!(w, vec![0..3]);
    }

    #[test]
    fn budget_is_a_quarter_of_what_is_left_at_most_a_minute() {
        assert_eq!(budget(None), MAX_BUDGET);
        let b = budget(Some(Instant::now() + Duration::from_secs(8)));
        assert!(b <= Duration::from_secs(2) && b > Duration::from_millis(1900), "{b:?}");
        assert_eq!(budget(Some(Instant::now() + Duration::from_secs(3600))), MAX_BUDGET);
    }
}
