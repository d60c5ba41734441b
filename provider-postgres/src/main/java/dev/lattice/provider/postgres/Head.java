package dev.lattice.provider.postgres;

import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

import java.util.Optional;

/**
 * Fencing part of the protocol: one log's {@code log_head} row as read from the database, and the fence check
 * against it (see docs/providers/postgres.md, "Protocol").
 *
 * @param logId the row's {@code log_id}
 * @param epoch the log's epoch (0 when never claimed)
 * @param tail the committed tail, -1 when empty
 * @param watermark the trim watermark, -1 when nothing was trimmed
 */
record Head(long logId, long epoch, long tail, long watermark) {

    /** Maps the columns {@code log_id, epoch, tail, watermark}. */
    static final RowMapper<Head> MAPPER = (rs, ctx) -> new Head(rs.getLong("log_id"), rs.getLong("epoch"),
            rs.getLong("tail"), rs.getLong("watermark"));

    /**
     * Selects a log's head row.
     *
     * @param handle an open handle
     * @param query {@link Sql#head} or {@link Sql#headForUpdate} (binds {@code tree}, {@code part})
     * @param log the log
     * @return the head, empty when the log was never claimed
     */
    static Optional<Head> select(Handle handle, String query, LogId log) {
        return handle.createQuery(query).bind("tree", log.tree()).bind("part", log.partition()).map(MAPPER).findOne();
    }

    /**
     * Locks the head row for the handle's transaction and checks the fence.
     *
     * @param handle a handle inside a transaction
     * @param sql the statements
     * @param log the log
     * @param fence the caller's fence
     * @return the locked head
     * @throws FencedException if the log's epoch is newer than the fence's
     * @throws IllegalArgumentException if the fence was never claimed here
     */
    static Head lock(Handle handle, Sql sql, LogId log, Fence fence) {
        return checkFence(log, fence, select(handle, sql.headForUpdate, log));
    }

    /**
     * Checks a fence against a head read from the database.
     *
     * @param log the log
     * @param fence the caller's fence
     * @param head the head, empty when the log was never claimed
     * @return the head
     * @throws FencedException if the log's epoch is newer than the fence's
     * @throws IllegalArgumentException if the fence's epoch was never claimed (the log's epoch is older)
     */
    static Head checkFence(LogId log, Fence fence, Optional<Head> head) {
        long current = head.map(Head::epoch).orElse(0L);
        if (current > fence.epoch()) {
            throw new FencedException(log, fence.epoch(), current);
        }
        if (current < fence.epoch()) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this storage (the log's "
                    + "epoch is " + current + ")");
        }
        return head.orElseThrow();
    }
}
