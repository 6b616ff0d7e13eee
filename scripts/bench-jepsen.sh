#!/usr/bin/env bash
# isolde vs Porcupine on Porcupine's own Jepsen etcd logs
# (tests/data/jepsen/porcupine/jepsen/etcd_*.log, a cas-register each).
#
# Porcupine is built from its public source (github.com/anishathalye/porcupine,
# never vendored) at the commit PORCUPINE_COMMIT names: from PORCUPINE_SRC,
# a checkout used as it is, else cloned into bench-data/porcupine/src from
# PORCUPINE_GIT_DIR (a clone or mirror; default GitHub). isolde's driver,
# benches/porcupine/isolde_times_test.go, is copied into a scratch copy of
# that source and run with Debian's Go (`apt-get install -y golang-go` when
# `go` is missing) as a test of Porcupine's package, so that it times
# porcupine_test.go's own etcd model and log parser; isolde
# runs `analyze --workload cas-register --stats` over the same logs in one
# process. Both times are the check alone, parsing excluded, from one run.
# Prints one row per log (verdicts must agree with each other and with
# porcupine_test.go's), then the totals, the slowest log and the ratios.
#
#   scripts/bench-jepsen.sh [LOG...]
#
# Environment overrides:
#   PORCUPINE_SRC      a Porcupine checkout to build against, as it is
#   PORCUPINE_GIT_DIR  where to clone Porcupine from (a clone or mirror)
#   PORCUPINE_COMMIT   the commit to check out in the clone (default: the
#                      one docs/jepsen.md's figures were measured with)
#
# With --generated, instead: bank, counter, set and set-full on generated
# histories (`isolde gen`, two planted faults each), each checked by one
# `isolde analyze --workload W --stats -f json` run, timed whole (wall, CPU
# user + sys, peak RSS) under a 10 GiB address-space limit. Prints the load
# average, one row per workload, and whether every planted fault is
# reported; with --baseline BIN, BIN (an older isolde) runs the same
# histories in the same way and its row follows, with whether both result
# maps are identical.
#
#   scripts/bench-jepsen.sh --generated [--ops N] [--baseline BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}

generated() {
    local ops=1000000 baseline=""
    while [ $# -gt 0 ]; do
        case $1 in
            --ops) ops=$2; shift 2 ;;
            --baseline) baseline=$2; shift 2 ;;
            *) echo "unknown option $1" >&2; exit 2 ;;
        esac
    done
    cargo build --release --locked --bin isolde >&2
    local bin=$target/release/isolde
    tmp=$(mktemp -d) # global: the EXIT trap removes it
    trap 'rm -rf "$tmp"' EXIT
    "$bin" gen bank --ops "$ops" --inject negative-balance,wrong-total -o "$tmp/bank.edn" 2>"$tmp/bank.planted"
    "$bin" gen counter --ops "$ops" --inject wrong-total,stale-read -o "$tmp/counter.edn" 2>"$tmp/counter.planted"
    "$bin" gen set --ops "$ops" --inject lost-element,stale-read -o "$tmp/set.edn" 2>"$tmp/set.planted"
    echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
    local w file extra who b
    for w in bank counter set set-full; do
        file=$w extra=()
        [ "$w" = set-full ] && file=set extra=(--linearizable)
        for who in new ${baseline:+old}; do
            b=$bin
            [ "$who" = old ] && b=$baseline
            /usr/bin/time -f "%e %U %S %M" -o "$tmp/$w.$who.time" \
                prlimit --as=$((10 << 30)) -- "$b" analyze --workload "$w" "${extra[@]}" --stats -f json \
                "$tmp/$file.edn" >"$tmp/$w.$who.json" 2>"$tmp/$w.$who.err" || true
        done
    done
    echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 - "$tmp" "$ops" "$baseline" <<'PY'
import json, re, sys
tmp, ops, baseline = sys.argv[1], int(sys.argv[2]), sys.argv[3]
print(f"{ops} operations per history (2 op maps each)")
print(f"{'workload':<9} {'binary':<6} {'wall s':>7} {'user s':>7} {'sys s':>6} {'RSS MB':>7} {'read s':>7} {'check s':>7}  verdict  faults")
bad = 0
for w in ["bank", "counter", "set", "set-full"]:
    file = "set" if w == "set-full" else w
    planted = [(m.group(1), int(m.group(2))) for m in
               re.finditer(r"injected 1 x (\S+) \(op :index (\d+)\)", open(f"{tmp}/{file}.planted").read())]
    maps = {}
    for who in ["new"] + (["old"] if baseline else []):
        try:
            wall, user, sys_, rss = open(f"{tmp}/{w}.{who}.time").read().split()[-4:]
            r = json.load(open(f"{tmp}/{w}.{who}.json"))
        except (ValueError, OSError) as e:
            print(f"{w:<9} {who:<6} failed: {e}: {open(f'{tmp}/{w}.{who}.err').read()[-300:]}")
            bad += 1
            continue
        maps[who] = r
        t = re.search(r"read ([0-9.]+)s check ([0-9.]+)s", open(f"{tmp}/{w}.{who}.err").read())
        rd, ck = (float(t.group(1)), float(t.group(2))) if t else (float("nan"), float("nan"))
        text = json.dumps(r)
        if w == "bank":
            errs = r.get("errors", {})
            seen = [f for f, i in planted
                    if f'"index": {i}' in json.dumps(errs.get("negative-value" if f == "negative-balance" else "wrong-total", {}))]
        elif w == "counter":
            # Both faults are reads outside their bounds: one error each.
            seen = [f for f, _ in planted] if r.get("error-count") == len(planted) else []
        elif w == "set":
            seen = ["lost-element"] if r.get("lost-count") == 1 else []
        else:
            seen = (["lost-element"] if r.get("lost-count") == 1 else []) + (["stale-read"] if r.get("stale-count", 0) >= 1 else [])
        want = [f for f, _ in planted] if w != "set" else ["lost-element"]
        ok = sorted(seen) == sorted(want) and r.get("valid?") is False
        bad += not ok
        print(f"{w:<9} {who:<6} {float(wall):>7.2f} {float(user):>7.2f} {float(sys_):>6.2f} {int(rss) / 1024:>7.0f} "
              f"{rd:>7.3f} {ck:>7.3f}  {str(r.get('valid?')):<7}  {'all ' + str(len(want)) + ' reported' if ok else 'MISSED: ' + str(sorted(set(want) - set(seen)))}")
    if "old" in maps:
        same = maps["old"] == maps["new"]
        bad += not same
        print(f"{'':<9} result maps {'identical' if same else 'DIFFER'}")
sys.exit(1 if bad else 0)
PY
}
# The Porcupine checkout to build against (see the top): its path.
porcupine_source() {
    if [ -n "${PORCUPINE_SRC:-}" ]; then
        echo "== Porcupine from $PORCUPINE_SRC, as it is" >&2
        echo "$PORCUPINE_SRC"
        return
    fi
    local src=bench-data/porcupine/src
    local commit=${PORCUPINE_COMMIT:-55508eb201b314c218d7e8412c3ea4b9499a5f53}
    if [ ! -d "$src/.git" ]; then
        echo "== fetching Porcupine into $src" >&2
        mkdir -p bench-data/porcupine
        git clone --quiet "${PORCUPINE_GIT_DIR:-https://github.com/anishathalye/porcupine}" "$src"
    fi
    git -C "$src" checkout --quiet --detach "$commit"
    echo "== Porcupine $(git -C "$src" rev-parse --short HEAD)" >&2
    echo "$PWD/$src"
}

# Times Porcupine on the logs $3... with isolde's driver, run as a test of
# the Porcupine source at $1 (in a scratch copy, so that the source is left
# as it is), into $2 (an absolute path; see benches/porcupine).
time_porcupine() {
    local src=$1 out=$2
    shift 2
    local work
    work=$(mktemp -d)
    cp -r "$src/." "$work/"
    rm -rf "$work/.git"
    cp benches/porcupine/isolde_times_test.go "$work/"
    (cd "$work" && ISOLDE_LOGS="$(printf '%s\n' "$@")" ISOLDE_ROOT="$OLDPWD" ISOLDE_OUT="$out" \
        GOFLAGS=-mod=mod GOPROXY=off go test -count=1 -run '^TestIsoldeTimes$' . >&2)
    rm -rf "$work"
}

if [ "${1:-}" = --generated ]; then
    shift
    generated "$@"
    exit
fi
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
porcupine=$(porcupine_source)
cargo build --release --locked --bin isolde >&2
time_porcupine "$porcupine" "$tmp/porcupine.tsv" "${logs[@]}"
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
