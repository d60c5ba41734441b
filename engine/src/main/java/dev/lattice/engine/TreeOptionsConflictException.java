package dev.lattice.engine;

/**
 * Two opens of the same new tree raced in the catalog and asked for different tree options: the other creator's
 * record reached the catalog first, so the tree exists with its partition count and hash version, not with the ones
 * this call asked for. Nothing was written by this call. Not retryable as such: open the tree with the stored options
 * (see {@link #storedPartitions()} and {@link #storedHashVersion()}), or drop it and create it again.
 * Immutable and thread-safe.
 */
public class TreeOptionsConflictException extends LatticeException {

    private static final long serialVersionUID = 1L;

    private final String tree;
    private final int askedPartitions;
    private final int storedPartitions;
    private final int askedHashVersion;
    private final int storedHashVersion;

    /**
     * Creates the exception.
     *
     * @param tree the tree's name
     * @param askedPartitions the partition count this call asked for (1 or more)
     * @param storedPartitions the partition count the concurrent creator recorded
     * @param askedHashVersion the partition hash version this call asked for
     * @param storedHashVersion the partition hash version the concurrent creator recorded
     */
    public TreeOptionsConflictException(String tree, int askedPartitions, int storedPartitions, int askedHashVersion,
            int storedHashVersion) {
        super("tree '" + tree + "' was created concurrently by another open with different options: it has "
                + storedPartitions + " partitions and hash version " + storedHashVersion + ", this open asked for "
                + askedPartitions + " partitions and hash version " + askedHashVersion
                + " (open it with the stored options, or drop it and create it again)");
        this.tree = tree;
        this.askedPartitions = askedPartitions;
        this.storedPartitions = storedPartitions;
        this.askedHashVersion = askedHashVersion;
        this.storedHashVersion = storedHashVersion;
    }

    /** {@return the tree's name} */
    public String tree() {
        return tree;
    }

    /** {@return the partition count this call asked for} */
    public int askedPartitions() {
        return askedPartitions;
    }

    /** {@return the partition count stored in the catalog by the concurrent creator} */
    public int storedPartitions() {
        return storedPartitions;
    }

    /** {@return the partition hash version this call asked for} */
    public int askedHashVersion() {
        return askedHashVersion;
    }

    /** {@return the partition hash version stored in the catalog by the concurrent creator} */
    public int storedHashVersion() {
        return storedHashVersion;
    }
}
