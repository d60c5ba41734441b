package dev.lattice.spi;

/**
 * Describes one published checkpoint: a snapshot of a partition's state as of an offset.
 *
 * <p>Immutable and thread-safe.
 *
 * @param throughOffset the snapshot includes every entry at or below this offset (inclusive); {@code >= -1}
 * @param formatVersion the engine's snapshot format version, opaque to the provider, {@code >= 0}
 * @param sizeBytes the stream's length, in bytes
 * @param epoch the epoch of the fence that published it
 */
public record CheckpointInfo(long throughOffset, int formatVersion, long sizeBytes, long epoch) {

    /**
     * Creates the description.
     *
     * @param throughOffset the snapshot includes every entry at or below this offset (inclusive); {@code >= -1}
     * @param formatVersion the engine's snapshot format version, opaque to the provider, {@code >= 0}
     * @param sizeBytes the stream's length, in bytes
     * @param epoch the epoch of the fence that published it
     * @throws IllegalArgumentException if {@code throughOffset < -1}, {@code formatVersion < 0},
     *     {@code sizeBytes < 0} or {@code epoch < 1}
     */
    public CheckpointInfo {
        if (throughOffset < -1 || formatVersion < 0 || sizeBytes < 0 || epoch < 1) {
            throw new IllegalArgumentException("bad checkpoint info: through " + throughOffset + ", format "
                    + formatVersion + ", size " + sizeBytes + ", epoch " + epoch);
        }
    }
}
