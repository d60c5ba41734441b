package dev.lattice.engine.feed;

import dev.lattice.engine.ScanCursor;

import java.util.Objects;

/**
 * A scan of a tree together with the change-feed position it is consistent with: the scan reflects every change at
 * or below {@code position} and may also reflect some later ones. A consumer that loads the scan and then applies
 * the feed from {@code position}, keeping for each key the change with the higher version (a range delete removes
 * the keys below its version), ends up with the tree's state. Close it (or read the cursor to the end).
 *
 * @param position where to start the change feed after the scan
 * @param cursor the scan (ordered by key)
 */
public record ChangeSnapshot(ChangePosition position, ScanCursor cursor) implements AutoCloseable {

    /**
     * Creates a snapshot result.
     *
     * @param position where to start the change feed after the scan
     * @param cursor the scan
     * @throws NullPointerException if an argument is null
     */
    public ChangeSnapshot {
        Objects.requireNonNull(position, "position");
        Objects.requireNonNull(cursor, "cursor");
    }

    /** Closes the scan. */
    @Override
    public void close() {
        cursor.close();
    }
}
