package dev.lattice.engine;

import java.time.Duration;

/**
 * Notices when a log stops changing: {@link #idleNow} is true once per idle period, when the log's applied offset has
 * not moved for the delay (the trigger of the idle merge of level 0, {@link CompactionPolicy#idle}).
 *
 * <p>Not thread-safe: one timer thread polls it.
 */
final class IdleWatch {

    private final long delayNanos;
    private long seenOffset = Long.MIN_VALUE;
    private long sinceNanos;
    private boolean reported;

    /**
     * @param delay how long the offset must stay put; zero turns the watch off
     */
    IdleWatch(Duration delay) {
        this.delayNanos = delay.toNanos();
    }

    /**
     * Polls the watch.
     *
     * @param appliedOffset the log's applied offset now
     * @param nowNanos {@link System#nanoTime()} now
     * @return true the first time the offset has been the same for the delay since it last moved (or since the first
     *     poll); false otherwise, and always when the watch is off
     */
    boolean idleNow(long appliedOffset, long nowNanos) {
        if (delayNanos == 0) {
            return false;
        }
        if (appliedOffset != seenOffset) {
            seenOffset = appliedOffset;
            sinceNanos = nowNanos;
            reported = false;
            return false;
        }
        if (reported || nowNanos - sinceNanos < delayNanos) {
            return false;
        }
        reported = true;
        return true;
    }
}
