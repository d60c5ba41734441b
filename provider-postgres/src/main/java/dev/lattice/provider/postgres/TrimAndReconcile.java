package dev.lattice.provider.postgres;

import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReconcileResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentMap;

/**
 * Trim and reconcile part of the protocol (see docs/providers/postgres.md, "Trim" and "Reconcile"): trim deletes
 * batch rows at or below the new watermark and cuts the batch straddling it, in one transaction under the head's
 * row lock; reconcile removes rows outside {@code watermark < offset <= tail} and drops this instance's staged
 * batches; drop deletes every row of a log (runs, batches, checkpoints, head last) in one transaction.
 *
 * <p>Thread-safe.
 */
final class TrimAndReconcile {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresWalStorageProvider.class);

    private final PostgresCalls calls;
    private final Sql sql;
    private final ConcurrentMap<LogId, LogSlot> slots;

    /**
     * Creates the trim and reconcile path.
     *
     * @param calls the backend calls
     * @param slots the provider's per-log slots
     */
    TrimAndReconcile(PostgresCalls calls, ConcurrentMap<LogId, LogSlot> slots) {
        this.calls = calls;
        this.sql = calls.sql();
        this.slots = slots;
    }

    /**
     * Trims through an offset (arguments already validated); see {@link dev.lattice.spi.WalStorageProvider#trim}.
     *
     * @param log the log
     * @param fence the fence
     * @param throughInclusive the new watermark
     * @throws FencedException if the fence is stale
     */
    void trim(LogId log, Fence fence, long throughInclusive) {
        LogSlot slot = LogSlot.of(slots, log);
        Head after = calls.tx(log, "trim", h -> {
            Head head = Head.lock(h, sql, log, fence);
            if (throughInclusive <= head.watermark()) {
                return head;
            }
            long[] d = h.createQuery(sql.trimDelete).bind("logId", head.logId()).bind("through", throughInclusive)
                    .map((rs, ctx) -> new long[] {rs.getLong("entries"), rs.getLong("bytes"),
                            rs.getLong("frame_bytes")})
                    .one();
            long entries = d[0];
            long bytes = d[1];
            long frameBytes = d[2];
            record Straddler(long first, int count, byte[] frame) {
            }
            Optional<Straddler> st = h.createQuery(sql.trimStraddler).bind("logId", head.logId())
                    .bind("through", throughInclusive)
                    .map((rs, ctx) -> new Straddler(rs.getLong("first_offset"), rs.getInt("entry_count"),
                            rs.getBytes("frame")))
                    .findOne();
            if (st.isPresent()) {
                // Keep the rows above the watermark whole: cut the batch that straddles it.
                Straddler s = st.get();
                List<byte[]> payloads = BatchFrame.decode(log, s.first(), s.count(), s.frame());
                int drop = (int) (throughInclusive - s.first() + 1);
                long dropBytes = 0;
                for (int i = 0; i < drop; i++) {
                    dropBytes += payloads.get(i).length;
                }
                List<byte[]> keep = payloads.subList(drop, payloads.size());
                byte[] frame = BatchFrame.encode(throughInclusive + 1, keep);
                h.createUpdate(sql.trimRewrite).bind("newFirst", throughInclusive + 1).bind("count", keep.size())
                        .bind("bytes", sum(keep)).bind("frame", frame)
                        .bind("logId", head.logId()).bind("oldFirst", s.first()).execute();
                entries += drop;
                bytes += dropBytes;
                frameBytes += s.frame().length - frame.length;
            }
            return h.createQuery(sql.trimHead).bind("through", throughInclusive).bind("entries", entries)
                    .bind("bytes", bytes).bind("frameBytes", frameBytes).bind("logId", head.logId())
                    .bind("epoch", fence.epoch()).map(Head.MAPPER).findOne()
                    .orElseThrow(() -> new FencedException(log, fence.epoch(), -1));
        });
        slot.observe(after);
        slot.dropThrough(throughInclusive);
    }

    private static long sum(List<byte[]> payloads) {
        long n = 0;
        for (byte[] p : payloads) {
            n += p.length;
        }
        return n;
    }

    /**
     * Reconciles a log (arguments already validated); see {@link dev.lattice.spi.WalStorageProvider#reconcile}.
     *
     * @param log the log
     * @param fence the fence
     * @return the committed tail, the staged batches dropped and the stray rows removed
     * @throws FencedException if the fence is stale
     */
    ReconcileResult reconcile(LogId log, Fence fence) {
        LogSlot slot = LogSlot.of(slots, log);
        record Result(Head head, int removed) {
        }
        Result r = calls.tx(log, "reconcile", h -> {
            Head head = Head.lock(h, sql, log, fence);
            int removed = h.createUpdate(sql.reconcileDelete).bind("logId", head.logId()).bind("tail", head.tail())
                    .bind("watermark", head.watermark()).execute();
            return new Result(head, removed);
        });
        if (r.removed() > 0) {
            LOG.warn("reconcile of {} removed {} batch rows above the tail or at or below the trim watermark", log,
                    r.removed());
        }
        slot.observe(r.head());
        int rolledBack = slot.clearStaged();
        return new ReconcileResult(r.head().tail(), rolledBack, 0, r.removed());
    }

    /**
     * Drops a log wholly in one transaction under the head's row lock (arguments already validated); see
     * {@link dev.lattice.spi.WalStorageProvider#drop}. A log without a head row only loses stray run rows.
     *
     * @param log the log
     * @param fence the fence
     * @throws FencedException if the fence is stale
     */
    void drop(LogId log, Fence fence) {
        calls.tx(log, "drop", h -> {
            Optional<Head> found = Head.select(h, sql.headForUpdate, log);
            if (found.isPresent()) {
                long logId = Head.checkFence(log, fence, found).logId();
                for (String statement : sql.dropLog) {
                    h.createUpdate(statement).bind("logId", logId).execute();
                }
            }
            for (String statement : sql.dropRuns) {
                h.createUpdate(statement).bind("tree", log.tree()).bind("part", log.partition()).execute();
            }
            return null;
        });
        slots.remove(log);
    }
}
