#!/usr/bin/env bash
# Pruning's reachability on its three paths, on the same histories: today's
# CPU rows (`--cpu-reach classic`), their data-parallel CPU mirror
# (`--cpu-reach mirror`) and the CUDA kernels (`--gpu on`; a build with
# `--features gpu`, a device and NVRTC: run scripts/nvrtc.sh first and
# export the ISOLDE_NVRTC it prints). Without a GPU the GPU rows say so and
# the CPU columns are still measured.
#
# Every run passes `--no-serial-replay`: the serial replay decides these
# valid histories in linear time before the polygraph is built, so without
# it pruning never runs and nothing here would be measured.
#
# Histories (cached in bench-data/): PolySI's default shape (`isolde gen
# rw-register`: 15 ops, half reads, zipfian keys, 20 clients) of
# BENCH_GPU_SIZES transactions (default "10000 100000 1000000"; set but
# empty means none); a hot-key
# dbcop history of 20 sessions x BENCH_GPU_HOT transactions each (default
# 2500, i.e. 50k transactions; set but empty means none); and the shapes
# named in BENCH_GPU_SHAPES (default none): `write-heavy-20000` and
# `all-concurrent-10000` (generated as scripts/bench-hard.sh generates
# write-heavy-20k and all-concurrent-10k) and `nodes-30000` (the default
# shape with 15,000 transactions: a begin/commit graph of 30,000 nodes,
# Cobra's GPU cap). Model: serializable. Each run is limited to
# BENCH_GPU_TIMEOUT seconds (default 300) by `timeout`, so one slow shape
# cannot eat the budget (its row says "timeout").
#
# Prints the device (name, memory) once, then a markdown table: history |
# path | verdict | wall s | build s | prune s | closure (runs, s) | test
# (runs, s) | update (edges, s) | transfer s | kernels s | device MB |
# reach speed-up (classic's closure+test+update over this path's) | prune
# speed-up (classic's prune over this path's). Wall time is isolde's own
# `total`. "closure" counts the known graph's closure (made while building
# the polygraph) and one per pruning round; the GPU's phase times include
# its transfers. After each history's rows, one summary line: the classic,
# mirror and GPU prune times, the GPU-vs-classic ratio and whether the
# three verdicts agree.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SIZES="${BENCH_GPU_SIZES-10000 100000 1000000}"
HOT="${BENCH_GPU_HOT-2500}"
SHAPES="${BENCH_GPU_SHAPES-}"
LIMIT="${BENCH_GPU_TIMEOUT:-300}"
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

if command -v nvidia-smi >/dev/null 2>&1; then
  echo "device: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1)"
else
  echo "device: no nvidia-smi on this machine"
fi
echo "host: $(nproc) cores"
echo

if gpu="$("$BIN" analyze --gpu on --model serializable /dev/null 2>&1 >/dev/null)"; [[ "$gpu" == *"--gpu on"* ]]; then
  echo "note: no usable GPU (${gpu#isolde: }); GPU rows are skipped" >&2
  have_gpu=0
else
  have_gpu=1
fi

echo "| history | path | verdict | wall s | build s | prune s | closure | test | update | transfer s | kernels s | device MB | reach speed-up | prune speed-up |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"

# First match of a pattern in the stats (empty when none).
first() { { grep -o "$1" "$tmp/err" || true; } | head -1; }
# A phase of the "reach:" line, "closure cpu-mirror x5 1.234s" -> "x5 1.234s".
phase() { first "$1 [a-z-]* x[0-9]* [0-9.]*s" | awk '{print $3 " " $4}'; }
secs() { echo "$1" | awk '{sub(/s$/, "", $2); print ($2 == "" ? 0 : $2)}'; }
num() { first "$1 [0-9.]*s" | awk '{print $NF}' | tr -d s; }

run() { # name file path-label args...
  local name="$1" file="$2" label="$3" rc=0
  shift 3
  timeout "$LIMIT" "$BIN" analyze "$file" --model serializable --format json --stats --no-serial-replay "$@" \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
  local verdict wall build prune closure test update transfer kernels mem reach
  case "$rc" in 0) verdict=valid ;; 1) verdict=invalid ;; 3) verdict=unknown ;; 124) verdict=timeout ;; *) verdict="error $rc" ;; esac
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
  [[ "$label" == classic ]] && classic_reach="$reach" && classic_prune="${prune:-0}"
  local ratio pratio
  ratio="$(awk -v c="${classic_reach:-0}" -v r="$reach" 'BEGIN{ if (r > 0 && c > 0) printf "%.2fx", c / r; else print "-" }')"
  pratio="$(awk -v c="${classic_prune:-0}" -v r="${prune:-0}" 'BEGIN{ if (r > 0 && c > 0) printf "%.2fx", c / r; else print "-" }')"
  echo "| $name | $label | $verdict | ${wall:--} | ${build:--} | ${prune:--} | ${closure:--} | ${test:--} | ${update:--} | ${transfer:--} | ${kernels:--} | ${mem:--} | $ratio | $pratio |"
  last_prune="${prune:--}"
  last_verdict="$verdict"
}

bench() { # name file
  classic_reach=""
  classic_prune=""
  local pc pm pg vc vm vg="-" ratio agree
  run "$1" "$2" classic --gpu off --cpu-reach classic
  pc="$last_prune" vc="$last_verdict"
  run "$1" "$2" mirror --gpu off --cpu-reach mirror
  pm="$last_prune" vm="$last_verdict"
  pg="-"
  if [[ "$have_gpu" == 1 ]]; then
    run "$1" "$2" gpu --gpu on
    pg="$last_prune" vg="$last_verdict"
  else
    echo "| $1 | gpu | (no GPU) | | | | | | | | | | | |"
  fi
  ratio="$(awk -v c="$pc" -v g="$pg" 'BEGIN{ if (g + 0 > 0 && c + 0 > 0) printf "%.1fx", c / g; else print "-" }')"
  agree=same
  [[ "$vc" == "$vm" && ("$vg" == - || "$vg" == "$vc") ]] || agree=DIFFER
  summaries+=("$1: prune classic ${pc}s, mirror ${pm}s, gpu ${pg}s; gpu vs classic ${ratio}; verdicts $agree ($vc/$vm/$vg)")
}
summaries=()

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

for shape in $SHAPES; do
  case "$shape" in
    write-heavy-20000) args="--txns-per-session 1000 --txn-len 8 --read-fraction 0.3 --key-dist zipf --output-format dbcop" ;;
    all-concurrent-10000) args="--txn-len 3 --processes 1000000 --txns 10000" ;;
    nodes-30000) args="--txns 15000" ;;
    *) echo "bench-gpu.sh: unknown shape $shape" >&2; continue ;;
  esac
  ext=edn
  [[ "$args" == *"--output-format dbcop"* ]] && ext=bincode
  f="bench-data/gpu-$shape.$ext"
  if [[ ! -s "$f" ]]; then
    echo "generating $f" >&2
    # shellcheck disable=SC2086
    "$BIN" gen rw-register $args --seed 1 -o "$f" 2>/dev/null
  fi
  bench "$shape" "$f"
done

echo
for line in "${summaries[@]}"; do
  echo "summary: $line"
done
