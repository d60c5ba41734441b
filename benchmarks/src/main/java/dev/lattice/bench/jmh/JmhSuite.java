package dev.lattice.bench.jmh;

import dev.lattice.bench.report.Charts;
import dev.lattice.bench.report.Machine;
import dev.lattice.bench.report.MdTable;
import org.jfree.data.category.DefaultCategoryDataset;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.annotations.Mode;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs {@link EngineBench} and {@link SkipListBench} in one JMH run (SampleTime mode, microseconds, with JMH's GC
 * profiler for allocation per operation), once per thread count, and renders p50 per operation, allocation per
 * operation and the ratio to the baseline, beside the Orleans.Lattice reference figures (another machine). With
 * atomic sizes in the settings the same run also includes {@link AtomicBench} and {@link AtomicSkipListBench}, and
 * a second table gives the atomic writes per write and per key, with {@code put} of the same run as the per-key
 * baseline. Not thread-safe.
 */
public final class JmhSuite {

    /** The operations, in table order, with the labels used in the docs. */
    public static final Map<String, String> OPERATIONS = labels();

    /**
     * Orleans.Lattice 9.9 single-silo performance guide, Layer 1, single thread, in-process: another machine, another
     * runtime; listed for orientation only.
     */
    public static final Map<String, String> ORLEANS_REFERENCE = Map.of("get", "1.84 us", "put", "3.79 us",
            "putAll1000", "1.04 ms");

    /**
     * The same guide's atomic rows (Layer 1, single thread, in-process, in-memory storage provider; measured
     * 2026-08-24 on an Azure Standard_D4as_v5, .NET 10): p50 per write and allocation per write, keyed by
     * {@code oneTree:N} and {@code twoTrees:N}. Another machine, another runtime; for orientation only.
     */
    public static final Map<String, String> ORLEANS_ATOMIC_REFERENCE = Map.of(
            "oneTree:2", "64.68 us, 19 KB", "oneTree:16", "166.45 us, 29 KB", "oneTree:64", "182.06 us, 73 KB",
            "twoTrees:2", "138.24 us, 42 KB", "twoTrees:64", "243.68 us, 111 KB", "put:1", "3.79 us, 872 B");

    /** The same figures' p50 alone, microseconds, for the chart. */
    private static final Map<String, Double> ORLEANS_ATOMIC_P50_US = Map.of("oneTree:2", 64.68, "oneTree:16", 166.45,
            "oneTree:64", 182.06, "twoTrees:2", 138.24, "twoTrees:64", 243.68, "put:1", 3.79);

    private JmhSuite() {
    }

    private static Map<String, String> labels() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("get", "get");
        m.put("put", "put");
        m.put("putAll1000", "putAll(1,000)");
        m.put("getAll4", "getAll(4)");
        m.put("scan100", "scan of 100 keys");
        return m;
    }

    /**
     * How to run.
     *
     * @param forks JMH forks (0 runs in this JVM: smoke tests only)
     * @param warmupIterations warm-up iterations
     * @param warmupMs each warm-up iteration's time, milliseconds
     * @param iterations measured iterations
     * @param measureMs each measured iteration's time, milliseconds
     * @param threads thread counts, one JMH run each
     * @param operations the benchmark methods to run (keys of {@link #OPERATIONS})
     * @param atomicKeys keys per atomic write of {@link AtomicBench} and {@link AtomicSkipListBench} (each >= 2;
     *     empty: those are not run); their table uses {@code put} of the same run, so include it in
     *     {@code operations}
     * @param keys keys preloaded (per tree)
     * @param gcProfiler true to add {@code -prof gc}
     * @param imgDir where the chart goes (null: none): {@code jmh-p50.png} for a run without atomic sizes,
     *     {@code jmh-atomic-p50.png} for one with them
     */
    public record Settings(int forks, int warmupIterations, int warmupMs, int iterations, int measureMs,
                           List<Integer> threads, List<String> operations, List<Integer> atomicKeys, int keys,
                           boolean gcProfiler, Path imgDir) {
    }

    /**
     * One benchmark's figures.
     *
     * @param target {@code engine} or {@code baseline}
     * @param operation the method name ({@code oneTree} and {@code twoTrees} are the atomic writes)
     * @param keysPerWrite keys per atomic write ({@code keysPerWrite} parameter), 0 for the other operations
     * @param threads threads
     * @param p50Us median latency, microseconds
     * @param p99Us 99th percentile, microseconds
     * @param allocBytesPerOp bytes allocated per operation ({@code gc.alloc.rate.norm}), NaN without the profiler
     */
    public record Figure(String target, String operation, int keysPerWrite, int threads, double p50Us,
                         double p99Us, double allocBytesPerOp) {

        /** @return true for the atomic writes of {@link AtomicBench} and {@link AtomicSkipListBench} */
        public boolean atomic() {
            return keysPerWrite > 0;
        }
    }

    /**
     * The figures and their tables.
     *
     * @param figures every benchmark
     * @param markdown the table of {@link #OPERATIONS}
     * @param atomicMarkdown the table of the atomic writes (empty when none ran)
     */
    public record Report(List<Figure> figures, String markdown, String atomicMarkdown) {
    }

    /**
     * Runs the suite.
     *
     * @param s the settings
     * @param progress one line per JMH run
     * @return the figures and the table
     * @throws IllegalStateException if JMH fails
     */
    public static Report run(Settings s, Consumer<String> progress) {
        double load0 = Machine.loadAverage();
        List<Figure> figures = new ArrayList<>();
        for (int t : s.threads()) {
            progress.accept("jmh: " + s.operations() + (s.atomicKeys().isEmpty() ? ""
                    : " and atomic writes of " + s.atomicKeys() + " keys") + " on engine and baseline, " + t
                    + " thread(s)");
            ChainedOptionsBuilder o = new OptionsBuilder()
                    .mode(Mode.SampleTime).timeUnit(TimeUnit.MICROSECONDS)
                    .forks(s.forks()).warmupIterations(s.warmupIterations())
                    .warmupTime(TimeValue.milliseconds(s.warmupMs())).measurementIterations(s.iterations())
                    .measurementTime(TimeValue.milliseconds(s.measureMs())).threads(t)
                    .param("keys", Integer.toString(s.keys())).shouldFailOnError(true)
                    .jvmArgsAppend("-Xmx2g", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
            for (String op : s.operations()) {
                o.include("\\." + EngineBench.class.getSimpleName() + "\\." + op + "$");
                o.include("\\." + SkipListBench.class.getSimpleName() + "\\." + op + "$");
            }
            if (!s.atomicKeys().isEmpty()) {
                for (String cls : List.of(AtomicBench.class.getSimpleName(), AtomicSkipListBench.class.getSimpleName())) {
                    o.include("\\." + cls + "\\.(oneTree|twoTrees)$");
                }
                o.param("keysPerWrite", s.atomicKeys().stream().map(String::valueOf).toArray(String[]::new));
            }
            if (s.gcProfiler()) {
                o.addProfiler(GCProfiler.class);
            }
            Collection<RunResult> results;
            try {
                results = new Runner(o.build()).run();
            } catch (RunnerException e) {
                throw new IllegalStateException("JMH failed: " + e.getMessage(), e);
            }
            for (RunResult r : results) {
                String label = r.getParams().getBenchmark();
                String method = label.substring(label.lastIndexOf('.') + 1);
                boolean engine = label.contains("." + EngineBench.class.getSimpleName() + ".")
                        || label.contains("." + AtomicBench.class.getSimpleName() + ".");
                String target = engine ? "engine" : "baseline";
                String kpw = r.getParams().getParam("keysPerWrite");
                int keysPerWrite = kpw == null ? 0 : Integer.parseInt(kpw);
                Result<?> primary = r.getPrimaryResult();
                double p50 = primary.getStatistics().getPercentile(50);
                double p99 = primary.getStatistics().getPercentile(99);
                double alloc = Double.NaN;
                for (Map.Entry<String, Result> sec : r.getSecondaryResults().entrySet()) {
                    if (sec.getKey().endsWith("gc.alloc.rate.norm")) {
                        alloc = sec.getValue().getScore();
                    }
                }
                figures.add(new Figure(target, method, keysPerWrite, t, p50, p99, alloc));
            }
        }
        double load1 = Machine.loadAverage();
        String md = render(s, figures, load0, load1);
        String atomicMd = s.atomicKeys().isEmpty() ? "" : renderAtomic(s, figures, load0, load1);
        if (s.imgDir() != null && !s.atomicKeys().isEmpty()) {
            atomicChart(s, figures);
        }
        if (s.imgDir() != null && s.atomicKeys().isEmpty()) {
            DefaultCategoryDataset d = Charts.dataset();
            for (Figure f : figures) {
                if (f.atomic()) {
                    continue;
                }
                d.addValue(Math.max(f.p50Us(), 0.001), f.target().equals("engine") ? "Lattice engine (memory:)"
                        : "ConcurrentSkipListMap", OPERATIONS.get(f.operation()) + ", " + f.threads() + " thr");
            }
            Charts.bars(s.imgDir().resolve("jmh-p50.png"), "JMH p50 per operation: engine vs bare skip list",
                    "operation, threads", "p50 us (log scale)", d, true);
        }
        return new Report(figures, md, atomicMd);
    }

    private static String render(Settings s, List<Figure> figures, double load0, double load1) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "Machine: %s; load average %.1f at the start, %.1f at the end. "
                        + "JMH SampleTime, %d fork(s), %d x %d ms warm-up, %d x %d ms measured, %s keys of 100 bytes.%n%n",
                Machine.describe(), load0, load1, s.forks(), s.warmupIterations(), s.warmupMs(), s.iterations(),
                s.measureMs(), MdTable.count(s.keys())));
        MdTable t = new MdTable("operation", ">threads", ">engine p50 us", ">baseline p50 us",
                ">engine/baseline p50", ">engine p99 us", ">engine alloc B/op", ">baseline alloc B/op",
                ">Orleans.Lattice ref. (other machine)");
        for (String op : s.operations()) {
            for (int th : s.threads()) {
                Figure e = find(figures, "engine", op, th);
                Figure b = find(figures, "baseline", op, th);
                if (e == null || b == null) {
                    continue;
                }
                t.row(OPERATIONS.get(op), th, MdTable.fixed(e.p50Us(), 2), MdTable.fixed(b.p50Us(), 3),
                        MdTable.ratio(e.p50Us(), b.p50Us()), MdTable.fixed(e.p99Us(), 2),
                        MdTable.fixed(e.allocBytesPerOp(), 0), MdTable.fixed(b.allocBytesPerOp(), 0),
                        th == 1 ? ORLEANS_REFERENCE.getOrDefault(op, "") : "");
            }
        }
        md.append(t.render());
        md.append("\nAtomic writes of 2 and 64 keys (and 16; one tree and two trees; 1 and 2 threads) are measured in "
                + "their own JMH run, with that run's `put` as the per-key baseline and the same skip-list baseline: "
                + "see the `atomic-jmh` table under \"Atomic writes\" below (Orleans.Lattice reference: 64-key atomic "
                + "write 182 us p50, another machine).\n");
        return md.toString();
    }

    private static String atomicKey(Figure f) {
        return (f.atomic() ? f.operation() : "put") + ":" + Math.max(1, f.keysPerWrite());
    }

    private static String atomicLabel(Figure f) {
        return f.atomic() ? (f.operation().equals("oneTree") ? "atomic, 1 tree" : "atomic, 2 trees (half each)")
                : "put (1 key)";
    }

    private static String renderAtomic(Settings s, List<Figure> figures, double load0, double load1) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "Machine: %s; load average %.1f at the start, %.1f at the end. "
                        + "JMH SampleTime, %d fork(s), %d x %d ms warm-up, %d x %d ms measured; `memory:` provider, two "
                        + "trees of %s keys (100-byte values, 8 partitions each); each write's keys distinct and drawn "
                        + "uniformly from the key space.%n%n",
                Machine.describe(), load0, load1, s.forks(), s.warmupIterations(), s.warmupMs(), s.iterations(),
                s.measureMs(), MdTable.count(s.keys())));
        MdTable t = new MdTable("write", ">keys", ">threads", ">engine p50 us", ">engine p99 us",
                ">writes/s per thread (1/p50)", ">keys/s per thread", ">p50 per key / put p50",
                ">skip-list p50 us", ">engine/skip-list p50", ">engine alloc B/op", ">engine alloc B/key",
                ">skip-list alloc B/op", ">Orleans.Lattice 9.9 p50, alloc (other machine, 1 thread)");
        List<String> ops = new ArrayList<>(List.of("put"));
        ops.add("oneTree");
        ops.add("twoTrees");
        for (int th : s.threads()) {
            Figure put = find(figures, "engine", "put", th);
            for (String op : ops) {
                List<Integer> sizes = op.equals("put") ? List.of(0) : s.atomicKeys();
                for (int n : sizes) {
                    Figure e = find(figures, "engine", op, n, th);
                    Figure b = find(figures, "baseline", op, n, th);
                    if (e == null) {
                        continue;
                    }
                    int k = Math.max(1, n);
                    t.row(atomicLabel(e), k, th, MdTable.fixed(e.p50Us(), 2), MdTable.fixed(e.p99Us(), 2),
                            MdTable.count(1e6 / e.p50Us()), MdTable.count(1e6 / e.p50Us() * k),
                            put == null ? "n/a" : MdTable.ratio(e.p50Us() / k, put.p50Us()),
                            b == null ? "n/a" : MdTable.fixed(b.p50Us(), 3),
                            b == null ? "n/a" : MdTable.ratio(e.p50Us(), b.p50Us()),
                            MdTable.fixed(e.allocBytesPerOp(), 0), MdTable.fixed(e.allocBytesPerOp() / k, 0),
                            b == null ? "n/a" : MdTable.fixed(b.allocBytesPerOp(), 0),
                            th == 1 ? ORLEANS_ATOMIC_REFERENCE.getOrDefault(atomicKey(e), "") : "");
                }
            }
        }
        md.append(t.render());
        md.append("\nColumns: writes/s and keys/s per thread are 1/p50 and keys/p50 (how the Orleans.Lattice guide "
                + "derives its per-thread rate); p50 per key / put p50 = the atomic write's p50 divided by its keys, "
                + "over the p50 of one `put` in the same run and thread count; skip-list = the same key sets put "
                + "one by one into bare `ConcurrentSkipListMap`s (no log, no atomicity); alloc = JMH `-prof gc` "
                + "`gc.alloc.rate.norm`. The Orleans.Lattice column is that project's single-silo guide, Layer 1 "
                + "(BenchmarkDotNet, one thread, in-memory storage, Azure Standard_D4as_v5, .NET 10): **another machine "
                + "and another runtime**.\n");
        return md.toString();
    }

    private static void atomicChart(Settings s, List<Figure> figures) {
        DefaultCategoryDataset d = Charts.dataset();
        for (int th : s.threads()) {
            for (String op : List.of("put", "oneTree", "twoTrees")) {
                for (int n : op.equals("put") ? List.of(0) : s.atomicKeys()) {
                    Figure e = find(figures, "engine", op, n, th);
                    Figure b = find(figures, "baseline", op, n, th);
                    if (e == null) {
                        continue;
                    }
                    String cat = (op.equals("put") ? "put" : (op.equals("oneTree") ? "1 tree " : "2 trees ") + n)
                            + ", " + th + " thr";
                    d.addValue(Math.max(e.p50Us(), 0.001), "Lattice engine (memory:)", cat);
                    if (b != null) {
                        d.addValue(Math.max(b.p50Us(), 0.001), "ConcurrentSkipListMap puts (not atomic)", cat);
                    }
                    Double ref = th == 1 ? ORLEANS_ATOMIC_P50_US.get(atomicKey(e)) : null;
                    d.addValue(ref, "Orleans.Lattice 9.9 guide (other machine)", cat);
                }
            }
        }
        Charts.bars(s.imgDir().resolve("jmh-atomic-p50.png"), "JMH p50 per write: atomic writes vs one put vs bare "
                + "skip list", "write (keys), threads", "p50 us (log scale)", d, true);
    }

    private static Figure find(List<Figure> figures, String target, String op, int threads) {
        return find(figures, target, op, 0, threads);
    }

    private static Figure find(List<Figure> figures, String target, String op, int keysPerWrite, int threads) {
        return figures.stream().filter(f -> f.target().equals(target) && f.operation().equals(op)
                && f.keysPerWrite() == keysPerWrite && f.threads() == threads).findFirst().orElse(null);
    }
}
