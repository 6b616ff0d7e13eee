#!/usr/bin/env bash
# Compares two isolde binaries' results byte for byte (issue 32: speed and
# memory work must not change a verdict, an anomaly set or a witness).
#
# For every history given (files or directories, searched for *.edn, *.json,
# *.txt, *.bincode and Cobra log directories) and every model set in MODELS,
# runs `isolde analyze --format json ARGS FILE` with OLD and with NEW and
# compares the exit status (the verdict) and standard output (the JSON result
# map) byte for byte. Standard error (progress, --stats timings) is not
# compared. An output that differs is checked against up to three more
# runs of OLD:
# where OLD itself prints something else each time (a search statistic of a
# parallel linearizability search, e.g. Knossos's "configs"), the run is
# counted as unstable, not as a difference, when the exit statuses agree.
# Prints one line per difference and a summary; exits 1 when any run
# differs.
#
# Usage:
#   OLD=path/to/old/isolde NEW=path/to/new/isolde scripts/compare-outputs.sh [PATH...]
#
# Without PATHs: /work/shared/corpus (when present) and tests/data.
#
# Environment:
#   OLD, NEW   the two binaries (required; NEW defaults to the release build)
#   MODELS     model sets to try, separated by `|` (default: the default
#              check, `-m snapshot-isolation`, `-m strong-session-serializable`);
#              an empty entry is the default check
#   TIMEOUT    seconds per run (default 120); a run that times out in both
#              binaries counts as agreeing, in one only as a difference
#   MEM_LIMIT  address-space limit per run in bytes (default 10 GiB), so a
#              large history cannot take the shared machine's memory
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

OLD="${OLD:?set OLD to the binary before the change}"
NEW="${NEW:-${CARGO_TARGET_DIR:-target}/release/isolde}"
MODELS="${MODELS:-|-m snapshot-isolation|-m strong-session-serializable}"
TIMEOUT="${TIMEOUT:-120}"
MEM_LIMIT="${MEM_LIMIT:-$((10 << 30))}"

for b in "$OLD" "$NEW"; do
  [[ -x "$b" ]] || { echo "compare-outputs.sh: $b is not an executable" >&2; exit 2; }
done

roots=("$@")
if (( ${#roots[@]} == 0 )); then
  [[ -d /work/shared/corpus ]] && roots+=(/work/shared/corpus)
  roots+=(tests/data)
fi

# Histories under the roots: plain files by extension, and directories of
# Cobra *.log files (read as one history each).
histories() {
  local r
  for r in "${roots[@]}"; do
    if [[ -f "$r" ]]; then
      echo "$r"
    elif [[ -d "$r" ]]; then
      find "$r" -type f \( -name '*.edn' -o -name '*.json' -o -name '*.txt' -o -name '*.bincode' \) \
        ! -name '*.expected.edn' | sort
      find "$r" -type f -name '*.log' -printf '%h\n' | sort -u
    else
      echo "compare-outputs.sh: $r not found" >&2
      exit 2
    fi
  done
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# $1: binary, $2: output file, rest: analyze arguments. Prints the exit status.
run() {
  local bin=$1 out=$2 rc=0
  shift 2
  prlimit --as="$MEM_LIMIT" -- timeout "$TIMEOUT" "$bin" analyze --format json "$@" >"$out" 2>/dev/null || rc=$?
  echo "$rc"
}

IFS='|' read -r -a model_sets <<<"$MODELS"
(( ${#model_sets[@]} > 0 )) || model_sets=("")
runs=0
diffs=0
unstable=0
while IFS= read -r h; do
  for m in "${model_sets[@]}"; do
    # shellcheck disable=SC2086 # the model set is split into arguments on purpose
    old_rc=$(run "$OLD" "$tmp/old" $m "$h")
    # shellcheck disable=SC2086
    new_rc=$(run "$NEW" "$tmp/new" $m "$h")
    runs=$((runs + 1))
    if [[ "$old_rc" != "$new_rc" ]]; then
      echo "DIFF exit $old_rc -> $new_rc: ${m:-default} $h"
      diffs=$((diffs + 1))
    elif ! cmp -s "$tmp/old" "$tmp/new"; then
      # Up to three more runs of OLD: does it print something else itself?
      unstable_old=0
      for _ in 1 2 3; do
        # shellcheck disable=SC2086
        again_rc=$(run "$OLD" "$tmp/again" $m "$h")
        if [[ "$again_rc" == "$old_rc" ]] && ! cmp -s "$tmp/old" "$tmp/again"; then
          unstable_old=1
          break
        fi
      done
      if (( unstable_old )); then
        echo "UNSTABLE (the old binary's output differs between two runs; exits agree): ${m:-default} $h"
        unstable=$((unstable + 1))
      else
        echo "DIFF output (exit $old_rc): ${m:-default} $h"
        diffs=$((diffs + 1))
      fi
    fi
  done
done < <(histories)

echo "compare-outputs.sh: $runs runs, $diffs differing, $unstable unstable in the old binary ($OLD vs $NEW)"
(( diffs == 0 ))
