#!/usr/bin/env bash
# Regenerates every benchmark table and chart: YCSB A-F and the RocksDB peer comparison, YCSB on every provider
# with its local server, the JMH suite, then the atomic-write JMH run and the atomic-write harness on Chronicle.
# Small scale (default) finishes in under 10 minutes on a 2-core machine; --full runs the full scale (100k-record
# YCSB, 3 repeats, longer JMH). Recovery uses 1M records at both scales. Charts go to docs/img/, tables to benchmarks/target/results/ and
# between the generated:* markers of docs/benchmarks.md. Further options go to
# dev.lattice.bench.RunAll (--only ycsb,direct,recovery,providers,jmh,atomic-jmh,atomic-chronicle; peer = the first
# three, atomic = the last two; --recovery-records N, --work DIR).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Built with -am from this checkout (never `mvn install`: ~/.m2 may hold an older engine, or none on a fresh machine).
echo "run-all: building lattice-benchmarks (mvn -B -q -pl benchmarks -am package -DskipTests)" >&2
mvn -B -q -ntp -pl benchmarks -am package dependency:build-classpath -DskipTests -Dmaven.javadoc.skip=true \
  -Dmdep.outputFile="$ROOT/benchmarks/target/classpath.txt" -Dmdep.includeScope=runtime 2>&1 \
  | sed -e 's/\x1b\[[0-9;]*m//g' -e '/^[[:space:]]*$/d' >&2

JAVA="java"
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
  JAVA="$JAVA_HOME/bin/java"
fi
# Chronicle Queue 2026.4 on Java 17+ (see README.md, "JVM flags").
FLAGS=(--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
       --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
       -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true -Djava.awt.headless=true)
FEATURE="$("$JAVA" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
if [ -n "$FEATURE" ] && [ "$FEATURE" -ge 24 ] 2>/dev/null; then
  FLAGS+=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow)
fi
# Run from a copy of the jar, so that rebuilding the module during a run cannot change the classes under JMH's forks.
RUN_DIR="benchmarks/target/run-all"
mkdir -p "$RUN_DIR"
cp benchmarks/target/lattice-benchmarks-*-SNAPSHOT.jar "$RUN_DIR/lattice-benchmarks.jar"
# The same for this reactor's own jars on the classpath (engine, providers): copies, not target/ paths.
CP=""
while IFS= read -r entry; do
  if [[ "$entry" == "$ROOT"/* ]]; then
    cp "$entry" "$RUN_DIR/$(basename "$entry")"
    entry="$RUN_DIR/$(basename "$entry")"
  fi
  CP="$CP:$entry"
done < <(tr ':' '\n' < benchmarks/target/classpath.txt | grep -v '^$')
# shellcheck disable=SC2086
exec "$JAVA" "${FLAGS[@]}" -Xmx6g ${BENCH_JAVA_OPTS:-} \
  -cp "$RUN_DIR/lattice-benchmarks.jar$CP" dev.lattice.bench.RunAll "$@"
