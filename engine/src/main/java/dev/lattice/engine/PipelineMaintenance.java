package dev.lattice.engine;

import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.WalStorageProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The checkpoint and flush scheduling of one log: asks the checkpoint policy after each commit (and again once a
 * checkpoint ended or a flush was asked for) and runs what is due in the background, one task at a time: a snapshot
 * of the partition published as its checkpoint, or, where the provider has a run store, a memtable flush into runs
 * and the compactions after it ({@link RunMaintenance}). Also the maintenance after the open, the idle merge of
 * level 0 and the checkpoint at close.
 *
 * <p>Thread-safety: the policy is touched only by the holder of the pipeline's applier role; {@code checkpointDue}
 * is guarded by the pipeline's lock; the running flag, the flush request and the run maintenance are safe to read
 * on any thread. The pipeline's own state is reached only through {@link Host}.
 */
final class PipelineMaintenance {

    /** What the maintenance reaches of its pipeline. */
    interface Host {
        /**
         * Under the lock: takes the applier role (so that no batch is applied meanwhile) unless a commit or a
         * recovery runs, or the log failed, is lost, closing or paused.
         *
         * @return true if this thread took it
         */
        boolean takeApplierRole();

        /** Takes the lock: gives the applier role back and lets the pipeline move on. */
        void releaseApplierRole();

        /** @return true while a commit holds the applier role (read under the lock) */
        boolean committing();

        /** @return true once the log is closing or lost */
        boolean stopped();

        /** @return true when the log is lost to this process (fenced out or failed for good) */
        boolean lost();

        /** @return true while an idle log is not looked at: closing, paused, lost or failed (read under the lock) */
        boolean halted();

        /** Under the lock: runs a step on this thread, a waiting writer's or the pool (the pipeline's dispatch). */
        void dispatch(Runnable step);

        /** @return the descriptor of the provider the log is on now */
        ProviderDescriptor descriptor();

        /** Another writer claimed the log. */
        void lostOwnership(FencedException e);
    }

    /** Delay between a tree's open and its logs' orphan collection, conversion and due compactions. */
    static final long AFTER_OPEN_DELAY_MILLIS = 2_000;

    // the category the pipeline always logged under
    private static final Logger LOG = LoggerFactory.getLogger(LogPipeline.class);

    private final LogId log;
    private final EngineContext ctx;
    private final PartitionState state;
    private final CheckpointPublisher checkpoints;
    private final PipelineMeters meters;
    private final OverdueCalls calls;
    private final ReentrantLock lock;
    private final Condition changed;
    private final Host host;

    // the policy is touched by the applier thread only, plus the running flag
    private final CheckpointPolicy policy;
    /** Timer thread only: when this log stopped changing (idle merge of level 0). */
    private final IdleWatch idleWatch;
    private final AtomicBoolean checkpointRunning = new AtomicBoolean();
    // a checkpoint finished: the policy is checked again by the next holder of the applier role (under lock)
    private boolean checkpointDue;
    // a flush was asked for by a writer that found the memory budget spent (under lock / applier)
    private volatile boolean flushRequested;
    private final AtomicLong flushesDone = new AtomicLong();
    /** Flush and compaction when the provider has a run store; null otherwise (whole-partition checkpoints). */
    private volatile RunMaintenance lsm;

    /**
     * @param entriesSinceCheckpoint log entries after the latest checkpoint (replayed at open)
     * @param lock the pipeline's lock, which guards {@code checkpointDue} and the pipeline's state
     * @param changed the pipeline's condition signalled when its state changed
     * @param provider the provider the log is on, with {@code descriptor} and {@code fence}
     */
    PipelineMaintenance(LogId log, EngineContext ctx, PartitionState state, long entriesSinceCheckpoint,
                        CheckpointPublisher checkpoints, PipelineMeters meters, OverdueCalls calls,
                        ReentrantLock lock, Condition changed, Host host,
                        WalStorageProvider provider, ProviderDescriptor descriptor, Fence fence) {
        this.log = log;
        this.ctx = ctx;
        this.state = state;
        this.checkpoints = checkpoints;
        this.meters = meters;
        this.calls = calls;
        this.lock = lock;
        this.changed = changed;
        this.host = host;
        this.policy = new CheckpointPolicy(ctx.config, entriesSinceCheckpoint);
        this.idleWatch = new IdleWatch(ctx.config.idleMergeDelay);
        this.lsm = descriptor.has(ProviderFeature.RUNS) ? startRunMaintenance(provider, fence) : null;
    }

    /** Sets up flush and compaction; collects orphan runs and converts a whole-partition checkpoint in the background. */
    private RunMaintenance startRunMaintenance(WalStorageProvider provider, Fence fence) {
        RunMaintenance r = new RunMaintenance(log, provider.runs(), fence, state, ctx, this::maintenanceCall,
                meters.tags);
        if (state.loadedManifest != null) {
            r.loaded(state.loadedManifest);
        }
        meters.runGauges(state);
        return r;
    }

    /**
     * Under the lock, while the pipeline is paused and drained: the log continues on another provider.
     *
     * @param provider the provider the log is on now, with {@code descriptor} and the fence claimed there
     */
    void switchTo(WalStorageProvider provider, ProviderDescriptor descriptor, Fence fence) {
        RunMaintenance old = lsm;
        if (descriptor.has(ProviderFeature.RUNS)) {
            state.layers.rebind(provider.runs(), ctx.blockCache);
            RunMaintenance next = new RunMaintenance(log, provider.runs(), fence, state, ctx,
                    this::maintenanceCall, meters.tags);
            if (old != null) {
                next.inherit(old);
            } else {
                meters.runGauges(state);
            }
            lsm = next;
        } else {
            lsm = null;
        }
    }

    /** The tree opened: starts the log's maintenance after the open (see {@link LogPipeline#opened()}). */
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

    /**
     * After the open, beside the log's flushes (orphan collection skips runs of this process's epoch): deletes runs
     * no manifest names; then asks for the conversion of a whole-partition checkpoint, or for a compaction that is
     * due, through the normal flush path.
     */
    private void afterOpen(RunMaintenance r) {
        if (host.stopped()) {
            return;
        }
        try {
            r.collectOrphans();
        } catch (FencedException e) {
            host.lostOwnership(e);
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
            if (!checkpointDue || host.stopped()) {
                return;
            }
        } finally {
            lock.unlock();
        }
        ctx.timer.schedule(this::checkPolicySoon, 20, TimeUnit.MILLISECONDS);
    }

    /** Wakes the pipeline's waiters (a compaction ended). */
    private void signalChanged() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** @return true while a checkpoint, flush or compaction of this log runs (moves and close wait for them) */
    boolean running() {
        return checkpointRunning.get() || compactionRunning();
    }

    /** @return true while this log's compaction runs */
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

    /** A maintenance provider call under the call deadline (only logged when overdue). */
    private <T> T maintenanceCall(String op, java.util.function.Supplier<T> call) {
        return calls.call(op, false, call);
    }

    /**
     * Publishes a manifest as the log's checkpoint through offset {@code through} and trims the log to it.
     *
     * @return false when it failed (a lost log stops its run maintenance)
     */
    private boolean publishManifest(byte[] manifest, long through) {
        boolean ok = publishAndTrim(manifest, through, dev.lattice.engine.lsm.ManifestCodec.FORMAT);
        if (!ok && host.lost()) {
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
     * Everything applied before the call is in runs when it returns true. A flush already in flight at the call
     * does not count: its memtable froze before the writes that came after it.
     *
     * @return false when it did not end within {@code timeoutMillis}
     */
    boolean flushAndWait(long timeoutMillis) {
        if (lsm == null) {
            return true;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        long askedAt = -1; // flushes done when this call asked for its own (none in flight then)
        while (System.nanoTime() < deadline) {
            lock.lock();
            try {
                boolean idle = !checkpointRunning.get() && !host.committing() && !compactionRunning()
                        && state.layers.current().frozen().isEmpty();
                if (idle && (state.memtableBytes == 0 || (askedAt >= 0 && flushesDone.get() > askedAt))) {
                    return true;
                }
                if (idle && !flushRequested && askedAt < 0) {
                    askedAt = flushesDone.get();
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

    /** @return true while a flush was asked for and its memtable not yet frozen */
    boolean flushRequested() {
        return flushRequested;
    }

    /** @return true when this log flushes memtables into runs */
    boolean hasRuns() {
        return lsm != null;
    }

    /** Applier thread: a batch of {@code n} entries and {@code payloadBytes} bytes was applied. */
    void applied(int n, long payloadBytes) {
        policy.applied(n, payloadBytes);
    }

    /** Applier thread: snapshots the state when the policy says so and publishes it in the background. */
    void maybeStartCheckpoint() {
        if (!policy.due(host.descriptor().replayCost(), policy.memtableFull(lsm != null, flushRequested, state))) {
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
        policy.reset();
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
    void maybeCheckpointIdle() {
        if (!checkpointDue || !host.takeApplierRole()) {
            return;
        }
        checkpointDue = false;
        host.dispatch(() -> {
            try {
                maybeStartCheckpoint();
            } finally {
                host.releaseApplierRole();
            }
        });
    }

    /** Applier (holding the maintenance flag): freezes the memtable and flushes it in the background. */
    private void startFlush() {
        flushRequested = false;
        state.legacyCheckpointLoaded = false;
        FrozenMemtable f = state.freeze();
        policy.reset();
        ctx.maintenance.execute(() -> {
            try {
                RunMaintenance r = lsm;
                if (r.flush(f, this::publishManifest, Integer.MAX_VALUE)) {
                    flushesDone.incrementAndGet();
                    r.compactInBackground(ctx.maintenance, this::publishManifest, this::signalChanged);
                }
            } catch (FencedException e) {
                host.lostOwnership(e);
            } catch (RuntimeException e) {
                LOG.warn("log {}: flush or compaction failed: {}", log, e.toString());
            } finally {
                maintenanceDone();
            }
        });
    }

    /** Publishes a checkpoint ({@code format}: snapshot or manifest) through {@code through} and trims the log. */
    private boolean publishAndTrim(byte[] snapshot, long through, int format) {
        return checkpoints.publishAndTrim(snapshot, through, format);
    }

    /**
     * Timer thread: once this log has applied no write for {@code idleMergeDelay}, merges its level 0 when that is
     * worth it ({@link CompactionPolicy#idle}); once per idle period. The memtable is not flushed for it.
     *
     * @param nowNanos {@link System#nanoTime()} now
     */
    void checkIdle(long nowNanos) {
        RunMaintenance r = lsm;
        if (r == null) {
            return;
        }
        long applied;
        lock.lock();
        try {
            if (host.halted()) {
                return;
            }
            applied = state.appliedOffset;
        } finally {
            lock.unlock();
        }
        if (!idleWatch.idleNow(applied, nowNanos) || !r.idleMergeWorthwhile(0)) {
            return;
        }
        LOG.debug("log {}: idle for {}; merging level 0", log, ctx.config.idleMergeDelay);
        r.requestIdleMerge(); // the memtable stays: a tree that fits in memory keeps reading from it
        r.compactInBackground(ctx.maintenance, this::publishManifest, this::signalChanged);
    }

    /** Under the lock: the log is closing; compactions stop. */
    void stopCompactions() {
        if (lsm != null) {
            lsm.stopCompactions();
        }
    }

    /**
     * At close, once drained and not lost: checkpoints (flushes) what was applied since the last checkpoint, on
     * this thread, unless a checkpoint runs.
     */
    void checkpointAtClose() {
        if (!checkpointRunning.get() && state.appliedOffset > checkpoints.lastOffset()) {
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
    }
}
