//! Every CUDA kernel in `kernels/` compiles to PTX with NVRTC, on any
//! machine: no GPU or driver needed, only `libnvrtc.so` (the PyPI wheel
//! `nvidia-cuda-nvrtc-cu12`, installed by `scripts/nvrtc.sh`, which prints
//! the `ISOLDE_NVRTC` path this test reads). Without NVRTC the tests say
//! SKIPPED and pass. Runs with `--features gpu` (see `.ci/run`).

use isolde::accel::gpu::{compile_kernels, compile_source, nvrtc_present, GpuError, KERNEL_NAMES, NVRTC_ENV};

fn nvrtc_or_skip(test: &str) -> bool {
    if nvrtc_present() {
        return true;
    }
    eprintln!("SKIPPED {test}: NVRTC not found (run scripts/nvrtc.sh and set {NVRTC_ENV} to the path it prints)");
    false
}

#[test]
fn every_kernel_compiles_to_ptx_with_every_entry_point() {
    if !nvrtc_or_skip("every_kernel_compiles_to_ptx_with_every_entry_point") {
        return;
    }
    let ptx = compile_kernels().unwrap_or_else(|e| panic!("{e}"));
    assert!(!ptx.is_empty());
    let all: String = ptx.iter().map(|(_, p)| p.as_str()).collect();
    for name in KERNEL_NAMES {
        assert!(all.contains(&format!(".entry {name}(")), "no entry point {name} in the PTX");
    }
}

#[test]
fn a_kernel_with_an_error_is_reported_with_nvrtc_s_log() {
    if !nvrtc_or_skip("a_kernel_with_an_error_is_reported_with_nvrtc_s_log") {
        return;
    }
    let bad = "extern \"C\" __global__ void k(unsigned long long* r) { r[0] = undeclared_name; }";
    match compile_source("bad.cu", bad) {
        Err(GpuError::Compile { file, log }) => {
            assert_eq!(file, "bad.cu");
            assert!(log.contains("undeclared_name"), "log: {log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}
