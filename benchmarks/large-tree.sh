#!/usr/bin/env bash
# Issue 17 measurements (docs/benchmarks.md, "Trees larger than memory (issue 17)"), without `mvn install`: builds
# the benchmarks module with the reactor, runs from copies of the reactor's target/classes (so a rebuild during the
# run cannot change the classes under the child JVMs) plus the third-party runtime classpath.
#   benchmarks/large-tree.sh harness --work /tmp/large-tree --records 2000000,100000,1000000 --stores lattice,rocksdb --heap 256m
#   benchmarks/large-tree.sh jmh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUN=/tmp/lattice-large-tree-classes
mvn -B -ntp -o -q -pl benchmarks -am package -DskipTests -Dmaven.javadoc.skip=true
mvn -B -ntp -o -q -pl benchmarks dependency:build-classpath -Dmdep.outputFile="$RUN.cp" -Dmdep.includeScope=runtime
rm -rf "$RUN" && mkdir -p "$RUN"
CP=""
for m in benchmarks engine spi provider-local-chronicle provider-postgres provider-dynamodb provider-azure-tables \
         provider-azure-blob cli testkit test-backends; do
  cp -r "$m/target/classes" "$RUN/$m"
  CP="$CP:$RUN/$m"
done
CP="${CP#:}:$(tr ':' '\n' < "$RUN.cp" | grep -v '/dev/lattice/' | paste -sd:)"
FLAGS=(--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
       --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
       -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true -Djava.awt.headless=true)
what="${1:-harness}"; shift || true
case "$what" in
  harness) exec java "${FLAGS[@]}" -Xmx128m -cp "$CP" dev.lattice.bench.lsm.LargeTreeHarness "$@" ;;
  jmh) exec java "${FLAGS[@]}" -Xmx2g -cp "$CP" dev.lattice.bench.lsm.JmhTable "$@" ;;
  *) echo "usage: $0 harness|jmh [options]" >&2; exit 2 ;;
esac
