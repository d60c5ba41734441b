#!/usr/bin/env bash
# Point gets of an in-memory-sized tree against a bare ConcurrentSkipListMap, same JVM, alternating rounds
# (dev.lattice.bench.lsm.GetRatioProbe), for the working tree and for older commits, taking turns so a noisy machine
# affects each alike (docs/benchmarks.md, "JMH on an in-memory-sized tree, after issue 17").
#   benchmarks/get-ratio.sh [--reps 3] [--rounds 16] [--ms 250] work 86d0a5f ...
# work = this checkout; a commit is built in a git worktree under /tmp/lattice-get-ratio (the probe, compiled from
# this checkout, uses only the public API and Workload, so it runs on engines from before issue 17).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
SCRATCH=/tmp/lattice-get-ratio
reps=3; rounds=16; ms=250; labels=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --ms) ms="$2"; shift 2 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) labels+=("$1"); shift ;;
  esac
done
[ ${#labels[@]} -gt 0 ] || { echo "usage: $0 [--reps N] [--rounds N] [--ms N] work|<commit> ..." >&2; exit 2; }
mkdir -p "$SCRATCH"
PROBE="$ROOT/benchmarks/src/main/java/dev/lattice/bench/lsm/GetRatioProbe.java"
for l in "${labels[@]}"; do
  src="$ROOT"
  if [ "$l" != work ]; then
    src="$SCRATCH/src-$l"
    [ -d "$src" ] || git -C "$ROOT" worktree add -f -q --detach "$src" "$l"
  fi
  # the shared build-and-copy step, run in the commit's tree (older trees lack some modules: only these three)
  (cd "$src" && ROOT="$src" RUN="$SCRATCH/$l" MODULES="benchmarks engine spi" && . "$HERE/lib-classpath.sh" \
      && echo "$CP" > "$SCRATCH/$l.cpline")
  CP="$(cat "$SCRATCH/$l.cpline")"
  mkdir -p "$SCRATCH/$l/probe"
  javac -nowarn -d "$SCRATCH/$l/probe" -cp "$CP" "$PROBE"
  echo "$SCRATCH/$l/probe:$CP" > "$SCRATCH/$l.run"
done
for r in $(seq 1 "$reps"); do
  for l in "${labels[@]}"; do
    for values in shared copies; do
      printf '%s rep %s: ' "$l" "$r"
      java -Xmx2g -cp "$(cat "$SCRATCH/$l.run")" dev.lattice.bench.lsm.GetRatioProbe "$rounds" "$ms" "$values" \
        2>/dev/null | tail -1
    done
  done
done
