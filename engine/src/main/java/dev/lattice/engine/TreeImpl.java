package dev.lattice.engine;

import dev.lattice.engine.lsm.Manifest;
import dev.lattice.engine.lsm.ManifestCodec;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import io.micrometer.core.instrument.Counter;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
    private volatile OwnershipLostException lost;

    private volatile Placement placement;
    private final PartitionHash hash;
    private final ProviderHandle[] handles;
    private final ProviderHandle smallest;

    private TreeImpl(EngineContext ctx, Lattice lattice, Placement placement) {
        this.ctx = ctx;
        this.lattice = lattice;
        this.name = placement.tree();
        this.placement = placement;
        this.hash = lattice == null ? PartitionHash.LATEST : lattice.partitionHash(name);
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
        List<CompletableFuture<LogPipeline>> futures = new ArrayList<>();
        java.util.concurrent.ConcurrentHashMap<String, Txn> replayTxns = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.function.Function<String, Txn> txnOf = id -> replayTxns.computeIfAbsent(id, Txn::new);
        java.util.concurrent.atomic.AtomicLong reserved = new java.util.concurrent.atomic.AtomicLong();
        for (int p = 0; p < partitions; p++) {
            LogId log = new LogId(name, p);
            CompletableFuture<LogPipeline> f = new CompletableFuture<>();
            futures.add(f);
            ctx.io.execute(() -> {
                try {
                    permits.acquire();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    f.completeExceptionally(new LatticeException("interrupted while opening " + log, e));
                    return;
                }
                try {
                    LogPipeline lp = t.replay(log, txnOf, f, reserved);
                    if (!f.complete(lp)) {
                        lp.state.clear(); // the open gave up on this log (a call passed its deadline)
                    }
                } catch (OutOfMemoryError e) {
                    f.completeExceptionally(new MemoryBudgetExceededException("the heap ran out while replaying "
                            + log + " (" + Runtime.getRuntime().maxMemory() + " bytes max heap); raise -Xmx or lower"
                            + " LatticeConfig memoryBudgetBytes so that the open is refused before replay"));
                } catch (Throwable e) {
                    f.completeExceptionally(e);
                } finally {
                    permits.release();
                }
            });
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
        ctx.atomics.resolveAtOpen(t);
        for (LogPipeline lp : t.pipelines) {
            lp.opened();
        }
        long max = 0;
        for (LogPipeline lp : t.pipelines) {
            max = Math.max(max, lp.state.maxVersion);
        }
        t.clock.set(max);
        long elapsed = System.nanoTime() - t0;
        ctx.stats.replayNanos.add(elapsed);
        ctx.meters.timer("lattice.replay.duration", "opening a tree: claim, reconcile, checkpoint and log replay",
                ctx.meters.tags("tree", name, "provider", replayProviderTag(t))).record(elapsed, TimeUnit.NANOSECONDS);
        return t;
    }

    /** The provider key of the tree's logs for the replay timer: the one key, or "mixed" when they differ. */
    private static String replayProviderTag(TreeImpl t) {
        String key = null;
        for (ProviderHandle h : t.handles) {
            if (key == null) {
                key = h.key();
            } else if (!key.equals(h.key())) {
                return "mixed";
            }
        }
        return key == null ? "none" : key;
    }

    private LogPipeline replay(LogId log, java.util.function.Function<String, Txn> txnOf,
                               CompletableFuture<LogPipeline> outcome, java.util.concurrent.atomic.AtomicLong reserved) {
        ProviderHandle handle = handles[log.partition()];
        WalStorageProvider p = handle.provider();
        ReplayCalls calls = new ReplayCalls(ctx.watchdog, log, outcome);
        Fence fence = calls.call("claim", () -> p.claim(log));
        calls.call("reconcile", () -> p.reconcile(log, fence));
        PartitionState ps = new PartitionState(log, ctx.memoryUsed, ctx.atomics, txnOf);
        try {
            long lastCheckpoint = -1;
            Optional<CheckpointInfo> cp = calls.call("checkpoint latest", () -> p.checkpoints().latest(log));
            if (cp.isPresent()) {
                CheckpointInfo info = cp.get();
                reserved.addAndGet(info.sizeBytes()); // partitions replay in parallel: reserve before checking
                try {
                    checkReplayBudget(log, reserved.get());
                } catch (MemoryBudgetExceededException e) {
                    reserved.addAndGet(-info.sizeBytes());
                    throw e;
                }
                int format = info.formatVersion();
                if (format != PartitionState.SNAPSHOT_FORMAT && format != PartitionState.SNAPSHOT_FORMAT_V1
                        && format != ManifestCodec.FORMAT) {
                    throw new CorruptLogException(log, info.throughOffset(), "checkpoint format " + format
                            + " is not supported (expected " + PartitionState.SNAPSHOT_FORMAT_V1 + ", "
                            + PartitionState.SNAPSHOT_FORMAT + " or the manifest format " + ManifestCodec.FORMAT + ")");
                }
                try (InputStream in = calls.call("checkpoint open", () -> p.checkpoints().open(log, info))) {
                    if (format == ManifestCodec.FORMAT) {
                        loadManifest(ps, p, log, info, in);
                    } else {
                        ps.load(info.throughOffset(), in, ctx.config.memoryBudgetBytes);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("closing checkpoint stream of " + log, e);
                } finally {
                    reserved.addAndGet(-info.sizeBytes()); // loaded (now counted as used) or given up
                }
                ctx.stats.replayCheckpointBytes.add(info.sizeBytes());
                lastCheckpoint = info.throughOffset();
            }
            LogState st = calls.call("state", () -> p.state(log));
            if (st.trimWatermark() > ps.appliedOffset) {
                throw new CorruptLogException(log, ps.appliedOffset + 1, "the log is trimmed through "
                        + st.trimWatermark() + " but the latest checkpoint covers only through " + ps.appliedOffset);
            }
            Counter replayed = ctx.meters.counter("lattice.replay.entries", "log entries replayed at open", "entries",
                    ctx.meters.tags("tree", name, "partition", Integer.toString(log.partition()),
                            "provider", handle.key()));
            long from = ps.appliedOffset;
            while (from < st.committedTail()) {
                long fromExclusive = from;
                ReadPage page = calls.call("read", () -> p.read(log, fromExclusive, ctx.config.replayPageEntries,
                        ctx.config.replayPageBytes));
                ctx.stats.replayReadCalls.increment();
                if (outcome.isDone()) {
                    break; // the open gave up on this log
                }
                checkReplayBudget(log, 0); // the tail replayed so far must fit too
                if (page.isEmpty()) {
                    break;
                }
                for (LogEntry e : page.entries()) {
                    if (e.offset() != from + 1) {
                        throw new CorruptLogException(log, from + 1, "missing entry: the log jumps from " + from + " to "
                                + e.offset());
                    }
                    WalRecord.Decoded d = WalRecord.decode(log, e.offset(), e.payload());
                    if (d.kind() == WalRecord.KIND_CATALOG || d.kind() < WalRecord.KIND_MUTATIONS
                            || d.kind() > WalRecord.KIND_DECISION) {
                        throw new CorruptLogException(log, e.offset(), "not a tree entry (kind " + d.kind() + ")");
                    }
                    ps.apply(d.kind(), d.mutations(), d.version(), null);
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
        } catch (RuntimeException | Error e) {
            ps.clear(); // give back what a half-done replay took from the memory budget
            throw e;
        }
    }

    /** Opens a manifest: its runs become the layers below the memtable (their indexes load on first use). */
    private void loadManifest(PartitionState ps, WalStorageProvider p, LogId log, CheckpointInfo info, InputStream in)
            throws IOException {
        dev.lattice.spi.ProviderDescriptor d = handles[log.partition()].descriptor();
        if (!d.has(dev.lattice.spi.ProviderFeature.RUNS)) {
            throw new CorruptLogException(log, info.throughOffset(), "the latest checkpoint is a manifest of runs, but "
                    + "provider '" + d.name() + "' has no run store");
        }
        Manifest m = ManifestCodec.decode(log, info.throughOffset(), in.readAllBytes());
        List<RunHandle> runs = new ArrayList<>(m.runs().size());
        for (Manifest.RunRef r : m.runs()) {
            runs.add(new RunHandle(r, p.runs(), log, ctx.blockCache));
        }
        ps.loadManifest(m, runs);
    }

    /**
     * Refuses to replay data that cannot fit the memory budget, before reading it: checkpoints of {@code bytes}
     * serialised bytes (this one and those other partitions are loading) need at least as many live-data bytes.
     */
    private void checkReplayBudget(LogId log, long bytes) {
        long used = ctx.memoryUsed.get();
        long budget = ctx.config.memoryBudgetBytes;
        if (used + bytes > budget) {
            throw new MemoryBudgetExceededException("opening tree '" + name + "': log " + log
                    + (bytes > 0 ? " (with the partitions loading beside it) needs at least " + bytes
                    + " more bytes for its checkpoints, but " : ": ") + used
                    + " bytes of the memory budget of " + budget + " bytes are in use (LatticeConfig"
                    + " memoryBudgetBytes, default a quarter of the max heap); raise the budget and the heap, or open fewer"
                    + " trees");
        }
    }

    long nextVersion() {
        long now = ctx.config.clock.millis() << 12;
        return clock.updateAndGet(v -> Math.max(v + 1, now));
    }

    /** Moves the clock to at least {@code version} (a cross-tree atomic write took it from another tree). */
    void advanceClock(long version) {
        clock.accumulateAndGet(version, Math::max);
    }

    EngineContext context() {
        return ctx;
    }

    Lattice lattice() {
        return lattice;
    }

    /** @return the pipeline of a key's partition */
    LogPipeline pipelineOf(String key) {
        return pipeline(key);
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
     * The partition of a key in a tree created with the latest partition hash ({@link PartitionHash#LATEST}), for
     * tests; a tree routes with its own stored hash ({@link #partitionOf(String)}).
     */
    static int partitionOf(String key, int partitions) {
        return PartitionHash.LATEST.partition(key, partitions);
    }

    /** The partition of a key in this tree, by the tree's stored partition hash. */
    int partitionOf(String key) {
        return hash.partition(key, pipelines.length);
    }

    private LogPipeline pipeline(String key) {
        return pipelines[partitionOf(key)];
    }

    /** Validates a key for writing; returns its UTF-8 bytes. */
    byte[] keyBytes(String key) {
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

    /** Validates a value for writing; returns a private copy. */
    byte[] value(byte[] value) {
        Objects.requireNonNull(value, "value");
        if (value.length > maxValueBytes) {
            throw new IllegalArgumentException("value is " + value.length + " bytes, more than the limit of "
                    + maxValueBytes + " bytes (derived from provider '" + smallest.key() + "' max entry size "
                    + smallest.descriptor().limits().maxEntryBytes() + " bytes)");
        }
        return value.clone();
    }

    /** Validates a value written with a time-to-live (the entry carries 8 more bytes); returns a private copy. */
    byte[] valueWithTtl(byte[] value) {
        Objects.requireNonNull(value, "value");
        if (value.length > maxValueBytes - Expiry.TTL_BYTES) {
            throw new IllegalArgumentException("value is " + value.length + " bytes, more than the limit of "
                    + (maxValueBytes - Expiry.TTL_BYTES) + " bytes for a value with a ttl (maxValueBytes "
                    + maxValueBytes + " less the 8-byte expiry)");
        }
        return value.clone();
    }

    void checkOpen() {
        if (lattice.isClosed()) {
            throw new LatticeShuttingDownException("lattice is closed; tree '" + name + "' is no longer readable");
        }
        OwnershipLostException l = ownershipLost();
        if (l != null) {
            throw l;
        }
    }

    /** @return a fresh exception for a caller when another process claimed a log of this tree, else null */
    OwnershipLostException ownershipLost() {
        OwnershipLostException l = lost;
        return l == null ? null : new OwnershipLostException(name, l.log(), l.epoch(), l.getCause());
    }

    /** A log of this tree was claimed by another writer: stop serving the whole tree. */
    void lostOwnership(LogId log, dev.lattice.spi.FencedException e) {
        if (lost == null) {
            lost = new OwnershipLostException(name, log, e.currentEpoch(), e);
            ctx.meters.counter("lattice.ownership.lost",
                    "trees this process stopped serving because another process claimed one of their logs", "trees",
                    ctx.meters.tags("tree", name)).increment();
        }
        saturationChanged();
    }

    private void checkBudget(String key, byte[] value) {
        checkBudget(key, value, true);
    }

    /**
     * @param mayWait false for an asynchronous write: when the memtables hold the whole budget it does not wait for
     *     flushes but fails at once with {@link LatticeSaturatedException} (the flushes are still asked for)
     */
    private void checkBudget(String key, byte[] value, boolean mayWait) {
        checkBudget(pipeline(key), PartitionState.estimate(key, value), mayWait);
    }

    /** The budget check for {@code add} estimated bytes written through {@code lp} (see above). */
    private void checkBudget(LogPipeline lp, long add, boolean mayWait) {
        long used = ctx.memoryUsed.get();
        long budget = ctx.config.memoryBudgetBytes;
        if (used + add > budget * 3 / 4 || used + add > budget) {
            if (lp.hasRuns()) {
                if (mayWait) {
                    awaitFlush(lp, add, budget);
                } else {
                    ctx.requestFlushes(lp);
                    if (ctx.memoryUsed.get() + add > budget) {
                        throw new LatticeSaturatedException("asynchronous write to '" + name + "' refused at once:"
                                + " the memtables hold " + ctx.memoryUsed.get() + " bytes of the " + budget
                                + "-byte memory budget and flushes are behind (a blocking write waits up to "
                                + ctx.config.admissionTimeout.toMillis() + " ms for them)", null);
                    }
                }
                return;
            }
        }
        if (used + add > budget) {
            throw new MemoryBudgetExceededException("memory budget of " + ctx.config.memoryBudgetBytes
                    + " bytes would be exceeded by " + add + " bytes (live data estimate " + used + " bytes); write to '"
                    + name + "' refused");
        }
    }

    /**
     * The memtables are using most of the budget: asks this log (and the largest memtables) to flush; when the budget
     * is spent, waits for flushes up to the admission timeout, then fails with the saturation signal.
     */
    private void awaitFlush(LogPipeline lp, long add, long budget) {
        ctx.requestFlushes(lp);
        if (ctx.memoryUsed.get() + add <= budget) {
            return;
        }
        long deadline = System.nanoTime() + ctx.config.admissionTimeout.toNanos();
        long t0 = System.nanoTime();
        while (ctx.memoryUsed.get() + add > budget) {
            if (System.nanoTime() > deadline) {
                ctx.stallNanos.add(System.nanoTime() - t0);
                throw new LatticeSaturatedException("write to '" + name + "' waited "
                        + ctx.config.admissionTimeout.toMillis() + " ms for memtable flushes (flush behind): the "
                        + "memtables hold " + ctx.memoryUsed.get() + " bytes of the " + budget + "-byte memory budget "
                        + "(LatticeConfig memoryBudgetBytes, memtableBytes, admissionTimeout)", null);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            checkOpen();
        }
        ctx.stallNanos.add(System.nanoTime() - t0);
    }

    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> submit(WalRecord.Mutation m) {
        PendingWrite w = new PendingWrite(m);
        pipeline(m.key()).submitAsync(w);
        return (CompletableFuture<T>) (CompletableFuture<?>) w.future;
    }

    /** A blocking write: the caller's thread runs the log's work while the log is idle (no hand-off). */
    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> submitAndLead(WalRecord.Mutation m) {
        PendingWrite w = new PendingWrite(m);
        pipeline(m.key()).submitAndLead(w);
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
        return Optional.ofNullable(pipeline(key).state.latest(key));
    }

    @Override
    public boolean exists(String key) {
        return getVersioned(key).isPresent();
    }

    @Override
    public Map<String, byte[]> getAll(Collection<String> keys) {
        Objects.requireNonNull(keys, "keys");
        checkOpen();
        Visibility vis = ctx.atomics.visibility;
        long s = vis.openSnapshot();
        try {
            Map<String, byte[]> out = new TreeMap<>();
            for (String k : keys) {
                Objects.requireNonNull(k, "key");
                if (k.isEmpty() || k.length() > maxKeyBytes) {
                    throw new IllegalArgumentException("key must be 1.." + maxKeyBytes + " UTF-8 bytes, got "
                            + k.length() + " characters");
                }
                Versioned v = pipeline(k).state.at(k, s);
                if (v != null) {
                    out.put(k, v.value());
                }
            }
            return out;
        } finally {
            vis.closeSnapshot(s);
        }
    }

    @Override
    public long put(String key, byte[] value) {
        byte[] kb = keyBytes(key);
        byte[] v = value(value);
        checkBudget(key, v);
        return await(submitAndLead(WalRecord.Mutation.put(key, kb, v)));
    }

    @Override
    public long put(String key, byte[] value, java.time.Duration ttl) {
        byte[] kb = keyBytes(key);
        byte[] v = valueWithTtl(value);
        long expiresAt = Expiry.expiresAt(ctx.config.clock, ttl);
        checkBudget(key, v);
        return await(submitAndLead(WalRecord.Mutation.putTtl(key, kb, v, expiresAt)));
    }

    @Override
    public CompletableFuture<Long> putAsync(String key, byte[] value, java.time.Duration ttl) {
        byte[] kb = keyBytes(key);
        byte[] v = valueWithTtl(value);
        long expiresAt = Expiry.expiresAt(ctx.config.clock, ttl);
        try {
            checkBudget(key, v, false);
        } catch (LatticeSaturatedException e) {
            return CompletableFuture.failedFuture(e);
        }
        return submit(WalRecord.Mutation.putTtl(key, kb, v, expiresAt));
    }

    @Override
    public long deleteRange(String fromInclusive, String toExclusive) {
        checkOpen();
        return atomic().deleteRange(fromInclusive, toExclusive).commit().version();
    }

    @Override
    public CompletableFuture<Long> deleteRangeAsync(String fromInclusive, String toExclusive) {
        checkOpen();
        return atomic().deleteRange(fromInclusive, toExclusive).commitAsync().thenApply(AtomicResult::version);
    }

    @Override
    public boolean putIfAbsent(String key, byte[] value) {
        return putIfVersion(key, value, 0);
    }

    @Override
    public boolean putIfVersion(String key, byte[] value, long expectedVersion) {
        byte[] kb = keyBytes(key);
        byte[] v = value(value);
        if (expectedVersion < 0) {
            throw new IllegalArgumentException("expectedVersion must be >= 0 (0 = absent), got " + expectedVersion);
        }
        checkBudget(key, v);
        return await(submitAndLead(WalRecord.Mutation.putIfVersion(key, kb, v, expectedVersion)));
    }

    @Override
    public boolean delete(String key) {
        byte[] kb = keyBytes(key);
        return await(submitAndLead(WalRecord.Mutation.delete(key, kb)));
    }

    @Override
    public void putAll(Map<String, byte[]> entries) {
        putAll(mutationsOf(entries, true, 0));
    }

    @Override
    public void putAll(Map<String, byte[]> entries, java.time.Duration ttl) {
        putAll(mutationsOf(entries, true, Expiry.expiresAt(ctx.config.clock, ttl)));
    }

    private void putAll(List<WalRecord.Mutation> ms) {
        if (ms.isEmpty()) {
            return;
        }
        List<List<PendingWrite>> perLog = new ArrayList<>(java.util.Collections.nCopies(pipelines.length, null));
        CompletableFuture<?>[] fs = new CompletableFuture<?>[ms.size()];
        for (int i = 0; i < fs.length; i++) {
            WalRecord.Mutation m = ms.get(i);
            PendingWrite w = new PendingWrite(m);
            int p = partitionOf(m.key(), pipelines.length);
            if (perLog.get(p) == null) {
                perLog.set(p, new ArrayList<>());
            }
            perLog.get(p).add(w);
            fs[i] = w.future;
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(fs);
        LogPipeline.lead(all, me -> {
            for (int p = 0; p < perLog.size(); p++) {
                if (perLog.get(p) != null) {
                    pipelines[p].submitAll(perLog.get(p), me);
                }
            }
        });
        await(all);
    }

    /**
     * Validates a putAll's entries and checks the memory budget for all of them (a blocking putAll waits for
     * flushes like a put; an asynchronous one fails at once with {@link LatticeSaturatedException}).
     */
    private List<WalRecord.Mutation> mutationsOf(Map<String, byte[]> entries, boolean mayWait, long expiresAt) {
        Objects.requireNonNull(entries, "entries");
        List<WalRecord.Mutation> ms = new ArrayList<>(entries.size());
        long add = 0;
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            byte[] kb = keyBytes(e.getKey());
            byte[] v = expiresAt == 0 ? value(e.getValue()) : valueWithTtl(e.getValue());
            add += PartitionState.estimate(e.getKey(), v);
            ms.add(expiresAt == 0 ? WalRecord.Mutation.put(e.getKey(), kb, v)
                    : WalRecord.Mutation.putTtl(e.getKey(), kb, v, expiresAt));
        }
        if (!ms.isEmpty()) {
            checkBudget(pipeline(ms.get(0).key()), add, mayWait);
        }
        return ms;
    }

    @Override
    public CompletableFuture<Long> putAsync(String key, byte[] value) {
        byte[] kb = keyBytes(key);
        byte[] v = value(value);
        try {
            checkBudget(key, v, false);
        } catch (LatticeSaturatedException e) {
            return CompletableFuture.failedFuture(e);
        }
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
        try {
            checkBudget(key, v, false);
        } catch (LatticeSaturatedException e) {
            return CompletableFuture.failedFuture(e);
        }
        return submit(WalRecord.Mutation.putIfVersion(key, kb, v, expectedVersion));
    }

    @Override
    public CompletableFuture<Boolean> deleteAsync(String key) {
        byte[] kb = keyBytes(key);
        return submit(WalRecord.Mutation.delete(key, kb));
    }

    @Override
    public CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries) {
        return putAllAsync(entries, 0);
    }

    @Override
    public CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries, java.time.Duration ttl) {
        return putAllAsync(entries, Expiry.expiresAt(ctx.config.clock, ttl));
    }

    private CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries, long expiresAt) {
        List<WalRecord.Mutation> ms;
        try {
            ms = mutationsOf(entries, false, expiresAt);
        } catch (LatticeSaturatedException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<?>[] fs = new CompletableFuture<?>[ms.size()];
        for (int i = 0; i < fs.length; i++) {
            fs[i] = submit(ms.get(i));
        }
        return CompletableFuture.allOf(fs);
    }

    @Override
    public AtomicWrite atomic() {
        checkOpen();
        return ctx.atomics.begin(this);
    }

    /** Flushes every partition's memtable into runs and waits (tests and tools); false on timeout. */
    boolean flushNow(long timeoutMillis) {
        boolean all = true;
        for (LogPipeline p : pipelines) {
            all &= p.flushAndWait(timeoutMillis);
        }
        return all;
    }

    @Override
    public long count() {
        checkOpen();
        long n = 0;
        for (LogPipeline p : pipelines) {
            n += p.state.count();
        }
        return n;
    }

    @Override
    public List<HealthIssue> healthIssues() {
        List<HealthIssue> out = new ArrayList<>();
        for (LogPipeline p : pipelines) {
            if (p != null) {
                out.addAll(p.healthIssues());
            }
        }
        return out;
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
        // the snapshot first: a skip-list iterator reads its first value when it is created
        Visibility vis = ctx.atomics.visibility;
        long snapshot = vis.openSnapshot();
        List<java.util.Iterator<Map.Entry<String, Object>>> its = new ArrayList<>(pipelines.length);
        for (LogPipeline p : pipelines) {
            its.add(p.state.scan(fromInclusive, toExclusive, reverse, snapshot));
        }
        return new MergeCursor(its, reverse, vis, snapshot);
    }

    @Override
    public dev.lattice.engine.feed.ChangeCursor changes(dev.lattice.engine.feed.ChangePosition from) {
        checkOpen();
        return ChangeFeeds.open(ctx, placement, this, from, null);
    }

    @Override
    public dev.lattice.engine.feed.ChangeCursor changes(String consumer, dev.lattice.engine.feed.ChangePosition initial) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(initial, "initial");
        checkOpen();
        return ChangeFeeds.open(ctx, placement, this, initial, consumer);
    }

    @Override
    public dev.lattice.engine.feed.ChangeSnapshot snapshotWithPosition(String fromInclusive, String toExclusive) {
        checkOpen();
        PartitionState[] states = new PartitionState[pipelines.length];
        dev.lattice.spi.WalStorageProvider[] providers = new dev.lattice.spi.WalStorageProvider[pipelines.length];
        for (int p = 0; p < states.length; p++) {
            states[p] = pipelines[p].state;
            providers[p] = pipelines[p].handle().provider();
        }
        return ChangeFeeds.snapshot(ctx, name, states, providers, () -> scan(fromInclusive, toExclusive, false));
    }
}
