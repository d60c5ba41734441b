package dev.lattice.engine;

import dev.lattice.spi.LogId;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@link Tree} implementation: routes keys to partitions, validates, submits writes, serves reads from memory.
 * A partial tree ({@link Lattice#hostTree}) hosts only some partitions ({@link PartialTree}).
 */
final class TreeImpl implements PartialTree {

    private final EngineContext ctx;
    private final Lattice lattice;
    private final String name;
    private final LogPipeline[] pipelines;
    /** The hosted pipelines, compact, for loops over the tree; the whole array for a tree that is not partial. */
    private volatile LogPipeline[] hosted;
    private final boolean partial;
    private final ClusterAtomics cluster;
    private final AtomicLong clock = new AtomicLong();
    private final int maxKeyBytes;
    private final int maxValueBytes;
    private volatile SaturationState saturation = SaturationState.HEALTHY;
    private volatile OwnershipLostException lost;

    private volatile Placement placement;
    private final PartitionHash hash;
    private final ProviderHandle[] handles;
    private final ProviderHandle smallest;

    private TreeImpl(EngineContext ctx, Lattice lattice, Placement placement, boolean partial) {
        this.ctx = ctx;
        this.partial = partial;
        this.cluster = new ClusterAtomics(ctx);
        this.lattice = lattice;
        this.name = placement.tree();
        this.placement = placement;
        this.hash = lattice == null ? PartitionHash.LATEST : lattice.partitionHash(name);
        int partitions = placement.keys().size();
        this.pipelines = new LogPipeline[partitions];
        this.hosted = new LogPipeline[0];
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
        TreeImpl t = new TreeImpl(ctx, lattice, placement, false);
        int partitions = placement.keys().size();
        int[] all = new int[partitions];
        for (int p = 0; p < partitions; p++) {
            all[p] = p;
        }
        LogPipeline[] opened = t.replayAll(all);
        System.arraycopy(opened, 0, t.pipelines, 0, partitions);
        t.hosted = t.pipelines;
        t.finishOpen(opened);
        return t;
    }

    /** A partial tree with no partition hosted yet ({@link PartialTree#host} adds them). */
    static TreeImpl openPartial(EngineContext ctx, Lattice lattice, Placement placement) {
        TreeImpl t = new TreeImpl(ctx, lattice, placement, true);
        t.hosted = new LogPipeline[0];
        return t;
    }

    /** Resolves what the replayed logs left prepared, starts their maintenance, moves the clock past them. */
    private void finishOpen(LogPipeline[] opened) {
        try {
            ctx.atomics.resolveAtOpen(this, opened);
        } catch (RuntimeException e) {
            for (LogPipeline lp : opened) {
                lp.beginClose();
                lp.state.clear();
            }
            throw e;
        }
        for (LogPipeline lp : opened) {
            lp.opened();
            advanceClock(lp.state.maxVersion);
        }
    }

    /** Replays the given partitions' logs ({@link TreeReplay}); on any failure nothing stays loaded. */
    private LogPipeline[] replayAll(int[] which) {
        return new TreeReplay(ctx, this, handles).replayAll(which);
    }

    long nextVersion() {
        long now = ctx.config.clock.millis() << 12;
        while (true) { // updateAndGet without a capturing lambda per write
            long v = clock.get();
            long next = Math.max(v + 1, now);
            if (clock.compareAndSet(v, next)) {
                return next;
            }
        }
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
        for (LogPipeline p : hosted) {
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

    /** @return the hosted pipelines (all of them unless the tree is partial), not to be modified */
    LogPipeline[] pipelines() {
        return hosted;
    }

    /**
     * @param what the operation, for the error
     * @return every partition's pipeline, indexed by partition
     * @throws PartitionNotHostedException if the tree is partial and a partition is not hosted here
     */
    LogPipeline[] everyPipeline(String what) {
        if (partial) {
            LogPipeline[] h = hosted;
            if (h.length != pipelines.length) {
                throw new PartitionNotHostedException(name, -1, what + " needs every partition of tree '" + name
                        + "', but this process hosts " + h.length + " of " + pipelines.length);
            }
        }
        return pipelines;
    }

    boolean isPartial() {
        return partial;
    }

    Placement placement() {
        return placement;
    }

    /** After a move flipped the placement (the pipelines already switched; moves need every partition). */
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
    @Override
    public int partitionOf(String key) {
        return hash.partition(key, pipelines.length);
    }

    private LogPipeline pipeline(String key) {
        return hostedPipeline(partitionOf(key));
    }

    /**
     * @return the pipeline of a partition
     * @throws PartitionNotHostedException if it is not hosted here
     * @throws OwnershipLostException if the tree is partial and another process claimed the partition's log
     */
    private LogPipeline hostedPipeline(int p) {
        LogPipeline lp = pipelines[p];
        if (lp == null) {
            throw new PartitionNotHostedException(name, p, "partition " + p + " of tree '" + name
                    + "' is not hosted by this process");
        }
        if (partial) {
            dev.lattice.spi.FencedException f = lp.fencedBy();
            if (f != null) {
                throw new OwnershipLostException(name, lp.log, f.currentEpoch(), f);
            }
        }
        return lp;
    }

    /**
     * The pipeline of a key's partition for a write. In a partial tree a key held by an atomic write whose outcome
     * is not known here is waited for (bounded) first: the write would otherwise wait for the key lock unboundedly.
     */
    private LogPipeline writePipeline(String key) {
        LogPipeline lp = pipeline(key);
        if (partial) {
            cluster.awaitResolved(lp, List.of(key), null, null, false);
        }
        return lp;
    }

    /** The pipeline of a key's partition for a read: proves the fence first when the read lease ran out. */
    private LogPipeline readPipeline(String key) {
        LogPipeline lp = pipeline(key);
        lp.proveFenceForRead();
        return lp;
    }

    /** Validates a key for writing; returns its UTF-8 bytes. */
    byte[] keyBytes(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
        // the common key: its UTF-8 bytes are its chars, encoded straight into the entry (no array of its own)
        if (dev.lattice.engine.lsm.RunFormat.isAscii(key)) {
            if (key.length() > maxKeyBytes) {
                throw KeyLimit.tooLong(key.length(), maxKeyBytes);
            }
            return WalRecord.Mutation.ASCII_KEY;
        }
        byte[] kb = key.getBytes(StandardCharsets.UTF_8);
        if (kb.length > maxKeyBytes) {
            throw KeyLimit.tooLong(kb.length, maxKeyBytes);
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
        if (partial) {
            return; // a partial tree loses single partitions (hostedPipeline), never the whole tree
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
        if (partial) {
            ctx.meters.counter("lattice.partition.ownership.lost",
                    "partitions of partial trees this process stopped serving because another process claimed them",
                    "partitions", ctx.meters.tags("tree", name)).increment();
        } else if (lost == null) {
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
                    ctx.requestFlushes(lp, used + add > budget);
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
     * The memtables are using most of the budget: asks the largest memtables to flush
     * ({@link EngineContext#requestFlushes}); when the budget is spent, waits for flushes up to the admission timeout
     * (asking again while it waits), then fails with the saturation signal.
     */
    private void awaitFlush(LogPipeline lp, long add, long budget) {
        ctx.requestFlushes(lp, ctx.memoryUsed.get() + add > budget);
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
            ctx.requestFlushes(lp, false);
        }
        ctx.stallNanos.add(System.nanoTime() - t0);
    }

    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> submit(WalRecord.Mutation m) {
        PendingWrite w = new PendingWrite(m);
        writePipeline(m.key()).submitAsync(w);
        return (CompletableFuture<T>) (CompletableFuture<?>) w.future;
    }

    /** A blocking write: the caller's thread runs the log's work while the log is idle (no hand-off). */
    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> submitAndLead(WalRecord.Mutation m) {
        PendingWrite w = new PendingWrite(m);
        writePipeline(m.key()).submitAndLead(w);
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
        KeyLimit.check(key, maxKeyBytes);
        checkOpen();
        LogPipeline lp = readPipeline(key);
        if (partial) {
            cluster.awaitResolved(lp, List.of(key), null, null, false);
        }
        return Optional.ofNullable(lp.state.latest(key));
    }

    @Override
    public Optional<Versioned> getVersionedIfInMemory(String key) {
        KeyLimit.check(key, maxKeyBytes);
        checkOpen();
        LogPipeline lp = pipeline(key);
        if (!lp.fenceProvenForRead() || (partial && !lp.state.unresolved.isEmpty())) {
            return null;
        }
        return lp.state.latestInMemtable(key);
    }

    @Override
    public boolean exists(String key) {
        return getVersioned(key).isPresent();
    }

    @Override
    public Map<String, byte[]> getAll(Collection<String> keys) {
        Map<String, Versioned> found = getAllVersioned(keys);
        Map<String, byte[]> out = new TreeMap<>();
        for (Map.Entry<String, Versioned> e : found.entrySet()) {
            out.put(e.getKey(), e.getValue().value());
        }
        return out;
    }

    @Override
    public Map<String, Versioned> getAllVersioned(Collection<String> keys) {
        Objects.requireNonNull(keys, "keys");
        checkOpen();
        for (String k : keys) {
            KeyLimit.check(k, maxKeyBytes);
            if (partial) {
                // before the snapshot: an atomic write decided before this read began is resolved here, and published
                // (visible) only at its resolve; a snapshot opened earlier would leave it out
                cluster.awaitResolved(readPipeline(k), List.of(k), null, null, false);
            }
        }
        Visibility vis = ctx.atomics.visibility;
        long s = vis.openSnapshot();
        try {
            Map<String, Versioned> out = new TreeMap<>();
            for (String k : keys) {
                LogPipeline lp = readPipeline(k);
                Versioned v = lp.state.at(k, s);
                if (v != null) {
                    out.put(k, v);
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
        readPipeline(key); // a failed condition is answered from the state, like a read (read lease)
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
        LogPipeline[] targets = new LogPipeline[pipelines.length];
        List<List<PendingWrite>> perLog = packPerLog(ms, targets);
        List<CompletableFuture<?>> fs = new ArrayList<>();
        for (List<PendingWrite> ws : perLog) {
            if (ws != null) {
                for (PendingWrite w : ws) {
                    fs.add(w.future);
                }
            }
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(fs.toArray(new CompletableFuture<?>[0]));
        LogPipeline.lead(all, me -> {
            for (int p = 0; p < perLog.size(); p++) {
                if (perLog.get(p) != null) {
                    targets[p].submitAll(perLog.get(p), me);
                }
            }
        });
        await(all);
    }

    /**
     * A putAll's entries per partition ({@link PutAllEntries}); fills {@code targets} with their pipelines. In a
     * partial tree first waits while an unresolved atomic write holds one of the keys.
     */
    private List<List<PendingWrite>> packPerLog(List<WalRecord.Mutation> ms, LogPipeline[] targets) {
        if (partial) {
            for (WalRecord.Mutation m : ms) {
                cluster.awaitResolved(pipeline(m.key()), List.of(m.key()), null, null, false);
            }
        }
        return PutAllEntries.pack(ms, pipelines.length, this::partitionOf, p -> {
            LogPipeline lp = hostedPipeline(p);
            targets[p] = lp;
            return (int) Math.min(lp.handle().descriptor().limits().maxEntryBytes(), ctx.config.maxBatchBytes);
        });
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
            readPipeline(key); // a failed condition is answered from the state, like a read (read lease)
        } catch (LatticeSaturatedException | OwnershipLostException | dev.lattice.spi.WalStorageException e) {
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
        if (ms.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        LogPipeline[] targets = new LogPipeline[pipelines.length];
        List<List<PendingWrite>> perLog = packPerLog(ms, targets);
        List<CompletableFuture<?>> fs = new ArrayList<>();
        for (int p = 0; p < perLog.size(); p++) {
            if (perLog.get(p) != null) {
                for (PendingWrite w : perLog.get(p)) {
                    targets[p].submitAsync(w);
                    fs.add(w.future);
                }
            }
        }
        return CompletableFuture.allOf(fs.toArray(new CompletableFuture<?>[0]));
    }

    @Override
    public AtomicWrite atomic() {
        checkOpen();
        return ctx.atomics.begin(this);
    }

    /** Flushes every partition's memtable into runs and waits (tests and tools); false on timeout. */
    boolean flushNow(long timeoutMillis) {
        boolean all = true;
        for (LogPipeline p : hosted) {
            all &= p.flushAndWait(timeoutMillis);
        }
        return all;
    }

    @Override
    public long count() {
        checkOpen();
        long n = 0;
        for (LogPipeline p : hosted) {
            if (partial) {
                cluster.awaitResolved(p, null, null, null, true);
            }
            n += p.state.count();
        }
        return n;
    }

    @Override
    public List<HealthIssue> healthIssues() {
        List<HealthIssue> out = new ArrayList<>();
        for (LogPipeline p : hosted) {
            if (p != null) {
                out.addAll(p.healthIssues());
            }
        }
        return out;
    }

    @Override
    public SaturationState saturation() {
        SaturationState worst = SaturationState.HEALTHY;
        for (LogPipeline p : hosted) {
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
        LogPipeline[] h = hosted;
        for (LogPipeline p : h) {
            p.proveFenceForRead();
            if (partial) {
                // before the snapshot, as in getAllVersioned: a write decided before this scan began is visible
                // only from its resolve on
                cluster.awaitResolved(p, null, fromInclusive, toExclusive, false);
            }
        }
        // the snapshot before the iterators: a skip-list iterator reads its first value when it is created
        Visibility vis = ctx.atomics.visibility;
        long snapshot = vis.openSnapshot();
        List<java.util.Iterator<Map.Entry<String, Object>>> its = new ArrayList<>(h.length);
        try {
            for (LogPipeline p : h) {
                its.add(p.state.scan(fromInclusive, toExclusive, reverse, snapshot));
            }
        } catch (RuntimeException e) {
            vis.closeSnapshot(snapshot); // no cursor takes it over
            throw e;
        }
        return new MergeCursor(its, reverse, vis, snapshot);
    }

    @Override
    public dev.lattice.engine.feed.ChangeCursor changes(dev.lattice.engine.feed.ChangePosition from) {
        checkOpen();
        everyPipeline("a change feed");
        return ChangeFeeds.open(ctx, placement, this, from, null);
    }

    @Override
    public dev.lattice.engine.feed.ChangeCursor changes(String consumer, dev.lattice.engine.feed.ChangePosition initial) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(initial, "initial");
        checkOpen();
        everyPipeline("a change feed");
        return ChangeFeeds.open(ctx, placement, this, initial, consumer);
    }

    @Override
    public dev.lattice.engine.feed.ChangeSnapshot snapshotWithPosition(String fromInclusive, String toExclusive) {
        checkOpen();
        LogPipeline[] all = everyPipeline("a snapshot with a change-feed position");
        PartitionState[] states = new PartitionState[all.length];
        dev.lattice.spi.WalStorageProvider[] providers = new dev.lattice.spi.WalStorageProvider[all.length];
        for (int p = 0; p < states.length; p++) {
            states[p] = all[p].state;
            providers[p] = all[p].handle().provider();
        }
        return ChangeFeeds.snapshot(ctx, name, states, providers, () -> scan(fromInclusive, toExclusive, false));
    }

    // ------------------------------------------------------------------ PartialTree

    @Override
    public Set<Integer> hostedPartitions() {
        Set<Integer> out = new java.util.TreeSet<>();
        for (LogPipeline lp : hosted) {
            out.add(lp.log.partition());
        }
        return java.util.Collections.unmodifiableSet(out);
    }

    @Override
    public void host(int partition) {
        java.util.Objects.checkIndex(partition, pipelines.length);
        requirePartial("host");
        synchronized (hosting) {
            lattice.checkOpenForHosting();
            if (pipelines[partition] != null) {
                return;
            }
            long claimed = System.nanoTime(); // the claim comes first in the replay
            LogPipeline[] opened = replayAll(new int[] {partition});
            finishOpen(opened);
            awaitEarlierLeases(claimed, opened);
            pipelines[partition] = opened[0];
            rebuildHosted();
        }
    }

    @Override
    public boolean release(int partition, java.time.Duration timeout) {
        java.util.Objects.checkIndex(partition, pipelines.length);
        Objects.requireNonNull(timeout, "timeout");
        requirePartial("release");
        LogPipeline lp;
        synchronized (hosting) {
            lp = pipelines[partition];
            if (lp == null) {
                return true;
            }
            pipelines[partition] = null; // new operations throw PartitionNotHostedException from now on
            rebuildHosted();
        }
        lp.beginClose();
        boolean drained = lp.drainAndCheckpoint(System.nanoTime() + timeout.toNanos());
        ctx.atomics.forget(lp.log);
        lp.state.releaseBudget(); // readers that took the pipeline just before still read it
        return drained;
    }

    @Override
    public long count(int partition) {
        java.util.Objects.checkIndex(partition, pipelines.length);
        LogPipeline lp = hostedPipeline(partition);
        lp.proveFenceForRead();
        cluster.awaitResolved(lp, null, null, null, true);
        return lp.state.count();
    }

    @Override
    public long atomicPreparesSeen(int partition) {
        java.util.Objects.checkIndex(partition, pipelines.length);
        LogPipeline lp = hostedPipeline(partition);
        lp.proveFenceForRead();
        return lp.state.preparesSeen.get();
    }

    @Override
    public ScanCursor scan(int partition, String fromInclusive, String toExclusive, boolean reverse) {
        java.util.Objects.checkIndex(partition, pipelines.length);
        LogPipeline lp = hostedPipeline(partition);
        lp.proveFenceForRead();
        cluster.awaitResolved(lp, null, fromInclusive, toExclusive, false);
        Visibility vis = ctx.atomics.visibility;
        long snapshot = vis.openSnapshot();
        java.util.Iterator<Map.Entry<String, Object>> it;
        try {
            it = lp.state.scan(fromInclusive, toExclusive, reverse, snapshot);
        } catch (RuntimeException e) {
            vis.closeSnapshot(snapshot);
            throw e;
        }
        return new MergeCursor(List.of(it), reverse, vis, snapshot);
    }

    @Override
    public CompletableFuture<Long> prepareAtomic(int partition, String txnId, LogId coordinator, List<AtomicOp> ops) {
        Objects.requireNonNull(txnId, "txnId");
        Objects.requireNonNull(coordinator, "coordinator");
        Objects.requireNonNull(ops, "ops");
        if (ops.isEmpty()) {
            throw new IllegalArgumentException("a prepared part needs at least one operation");
        }
        java.util.Objects.checkIndex(partition, pipelines.length);
        return cluster.prepare(this, hostedPipeline(partition), txnId, coordinator, ops);
    }

    @Override
    public CompletableFuture<Long> decideAtomic(int partition, String txnId, boolean commit, List<LogId> participants,
                                                long versionFloor) {
        Objects.requireNonNull(txnId, "txnId");
        Objects.requireNonNull(participants, "participants");
        java.util.Objects.checkIndex(partition, pipelines.length);
        return cluster.decide(this, hostedPipeline(partition), txnId, commit, participants, versionFloor, null, 0);
    }

    @Override
    public CompletableFuture<Long> decideAtomic(int partition, String txnId, boolean commit, List<LogId> participants,
                                                long versionFloor, String idempotencyKey, long digest) {
        Objects.requireNonNull(txnId, "txnId");
        Objects.requireNonNull(participants, "participants");
        java.util.Objects.checkIndex(partition, pipelines.length);
        return cluster.decide(this, hostedPipeline(partition), txnId, commit, participants, versionFloor,
                idempotencyKey, digest);
    }

    @Override
    public Optional<AtomicDecision> atomicDecisionByIdempotencyKey(int partition, String idempotencyKey,
                                                                   long digest) {
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        java.util.Objects.checkIndex(partition, pipelines.length);
        return cluster.decisionByIdempotencyKey(hostedPipeline(partition), idempotencyKey, digest);
    }

    @Override
    public CompletableFuture<Void> resolveAtomic(int partition, String txnId, boolean commit, long version) {
        Objects.requireNonNull(txnId, "txnId");
        java.util.Objects.checkIndex(partition, pipelines.length);
        return cluster.resolve(this, hostedPipeline(partition), txnId, commit, version);
    }

    @Override
    public Optional<AtomicDecision> atomicDecision(int partition, String txnId) {
        Objects.requireNonNull(txnId, "txnId");
        java.util.Objects.checkIndex(partition, pipelines.length);
        return cluster.decision(hostedPipeline(partition), txnId);
    }

    @Override
    public void atomicResolvedAt(int partition, String txnId, LogId participant) {
        java.util.Objects.checkIndex(partition, pipelines.length);
        cluster.resolvedRemotely(hostedPipeline(partition), txnId, participant);
    }

    @Override
    public Map<String, LogId> pendingAtomicWrites(int partition) {
        java.util.Objects.checkIndex(partition, pipelines.length);
        return cluster.pending(hostedPipeline(partition));
    }

    /**
     * With a read lease, a new owner serves nothing until the lease has passed since its claim: an earlier owner that
     * did not notice the claim serves reads only within the lease of a fenced call that succeeded before the claim,
     * so once this owner's first write is acknowledged no earlier owner can still answer from before it, however the
     * cluster came to assign the log twice.
     */
    private void awaitEarlierLeases(long claimedNanos, LogPipeline[] opened) {
        long lease = ctx.config.readLease.toNanos();
        long left = claimedNanos + lease - System.nanoTime();
        if (lease > 0 && left > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                for (LogPipeline lp : opened) {
                    lp.beginClose();
                    lp.state.releaseBudget();
                }
                throw new LatticeException("interrupted while waiting out the read lease of " + name + "'s earlier"
                        + " owner", e);
            }
        }
    }

    private final Object hosting = new Object();

    private void requirePartial(String what) {
        if (!partial) {
            throw new IllegalStateException("tree '" + name + "' is open whole in this process; " + what
                    + " applies to a tree opened with Lattice.hostTree");
        }
    }

    private void rebuildHosted() {
        List<LogPipeline> h = new ArrayList<>();
        for (LogPipeline lp : pipelines) {
            if (lp != null) {
                h.add(lp);
            }
        }
        hosted = h.toArray(new LogPipeline[0]);
    }
}
