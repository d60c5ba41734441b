package dev.lattice.engine;

import dev.lattice.engine.feed.ChangeCursor;
import dev.lattice.engine.feed.ChangePosition;
import dev.lattice.engine.feed.ChangeSnapshot;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/** Opens change cursors and snapshots with positions (see {@link Tree#changes}). Stateless; thread-safe. */
final class ChangeFeeds {

    private static final Pattern CONSUMER_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    private ChangeFeeds() {
    }

    /**
     * Opens a cursor over a tree's logs without claiming them.
     *
     * @param owner the tree when this process holds it (its state helps decide conditional writes), else null
     * @param consumer a consumer name (its stored position wins over {@code from}), or null for an unregistered cursor
     */
    static ChangeCursor open(EngineContext ctx, Placement placement, TreeImpl owner, ChangePosition from,
                             String consumer) {
        Objects.requireNonNull(from, "from");
        String tree = placement.tree();
        int partitions = placement.keys().size();
        ChangePosition start;
        if (consumer != null) {
            checkConsumerName(consumer);
            start = ctx.feeds.get(tree, consumer).orElse(null);
            if (start == null) {
                start = resolve(ctx, placement, owner, from);
                ctx.feeds.store(tree, consumer, start); // registers it: trims keep what it still needs from now on
            }
        } else {
            start = resolve(ctx, placement, owner, from);
        }
        PartitionFeed[] feeds = new PartitionFeed[partitions];
        for (int p = 0; p < partitions; p++) {
            LogId log = new LogId(tree, p);
            WalStorageProvider provider = ctx.handle(placement.keyOf(p), log).provider();
            Function<String, Versioned> state = null;
            if (owner != null) {
                LogPipeline lp = owner.everyPipeline("a change feed")[p];
                state = k -> lp.state.latest(k);
            }
            feeds[p] = new PartitionFeed(ctx, provider, log, start.offset(p), state);
        }
        return new ChangeFeedCursor(tree, feeds, ctx.feeds, consumer);
    }

    static void checkConsumerName(String consumer) {
        Objects.requireNonNull(consumer, "consumer");
        if (!CONSUMER_NAME.matcher(consumer).matches()) {
            throw new IllegalArgumentException("consumer name must match [A-Za-z0-9._-]{1,128}, got '" + consumer + "'");
        }
    }

    /**
     * A concrete position: markers resolved, partition count checked. {@code now} is per partition the committed
     * tail, lowered to just before the earliest PREPARE at or below it whose outcome is not logged by then (the feed
     * delivers a multi-log write at its PREPARE, so one that commits later is still delivered).
     */
    static ChangePosition resolve(EngineContext ctx, Placement placement, TreeImpl owner, ChangePosition from) {
        int partitions = placement.keys().size();
        if (from.isNow()) {
            long[] o = new long[partitions];
            for (int p = 0; p < partitions; p++) {
                LogId log = new LogId(placement.tree(), p);
                WalStorageProvider provider = ctx.handle(placement.keyOf(p), log).provider();
                long tail = ctx.bounded(log, "state", () -> provider.state(log)).committedTail();
                if (owner != null && owner.everyPipeline("a change feed")[p].state.unresolved.isEmpty()
                        && owner.everyPipeline("a change feed")[p].state.appliedOffset >= tail) {
                    o[p] = tail; // nothing prepared and unresolved here
                } else {
                    o[p] = Math.min(tail, earliestUnresolved(ctx, provider, log, tail) - 1);
                }
            }
            return ChangePosition.of(o);
        }
        if (from.isBeginning()) {
            long[] o = new long[partitions];
            java.util.Arrays.fill(o, -1);
            return ChangePosition.of(o);
        }
        if (from.partitions() != partitions) {
            throw new IllegalArgumentException("position " + from + " has " + from.partitions()
                    + " partitions, tree '" + placement.tree() + "' has " + partitions);
        }
        return from;
    }

    /**
     * Reads the retained log through {@code through}: the offset of the first PREPARE without a RESOLVE or DECISION
     * at or below {@code through}, or {@code through + 1} when there is none.
     */
    private static long earliestUnresolved(EngineContext ctx, WalStorageProvider provider, LogId log, long through) {
        long from = ctx.bounded(log, "state", () -> provider.state(log)).trimWatermark();
        java.util.Map<String, Long> open = new java.util.LinkedHashMap<>();
        while (from < through) {
            long f = from;
            ReadPage page = ctx.bounded(log, "read", () -> provider.read(log, f, 10_000, 8L << 20));
            if (page.isEmpty()) {
                break;
            }
            for (LogEntry e : page.entries()) {
                if (e.offset() > through) {
                    break;
                }
                FeedDecoder.Entry d = FeedDecoder.decode(log, e.offset(), e.payload());
                if (d.kind() == WalRecord.KIND_PREPARE) {
                    open.putIfAbsent(d.ops().get(0).key(), e.offset());
                } else if (d.kind() == WalRecord.KIND_RESOLVE || d.kind() == WalRecord.KIND_DECISION) {
                    open.remove(d.ops().get(0).key());
                }
                from = e.offset();
            }
        }
        long min = through + 1;
        for (long q : open.values()) {
            min = Math.min(min, q);
        }
        return min;
    }

    /**
     * A scan with the position it is consistent with: per partition the applied offset before the scan starts,
     * lowered to just before the earliest PREPARE still unresolved then (so the feed delivers that write once it
     * commits).
     *
     * @param states each partition's state (the owner's, or a follower's)
     * @param providers each partition's provider
     * @param scan opens the scan, after the position is taken
     */
    static ChangeSnapshot snapshot(EngineContext ctx, String tree, PartitionState[] states,
                                   WalStorageProvider[] providers, java.util.function.Supplier<ScanCursor> scan) {
        long[] o = new long[states.length];
        for (int p = 0; p < states.length; p++) {
            PartitionState st = states[p];
            long applied = st.appliedOffset;
            Set<String> pending = new HashSet<>(st.unresolved.keySet());
            o[p] = pending.isEmpty() ? applied
                    : Math.min(applied, earliestPrepare(ctx, new LogId(tree, p), providers[p], pending, applied) - 1);
        }
        return new ChangeSnapshot(ChangePosition.of(o), scan.get());
    }

    /** The offset of the first PREPARE of {@code ids} at or below {@code through}, or the first retained offset. */
    private static long earliestPrepare(EngineContext ctx, LogId log, WalStorageProvider provider, Set<String> ids,
                                        long through) {
        LogState st = ctx.bounded(log, "state", () -> provider.state(log));
        long from = st.trimWatermark();
        while (from < through) {
            long f = from;
            ReadPage page = ctx.bounded(log, "read", () -> provider.read(log, f, 10_000, 8L << 20));
            if (page.isEmpty()) {
                break;
            }
            for (LogEntry e : page.entries()) {
                if (e.offset() > through) {
                    break;
                }
                FeedDecoder.Entry d = FeedDecoder.decode(log, e.offset(), e.payload());
                if (d.kind() == WalRecord.KIND_PREPARE && ids.contains(d.ops().get(0).key())) {
                    return e.offset();
                }
                from = e.offset();
            }
        }
        return st.trimWatermark() + 1; // prepared before the trim watermark: the feed cannot deliver it
    }
}
