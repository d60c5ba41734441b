package dev.lattice.bench.atomic;

import dev.lattice.bench.jmh.Workload;
import dev.lattice.bench.peer.Durability;
import dev.lattice.bench.peer.KvStoreDirs;
import dev.lattice.bench.report.Charts;
import dev.lattice.bench.report.ContextSwitches;
import dev.lattice.bench.report.Cpu;
import dev.lattice.bench.report.Machine;
import dev.lattice.bench.report.MdTable;
import dev.lattice.engine.AtomicWrite;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeStats;
import dev.lattice.engine.Tree;
import dev.lattice.spi.memory.InMemoryStorage;
import io.micrometer.core.instrument.DistributionSummary;
import org.HdrHistogram.Histogram;
import org.jfree.data.category.DefaultCategoryDataset;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Atomic writes per second and keys per second on a real provider (Chronicle by default): closed-loop client threads
 * write for a fixed time, each write waiting for the previous one of its thread. For each thread count it runs, each
 * on a fresh lattice (8 partitions per tree, the default) with its trees preloaded:
 * <ul>
 *   <li>{@code put}: one key per call ({@code Tree.put}), the per-key baseline;</li>
 *   <li>{@code putAll} of N keys: batched per partition, <b>not atomic</b> ({@code Tree.putAll}), the batch
 *       baseline;</li>
 *   <li>{@code atomic, 1 tree} of N keys: {@code Tree.putAllAtomic};</li>
 *   <li>{@code atomic, 2 trees} of N keys: {@code Lattice.atomic()}, the first N/2 keys in one tree, the rest in the
 *       other, {@code commit()}.</li>
 * </ul>
 * The N keys of a write are distinct and drawn uniformly from the key space (every key preloaded, so writes
 * overwrite), so they spread over the partitions as a user's random keys do. Only calls that start and end inside
 * the measured window count; the engine's counters ({@link LatticeStats}), the atomic-write meters
 * ({@code lattice.atomic.participants}), process CPU time and voluntary context switches are read at the window's
 * edges, giving per-write figures that say what bounds each result. Not thread-safe (one run at a time).
 */
public final class AtomicHarness {

    /** Prepared key sets per size (each write picks one at random). */
    private static final int SETS = 4096;

    private AtomicHarness() {
    }

    /** What one case does. */
    public enum Shape {
        /** One key per call. */
        PUT("put"),
        /** N keys per call, batched per partition, not atomic. */
        PUT_ALL("putAll"),
        /** N keys per call, atomic, one tree. */
        ONE_TREE("atomic, 1 tree"),
        /** N keys per call, atomic, half in each of two trees. */
        TWO_TREES("atomic, 2 trees");

        private final String label;

        Shape(String label) {
            this.label = label;
        }

        /** @return the label used in tables and charts */
        public String label() {
            return label;
        }
    }

    /**
     * What to run.
     *
     * @param workDir where Chronicle directories go (one per case, deleted after it)
     * @param imgDir where the chart goes (null: none)
     * @param provider {@code chronicle} or {@code memory}
     * @param durability Chronicle's durability (ignored for {@code memory})
     * @param shapes which cases to run ({@link Shape#PUT} once per thread count, the others once per size)
     * @param sizes keys per write of the N-key cases, each >= 2
     * @param threads client thread counts, each >= 1
     * @param warmupMs time each case runs before its measured window, milliseconds
     * @param durationMs the measured window, milliseconds, >= 1
     * @param keySpace keys preloaded in each tree (the key space of the writes), >= the largest size
     * @param valueBytes value size, bytes
     */
    public record Settings(Path workDir, Path imgDir, String provider, Durability durability, List<Shape> shapes,
                           List<Integer> sizes, List<Integer> threads, int warmupMs, int durationMs, int keySpace,
                           int valueBytes) {
        /**
         * Checks the settings.
         *
         * @throws IllegalArgumentException naming the first setting out of range
         */
        public Settings {
            if (!provider.equals("chronicle") && !provider.equals("memory")) {
                throw new IllegalArgumentException("provider must be chronicle or memory, got " + provider);
            }
            for (int n : sizes) {
                if (n < 2 || n > keySpace) {
                    throw new IllegalArgumentException("keys per write must be 2.." + keySpace + ", got " + n);
                }
            }
            for (int t : threads) {
                if (t < 1) {
                    throw new IllegalArgumentException("thread counts must be >= 1, got " + t);
                }
            }
            if (shapes.isEmpty()) {
                throw new IllegalArgumentException("at least one shape must be given");
            }
            if (warmupMs < 0 || durationMs < 1) {
                throw new IllegalArgumentException("warm-up must be >= 0 ms and the duration >= 1 ms, got "
                        + warmupMs + " and " + durationMs);
            }
        }
    }

    /**
     * One case's figures, over its measured window.
     *
     * @param shape what the case does
     * @param keysPerWrite keys per call (1 for {@code put})
     * @param threads client threads
     * @param writes calls that started and ended in the window
     * @param writesPerSecond calls per second of window time
     * @param keysPerSecond keys written per second of window time
     * @param p50Us median latency of a call, microseconds
     * @param p99Us 99th percentile, microseconds
     * @param logsPerWrite logs an atomic write touched, mean ({@code lattice.atomic.participants}); NaN for the
     *     non-atomic shapes
     * @param providerCallsPerWrite provider {@code stage} plus {@code commit} calls per call
     * @param entriesPerWrite log entries committed per call, all logs (an atomic write over several logs: a prepare
     *     entry per log, a decision entry and resolve entries)
     * @param entriesPerCommit log entries per provider commit call (coalescing)
     * @param cpuCores process CPU time over window time (2.0 = two cores busy)
     * @param machineBusy the whole machine's busy CPU fraction over the window, all processes (0..1; NaN off Linux)
     * @param switchesPerWrite voluntary context switches of all this process's threads per call (NaN off Linux)
     */
    public record Case(Shape shape, int keysPerWrite, int threads, long writes, double writesPerSecond,
                       double keysPerSecond, double p50Us, double p99Us, double logsPerWrite,
                       double providerCallsPerWrite, double entriesPerWrite, double entriesPerCommit, double cpuCores,
                       double machineBusy, double switchesPerWrite) {

        /** @return this process's CPU time per call (all threads), microseconds */
        public double cpuUsPerWrite() {
            return cpuCores * 1e6 / writesPerSecond;
        }

        /**
         * What bounds the case, from its measured figures by a fixed rule: {@code CPU} when the machine's CPUs were
         * at least 90% busy over the window (this process or others: the machine is shared), otherwise
         * {@code hand-offs} (the callers waited with CPU to spare: on thread hand-offs inside the engine, counted as
         * context switches per call; the provider here does no I/O wait at page-cache durability); then the CPU
         * time each call cost and its context switches.
         *
         * @return e.g. {@code hand-offs (machine 64% busy): 180 CPU us, 11.7 ctx sw per call}
         */
        public String bound() {
            boolean cpu = machineBusy >= 0.9;
            return String.format(Locale.ROOT, "%s (machine %s busy): %s CPU us, %s ctx sw per call",
                    cpu ? "CPU" : "hand-offs", Double.isNaN(machineBusy) ? "n/a"
                            : String.format(Locale.ROOT, "%.0f%%", machineBusy * 100),
                    MdTable.count(cpuUsPerWrite()), MdTable.fixed(switchesPerWrite, 1));
        }
    }

    /**
     * The outcome.
     *
     * @param cases every case, in run order
     * @param markdown the table with its header line
     */
    public record Report(List<Case> cases, String markdown) {
    }

    /** A prepared write: one call on the open lattice. */
    @FunctionalInterface
    private interface Op {
        void run(SplittableRandom random);
    }

    /**
     * Runs every case.
     *
     * @param s the settings
     * @param progress one line per case
     * @return the cases and the table
     * @throws IllegalStateException if a write fails (the first failure as cause)
     */
    public static Report run(Settings s, Consumer<String> progress) {
        double load0 = Machine.loadAverage();
        Workload work = new Workload(s.keySpace(), s.valueBytes());
        Map<Integer, List<String[]>> sets = new HashMap<>();
        Map<Integer, List<Map<String, byte[]>>> maps = new HashMap<>();
        for (int n : s.sizes()) {
            List<String[]> ss = work.distinctSets(n, SETS, 42 + n);
            List<Map<String, byte[]>> ms = new ArrayList<>(SETS);
            for (String[] set : ss) {
                Map<String, byte[]> m = new LinkedHashMap<>();
                for (String k : set) {
                    m.put(k, work.value());
                }
                ms.add(m);
            }
            sets.put(n, ss);
            maps.put(n, ms);
        }
        String runId = Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        int no = 0;
        // one unreported case first, so the JIT has compiled the write path before anything is measured
        Shape first = s.shapes().stream().filter(x -> x != Shape.PUT).findFirst().orElse(Shape.PUT);
        if (first == Shape.PUT || !s.sizes().isEmpty()) {
            int n = first == Shape.PUT ? 1 : s.sizes().get(0);
            progress.accept("atomic: warm-up (not reported)");
            runCase(s, work, sets.get(n), maps.get(n), first, n, s.threads().get(0), runId + "-w", true);
        }
        List<Case> cases = new ArrayList<>();
        for (int t : s.threads()) {
            List<Object[]> plan = new ArrayList<>();
            if (s.shapes().contains(Shape.PUT)) {
                plan.add(new Object[] {Shape.PUT, 1});
            }
            for (int n : s.sizes()) {
                for (Shape shape : List.of(Shape.PUT_ALL, Shape.ONE_TREE, Shape.TWO_TREES)) {
                    if (s.shapes().contains(shape)) {
                        plan.add(new Object[] {shape, n});
                    }
                }
            }
            for (Object[] p : plan) {
                Shape shape = (Shape) p[0];
                int n = (Integer) p[1];
                progress.accept("atomic: " + s.provider() + " " + shape.label() + " of " + n + " key(s), " + t
                        + " thread(s)");
                cases.add(runCase(s, work, sets.get(n), maps.get(n), shape, n, t, runId + "-" + (no++), false));
            }
        }
        String md = render(s, cases, load0, Machine.loadAverage());
        if (s.imgDir() != null) {
            DefaultCategoryDataset d = Charts.dataset();
            for (Case c : cases) {
                d.addValue(c.keysPerSecond(), c.threads() + " thread(s)", c.shape().label()
                        + (c.shape() == Shape.PUT ? "" : " " + c.keysPerWrite()));
            }
            Charts.bars(s.imgDir().resolve("atomic-" + s.provider() + "-keys.png"), "Keys per second, "
                    + s.provider() + " provider: put, putAll and atomic writes", "call shape, keys per call",
                    "keys/s, all threads", d, false);
        }
        return new Report(cases, md);
    }

    private static Case runCase(Settings s, Workload work, List<String[]> sets, List<Map<String, byte[]>> maps,
                                Shape shape, int n, int threads, String id, boolean warmup) {
        String storage = "atomic-harness-" + id;
        Path dir = s.workDir().resolve(storage);
        String uri = s.provider().equals("memory") ? "memory:" + storage
                : "chronicle:" + dir.toAbsolutePath() + "?durability=" + s.durability().chronicleOption();
        KvStoreDirs.delete(dir);
        try (Lattice lattice = Lattice.open(LatticeConfig.builder().uri(uri).build())) {
            Tree a = lattice.tree("a");
            work.preload(a::putAll);
            Tree b = null;
            if (shape == Shape.TWO_TREES) {
                b = lattice.tree("b");
                work.preload(b::putAll);
            }
            Tree treeB = b;
            byte[] v = work.value();
            Op op = switch (shape) {
                case PUT -> r -> a.put(work.key(r.nextInt()), v);
                case PUT_ALL -> r -> a.putAll(maps.get(r.nextInt(SETS)));
                case ONE_TREE -> r -> a.putAllAtomic(maps.get(r.nextInt(SETS)));
                case TWO_TREES -> r -> {
                    String[] set = sets.get(r.nextInt(SETS));
                    AtomicWrite w = lattice.atomic();
                    for (int i = 0; i < set.length; i++) {
                        w.put(i < set.length / 2 ? a : treeB, set[i], v);
                    }
                    w.commit();
                };
            };
            return measure(s, lattice, op, shape, n, threads, warmup);
        } finally {
            if (s.provider().equals("memory")) {
                InMemoryStorage.dropNamed(storage);
            }
            KvStoreDirs.delete(dir);
        }
    }

    private static Case measure(Settings s, Lattice lattice, Op op, Shape shape, int n, int threads,
                                boolean warmup) {
        long start = System.nanoTime();
        long windowStart = start + s.warmupMs() * 1_000_000L;
        long windowEnd = windowStart + s.durationMs() * 1_000_000L;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Histogram> histograms = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Histogram h = new Histogram(3_600_000_000_000L, 3);
            histograms.add(h);
            SplittableRandom random = new SplittableRandom(1000L + t);
            Thread w = new Thread(() -> {
                try {
                    while (failure.get() == null) {
                        long t0 = System.nanoTime();
                        if (t0 >= windowEnd) {
                            return;
                        }
                        op.run(random);
                        long t1 = System.nanoTime();
                        if (t0 >= windowStart && t1 <= windowEnd) {
                            h.recordValue(t1 - t0);
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "atomic-client-" + t);
            workers.add(w);
            w.start();
        }
        parkUntil(windowStart);
        LatticeStats s0 = lattice.stats();
        double[] logs0 = participants(lattice);
        Map<String, Long> sw0 = ContextSwitches.perThread();
        long cpu0 = Cpu.processNanos();
        long[] machine0 = Cpu.machineTicks();
        parkUntil(windowEnd);
        LatticeStats s1 = lattice.stats();
        double[] logs1 = participants(lattice);
        Map<String, Long> sw1 = ContextSwitches.perThread();
        long cpu1 = Cpu.processNanos();
        long[] machine1 = Cpu.machineTicks();
        for (Thread w : workers) {
            try {
                w.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException(shape.label() + " of " + n + " keys failed: " + failure.get(),
                    failure.get());
        }
        Histogram all = new Histogram(3_600_000_000_000L, 3);
        histograms.forEach(all::add);
        long writes = all.getTotalCount();
        if (writes == 0 && !warmup) {
            throw new IllegalStateException(shape.label() + " of " + n + " keys: no call completed inside the "
                    + s.durationMs() + " ms window; lengthen it");
        }
        double seconds = s.durationMs() / 1e3;
        long calls = (s1.stageCalls() - s0.stageCalls()) + (s1.commitCalls() - s0.commitCalls());
        long entries = s1.entriesCommitted() - s0.entriesCommitted();
        long commits = s1.commitCalls() - s0.commitCalls();
        double logsPerWrite = logs1[0] > logs0[0] ? (logs1[1] - logs0[1]) / (logs1[0] - logs0[0]) : Double.NaN;
        double switches = sw0.isEmpty() ? Double.NaN : (double) ContextSwitches.delta(sw0, sw1) / writes;
        if (writes == 0) {
            return new Case(shape, n, threads, 0, 0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                    Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        return new Case(shape, n, threads, writes, writes / seconds, writes * (double) n / seconds,
                all.getValueAtPercentile(50) / 1e3, all.getValueAtPercentile(99) / 1e3, logsPerWrite,
                (double) calls / writes, (double) entries / writes, commits == 0 ? Double.NaN
                : (double) entries / commits, Cpu.cores(cpu1 - cpu0, windowEnd - windowStart),
                Cpu.machineBusy(machine0, machine1), switches);
    }

    /** @return {count, total} of {@code lattice.atomic.participants} so far (zeros before the first atomic write) */
    private static double[] participants(Lattice lattice) {
        DistributionSummary d = lattice.meterRegistry().find("lattice.atomic.participants").summary();
        return d == null ? new double[] {0, 0} : new double[] {d.count(), d.totalAmount()};
    }

    private static void parkUntil(long deadline) {
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private static String render(Settings s, List<Case> cases, double load0, double load1) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "Machine: %s; load average %.1f at the start, %.1f at the end. "
                        + "Provider `%s`%s, 8 partitions per tree, %s keys preloaded per tree, %d-byte values; each "
                        + "case on a fresh lattice, %,d ms warm-up then %,d ms measured, closed-loop client threads."
                        + "%n%n",
                Machine.describe(), load0, load1, s.provider(), s.provider().equals("chronicle")
                        ? " (durability " + s.durability().chronicleOption() + ": " + s.durability().label() + ")"
                        : "", MdTable.count(s.keySpace()), s.valueBytes(), s.warmupMs(), s.durationMs()));
        MdTable t = new MdTable("call", ">keys/call", ">threads", ">calls/s", ">keys/s", ">p50 us", ">p99 us",
                ">keys/s vs put", ">logs/write", ">provider calls/call", ">entries/call", ">entries/commit",
                ">CPU cores", ">CPU us/call", ">ctx switches/call", "what bounds it");
        for (Case c : cases) {
            Case put = cases.stream().filter(x -> x.shape() == Shape.PUT && x.threads() == c.threads()).findFirst()
                    .orElse(null);
            t.row(c.shape().label(), c.keysPerWrite(), c.threads(), MdTable.count(c.writesPerSecond()),
                    MdTable.count(c.keysPerSecond()), MdTable.fixed(c.p50Us(), 1), MdTable.fixed(c.p99Us(), 1),
                    put == null ? "n/a" : MdTable.ratio(c.keysPerSecond(), put.keysPerSecond()),
                    MdTable.fixed(c.logsPerWrite(), 2), MdTable.fixed(c.providerCallsPerWrite(), 1),
                    MdTable.fixed(c.entriesPerWrite(), 1), MdTable.fixed(c.entriesPerCommit(), 2),
                    MdTable.fixed(c.cpuCores(), 2), MdTable.count(c.cpuUsPerWrite()),
                    MdTable.fixed(c.switchesPerWrite(), 1), c.bound());
        }
        md.append(t.render());
        md.append("\nColumns: calls/s and keys/s over the measured window, all threads together; keys/s vs put = "
                + "this row's keys/s over the `put` row's at the same thread count; logs/write = mean of the "
                + "`lattice.atomic.participants` meter; provider calls/call = provider `stage` + `commit` calls "
                + "(`Lattice.stats()`) per call; entries/call = log entries committed per call, all logs together "
                + "(an atomic write over several logs writes a prepare entry per log, a decision entry and resolve "
                + "entries; one in a single log is 1 entry); entries/commit = log entries per provider commit call (coalescing); CPU "
                + "cores = this process's CPU time over the window; CPU us/call = that time per call (all the engine's "
                + "threads, not only the caller's); ctx switches/call = voluntary context switches "
                + "of all this process's threads per call. What bounds it: `CPU` when the machine's CPUs (all "
                + "processes, `/proc/stat`) were at least 90% busy over the window, else `hand-offs` (the callers "
                + "waited with CPU to spare, on the engine's thread hand-offs).\n");
        return md.toString();
    }

    /**
     * Runs the harness from the command line and prints the table: {@code [--provider chronicle|memory]
     * [--durability page-cache|fsync] [--shapes PUT,PUT_ALL,ONE_TREE,TWO_TREES] [--sizes 2,16,64] [--threads 1,8] [--warmup-ms 500] [--duration-ms 2000]
     * [--keys 100000] [--work DIR] [--img DIR]}. Exit code 0, 2 for bad usage, 1 when a case fails.
     *
     * @param args the options
     */
    public static void main(String[] args) {
        String provider = "chronicle";
        Durability durability = Durability.PAGE_CACHE;
        List<Shape> shapes = List.of(Shape.values());
        List<Integer> sizes = List.of(2, 16, 64);
        List<Integer> threads = List.of(1, 8);
        int warmup = 500;
        int duration = 2000;
        int keys = 100_000;
        Path work = Path.of("benchmarks/target/bench-data");
        Path img = null;
        Settings settings;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--provider" -> provider = args[++i];
                    case "--durability" -> durability = Durability.parse(args[++i]);
                    case "--shapes" -> shapes = java.util.Arrays.stream(args[++i].split(","))
                            .map(x -> Shape.valueOf(x.trim().toUpperCase(Locale.ROOT))).toList();
                    case "--sizes" -> sizes = ints(args[++i]);
                    case "--threads" -> threads = ints(args[++i]);
                    case "--warmup-ms" -> warmup = Integer.parseInt(args[++i]);
                    case "--duration-ms" -> duration = Integer.parseInt(args[++i]);
                    case "--keys" -> keys = Integer.parseInt(args[++i]);
                    case "--work" -> work = Path.of(args[++i]);
                    case "--img" -> img = Path.of(args[++i]);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            settings = new Settings(work, img, provider, durability, shapes, sizes, threads, warmup, duration, keys,
                    100);
        } catch (RuntimeException e) {
            System.err.println("atomic harness: " + e.getMessage() + " (options: --provider chronicle|memory "
                    + "--durability page-cache|fsync --shapes PUT,PUT_ALL,ONE_TREE,TWO_TREES --sizes 2,16,64 --threads 1,8 --warmup-ms MS --duration-ms MS "
                    + "--keys N --work DIR --img DIR)");
            System.exit(2);
            return;
        }
        try {
            System.out.println(run(settings, line -> System.err.println(line)).markdown());
        } catch (RuntimeException e) {
            System.err.println("atomic harness: failed: " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }

    /**
     * @param csv comma-separated integers
     * @return the integers
     * @throws NumberFormatException if one is not an integer
     */
    public static List<Integer> ints(String csv) {
        List<Integer> out = new ArrayList<>();
        for (String p : csv.split(",")) {
            out.add(Integer.parseInt(p.trim()));
        }
        return out;
    }
}
