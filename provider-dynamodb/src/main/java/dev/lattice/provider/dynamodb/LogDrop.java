package dev.lattice.provider.dynamodb;

import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.support.SpiChecks;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

import java.util.List;
import java.util.Map;

/**
 * Protocol part: {@code drop} (docs/providers/dynamodb.md, Protocol: drop). Deletes, in this order, the log's runs
 * (header, chunks, index item), its checkpoint partition, its batch chunk items, its head (conditional on the
 * fence's epoch), and last its registration in the tree and catalog items, which is what {@code logs} and
 * {@code trees} read. Every step is idempotent, so a drop cut short is finished by the next drop (a log whose head
 * is gone only loses its registration).
 *
 * <p>Thread-safe.
 */
final class LogDrop {

    private final Heads heads;
    private final DynamoCalls calls;
    private final DynamoDbRunStore runs;

    /**
     * @param heads the head access shared by the protocol parts
     * @param runs the provider's run store
     */
    LogDrop(Heads heads, DynamoDbRunStore runs) {
        this.heads = heads;
        this.calls = heads.calls();
        this.runs = runs;
    }

    /** Implements {@link dev.lattice.spi.WalStorageProvider#drop}. */
    void drop(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        Head h = heads.readHead(slot);
        Layout layout = heads.layout();
        if (h != null) {
            Heads.checkFence(log, h, fence);
            for (RunInfo r : runs.list(log)) {
                runs.delete(log, fence, r.id());
            }
            calls.delete(log, Layout.key(layout.runIndexKey(log), Layout.META_SK), null, null, null);
            calls.deleteAllBetween(log, layout.checkpointKey(log), Long.MIN_VALUE, Long.MAX_VALUE);
            calls.deleteAllBetween(log, slot.pk, Layout.HEAD_SK + 1, Long.MAX_VALUE);
            boolean deleted = calls.delete(log, Heads.headKey(slot), "#e = :e", Map.of("#e", Layout.EPOCH),
                    Map.of(":e", Layout.n(fence.epoch())));
            if (!deleted) {
                Head now = heads.readHead(slot);
                if (now != null) {
                    throw new FencedException(log, fence.epoch(), now.epoch());
                }
            }
        }
        heads.forget(log);
        runs.forget(log);
        Map<String, AttributeValue> tree = calls.update(log, Layout.key(layout.treeKey(log.tree()), Layout.META_SK),
                "DELETE #ps :p", "attribute_exists(#ps)", Map.of("#ps", Layout.PARTITIONS),
                Map.of(":p", AttributeValue.fromNs(List.of(Integer.toString(log.partition())))), ReturnValue.ALL_NEW);
        if (tree != null && (tree.get(Layout.PARTITIONS) == null || !tree.get(Layout.PARTITIONS).hasNs()
                || tree.get(Layout.PARTITIONS).ns().isEmpty())) {
            calls.update(log, Layout.key(layout.catalogKey(), Layout.META_SK), "DELETE #ts :t",
                    "attribute_exists(#ts)", Map.of("#ts", Layout.TREES),
                    Map.of(":t", AttributeValue.fromSs(List.of(log.tree()))), ReturnValue.NONE);
        }
    }
}
