//! Elle's inference on list-append and rw-register histories: the dependency
//! graph, anomalies and witnesses, Elle's corpus and the ladder's, and the
//! fuzzer's properties.
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod closed_predicate;
mod elle_2026;
mod elle_corpus;
mod fuzz;
mod interleaving;
mod ladder_corpus;
mod list_append;
mod nearest_touchers;
mod rw_register;
mod shared_mops;
