package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.RunNotFoundException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A tree served by a read-only follower ({@link LatticeFollower}): reads from the followed logs' states, which lag
 * the owner by about one poll; every write throws {@link ReadOnlyException}. A read that finds a run gone (the owner
 * compacted it away) has the log rebuilt from its latest checkpoint and is retried. Thread-safe.
 */
final class FollowerTree implements Tree {

    private static final int READ_ATTEMPTS = 4;

    private final LatticeFollower follower;
    private final EngineContext ctx;
    private final String name;
    private final PartitionHash hash;
    private final FollowerLog[] logs;
    private final FollowerTxns txns;
    private volatile Placement placement;
    private volatile boolean dropped;

    FollowerTree(LatticeFollower follower, EngineContext ctx, Placement placement, PartitionHash hash, FollowerTxns txns) {
        this.follower = follower;
        this.ctx = ctx;
        this.name = placement.tree();
        this.hash = hash;
        this.placement = placement;
        this.txns = txns;
        this.logs = new FollowerLog[placement.keys().size()];
        for (int p = 0; p < logs.length; p++) {
            LogId log = new LogId(name, p);
            logs[p] = new FollowerLog(ctx, ctx.handle(placement.keyOf(p), log), log, txns);
        }
    }

    FollowerLog[] logs() {
        return logs;
    }

    Placement placement() {
        return placement;
    }

    /** The catalog shows a new placement (a move flipped): logs placed elsewhere now follow their new provider. */
    void placementChanged(Placement next) {
        for (int p = 0; p < logs.length; p++) {
            logs[p].moveTo(ctx.handle(next.keyOf(p), logs[p].log));
        }
        placement = next;
    }

    void markDropped() {
        dropped = true;
    }

    private void checkReadable() {
        follower.checkOpen();
        if (dropped) {
            throw new NoSuchTreeException(name, "tree '" + name + "' was dropped");
        }
    }

    private void checkKey(String key) {
        KeyLimit.check(key, ctx.config.maxKeyBytes);
    }

    private FollowerLog logOf(String key) {
        return logs[hash.partition(key, logs.length)];
    }

    /** Runs a read; when a run it needs is gone, rebuilds that log from its latest checkpoint and runs it again. */
    private <T> T read(Supplier<T> r) {
        for (int attempt = 1; ; attempt++) {
            var lock = txns.readers().readLock();
            lock.lock();
            try {
                return r.get();
            } catch (RuntimeException e) {
                RunNotFoundException gone = runGone(e);
                if (gone == null || attempt >= READ_ATTEMPTS) {
                    throw e;
                }
                lock.unlock(); // the rebuild takes the write side
                try {
                    follower.reloadAfterMissingRun(logs[gone.log().partition()], gone);
                } finally {
                    lock.lock();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    private RunNotFoundException runGone(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof RunNotFoundException r && r.log() != null && r.log().tree().equals(name)
                    && r.log().partition() < logs.length) {
                return r;
            }
        }
        return null;
    }

    private ReadOnlyException readOnly(String op) {
        return new ReadOnlyException("tree '" + name + "' is opened by a read-only follower; " + op
                + " is a write (open the lattice with Lattice.open to write)");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int partitions() {
        return logs.length;
    }

    @Override
    public int maxKeyBytes() {
        return ctx.config.maxKeyBytes;
    }

    @Override
    public int maxValueBytes() {
        long min = Long.MAX_VALUE;
        for (FollowerLog l : logs) {
            min = Math.min(min, ctx.handle(placement.keyOf(l.log.partition()), l.log).descriptor().limits()
                    .maxEntryBytes());
        }
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE - 64,
                min - WalRecord.SINGLE_PUT_OVERHEAD - ctx.config.maxKeyBytes));
    }

    @Override
    public Optional<byte[]> get(String key) {
        return getVersioned(key).map(Versioned::value);
    }

    @Override
    public Optional<Versioned> getVersioned(String key) {
        checkKey(key);
        checkReadable();
        FollowerLog l = logOf(key);
        return read(() -> Optional.ofNullable(l.state().latest(key)));
    }

    @Override
    public boolean exists(String key) {
        return getVersioned(key).isPresent();
    }

    @Override
    public Map<String, byte[]> getAll(Collection<String> keys) {
        Objects.requireNonNull(keys, "keys");
        for (String k : keys) {
            checkKey(k);
        }
        checkReadable();
        return read(() -> {
            Visibility vis = ctx.atomics.visibility;
            long s = vis.openSnapshot();
            try {
                Map<String, byte[]> out = new TreeMap<>();
                for (String k : keys) {
                    Versioned v = logOf(k).state().at(k, s);
                    if (v != null) {
                        out.put(k, v.value());
                    }
                }
                return out;
            } finally {
                vis.closeSnapshot(s);
            }
        });
    }

    @Override
    public ScanCursor scan(String fromInclusive, String toExclusive, boolean reverse) {
        checkReadable();
        return read(() -> {
            Visibility vis = ctx.atomics.visibility;
            long snapshot = vis.openSnapshot();
            List<java.util.Iterator<Map.Entry<String, Object>>> its = new ArrayList<>(logs.length);
            try {
                for (FollowerLog l : logs) {
                    its.add(l.state().scan(fromInclusive, toExclusive, reverse, snapshot));
                }
            } catch (RuntimeException e) {
                vis.closeSnapshot(snapshot);
                throw e;
            }
            return new MergeCursor(its, reverse, vis, snapshot);
        });
    }

    @Override
    public long count() {
        checkReadable();
        return read(() -> {
            long n = 0;
            for (FollowerLog l : logs) {
                n += l.state().count();
            }
            return n;
        });
    }

    @Override
    public SaturationState saturation() {
        return SaturationState.HEALTHY;
    }

    @Override
    public List<HealthIssue> healthIssues() {
        return List.of();
    }

    @Override
    public AtomicWrite atomic() {
        throw readOnly("an atomic write");
    }

    @Override
    public long put(String key, byte[] value) {
        throw readOnly("put");
    }

    @Override
    public boolean putIfAbsent(String key, byte[] value) {
        throw readOnly("putIfAbsent");
    }

    @Override
    public boolean putIfVersion(String key, byte[] value, long expectedVersion) {
        throw readOnly("putIfVersion");
    }

    @Override
    public boolean delete(String key) {
        throw readOnly("delete");
    }

    @Override
    public void putAll(Map<String, byte[]> entries) {
        throw readOnly("putAll");
    }

    @Override
    public CompletableFuture<Long> putAsync(String key, byte[] value) {
        return CompletableFuture.failedFuture(readOnly("putAsync"));
    }

    @Override
    public CompletableFuture<Boolean> putIfAbsentAsync(String key, byte[] value) {
        return CompletableFuture.failedFuture(readOnly("putIfAbsentAsync"));
    }

    @Override
    public CompletableFuture<Boolean> putIfVersionAsync(String key, byte[] value, long expectedVersion) {
        return CompletableFuture.failedFuture(readOnly("putIfVersionAsync"));
    }

    @Override
    public CompletableFuture<Boolean> deleteAsync(String key) {
        return CompletableFuture.failedFuture(readOnly("deleteAsync"));
    }

    @Override
    public CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries) {
        return CompletableFuture.failedFuture(readOnly("putAllAsync"));
    }

    @Override
    public long put(String key, byte[] value, java.time.Duration ttl) {
        throw readOnly("put");
    }

    @Override
    public CompletableFuture<Long> putAsync(String key, byte[] value, java.time.Duration ttl) {
        return CompletableFuture.failedFuture(readOnly("putAsync"));
    }

    @Override
    public void putAll(Map<String, byte[]> entries, java.time.Duration ttl) {
        throw readOnly("putAll");
    }

    @Override
    public CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries, java.time.Duration ttl) {
        return CompletableFuture.failedFuture(readOnly("putAllAsync"));
    }

    @Override
    public long deleteRange(String fromInclusive, String toExclusive) {
        throw readOnly("deleteRange");
    }

    @Override
    public CompletableFuture<Long> deleteRangeAsync(String fromInclusive, String toExclusive) {
        return CompletableFuture.failedFuture(readOnly("deleteRangeAsync"));
    }

    @Override
    public String toString() {
        return "FollowerTree[" + name + ", " + logs.length + " partitions]";
    }

    /** Only reads the logs (no claim, nothing written); conditional writes as for a feed without the owner. */
    @Override
    public dev.lattice.engine.feed.ChangeCursor changes(dev.lattice.engine.feed.ChangePosition from) {
        checkReadable();
        return ChangeFeeds.open(ctx, placement, null, from, null);
    }

    /** A registered consumer writes its position to the engine's {@code _feeds} log (no tree log is claimed). */
    @Override
    public dev.lattice.engine.feed.ChangeCursor changes(String consumer, dev.lattice.engine.feed.ChangePosition initial) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(initial, "initial");
        checkReadable();
        return ChangeFeeds.open(ctx, placement, null, initial, consumer);
    }

    @Override
    public dev.lattice.engine.feed.ChangeSnapshot snapshotWithPosition(String fromInclusive, String toExclusive) {
        checkReadable();
        return read(() -> {
            PartitionState[] states = new PartitionState[logs.length];
            dev.lattice.spi.WalStorageProvider[] providers = new dev.lattice.spi.WalStorageProvider[logs.length];
            for (int p = 0; p < logs.length; p++) {
                states[p] = logs[p].state();
                providers[p] = logs[p].currentProvider();
            }
            return ChangeFeeds.snapshot(ctx, name, states, providers, () -> scan(fromInclusive, toExclusive, false));
        });
    }
}
