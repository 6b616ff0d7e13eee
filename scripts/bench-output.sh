#!/usr/bin/env bash
# Measures how isolde's output scales on a failing history: generates a
# list-append history under read committed (thousands of cycles; cached in
# bench-data/), then times `isolde analyze` printing JSON with the default
# bound on cases per anomaly type and with --all-anomalies, and writing
# --directory with the default bound on plots and with --all-plots.
# Prints a markdown table (wall seconds, peak RSS, bytes of stdout, plots
# rendered) with the machine it ran on.
#
# Environment overrides:
#   OUTPUT_TXNS   transactions (default 100000)
#   OUTPUT_SEED   generator seed (default 1)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
TXNS="${OUTPUT_TXNS:-100000}"
SEED="${OUTPUT_SEED:-1}"
BIN="${CARGO_TARGET_DIR:-target}/release/isolde"
TIME=/usr/bin/time
[[ -x "$TIME" ]] || { echo "bench-output.sh: $TIME not found (install GNU time)" >&2; exit 1; }
[[ "$TXNS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-output.sh: OUTPUT_TXNS '$TXNS' is not a positive integer" >&2; exit 1; }

cargo build --release >&2
mkdir -p bench-data
hist="bench-data/la-rc-$TXNS-s$SEED.edn"
[[ -s "$hist" ]] || "$BIN" gen list-append --txns "$TXNS" --level read-committed --seed "$SEED" -o "$hist" >&2
work=$(mktemp -d "${TMPDIR:-/tmp}/isolde-output.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run NAME ARGS...: one row.
run() {
  local name=$1
  shift
  set +e
  "$TIME" -f "%e %M" -o "$work/time" "$BIN" analyze "$hist" --format json "$@" >"$work/out" 2>"$work/err"
  local code=$?
  set -e
  [[ $code -le 3 ]] || { echo "bench-output.sh: $name failed (exit $code)" >&2; cat "$work/err" >&2; exit 1; }
  local t m
  read -r t m < <(tail -n 1 "$work/time")
  local plots=0
  [[ -d "$work/dir" ]] && plots=$(find "$work/dir" -name '*.svg' -o -name '*.png' | wc -l)
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$t" "$((m / 1024))" "$(wc -c <"$work/out")" "$plots"
  rm -rf "$work/dir"
}

cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
echo "Measured by scripts/bench-output.sh on $(date -u +%Y-%m-%d), $(nproc) cores ($cpu), $TXNS list-append transactions under read committed ($(du -m "$hist" | cut -f1) MB):"
echo
echo "| run | wall s | peak RSS MB | stdout bytes | plots rendered |"
echo "|---|---|---|---|---|"
run "JSON (10 cases per type)"
run "JSON --all-anomalies" --all-anomalies
run "-d DIR (10 plots per type)" -d "$work/dir"
run "-d DIR --all-plots" -d "$work/dir" --all-plots
