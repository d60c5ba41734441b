package dev.lattice.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Chooses, when a tree is created, the provider key each of its logs lives on (see {@link Placement}). Called once
 * per new tree; the result is stored in the catalog, so changing the policy later does not move existing trees.
 * Implementations must be thread-safe and deterministic enough for the caller's needs.
 */
@FunctionalInterface
public interface PlacementPolicy {

    /** The key that always exists: the lattice's main provider, which also holds the catalog. */
    String DEFAULT_KEY = "default";

    /**
     * Chooses a provider key for each partition of a new tree.
     *
     * @param tree the new tree's name
     * @param partitions its partition count
     * @param registeredKeys the provider keys registered in this lattice (always contains {@link #DEFAULT_KEY})
     * @return one provider key per partition; each must be registered
     */
    List<String> place(String tree, int partitions, List<String> registeredKeys);

    /** {@return the default policy: every log on {@link #DEFAULT_KEY}} */
    static PlacementPolicy allOnDefault() {
        return (tree, partitions, keys) -> java.util.Collections.nCopies(partitions, DEFAULT_KEY);
    }

    /**
     * Partition {@code p} goes to {@code keys[p % keys.length]}.
     *
     * @param keys the provider keys to spread over, at least one
     * @return the policy
     * @throws IllegalArgumentException if no key is given
     */
    static PlacementPolicy roundRobin(String... keys) {
        List<String> ks = List.of(keys);
        if (ks.isEmpty()) {
            throw new IllegalArgumentException("round-robin placement needs at least one provider key");
        }
        ks.forEach(k -> Objects.requireNonNull(k, "key"));
        return (tree, partitions, registered) -> {
            List<String> out = new ArrayList<>(partitions);
            for (int p = 0; p < partitions; p++) {
                out.add(ks.get(p % ks.size()));
            }
            return out;
        };
    }
}
