package dev.lattice.engine;

/**
 * How loaded a tree's write path is, from admission depth, provider latency and failures. Ordered from best to
 * worst.
 */
public enum SaturationState {
    /** Writes are admitted at once. */
    HEALTHY,
    /**
     * Admission queues are over half full, the provider recently needed retries, or the last checkpoint was refused
     * or failed: writers may wait; callers should slow down. {@link Tree#healthIssues()} names the cause.
     */
    THROTTLED,
    /**
     * Admission queues are (nearly) full, the provider is failing, a provider call is past its deadline, or another
     * process claimed a log of the tree: writers wait and may get {@link LatticeSaturatedException} (or
     * {@link OwnershipLostException}). {@link Tree#healthIssues()} names the cause.
     */
    SATURATED
}
