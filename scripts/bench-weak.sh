#!/usr/bin/env bash
# isolde vs AWDIT on read committed, read atomic and causal consistency
# (Biswas–Enea), on the same generated histories, from one run.
#
# For each size (transactions) it generates, with isolde's own generators,
# rw-register histories valid at read committed, read atomic and causal
# consistency (`isolde gen rw-register --level read-committed-be|read-atomic|
# causal-cerone`), written once in the Plume/AWDIT text format with the
# initial-state pinning (`--pin-initial`: each session starts with a read of
# a fresh key's initial value, so that AWDIT orders its initial transaction
# first, as isolde does; docs/formats.md). Both tools then check the same
# file at the level it was generated for:
#   isolde analyze FILE --input-format plume -m read-committed-be|read-atomic|causal-cerone
#   awdit check -f plume -i read-committed|read-atomic|causal FILE
# It also checks the read committed store's history at read atomic and the
# read atomic store's at causal consistency, where both must find a
# violation (rows `rc@ra`, `ra@cc`). The script prints wall-clock seconds and peak resident memory of each
# (GNU time), the ratio isolde/awdit of the times, and both verdicts (which
# must agree: the script fails otherwise).
#
# AWDIT is built from its public source (github.com/lassemoldrup/AWDIT)
# into bench-data/awdit/ (never vendored): from a git directory given as
# AWDIT_GIT_DIR (a clone or mirror), else cloned. Its optional dbcop
# feature needs a git submodule; the script removes that optional
# dependency from the build copy's Cargo.toml instead (the `plume` format
# does not use it).
#
# Environment overrides:
#   SIZES        transaction counts (default "20000 100000 1000000")
#   SESSIONS     sessions (default 20)
#   TXN_LEN      micro-ops per transaction (default 5)
#   KEYS         keys (default 10000)
#   AWDIT        an AWDIT binary to use instead of building one
#   AWDIT_GIT_DIR  where to clone AWDIT from
#   DATA         working directory (default bench-data/weak)
#
# Progress goes to stderr, the markdown table to stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
sizes="${SIZES:-20000 100000 1000000}"
sessions="${SESSIONS:-20}"
txn_len="${TXN_LEN:-5}"
keys="${KEYS:-10000}"
data="${DATA:-$here/bench-data/weak}"
mkdir -p "$data"
log() { printf '%s\n' "$*" >&2; }

src="$here/bench-data/awdit/src"
awdit_version=""
if [[ -z "${AWDIT:-}" ]]; then
  if [[ ! -d "$src/.git" ]]; then
    log "== fetching AWDIT into $src"
    mkdir -p "$here/bench-data/awdit"
    git clone --quiet "${AWDIT_GIT_DIR:-https://github.com/lassemoldrup/AWDIT}" "$src"
  fi
  sed -i -e '/^dbcop = /d' "$src/Cargo.toml"
  log "== building AWDIT ($(git -C "$src" rev-parse --short HEAD))"
  (cd "$src" && cargo build --release --quiet 2>/dev/null || cargo build --release) >&2
  AWDIT="$src/target/release/awdit"
  awdit_version=" $(git -C "$src" rev-parse --short HEAD)"
fi
log "== building isolde"
cargo build --release --locked --quiet >&2
isolde="$here/target/release/isolde"

# "seconds peak-MB" of a command; its stdout goes to $out_file.
measure() {
  local out_file=$1
  shift
  /usr/bin/time -f '%e %M' -o "$data/time.txt" "$@" >"$out_file" 2>"$data/stderr.txt" || true
  # GNU time writes "Command exited with non-zero status N" first when the
  # command fails (isolde exits 1 on a violation): the figures are the last line.
  tail -n 1 "$data/time.txt" | awk '{ printf "%s %.0f\n", $1, $2 / 1024 }'
}

# The fastest of $reps runs of measure (same arguments): "seconds peak-MB".
best_of() {
  local reps=$1 best="" line
  shift
  for ((r = 0; r < reps; r++)); do
    line=$(measure "$@")
    if [[ -z "$best" ]] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
      best=$line
    fi
  done
  echo "$best"
}

cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
echo "Measured by scripts/bench-weak.sh on $(date -u +%Y-%m-%d), isolde $(git rev-parse --short HEAD), AWDIT${awdit_version:- $AWDIT}, $(nproc) cores ($cpu); $sessions sessions, $txn_len micro-ops per transaction, $keys keys; wall-clock seconds (the fastest of 3 runs below 1M transactions) and peak RSS of the whole command (parsing included)."
echo
echo "| transactions | events | history@level | isolde s | isolde MB | AWDIT s | AWDIT MB | isolde/AWDIT | verdict |"
echo "|---:|---:|---|---:|---:|---:|---:|---:|---|"
status=0
for n in $sizes; do
  # Below a million transactions a run takes well under a second, where the
  # shared machine's noise is of the same order: the fastest of three runs.
  reps=$((n < 1000000 ? 3 : 1))
  # Each store's history at its own level (valid), then the read committed
  # store's at read atomic and the read atomic store's at causal consistency
  # (violations: fractured reads, causality violations).
  for lvl in rc ra cc rc@ra ra@cc; do
    case $lvl in
      rc) gen=read-committed-be; model=read-committed-be; awdit_level=read-committed ;;
      ra) gen=read-atomic; model=read-atomic; awdit_level=read-atomic ;;
      cc) gen=causal-cerone; model=causal-cerone; awdit_level=causal ;;
      rc@ra) gen=read-committed-be; model=read-atomic; awdit_level=read-atomic ;;
      ra@cc) gen=read-atomic; model=causal-cerone; awdit_level=causal ;;
    esac
    f="$data/$gen-$n.txt"
    if [[ ! -s "$f" ]]; then
      log "== generating $f"
      "$isolde" gen rw-register --level "$gen" --txns "$n" --processes "$sessions" --txn-len "$txn_len" \
        --min-txn-len 1 --keys "$keys" --seed 1 --output-format plume --pin-initial -o "$f.tmp"
      mv "$f.tmp" "$f"
    fi
    events=$(wc -l <"$f")
    log "== $f at $lvl: isolde"
    read -r it im < <(best_of "$reps" "$data/isolde.out" "$isolde" analyze "$f" --input-format plume -m "$model" --format json)
    iv=$(grep -o '"valid?": *[a-z:"-]*' "$data/isolde.out" | head -1 | sed 's/.*: *//; s/"//g')
    log "== $f at $lvl: AWDIT"
    read -r at am < <(best_of "$reps" "$data/awdit.out" "$AWDIT" check -f plume -i "$awdit_level" "$f")
    av=$(grep -E '^(Consistent|Inconsistent)\.$' "$data/awdit.out" | head -1)
    ratio=$(awk -v a="$it" -v b="$at" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    verdict="isolde $iv, AWDIT $av"
    if [[ ! ( "$iv" == true && "$av" == Consistent. ) && ! ( "$iv" == false && "$av" == Inconsistent. ) ]]; then
      verdict="$verdict (DISAGREE)"
      status=1
    fi
    echo "| $n | $events | $lvl | $it | $im | $at | $am | $ratio | $verdict |"
  done
done
exit $status
