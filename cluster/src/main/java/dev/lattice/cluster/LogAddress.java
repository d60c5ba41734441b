package dev.lattice.cluster;

import dev.lattice.spi.LogId;

/**
 * The sharding entity id of a log: {@code "<tree>/<partition>"} (tree names cannot hold a slash). One log is one
 * entity and one shard, so Pekko moves logs one at a time. Immutable.
 *
 * @param tree the tree
 * @param partition the partition
 */
record LogAddress(String tree, int partition) {

    /** @return the entity id */
    String entityId() {
        return tree + "/" + partition;
    }

    /**
     * @throws IllegalArgumentException if the id is not {@code "<tree>/<partition>"} with a valid tree and partition
     */
    static LogAddress parse(String entityId) {
        int slash = entityId.lastIndexOf('/');
        if (slash <= 0) {
            throw new IllegalArgumentException("not a log entity id: '" + entityId + "'");
        }
        LogId id = new LogId(entityId.substring(0, slash), Integer.parseInt(entityId.substring(slash + 1)));
        return new LogAddress(id.tree(), id.partition());
    }
}
