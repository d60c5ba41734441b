package dev.lattice.bench.lsm;

import dev.lattice.bench.peer.DirectHarness;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeSaturatedException;
import dev.lattice.engine.LatticeStats;
import dev.lattice.engine.MemoryBudgetExceededException;
import dev.lattice.engine.Tree;
import dev.lattice.engine.WriteOutcomeUnknownException;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Statistic;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Statistics;
import org.rocksdb.TickerType;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Child JVM of {@link LargeTreeHarness} (not part of the product). Arguments:
 * {@code lattice|rocksdb load|open DIR N VALUE_BYTES [URI [PARTITIONS]]}. {@code URI} (Lattice only; {@code -} or
 * absent: {@code chronicle:DIR?durability=process}) is the provider the tree lives in, e.g. a PostgreSQL, DynamoDB or
 * Azure URI of a server the harness started; {@code PARTITIONS} ({@code 0} or absent: the engine's default) are the
 * new tree's partitions. {@code load} writes records {@code 0..N-1} in batches of 1,000
 * (Chronicle at page-cache durability), reads back 2,000 samples and counts every record, prints {@code LOADED} and waits to be
 * killed with SIGKILL. {@code open} opens a small warm-up store, then times the open of {@code DIR} until the first
 * get is served, checks samples and the count, waits until background flushes and compactions stop, prints
 * {@code SETTLED}, closes and prints {@code CLOSED}. Every measurement is a line {@code M name value}. Exit code 0, or
 * 1 with the failure on standard error (lost or wrong records are failures).
 *
 * <p>System properties of an {@code open}: {@code lattice.bench.jfr=FILE} records a JFR profile (the {@code profile}
 * settings, execution samples every {@code lattice.bench.jfrPeriodMs}, default 10, and every JIT compilation) of the
 * timed open only, from just before it to the first get, into {@code FILE}; {@code lattice.bench.openOnly=true} stops
 * after the check (no settle wait), closes and prints {@code CLOSED}. The open also reports its process CPU time
 * ({@code openCpuMs}) and its threads' CPU time by thread name ({@code openThreadCpuMs}).
 */
public final class LargeTreeChild {

    private static final String TREE = "big";
    private static final int SAMPLES = 2_000;

    private static String uri;
    private static int partitions;
    private static boolean remote;

    private LargeTreeChild() {
    }

    /**
     * @param args see the class comment
     */
    public static void main(String[] args) {
        try {
            boolean rocks = args[0].equals("rocksdb");
            boolean load = args[1].equals("load");
            Path dir = Path.of(args[2]);
            int n = Integer.parseInt(args[3]);
            int valueBytes = Integer.parseInt(args[4]);
            uri = args.length > 5 && !args[5].equals("-") ? args[5]
                    : "chronicle:" + dir.toAbsolutePath() + "?durability=process";
            partitions = args.length > 6 ? Integer.parseInt(args[6]) : 0;
            remote = args.length > 5 && !args[5].equals("-");
            if (rocks) {
                RocksDB.loadLibrary();
                if (load) {
                    rocksLoad(dir, n, valueBytes);
                } else {
                    rocksOpen(dir, n, valueBytes);
                }
            } else if (load) {
                latticeLoad(dir, n, valueBytes);
            } else {
                latticeOpen(dir, n, valueBytes);
            }
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    /**
     * @param i record number
     * @param size value bytes
     * @return the value of record {@code i}: pseudo-random (incompressible) bytes seeded by {@code i}
     */
    static byte[] value(int i, int size) {
        byte[] v = new byte[size];
        new SplittableRandom(i * 0x9E3779B97F4A7C15L).nextBytes(v);
        return v;
    }

    private static void m(String name, Object value) {
        System.out.println("M " + name + " " + value);
        System.out.flush();
    }

    private static Lattice openLattice(String providerUri, SimpleMeterRegistry reg) {
        return Lattice.open(LatticeConfig.builder().uri(providerUri).meterRegistry(reg).build());
    }

    private static Tree bigTree(Lattice l) {
        return partitions > 0 ? l.tree(TREE, partitions) : l.tree(TREE);
    }

    private static void latticeLoad(Path dir, int n, int valueBytes) throws Exception {
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        Lattice l = openLattice(uri, reg);
        Tree t = bigTree(l);
        m("partitions", l.provider().logs(TREE).size());
        long t0 = System.nanoTime();
        long maxRetained = 0;
        long maxRetainedBytes = 0;
        int every = remote ? Math.max(1, n / 20) : 200_000;
        Map<String, byte[]> batch = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            batch.put(DirectHarness.key(i), value(i, valueBytes));
            if (batch.size() == 1000 || i == n - 1) {
                putAll(t, batch);
                batch = new LinkedHashMap<>();
            }
            if (i % every == 0) {
                long[] ls = logState(l);
                maxRetained = Math.max(maxRetained, ls[0]);
                maxRetainedBytes = Math.max(maxRetainedBytes, ls[1]);
                System.out.println("progress " + i + " " + (System.nanoTime() - t0) / 1_000_000 + " ms retained "
                        + ls[0] + " entries " + ls[1] + " bytes, heap used "
                        + (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) / (1 << 20)
                        + " MiB, " + l.stats());
            }
        }
        m("loadMs", (System.nanoTime() - t0) / 1_000_000);
        m("maxRetainedEntriesSampled", maxRetained);
        m("maxRetainedBytesSampled", maxRetainedBytes);
        m("refusedBatches", refused);
        m("refusedWaitMs", refusedNanos / 1_000_000);
        m("saturatedRefusals", saturated);
        m("saturatedWaitMs", saturatedNanos / 1_000_000);
        m("outcomeUnknownRetries", unknown);
        latticeStats(l, reg, "load");
        long t1 = System.nanoTime();
        check(t::get, t::count, n, valueBytes);
        m("checkMs", (System.nanoTime() - t1) / 1_000_000);
        latticeStats(l, reg, "loadChecked");
        ioBytes("load");
        System.out.println("LOADED " + n);
        System.out.flush();
        sleepForever();
    }

    private static void latticeOpen(Path dir, int n, int valueBytes) throws Exception {
        Path warm = dir.resolveSibling(dir.getFileName() + "-warm");
        // class loading: a small store of the same provider (a remote one: another tree beside the big one)
        try (Lattice w = openLattice(remote ? uri
                : "chronicle:" + warm.toAbsolutePath() + "?durability=process", new SimpleMeterRegistry())) {
            w.tree("warm", 1).put("warm", new byte[1]);
            w.tree("warm", 1).get("warm");
        }
        LargeTreeHarness.delete(warm);
        ioBytes("beforeOpen");
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        jdk.jfr.Recording jfr = startJfr();
        Map<String, Long> threads0 = threadCpuTicks();
        long c0 = processCpuNanos();
        long t0 = System.nanoTime();
        Lattice l = openLattice(uri, reg);
        Tree t = bigTree(l);
        t.get(DirectHarness.key(0));
        m("openMs", (System.nanoTime() - t0) / 1e6);
        m("openCpuMs", (processCpuNanos() - c0) / 1_000_000);
        m("openThreadCpuMs", threadCpuSince(threads0));
        stopJfr(jfr);
        latticeStats(l, reg, "open");
        ioBytes("open");
        long t1 = System.nanoTime();
        check(t::get, t::count, n, valueBytes);
        m("checkMs", (System.nanoTime() - t1) / 1_000_000);
        if (Boolean.getBoolean("lattice.bench.openOnly")) {
            l.close();
            System.out.println("CLOSED");
            return;
        }
        long t2 = System.nanoTime();
        long last = -1;
        long stableSince = System.nanoTime();
        while (System.nanoTime() - t2 < 300_000_000_000L) {
            LatticeStats s = l.stats();
            long now = s.flushes() * 1_000_003L + s.compactions();
            if (now != last) {
                last = now;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > 20_000_000_000L) {
                break;
            }
            Thread.sleep(1000);
        }
        m("settleMs", (System.nanoTime() - t2) / 1_000_000);
        latticeStats(l, reg, "settled");
        ioBytes("settled");
        System.out.println("SETTLED");
        System.out.flush();
        Thread.sleep(3000); // the parent measures the directory
        l.close();
        System.out.println("CLOSED");
    }

    /** @return the CPU time this process used so far, all threads (JIT and GC included), ns; -1 when unknown */
    private static long processCpuNanos() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
    }

    /**
     * The CPU time of this process's threads so far by thread name without its trailing digits (a pool's threads add
     * up: {@code lattice-io-}, {@code C2_CompilerThre} (names are cut at 15 characters), {@code GC_Thread}), from
     * {@code /proc/self/task/{@literal *}/stat} (user + system clock ticks); empty where there is no procfs. Threads
     * that ended are not counted.
     */
    private static Map<String, Long> threadCpuTicks() {
        Map<String, Long> out = new java.util.TreeMap<>();
        try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String st = Files.readString(task.resolve("stat"));
                    String name = st.substring(st.indexOf('(') + 1, st.lastIndexOf(')')).replaceAll("[0-9#]+$", "")
                            .replace(' ', '_');
                    String[] f = st.substring(st.lastIndexOf(')') + 2).split(" ");
                    out.merge(name, Long.parseLong(f[11]) + Long.parseLong(f[12]), Long::sum); // utime, stime
                } catch (java.io.IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            return out;
        }
        return out;
    }

    /**
     * @return {@code name=ms,...} of the threads that used CPU since {@code before} ({@link #threadCpuTicks}), in
     *     ms of 10 ms clock ticks (USER_HZ 100), largest first
     */
    private static String threadCpuSince(Map<String, Long> before) {
        Map<String, Long> now = threadCpuTicks();
        return now.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0).sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
                .map(e -> e.getKey() + "=" + e.getValue() * 10).collect(java.util.stream.Collectors.joining(","));
    }

    /** @return a started JFR recording of the open when {@code lattice.bench.jfr} names a file, else null */
    private static jdk.jfr.Recording startJfr() throws Exception {
        String file = System.getProperty("lattice.bench.jfr");
        if (file == null) {
            return null;
        }
        jdk.jfr.Recording r = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
        r.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(
                Long.getLong("lattice.bench.jfrPeriodMs", 10)));
        r.enable("jdk.Compilation").withThreshold(java.time.Duration.ZERO); // every JIT compilation in the open
        r.setDestination(Path.of(file));
        r.start();
        return r;
    }

    /** Stops a recording of {@link #startJfr} (written to its file); no-op for null. */
    private static void stopJfr(jdk.jfr.Recording r) {
        if (r != null) {
            r.stop();
            r.close();
        }
    }

    private static long refused;
    private static long refusedNanos;
    private static long saturated;
    private static long saturatedNanos;
    private static long unknown;

    /**
     * Writes one batch, retrying what the engine refuses before writing anything: {@link MemoryBudgetExceededException}
     * (older engines refused a {@code putAll} at once when the memtables were full) after 5 ms, and
     * {@link LatticeSaturatedException} (a blocking write waited {@code admissionTimeout} for flushes that are
     * behind, e.g. on a slow run store) at once. Both refusals and the time they took are reported
     * ({@code refused*}, {@code saturated*}); the load fails when one batch is refused for more than 10 minutes. A
     * {@link WriteOutcomeUnknownException} (a provider call that timed out) writes the batch again after 1 s (the
     * same values: harmless here), at most 100 times per load ({@code outcomeUnknownRetries}).
     */
    private static void putAll(Tree t, Map<String, byte[]> batch) {
        long t0 = 0;
        boolean sat = false;
        while (true) {
            try {
                t.putAll(batch);
                if (t0 != 0) {
                    if (sat) {
                        saturatedNanos += System.nanoTime() - t0;
                    } else {
                        refusedNanos += System.nanoTime() - t0;
                    }
                }
                return;
            } catch (WriteOutcomeUnknownException e) {
                // a provider call timed out (e.g. an emulator starved of CPU): the batch may or may not be in;
                // writing the same values again is harmless for this load, and the count is reported
                if (++unknown > 100) {
                    throw e;
                }
                System.out.println("outcome unknown, batch written again: " + e);
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000_000L);
            } catch (MemoryBudgetExceededException | LatticeSaturatedException e) {
                boolean s = e instanceof LatticeSaturatedException;
                if (t0 == 0) {
                    t0 = System.nanoTime();
                    sat = s;
                    if ((s ? saturated : refused) == 0) {
                        System.out.println("first refusal: " + e);
                    }
                } else if (System.nanoTime() - t0 > 600_000_000_000L) {
                    throw e;
                }
                if (s) {
                    saturated++;
                } else {
                    refused++;
                    java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
                }
            }
        }
    }

    private static void latticeStats(Lattice l, SimpleMeterRegistry reg, String phase) {
        LatticeStats s = l.stats();
        m(phase + ".stats", s);
        m(phase + ".bytesCommitted", s.bytesCommitted());
        m(phase + ".runBytesWritten", s.runBytesWritten());
        m(phase + ".compactionBytesRead", s.compactionBytesRead());
        m(phase + ".flushBytesWritten", s.flushBytesWritten());
        m(phase + ".compactionBytesWritten", s.compactionBytesWritten());
        m(phase + ".runBytesWrittenByLevel", String.join(",", s.runBytesWrittenByLevel().stream()
                .map(String::valueOf).toList()));
        m(phase + ".flushes", s.flushes());
        m(phase + ".compactions", s.compactions());
        m(phase + ".replayEntries", s.replayEntries());
        m(phase + ".replayBytes", s.replayBytes());
        m(phase + ".replayCheckpointBytes", s.replayCheckpointBytes());
        double stall = 0;
        long stalls = 0;
        for (Meter meter : reg.getMeters()) {
            if (meter.getId().getName().equals("lattice.write.stall.seconds")) {
                for (Measurement x : meter.measure()) {
                    if (x.getStatistic() == Statistic.TOTAL_TIME || x.getStatistic() == Statistic.VALUE) {
                        stall += x.getValue();
                    } else if (x.getStatistic() == Statistic.COUNT) {
                        stalls += (long) x.getValue();
                    }
                }
            }
        }
        m(phase + ".stallSeconds", stall);
        m(phase + ".stallCount", stalls);
        m(phase + ".trims", s.trims());
        m(phase + ".checkpoints", s.checkpoints());
        m(phase + ".liveRuns", (long) gaugeSum(reg, "lattice.runs"));
        m(phase + ".liveRunBytes", (long) gaugeSum(reg, "lattice.runs.bytes"));
        m(phase + ".liveDataBytes", l.liveDataBytes());
        long[] ls = logState(l);
        m(phase + ".logRetainedEntries", ls[0]);
        m(phase + ".logRetainedBytes", ls[1]);
        m(phase + ".logCommittedEntries", ls[2]);
        m(phase + ".logTrimmedThrough", ls[3]);
        m(phase + ".logPhysicalBytes", ls[4]);
        timer(reg, "lattice.flush.duration", phase + ".flushTimer");
        timer(reg, "lattice.compaction.duration", phase + ".compactionTimer");
        m(phase + ".heapUsedMiB", (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) >> 20);
    }

    /** Prints a timer's count, total and max seconds summed over its meters (partitions). */
    private static void timer(SimpleMeterRegistry reg, String name, String label) {
        double total = 0;
        double max = 0;
        long count = 0;
        for (Meter meter : reg.getMeters()) {
            if (meter.getId().getName().equals(name)) {
                for (Measurement x : meter.measure()) {
                    if (x.getStatistic() == Statistic.TOTAL_TIME) {
                        total += x.getValue();
                    } else if (x.getStatistic() == Statistic.MAX) {
                        max = Math.max(max, x.getValue());
                    } else if (x.getStatistic() == Statistic.COUNT) {
                        count += (long) x.getValue();
                    }
                }
            }
        }
        m(label + "Count", count);
        m(label + "TotalSeconds", String.format(java.util.Locale.ROOT, "%.1f", total));
        m(label + "MaxSeconds", String.format(java.util.Locale.ROOT, "%.1f", max));
    }

    private static double gaugeSum(SimpleMeterRegistry reg, String name) {
        double sum = 0;
        for (Meter meter : reg.getMeters()) {
            if (meter.getId().getName().equals(name)) {
                for (Measurement x : meter.measure()) {
                    if (x.getStatistic() == Statistic.VALUE) {
                        sum += x.getValue();
                    }
                }
            }
        }
        return sum;
    }

    /**
     * The provider's own view of the tree's logs ({@code WalStorageProvider.state}), summed over partitions.
     *
     * @return retained entries, retained payload bytes, committed entries (tail + 1), the lowest trim watermark over
     *     the partitions (-1: some log never trimmed), physical bytes (-1 when a provider does not know)
     */
    private static long[] logState(Lattice l) {
        long retained = 0;
        long bytes = 0;
        long committed = 0;
        long trimmed = Long.MAX_VALUE;
        long physical = 0;
        for (dev.lattice.spi.LogId log : l.provider().logs(TREE)) {
            dev.lattice.spi.LogState st = l.provider().state(log);
            retained += st.retainedEntries();
            bytes += st.retainedPayloadBytes();
            committed += st.committedTail() + 1;
            trimmed = Math.min(trimmed, st.trimWatermark());
            physical = physical < 0 || st.physicalBytes() < 0 ? -1 : physical + st.physicalBytes();
        }
        return new long[] {retained, bytes, committed, trimmed == Long.MAX_VALUE ? -1 : trimmed, physical};
    }

    private static Options rocksOptions(Statistics st) {
        return new Options().setCreateIfMissing(true).setStatistics(st);
    }

    private static void rocksLoad(Path dir, int n, int valueBytes) throws Exception {
        Files.createDirectories(dir);
        Statistics st = new Statistics();
        RocksDB db = RocksDB.open(rocksOptions(st), dir.toString());
        WriteOptions wo = new WriteOptions().setSync(false);
        long t0 = System.nanoTime();
        WriteBatch b = new WriteBatch();
        for (int i = 0; i < n; i++) {
            b.put(DirectHarness.key(i).getBytes(StandardCharsets.UTF_8), value(i, valueBytes));
            if (b.count() == 1000 || i == n - 1) {
                db.write(wo, b);
                b.close();
                b = new WriteBatch();
            }
        }
        m("loadMs", (System.nanoTime() - t0) / 1_000_000);
        rocksStats(db, st, "load");
        long t1 = System.nanoTime();
        check(k -> java.util.Optional.ofNullable(db.get(k.getBytes(StandardCharsets.UTF_8))), () -> rocksCount(db),
                n, valueBytes);
        m("checkMs", (System.nanoTime() - t1) / 1_000_000);
        rocksStats(db, st, "loadChecked");
        ioBytes("load");
        System.out.println("LOADED " + n);
        System.out.flush();
        sleepForever();
    }

    private static void rocksOpen(Path dir, int n, int valueBytes) throws Exception {
        Path warm = dir.resolveSibling(dir.getFileName() + "-warm");
        Files.createDirectories(warm);
        try (Options o = new Options().setCreateIfMissing(true); RocksDB w = RocksDB.open(o, warm.toString())) {
            w.put("warm".getBytes(StandardCharsets.UTF_8), new byte[1]);
            w.get("warm".getBytes(StandardCharsets.UTF_8));
        }
        LargeTreeHarness.delete(warm);
        ioBytes("beforeOpen");
        Statistics st = new Statistics();
        Map<String, Long> threads0 = threadCpuTicks();
        long c0 = processCpuNanos();
        long t0 = System.nanoTime();
        RocksDB db = RocksDB.open(rocksOptions(st), dir.toString());
        db.get(DirectHarness.key(0).getBytes(StandardCharsets.UTF_8));
        m("openMs", (System.nanoTime() - t0) / 1e6);
        m("openCpuMs", (processCpuNanos() - c0) / 1_000_000);
        m("openThreadCpuMs", threadCpuSince(threads0));
        rocksStats(db, st, "open");
        ioBytes("open");
        long t1 = System.nanoTime();
        check(k -> java.util.Optional.ofNullable(db.get(k.getBytes(StandardCharsets.UTF_8))), () -> rocksCount(db),
                n, valueBytes);
        m("checkMs", (System.nanoTime() - t1) / 1_000_000);
        if (Boolean.getBoolean("lattice.bench.openOnly")) {
            db.close();
            System.out.println("CLOSED");
            return;
        }
        long t2 = System.nanoTime();
        long stableSince = System.nanoTime();
        while (System.nanoTime() - t2 < 300_000_000_000L) {
            boolean busy = db.getLongProperty("rocksdb.num-running-compactions") > 0
                    || db.getLongProperty("rocksdb.compaction-pending") > 0
                    || db.getLongProperty("rocksdb.num-running-flushes") > 0;
            if (busy) {
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > 5_000_000_000L) {
                break;
            }
            Thread.sleep(500);
        }
        m("settleMs", (System.nanoTime() - t2) / 1_000_000);
        rocksStats(db, st, "settled");
        ioBytes("settled");
        System.out.println("SETTLED");
        System.out.flush();
        Thread.sleep(3000);
        db.close();
        System.out.println("CLOSED");
    }

    private static long rocksCount(RocksDB db) {
        long c = 0;
        try (RocksIterator it = db.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                c++;
            }
        }
        return c;
    }

    private static void rocksStats(RocksDB db, Statistics st, String phase) throws Exception {
        m(phase + ".walBytes", st.getTickerCount(TickerType.WAL_FILE_BYTES));
        m(phase + ".flushWriteBytes", st.getTickerCount(TickerType.FLUSH_WRITE_BYTES));
        m(phase + ".compactWriteBytes", st.getTickerCount(TickerType.COMPACT_WRITE_BYTES));
        m(phase + ".compactReadBytes", st.getTickerCount(TickerType.COMPACT_READ_BYTES));
        m(phase + ".userBytesWritten", st.getTickerCount(TickerType.BYTES_WRITTEN));
        m(phase + ".stallMicros", st.getTickerCount(TickerType.STALL_MICROS));
        m(phase + ".bytesRead", st.getTickerCount(TickerType.BYTES_READ));
        m(phase + ".liveSstBytes", db.getLongProperty("rocksdb.live-sst-files-size"));
        String levels = db.getProperty("rocksdb.levelstats").replace('\n', '|');
        m(phase + ".levelstats", levels);
    }

    /** Reads {@code /proc/self/io}: bytes this process caused to be read from and written to storage. */
    private static void ioBytes(String phase) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
                if (line.startsWith("write_bytes:") || line.startsWith("read_bytes:")
                        || line.startsWith("rchar:") || line.startsWith("wchar:")) {
                    String[] p = line.split(":\\s*");
                    m(phase + ".io." + p[0], p[1].trim());
                }
            }
        } catch (Exception e) {
            m(phase + ".io.error", e.toString().replace(' ', '_'));
        }
    }

    interface Getter {
        java.util.Optional<byte[]> get(String key) throws Exception;
    }

    interface Counter {
        long count() throws Exception;
    }

    private static void check(Getter g, Counter c, int n, int valueBytes) throws Exception {
        SplittableRandom r = new SplittableRandom(n);
        for (int s = 0; s < SAMPLES; s++) {
            int i = r.nextInt(n);
            byte[] got = g.get(DirectHarness.key(i)).orElseThrow(() -> new AssertionError("lost record " + i));
            if (!Arrays.equals(got, value(i, valueBytes))) {
                throw new AssertionError("wrong value of record " + i);
            }
        }
        if (g.get("absent-key").isPresent()) {
            throw new AssertionError("absent key found");
        }
        long count = c.count();
        m("count", count);
        if (count != n) {
            throw new AssertionError("count " + count + ", expected " + n);
        }
    }

    private static void sleepForever() {
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
