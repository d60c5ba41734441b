package dev.lattice.spi;

/**
 * A run store's declared limits and costs, which the engine sizes runs and blocks by.
 *
 * @param maxRunBytes the largest run {@link RunStore#write} accepts, in bytes
 * @param preferredReadBytes the read size that costs about one backend request (a chunk, a range GET that is still
 *     cheap), in bytes; the engine sizes run blocks at or below it
 * @param readLatencyMicros the typical latency of one ranged read on this backend, in microseconds (0 for memory),
 *     for the engine's cost model (how much to cache, how many reads to run in parallel)
 */
public record RunLimits(long maxRunBytes, int preferredReadBytes, long readLatencyMicros) {

    /**
     * Creates limits.
     *
     * @param maxRunBytes the largest run {@link RunStore#write} accepts, in bytes
     * @param preferredReadBytes the read size that costs about one backend request (a chunk, a range GET that is
     *     still cheap), in bytes; the engine sizes run blocks at or below it
     * @param readLatencyMicros the typical latency of one ranged read on this backend, in microseconds (0 for
     *     memory), for the engine's cost model (how much to cache, how many reads to run in parallel)
     * @throws IllegalArgumentException if a size is not positive or the latency is negative
     */
    public RunLimits {
        if (maxRunBytes <= 0 || preferredReadBytes <= 0 || readLatencyMicros < 0) {
            throw new IllegalArgumentException("bad run limits: maxRunBytes " + maxRunBytes + ", preferredReadBytes "
                    + preferredReadBytes + ", readLatencyMicros " + readLatencyMicros);
        }
    }
}
