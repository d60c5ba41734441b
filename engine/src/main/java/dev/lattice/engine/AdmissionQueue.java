package dev.lattice.engine;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.function.Consumer;

/**
 * One log's admission queue: admitted writes waiting to be cut into a batch, bounded by
 * {@code maxQueuedEntriesPerLog} writes and {@code maxQueuedBytesPerLog} entry bytes (a write always fits an empty
 * queue), and the asynchronous writes waiting for room in it (the overflow, at most {@code maxQueuedEntriesPerLog}),
 * admitted in arrival order as room appears.
 *
 * <p>Not thread-safe: the owning {@link LogPipeline}'s lock guards it.
 */
final class AdmissionQueue implements Iterable<PendingWrite> {

    private final LatticeConfig config;
    private final ArrayDeque<PendingWrite> queue = new ArrayDeque<>();
    private final ArrayDeque<PendingWrite> overflow = new ArrayDeque<>();
    private long bytes;

    AdmissionQueue(LatticeConfig config) {
        this.config = config;
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    /** @return admitted writes waiting */
    int size() {
        return queue.size();
    }

    /** @return entry bytes of the admitted writes waiting */
    long bytes() {
        return bytes;
    }

    /** @return the oldest admitted write, or null */
    PendingWrite peek() {
        return queue.peek();
    }

    /** @return the oldest admitted write, removed, or null */
    PendingWrite poll() {
        PendingWrite w = queue.poll();
        if (w != null) {
            bytes -= w.entry.length;
        }
        return w;
    }

    /** @return whether {@code w} fits the queue now */
    boolean hasRoom(PendingWrite w) {
        return queue.isEmpty() || (queue.size() < config.maxQueuedEntriesPerLog
                && bytes + w.entry.length <= config.maxQueuedBytesPerLog);
    }

    /** Admits a write (room checked by the caller). */
    void add(PendingWrite w) {
        queue.add(w);
        bytes += w.entry.length;
    }

    /** @return the admitted writes in order (do not modify the queue while iterating) */
    @Override
    public Iterator<PendingWrite> iterator() {
        return queue.iterator();
    }

    /** Removes every admitted write, oldest first, handing each to {@code to}. */
    void drain(Consumer<PendingWrite> to) {
        PendingWrite w;
        while ((w = queue.poll()) != null) {
            to.accept(w);
        }
        bytes = 0;
    }

    /** @return true when no asynchronous write waits for room */
    boolean overflowEmpty() {
        return overflow.isEmpty();
    }

    /** @return asynchronous writes waiting for room */
    int overflowSize() {
        return overflow.size();
    }

    /**
     * Parks an asynchronous write until there is room.
     *
     * @return false when the overflow is full too (the write is not taken)
     */
    boolean offerOverflow(PendingWrite w) {
        if (overflow.size() >= config.maxQueuedEntriesPerLog) {
            return false;
        }
        overflow.add(w);
        return true;
    }

    /** Moves asynchronous writes that waited for room into the queue, in order, while there is room. */
    void admitOverflow() {
        PendingWrite w;
        while ((w = overflow.peek()) != null && hasRoom(w)) {
            overflow.poll();
            add(w);
        }
    }

    /** Removes every asynchronous write still waiting for room, handing each to {@code to}. */
    void drainOverflow(Consumer<PendingWrite> to) {
        PendingWrite w;
        while ((w = overflow.poll()) != null) {
            to.accept(w);
        }
    }

    /** @return how full the queue is, 0..1 and more: the larger of its write and byte shares */
    double fill() {
        return Math.max(queue.size() / (double) config.maxQueuedEntriesPerLog,
                bytes / (double) config.maxQueuedBytesPerLog);
    }
}
