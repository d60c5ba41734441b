package dev.lattice.engine;

/**
 * The engine could not learn whether a write was committed: the provider kept failing while the engine tried to
 * commit and then to reconcile. The write may appear after the log recovers or after a reopen. Retrying a
 * non-idempotent write (e.g. {@code putIfAbsent}) may then see its own earlier effect.
 */
public class WriteOutcomeUnknownException extends LatticeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which tree/log and what failed
     * @param cause the provider's last failure
     */
    public WriteOutcomeUnknownException(String message, Throwable cause) {
        super(message, cause);
    }
}
