package dev.lattice.engine;

import dev.lattice.spi.LogId;

/**
 * Thrown by every read and write of a tree after this process learnt that another process claimed one of the tree's
 * logs (a {@link dev.lattice.spi.FencedException} on any provider call, or the periodic ownership check). The tree's
 * data in this process may be stale from then on, so it is not served; close the lattice and open the tree again
 * to become its owner again (which fences the other process).
 *
 * <p>Immutable and thread-safe.
 */
public class OwnershipLostException extends LatticeException {

    private final String tree;
    private final LogId log;
    private final long epoch;

    /**
     * Creates the exception.
     *
     * @param tree the tree that is no longer served
     * @param log the log whose claim was lost
     * @param epoch the epoch that fenced this process out, {@code -1} when the provider did not say
     * @param cause the {@link dev.lattice.spi.FencedException} that revealed it
     */
    public OwnershipLostException(String tree, LogId log, long epoch, Throwable cause) {
        super("tree '" + tree + "' is no longer owned by this process: log " + log + " was claimed by another writer"
                + (epoch >= 0 ? " (epoch " + epoch + ")" : "") + "; its reads and writes fail until it is opened"
                + " again", cause);
        this.tree = tree;
        this.log = log;
        this.epoch = epoch;
    }

    /** {@return the tree that is no longer served} */
    public String tree() {
        return tree;
    }

    /** {@return the log whose claim was lost} */
    public LogId log() {
        return log;
    }

    /** {@return the epoch that fenced this process out, {@code -1} when unknown} */
    public long epoch() {
        return epoch;
    }
}
