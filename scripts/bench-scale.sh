#!/usr/bin/env bash
# Scale benchmark (issue 32): list-append histories up to Elle's largest
# published run (22M transactions), checked at strong session
# serializability, with wall time and peak RSS beside the floors measured in
# the same run.
#
# Generates (once; cached outside the repository, in $SCALE_DIR) list-append
# histories in Elle's paper shape as `isolde gen list-append` writes it (20
# processes, 1-5 micro-ops, 100 active keys, uniform keys), then for each size
# prints one row:
#
#   txns | file MB | cat s | wc -l s | isolde parse s | wall s | peak RSS MB | B/txn | wall / wc-l | verdict
#
# `cat FILE > /dev/null` and `wc -l FILE` are the cheapest full passes over the
# file (the file is read once before timing, so both read the page cache);
# isolde has no separate tokenizer-only pass, so `wc -l` (one scan for
# newlines, as the parallel reader's line count does) is the tokenizing floor.
# "parse s" is isolde's own reading into columns (from --stats, same run).
# Peak RSS is GNU time's maximum resident set; B/txn is peak RSS per
# transaction.
#
# A planted variant of each size (`--inject G1c --inject-count 1`: one G1c
# cycle among normal traffic) is checked too; its anomaly types and witness
# (the cycle's steps and micro-ops, as JSON, without the op indices, times
# and key names that grow with the size) are printed and compared across
# sizes: the script fails when two sizes disagree.
#
# A size whose projected peak RSS (peak RSS per transaction of the largest
# size run so far, times the size) exceeds SCALE_MAX_RSS_MB is not run; its
# row shows the projection instead, so that a too-large run never meets the
# OOM killer on a shared machine.
#
# Environment:
#   SCALE_SIZES       txn counts                (default "100000 1000000 4000000 22000000")
#   SCALE_DIR         cache directory           (default /tmp/isolde-scale)
#   SCALE_MAX_RSS_MB  largest projected peak RSS allowed to run (default 8000)
#   SCALE_PLANT=0     skip the planted variants
#   SCALE_STATS=1     also print --stats (per-stage time and memory) per size
#   SCALE_MODEL       model checked (default strong-session-serializable;
#                     empty: analyze's default check)
#   BIN               isolde binary (default $CARGO_TARGET_DIR/release/isolde, built here)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

SIZES="${SCALE_SIZES:-100000 1000000 4000000 22000000}"
DIR="${SCALE_DIR:-/tmp/isolde-scale}"
MAX_RSS_MB="${SCALE_MAX_RSS_MB:-8000}"
PLANT="${SCALE_PLANT:-1}"
STATS="${SCALE_STATS:-0}"
MODEL_ARGS=(-m "${SCALE_MODEL-strong-session-serializable}")
[[ -n "${SCALE_MODEL-strong-session-serializable}" ]] || MODEL_ARGS=()
TIME=/usr/bin/time

log() { printf '%s\n' "$*" >&2; }
die() { log "bench-scale.sh: $*"; exit 1; }

[[ -x "$TIME" ]] || die "$TIME not found (install GNU time)"
for n in $SIZES; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "SCALE_SIZES entry '$n' is not a positive integer"
done
[[ "$MAX_RSS_MB" =~ ^[1-9][0-9]*$ ]] || die "SCALE_MAX_RSS_MB '$MAX_RSS_MB' is not a positive integer"

if [[ -z "${BIN:-}" ]]; then
  BIN="${CARGO_TARGET_DIR:-target}/release/isolde"
  log "building release binary..."
  cargo build --release >&2
fi
[[ -x "$BIN" ]] || die "$BIN missing"
mkdir -p "$DIR"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# $1: txns, $2: file, extra args: gen options. Writes to a temp name first so
# an interrupted run leaves no truncated file to be mistaken for a cached one.
generate() {
  local n=$1 file=$2
  shift 2
  if [[ ! -s "$file" ]]; then
    log "generating $file ($n txns)..."
    "$BIN" gen list-append --txns "$n" --processes 20 --key-dist uniform --seed 42 "$@" -o "$file.tmp"
    mv -f "$file.tmp" "$file"
  fi
}

# Seconds taken by a command (its output discarded).
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l | xargs printf '%.3f'
}

# Runs analyze on $1 under GNU time; leaves stdout in $tmp/out, stderr in
# $tmp/err and "wall maxrss_kb" in $tmp/time; returns analyze's exit status.
analyze() {
  local rc=0
  "$TIME" -f '%e %M' -o "$tmp/time" \
    "$BIN" analyze "${MODEL_ARGS[@]}" --stats --format json "$1" >"$tmp/out" 2>"$tmp/err" || rc=$?
  return $rc
}

verdict() {
  case $1 in 0) echo valid ;; 1) echo invalid ;; 3) echo unknown ;; *) echo "error($1)" ;; esac
}

echo "| txns | file MB | cat s | wc -l s | parse s | wall s | peak RSS MB | B/txn | wall / wc-l | verdict |"
echo "|-----:|--------:|------:|--------:|--------:|-------:|------------:|------:|------------:|---------|"
per_txn=0
witnesses=()
for n in $SIZES; do
  if [[ $per_txn != 0 ]]; then
    projected=$(echo "$per_txn * $n / 1000000" | bc)
    if (( projected > MAX_RSS_MB )); then
      echo "| $n | | | | | not run | projected $projected | | | over SCALE_MAX_RSS_MB=$MAX_RSS_MB |"
      continue
    fi
  fi
  file="$DIR/la-$n.edn"
  generate "$n" "$file"
  cat "$file" >/dev/null
  mb=$(stat -c %s "$file" | awk '{printf "%.1f", $1 / 1e6}')
  cat_s=$(seconds cat "$file")
  wc_s=$(seconds wc -l "$file")
  rc=0
  analyze "$file" || rc=$?
  read -r wall kb < <(tail -n 1 "$tmp/time")
  parse=$(awk '/^parse /{print substr($2, 1, length($2) - 1)}' "$tmp/err")
  per_txn=$(echo "$kb * 1024 / $n" | bc)
  ratio=$(echo "$wall / $wc_s" | bc -l | xargs printf '%.1f')
  echo "| $n | $mb | $cat_s | $wc_s | ${parse:-?} | $wall | $((kb / 1024)) | $per_txn | $ratio | $(verdict $rc) |"
  if [[ "$STATS" == 1 ]]; then
    { echo "$n txns:"; grep -E '^(ops|parse|memory)' "$tmp/err" | sed 's/^/    /'; } >>"$tmp/stats"
  fi
  if [[ $rc -ne 0 && $rc -ne 1 ]]; then
    sed 's/^/    /' "$tmp/err" >&2
  fi
  if [[ "$PLANT" == 1 ]]; then
    planted="$DIR/la-$n-g1c.edn"
    generate "$n" "$planted" --inject G1c --inject-count 1
    rc=0
    analyze "$planted" || rc=$?
    read -r pwall pkb < <(tail -n 1 "$tmp/time")
    types=$(jq -c '."anomaly-types"' "$tmp/out")
    # The witness's shape: per anomaly, its steps (relation, micro-op
    # indices, value) and the micro-ops of its cycle with keys left out
    # (the planted cycle sits at the end of the history, on fresh keys,
    # so op indices, times and key names grow with the size).
    witness=$(jq -c '.anomalies | map_values(map({type,
      steps: [.steps[] | {type, "a-mop-index", "b-mop-index", value}],
      cycle: [.cycle[] | [.value[] | [.[0], .[2]]]]}))' "$tmp/out")
    log "planted $n: $(verdict $rc) in $pwall s, $((pkb / 1024)) MB; anomaly types $types"
    log "  witness: ${witness:0:400}"
    witnesses+=("$types $witness")
  fi
done

if [[ -s "$tmp/stats" ]]; then
  echo
  cat "$tmp/stats"
fi

if (( ${#witnesses[@]} > 1 )); then
  for w in "${witnesses[@]:1}"; do
    [[ "$w" == "${witnesses[0]}" ]] || die "planted anomaly or witness differs between sizes"
  done
  log "planted anomaly and witness identical at every size run"
fi
