package dev.lattice.provider.postgres;

import dev.lattice.spi.BatchId;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What one provider instance knows about one log: the batches staged in memory (the provider declares
 * {@code DEFERRED_STAGE}) and the last head values it saw. The cached head only ever moves up (epochs, tails and
 * watermarks never decrease in the database), so a stale cache is merely behind: every decision that must be exact
 * is re-checked inside the database statement that acts on it.
 *
 * <p>Thread-safe: fields are guarded by this object's monitor; {@link #commitLock} serialises commits of the log
 * within the instance (held across the database round trip, never while taking the monitor's callers' locks).
 */
final class LogSlot {

    /** A staged batch: validated, copied into its frame, waiting for a commit. */
    record Staged(long first, long last, long epoch, BatchId id, byte[] frame, int count, long payloadBytes) {
    }

    /** Head values as read from {@code log_head}. */
    record Head(long logId, long epoch, long tail, long watermark) {
    }

    final ReentrantLock commitLock = new ReentrantLock();

    private boolean known;
    private long epoch;
    private long tail = -1;
    private long watermark = -1;
    private final TreeMap<Long, Staged> staged = new TreeMap<>();

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
     * Records head values read from the database (never moves anything down).
     *
     * @param h the head
     */
    synchronized void observe(Head h) {
        known = true;
        epoch = Math.max(epoch, h.epoch());
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
     * Stores a staged batch, replacing overlapping batches of older epochs.
     *
     * @param s the batch
     * @return null when stored (or already staged identically), else the overlapping batch that conflicts
     */
    synchronized Staged put(Staged s) {
        List<Long> older = new ArrayList<>();
        for (Staged o : overlapping(s.first(), s.last())) {
            if (o.epoch() < s.epoch()) {
                older.add(o.first());
            } else if (o.first() == s.first() && o.last() == s.last() && o.id().equals(s.id())) {
                return null;
            } else {
                return o;
            }
        }
        older.forEach(staged::remove);
        staged.put(s.first(), s);
        return null;
    }

    private List<Staged> overlapping(long first, long last) {
        List<Staged> out = new ArrayList<>();
        Map.Entry<Long, Staged> below = staged.floorEntry(first);
        if (below != null && below.getValue().last() >= first) {
            out.add(below.getValue());
        }
        out.addAll(staged.subMap(first, false, last, true).values());
        return out;
    }

    /**
     * The chain of batches staged under {@code epoch} covering {@code tail + 1 .. through} exactly.
     *
     * @param fromTail the committed tail the chain starts after
     * @param through the last offset
     * @param epochWanted the committing fence's epoch
     * @return the batches in order, or null when an offset is not staged under that epoch or {@code through} falls
     *     inside a batch
     */
    synchronized List<Staged> chain(long fromTail, long through, long epochWanted) {
        List<Staged> out = new ArrayList<>();
        long pos = fromTail + 1;
        while (pos <= through) {
            Staged s = staged.get(pos);
            if (s == null || s.epoch() != epochWanted || s.last() > through) {
                return null;
            }
            out.add(s);
            pos = s.last() + 1;
        }
        return out;
    }

    /**
     * Forgets staged batches at or below an offset (committed or trimmed now).
     *
     * @param through the offset
     */
    synchronized void dropThrough(long through) {
        staged.headMap(through, true).clear();
    }

    /**
     * Drops one staged batch if it is exactly the one described.
     *
     * @param first first offset
     * @param last last offset
     * @param epochOf the epoch it was staged under
     * @param id its batch id
     */
    synchronized void abort(long first, long last, long epochOf, BatchId id) {
        Staged s = staged.get(first);
        if (s != null && s.last() == last && s.epoch() == epochOf && s.id().equals(id)) {
            staged.remove(first);
        }
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
