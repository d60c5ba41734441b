package dev.lattice.spi;

import java.util.List;
import java.util.Objects;

/**
 * Consecutive log entries appended in one call: entry {@code i} goes to offset {@code firstOffset + i}.
 *
 * <p>Payloads are opaque bytes that the engine encoded once; a provider stores them verbatim, must not modify
 * them and must not keep references to them after the call returns, unless the batch says its payloads are
 * immutable ({@link #payloadsImmutable()}: the caller never modifies them again, so a provider may keep the arrays
 * instead of copying them). The caller must not modify them while the call runs. Empty payloads are allowed. An
 * empty batch is not.
 *
 * <p>Immutable (as far as the payload arrays are left alone) and thread-safe.
 */
public final class EncodedBatch {

    private final long firstOffset;
    private final BatchId batchId;
    private final List<byte[]> entries;
    private final long payloadBytes;
    private final boolean immutable;

    private EncodedBatch(long firstOffset, BatchId batchId, List<byte[]> entries, boolean immutable) {
        this.firstOffset = firstOffset;
        this.batchId = batchId;
        this.entries = entries;
        this.immutable = immutable;
        long sum = 0;
        for (int i = 0, n = entries.size(); i < n; i++) {
            sum += entries.get(i).length;
        }
        this.payloadBytes = sum;
    }

    /**
     * Creates a batch.
     *
     * @param firstOffset offset of the first entry, {@code >= 0}
     * @param batchId the batch id that recognises a retried write
     * @param entries the payloads, at least one; the list is copied, the arrays are not
     * @return the batch
     * @throws NullPointerException if {@code batchId}, {@code entries} or any entry is null
     * @throws IllegalArgumentException if {@code firstOffset < 0}, {@code entries} is empty, or the last offset
     *     would overflow a {@code long}
     */
    public static EncodedBatch of(long firstOffset, BatchId batchId, List<byte[]> entries) {
        return create(firstOffset, batchId, entries, false);
    }

    /**
     * Creates a batch whose payload arrays the caller never modifies again, during or after the call: a provider
     * may keep references to them instead of copies (the engine's own batches, which it seals before the first
     * call and never touches after).
     *
     * @param firstOffset offset of the first entry, {@code >= 0}
     * @param batchId the batch id that recognises a retried write
     * @param entries the payloads, at least one; the list is copied, the arrays are not
     * @return the batch, {@link #payloadsImmutable()} true
     * @throws NullPointerException if {@code batchId}, {@code entries} or any entry is null
     * @throws IllegalArgumentException as in {@link #of(long, BatchId, List)}
     */
    public static EncodedBatch ofImmutable(long firstOffset, BatchId batchId, List<byte[]> entries) {
        return create(firstOffset, batchId, entries, true);
    }

    private static EncodedBatch create(long firstOffset, BatchId batchId, List<byte[]> entries, boolean immutable) {
        Objects.requireNonNull(batchId, "batchId");
        Objects.requireNonNull(entries, "entries");
        if (firstOffset < 0) {
            throw new IllegalArgumentException("firstOffset must be >= 0, got " + firstOffset);
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("a batch holds at least one entry");
        }
        if (firstOffset > Long.MAX_VALUE - entries.size()) {
            throw new IllegalArgumentException("offsets of the batch would overflow: firstOffset " + firstOffset);
        }
        List<byte[]> copy = List.copyOf(entries); // rejects null elements
        return new EncodedBatch(firstOffset, batchId, copy, immutable);
    }

    /**
     * Convenience for {@link #of(long, BatchId, List)} with a random batch id.
     *
     * @param firstOffset offset of the first entry, {@code >= 0}
     * @param entries the payloads, at least one
     * @return the batch
     * @throws NullPointerException if {@code entries} or any entry is null
     * @throws IllegalArgumentException as in {@link #of(long, BatchId, List)}
     */
    public static EncodedBatch of(long firstOffset, List<byte[]> entries) {
        return of(firstOffset, BatchId.random(), entries);
    }

    /** {@return offset of the first entry (inclusive), {@code >= 0}} */
    public long firstOffset() {
        return firstOffset;
    }

    /** {@return offset of the last entry (inclusive): {@code firstOffset + size - 1}} */
    public long lastOffset() {
        return firstOffset + entries.size() - 1;
    }

    /** {@return the batch id} */
    public BatchId batchId() {
        return batchId;
    }

    /** {@return the number of entries, at least 1} */
    public int size() {
        return entries.size();
    }

    /**
     * Whether the caller promised never to modify the payload arrays again ({@link #ofImmutable}), so that a
     * provider may keep them without copying.
     *
     * @return true for a batch made by {@link #ofImmutable}
     */
    public boolean payloadsImmutable() {
        return immutable;
    }

    /** {@return the payloads, unmodifiable list; entry {@code i} has offset {@code firstOffset + i}} */
    public List<byte[]> entries() {
        return entries;
    }

    /**
     * The payload at an offset of this batch.
     *
     * @param offset an offset in {@code firstOffset..lastOffset}
     * @return the payload (not a copy)
     * @throws IndexOutOfBoundsException if the offset is outside the batch
     */
    public byte[] entryAt(long offset) {
        if (offset < firstOffset || offset > lastOffset()) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside batch " + firstOffset + ".."
                    + lastOffset());
        }
        return entries.get((int) (offset - firstOffset));
    }

    /** {@return the sum of the payload lengths, in bytes} */
    public long payloadBytes() {
        return payloadBytes;
    }

    @Override
    public String toString() {
        return "EncodedBatch[" + firstOffset + ".." + lastOffset() + ", " + entries.size() + " entries, "
                + payloadBytes + " bytes, id " + batchId + "]";
    }
}
