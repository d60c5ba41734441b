package dev.lattice.spi;

/**
 * A read named a run that does not exist in the log's run store (never written, deleted, or only the leftover of a
 * failed write). Not transient: retrying will not make it appear.
 */
public class RunNotFoundException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    private final RunId run;

    /**
     * Creates the exception.
     *
     *
     * @param log the log
     * @param run the missing run
     */
    public RunNotFoundException(LogId log, RunId run) {
        super(log, "run " + run + " does not exist");
        this.run = run;
    }

    /**
     * The run that was asked for.
     *
     * @return the run's id
     */
    public RunId run() {
        return run;
    }
}
