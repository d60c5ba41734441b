package dev.lattice.spi.support;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongFunction;

/**
 * The two-phase append rules of {@link WalStorageProvider#stage}, {@link WalStorageProvider#commit} and
 * {@link WalStorageProvider#abort} (ARCHITECTURE.md 4.3) as pure functions over a provider's records of staged
 * batches, with the contract's error messages. Providers that keep staged batches in memory use
 * {@link StagedBatchTable}; providers that read staged headers back from their backend call these directly.
 *
 * <p>Stateless and thread-safe; callers hold whatever lock guards the records they pass.
 */
public final class StagingRules {

    private StagingRules() {
    }

    /**
     * Judges a stage request.
     *
     * @param log the log
     * @param fence the caller's fence (already checked to be current)
     * @param batch the batch to stage
     * @param committedTail the log's committed tail
     * @param committedSameBatch asked only when the batch starts at or below the committed tail: whether a committed
     *     batch with the same first offset, last offset and id exists (a retried stage of a batch since committed)
     * @param overlapping every staged batch, of any epoch, whose range overlaps the new batch's
     * @param <S> the provider's staged batch record
     * @return what to do
     * @throws OffsetConflictException if the batch overlaps committed offsets of another batch, or a different batch
     *     staged under the same or a newer epoch
     */
    public static <S extends StagedRange> StageDecision<S> decideStage(LogId log, Fence fence, EncodedBatch batch,
            long committedTail, BooleanSupplier committedSameBatch, Collection<? extends S> overlapping) {
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        if (first <= committedTail) {
            if (committedSameBatch.getAsBoolean()) {
                return new StageDecision<>(StageDecision.Kind.ALREADY_COMMITTED, List.of());
            }
            throw new OffsetConflictException(log, "batch " + first + ".." + last
                    + " overlaps committed offsets (committed tail " + committedTail + ")");
        }
        if (overlapping.isEmpty()) {
            return new StageDecision<>(StageDecision.Kind.STAGE, List.of());
        }
        List<S> older = new ArrayList<>();
        for (S s : overlapping) {
            if (s.epoch() < fence.epoch()) {
                older.add(s);
            } else if (sameBatch(s, first, last, batch)) {
                return new StageDecision<>(StageDecision.Kind.ALREADY_STAGED, List.of());
            } else {
                throw new OffsetConflictException(log, "batch " + first + ".." + last + " (id " + batch.batchId()
                        + ") overlaps staged batch " + s.firstOffset() + ".." + s.lastOffset() + " (id "
                        + s.batchId() + ")");
            }
        }
        return new StageDecision<>(StageDecision.Kind.STAGE, older);
    }

    private static boolean sameBatch(StagedRange s, long first, long last, EncodedBatch batch) {
        return s.firstOffset() == first && s.lastOffset() == last && s.batchId().equals(batch.batchId());
    }

    /**
     * Whether two offset ranges share an offset.
     *
     * @param s a staged batch
     * @param first the other range's first offset, inclusive
     * @param last the other range's last offset, inclusive
     * @return true when they overlap
     */
    public static boolean overlaps(StagedRange s, long first, long last) {
        return s.firstOffset() <= last && s.lastOffset() >= first;
    }

    /**
     * The batches a commit through {@code throughOffset} publishes: the chain of batches staged under the fence's
     * epoch that starts right after the committed tail and ends exactly at {@code throughOffset}.
     *
     * @param log the log
     * @param fence the caller's fence (already checked to be current)
     * @param committedTail the log's committed tail, below {@code throughOffset}
     * @param throughOffset the last offset to commit, inclusive
     * @param stagedAt the batch staged under the fence's epoch whose first offset is the argument, or null
     * @param <S> the provider's staged batch record
     * @return the chain, in offset order, never empty
     * @throws OffsetConflictException if an offset in the range is not staged under the epoch, or
     *     {@code throughOffset} falls inside a staged batch
     */
    public static <S extends StagedRange> List<S> commitChain(LogId log, Fence fence, long committedTail,
            long throughOffset, LongFunction<? extends S> stagedAt) {
        S first = null; // a chain of one batch (the common case) is returned as an immutable one-element list
        List<S> chain = null;
        long pos = committedTail + 1;
        while (pos <= throughOffset) {
            S s = stagedAt.apply(pos);
            if (s == null || s.epoch() != fence.epoch()) {
                throw new OffsetConflictException(log, "cannot commit through " + throughOffset + ": offset " + pos
                        + " after the committed tail " + committedTail + " is not staged under epoch "
                        + fence.epoch());
            }
            if (s.lastOffset() > throughOffset) {
                throw new OffsetConflictException(log, "cannot commit through " + throughOffset
                        + ": it falls inside staged batch " + s.firstOffset() + ".." + s.lastOffset());
            }
            if (first == null) {
                first = s;
            } else {
                if (chain == null) {
                    chain = new ArrayList<>();
                    chain.add(first);
                }
                chain.add(s);
            }
            pos = s.lastOffset() + 1;
        }
        if (chain != null) {
            return chain;
        }
        return first != null ? List.of(first) : new ArrayList<>();
    }

    /**
     * {@link #commitChain(LogId, Fence, long, long, LongFunction)} over staged headers read back from a backend, in
     * any order and of any epoch.
     *
     * @param log the log
     * @param fence the caller's fence
     * @param committedTail the committed tail
     * @param throughOffset the last offset to commit, inclusive
     * @param staged the staged batches found
     * @param <S> the provider's staged batch record
     * @return the chain, in offset order
     * @throws OffsetConflictException as {@link #commitChain(LogId, Fence, long, long, LongFunction)}, and when two
     *     batches are staged at the same first offset under the fence's epoch
     */
    public static <S extends StagedRange> List<S> commitChain(LogId log, Fence fence, long committedTail,
            long throughOffset, Collection<? extends S> staged) {
        Map<Long, S> byFirst = new HashMap<>();
        for (S s : staged) {
            if (s.epoch() == fence.epoch()) {
                S other = byFirst.putIfAbsent(s.firstOffset(), s);
                if (other != null) {
                    throw new OffsetConflictException(log, "two batches are staged at offset " + s.firstOffset()
                            + " under epoch " + fence.epoch() + " (ids " + other.batchId() + ", " + s.batchId() + ")");
                }
            }
        }
        return commitChain(log, fence, committedTail, throughOffset, byFirst::get);
    }

    /**
     * Whether a staged batch is the one a receipt names, so that {@link WalStorageProvider#abort} drops it.
     *
     * @param s the staged batch found at the receipt's first offset
     * @param receipt the caller's receipt
     * @return true when range, epoch and id all match
     */
    public static boolean abortMatches(StagedRange s, StagedBatch receipt) {
        return s.firstOffset() == receipt.firstOffset() && s.lastOffset() == receipt.lastOffset()
                && s.epoch() == receipt.epoch() && s.batchId().equals(receipt.batchId());
    }
}
