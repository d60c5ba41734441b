package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.BatchChunks.Chunk;
import dev.lattice.provider.dynamodb.BatchChunks.Stored;
import dev.lattice.provider.dynamodb.LogSlot.Staged;
import dev.lattice.provider.dynamodb.LogSlot.State;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.support.StageDecision;
import dev.lattice.spi.support.StagingRules;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Protocol part: {@code stage} and {@code abort} (docs/providers/dynamodb.md, Protocol: stage and abort): conditional
 * chunk puts above the tail, the per-epoch registry of staged batches in {@link LogSlot}, judged by {@link
 * StagingRules}, and the conditional deletes of staged chunks.
 *
 * <p>Thread-safe: stages of one log run in parallel; the registry is guarded by the slot.
 */
final class Staging {

    private final Heads heads;
    private final DynamoCalls calls;

    /** @param heads the head access shared by the protocol parts */
    Staging(Heads heads) {
        this.heads = heads;
        this.calls = heads.calls();
    }

    /** Implements {@link WalStorageProvider#stage}. */
    StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        SpiChecks.stage(log, fence, batch, DynamoDbWalStorageProvider.LIMITS);
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        StagedBatch receipt = StagedBatch.of(fence, batch);
        Head h = heads.currentHead(slot, fence);
        ensureRegistry(slot, fence, h);
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        List<Chunk> chunks = BatchChunks.plan(slot.pk, fence.epoch(), batch);
        Staged mine = null;
        List<Staged> takeOver = new ArrayList<>();
        boolean overCommitted;
        long seenTail;
        synchronized (slot) {
            Head cur = slot.head != null ? slot.head : h;
            seenTail = cur.tail();
            Heads.checkFence(log, cur, fence);
            if (slot.registryEpoch != fence.epoch()) {
                throw new ProviderUnavailableException(log, "the staged-batch registry of epoch " + fence.epoch()
                        + " was reset concurrently; retry", null);
            }
            overCommitted = first <= cur.tail() || first <= cur.watermark();
            if (!overCommitted) {
                List<Staged> live = new ArrayList<>();
                for (Staged s : slot.overlapping(first, last)) {
                    if (s.state != State.DIRTY) {
                        live.add(s);
                    } else if (s.sameBatch(first, last, batch.batchId())) {
                        mine = s; // a failed stage of this very batch: its chunks are rewritten
                    } else {
                        takeOver.add(s); // a failed stage of another batch: its chunks are deleted first
                    }
                }
                // The registry holds the fence's epoch only, so nothing is superseded; committed offsets are
                // judged below, outside the lock.
                StageDecision<Staged> d = StagingRules.decideStage(log, fence, batch, cur.tail(), () -> false, live);
                if (d.kind() == StageDecision.Kind.ALREADY_STAGED) {
                    for (Staged s : live) {
                        if (s.sameBatch(first, last, batch.batchId()) && s.state != State.STAGED) {
                            throw new ProviderUnavailableException(log, "batch " + s + " is being staged or "
                                    + "aborted by another call; retry", null);
                        }
                    }
                    return receipt;
                }
                for (Staged s : takeOver) {
                    slot.staged.remove(s.first, s);
                    s.state = State.CLEANING;
                }
                if (mine == null) {
                    long[] keys = new long[chunks.size()];
                    long payload = 0;
                    long itemBytes = 0;
                    for (int i = 0; i < keys.length; i++) {
                        keys[i] = chunks.get(i).last();
                        payload += chunks.get(i).payloadBytes();
                        itemBytes += chunks.get(i).itemBytes();
                    }
                    mine = new Staged(first, last, batch.batchId(), fence.epoch(), batch.size(), payload, itemBytes,
                            keys, State.IN_FLIGHT);
                    slot.staged.put(first, mine);
                } else {
                    mine.state = State.IN_FLIGHT;
                }
            }
        }
        if (overCommitted) {
            StagingRules.decideStage(log, fence, batch, seenTail, () -> isCommitted(slot, batch, h), List.of());
            return receipt;
        }
        int cleaned = 0;
        try {
            for (Staged s : takeOver) {
                deleteStagedChunks(slot, s);
                cleaned++;
            }
            for (Chunk c : chunks) {
                putChunk(slot, fence, batch.batchId(), c);
            }
        } catch (RuntimeException e) {
            synchronized (slot) {
                if (slot.staged.get(first) == mine) {
                    if (cleaned < takeOver.size()) {
                        slot.staged.remove(first);
                        for (Staged s : takeOver.subList(cleaned, takeOver.size())) {
                            s.state = State.DIRTY;
                            slot.staged.put(s.first, s);
                        }
                    } else {
                        mine.state = State.DIRTY;
                    }
                }
            }
            throw e;
        }
        synchronized (slot) {
            if (slot.staged.get(first) == mine) {
                mine.state = State.STAGED;
            }
        }
        return receipt;
    }

    private void putChunk(LogSlot slot, Fence fence, BatchId id, Chunk c) {
        Map<String, String> names = Map.of("#p", Layout.PK, "#e", Layout.EPOCH);
        Map<String, AttributeValue> values = Map.of(":e", Layout.n(fence.epoch()));
        for (int attempt = 0; attempt < 3; attempt++) {
            if (calls.put(slot.log, c.item(), "attribute_not_exists(#p) OR #e < :e", names, values)) {
                return;
            }
            Map<String, AttributeValue> existing = calls.get(slot.log, Layout.key(slot.pk, c.last()));
            if (existing == null) {
                continue;
            }
            Stored st = BatchChunks.decode(slot.log, existing, false);
            if (st.epoch() == fence.epoch() && st.batchId().equals(id) && st.first() == c.first()
                    && st.index() == c.index()) {
                return;
            }
            if (st.epoch() > fence.epoch()) {
                throw new FencedException(slot.log, fence.epoch(), st.epoch());
            }
            throw new OffsetConflictException(slot.log, "offset " + c.last() + " holds a chunk of batch "
                    + st.batchFirst() + ".." + st.batchLast() + " (id " + st.batchId() + ") staged under epoch "
                    + st.epoch() + "; two writers use the same fence?");
        }
        throw new ProviderUnavailableException(slot.log, "chunk at offset " + c.last()
                + " kept changing under a conditional put; retry", null);
    }

    /**
     * Whether a batch at or below the tail is that very batch committed there (a retried stage).
     *
     * @return true when the committed chain from its first offset is exactly that batch
     */
    private boolean isCommitted(LogSlot slot, EncodedBatch batch, Head h) {
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        if (first <= h.watermark() || last > h.tail()) {
            return false;
        }
        long expected = first;
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(slot.log, Layout.rangeQuery(slot.pk, first, last, start, true, 0)
                    .projectionExpression(Layout.METADATA_PROJECTION)
                    .expressionAttributeNames(Layout.metadataNames()));
            for (Map<String, AttributeValue> item : r.items()) {
                Stored c = BatchChunks.decode(slot.log, item, false);
                if (c.epoch() != h.segments().epochAt(c.first()) || c.last() < expected
                        || (expected == first ? c.first() > expected : c.first() != expected)) {
                    continue;
                }
                if (!c.batchId().equals(batch.batchId()) || c.batchFirst() != first || c.batchLast() != last) {
                    return false;
                }
                expected = c.last() + 1;
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null && expected <= last);
        return expected > last;
    }

    /**
     * Makes the slot's registry speak for the fence's epoch: nothing to do after a claim on this instance; else
     * reads the batches staged above the tail under that epoch (one {@code Query} of metadata).
     */
    void ensureRegistry(LogSlot slot, Fence fence, Head h) {
        synchronized (slot) {
            if (slot.registryEpoch == fence.epoch()) {
                return;
            }
        }
        Map<String, List<Stored>> groups = new LinkedHashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(slot.log,
                    Layout.rangeQuery(slot.pk, h.tail() + 1, Long.MAX_VALUE, start, true, 0)
                    .projectionExpression(Layout.METADATA_PROJECTION)
                    .expressionAttributeNames(Layout.metadataNames()));
            for (Map<String, AttributeValue> item : r.items()) {
                Stored c = BatchChunks.decode(slot.log, item, false);
                if (c.epoch() == fence.epoch()) {
                    groups.computeIfAbsent(c.batchFirst() + "/" + c.batchLast() + "/" + c.batchId(),
                            k -> new ArrayList<>()).add(c);
                }
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        List<Staged> found = new ArrayList<>();
        for (List<Stored> g : groups.values()) {
            Stored any = g.get(0);
            long entries = 0;
            long payload = 0;
            long itemBytes = 0;
            long[] keys = new long[g.size()];
            Set<Integer> indexes = new HashSet<>();
            for (int i = 0; i < g.size(); i++) {
                Stored c = g.get(i);
                keys[i] = c.last();
                entries += c.last() - c.first() + 1;
                payload += c.bytesBetween(c.first(), c.last());
                itemBytes += c.itemBytes();
                indexes.add(c.index());
            }
            boolean complete = indexes.size() == any.count() && entries == any.batchLast() - any.batchFirst() + 1;
            found.add(new Staged(any.batchFirst(), any.batchLast(), any.batchId(), fence.epoch(), entries, payload,
                    itemBytes, keys, complete ? State.STAGED : State.DIRTY));
        }
        synchronized (slot) {
            if (slot.registryEpoch == fence.epoch()) {
                return;
            }
            if (slot.head != null && slot.head.epoch() > fence.epoch()) {
                throw new FencedException(slot.log, fence.epoch(), slot.head.epoch());
            }
            slot.registryEpoch = fence.epoch();
            slot.staged.clear();
            for (Staged s : found) {
                if (slot.overlapping(s.first, s.last).isEmpty()) {
                    slot.staged.put(s.first, s);
                }
            }
        }
    }

    /** Deletes a registry entry's chunks, each only while it still holds that batch under that epoch. */
    void deleteStagedChunks(LogSlot slot, Staged s) {
        Map<String, String> names = Map.of("#b", Layout.BATCH_ID, "#e", Layout.EPOCH);
        Map<String, AttributeValue> values = Map.of(":b", Layout.b(s.id.toBytes()), ":e", Layout.n(s.epoch));
        for (long k : s.chunkKeys) {
            calls.delete(slot.log, Layout.key(slot.pk, k), "#b = :b AND #e = :e", names, values);
        }
    }

    /** Implements {@link WalStorageProvider#abort}. */
    void abort(LogId log, Fence fence, StagedBatch staged) {
        SpiChecks.abort(log, fence, staged);
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        Head h = heads.currentHead(slot, fence);
        Staged target = null;
        synchronized (slot) {
            if (slot.registryEpoch == fence.epoch()) {
                Staged s = slot.staged.get(staged.firstOffset());
                if (s != null && StagingRules.abortMatches(s, staged)) {
                    if (s.state != State.STAGED && s.state != State.DIRTY) {
                        return;
                    }
                    s.state = State.CLEANING;
                    target = s;
                } else if (s != null || !slot.overlapping(staged.firstOffset(), staged.lastOffset()).isEmpty()) {
                    return;
                }
            }
        }
        if (target != null) {
            try {
                deleteStagedChunks(slot, target);
            } catch (RuntimeException e) {
                synchronized (slot) {
                    target.state = State.DIRTY;
                }
                throw e;
            }
            synchronized (slot) {
                slot.staged.remove(target.first, target);
            }
            return;
        }
        if (staged.firstOffset() <= h.tail()) {
            return;
        }
        // Not known here: delete whatever chunks of that batch and epoch lie in its range.
        Map<String, String> names = Map.of("#b", Layout.BATCH_ID, "#e", Layout.EPOCH);
        Map<String, AttributeValue> values = Map.of(":b", Layout.b(staged.batchId().toBytes()),
                ":e", Layout.n(staged.epoch()));
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(log, Layout.rangeQuery(slot.pk, staged.firstOffset(), staged.lastOffset(),
                    start, true, 0).projectionExpression("#p, #s, #e2, #b2")
                    .expressionAttributeNames(Map.of("#p", Layout.PK, "#s", Layout.SK, "#e2", Layout.EPOCH,
                            "#b2", Layout.BATCH_ID)));
            for (Map<String, AttributeValue> item : r.items()) {
                if (Layout.num(item, Layout.EPOCH) == staged.epoch()
                        && BatchId.fromBytes(Layout.bin(item, Layout.BATCH_ID)).equals(staged.batchId())) {
                    calls.delete(log, Layout.key(slot.pk, Layout.num(item, Layout.SK)), "#b = :b AND #e = :e",
                            names, values);
                }
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
    }
}
