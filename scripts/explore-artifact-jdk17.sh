#!/usr/bin/env bash
# Build the PLDI'23 artifact (Transactional JPF, github:Galieve/transactional-jpf) on JDK 17 by porting it onto
# jpf-core's java-17 branch, and run one TPC-C client program with it (docs/explore-artifact.md explains why and how).
#
# Usage: scripts/explore-artifact-jdk17.sh ARTIFACT_GIT_DIR JPF_CORE_GIT_DIR WORK_DIR [--fix]
#        scripts/explore-artifact-jdk17.sh run WORK_DIR CASE_DIR LEVEL
#
#   ARTIFACT_GIT_DIR  a clone (bare or not) of github:Galieve/transactional-jpf (translated from commit b532f09)
#   JPF_CORE_GIT_DIR  a clone of github:javapathfinder/jpf-core with its java-17 branch
#   WORK_DIR          where the port is assembled and built (created; must not exist)
#   --fix             also apply the fix of the artifact's swap check (docs/explore-artifact.md)
#   CASE_DIR          a directory of thread*.in client files, e.g. WORK_DIR/src/benchmarks/tpcc/application-scalability/case4
#   LEVEL             CausalHistory, SnapshotIsolationHistory or SerializableHistory
#
# The run prints the report's "transactional: histories=N,swaps=M" line.
set -euo pipefail

die() { echo "explore-artifact-jdk17: $*" >&2; exit 2; }

if [[ ${1:-} == run ]]; then
  [[ $# -eq 4 ]] || die "usage: $0 run WORK_DIR CASE_DIR LEVEL"
  work=$2 case_dir=$(cd "$3" && pwd) level=$4
  cd "$work"
  db=src/benchmarks/tpcc/database
  out=$(mktemp -d)
  java -Xmx1500m -jar build/RunJPF.jar +db.database_true_isolation_level.class=country.lab.histories."$level" \
    +report.console.file-folder="$out/" benchmarks.tpcc.BigTestTPCC \
    -d $db/districts.in -n $db/neworder.in -i $db/item.in -w $db/warehouse.in -s $db/stock.in -l $db/orderline.in \
    -c $db/customer.in -o $db/order.in "$case_dir"/thread*.in > "$out/log" 2>&1 || { tail -20 "$out/log"; die "run failed"; }
  grep -h "transactional:\|elapsed" "$out"/*.out
  exit 0
fi

[[ $# -eq 3 || ( $# -eq 4 && ${4:-} == --fix ) ]] || die "usage: $0 ARTIFACT_GIT_DIR JPF_CORE_GIT_DIR WORK_DIR [--fix]"
art=$1 core=$2 work=$3 fix=${4:-}
[[ -e $work ]] && die "$work exists"
mkdir -p "$work"
work=$(cd "$work" && pwd)
tmp=$(mktemp -d)

git --git-dir="$core" archive java-17 | tar x -C "$work"
git --git-dir="$art" archive HEAD | tar x -C "$tmp"

# The artifact's changes to jpf-core (it forked java-10-gradle at a992619): 7 files, applied to java-17. The
# whitespace-only hunk of Search.java does not apply; the debug print in executeInstructionHidden is left out.
git --git-dir="$art" diff a992619 HEAD -- src/main/gov src/peers src/classes src/annotations |
  (cd "$work" && patch -p1 --no-backup-if-mismatch -r - >/dev/null || true)
grep -q "protected int ret" "$work/src/main/gov/nasa/jpf/jvm/bytecode/ARETURN.java" || die "core patch did not apply"
grep -q "setLastInstructionTransactional(false)" "$work/src/main/gov/nasa/jpf/vm/ThreadInfo.java" || die "core patch did not apply"
sed -i '/Hi! I.m hidden/d' "$work/src/main/gov/nasa/jpf/vm/ThreadInfo.java"

cp -r "$tmp/src/main/country" "$work/src/main/"
rm -rf "$work/src/examples" && cp -r "$tmp/src/examples" "$work/src/"
cp -r "$tmp/src/benchmarks" "$work/src/"
cp -r "$tmp/lib" "$work/"
cp "$tmp/jpf.properties" "$work/jpf.properties"
rm -rf "$tmp"

if [[ $fix == --fix ]]; then
  f=$work/src/main/country/lab/database/TrDatabase.java
  grep -q "addCausalEventInHistory(h, evI, translator, abortedR)" "$f" || die "fix: TrDatabase.nextSwap not as expected"
  sed -i 's/addCausalEventInHistory(h, evI, translator, abortedR)/addCausalEventInHistory(h, evI, translator, false)/;
          s/addCausalEventInHistory(h, evI, translator, aborted)/addCausalEventInHistory(h, evI, translator, false)/' "$f"
fi

cd "$work"
b=build
mkdir -p $b/annotations $b/main $b/peers $b/classes $b/examples
libs=lib/cloning-1.10.3.jar:lib/objenesis-3.0.1.jar
jc() { # javac, quiet unless it reports an error (JDK-internal API warnings cannot be turned off)
  local log
  log=$(javac -g -nowarn -encoding UTF-8 -J-Xmx1g "$@" 2>&1) || true
  if grep -q 'error:' <<<"$log"; then echo "$log" | grep -A3 'error:' | head -40 >&2; fi
}
mods="--patch-module java.base=src/classes/modules/java.base --patch-module java.logging=src/classes/modules/java.logging
      --patch-module java.xml=src/classes/modules/java.xml --add-exports java.base/sun.net.www.protocol.http=ALL-UNNAMED
      --add-reads java.base=ALL-UNNAMED"
jc -d $b/annotations $(find src/annotations -name '*.java')
jc -cp $b/annotations:$libs -d $b/main $(find src/main -name '*.java')
jc -cp $b/main:$b/annotations:$libs --add-exports java.base/jdk.internal.access=ALL-UNNAMED \
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -d $b/peers $(find src/peers -name '*.java')
# shellcheck disable=SC2086
jc -cp $b/main:$b/annotations:$libs $mods -d $b/classes $(find src/classes/gov src/classes/org -name '*.java')
# shellcheck disable=SC2086
jc -cp $b/annotations:$b/classes:$b/main --module-source-path src/classes/modules $mods -d $b/classes/modules \
  $(find src/classes/modules -name '*.java')
# -g matters here: TRINVOKEVIRTUAL reads APIDatabase's arguments from the local variable table.
jc -cp $b/main:$b/annotations:$libs -d $b/examples $(find src/examples -name '*.java')
[[ -f $b/main/country/lab/database/TrDatabase.class && -f $b/examples/benchmarks/tpcc/BigTestTPCC.class ]] ||
  die "build failed"

cp lib/*.jar $b/
cd $b
jar cf jpf-annotations.jar -C annotations .
mkdir -p jc && cp -r classes/. annotations/. jc/
(cd main && cp --parents gov/nasa/jpf/JPFShell.class gov/nasa/jpf/vm/Verify.class gov/nasa/jpf/util/TypeRef.class ../jc/)
jar cf jpf-classes.jar -C jc .
mkdir -p jj && cp -r main/. peers/. annotations/. jj/
jar cf jpf.jar -C jj .
mkdir -p rj
(cd main && cp --parents gov/nasa/jpf/tool/Run.class gov/nasa/jpf/tool/RunJPF.class gov/nasa/jpf/Config.class \
  gov/nasa/jpf/ConfigChangeListener.class 'gov/nasa/jpf/Config$MissingRequiredKeyException.class' \
  gov/nasa/jpf/JPFClassLoader.class gov/nasa/jpf/JPFShell.class gov/nasa/jpf/JPFException.class \
  gov/nasa/jpf/JPFConfigException.class gov/nasa/jpf/util/JPFSiteUtils.class gov/nasa/jpf/util/FileUtils.class \
  gov/nasa/jpf/util/StringMatcher.class gov/nasa/jpf/util/Pair.class ../rj/)
printf 'Main-Class: gov.nasa.jpf.tool.RunJPF\nClass-Path: %s/lib/cloning-1.10.3.jar %s/lib/objenesis-3.0.1.jar\n' \
  "$work" "$work" > manifest.txt
jar cfm RunJPF.jar manifest.txt -C rj .
echo "built $work${fix:+ (with the fix)}; run: $0 run $work $work/src/benchmarks/tpcc/application-scalability/case4 CausalHistory"
