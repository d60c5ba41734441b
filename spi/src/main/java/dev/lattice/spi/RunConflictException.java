package dev.lattice.spi;

/**
 * A write named a run that already exists with other bytes (another length or checksum). Runs are immutable: the
 * first complete write wins, a rewrite with the same bytes is a success, anything else is this conflict.
 */
public class RunConflictException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    private final RunId run;

    /**
     * Creates the exception.
     *
     *
     * @param log the log
     * @param run the run
     * @param existing what is stored
     * @param attemptedBytes the length of the refused write, in bytes
     */
    public RunConflictException(LogId log, RunId run, RunInfo existing, long attemptedBytes) {
        super(log, "run " + run + " already exists with other bytes (" + existing.lengthBytes() + " bytes, crc32c "
                + Integer.toHexString(existing.crc32c()) + "; the refused write had " + attemptedBytes + " bytes)");
        this.run = run;
    }

    /**
     * The run written twice.
     *
     * @return the run's id
     */
    public RunId run() {
        return run;
    }
}
