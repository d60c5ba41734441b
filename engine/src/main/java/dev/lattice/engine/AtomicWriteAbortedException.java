package dev.lattice.engine;

/**
 * An atomic write was aborted: none of its mutations is visible now or will ever be (also after a restart). Thrown
 * by {@link AtomicWrite#commit()} when a precondition failed ({@link PreconditionFailedException}) and on a retry
 * with an idempotency key whose original write was aborted.
 */
public class AtomicWriteAbortedException extends LatticeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message why it was aborted
     * @param cause the underlying failure, or null
     */
    public AtomicWriteAbortedException(String message, Throwable cause) {
        super(message, cause);
    }
}
