package dev.lattice.provider.dynamodb;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Protocol part: {@code claim} (docs/providers/dynamodb.md, Protocol: claim): one {@code UpdateItem} raising the
 * head's epoch, then the one-time registration of the log in its tree's and the catalog's meta items.
 *
 * <p>Thread-safe.
 */
final class Claims {

    private final Heads heads;
    private final DynamoCalls calls;

    /** @param heads the head access shared by the protocol parts */
    Claims(Heads heads) {
        this.heads = heads;
        this.calls = heads.calls();
    }

    /** Implements {@link WalStorageProvider#claim}. */
    Fence claim(LogId log) {
        Objects.requireNonNull(log, "log");
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        Map<String, String> names = Map.of("#e", Layout.EPOCH, "#v", Layout.VERSION, "#t", Layout.TAIL,
                "#w", Layout.WATERMARK);
        Map<String, AttributeValue> values = Map.of(":zero", Layout.n(0), ":one", Layout.n(1), ":m1", Layout.n(-1));
        Map<String, AttributeValue> item = calls.update(log, Heads.headKey(slot),
                "SET #e = if_not_exists(#e, :zero) + :one, #v = if_not_exists(#v, :zero) + :one, "
                        + "#t = if_not_exists(#t, :m1), #w = if_not_exists(#w, :m1)",
                null, names, values, ReturnValue.ALL_NEW);
        Head h = Heads.decodeHead(log, item);
        synchronized (slot) {
            slot.install(h);
            if (h.epoch() > slot.registryEpoch) {
                slot.registryEpoch = h.epoch();
                slot.staged.clear();
            }
        }
        if (!h.registered()) {
            register(log, slot);
        }
        return new Fence(log, h.epoch());
    }

    private void register(LogId log, LogSlot slot) {
        calls.update(log, Layout.key(heads.layout().treeKey(log.tree()), Layout.META_SK), "ADD #ps :p", null,
                Map.of("#ps", Layout.PARTITIONS), Map.of(":p", AttributeValue.fromNs(List.of(
                        Integer.toString(log.partition())))), ReturnValue.NONE);
        calls.update(log, Layout.key(heads.layout().catalogKey(), Layout.META_SK), "ADD #ts :t", null,
                Map.of("#ts", Layout.TREES), Map.of(":t", AttributeValue.fromSs(List.of(log.tree()))),
                ReturnValue.NONE);
        calls.update(log, Heads.headKey(slot), "SET #rg = :one", null, Map.of("#rg", Layout.REGISTERED),
                Map.of(":one", Layout.n(1)), ReturnValue.NONE);
    }
}
