package dev.lattice.engine;

import dev.lattice.engine.lsm.Manifest;
import dev.lattice.engine.lsm.ManifestCodec;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Moves logs of an open tree to other provider keys: copy the retained range and the latest checkpoint to the
 * target preserving offsets while writes continue, pause and drain the logs, copy what landed meanwhile, flip the
 * placement once for all logs with compare-and-set in the catalog, continue every log on its target. Any failure
 * before the flip resumes the logs on their sources with the placement unchanged; the partial copies on the targets
 * are harmless (a later move continues them).
 */
final class LogMover {

    private static final Logger LOG = LoggerFactory.getLogger(LogMover.class);
    private static final int COPY_PAGE_ENTRIES = 10_000;
    private static final long COPY_PAGE_BYTES = 8L << 20;

    private final EngineContext ctx;
    private final Catalog catalog;

    LogMover(EngineContext ctx, Catalog catalog) {
        this.ctx = ctx;
        this.catalog = catalog;
    }

    MovePlan plan(TreeImpl tree, Map<Integer, String> targets) {
        Placement cur = tree.placement();
        List<MovePlan.LogMove> steps = new ArrayList<>();
        for (Map.Entry<Integer, String> e : new java.util.TreeMap<>(targets).entrySet()) {
            int p = e.getKey();
            if (p < 0 || p >= cur.keys().size()) {
                throw new IllegalArgumentException("tree '" + tree.name() + "' has no partition " + p + " (it has "
                        + cur.keys().size() + ")");
            }
            LogId log = new LogId(tree.name(), p);
            ProviderHandle target = ctx.handle(e.getValue(), log); // the target must be registered
            long needed = (long) tree.maxValueBytes() + tree.maxKeyBytes() + WalRecord.SINGLE_PUT_OVERHEAD;
            if (target.descriptor().limits().maxEntryBytes() < needed) {
                throw new IllegalArgumentException("provider '" + e.getValue() + "' stores entries of at most "
                        + target.descriptor().limits().maxEntryBytes() + " bytes; tree '" + tree.name()
                        + "' accepts entries of " + needed + " bytes");
            }
            String from = cur.keyOf(p);
            if (from.equals(e.getValue())) {
                continue;
            }
            if (!tree.everyPipeline("a move")[p].state.layers.isEmpty()
                    && !target.descriptor().has(dev.lattice.spi.ProviderFeature.RUNS)) {
                throw new IllegalArgumentException("provider '" + e.getValue() + "' has no run store, and log " + log
                        + " keeps its data in runs: move it to a provider with ProviderFeature.RUNS");
            }
            WalStorageProvider src = ctx.handle(from, log).provider();
            LogState st = src.state(log);
            long cpBytes = src.checkpoints().latest(log).map(CheckpointInfo::sizeBytes).orElse(0L);
            steps.add(new MovePlan.LogMove(log, from, e.getValue(), st.lowestOffset(), st.committedTail(),
                    st.retainedEntries(), st.retainedPayloadBytes(), cpBytes));
        }
        return new MovePlan(tree.name(), cur.version(), steps);
    }

    Placement move(TreeImpl tree, Map<Integer, String> targets, Duration pauseTimeout) {
        MovePlan plan = plan(tree, targets);
        if (plan.logs().isEmpty()) {
            return tree.placement();
        }
        // phase 1: bulk copy while writes continue
        Map<LogId, Fence> targetFences = new LinkedHashMap<>();
        for (MovePlan.LogMove m : plan.logs()) {
            WalStorageProvider dst = ctx.handle(m.to(), m.log()).provider();
            Fence f = dst.claim(m.log());
            dst.reconcile(m.log(), f);
            targetFences.put(m.log(), f);
            copy(m, f, ctx.handle(m.from(), m.log()).provider().state(m.log()).committedTail());
        }
        // phase 2: pause, catch up, flip once, switch
        List<LogPipeline> paused = new ArrayList<>();
        boolean flipped = false;
        try {
            long deadline = System.nanoTime() + pauseTimeout.toNanos();
            Map<LogId, Long> tails = new LinkedHashMap<>();
            for (MovePlan.LogMove m : plan.logs()) {
                LogPipeline lp = tree.everyPipeline("a move")[m.log().partition()];
                paused.add(lp);
                tails.put(m.log(), lp.pauseAndDrain(deadline));
            }
            for (MovePlan.LogMove m : plan.logs()) {
                copy(m, targetFences.get(m.log()), tails.get(m.log()));
            }
            List<String> keys = new ArrayList<>(tree.placement().keys());
            for (MovePlan.LogMove m : plan.logs()) {
                keys.set(m.log().partition(), m.to());
            }
            Placement next = catalog.setPlacement(tree.name(), plan.placementVersion(), keys);
            flipped = true;
            for (MovePlan.LogMove m : plan.logs()) {
                tree.everyPipeline("a move")[m.log().partition()].switchTo(ctx.handle(m.to(), m.log()), targetFences.get(m.log()));
            }
            tree.placementChanged(next);
            LOG.info("moved {} log(s) of tree '{}' to placement version {}", plan.logs().size(), tree.name(),
                    next.version());
            return next;
        } finally {
            if (!flipped) {
                LOG.warn("move of tree '{}' did not complete; its logs continue on their sources", tree.name());
            }
            for (LogPipeline lp : paused) {
                lp.resume();
            }
        }
    }

    /**
     * Makes the target's copy of the log match the source through {@code throughTail}, preserving offsets: the
     * target's tail is first moved up to the source's trim point, then entries are copied, then the source's latest
     * checkpoint is published on the target once the target's tail covers it. When the source trims concurrently
     * (a checkpoint ran), the copy restarts from the new trim point.
     */
    private void copy(MovePlan.LogMove m, Fence fence, long throughTail) {
        LogId log = m.log();
        WalStorageProvider src = ctx.handle(m.from(), log).provider();
        WalStorageProvider dst = ctx.handle(m.to(), log).provider();
        ProviderLimits limits = dst.describe().limits();
        boolean restart = true;
        while (restart) {
            restart = false;
            long firstRetained = src.state(log).lowestOffset();
            if (dst.state(log).committedTail() < firstRetained - 1) {
                dst.trim(log, fence, firstRetained - 1); // moves the target's tail up to the source's trim point
            }
            long from = dst.state(log).committedTail();
            while (from < throughTail && !restart) {
                ReadPage page = src.read(log, from, COPY_PAGE_ENTRIES, COPY_PAGE_BYTES);
                if (page.isEmpty()) {
                    break;
                }
                if (page.entries().get(0).offset() != from + 1) {
                    restart = true; // the source trimmed past what we copied: jump to its new trim point
                    break;
                }
                List<byte[]> batch = new ArrayList<>();
                long batchBytes = 0;
                long first = from + 1;
                for (LogEntry e : page.entries()) {
                    if (e.offset() > throughTail) {
                        break;
                    }
                    if (!batch.isEmpty() && (batch.size() >= limits.maxEntriesPerBatch()
                            || batchBytes + e.payload().length > limits.maxBatchBytes())) {
                        dst.append(log, fence, EncodedBatch.of(first, batch));
                        first += batch.size();
                        batch = new ArrayList<>();
                        batchBytes = 0;
                    }
                    batch.add(e.payload());
                    batchBytes += e.payload().length;
                    from = e.offset();
                }
                if (!batch.isEmpty()) {
                    dst.append(log, fence, EncodedBatch.of(first, batch));
                }
            }
        }
        long dstTail = dst.state(log).committedTail();
        if (dstTail < throughTail) {
            throw new LatticeException("copy of " + log + " to '" + m.to() + "' stopped at " + dstTail + ", short of "
                    + throughTail);
        }
        Optional<CheckpointInfo> scp = src.checkpoints().latest(log);
        Optional<CheckpointInfo> dcp = dst.checkpoints().latest(log);
        if (scp.isPresent() && scp.get().throughOffset() <= dstTail
                && (dcp.isEmpty() || dcp.get().throughOffset() <= scp.get().throughOffset())) {
            CheckpointInfo info = scp.get();
            try (InputStream in = src.checkpoints().open(log, info)) {
                if (info.formatVersion() == ManifestCodec.FORMAT) {
                    // a manifest names runs: copy them first, publish the manifest, then drop the target's others
                    byte[] bytes = in.readAllBytes();
                    Manifest manifest = ManifestCodec.decode(log, info.throughOffset(), bytes);
                    java.util.Set<String> named = new java.util.HashSet<>();
                    java.util.Set<String> present = new java.util.HashSet<>();
                    for (RunInfo r : dst.runs().list(log)) {
                        if (r.complete()) {
                            present.add(r.id().value());
                        }
                    }
                    for (Manifest.RunRef r : manifest.runs()) {
                        named.add(r.id().value());
                        if (!present.contains(r.id().value())) {
                            copyRun(src.runs(), dst.runs(), log, fence, r);
                        }
                    }
                    dst.checkpoints().publish(log, fence, info.throughOffset(), info.formatVersion(),
                            new java.io.ByteArrayInputStream(bytes));
                    for (RunInfo r : dst.runs().list(log)) {
                        if (!named.contains(r.id().value())) {
                            dst.runs().delete(log, fence, r.id());
                        }
                    }
                } else {
                    dst.checkpoints().publish(log, fence, info.throughOffset(), info.formatVersion(), in);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("copying the checkpoint of " + log, e);
            }
        }
    }

    /** Streams one run from the source's run store to the target's, in the source's preferred read size. */
    private static void copyRun(RunStore from, RunStore to, LogId log, Fence fence, Manifest.RunRef r) {
        int chunk = Math.max(64 << 10, Math.min(4 << 20, from.limits().preferredReadBytes()));
        InputStream in = new InputStream() {
            private long pos;
            private final byte[] one = new byte[1];

            @Override
            public int read() {
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (pos >= r.lengthBytes()) {
                    return -1;
                }
                int n = from.read(log, r.id(), pos, b, off, Math.min(len, chunk));
                if (n > 0) {
                    pos += n;
                }
                return n;
            }
        };
        to.write(log, fence, r.id(), in, r.lengthBytes());
    }

    /** Drops a moved-away copy of a log from a provider the log is no longer placed on. */
    long reclaim(TreeImpl tree, int partition, String key) {
        LogId log = new LogId(tree.name(), partition);
        Placement cur = tree.placement();
        if (partition < 0 || partition >= cur.keys().size()) {
            throw new IllegalArgumentException("tree '" + tree.name() + "' has no partition " + partition);
        }
        if (cur.keyOf(partition).equals(key)) {
            throw new IllegalStateException("log " + log + " is placed on '" + key + "'; reclaim refuses it");
        }
        WalStorageProvider p = ctx.handle(key, log).provider();
        LogState before = p.state(log);
        Fence f = p.claim(log);
        p.reconcile(log, f);
        if (before.committedTail() >= 0) {
            p.trim(log, f, before.committedTail());
        }
        p.checkpoints().deleteBefore(log, Long.MAX_VALUE);
        long runBytes = 0;
        if (p.describe().has(dev.lattice.spi.ProviderFeature.RUNS)) {
            for (RunInfo r : p.runs().list(log)) {
                p.runs().delete(log, f, r.id());
                runBytes += r.lengthBytes();
            }
        }
        LogState after = p.state(log);
        return Math.max(0, before.retainedPayloadBytes() - after.retainedPayloadBytes()) + runBytes;
    }
}
