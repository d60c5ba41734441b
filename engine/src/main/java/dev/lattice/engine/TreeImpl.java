package dev.lattice.engine;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The {@link Tree} implementation: routes keys to partitions, validates, submits writes, serves reads from memory. */
final class TreeImpl implements Tree {

    private final EngineContext ctx;
    private final Lattice lattice;
    private final String name;
    private final LogPipeline[] pipelines;
    private final AtomicLong clock = new AtomicLong();
    private final int maxKeyBytes;
    private final int maxValueBytes;
    private volatile SaturationState saturation = SaturationState.HEALTHY;

    private volatile Placement placement;
    private final ProviderHandle[] handles;
    private final ProviderHandle smallest;

    private TreeImpl(EngineContext ctx, Lattice lattice, Placement placement) {
        this.ctx = ctx;
        this.lattice = lattice;
        this.name = placement.tree();
        this.placement = placement;
        int partitions = placement.keys().size();
        this.pipelines = new LogPipeline[partitions];
        this.handles = new ProviderHandle[partitions];
        ProviderHandle min = null;
        for (int p = 0; p < partitions; p++) {
            handles[p] = ctx.handle(placement.keyOf(p), new LogId(name, p));
            if (min == null || handles[p].descriptor().limits().maxEntryBytes()
                    < min.descriptor().limits().maxEntryBytes()) {
                min = handles[p];
            }
        }
        this.smallest = min;
        this.maxKeyBytes = ctx.config.maxKeyBytes;
        long maxValue = (long) min.descriptor().limits().maxEntryBytes() - WalRecord.SINGLE_PUT_OVERHEAD - maxKeyBytes;
        if (maxValue < 1) {
            throw new IllegalArgumentException("provider '" + min.key() + "' allows entries of "
                    + min.descriptor().limits().maxEntryBytes() + " bytes, too small for keys of " + maxKeyBytes
                    + " bytes; lower maxKeyBytes");
        }
        this.maxValueBytes = (int) Math.min(Integer.MAX_VALUE - 64, maxValue);
    }

    /**
     * Opens (replays) a tree: every partition in parallel, bounded by the replay parallelism.
     *
     * @throws dev.lattice.spi.ProviderMissingException if a partition is placed on a key not registered here
     */
    static TreeImpl open(EngineContext ctx, Lattice lattice, Placement placement) {
        TreeImpl t = new TreeImpl(ctx, lattice, placement);
        String name = placement.tree();
        int partitions = placement.keys().size();
        long t0 = System.nanoTime();
        Semaphore permits = new Semaphore(ctx.config.replayParallelism);
        List<Future<LogPipeline>> futures = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            LogId log = new LogId(name, p);
            futures.add(ctx.io.submit(() -> {
                permits.acquire();
                try {
                    return t.replay(log);
                } finally {
                    permits.release();
                }
            }));
        }
        RuntimeException failure = null;
        for (int p = 0; p < partitions; p++) {
            try {
                t.pipelines[p] = futures.get(p).get();
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                RuntimeException r = c instanceof RuntimeException ? (RuntimeException) c
                        : new LatticeException("replay of " + new LogId(name, p) + " failed", c);
                if (failure == null) {
                    failure = r;
                } else {
                    failure.addSuppressed(r);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LatticeException("interrupted while opening tree " + name, e);
            }
        }
        if (failure != null) {
            for (LogPipeline lp : t.pipelines) {
                if (lp != null) {
                    lp.state.clear();
                }
            }
            throw failure;
        }
        long max = 0;
        for (LogPipeline lp : t.pipelines) {
            max = Math.max(max, lp.state.maxVersion);
        }
        t.clock.set(max);
        long elapsed = System.nanoTime() - t0;
        ctx.stats.replayNanos.add(elapsed);
        Timer.builder("lattice.replay.duration").tag("tree", name).register(ctx.registry)
                .record(elapsed, TimeUnit.NANOSECONDS);
        return t;
    }

    private LogPipeline replay(LogId log) {
        ProviderHandle handle = handles[log.partition()];
        WalStorageProvider p = handle.provider();
        Fence fence = p.claim(log);
        p.reconcile(log, fence);
        PartitionState ps = new PartitionState(ctx.memoryUsed);
        long lastCheckpoint = -1;
        Optional<CheckpointInfo> cp = p.checkpoints().latest(log);
        if (cp.isPresent()) {
            CheckpointInfo info = cp.get();
            if (info.formatVersion() != PartitionState.SNAPSHOT_FORMAT) {
                throw new CorruptLogException(log, info.throughOffset(), "checkpoint format " + info.formatVersion()
                        + " is not supported (expected " + PartitionState.SNAPSHOT_FORMAT + ")");
            }
            try (InputStream in = p.checkpoints().open(log, info)) {
                ps.load(log, info.throughOffset(), in);
            } catch (IOException e) {
                throw new UncheckedIOException("closing checkpoint stream of " + log, e);
            }
            ctx.stats.replayCheckpointBytes.add(info.sizeBytes());
            lastCheckpoint = info.throughOffset();
        }
        LogState st = p.state(log);
        if (st.trimWatermark() > ps.appliedOffset) {
            throw new CorruptLogException(log, ps.appliedOffset + 1, "the log is trimmed through "
                    + st.trimWatermark() + " but the latest checkpoint covers only through " + ps.appliedOffset);
        }
        Counter replayed = Counter.builder("lattice.replay.entries").tag("tree", name)
                .tag("partition", Integer.toString(log.partition())).tag("provider", handle.key())
                .register(ctx.registry);
        long from = ps.appliedOffset;
        while (from < st.committedTail()) {
            ReadPage page = p.read(log, from, ctx.config.replayPageEntries, ctx.config.replayPageBytes);
            ctx.stats.replayReadCalls.increment();
            if (page.isEmpty()) {
                break;
            }
            for (LogEntry e : page.entries()) {
                if (e.offset() != from + 1) {
                    throw new CorruptLogException(log, from + 1, "missing entry: the log jumps from " + from + " to "
                            + e.offset());
                }
                WalRecord.Decoded d = WalRecord.decode(log, e.offset(), e.payload());
                if (d.kind() != WalRecord.KIND_MUTATIONS) {
                    throw new CorruptLogException(log, e.offset(), "not a tree entry (kind " + d.kind() + ")");
                }
                for (WalRecord.Mutation m : d.mutations()) {
                    ps.apply(m, d.version());
                }
                ps.appliedOffset = e.offset();
                from = e.offset();
                ctx.stats.replayEntries.increment();
                ctx.stats.replayBytes.add(e.payload().length);
                replayed.increment();
            }
        }
        if (ps.appliedOffset != st.committedTail()) {
            throw new CorruptLogException(log, ps.appliedOffset + 1, "replay ended at offset " + ps.appliedOffset
                    + " but the committed tail is " + st.committedTail());
        }
        return new LogPipeline(ctx, handle, this, log, fence, ps, st.committedTail(), lastCheckpoint);
    }

    long nextVersion() {
        long now = System.currentTimeMillis() << 12;
        return clock.updateAndGet(v -> Math.max(v + 1, now));
    }

    void saturationChanged() {
        SaturationState worst = SaturationState.HEALTHY;
        for (LogPipeline p : pipelines) {
            if (p != null && p.saturationNow().compareTo(worst) > 0) {
                worst = p.saturationNow();
            }
        }
        SaturationState prev = saturation;
        if (worst != prev) {
            saturation = worst;
            lattice.fireSaturation(name, prev, worst);
        }
    }

    LogPipeline[] pipelines() {
        return pipelines;
    }

    Placement placement() {
        return placement;
    }

    /** After a move flipped the placement (the pipelines already switched). */
    void placementChanged(Placement next) {
        for (int p = 0; p < handles.length; p++) {
            handles[p] = pipelines[p].handle();
        }
        this.placement = next;
    }

    // ------------------------------------------------------------------ routing and validation

    /**
     * The partition of a key: a mix of {@link String#hashCode()} (whose formula the Java language fixes, so it is
     * stable across JVMs and versions) modulo the partition count.
     */
    static int partitionOf(String key, int partitions) {
        int h = key.hashCode();
        h ^= (h >>> 16);
        h *= 0x9E3779B1;
        h ^= (h >>> 15);
        return Math.floorMod(h, partitions);
    }

    private LogPipeline pipeline(String key) {
        return pipelines[partitionOf(key, pipelines.length)];
    }

    private byte[] keyBytes(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
        byte[] kb = key.getBytes(StandardCharsets.UTF_8);
        if (kb.length > maxKeyBytes) {
            throw new IllegalArgumentException("key is " + kb.length + " UTF-8 bytes, more than the limit of "
                    + maxKeyBytes + " bytes (LatticeConfig maxKeyBytes)");
        }
        if (hasSurrogate(key) && !new String(kb, StandardCharsets.UTF_8).equals(key)) {
            throw new IllegalArgumentException("key has an unpaired surrogate character and cannot be stored as UTF-8");
        }
        return kb;
    }

    private static boolean hasSurrogate(String key) {
        for (int i = 0; i < key.length(); i++) {
            if (Character.isSurrogate(key.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    private byte[] value(byte[] value) {
        Objects.requireNonNull(value, "value");
        if (value.length > maxValueBytes) {
            throw new IllegalArgumentException("value is " + value.length + " bytes, more than the limit of "
                    + maxValueBytes + " bytes (derived from provider '" + smallest.key() + "' max entry size "
                    + smallest.descriptor().limits().maxEntryBytes() + " bytes)");
        }
        return value.clone();
    }

    private void checkOpen() {
        if (lattice.isClosed()) {
            throw new LatticeShuttingDownException("lattice is closed; tree '" + name + "' is no longer readable");
        }
    }

    private void checkBudget(String key, byte[] value) {
        long used = ctx.memoryUsed.get();
        long add = PartitionState.estimate(key, value);
        if (used + add > ctx.config.memoryBudgetBytes) {
            throw new MemoryBudgetExceededException("memory budget of " + ctx.config.memoryBudgetBytes
                    + " bytes is spent (live data estimate " + used + " bytes); write to '" + name + "' refused");
        }
    }

    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> submit(WalRecord.Mutation m) {
        PendingWrite w = new PendingWrite(m);
        pipeline(m.key()).submit(w);
        return (CompletableFuture<T>) (CompletableFuture<?>) w.future;
    }

    static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LatticeException("interrupted while waiting for a write", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new LatticeException("write failed", c);
        }
    }

    // ------------------------------------------------------------------ Tree

    @Override
    public String name() {
        return name;
    }

    @Override
    public int partitions() {
        return pipelines.length;
    }

    @Override
    public int maxKeyBytes() {
        return maxKeyBytes;
    }

    @Override
    public int maxValueBytes() {
        return maxValueBytes;
    }

    @Override
    public Optional<byte[]> get(String key) {
        return getVersioned(key).map(Versioned::value);
    }

    @Override
    public Optional<Versioned> getVersioned(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty() || key.length() > maxKeyBytes) {
            throw new IllegalArgumentException("key must be 1.." + maxKeyBytes + " UTF-8 bytes, got "
                    + key.length() + " characters");
        }
        checkOpen();
        return Optional.ofNullable(pipeline(key).state.map.get(key));
    }

    @Override
    public boolean exists(String key) {
        return getVersioned(key).isPresent();
    }

    @Override
    public Map<String, byte[]> getAll(Collection<String> keys) {
        Objects.requireNonNull(keys, "keys");
        Map<String, byte[]> out = new TreeMap<>();
        for (String k : keys) {
            get(k).ifPresent(v -> out.put(k, v));
        }
        return out;
    }

    @Override
    public long put(String key, byte[] value) {
        return await(putAsync(key, value));
    }

    @Override
    public boolean putIfAbsent(String key, byte[] value) {
        return await(putIfAbsentAsync(key, value));
    }

    @Override
    public boolean putIfVersion(String key, byte[] value, long expectedVersion) {
        return await(putIfVersionAsync(key, value, expectedVersion));
    }

    @Override
    public boolean delete(String key) {
        return await(deleteAsync(key));
    }

    @Override
    public void putAll(Map<String, byte[]> entries) {
        await(putAllAsync(entries));
    }

    @Override
    public CompletableFuture<Long> putAsync(String key, byte[] value) {
        byte[] kb = keyBytes(key);
        byte[] v = value(value);
        checkBudget(key, v);
        return submit(WalRecord.Mutation.put(key, kb, v));
    }

    @Override
    public CompletableFuture<Boolean> putIfAbsentAsync(String key, byte[] value) {
        return putIfVersionAsync(key, value, 0);
    }

    @Override
    public CompletableFuture<Boolean> putIfVersionAsync(String key, byte[] value, long expectedVersion) {
        byte[] kb = keyBytes(key);
        byte[] v = value(value);
        if (expectedVersion < 0) {
            throw new IllegalArgumentException("expectedVersion must be >= 0 (0 = absent), got " + expectedVersion);
        }
        checkBudget(key, v);
        return submit(WalRecord.Mutation.putIfVersion(key, kb, v, expectedVersion));
    }

    @Override
    public CompletableFuture<Boolean> deleteAsync(String key) {
        byte[] kb = keyBytes(key);
        return submit(WalRecord.Mutation.delete(key, kb));
    }

    @Override
    public CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries) {
        Objects.requireNonNull(entries, "entries");
        List<WalRecord.Mutation> ms = new ArrayList<>(entries.size());
        long add = 0;
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            byte[] kb = keyBytes(e.getKey());
            byte[] v = value(e.getValue());
            add += PartitionState.estimate(e.getKey(), v);
            ms.add(WalRecord.Mutation.put(e.getKey(), kb, v));
        }
        long used = ctx.memoryUsed.get();
        if (used + add > ctx.config.memoryBudgetBytes) {
            throw new MemoryBudgetExceededException("memory budget of " + ctx.config.memoryBudgetBytes
                    + " bytes would be exceeded by " + add + " bytes (live data estimate " + used + " bytes)");
        }
        CompletableFuture<?>[] fs = new CompletableFuture<?>[ms.size()];
        for (int i = 0; i < fs.length; i++) {
            fs[i] = submit(ms.get(i));
        }
        return CompletableFuture.allOf(fs);
    }

    @Override
    public long count() {
        checkOpen();
        long n = 0;
        for (LogPipeline p : pipelines) {
            n += p.state.map.size();
        }
        return n;
    }

    @Override
    public SaturationState saturation() {
        SaturationState worst = SaturationState.HEALTHY;
        for (LogPipeline p : pipelines) {
            SaturationState s = p.saturation();
            if (s.compareTo(worst) > 0) {
                worst = s;
            }
        }
        return worst;
    }

    @Override
    public ScanCursor scan(String fromInclusive, String toExclusive, boolean reverse) {
        checkOpen();
        List<java.util.Iterator<Map.Entry<String, Versioned>>> its = new ArrayList<>(pipelines.length);
        for (LogPipeline p : pipelines) {
            NavigableMap<String, Versioned> m = p.state.map;
            if (fromInclusive != null && toExclusive != null) {
                m = fromInclusive.compareTo(toExclusive) >= 0 ? new TreeMap<>()
                        : m.subMap(fromInclusive, true, toExclusive, false);
            } else if (fromInclusive != null) {
                m = m.tailMap(fromInclusive, true);
            } else if (toExclusive != null) {
                m = m.headMap(toExclusive, false);
            }
            its.add((reverse ? m.descendingMap() : m).entrySet().iterator());
        }
        return new MergeCursor(its, reverse);
    }

    /** k-way merge of the partitions' ordered iterators. */
    private static final class MergeCursor implements ScanCursor {
        private record Head(Map.Entry<String, Versioned> entry, java.util.Iterator<Map.Entry<String, Versioned>> it) {
        }

        private final PriorityQueue<Head> heap;
        private boolean closed;

        MergeCursor(List<java.util.Iterator<Map.Entry<String, Versioned>>> its, boolean reverse) {
            Comparator<Head> byKey = Comparator.comparing(h -> h.entry().getKey());
            heap = new PriorityQueue<>(Math.max(1, its.size()), reverse ? byKey.reversed() : byKey);
            for (var it : its) {
                if (it.hasNext()) {
                    heap.add(new Head(it.next(), it));
                }
            }
        }

        @Override
        public boolean hasNext() {
            return !closed && !heap.isEmpty();
        }

        @Override
        public TreeEntry next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Head h = heap.poll();
            if (h.it().hasNext()) {
                heap.add(new Head(h.it().next(), h.it()));
            }
            Versioned v = h.entry().getValue();
            return new TreeEntry(h.entry().getKey(), v.value(), v.version());
        }

        @Override
        public void close() {
            closed = true;
            heap.clear();
        }
    }
}
