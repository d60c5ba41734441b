package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import dev.lattice.provider.azure.tables.Records.CommittedBatch;
import dev.lattice.provider.azure.tables.Records.Head;
import dev.lattice.provider.azure.tables.Records.Manifest;
import dev.lattice.provider.azure.tables.Records.StagedHeader;
import dev.lattice.provider.azure.tables.TablesCalls.HeadAndStaged;
import dev.lattice.provider.azure.tables.TablesCalls.TxFailure;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.StageDecision;
import dev.lattice.spi.support.StagingRules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Protocol part: the two-phase append. {@code stage} writes a batch's data rows, header transaction last;
 * {@code commit} publishes a chain of staged batches with one conditional head update plus a manifest row;
 * {@code abort} deletes a staged batch's rows. The staging rules themselves are {@link StagingRules}'; this class
 * reads staged headers back from the table and applies them. See docs/providers/azure-tables.md.
 *
 * <p>Thread-safe (stateless beyond its collaborators).
 */
final class Appends {

    private static final int QUERY_TOP = TablesCalls.QUERY_TOP;
    private static final int MAX_HEAD_RACES = TablesCalls.MAX_HEAD_RACES;

    private final TablesCalls calls;
    private final Layout layout;

    Appends(TablesCalls calls, Layout layout) {
        this.calls = calls;
        this.layout = layout;
    }

    /**
     * Raises the epoch in the head row: CREATE of the head (epoch 1) or UPDATE with If-Match; a lost race re-reads
     * and tries again with a short random back-off. Requests: 1 read + 1 transaction when uncontended.
     *
     * @see WalStorageProvider#claim(LogId)
     */
    Fence claim(LogId log) {
        String pk = Keys.logPartition(log);
        for (int attempt = 1; ; attempt++) {
            Head head = calls.readHead(log);
            TableTransactionAction action;
            long epoch;
            if (head == null) {
                epoch = 1;
                action = new TableTransactionAction(TableTransactionActionType.CREATE,
                        new Head(1, -1, -1, 0, null, null).toEntity(pk));
            } else {
                epoch = head.epoch() + 1;
                action = new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE,
                        head.withEpoch(epoch).toEntity(pk), true);
            }
            TxFailure f = calls.submit(log, "claim", List.of(action));
            if (f == null) {
                return new Fence(log, epoch);
            }
            if (!f.isConflict()) {
                throw f.toException(log, "claim");
            }
            calls.backOff(log, "claim", attempt, f);
        }
    }

    /**
     * Writes the batch's data rows (CREATE), in as many transactions as the service limits need, the header's
     * transaction last. Requests: 1 query (head and staged headers) + 1 transaction per 3 full rows (about 2.8 MiB
     * of payload) or per 100 rows. Fenced at once when the head shows a newer epoch.
     *
     * @see WalStorageProvider#stage(LogId, Fence, EncodedBatch)
     */
    StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        StagedBatch receipt = StagedBatch.of(fence, batch);
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        HeadAndStaged hs = calls.readHeadAndStaged(log, last);
        Head head = hs.head();
        TablesCalls.checkFence(log, head, fence);
        List<StagedHeader> overlapping = new ArrayList<>();
        for (StagedHeader s : hs.staged()) {
            if (StagingRules.overlaps(s, first, last)) {
                overlapping.add(s);
            }
        }
        StageDecision<StagedHeader> decision = StagingRules.decideStage(log, fence, batch, head.tail(), () -> {
            CommittedBatch c = first > head.watermark() ? calls.findCommitted(log, first) : null;
            return c != null && c.first() == first && c.last() == last && c.id().equals(batch.batchId());
        }, overlapping);
        if (decision.kind() == StageDecision.Kind.ALREADY_COMMITTED) {
            return receipt; // a retry of a batch that was committed meanwhile
        }
        String pk = Keys.logPartition(log);
        BatchCodec.Encoded encoded = BatchCodec.encode(pk, fence.epoch(), batch, layout);
        if (decision.kind() == StageDecision.Kind.ALREADY_STAGED) {
            for (StagedHeader s : overlapping) {
                if (s.epoch() == fence.epoch() && s.first() == first && s.last() == last
                        && s.id().equals(batch.batchId()) && !Arrays.equals(s.hash(), encoded.hash())) {
                    throw new OffsetConflictException(log, "batch " + first + ".." + last + " (id "
                            + batch.batchId() + ") was staged before with other content under the same id");
                }
            }
            return receipt; // already staged whole
        }
        // Older epochs' overlapping leftovers (decision.superseded()) give way: their row keys differ, and
        // reconcile deletes them.
        List<List<TableTransactionAction>> txns = Rows.pack(encoded.rows(), TableTransactionActionType.CREATE);
        // Row 0 (the header) is in the first transaction; it goes last, so a header means a complete batch.
        for (int i = 1; i < txns.size(); i++) {
            submitStageTransaction(log, txns.get(i), encoded.hash(), Keys.dataBatchPrefix(first, batch.batchId(),
                    fence.epoch()));
        }
        submitStageTransaction(log, txns.get(0), encoded.hash(), Keys.dataBatchPrefix(first, batch.batchId(),
                fence.epoch()));
        return receipt;
    }

    /**
     * Submits one stage transaction. On 409 EntityAlreadyExists (a retry whose earlier attempt landed, wholly or in
     * part) rows already stored with the same content hash count as written and the rest is submitted again; a row
     * stored with another hash is a conflict.
     */
    private void submitStageTransaction(LogId log, List<TableTransactionAction> actions, byte[] hash, String prefix) {
        List<TableTransactionAction> pending = actions;
        for (int round = 1; ; round++) {
            TxFailure f = calls.submit(log, "stage", pending);
            if (f == null) {
                return;
            }
            if (!f.is(TableErrorCode.ENTITY_ALREADY_EXISTS)) {
                throw f.toException(log, "stage");
            }
            Map<String, byte[]> stored = new HashMap<>();
            calls.queryAll(log, "stage", Keys.rowRange(Keys.logPartition(log), prefix, prefix + "~"),
                    List.of("RowKey", "H"), QUERY_TOP, e -> {
                        stored.put(e.getRowKey(), Rows.getBytes(e, "H"));
                        return true;
                    });
            List<TableTransactionAction> rest = new ArrayList<>();
            for (TableTransactionAction a : pending) {
                byte[] h = stored.get(a.getEntity().getRowKey());
                if (h == null) {
                    rest.add(a);
                } else if (!Arrays.equals(h, hash)) {
                    throw new OffsetConflictException(log, "row " + a.getEntity().getRowKey()
                            + " exists with other content: the same batch id and offsets were staged with other"
                            + " entries");
                }
            }
            if (rest.isEmpty()) {
                return;
            }
            if (rest.size() == pending.size() || round >= 5) {
                throw new ProviderUnavailableException(log, "stage: transaction keeps failing with "
                        + "EntityAlreadyExists although the rows are missing", f.cause());
            }
            pending = rest;
        }
    }

    /**
     * Publishes every staged batch up to {@code throughOffset} with one transaction: the head's conditional
     * UPDATE plus one manifest row (more than 10,000 batches take one
     * such transaction per group, in order). Requests: 1 query + 1 transaction.
     *
     * @see WalStorageProvider#commit(LogId, Fence, long)
     */
    void commit(LogId log, Fence fence, long throughOffset) {
        String pk = Keys.logPartition(log);
        for (int attempt = 1; ; attempt++) {
            HeadAndStaged hs = calls.readHeadAndStaged(log, throughOffset);
            Head head = hs.head();
            TablesCalls.checkFence(log, head, fence);
            if (throughOffset <= head.tail()) {
                return;
            }
            List<CommittedBatch> chain = new ArrayList<>();
            for (StagedHeader s : StagingRules.commitChain(log, fence, head.tail(), throughOffset, hs.staged())) {
                chain.add(s.committed());
            }
            boolean raced = false;
            for (int from = 0; from < chain.size() && !raced; from += Manifest.MAX_BATCHES_PER_GROUP) {
                int to = Math.min(chain.size(), from + Manifest.MAX_BATCHES_PER_GROUP);
                List<CommittedBatch> group = chain.subList(from, to);
                long groupLast = group.get(group.size() - 1).last();
                long bytes = 0;
                for (CommittedBatch b : group) {
                    bytes += b.payloadBytes();
                }
                TableEntity manifest = Manifest.toEntity(pk, group);
                Rows.checkEntity(manifest);
                TxFailure f = calls.submit(log, "commit", List.of(
                        new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE,
                                head.withTail(groupLast, head.retainedBytes() + bytes).toEntity(pk), true),
                        new TableTransactionAction(TableTransactionActionType.CREATE, manifest)));
                if (f == null && to == chain.size()) {
                    return;
                }
                if (f != null && !f.isConflict()) {
                    throw f.toException(log, "commit");
                }
                // More groups to go, or a conflict: look at the head again.
                Head now = calls.readHead(log);
                if (now.epoch() != fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), now.epoch(), f == null ? null : f.cause());
                }
                if (now.tail() != groupLast) {
                    if (now.tail() >= throughOffset) {
                        return; // a retried request had landed (the tail only moves through this writer)
                    }
                    raced = true; // the head moved under us (the same writer's trim or publish): start over
                    if (attempt >= MAX_HEAD_RACES) {
                        throw new ProviderUnavailableException(log, "commit lost " + attempt
                                + " races for the head row", f == null ? null : f.cause());
                    }
                }
                head = now; // f != null with the tail at groupLast: a retried request had landed
            }
            if (!raced) {
                return;
            }
        }
    }

    /**
     * Deletes the batch's data rows (header first) when it is still staged under the receipt's epoch, which must
     * be the fence's.
     *
     * @see WalStorageProvider#abort(LogId, Fence, StagedBatch)
     */
    void abort(LogId log, Fence fence, StagedBatch staged) {
        Head head = calls.readHead(log);
        TablesCalls.checkFence(log, head, fence);
        if (staged.epoch() != fence.epoch() || staged.firstOffset() <= head.tail()) {
            return; // another epoch's batch, or committed / trimmed meanwhile
        }
        String pk = Keys.logPartition(log);
        String prefix = Keys.dataBatchPrefix(staged.firstOffset(), staged.batchId(), staged.epoch());
        List<String> headers = new ArrayList<>();
        List<String> others = new ArrayList<>();
        boolean[] otherRange = {false};
        calls.queryAll(log, "abort", Keys.rowRange(pk, prefix, prefix + "~"), List.of("RowKey", "L", "X"), QUERY_TOP,
                e -> {
            if (Rows.getLong(e, "L") != staged.lastOffset()) {
                otherRange[0] = true;
            }
            (Rows.getInt(e, "X") == 0 ? headers : others).add(e.getRowKey());
            return true;
        });
        if (otherRange[0]) {
            return; // the same id was staged with another range: not this receipt's batch
        }
        headers.addAll(others);
        calls.deleteRows(log, "abort", pk, headers);
    }

}
