//! Checking a history still being written (`online`, `isolde analyze
//! --follow`): rounds, Cobra logs, collection, fenced windows and spilling.
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod online;
mod online_cobra;
mod online_collect;
mod online_fenced;
mod online_plain;
mod online_realtime;
mod online_spill;
