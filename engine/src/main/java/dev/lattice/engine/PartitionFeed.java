package dev.lattice.engine;

import dev.lattice.engine.feed.Change;
import dev.lattice.engine.feed.ChangeFeedTrimmedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The change feed of one partition: reads the log (committed entries only, no fence) after its position and turns
 * each entry into the changes it made, in log order.
 *
 * <ul>
 *   <li>The engine logs conditional writes in their decided, unconditional form ({@link ConditionGate}), so entries
 *       it writes need no decision here. Logs written before that may hold put-if-version ops and preconditions of
 *       atomic writes: they are decided as replay decides them, from the key versions this reader has seen since its
 *       start; for a key it has not seen written it uses: absent, when it started at the beginning of the log; else
 *       the owner's state, when this process holds the tree and the key has not changed since the start; else it
 *       takes the condition as held (see docs/engine.md).</li>
 *   <li>A multi-log atomic write is delivered at its PREPARE entry, once the partition's log holds its outcome (a
 *       RESOLVE, or the DECISION in the coordinator log), with the outcome's version; aborted ones are dropped.
 *       Until the outcome is logged the reader stops at the PREPARE (reading ahead to find it).</li>
 * </ul>
 * Used by one thread at a time.
 */
final class PartitionFeed {

    /** The head entry's outcome is not logged yet. */
    static final List<Change> NOT_READY = List.of();

    private static final int PAGE_ENTRIES = 1000;
    private static final long PAGE_BYTES = 4L << 20;
    private static final int MAX_BUFFERED = 100_000;
    private static final int MAX_TRACKED = 200_000;
    private static final int MAX_RANGES = 1000;

    private final EngineContext ctx;
    private final WalStorageProvider provider;
    final LogId log;
    private final Function<String, Versioned> ownerState;
    private long position;
    private long readThrough;
    private final ArrayDeque<FeedDecoder.Entry> buffer = new ArrayDeque<>();
    private boolean checked;

    // version tracking for conditional writes
    private final TreeMap<String, Long> versions = new TreeMap<>();
    private final List<String[]> rangesSinceStart = new ArrayList<>();
    private boolean baseEmpty;
    private boolean lossy;
    private long firstVersion = -1;

    /**
     * @param ownerState the partition's live state lookup when this process holds the tree, else null
     */
    PartitionFeed(EngineContext ctx, WalStorageProvider provider, LogId log, long position,
                  Function<String, Versioned> ownerState) {
        this.ctx = ctx;
        this.provider = provider;
        this.log = log;
        this.position = position;
        this.readThrough = position;
        this.ownerState = ownerState;
        this.baseEmpty = position == -1;
    }

    /** @return the offset of the last entry whose changes were returned (or that had none) */
    long position() {
        return position;
    }

    /**
     * The changes of the next entry that has any, passing over entries without changes.
     *
     * @return changes (non-empty), or {@link #NOT_READY} when nothing more can be delivered now
     * @throws ChangeFeedTrimmedException if the log is trimmed past the position
     */
    List<Change> next() {
        while (true) {
            if (buffer.isEmpty() && !fill()) {
                return NOT_READY;
            }
            FeedDecoder.Entry head = buffer.peekFirst();
            List<Change> out = process(head);
            if (out == null) {
                return NOT_READY; // a PREPARE whose outcome is not logged yet
            }
            buffer.pollFirst();
            position = head.offset();
            if (!out.isEmpty()) {
                return out;
            }
        }
    }

    /** Reads the next page into the buffer; false when the log has nothing after what is buffered. */
    private boolean fill() {
        if (!checked) {
            LogState st = ctx.bounded(log, "state", () -> provider.state(log));
            if (st.trimWatermark() > position) {
                throw new ChangeFeedTrimmedException(log.tree(), log.partition(), position, st.trimWatermark());
            }
            if (position == -1 && st.lowestOffset() > 0 && st.trimWatermark() < 0) {
                baseEmpty = false; // defensive: a log that does not start at 0
            }
            checked = true;
        }
        if (buffer.size() >= MAX_BUFFERED) {
            return false;
        }
        long from = readThrough;
        ReadPage page = ctx.bounded(log, "read", () -> provider.read(log, from, PAGE_ENTRIES, PAGE_BYTES));
        if (page.isEmpty()) {
            return false;
        }
        for (LogEntry e : page.entries()) {
            if (e.offset() != readThrough + 1) {
                LogState st = ctx.bounded(log, "state", () -> provider.state(log));
                if (st.trimWatermark() > readThrough) {
                    throw new ChangeFeedTrimmedException(log.tree(), log.partition(), position, st.trimWatermark());
                }
                throw new dev.lattice.spi.CorruptLogException(log, readThrough + 1, "missing entry: the log jumps from "
                        + readThrough + " to " + e.offset());
            }
            buffer.addLast(FeedDecoder.decode(log, e.offset(), e.payload()));
            readThrough = e.offset();
        }
        return true;
    }

    /** @return the entry's changes (maybe empty), or null when it is a PREPARE whose outcome is not logged yet */
    private List<Change> process(FeedDecoder.Entry e) {
        if (firstVersion < 0) {
            firstVersion = e.version();
        }
        switch (e.kind()) {
            case WalRecord.KIND_MUTATIONS: {
                List<Change> out = new ArrayList<>(e.ops().size());
                for (FeedDecoder.Op op : e.ops()) {
                    if (op.op() == WalRecord.Mutation.PUT_IF_VERSION && !holds(op, e.version())) {
                        continue;
                    }
                    change(out, e, op, e.version(), null);
                }
                return out;
            }
            case WalRecord.KIND_ATOMIC:
                return preconditionsHold(e.ops(), e.version()) ? changes(e, e.version(), log + "@" + e.offset()) : List.of();
            case WalRecord.KIND_PREPARE: {
                if (!preconditionsHold(e.ops(), -1)) {
                    return List.of(); // the prepare failed when applied: the write is aborted
                }
                String id = e.ops().get(0).key();
                long outcome = outcome(id, e.offset());
                if (outcome == Long.MIN_VALUE) {
                    return null;
                }
                return outcome < 0 ? List.of() : changes(e, outcome, id);
            }
            default:
                return List.of(); // RESOLVE and DECISION: read by outcome()
        }
    }

    /** The committed version of a multi-log write (from its outcome after {@code prepare}), -1 if aborted, MIN if unknown. */
    private long outcome(String id, long prepare) {
        while (true) {
            Iterator<FeedDecoder.Entry> it = buffer.iterator();
            while (it.hasNext()) {
                FeedDecoder.Entry x = it.next();
                if (x.offset() <= prepare || x.ops().isEmpty() || !x.ops().get(0).key().equals(id)
                        || x.ops().get(0).op() != WalRecord.Mutation.TXN) {
                    continue;
                }
                ByteBuffer v = ByteBuffer.wrap(x.ops().get(0).value());
                if (x.kind() == WalRecord.KIND_RESOLVE) {
                    boolean commit = v.get() == 1;
                    long version = v.getLong();
                    return commit ? version : -1;
                }
                if (x.kind() == WalRecord.KIND_DECISION) {
                    return v.get() != 0 ? x.version() : -1;
                }
            }
            if (!fill()) {
                return Long.MIN_VALUE;
            }
        }
    }

    private boolean preconditionsHold(List<FeedDecoder.Op> ops, long entryVersion) {
        for (FeedDecoder.Op op : ops) {
            if (op.op() == WalRecord.Mutation.EXPECT && !holds(op, entryVersion)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a condition held when its entry was applied.
     *
     * @param entryVersion the version the entry gives its keys when applied, or -1 when not known yet (a PREPARE)
     */
    private boolean holds(FeedDecoder.Op op, long entryVersion) {
        long v = versionOf(op.key());
        if (v != -2) {
            return v == op.expected();
        }
        // not followed since the start: no write of the key was applied in (start, this entry)
        if (firstVersion > 0 && op.expected() >= firstVersion) {
            return false; // expects a version written after the start, but none was
        }
        if (ownerState != null && entryVersion > 0) {
            Versioned cur = ownerState.apply(op.key());
            if (cur != null && cur.version() == entryVersion) {
                return true; // the key still carries this entry's version: it was applied
            }
        }
        return true; // cannot tell: taken as held (docs/engine.md, "Change feed")
    }

    /** The key's version before the entry being processed, 0 = absent, -2 = cannot tell. */
    private long versionOf(String key) {
        Long v = versions.get(key);
        if (v != null) {
            return v;
        }
        if (lossy) {
            return ownerVersion(key);
        }
        for (String[] r : rangesSinceStart) {
            if (key.compareTo(r[0]) >= 0 && key.compareTo(r[1]) < 0) {
                return 0;
            }
        }
        return baseEmpty ? 0 : ownerVersion(key);
    }

    private long ownerVersion(String key) {
        if (ownerState == null) {
            return -2;
        }
        Versioned cur = ownerState.apply(key);
        if (cur != null && cur.version() < firstVersion) {
            return cur.version(); // unchanged since this reader's start
        }
        return -2;
    }

    private List<Change> changes(FeedDecoder.Entry e, long version, String txn) {
        List<Change> out = new ArrayList<>(e.ops().size());
        for (FeedDecoder.Op op : e.ops()) {
            change(out, e, op, version, txn);
        }
        return out;
    }

    private void change(List<Change> out, FeedDecoder.Entry e, FeedDecoder.Op op, long version, String txn) {
        int p = log.partition();
        switch (op.op()) {
            case WalRecord.Mutation.PUT, WalRecord.Mutation.PUT_IF_VERSION -> {
                out.add(new Change(p, e.offset(), Change.Kind.PUT, op.key(), op.value(), null, 0, version, txn));
                track(op.key(), version);
            }
            case FeedDecoder.PUT_TTL -> {
                out.add(new Change(p, e.offset(), Change.Kind.PUT, op.key(), op.value(), null, op.expires(), version,
                        txn));
                track(op.key(), version);
            }
            case WalRecord.Mutation.DELETE -> {
                out.add(new Change(p, e.offset(), Change.Kind.DELETE, op.key(), null, null, 0, version, txn));
                track(op.key(), 0);
            }
            case FeedDecoder.DELETE_RANGE -> {
                String to = op.rangeEnd();
                out.add(new Change(p, e.offset(), Change.Kind.DELETE_RANGE, op.key(), null, to, 0, version, txn));
                if (op.key().compareTo(to) < 0) {
                    for (Map.Entry<String, Long> t : versions.subMap(op.key(), true, to, false).entrySet()) {
                        t.setValue(0L);
                    }
                    if (rangesSinceStart.size() >= MAX_RANGES) {
                        lossy = true;
                    } else {
                        rangesSinceStart.add(new String[] {op.key(), to});
                    }
                }
            }
            default -> {
                // EXPECT, TXN, IDEM: not changes
            }
        }
    }

    private void track(String key, long version) {
        if (lossy) {
            return;
        }
        if (versions.size() >= MAX_TRACKED && !versions.containsKey(key)) {
            lossy = true; // too many keys to follow: from here only the owner's state helps
            versions.clear();
            rangesSinceStart.clear();
            return;
        }
        versions.put(key, version);
    }
}
