package dev.lattice.provider.azure.blob;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of one {@link AzureBlobWalStorageProvider} since it was opened: requests it sent (one per SDK call; the
 * SDK's own retries of a failed attempt are not counted), bytes moved, and blocks read, which is what the service's
 * per-block read pace is charged on. Thread-safe; read them with {@link #snapshot()}.
 */
public final class AzureBlobStats {

    final LongAdder requests = new LongAdder();
    final LongAdder bytesUploaded = new LongAdder();
    final LongAdder bytesDownloaded = new LongAdder();
    final LongAdder manifestReads = new LongAdder();
    final LongAdder manifestNotModified = new LongAdder();
    final LongAdder manifestWrites = new LongAdder();
    final LongAdder appendBlocks = new LongAdder();
    final LongAdder segmentRangeReads = new LongAdder();
    final LongAdder segmentBlocksRead = new LongAdder();
    final LongAdder checkpointBlocksRead = new LongAdder();
    final LongAdder segmentRolls = new LongAdder();
    final LongAdder compactions = new LongAdder();
    final LongAdder retriedAppendsFoundLanded = new LongAdder();
    final LongAdder foreignBytesSkipped = new LongAdder();

    AzureBlobStats() {
    }

    /** @return the current values */
    public Snapshot snapshot() {
        return new Snapshot(requests.sum(), bytesUploaded.sum(), bytesDownloaded.sum(), manifestReads.sum(),
                manifestNotModified.sum(), manifestWrites.sum(), appendBlocks.sum(), segmentRangeReads.sum(),
                segmentBlocksRead.sum(), checkpointBlocksRead.sum(), segmentRolls.sum(), compactions.sum(),
                retriedAppendsFoundLanded.sum(), foreignBytesSkipped.sum());
    }

    /**
     * The counters at one moment.
     *
     * @param requests storage requests sent (every kind)
     * @param bytesUploaded request body bytes sent
     * @param bytesDownloaded response body bytes received
     * @param manifestReads manifest downloads that returned the blob (one block each)
     * @param manifestNotModified conditional manifest reads answered "not modified" (no body)
     * @param manifestWrites conditional manifest uploads that succeeded
     * @param appendBlocks append-block requests that succeeded
     * @param segmentRangeReads segment range downloads
     * @param segmentBlocksRead append blocks parsed out of downloaded segment ranges
     * @param checkpointBlocksRead checkpoint range downloads (one block each)
     * @param segmentRolls new segments started (block or size bound, or bytes of another writer found)
     * @param compactions trims that rewrote a partly trimmed segment's retained frames
     * @param retriedAppendsFoundLanded appends refused as "append position not met" whose own frames were already
     *     there (a lost response): counted as success
     * @param foreignBytesSkipped appends that found another writer's uncommitted bytes and rolled past them
     */
    public record Snapshot(long requests, long bytesUploaded, long bytesDownloaded, long manifestReads,
                           long manifestNotModified, long manifestWrites, long appendBlocks, long segmentRangeReads,
                           long segmentBlocksRead, long checkpointBlocksRead, long segmentRolls, long compactions,
                           long retriedAppendsFoundLanded, long foreignBytesSkipped) {

        /** @return blocks read: manifests, segment blocks and checkpoint blocks */
        public long blocksRead() {
            return manifestReads + segmentBlocksRead + checkpointBlocksRead;
        }

        /**
         * The difference to an earlier snapshot.
         *
         * @param before the earlier snapshot
         * @return this minus {@code before}, field by field
         */
        public Snapshot minus(Snapshot before) {
            return new Snapshot(requests - before.requests, bytesUploaded - before.bytesUploaded,
                    bytesDownloaded - before.bytesDownloaded, manifestReads - before.manifestReads,
                    manifestNotModified - before.manifestNotModified, manifestWrites - before.manifestWrites,
                    appendBlocks - before.appendBlocks, segmentRangeReads - before.segmentRangeReads,
                    segmentBlocksRead - before.segmentBlocksRead, checkpointBlocksRead - before.checkpointBlocksRead,
                    segmentRolls - before.segmentRolls, compactions - before.compactions,
                    retriedAppendsFoundLanded - before.retriedAppendsFoundLanded,
                    foreignBytesSkipped - before.foreignBytesSkipped);
        }
    }
}
