package dev.lattice.spi.memory;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.support.StagedBatchTable;
import dev.lattice.spi.support.StagedBatchTable.Staged;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** One log's data in an {@link InMemoryStorage}. Guarded by its own monitor. */
final class InMemoryLog {

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
     * Committed batches by first offset, kept as they were staged (their entries with them: one map node per batch,
     * not per entry). Concurrent, so that a trim removes the trimmed head outside the log's monitor: readers skip
     * everything at or below {@link #trimWatermark}, which the trim raises first under the monitor.
     */
    final ConcurrentSkipListMap<Long, Staged<List<byte[]>>> committedBatches = new ConcurrentSkipListMap<>();
    /**
     * Batches a trim fell inside, by first offset: the last offset of each whose bytes were already given back
     * (written under the monitor; removed with the batch).
     */
    private final ConcurrentHashMap<Long, long[]> partlyTrimmed = new ConcurrentHashMap<>();
    final StagedBatchTable<List<byte[]>> staged = new StagedBatchTable<>();
    /** Runs by id, each with the {@link dev.lattice.spi.RunInfo} computed once when it was written. */
    final TreeMap<String, InMemoryRunStore.StoredRun> runs = new TreeMap<>();
    final TreeMap<Long, Checkpoint> checkpoints = new TreeMap<>();

    /** Entries removed per visit of the monitor while a trim gives back their bytes. */
    private static final int TRIM_ACCOUNT_EVERY = 4096;

    /**
     * Under the monitor, as a trim through {@code through} raises the watermark: gives back the bytes of the entries
     * at or below it in the batch that straddles it (the batch stays: it holds retained entries too).
     */
    void accountStraddling(long through) {
        Map.Entry<Long, Staged<List<byte[]>>> e = committedBatches.floorEntry(through);
        if (e != null && e.getValue().lastOffset() > through) {
            Staged<List<byte[]>> b = e.getValue();
            long[] done = partlyTrimmed.computeIfAbsent(b.firstOffset(), k -> new long[] {k - 1});
            retainedBytes = Math.max(0, retainedBytes - bytes(b, done[0] + 1, through));
            retainedEntries = Math.max(0, retainedEntries - (through - done[0]));
            done[0] = through;
        }
    }

    /**
     * Removes the committed batches that end at or below {@code through} (inclusive), which a trim has already
     * hidden by raising {@link #trimWatermark} under the monitor (and accounted the batch straddling it, see
     * {@link #accountStraddling}). Called <em>without</em> the monitor: a trim after a flush drops a whole memtable's
     * log (hundreds of thousands of entries), and writers need the monitor for every stage and commit, so it is
     * taken only briefly, every {@value #TRIM_ACCOUNT_EVERY} entries, to give back their bytes. Safe against
     * concurrent trims and commits: each removed batch is accounted by the thread that removed it, and a batch's
     * partial accounting happened under the monitor before any trim that can remove it raised the watermark.
     */
    void removeTrimmed(long through) {
        long bytes = 0;
        long count = 0;
        Map.Entry<Long, Staged<List<byte[]>>> e;
        while ((e = committedBatches.firstEntry()) != null && e.getValue().lastOffset() <= through) {
            Staged<List<byte[]>> b = e.getValue();
            if (committedBatches.remove(e.getKey(), b)) {
                long[] done = partlyTrimmed.isEmpty() ? null : partlyTrimmed.remove(b.firstOffset());
                long from = done == null ? b.firstOffset() : done[0] + 1;
                bytes += bytes(b, from, b.lastOffset());
                count += b.lastOffset() - from + 1;
                if (count >= TRIM_ACCOUNT_EVERY) {
                    account(bytes, count);
                    bytes = 0;
                    count = 0;
                }
            }
        }
        account(bytes, count);
    }

    /** @return the payload bytes of a batch's entries at offsets {@code from..to} (inclusive) */
    static long bytes(Staged<List<byte[]>> b, long from, long to) {
        long sum = 0;
        for (long o = from; o <= to; o++) {
            sum += b.payload().get((int) (o - b.firstOffset())).length;
        }
        return sum;
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
        if (trimWatermark == Long.MAX_VALUE) {
            return tail + 1;
        }
        long lowest = trimWatermark + 1;
        Map.Entry<Long, Staged<List<byte[]>>> e = committedBatches.floorEntry(lowest);
        if (e != null && e.getValue().lastOffset() >= lowest) {
            return lowest;
        }
        Long k = committedBatches.ceilingKey(lowest);
        return k == null ? tail + 1 : k;
    }

    /** Forgets everything of the log but its epoch, which later claims continue above. */
    void drop() {
        droppedAtEpoch = epoch;
        tail = -1;
        trimWatermark = -1;
        retainedBytes = 0;
        retainedEntries = 0;
        committedBatches.clear();
        partlyTrimmed.clear();
        staged.clear();
        runs.clear();
        checkpoints.clear();
    }

    boolean exists() {
        return epoch > droppedAtEpoch || tail >= 0 || !staged.isEmpty() || !checkpoints.isEmpty() || !runs.isEmpty();
    }
}
