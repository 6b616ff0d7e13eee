//! Prefix consistency (`prefix`): examples, the corpus, and properties
//! against the enumerator.
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod prefix;
mod prefix_corpus;
mod prefix_property;
