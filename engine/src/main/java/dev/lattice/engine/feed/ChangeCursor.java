package dev.lattice.engine.feed;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A blocking cursor over a tree's change feed: committed mutations in log order per partition, merged across
 * partitions (round robin; there is no order between partitions).
 *
 * <p>Why a cursor and not a {@code Flow.Publisher}: a consumer's position must move exactly with what it has
 * processed. With a pull cursor the consumer's thread reads, processes, and commits {@link #position()} when it
 * likes, and back-pressure is implicit (nothing is read from the provider until it asks); a publisher would need
 * request accounting, a delivery thread and a separate acknowledgement path to give the same guarantee. A reactive
 * adapter is a few lines on top of {@link #poll}.
 *
 * <p>{@link #poll} returns the changes of at least one log entry, never part of one: all mutations of one atomic
 * write in a partition come in one call. A multi-log atomic write appears only once its outcome is in the
 * partition's log (committed), at its PREPARE entry's offset; an aborted one never appears. Until that outcome is
 * logged, later entries of that partition wait behind it (other partitions go on).
 *
 * <p>Not thread-safe: one thread uses a cursor at a time. {@link #close()} may be called from any thread.
 */
public interface ChangeCursor extends AutoCloseable {

    /**
     * Waits up to {@code timeout} for changes.
     *
     * @param timeout how long to wait, {@link Duration#ZERO} for no wait
     * @return the changes of one or more whole log entries, in log order per partition; empty when none arrived
     *     within the timeout
     * @throws ChangeFeedTrimmedException if a partition's log is trimmed past the cursor's position
     * @throws dev.lattice.spi.CorruptLogException if an entry cannot be decoded
     * @throws dev.lattice.spi.WalStorageException if the provider fails (the cursor may be polled again)
     * @throws IllegalStateException if the cursor is closed
     * @throws dev.lattice.engine.LatticeException if interrupted (the interrupt flag is set)
     */
    List<Change> poll(Duration timeout);

    /**
     * Blocks until changes arrive (as {@link #poll} without a deadline).
     *
     * @return the changes of one or more whole log entries, never empty
     * @throws ChangeFeedTrimmedException if a partition's log is trimmed past the cursor's position
     * @throws IllegalStateException if the cursor is closed (also when closed while waiting)
     * @throws dev.lattice.engine.LatticeException if interrupted
     */
    List<Change> next();

    /** {@return the position after every change returned so far (and the entries without changes passed over)} */
    ChangePosition position();

    /** {@return the registered consumer's name, or empty for an unregistered cursor} */
    Optional<String> consumer();

    /**
     * Stores {@link #position()} as the registered consumer's position (durably, through the provider), so a restart
     * resumes there and trims keep what comes after it. Call it after processing what {@link #poll} returned.
     *
     * @throws IllegalStateException if the cursor is not a registered consumer's, or closed
     * @throws dev.lattice.spi.WalStorageException if the position could not be stored (the old one stays)
     */
    void commit();

    /** Closes the cursor (no further reads); idempotent. The stored position of a consumer is not changed. */
    @Override
    void close();
}
