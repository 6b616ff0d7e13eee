//! The weak levels (read committed, read atomic, causal; `weak`): semantics,
//! pruning, formats, AWDIT's examples, the default ladder, and the generators
//! of histories with known weak properties.
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod gen_levels;
mod gen_weak;
mod gen_weak_lists;
mod weak_awdit;
mod weak_examples;
mod weak_formats;
mod weak_ladder_default;
mod weak_property;
mod weak_prune;
mod weak_semantics;
mod weak_taps;
