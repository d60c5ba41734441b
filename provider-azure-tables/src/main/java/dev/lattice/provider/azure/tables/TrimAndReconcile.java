package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import dev.lattice.provider.azure.tables.Records.CommittedBatch;
import dev.lattice.provider.azure.tables.Records.Head;
import dev.lattice.provider.azure.tables.TablesCalls.TxFailure;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.WalStorageProvider;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Protocol part: trim and reconcile. Trim moves the watermark in the head row first and deletes manifest and data
 * rows at or below it afterwards (idempotent, so an interrupted trim is finished later); reconcile rolls back every
 * batch staged above the tail, finishes such a trim and sweeps unpublished checkpoint chunks of older epochs. See
 * docs/providers/azure-tables.md.
 *
 * <p>Thread-safe.
 */
final class TrimAndReconcile {

    private static final int QUERY_TOP = TablesCalls.QUERY_TOP;

    private final TablesCalls calls;
    private final Reads reads;

    TrimAndReconcile(TablesCalls calls, Reads reads) {
        this.calls = calls;
        this.reads = reads;
    }

    /**
     * Writes the new watermark (and the retained byte count, which needs the batch that straddles it) to the head
     * with If-Match first, then deletes manifest and data rows at or below it.
     *
     * @see WalStorageProvider#trim(LogId, Fence, long)
     */
    void trim(LogId log, Fence fence, long throughInclusive) {
        String pk = Keys.logPartition(log);
        Head done = null;
        for (int attempt = 1; done == null; attempt++) {
            Head head = calls.readHead(log);
            TablesCalls.checkFence(log, head, fence);
            if (throughInclusive <= head.watermark()) {
                return;
            }
            long removed = reads.committedBytes(log, head.watermark() + 1, Math.min(throughInclusive, head.tail()));
            Head next = head.withTrim(throughInclusive, Math.max(head.tail(), throughInclusive),
                    head.retainedBytes() - removed);
            TxFailure f = calls.submit(log, "trim", List.of(new TableTransactionAction(
                    TableTransactionActionType.UPDATE_REPLACE, next.toEntity(pk), true)));
            if (f == null) {
                done = next;
            } else if (!f.isConflict()) {
                throw f.toException(log, "trim");
            } else {
                Head now = calls.readHead(log);
                if (now.epoch() != fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), now.epoch(), f.cause());
                }
                if (now.watermark() >= throughInclusive) {
                    done = now; // a retried request had landed
                } else {
                    calls.backOff(log, "trim", attempt, f);
                }
            }
        }
        cleanupBelowWatermark(log, done);
    }

    /**
     * Deletes manifest and data rows at or below the watermark, except the rows of the committed batch that
     * straddles it. Idempotent; finishes an interrupted trim.
     *
     * @return rows deleted
     */
    private long cleanupBelowWatermark(LogId log, Head head) {
        long w = head.watermark();
        if (w < 0) {
            return 0;
        }
        String pk = Keys.logPartition(log);
        String keep = null;
        if (w < head.tail()) {
            CommittedBatch straddling = calls.findCommitted(log, w + 1);
            if (straddling != null && straddling.first() <= w) {
                keep = straddling.rowPrefix();
            }
        }
        String kept = keep;
        List<String> headers = new ArrayList<>();
        List<String> others = new ArrayList<>();
        calls.queryAll(log, "trim", Keys.rowRange(pk, Keys.DATA, Keys.dataThrough(w)), List.of("RowKey", "X"),
                QUERY_TOP,
                e -> {
                    if (kept == null || !e.getRowKey().startsWith(kept)) {
                        (Rows.getInt(e, "X") == 0 ? headers : others).add(e.getRowKey());
                    }
                    return true;
                });
        calls.queryAll(log, "trim", Keys.rowRange(pk, Keys.MANIFEST, Keys.manifestThrough(w)), List.of("RowKey"),
                QUERY_TOP, e -> others.add(e.getRowKey()));
        headers.addAll(others);
        calls.deleteRows(log, "trim", pk, headers);
        return headers.size();
    }

    /**
     * Rolls back: deletes every data row above the tail staged under this or an older epoch (headers first),
     * finishes an interrupted trim, and deletes checkpoint chunks no head or index row references that older
     * epochs wrote. Never rolls forward.
     *
     * @see WalStorageProvider#reconcile(LogId, Fence)
     */
    ReconcileResult reconcile(LogId log, Fence fence) {
        Head head = calls.readHead(log);
        TablesCalls.checkFence(log, head, fence);
        String pk = Keys.logPartition(log);
        List<String> headers = new ArrayList<>();
        List<String> others = new ArrayList<>();
        Set<String> headed = new HashSet<>();
        Map<String, Integer> rowsByBatch = new HashMap<>();
        calls.queryAll(log, "reconcile", Keys.rowRange(pk, Keys.dataFrom(head.tail() + 1), Keys.DATA_END),
                List.of("RowKey", "E", "X"), QUERY_TOP, e -> {
                    if (Rows.getLong(e, "E") <= fence.epoch()) {
                        String rk = e.getRowKey();
                        String prefix = rk.substring(0, rk.lastIndexOf('.') + 1);
                        if (Rows.getInt(e, "X") == 0) {
                            headers.add(rk);
                            headed.add(prefix);
                        } else {
                            others.add(rk);
                            rowsByBatch.merge(prefix, 1, Integer::sum);
                        }
                    }
                    return true;
                });
        long leftovers = 0;
        for (Map.Entry<String, Integer> b : rowsByBatch.entrySet()) {
            if (!headed.contains(b.getKey())) {
                leftovers += b.getValue(); // rows of a stage that never finished
            }
        }
        int rolledBack = headers.size();
        headers.addAll(others);
        calls.deleteRows(log, "reconcile", pk, headers);
        leftovers += cleanupBelowWatermark(log, head);
        leftovers += sweepCheckpoints(log, head, fence.epoch());
        return new ReconcileResult(head.tail(), rolledBack, 0, leftovers);
    }

    /** Deletes chunk partitions of checkpoints that were never published (or were replaced) by older epochs. */
    private long sweepCheckpoints(LogId log, Head head, long epoch) {
        String pk = Keys.logPartition(log);
        Set<String> referenced = new HashSet<>();
        if (head.latest() != null) {
            referenced.add(head.latest().generation());
        }
        calls.queryAll(log, "reconcile", Keys.rowRange(pk, Keys.CHECKPOINT_INDEX, Keys.CHECKPOINT_INDEX_END),
                List.of("CG"), QUERY_TOP, e -> referenced.add((String) e.getProperty("CG")));
        List<String> orphans = new ArrayList<>();
        calls.queryAll(log, "reconcile", "PartitionKey ge " + Keys.quote(Keys.checkpointPartitionsLow(log))
                        + " and PartitionKey lt " + Keys.quote(Keys.checkpointPartitionsHigh(log))
                        + " and RowKey eq " + Keys.quote(Keys.checkpointRow(0)),
                List.of("PartitionKey", "E"), QUERY_TOP, e -> {
                    String cpk = e.getPartitionKey();
                    String generation = cpk.substring(cpk.lastIndexOf('|') + 1);
                    if (!referenced.contains(generation) && Rows.getLong(e, "E") < epoch) {
                        orphans.add(cpk);
                    }
                    return true;
                });
        long deleted = 0;
        for (String cpk : orphans) {
            deleted += calls.deletePartition(log, "reconcile", cpk);
        }
        return deleted;
    }

}
