#!/usr/bin/env bash
# Issue 17 measurements (docs/benchmarks.md, "Trees larger than memory (issue 17)"), without `mvn install`: builds
# the benchmarks module with the reactor, runs from copies of the reactor's target/classes (so a rebuild during the
# run cannot change the classes under the child JVMs) plus the third-party runtime classpath.
#   benchmarks/large-tree.sh harness --work /tmp/large-tree --records 2000000,100000,1000000 --stores lattice,rocksdb --heap 256m
#   benchmarks/large-tree.sh harness --work /tmp/large-tree-remote --records 200000 --stores postgres,dynamodb,azure-tables,azure-blob --heap 128m
#   benchmarks/large-tree.sh harness --work /tmp/large-tree-remote --records 200000 --stores dynamodb --partitions 1 --heap 128m
#     (remote stores: the harness starts the server on 127.0.0.1 through test-backends for each case; LARGE_TREE_CLASSES
#     sets another class-copy path for a second run beside a first)
#   benchmarks/large-tree.sh harness --work /tmp/large-tree --records 100000 --stores lattice,rocksdb --jfr /tmp/large-tree-jfr --open-only true
#     (--jfr: a JFR profile of each Lattice open; --open-only: no settle wait after the open's check)
#   benchmarks/large-tree.sh jfr-top /tmp/large-tree-jfr/*.jfr   (top frames of the execution samples)
#   benchmarks/large-tree.sh jmh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUN="${LARGE_TREE_CLASSES:-/tmp/lattice-large-tree-classes}"  # another path for a second run beside a first
. "$ROOT/benchmarks/lib-classpath.sh"
what="${1:-harness}"; shift || true
case "$what" in
  harness) exec java "${FLAGS[@]}" -Xmx128m -cp "$CP" dev.lattice.bench.lsm.LargeTreeHarness "$@" ;;
  jfr-top) exec java -cp "$CP" dev.lattice.bench.lsm.JfrTop "$@" ;;
  jmh) exec java "${FLAGS[@]}" -Xmx2g -cp "$CP" dev.lattice.bench.lsm.JmhTable "$@" ;;
  *) echo "usage: $0 harness|jfr-top|jmh [options]" >&2; exit 2 ;;
esac
