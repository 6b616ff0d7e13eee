//! One check spread over many processes (`dist`): the single-process result
//! from any number of workers, over loopback, and the faults.
//!
//! One test binary for the area (each binary links the whole crate).

#[path = "../support/mod.rs"]
mod support;

mod distributed;
