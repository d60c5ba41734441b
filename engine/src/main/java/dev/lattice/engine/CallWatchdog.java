package dev.lattice.engine;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Bounds how long anyone waits for a provider call. The SPI is synchronous and a backend can hang, so every call
 * the engine makes is registered here with its deadline; a call still running at its deadline has its overdue
 * action run once (on the watchdog's timer thread), which answers whoever waits on it (as an uncertain outcome)
 * without waiting for the call to return. The call itself is not interrupted: an interrupt would close a provider's
 * interruptible file channels, and a second call on the same log while the first still runs could reorder commits.
 * The call ends when the backend answers or the provider's own timeout fires (docs/reliability.md).
 *
 * <p>Thread-safe.
 */
final class CallWatchdog {

    /**
     * A registered call; closing it unregisters it. Each thread reuses one watch for its calls (no allocation per
     * call); a nested call, or one after the thread's watch fired, gets a watch of its own. A closed watch holds
     * neither its subject nor its action (a thread's reused watch must not keep a closed engine reachable).
     */
    static final class Watch implements AutoCloseable {
        String op;
        Object subject;
        long deadlineNanos;
        java.util.function.Consumer<Watch> onOverdue;
        /** Set once the watchdog took the call (before it runs the overdue action, or when close finds it taken). */
        volatile boolean fired;
        // the caller's bookkeeping, guarded by the caller's lock
        boolean returned;
        boolean counted;
        /** Odd while a call runs; the owner's close and the watchdog's firing each move it on by one (CAS). */
        private final java.util.concurrent.atomic.AtomicLong seq = new java.util.concurrent.atomic.AtomicLong();
        private final Thread owner;
        private final boolean resident;
        /** A resident watch between watch and close (owner thread only). */
        private boolean inUse;

        Watch(Thread owner, boolean resident) {
            this.owner = owner;
            this.resident = resident;
        }

        private void arm(String op, Object subject, long deadlineNanos, java.util.function.Consumer<Watch> onOverdue) {
            this.op = op;
            this.subject = subject;
            this.deadlineNanos = deadlineNanos;
            this.onOverdue = onOverdue;
            this.fired = false;
            this.returned = false;
            this.counted = false;
            seq.incrementAndGet(); // odd: running; publishes the fields above
        }

        /** @return the call, for messages ("stage of orders/3"); built only when needed */
        String what() {
            return op + " of " + subject;
        }

        @Override
        public void close() {
            inUse = false;
            long s = seq.get();
            if ((s & 1) == 0 || !seq.compareAndSet(s, s + 1)) {
                fired = true; // the watchdog took it first (its overdue action runs or ran): never re-armed
                return;
            }
            subject = null;
            onOverdue = null;
        }

        /** Watchdog thread: takes the call if it is still the one seen running at {@code s}. */
        private boolean take(long s) {
            return seq.compareAndSet(s, s + 1);
        }
    }

    private final java.util.Set<Watch> residents = ConcurrentHashMap.newKeySet();
    private final ThreadLocal<Watch> reusable = new ThreadLocal<>();
    private final ConcurrentHashMap<Watch, Boolean> calls = new ConcurrentHashMap<>();
    private final long timeoutNanos;

    /**
     * @param timer the thread that checks deadlines
     * @param timeoutMillis each call's deadline after its start, in ms; {@code 0} disables the watchdog
     */
    CallWatchdog(ScheduledExecutorService timer, long timeoutMillis) {
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        if (timeoutMillis > 0) {
            long period = Math.max(5, Math.min(250, timeoutMillis / 8));
            timer.scheduleWithFixedDelay(this::check, period, period, TimeUnit.MILLISECONDS);
        }
    }

    /** @return the deadline of each call in ms, {@code 0} when disabled */
    long timeoutMillis() {
        return TimeUnit.NANOSECONDS.toMillis(timeoutNanos);
    }

    /**
     * Registers a call that starts now, on the calling thread.
     *
     * @param op the call's name ("stage")
     * @param subject what it addresses (the log), for messages
     * @param onOverdue run once if the call is still registered at its deadline; must not block
     * @return the watch to close (on the same thread) when the call returns
     */
    Watch watch(String op, Object subject, java.util.function.Consumer<Watch> onOverdue) {
        long deadline = System.nanoTime() + timeoutNanos;
        Watch w = reusable.get();
        if (w == null || w.fired) { // a fired watch may still be read by its overdue action: a new one
            w = new Watch(Thread.currentThread(), true);
            reusable.set(w);
            if (timeoutNanos > 0) {
                residents.add(w);
            }
        } else if (w.inUse) {
            w = new Watch(Thread.currentThread(), false); // a call inside a call
            w.arm(op, subject, deadline, onOverdue);
            if (timeoutNanos > 0) {
                calls.put(w, Boolean.TRUE);
            }
            return w;
        }
        w.inUse = true;
        w.arm(op, subject, deadline, onOverdue);
        return w;
    }

    private void check() {
        long now = System.nanoTime();
        for (Watch w : residents) {
            long s = w.seq.get();
            if ((s & 1) == 0) {
                if (!w.owner.isAlive()) {
                    residents.remove(w);
                }
                continue;
            }
            if (now - w.deadlineNanos >= 0 && w.take(s)) {
                residents.remove(w); // never re-armed (its thread makes a new one)
                fire(w);
            }
        }
        for (Watch w : calls.keySet()) {
            long s = w.seq.get();
            if ((s & 1) == 0) {
                calls.remove(w);
            } else if (now - w.deadlineNanos >= 0 && w.take(s)) {
                calls.remove(w);
                fire(w);
            }
        }
    }

    private void fire(Watch w) {
        w.fired = true;
        try {
            w.onOverdue.accept(w);
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(CallWatchdog.class).warn("overdue action of {} failed", w.what(), e);
        }
    }
}
