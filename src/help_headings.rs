//! The help headings the command line's options are grouped under, shared
//! by every command that declares options ([`crate::cli`], `isolde
//! record`'s [`crate::record::run`], the binary's own commands), and which
//! of them the short help leaves out.
//!
//! `-h`/`--help` prints the options most runs need; the options under a
//! heading of [`HIDDEN_FROM_SHORT_HELP`] are left to `--help-all` (and to
//! the guide the heading names), by [`crate::cli::help::split_help`]. To
//! hide a new group of options: add a heading constant here, list it in
//! [`HIDDEN_FROM_SHORT_HELP`], and give the options `help_heading = ` that
//! constant (or a flattened struct `next_help_heading = ` it); nothing else
//! changes. docs/usage.md then says which options only `--help-all` shows.
//!
//! This module imports nothing, so that both the command line's plumbing
//! and the stages that declare their own options can name a heading
//! without importing each other.

/// Comparison and tuning knobs: skip a stage of the exact check, pick the
/// reachability kernel, raise a memory budget.
pub const TUNING: &str = "Comparison and tuning (--help-all)";

/// The knobs of Jepsen's and Knossos's checkers (`isolde help jepsen`).
pub const JEPSEN: &str = "Jepsen workloads (isolde help jepsen)";

/// The knobs of `--follow`'s rounds and window (`isolde help online`).
pub const FOLLOW: &str = "Following a running database (isolde help online)";

/// The options of a check spread over many processes (`isolde help
/// distributed`).
pub const DISTRIBUTED: &str = "Distributed (isolde help distributed)";

/// Facts only the database knows, given beside the history (the commit
/// order of `--transaction-order`).
pub const WHITE_BOX: &str = "White-box facts from the database (--help-all)";

/// Time and memory limits of a check.
pub const LIMITS: &str = "Limits";

/// The headings whose options `--help` leaves out and `--help-all` shows.
pub const HIDDEN_FROM_SHORT_HELP: &[&str] = &[TUNING, JEPSEN, FOLLOW, DISTRIBUTED, WHITE_BOX];

/// Whether `--help` leaves out the options under `heading`.
pub fn hidden_from_short_help(heading: Option<&str>) -> bool {
    heading.is_some_and(|h| HIDDEN_FROM_SHORT_HELP.contains(&h))
}
