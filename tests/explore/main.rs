//! `isolde explore` (`explore`): the enumerator, its examples and its
//! properties.
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod explore;
mod explore_examples;
mod explore_property;
