package dev.lattice.cluster;

import dev.lattice.engine.PartialTree;

import java.util.ArrayList;
import java.util.List;

/** Keys chosen by a tree's own partition hash, for tests. */
record PartitionKeys(int partition, List<String> keys) {

    /** @return {@code n} keys "s-..." that all fall in one partition of {@code tree} */
    static PartitionKeys samePartition(PartialTree tree, int n) {
        List<String> keys = new ArrayList<>();
        int p = tree.partitionOf("s-0");
        for (int i = 0; keys.size() < n; i++) {
            String k = "s-" + i;
            if (tree.partitionOf(k) == p) {
                keys.add(k);
            }
        }
        return new PartitionKeys(p, keys);
    }
}
