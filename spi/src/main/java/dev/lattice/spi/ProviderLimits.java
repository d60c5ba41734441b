package dev.lattice.spi;

import java.util.List;

/**
 * The real limits of a provider, as declared in {@link ProviderDescriptor#limits()}. The engine sizes batches to fit
 * them; a provider rejects anything larger before any I/O ({@link EntryTooLargeException},
 * {@link BatchTooLargeException}).
 *
 * <p>Immutable and thread-safe.
 *
 * @param maxEntryBytes largest payload of one entry, in bytes, inclusive
 * @param maxBatchBytes largest sum of payload lengths of one batch, in bytes, inclusive; at least
 *     {@code maxEntryBytes}
 * @param maxEntriesPerBatch most entries in one batch, inclusive
 * @param maxCheckpointBytes largest checkpoint stream, in bytes, inclusive ({@link Long#MAX_VALUE} when unbounded)
 */
public record ProviderLimits(int maxEntryBytes, long maxBatchBytes, int maxEntriesPerBatch, long maxCheckpointBytes) {

    /**
     * Creates limits.
     *
     * @param maxEntryBytes largest payload of one entry, in bytes, inclusive
     * @param maxBatchBytes largest sum of payload lengths of one batch, in bytes, inclusive; at least {@code
     *     maxEntryBytes}
     * @param maxEntriesPerBatch most entries in one batch, inclusive
     * @param maxCheckpointBytes largest checkpoint stream, in bytes, inclusive ({@link Long#MAX_VALUE} when
     *     unbounded)
     * @throws IllegalArgumentException if a limit is not positive or {@code maxBatchBytes < maxEntryBytes}
     */
    public ProviderLimits {
        if (maxEntryBytes < 1 || maxBatchBytes < 1 || maxEntriesPerBatch < 1 || maxCheckpointBytes < 1) {
            throw new IllegalArgumentException("limits must be positive");
        }
        if (maxBatchBytes < maxEntryBytes) {
            throw new IllegalArgumentException("maxBatchBytes (" + maxBatchBytes + ") < maxEntryBytes ("
                    + maxEntryBytes + ")");
        }
    }

    /**
     * Checks a batch against these limits (entry size, batch bytes, entry count).
     *
     * @param log the log, for the exception
     * @param batch the batch
     * @throws EntryTooLargeException if an entry is larger than {@link #maxEntryBytes()}
     * @throws BatchTooLargeException if the batch has more than {@link #maxEntriesPerBatch()} entries or more than
     *     {@link #maxBatchBytes()} payload bytes
     */
    public void check(LogId log, EncodedBatch batch) {
        if (batch.size() > maxEntriesPerBatch) {
            throw new BatchTooLargeException(log, "batch has " + batch.size()
                    + " entries, more than the provider's limit of " + maxEntriesPerBatch + " entries per batch");
        }
        List<byte[]> entries = batch.entries();
        for (int i = 0, n = entries.size(); i < n; i++) {
            int length = entries.get(i).length;
            if (length > maxEntryBytes) {
                throw new EntryTooLargeException(log, batch.firstOffset() + i, length, maxEntryBytes);
            }
        }
        if (batch.payloadBytes() > maxBatchBytes) {
            throw new BatchTooLargeException(log, "batch has " + batch.payloadBytes()
                    + " payload bytes, more than the provider's limit of " + maxBatchBytes + " bytes per batch");
        }
    }
}
