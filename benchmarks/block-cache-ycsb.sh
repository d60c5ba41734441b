#!/usr/bin/env bash
# Issue 17: YCSB C and B at 16 threads on a data set larger than a 64 MiB block cache, Lattice (Chronicle) vs RocksDB
# (docs/benchmarks.md, "YCSB C and B, 2 GB, 64 MiB block cache"). Builds with the reactor (never `mvn install`) and
# runs from a copy of the classes, so a rebuild during the run cannot change them under the child JVMs.
#   benchmarks/block-cache-ycsb.sh --work /tmp/bcy --records 2000000 --operations 500000 --warmup 100000 --reps 2 --out /tmp/bcy.md
#   benchmarks/block-cache-ycsb.sh --work /tmp/bcy-small --records 100000 --operations 100000 --warmup 20000 --reps 1
# (about 2.2 GB per store under --work at 2M records; BLOCK_CACHE_YCSB_CLASSES sets another class-copy path)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUN="${BLOCK_CACHE_YCSB_CLASSES:-/tmp/lattice-block-cache-ycsb-classes}"
. "$ROOT/benchmarks/lib-classpath.sh"
exec java "${FLAGS[@]}" -Xmx256m -cp "$CP" dev.lattice.bench.ycsb.BlockCacheYcsb "$@"
