package dev.lattice.engine;

import dev.lattice.spi.LogId;

/**
 * How a new tree is created: its partition count and the version of its partition hash. Both are fixed for the
 * tree's life; an existing tree keeps what it was created with. Immutable and thread-safe.
 *
 * <pre>{@code
 * Tree t = lattice.tree("orders", TreeOptions.partitions(16));
 * }</pre>
 *
 * @param partitions partitions, 1..{@value LogId#MAX_PARTITION}+1; 0 means the lattice's configured default
 * @param hashVersion partition hash version: 2 (the default: mixes every character of the key) or 1 (the hash of
 *     trees created before versions existed)
 */
public record TreeOptions(int partitions, int hashVersion) {

    /** The hash version new trees get unless told otherwise. */
    public static final int LATEST_HASH_VERSION = 2;

    /**
     * Validates the options.
     *
     * @param partitions partitions, 1..4096, or 0 for the configured default
     * @param hashVersion partition hash version, 1 or 2
     * @throws IllegalArgumentException if the partition count is out of range or the hash version unknown
     */
    public TreeOptions {
        if (partitions < 0 || partitions > LogId.MAX_PARTITION + 1) {
            throw new IllegalArgumentException("partitions must be in 1.." + (LogId.MAX_PARTITION + 1)
                    + " (or 0 for the configured default), got " + partitions);
        }
        PartitionHash.of(hashVersion);
    }

    /** {@return the configured partition count and the latest hash version} */
    public static TreeOptions defaults() {
        return new TreeOptions(0, LATEST_HASH_VERSION);
    }

    /**
     * Options for a tree with the given partition count and defaults otherwise.
     *
     * @param partitions the partition count, 1..4096
     * @return options with that count and the latest hash version
     * @throws IllegalArgumentException if the count is out of range
     */
    public static TreeOptions partitions(int partitions) {
        if (partitions == 0) {
            throw new IllegalArgumentException("partitions must be in 1.." + (LogId.MAX_PARTITION + 1) + ", got 0");
        }
        return new TreeOptions(partitions, LATEST_HASH_VERSION);
    }

    /**
     * A copy with another partition hash version.
     *
     * @param version the partition hash version, 1 or 2
     * @return these options with that hash version
     * @throws IllegalArgumentException if the version is unknown
     */
    public TreeOptions withHashVersion(int version) {
        return new TreeOptions(partitions, version);
    }
}
