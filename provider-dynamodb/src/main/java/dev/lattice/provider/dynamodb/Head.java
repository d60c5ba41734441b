package dev.lattice.provider.dynamodb;

import dev.lattice.spi.LogState;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * A decoded head item: the one item per log whose conditional updates are the commit points of claim, commit, trim
 * and checkpoint publish. Immutable and thread-safe.
 *
 * @param epoch the current epoch (0 never happens for a stored head: a head is created by the first claim)
 * @param version the compare-and-set token of commits: raised by every head update that moves the tail, the epoch
 *     or the checkpoint catalog; a trim within the tail does not raise it (so commits and trims never conflict),
 *     hence two heads of one version may differ in their watermark, which only ever grows
 * @param tail the committed tail, {@code -1} when nothing was committed
 * @param watermark the trim watermark, {@code -1} when never trimmed
 * @param entries retained committed entries
 * @param payloadBytes retained committed payload bytes
 * @param chunkBytes item bytes of the retained committed chunks
 * @param segments which epoch committed which offsets
 * @param checkpoints the checkpoint catalog
 * @param pendingGenerations checkpoint generations being written
 * @param garbageGenerations checkpoint generations whose chunks await deletion
 * @param registered whether the log is listed in its tree item and the catalog
 * @param commits number of commits that moved the tail
 * @param trims number of trims that moved the watermark
 */
record Head(long epoch, long version, long tail, long watermark, long entries, long payloadBytes, long chunkBytes,
            Segments segments, CheckpointCatalog checkpoints, Set<Long> pendingGenerations,
            Set<Long> garbageGenerations, boolean registered, long commits, long trims) {

    /**
     * Decodes a head item.
     *
     * @param item the item's attributes
     * @return the head
     * @throws IllegalArgumentException if an attribute is missing or malformed
     */
    static Head from(Map<String, AttributeValue> item) {
        return new Head(Layout.num(item, Layout.EPOCH), Layout.num(item, Layout.VERSION),
                Layout.num(item, Layout.TAIL), Layout.num(item, Layout.WATERMARK),
                Layout.num(item, Layout.RETAINED_ENTRIES, 0), Layout.num(item, Layout.RETAINED_BYTES, 0),
                Layout.num(item, Layout.CHUNK_BYTES, 0),
                Segments.decode(Layout.bin(item, Layout.SEGMENTS)),
                CheckpointCatalog.decode(Layout.bin(item, Layout.CHECKPOINTS)),
                numberSet(item.get(Layout.PENDING_GENERATIONS)), numberSet(item.get(Layout.GARBAGE_GENERATIONS)),
                Layout.num(item, Layout.REGISTERED, 0) == 1,
                Layout.num(item, Layout.COMMITS, 0), Layout.num(item, Layout.TRIMS, 0));
    }

    private static Set<Long> numberSet(AttributeValue v) {
        Set<Long> out = new HashSet<>();
        if (v != null && v.hasNs()) {
            for (String n : v.ns()) {
                out.add(Long.parseLong(n));
            }
        }
        return Set.copyOf(out);
    }

    /** @return the lowest retained offset: {@code watermark + 1} while entries are retained, else {@code tail + 1} */
    long lowestOffset() {
        return entries > 0 ? watermark + 1 : tail + 1;
    }

    /**
     * The SPI view.
     *
     * @return the log state; physical bytes are the committed chunks' item bytes plus the checkpoints' bytes
     */
    LogState toState() {
        return new LogState(lowestOffset(), tail, watermark, epoch, entries, payloadBytes,
                chunkBytes + checkpoints.totalBytes());
    }

    /**
     * A copy as after a trim.
     *
     * @param newWatermark the new watermark
     * @param beyondTail whether the trim passes the tail (then the tail moves up to the watermark and the version is
     *     raised; otherwise the version stays)
     * @param dropEntries committed entries that leave
     * @param dropBytes their payload bytes
     * @param dropChunkBytes item bytes of the chunks deleted
     * @param newSegments the pruned segments
     * @return the new head
     */
    Head trimmed(long newWatermark, boolean beyondTail, long dropEntries, long dropBytes, long dropChunkBytes,
                 Segments newSegments) {
        return new Head(epoch, beyondTail ? version + 1 : version, beyondTail ? newWatermark : tail, newWatermark,
                entries - dropEntries, payloadBytes - dropBytes, chunkBytes - dropChunkBytes, newSegments,
                checkpoints, pendingGenerations, garbageGenerations, registered, commits, trims + 1);
    }

    /**
     * This head with a higher watermark learnt from another head of the same epoch (a trim that did not raise the
     * version); the segments stay (a superset of the pruned ones is still right). Counters are not merged: the
     * provider reports them only from a fresh read.
     *
     * @param other another head
     * @return this, or a copy with {@code other}'s watermark when that is higher and the epochs match
     */
    Head withWatermarkOf(Head other) {
        if (other == null || other.epoch != epoch || other.watermark <= watermark) {
            return this;
        }
        return new Head(epoch, version, Math.max(tail, other.watermark), other.watermark, entries, payloadBytes,
                chunkBytes, segments, checkpoints, pendingGenerations, garbageGenerations, registered, commits,
                trims);
    }

    /** @return a copy with another segments list, tail and counters, as after a commit (version raised) */
    Head committed(long newTail, long addEntries, long addBytes, long addChunkBytes, Segments newSegments) {
        return new Head(epoch, version + 1, newTail, watermark, entries + addEntries, payloadBytes + addBytes,
                chunkBytes + addChunkBytes, newSegments, checkpoints, pendingGenerations, garbageGenerations,
                registered, commits + 1, trims);
    }
}
