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
 * operation and the ratio to the baseline, beside the Orleans.Lattice reference figures (another machine). Not
 * thread-safe.
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
     * @param keys keys preloaded
     * @param gcProfiler true to add {@code -prof gc}
     * @param imgDir where the chart goes (null: none)
     */
    public record Settings(int forks, int warmupIterations, int warmupMs, int iterations, int measureMs,
                           List<Integer> threads, List<String> operations, int keys, boolean gcProfiler,
                           Path imgDir) {
    }

    /**
     * One benchmark's figures.
     *
     * @param target {@code engine} or {@code baseline}
     * @param operation the method name
     * @param threads threads
     * @param p50Us median latency, microseconds
     * @param p99Us 99th percentile, microseconds
     * @param allocBytesPerOp bytes allocated per operation ({@code gc.alloc.rate.norm}), NaN without the profiler
     */
    public record Figure(String target, String operation, int threads, double p50Us, double p99Us,
                         double allocBytesPerOp) {
    }

    /**
     * The figures and their table.
     *
     * @param figures every benchmark
     * @param markdown the table
     */
    public record Report(List<Figure> figures, String markdown) {
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
            progress.accept("jmh: " + s.operations() + " on engine and baseline, " + t + " thread(s)");
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
                String target = label.contains(EngineBench.class.getSimpleName()) ? "engine" : "baseline";
                Result<?> primary = r.getPrimaryResult();
                double p50 = primary.getStatistics().getPercentile(50);
                double p99 = primary.getStatistics().getPercentile(99);
                double alloc = Double.NaN;
                for (Map.Entry<String, Result> sec : r.getSecondaryResults().entrySet()) {
                    if (sec.getKey().endsWith("gc.alloc.rate.norm")) {
                        alloc = sec.getValue().getScore();
                    }
                }
                figures.add(new Figure(target, method, t, p50, p99, alloc));
            }
        }
        String md = render(s, figures, load0, Machine.loadAverage());
        if (s.imgDir() != null) {
            DefaultCategoryDataset d = Charts.dataset();
            for (Figure f : figures) {
                d.addValue(Math.max(f.p50Us(), 0.001), f.target().equals("engine") ? "Lattice engine (memory:)"
                        : "ConcurrentSkipListMap", OPERATIONS.get(f.operation()) + ", " + f.threads() + " thr");
            }
            Charts.bars(s.imgDir().resolve("jmh-p50.png"), "JMH p50 per operation: engine vs bare skip list",
                    "operation, threads", "p50 us (log scale)", d, true);
        }
        return new Report(figures, md);
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
        t.row("atomic write of 2 keys", "1, 2", "not yet", "", "", "", "", "", "");
        t.row("atomic write of 64 keys", "1, 2", "not yet", "", "", "", "", "", "182 us (1 thread)");
        md.append(t.render());
        md.append("\nAtomic writes (`putAllAtomic`, cross-tree `atomic().commit()`) do not exist in the engine yet: "
                + "those rows are left for when they do.\n");
        return md.toString();
    }

    private static Figure find(List<Figure> figures, String target, String op, int threads) {
        return figures.stream().filter(f -> f.target().equals(target) && f.operation().equals(op)
                && f.threads() == threads).findFirst().orElse(null);
    }
}
