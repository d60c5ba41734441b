package dev.lattice.provider.dynamodb;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Protocol part: the head item and its cache (docs/providers/dynamodb.md, "Key schema and items" and "Code map").
 * Reads a log's head strongly consistently, records it in the log's {@link LogSlot}, checks fences against it; also
 * holds what every protocol part shares: the backend calls, the key layout and the provider's open/closed state.
 *
 * <p>Thread-safe.
 */
final class Heads {

    private final DynamoCalls calls;
    private final Layout layout;
    private final ConcurrentHashMap<LogId, LogSlot> slots = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param calls the backend calls
     * @param layout the key layout
     */
    Heads(DynamoCalls calls, Layout layout) {
        this.calls = calls;
        this.layout = layout;
    }

    /** @return the backend calls */
    DynamoCalls calls() {
        return calls;
    }

    /** @return the key layout */
    Layout layout() {
        return layout;
    }

    /**
     * Checks the provider is open.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    void ensureOpen() {
        SpiChecks.open(closed, DynamoDbWalStorageProvider.NAME);
    }

    /**
     * Marks the provider closed.
     *
     * @return true on the first call
     */
    boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    /**
     * @param log the log
     * @return the log's slot, created on first use
     */
    LogSlot slot(LogId log) {
        return slots.computeIfAbsent(log, l -> new LogSlot(l, layout.logKey(l)));
    }

    /**
     * Forgets a dropped log's slot (its cached head and staged batches), so the next call starts from the table.
     *
     * @param log the log
     */
    void forget(LogId log) {
        slots.remove(log);
    }

    /**
     * @param slot the log's slot
     * @return the key of the log's head item
     */
    static Map<String, AttributeValue> headKey(LogSlot slot) {
        return Layout.key(slot.pk, Layout.HEAD_SK);
    }

    /**
     * Reads the head strongly consistently and records it in the slot.
     *
     * @param slot the log's slot
     * @return the head, or null when the log was never claimed
     * @throws CorruptLogException if the head item cannot be decoded
     * @throws ProviderUnavailableException on a transient backend failure
     * @throws WalStorageException on any other backend failure
     */
    Head readHead(LogSlot slot) {
        Map<String, AttributeValue> item = calls.get(slot.log, headKey(slot));
        if (item == null) {
            return null;
        }
        Head h = decodeHead(slot.log, item);
        synchronized (slot) {
            slot.install(h);
        }
        return h;
    }

    /**
     * Decodes a head item.
     *
     * @param log the log
     * @param item the item
     * @return the head
     * @throws CorruptLogException if the item cannot be decoded
     */
    static Head decodeHead(LogId log, Map<String, AttributeValue> item) {
        try {
            return Head.from(item);
        } catch (RuntimeException e) {
            throw new CorruptLogException(log, -1, "head item cannot be decoded: " + e.getMessage(), e);
        }
    }

    /**
     * Checks a fence against a head.
     *
     * @param log the log
     * @param h the head, or null when the log has none
     * @param f the fence
     * @throws FencedException if a newer epoch was claimed
     * @throws IllegalArgumentException if the fence's epoch was never claimed
     */
    static void checkFence(LogId log, Head h, Fence f) {
        if (h == null) {
            throw new IllegalArgumentException("fence " + f + " was never claimed: the log has no head item");
        }
        if (f.epoch() < h.epoch()) {
            throw new FencedException(log, f.epoch(), h.epoch());
        }
        if (f.epoch() > h.epoch()) {
            throw new IllegalArgumentException("fence " + f + " was never claimed on this table (the log's epoch is "
                    + h.epoch() + ")");
        }
    }

    /**
     * The head to work from for a fence: the known one when it is at least the fence's epoch (a newer one fences at
     * once), else a fresh read.
     *
     * @param slot the log's slot
     * @param fence the caller's fence
     * @return the head, checked against the fence
     * @throws FencedException if a newer epoch was claimed
     * @throws IllegalArgumentException if the fence's epoch was never claimed
     */
    Head currentHead(LogSlot slot, Fence fence) {
        Head h;
        synchronized (slot) {
            h = slot.head;
        }
        if (h == null || h.epoch() < fence.epoch()) {
            h = readHead(slot);
        }
        checkFence(slot.log, h, fence);
        return h;
    }
}
