#!/usr/bin/env bash
# Pruning's reachability on its three paths, on the same histories: today's
# CPU rows (`--cpu-reach classic`), their data-parallel CPU mirror
# (`--cpu-reach mirror`) and the CUDA kernels (`--gpu on`; a build with
# `--features gpu`, a device and NVRTC: run scripts/nvrtc.sh first and
# export the ISOLDE_NVRTC it prints). Without a GPU the GPU rows say so and
# the CPU columns are still measured.
#
# Histories (cached in bench-data/): PolySI's default shape (`isolde gen
# rw-register`: 15 ops, half reads, zipfian keys, 20 clients) of
# BENCH_GPU_SIZES transactions (default "10000 100000 1000000"), and a
# hot-key dbcop history of 20 sessions x BENCH_GPU_HOT (default 2500, i.e.
# 50k transactions). Model: serializable.
#
# Prints a markdown table: history | path | verdict | wall s | build s |
# prune s | closure (runs, s) | test (runs, s) | update (edges, s) | transfer
# s | kernels s | device MB | reach speed-up (classic's closure+test+update
# over this path's). Wall time is isolde's own `total`. "closure" counts the
# known graph's closure (made while building the polygraph) and one per
# pruning round; the GPU's phase times include its transfers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SIZES="${BENCH_GPU_SIZES:-10000 100000 1000000}"
HOT="${BENCH_GPU_HOT:-2500}"
TARGET="${CARGO_TARGET_DIR:-target}"
if [[ -n "${ISOLDE_BIN:-}" ]]; then
  BIN="$ISOLDE_BIN" # prebuilt (a machine without cargo)
else
  BIN="$TARGET/release/isolde"
  cargo build --release --features gpu >&2
fi
mkdir -p bench-data
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if gpu="$("$BIN" analyze --gpu on --model serializable /dev/null 2>&1 >/dev/null)"; [[ "$gpu" == *"--gpu on"* ]]; then
  echo "note: no usable GPU (${gpu#isolde: }); GPU rows are skipped" >&2
  have_gpu=0
else
  have_gpu=1
fi

echo "| history | path | verdict | wall s | build s | prune s | closure | test | update | transfer s | kernels s | device MB | reach speed-up |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"

# First match of a pattern in the stats (empty when none).
first() { { grep -o "$1" "$tmp/err" || true; } | head -1; }
# A phase of the "reach:" line, "closure cpu-mirror x5 1.234s" -> "x5 1.234s".
phase() { first "$1 [a-z-]* x[0-9]* [0-9.]*s" | awk '{print $3 " " $4}'; }
secs() { echo "$1" | awk '{sub(/s$/, "", $2); print ($2 == "" ? 0 : $2)}'; }
num() { first "$1 [0-9.]*s" | awk '{print $NF}' | tr -d s; }

run() { # name file path-label args...
  local name="$1" file="$2" label="$3" rc=0
  shift 3
  "$BIN" analyze "$file" --model serializable --format json --stats "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  local verdict wall build prune closure test update transfer kernels mem reach
  case "$rc" in 0) verdict=valid ;; 1) verdict=invalid ;; 3) verdict=unknown ;; *) verdict="error $rc" ;; esac
  wall="$(num total)"
  build="$(num build)"
  prune="$(num prune)"
  closure="$(phase closure)"
  test="$(phase test)"
  update="$(phase update)"
  transfer="$(num transfer)"
  kernels="$(num kernels)"
  mem="$(first 'device memory [0-9]* MB' | awk '{print $3}')"
  reach="$(awk -v a="$(secs "$closure")" -v b="$(secs "$test")" -v c="$(secs "$update")" 'BEGIN{print a + b + c}')"
  [[ "$label" == classic ]] && classic_reach="$reach"
  local ratio
  ratio="$(awk -v c="${classic_reach:-0}" -v r="$reach" 'BEGIN{ if (r > 0 && c > 0) printf "%.2fx", c / r; else print "-" }')"
  echo "| $name | $label | $verdict | ${wall:--} | ${build:--} | ${prune:--} | ${closure:--} | ${test:--} | ${update:--} | ${transfer:--} | ${kernels:--} | ${mem:--} | $ratio |"
}

bench() { # name file
  classic_reach=""
  run "$1" "$2" classic --gpu off --cpu-reach classic
  run "$1" "$2" mirror --gpu off --cpu-reach mirror
  if [[ "$have_gpu" == 1 ]]; then
    run "$1" "$2" gpu --gpu on
  else
    echo "| $1 | gpu | (no GPU) | | | | | | | | | | |"
  fi
}

for n in $SIZES; do
  f="bench-data/rw-default-$n.edn"
  if [[ ! -s "$f" ]]; then
    echo "generating $f" >&2
    "$BIN" gen rw-register --txns "$n" --seed 1 -o "$f" 2>/dev/null
  fi
  bench "default shape $n" "$f"
done

for per in $HOT; do
  f="bench-data/rw-dbcop-zipf-20x$per.bincode"
  if [[ ! -s "$f" ]]; then
    echo "generating $f" >&2
    "$BIN" gen rw-register --processes 20 --txns-per-session "$per" --output-format dbcop --level serializable \
      --seed 1 -o "$f" 2>/dev/null
  fi
  bench "hot keys 20x$per (dbcop)" "$f"
done
