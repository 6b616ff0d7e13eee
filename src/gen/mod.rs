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
//! for `isolde record`, which runs the same workloads against real databases.

pub mod dbcop;
pub mod inject;
pub mod json;
pub mod list_append;
pub(crate) mod out;
pub mod rng;
pub mod rw_register;
pub(crate) mod sim;
#[cfg(test)]
pub(crate) mod testkit;
pub mod txn;
mod zipf;

pub use inject::{Inject, InjectCounts, InjectWorkload};
pub use list_append::{list_append_string, write_list_append, KeyDist, ListAppendConfig};
pub use rw_register::{rw_register_string, write_rw_register, RwKeyDist, RwRegisterConfig};
pub use sim::{GenOptions, GenStats, Level, OutputFormat};
pub use txn::{DrawnMop, Pattern, TxnSource};
