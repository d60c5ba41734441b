package dev.lattice.testkit;

import java.util.concurrent.TimeUnit;

/**
 * A permits-per-second limiter for {@link ThrottledProvider}. Permits not used while idle are saved, up to one
 * second's worth, and spent first (a short burst after a pause). A request never waits for its own permits: it waits
 * until the permits of the requests before it have been paid for, and its own cost delays the next one, so one
 * large request does not stall itself. Thread-safe.
 */
final class RateLimit {

    /** One request's cost is capped at a day, so that a huge request cannot overflow the clock arithmetic. */
    private static final double MAX_DEBT_NANOS = TimeUnit.DAYS.toNanos(1);

    private final double nanosPerPermit;
    private final double maxSaved;
    private double saved;
    private long nextFreeNanos = System.nanoTime();

    /**
     * @param permitsPerSecond the rate, {@code > 0}
     * @throws IllegalArgumentException if the rate is not positive (or not a number)
     */
    RateLimit(double permitsPerSecond) {
        if (!(permitsPerSecond > 0) || Double.isInfinite(permitsPerSecond)) {
            throw new IllegalArgumentException("rate must be > 0 and finite, got " + permitsPerSecond);
        }
        this.nanosPerPermit = TimeUnit.SECONDS.toNanos(1) / permitsPerSecond;
        this.maxSaved = permitsPerSecond;
    }

    /**
     * Takes permits, sleeping until the earlier requests' permits are paid for. An interrupt ends the wait early and
     * sets the interrupt flag again.
     *
     * @param permits how many, {@code >= 1}
     */
    void acquire(long permits) {
        long waitNanos = reserve(permits) - System.nanoTime();
        if (waitNanos > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(waitNanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return the time (System.nanoTime) at which the caller may go */
    private synchronized long reserve(long permits) {
        long now = System.nanoTime();
        if (now > nextFreeNanos) {
            saved = Math.min(maxSaved, saved + (now - nextFreeNanos) / nanosPerPermit);
            nextFreeNanos = now;
        }
        long go = nextFreeNanos;
        double fromSaved = Math.min(permits, saved);
        saved -= fromSaved;
        double cost = (permits - fromSaved) * nanosPerPermit;
        nextFreeNanos += (long) Math.min(cost, MAX_DEBT_NANOS);
        return go;
    }
}
