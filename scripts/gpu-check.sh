#!/usr/bin/env bash
# Everything that needs a CUDA device, in one prepared run (at most about
# 8 minutes on one H100): the device, the kernels against their CPU mirror
# (tests/gpu/gpu_kernels.rs), then scripts/bench-gpu.sh on the shapes that
# matter, printing for each history the classic-CPU, mirror and GPU pruning
# times and their ratio from the same run. Its output is what goes into
# docs/gpu.md.
#
# Where cargo is at hand it builds what it runs (`--features gpu`). On a
# machine without a Rust toolchain (a lent GPU machine) it runs prebuilt
# binaries instead:
#   ISOLDE_BIN=path/to/isolde            (a `--features gpu` release build)
#   GPU_TEST_BIN=path/to/gpu-*           (`cargo test --features gpu
#                                          --test gpu --no-run`)
# NVRTC: $ISOLDE_NVRTC if set, else the project's .venv-nvrtc
# (scripts/nvrtc.sh), else a CUDA toolkit's or a Python wheel's
# libnvrtc.so.* on the machine. Any NVRTC from CUDA 12 on works: the kernels
# are plain CUDA C++ and the PTX is loaded by the machine's driver.
#
# GPU_CHECK_SIZES (default "10000 100000"): default-shape sizes;
# GPU_CHECK_SHAPES: the other shapes (bench-gpu.sh's BENCH_GPU_SHAPES);
# empty skips them. GPU_CHECK_TIMEOUT (default 60): seconds per analysis
# run (15 runs: 5 histories x classic / mirror / GPU), so the whole check
# stays within 8 minutes even if a path is slow; the kernel tests get 120 s.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

check_start=$(date +%s)
section() { printf '\n## %s\n\n' "$*"; }

section "device"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,memory.total,memory.free,driver_version --format=csv,noheader ||
    echo "nvidia-smi failed"
else
  echo "no nvidia-smi on this machine"
fi
echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)"

# NVRTC: the first library found; a directory holding it as `libnvrtc.so`
# goes first on LD_LIBRARY_PATH, the name cudarc looks for first.
find_nvrtc() {
  if [[ -n "${ISOLDE_NVRTC:-}" && -e "$ISOLDE_NVRTC" ]]; then echo "$ISOLDE_NVRTC"; return; fi
  local c
  for c in .venv-nvrtc/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 \
    $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, d, "lib") for p in nvidia.__path__ for d in ("cuda_nvrtc", "cu13", "cu12")))' 2>/dev/null | tr ' ' '\n' | sed 's|$|/libnvrtc.so.*|') \
    /usr/local/cuda/lib64/libnvrtc.so.* /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* \
    /usr/local/cuda-*/lib64/libnvrtc.so.* /usr/lib/x86_64-linux-gnu/libnvrtc.so.*; do
    for f in $c; do
      [[ -e "$f" && "$f" != *builtins* && "$f" != *alt* ]] && { echo "$f"; return; }
    done
  done
}
nvrtc="$(find_nvrtc || true)"
if [[ -n "$nvrtc" ]]; then
  shim="$(mktemp -d)"
  trap 'rm -rf "$shim"' EXIT
  ln -s "$(cd "$(dirname "$nvrtc")" && pwd)/$(basename "$nvrtc")" "$shim/libnvrtc.so"
  export ISOLDE_NVRTC="$nvrtc"
  export LD_LIBRARY_PATH="$shim:$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "NVRTC: $nvrtc"
else
  echo "NVRTC: none found (run scripts/nvrtc.sh)"
fi

if [[ -z "${ISOLDE_BIN:-}" ]]; then
  cargo build --release --features gpu >&2 || exit 1
  export ISOLDE_BIN="${CARGO_TARGET_DIR:-target}/release/isolde"
fi
gpu_state="$("$ISOLDE_BIN" analyze --gpu on --model serializable /dev/null 2>&1 >/dev/null)"
if [[ "$gpu_state" == *"--gpu on"* ]]; then
  echo "isolde sees no usable GPU: ${gpu_state#isolde: }"
else
  echo "isolde sees a usable GPU"
fi

section "kernels against the CPU mirror (tests/gpu/gpu_kernels.rs)"
start=$(date +%s.%N)
if [[ -n "${GPU_TEST_BIN:-}" ]]; then
  timeout 120 "$GPU_TEST_BIN" gpu_kernels:: --test-threads 1 2>&1 | grep -E "^test |SKIPPED|panicked|test result|assert" || true
  rc=${PIPESTATUS[0]}
else
  timeout 600 cargo test --features gpu --test gpu -- gpu_kernels:: --test-threads 1 2>&1 |
    grep -E "^test |SKIPPED|panicked|test result|assert|error" || true
  rc=${PIPESTATUS[0]}
fi
echo "kernel tests: exit $rc, $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}') s"

section "pruning: classic CPU, CPU mirror, GPU (scripts/bench-gpu.sh)"
# Whatever is left of 8 minutes (less 10 s): rows print as they come, so a
# cut run still shows every history finished.
left=$((470 - ($(date +%s) - check_start)))
BENCH_GPU_SIZES="${GPU_CHECK_SIZES:-10000 100000}" BENCH_GPU_HOT="" BENCH_GPU_TIMEOUT="${GPU_CHECK_TIMEOUT:-60}" \
  BENCH_GPU_SHAPES="${GPU_CHECK_SHAPES-write-heavy-20000 all-concurrent-10000 nodes-30000}" \
  timeout "$((left > 30 ? left : 30))" scripts/bench-gpu.sh || echo "bench-gpu.sh: exit $? (124: cut at 8 minutes)"
