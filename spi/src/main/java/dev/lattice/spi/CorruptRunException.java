package dev.lattice.spi;

/**
 * A run's bytes fail their checksum or cannot be decoded: never skipped, the read or open that found it fails. Names
 * the log, the run and the byte position of the damaged block (its first byte within the run).
 */
public class CorruptRunException extends CorruptLogException {

    private static final long serialVersionUID = 1L;

    private final RunId run;
    private final long blockPosition;

    /**
     * Creates the exception.
     *
     *
     * @param log the log
     * @param run the damaged run
     * @param blockPosition the first byte of the damaged block within the run, or {@code -1} for the run as a whole
     * @param message what is wrong
     */
    public CorruptRunException(LogId log, RunId run, long blockPosition, String message) {
        super(log, -1, "run " + run + (blockPosition >= 0 ? ", block at byte " + blockPosition : "") + ": " + message);
        this.run = run;
        this.blockPosition = blockPosition;
    }

    /**
     * The damaged run.
     *
     * @return its id
     */
    public RunId run() {
        return run;
    }

    /**
     * Where the damaged block starts.
     *
     * @return its first byte within the run, or {@code -1} when the damage is not in one block
     */
    public long blockPosition() {
        return blockPosition;
    }
}
