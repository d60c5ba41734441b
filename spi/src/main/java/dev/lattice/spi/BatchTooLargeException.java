package dev.lattice.spi;

/**
 * A batch has more entries or payload bytes than the provider's limits ({@link ProviderLimits}). Thrown before any
 * I/O; the engine splits batches so that it never sees this.
 */
public class BatchTooLargeException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param log the log, or null
     * @param message which limit was exceeded, with the numbers
     */
    public BatchTooLargeException(LogId log, String message) {
        super(log, message);
    }
}
