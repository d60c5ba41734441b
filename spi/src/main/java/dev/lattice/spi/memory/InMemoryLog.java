package dev.lattice.spi.memory;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.support.StagedBatchTable;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** One log's data in an {@link InMemoryStorage}. Guarded by its own monitor. */
final class InMemoryLog {

    record CommittedBatch(long first, long last, BatchId id) {
    }

    record Checkpoint(CheckpointInfo info, byte[] data) {
    }

    long epoch;
    /** The epoch at the last drop: fences up to it belong to the dropped log and are stale. */
    long droppedAtEpoch;
    long tail = -1;
    long trimWatermark = -1;
    /** Bytes and count of the entries above {@link #trimWatermark}; read and written under the log's monitor. */
    long retainedBytes;
    long retainedEntries;
    /**
     * Committed entries by offset. Concurrent, so that a trim removes the trimmed head outside the log's monitor:
     * readers skip everything at or below {@link #trimWatermark}, which the trim raises first under the monitor.
     */
    final ConcurrentSkipListMap<Long, byte[]> entries = new ConcurrentSkipListMap<>();
    /** Committed batches by first offset, trimmed like {@link #entries}; those at or below the watermark are gone. */
    final ConcurrentSkipListMap<Long, CommittedBatch> committedBatches = new ConcurrentSkipListMap<>();
    final StagedBatchTable<List<byte[]>> staged = new StagedBatchTable<>();
    /** Runs by id, each with the {@link dev.lattice.spi.RunInfo} computed once when it was written. */
    final TreeMap<String, InMemoryRunStore.StoredRun> runs = new TreeMap<>();
    final TreeMap<Long, Checkpoint> checkpoints = new TreeMap<>();

    /** Entries removed per visit of the monitor while a trim gives back their bytes. */
    private static final int TRIM_ACCOUNT_EVERY = 4096;

    /**
     * Removes the entries and committed batches at offsets up to {@code through} (inclusive), which a trim has already
     * hidden by raising {@link #trimWatermark} under the monitor. Called <em>without</em> the monitor: a trim after a
     * flush drops a whole memtable's log (hundreds of thousands of entries), and writers need the monitor for every
     * stage and commit, so it is taken only briefly, every {@value #TRIM_ACCOUNT_EVERY} entries, to give back their
     * bytes. Safe against concurrent trims and commits (each removed entry is accounted by the thread that removed it).
     */
    void removeTrimmed(long through) {
        long bytes = 0;
        long count = 0;
        Map.Entry<Long, byte[]> e;
        while ((e = entries.firstEntry()) != null && e.getKey() <= through) {
            if (entries.remove(e.getKey(), e.getValue())) {
                bytes += e.getValue().length;
                if (++count == TRIM_ACCOUNT_EVERY) {
                    account(bytes, count);
                    bytes = 0;
                    count = 0;
                }
            }
        }
        account(bytes, count);
        committedBatches.headMap(through, true).clear();
    }

    private void account(long bytes, long count) {
        if (count > 0) {
            synchronized (this) {
                retainedBytes = Math.max(0, retainedBytes - bytes); // a drop meanwhile already zeroed them
                retainedEntries = Math.max(0, retainedEntries - count);
            }
        }
    }

    /** @return the lowest retained offset, or {@code tail + 1} when none is; caller holds the monitor */
    long lowestRetained() {
        Long k = trimWatermark == Long.MAX_VALUE ? null : entries.ceilingKey(trimWatermark + 1);
        return k == null ? tail + 1 : k;
    }

    /** Forgets everything of the log but its epoch, which later claims continue above. */
    void drop() {
        droppedAtEpoch = epoch;
        tail = -1;
        trimWatermark = -1;
        retainedBytes = 0;
        retainedEntries = 0;
        entries.clear();
        committedBatches.clear();
        staged.clear();
        runs.clear();
        checkpoints.clear();
    }

    boolean exists() {
        return epoch > droppedAtEpoch || tail >= 0 || !staged.isEmpty() || !checkpoints.isEmpty() || !runs.isEmpty();
    }
}
