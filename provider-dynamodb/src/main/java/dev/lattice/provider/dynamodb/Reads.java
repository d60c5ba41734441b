package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.BatchChunks.Stored;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.SpiChecks;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Protocol part: {@code read} and {@code state} (docs/providers/dynamodb.md, Protocol: read): the head, then strongly
 * consistent {@code Query} pages of the committed chain, skipping items of epochs that did not commit there.
 *
 * <p>Thread-safe (stateless apart from the slot cache of heads).
 */
final class Reads {

    private final Heads heads;
    private final DynamoCalls calls;

    /** @param heads the head access shared by the protocol parts */
    Reads(Heads heads) {
        this.heads = heads;
        this.calls = heads.calls();
    }

    /** Implements {@link WalStorageProvider#read}. */
    ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        heads.ensureOpen();
        String pk = heads.layout().logKey(log);
        for (int attempt = 0; ; attempt++) {
            Map<String, AttributeValue> item = calls.get(log, Layout.key(pk, Layout.HEAD_SK));
            if (item == null) {
                return new ReadPage(List.of(), -1);
            }
            Head h = Heads.decodeHead(log, item);
            long bound = Math.max(fromExclusive, h.watermark());
            if (bound >= h.tail()) {
                return new ReadPage(List.of(), h.tail());
            }
            List<LogEntry> out = readRange(log, pk, h, bound + 1, maxEntries, maxBytes);
            if (out != null) {
                return new ReadPage(out, h.tail());
            }
            if (attempt >= 3) {
                throw new CorruptLogException(log, bound + 1, "committed chunks between offset " + (bound + 1)
                        + " and the tail " + h.tail() + " are missing");
            }
            // A chunk was missing: a concurrent trim may have deleted it; read the head again.
        }
    }

    /**
     * Reads committed entries from {@code start} (inclusive) up to the head's tail.
     *
     * @return the entries, or null when a committed chunk was missing
     */
    private List<LogEntry> readRange(LogId log, String pk, Head h, long start, int maxEntries, long maxBytes) {
        List<LogEntry> out = new ArrayList<>();
        long bytes = 0;
        long expected = start;
        Map<String, AttributeValue> startKey = null;
        int limit = queryLimit(maxEntries, maxBytes);
        while (true) {
            QueryResponse r = calls.query(log, Layout.rangeQuery(pk, start, h.tail(), startKey, false, limit));
            for (Map<String, AttributeValue> item : r.items()) {
                long k = Layout.num(item, Layout.CHUNK_FIRST);
                long s = Layout.num(item, Layout.SK);
                long e = Layout.num(item, Layout.EPOCH);
                if (e != h.segments().epochAt(k) || s < expected
                        || (expected == start ? k > expected : k != expected)) {
                    continue;
                }
                Stored c = BatchChunks.decode(log, item, true);
                int idx = (int) (expected - k);
                int pos = 0;
                for (int i = 0; i < idx; i++) {
                    pos += c.lengths()[i];
                }
                for (long o = expected; o <= s; o++, idx++) {
                    int len = c.lengths()[idx];
                    if (out.size() >= maxEntries || (!out.isEmpty() && bytes + len > maxBytes)) {
                        return out;
                    }
                    byte[] p = new byte[len];
                    System.arraycopy(c.data(), pos, p, 0, len);
                    pos += len;
                    out.add(new LogEntry(o, p));
                    bytes += len;
                }
                expected = s + 1;
                if (expected > h.tail()) {
                    return out;
                }
            }
            if (!r.hasLastEvaluatedKey() || r.lastEvaluatedKey().isEmpty()) {
                return null;
            }
            startKey = r.lastEvaluatedKey();
        }
    }

    /**
     * Items per {@code Query} page of a read: a page never needs more items than the caller's entry limit (an item
     * holds at least one entry) nor more than one item per allowed payload byte plus one; above 1,000 the 1 MB page
     * cap is the tighter bound and no limit is set.
     */
    static int queryLimit(int maxEntries, long maxBytes) {
        long limit = Math.min(maxEntries, maxBytes >= Integer.MAX_VALUE ? Integer.MAX_VALUE : maxBytes + 1);
        return limit >= 1000 ? 0 : (int) Math.max(2, limit);
    }

    /** Implements {@link WalStorageProvider#state}. */
    LogState state(LogId log) {
        Objects.requireNonNull(log, "log");
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        Head h = heads.readHead(slot);
        return h == null ? LogState.EMPTY : h.toState();
    }
}
