#!/usr/bin/env bash
# Installs NVIDIA's NVRTC (the run-time CUDA C++ compiler, `libnvrtc.so`)
# from the PyPI wheel `nvidia-cuda-nvrtc-cu12` into a project-local virtual
# environment (.venv-nvrtc/, git-ignored), so the kernels in kernels/ can be
# compiled to PTX on a machine with no GPU and no CUDA toolkit. Idempotent:
# a second run only prints the path. Last line of stdout:
#   ISOLDE_NVRTC=/abs/path/to/libnvrtc.so.12
# (the variable `tests/gpu/nvrtc_kernels.rs` and `isolde analyze --gpu` read).
# Exit 1 (with a note on stderr) when it cannot be installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV=.venv-nvrtc
PKG="nvidia-cuda-nvrtc-cu12==12.8.93"

find_lib() {
  { find "$VENV" -path '*nvidia/cuda_nvrtc/lib/libnvrtc.so.12' 2>/dev/null || true; } | head -1
}

lib="$(find_lib)"
if [[ -z "$lib" ]]; then
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    if command -v apt-get >/dev/null 2>&1; then
      (apt-get install -y -q python3-venv >/dev/null 2>&1 ||
        (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q python3-venv >/dev/null 2>&1)) || true
    fi
    python3 -m venv "$VENV" >/dev/null 2>&1 || { echo "nvrtc.sh: cannot create a python3 venv" >&2; exit 1; }
  fi
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$PKG" >&2 ||
    { echo "nvrtc.sh: cannot install $PKG" >&2; exit 1; }
  lib="$(find_lib)"
  [[ -n "$lib" ]] || { echo "nvrtc.sh: $PKG installed no libnvrtc.so.12" >&2; exit 1; }
fi
echo "ISOLDE_NVRTC=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
