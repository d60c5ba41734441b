package dev.lattice.engine;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when told, for time-to-live tests. Thread-safe. */
final class ManualClock extends Clock {
    private final AtomicLong millis;

    ManualClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    /** Starts at the real time (versions, which follow the clock, stay above those of earlier real writes). */
    ManualClock() {
        this(System.currentTimeMillis());
    }

    void advance(long ms) {
        millis.addAndGet(ms);
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
