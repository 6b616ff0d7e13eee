#!/usr/bin/env bash
# Online checking (`isolde analyze --follow`) against the batch check of the
# same history, from one run on this machine.
#
# For each workload and level it streams a generated history straight into
# the online checker:
#   isolde gen rw-register --fences 20 --txns N -o - | isolde analyze --follow - -m LEVEL
#   isolde gen rw-register --txns N -o - | isolde analyze --follow - -m strict-serializable
#   isolde gen list-append --txns N -o - | isolde analyze --follow - -m LEVEL
# and prints the wall time of the pipeline, the transactions per second it
# sustained, the checker's peak resident memory, the number of rounds and
# the lag of the last round (from its status line), and beside them the
# batch check of the same history written to a file (`isolde analyze FILE
# -m LEVEL`) and the time the generator alone takes to write it.
#
# Environment overrides:
#   TXNS     transactions per history (default 1000000)
#   DATA     working directory (default bench-data/online)
#   ISOLDE   the binary (default target/release/isolde, built if missing)
#   SPECS    workload:level pairs, space-separated (default: the six below);
#            rw-register takes a fence every 20 transactions unless a third
#            part says how often (rw-register:strict-serializable:0: none)
#   BATCH=0  skip the batch check (10M histories need more memory than the
#            machine has for it)
#   ALL=1    follow with --follow-all (keep every transaction). By default
#            --follow holds a window where a rule exists; for rw-register at
#            a session level the verdict may then be `unknown` where a later
#            read contradicts an assumed write order: it may differ from the
#            batch verdict, and the "follow verdict" column says so
#
# Memory columns: the follow's resident memory at the round that passed a
# tenth of the run and at the last round (flat when old transactions are
# collected), and the transactions held at the last round ("all" when the
# level keeps everything).
#
# Progress goes to stderr, the markdown table to stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
txns="${TXNS:-1000000}"
data="${DATA:-$here/bench-data/online}"
isolde="${ISOLDE:-$here/target/release/isolde}"
mkdir -p "$data"
if [ ! -x "$isolde" ]; then
  (cd "$here" && cargo build --release --locked >&2)
fi
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 2; }

# secs KB of a command, from GNU time; the command's stderr goes to $2.
timed() {
  local out="$1" err="$2"
  shift 2
  /usr/bin/time -f "%e %M" -o "$data/time" "$@" >"$out" 2>"$err" || true
  # GNU time puts "Command exited with non-zero status N" first when the
  # command fails (an `unknown` verdict exits 3): the figures are last.
  tail -1 "$data/time"
}

echo "| workload | level | txns | follow s | txn/s | follow peak MB | MB at 1/10 | MB at end | held at end | rounds | last lag s | follow verdict | batch s | batch peak MB | gen alone s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
specs="${SPECS:-rw-register:strong-session-serializable rw-register:strong-session-snapshot-isolation rw-register:causal-cerone rw-register:strict-serializable:0 list-append:strong-session-serializable list-append:strict-serializable}"
for spec in $specs; do
  spec="${spec//:/ }"
  set -- $spec
  workload="$1" level="$2" every="${3:-20}"
  fences="" all=""
  [ "$workload" = rw-register ] && [ "$every" != 0 ] && fences="--fences $every"
  [ "${ALL:-0}" = 1 ] && all="--follow-all"
  file="$data/$workload-$txns${fences:+-fenced}.edn"
  # Without the batch check the history is not kept (10M is 5-6 GB).
  [ "${BATCH:-1}" = 0 ] && file=/dev/null
  echo "generating $file" >&2
  read -r gen_s _ < <(timed "$file" /dev/null "$isolde" gen "$workload" --txns "$txns" $fences -o -)
  echo "following $workload at $level" >&2
  read -r f_s f_kb < <(timed "$data/follow.out" "$data/follow.err" \
    sh -c "'$isolde' gen $workload --txns $txns $fences -o - | '$isolde' analyze --follow - $all -m $level -f json")
  rounds=$(grep -c '^isolde: round [0-9]*:' "$data/follow.err" || true)
  lag=$(grep '^isolde: round [0-9]*:' "$data/follow.err" | tail -1 | sed -n 's/.*lag \([0-9.]*\) s.*/\1/p')
  # Resident memory reported by the round that passed a tenth of the run,
  # and by the last round; transactions held at the last round.
  tenth=$(awk -v n="$txns" '/^isolde: round [0-9]*:/ { for (i = 1; i <= NF; i++) if ($i == "txns") t = $(i - 1); if (t + 0 >= n / 10) { for (i = 1; i <= NF; i++) if ($i == "MB,") { print $(i - 1); exit } } }' "$data/follow.err")
  last_mb=$(grep '^isolde: round [0-9]*:' "$data/follow.err" | tail -1 | sed -n 's/.* \([0-9]*\) MB,.*/\1/p')
  held=$(grep '^isolde: round [0-9]*:' "$data/follow.err" | tail -1 | sed -n 's/.*checked, \([0-9]*\) held.*/\1/p')
  echo "batch $workload at $level" >&2
  if [ "${BATCH:-1}" = 0 ]; then
    # BATCH=0: no batch check (at 10M it needs more memory than the
    # machine has); the follow's verdict stands alone.
    b_s=- b_kb=0
    echo '"valid?":skipped' >"$data/batch.out"
  else
    read -r b_s b_kb < <(timed "$data/batch.out" /dev/null "$isolde" analyze "$file" -m "$level" -f json)
  fi
  v_follow=$(tail -1 "$data/follow.out" | grep -o '"valid?":[a-z"]*' || true)
  v_batch=$(grep -o '"valid?": *[a-z"]*' "$data/batch.out" | tr -d ' ' || true)
  if [ "${BATCH:-1}" != 0 ] && [ "$v_follow" != "$v_batch" ] && ! { [ -z "$all" ] && [ "$v_follow" = '"valid?":"unknown"' ]; }; then
    echo "verdicts differ: follow $v_follow, batch $v_batch" >&2
    exit 1
  fi
  tps=$(awk -v n="$txns" -v s="$f_s" 'BEGIN { printf "%.0f", n / s }')
  echo "| $workload | $level | $txns | $f_s | $tps | $((f_kb / 1024)) | ${tenth:--} | ${last_mb:--} | ${held:-all} | $rounds | ${lag:--} | ${v_follow#\"valid?\":} | $b_s | $((b_kb / 1024)) | $gen_s |"
done
