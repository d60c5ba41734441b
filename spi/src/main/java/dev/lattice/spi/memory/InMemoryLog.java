package dev.lattice.spi.memory;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.support.StagedBatchTable;

import java.util.List;
import java.util.TreeMap;

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
    long retainedBytes;
    /** Replaced (not cleared) by {@link #trimThrough} when most of it is trimmed; read it under the log's monitor. */
    TreeMap<Long, byte[]> entries = new TreeMap<>();
    /** Replaced like {@link #entries}. */
    TreeMap<Long, CommittedBatch> committedBatches = new TreeMap<>();
    final StagedBatchTable<List<byte[]>> staged = new StagedBatchTable<>();
    final TreeMap<String, byte[]> runs = new TreeMap<>();
    final TreeMap<Long, Checkpoint> checkpoints = new TreeMap<>();

    /**
     * Drops the entries and committed batches at offsets up to {@code through} (inclusive), in time proportional to
     * the smaller of the part dropped and the part kept: a trim after a flush drops a whole memtable's log (hundreds
     * of thousands of entries) while writers wait for this log's monitor, so the few entries after it are copied into
     * new maps instead of the many before it being removed one by one. Caller holds the monitor.
     */
    void trimThrough(long through) {
        if (entries.isEmpty()) {
            committedBatches.headMap(through, true).clear();
            return;
        }
        long dropped = through - entries.firstKey() + 1;
        long kept = entries.lastKey() - through;
        if (kept < dropped) {
            TreeMap<Long, byte[]> tailEntries = new TreeMap<>(entries.tailMap(through, false));
            long bytes = 0;
            for (byte[] e : tailEntries.values()) {
                bytes += e.length;
            }
            entries = tailEntries;
            retainedBytes = bytes;
            committedBatches = new TreeMap<>(committedBatches.tailMap(through, false));
        } else {
            java.util.Iterator<java.util.Map.Entry<Long, byte[]>> it =
                    entries.headMap(through, true).entrySet().iterator();
            while (it.hasNext()) {
                retainedBytes -= it.next().getValue().length;
                it.remove();
            }
            committedBatches.headMap(through, true).clear();
        }
    }

    /** Forgets everything of the log but its epoch, which later claims continue above. */
    void drop() {
        droppedAtEpoch = epoch;
        tail = -1;
        trimWatermark = -1;
        retainedBytes = 0;
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
