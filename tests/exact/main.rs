//! The exact check of serializability and snapshot isolation on registers
//! (`si_check`): verdicts against an oracle, real and concurrent histories,
//! windows, serial replay, and pruning's reachability (`accel`).
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod accel;
mod exact;
mod exact_concurrent;
mod exact_oracle;
mod exact_real;
mod exact_serial;
mod exact_windows;
mod serializable_store;
