#!/usr/bin/env bash
# One check on one process and on several, side by side (docs/distributed.md).
#
#   TXNS=22000000 PROCS=3 THREADS=1 scripts/bench-distributed.sh
#
# Generates an Elle-shaped list-append history of TXNS transactions (once,
# under $DATA), checks it with `isolde analyze` on one process and with
# `--local-processes PROCS --threads THREADS`, and prints for each the wall
# time and peak memory (the largest process's, from --stats), the bytes
# exchanged per transaction, and whether the two result maps agree (the
# verdict, anomaly types, every case in a canonical order, :not/:also-not).
# SINGLE=0 skips the single-process run (when it would not fit).
set -euo pipefail
cd "$(dirname "$0")/.."
TXNS=${TXNS:-22000000}
PROCS=${PROCS:-3}
THREADS=${THREADS:-1}
SINGLE=${SINGLE:-1}
BIN=${BIN:-target/release/isolde}
DATA=${DATA:-bench-data}
mkdir -p "$DATA"
H="$DATA/list-append-$TXNS.edn"
if [ ! -s "$H" ]; then
  echo "generating $H" >&2
  "$BIN" gen list-append --txns "$TXNS" -o "$H"
fi
echo "history: $H, $(du -h "$H" | cut -f1), $TXNS transactions"

run() { # name, args...
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$DATA/$name.rss" "$BIN" analyze "$H" -f json --all-anomalies --stats "$@" \
    >"$DATA/$name.json" 2>"$DATA/$name.err" || true
  t1=$(date +%s.%N)
  printf '%s: %.1f s, peak %s MB (this process)\n' "$name" "$(echo "$t1 - $t0" | bc)" \
    "$(($(tail -1 "$DATA/$name.rss") / 1024))"
}

if [ "$SINGLE" = 1 ]; then
  run single
fi
run distributed --local-processes "$PROCS" --threads "$THREADS"
grep -E '^process |^distributed:' "$DATA/distributed.err" || cat "$DATA/distributed.err"

if [ "$SINGLE" = 1 ]; then
  python3 - "$DATA/single.json" "$DATA/distributed.json" <<'EOF'
import json, sys
def canon(path):
    d = json.load(open(path))
    d.pop('levels', None)
    for k, cases in d.get('anomalies', {}).items():
        cases.sort(key=lambda c: json.dumps(c, sort_keys=True))
    return d
a, b = canon(sys.argv[1]), canon(sys.argv[2])
print('result maps:', 'identical' if a == b else 'DIFFERENT', '| valid?', a.get('valid?'), b.get('valid?'))
sys.exit(0 if a == b else 1)
EOF
fi
