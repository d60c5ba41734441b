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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Opens a tree's partition logs: claims each log, reconciles it, loads its latest checkpoint (a partition snapshot
 * or a manifest of runs), replays the log tail after it and builds the log's {@link LogPipeline}; the partitions
 * replay in parallel on the I/O pool, bounded by the replay parallelism.
 *
 * <p>Thread-safety: one instance serves one {@link #replayAll} call at a time (the tree's open or a
 * {@link PartialTree#host}); the replay threads share only concurrent state (the atomic writes met, the checkpoint
 * bytes reserved) and each builds its own partition state.
 */
final class TreeReplay {

    private final EngineContext ctx;
    private final TreeImpl tree;
    private final String name;
    /** The tree's provider handles, by partition (the tree's own array, read when a log is replayed). */
    private final ProviderHandle[] handles;

    /**
     * @param tree the tree being opened (the pipelines belong to it)
     * @param handles the tree's provider handles, by partition
     */
    TreeReplay(EngineContext ctx, TreeImpl tree, ProviderHandle[] handles) {
        this.ctx = ctx;
        this.tree = tree;
        this.name = tree.name();
        this.handles = handles;
    }

    /**
     * Replays the given partitions' logs in parallel, bounded by the replay parallelism; on any failure gives back
     * what the others loaded and throws.
     *
     * @param which the partitions to open
     * @return their pipelines, in the order of {@code which}
     */
    LogPipeline[] replayAll(int[] which) {
        long t0 = System.nanoTime();
        Semaphore permits = new Semaphore(ctx.config.replayParallelism);
        List<CompletableFuture<LogPipeline>> futures = new ArrayList<>();
        ConcurrentHashMap<String, Txn> replayTxns = new ConcurrentHashMap<>();
        Function<String, Txn> txnOf = id -> replayTxns.computeIfAbsent(id, Txn::new);
        AtomicLong reserved = new AtomicLong();
        for (int p : which) {
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
                    LogPipeline lp = replay(log, txnOf, f, reserved);
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
        LogPipeline[] opened = new LogPipeline[which.length];
        for (int i = 0; i < which.length; i++) {
            int p = which[i];
            try {
                opened[i] = futures.get(i).get();
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
            for (LogPipeline lp : opened) {
                if (lp != null) {
                    lp.state.clear();
                }
            }
            throw failure;
        }
        long elapsed = System.nanoTime() - t0;
        ctx.stats.replayNanos.add(elapsed);
        ctx.meters.timer("lattice.replay.duration", "opening a tree: claim, reconcile, checkpoint and log replay",
                ctx.meters.tags("tree", name, "provider", providerTag())).record(elapsed, TimeUnit.NANOSECONDS);
        return opened;
    }

    /** The provider key of the tree's logs for the replay timer: the one key, or "mixed" when they differ. */
    private String providerTag() {
        String key = null;
        for (ProviderHandle h : handles) {
            if (key == null) {
                key = h.key();
            } else if (!key.equals(h.key())) {
                return "mixed";
            }
        }
        return key == null ? "none" : key;
    }

    /**
     * Replays one log: claim, reconcile, latest checkpoint, then the log tail through the committed tail.
     *
     * @param txnOf the atomic writes met so far in any partition of the open, by id
     * @param outcome the open's future for this log; once done (a call passed its deadline) the replay stops
     * @param reserved checkpoint bytes the partitions replaying beside this one are loading (for the budget check)
     * @return the log's pipeline, at the committed tail
     */
    private LogPipeline replay(LogId log, Function<String, Txn> txnOf, CompletableFuture<LogPipeline> outcome,
                               AtomicLong reserved) {
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
                long pageEntries = 0;
                long pageBytes = 0;
                try {
                    for (LogEntry e : page.entries()) {
                        if (e.offset() != from + 1) {
                            throw new CorruptLogException(log, from + 1, "missing entry: the log jumps from " + from
                                    + " to " + e.offset());
                        }
                        WalRecord.Decoded d = WalRecord.decode(log, e.offset(), e.payload());
                        if (d.kind() == WalRecord.KIND_CATALOG || d.kind() < WalRecord.KIND_MUTATIONS
                                || d.kind() > WalRecord.KIND_DECISION) {
                            throw new CorruptLogException(log, e.offset(), "not a tree entry (kind " + d.kind() + ")");
                        }
                        ps.apply(d.kind(), d.mutations(), d.version(), null);
                        ps.appliedOffset = e.offset();
                        from = e.offset();
                        pageEntries++;
                        pageBytes += e.payload().length;
                    }
                } finally {
                    // counted once per page rather than per entry (shared adders and a meter)
                    ctx.stats.replayEntries.add(pageEntries);
                    ctx.stats.replayBytes.add(pageBytes);
                    replayed.increment(pageEntries);
                }
            }
            if (ps.appliedOffset != st.committedTail()) {
                throw new CorruptLogException(log, ps.appliedOffset + 1, "replay ended at offset " + ps.appliedOffset
                        + " but the committed tail is " + st.committedTail());
            }
            return new LogPipeline(ctx, handle, tree, log, fence, ps, st.committedTail(), lastCheckpoint);
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
}
