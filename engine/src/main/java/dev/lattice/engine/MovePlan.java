package dev.lattice.engine;

import dev.lattice.spi.LogId;

import java.util.List;

/**
 * A dry run of a move ({@link Lattice#planMove}): what would be copied for each log. Immutable.
 *
 * @param tree the tree
 * @param placementVersion the placement version the plan was made against; {@link Lattice#move} flips from it
 * @param logs one step per log to move (logs already on their target are left out)
 */
public record MovePlan(String tree, long placementVersion, List<LogMove> logs) {

    /**
     * Creates a plan.
     *
     * @param tree the tree
     * @param placementVersion the placement version the plan was made against; {@link Lattice#move} flips from it
     * @param logs one step per log to move (logs already on their target are left out)
     * @throws NullPointerException if a component is null
     */
    public MovePlan {
        logs = List.copyOf(logs);
    }

    /**
     * One log's part of a move.
     *
     * @param log the log
     * @param from the provider key it is on
     * @param to the provider key it goes to
     * @param lowestOffset the lowest retained offset on the source (inclusive)
     * @param committedTail the source's committed tail (inclusive) when planned
     * @param entries retained entries to copy
     * @param payloadBytes their payload bytes
     * @param checkpointBytes bytes of the latest checkpoint to copy (0 when none)
     */
    public record LogMove(LogId log, String from, String to, long lowestOffset, long committedTail, long entries,
                          long payloadBytes, long checkpointBytes) {
    }
}
