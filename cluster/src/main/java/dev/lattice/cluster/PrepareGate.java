package dev.lattice.cluster;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Where the atomic-write prepares that begin a write's part in one partition's tree wait while a scan or count
 * across that tree's partitions holds them ({@link Op#PREPARE_HOLD}, placed by {@link CutHolds}). One per partition
 * entity.
 *
 * <p><b>What waits.</b> A prepare passed to {@link #admit} while at least one hold is in force waits until no hold
 * is left (released by {@link Op#PREPARE_RELEASE} or expired), or until it has waited {@link #bound()} itself,
 * whichever comes first; then it runs exactly as it would have without the gate (so it can still fail as before,
 * typed: {@link dev.lattice.engine.LatticeSaturatedException} when its keys stay locked past the engine's admission
 * timeout, and so on). So however many holds follow each other, no prepare waits longer than the bound in total;
 * without a hold the prepare runs at once, on the caller's thread, as before. Only prepares that would be a write's
 * first in this tree go through the gate: a write that has a part prepared in the tree already holds keys there,
 * a scan's snapshot waits for it, so holding it would stall the scan instead of helping it
 * ({@link PartitionEntity} and {@link AtomicCoordinator} decide which ones those are).
 *
 * <p><b>Holds.</b> Each hold has an id (the scan's or count's) and lasts at most the bound from its latest
 * {@link #place}; nobody has to release it: a hold whose scanner died or whose release was lost ends by itself. A
 * bound of zero turns holds off: {@link #place} grants nothing. {@link #close} (the partition is released) ends all
 * holds and lets every waiting prepare go on (it then meets the partition's new state, typically
 * {@link dev.lattice.engine.PartitionNotHostedException}, which its sender retries at the new owner).
 *
 * <p>Waiting prepares go on on {@code runner}; a timer wakes the gate when a hold expires or a waiter's bound
 * passes. Thread-safe.
 */
final class PrepareGate {

    private final long boundNanos;
    private final ScheduledExecutorService timer;
    private final Executor runner;
    /** Hold id to its expiry ({@link System#nanoTime}). Guarded by this. */
    private final Map<Long, Long> holds = new HashMap<>();
    /** Guarded by this. */
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    /** Guarded by this. */
    private boolean closed;
    /** Prepares that waited, and their total wait in nanoseconds. Guarded by this. */
    private long heldPrepares;
    private long heldNanos;

    private record Waiting(long since, Runnable go) {
    }

    /**
     * @param bound the longest a hold lasts and the longest one prepare waits, 0 for no holds
     * @param timer wakes the gate at expiries
     * @param runner where waiting prepares go on
     */
    PrepareGate(Duration bound, ScheduledExecutorService timer, Executor runner) {
        if (bound.isNegative()) {
            throw new IllegalArgumentException("bound must not be negative, got " + bound);
        }
        this.boundNanos = bound.toNanos();
        this.timer = timer;
        this.runner = runner;
    }

    /** @return the longest a hold lasts and a prepare waits (zero: holds are off) */
    Duration bound() {
        return Duration.ofNanos(boundNanos);
    }

    /**
     * Places the hold {@code id}, or renews it: it ends {@code millis} from now (at most the bound), or when
     * released.
     *
     * @param id the hold's id (the same for every partition of one scan or count)
     * @param millis how long the hold is asked for
     * @return how long it is granted, in milliseconds (0: nothing held, because holds are off, {@code millis} is
     *     not positive or the gate is closed)
     */
    long place(long id, long millis) {
        long d = Math.min(TimeUnit.MILLISECONDS.toNanos(Math.max(0, millis)), boundNanos);
        synchronized (this) {
            if (closed || d <= 0) {
                return 0;
            }
            holds.merge(id, System.nanoTime() + d, Math::max);
        }
        wakeAfter(d);
        return TimeUnit.NANOSECONDS.toMillis(d);
    }

    /**
     * Ends the hold {@code id} (nothing when it ended already); prepares that no other hold keeps go on.
     *
     * @param id the hold's id
     * @return true when the hold was still in force
     */
    boolean release(long id) {
        boolean was;
        synchronized (this) {
            Long until = holds.remove(id);
            was = until != null && until - System.nanoTime() > 0;
        }
        drain();
        return was;
    }

    /**
     * Runs {@code prepare} now when no hold is in force, or later (on the runner) when the holds end or it has
     * waited the bound.
     *
     * @param prepare starts the prepare; what it throws completes the answer exceptionally
     * @return the prepare's answer
     */
    <T> CompletableFuture<T> admit(Supplier<CompletableFuture<T>> prepare) {
        long now = System.nanoTime();
        synchronized (this) {
            if (!closed && held(now)) {
                CompletableFuture<T> out = new CompletableFuture<>();
                waiting.add(new Waiting(now, () -> call(prepare).whenComplete((v, e) -> {
                    if (e != null) {
                        out.completeExceptionally(e);
                    } else {
                        out.complete(v);
                    }
                })));
                wakeAfter(boundNanos);
                return out;
            }
        }
        return call(prepare);
    }

    /** Ends every hold and lets the waiting prepares go on; later holds are not granted. Idempotent. */
    void close() {
        synchronized (this) {
            closed = true;
            holds.clear();
        }
        drain();
    }

    /** @return true while a hold is in force */
    synchronized boolean held() {
        return held(System.nanoTime());
    }

    /** @return prepares that waited at this gate so far */
    synchronized long heldPrepares() {
        return heldPrepares;
    }

    /** @return their total wait, in milliseconds */
    synchronized long heldMillis() {
        return TimeUnit.NANOSECONDS.toMillis(heldNanos);
    }

    /** Drops expired holds. Caller holds the monitor. */
    private boolean held(long now) {
        holds.values().removeIf(until -> until - now <= 0);
        return !holds.isEmpty();
    }

    /** Lets go the waiters whose holds ended or whose bound passed. */
    private void drain() {
        List<Runnable> go = new ArrayList<>();
        synchronized (this) {
            if (waiting.isEmpty()) {
                return;
            }
            long now = System.nanoTime();
            boolean free = closed || !held(now);
            for (Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
                Waiting w = it.next();
                if (free || now - w.since >= boundNanos) {
                    it.remove();
                    heldPrepares++;
                    heldNanos += now - w.since;
                    go.add(w.go);
                }
            }
        }
        for (Runnable r : go) {
            try {
                runner.execute(r);
            } catch (RejectedExecutionException e) {
                r.run(); // the node's pool is shutting down: go on here
            }
        }
    }

    private void wakeAfter(long nanos) {
        try {
            timer.schedule(this::drain, nanos + 100_000, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            drain(); // the node is closing: nobody would wake the waiters later
        }
    }

    private static <T> CompletableFuture<T> call(Supplier<CompletableFuture<T>> prepare) {
        try {
            return prepare.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
