package dev.lattice.spi;

import java.util.Objects;

/**
 * Receipt for a batch staged by {@link WalStorageProvider#stage(LogId, Fence, EncodedBatch)}: durable (unless the
 * provider declares {@link ProviderFeature#DEFERRED_STAGE}) but invisible until committed.
 *
 * <p>Immutable and thread-safe.
 *
 * @param log the log the batch was staged on
 * @param epoch the epoch of the fence used to stage it
 * @param firstOffset offset of the first entry (inclusive)
 * @param lastOffset offset of the last entry (inclusive)
 * @param batchId the batch id
 */
public record StagedBatch(LogId log, long epoch, long firstOffset, long lastOffset, BatchId batchId) {

    /**
     * Creates a receipt.
     *
     * @param log the log the batch was staged on
     * @param epoch the epoch of the fence used to stage it
     * @param firstOffset offset of the first entry (inclusive)
     * @param lastOffset offset of the last entry (inclusive)
     * @param batchId the batch id
     * @throws NullPointerException if {@code log} or {@code batchId} is null
     * @throws IllegalArgumentException if {@code firstOffset < 0} or {@code lastOffset < firstOffset}
     */
    public StagedBatch {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(batchId, "batchId");
        if (firstOffset < 0 || lastOffset < firstOffset) {
            throw new IllegalArgumentException("bad offset range " + firstOffset + ".." + lastOffset);
        }
    }

    /**
     * The receipt for a batch staged on a log with a fence.
     *
     * @param fence the fence used to stage it
     * @param batch the batch
     * @return the receipt
     */
    public static StagedBatch of(Fence fence, EncodedBatch batch) {
        return new StagedBatch(fence.log(), fence.epoch(), batch.firstOffset(), batch.lastOffset(), batch.batchId());
    }

    /** {@return the number of entries} */
    public int size() {
        return (int) (lastOffset - firstOffset + 1);
    }
}
