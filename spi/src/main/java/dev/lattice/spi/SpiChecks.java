package dev.lattice.spi;

import java.util.Objects;

/**
 * Argument checks every provider makes before any I/O, in one place so that all providers reject bad arguments
 * with the same exceptions and messages. Stateless and thread-safe.
 */
public final class SpiChecks {

    private SpiChecks() {
    }

    /**
     * Checks a log and a fence that must belong to it.
     *
     * @param log the log addressed
     * @param fence the caller's fence
     * @throws NullPointerException if either is null
     * @throws IllegalArgumentException if the fence was claimed on another log
     */
    public static void logAndFence(LogId log, Fence fence) {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(fence, "fence");
        if (!fence.log().equals(log)) {
            throw new IllegalArgumentException("fence " + fence + " was claimed on another log than " + log);
        }
    }

    /**
     * Checks the arguments of {@link WalStorageProvider#stage}, including the provider's limits.
     *
     * @param log the log
     * @param fence the fence
     * @param batch the batch
     * @param limits the provider's limits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the fence belongs to another log or the batch ends above
     *     {@link WalStorageProvider#MAX_OFFSET}
     * @throws EntryTooLargeException if an entry is too large
     * @throws BatchTooLargeException if the batch is too large
     */
    public static void stage(LogId log, Fence fence, EncodedBatch batch, ProviderLimits limits) {
        logAndFence(log, fence);
        Objects.requireNonNull(batch, "batch");
        if (batch.lastOffset() > WalStorageProvider.MAX_OFFSET) {
            throw new IllegalArgumentException("batch offsets " + batch.firstOffset() + ".." + batch.lastOffset()
                    + " exceed the maximum offset " + WalStorageProvider.MAX_OFFSET);
        }
        limits.check(log, batch);
    }

    /**
     * Checks the arguments of {@link WalStorageProvider#commit}.
     *
     * @param log the log
     * @param fence the fence
     * @param throughOffset the offset, {@code >= -1}
     * @throws NullPointerException if log or fence is null
     * @throws IllegalArgumentException if the fence belongs to another log or the offset is below -1 or above
     *     {@link WalStorageProvider#MAX_OFFSET}
     */
    public static void commit(LogId log, Fence fence, long throughOffset) {
        logAndFence(log, fence);
        if (throughOffset < -1) {
            throw new IllegalArgumentException("throughOffset must be >= -1, got " + throughOffset);
        }
        maxOffset("throughOffset", throughOffset);
    }

    /**
     * Refuses an offset above {@link WalStorageProvider#MAX_OFFSET}.
     *
     * @param name the argument's name, for the message
     * @param offset the offset
     * @throws IllegalArgumentException if {@code offset > MAX_OFFSET}
     */
    public static void maxOffset(String name, long offset) {
        if (offset > WalStorageProvider.MAX_OFFSET) {
            throw new IllegalArgumentException(name + " " + offset + " exceeds the maximum offset "
                    + WalStorageProvider.MAX_OFFSET + " (Long.MAX_VALUE - Integer.MAX_VALUE); to drop everything,"
                    + " trim through the committed tail");
        }
    }

    /**
     * Checks the arguments of {@link WalStorageProvider#abort}.
     *
     * @param log the log
     * @param fence the fence
     * @param staged the receipt
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the fence or the receipt belongs to another log
     */
    public static void abort(LogId log, Fence fence, StagedBatch staged) {
        logAndFence(log, fence);
        Objects.requireNonNull(staged, "staged");
        if (!staged.log().equals(log)) {
            throw new IllegalArgumentException("staged batch " + staged + " belongs to another log than " + log);
        }
    }

    /**
     * Checks the arguments of {@link WalStorageProvider#read}.
     *
     * @param log the log
     * @param fromExclusive {@code >= -1}
     * @param maxEntries {@code >= 1}
     * @param maxBytes {@code >= 1}
     * @throws NullPointerException if log is null
     * @throws IllegalArgumentException if a bound is out of range
     */
    public static void read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        Objects.requireNonNull(log, "log");
        if (fromExclusive < -1) {
            throw new IllegalArgumentException("fromExclusive must be >= -1, got " + fromExclusive);
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be >= 1, got " + maxEntries);
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be >= 1, got " + maxBytes);
        }
    }

    /**
     * Checks the arguments of {@link WalStorageProvider#trim}.
     *
     * @param log the log
     * @param fence the fence
     * @param throughInclusive {@code >= 0}
     * @throws NullPointerException if log or fence is null
     * @throws IllegalArgumentException if the fence belongs to another log or the offset is negative or above
     *     {@link WalStorageProvider#MAX_OFFSET}
     */
    public static void trim(LogId log, Fence fence, long throughInclusive) {
        logAndFence(log, fence);
        if (throughInclusive < 0) {
            throw new IllegalArgumentException("throughInclusive must be >= 0, got " + throughInclusive);
        }
        maxOffset("throughInclusive", throughInclusive);
    }

    /**
     * Checks the arguments of {@link CheckpointStore#publish}.
     *
     * @param log the log
     * @param fence the fence
     * @param throughOffset {@code >= -1}
     * @param formatVersion {@code >= 0}
     * @param data the stream
     * @throws NullPointerException if log, fence or data is null
     * @throws IllegalArgumentException if the fence belongs to another log or a number is out of range
     */
    public static void publish(LogId log, Fence fence, long throughOffset, int formatVersion, Object data) {
        logAndFence(log, fence);
        Objects.requireNonNull(data, "data");
        if (throughOffset < -1) {
            throw new IllegalArgumentException("throughOffset must be >= -1, got " + throughOffset);
        }
        maxOffset("throughOffset", throughOffset);
        if (formatVersion < 0) {
            throw new IllegalArgumentException("formatVersion must be >= 0, got " + formatVersion);
        }
    }

    /**
     * Throws when a provider is closed.
     *
     * @param closed whether it is closed
     * @param name the provider's name, for the message
     * @throws IllegalStateException if {@code closed}
     */
    public static void open(boolean closed, String name) {
        if (closed) {
            throw new IllegalStateException("provider '" + name + "' is closed");
        }
    }
}
