package dev.lattice.engine;

/**
 * A scan through a cluster could not go on: the owner of one of its partitions no longer holds the scan's snapshot
 * (the session sat idle past its timeout, the partition was handed off or failed over, or its owner restarted). The
 * entries already returned were consistent; the rest cannot be read from the same snapshot, so the cursor does not
 * restart on its own: open a new scan (from the key after the last one read, if a fresh snapshot will do).
 */
public class ScanSessionLostException extends LatticeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which partition's session was lost, and why when known
     */
    public ScanSessionLostException(String message) {
        super(message);
    }
}
