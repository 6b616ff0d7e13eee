#!/usr/bin/env bash
# isolde vs Porcupine on Porcupine's own Jepsen etcd logs
# (tests/data/jepsen/porcupine/jepsen/etcd_*.log, a cas-register each).
#
# Porcupine (vendored in benches/porcupine, MIT) is built with Debian's Go
# (`apt-get install -y golang-go` when `go` is missing) and run through a
# small driver with porcupine_test.go's etcd model and log parser; isolde
# runs `analyze --workload cas-register --stats` over the same logs in one
# process. Both times are the check alone, parsing excluded, from one run.
# Prints one row per log (verdicts must agree with each other and with
# porcupine_test.go's), then the totals, the slowest log and the ratios.
#
#   scripts/bench-jepsen.sh [LOG...]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
data=tests/data/jepsen/porcupine
logs=("$@")
# By default the logs porcupine_test.go gives a verdict for (etcd_095.log,
# an empty file, has none).
if [ ${#logs[@]} -eq 0 ]; then
    while IFS=', ' read -r n _; do
        case $n in '#'* | '') continue ;; esac
        logs+=("$(printf '%s/jepsen/etcd_%03d.log' "$data" "$n")")
    done <"$data/etcd_verdicts.txt"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v go >/dev/null; then
    echo "go not found: installing Debian's golang-go" >&2
    apt-get install -y golang-go >/dev/null
fi
cargo build --release --locked --bin isolde >&2
(cd benches/porcupine && GOFLAGS=-mod=mod GOPROXY=off go build -o "$tmp/porcupine-driver" ./driver)

"$tmp/porcupine-driver" "${logs[@]}" >"$tmp/porcupine.tsv"
"$target/release/isolde" analyze --workload cas-register --stats -f json "${logs[@]}" \
    >"$tmp/isolde.jsonl" 2>"$tmp/isolde.err" || true
# file <TAB> isolde valid?
python3 - "$tmp" "$data/etcd_verdicts.txt" <<'PY'
import json, re, sys
tmp, verdicts = sys.argv[1], sys.argv[2]
want = {}
for line in open(verdicts):
    if line.startswith("#") or not line.strip():
        continue
    n, v = [x.strip() for x in line.split(",")]
    want["etcd_%03d.log" % int(n)] = v == "true"
por = {}
for line in open(f"{tmp}/porcupine.tsv"):
    f, ok, t = line.rstrip("\n").split("\t")
    por[f] = (ok == "true", float(t))
iso_t = {}
for line in open(f"{tmp}/isolde.err"):
    m = re.match(r"^(.*): read ([0-9.]+)s check ([0-9.]+)s$", line.strip())
    if m:
        iso_t[m.group(1)] = float(m.group(3))
iso_v = {}
for line in open(f"{tmp}/isolde.jsonl"):
    r = json.loads(line)
    iso_v[r["file"]] = r.get("valid?")
print(f"{'log':<16} {'ops':>6} {'porcupine s':>12} {'isolde s':>10} {'ratio':>7}  verdict")
tp = ti = 0.0
bad = 0
slow = None
for f in sorted(por):
    name = f.rsplit("/", 1)[-1]
    pv, pt = por[f]
    iv, it = iso_v.get(f), iso_t.get(f)
    ops = sum(1 for l in open(f) if ":invoke" in l)
    agree = iv == pv and (name not in want or want[name] == pv)
    bad += not agree
    tp += pt
    ti += it if it is not None else float("nan")
    if slow is None or pt > por[slow][1]:
        slow = f
    ratio = pt / it if it else float("inf")
    print(f"{name:<16} {ops:>6} {pt:>12.6f} {it if it is not None else float('nan'):>10.6f} {ratio:>7.1f}  "
          f"{'valid' if pv else 'invalid'}{'' if agree else '  MISMATCH isolde=' + str(iv)}")
print()
print(f"total: porcupine {tp:.3f} s, isolde {ti:.3f} s, ratio {tp / ti:.1f}x")
sp, si = por[slow][1], iso_t[slow]
print(f"slowest for porcupine: {slow.rsplit('/', 1)[-1]}: porcupine {sp:.3f} s, isolde {si:.3f} s, ratio {sp / si:.1f}x")
undecided = sum(1 for f in por if iso_v.get(f) not in (True, False))
print(f"logs: {len(por)}, verdict mismatches: {bad}, undecided by isolde: {undecided}")
sys.exit(1 if bad or undecided else 0)
PY
