#!/usr/bin/env bash
# Benchmarks `isolde record`: transactions recorded per second per backend
# (SQLite, and PostgreSQL and MariaDB when scripts/dbs.sh can start them),
# against a plain client loop running the same transactions through the same
# drivers and statements without recording (examples/record_bench.rs).
# Prints a markdown table; the last column is record / plain throughput.
#
# Environment: BENCH_TXNS (20000), BENCH_SESSIONS (8), BENCH_WORKLOAD
# (list-append or rw-register). Leaves the servers running; stop them with
# scripts/dbs.sh stop.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

urls=$(scripts/dbs.sh start) || echo "note: not every server started; benchmarking those that did" >&2
while IFS= read -r line; do
  case "$line" in
    ISOLDE_POSTGRES_URL=* | ISOLDE_MYSQL_URL=*) export "${line?}" ;;
  esac
done <<<"$urls"
cargo build --release --example record_bench >&2
target/release/examples/record_bench
