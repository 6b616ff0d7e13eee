//! Synthetic history generators.
//!
//! These produce Jepsen-format histories with known properties, for tests,
//! benchmarks, and demos of the checker: [`list_append`] simulates a strict
//! serializable list-append database under concurrent clients, and
//! [`rw_register`] a strict serializable read/write-register one. Both share
//! one client simulation, so they emit the same shape of history (process
//! ids, timing, faults). Everything is deterministic per seed and uses only
//! the standard library ([`rng`] is our own PRNG), so generated files are
//! reproducible across machines and builds.
//!
//! [`GenOptions`] selects the store's isolation [`Level`] (strict
//! serializable, serializable, snapshot isolation, read committed), plants
//! named anomalies ([`Inject`]) on reserved keys among normal traffic, fixes
//! sessions of equal length, and picks the output format (Jepsen EDN, or
//! dbcop's bincode via [`dbcop`] for registers); [`json`] rewrites a
//! generated EDN history as elle-cli JSON. [`txn`] draws the transactions
//! (keys, lengths, read mix, unique write values) for both generators and
//! for `isolde record`, which runs the same workloads against real databases;
//! both take their knobs from [`config`] ([`ListAppendConfig`],
//! [`RwRegisterConfig`]), which lies below them.
//! [`weak`] simulates, for both workloads, stores that give exactly one weak
//! level (Biswas–Enea read committed, read atomic, causal, prefix).
//! [`registers`] lays any register history out for the text formats of
//! Plume/PolySI/AWDIT ([`plume`]) and AWDIT's `test` format ([`awdit_test`]),
//! which [`write_text`] writes.

pub mod awdit_test;
pub mod closed_predicate;
pub mod config;
pub mod dbcop;
pub mod inject;
pub mod jepsen;
pub mod jepsen_queue;
pub mod json;
pub mod list_append;
pub(crate) mod out;
pub mod plume;
pub mod registers;
pub mod rng;
pub mod rw_register;
pub(crate) mod sim;
#[cfg(test)]
pub(crate) mod testkit;
pub mod txn;
pub mod weak;
mod zipf;

pub use config::{KeyDist, ListAppendConfig, RwKeyDist, RwRegisterConfig};
pub use inject::{Inject, InjectCounts, InjectWorkload};
pub use list_append::{list_append_string, write_list_append};
pub use rw_register::{rw_register_string, write_rw_register};
pub use sim::{GenOptions, GenStats, Level, OutputFormat};
pub use txn::{DrawnMop, Pattern, TxnSource};

/// A register text format [`write_text`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextFormat {
    /// Plume / PolySI / C4 / AWDIT `-f plume`: `r(K,V,S,T)` lines.
    Plume,
    /// AWDIT's `test` format.
    AwditTest,
}

/// Writes the register history `h` in `format` (see [`registers`]).
pub fn write_text(
    h: &crate::history::History,
    format: TextFormat,
    opts: registers::ExportOptions,
    w: &mut dyn std::io::Write,
) -> Result<(), String> {
    let r = registers::export(h, opts).map_err(|e| e.to_string())?;
    match format {
        TextFormat::Plume => plume::write(&r, w),
        TextFormat::AwditTest => awdit_test::write(&r, w),
    }
    .map_err(|e| e.to_string())
}

/// Runs a generator that writes EDN (`generate`), then rewrites its history
/// in the register text `format`; returns the generator's statistics.
pub fn generate_text(
    generate: impl FnOnce(&mut Vec<u8>) -> std::io::Result<GenStats>,
    format: TextFormat,
    opts: registers::ExportOptions,
    w: &mut dyn std::io::Write,
) -> Result<GenStats, String> {
    let mut edn = Vec::new();
    let stats = generate(&mut edn).map_err(|e| e.to_string())?;
    let h = crate::ingest::read_bytes("generated.edn", &edn, crate::ingest::Format::Edn).map_err(|e| e.to_string())?;
    drop(edn);
    write_text(&h, format, opts, w)?;
    Ok(stats)
}
