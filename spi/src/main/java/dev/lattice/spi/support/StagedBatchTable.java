package dev.lattice.spi.support;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.StagedBatch;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The staged batches of one log, for providers that keep them in memory until commit (the in-memory provider,
 * Chronicle, and the providers with {@link dev.lattice.spi.ProviderFeature#DEFERRED_STAGE}), judged by
 * {@link StagingRules}: stage with overlap and idempotence checks (dropping batches of older epochs), the commit chain,
 * the abort match.
 *
 * <p>Not thread-safe: the provider guards each log's table with that log's lock.
 *
 * @param <T> what the provider keeps per staged batch (its payload copies, encoded frames, a blob block list...)
 */
public final class StagedBatchTable<T> {

    /**
     * One staged batch and what the provider keeps for it.
     *
     * @param firstOffset first offset, inclusive
     * @param lastOffset last offset, inclusive
     * @param epoch the epoch it was staged under
     * @param batchId its id
     * @param payload what the provider keeps for it
     * @param <T> the payload's type
     */
    public record Staged<T>(long firstOffset, long lastOffset, long epoch, BatchId batchId, T payload)
            implements StagedRange {

        /**
         * Creates a record.
         *
         * @param firstOffset first offset, inclusive
         * @param lastOffset last offset, inclusive
         * @param epoch the epoch it was staged under
         * @param batchId its id
         * @param payload what the provider keeps for it
         * @throws NullPointerException if {@code batchId} is null
         */
        public Staged {
            Objects.requireNonNull(batchId, "batchId");
        }

        /**
         * The number of entries.
         *
         * @return {@code lastOffset - firstOffset + 1}
         */
        public int size() {
            return (int) (lastOffset - firstOffset + 1);
        }
    }

    /** The batches by first offset, ascending (ranges are disjoint); few, and appended at the end as a rule. */
    private final ArrayList<Staged<T>> byFirst = new ArrayList<>();
    private final java.util.function.LongFunction<Staged<T>> stagedAt = this::at;

    /** Creates an empty table. */
    public StagedBatchTable() {
    }

    /**
     * Stages a batch by the contract's rules: a retried stage of the same batch (staged or committed) stores nothing,
     * overlapping batches of older epochs are dropped, anything else overlapping is a conflict.
     *
     * @param log the log
     * @param fence the caller's fence, already checked to be current
     * @param batch the batch
     * @param committedTail the log's committed tail
     * @param committedSameBatch whether the same batch is already committed (asked only when the batch starts at or
     *     below the committed tail)
     * @param payload makes what the provider keeps for the batch; called only when the batch is stored
     * @return the decision taken ({@link StageDecision#superseded()} lists the dropped batches, so a provider that
     *     also holds them elsewhere can release them)
     * @throws OffsetConflictException as {@link StagingRules#decideStage}
     */
    public StageDecision<Staged<T>> stage(LogId log, Fence fence, EncodedBatch batch, long committedTail,
            BooleanSupplier committedSameBatch, Function<EncodedBatch, T> payload) {
        StageDecision<Staged<T>> d = StagingRules.decideStage(log, fence, batch, committedTail, committedSameBatch,
                overlapping(batch.firstOffset(), batch.lastOffset()));
        if (d.mustStage()) {
            for (Staged<T> s : d.superseded()) {
                removeAt(s.firstOffset(), null);
            }
            put(new Staged<>(batch.firstOffset(), batch.lastOffset(), fence.epoch(), batch.batchId(),
                    payload.apply(batch)));
        }
        return d;
    }

    /**
     * Puts back a staged batch found when a provider reopens its storage (e.g. staged records recovered from disk),
     * without judging it.
     *
     * @param staged the batch
     * @throws NullPointerException if {@code staged} is null
     */
    public void restore(Staged<T> staged) {
        Objects.requireNonNull(staged, "staged");
        put(staged);
    }

    /**
     * The staged batches whose range overlaps {@code first..last}.
     *
     * @param first first offset, inclusive
     * @param last last offset, inclusive
     * @return the overlapping batches, in offset order
     */
    public List<Staged<T>> overlapping(long first, long last) {
        if (byFirst.isEmpty()) {
            return new ArrayList<>(0); // the common case of a lone writer: no map views, no boxing
        }
        List<Staged<T>> out = new ArrayList<>();
        int i = floor(first);
        if (i >= 0 && byFirst.get(i).lastOffset() >= first) {
            out.add(byFirst.get(i));
        }
        for (int j = Math.max(0, i + 1), n = byFirst.size(); j < n; j++) {
            Staged<T> s = byFirst.get(j);
            if (s.firstOffset() > last) {
                break;
            }
            if (s.firstOffset() > first) {
                out.add(s);
            }
        }
        return out;
    }

    /**
     * The batches a commit through {@code throughOffset} publishes, left in the table; call {@link #remove} once
     * they are durable, so that a failed commit can be retried.
     *
     * @param log the log
     * @param fence the caller's fence, already checked to be current
     * @param committedTail the committed tail, below {@code throughOffset}
     * @param throughOffset the last offset to commit, inclusive
     * @return the chain, in offset order
     * @throws OffsetConflictException as {@link StagingRules#commitChain(LogId, Fence, long, long,
     *     java.util.function.LongFunction)}
     */
    public List<Staged<T>> commitChain(LogId log, Fence fence, long committedTail, long throughOffset) {
        return StagingRules.commitChain(log, fence, committedTail, throughOffset, stagedAt);
    }

    /**
     * Removes committed (or otherwise finished) batches.
     *
     * @param batches batches returned by {@link #commitChain} or {@link #all()}
     */
    public void remove(Collection<Staged<T>> batches) {
        if (batches instanceof List<Staged<T>> list) {
            for (int i = 0, n = list.size(); i < n; i++) {
                Staged<T> s = list.get(i);
                removeAt(s.firstOffset(), s);
            }
            return;
        }
        for (Staged<T> s : batches) {
            removeAt(s.firstOffset(), s);
        }
    }

    /**
     * Drops the batch a receipt names, if it is staged with the same range, epoch and id.
     *
     * @param receipt the caller's receipt
     * @return the dropped batch, or null when none matched (abort is idempotent)
     */
    public Staged<T> abort(StagedBatch receipt) {
        Staged<T> s = at(receipt.firstOffset());
        if (s != null && StagingRules.abortMatches(s, receipt)) {
            removeAt(receipt.firstOffset(), s);
            return s;
        }
        return null;
    }

    /**
     * Drops every batch staged under an epoch older than {@code epoch} (after a new claim).
     *
     * @param epoch the current epoch
     * @return the dropped batches
     */
    public List<Staged<T>> dropOlderThan(long epoch) {
        List<Staged<T>> out = new ArrayList<>();
        byFirst.removeIf(s -> {
            if (s.epoch() < epoch) {
                out.add(s);
                return true;
            }
            return false;
        });
        return out;
    }

    /**
     * Drops every batch whose first offset is at or below {@code offset} (a trim beyond the tail).
     *
     * @param offset the offset, inclusive
     */
    public void dropStartingThrough(long offset) {
        byFirst.subList(0, floor(offset) + 1).clear();
    }

    /**
     * Every staged batch.
     *
     * @return an unmodifiable view, in offset order
     */
    public Collection<Staged<T>> all() {
        return Collections.unmodifiableCollection(byFirst);
    }

    /**
     * The batch staged at a first offset.
     *
     * @param firstOffset the first offset
     * @return the batch, or null
     */
    public Staged<T> at(long firstOffset) {
        int i = floor(firstOffset);
        if (i < 0) {
            return null;
        }
        Staged<T> s = byFirst.get(i);
        return s.firstOffset() == firstOffset ? s : null;
    }

    /**
     * Whether nothing is staged.
     *
     * @return true when empty
     */
    public boolean isEmpty() {
        return byFirst.isEmpty();
    }

    /**
     * The number of staged batches.
     *
     * @return the count
     */
    public int size() {
        return byFirst.size();
    }

    /** Drops everything (a provider closing, or losing staged batches by {@code DEFERRED_STAGE} rules). */
    public void clear() {
        byFirst.clear();
    }

    /** @return the index of the last batch whose first offset is at or below {@code offset}, or -1 */
    private int floor(long offset) {
        int n = byFirst.size();
        if (n > 0 && byFirst.get(n - 1).firstOffset() <= offset) {
            return n - 1; // the usual question: the newest batch
        }
        int lo = 0;
        int hi = n - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (byFirst.get(mid).firstOffset() <= offset) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** Inserts a batch in offset order, replacing one with the same first offset. */
    private void put(Staged<T> staged) {
        int i = floor(staged.firstOffset());
        if (i >= 0 && byFirst.get(i).firstOffset() == staged.firstOffset()) {
            byFirst.set(i, staged);
        } else {
            byFirst.add(i + 1, staged);
        }
    }

    /** Removes the batch at {@code firstOffset}: any, or only {@code expected} when that is non-null. */
    private void removeAt(long firstOffset, Staged<T> expected) {
        int i = floor(firstOffset);
        if (i >= 0) {
            Staged<T> s = byFirst.get(i);
            if (s.firstOffset() == firstOffset && (expected == null || s == expected || s.equals(expected))) {
                byFirst.remove(i);
            }
        }
    }
}
