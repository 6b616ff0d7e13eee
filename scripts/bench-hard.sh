#!/usr/bin/env bash
# The hard register shapes (hot keys, write-heavy, all-concurrent, 100k+):
# generates each history with `isolde gen` and runs the exact check at
# serializable and snapshot isolation, printing the verdict, wall time, peak
# memory and the exact check's stage times (build, prune, solve, witness)
# from --stats. Every run gets --exact-timeout BENCH_HARD_TIMEOUT seconds
# (default 60). BENCH_HARD_SHAPES=small skips the 100k-transaction shapes.
# Histories are cached in bench-data/hard/ (delete it to regenerate).
# Needs GNU time (/usr/bin/time). Prints a markdown table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TARGET="${CARGO_TARGET_DIR:-target}"
BIN="$TARGET/release/isolde"
TIME=/usr/bin/time
LIMIT="${BENCH_HARD_TIMEOUT:-60}"
[[ -x "$TIME" ]] || { echo "bench-hard.sh: $TIME not found (apt-get install time)" >&2; exit 1; }
cargo build --release >&2
DATA=bench-data/hard
mkdir -p "$DATA"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# name|gen arguments|models
SHAPES=(
  "zipf-50k|--txns 50000 --key-dist zipf --level serializable|serializable snapshot-isolation"
  "write-heavy-5k|--txns-per-session 250 --txn-len 8 --read-fraction 0.3 --key-dist zipf --output-format dbcop|serializable snapshot-isolation"
  "write-heavy-10k|--txns-per-session 500 --txn-len 8 --read-fraction 0.3 --key-dist zipf --output-format dbcop|serializable snapshot-isolation"
  "write-heavy-20k|--txns-per-session 1000 --txn-len 8 --read-fraction 0.3 --key-dist zipf --output-format dbcop|serializable snapshot-isolation"
  "keys100-50k|--txns 50000 --keys 100 --key-dist uniform --level serializable|serializable snapshot-isolation"
  "keys1000-50k|--txns 50000 --keys 1000 --key-dist uniform --level serializable|serializable snapshot-isolation"
  "read-heavy-zipf-50k|--txns 50000 --read-fraction 0.95 --key-dist zipf --level serializable|serializable snapshot-isolation"
  "sessions20-zipf-50k|--processes 20 --txns-per-session 2500 --output-format dbcop --txn-len 8 --keys 10000 --key-dist zipf|serializable snapshot-isolation"
  "all-concurrent-1k|--txn-len 3 --processes 1000000 --txns 1000|serializable snapshot-isolation"
  "all-concurrent-2k|--txn-len 3 --processes 1000000 --txns 2000|serializable snapshot-isolation"
  "all-concurrent-4k|--txn-len 3 --processes 1000000 --txns 4000|serializable snapshot-isolation"
  "all-concurrent-10k|--txn-len 3 --processes 1000000 --txns 10000|serializable snapshot-isolation"
  "default-10k|--txns 10000|serializable snapshot-isolation"
)
if [[ "${BENCH_HARD_SHAPES:-all}" != small ]]; then
  SHAPES+=(
    "hotspot-100k|--txns-per-session 5000 --output-format dbcop --txn-len 8 --key-dist hotspot|serializable snapshot-isolation"
    "default-100k|--txns 100000|serializable snapshot-isolation"
  )
fi

echo "| shape | model | verdict | wall s | peak RSS MB | build s | prune s | solve s | witness s |"
echo "|---|---|---|---|---|---|---|---|---|"
for shape in "${SHAPES[@]}"; do
  IFS='|' read -r name args models <<<"$shape"
  ext=edn
  [[ "$args" == *"--output-format dbcop"* ]] && ext=bincode
  file="$DATA/$name.$ext"
  if [[ ! -e "$file" ]]; then
    # shellcheck disable=SC2086
    "$BIN" gen rw-register $args --seed 1 -o "$file" >&2
  fi
  for model in $models; do
    rc=0
    "$TIME" -f "%e %M" -o "$tmp/time" "$BIN" analyze "$file" --model "$model" --stats \
      --exact-timeout "$LIMIT" --format json >"$tmp/out" 2>"$tmp/err" || rc=$?
    read -r wall rss < <(tail -1 "$tmp/time")
    rss=$((rss / 1024))
    case "$rc" in 0) verdict=valid ;; 1) verdict=invalid ;; 3) verdict=unknown ;; *) verdict="error $rc" ;; esac
    # The last stage line of --stats is the level finally checked.
    stages=$(grep -E '^ +build ' "$tmp/err" | tail -1 |
      sed -E 's/.*build ([0-9.]+)s +prune ([0-9.]+)s +solve ([0-9.]+)s +witness ([0-9.]+)s.*/\1 | \2 | \3 | \4/')
    [[ -n "$stages" ]] || stages="- | - | - | -"
    echo "| $name | $model | $verdict | $wall | $rss | $stages |"
  done
done

# Beside adya's inference (issue 16: the valid default shape must be checked
# exactly faster than adya infers it), when an adya binary is at hand
# (ADYA=/path/to/adya, or `adya` on PATH; `cargo install adya
# --no-default-features` builds it). One run each, back to back.
ADYA="${ADYA:-$(command -v adya || true)}"
if [[ -n "$ADYA" && -x "$ADYA" ]]; then
  echo
  echo "| history | adya s | adya MB | isolde s | isolde MB | adya time / isolde time |"
  echo "|---|---|---|---|---|---|"
  for name in default-10k default-100k; do
    file="$DATA/$name.edn"
    [[ -e "$file" ]] || continue
    "$TIME" -f "%e %M" -o "$tmp/adya" "$ADYA" check -m rw-register -c serializable "$file" >/dev/null 2>&1 || true
    "$TIME" -f "%e %M" -o "$tmp/isolde" "$BIN" analyze "$file" --model serializable --format json \
      --exact-timeout "$LIMIT" >/dev/null 2>&1 || true
    read -r aw am < <(tail -1 "$tmp/adya")
    read -r iw im < <(tail -1 "$tmp/isolde")
    ratio=$(awk -v a="$aw" -v i="$iw" 'BEGIN { if (i > 0) printf "%.2fx", a / i; else print "-" }')
    echo "| $name | $aw | $((am / 1024)) | $iw | $((im / 1024)) | $ratio |"
  done
fi
