package dev.lattice.engine;

/**
 * Thrown by a {@link PartialTree} for a key, range or write that falls in a partition this process does not host
 * (never hosted, or released). In a cluster the caller routes the operation to the partition's owner instead.
 *
 * <p>Immutable and thread-safe.
 */
public class PartitionNotHostedException extends LatticeException {

    private final String tree;
    private final int partition;

    /**
     * Creates the exception.
     *
     * @param tree the tree
     * @param partition the partition that is not hosted here, or {@code -1} for an operation over several
     * @param message what was asked and why it cannot be served
     */
    public PartitionNotHostedException(String tree, int partition, String message) {
        super(message, null);
        this.tree = tree;
        this.partition = partition;
    }

    /** {@return the tree} */
    public String tree() {
        return tree;
    }

    /** {@return the partition that is not hosted here, {@code -1} when the operation spans several} */
    public int partition() {
        return partition;
    }
}
