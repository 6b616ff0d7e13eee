//! The help headings the command line's options are grouped under, shared
//! by every command that declares options ([`crate::cli`], `isolde
//! record`'s [`crate::record::run`], the binary's own commands).
//!
//! This module imports nothing, so that both the command line's plumbing
//! and the stages that declare their own options can name a heading
//! without importing each other.

/// The help heading of the options `--help` hides (`hide_short_help`):
/// every hidden option goes under it, so that `--help-all` is `--help`
/// plus this one section.
pub const TUNING: &str = "Comparison and tuning (--help-all)";
