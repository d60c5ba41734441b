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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 * the only writer of the state. A failed batch stops the pipeline; once nothing is running, recovery
 * ({@link PipelineRecovery}) reconciles the log, applies the batches that did land, fails the others, and resumes at
 * the committed tail. After commits the checkpoint policy is asked whether a checkpoint or a memtable flush is due
 * ({@link PipelineMaintenance}).
 *
 * <p>Parts in classes of their own: the admission queue and its overflow ({@link AdmissionQueue}), key locks
 * ({@link KeyLocks}), conditional writes ({@link ConditionGate}), stage and commit retries ({@link ProviderRetry}),
 * provider calls under the call deadline and what an overdue call does ({@link OverdueCalls}), recovery
 * ({@link PipelineRecovery}), checkpoint and flush scheduling ({@link PipelineMaintenance}, with
 * {@link CheckpointPolicy}, {@link CheckpointPublisher} and {@link RunMaintenance}), the fence lease
 * ({@link FenceLease}) and the meters ({@link PipelineMeters}). They reach the pipeline through small host
 * interfaces; the state machine's state and {@link #lock} stay here. The log's replay at open is {@link TreeReplay}.
 *
 * <p>Key locks: a multi-log atomic write locks its keys in each participant log from before its prepare entry is
 * admitted until its resolve entry is applied, so no other entry on those keys lies between the two in the log.
 * Writes on a locked key wait in {@link KeyLocks} (in arrival order) and are admitted when the lock is released.
 */
final class LogPipeline {

    private static final Logger LOG = LoggerFactory.getLogger(LogPipeline.class);
    /**
     * Stage and commit the head batch of an idle log as one step (one lock round less per write). Off: holding the
     * commit role through the stage kept the flush policy's re-check (which needs the applier role) from running
     * between a lone writer's puts, so flushes fell behind (ReplayAndCheckpointTest).
     */
    private static final boolean FUSE_STAGE_AND_COMMIT = false;

    private enum BatchState { STAGING, STAGED, COMMITTING, FAILED }

    /** A batch in flight; as a step, its stage. Package-private for {@link PipelineRecovery}. */
    final class Batch implements Runnable {
        /** The batch's writes, or null when it holds only {@link #single} (a lone write's batch: no list). */
        private final List<PendingWrite> writes;
        private final PendingWrite single;
        final EncodedBatch encoded;
        BatchState st = BatchState.STAGING;
        /** A commit of this batch ended with a transient failure: it may have landed. */
        boolean uncertain;

        Batch(List<PendingWrite> writes, EncodedBatch encoded) {
            this.writes = writes;
            this.single = null;
            this.encoded = encoded;
        }

        Batch(PendingWrite single, EncodedBatch encoded) {
            this.writes = null;
            this.single = single;
            this.encoded = encoded;
        }

        int size() {
            return writes == null ? 1 : writes.size();
        }

        PendingWrite write(int i) {
            return writes == null ? single : writes.get(i); // i is 0 for a lone write
        }

        /** @return the writes as a list (one allocated for a lone write: off the hot path) */
        List<PendingWrite> writes() {
            return writes == null ? List.of(single) : writes;
        }

        @Override
        public void run() {
            runStage(this);
        }
    }

    /** The commit step, reused: one commit runs at a time (under {@link #committing}). */
    private final class CommitStep implements Runnable {
        /** The staged batches at the head that this commit covers; filled under lock when the commit is started. */
        final ArrayList<Batch> ready = new ArrayList<>();

        @Override
        public void run() {
            runCommit(ready, false);
        }
    }

    private final CommitStep commitStep = new CommitStep();
    // calls as objects made once (no capturing lambda per write)
    private final java.util.function.Consumer<Batch> stageFn = this::stageBatch;
    private final java.util.function.Consumer<Batch> commitFn = this::commitThrough;
    // the lists of the batch being cut (under lock), reused; null while a cut holds them
    private ArrayList<PendingWrite> cutWrites = new ArrayList<>();
    private ArrayList<byte[]> cutEntries = new ArrayList<>();

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
    // admitted writes, and asynchronous writes waiting for room (see submitAsync)
    private final AdmissionQueue queue;
    private final ArrayDeque<Batch> inFlight = new ArrayDeque<>();
    private int staging;
    private boolean committing;
    // the next batch's lead was offered to a waiting writer (under lock); leadStep is that step
    private boolean leadOffered;
    private final Runnable leadStep = this::leadNext;
    private boolean failed;
    private boolean recovering;
    private Throwable failure;
    private volatile WalStorageException fatal; // volatile: maintenance reads it without the lock
    /** Set (once) when another writer claimed the log; read without the lock by partial trees. */
    private volatile FencedException fencedBy;
    /** Atomic writes a cluster prepared in this hosting of the log, by id, until resolved (see ClusterAtomics). */
    final java.util.concurrent.ConcurrentHashMap<String, Txn> clusterTxns = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile boolean closing; // volatile: maintenance reads it without the lock
    private boolean paused;
    private long nextOffset;
    private volatile long lastTroubleNanos = Long.MIN_VALUE / 2;
    // provider calls under the call deadline, and the overdue ones that have not returned yet (under lock)
    private final OverdueCalls calls;
    // when a call last proved the fence current (a commit or an ownership check)
    private final FenceLease lease;
    // publishes checkpoints and trims; knows why the last one was refused or failed
    private final CheckpointPublisher checkpoints;
    private volatile SaturationState saturation = SaturationState.HEALTHY;

    // key locks of multi-log atomic writes, and the writes waiting on them (under lock)
    private final KeyLocks keyLocks = new KeyLocks();
    // decides conditional writes at batch cut, so the log holds only their outcome (under lock)
    private final ConditionGate conditions;
    private final ProviderRetry retry;
    private final PipelineRecovery recovery;

    // checkpoint and flush scheduling, flush and compaction (run maintenance)
    private final PipelineMaintenance maintenance;

    private final PipelineMeters meters;

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
        this.conditions = new ConditionGate(state);
        this.nextOffset = committedTail + 1;
        this.calls = new OverdueCalls(log, ctx.watchdog, lock, new OverdueHost());
        this.retry = new ProviderRetry(log, ctx, calls::write, this::retried);
        this.recovery = new PipelineRecovery(log, ctx, state, new RecoveryHost());
        this.queue = new AdmissionQueue(ctx.config);
        adoptProviderTraits();
        this.meters = new PipelineMeters(ctx.meters, log, handle.key(), this::queuedSize);
        this.checkpoints = new CheckpointPublisher(log, ctx, meters, new PublisherHost(), lastCheckpointOffset);
        this.lease = new FenceLease(log, tree.name(), ctx, new LeaseHost());
        this.maintenance = new PipelineMaintenance(log, ctx, state, committedTail - lastCheckpointOffset,
                checkpoints, meters, calls, lock, changed, new MaintenanceHost(), provider, descriptor, fence);
    }

    /**
     * The tree opened (every partition replayed, leftovers of atomic writes resolved): starts this log's maintenance
     * after the open. Not called for the logs of an open that failed, whose state was dropped.
     */
    void opened() {
        maintenance.opened();
    }

    /** Any thread: asks for a flush of this log's memtable (the memory budget runs low). */
    void requestFlush() {
        maintenance.requestFlush();
    }

    /**
     * Flushes the memtable and waits until that flush (and the compactions after it) ended: for tests and tools.
     *
     * @return false when it did not end within {@code timeoutMillis}
     */
    boolean flushAndWait(long timeoutMillis) {
        return maintenance.flushAndWait(timeoutMillis);
    }

    /** @return true while a flush was asked for and its memtable not yet frozen */
    boolean flushRequested() {
        return maintenance.flushRequested();
    }

    /** @return the memtable's estimated bytes */
    long memtableBytes() {
        return state.memtableBytes;
    }

    /** @return true when this log flushes memtables into runs */
    boolean hasRuns() {
        return maintenance.hasRuns();
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
            while (!inFlight.isEmpty() || recovering || failed || maintenance.running()) {
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
            maintenance.switchTo(provider, descriptor, targetFence);
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

    // ------------------------------------------------------------------ steps on the writers' threads

    /** Under lock: runs a step on this thread, on a waiting writer's thread, or on the pool (see {@link #dispatch(Runnable, Batch, boolean)}). */
    private void dispatch(Runnable step) {
        dispatch(step, null, false);
    }

    /**
     * Under lock: for a provider with local calls ({@link ProviderFeature#LOCAL_CALLS}), runs {@code step} on a
     * writer's thread instead of the pool: first on a blocking writer of {@code batch} (when {@code preferBatch}:
     * the first writer of a new batch leads it), then on this thread if it takes steps (its own write not answered
     * yet, or a pooled step), then on any blocking writer waiting in flight or in the queue. Otherwise, and always for
     * remote providers (whose calls stay on the pool, where the call deadline answers callers), on the I/O pool.
     */
    private void dispatch(Runnable step, Batch batch, boolean preferBatch) {
        if (localCalls) {
            StepRunner me = StepRunner.current();
            if (preferBatch && batch != null && offerToWaiter(step, batch, me)) {
                return;
            }
            if (me.offerLocal(step)) {
                return;
            }
            if (batch != null && !preferBatch && offerToWaiter(step, batch, me)) {
                return;
            }
            for (Batch b : inFlight) {
                if (b != batch && offerToWaiter(step, b, me)) {
                    return;
                }
            }
            int looked = 0;
            for (PendingWrite w : queue) {
                if (looked++ >= 16) {
                    break;
                }
                if (w.waiter != null && w.waiter != me && !w.future.isDone() && w.waiter.offer(step)) {
                    return;
                }
            }
            ctx.io.execute(() -> StepRunner.current().runPooled(step));
            return;
        }
        ctx.io.execute(step);
    }

    /** Under lock: offers a step to the first blocking writer of {@code batch} that still waits (or takes it here). */
    private static boolean offerToWaiter(Runnable step, Batch batch, StepRunner me) {
        for (int i = 0, n = batch.size(); i < n; i++) {
            PendingWrite w = batch.write(i);
            StepRunner r = w.waiter;
            if (r == null || w.future.isDone()) {
                continue;
            }
            if (r == me ? me.offerLocal(step) : r.offer(step)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Admits a write for a caller that blocks until it is answered, and takes part in the log's work meanwhile: on an
     * idle log of a provider with local calls the write's stage, commit and apply run on this thread; when other
     * writers keep the log busy it waits (spin, yield, park) until its write is answered or it is handed the next
     * batch to lead. Returns with the write answered.
     */
    void submitAndLead(PendingWrite w) {
        if (!localCalls) {
            submit(w);
            return;
        }
        StepRunner me = StepRunner.current();
        CompletableFuture<?> outer = me.outerWait();
        boolean outerAccepting = me.outerAccepting();
        w.waiter = me;
        boolean wasClosed = me.begin(w.future, true);
        try {
            submit(w);
            me.await(wasClosed);
        } finally {
            me.end(outer, outerAccepting);
        }
    }

    /**
     * Admits the writes of a blocking {@code putAll} that fall in this log in one go (each waiting for room up to the
     * admission timeout, in order) for a caller that then leads with {@link #lead}; the batches they form are
     * staged and committed on the caller's thread where the provider's calls are local.
     */
    void submitAll(List<PendingWrite> ws, StepRunner me) {
        int i = 0;
        lock.lock();
        try {
            for (; i < ws.size(); i++) {
                PendingWrite w = ws.get(i);
                w.waiter = me; // wakes the caller when answered (and may be handed steps, for local calls)
                if (closing || refusal() != null || keyLocks.blocks(w)
                        || !queue.overflowEmpty() || !queue.hasRoom(w)) {
                    break; // the general path below answers or parks it
                }
                enqueue(w);
            }
            updateSaturation();
            pump();
        } finally {
            lock.unlock();
        }
        for (; i < ws.size(); i++) {
            me.runLocal(); // what this thread owes the log before it may wait for room
            ws.get(i).waiter = me;
            submit(ws.get(i));
        }
    }

    /**
     * A blocking caller's multi-write: {@code submit} admits the writes (through {@link #submitAll}), then this thread
     * runs the log work handed to it until {@code all} completes ({@link StepRunner#await(boolean)}).
     */
    static void lead(CompletableFuture<?> all, java.util.function.Consumer<StepRunner> submit) {
        StepRunner me = StepRunner.current();
        CompletableFuture<?> outer = me.outerWait();
        boolean outerAccepting = me.outerAccepting();
        boolean wasClosed = me.begin(all, false);
        try {
            submit.accept(me);
            me.await(wasClosed);
        } finally {
            me.end(outer, outerAccepting);
        }
    }

    // ------------------------------------------------------------------ admission

    /**
     * Admits a write for a blocking caller, waiting up to the admission timeout for room, or completes its future
     * exceptionally ({@link LatticeSaturatedException} when the queue stayed full).
     */
    void submit(PendingWrite w) {
        long timeoutNanos = ctx.config.admissionTimeout.toNanos();
        long start = 0;
        boolean waited = false;
        lock.lock();
        try {
            while (true) {
                if (closing) {
                    fail(w, new LatticeShuttingDownException(
                            "lattice is closing; write to " + log + " not admitted"));
                    return;
                }
                RuntimeException refused = refusal();
                if (refused != null) {
                    fail(w, refused);
                    return;
                }
                if (keyLocks.blocks(w)) {
                    keyLocks.park(w);
                    return;
                }
                if (queue.overflowEmpty() && queue.hasRoom(w)) {
                    break;
                }
                if (!waited) {
                    waited = true;
                    start = System.nanoTime();
                }
                long left = timeoutNanos - (System.nanoTime() - start);
                if (left <= 0) {
                    fail(w, new LatticeSaturatedException("log " + log
                            + " admission queue stayed full for " + ctx.config.admissionTimeout.toMillis() + " ms ("
                            + queue.size() + " writes, " + queue.bytes() + " bytes queued)", failure));
                    updateSaturation();
                    return;
                }
                try {
                    space.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    fail(w, new LatticeException("interrupted while waiting for admission to "
                            + log, e));
                    return;
                }
            }
            if (waited) {
                meters.admissionWait.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            }
            enqueue(w);
            updateSaturation();
            pump();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Admits a write of an asynchronous caller without blocking its thread. When the queue is full the write waits
     * for room as part of its future (in the {@link AdmissionQueue}'s overflow, at most
     * {@code maxQueuedEntriesPerLog} writes, admitted in order as batches are cut); when that is full too the future
     * fails at once with {@link LatticeSaturatedException}. Other refusals complete the future exceptionally as {@link #submit} does.
     */
    void submitAsync(PendingWrite w) {
        lock.lock();
        try {
            if (closing) {
                fail(w, new LatticeShuttingDownException(
                        "lattice is closing; write to " + log + " not admitted"));
                return;
            }
            RuntimeException refused = refusal();
            if (refused != null) {
                fail(w, refused);
                return;
            }
            if (keyLocks.blocks(w)) {
                keyLocks.park(w);
                return;
            }
            if (queue.overflowEmpty() && queue.hasRoom(w)) {
                enqueue(w);
            } else if (!queue.offerOverflow(w)) {
                fail(w, new LatticeSaturatedException("log " + log + " admission queue is full ("
                        + queue.size() + " writes, " + queue.bytes() + " bytes queued) and " + queue.overflowSize()
                        + " asynchronous writes already wait for room; refused at once (asynchronous writes never"
                        + " block; a blocking write waits up to " + ctx.config.admissionTimeout.toMillis()
                        + " ms, LatticeConfig admissionTimeout)", failure));
                updateSaturation();
                return;
            }
            updateSaturation();
            pump();
        } finally {
            lock.unlock();
        }
    }

    /** Answers a write with an error and wakes its blocking caller. */
    private static void fail(PendingWrite w, Throwable error) {
        w.future.completeExceptionally(error);
        StepRunner r = w.waiter;
        if (r != null) {
            r.wake();
        }
    }

    /** Under lock: puts an admitted write in the queue. */
    private void enqueue(PendingWrite w) {
        queue.add(w);
    }

    /** Under lock: moves asynchronous writes that waited for room into the queue, in order, while there is room. */
    private void admitOverflow() {
        queue.admitOverflow();
    }

    /** Under lock: fails the asynchronous writes still waiting for room. */
    private void failOverflow(java.util.function.Supplier<RuntimeException> cause) {
        queue.drainOverflow(w -> fail(w, cause.get()));
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
        if (calls.overdueCount() > 0) {
            return new LatticeSaturatedException("log " + log + ": " + calls.overdueWhat() + " has not returned within "
                    + ctx.watchdog.timeoutMillis() + " ms (LatticeConfig providerCallTimeout); writes are refused"
                    + " until it does", failure);
        }
        return null;
    }

    // ------------------------------------------------------------------ key locks

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
            return keyLocks.lock(t, keys);
        } finally {
            lock.unlock();
        }
    }

    /** Locks keys without waiting (replay resolution at open, when nothing else can hold them). */
    void lockNow(Txn t, List<String> keys) {
        lock.lock();
        try {
            keyLocks.lockNow(t, keys);
        } finally {
            lock.unlock();
        }
    }

    /** Releases the key locks of atomic write {@code id} (and drops its waiting lock request) and admits who waited. */
    void releaseLocks(String id) {
        List<CompletableFuture<Void>> granted;
        lock.lock();
        try {
            granted = keyLocks.release(id, this::enqueue);
            pump();
        } finally {
            lock.unlock();
        }
        for (CompletableFuture<Void> g : granted) {
            g.complete(null);
        }
    }

    /** Under lock: fails every parked write and lock request. */
    private void failParked(java.util.function.Supplier<RuntimeException> cause) {
        keyLocks.failAll(cause, w -> fail(w, cause.get()));
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

    // ------------------------------------------------------------------ batching

    /**
     * Under lock: the state machine's one step function. Admits waiting asynchronous writes, starts the commit of
     * the staged batches at the head, and cuts new batches from the queue when the log is idle (or when at least
     * {@code coalescingThreshold} writes wait, for a provider that stages concurrently), so that writes arriving while
     * a batch is staged and committed coalesce into the next one.
     */
    private void pump() {
        if (failed || recovering || fatal != null) {
            return;
        }
        admitOverflow();
        maybeCommit();
        if (!paused && !queue.isEmpty() && !busy() && handOffLead()) {
            return;
        }
        while (!paused && !queue.isEmpty() && inFlight.size() < ctx.config.maxPendingBatches
                && (!busy() || (concurrentStage && queue.size() >= ctx.config.coalescingThreshold))) {
            if (!cut()) {
                break; // a conditional write at the head waits for an earlier write on its keys to be applied
            }
        }
        admitOverflow();
        maybeCommit();
    }

    /**
     * Whether the log's I/O is busy (a stage or a commit runs, or the next batch's leader is being woken), so
     * waiting writes gather into the next batch.
     */
    private boolean busy() {
        return staging > 0 || committing || leadOffered;
    }

    /**
     * Under lock, on an idle log with writes queued, when this thread takes no more steps (its own write is
     * answered): hands the next batch to the first blocking writer in the queue, which cuts it when it runs. The
     * batch is cut then, not now, so that the writers answered by the batch just committed, which come back while
     * the leader wakes, join it (two groups of writers would otherwise alternate, each half the size).
     *
     * @return true if the lead was handed off (nothing is cut now)
     */
    private boolean handOffLead() {
        if (!localCalls) {
            return false;
        }
        StepRunner me = StepRunner.current();
        if (me.takesSteps()) {
            return false;
        }
        int looked = 0;
        for (PendingWrite w : queue) {
            if (looked++ >= 16) {
                break;
            }
            StepRunner r = w.waiter;
            if (r != null && r != me && !w.future.isDone()) {
                leadOffered = true;
                if (r.offer(leadStep)) {
                    return true;
                }
                leadOffered = false;
            }
        }
        return false;
    }

    /** The step of a writer handed the lead: cuts (and usually runs) the next batch. */
    private void leadNext() {
        lock.lock();
        try {
            leadOffered = false;
            pump();
            maybeRecover();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under lock: cuts the next batch from the queue. A conditional write is decided here ({@link ConditionGate}):
     * logged without its condition when it holds, answered at once and not logged when it fails; one whose keys an
     * earlier write not applied yet touches ends the batch and waits at the head of the queue.
     *
     * @return false when nothing was taken from the queue (its head waits)
     */
    private boolean cut() {
        ArrayList<PendingWrite> ws = cutWrites;
        ArrayList<byte[]> entries = cutEntries;
        if (ws == null) {
            // a cut inside a cut (a caller's continuation, run when a write is answered at cut, wrote to this log)
            ws = new ArrayList<>();
            entries = new ArrayList<>();
        } else {
            cutWrites = null;
            cutEntries = null;
            conditions.forget(ws); // the list is reused: what the gate knew of it belongs to an earlier cut
        }
        try {
            return cutInto(ws, entries);
        } finally {
            ws.clear();
            entries.clear();
            cutWrites = ws;
            cutEntries = entries;
        }
    }

    /** Under lock: {@link #cut()} into empty lists that no other cut uses meanwhile. */
    private boolean cutInto(ArrayList<PendingWrite> ws, ArrayList<byte[]> entries) {
        long bytes = 0;
        boolean took = false;
        while (!queue.isEmpty() && ws.size() < maxBatchEntries) {
            PendingWrite w = queue.peek();
            if (w.conditional && conditions.blocked(w, unapplied(ws))) {
                break;
            }
            if (!ws.isEmpty() && bytes + w.entry.length > maxBatchBytes) {
                break;
            }
            queue.poll();
            took = true;
            w.version = w.versionSource != null ? w.versionSource.getAsLong() : tree.nextVersion();
            if (w.conditional) {
                Object failed = conditions.decide(w);
                if (failed != null) {
                    answerUnlogged(w, failed);
                    continue;
                }
            }
            bytes += w.entry.length;
            WalRecord.seal(w.entry, w.version);
            ws.add(w);
            entries.add(w.entry);
        }
        int n = ws.size();
        if (n == 0) {
            space.signalAll();
            updateSaturation();
            return took;
        }
        // a lone write's batch holds immutable one-element lists (EncodedBatch keeps such a list without a copy);
        // entries are sealed above and never written again, so a provider may keep them without copying
        Batch b = n == 1
                ? new Batch(ws.get(0),
                        EncodedBatch.ofImmutable(nextOffset, BatchId.random(), List.of(entries.get(0))))
                : new Batch(new ArrayList<>(ws), EncodedBatch.ofImmutable(nextOffset, BatchId.random(), entries));
        nextOffset += n;
        // the head batch of an idle log takes the commit role at once: stage and commit run as one step, one lock
        boolean leads = FUSE_STAGE_AND_COMMIT && !committing && inFlight.isEmpty();
        inFlight.add(b);
        meters.inFlight(inFlight.size());
        staging++;
        meters.batchEntries.record(n);
        meters.batchBytes.record(bytes);
        space.signalAll();
        updateSaturation();
        if (leads) {
            committing = true;
            dispatch(() -> runStageAndCommit(b), b, true);
        } else {
            dispatch(b, b, true);
        }
        return true;
    }

    /** Under lock: the write lists ahead of the queue that are not applied yet (in flight, then {@code cutting}). */
    private List<List<PendingWrite>> unapplied(List<PendingWrite> cutting) {
        List<List<PendingWrite>> out = new ArrayList<>(inFlight.size() + 1);
        for (Batch b : inFlight) {
            out.add(b.writes());
        }
        out.add(cutting);
        return out;
    }

    /**
     * Under lock: answers a conditional write whose condition failed at cut (it is not logged): a blocking caller at
     * once, an asynchronous one on the I/O pool (its continuation must not run under this log's lock).
     */
    private void answerUnlogged(PendingWrite w, Object answer) {
        meters.appendLatency.record(System.nanoTime() - w.admittedNanos, TimeUnit.NANOSECONDS);
        StepRunner r = w.waiter;
        if (r != null) {
            w.future.complete(answer);
            r.wake();
            return;
        }
        try {
            ctx.io.execute(() -> w.future.complete(answer));
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            w.future.complete(answer);
        }
    }

    private Throwable stageCall(Batch b) {
        return retry.run("stage", stageFn, b, ctx.stats.stageCalls, meters.stage).error();
    }

    private void stageBatch(Batch b) {
        provider.stage(log, fence, b.encoded);
    }

    /** Commits through the last offset of {@code last}, the last batch of a commit. */
    private void commitThrough(Batch last) {
        provider.commit(log, fence, last.encoded.lastOffset());
    }

    private void runStage(Batch b) {
        Throwable err = stageCall(b);
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

    /** The head batch of an idle log: stage, then (holding the commit role since the cut) commit it. */
    private void runStageAndCommit(Batch b) {
        Throwable err = stageCall(b);
        if (err != null) {
            lock.lock();
            try {
                staging--;
                committing = false;
                b.st = BatchState.FAILED;
                markFailed(err);
                pump();
                maybeRecover();
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            return;
        }
        b.st = BatchState.COMMITTING;
        runCommit(List.of(b), true);
    }

    // ------------------------------------------------------------------ commit

    private void maybeCommit() {
        if (committing || failed || recovering || fatal != null) {
            return;
        }
        Batch head = inFlight.peek();
        if (head == null || head.st != BatchState.STAGED) {
            return;
        }
        ArrayList<Batch> ready = commitStep.ready;
        ready.clear();
        if (inFlight.size() == 1) {
            ready.add(head);
        } else {
            for (Batch b : inFlight) {
                if (b.st != BatchState.STAGED) {
                    break;
                }
                ready.add(b);
            }
        }
        committing = true;
        for (int i = 0, n = ready.size(); i < n; i++) {
            ready.get(i).st = BatchState.COMMITTING;
        }
        dispatch(commitStep, head, false);
    }

    /**
     * Commits {@code ready} (the staged batches at the head), applies them and answers their callers: blocking
     * callers at once, asynchronous ones after the log moved on ({@link #completeCallers}).
     *
     * @param ready the batches, in offset order; may be {@link CommitStep#ready}, which the next commit refills once
     *     this one let go of the commit role
     * @param fromStage true when this step also staged the (single) batch and still counts as staging
     */
    private void runCommit(List<Batch> ready, boolean fromStage) {
        long started = System.nanoTime();
        int n = ready.size();
        ProviderRetry.Outcome outcome = retry.run("commit", commitFn, ready.get(n - 1), ctx.stats.commitCalls,
                meters.commit);
        Throwable err = outcome.error();
        boolean uncertain = outcome.hadTransientFailure();
        if (err == null) {
            lease.proved(started);
            boolean callersLeft = false;
            for (int i = 0; i < n; i++) {
                callersLeft |= apply(ready.get(i));
            }
            // asynchronous callers are answered after the commit role is let go: keep the batches apart
            List<Batch> toComplete = callersLeft ? new ArrayList<>(ready) : null;
            maintenance.maybeStartCheckpoint();
            lock.lock();
            try {
                if (fromStage) {
                    staging--;
                }
                for (int i = 0; i < n; i++) {
                    inFlight.poll();
                }
                meters.inFlight(inFlight.size());
                committing = false;
                maintenance.maybeCheckpointIdle();
                pump();
                maybeRecover();
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            if (toComplete != null) {
                completeCallers(toComplete);
            }
        } else {
            lock.lock();
            try {
                if (fromStage) {
                    staging--;
                }
                committing = false;
                for (int i = 0; i < n; i++) {
                    Batch b = ready.get(i);
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

    /** What an overdue provider call does to this log. */
    private final class OverdueHost implements OverdueCalls.Host {
        @Override
        public void noteOverdue() {
            meters.overdue.increment();
            lastTroubleNanos = System.nanoTime();
        }

        @Override
        public void answerWrites(ProviderUnavailableException cause) {
            for (Batch b : inFlight) {
                failAll(b, true, cause);
            }
            queue.drain(q -> fail(q, new WriteFailedException("log " + log + ": the write was not sent: "
                    + cause.getMessage(), cause)));
            failOverflow(() -> new WriteFailedException("log " + log + ": the write was not sent: "
                    + cause.getMessage(), cause));
            updateSaturation();
            space.signalAll();
            changed.signalAll();
        }

        @Override
        public void overdueReturned() {
            updateSaturation();
            space.signalAll();
        }
    }

    /**
     * Applies a committed batch to the state and answers its blocking callers (waking their threads); the results of
     * the others stay in their writes for {@link #complete}. Applier thread only.
     *
     * @return true if some callers are still to be answered
     */
    private boolean apply(Batch b) {
        if (b.encoded.firstOffset() != state.appliedOffset + 1) {
            throw new IllegalStateException("log " + log + ": applying batch at " + b.encoded.firstOffset()
                    + " after offset " + state.appliedOffset);
        }
        int n = b.size();
        for (int i = 0; i < n; i++) {
            PendingWrite w = b.write(i);
            Object r = state.apply(w.kind, w.mutations, w.version, w.txn);
            w.result = w.answer != null ? w.answer : r;
        }
        for (int i = 0; i < n; i++) {
            PendingWrite w = b.write(i);
            if (w.releases != null) {
                releaseLocks(w.releases);
            }
        }
        state.compactChained();
        state.appliedOffset = b.encoded.lastOffset();
        maintenance.applied(n, b.encoded.payloadBytes());
        ctx.stats.batchesCommitted.increment();
        ctx.stats.entriesCommitted.add(n);
        ctx.stats.bytesCommitted.add(b.encoded.payloadBytes());
        long now = System.nanoTime();
        boolean left = false;
        for (int i = 0; i < n; i++) {
            PendingWrite w = b.write(i);
            meters.appendLatency.record(now - w.admittedNanos, TimeUnit.NANOSECONDS);
            StepRunner r = w.waiter;
            if (r != null) {
                Object result = w.result;
                w.result = null;
                w.future.complete(result);
                r.wake();
            } else {
                left = true;
            }
        }
        return left;
    }

    /**
     * After the log moved on (the next batch's step is dispatched): answers the asynchronous callers of committed
     * batches, here if this thread holds no step of any log, else on the I/O pool, so that their continuations never
     * run while a log waits for them.
     */
    private void completeCallers(List<Batch> batches) {
        Runnable answer = () -> {
            for (Batch b : batches) {
                complete(b);
            }
        };
        if (!StepRunner.current().runForeign(answer)) {
            try {
                ctx.io.execute(answer);
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                answer.run();
            }
        }
    }

    /** Completes the callers of an applied batch not answered yet with their results. */
    private static void complete(Batch b) {
        for (int i = 0, n = b.size(); i < n; i++) {
            PendingWrite w = b.write(i);
            if (w.waiter == null) {
                Object result = w.result;
                w.result = null;
                w.future.complete(result);
            }
        }
    }

    // ------------------------------------------------------------------ failure and recovery

    private void retried(Throwable e) {
        ctx.stats.retries.increment();
        meters.retries.increment();
        lastTroubleNanos = System.nanoTime();
        LOG.debug("log {}: transient provider failure, retrying: {}", log, e.toString());
    }

    private void markFailed(Throwable err) {
        if (!failed) {
            failed = true;
            failure = err;
            lastTroubleNanos = System.nanoTime();
            meters.providerError(err);
            LOG.warn("log {}: batch failed, recovering: {}", log, err.toString());
        }
        updateSaturation();
    }

    /**
     * Under lock: the transition into recovery. Once a batch failed and no stage or commit runs, hands the batches in
     * flight to {@link PipelineRecovery}; on a lost log, fails the batches left in flight instead.
     */
    private void maybeRecover() {
        if (fatal != null) {
            if (staging == 0 && !committing && !recovering && !inFlight.isEmpty()) {
                for (Batch b : inFlight) {
                    failAll(b, b.uncertain, fatal); // no-op for callers already answered
                }
                inFlight.clear();
                meters.inFlight(0);
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
        dispatch(() -> recovery.run(batches, cause));
    }

    /** What recovery reaches of this log; the methods marked so take the lock. */
    private final class RecoveryHost implements PipelineRecovery.Host {
        @Override
        public LogState reconcile() {
            return calls.call("reconcile", true, () -> {
                provider.reconcile(log, fence);
                return provider.state(log);
            });
        }

        @Override
        public void retried(Throwable e) {
            LogPipeline.this.retried(e);
        }

        @Override
        public boolean apply(Batch b) {
            return LogPipeline.this.apply(b);
        }

        @Override
        public void failAll(Batch b, boolean uncertain, Throwable cause) {
            LogPipeline.this.failAll(b, uncertain, cause);
        }

        @Override
        public void completeCallers(List<Batch> batches) {
            LogPipeline.this.completeCallers(batches);
        }

        @Override
        public void resume(List<Batch> batches, long tail, Throwable cause) {
            lock.lock();
            try {
                inFlight.removeAll(batches);
                meters.inFlight(inFlight.size());
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
        }

        @Override
        public void fencedOut(FencedException e) {
            fencedBy = e;
            tree.lostOwnership(log, e); // before any caller hears of it
        }

        @Override
        public void lost(List<Batch> batches, FencedException e) {
            lock.lock();
            try {
                fatal = e;
                inFlight.removeAll(batches);
                meters.inFlight(inFlight.size());
                failQueued(e);
                recovering = false;
                updateSaturation();
                changed.signalAll();
                space.signalAll();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void gaveUp() {
            lock.lock();
            try {
                recovering = false;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void recoverAgain() {
            lock.lock();
            try {
                maybeRecover();
            } finally {
                lock.unlock();
            }
        }
    }

    private void failAll(Batch b, boolean uncertain, Throwable cause) {
        for (PendingWrite w : b.writes()) {
            if (uncertain) {
                fail(w, new WriteOutcomeUnknownException("log " + log + ": the write at offset "
                        + b.encoded.firstOffset() + ".." + b.encoded.lastOffset()
                        + " may or may not be committed; the provider kept failing", cause));
            } else {
                fail(w, new WriteFailedException("log " + log + ": the write was not committed ("
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
        failOverflow(error);
        queue.drain(w -> fail(w, error.get()));
    }

    // ------------------------------------------------------------------ saturation

    private void updateSaturation() {
        double fill = queue.fill();
        boolean recentTrouble = System.nanoTime() - lastTroubleNanos < TimeUnit.SECONDS.toNanos(1);
        SaturationState s;
        if (failed || fatal != null || calls.overdueCount() > 0 || fill >= 0.9 || !queue.overflowEmpty()) {
            s = SaturationState.SATURATED;
        } else if (fill >= 0.5 || recentTrouble || checkpoints.issue() != null) {
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

    /** What the checkpoint and flush scheduling reaches of this log. */
    private final class MaintenanceHost implements PipelineMaintenance.Host {
        @Override
        public boolean takeApplierRole() {
            if (committing || recovering || failed || fatal != null || closing || paused) {
                return false;
            }
            committing = true;
            return true;
        }

        @Override
        public void releaseApplierRole() {
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

        @Override
        public boolean committing() {
            return committing;
        }

        @Override
        public boolean stopped() {
            return closing || fatal != null;
        }

        @Override
        public boolean lost() {
            return fatal != null;
        }

        @Override
        public boolean halted() {
            return closing || paused || fatal != null || failed;
        }

        @Override
        public void dispatch(Runnable step) {
            LogPipeline.this.dispatch(step);
        }

        @Override
        public dev.lattice.spi.ProviderDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void lostOwnership(FencedException e) {
            LogPipeline.this.lostOwnership(e);
        }
    }

    /** What the checkpoint publisher reaches of this log. */
    private final class PublisherHost implements CheckpointPublisher.Host {
        @Override
        public dev.lattice.spi.WalStorageProvider provider() {
            return provider;
        }

        @Override
        public dev.lattice.spi.ProviderDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public Fence fence() {
            return fence;
        }

        @Override
        public void call(String op, Runnable call) {
            calls.call(op, false, () -> {
                call.run();
                return null;
            });
        }

        @Override
        public void lostOwnership(FencedException e) {
            LogPipeline.this.lostOwnership(e);
        }

        @Override
        public void issueChanged() {
            lock.lock();
            try {
                updateSaturation();
            } finally {
                lock.unlock();
            }
        }
    }

    /** @return the error that showed another writer claimed this log, or null (a volatile read) */
    FencedException fencedBy() {
        return fencedBy;
    }

    /**
     * Before a read, when a read lease is configured ({@link LatticeConfig.Builder#readLease}): unless a fenced call
     * (a commit, an ownership check, an earlier proof) that started within the lease succeeded, proves the fence now
     * with one provider call, so a process that lost the log serves no read from state older than the lease.
     *
     * @throws OwnershipLostException if the proof shows that another writer claimed the log
     * @throws dev.lattice.spi.WalStorageException if the provider call fails (the read fails; nothing is lost)
     */
    void proveFenceForRead() {
        lease.proveForRead();
    }

    /** @return true when a read may be served now without proving the fence (its read lease is current) */
    boolean fenceProvenForRead() {
        return lease.provenForRead();
    }

    /** What the fence lease reaches of this log. */
    private final class LeaseHost implements FenceLease.Host {
        @Override
        public void checkFence(String op) {
            calls.call(op, false, () -> {
                provider.checkFence(log, fence);
                return null;
            });
        }

        @Override
        public void lostOwnership(FencedException e) {
            LogPipeline.this.lostOwnership(e);
        }

        @Override
        public FencedException fencedBy() {
            return fencedBy;
        }
    }

    /** Another writer claimed the log: stop writing it and stop serving the tree. */
    private void lostOwnership(FencedException e) {
        fencedBy = e;
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
        lease.checkInBackground(intervalNanos, closing || paused || fatal != null);
    }

    /**
     * Timer thread: once this log has applied no write for {@code idleMergeDelay}, merges its level 0 when that is
     * worth it ({@link CompactionPolicy#idle}); once per idle period. The memtable is not flushed for it.
     *
     * @param nowNanos {@link System#nanoTime()} now
     */
    void checkIdle(long nowNanos) {
        maintenance.checkIdle(nowNanos);
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
            if (calls.overdueCount() > 0) {
                out.add(new HealthIssue(log, HealthIssue.Kind.PROVIDER_CALL_OVERDUE, calls.overdueWhat()
                        + " has not returned within " + ctx.watchdog.timeoutMillis() + " ms"));
            }
            if (failed && fatal == null && failure != null) {
                out.add(new HealthIssue(log, HealthIssue.Kind.PROVIDER_FAILING, failure.toString()));
            }
        } finally {
            lock.unlock();
        }
        HealthIssue cp = checkpoints.issue();
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
            maintenance.stopCompactions();
            failParked(() -> new LatticeShuttingDownException("lattice is closing; the write to " + log
                    + " waited for the keys of an atomic write"));
            failOverflow(() -> new LatticeShuttingDownException("lattice is closing; the write to " + log
                    + " waited for room in the admission queue"));
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
            while ((!queue.isEmpty() || !inFlight.isEmpty() || recovering || maintenance.running())
                    && fatal == null) {
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
                queue.drain(w -> fail(w, new LatticeShuttingDownException("lattice closed before the write to "
                        + log + " was batched")));
                for (Batch b : inFlight) {
                    failAll(b, true, new LatticeShuttingDownException("close timed out"));
                }
            }
        } finally {
            lock.unlock();
        }
        if (drained && fatal == null) {
            maintenance.checkpointAtClose();
        }
        return drained;
    }
}
