package dev.lattice.engine;

/**
 * A write was definitely not committed: the provider refused or failed its batch and the engine verified (by
 * reconcile) that nothing of it is in the log. Safe to retry. The cause is the provider's failure (e.g.
 * {@link dev.lattice.spi.FencedException} when another process took the log over, in which case retrying in this
 * process fails again).
 */
public class WriteFailedException extends LatticeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which tree/log and what failed
     * @param cause the provider's failure
     */
    public WriteFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
