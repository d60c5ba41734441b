package dev.lattice.spi;

/**
 * The caller's fence is stale: a newer {@link WalStorageProvider#claim(LogId)} took the log over. The call changed
 * nothing. Permanent for this fence: the same call with the same fence fails again, so the engine never retries it
 * as it is; only a caller entitled to take the log over claims it again and retries under the new fence (the
 * engine's catalog does, docs/engine.md "Running several processes").
 */
public class FencedException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    private final long staleEpoch;
    private final long currentEpoch;

    /**
     * Creates the exception.
     *
     * @param log the log
     * @param staleEpoch the caller's epoch
     * @param currentEpoch the log's current epoch, or {@code -1} when the provider cannot tell
     */
    public FencedException(LogId log, long staleEpoch, long currentEpoch) {
        this(log, staleEpoch, currentEpoch, null);
    }

    /**
     * Creates the exception.
     *
     * @param log the log
     * @param staleEpoch the caller's epoch
     * @param currentEpoch the log's current epoch, or {@code -1} when the provider cannot tell
     * @param cause the backend's conditional-write failure, or null
     */
    public FencedException(LogId log, long staleEpoch, long currentEpoch, Throwable cause) {
        super(log, "fenced: epoch " + staleEpoch + " is stale"
                + (currentEpoch >= 0 ? ", the log's current epoch is " + currentEpoch : "")
                + " (another writer claimed the log)", cause);
        this.staleEpoch = staleEpoch;
        this.currentEpoch = currentEpoch;
    }

    /** {@return the caller's stale epoch} */
    public long staleEpoch() {
        return staleEpoch;
    }

    /** {@return the log's current epoch, or {@code -1} when unknown} */
    public long currentEpoch() {
        return currentEpoch;
    }
}
