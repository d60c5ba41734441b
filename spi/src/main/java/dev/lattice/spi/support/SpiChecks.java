package dev.lattice.spi.support;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.BatchTooLargeException;
import dev.lattice.spi.EntryTooLargeException;
import dev.lattice.spi.CheckpointTooLargeException;

import dev.lattice.spi.RunId;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunStore;

import java.io.InputStream;
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

    /**
     * Checks the arguments of {@link RunStore#write}, including the store's run size limit.
     *
     * @param log the log
     * @param fence the writer's fence
     * @param id the run
     * @param data the bytes
     * @param length the declared length in bytes
     * @param limits the store's limits
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the fence belongs to another log, or {@code length} is negative or above
     *     {@link RunLimits#maxRunBytes()}
     */
    public static void runWrite(LogId log, Fence fence, RunId id, InputStream data, long length, RunLimits limits) {
        logAndFence(log, fence);
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(data, "data");
        if (length < 0) {
            throw new IllegalArgumentException("run " + id + " of " + log + ": negative length " + length);
        }
        if (length > limits.maxRunBytes()) {
            throw new IllegalArgumentException("run " + id + " of " + log + " has " + length
                    + " bytes, above this store's maxRunBytes " + limits.maxRunBytes());
        }
    }

    /**
     * Checks the arguments of {@link RunStore#read}.
     *
     * @param log the log
     * @param id the run
     * @param position the first byte
     * @param dst the buffer
     * @param off the buffer offset
     * @param len the count
     * @throws NullPointerException if an argument is null
     * @throws IndexOutOfBoundsException if {@code off}/{@code len} do not fit {@code dst}
     * @throws IllegalArgumentException if {@code position} is negative
     */
    public static void runRead(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(dst, "dst");
        Objects.checkFromIndexSize(off, len, dst.length);
        if (position < 0) {
            throw new IllegalArgumentException("run " + id + " of " + log + ": negative position " + position);
        }
    }

    /**
     * Checks the arguments of {@link RunStore#delete}.
     *
     * @param log the log
     * @param fence the caller's fence
     * @param id the run
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the fence belongs to another log
     */
    public static void runDelete(LogId log, Fence fence, RunId id) {
        logAndFence(log, fence);
        Objects.requireNonNull(id, "id");
    }

    /**
     * Reads exactly {@code length} bytes of a run being written, failing if the stream ends early.
     *
     * @param log the log
     * @param id the run
     * @param data the stream
     * @param dst where to put them
     * @param off where in {@code dst}
     * @param length how many
     * @throws IllegalArgumentException if the stream ends before {@code length} bytes
     * @throws java.io.UncheckedIOException if the stream fails
     */
    public static void readRunBytes(LogId log, RunId id, InputStream data, byte[] dst, int off, int length) {
        int done = 0;
        try {
            while (done < length) {
                int n = data.read(dst, off + done, length - done);
                if (n < 0) {
                    throw new IllegalArgumentException("run " + id + " of " + log + ": data ended after "
                            + done + " of the " + length + " bytes declared for this chunk");
                }
                done += n;
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("run " + id + " of " + log + ": reading the data failed", e);
        }
    }
}
