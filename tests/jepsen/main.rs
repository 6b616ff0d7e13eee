//! Jepsen's non-transactional checkers (`jepsen`) and linearizability
//! (`linear`): checkers, generators, readers and Jepsen store directories.
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod jepsen_checkers;
mod jepsen_gen;
mod jepsen_initial_value;
mod jepsen_linear;
mod jepsen_queue;
mod jepsen_readers;
mod jepsen_store;
mod jepsen_store_file;
