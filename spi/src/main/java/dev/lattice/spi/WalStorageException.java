package dev.lattice.spi;

/**
 * Base of every failure a provider reports for its backend. Providers never let a bare SDK or driver exception
 * escape: they wrap it as the cause of a subclass. Messages never contain secrets.
 *
 * <p>Unchecked, because the SPI is synchronous and the engine handles every subclass in one place.
 */
public class WalStorageException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient LogId log;

    /**
     * Creates the exception.
     *
     * @param log the log the failure concerns, or null when it concerns no single log
     * @param message what went wrong
     * @param cause the underlying failure, or null
     */
    public WalStorageException(LogId log, String message, Throwable cause) {
        super(log == null ? message : "log " + log + ": " + message, cause);
        this.log = log;
    }

    /**
     * Creates the exception.
     *
     * @param log the log the failure concerns, or null
     * @param message what went wrong
     */
    public WalStorageException(LogId log, String message) {
        this(log, message, null);
    }

    /** {@return the log the failure concerns, or null when it concerns no single log} */
    public LogId log() {
        return log;
    }
}
