package dev.lattice.provider.postgres;

import dev.lattice.provider.postgres.LogSlot.Frame;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.StagedBatchTable.Staged;
import dev.lattice.spi.support.StagingRules;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.statement.SqlStatement;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentMap;

/**
 * Two-phase append part of the protocol (see docs/providers/postgres.md, "Protocol"): {@code stage} keeps the
 * batch's frame in the log's {@link LogSlot}; {@code commit} writes the chain of staged frames and moves the head in
 * one conditional statement (or one transaction for large chains); {@code abort} drops a staged batch.
 *
 * <p>Thread-safe; commits of one log are serialised by the slot's commit lock.
 */
final class StageAndCommit {

    /** A commit whose frames exceed this many bytes is written as a transaction of several statements. */
    static final long COMMIT_STATEMENT_BYTES = 32L << 20;

    private final PostgresCalls calls;
    private final Sql sql;
    private final ConcurrentMap<LogId, LogSlot> slots;

    /**
     * Creates the append path.
     *
     * @param calls the backend calls
     * @param slots the provider's per-log slots
     */
    StageAndCommit(PostgresCalls calls, ConcurrentMap<LogId, LogSlot> slots) {
        this.calls = calls;
        this.sql = calls.sql();
        this.slots = slots;
    }

    /**
     * Stages a batch (arguments already validated); see {@link dev.lattice.spi.WalStorageProvider#stage}.
     *
     * @param log the log
     * @param fence the fence
     * @param batch the batch
     * @return the receipt
     * @throws FencedException if the fence is stale
     * @throws OffsetConflictException as {@link StagingRules#decideStage}
     */
    StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        LogSlot slot = LogSlot.of(slots, log);
        if (!slot.known() || slot.epoch() < fence.epoch()) {
            calls.readOnly(log, "reading the head", h -> Head.select(h, sql.head, log)).ifPresent(slot::observe);
        }
        checkKnownEpoch(log, slot, fence);
        StagedBatch receipt = StagedBatch.of(fence, batch);
        long tail = slot.tail();
        if (batch.firstOffset() <= tail) {
            return stageOverCommitted(log, slot, fence, batch, receipt);
        }
        slot.stage(log, fence, batch, tail);
        return receipt;
    }

    /** A stage at or below the cached committed tail: success only when it is that very committed batch. */
    private StagedBatch stageOverCommitted(LogId log, LogSlot slot, Fence fence, EncodedBatch batch,
                                           StagedBatch receipt) {
        record Found(Head head, Long last, UUID id) {
        }
        Found f = calls.readOnly(log, "checking a committed batch", h -> h.createQuery(sql.stagedLookup)
                .bind("tree", log.tree()).bind("part", log.partition()).bind("first", batch.firstOffset())
                .map((rs, ctx) -> new Found(Head.MAPPER.map(rs, ctx), (Long) rs.getObject("last_offset"),
                        rs.getObject("batch_id", UUID.class)))
                .one());
        slot.observe(f.head());
        Head.checkFence(log, fence, Optional.of(f.head()));
        boolean mustStage = StagingRules.decideStage(log, fence, batch, f.head().tail(),
                () -> f.last() != null && f.last() == batch.lastOffset()
                        && PostgresCalls.uuid(batch.batchId()).equals(f.id())
                        && batch.firstOffset() > f.head().watermark(), List.<Staged<Frame>>of()).mustStage();
        if (mustStage) {
            slot.stage(log, fence, batch, f.head().tail()); // the database tail is never below the cache: not reached
        }
        return receipt;
    }

    /**
     * Commits through an offset (arguments already validated); see {@link dev.lattice.spi.WalStorageProvider#commit}.
     *
     * @param log the log
     * @param fence the fence
     * @param throughOffset the last offset to commit, inclusive
     * @throws FencedException if the fence is stale
     * @throws OffsetConflictException if the offsets are not staged here as one chain, or rows exist above the tail
     * @throws WalStorageException if the head update did not apply although fence and tail match
     */
    void commit(LogId log, Fence fence, long throughOffset) {
        LogSlot slot = LogSlot.of(slots, log);
        slot.commitLock.lock();
        try {
            for (int attempt = 0; ; attempt++) {
                if (slot.known() && slot.epoch() > fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), slot.epoch());
                }
                long tail = slot.tail();
                if (throughOffset <= tail) {
                    Head h = readHeadChecked(log, slot, fence);
                    slot.dropThrough(h.tail());
                    return;
                }
                List<Staged<Frame>> chain = null;
                OffsetConflictException gap = null;
                try {
                    chain = slot.chain(log, fence, tail, throughOffset);
                } catch (OffsetConflictException e) {
                    gap = e;
                }
                if (chain != null && writeChain(log, fence, tail, throughOffset, chain)) {
                    slot.observeTail(throughOffset);
                    slot.dropThrough(throughOffset);
                    return;
                }
                // Either the chain is incomplete or the conditional head update did not apply: ask the head why.
                Head h = readHeadChecked(log, slot, fence);
                if (throughOffset <= h.tail()) {
                    slot.dropThrough(h.tail());
                    return;
                }
                if (h.tail() != tail && attempt < 3) {
                    continue; // the cached tail was behind (e.g. an earlier commit's response was lost)
                }
                if (gap != null) {
                    throw gap;
                }
                throw new WalStorageException(log, "commit through " + throughOffset
                        + " did not apply although fence and tail " + tail + " match");
            }
        } finally {
            slot.commitLock.unlock();
        }
    }

    /**
     * Writes a chain of staged batches and moves the head, atomically.
     *
     * @return true when the head moved; false when its conditions (epoch, expected tail) did not hold
     */
    private boolean writeChain(LogId log, Fence fence, long expectedTail, long through, List<Staged<Frame>> chain) {
        long entries = 0;
        long bytes = 0;
        long frameBytes = 0;
        List<List<Staged<Frame>>> parts = new ArrayList<>();
        List<Staged<Frame>> part = new ArrayList<>();
        long partBytes = 0;
        for (Staged<Frame> s : chain) {
            Frame f = s.payload();
            entries += f.count();
            bytes += f.payloadBytes();
            frameBytes += f.bytes().length;
            if (!part.isEmpty() && partBytes + f.bytes().length > COMMIT_STATEMENT_BYTES) {
                parts.add(part);
                part = new ArrayList<>();
                partBytes = 0;
            }
            part.add(s);
            partBytes += f.bytes().length;
        }
        parts.add(part);
        long addEntries = entries;
        long addBytes = bytes;
        long addFrameBytes = frameBytes;
        HandleCallback<Boolean, RuntimeException> work = h -> {
            long[] result = bindRows(h.createQuery(sql.commit), parts.get(0))
                    .bind("through", through).bind("addEntries", addEntries).bind("addBytes", addBytes)
                    .bind("addFrameBytes", addFrameBytes).bind("tree", log.tree()).bind("part", log.partition())
                    .bind("epoch", fence.epoch()).bind("expectedTail", expectedTail)
                    .map((rs, ctx) -> new long[] {rs.getLong("updated"), rs.getLong("inserted"), rs.getLong("log_id")})
                    .one();
            if (result[0] == 0) {
                return false;
            }
            for (int i = 1; i < parts.size(); i++) {
                bindRows(h.createUpdate(sql.insertBatches), parts.get(i)).bind("logId", result[2]).execute();
            }
            return true;
        };
        try {
            return parts.size() == 1 ? calls.call(log, "commit", work) : calls.tx(log, "commit", work);
        } catch (WalStorageException e) {
            if (SqlFailures.UNIQUE_VIOLATION.equals(SqlFailures.sqlState(e))) {
                // Rows above the committed tail exist (never written by this protocol): let the caller decide.
                Head h = readHeadChecked(log, LogSlot.of(slots, log), fence);
                if (through <= h.tail()) {
                    return true;
                }
                throw new OffsetConflictException(log, "commit through " + through + ": batch rows already exist "
                        + "above the committed tail " + h.tail() + "; reconcile removes them", e);
            }
            throw e;
        }
    }

    private static <S extends SqlStatement<S>> S bindRows(S statement, List<Staged<Frame>> rows) {
        int n = rows.size();
        Long[] firsts = new Long[n];
        Long[] lasts = new Long[n];
        UUID[] ids = new UUID[n];
        Integer[] counts = new Integer[n];
        Long[] bytes = new Long[n];
        byte[][] frames = new byte[n][];
        for (int i = 0; i < n; i++) {
            Staged<Frame> s = rows.get(i);
            firsts[i] = s.firstOffset();
            lasts[i] = s.lastOffset();
            ids[i] = PostgresCalls.uuid(s.batchId());
            counts[i] = s.payload().count();
            bytes[i] = s.payload().payloadBytes();
            frames[i] = s.payload().bytes();
        }
        return statement.bind("firsts", PostgresCalls.array("bigint", firsts))
                .bind("lasts", PostgresCalls.array("bigint", lasts))
                .bind("ids", PostgresCalls.array("uuid", ids)).bind("counts", PostgresCalls.array("integer", counts))
                .bind("bytes", PostgresCalls.array("bigint", bytes))
                .bind("frames", PostgresCalls.array("bytea", frames));
    }

    /**
     * Drops a staged batch (arguments already validated); see {@link dev.lattice.spi.WalStorageProvider#abort}.
     *
     * @param log the log
     * @param fence the fence
     * @param staged the receipt
     * @throws FencedException if this instance saw a newer epoch
     */
    void abort(LogId log, Fence fence, StagedBatch staged) {
        LogSlot slot = slots.get(log);
        if (slot == null) {
            return;
        }
        if (slot.epoch() > fence.epoch()) {
            throw new FencedException(log, fence.epoch(), slot.epoch());
        }
        slot.abort(staged);
    }

    /**
     * Reads the head (no lock), records it in the slot, and checks the fence against it.
     *
     * @param log the log
     * @param slot its slot
     * @param fence the fence
     * @return the head
     * @throws FencedException if the fence is stale
     */
    Head readHeadChecked(LogId log, LogSlot slot, Fence fence) {
        Optional<Head> h = calls.readOnly(log, "reading the head", handle -> Head.select(handle, sql.head, log));
        h.ifPresent(slot::observe);
        return Head.checkFence(log, fence, h);
    }

    private static void checkKnownEpoch(LogId log, LogSlot slot, Fence fence) {
        long known = slot.epoch();
        if (known > fence.epoch()) {
            throw new FencedException(log, fence.epoch(), known);
        }
        if (!slot.known() || known < fence.epoch()) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this storage (the log's "
                    + "epoch is " + known + ")");
        }
    }
}
