package dev.lattice.spi;

/**
 * A log's committed state, as returned by {@link WalStorageProvider#state(LogId)}. Staged, uncommitted batches
 * are never reflected here.
 *
 * <p>Immutable and thread-safe.
 *
 * @param lowestOffset offset of the lowest retained committed entry; {@code committedTail + 1} when none is
 *     retained (a never-written log reports 0)
 * @param committedTail the highest committed offset, {@code -1} when nothing was ever committed; never decreases,
 *     not even through trim, reopen or reconcile
 * @param trimWatermark the highest offset trimmed so far (inclusive), {@code -1} when never trimmed; may exceed
 *     the committed tail when a trim went beyond it
 * @param epoch the log's current epoch, {@code 0} when never claimed
 * @param retainedEntries the number of committed entries above the trim watermark
 * @param retainedPayloadBytes the sum of the payload lengths of those entries, in bytes
 * @param physicalBytes bytes the provider uses on its backend for this log including framing and checkpoints, or
 *     {@code -1} when unknown
 */
public record LogState(long lowestOffset, long committedTail, long trimWatermark, long epoch,
                       long retainedEntries, long retainedPayloadBytes, long physicalBytes) {

    /** The state of a log that was never claimed nor written. */
    public static final LogState EMPTY = new LogState(0, -1, -1, 0, 0, 0, 0);

    /** {@return true when no committed entry is retained} */
    public boolean isEmpty() {
        return retainedEntries == 0;
    }

    /** {@return the offset the next appended entry must have: {@code committedTail + 1}} */
    public long nextOffset() {
        return committedTail + 1;
    }
}
