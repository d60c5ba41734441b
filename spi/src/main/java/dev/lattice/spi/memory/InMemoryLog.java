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
    final TreeMap<Long, byte[]> entries = new TreeMap<>();
    final TreeMap<Long, CommittedBatch> committedBatches = new TreeMap<>();
    final StagedBatchTable<List<byte[]>> staged = new StagedBatchTable<>();
    final TreeMap<String, byte[]> runs = new TreeMap<>();
    final TreeMap<Long, Checkpoint> checkpoints = new TreeMap<>();

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
