package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import dev.lattice.provider.azure.tables.Records.CommittedBatch;
import dev.lattice.provider.azure.tables.Records.Head;
import dev.lattice.provider.azure.tables.Records.Manifest;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Protocol part: reading committed entries. A page reads the head, walks manifest rows from the requested offset and
 * loads the batches' data rows with one range query, decoded batches coming from a {@link BatchCache} when possible.
 * Also sums the payload bytes of a committed range for trim. See docs/providers/azure-tables.md.
 *
 * <p>Thread-safe.
 */
final class Reads {

    /** A read page stops planning batches once this many payload bytes are planned (after the first batch). */
    private static final long PAGE_PLAN_BYTES = 16L << 20;
    private static final int QUERY_TOP = TablesCalls.QUERY_TOP;

    private final TablesCalls calls;
    private final BatchCache cache = new BatchCache(32L << 20);

    Reads(TablesCalls calls) {
        this.calls = calls;
    }

    /** Drops every cached batch. */
    void clearCache() {
        cache.clear();
    }

    /**
     * Reads the head, the manifest rows from {@code fromExclusive} on, and the data rows of the batches needed,
     * with one range query (decoded batches are cached, so small pages do not re-read them). A page plans at most
     * 16 MiB of batches beyond the first. Requests for a page: 1 read + manifest and data query pages.
     *
     * @see WalStorageProvider#read(LogId, long, int, long)
     */
    ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        for (int attempt = 1; ; attempt++) {
            Head head = calls.readHead(log);
            if (head == null) {
                return new ReadPage(List.of(), -1);
            }
            try {
                return readPage(log, head, fromExclusive, maxEntries, maxBytes);
            } catch (RowsMissing e) {
                // A trim may have deleted rows after the head was read: retry if the watermark moved.
                Head now = calls.readHead(log);
                if (now.watermark() == head.watermark() || attempt >= 5) {
                    throw new CorruptLogException(log, e.offset, e.what);
                }
            }
        }
    }

    private ReadPage readPage(LogId log, Head head, long fromExclusive, int maxEntries, long maxBytes) {
        long tail = head.tail();
        if (fromExclusive >= tail) {
            return new ReadPage(List.of(), tail);
        }
        long start = Math.max(fromExclusive, head.watermark()) + 1;
        if (start > tail) {
            return new ReadPage(List.of(), tail);
        }
        String pk = Keys.logPartition(log);
        List<CommittedBatch> plan = new ArrayList<>();
        long[] planned = {0, 0}; // entries, bytes
        calls.queryAll(log, "read", Keys.rowRange(pk, Keys.manifest(start), Keys.MANIFEST_END), null, 16, QUERY_TOP,
                e -> {
            for (CommittedBatch b : Manifest.fromEntity(e)) {
                if (b.last() < start) {
                    continue;
                }
                if (b.first() > tail) {
                    return false;
                }
                plan.add(b);
                planned[0] += b.last() - Math.max(b.first(), start) + 1;
                planned[1] += b.payloadBytes();
                if (planned[0] >= maxEntries || planned[1] >= maxBytes || planned[1] >= PAGE_PLAN_BYTES) {
                    return false;
                }
            }
            return true;
        });
        if (plan.isEmpty() || plan.get(0).first() > start) {
            throw new RowsMissing(start, "no manifest row lists committed offset " + start + " (committed tail "
                    + tail + ")");
        }
        Map<CommittedBatch, List<byte[]>> data = loadBatches(log, plan);
        List<LogEntry> out = new ArrayList<>();
        long bytes = 0;
        outer:
        for (CommittedBatch b : plan) {
            List<byte[]> entries = data.get(b);
            for (long off = Math.max(b.first(), start); off <= b.last() && off <= tail; off++) {
                byte[] p = entries.get((int) (off - b.first()));
                if (out.size() >= maxEntries || (!out.isEmpty() && bytes + p.length > maxBytes)) {
                    break outer;
                }
                out.add(new LogEntry(off, p.clone()));
                bytes += p.length;
            }
        }
        return new ReadPage(out, tail);
    }

    /** Loads and decodes committed batches (from the cache where possible) with one range query. */
    private Map<CommittedBatch, List<byte[]>> loadBatches(LogId log, List<CommittedBatch> batches) {
        String pk = Keys.logPartition(log);
        Map<CommittedBatch, List<byte[]>> out = new HashMap<>();
        Map<String, CommittedBatch> missing = new LinkedHashMap<>();
        long rowsNeeded = 0;
        for (CommittedBatch b : batches) {
            List<byte[]> cached = cache.get(pk, b);
            if (cached != null) {
                out.put(b, cached);
            } else {
                missing.put(b.rowPrefix(), b);
                rowsNeeded += b.rows();
            }
        }
        if (missing.isEmpty()) {
            return out;
        }
        List<CommittedBatch> list = new ArrayList<>(missing.values());
        Map<String, List<TableEntity>> rows = new HashMap<>();
        long needed = rowsNeeded;
        long[] got = {0};
        calls.queryAll(log, "read", Keys.rowRange(pk, Keys.dataFrom(list.get(0).first()),
                Keys.dataThrough(list.get(list.size() - 1).first())), null,
                (int) Math.max(1, Math.min(QUERY_TOP, needed)), e -> {
                    String rk = e.getRowKey();
                    String prefix = rk.substring(0, rk.lastIndexOf('.') + 1);
                    if (missing.containsKey(prefix)) {
                        rows.computeIfAbsent(prefix, k -> new ArrayList<>()).add(e);
                        got[0]++;
                    }
                    return got[0] < needed;
                });
        for (Map.Entry<String, CommittedBatch> m : missing.entrySet()) {
            CommittedBatch b = m.getValue();
            List<TableEntity> batchRows = rows.getOrDefault(m.getKey(), List.of());
            if (batchRows.size() != b.rows()) {
                throw new RowsMissing(b.first(), "committed batch " + b.first() + ".." + b.last() + " (id " + b.id()
                        + ") has " + batchRows.size() + " of its " + b.rows() + " data rows");
            }
            List<byte[]> entries = BatchCodec.decode(log, b, batchRows);
            cache.put(pk, b, entries);
            out.put(b, entries);
        }
        return out;
    }

    /** Thrown inside a read when committed rows are gone (a concurrent trim, or corruption). */
    private static final class RowsMissing extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final long offset;
        private final String what;

        RowsMissing(long offset, String what) {
            super(what, null, false, false);
            this.offset = offset;
            this.what = what;
        }
    }

    /** Payload bytes of the committed entries in {@code from..through} (inclusive; empty when from > through). */
    long committedBytes(LogId log, long from, long through) {
        if (from > through) {
            return 0;
        }
        String pk = Keys.logPartition(log);
        List<CommittedBatch> partial = new ArrayList<>();
        long[] sum = {0};
        calls.queryAll(log, "trim", Keys.rowRange(pk, Keys.manifest(from), Keys.MANIFEST_END), null, 16, QUERY_TOP,
                e -> {
            for (CommittedBatch b : Manifest.fromEntity(e)) {
                if (b.last() < from) {
                    continue;
                }
                if (b.first() > through) {
                    return false;
                }
                if (b.first() >= from && b.last() <= through) {
                    sum[0] += b.payloadBytes();
                } else {
                    partial.add(b);
                }
            }
            return true;
        });
        if (!partial.isEmpty()) {
            Map<CommittedBatch, List<byte[]>> data = loadBatches(log, partial);
            for (CommittedBatch b : partial) {
                List<byte[]> entries = data.get(b);
                for (long off = Math.max(from, b.first()); off <= Math.min(through, b.last()); off++) {
                    sum[0] += entries.get((int) (off - b.first())).length;
                }
            }
        }
        return sum[0];
    }

}
