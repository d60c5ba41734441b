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

    /** A registered call; closing it unregisters it. */
    final class Watch implements AutoCloseable {
        final String op;
        final Object subject;
        final long deadlineNanos;
        final java.util.function.Consumer<Watch> onOverdue;
        /** Set by the watchdog before it runs the overdue action. */
        volatile boolean fired;
        // the caller's bookkeeping, guarded by the caller's lock
        boolean returned;
        boolean counted;

        Watch(String op, Object subject, long deadlineNanos, java.util.function.Consumer<Watch> onOverdue) {
            this.op = op;
            this.subject = subject;
            this.deadlineNanos = deadlineNanos;
            this.onOverdue = onOverdue;
        }

        /** @return the call, for messages ("stage of orders/3"); built only when needed */
        String what() {
            return op + " of " + subject;
        }

        @Override
        public void close() {
            if (timeoutNanos > 0) {
                calls.remove(this);
            }
        }
    }

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
     * Registers a call that starts now.
     *
     * @param op the call's name ("stage")
     * @param subject what it addresses (the log), for messages
     * @param onOverdue run once if the call is still registered at its deadline; must not block
     * @return the watch to close when the call returns
     */
    Watch watch(String op, Object subject, java.util.function.Consumer<Watch> onOverdue) {
        Watch w = new Watch(op, subject, System.nanoTime() + timeoutNanos, onOverdue);
        if (timeoutNanos > 0) {
            calls.put(w, Boolean.TRUE);
        }
        return w;
    }

    private void check() {
        long now = System.nanoTime();
        for (Watch w : calls.keySet()) {
            if (now - w.deadlineNanos >= 0 && calls.remove(w) != null) {
                w.fired = true;
                try {
                    w.onOverdue.accept(w);
                } catch (RuntimeException e) {
                    org.slf4j.LoggerFactory.getLogger(CallWatchdog.class).warn("overdue action of {} failed",
                            w.what(), e);
                }
            }
        }
    }
}
