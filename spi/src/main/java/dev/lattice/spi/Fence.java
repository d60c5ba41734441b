package dev.lattice.spi;

/**
 * A writer's claim on a log, returned by {@link WalStorageProvider#claim(LogId)}. Every {@code commit}, {@code trim}
 * and checkpoint {@code publish} is conditional on the fence's epoch still being the log's current epoch; once a
 * newer claim exists, calls with this fence throw {@link FencedException}.
 *
 * <p>A fence belongs to the writer that claimed it, through the provider instance it was claimed on; using it
 * through another instance (another process) is not supported, and a provider may refuse it.
 *
 * <p>Immutable and thread-safe.
 *
 * @param log the log the fence was claimed on
 * @param epoch the epoch, at least 1; each claim returns a strictly higher epoch than any before it on that log
 */
public record Fence(LogId log, long epoch) {

    /**
     * Creates a fence.
     *
     * @param log the log the fence was claimed on
     * @param epoch the epoch, at least 1; each claim returns a strictly higher epoch than any before it on that log
     * @throws NullPointerException if {@code log} is null
     * @throws IllegalArgumentException if {@code epoch < 1}
     */
    public Fence {
        java.util.Objects.requireNonNull(log, "log");
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be >= 1, got " + epoch);
        }
    }

    @Override
    public String toString() {
        return log + "@epoch" + epoch;
    }
}
