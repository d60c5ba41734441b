package dev.lattice.provider.chronicle;

import net.openhft.chronicle.core.time.TimeProvider;

/**
 * The clock one log's Chronicle queue picks its cycle with (docs/providers/chronicle.md "Trim and retention"): the
 * configured clock plus a forward shift, never going back. Chronicle derives the cycle a document goes to from the
 * time ({@code (millis - epoch) / cycle length}) and rolls to a new cycle file when that cycle changes, so moving
 * this clock to the start of the next cycle makes the next document start a new file: that is how a log rolls by
 * size ({@link #advanceToCycle}). The shift only grows; it is also raised at open so that the clock is never before
 * the start of the newest cycle file (after size rolls the newest cycle can be ahead of the wall clock, and a clock
 * behind it would make Chronicle write into an older cycle file than one already written).
 *
 * <p>Thread-safe (synchronized; Chronicle asks once per document and per tailer move).
 */
final class CycleClock implements TimeProvider {

    private final TimeProvider base;
    private long shiftMillis;
    private long lastMillis = Long.MIN_VALUE;

    /** @param base the configured clock */
    CycleClock(TimeProvider base) {
        this.base = base;
    }

    /** @return the configured clock's time plus the shift, in ms since the epoch; never less than a previous value */
    @Override
    public synchronized long currentTimeMillis() {
        long t = base.currentTimeMillis() + shiftMillis;
        if (t < lastMillis) {
            // the configured clock went back: keep the cycle where it is
            shiftMillis += lastMillis - t;
            t = lastMillis;
        }
        lastMillis = t;
        return t;
    }

    /** @return {@link #currentTimeMillis()} in microseconds */
    @Override
    public long currentTimeMicros() {
        return currentTimeMillis() * 1_000L;
    }

    /** @return {@link #currentTimeMillis()} in nanoseconds */
    @Override
    public long currentTimeNanos() {
        return currentTimeMillis() * 1_000_000L;
    }

    /**
     * Moves the clock forward, if needed, so that it reads at least the start of a cycle.
     *
     * @param cycle the cycle number
     * @param epochMillis the queue's epoch, in ms
     * @param cycleMillis the length of one cycle, in ms
     */
    synchronized void advanceToCycle(int cycle, long epochMillis, long cycleMillis) {
        long start = epochMillis + cycle * cycleMillis;
        long now = base.currentTimeMillis() + shiftMillis;
        if (now < start) {
            shiftMillis += start - now;
        }
        lastMillis = Math.max(lastMillis, start);
    }

    /** @return the shift ahead of the configured clock, in ms (0 until the log rolled by size) */
    synchronized long shiftMillis() {
        return shiftMillis;
    }
}
