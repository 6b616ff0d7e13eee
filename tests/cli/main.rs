//! The command line end to end: `isolde analyze`'s options, help and exit
//! codes, elle-cli's command line, input formats and values, the HTML page,
//! the memory guard.
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod analyze_cli;
mod cli;
mod elle_cli;
mod formats;
mod gen_closed_predicate;
mod html_page;
mod html_sets;
mod inputs;
mod memory_guard;
mod readme_commands;
mod short_values;
mod values;
