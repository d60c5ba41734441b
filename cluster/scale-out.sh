#!/usr/bin/env bash
# Scale-out figures of the cluster (docs/cluster.md "Figures"): 1, 2 and 3 node JVMs, each in its own cgroup (v1 cpu
# controller, needs root) with a fixed CPU quota, on one embedded PostgreSQL. Builds with the reactor (never
# `mvn install`) and copies the classes out of target/ so a later build cannot change them under the running nodes.
# Usage: cluster/scale-out.sh [quotaPercent=40] [seconds=10] [threads=8] [warmupSeconds=30] [maxNodes=3] [periodMillis=100] [minNodes=1]
# LATTICE_SCALE_NODE_OPTS: more JVM options for every node ("{node}" becomes its name, e.g. -XX:StartFlightRecording:filename=/tmp/n{node}.jfr)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUN="${TMPDIR:-/tmp}/lattice-scale-out-classes"
# One reactor invocation with -am (a separate `-pl cluster dependency:build-classpath` would need the engine in ~/.m2).
mvn -B -ntp -o -q -pl cluster -am test-compile dependency:build-classpath -Dmaven.javadoc.skip=true \
  -Dmdep.outputFile="$RUN.cp" -Dmdep.includeScope=test
rm -rf "$RUN" && mkdir -p "$RUN"
CP="$RUN/cluster-tests"
cp -r cluster/target/test-classes "$RUN/cluster-tests"
for m in cluster engine spi provider-postgres testkit test-backends; do
  cp -r "$m/target/classes" "$RUN/$m"
  CP="$CP:$RUN/$m"
done
CP="$CP:$(tr ':' '\n' < "$RUN.cp" | grep -v -e '/dev/lattice/' -e "^$ROOT/" | paste -sd:)"
exec java -cp "$CP" dev.lattice.cluster.ScaleOutHarness "${1:-40}" "${2:-10}" "${3:-8}" "${4:-30}" "${5:-3}" "${6:-100}" "${7:-1}"
