package dev.lattice.engine;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The write path of one log: admission, coalescing into batches, parallel stage, in-order commit, apply, complete.
 *
 * <p>State machine, all under {@link #lock}: writes wait in {@link #queue}; {@link #pump()} cuts batches from it
 * (offsets and versions assigned in order) while fewer than {@code maxPendingBatches} are in flight, and cuts a
 * second concurrent stage only when at least {@code coalescingThreshold} writes wait, so that writes arriving while a
 * batch is staged coalesce into the next one. One commit runs at a time and covers every staged batch at the head of
 * {@link #inFlight}. The commit thread applies batches to {@link #state} and completes the callers' futures; it is
 * the only writer of the state. A failed batch stops the pipeline; once nothing is running, recovery reconciles the
 * log, applies the batches that did land, fails the others, and resumes at the committed tail.
 *
 * <p>Key locks: a multi-log atomic write locks its keys in each participant log from before its prepare entry is
 * admitted until its resolve entry is applied, so no other entry on those keys lies between the two in the log.
 * Writes on a locked key wait in {@link #parked} (in arrival order) and are admitted when the lock is released.
 */
final class LogPipeline {

    private static final Logger LOG = LoggerFactory.getLogger(LogPipeline.class);

    private enum BatchState { STAGING, STAGED, COMMITTING, FAILED }

    private static final class Batch {
        final List<PendingWrite> writes;
        final EncodedBatch encoded;
        BatchState st = BatchState.STAGING;
        /** A commit of this batch ended with a transient failure: it may have landed. */
        boolean uncertain;

        Batch(List<PendingWrite> writes, EncodedBatch encoded) {
            this.writes = writes;
            this.encoded = encoded;
        }
    }

    final LogId log;
    final PartitionState state;
    private final EngineContext ctx;
    // the log's provider and fence: replaced only by a move, while the pipeline is paused and drained
    private volatile ProviderHandle handle;
    private volatile dev.lattice.spi.WalStorageProvider provider;
    private volatile dev.lattice.spi.ProviderDescriptor descriptor;
    private final TreeImpl tree;
    private volatile Fence fence;
    private volatile boolean concurrentStage;
    private volatile boolean deferredStage;
    private volatile boolean localCalls;
    private volatile int maxBatchEntries;
    private volatile long maxBatchBytes;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition space = lock.newCondition();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<PendingWrite> queue = new ArrayDeque<>();
    private long queuedBytes;
    private final ArrayDeque<Batch> inFlight = new ArrayDeque<>();
    private int staging;
    private boolean committing;
    private boolean failed;
    private boolean recovering;
    private Throwable failure;
    private WalStorageException fatal;
    private boolean closing;
    private boolean paused;
    private long nextOffset;
    private volatile long lastTroubleNanos = Long.MIN_VALUE / 2;
    // provider calls past their deadline that have not returned yet (under lock)
    private int overdueCalls;
    private String overdueWhat;
    // when a call last proved the fence current (a commit or an ownership check)
    private volatile long lastFenceProofNanos = System.nanoTime();
    private final AtomicBoolean fenceCheckRunning = new AtomicBoolean();
    // why the last checkpoint was refused or failed, null when the last one succeeded
    private volatile HealthIssue checkpointIssue;
    private volatile SaturationState saturation = SaturationState.HEALTHY;
    private final AtomicInteger inFlightGauge = new AtomicInteger();

    /** A multi-log atomic write waiting to lock its keys in this log. */
    private static final class LockRequest {
        final Txn txn;
        final List<String> keys;
        final CompletableFuture<Void> granted = new CompletableFuture<>();

        LockRequest(Txn txn, List<String> keys) {
            this.txn = txn;
            this.keys = keys;
        }
    }

    // key locks (under lock): key -> owner; owner id -> its keys; writes and lock requests waiting on them
    private final HashMap<String, Txn> locks = new HashMap<>();
    private final HashMap<String, List<String>> lockedKeys = new HashMap<>();
    private final ArrayDeque<Object> parked = new ArrayDeque<>();

    // checkpoint bookkeeping: touched by the applier thread only, plus the running flag
    private long entriesSinceCheckpoint;
    private long bytesSinceCheckpoint;
    private long batchesSinceCheckpoint;
    private final AtomicBoolean checkpointRunning = new AtomicBoolean();
    // a checkpoint finished: the policy is checked again by the next holder of the applier role (under lock)
    private boolean checkpointDue;
    // a flush was asked for by a writer that found the memory budget spent (under lock / applier)
    private volatile boolean flushRequested;
    private final java.util.concurrent.atomic.AtomicLong flushesDone = new java.util.concurrent.atomic.AtomicLong();
    private volatile long lastCheckpointOffset;

    private final Timer stageTimer;
    private final Timer commitTimer;
    private final Timer appendLatency;
    private final Timer admissionWait;
    private final DistributionSummary batchEntries;
    private final DistributionSummary batchBytes;
    private final Counter retries;
    private final Timer checkpointTimer;
    private final DistributionSummary checkpointBytes;
    private final Counter trims;
    private final Counter overdue;
    private final Counter checkpointsRefused;
    private final Tags tags;
    /** Flush and compaction when the provider has a run store; null otherwise (whole-partition checkpoints). */
    private volatile RunMaintenance lsm;

    LogPipeline(EngineContext ctx, ProviderHandle handle, TreeImpl tree, LogId log, Fence fence, PartitionState state,
                long committedTail, long lastCheckpointOffset) {
        this.ctx = ctx;
        this.handle = handle;
        this.provider = handle.provider();
        this.descriptor = handle.descriptor();
        this.tree = tree;
        this.log = log;
        this.fence = fence;
        this.state = state;
        this.nextOffset = committedTail + 1;
        this.lastCheckpointOffset = lastCheckpointOffset;
        this.entriesSinceCheckpoint = Math.max(0, committedTail - lastCheckpointOffset);
        this.batchesSinceCheckpoint = entriesSinceCheckpoint; // unknown after replay: assume the worst
        adoptProviderTraits();
        EngineMeters m = ctx.meters;
        this.tags = m.tags("tree", log.tree(), "partition", Integer.toString(log.partition()), "provider", handle.key());
        this.stageTimer = m.timer("lattice.append.stage", "provider stage calls", tags);
        this.commitTimer = m.timer("lattice.append.commit", "provider commit calls", tags);
        this.appendLatency = m.timer("lattice.append.latency", "admission to completion of a write", tags);
        this.admissionWait = m.timer("lattice.admission.wait", "time writes waited for room in the admission queue",
                tags);
        this.batchEntries = m.summary("lattice.batch.entries", "entries per committed batch", "entries", tags);
        this.batchBytes = m.summary("lattice.batch.bytes", "bytes per committed batch", "bytes", tags);
        this.retries = m.counter("lattice.retries", "provider calls retried after a transient failure", "calls", tags);
        this.checkpointTimer = m.timer("lattice.checkpoint.duration", "checkpoint snapshot, upload and trim", tags);
        this.checkpointBytes = m.summary("lattice.checkpoint.bytes", "bytes per published checkpoint", "bytes", tags);
        this.trims = m.counter("lattice.trim", "log trims after a checkpoint", "trims", tags);
        this.overdue = m.counter("lattice.provider.overdue",
                "provider calls still running at their deadline (LatticeConfig providerCallTimeout)", "calls", tags);
        this.checkpointsRefused = m.counter("lattice.checkpoint.refused",
                "checkpoints not uploaded because they exceed the provider's maxCheckpointBytes", "checkpoints",
                tags.and("reason", "too_large"));
        m.gauge("lattice.inflight.batches", "batches staged and not yet committed", "batches", tags,
                inFlightGauge::get);
        m.gauge("lattice.admission.queued", "writes waiting in the admission queue", "writes", tags, this::queuedSize);
        this.lsm = descriptor.has(ProviderFeature.RUNS) ? startRunMaintenance() : null;
    }

    /** Sets up flush and compaction; collects orphan runs and converts a whole-partition checkpoint in the background. */
    private RunMaintenance startRunMaintenance() {
        RunMaintenance r = new RunMaintenance(log, provider.runs(), fence, state, ctx, this::maintenanceCall, tags);
        if (state.loadedManifest != null) {
            r.loaded(state.loadedManifest);
        }
        registerRunGauges();
        return r;
    }

    /**
     * The tree opened (every partition replayed, leftovers of atomic writes resolved): starts this log's maintenance
     * after the open. Not called for the logs of an open that failed, whose state was dropped.
     */
    void opened() {
        RunMaintenance r = lsm;
        if (r != null) {
            // a moment later: the open's own provider calls (and whoever measures them) go first
            ctx.timer.schedule(() -> {
                try {
                    ctx.maintenance.execute(() -> afterOpen(r));
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    LOG.debug("log {}: closed before its maintenance after the open", log);
                }
            }, AFTER_OPEN_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Delay between a tree's open and its logs' orphan collection, conversion and due compactions. */
    static final long AFTER_OPEN_DELAY_MILLIS = 2_000;

    private void registerRunGauges() {
        ctx.meters.gauge("lattice.memtable.bytes", "estimated bytes of the partition's memtable", "bytes", tags,
                () -> state.memtableBytes);
        ctx.meters.gauge("lattice.runs", "live runs of the partition", "runs", tags,
                () -> state.layers.current().runs().size());
        ctx.meters.gauge("lattice.runs.bytes", "bytes of the partition's live runs", "bytes", tags,
                () -> state.layers.current().runs().stream().mapToLong(h -> h.ref.lengthBytes()).sum());
    }

    /**
     * After the open, beside the log's flushes (orphan collection skips runs of this process's epoch): deletes runs
     * no manifest names; then asks for the conversion of a whole-partition checkpoint, or for a compaction that is
     * due, through the normal flush path.
     */
    private void afterOpen(RunMaintenance r) {
        if (closing || fatal != null) {
            return;
        }
        try {
            r.collectOrphans();
        } catch (FencedException e) {
            lostOwnership(e);
            return;
        } catch (RuntimeException e) {
            LOG.warn("log {}: orphan run collection after open failed (retried at the next open): {}", log,
                    e.toString());
        }
        if (state.legacyCheckpointLoaded) {
            flushRequested = true;
            checkPolicySoon();
        }
        r.compactInBackground(ctx.maintenance, this::publishManifest, this::signalChanged);
    }

    /**
     * Has the checkpoint (flush) policy checked as soon as no commit runs: now if the applier role is free, else
     * again shortly (a commit that ends on a path that does not look at the policy would leave it unchecked).
     */
    private void checkPolicySoon() {
        lock.lock();
        try {
            checkpointDue = true;
            maybeCheckpointIdle();
            if (!checkpointDue || closing || fatal != null) {
                return;
            }
        } finally {
            lock.unlock();
        }
        ctx.timer.schedule(this::checkPolicySoon, 20, TimeUnit.MILLISECONDS);
    }

    private void signalChanged() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** @return true while this log's compaction runs (moves and close wait for it) */
    private boolean compactionRunning() {
        RunMaintenance r = lsm;
        return r != null && r.compacting();
    }

    /** Maintenance task ended: the flag is free, and the policy is checked again once no commit runs. */
    private void maintenanceDone() {
        checkpointRunning.set(false);
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        checkPolicySoon(); // writes that came meanwhile may be over the policy already
    }

    private <T> T maintenanceCall(String op, java.util.function.Supplier<T> call) {
        return watched(op, false, call);
    }

    private boolean publishManifest(byte[] manifest, long through) {
        boolean ok = publishAndTrim(manifest, through, dev.lattice.engine.lsm.ManifestCodec.FORMAT);
        if (!ok && fatal != null) {
            lsm.stop(); // the log was lost: nothing more to publish
        }
        return ok;
    }

    /** Any thread: asks for a flush of this log's memtable (the memory budget runs low). */
    void requestFlush() {
        if (lsm == null || flushRequested) {
            return;
        }
        flushRequested = true;
        checkPolicySoon();
    }

    /**
     * Flushes the memtable and waits until that flush (and the compactions after it) ended: for tests and tools.
     *
     * @return false when it did not end within {@code timeoutMillis}
     */
    boolean flushAndWait(long timeoutMillis) {
        if (lsm == null) {
            return true;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        long start = flushesDone.get();
        boolean asked = false;
        while (System.nanoTime() < deadline) {
            lock.lock();
            try {
                boolean idle = !checkpointRunning.get() && !committing && !compactionRunning();
                if (idle && (flushesDone.get() > start || (!asked && state.memtableBytes == 0))
                        && state.layers.current().frozen().isEmpty()) {
                    return true;
                }
                if (idle && !flushRequested && flushesDone.get() == start) {
                    asked = true;
                    flushRequested = true;
                    checkpointDue = true;
                    maybeCheckpointIdle();
                }
                changed.awaitNanos(TimeUnit.MILLISECONDS.toNanos(20));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } finally {
                lock.unlock();
            }
        }
        return false;
    }

    /** @return the memtable's estimated bytes */
    long memtableBytes() {
        return state.memtableBytes;
    }

    /** @return true when this log flushes memtables into runs */
    boolean hasRuns() {
        return lsm != null;
    }

    private void adoptProviderTraits() {
        this.concurrentStage = descriptor.has(ProviderFeature.CONCURRENT_STAGE);
        this.deferredStage = descriptor.has(ProviderFeature.DEFERRED_STAGE);
        this.localCalls = descriptor.has(ProviderFeature.LOCAL_CALLS);
        this.maxBatchEntries = Math.min(ctx.config.maxBatchEntries, descriptor.limits().maxEntriesPerBatch());
        this.maxBatchBytes = Math.min(ctx.config.maxBatchBytes, descriptor.limits().maxBatchBytes());
    }

    // ------------------------------------------------------------------ moves

    /** @return the provider the log is on now */
    ProviderHandle handle() {
        return handle;
    }

    /**
     * Stops cutting new batches and waits until nothing is in flight, no recovery and no checkpoint runs. Writers
     * keep queueing (bounded by admission). Call {@link #resume()} in every case afterwards.
     *
     * @return the committed tail (= applied offset) when drained
     * @throws LatticeException if the log did not drain before the deadline, or cannot be written any more
     */
    long pauseAndDrain(long deadlineNanos) {
        lock.lock();
        try {
            paused = true;
            while (!inFlight.isEmpty() || recovering || failed || checkpointRunning.get() || compactionRunning()) {
                if (fatal != null) {
                    throw new LatticeException("log " + log + " cannot be written by this process any more", fatal);
                }
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    throw new LatticeException("log " + log + " did not drain in time for the move ("
                            + inFlight.size() + " batches in flight)");
                }
                try {
                    changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(20)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new LatticeException("interrupted while draining " + log + " for a move", e);
                }
            }
            return state.appliedOffset;
        } finally {
            lock.unlock();
        }
    }

    /** Continues after {@link #pauseAndDrain}, on the provider the log is on now. */
    void resume() {
        lock.lock();
        try {
            paused = false;
            pump();
        } finally {
            lock.unlock();
        }
    }

    /** While paused and drained: continue the log on another provider, with a fence claimed there. */
    void switchTo(ProviderHandle target, Fence targetFence) {
        lock.lock();
        try {
            if (!paused || !inFlight.isEmpty()) {
                throw new IllegalStateException("log " + log + " must be paused and drained to switch providers");
            }
            this.handle = target;
            this.provider = target.provider();
            this.descriptor = target.descriptor();
            this.fence = targetFence;
            adoptProviderTraits();
            RunMaintenance old = lsm;
            if (descriptor.has(ProviderFeature.RUNS)) {
                state.layers.rebind(provider.runs(), ctx.blockCache);
                RunMaintenance next = new RunMaintenance(log, provider.runs(), targetFence, state, ctx,
                        this::maintenanceCall, tags);
                if (old != null) {
                    next.inherit(old);
                } else {
                    registerRunGauges();
                }
                lsm = next;
            } else {
                lsm = null;
            }
        } finally {
            lock.unlock();
        }
    }

    private int queuedSize() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** @return the last computed state, without locking (for the tree's aggregate) */
    SaturationState saturationNow() {
        return saturation;
    }

    SaturationState saturation() {
        lock.lock();
        try {
            updateSaturation();
        } finally {
            lock.unlock();
        }
        return saturation;
    }

    // ------------------------------------------------------------------ leading on the caller's thread

    /**
     * A blocking writer that runs its own log's work (stage, commit, recovery) on its own thread instead of handing
     * it to the I/O pool: the lone writer of an idle log pays the provider calls and nothing else. It takes one task
     * at a time, and none once its own write is answered, so under load it does not keep leading other writers'
     * batches.
     */
    private static final class Leader {
        final LogPipeline pipeline;
        final PendingWrite own;
        Runnable task;

        Leader(LogPipeline pipeline, PendingWrite own) {
            this.pipeline = pipeline;
            this.own = own;
        }
    }

    private static final ThreadLocal<Leader> LEADER = new ThreadLocal<>();

    /** Under lock: runs a task on the leading caller's thread when it can take it, else on the I/O pool. */
    private void dispatch(Runnable task) {
        Leader l = LEADER.get();
        if (l != null && l.pipeline == this && l.task == null && !l.own.future.isDone()) {
            l.task = task;
            return;
        }
        ctx.io.execute(task);
    }

    /**
     * Admits a write for a caller that blocks until it is answered, and leads: the stage, commit and apply that
     * carry the write run on this thread when the log is idle. Only for providers whose calls are local
     * ({@link ProviderFeature#LOCAL_CALLS}): a remote call stays on the pool, where the call deadline answers the
     * caller whatever the backend does. Returns when the caller's thread has nothing more to run for the log (usually
     * with the write answered; otherwise the caller waits on its future).
     */
    void submitAndLead(PendingWrite w) {
        if (!localCalls) {
            submit(w);
            return;
        }
        Leader l = new Leader(this, w);
        Leader outer = LEADER.get();
        LEADER.set(l);
        try {
            submit(w);
            Runnable t;
            while ((t = l.task) != null) {
                l.task = null;
                t.run();
            }
        } finally {
            if (outer == null) {
                LEADER.remove();
            } else {
                LEADER.set(outer);
            }
        }
    }

    // ------------------------------------------------------------------ admission

    /** Admits a write (waiting up to the admission timeout for room) or completes its future exceptionally. */
    void submit(PendingWrite w) {
        long timeoutNanos = ctx.config.admissionTimeout.toNanos();
        long start = System.nanoTime();
        boolean waited = false;
        lock.lock();
        try {
            while (true) {
                if (closing) {
                    w.future.completeExceptionally(new LatticeShuttingDownException(
                            "lattice is closing; write to " + log + " not admitted"));
                    return;
                }
                RuntimeException refused = refusal();
                if (refused != null) {
                    w.future.completeExceptionally(refused);
                    return;
                }
                if (!locks.isEmpty() && conflicts(w.keys(), w.txn)) {
                    parked.add(w);
                    return;
                }
                if (hasRoom(w)) {
                    break;
                }
                waited = true;
                long left = timeoutNanos - (System.nanoTime() - start);
                if (left <= 0) {
                    w.future.completeExceptionally(new LatticeSaturatedException("log " + log
                            + " admission queue stayed full for " + ctx.config.admissionTimeout.toMillis() + " ms ("
                            + queue.size() + " writes, " + queuedBytes + " bytes queued)", failure));
                    updateSaturation();
                    return;
                }
                try {
                    space.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    w.future.completeExceptionally(new LatticeException("interrupted while waiting for admission to "
                            + log, e));
                    return;
                }
            }
            if (waited) {
                admissionWait.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            }
            queue.add(w);
            queuedBytes += w.entry.length;
            updateSaturation();
            pump();
        } finally {
            lock.unlock();
        }
    }

    /** Under lock: why a new write is refused at once, or null. */
    private RuntimeException refusal() {
        OwnershipLostException lost = tree.ownershipLost();
        if (lost != null) {
            return lost;
        }
        if (fatal != null) {
            return new WriteFailedException("log " + log + " cannot be written by this process any more: "
                    + fatal.getMessage(), fatal);
        }
        if (overdueCalls > 0) {
            return new LatticeSaturatedException("log " + log + ": " + overdueWhat + " has not returned within "
                    + ctx.watchdog.timeoutMillis() + " ms (LatticeConfig providerCallTimeout); writes are refused"
                    + " until it does", failure);
        }
        return null;
    }

    // ------------------------------------------------------------------ key locks

    private boolean conflicts(List<String> keys, Txn owner) {
        for (String k : keys) {
            Txn o = locks.get(k);
            if (o != null && o != owner) {
                return true;
            }
        }
        return false;
    }

    private void grant(Txn t, List<String> keys) {
        for (String k : keys) {
            locks.put(k, t);
        }
        lockedKeys.computeIfAbsent(t.id, id -> new ArrayList<>()).addAll(keys);
    }

    /**
     * Locks {@code keys} for the atomic write {@code t} in this log, now or once no other write holds any of them.
     *
     * @return completes when granted; exceptionally with {@link LatticeShuttingDownException} or
     *     {@link WriteFailedException} when the log is closing or can no longer be written
     */
    CompletableFuture<Void> lockKeys(Txn t, List<String> keys) {
        lock.lock();
        try {
            if (closing) {
                return CompletableFuture.failedFuture(new LatticeShuttingDownException("lattice is closing; atomic write "
                        + "on " + log + " not admitted"));
            }
            if (fatal != null) {
                return CompletableFuture.failedFuture(new WriteFailedException("log " + log
                        + " cannot be written by this process any more: " + fatal.getMessage(), fatal));
            }
            if (conflicts(keys, t)) {
                LockRequest r = new LockRequest(t, keys);
                parked.add(r);
                return r.granted;
            }
            grant(t, keys);
            return CompletableFuture.completedFuture(null);
        } finally {
            lock.unlock();
        }
    }

    /** Locks keys without waiting (replay resolution at open, when nothing else can hold them). */
    void lockNow(Txn t, List<String> keys) {
        lock.lock();
        try {
            grant(t, keys);
        } finally {
            lock.unlock();
        }
    }

    /** Releases the key locks of atomic write {@code id} (and drops its waiting lock request) and admits who waited. */
    void releaseLocks(String id) {
        List<LockRequest> granted = new ArrayList<>();
        lock.lock();
        try {
            parked.removeIf(o -> o instanceof LockRequest r && r.txn.id.equals(id));
            List<String> ks = lockedKeys.remove(id);
            if (ks != null) {
                for (String k : ks) {
                    Txn o = locks.get(k);
                    if (o != null && o.id.equals(id)) {
                        locks.remove(k);
                    }
                }
            }
            admitParked(granted);
            pump();
        } finally {
            lock.unlock();
        }
        for (LockRequest r : granted) {
            r.granted.complete(null);
        }
    }

    /** Under lock: admits parked writes and grants parked lock requests that no lock (or earlier waiter) blocks. */
    private void admitParked(List<LockRequest> granted) {
        if (parked.isEmpty()) {
            return;
        }
        Set<String> blocked = new HashSet<>();
        Iterator<Object> it = parked.iterator();
        while (it.hasNext()) {
            Object o = it.next();
            List<String> ks = o instanceof PendingWrite w ? w.keys() : ((LockRequest) o).keys;
            Txn owner = o instanceof PendingWrite w ? w.txn : ((LockRequest) o).txn;
            boolean wait = conflicts(ks, owner);
            for (int i = 0; !wait && i < ks.size(); i++) {
                wait = blocked.contains(ks.get(i));
            }
            if (wait) {
                blocked.addAll(ks);
                continue;
            }
            it.remove();
            if (o instanceof PendingWrite w) {
                queue.add(w);
                queuedBytes += w.entry.length;
            } else {
                LockRequest r = (LockRequest) o;
                grant(r.txn, r.keys);
                granted.add(r);
            }
        }
    }

    /** Under lock: fails every parked write and lock request. */
    private void failParked(java.util.function.Supplier<RuntimeException> cause) {
        Object o;
        while ((o = parked.poll()) != null) {
            if (o instanceof PendingWrite w) {
                w.future.completeExceptionally(cause.get());
            } else {
                ((LockRequest) o).granted.completeExceptionally(cause.get());
            }
        }
    }

    /** @return true while this process can still write the log (not fenced out, not closing) */
    boolean writable() {
        lock.lock();
        try {
            return fatal == null && !closing;
        } finally {
            lock.unlock();
        }
    }

    private boolean hasRoom(PendingWrite w) {
        return queue.isEmpty() || (queue.size() < ctx.config.maxQueuedEntriesPerLog
                && queuedBytes + w.entry.length <= ctx.config.maxQueuedBytesPerLog);
    }

    // ------------------------------------------------------------------ batching

    private void pump() {
        if (failed || recovering || fatal != null) {
            return;
        }
        while (!paused && !queue.isEmpty() && inFlight.size() < ctx.config.maxPendingBatches
                && (!busy() || (concurrentStage && queue.size() >= ctx.config.coalescingThreshold))) {
            cut();
        }
        maybeCommit();
    }

    /**
     * Whether the log's I/O is busy, so waiting writes should gather into the next batch: a stage is running, or,
     * for a provider that writes at commit ({@link ProviderFeature#DEFERRED_STAGE}), a commit is.
     */
    private boolean busy() {
        return staging > 0 || (deferredStage && committing);
    }

    private void cut() {
        List<PendingWrite> ws = new ArrayList<>(Math.min(queue.size(), maxBatchEntries));
        List<byte[]> entries = new ArrayList<>(Math.min(queue.size(), maxBatchEntries));
        long bytes = 0;
        while (!queue.isEmpty() && ws.size() < maxBatchEntries) {
            PendingWrite w = queue.peek();
            if (!ws.isEmpty() && bytes + w.entry.length > maxBatchBytes) {
                break;
            }
            queue.poll();
            queuedBytes -= w.entry.length;
            bytes += w.entry.length;
            w.version = w.versionSource != null ? w.versionSource.getAsLong() : tree.nextVersion();
            WalRecord.seal(w.entry, w.version);
            ws.add(w);
            entries.add(w.entry);
        }
        Batch b = new Batch(ws, EncodedBatch.of(nextOffset, BatchId.random(), entries));
        nextOffset += ws.size();
        inFlight.add(b);
        inFlightGauge.set(inFlight.size());
        staging++;
        batchEntries.record(ws.size());
        batchBytes.record(bytes);
        space.signalAll();
        updateSaturation();
        dispatch(() -> runStage(b));
    }

    private void runStage(Batch b) {
        Throwable err = withRetries("stage", () -> provider.stage(log, fence, b.encoded), ctx.stats.stageCalls,
                stageTimer).error();
        lock.lock();
        try {
            staging--;
            if (err == null) {
                b.st = BatchState.STAGED;
            } else {
                b.st = BatchState.FAILED;
                markFailed(err);
            }
            pump();
            maybeRecover();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ commit

    private void maybeCommit() {
        if (committing || failed || recovering || fatal != null) {
            return;
        }
        List<Batch> ready = new ArrayList<>();
        for (Batch b : inFlight) {
            if (b.st != BatchState.STAGED) {
                break;
            }
            ready.add(b);
        }
        if (ready.isEmpty()) {
            return;
        }
        committing = true;
        for (Batch b : ready) {
            b.st = BatchState.COMMITTING;
        }
        long through = ready.get(ready.size() - 1).encoded.lastOffset();
        dispatch(() -> runCommit(ready, through));
    }

    private void runCommit(List<Batch> ready, long through) {
        long started = System.nanoTime();
        CallOutcome outcome = withRetries("commit", () -> provider.commit(log, fence, through), ctx.stats.commitCalls,
                commitTimer);
        Throwable err = outcome.error();
        boolean uncertain = outcome.hadTransientFailure();
        if (err == null) {
            lastFenceProofNanos = started;
            for (Batch b : ready) {
                applyAndComplete(b);
            }
            maybeStartCheckpoint();
            lock.lock();
            try {
                for (int i = 0; i < ready.size(); i++) {
                    inFlight.poll();
                }
                inFlightGauge.set(inFlight.size());
                committing = false;
                maybeCheckpointIdle();
                pump();
                maybeRecover();
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        } else {
            lock.lock();
            try {
                committing = false;
                for (Batch b : ready) {
                    b.st = BatchState.FAILED;
                    b.uncertain |= uncertain;
                }
                markFailed(err);
                maybeRecover();
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** The outcome of a provider call made with bounded retries of transient failures. */
    private record CallOutcome(Throwable error, boolean hadTransientFailure) {
    }

    /**
     * Runs a provider call, retrying {@link ProviderUnavailableException} up to {@code maxRetries} times with
     * backoff (same arguments, so a retried batch keeps its batch id); any other failure ends it at once.
     */
    private CallOutcome withRetries(String op, Runnable call, java.util.concurrent.atomic.LongAdder calls,
                                    Timer timer) {
        boolean transientSeen = false;
        for (int attempt = 0; ; attempt++) {
            long t0 = System.nanoTime();
            try {
                calls.increment();
                watched(op, true, () -> {
                    call.run();
                    return null;
                });
                timer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                return new CallOutcome(null, transientSeen);
            } catch (ProviderUnavailableException e) {
                transientSeen = true;
                if (attempt >= ctx.config.maxRetries) {
                    return new CallOutcome(e, true);
                }
                retried(e);
                ctx.backoff(attempt);
            } catch (RuntimeException e) {
                return new CallOutcome(e, transientSeen);
            } catch (Error e) {
                // e.g. InternalError from a failed access to a mapped file: the call's outcome is unknown
                return new CallOutcome(new WalStorageException(log, op + " failed with " + e, e), true);
            }
        }
    }

    /**
     * Runs one provider call under the watchdog. When it is still running at its deadline and {@code answers} is
     * set, the writes in flight are answered as uncertain and new writes are refused until it returns.
     */
    private <T> T watched(String op, boolean answers, java.util.function.Supplier<T> call) {
        CallWatchdog.Watch w = ctx.watchdog.watch(op, log, watch -> overdue(watch, answers));
        try {
            return call.get();
        } finally {
            w.close();
            if (w.fired) {
                lock.lock();
                try {
                    w.returned = true;
                    if (w.counted) {
                        overdueCalls--;
                        updateSaturation();
                        space.signalAll();
                    }
                } finally {
                    lock.unlock();
                }
                LOG.info("log {}: {} returned {} ms after its deadline", log, w.what(),
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - w.deadlineNanos));
            }
        }
    }

    /** Watchdog thread: a call passed its deadline. */
    private void overdue(CallWatchdog.Watch w, boolean answers) {
        overdue.increment();
        lastTroubleNanos = System.nanoTime();
        LOG.warn("log {}: {} did not return within {} ms (LatticeConfig providerCallTimeout)", log, w.what(),
                ctx.watchdog.timeoutMillis());
        if (!answers) {
            return;
        }
        lock.lock();
        try {
            if (w.returned) {
                return;
            }
            w.counted = true;
            overdueCalls++;
            overdueWhat = w.what();
            ProviderUnavailableException cause = new ProviderUnavailableException(log, w.what()
                    + " did not return within " + ctx.watchdog.timeoutMillis()
                    + " ms (LatticeConfig providerCallTimeout)", null);
            for (Batch b : inFlight) {
                failAll(b, true, cause);
            }
            PendingWrite q;
            while ((q = queue.poll()) != null) {
                q.future.completeExceptionally(new WriteFailedException("log " + log + ": the write was not sent: "
                        + cause.getMessage(), cause));
            }
            queuedBytes = 0;
            updateSaturation();
            space.signalAll();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Applies a committed batch to the state and completes its callers. Applier thread only. */
    private void applyAndComplete(Batch b) {
        if (b.encoded.firstOffset() != state.appliedOffset + 1) {
            throw new IllegalStateException("log " + log + ": applying batch at " + b.encoded.firstOffset()
                    + " after offset " + state.appliedOffset);
        }
        Object[] results = new Object[b.writes.size()];
        for (int i = 0; i < results.length; i++) {
            PendingWrite w = b.writes.get(i);
            results[i] = state.apply(w.kind, w.mutations, w.version, w.txn);
        }
        for (PendingWrite w : b.writes) {
            if (w.releases != null) {
                releaseLocks(w.releases);
            }
        }
        state.compactChained();
        state.appliedOffset = b.encoded.lastOffset();
        entriesSinceCheckpoint += b.writes.size();
        bytesSinceCheckpoint += b.encoded.payloadBytes();
        batchesSinceCheckpoint++;
        ctx.stats.batchesCommitted.increment();
        ctx.stats.entriesCommitted.add(b.writes.size());
        ctx.stats.bytesCommitted.add(b.encoded.payloadBytes());
        long now = System.nanoTime();
        for (int i = 0; i < results.length; i++) {
            PendingWrite w = b.writes.get(i);
            appendLatency.record(now - w.admittedNanos, TimeUnit.NANOSECONDS);
            w.future.complete(results[i]);
        }
    }

    // ------------------------------------------------------------------ failure and recovery

    private void retried(Throwable e) {
        ctx.stats.retries.increment();
        retries.increment();
        lastTroubleNanos = System.nanoTime();
        LOG.debug("log {}: transient provider failure, retrying: {}", log, e.toString());
    }

    private void markFailed(Throwable err) {
        if (!failed) {
            failed = true;
            failure = err;
            lastTroubleNanos = System.nanoTime();
            ctx.meters.counter("lattice.provider.errors", "failed provider calls by exception type", "errors",
                    tags.and("type", err.getClass().getSimpleName()))
                    .increment();
            LOG.warn("log {}: batch failed, recovering: {}", log, err.toString());
        }
        updateSaturation();
    }

    private void maybeRecover() {
        if (fatal != null) {
            if (staging == 0 && !committing && !recovering && !inFlight.isEmpty()) {
                for (Batch b : inFlight) {
                    failAll(b, b.uncertain, fatal); // no-op for callers already answered
                }
                inFlight.clear();
                inFlightGauge.set(0);
                changed.signalAll();
            }
            return;
        }
        if (!failed || recovering || staging > 0 || committing) {
            return;
        }
        recovering = true;
        List<Batch> batches = new ArrayList<>(inFlight);
        Throwable cause = failure;
        dispatch(() -> runRecovery(batches, cause));
    }

    private void runRecovery(List<Batch> batches, Throwable cause) {
        LogState st = null;
        WalStorageException fenced = cause instanceof FencedException ? (FencedException) cause : null;
        Throwable last = cause;
        if (fenced == null) {
            for (int attempt = 0; ; attempt++) {
                try {
                    ctx.stats.reconciles.increment();
                    st = watched("reconcile", true, () -> {
                        provider.reconcile(log, fence);
                        return provider.state(log);
                    });
                    break;
                } catch (FencedException e) {
                    fenced = e;
                    break;
                } catch (ProviderUnavailableException e) {
                    last = e;
                    if (attempt >= ctx.config.maxRetries) {
                        break;
                    }
                    retried(e);
                    ctx.backoff(attempt);
                } catch (RuntimeException e) {
                    last = e;
                    break;
                } catch (Error e) {
                    last = new WalStorageException(log, "reconcile failed with " + e, e);
                    break;
                }
            }
        }
        ctx.stats.failedBatches.add(batches.size());
        if (st != null) {
            long tail = st.committedTail();
            for (Batch b : batches) {
                if (b.encoded.lastOffset() <= tail && b.encoded.firstOffset() == state.appliedOffset + 1) {
                    applyAndComplete(b); // its commit did land
                } else {
                    failAll(b, false, cause);
                }
            }
            lock.lock();
            try {
                inFlight.removeAll(batches);
                inFlightGauge.set(inFlight.size());
                if (tail != state.appliedOffset) {
                    fatal = new WalStorageException(log, "after reconcile the committed tail is " + tail
                            + " but this process applied through " + state.appliedOffset
                            + "; another writer changed the log", cause);
                    failQueued(fatal);
                } else {
                    nextOffset = tail + 1;
                    failed = false;
                    failure = null;
                }
                recovering = false;
                updateSaturation();
                pump();
                changed.signalAll();
                space.signalAll();
            } finally {
                lock.unlock();
            }
        } else if (fenced != null) {
            tree.lostOwnership(log, (FencedException) fenced); // before any caller hears of it
            for (Batch b : batches) {
                failAll(b, b.uncertain, fenced);
            }
            lock.lock();
            try {
                fatal = fenced;
                inFlight.removeAll(batches);
                inFlightGauge.set(inFlight.size());
                failQueued(fenced);
                recovering = false;
                updateSaturation();
                changed.signalAll();
                space.signalAll();
            } finally {
                lock.unlock();
            }
            LOG.error("log {}: fenced out by another writer; this process can no longer write it", log);
        } else {
            // The provider keeps failing: report what we know now, keep the batches to resolve them later.
            for (Batch b : batches) {
                failAll(b, b.uncertain, last);
            }
            lock.lock();
            try {
                recovering = false;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            long delay = Math.max(100, ctx.config.retryBackoff.toMillis() * 8);
            try {
                ctx.timer.schedule(() -> {
                    lock.lock();
                    try {
                        maybeRecover();
                    } finally {
                        lock.unlock();
                    }
                }, delay, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                LOG.debug("log {}: lattice closed before recovery could be retried", log);
            }
        }
    }

    private void failAll(Batch b, boolean uncertain, Throwable cause) {
        for (PendingWrite w : b.writes) {
            if (uncertain) {
                w.future.completeExceptionally(new WriteOutcomeUnknownException("log " + log + ": the write at offset "
                        + b.encoded.firstOffset() + ".." + b.encoded.lastOffset()
                        + " may or may not be committed; the provider kept failing", cause));
            } else {
                w.future.completeExceptionally(new WriteFailedException("log " + log + ": the write was not committed ("
                        + (cause == null ? "failed" : cause.getMessage()) + ")", cause));
            }
        }
    }

    private void failQueued(Throwable cause) {
        java.util.function.Supplier<RuntimeException> error = cause instanceof FencedException f
                ? () -> new OwnershipLostException(log.tree(), log, f.currentEpoch(), f)
                : () -> new WriteFailedException("log " + log + " cannot be written by this process any more: "
                        + cause.getMessage(), cause);
        failParked(error);
        PendingWrite w;
        while ((w = queue.poll()) != null) {
            w.future.completeExceptionally(error.get());
        }
        queuedBytes = 0;
    }

    // ------------------------------------------------------------------ saturation

    private void updateSaturation() {
        double fill = Math.max(queue.size() / (double) ctx.config.maxQueuedEntriesPerLog,
                queuedBytes / (double) ctx.config.maxQueuedBytesPerLog);
        boolean recentTrouble = System.nanoTime() - lastTroubleNanos < TimeUnit.SECONDS.toNanos(1);
        SaturationState s;
        if (failed || fatal != null || overdueCalls > 0 || fill >= 0.9) {
            s = SaturationState.SATURATED;
        } else if (fill >= 0.5 || recentTrouble || checkpointIssue != null) {
            s = SaturationState.THROTTLED;
        } else {
            s = SaturationState.HEALTHY;
        }
        if (s != saturation) {
            saturation = s;
            tree.saturationChanged();
        }
    }

    // ------------------------------------------------------------------ checkpoints

    /** Applier thread: snapshots the state when the policy says so and publishes it in the background. */
    private void maybeStartCheckpoint() {
        if (entriesSinceCheckpoint < ctx.config.checkpointEveryEntries
                && bytesSinceCheckpoint < ctx.config.checkpointEveryBytes
                && !replayTooSlow() && !memtableFull()) {
            return;
        }
        if (!checkpointRunning.compareAndSet(false, true)) {
            return;
        }
        if (lsm != null) {
            startFlush();
            return;
        }
        byte[] snapshot = state.snapshot();
        long through = state.appliedOffset;
        entriesSinceCheckpoint = 0;
        bytesSinceCheckpoint = 0;
        batchesSinceCheckpoint = 0;
        ctx.io.execute(() -> {
            try {
                publishAndTrim(snapshot, through, PartitionState.SNAPSHOT_FORMAT);
            } finally {
                checkpointRunning.set(false);
                lock.lock();
                try {
                    checkpointDue = true; // writes that came meanwhile may be over the policy already
                    maybeCheckpointIdle();
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        });
    }

    /**
     * Under lock: after a checkpoint finished, checks the policy again as soon as no commit runs (taking the
     * applier role, so no batch is applied while the snapshot is taken). Without it, a burst of writes that ended
     * while the checkpoint ran would leave the tail over the policy until the next write.
     */
    private void maybeCheckpointIdle() {
        if (!checkpointDue || committing || recovering || failed || fatal != null || closing || paused) {
            return;
        }
        checkpointDue = false;
        committing = true;
        dispatch(() -> {
            try {
                maybeStartCheckpoint();
            } finally {
                lock.lock();
                try {
                    committing = false;
                    pump();
                    maybeRecover(); // a batch that failed meanwhile waited for the applier role to be free
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        });
    }

    /** True when the memtable is over its size, a flush was asked for, or a whole-partition checkpoint awaits conversion. */
    private boolean memtableFull() {
        if (lsm == null) {
            return false;
        }
        if (flushRequested || state.legacyCheckpointLoaded) {
            return true; // also with an empty memtable: the task runs the compactions that are due
        }
        return state.memtableBytes >= ctx.config.memtableBytes;
    }

    /** Applier (holding the maintenance flag): freezes the memtable and flushes it in the background. */
    private void startFlush() {
        flushRequested = false;
        state.legacyCheckpointLoaded = false;
        FrozenMemtable f = state.freeze();
        entriesSinceCheckpoint = 0;
        bytesSinceCheckpoint = 0;
        batchesSinceCheckpoint = 0;
        ctx.maintenance.execute(() -> {
            try {
                RunMaintenance r = lsm;
                if (r.flush(f, this::publishManifest, Integer.MAX_VALUE)) {
                    flushesDone.incrementAndGet();
                    r.compactInBackground(ctx.maintenance, this::publishManifest, this::signalChanged);
                }
            } catch (FencedException e) {
                lostOwnership(e);
            } catch (RuntimeException e) {
                LOG.warn("log {}: flush or compaction failed: {}", log, e.toString());
            } finally {
                maintenanceDone();
            }
        });
    }

    /** True when the provider's replay cost model says replaying the tail since the checkpoint is over budget. */
    private boolean replayTooSlow() {
        var model = descriptor.replayCost();
        return !model.isUnknown() && model.estimateMillis(batchesSinceCheckpoint, bytesSinceCheckpoint)
                >= ctx.config.checkpointReplayBudget.toMillis();
    }

    private boolean publishAndTrim(byte[] snapshot, long through, int format) {
        long limit = descriptor.limits().maxCheckpointBytes();
        if (snapshot.length > limit) {
            refuseCheckpoint(snapshot.length, limit, through);
            return false;
        }
        long t0 = System.nanoTime();
        try {
            watched("checkpoint publish", false, () -> {
                provider.checkpoints().publish(log, fence, through, format, new ByteArrayInputStream(snapshot));
                return null;
            });
            checkpointTimer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            checkpointBytes.record(snapshot.length);
            ctx.stats.checkpoints.increment();
            ctx.stats.checkpointBytes.add(snapshot.length);
            lastCheckpointOffset = through;
            if (through >= 0) {
                watched("trim", false, () -> {
                    provider.trim(log, fence, through);
                    return null;
                });
                ctx.stats.trims.increment();
                trims.increment();
            }
            watched("checkpoint delete", false, () -> {
                provider.checkpoints().deleteBefore(log, through);
                return null;
            });
            checkpointIssue = null;
            return true;
        } catch (FencedException e) {
            lostOwnership(e);
            return false;
        } catch (RuntimeException e) {
            checkpointIssue = new HealthIssue(log, HealthIssue.Kind.CHECKPOINT_FAILING, "checkpoint through "
                    + through + " failed: " + e);
            ctx.stats.checkpointFailures.increment();
            ctx.meters.counter("lattice.provider.errors", "failed provider calls by exception type", "errors",
                    tags.and("type", e.getClass().getSimpleName()))
                    .increment();
            LOG.warn("log {}: checkpoint through {} failed (retried at the next threshold): {}", log, through,
                    e.toString());
            return false;
        }
    }

    /** A checkpoint larger than the provider stores: nothing is uploaded, the log keeps its tail untrimmed. */
    private void refuseCheckpoint(long bytes, long limit, long through) {
        checkpointsRefused.increment();
        ctx.stats.checkpointFailures.increment();
        boolean first = checkpointIssue == null || checkpointIssue.kind() != HealthIssue.Kind.CHECKPOINT_TOO_LARGE;
        checkpointIssue = new HealthIssue(log, HealthIssue.Kind.CHECKPOINT_TOO_LARGE, "checkpoint through offset "
                + through + " is " + bytes + " bytes, more than provider '" + descriptor.name() + "' stores ("
                + limit + " bytes, ProviderLimits.maxCheckpointBytes); nothing uploaded, the log is not trimmed"
                + " and replay grows until the partition shrinks (delete data or move it to more partitions)");
        if (first) {
            LOG.error("log {}: {}", log, checkpointIssue.detail());
        }
        lock.lock();
        try {
            updateSaturation();
        } finally {
            lock.unlock();
        }
    }

    /** Another writer claimed the log: stop writing it and stop serving the tree. */
    private void lostOwnership(FencedException e) {
        lock.lock();
        try {
            if (fatal == null) {
                fatal = e;
                failQueued(e);
                for (Batch b : inFlight) {
                    failAll(b, true, e); // a commit may be running: its outcome is unknown
                }
                maybeRecover();
            }
            updateSaturation();
            changed.signalAll();
            space.signalAll();
        } finally {
            lock.unlock();
        }
        LOG.error("log {}: claimed by another writer (epoch {}); the tree is no longer served", log,
                e.currentEpoch());
        tree.lostOwnership(log, e);
    }

    // ------------------------------------------------------------------ ownership and health

    /**
     * Timer thread: when the log committed nothing for {@code intervalNanos}, proves its fence with one cheap fenced
     * call in the background ({@link dev.lattice.spi.WalStorageProvider#checkFence}).
     */
    void checkOwnership(long intervalNanos) {
        if (closing || paused || fatal != null || System.nanoTime() - lastFenceProofNanos < intervalNanos
                || !fenceCheckRunning.compareAndSet(false, true)) {
            return;
        }
        try {
            ctx.io.execute(() -> {
                long started = System.nanoTime();
                try {
                    watched("ownership check", false, () -> {
                        provider.checkFence(log, fence);
                        return null;
                    });
                    lastFenceProofNanos = started;
                } catch (FencedException e) {
                    lostOwnership(e);
                } catch (RuntimeException | Error e) {
                    LOG.debug("log {}: ownership check failed (retried next interval): {}", log, e.toString());
                } finally {
                    fenceCheckRunning.set(false);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            fenceCheckRunning.set(false);
        }
    }

    /** @return what is wrong with this log now (empty when healthy) */
    List<HealthIssue> healthIssues() {
        List<HealthIssue> out = new ArrayList<>(2);
        lock.lock();
        try {
            if (fatal instanceof FencedException f) {
                out.add(new HealthIssue(log, HealthIssue.Kind.OWNERSHIP_LOST, "claimed by another writer (epoch "
                        + f.currentEpoch() + ")"));
            } else if (fatal != null) {
                out.add(new HealthIssue(log, HealthIssue.Kind.LOG_FAILED, fatal.getMessage()));
            }
            if (overdueCalls > 0) {
                out.add(new HealthIssue(log, HealthIssue.Kind.PROVIDER_CALL_OVERDUE, overdueWhat
                        + " has not returned within " + ctx.watchdog.timeoutMillis() + " ms"));
            }
            if (failed && fatal == null && failure != null) {
                out.add(new HealthIssue(log, HealthIssue.Kind.PROVIDER_FAILING, failure.toString()));
            }
        } finally {
            lock.unlock();
        }
        HealthIssue cp = checkpointIssue;
        if (cp != null) {
            out.add(cp);
        }
        return out;
    }

    // ------------------------------------------------------------------ close

    /** Stops admitting; parked writers get {@link LatticeShuttingDownException}; queued ones still drain. */
    void beginClose() {
        lock.lock();
        try {
            closing = true;
            if (lsm != null) {
                lsm.stopCompactions();
            }
            failParked(() -> new LatticeShuttingDownException("lattice is closing; the write to " + log
                    + " waited for the keys of an atomic write"));
            space.signalAll();
            pump();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until nothing is queued or in flight, or the deadline passes; then checkpoints if anything was written
     * since the last checkpoint. Writes still in flight at the deadline complete with
     * {@link WriteOutcomeUnknownException}; queued ones with {@link LatticeShuttingDownException}.
     *
     * @return true when drained cleanly
     */
    boolean drainAndCheckpoint(long deadlineNanos) {
        boolean drained;
        lock.lock();
        try {
            while ((!queue.isEmpty() || !inFlight.isEmpty() || recovering || checkpointRunning.get()
                    || compactionRunning()) && fatal == null) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            // a lost log has nothing left to drain: its callers were all answered when it was lost
            drained = fatal != null || (queue.isEmpty() && inFlight.isEmpty() && !recovering);
            if (!drained) {
                PendingWrite w;
                while ((w = queue.poll()) != null) {
                    w.future.completeExceptionally(new LatticeShuttingDownException("lattice closed before the write to "
                            + log + " was batched"));
                }
                for (Batch b : inFlight) {
                    failAll(b, true, new LatticeShuttingDownException("close timed out"));
                }
            }
        } finally {
            lock.unlock();
        }
        if (drained && fatal == null && !checkpointRunning.get() && state.appliedOffset > lastCheckpointOffset) {
            checkpointRunning.set(true);
            try {
                if (lsm != null) {
                    lsm.flush(state.freeze(), this::publishManifest, 3);
                } else {
                    publishAndTrim(state.snapshot(), state.appliedOffset, PartitionState.SNAPSHOT_FORMAT);
                }
            } finally {
                checkpointRunning.set(false);
            }
        }
        return drained;
    }
}
