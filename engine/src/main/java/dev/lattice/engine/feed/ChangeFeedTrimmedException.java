package dev.lattice.engine.feed;

import dev.lattice.engine.LatticeException;

/**
 * The log entries a change feed needs next are gone: the partition's log was trimmed past the feed's position (a
 * consumer further behind than {@code LatticeConfig.Builder.changeFeedRetentionEntries}, an unregistered consumer,
 * or {@link ChangePosition#beginning()} on a log already trimmed). The consumer cannot resume from its position; it
 * restarts from a snapshot ({@code Tree.snapshotWithPosition}) and the position that comes with it.
 */
public class ChangeFeedTrimmedException extends LatticeException {

    private static final long serialVersionUID = 1L;

    private final String tree;
    private final int partition;
    private final long position;
    private final long trimWatermark;

    /**
     * Creates the exception.
     *
     * @param tree the tree
     * @param partition the partition whose log is trimmed
     * @param position the feed's last processed offset in that partition
     * @param trimWatermark the log's trim watermark (entries at or below it are gone), above {@code position}
     */
    public ChangeFeedTrimmedException(String tree, int partition, long position, long trimWatermark) {
        super("change feed of tree '" + tree + "' partition " + partition + " is at offset " + position
                + " but the log is trimmed through " + trimWatermark + " (entries " + (position + 1) + ".."
                + trimWatermark + " are gone); restart from Tree.snapshotWithPosition");
        this.tree = tree;
        this.partition = partition;
        this.position = position;
        this.trimWatermark = trimWatermark;
    }

    /** {@return the tree} */
    public String tree() {
        return tree;
    }

    /** {@return the partition} */
    public int partition() {
        return partition;
    }

    /** {@return the feed's last processed offset in the partition} */
    public long position() {
        return position;
    }

    /** {@return the log's trim watermark} */
    public long trimWatermark() {
        return trimWatermark;
    }
}
