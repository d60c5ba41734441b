package dev.lattice.spi;

import java.util.Objects;

/**
 * What {@link WalStorageProvider#repair(LogId, Fence)} did to a damaged log.
 *
 * <p>Immutable and thread-safe.
 *
 * @param log the repaired log
 * @param tailBefore the committed tail the log recorded before the repair ({@code -1} when none)
 * @param tailAfter the committed tail after the repair: the last intact offset before the damage
 * @param firstLostOffset the first offset removed, inclusive ({@code tailAfter + 1}); {@code -1} when nothing was
 *     lost
 * @param lastLostOffset the last offset removed, inclusive ({@code tailBefore}); {@code -1} when nothing was lost
 * @param detail what was found at the damage (which record, which region failed), for the operator
 */
public record RepairReport(LogId log, long tailBefore, long tailAfter, long firstLostOffset, long lastLostOffset,
                           String detail) {

    /**
     * Validates the report.
     *
     * @param log the repaired log
     * @param tailBefore the committed tail the log recorded before the repair ({@code -1} when none)
     * @param tailAfter the committed tail after the repair: the last intact offset before the damage
     * @param firstLostOffset the first offset removed, inclusive ({@code tailAfter + 1}); {@code -1} when nothing
     *     was lost
     * @param lastLostOffset the last offset removed, inclusive ({@code tailBefore}); {@code -1} when nothing was lost
     * @param detail what was found at the damage (which record, which region failed), for the operator
     * @throws NullPointerException if {@code log} or {@code detail} is null
     */
    public RepairReport {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(detail, "detail");
    }

    /**
     * A report of a log that had no damage.
     *
     * @param log the log
     * @param tail its committed tail
     * @return the report
     */
    public static RepairReport clean(LogId log, long tail) {
        return new RepairReport(log, tail, tail, -1, -1, "no damage found");
    }

    /** {@return true when nothing was lost} */
    public boolean isClean() {
        return firstLostOffset < 0;
    }

    /** {@return how many offsets were lost, {@code 0} when clean} */
    public long lostEntries() {
        return isClean() ? 0 : lastLostOffset - firstLostOffset + 1;
    }
}
