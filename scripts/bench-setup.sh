#!/usr/bin/env bash
# Measures the README's set-up on a fresh clone: how long `cargo build
# --release`, compiling the tests, running them, and the README's example
# take, and what the example answers. The README's closing note quotes its
# output.
#
# It clones the current commit (HEAD) into a fresh directory outside this
# checkout (so ../shared is absent, as on a new machine, and the tests that
# need it skip), builds with an empty target directory (dependencies are
# compiled too; the crates themselves come from cargo's local cache), and
# prints a markdown table with the machine (CPU model, cores) it ran on.
#
# Environment overrides:
#   SETUP_DIR   where to clone (default: a new directory under ${TMPDIR:-/tmp})
#   SETUP_TEST  the test command (default "cargo test --release")
#
# Progress goes to stderr, the table to stdout. Exits non-zero if a step fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${SETUP_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/isolde-setup.XXXXXX")}"
test_cmd="${SETUP_TEST:-cargo test --release}"

log() { printf '%s\n' "$*" >&2; }

log "cloning $here (HEAD) into $dir/isolde"
git clone --quiet "$here" "$dir/isolde"
cd "$dir/isolde"
export CARGO_TARGET_DIR="$dir/isolde/target"

# Seconds (with a decimal) that a command takes; its output goes to stderr.
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >&2
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }'
}

log "== cargo build --release"
build=$(timed cargo build --release)
log "== $test_cmd --no-run (compiling the tests)"
# shellcheck disable=SC2086
compile=$(timed $test_cmd --no-run)
log "== $test_cmd (running them)"
# shellcheck disable=SC2086
run=$(timed $test_cmd)
log "== target/release/isolde analyze examples/sample.edn"
t0=$(date +%s.%N)
set +e
target/release/isolde analyze examples/sample.edn --format table >"$dir/example.txt"
code=$?
set -e
t1=$(date +%s.%N)
example=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
[[ $code -le 3 ]] || { log "bench-setup.sh: the example failed (exit $code)"; exit 1; }
verdict=$(sed -n 2p "$dir/example.txt")

cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
cores=$(nproc 2>/dev/null || echo '?')
echo "Measured by scripts/bench-setup.sh on $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $cores cores ($cpu), ../shared absent:"
echo
echo "| step | seconds |"
echo "|---|---|"
echo "| cargo build --release (fresh target, dependencies included) | $build |"
echo "| $test_cmd: compiling the tests | $compile |"
echo "| $test_cmd: running them | $run |"
echo "| example: isolde analyze examples/sample.edn | $example (exit $code, $verdict) |"
