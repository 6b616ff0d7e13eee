//! Synthetic history generators.
//!
//! These produce Jepsen-format histories with known properties, for tests,
//! benchmarks, and demos of the checker: [`list_append`] simulates a strict
//! serializable list-append database under concurrent clients. Everything is
//! deterministic per seed and uses only the standard library ([`rng`] is our
//! own PRNG), so generated files are reproducible across machines and builds.

pub mod list_append;
mod out;
pub mod rng;

pub use list_append::{list_append_string, write_list_append, GenStats, KeyDist, ListAppendConfig};
