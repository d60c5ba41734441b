package dev.lattice.engine;

/**
 * How loaded a tree's write path is, from admission depth, provider latency and failures. Ordered from best to
 * worst.
 */
public enum SaturationState {
    /** Writes are admitted at once. */
    HEALTHY,
    /**
     * Admission queues are over half full or the provider recently needed retries: writers may wait; callers should
     * slow down.
     */
    THROTTLED,
    /** Admission queues are (nearly) full or the provider is failing: writers wait and may get
     * {@link LatticeSaturatedException}. */
    SATURATED
}
