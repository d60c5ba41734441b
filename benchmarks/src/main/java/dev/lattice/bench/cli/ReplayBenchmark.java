package dev.lattice.bench.cli;

import dev.lattice.cli.CliException;
import dev.lattice.cli.ExitCodes;
import dev.lattice.cli.ScratchLocation;
import dev.lattice.cli.Support;
import dev.lattice.cli.Text;
import dev.lattice.testkit.LatencyProvider;
import dev.lattice.testkit.InFlightTrackingProvider;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeStats;
import dev.lattice.engine.Tree;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.WalStorageProvider;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The coalesced-append replay benchmark behind {@code lattice bench replay}. Per case: write N distinct keys to a
 * fresh tree, either one awaited write at a time ({@link Mode#SEQUENTIAL}) or from many closed-loop writer threads
 * ({@link Mode#CONCURRENT}); record the engine's provider-call counters; then reopen cold (close the lattice and its
 * provider, or abandon them at a quiet moment to model a crash; open a new provider instance and a new lattice on
 * the same storage, open the tree) and record the replay figures; finally check that the reopened tree holds exactly
 * the N keys (count plus a sample of values).
 *
 * <p>Provider calls can be slowed by a fixed latency per call ({@link LatencyProvider}), which
 * models a remote store: coalescing is what keeps the calls per key low when writers wait on a slow round trip.
 * Used by one thread.
 */
final class ReplayBenchmark {

    /** How the N writes are issued. */
    enum Mode {
        /** One writer; each write awaited before the next. */
        SEQUENTIAL,
        /** {@code writers} closed-loop writer threads, each awaiting its write before the next. */
        CONCURRENT;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** How the storage is reopened after the writes. */
    enum Reopen {
        /** {@link Lattice#close()} (drains and checkpoints every written partition), then reopen. */
        CLEAN,
        /**
         * Stop using the lattice without closing it, once no provider call is running (so every acknowledged write is
         * committed, and any checkpoint the policy started is finished), then reopen: replay reads the latest policy
         * checkpoint plus the log after it, as after a process crash.
         */
        CRASH
    }

    /**
     * What to run.
     *
     * @param baseUri the user's provider URI; each case runs in its own {@link ScratchLocation}
     * @param sizes the N values
     * @param modes the write modes
     * @param writers writer threads of {@link Mode#CONCURRENT}
     * @param partitions partitions of each tree
     * @param latency injected latency per provider call, {@link Duration#ZERO} for none
     * @param checkpointEvery the engine's checkpoint thresholds to run, in entries per partition (0 = engine default)
     * @param reopens the ways to reopen to run
     * @param valueBytes value size in bytes
     * @param keep keep each case's data instead of deleting it afterwards
     * @param warmup keys of the unreported warm-up cases run first (JIT), 0 for none
     * @param runId distinguishes tree names on shared storage
     */
    record Settings(String baseUri, List<Integer> sizes, List<Mode> modes, int writers, int partitions,
                    Duration latency, List<Long> checkpointEvery, List<Reopen> reopens, int valueBytes, boolean keep,
                    int warmup, String runId) {
        Settings {
            Objects.requireNonNull(baseUri, "baseUri");
            sizes = List.copyOf(sizes);
            modes = List.copyOf(modes);
            Objects.requireNonNull(latency, "latency");
            checkpointEvery = List.copyOf(checkpointEvery);
            reopens = List.copyOf(reopens);
            Objects.requireNonNull(runId, "runId");
        }
    }

    /**
     * The figures of one case.
     *
     * @param mode the write mode
     * @param n keys written
     * @param reopen how the storage was reopened
     * @param checkpointEvery the checkpoint threshold, entries per partition (0 = engine default)
     * @param partitions partitions of the tree
     * @param writers writer threads
     * @param writeNanos wall time of the N writes
     * @param written the writing lattice's counters after the writes (provider calls, batches)
     * @param physicalBytes sum of {@link LogState#physicalBytes()} over the tree's logs after reopen, -1 if unknown
     * @param replayNanos wall time of opening the new lattice and the tree
     * @param replayed the reopened lattice's counters (replay entries, bytes, read calls, checkpoint bytes)
     * @param entriesAfterCheckpoint committed entries above the latest checkpoint, summed over the tree's logs, as
     *     the provider reported them before the reopen: what replay must read, no more
     * @param latestCheckpointBytes size of the latest checkpoint of each log, summed: what replay must load
     * @param keysAfterReopen {@link Tree#count()} after reopen
     * @param sampleMismatches sampled keys whose value differed after reopen
     * @param location where the data was
     */
    record CaseResult(Mode mode, int n, Reopen reopen, long checkpointEvery, int partitions, int writers, long writeNanos, LatticeStats written,
                      long physicalBytes, long replayNanos, LatticeStats replayed, long entriesAfterCheckpoint,
                      long latestCheckpointBytes, long keysAfterReopen,
                      int sampleMismatches, String location) {
        /** @return true when the reopened tree holds exactly the keys written */
        boolean dataVerified() {
            return keysAfterReopen == n && sampleMismatches == 0;
        }

        /** @return true when replay read exactly one checkpoint per log and the entries after it */
        boolean replayBounded() {
            return replayed.replayEntries() == entriesAfterCheckpoint
                    && replayed.replayCheckpointBytes() == latestCheckpointBytes;
        }

        /** @return both checks */
        boolean verified() {
            return dataVerified() && replayBounded();
        }

        double stagePerKey() {
            return written.entriesCommitted() == 0 ? 0 : written.stageCalls() / (double) written.entriesCommitted();
        }
    }

    /** Progress messages while cases run. */
    interface Listener {
        /**
         * @param message one line
         */
        void note(String message);
    }

    private static final int SAMPLE = 64;

    private final Settings s;
    private final Listener listener;

    private ReplayBenchmark(Settings s, Listener listener) {
        this.s = s;
        this.listener = listener;
    }

    /**
     * Runs every case: for each size, each mode.
     *
     * @param settings what to run
     * @param listener progress
     * @return one result per case, in run order
     * @throws CliException (usage) for a bad provider URI
     * @throws dev.lattice.spi.WalStorageException if the provider fails
     */
    static List<CaseResult> run(Settings settings, Listener listener) {
        ReplayBenchmark b = new ReplayBenchmark(settings, listener);
        if (settings.warmup() > 0) {
            // exercise both replay paths (checkpoint load, log read) and both write paths before measuring
            int w = settings.warmup();
            b.runCase(Mode.SEQUENTIAL, Math.max(1, w / 100), Reopen.CLEAN, 0, "warmup-1");
            b.runCase(Mode.CONCURRENT, w, Reopen.CRASH, Math.max(1, w / settings.partitions() / 4), "warmup-2");
        }
        List<CaseResult> results = new ArrayList<>();
        for (int n : settings.sizes()) {
            for (Mode m : settings.modes()) {
                for (long every : settings.checkpointEvery()) {
                    for (Reopen r : settings.reopens()) {
                        results.add(b.runCase(m, n, r, every, m.label() + "-" + n + "-p" + settings.partitions()
                                + (every > 0 ? "-c" + every : "") + "-" + r.name().toLowerCase(Locale.ROOT)));
                    }
                }
            }
        }
        return results;
    }

    private CaseResult runCase(Mode mode, int n, Reopen reopen, long checkpointEvery, String name) {
        ScratchLocation where = ScratchLocation.derive(s.baseUri(), "bench", name, s.runId());
        where.prepare();
        String tree = where.tree("replay");
        listener.note("case " + name + ": writing " + Text.count(n) + " keys"
                + (mode == Mode.CONCURRENT ? " from " + s.writers() + " writers" : " one at a time") + " to "
                + Support.redact(where.uri()));
        try {
            WalStorageProvider raw = Support.openProvider(where.uri());
            InFlightTrackingProvider tracked = new InFlightTrackingProvider(withLatency(raw));
            Lattice lattice;
            try {
                lattice = Lattice.open(config(tracked, checkpointEvery));
            } catch (RuntimeException e) {
                raw.close();
                throw e;
            }
            long writeNanos;
            LatticeStats written;
            try {
                Tree t = lattice.tree(tree, s.partitions());
                if (t.count() != 0) {
                    throw new IllegalStateException("tree " + tree + " on " + where.uri() + " is not empty");
                }
                long t0 = System.nanoTime();
                if (mode == Mode.SEQUENTIAL) {
                    for (int i = 0; i < n; i++) {
                        t.put(key(i), value(i));
                    }
                } else {
                    writeConcurrently(t, n);
                }
                writeNanos = System.nanoTime() - t0;
                written = lattice.stats();
            } catch (RuntimeException e) {
                lattice.close();
                raw.close();
                throw e;
            }
            if (reopen == Reopen.CLEAN) {
                listener.note("case " + name + ": closing");
                lattice.close();
            } else {
                listener.note("case " + name + ": stopping at a quiet moment without close (crash)");
                if (!tracked.awaitQuiet(Duration.ofMillis(200), Duration.ofSeconds(60))) {
                    throw new CliException(ExitCodes.FAILURE, "provider calls kept running for 60 s after the "
                            + "writes; cannot simulate a crash at a quiet moment");
                }
                // the lattice is abandoned, as a crashed process would leave it: no drain, no close checkpoint
            }
            raw.close();

            listener.note("case " + name + ": cold reopen");
            WalStorageProvider raw2 = Support.openProvider(where.uri());
            try {
                long afterCheckpoint = 0;
                long checkpointBytes = 0;
                for (LogId log : raw2.logs(tree)) {
                    LogState st = raw2.state(log);
                    Optional<CheckpointInfo> cp = raw2.checkpoints().latest(log);
                    afterCheckpoint += Math.max(0, st.committedTail() - cp.map(CheckpointInfo::throughOffset)
                            .orElse(-1L));
                    checkpointBytes += cp.map(CheckpointInfo::sizeBytes).orElse(0L);
                }
                long r0 = System.nanoTime();
                try (Lattice reopened = Lattice.open(config(withLatency(raw2), checkpointEvery))) {
                    Tree t = reopened.tree(tree);
                    long replayNanos = System.nanoTime() - r0;
                    LatticeStats replayed = reopened.stats();
                    long physical = 0;
                    for (LogId log : raw2.logs(tree)) {
                        long pb = raw2.state(log).physicalBytes();
                        physical = physical < 0 || pb < 0 ? -1 : physical + pb;
                    }
                    long count = t.count();
                    int mismatches = 0;
                    SplittableRandom rnd = new SplittableRandom(n);
                    for (int i = 0; i < Math.min(SAMPLE, n); i++) {
                        int k = i == 0 ? n - 1 : rnd.nextInt(n);
                        Optional<byte[]> v = t.get(key(k));
                        if (v.isEmpty() || !Arrays.equals(v.get(), value(k))) {
                            mismatches++;
                        }
                    }
                    return new CaseResult(mode, n, reopen, checkpointEvery, t.partitions(), mode == Mode.CONCURRENT ? s.writers() : 1,
                            writeNanos, written, physical, replayNanos, replayed, afterCheckpoint, checkpointBytes,
                            count, mismatches, where.uri());
                }
            } finally {
                raw2.close();
            }
        } finally {
            if (!s.keep()) {
                where.wipe();
            }
        }
    }

    private LatticeConfig config(WalStorageProvider p, long checkpointEvery) {
        LatticeConfig.Builder b = LatticeConfig.builder().provider(p, false).partitions(s.partitions());
        if (checkpointEvery > 0) {
            b.checkpointEveryEntries(checkpointEvery);
        }
        return b.build();
    }

    private WalStorageProvider withLatency(WalStorageProvider p) {
        if (s.latency().isZero()) {
            return p;
        }
        return new LatencyProvider(p).setLatency(s.latency());
    }

    private void writeConcurrently(Tree t, int n) {
        AtomicInteger next = new AtomicInteger();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        Thread[] threads = new Thread[s.writers()];
        for (int w = 0; w < threads.length; w++) {
            threads[w] = new Thread(() -> {
                int i;
                while (failure.get() == null && (i = next.getAndIncrement()) < n) {
                    try {
                        t.put(key(i), value(i));
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, e);
                    }
                }
            }, "bench-writer-" + w);
            threads[w].start();
        }
        for (Thread th : threads) {
            try {
                th.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CliException(ExitCodes.FAILURE, "interrupted");
            }
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }

    static String key(int i) {
        return String.format(Locale.ROOT, "key-%09d", i);
    }

    private byte[] value(int i) {
        byte[] head = ("value-" + i + "|").getBytes(StandardCharsets.US_ASCII);
        byte[] v = Arrays.copyOf(head, Math.max(head.length, s.valueBytes()));
        Arrays.fill(v, head.length, v.length, (byte) ('a' + i % 26));
        return v;
    }
}
