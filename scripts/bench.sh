#!/usr/bin/env bash
# Benchmarks `isolde gen` and `isolde analyze` on the standard workloads.
#
# Builds the release binary, generates (once; cached in bench-data/, which is
# gitignored) strict serializable list-append histories (Elle's shape, uniform
# keys) and rw-register histories (PolySI's shape: 20 sessions, 15 micro-ops,
# 50% reads, 10k zipfian keys) of each size with `isolde gen`, timing each
# generation under /usr/bin/time (recorded next to the file, so cached
# histories keep their numbers), then times `isolde analyze --no-exact --format json`
# (Elle's analysis; scripts/bench-exact.sh measures the exact register check) on
# each and prints markdown tables:
#
#   generation: workload | txns | file MB | wall s | peak RSS MB
#   analysis:   txns | file MB | wall s | peak RSS MB | txns/s
#
# Cached file names include the seed and process count, so changing either
# generates new histories instead of reusing stale ones.
#
# Environment overrides:
#   BENCH_SIZES      list-append txn counts       (default "10000 100000 1000000")
#   BENCH_RW_SIZES   rw-register txn counts       (default "10000 100000")
#   BENCH_PROCESSES  concurrent clients           (default 20)
#   BENCH_SEED       generator seed               (default 42)
#   BENCH_REGEN=1    regenerate cached histories
#
# Progress goes to stderr, the table to stdout. Exits non-zero if any analyze
# run fails (its row then shows the exit status instead of throughput).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

SIZES="${BENCH_SIZES:-10000 100000 1000000}"
RW_SIZES="${BENCH_RW_SIZES:-10000 100000}"
PROCESSES="${BENCH_PROCESSES:-20}"
SEED="${BENCH_SEED:-42}"
REGEN="${BENCH_REGEN:-0}"
BIN="${CARGO_TARGET_DIR:-target}/release/isolde"
DATA=bench-data
TIME=/usr/bin/time

log() { printf '%s\n' "$*" >&2; }
die() { log "bench.sh: $*"; exit 1; }

[[ -x "$TIME" ]] || die "$TIME not found (install GNU time, e.g. apt-get install time)"
for n in $SIZES $RW_SIZES; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "BENCH_SIZES or BENCH_RW_SIZES entry '$n' is not a positive integer"
done
[[ "$PROCESSES" =~ ^[1-9][0-9]*$ ]] || die "BENCH_PROCESSES '$PROCESSES' is not a positive integer"
[[ "$SEED" =~ ^[0-9]+$ ]] || die "BENCH_SEED '$SEED' is not a non-negative integer"

log "building release binary..."
cargo build --release >&2
[[ -x "$BIN" ]] || die "$BIN missing after build"

mkdir -p "$DATA"
tmpdir="$(mktemp -d)"
trap 'rm -rf "$tmpdir"' EXIT

# Generate missing histories first so generation never overlaps timing.
# $1: workload (list-append | rw-register); $2: file prefix; $3: sizes.
generate() {
  local workload=$1 prefix=$2 sizes=$3 n file
  for n in $sizes; do
    file="$DATA/$prefix-$n-p$PROCESSES-s$SEED.edn"
    if [[ "$REGEN" == 1 || ! -s "$file" || ! -s "$file.gen" ]]; then
      log "generating $file ($workload, $n txns, seed $SEED)..."
      # Write to a temp name and rename, so an interrupted run leaves no
      # truncated file behind to be mistaken for a cached one.
      if [[ "$workload" == list-append ]]; then
        "$TIME" -f '%e %M' -o "$file.gen.tmp" \
          "$BIN" gen list-append --txns "$n" --processes "$PROCESSES" --key-dist uniform --seed "$SEED" -o "$file.tmp"
      else
        # PolySI's default shape: 20 sessions, 15 micro-ops, 50% reads, 10k keys, zipfian.
        "$TIME" -f '%e %M' -o "$file.gen.tmp" \
          "$BIN" gen rw-register --txns "$n" --processes "$PROCESSES" --seed "$SEED" -o "$file.tmp"
      fi
      mv -f "$file.tmp" "$file"
      mv -f "$file.gen.tmp" "$file.gen"
    else
      log "using cached $file"
    fi
  done
}

status=0
# $1: workload; $2: file prefix; $3: sizes. Prints one markdown table.
measure() {
  local workload=$1 prefix=$2 sizes=$3 n file bytes rc t0 t1 wall rss_kb rate
  printf '\n%s\n\n' "$workload"
  printf '| txns | file MB | wall s | peak RSS MB | txns/s |\n'
  printf '|-----:|--------:|-------:|------------:|-------:|\n'
  for n in $sizes; do
    file="$DATA/$prefix-$n-p$PROCESSES-s$SEED.edn"
    bytes="$(wc -c < "$file" | tr -d ' ')"
    log "analyzing $file..."
    rc=0
    t0="$(date +%s%N)"
    "$TIME" -f '%e %M' -o "$tmpdir/time" \
      "$BIN" analyze "$file" --workload "$workload" --no-exact --format json > /dev/null 2> "$tmpdir/stderr" || rc=$?
    t1="$(date +%s%N)"
    # GNU time prepends "Command exited with non-zero status N" on failure;
    # the measurement is always the last line.
    read -r wall rss_kb < <(tail -n 1 "$tmpdir/time")
    # %e has only 10 ms resolution; prefer nanosecond wall clock when date has it
    # (the difference includes only the fork/exec of time itself).
    if [[ "$t0" =~ ^[0-9]+$ && "$t1" =~ ^[0-9]+$ ]]; then
      wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
    fi
    if [[ "$rc" -ne 0 ]]; then
      log "bench.sh: analyze $file exited with status $rc; its stderr:"
      tail -n 20 "$tmpdir/stderr" >&2 || true
      status=1
      rate="(exit $rc)"
    else
      rate="$(awk -v n="$n" -v s="$wall" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print "n/a" }')"
    fi
    awk -v n="$n" -v b="$bytes" -v w="$wall" -v r="$rss_kb" -v rate="$rate" \
      'BEGIN { printf "| %d | %.1f | %.3f | %.1f | %s |\n", n, b / 1e6, w, r / 1024, rate }'
  done
}

# Prints the generation table from the recorded timings.
gen_table() {
  local workload prefix sizes n file bytes wall rss_kb
  printf '\ngeneration\n\n'
  printf '| workload | txns | file MB | wall s | peak RSS MB |\n'
  printf '|----------|-----:|--------:|-------:|------------:|\n'
  for spec in "list-append la $SIZES" "rw-register rw $RW_SIZES"; do
    read -r workload prefix sizes <<< "$spec"
    for n in $sizes; do
      file="$DATA/$prefix-$n-p$PROCESSES-s$SEED.edn"
      bytes="$(wc -c < "$file" | tr -d ' ')"
      read -r wall rss_kb < <(tail -n 1 "$file.gen")
      awk -v w="$workload" -v n="$n" -v b="$bytes" -v t="$wall" -v r="$rss_kb" \
        'BEGIN { printf "| %s | %d | %.1f | %.2f | %.1f |\n", w, n, b / 1e6, t, r / 1024 }'
    done
  done
}

generate list-append la "$SIZES"
generate rw-register rw "$RW_SIZES"
gen_table
measure list-append la "$SIZES"
measure rw-register rw "$RW_SIZES"
exit "$status"
