package dev.lattice.testkit;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A delay range shared by {@link LatencyProvider} and {@link FaultInjectingProvider}: fixed when min equals max,
 * otherwise uniform in {@code [min, max]}. The bounds are volatile; drawing uses the caller's random source (and
 * the caller's lock, if it needs a reproducible sequence).
 */
final class Latency {

    private volatile long minNanos;
    private volatile long maxNanos;

    /**
     * @param min the shortest delay, inclusive
     * @param max the longest delay, inclusive, {@code >= min}
     * @throws IllegalArgumentException if negative or {@code max < min}
     */
    void set(Duration min, Duration max) {
        if (min.isNegative() || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("need 0 <= min <= max, got " + min + ", " + max);
        }
        maxNanos = max.toNanos();
        minNanos = min.toNanos();
    }

    /**
     * @param random draws the delay when the range is not a single value (not touched otherwise)
     * @return the next delay, ns
     */
    long draw(Random random) {
        long lo = minNanos;
        long hi = maxNanos;
        return hi > lo ? lo + (long) (random.nextDouble() * (hi - lo + 1)) : lo;
    }

    /**
     * Sleeps.
     *
     * @param nanos how long, ns; nothing happens at 0
     * @param op the call being delayed, for the message
     * @param log its log, or null
     * @throws ProviderUnavailableException if interrupted (the interrupt flag is set again)
     */
    static void pause(long nanos, SpiOperation op, LogId log) {
        if (nanos <= 0) {
            return;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ProviderUnavailableException(log, op + " interrupted while waiting", e);
        }
    }
}
