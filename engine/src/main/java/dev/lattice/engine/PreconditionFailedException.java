package dev.lattice.engine;

/**
 * A precondition of an atomic write did not hold, so nothing of the write was applied. Names the first key whose
 * precondition failed.
 */
public class PreconditionFailedException extends AtomicWriteAbortedException {

    private static final long serialVersionUID = 1L;

    private final String tree;
    private final String key;
    private final long expectedVersion;
    private final long actualVersion;

    /**
     * Creates the exception.
     *
     * @param tree the tree of the key
     * @param key the key whose precondition failed
     * @param expectedVersion the version the write expected ({@code 0} = absent)
     * @param actualVersion the version found ({@code 0} = absent; {@code -1} = the key was held by another atomic
     *     write that was not resolved when the precondition was evaluated)
     */
    public PreconditionFailedException(String tree, String key, long expectedVersion, long actualVersion) {
        super("precondition failed on tree '" + tree + "' key '" + key + "': expected "
                + describe(expectedVersion) + ", found " + (actualVersion < 0 ? "a pending atomic write"
                : describe(actualVersion)) + "; nothing was written", null);
        this.tree = tree;
        this.key = key;
        this.expectedVersion = expectedVersion;
        this.actualVersion = actualVersion;
    }

    private static String describe(long v) {
        return v == 0 ? "absent" : "version " + v;
    }

    /** {@return the tree of the key whose precondition failed} */
    public String tree() {
        return tree;
    }

    /** {@return the key whose precondition failed} */
    public String key() {
        return key;
    }

    /** {@return the expected version ({@code 0} = absent)} */
    public long expectedVersion() {
        return expectedVersion;
    }

    /** {@return the version found ({@code 0} = absent, {@code -1} = held by an unresolved atomic write)} */
    public long actualVersion() {
        return actualVersion;
    }
}
