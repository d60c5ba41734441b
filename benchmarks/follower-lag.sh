#!/usr/bin/env bash
# Follower lag (docs/benchmarks.md, "Read-only followers"): an owner writes at a steady rate, a read-only follower
# on its own provider instance reads each key as soon as it can; prints lag percentiles per provider and poll interval.
#   benchmarks/follower-lag.sh --providers chronicle,postgres --rate 500 --seconds 20 --polls 50,10
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUN=/tmp/lattice-follower-lag-classes
. "$ROOT/benchmarks/lib-classpath.sh"
exec java "${FLAGS[@]}" -Xmx1g -cp "$CP" dev.lattice.bench.follower.FollowerLagHarness "$@"
