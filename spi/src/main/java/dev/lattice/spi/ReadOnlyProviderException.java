package dev.lattice.spi;

/**
 * A write call on a read-only provider instance (one opened with
 * {@link WalStorageProviderFactory#openReadOnly(java.net.URI, java.util.Map)}): claim, stage, commit, abort, trim,
 * reconcile, repair, drop, checkpoint publish or delete, run write or delete. Nothing was changed. Not transient: a
 * retry on the same instance fails the same way; open a writer instance to write.
 */
public class ReadOnlyProviderException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    private final String operation;

    /**
     * Creates the exception.
     *
     * @param log the log the call named, or null when it named none
     * @param operation the refused call, e.g. {@code "commit"} or {@code "runs().write"}
     * @param provider the provider's name, e.g. {@code "chronicle"}, for the message
     */
    public ReadOnlyProviderException(LogId log, String operation, String provider) {
        super(log, operation + " is a write call and this " + provider + " provider instance is read-only "
                + "(opened with openReadOnly); open a writer instance to write");
        this.operation = operation;
    }

    /** {@return the refused call, e.g. {@code "commit"}} */
    public String operation() {
        return operation;
    }
}
