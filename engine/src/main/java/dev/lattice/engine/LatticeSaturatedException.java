package dev.lattice.engine;

/**
 * A write waited the configured admission timeout ({@link LatticeConfig.Builder#admissionTimeout}) for room in its
 * log's admission queue and gave up. Nothing was written. The cause, when present, is the provider failure that
 * keeps the queue full. Retry later or slow down.
 */
public class LatticeSaturatedException extends LatticeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which tree and log, and the wait
     * @param cause the recent provider failure, or null
     */
    public LatticeSaturatedException(String message, Throwable cause) {
        super(message, cause);
    }
}
