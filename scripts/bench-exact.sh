#!/usr/bin/env bash
# Benchmarks isolde's exact check (polygraph + SAT) on register histories.
#
# 1. Every PolySI history under ../shared/corpus/polysi (real PostgreSQL runs
#    at REPEATABLE READ, dbcop format), when that directory exists: once at
#    PolySI's level (snapshot isolation with session order:
#    strong-session-snapshot-isolation) and once for serializability (which,
#    when refuted, goes on to decide the weaker levels too).
# 2. Generated rw-register histories (cached in bench-data/) of the sizes in
#    BENCH_EXACT_SIZES (default "100000 1000000"), uniform over as many keys
#    as transactions, 8 micro-ops each, at strict-serializable.
# 3. Generated dbcop histories with hot keys (cached in bench-data/): 20
#    sessions of BENCH_EXACT_HOT (default "500 2500") transactions each, the
#    generator's zipfian keys, at serializable. dbcop records no realtime, so
#    every pair of a hot key's writers is a candidate constraint.
#
# Prints a markdown table: history | txns | model | verdict | wall s | peak RSS MB
# | constraints before -> after pruning | solver components.
# Needs GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SIZES="${BENCH_EXACT_SIZES:-100000 1000000}"
HOT="${BENCH_EXACT_HOT:-500 2500}"
CORPUS="${BENCH_POLYSI:-../shared/corpus/polysi}"
TARGET="${CARGO_TARGET_DIR:-target}"
BIN="$TARGET/release/isolde"
TIME=/usr/bin/time
[[ -x "$TIME" ]] || { echo "bench-exact.sh: $TIME not found (apt-get install time)" >&2; exit 1; }

cargo build --release >&2
mkdir -p bench-data
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "| history | txns | model | verdict | wall s | peak RSS MB | constraints (pruned to) | components |"
echo "|---|---|---|---|---|---|---|---|"

run() { # name file model
  local name="$1" file="$2" model="$3" rc=0
  "$TIME" -f "%e %M" -o "$tmp/time" "$BIN" analyze "$file" --model "$model" --format json --stats \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
  local wall rss verdict txns cons comps
  read -r wall rss < <(tail -1 "$tmp/time")
  case "$rc" in 0) verdict=valid ;; 1) verdict=invalid ;; 3) verdict=unknown ;; *) verdict="error $rc" ;; esac
  txns="$(grep -o '^exact [a-z-]*: txns [0-9]*' "$tmp/err" | head -1 | awk '{print $4}' || true)"
  cons="$(grep -o 'constraints [0-9]* -> [0-9]*' "$tmp/err" | head -1 | awk '{print $2 " (" $4 ")"}' || true)"
  comps="$(grep -o 'components [0-9]*' "$tmp/err" | head -1 | awk '{print $2}' || true)"
  echo "| $name | ${txns:--} | $model | $verdict | $wall | $((rss / 1024)) | ${cons:--} | ${comps:--} |"
}

if [[ -d "$CORPUS" ]]; then
  for f in "$CORPUS"/*/*/history.bincode; do
    name="$(basename "$(dirname "$(dirname "$f")")")/$(basename "$(dirname "$f")")"
    run "$name" "$f" strong-session-snapshot-isolation
    run "$name" "$f" serializable
  done
else
  echo "note: $CORPUS not found; PolySI histories skipped" >&2
fi

for n in $SIZES; do
  f="bench-data/rw-exact-$n.edn"
  if [[ ! -s "$f" ]]; then
    echo "generating $f" >&2
    "$BIN" gen rw-register --txns "$n" --keys "$n" --txn-len 8 --key-dist uniform --seed 1 -o "$f" 2>/dev/null
  fi
  run "generated rw-register $n" "$f" strict-serializable
done

for per in $HOT; do
  f="bench-data/rw-dbcop-zipf-20x$per.bincode"
  if [[ ! -s "$f" ]]; then
    echo "generating $f" >&2
    "$BIN" gen rw-register --processes 20 --txns-per-session "$per" --output-format dbcop --level serializable \
      --seed 1 -o "$f" 2>/dev/null
  fi
  run "generated dbcop, zipfian, 20x$per" "$f" serializable
done
