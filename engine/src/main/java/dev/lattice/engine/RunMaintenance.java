package dev.lattice.engine;

import dev.lattice.engine.lsm.CompactionFilter;
import dev.lattice.engine.lsm.EntryMerger;
import dev.lattice.engine.lsm.RangeTombstone;
import dev.lattice.engine.lsm.Manifest;
import dev.lattice.engine.lsm.ManifestCodec;
import dev.lattice.engine.lsm.RunEntry;
import dev.lattice.engine.lsm.RunWriter;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Flush and compaction of one partition (ARCHITECTURE.md 5.3, 5.4): writes a frozen memtable as level-0 runs,
 * merges runs into deeper levels (leveled, size ratio {@code levelSizeRatio}), builds the manifest that commits each
 * change, and collects runs that no manifest names. The caller publishes each manifest (as the log's checkpoint)
 * before this class changes the partition's layers, so a crash at any point leaves the previous manifest and its
 * runs intact; runs written for a manifest that was never published are orphans, deleted at the next open.
 *
 * <p>One task at a time per partition (the log's maintenance flag); not thread-safe otherwise.
 */
final class RunMaintenance {

    private static final Logger LOG = LoggerFactory.getLogger(RunMaintenance.class);
    private static final int BITS_PER_KEY = 10;

    /** Publishes a manifest as the log's checkpoint (and trims the log to it); false when it failed. */
    interface Publisher {
        boolean publish(byte[] manifest, long throughOffset);
    }

    /** Runs a provider call under the engine's call deadline. */
    interface Calls {
        <T> T call(String op, Supplier<T> call);
    }

    private final LogId log;
    private final RunStore store;
    private final Fence fence;
    private final PartitionState state;
    private final LatticeConfig config;
    private final EngineContext ctx;
    private final Calls calls;
    private final long maxRunBytes;
    private final int blockBytes;
    private final AtomicLong sequence = new AtomicLong();
    private volatile boolean stopping;
    /** Held while a manifest is built from the current layers, published and swapped in (flush or compaction). */
    private final java.util.concurrent.locks.ReentrantLock publishLock = new java.util.concurrent.locks.ReentrantLock();
    private final java.util.concurrent.atomic.AtomicBoolean compacting = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile boolean compactionsStopped;
    /** Set by {@link #requestIdleMerge}, cleared when the idle merge is picked or found not worth it. */
    private volatile boolean idleMergeWanted;
    private final CompactionPolicy policy;
    private final Counter idleMerges;
    // the state of the last published manifest (compactions republish it with other runs)
    private long manifestThrough = -1;
    private long manifestVersion;
    private byte[] manifestEngineState = new byte[8];
    private final Timer flushTimer;
    private final Timer compactionTimer;
    private final Counter bytesWritten;
    private final Counter compactionBytesRead;
    private final Counter flushBytesWritten;
    private final Counter compactionBytesWritten;

    RunMaintenance(LogId log, RunStore store, Fence fence, PartitionState state, EngineContext ctx, Calls calls,
                   Tags tags) {
        this.log = log;
        this.store = store;
        this.fence = fence;
        this.state = state;
        this.ctx = ctx;
        this.config = ctx.config;
        this.calls = calls;
        RunLimits limits = store.limits();
        this.maxRunBytes = limits.maxRunBytes();
        this.blockBytes = config.runBlockBytes > 0 ? config.runBlockBytes
                : Math.max(4096, Math.min(64 << 10, limits.preferredReadBytes()));
        EngineMeters m = ctx.meters;
        this.flushTimer = m.timer("lattice.flush.duration", "memtable flush: run writes and manifest publish", tags);
        this.compactionTimer = m.timer("lattice.compaction.duration", "one compaction: merge, run writes, manifest",
                tags);
        this.bytesWritten = m.counter("lattice.runs.written.bytes", "bytes of runs written by flushes and compactions",
                "bytes", tags);
        this.flushBytesWritten = m.counter("lattice.flush.written.bytes", "bytes of level-0 runs written by flushes",
                "bytes", tags);
        this.compactionBytesWritten = m.counter("lattice.compaction.written.bytes",
                "bytes of runs written by compactions", "bytes", tags);
        this.compactionBytesRead = m.counter("lattice.compaction.read.bytes", "bytes of runs read by compactions",
                "bytes", tags);
        this.idleMerges = m.counter("lattice.compaction.idle.merges", "merges of an idle partition's level 0", null,
                tags);
        this.policy = new CompactionPolicy(config);
        state.runDeleter = r -> calls.call("run delete", () -> {
            store.delete(log, fence, r.ref.id());
            return null;
        });
    }

    /** After a manifest was loaded at open: what compactions republish. */
    void loaded(Manifest m) {
        manifestThrough = m.throughOffset();
        manifestVersion = m.lastVersion();
        manifestEngineState = m.engineState();
    }

    /** After a move: continues from the manifest state of the maintenance on the previous provider. */
    void inherit(RunMaintenance previous) {
        manifestThrough = previous.manifestThrough;
        manifestVersion = previous.manifestVersion;
        manifestEngineState = previous.manifestEngineState;
        sequence.set(previous.sequence.get());
    }

    /** Stops between steps (the log was lost); a half-done flush or compaction leaves only orphans. */
    void stop() {
        stopping = true;
        compactionsStopped = true;
    }

    /** Stops compactions between steps (close); flushes still run. */
    void stopCompactions() {
        compactionsStopped = true;
    }

    // ------------------------------------------------------------------ flush

    /**
     * Writes a frozen memtable as level-0 runs, publishes the manifest that names them, then swaps them in for the
     * memtable. Retries a failed run write or publish with backoff until it succeeds, the log is lost, or the engine
     * stops, or {@code maxAttempts} failed (then the frozen memtable stays readable and the log untrimmed).
     *
     * @return true when published
     */
    boolean flush(FrozenMemtable f, Publisher publisher, int maxAttempts) {
        long t0 = System.nanoTime();
        long backoff = 50;
        for (int attempt = 1; !stopping && attempt <= maxAttempts; attempt++) {
            try {
                PartitionLayers.Layers before = state.layers.current();
                boolean bottom = before.runs().isEmpty() && before.frozen().size() == 1;
                // covered entries dropped (the range deletes go into the run), expired values become tombstones,
                // tombstones dropped when nothing lies below
                Iterator<RunEntry> entries = EntryMerger.collect(CompactionFilter.apply(flushEntries(f, false),
                        ungated(f.ranges()), config.clock.millis()), new long[0], bottom);
                List<RunHandle> written = writeRuns(entries, 0, config.targetRunBytes, f.ranges(), f.estimateBytes(),
                        true);
                publishLock.lock();
                try {
                    List<Manifest.RunRef> refs = new ArrayList<>();
                    written.forEach(h -> refs.add(h.ref));
                    state.layers.current().runs().forEach(h -> refs.add(h.ref)); // a compaction may have published
                    Manifest m = new Manifest(f.throughOffset(), f.maxVersion(), refs, f.engineState());
                    if (publisher.publish(ManifestCodec.encode(m), f.throughOffset())) {
                        state.layers.flushed(f, written);
                        state.flushed(f);
                        loaded(m);
                        ctx.stats.flushes.increment();
                        flushTimer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                        return true;
                    }
                } finally {
                    publishLock.unlock();
                }
                // not deleted: a publish that failed with an unknown outcome may have landed and name these runs;
                // runs no manifest names are collected by the next owner's open
            } catch (dev.lattice.spi.FencedException e) {
                throw e;
            } catch (RuntimeException e) {
                LOG.warn("log {}: flush through {} failed, retrying in {} ms: {}", log, f.throughOffset(), backoff,
                        e.toString());
            }
            if (stopping || attempt == maxAttempts) {
                break;
            }
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            backoff = Math.min(5_000, backoff * 2);
        }
        return false;
    }

    /** The run entries of a frozen memtable in key order; tombstones dropped when nothing lies below. */
    private static Iterator<RunEntry> flushEntries(FrozenMemtable f, boolean bottom) {
        Iterator<Map.Entry<String, Object>> it = f.map().entrySet().iterator();
        return new Iterator<>() {
            private RunEntry next;

            @Override
            public boolean hasNext() {
                while (next == null && it.hasNext()) {
                    Map.Entry<String, Object> e = it.next();
                    Object o = f.chainViews().getOrDefault(e.getKey(), e.getValue());
                    if (o instanceof PartitionState.TxnNode) {
                        o = PartitionState.committedTop(o, Set.of()); // not chained at the freeze: published
                    }
                    if (o instanceof Versioned v) {
                        next = RunEntry.put(e.getKey(), v.version(), v.value(), v.expiresAtMillis());
                    } else if (o instanceof Tombstone t && !bottom) {
                        next = RunEntry.delete(e.getKey(), Math.max(0, t.version()));
                    }
                }
                return next != null;
            }

            @Override
            public RunEntry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                RunEntry e = next;
                next = null;
                return e;
            }
        };
    }

    // ------------------------------------------------------------------ compaction

    /**
     * Runs the compactions {@link CompactionPolicy#next} finds due, one after the other, then the idle merge of level
     * 0 if one was asked for ({@link #requestIdleMerge}) and is worth it.
     *
     * @return compactions done
     */
    int compact(Publisher publisher) {
        int done = 0;
        while (!compactionsStopped && done < 64) {
            PartitionLayers.Layers l = state.layers.current();
            CompactionPolicy.Pick pick = pick(l);
            if (pick == null) {
                return done;
            }
            if (pick.idle()) {
                idleMergeWanted = false; // once per idle period, whatever its outcome
            }
            if (!compactOnce(l, pick, publisher)) {
                return done;
            }
            if (pick.idle()) {
                idleMerges.increment();
            }
            done++;
        }
        return done;
    }

    /** The regular compaction due, else the idle merge when one was asked for and is worth it; null when neither. */
    private CompactionPolicy.Pick pick(PartitionLayers.Layers l) {
        CompactionPolicy.Pick p = policy.next(l, sequence.get());
        if (p == null && idleMergeWanted) {
            p = policy.idle(l);
            if (p == null) {
                idleMergeWanted = false;
            }
        }
        return p;
    }

    /**
     * Asks for the merge of level 0 at the next compaction pass ({@link CompactionPolicy#idle}), once: the log has
     * applied no write for {@code idleMergeDelay}.
     */
    void requestIdleMerge() {
        idleMergeWanted = true;
    }

    /**
     * Whether an idle merge is worth starting now.
     *
     * @param memtableBytes bytes of a memtable that would be flushed into level 0 first, 0 for none
     * @return true when level 0 (plus that memtable) is worth merging
     */
    boolean idleMergeWorthwhile(long memtableBytes) {
        return CompactionPolicy.idleMergeWorthwhile(state.layers.current().level(0), memtableBytes);
    }

    /**
     * Starts the due compactions as one background task, unless one runs already; flushes go on meanwhile (they
     * only add level-0 runs, and each publish builds its manifest from the layers of the moment).
     *
     * @param done run when the task ends (whatever its outcome)
     */
    void compactInBackground(java.util.concurrent.Executor executor, Publisher publisher, Runnable done) {
        if (compactionsStopped || !compactionDue() || !compacting.compareAndSet(false, true)) {
            return;
        }
        try {
            executor.execute(() -> {
                try {
                    compact(publisher);
                } catch (RuntimeException e) {
                    LOG.warn("log {}: compaction failed (retried after the next flush): {}", log, e.toString());
                } finally {
                    compacting.set(false);
                    done.run();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            compacting.set(false); // the lattice is closing
        }
    }

    /** @return true while a compaction task runs */
    boolean compacting() {
        return compacting.get();
    }

    /** @return true when a compaction is due now */
    boolean compactionDue() {
        return pick(state.layers.current()) != null;
    }

    private boolean compactOnce(PartitionLayers.Layers l, CompactionPolicy.Pick pick, Publisher publisher) {
        long t0 = System.nanoTime();
        List<RunHandle> inputs = pick.inputs();
        int outLevel = pick.outputLevel();
        Set<RunHandle> in = new HashSet<>(inputs);
        // bottommost: no run outside the inputs, at the output level or deeper, overlaps them
        boolean bottom = true;
        for (RunHandle r : l.runs()) {
            if (!in.contains(r) && r.ref.level() >= outLevel && !CompactionPolicy.overlapping(List.of(r), inputs).isEmpty()) {
                bottom = false;
                break;
            }
        }
        // sources newest first: level 0 in list order (newest first), then by level
        List<Iterator<RunEntry>> sources = new ArrayList<>();
        List<RangeTombstone> ranges = new ArrayList<>();
        long readBytes = 0;
        for (RunHandle r : l.runs()) {
            if (in.contains(r)) {
                sources.add(r.reader().scanUncached());
                ranges.addAll(r.ref.meta().ranges());
                readBytes += r.ref.lengthBytes();
            }
        }
        // a range delete an open snapshot predates (gated) is kept and not applied yet: that snapshot reads these runs
        List<RangeTombstone> active = ungated(ranges);
        List<RangeTombstone> kept = new ArrayList<>(CompactionFilter.keptRanges(active, bottom,
                state.versionFloorAboveRuns()));
        for (RangeTombstone r : ranges) {
            if (state.ranges.gates.containsKey(r) && !kept.contains(r)) {
                kept.add(r);
            }
        }
        List<RunHandle> written;
        try {
            Iterator<RunEntry> merged = CompactionFilter.apply(new EntryMerger(sources), active, config.clock.millis());
            // a level-0 output is split like any other; its key-disjoint runs count as one sorted run
            written = writeRuns(newestOnly(merged, bottom), outLevel, Math.min(config.targetRunBytes, maxRunBytes),
                    kept, readBytes, false); // the output is at most what the inputs hold
        } catch (RuntimeException e) {
            LOG.warn("log {}: compaction of {} failed (retried at the next flush): {}", log, inputs, e.toString());
            return false;
        }
        publishLock.lock();
        try {
            List<RunHandle> ordered = new ArrayList<>();
            boolean placed = false;
            for (RunHandle r : state.layers.current().runs()) { // flushes may have added level-0 runs meanwhile
                if (in.contains(r)) {
                    continue;
                }
                // a level-0 output is older than the level-0 runs flushed meanwhile: it goes after them
                if (!placed && (outLevel == 0 ? r.ref.level() > 0 : r.ref.level() >= outLevel)) {
                    ordered.addAll(written);
                    placed = true;
                }
                ordered.add(r);
            }
            if (!placed) {
                ordered.addAll(written);
            }
            ordered = sortLevels(ordered);
            List<Manifest.RunRef> refs = new ArrayList<>();
            ordered.forEach(h -> refs.add(h.ref));
            Manifest m = new Manifest(manifestThrough, manifestVersion, refs, manifestEngineState);
            if (compactionsStopped) {
                for (RunHandle h : written) {
                    deleteQuietly(h.ref.id()); // never offered for publication
                }
                return false;
            }
            if (!publisher.publish(ManifestCodec.encode(m), manifestThrough)) {
                return false; // kept: a publish with an unknown outcome may name them (collected at the next open)
            }
            state.layers.compacted(inputs, written, ordered);
        } finally {
            publishLock.unlock();
        }
        sequence.incrementAndGet();
        compactionBytesRead.increment(readBytes);
        ctx.stats.compactions.increment();
        ctx.stats.compactionBytesRead.add(readBytes);
        compactionTimer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        LOG.debug("log {}: compacted {} runs ({} bytes) into {} runs at level {}", log, inputs.size(), readBytes,
                written.size(), outLevel);
        return true;
    }

    /** @return the range deletes no open snapshot predates (compaction may apply them) */
    private List<RangeTombstone> ungated(List<RangeTombstone> ranges) {
        if (state.ranges.gates.isEmpty()) {
            return ranges;
        }
        List<RangeTombstone> out = new ArrayList<>(ranges.size());
        for (RangeTombstone r : ranges) {
            if (!state.ranges.gates.containsKey(r)) {
                out.add(r);
            }
        }
        return out;
    }

    /** Level 0 first in its order (newest first), then each deeper level by first key. */
    private static List<RunHandle> sortLevels(List<RunHandle> runs) {
        List<RunHandle> out = new ArrayList<>(runs);
        out.sort((a, b) -> {
            int c = Integer.compare(a.ref.level(), b.ref.level());
            if (c != 0 || a.ref.level() == 0) {
                return c;
            }
            String fa = a.ref.meta().firstKey();
            String fb = b.ref.meta().firstKey();
            return fa == null ? (fb == null ? 0 : -1) : fb == null ? 1 : fa.compareTo(fb);
        });
        return out;
    }

    /** Keeps each key's newest version (runs hold one version per key); at the bottom, drops tombstones too. */
    private static Iterator<RunEntry> newestOnly(Iterator<RunEntry> merged, boolean bottom) {
        return EntryMerger.collect(merged, new long[0], bottom);
    }

    // ------------------------------------------------------------------ writing runs

    /**
     * Writes entries as runs of {@code level}, a new run past {@code splitBytes}, the range tombstones in the last
     * one (a run of their own when there are no entries, or when a compaction writes level 0); returns their
     * handles. Reads apply every run's range tombstones by version, whichever run holds them.
     */
    private List<RunHandle> writeRuns(Iterator<RunEntry> entries, int level, long splitBytes,
                                      List<RangeTombstone> ranges, long expectedBytes, boolean byFlush) {
        List<RunHandle> out = new ArrayList<>();
        RunWriter w = null;
        long limit = Math.min(splitBytes, maxRunBytes - Math.min(maxRunBytes / 8, 1 << 20)); // room for filter, index
        try {
            while (entries.hasNext()) {
                RunEntry e = entries.next();
                if (w != null && w.sizeBytes() >= Math.max(limit, 64 << 10)) {
                    out.add(finish(w, level, byFlush));
                    w = null;
                }
                if (w == null) {
                    // the buffer starts at what the run is expected to hold (a flush: its memtable's estimate)
                    w = new RunWriter(blockBytes, BITS_PER_KEY, (int) Math.min(Integer.MAX_VALUE - 64,
                            Math.min(Math.min(limit, expectedBytes), Math.min(config.memtableBytes,
                                    config.targetRunBytes)) + (256 << 10)));
                }
                w.add(e);
                if (level > 0 ? compactionsStopped : stopping) {
                    throw new IllegalStateException("stopped: the lattice is closing or the log was lost");
                }
            }
            // an idle merge's level-0 output keeps its range deletes in a run of their own: in the last run their
            // bounds would widen its key range over the others, and the output would count as two sorted runs
            if (w != null && level == 0 && !byFlush && !ranges.isEmpty() && w.entries() > 0) {
                out.add(finish(w, level, byFlush));
                w = null;
            }
            if (w == null && !ranges.isEmpty()) {
                w = new RunWriter(blockBytes, BITS_PER_KEY, 64 << 10);
            }
            if (w != null) {
                ranges.forEach(w::addRange);
            }
            if (w != null && (w.entries() > 0 || w.ranges() > 0)) {
                out.add(finish(w, level, byFlush));
            }
            return out;
        } catch (RuntimeException e) {
            for (RunHandle h : out) {
                deleteQuietly(h.ref.id());
            }
            throw e;
        }
    }

    private RunHandle finish(RunWriter w, int level, boolean byFlush) {
        RunWriter.Finished f = w.finish();
        RunId id = new RunId("e" + fence.epoch() + "-" + System.currentTimeMillis() + "-"
                + sequence.incrementAndGet());
        RunInfo info = calls.call("run write", () -> store.write(log, fence, id, f.stream(), f.length()));
        bytesWritten.increment(f.length());
        ctx.stats.runBytesWritten.add(f.length());
        ctx.stats.runWritten(level, f.length(), byFlush);
        (byFlush ? flushBytesWritten : compactionBytesWritten).increment(f.length());
        return new RunHandle(new Manifest.RunRef(id, level, info.lengthBytes(), f.meta()), store, log,
                ctx.blockCache);
    }

    private void deleteQuietly(RunId id) {
        try {
            calls.call("run delete", () -> {
                store.delete(log, fence, id);
                return null;
            });
        } catch (RuntimeException e) {
            LOG.debug("log {}: could not delete unpublished run {} (collected at the next open): {}", log, id,
                    e.toString());
        }
    }

    // ------------------------------------------------------------------ orphans

    /** @return the fence epoch a run id of this engine carries ({@code e<epoch>-...}), or -1 for another form */
    static long epochOf(RunId id) {
        String v = id.value();
        int dash = v.indexOf('-');
        if (!v.startsWith("e") || dash < 2) {
            return -1;
        }
        try {
            return Long.parseLong(v.substring(1, dash));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Deletes the runs of the log that the current layers do not name (written for a manifest that was never
     * published, or compaction inputs whose delete a crash interrupted) and that earlier owners wrote: run ids carry
     * the writer's fence epoch, and runs of this epoch or a later one are never collected. Runs beside flushes.
     *
     * @return runs deleted
     */
    int collectOrphans() {
        List<RunInfo> stored = calls.call("run list", () -> store.list(log));
        Set<String> live = new HashSet<>();
        for (RunHandle r : state.layers.current().runs()) { // read after the list: a run retired meanwhile stays
            live.add(r.ref.id().value());
        }
        live.addAll(state.layers.retiredIds());
        int n = 0;
        for (RunInfo info : stored) {
            long epoch = epochOf(info.id());
            // only runs of earlier owners: a newer owner's runs (a process that took the log over while this one
            // still ran) and this process's own (a flush may be about to publish them) are never touched
            if (!live.contains(info.id().value()) && epoch >= 0 && epoch < fence.epoch()) {
                deleteQuietly(info.id());
                n++;
            }
        }
        if (n > 0) {
            LOG.info("log {}: deleted {} runs that no manifest names (left by a crash or an interrupted compaction)",
                    log, n);
        }
        return n;
    }
}
