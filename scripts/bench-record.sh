#!/usr/bin/env bash
# Benchmarks `isolde record`, in two parts (BENCH_PART: levels, throughput,
# or both, the default):
#
# * levels: `isolde record` with its default options but --sessions 8 and
#   --txns 2000, for each backend, workload and isolation level: seconds,
#   outcomes and the share of failed transactions (a run is capped at
#   BENCH_LEVEL_CAP seconds, default 60, with --duration; a capped row
#   shows fewer than 2000 transactions);
# * throughput: transactions recorded per second per backend against a
#   plain client loop running the same transactions through the same
#   drivers and statements without recording (examples/record_bench.rs);
#   the last column is record / plain throughput.
#
# Servers: ISOLDE_POSTGRES_URL and ISOLDE_MYSQL_URL when set; otherwise
# scripts/dbs.sh starts its throwaway ones (ISOLDE_DBS_STOCK=1: with the
# distribution's default settings, as a user's server would be) and leaves
# them running; stop them with scripts/dbs.sh stop. SQLite always runs.
#
# Environment: BENCH_TXNS (20000), BENCH_SESSIONS (8), BENCH_WORKLOAD
# (list-append or rw-register) for the throughput part; BENCH_LEVEL_TXNS
# (2000), BENCH_LEVEL_CAP (60), BENCH_BACKENDS (sqlite,postgres,mysql) for
# the levels part.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

part=${BENCH_PART:-both}
if [ -z "${ISOLDE_POSTGRES_URL:-}${ISOLDE_MYSQL_URL:-}" ]; then
  urls=$(scripts/dbs.sh start) || echo "note: not every server started; benchmarking those that did" >&2
  while IFS= read -r line; do
    case "$line" in
      ISOLDE_POSTGRES_URL=* | ISOLDE_MYSQL_URL=*) export "${line?}" ;;
    esac
  done <<<"$urls"
fi
target=${CARGO_TARGET_DIR:-target}

levels() {
  cargo build --release >&2
  local isolde="$target/release/isolde" txns=${BENCH_LEVEL_TXNS:-2000} cap=${BENCH_LEVEL_CAP:-60}
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  echo "| backend | workload | level | txns | seconds | ok | fail | info | failed |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
  local backend url workload level
  for backend in ${BENCH_BACKENDS:-sqlite postgres mysql}; do
    case "$backend" in
      sqlite) url="" ;;
      postgres) url=${ISOLDE_POSTGRES_URL:-} ;;
      mysql) url=${ISOLDE_MYSQL_URL:-} ;;
      *) echo "unknown backend $backend" >&2; return 2 ;;
    esac
    if [ "$backend" != sqlite ] && [ -z "$url" ]; then
      echo "note: no $backend server; skipped" >&2
      continue
    fi
    for workload in list-append rw-register; do
      for level in read-committed repeatable-read serializable; do
        local db=()
        [ -n "$url" ] && db=(--db "$url")
        local line
        "$isolde" record --quiet "${db[@]}" --workload "$workload" --isolation "$level" --sessions 8 \
          --txns "$txns" --duration "$cap" -o "$tmp/h.edn" 2>"$tmp/err" || true
        line=$(grep 'isolde: recorded' "$tmp/err" || true)
        if [ -z "$line" ]; then
          echo "| $backend | $workload | $level | error: $(tail -1 "$tmp/err") | | | | | |"
          continue
        fi
        # isolde: recorded N transactions in S s (R/s) from DB: A ok, B fail, C info -> FILE
        echo "$line" | sed -E "s/.*recorded ([0-9]+) transactions in ([0-9.]+)s .*: ([0-9]+) ok, ([0-9]+) fail, ([0-9]+) info.*/\1 \2 \3 \4 \5/" |
          while read -r n s ok fail info; do
            awk -v b="$backend" -v w="$workload" -v l="$level" -v n="$n" -v s="$s" -v ok="$ok" -v f="$fail" -v i="$info" \
              'BEGIN { printf "| %s | %s | %s | %d | %.1f | %d | %d | %d | %.0f%% |\n", b, w, l, n, s, ok, f, i, (n ? 100 * f / n : 0) }'
          done
      done
    done
  done
}

throughput() {
  cargo build --release --example record_bench >&2
  "$target/release/examples/record_bench"
}

case "$part" in
  levels) levels ;;
  throughput) throughput ;;
  both) levels && throughput ;;
  *) echo "BENCH_PART must be levels, throughput or both" >&2; exit 2 ;;
esac
