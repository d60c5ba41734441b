package dev.lattice.engine;

/**
 * A write was attempted through a read-only follower ({@link LatticeFollower}, opened with
 * {@link Lattice#openReadOnly(LatticeConfig)}), which never claims a log and so cannot write. Nothing was written.
 * Not retryable on the follower; write through a {@link Lattice} opened with {@link Lattice#open(LatticeConfig)}.
 */
public class ReadOnlyException extends LatticeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which write, on which tree, and what to do instead
     */
    public ReadOnlyException(String message) {
        super(message);
    }
}
