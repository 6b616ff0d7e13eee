//! The CUDA kernels (cargo feature `gpu`): compiled with NVRTC, and run
//! against the CPU mirror bit for bit (skipped without a device).
//!
//! One test binary for the area (each binary links the whole crate, so
//! a few binaries build much faster than one per file); each module is
//! one former `tests/<name>.rs`, its tests named `<name>::…`.

#[path = "../support/mod.rs"]
mod support;

mod gpu_kernels;
mod nvrtc_kernels;
