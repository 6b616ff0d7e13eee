#!/usr/bin/env bash
# Benchmarks `isolde explore` on the client programs of Bouajjani, Enea and
# Roman-Calvo (PLDI'23), translated from their artifact into examples/explore/
# (docs/explore-bench.md).
#
# 1. The 25 programs of the first experiment (3 sessions x 3 transactions of
#    courseware, shopping cart, TPC-C, twitter, wikipedia) at
#    read-committed-be, read-atomic, causal-cerone, snapshot-isolation and
#    serializable: consistent histories, end states (explored), wall time and
#    peak memory, beside the paper's Table F.1 (histories at CC, SI, SER and
#    its CC time; * = partial count at its 30 min timeout).
# 2. The scaling runs of the paper (Fig. 15, F.2, F.3) at causal-cerone:
#    TPC-C and Wikipedia with 1-5 sessions of 3 transactions
#    (examples/explore/scaling/*-s<i>.edn) and 3 sessions of 1-5 transactions
#    (*-t<i>.edn), five client programs each.
#
# Environment: BENCH_EXPLORE_TIMEOUT (seconds per run, default 300; a run
# stopped by it prints "stopped"), BENCH_EXPLORE_QUICK=1 (only causal-cerone
# in part 1, and scaling sizes 1-3: about a minute).
# Prints markdown tables. Needs GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TIMEOUT="${BENCH_EXPLORE_TIMEOUT:-300}"
QUICK="${BENCH_EXPLORE_QUICK:-0}"
TARGET="${CARGO_TARGET_DIR:-target}"
BIN="$TARGET/release/isolde"
TIME=/usr/bin/time
F1=tests/data/explore-f1.tsv
[[ -x "$TIME" ]] || { echo "bench-explore.sh: $TIME not found (apt-get install time)" >&2; exit 1; }

cargo build --release >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The paper's explore-ce(CC) time per program (Table F.1; TL = 30 min timeout).
declare -A PAPER_TIME=(
  [courseware-1]=22s [courseware-2]=6s [courseware-3]=12:45 [courseware-4]=7s [courseware-5]=25s
  [shopping-cart-1]=19s [shopping-cart-2]=55s [shopping-cart-3]=55s [shopping-cart-4]=TL [shopping-cart-5]=2:56
  [tpcc-1]=43s [tpcc-2]=1:25 [tpcc-3]=10:12 [tpcc-4]=15s [tpcc-5]=TL
  [twitter-1]=5s [twitter-2]=48s [twitter-3]=1:24 [twitter-4]=8:36 [twitter-5]=7:53
  [wikipedia-1]=3:59 [wikipedia-2]=13:51 [wikipedia-3]=5:44 [wikipedia-4]=1:54 [wikipedia-5]=TL
)

# paper <program> <level>: the paper's count of histories (F.1), or -.
paper() {
  local col
  case "$2" in
    causal-cerone) col=2 ;;
    snapshot-isolation) col=3 ;;
    serializable) col=4 ;;
    *) echo "-"; return ;;
  esac
  awk -F'\t' -v p="$1" -v c="$col" '$1 == p { print $c; found = 1 } END { if (!found) print "-" }' "$F1"
}

# run <file> <level>: prints "histories | explored | wall s | peak RSS MB".
run() {
  local file="$1" level="$2" rc=0 wall rss
  "$TIME" -f "%e %M" -o "$tmp/time" "$BIN" explore "$file" --level "$level" --format json --timeout "$TIMEOUT" \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
  read -r wall rss < <(tail -1 "$tmp/time")
  if [[ "$rc" -ne 0 && "$rc" -ne 1 && "$rc" -ne 3 ]]; then
    echo "error $rc: $(head -c 200 "$tmp/err" | tr '\n' ' ') | - | $wall | $((rss / 1024))"
    return
  fi
  python3 - "$tmp/out" "$wall" "$rss" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
h = str(d["histories"]) + ("*" if d.get("stopped") else "")
print("%s | %s | %s | %d" % (h, d["explored"], sys.argv[2], int(sys.argv[3]) // 1024))
EOF
}

if [[ "$QUICK" == 1 ]]; then
  LEVELS=(causal-cerone)
  SIZES=(1 2 3)
else
  LEVELS=(read-committed-be read-atomic causal-cerone snapshot-isolation serializable)
  SIZES=(1 2 3 4 5)
fi

echo "## The 25 client programs (3 sessions x 3 transactions), timeout ${TIMEOUT}s"
echo
echo "| program | level | histories | end states | wall s | peak RSS MB | paper histories | paper CC time |"
echo "|---|---|---|---|---|---|---|---|"
for app in courseware shopping-cart tpcc twitter wikipedia; do
  for n in 1 2 3 4 5; do
    p="$app-$n"
    for level in "${LEVELS[@]}"; do
      t="-"
      [[ "$level" == causal-cerone ]] && t="${PAPER_TIME[$p]}"
      echo "| $p | $level | $(run "examples/explore/$p.edn" "$level") | $(paper "$p" "$level") | $t |"
    done
  done
done

echo
echo "## Scaling at causal-cerone (paper: Fig. 15, Tables F.2 and F.3), timeout ${TIMEOUT}s"
echo
echo "| program | shape | histories | end states | wall s | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for app in tpcc wikipedia; do
  for tag in s t; do
    for case in 1 2 3 4 5; do
      for i in "${SIZES[@]}"; do
        p="$app-$case-$tag$i"
        if [[ "$tag" == s ]]; then shape="$i sessions x 3 txns"; else shape="3 sessions x $i txns"; fi
        f="examples/explore/scaling/$p.edn"
        if [[ ! -f "$f" ]] && grep -qx "$p" examples/explore/scaling/SKIPPED; then
          echo "| $p | $shape | not generated (scaling/SKIPPED) | - | - | - |"
          continue
        fi
        echo "| $p | $shape | $(run "$f" causal-cerone) |"
      done
    done
  done
done
