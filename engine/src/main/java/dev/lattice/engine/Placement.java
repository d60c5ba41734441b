package dev.lattice.engine;

import java.util.List;
import java.util.Objects;

/**
 * Where the logs of a tree live: the provider key of each partition's log, stored durably in the catalog when the
 * tree is created and changed only by a move (which raises the version).
 *
 * <p>Immutable and thread-safe.
 *
 * @param tree the tree name
 * @param version the placement's version, 1 at creation
 * @param keys provider key of partition {@code p} at index {@code p}; as many entries as partitions
 */
public record Placement(String tree, long version, List<String> keys) {

    /**
     * Creates a placement.
     *
     * @param tree the tree name
     * @param version the placement's version, 1 at creation
     * @param keys provider key of partition {@code p} at index {@code p}; as many entries as partitions
     * @throws NullPointerException if a component or key is null
     * @throws IllegalArgumentException if {@code keys} is empty or the version is below 1
     */
    public Placement {
        Objects.requireNonNull(tree, "tree");
        keys = List.copyOf(keys);
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("a placement names at least one partition's key");
        }
        if (version < 1) {
            throw new IllegalArgumentException("placement version must be >= 1, got " + version);
        }
    }

    /**
     * Names the provider key that holds a partition's log.
     *
     * @param partition a partition number
     * @return the provider key its log lives on
     * @throws IndexOutOfBoundsException if the tree has no such partition
     */
    public String keyOf(int partition) {
        return keys.get(partition);
    }

    /** {@return the distinct keys, in first-use order} */
    public List<String> distinctKeys() {
        return keys.stream().distinct().toList();
    }
}
