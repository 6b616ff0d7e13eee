#!/usr/bin/env bash
# Benchmarks isolde on histories recorded by real databases and published by
# other checkers, in the dialects they were written in:
#
# 1. VeriStrong's 10k-transaction benchmarks (BL, HD, RH, WH: dbcop bincode,
#    write values repeated across transactions) at serializable and snapshot
#    isolation: verdict, wall time and peak memory of each.
# 2. VeriStrong's CockroachDB runs (table2/ser/dbcop/roachdb_all_writes:
#    dbcop's client marks transactions committed that hold failed events) at
#    serializable: how many are valid / invalid / unknown per configuration,
#    and the slowest run.
# 3. For comparison, the unique-value path on PolySI's GeneralRH/RW/WH
#    (../shared/corpus/polysi/fig8_9_10) at serializable.
#
# The VeriStrong histories come from its public repository: pass a checkout
# as VERISTRONG=/path (the directory holding history/), or let the script
# clone it (shallow, about 330 MB) into bench-data/VeriStrong.
# Each run gets --exact-timeout BENCH_REAL_TIMEOUT seconds (default 60).
# Prints markdown tables. Needs GNU time (/usr/bin/time) and git.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TARGET="${CARGO_TARGET_DIR:-target}"
BIN="$TARGET/release/isolde"
TIME=/usr/bin/time
CORPUS="${BENCH_POLYSI:-../shared/corpus/polysi}"
LIMIT="${BENCH_REAL_TIMEOUT:-60}"
[[ -x "$TIME" ]] || { echo "bench-real.sh: $TIME not found (apt-get install time)" >&2; exit 1; }

VS="${VERISTRONG:-bench-data/VeriStrong}"
if [[ ! -d "$VS/history" ]]; then
  mkdir -p bench-data
  echo "bench-real.sh: cloning VeriStrong's histories into $VS" >&2
  git clone --depth 1 https://github.com/CzxingcHen/VeriStrong "$VS" >&2
fi

cargo build --release >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# run FILE MODEL: sets wall, rss (MB), verdict
run() {
  local rc=0
  "$TIME" -f "%e %M" -o "$tmp/time" "$BIN" analyze "$1" --model "$2" --exact-timeout "$LIMIT" --format json >"$tmp/out" 2>"$tmp/err" || rc=$?
  read -r wall rss < <(tail -1 "$tmp/time")
  rss=$((rss / 1024))
  case "$rc" in 0) verdict=valid ;; 1) verdict=invalid ;; 3) verdict=unknown ;; *) verdict="error $rc" ;; esac
}

echo "## VeriStrong 10k benchmarks (repeated write values)"
echo
echo "| history | model | verdict | wall s | peak RSS MB |"
echo "|---|---|---|---|---|"
for name in BL-10k HD-10k RH-10k WH-10k; do
  for f in "$VS"/history/fig13-14-15-table1/"$name"/hist-*/history.bincode; do
    [[ -e "$f" ]] || continue
    for model in serializable snapshot-isolation; do
      run "$f" "$model"
      echo "| $name | $model | $verdict | $wall | $rss |"
    done
  done
done

echo
echo "## VeriStrong's CockroachDB runs (dbcop, failed events in committed transactions), serializable"
echo
echo "| configuration | runs | valid | invalid | unknown | slowest s |"
echo "|---|---|---|---|---|---|"
for dir in "$VS"/history/table2/ser/dbcop/roachdb_all_writes/*/; do
  [[ -d "$dir" ]] || continue
  n=0 v=0 i=0 u=0 slowest=0
  for f in "$dir"hist-*/history.bincode; do
    run "$f" serializable
    n=$((n + 1))
    case "$verdict" in valid) v=$((v + 1)) ;; invalid) i=$((i + 1)) ;; *) u=$((u + 1)) ;; esac
    slowest=$(awk -v a="$slowest" -v b="$wall" 'BEGIN { print (b > a) ? b : a }')
  done
  echo "| $(basename "$dir") | $n | $v | $i | $u | $slowest |"
done

echo
echo "## Unique values (PolySI's General* histories), serializable"
echo
echo "| history | verdict | wall s | peak RSS MB |"
echo "|---|---|---|---|"
for f in "$CORPUS"/fig8_9_10/*/history.bincode; do
  [[ -e "$f" ]] || continue
  run "$f" serializable
  echo "| $(basename "$(dirname "$f")") | $verdict | $wall | $rss |"
done
