package dev.lattice.cluster;

import dev.lattice.engine.LatticeException;
import dev.lattice.engine.Versioned;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The point reads of one node, batched per log (docs/cluster.md "Point reads in batches"): a read that finds no read
 * of its log in flight from this node goes at once, alone, as a {@link Op#GET} (a blocking one waits for its answer
 * on its own thread, {@link Router#call}), so a lone read costs what it did; the reads of that log that arrive while
 * one is in flight queue and go together, in arrival order, as one {@link Op#GET_BATCH} when it is answered (at most
 * {@value #MAX_KEYS} keys and half a message's budget of key bytes each). So under concurrency one message, and one
 * chain of hand-offs through both nodes' actors, carries many reads; at most one read message per log is in flight
 * from a node. The same rule as group commit's leader and followers, applied to reads.
 *
 * <p>Each read is linearizable as one sent alone: it is sent after it began, and the owner reads each key of a batch
 * as it reads a {@link Op#GET} (its read lease proven). A queued read fails with the operation timeout counted from
 * when it was asked; the answer of a batch completes its readers' futures on the node's reply threads. While a
 * hosting member is of protocol level 2 or below ({@link PeerProtocols}), or when an owner answers that it cannot read
 * {@link Op#GET_BATCH}, queued reads go one {@link Op#GET} each. Thread-safe.
 */
final class ReadBatcher {

    /** The most keys one {@link Op#GET_BATCH} carries. */
    static final int MAX_KEYS = 256;

    private final Router router;
    private final long keyBudgetBytes;
    private final ConcurrentHashMap<LogAddress, Lane> lanes = new ConcurrentHashMap<>();
    private volatile boolean enabled = true;
    private final java.util.concurrent.atomic.LongAdder batches = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder batchedReads = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder cut = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder fallbacks = new java.util.concurrent.atomic.LongAdder();

    /**
     * What this node's reads did so far (for tests and tuning; counts only grow).
     *
     * @param batches {@link Op#GET_BATCH} messages answered
     * @param batchedReads reads answered by them
     * @param cut batches answered in part (the message budget; their other reads went in the next batch)
     * @param fallbacks queued reads sent one {@link Op#GET} each because an owner could not read a batch
     */
    record Counts(long batches, long batchedReads, long cut, long fallbacks) {
    }

    /** @return the counts so far */
    Counts counts() {
        return new Counts(batches.sum(), batchedReads.sum(), cut.sum(), fallbacks.sum());
    }

    /** The reads of one log from this node: whether one is in flight, and those queued behind it. */
    private static final class Lane {
        boolean busy;
        final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    }

    private record Waiter(String key, CompletableFuture<Optional<Versioned>> answer, long deadlineNanos) {
    }

    /**
     * @param router sends the requests
     * @param messageBudget the bytes one cluster message may carry; a batch's keys take at most half of it
     */
    ReadBatcher(Router router, long messageBudget) {
        this.router = router;
        this.keyBudgetBytes = messageBudget / 2;
    }

    /**
     * Reads {@code key} of {@code log}, waiting on the calling thread.
     *
     * @return the value with its version and expiry, or empty when absent
     * @throws RuntimeException the typed error of {@link Router#call} (the owner's, or a timeout)
     */
    Optional<Versioned> get(LogAddress log, String key) {
        Lane lane = batching() ? lanes.computeIfAbsent(log, l -> new Lane()) : null;
        Waiter w = lane == null ? null : queueUnlessIdle(lane, key);
        if (w != null) {
            return Router.await(w.answer);
        }
        try {
            return found(router.call(log, Op.GET, point(key)));
        } finally {
            if (lane != null) {
                next(log, lane);
            }
        }
    }

    /**
     * Reads {@code key} of {@code log} without blocking.
     *
     * @return the value with its version and expiry, or empty when absent; completed on the node's reply threads,
     *     exceptionally with the typed error of {@link Router#send}
     */
    CompletableFuture<Optional<Versioned>> getAsync(LogAddress log, String key) {
        Lane lane = batching() ? lanes.computeIfAbsent(log, l -> new Lane()) : null;
        Waiter w = lane == null ? null : queueUnlessIdle(lane, key);
        if (w != null) {
            return w.answer;
        }
        CompletableFuture<Response> sent = router.send(log, Op.GET, point(key));
        if (lane != null) {
            sent.whenComplete((r, err) -> next(log, lane));
        }
        return sent.thenApply(ReadBatcher::found);
    }

    private boolean batching() {
        return enabled && router.protocols().understood(Op.GET_BATCH);
    }

    /** Harness hook: false sends every read alone, as before batching (same-run comparisons). */
    void enabled(boolean on) {
        this.enabled = on;
    }

    /** @return the waiter queued when a read of the lane is in flight, or null when the caller is to send it now */
    private Waiter queueUnlessIdle(Lane lane, String key) {
        synchronized (lane) {
            if (!lane.busy) {
                lane.busy = true;
                return null;
            }
            Waiter w = new Waiter(key, new CompletableFuture<>(),
                    System.nanoTime() + router.operationTimeout().toNanos());
            lane.queue.add(w);
            return w;
        }
    }

    /** After the lane's read was answered: sends what queued meanwhile as the next read, or marks the lane idle. */
    private void next(LogAddress log, Lane lane) {
        List<Waiter> batch = new ArrayList<>();
        long now = System.nanoTime();
        synchronized (lane) {
            long keyBytes = 0;
            while (!lane.queue.isEmpty() && batch.size() < MAX_KEYS) {
                Waiter w = lane.queue.peekFirst();
                long add = w.key.length() * 3L + 8;
                if (!batch.isEmpty() && keyBytes + add > keyBudgetBytes) {
                    break;
                }
                lane.queue.pollFirst();
                if (now - w.deadlineNanos > 0) {
                    w.answer.completeExceptionally(new LatticeException(Op.GET + " on " + log.entityId()
                            + ": no owner answered within the operation timeout (queued behind an earlier read)"));
                    continue;
                }
                keyBytes += add;
                batch.add(w);
            }
            if (batch.isEmpty()) {
                lane.busy = false;
                return;
            }
        }
        long within = Long.MAX_VALUE;
        for (Waiter w : batch) {
            within = Math.min(within, w.deadlineNanos - now);
        }
        CompletableFuture<Response> sent;
        if (batch.size() == 1) {
            sent = router.send(log, Op.GET, point(batch.get(0).key), router.requestTimeout(), Duration.ofNanos(within));
        } else {
            List<String> keys = new ArrayList<>(batch.size());
            for (Waiter w : batch) {
                keys.add(w.key);
            }
            sent = router.send(log, Op.GET_BATCH,
                    r -> new Request(Op.GET_BATCH, null, null, null, 0, false, keys, null, r),
                    router.requestTimeout(), Duration.ofNanos(within));
        }
        sent.whenComplete((r, err) -> {
            try {
                answered(log, lane, batch, r, err);
            } finally {
                next(log, lane);
            }
        });
    }

    private void answered(LogAddress log, Lane lane, List<Waiter> batch, Response r, Throwable err) {
        if (err != null) {
            Throwable c = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            if (batch.size() > 1 && c instanceof UnsupportedOperationException) {
                fallbacks.add(batch.size());
                for (Waiter w : batch) { // an owner of an older release: one GET each, beside the lane
                    router.send(log, Op.GET, point(w.key)).thenApply(ReadBatcher::found)
                            .whenComplete((v, e) -> complete(w, v, e));
                }
                return;
            }
            for (Waiter w : batch) {
                w.answer.completeExceptionally(c);
            }
            return;
        }
        if (batch.size() == 1) {
            batch.get(0).answer.complete(found(r));
            return;
        }
        int m = r.keys().size();
        batches.increment();
        batchedReads.add(m);
        for (int i = 0; i < m; i++) {
            long version = r.versions()[i];
            batch.get(i).answer.complete(version == 0 ? Optional.empty()
                    : Optional.of(new Versioned(r.values().get(i), version, r.expiries()[i])));
        }
        if (m < batch.size()) { // cut at the message budget: the rest go first in the next batch
            cut.increment();
            synchronized (lane) {
                for (int i = batch.size() - 1; i >= m; i--) {
                    lane.queue.addFirst(batch.get(i));
                }
            }
        }
    }

    private static void complete(Waiter w, Optional<Versioned> v, Throwable e) {
        if (e != null) {
            w.answer.completeExceptionally(e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
        } else {
            w.answer.complete(v);
        }
    }

    /** @return the value of a {@link Op#GET}'s answer */
    static Optional<Versioned> found(Response res) {
        return res.keys().isEmpty() ? Optional.empty()
                : Optional.of(new Versioned(res.values().get(0), res.versions()[0], res.expiries()[0]));
    }

    private static java.util.function.Function<org.apache.pekko.actor.typed.ActorRef<Response>, Request> point(
            String key) {
        return r -> Request.point(Op.GET, key, null, 0, r);
    }
}
