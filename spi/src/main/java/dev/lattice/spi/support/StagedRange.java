package dev.lattice.spi.support;

import dev.lattice.spi.BatchId;

/**
 * What the staging rules need to know of a staged batch: its offset range, the epoch it was staged under and its
 * id. A provider's own record of a staged batch (in memory or read back from its backend) implements this so that
 * {@link StagingRules} can judge it.
 *
 * <p>Implementations should be immutable.
 */
public interface StagedRange {

    /**
     * The batch's first offset.
     *
     * @return the first offset, inclusive
     */
    long firstOffset();

    /**
     * The batch's last offset.
     *
     * @return the last offset, inclusive, at least {@link #firstOffset()}
     */
    long lastOffset();

    /**
     * The epoch of the fence the batch was staged under.
     *
     * @return the epoch
     */
    long epoch();

    /**
     * The batch's id, which makes a retried stage or commit idempotent.
     *
     * @return the id
     */
    BatchId batchId();
}
