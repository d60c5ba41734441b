package dev.lattice.provider.postgres;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.support.StagedBatchTable;
import dev.lattice.spi.support.StagedBatchTable.Staged;

import java.util.List;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Staging part of the protocol ({@code DEFERRED_STAGE}, see docs/providers/postgres.md, "Protocol"): what one
 * provider instance knows about one log, namely the batches staged in memory (a {@link StagedBatchTable} judged by
 * the SPI's staging rules) and the last head values it saw. The cached head only ever moves up (epochs, tails and
 * watermarks never decrease in the database), so a stale cache is merely behind: every decision that must be exact
 * is re-checked inside the database statement that acts on it.
 *
 * <p>Thread-safe: fields are guarded by this object's monitor; {@link #commitLock} serialises commits of the log
 * within the instance (held across the database round trip, never while taking the monitor's callers' locks).
 */
final class LogSlot {

    /**
     * What is kept per staged batch: its encoded frame and the counters the commit adds to the head.
     *
     * @param bytes the {@link BatchFrame} encoding of the entries
     * @param count the number of entries
     * @param payloadBytes the payload bytes of the entries
     */
    record Frame(byte[] bytes, int count, long payloadBytes) {
    }

    /** Serialises commits of this log within the instance. */
    final ReentrantLock commitLock = new ReentrantLock();

    private boolean known;
    private long epoch;
    private long tail = -1;
    private long watermark = -1;
    private final StagedBatchTable<Frame> staged = new StagedBatchTable<>();

    /**
     * The slot of a log, created on first use.
     *
     * @param slots the provider's slots
     * @param log the log
     * @return the slot
     */
    static LogSlot of(ConcurrentMap<LogId, LogSlot> slots, LogId log) {
        return slots.computeIfAbsent(log, k -> new LogSlot());
    }

    /** @return whether a head was seen (claimed log) */
    synchronized boolean known() {
        return known;
    }

    /** @return the highest epoch seen, 0 when none */
    synchronized long epoch() {
        return epoch;
    }

    /** @return the highest committed tail seen */
    synchronized long tail() {
        return tail;
    }

    /**
     * Records head values read from the database (never moves anything down); a newer epoch drops the batches
     * staged under older ones (their fence is stale, they can never commit).
     *
     * @param h the head
     */
    synchronized void observe(Head h) {
        known = true;
        if (h.epoch() > epoch) {
            epoch = h.epoch();
            staged.dropOlderThan(epoch);
        }
        tail = Math.max(tail, h.tail());
        watermark = Math.max(watermark, h.watermark());
    }

    /**
     * Records a committed tail seen by a read (never moves it down).
     *
     * @param committedTail the tail
     */
    synchronized void observeTail(long committedTail) {
        tail = Math.max(tail, committedTail);
    }

    /**
     * Stages a batch above the committed tail by the staging rules (a retried stage of the same batch stores
     * nothing; overlapping batches of older epochs are replaced).
     *
     * @param log the log
     * @param fence the caller's fence, already checked against the cached epoch
     * @param batch the batch, starting above {@code committedTail}
     * @param committedTail the committed tail the caller checked the batch against
     * @throws OffsetConflictException if the batch overlaps another batch staged under the same or a newer epoch
     */
    synchronized void stage(LogId log, Fence fence, EncodedBatch batch, long committedTail) {
        staged.stage(log, fence, batch, committedTail, () -> false,
                b -> new Frame(BatchFrame.encode(b.firstOffset(), b.entries()), b.size(), b.payloadBytes()));
    }

    /**
     * The chain of batches staged under the fence's epoch covering {@code fromTail + 1 .. through} exactly.
     *
     * @param log the log
     * @param fence the committing fence
     * @param fromTail the committed tail the chain starts after
     * @param through the last offset, inclusive
     * @return the batches in order
     * @throws OffsetConflictException if an offset is not staged under that epoch or {@code through} falls inside a
     *     batch
     */
    synchronized List<Staged<Frame>> chain(LogId log, Fence fence, long fromTail, long through) {
        return staged.commitChain(log, fence, fromTail, through);
    }

    /**
     * Forgets staged batches starting at or below an offset (committed or trimmed now).
     *
     * @param through the offset, inclusive
     */
    synchronized void dropThrough(long through) {
        staged.dropStartingThrough(through);
    }

    /**
     * Drops the staged batch a receipt names, if it is staged with the same range, epoch and id.
     *
     * @param receipt the caller's receipt
     */
    synchronized void abort(StagedBatch receipt) {
        staged.abort(receipt);
    }

    /**
     * Drops every staged batch (reconcile).
     *
     * @return how many were dropped
     */
    synchronized int clearStaged() {
        int n = staged.size();
        staged.clear();
        return n;
    }
}
