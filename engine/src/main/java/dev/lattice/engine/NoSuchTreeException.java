package dev.lattice.engine;

/**
 * The tree does not exist: it was dropped (in this or another process), or never created where the call does not
 * create trees. Not retryable as such; {@link Lattice#createTree} creates a tree of that name again.
 */
public class NoSuchTreeException extends LatticeException {

    private static final long serialVersionUID = 1L;

    private final String tree;

    /**
     * Creates the exception.
     *
     * @param tree the tree's name
     * @param message what happened
     */
    public NoSuchTreeException(String tree, String message) {
        super(message);
        this.tree = tree;
    }

    /** {@return the tree's name} */
    public String tree() {
        return tree;
    }
}
