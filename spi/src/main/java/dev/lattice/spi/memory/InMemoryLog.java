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

    /**
     * A committed batch: its offsets, its id and its payloads (entry {@code i} at offset {@code first + i}), with the
     * bytes of all of them. {@link #accountedThrough} is the highest offset of it whose bytes a trim has already
     * given back (below {@code first} while none); written under the log's monitor before the batch is removed.
     */
    static final class CommittedBatch {
        final long first;
        final long last;
        final BatchId id;
        final List<byte[]> payloads;
        final long bytes;
        long accountedThrough;

        CommittedBatch(long first, long last, BatchId id, List<byte[]> payloads) {
            this.first = first;
            this.last = last;
            this.id = id;
            this.payloads = payloads;
            long sum = 0;
            for (int i = 0, n = payloads.size(); i < n; i++) {
                sum += payloads.get(i).length;
            }
            this.bytes = sum;
            this.accountedThrough = first - 1;
        }

        /** @return the bytes of its entries in {@code (accountedThrough, through]}; marks them given back */
        long account(long through) {
            long b = 0;
            long end = Math.min(through, last);
            for (long o = accountedThrough + 1; o <= end; o++) {
                b += payloads.get((int) (o - first)).length;
            }
            accountedThrough = Math.max(accountedThrough, end);
            return b;
        }
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
     * Committed batches by first offset (their entries with them: one map node per batch, not per entry).
     * Concurrent, so that a trim removes the trimmed head outside the log's monitor: readers skip everything at or
     * below {@link #trimWatermark}, which the trim raises first under the monitor.
     */
    final ConcurrentSkipListMap<Long, CommittedBatch> committedBatches = new ConcurrentSkipListMap<>();
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
        Map.Entry<Long, CommittedBatch> e = committedBatches.floorEntry(through);
        if (e != null && e.getValue().last > through) {
            CommittedBatch b = e.getValue();
            long before = b.accountedThrough;
            long bytes = b.account(through);
            retainedBytes = Math.max(0, retainedBytes - bytes);
            retainedEntries = Math.max(0, retainedEntries - (b.accountedThrough - before));
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
        Map.Entry<Long, CommittedBatch> e;
        while ((e = committedBatches.firstEntry()) != null && e.getValue().last <= through) {
            CommittedBatch b = e.getValue();
            if (committedBatches.remove(e.getKey(), b)) {
                long before = b.accountedThrough;
                bytes += b.account(b.last);
                count += b.last - before;
                if (count >= TRIM_ACCOUNT_EVERY) {
                    account(bytes, count);
                    bytes = 0;
                    count = 0;
                }
            }
        }
        account(bytes, count);
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
        Map.Entry<Long, CommittedBatch> e = committedBatches.floorEntry(lowest);
        if (e != null && e.getValue().last >= lowest) {
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
        staged.clear();
        runs.clear();
        checkpoints.clear();
    }

    boolean exists() {
        return epoch > droppedAtEpoch || tail >= 0 || !staged.isEmpty() || !checkpoints.isEmpty() || !runs.isEmpty();
    }
}
