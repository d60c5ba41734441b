package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.BatchChunks.Stored;
import dev.lattice.provider.dynamodb.LogSlot.Staged;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.SpiChecks;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Protocol part: {@code trim} (docs/providers/dynamodb.md, Protocol: trim): the head update (watermark, counters)
 * first, then the deletes.
 *
 * <p>Thread-safe.
 */
final class Trims {

    private final Heads heads;
    private final DynamoCalls calls;
    private final Staging staging;

    /**
     * @param heads the head access shared by the protocol parts
     * @param staging the staged-batch registry's owner
     */
    Trims(Heads heads, Staging staging) {
        this.heads = heads;
        this.calls = heads.calls();
        this.staging = staging;
    }

    /** What a trim removes, found before its head update. */
    private record TrimPlan(long entries, long payloadBytes, long itemBytes, List<Map<String, AttributeValue>> keys) {
    }

    /**
     * Implements {@link WalStorageProvider#trim}: one conditional head update, then the deletes. A trim within the committed tail (the engine's case) sets
     * the watermark and subtracts the counters with {@code ADD}, conditioned only on what it depends on: the epoch,
     * the watermark it planned from, a tail at or above the new watermark and, when it prunes commit segments, the
     * segments it pruned. It never raises the version and never writes the tail, so commits, which condition on the
     * version and the tail, never refuse it nor are refused by it. A trim beyond the tail also moves the tail, so it
     * conditions on the version and the tail like a commit and raises the version: it and a concurrent commit under
     * the same fence are serialised, and the loser re-reads the head.
     */
    void trim(LogId log, Fence fence, long throughInclusive) {
        SpiChecks.trim(log, fence, throughInclusive);
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        for (int attempt = 0; attempt < DynamoDbWalStorageProvider.MAX_CAS_ATTEMPTS; attempt++) {
            Head h = heads.readHead(slot);
            Heads.checkFence(log, h, fence);
            if (throughInclusive <= h.watermark()) {
                return;
            }
            TrimPlan plan = planTrim(log, slot.pk, h, throughInclusive);
            if (plan == null) {
                if (attempt >= 3) {
                    throw new CorruptLogException(log, h.watermark() + 1, "committed chunks between the trim "
                            + "watermark " + h.watermark() + " and offset " + throughInclusive + " are missing");
                }
                continue;
            }
            boolean beyondTail = throughInclusive > h.tail();
            Segments segments = h.segments().prunedThrough(throughInclusive);
            Map<String, String> names = new HashMap<>();
            names.put("#e", Layout.EPOCH);
            names.put("#t", Layout.TAIL);
            names.put("#w", Layout.WATERMARK);
            names.put("#n", Layout.RETAINED_ENTRIES);
            names.put("#r", Layout.RETAINED_BYTES);
            names.put("#y", Layout.CHUNK_BYTES);
            names.put("#tm", Layout.TRIMS);
            Map<String, AttributeValue> values = new HashMap<>();
            values.put(":e", Layout.n(fence.epoch()));
            values.put(":ow", Layout.n(h.watermark()));
            values.put(":w", Layout.n(throughInclusive));
            values.put(":dn", Layout.n(-plan.entries()));
            values.put(":dr", Layout.n(-plan.payloadBytes()));
            values.put(":dy", Layout.n(-plan.itemBytes()));
            values.put(":one", Layout.n(1));
            StringBuilder set = new StringBuilder("SET #w = :w");
            StringBuilder condition = new StringBuilder("#e = :e AND #w = :ow");
            if (beyondTail) {
                names.put("#v", Layout.VERSION);
                values.put(":v", Layout.n(h.version()));
                values.put(":nv", Layout.n(h.version() + 1));
                values.put(":ot", Layout.n(h.tail()));
                set.append(", #t = :w, #v = :nv");
                condition.append(" AND #v = :v AND #t = :ot");
            } else {
                condition.append(" AND #t >= :w");
            }
            if (segments != h.segments()) {
                names.put("#g", Layout.SEGMENTS);
                values.put(":g", Layout.b(segments.encode()));
                values.put(":og", Layout.b(h.segments().encode()));
                set.append(", #g = :g");
                condition.append(" AND #g = :og");
            }
            String update = set + " ADD #n :dn, #r :dr, #y :dy, #tm :one";
            Head next = h.trimmed(throughInclusive, beyondTail, plan.entries(), plan.payloadBytes(), plan.itemBytes(),
                    segments);
            List<Staged> dropped = new ArrayList<>();
            synchronized (slot) {
                Map<String, AttributeValue> done;
                try {
                    done = calls.update(log, Heads.headKey(slot), update, condition.toString(), names, values,
                            ReturnValue.NONE);
                } catch (RuntimeException e) {
                    slot.head = null;
                    throw e;
                }
                if (done == null) {
                    continue;
                }
                if (slot.registryEpoch == fence.epoch()) {
                    for (Staged s : new ArrayList<>(slot.staged.headMap(throughInclusive, true).values())) {
                        slot.staged.remove(s.first, s);
                        dropped.add(s);
                    }
                }
                slot.install(next);
            }
            calls.batchDelete(log, plan.keys());
            for (Staged s : dropped) {
                staging.deleteStagedChunks(slot, s);
            }
            return;
        }
        throw new ProviderUnavailableException(log, "the head changed under "
                + DynamoDbWalStorageProvider.MAX_CAS_ATTEMPTS
                + " trim attempts in a row; retry", null);
    }

    /**
     * Finds what a trim through {@code through} drops: every item at or below it (to delete) and the committed
     * entries, payload bytes and item bytes leaving the counters.
     *
     * @return the plan, or null when a committed chunk was missing (a concurrent trim)
     */
    private TrimPlan planTrim(LogId log, String pk, Head h, long through) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        long countTo = Math.min(through, h.tail());
        long expected = h.watermark() + 1;
        long first = expected;
        long entries = 0;
        long bytes = 0;
        long itemBytes = 0;
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(log, Layout.rangeQuery(pk, 0, through, start, true, 0)
                    .projectionExpression(Layout.METADATA_PROJECTION)
                    .expressionAttributeNames(Layout.metadataNames()));
            for (Map<String, AttributeValue> item : r.items()) {
                keys.add(Layout.key(pk, Layout.num(item, Layout.SK)));
                if (expected > countTo) {
                    continue;
                }
                long k = Layout.num(item, Layout.CHUNK_FIRST);
                long s = Layout.num(item, Layout.SK);
                if (Layout.num(item, Layout.EPOCH) != h.segments().epochAt(k) || s < expected
                        || (expected == first ? k > expected : k != expected)) {
                    continue;
                }
                Stored c = BatchChunks.decode(log, item, false);
                entries += s - expected + 1;
                bytes += c.bytesBetween(expected, s);
                itemBytes += c.itemBytes();
                expected = s + 1;
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        if (expected <= countTo) {
            // The chunk holding offset `expected` straddles the new watermark: it stays, its leading entries go.
            Map<String, AttributeValue> s2 = null;
            boolean found = false;
            do {
                QueryResponse r = calls.query(log, Layout.rangeQuery(pk, through + 1, h.tail(), s2, true, 4)
                        .projectionExpression(Layout.METADATA_PROJECTION)
                        .expressionAttributeNames(Layout.metadataNames()));
                for (Map<String, AttributeValue> item : r.items()) {
                    long k = Layout.num(item, Layout.CHUNK_FIRST);
                    if (Layout.num(item, Layout.EPOCH) != h.segments().epochAt(k)
                            || (expected == first ? k > expected : k != expected)) {
                        continue;
                    }
                    Stored c = BatchChunks.decode(log, item, false);
                    entries += countTo - expected + 1;
                    bytes += c.bytesBetween(expected, countTo);
                    found = true;
                    break;
                }
                s2 = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
            } while (!found && s2 != null);
            if (!found) {
                return null;
            }
        }
        return new TrimPlan(entries, bytes, itemBytes, keys);
    }
}
