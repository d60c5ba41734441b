package dev.lattice.engine;

import dev.lattice.spi.LogId;

import java.util.Objects;

/**
 * One thing wrong with a log of an open tree, as reported by {@link Tree#healthIssues()}: the causes behind a
 * {@link SaturationState} other than {@code HEALTHY}, and conditions that do not block writes yet but need an
 * operator (a checkpoint the provider cannot store). Meters carry the same conditions (docs/reliability.md).
 *
 * <p>Immutable and thread-safe.
 *
 * @param log the log
 * @param kind what is wrong
 * @param detail a sentence for an operator: what happened, the limit or the call involved
 */
public record HealthIssue(LogId log, Kind kind, String detail) {

    /** What is wrong. */
    public enum Kind {
        /** Another process claimed the log; the tree's reads and writes throw {@link OwnershipLostException}. */
        OWNERSHIP_LOST,
        /** The log cannot be written by this process any more for another reason (its state diverged). */
        LOG_FAILED,
        /** A provider call has not returned within {@code LatticeConfig providerCallTimeout}; writes are refused. */
        PROVIDER_CALL_OVERDUE,
        /** The provider failed a batch and the log is recovering (reconcile) or waiting to retry it. */
        PROVIDER_FAILING,
        /** The partition's checkpoint exceeds the provider's {@code maxCheckpointBytes}: not uploaded, no trim. */
        CHECKPOINT_TOO_LARGE,
        /** The last checkpoint or trim failed; it is retried at the next threshold. */
        CHECKPOINT_FAILING
    }

    /**
     * Creates an issue (a record of what is wrong with one log, and since when).
     *
     * @param log the log
     * @param kind what is wrong
     * @param detail a sentence for an operator: what happened, the limit or the call involved
     * @throws NullPointerException if an argument is null
     */
    public HealthIssue {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(detail, "detail");
    }
}
