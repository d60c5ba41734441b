package dev.lattice.engine;

import dev.lattice.engine.lsm.Manifest;
import dev.lattice.engine.lsm.ManifestCodec;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.WalStorageProvider;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One log followed by a read-only follower ({@link LatticeFollower}): a partition state built from the log's latest
 * checkpoint (a manifest of runs, or a legacy snapshot) and the committed entries after it, kept up to date by
 * {@link #poll}, never claiming the log. The owner may trim, flush, compact and move the log meanwhile: when the
 * follower finds the log trimmed past what it applied, a run it needs deleted, or its memtable over
 * {@code memtableBytes} while a newer checkpoint exists, it builds a new state from the latest checkpoint and swaps it
 * in ({@link #reload}); readers keep using the state they started with.
 *
 * <p>Thread-safe: {@link #poll} and {@link #reload} run under one lock; {@link #state} is read without it.
 */
final class FollowerLog {

    /** How often a log whose memtable passed the budget asks for a newer checkpoint. */
    private static final long CHECKPOINT_PROBE_NANOS = 1_000_000_000L;

    final LogId log;
    private final EngineContext ctx;
    private final FollowerTxns txns;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile ProviderHandle handle;
    private volatile PartitionState state;
    /** The state being built from a checkpoint, before readers see it (poller thread only). */
    private PartitionState building;
    /** Through-offset of the checkpoint {@link #state} was built from, -1 for none. */
    private long checkpointOffset = -1;
    private long lastProbeNanos;
    /** Committed tail seen by the last poll. */
    private volatile long observedTail = -1;
    /** When the last poll found nothing committed beyond what is applied (System.nanoTime). */
    private volatile long caughtUpNanos;
    private volatile long reloads;

    FollowerLog(EngineContext ctx, ProviderHandle handle, LogId log, FollowerTxns txns) {
        this.ctx = ctx;
        this.handle = handle;
        this.log = log;
        this.txns = txns;
    }

    /** @return the provider the log is followed on now */
    WalStorageProvider currentProvider() {
        return handle.provider();
    }

    /** @return the state atomic-write resolution works on: the one being built, else the readers' one */
    PartitionState txnState() {
        return building != null ? building : state;
    }

    /** @return true while a new state is being built from a checkpoint (poller thread) */
    boolean isBuilding() {
        return building != null;
    }

    /** @return the state readers use now */
    PartitionState state() {
        return state;
    }

    /** Builds the first state: latest checkpoint plus the committed tail. */
    void open() {
        lock.lock();
        try {
            PartitionState ps = build();
            txns.resolveLoaded(this, ps);
            state = ps;
            txns.afterSwap();
            caughtUpNanos = System.nanoTime();
        } finally {
            lock.unlock();
        }
    }

    /** The log moved to another provider (a placement flip seen in the catalog): follow it there. */
    void moveTo(ProviderHandle next) {
        lock.lock();
        try {
            if (!next.key().equals(handle.key())) {
                handle = next;
                reload("moved to provider '" + next.key() + "'");
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Applies what the owner committed since the last poll, up to the committed tail of the moment.
     *
     * @return entries applied
     */
    long poll() {
        lock.lock();
        try {
            return catchUp();
        } finally {
            lock.unlock();
        }
    }

    /** Rebuilds the state from the latest checkpoint after a read found a run gone (the owner compacted it). */
    void reloadAfterMissingRun(RunNotFoundException e) {
        lock.lock();
        try {
            reload("run " + e.getMessage() + " is gone");
        } finally {
            lock.unlock();
        }
    }

    /** One poll: a read from the applied offset (one provider call when nothing is new), then as many as needed. */
    private long catchUp() {
        WalStorageProvider p = handle.provider();
        PartitionState ps = state;
        if (ps.memtableBytes > ctx.config.memtableBytes && System.nanoTime() - lastProbeNanos > CHECKPOINT_PROBE_NANOS) {
            lastProbeNanos = System.nanoTime();
            Optional<CheckpointInfo> cp = ctx.bounded(log, "checkpoint latest", () -> p.checkpoints().latest(log));
            if (cp.isPresent() && cp.get().throughOffset() > checkpointOffset) {
                reload("memtable of " + ps.memtableBytes + " bytes and a newer checkpoint");
                return 0;
            }
        }
        long applied;
        try {
            applied = tail(ps, p, Long.MAX_VALUE);
        } catch (TrimmedMeanwhile e) {
            // the next committed entry lies past a gap: the owner trimmed what this state had not applied yet
            reload("the owner trimmed through " + e.watermark + ", past the applied offset " + ps.appliedOffset);
            return 0;
        }
        if (ps.appliedOffset >= observedTail) {
            caughtUpNanos = System.nanoTime();
            txns.pollFinished(log);
        }
        return applied;
    }

    /** Builds a new state from the latest checkpoint and swaps it in; the old one is given back to the budget. */
    private void reload(String why) {
        PartitionState old = state;
        PartitionState next = build();
        // the new state may be ahead of the other followed logs (its checkpoint holds values flattened into runs):
        // readers wait while it is swapped in and every other log is caught up and settled to the same point
        txns.readers().writeLock().lock();
        try {
            txns.resolveLoaded(this, next);
            state = next;
            txns.afterSwap();
            txns.settleAfterReload(this);
        } finally {
            txns.readers().writeLock().unlock();
        }
        reloads++;
        ctx.meters.counter("lattice.follower.reloads", "times a follower rebuilt a partition from its latest checkpoint",
                "reloads", ctx.meters.tags("partition", Integer.toString(log.partition()), "tree", log.tree())).increment();
        if (old != null) {
            old.releaseBudget(); // not clear(): readers that started on it may still be iterating it
        }
        caughtUpNanos = System.nanoTime();
        org.slf4j.LoggerFactory.getLogger(FollowerLog.class).debug("{}: follower reloaded ({})", log, why);
    }

    private PartitionState build() {
        WalStorageProvider p = handle.provider();
        for (int attempt = 1; ; attempt++) {
            PartitionState ps = new PartitionState(log, ctx.memoryUsed, ctx.atomics, txns::txn);
            building = ps;
            try {
                checkpointOffset = loadCheckpoint(ps, p);
                LogState st = ctx.bounded(log, "state", () -> p.state(log));
                if (st.trimWatermark() > ps.appliedOffset) {
                    throw new TrimmedMeanwhile(st.trimWatermark());
                }
                tail(ps, p, st.committedTail());
                return ps;
            } catch (TrimmedMeanwhile e) {
                ps.clear(); // the owner published a newer checkpoint and trimmed between our two reads: again
                if (attempt >= 5) {
                    throw new CorruptLogException(log, ps.appliedOffset + 1, "the log is trimmed through "
                            + e.watermark + " but the latest checkpoint covers less, " + attempt + " reads in a row");
                }
            } catch (RuntimeException | Error e) {
                ps.clear();
                throw e;
            } finally {
                building = null;
            }
        }
    }

    private long loadCheckpoint(PartitionState ps, WalStorageProvider p) {
        Optional<CheckpointInfo> cp = ctx.bounded(log, "checkpoint latest", () -> p.checkpoints().latest(log));
        if (cp.isEmpty()) {
            return -1;
        }
        CheckpointInfo info = cp.get();
        int format = info.formatVersion();
        try (InputStream in = ctx.bounded(log, "checkpoint open", () -> p.checkpoints().open(log, info))) {
            if (format == ManifestCodec.FORMAT) {
                if (!handle.descriptor().has(ProviderFeature.RUNS)) {
                    throw new CorruptLogException(log, info.throughOffset(), "the latest checkpoint is a manifest of "
                            + "runs, but provider '" + handle.descriptor().name() + "' has no run store");
                }
                Manifest m = ManifestCodec.decode(log, info.throughOffset(), in.readAllBytes());
                List<RunHandle> runs = new ArrayList<>(m.runs().size());
                for (Manifest.RunRef r : m.runs()) {
                    runs.add(new RunHandle(r, p.runs(), log, ctx.blockCache));
                }
                ps.loadManifest(m, runs);
            } else if (format == PartitionState.SNAPSHOT_FORMAT || format == PartitionState.SNAPSHOT_FORMAT_V1) {
                ps.load(info.throughOffset(), in, Long.MAX_VALUE);
            } else {
                throw new CorruptLogException(log, info.throughOffset(), "checkpoint format " + format
                        + " is not supported");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading checkpoint of " + log, e);
        }
        return info.throughOffset();
    }

    /**
     * Applies committed entries after {@code ps.appliedOffset}, page by page, up to {@code through} or the committed
     * tail the pages report, whichever is lower; returns how many.
     *
     * @throws TrimmedMeanwhile if the first entry read lies past a gap (trimmed before it was applied)
     */
    private long tail(PartitionState ps, WalStorageProvider p, long through) {
        long n = 0;
        long limit = through;
        while (ps.appliedOffset < limit) {
            long from = ps.appliedOffset;
            ReadPage page = ctx.bounded(log, "read", () -> p.read(log, from, ctx.config.replayPageEntries,
                    ctx.config.replayPageBytes));
            observedTail = page.committedTail();
            limit = Math.min(limit, page.committedTail());
            if (page.isEmpty()) {
                if (page.committedTail() > ps.appliedOffset) {
                    throw new TrimmedMeanwhile(page.committedTail()); // committed, yet nothing readable: trimmed
                }
                break;
            }
            for (LogEntry e : page.entries()) {
                if (e.offset() != ps.appliedOffset + 1) {
                    if (e.offset() > ps.appliedOffset + 1) {
                        throw new TrimmedMeanwhile(e.offset() - 1);
                    }
                    continue;
                }
                WalRecord.Decoded d = WalRecord.decode(log, e.offset(), e.payload());
                if (d.kind() == WalRecord.KIND_CATALOG || d.kind() < WalRecord.KIND_MUTATIONS
                        || d.kind() > WalRecord.KIND_DECISION) {
                    throw new CorruptLogException(log, e.offset(), "not a tree entry (kind " + d.kind() + ")");
                }
                txns.apply(this, ps, d);
                ps.appliedOffset = e.offset();
                n++;
            }
        }
        return n;
    }

    /** @return committed entries the follower has not applied yet, as of the last poll */
    long lagEntries() {
        PartitionState ps = state;
        return ps == null ? 0 : Math.max(0, observedTail - ps.appliedOffset);
    }

    /** @return seconds since the follower last saw this log fully applied */
    double stalenessSeconds() {
        return (System.nanoTime() - caughtUpNanos) / 1e9;
    }

    /** @return how many times the state was rebuilt from a checkpoint */
    long reloads() {
        return reloads;
    }

    /** The log was trimmed past the position being read; the caller rebuilds from the latest checkpoint. */
    private static final class TrimmedMeanwhile extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final long watermark;

        TrimmedMeanwhile(long watermark) {
            super(null, null, false, false);
            this.watermark = watermark;
        }
    }
}
