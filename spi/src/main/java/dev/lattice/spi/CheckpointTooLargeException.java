package dev.lattice.spi;

/** A checkpoint stream is longer than {@link ProviderLimits#maxCheckpointBytes()}. Nothing was published. */
public class CheckpointTooLargeException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param log the log
     * @param limitBytes the provider's limit, in bytes
     */
    public CheckpointTooLargeException(LogId log, long limitBytes) {
        super(log, "checkpoint is longer than the provider's limit of " + limitBytes + " bytes");
    }
}
