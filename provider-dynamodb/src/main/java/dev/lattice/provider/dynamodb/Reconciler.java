package dev.lattice.provider.dynamodb;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.SpiChecks;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Protocol part: {@code reconcile} (docs/providers/dynamodb.md, Protocol: reconcile): deletes staged items above the
 * tail of epochs up to the caller's, leftovers below the watermark, and checkpoint garbage.
 *
 * <p>Thread-safe.
 */
final class Reconciler {

    private final Heads heads;
    private final DynamoCalls calls;
    private final DynamoDbCheckpointStore checkpoints;

    /**
     * @param heads the head access shared by the protocol parts
     * @param checkpoints the checkpoint store, whose garbage reconcile collects
     */
    Reconciler(Heads heads, DynamoDbCheckpointStore checkpoints) {
        this.heads = heads;
        this.calls = heads.calls();
        this.checkpoints = checkpoints;
    }

    /** Implements {@link WalStorageProvider#reconcile}. */
    ReconcileResult reconcile(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        Head h = heads.readHead(slot);
        Heads.checkFence(log, h, fence);
        synchronized (slot) {
            if (slot.head != null && slot.head.epoch() > fence.epoch()) {
                throw new FencedException(log, fence.epoch(), slot.head.epoch());
            }
            slot.registryEpoch = fence.epoch();
            slot.staged.clear();
        }
        // Everything above the tail: staged batches of any epoch up to ours (newer writers' items stay).
        Set<String> batches = new HashSet<>();
        Map<String, String> delNames = Map.of("#e", Layout.EPOCH);
        Map<String, AttributeValue> delValues = Map.of(":e", Layout.n(fence.epoch()));
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(log,
                    Layout.rangeQuery(slot.pk, h.tail() + 1, Long.MAX_VALUE, start, true, 0)
                    .projectionExpression("#p, #s, #e, #b")
                    .expressionAttributeNames(Map.of("#p", Layout.PK, "#s", Layout.SK, "#e", Layout.EPOCH,
                            "#b", Layout.BATCH_ID)));
            for (Map<String, AttributeValue> item : r.items()) {
                long e = Layout.num(item, Layout.EPOCH, Long.MAX_VALUE);
                if (e <= fence.epoch() && calls.delete(log, Layout.key(slot.pk, Layout.num(item, Layout.SK)),
                        "#e <= :e", delNames, delValues)) {
                    batches.add(e + "/" + BatchId.fromBytes(Layout.bin(item, Layout.BATCH_ID)));
                }
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        long leftovers = 0;
        if (h.watermark() >= 0) {
            leftovers += calls.deleteAllBetween(log, slot.pk, 0, h.watermark());
        }
        leftovers += checkpoints.collectGarbage(log, slot, h);
        return new ReconcileResult(h.tail(), batches.size(), 0, leftovers);
    }
}
