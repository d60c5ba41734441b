package dev.lattice.spi;

/**
 * A transient backend failure: throttled, timed out, unreachable, connection lost, serialization failure. The
 * outcome of the call is unknown (it may have landed); the engine may retry it with the same batch id.
 */
public class ProviderUnavailableException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param log the log, or null
     * @param message what failed
     * @param cause the backend's failure, or null
     */
    public ProviderUnavailableException(LogId log, String message, Throwable cause) {
        super(log, message, cause);
    }
}
