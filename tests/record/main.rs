//! Recording from real databases (`isolde record`, `record`) and Hermitage's
//! tests (`isolde hermitage`, `hermitage`).
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod hermitage;
mod record;
