package dev.lattice.engine;

import dev.lattice.spi.ReplayCostModel;

/**
 * When a log checkpoints its partition (or, with runs, flushes its memtable): after {@code checkpointEveryEntries}
 * entries or {@code checkpointEveryBytes} payload bytes since the last one, when the provider's replay cost model
 * puts replaying that tail over {@code checkpointReplayBudget}, or when the memtable is full or a flush was asked
 * for.
 *
 * <p>Not thread-safe: the log's applier (the holder of its commit role) uses it.
 */
final class CheckpointPolicy {

    private final LatticeConfig config;
    private long entries;
    private long bytes;
    private long batches;

    /** @param entriesSince entries in the log after its last checkpoint (each counted as a batch: unknown) */
    CheckpointPolicy(LatticeConfig config, long entriesSince) {
        this.config = config;
        this.entries = Math.max(0, entriesSince);
        this.batches = this.entries;
    }

    /** A batch of {@code n} entries and {@code payloadBytes} bytes was applied. */
    void applied(int n, long payloadBytes) {
        entries += n;
        bytes += payloadBytes;
        batches++;
    }

    /** A checkpoint (or flush) was started: counting starts again. */
    void reset() {
        entries = 0;
        bytes = 0;
        batches = 0;
    }

    /**
     * @param replayCost the provider's replay cost model
     * @param memtableFull whether the memtable is over its size or a flush is due anyway
     * @return true when a checkpoint (or flush) is due
     */
    boolean due(ReplayCostModel replayCost, boolean memtableFull) {
        return entries >= config.checkpointEveryEntries || bytes >= config.checkpointEveryBytes
                || replayTooSlow(replayCost) || memtableFull;
    }

    /** True when the provider's replay cost model says replaying the tail since the checkpoint is over budget. */
    private boolean replayTooSlow(ReplayCostModel model) {
        return !model.isUnknown() && model.estimateMillis(batches, bytes) >= config.checkpointReplayBudget.toMillis();
    }

    /**
     * @param hasRuns whether the log flushes into runs
     * @param flushRequested whether a flush was asked for (the memory budget runs low)
     * @return true when the memtable is over its size, a flush was asked for, or a whole-partition checkpoint awaits
     *     conversion (also with an empty memtable: the task runs the compactions that are due)
     */
    boolean memtableFull(boolean hasRuns, boolean flushRequested, PartitionState state) {
        if (!hasRuns) {
            return false;
        }
        if (flushRequested || state.legacyCheckpointLoaded) {
            return true;
        }
        return state.memtableBytes >= config.memtableBytes;
    }
}
