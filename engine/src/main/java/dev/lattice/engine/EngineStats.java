package dev.lattice.engine;

import java.util.concurrent.atomic.LongAdder;

/** Engine-wide counters behind {@link LatticeStats}. Thread-safe. */
final class EngineStats {
    final LongAdder stageCalls = new LongAdder();
    final LongAdder commitCalls = new LongAdder();
    final LongAdder batchesCommitted = new LongAdder();
    final LongAdder entriesCommitted = new LongAdder();
    final LongAdder bytesCommitted = new LongAdder();
    final LongAdder retries = new LongAdder();
    final LongAdder failedBatches = new LongAdder();
    final LongAdder reconciles = new LongAdder();
    final LongAdder replayEntries = new LongAdder();
    final LongAdder replayBytes = new LongAdder();
    final LongAdder replayReadCalls = new LongAdder();
    final LongAdder replayNanos = new LongAdder();
    final LongAdder replayCheckpointBytes = new LongAdder();
    final LongAdder checkpoints = new LongAdder();
    final LongAdder checkpointBytes = new LongAdder();
    final LongAdder checkpointFailures = new LongAdder();
    final LongAdder trims = new LongAdder();
    final LongAdder flushes = new LongAdder();
    final LongAdder compactions = new LongAdder();
    final LongAdder runBytesWritten = new LongAdder();
    final LongAdder compactionBytesRead = new LongAdder();
    /** Levels counted apart in {@link #runBytesByLevel}; deeper levels count in the last. */
    static final int LEVELS = 8;
    /** Bytes of runs written into each level: 0 by flushes, {@code n >= 1} by compactions into level n. */
    final LongAdder[] runBytesByLevel = new LongAdder[LEVELS];
    /** Bytes of runs written by flushes (level 0; idle merges write level 0 too, counted as compactions). */
    final LongAdder flushBytesWritten = new LongAdder();

    EngineStats() {
        for (int i = 0; i < LEVELS; i++) {
            runBytesByLevel[i] = new LongAdder();
        }
    }

    /** Counts {@code bytes} of a run written into {@code level}. */
    void runWritten(int level, long bytes, boolean byFlush) {
        runBytesByLevel[Math.min(level, LEVELS - 1)].add(bytes);
        if (byFlush) {
            flushBytesWritten.add(bytes);
        }
    }

    LatticeStats snapshot() {
        return new LatticeStats(stageCalls.sum(), commitCalls.sum(), batchesCommitted.sum(), entriesCommitted.sum(),
                bytesCommitted.sum(), retries.sum(), failedBatches.sum(), reconciles.sum(), replayEntries.sum(),
                replayBytes.sum(), replayReadCalls.sum(), replayNanos.sum() / 1_000_000, replayCheckpointBytes.sum(),
                checkpoints.sum(), checkpointBytes.sum(), checkpointFailures.sum(), trims.sum(),
                flushes.sum(), compactions.sum(), runBytesWritten.sum(), compactionBytesRead.sum(),
                flushBytesWritten.sum(), runBytesWritten.sum() - flushBytesWritten.sum(), byLevel());
    }

    private java.util.List<Long> byLevel() {
        int last = 0;
        Long[] out = new Long[LEVELS];
        for (int i = 0; i < LEVELS; i++) {
            out[i] = runBytesByLevel[i].sum();
            if (out[i] > 0) {
                last = i;
            }
        }
        return java.util.List.of(java.util.Arrays.copyOf(out, last + 1));
    }
}
