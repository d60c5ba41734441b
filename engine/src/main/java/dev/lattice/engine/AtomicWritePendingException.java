package dev.lattice.engine;

import dev.lattice.spi.LogId;

/**
 * Thrown by a read of a {@link PartialTree} whose keys are held by an atomic write that is prepared here but whose
 * outcome this process has not learnt within the wait (its coordinator log is hosted by another process). The read
 * did nothing; retry it once the write is resolved ({@link PartialTree#resolveAtomic}). Reads wait instead of
 * answering from before the write, so that a write committed elsewhere is never seen partially.
 *
 * <p>Immutable and thread-safe.
 */
public class AtomicWritePendingException extends LatticeException {

    private final String txnId;
    private final LogId coordinator;

    /**
     * Creates the exception.
     *
     * @param log the log whose read waited
     * @param txnId the atomic write
     * @param coordinator its coordinator log
     * @param waitedMillis how long the read waited
     */
    public AtomicWritePendingException(LogId log, String txnId, LogId coordinator, long waitedMillis) {
        super("read of " + log + " waited " + waitedMillis + " ms for atomic write " + txnId + " (coordinator "
                + coordinator + ") to be resolved; retry");
        this.txnId = txnId;
        this.coordinator = coordinator;
    }

    /** {@return the atomic write's id} */
    public String txnId() {
        return txnId;
    }

    /** {@return the write's coordinator log} */
    public LogId coordinator() {
        return coordinator;
    }
}
