package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.LogSlot.Staged;
import dev.lattice.provider.dynamodb.LogSlot.State;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.support.StagingRules;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Protocol part: {@code commit} (docs/providers/dynamodb.md, Protocol: commit): one conditional head update (epoch,
 * version, tail) moving the tail over the chain of staged batches {@link StagingRules#commitChain} finds.
 *
 * <p>Thread-safe: commits of one log are serialised by its slot.
 */
final class Commits {

    private final Heads heads;
    private final DynamoCalls calls;
    private final Staging staging;

    /**
     * @param heads the head access shared by the protocol parts
     * @param staging the staged-batch registry's owner
     */
    Commits(Heads heads, Staging staging) {
        this.heads = heads;
        this.calls = heads.calls();
        this.staging = staging;
    }

    /** Implements {@link WalStorageProvider#commit}. */
    void commit(LogId log, Fence fence, long throughOffset) {
        SpiChecks.commit(log, fence, throughOffset);
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        Head h = heads.currentHead(slot, fence);
        if (throughOffset <= h.tail()) {
            // A no-op, but the fence must still be current: check it against the stored head.
            Head fresh = heads.readHead(slot);
            Heads.checkFence(log, fresh, fence);
            if (throughOffset <= fresh.tail()) {
                return;
            }
            h = fresh;
        }
        staging.ensureRegistry(slot, fence, h);
        for (int attempt = 0; attempt < DynamoDbWalStorageProvider.MAX_CAS_ATTEMPTS; attempt++) {
            OffsetConflictException conflict;
            synchronized (slot) {
                Head cur = slot.head != null ? slot.head : h;
                Heads.checkFence(log, cur, fence);
                if (throughOffset <= cur.tail()) {
                    return;
                }
                List<Staged> chain = List.of();
                try {
                    chain = StagingRules.commitChain(log, fence, cur.tail(), throughOffset,
                            offset -> committable(slot, fence, offset));
                    conflict = null;
                } catch (OffsetConflictException e) {
                    conflict = e;
                }
                if (conflict == null && tryCommit(slot, fence, cur, throughOffset, chain)) {
                    return;
                }
                slot.head = null;
            }
            // The condition was refused, or the chain is incomplete: a stale fence is reported as such first.
            Head fresh = heads.readHead(slot);
            Heads.checkFence(log, fresh, fence);
            if (throughOffset <= fresh.tail()) {
                return;
            }
            if (conflict != null) {
                throw conflict;
            }
        }
        throw new ProviderUnavailableException(log, "the head changed under "
                + DynamoDbWalStorageProvider.MAX_CAS_ATTEMPTS + " commit attempts in a row; retry", null);
    }

    /**
     * The committable batch at an offset: the registry's entry there when the registry speaks for the fence's epoch
     * and every chunk of it is stored; the caller holds the slot's lock.
     */
    private static Staged committable(LogSlot slot, Fence fence, long offset) {
        Staged s = slot.registryEpoch == fence.epoch() ? slot.staged.get(offset) : null;
        return s != null && s.state == State.STAGED ? s : null;
    }

    /**
     * The commit point: one conditional head update moving the tail over the chain; the caller holds the slot's
     * lock.
     *
     * @return true when it landed, false when the condition (epoch, version, tail) was refused
     */
    private boolean tryCommit(LogSlot slot, Fence fence, Head cur, long through, List<Staged> chain) {
        long entries = 0;
        long bytes = 0;
        long itemBytes = 0;
        for (Staged s : chain) {
            entries += s.entries;
            bytes += s.payloadBytes;
            itemBytes += s.itemBytes;
        }
        Segments segments = cur.segments().withCommit(cur.tail() + 1, fence.epoch());
        Head next = cur.committed(through, entries, bytes, itemBytes, segments);
        Map<String, String> names = new HashMap<>();
        names.put("#e", Layout.EPOCH);
        names.put("#v", Layout.VERSION);
        names.put("#t", Layout.TAIL);
        names.put("#n", Layout.RETAINED_ENTRIES);
        names.put("#r", Layout.RETAINED_BYTES);
        names.put("#y", Layout.CHUNK_BYTES);
        names.put("#cm", Layout.COMMITS);
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":e", Layout.n(fence.epoch()));
        values.put(":v", Layout.n(cur.version()));
        values.put(":ot", Layout.n(cur.tail()));
        values.put(":nv", Layout.n(next.version()));
        values.put(":t", Layout.n(next.tail()));
        values.put(":dn", Layout.n(entries));
        values.put(":dr", Layout.n(bytes));
        values.put(":dy", Layout.n(itemBytes));
        values.put(":one", Layout.n(1));
        String set = "SET #t = :t, #v = :nv";
        if (segments != cur.segments()) {
            // Only the first commit of an epoch writes the segments; a concurrent trim may prune them meanwhile,
            // and writing back the unpruned ones it pruned is harmless (they cover offsets below the watermark).
            names.put("#g", Layout.SEGMENTS);
            values.put(":g", Layout.b(segments.encode()));
            set += ", #g = :g";
        }
        Map<String, AttributeValue> done;
        try {
            // Counters by ADD: a trim subtracts from them without raising the version (it does not conflict).
            done = calls.update(slot.log, Heads.headKey(slot), set + " ADD #n :dn, #r :dr, #y :dy, #cm :one",
                    "#e = :e AND #v = :v AND #t = :ot", names, values, ReturnValue.NONE);
        } catch (RuntimeException e) {
            slot.head = null;
            throw e;
        }
        if (done == null) {
            return false;
        }
        slot.install(next);
        for (Staged s : chain) {
            slot.staged.remove(s.first, s);
        }
        return true;
    }
}
