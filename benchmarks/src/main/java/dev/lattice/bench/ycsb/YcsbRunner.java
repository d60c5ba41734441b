package dev.lattice.bench.ycsb;

import dev.lattice.bench.report.Cpu;
import org.apache.htrace.core.HTraceConfiguration;
import org.apache.htrace.core.Tracer;
import site.ycsb.Client;
import site.ycsb.ClientThread;
import site.ycsb.DB;
import site.ycsb.DBFactory;
import site.ycsb.UnknownDBException;
import site.ycsb.Utils;
import site.ycsb.Workload;
import site.ycsb.WorkloadException;
import site.ycsb.measurements.Measurements;
import site.ycsb.measurements.exporter.MeasurementsExporter;
import site.ycsb.measurements.exporter.TextMeasurementsExporter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;

/**
 * Runs the real YCSB 0.17 client in this JVM: the load phase ({@code -load}) and then the run phase ({@code -t}),
 * with YCSB's own {@link ClientThread}s, {@link site.ycsb.workloads.CoreWorkload}, {@code DBWrapper} latency
 * measurement and text exporter, the way {@code site.ycsb.Client#main} wires them, but without its
 * {@code System.exit}. Differences from the command-line client: no throttling target, no status thread, no
 * tracing, and the GC lines report the phase's own collections. YCSB keeps its measurements in a JVM-wide singleton
 * that it never resets; this runner resets it (by reflection) before each phase so each report covers one phase.
 * One run at a time per JVM (the singleton is shared): {@link #run} is synchronized.
 */
public final class YcsbRunner {

    /** The workload letters with a property file in {@code /workloads/}. */
    public static final List<String> WORKLOADS = List.of("a", "b", "c", "d", "e", "f");

    /** YCSB's latency percentiles this runner asks for (property {@code hdrhistogram.percentiles}). */
    public static final String PERCENTILES = "50,95,99";

    private static volatile boolean quietNotice;

    private YcsbRunner() {
    }

    /**
     * Latency figures of one operation type in one phase, from YCSB's HdrHistogram measurement.
     *
     * @param operation YCSB's name ({@code READ}, {@code UPDATE}, {@code INSERT}, {@code SCAN},
     *     {@code READ-MODIFY-WRITE}, {@code DELETE}, or a {@code -FAILED} variant)
     * @param operations operations measured
     * @param averageUs mean latency, microseconds
     * @param p50Us median latency, microseconds
     * @param p95Us 95th percentile, microseconds
     * @param p99Us 99th percentile, microseconds
     * @param maxUs maximum, microseconds
     * @param returns count per YCSB status name ({@code OK}, {@code NOT_FOUND}, {@code ERROR}, ...)
     */
    public record OpStats(String operation, long operations, double averageUs, double p50Us, double p95Us,
                          double p99Us, double maxUs, Map<String, Long> returns) {
    }

    /**
     * One phase's outcome.
     *
     * @param transactions false for the load phase, true for the run phase
     * @param runtimeMs wall time of the client threads, milliseconds
     * @param operations operations done by all threads
     * @param throughput operations per second
     * @param ops per-operation latency, in YCSB's export order
     * @param report YCSB's text report of the phase ({@code [OP], measurement, value} lines)
     * @param cpuCores CPU time of this process over the phase's wall time (2.0 = two cores busy), NaN if unknown
     */
    public record PhaseResult(boolean transactions, long runtimeMs, long operations, double throughput,
                              Map<String, OpStats> ops, String report, double cpuCores) {

        /** @return the count of non-OK returns over all operations (NOT_FOUND, ERROR, ...) */
        public long notOk() {
            long n = 0;
            for (OpStats s : ops.values()) {
                for (Map.Entry<String, Long> r : s.returns().entrySet()) {
                    if (!r.getKey().equals("OK")) {
                        n += r.getValue();
                    }
                }
            }
            return n;
        }

        /** @return the count of ERROR returns over all operations */
        public long errors() {
            return ops.values().stream().mapToLong(s -> s.returns().getOrDefault("ERROR", 0L)).sum();
        }
    }

    /**
     * Both phases.
     *
     * @param load the load phase
     * @param run the run phase
     */
    public record Result(PhaseResult load, PhaseResult run) {
    }

    /**
     * Drops YCSB's {@code DBWrapper: report latency for each error ...} notice altogether (by default it is printed
     * once per phase): for harnesses that run many phases.
     *
     * @param quiet true to drop it
     */
    public static void quietDbWrapperNotice(boolean quiet) {
        quietNotice = quiet;
    }

    /**
     * The standard core workload's properties.
     *
     * @param letter {@code a} .. {@code f} (case-insensitive)
     * @return a fresh copy of the workload's properties
     * @throws IllegalArgumentException if the letter is not one of {@link #WORKLOADS}
     */
    public static Properties workload(String letter) {
        String l = letter.toLowerCase(Locale.ROOT);
        if (!WORKLOADS.contains(l)) {
            throw new IllegalArgumentException("workload must be one of " + WORKLOADS + ", got '" + letter + "'");
        }
        Properties p = new Properties();
        try (InputStream in = YcsbRunner.class.getResourceAsStream("/workloads/workload" + l)) {
            if (in == null) {
                throw new IllegalStateException("resource /workloads/workload" + l + " missing from the classpath");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    /**
     * Runs the load phase and then the run phase.
     *
     * @param props the complete properties: the workload's, plus {@code db}, {@code recordcount},
     *     {@code operationcount}, {@code threadcount} and the binding's own
     * @param progress receives one line per phase start and end
     * @return both phases' results
     * @throws IllegalArgumentException if a count is not a positive integer, or the db class is unknown
     * @throws IllegalStateException if the workload fails to initialise
     */
    public static synchronized Result run(Properties props, Consumer<String> progress) {
        Properties load = copy(props);
        load.setProperty(Client.DO_TRANSACTIONS_PROPERTY, "false");
        progress.accept("YCSB load phase: " + props.getProperty(Client.RECORD_COUNT_PROPERTY) + " records, "
                + props.getProperty(Client.THREAD_COUNT_PROPERTY, "1") + " threads");
        PhaseResult l = phase(load);
        progress.accept("YCSB load phase done: " + String.format(Locale.ROOT, "%.0f", l.throughput()) + " ops/s");
        Properties run = copy(props);
        run.setProperty(Client.DO_TRANSACTIONS_PROPERTY, "true");
        progress.accept("YCSB run phase: " + props.getProperty(Client.OPERATION_COUNT_PROPERTY) + " operations");
        PhaseResult r = phase(run);
        progress.accept("YCSB run phase done: " + String.format(Locale.ROOT, "%.0f", r.throughput()) + " ops/s");
        return new Result(l, r);
    }

    private static Properties copy(Properties props) {
        Properties p = new Properties();
        for (String k : props.stringPropertyNames()) {
            p.setProperty(k, props.getProperty(k));
        }
        p.putIfAbsent("hdrhistogram.percentiles", PERCENTILES);
        p.putIfAbsent(Measurements.MEASUREMENT_TYPE_PROPERTY, "hdrhistogram");
        return p;
    }

    /**
     * Runs one phase.
     *
     * @param props complete properties (as for {@link #run})
     * @param transactions false for the load phase, true for the run phase
     * @return the phase's result
     * @throws IllegalArgumentException if a count is not a positive integer, or the db class is unknown
     */
    public static synchronized PhaseResult phase(Properties props, boolean transactions) {
        Properties p = copy(props);
        p.setProperty(Client.DO_TRANSACTIONS_PROPERTY, Boolean.toString(transactions));
        return phase(p);
    }

    private static PhaseResult phase(Properties props) {
        boolean transactions = Boolean.parseBoolean(props.getProperty(Client.DO_TRANSACTIONS_PROPERTY, "true"));
        int threads = positive(props, Client.THREAD_COUNT_PROPERTY, "1");
        String countKey = transactions ? Client.OPERATION_COUNT_PROPERTY
                : props.containsKey(Client.INSERT_COUNT_PROPERTY) ? Client.INSERT_COUNT_PROPERTY
                : Client.RECORD_COUNT_PROPERTY;
        int opcount = positive(props, countKey, "0");
        positive(props, Client.RECORD_COUNT_PROPERTY, "0");
        threads = Math.min(threads, opcount);
        String dbname = props.getProperty(Client.DB_PROPERTY, "site.ycsb.BasicDB");

        resetMeasurements(props);
        Workload workload;
        try {
            workload = (Workload) Class.forName(props.getProperty(Client.WORKLOAD_PROPERTY,
                    "site.ycsb.workloads.CoreWorkload")).getDeclaredConstructor().newInstance();
            workload.init(props);
        } catch (WorkloadException e) {
            throw new IllegalStateException("YCSB workload failed to initialise: " + e.getMessage(), e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("cannot create workload " + props.getProperty(
                    Client.WORKLOAD_PROPERTY) + ": " + e, e);
        }
        Tracer tracer = new Tracer.Builder("YCSB " + workload.getClass().getSimpleName())
                .conf(HTraceConfiguration.fromMap(Collections.emptyMap())).build();
        try {
            CountDownLatch done = new CountDownLatch(threads);
            List<ClientThread> clients = new ArrayList<>(threads);
            for (int id = 0; id < threads; id++) {
                DB db;
                try {
                    db = DBFactory.newDB(dbname, props, tracer);
                } catch (UnknownDBException e) {
                    throw new IllegalArgumentException("unknown YCSB db class " + dbname, e);
                }
                int share = opcount / threads + (id < opcount % threads ? 1 : 0);
                ClientThread c = new ClientThread(db, transactions, workload, props, share, -1, done);
                c.setThreadId(id);
                c.setThreadCount(threads);
                clients.add(c);
            }
            long gcCount0 = Utils.getGCTotalCollectionCount();
            long gcTime0 = Utils.getGCTotalTime();
            List<Thread> running = new ArrayList<>(threads);
            for (int id = 0; id < threads; id++) {
                Thread t = new Thread(clients.get(id), "ycsb-client-" + id);
                running.add(t);
            }
            // YCSB's DBWrapper.init() prints the same line in every client thread: let it through once
            PrintStream realErr = System.err;
            System.setErr(new OnceFilter(realErr, "DBWrapper: report latency for each error is"));
            long start = System.currentTimeMillis();
            long wall0 = System.nanoTime();
            long cpu0 = Cpu.processNanos();
            long opsDone = 0;
            long runtime;
            double cpuCores;
            try {
                running.forEach(Thread::start);
                for (int id = 0; id < threads; id++) {
                    joinUninterruptibly(running.get(id));
                    opsDone += clients.get(id).getOpsDone();
                }
                runtime = Math.max(1, System.currentTimeMillis() - start);
            } finally {
                cpuCores = Cpu.cores(Cpu.processNanos() - cpu0, System.nanoTime() - wall0);
                System.setErr(realErr);
            }
            try {
                workload.cleanup();
            } catch (WorkloadException e) {
                throw new IllegalStateException("YCSB workload cleanup failed: " + e.getMessage(), e);
            }
            double throughput = 1000.0 * opsDone / runtime;
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            Capture capture = new Capture(new TextMeasurementsExporter(text));
            try (capture) {
                capture.write("OVERALL", "RunTime(ms)", runtime);
                capture.write("OVERALL", "Throughput(ops/sec)", throughput);
                capture.write("TOTAL_GCs", "Count", Utils.getGCTotalCollectionCount() - gcCount0);
                capture.write("TOTAL_GC_TIME", "Time(ms)", Utils.getGCTotalTime() - gcTime0);
                Measurements.getMeasurements().exportMeasurements(capture);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return new PhaseResult(transactions, runtime, opsDone, throughput, capture.ops(),
                    text.toString(StandardCharsets.UTF_8), cpuCores);
        } finally {
            tracer.close();
        }
    }

    private static int positive(Properties props, String key, String dflt) {
        String v = props.getProperty(key, dflt);
        try {
            int n = Integer.parseInt(v.trim());
            if (n < 1) {
                throw new IllegalArgumentException(key + " must be >= 1, got " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer, got '" + v + "'");
        }
    }

    private static void joinUninterruptibly(Thread t) {
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** YCSB's Measurements is a lazily created singleton that is never reset: drop it so the phase starts empty. */
    private static void resetMeasurements(Properties props) {
        try {
            Field f = Measurements.class.getDeclaredField("singleton");
            f.setAccessible(true);
            f.set(null, null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reset YCSB's measurements (YCSB version other than 0.17?)", e);
        }
        Measurements.setProperties(props);
    }

    /** A print stream that drops repeats of lines starting with a prefix (YCSB prints them with println). */
    private static final class OnceFilter extends PrintStream {
        private final String prefix;
        private boolean seen;

        OnceFilter(PrintStream out, String prefix) {
            super(out, true, StandardCharsets.UTF_8);
            this.prefix = prefix;
        }

        @Override
        public void println(String x) {
            if (x != null && x.startsWith(prefix)) {
                synchronized (this) {
                    if (seen || quietNotice) {
                        return;
                    }
                    seen = true;
                }
            }
            super.println(x);
        }
    }

    /** Passes every value to YCSB's text exporter and keeps the latency figures. */
    private static final class Capture implements MeasurementsExporter {
        private final MeasurementsExporter text;
        private final Map<String, Map<String, Double>> values = new LinkedHashMap<>();

        Capture(MeasurementsExporter text) {
            this.text = text;
        }

        @Override
        public void write(String metric, String measurement, int i) throws IOException {
            text.write(metric, measurement, i);
            keep(metric, measurement, i);
        }

        @Override
        public void write(String metric, String measurement, long i) throws IOException {
            text.write(metric, measurement, i);
            keep(metric, measurement, i);
        }

        @Override
        public void write(String metric, String measurement, double d) throws IOException {
            text.write(metric, measurement, d);
            keep(metric, measurement, d);
        }

        private void keep(String metric, String measurement, double v) {
            values.computeIfAbsent(metric, m -> new LinkedHashMap<>()).put(measurement, v);
        }

        Map<String, OpStats> ops() {
            Map<String, OpStats> out = new LinkedHashMap<>();
            for (Map.Entry<String, Map<String, Double>> e : values.entrySet()) {
                Map<String, Double> m = e.getValue();
                if (!m.containsKey("Operations") || e.getKey().equals("CLEANUP")) {
                    continue;
                }
                Map<String, Long> returns = new LinkedHashMap<>();
                for (Map.Entry<String, Double> v : m.entrySet()) {
                    if (v.getKey().startsWith("Return=")) {
                        returns.put(v.getKey().substring("Return=".length()), v.getValue().longValue());
                    }
                }
                out.put(e.getKey(), new OpStats(e.getKey(), m.get("Operations").longValue(),
                        m.getOrDefault("AverageLatency(us)", Double.NaN),
                        m.getOrDefault("50thPercentileLatency(us)", Double.NaN),
                        m.getOrDefault("95thPercentileLatency(us)", Double.NaN),
                        m.getOrDefault("99thPercentileLatency(us)", Double.NaN),
                        m.getOrDefault("MaxLatency(us)", Double.NaN), returns));
            }
            return out;
        }

        @Override
        public void close() throws IOException {
            text.close();
        }
    }
}
