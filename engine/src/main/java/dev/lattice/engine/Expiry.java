package dev.lattice.engine;

import java.time.Clock;
import java.time.Duration;

/** Validation of time-to-live and range bounds for writes. Stateless. */
final class Expiry {

    /** Bytes a PUT_TTL mutation adds to a put (the expiry). */
    static final int TTL_BYTES = 8;

    private Expiry() {
    }

    /**
     * @return the expiry of a write made now with {@code ttl} (epoch ms on {@code clock}), rounded up to whole ms
     * @throws IllegalArgumentException if {@code ttl} is null, zero or negative
     */
    static long expiresAt(Clock clock, Duration ttl) {
        if (ttl == null) {
            throw new IllegalArgumentException("ttl must not be null (use put without a ttl for a value that never "
                    + "expires)");
        }
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, got " + ttl);
        }
        long ms;
        try {
            ms = ttl.toMillis();
            if (Duration.ofMillis(ms).compareTo(ttl) < 0) {
                ms++; // sub-millisecond remainder: round up
            }
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE;
        }
        long now = clock.millis();
        return ms >= Long.MAX_VALUE - now ? Long.MAX_VALUE : now + ms;
    }

    /**
     * Validates range bounds.
     *
     * @throws IllegalArgumentException if a bound is null, or {@code from >= to}
     */
    static void checkRange(String from, String to) {
        if (from == null || to == null) {
            throw new IllegalArgumentException("deleteRange bounds must not be null (from " + (from == null ? "null"
                    : "'" + from + "'") + ", to " + (to == null ? "null" : "'" + to + "'") + ")");
        }
        if (from.compareTo(to) >= 0) {
            throw new IllegalArgumentException("deleteRange needs fromInclusive < toExclusive, got ['" + from + "', '"
                    + to + "')");
        }
    }
}
