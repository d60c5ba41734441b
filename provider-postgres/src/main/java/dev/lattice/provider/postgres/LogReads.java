package dev.lattice.provider.postgres;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentMap;

/**
 * Read part of the protocol (see docs/providers/postgres.md, "Reads"): pages of committed entries decoded from
 * batch rows above the trim watermark, the head's state, and the listing of logs and trees. Reads are read-only
 * calls (retried on a lost connection) and never take a lock.
 *
 * <p>Thread-safe.
 */
final class LogReads {

    /** At most this many batch rows are fetched by one read. */
    static final int READ_MAX_ROWS = 10_000;
    /** At most this many entries are returned by one read. */
    static final int READ_MAX_ENTRIES = 100_000;
    /** At most this many payload bytes are returned by one read (at least one entry always). */
    static final long READ_MAX_BYTES = 64L << 20;

    private final PostgresCalls calls;
    private final Sql sql;
    private final ConcurrentMap<LogId, LogSlot> slots;

    /**
     * Creates the read path.
     *
     * @param calls the backend calls
     * @param slots the provider's per-log slots (reads record the committed tail they saw)
     */
    LogReads(PostgresCalls calls, ConcurrentMap<LogId, LogSlot> slots) {
        this.calls = calls;
        this.sql = calls.sql();
        this.slots = slots;
    }

    /**
     * Reads a page (arguments already validated); see {@link dev.lattice.spi.WalStorageProvider#read}.
     *
     * @param log the log
     * @param fromExclusive the offset after which to read
     * @param maxEntries most entries
     * @param maxBytes most payload bytes (at least one entry is returned)
     * @return the page
     * @throws CorruptLogException if a committed offset has no batch row or a frame fails its check
     */
    ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        long byteBudget = Math.min(maxBytes, READ_MAX_BYTES);
        int maxRows = Math.min(maxEntries, READ_MAX_ROWS);
        long entryBudget = Math.min(maxEntries, READ_MAX_ENTRIES);
        record Row(long tail, long watermark, long first, int count, byte[] frame) {
        }
        List<Row> rows = calls.readOnly(log, "read", h -> h.createQuery(sql.read)
                .bind("tree", log.tree()).bind("part", log.partition()).bind("from", fromExclusive)
                .bind("maxRows", maxRows).bind("maxEntries", entryBudget).bind("maxBytes", byteBudget)
                .map((rs, ctx) -> {
                    Object first = rs.getObject("first_offset");
                    return new Row(rs.getLong("tail"), rs.getLong("watermark"),
                            first == null ? -1 : ((Number) first).longValue(), rs.getInt("entry_count"),
                            first == null ? null : rs.getBytes("frame"));
                })
                .list());
        if (rows.isEmpty()) {
            return new ReadPage(List.of(), -1);
        }
        long tail = rows.get(0).tail();
        long bound = Math.max(fromExclusive, rows.get(0).watermark());
        LogSlot slot = slots.get(log);
        if (slot != null) {
            slot.observeTail(tail);
        }
        List<LogEntry> out = new ArrayList<>();
        long bytes = 0;
        long expected = bound + 1;
        outer:
        for (Row r : rows) {
            if (r.frame() == null) {
                continue;
            }
            List<byte[]> payloads = BatchFrame.decode(log, r.first(), r.count(), r.frame());
            long offset = r.first();
            for (byte[] p : payloads) {
                if (offset > bound && offset <= tail) {
                    if (out.size() >= entryBudget || (!out.isEmpty() && bytes + p.length > byteBudget)) {
                        break outer;
                    }
                    if (offset != expected) {
                        throw new CorruptLogException(log, expected, "committed offsets " + expected + ".."
                                + (offset - 1) + " have no batch row");
                    }
                    out.add(new LogEntry(offset, p));
                    bytes += p.length;
                    expected = offset + 1;
                }
                offset++;
            }
        }
        if (out.isEmpty() && bound < tail) {
            throw new CorruptLogException(log, bound + 1, "committed offset " + (bound + 1) + " has no batch row");
        }
        return new ReadPage(out, tail);
    }

    /**
     * A log's state from its head row; see {@link dev.lattice.spi.WalStorageProvider#state}.
     *
     * @param log the log
     * @return the state, {@link LogState#EMPTY} for a log never claimed
     */
    LogState state(LogId log) {
        Optional<LogState> s = calls.readOnly(log, "state", h -> h.createQuery(sql.state).bind("tree", log.tree())
                .bind("part", log.partition())
                .map((rs, ctx) -> {
                    long tail = rs.getLong("tail");
                    long watermark = rs.getLong("watermark");
                    long entries = rs.getLong("retained_entries");
                    long lowest = entries > 0 ? watermark + 1 : tail + 1;
                    return new LogState(lowest, tail, watermark, rs.getLong("epoch"), entries,
                            rs.getLong("retained_bytes"), rs.getLong("physical"));
                })
                .findOne());
        s.ifPresent(st -> {
            LogSlot slot = slots.get(log);
            if (slot != null) {
                slot.observeTail(st.committedTail());
            }
        });
        return s.orElse(LogState.EMPTY);
    }

    /**
     * The claimed logs of a tree.
     *
     * @param tree the tree (already validated)
     * @return its logs, by partition
     */
    List<LogId> logs(String tree) {
        List<Integer> parts = calls.readOnly(null, "listing logs", h -> h.createQuery(sql.logs).bind("tree", tree)
                .mapTo(Integer.class).list());
        List<LogId> out = new ArrayList<>(parts.size());
        for (int p : parts) {
            out.add(new LogId(tree, p));
        }
        return out;
    }

    /**
     * The trees with at least one claimed log.
     *
     * @return their names, sorted
     */
    List<String> trees() {
        List<String> out = new ArrayList<>(calls.readOnly(null, "listing trees", h -> h.createQuery(sql.trees)
                .mapTo(String.class).list()));
        out.sort(null);
        return out;
    }
}
