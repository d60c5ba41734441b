package dev.lattice.bench.peer;

import dev.lattice.bench.report.Charts;
import dev.lattice.bench.report.Machine;
import dev.lattice.bench.report.MdTable;
import dev.lattice.bench.ycsb.LatticeYcsbClient;
import dev.lattice.bench.ycsb.YcsbRunner;
import org.jfree.data.category.DefaultCategoryDataset;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * Lattice on Chronicle against RocksDB on this machine, same run, same workload, same durability: through the real
 * YCSB client ({@link LatticeYcsbClient} vs {@link RocksYcsbClient}), through the direct put/get harness
 * ({@link DirectHarness}), and open/recovery time after N records ({@link RecoveryHarness}). Produces Markdown tables
 * and PNG charts. Not thread-safe.
 */
public final class PeerComparison {

    private PeerComparison() {
    }

    /**
     * What to run.
     *
     * @param workDir where the stores are created (one subdirectory per case, deleted after it); use a real disk
     * @param imgDir where the PNG charts go (null: no charts)
     * @param workloads YCSB workload letters
     * @param threads client thread counts
     * @param ycsbRecords YCSB records
     * @param ycsbOperations YCSB run-phase operations
     * @param ycsbDurability durability of the YCSB cases
     * @param durabilities durabilities of the direct harness
     * @param directPuts direct-harness puts per case at page-cache durability
     * @param directFsyncPuts direct-harness puts per case at fsync durability
     * @param directGets direct-harness gets per case
     * @param valueBytes direct-harness and recovery value size
     * @param recoveryRecords records loaded before the open/recovery measurement (0: skip it)
     * @param partitions Lattice partitions per tree
     * @param repeats how often each YCSB and direct case pair runs (the tables give the median ratio and its range)
     */
    public record Settings(Path workDir, Path imgDir, List<String> workloads, List<Integer> threads, int ycsbRecords,
                           int ycsbOperations, Durability ycsbDurability, List<Durability> durabilities,
                           int directPuts, int directFsyncPuts, int directGets, int valueBytes, int recoveryRecords,
                           int partitions, int repeats) {
    }

    /**
     * One YCSB case.
     *
     * @param kind the store
     * @param workload the workload letter
     * @param threads client threads
     * @param run the run phase's result
     * @param entriesPerCommit Lattice: log entries per provider commit call in the run phase (NaN: none, or RocksDB)
     * @param repeat which repetition of the case (0-based)
     */
    public record YcsbCase(KvStore.Kind kind, String workload, int threads, YcsbRunner.PhaseResult run,
                           double entriesPerCommit, int repeat) {
    }

    /**
     * One direct-harness case.
     *
     * @param kind the store
     * @param durability the durability
     * @param phase the figures
     * @param entriesPerCommit Lattice puts: log entries per provider commit call (NaN otherwise)
     * @param repeat which repetition of the case (0-based)
     */
    public record DirectCase(KvStore.Kind kind, Durability durability, DirectHarness.PhaseResult phase,
                             double entriesPerCommit, int repeat) {
    }

    /**
     * Everything measured.
     *
     * @param ycsb the YCSB cases
     * @param direct the direct-harness cases
     * @param recovery the recovery measurements
     * @param parts the Markdown of each part that ran ({@code ycsb}, {@code direct}, {@code recovery}), each starting
     *     with a line about the machine
     */
    public record Report(List<YcsbCase> ycsb, List<DirectCase> direct, List<RecoveryHarness.Result> recovery,
                         Map<String, String> parts) {

        /** @return every part's Markdown, in order */
        public String markdown() {
            return String.join("\n", parts.values());
        }
    }

    /**
     * Runs every case and renders the report.
     *
     * @param s the settings
     * @param progress one line per case
     * @return the figures and the Markdown tables
     * @throws IllegalStateException if a case fails (a YCSB ERROR return, a lost record)
     */
    public static Report run(Settings s, Consumer<String> progress) {
        double load0 = Machine.loadAverage();
        List<YcsbCase> ycsb = new ArrayList<>();
        int caseNo = 0;
        for (int rep = 0; rep < s.repeats(); rep++) {
            for (String w : s.workloads()) {
                for (int t : s.threads()) {
                    // alternate which store goes first so slow drift in the machine's load hits both
                    for (KvStore.Kind k : order(caseNo++)) {
                        progress.accept("peer ycsb " + w + " " + k.label() + " threads " + t + " (repeat " + (rep + 1)
                                + "/" + s.repeats() + ")");
                        ycsb.add(ycsbCase(s, k, w, t, rep));
                    }
                }
            }
        }
        List<DirectCase> direct = new ArrayList<>();
        if (!s.durabilities().isEmpty()) {
            warmUpDirect(s, progress);
        }
        for (int rep = 0; rep < s.repeats(); rep++) {
        for (Durability d : s.durabilities()) {
            for (int t : s.threads()) {
                for (KvStore.Kind k : order(caseNo++)) {
                    progress.accept("peer direct " + k.label() + " " + d.label() + " threads " + t + " (repeat "
                            + (rep + 1) + "/" + s.repeats() + ")");
                    Path dir = s.workDir().resolve("direct-" + k.name().toLowerCase(Locale.ROOT));
                    RecoveryHarness.delete(dir);
                    try (KvStore store = KvStore.open(k, dir, d, s.partitions())) {
                        int puts = d == Durability.FSYNC ? s.directFsyncPuts() : s.directPuts();
                        dev.lattice.engine.LatticeStats before = store.latticeStats();
                        List<DirectHarness.PhaseResult> phases = DirectHarness.run(store, t, puts, s.directGets(),
                                s.valueBytes());
                        double perCommit = perCommit(before, store.latticeStats());
                        for (DirectHarness.PhaseResult p : phases) {
                            direct.add(new DirectCase(k, d, p, p.operation().equals("put") ? perCommit : Double.NaN,
                                    rep));
                        }
                    } finally {
                        RecoveryHarness.delete(dir);
                    }
                }
            }
        }
        }
        List<RecoveryHarness.Result> recovery = new ArrayList<>();
        if (s.recoveryRecords() > 0) {
            for (String reopen : List.of("clean", "crash")) {
                for (KvStore.Kind k : KvStore.Kind.values()) {
                    progress.accept("peer recovery " + k.label() + " " + reopen + " after "
                            + s.recoveryRecords() + " records");
                    Path dir = s.workDir().resolve("recovery-" + k.name().toLowerCase(Locale.ROOT));
                    RecoveryHarness.delete(dir);
                    RecoveryHarness.Result r = RecoveryHarness.run(k, dir, Durability.PAGE_CACHE,
                            reopen.equals("crash"), s.recoveryRecords(), s.valueBytes(), s.partitions());
                    if (!r.verified()) {
                        throw new IllegalStateException(k.label() + " lost records after a " + reopen + " reopen");
                    }
                    recovery.add(r);
                }
            }
        }
        double load1 = Machine.loadAverage();
        Map<String, String> md = render(s, ycsb, direct, recovery, load0, load1);
        if (s.imgDir() != null) {
            charts(s, ycsb, direct, recovery);
        }
        return new Report(ycsb, direct, recovery, md);
    }

    private static List<KvStore.Kind> order(int caseNo) {
        return caseNo % 2 == 0 ? List.of(KvStore.Kind.LATTICE, KvStore.Kind.ROCKSDB)
                : List.of(KvStore.Kind.ROCKSDB, KvStore.Kind.LATTICE);
    }

    private static double perCommit(dev.lattice.engine.LatticeStats before, dev.lattice.engine.LatticeStats after) {
        if (before == null || after == null || after.commitCalls() == before.commitCalls()) {
            return Double.NaN;
        }
        return (double) (after.entriesCommitted() - before.entriesCommitted())
                / (after.commitCalls() - before.commitCalls());
    }

    private static YcsbCase ycsbCase(Settings s, KvStore.Kind kind, String w, int threads, int repeat) {
        Path dir = s.workDir().resolve("ycsb-" + kind.name().toLowerCase(Locale.ROOT) + "-" + w + "-" + threads);
        RecoveryHarness.delete(dir);
        Properties p = YcsbRunner.workload(w);
        p.setProperty("recordcount", Integer.toString(s.ycsbRecords()));
        p.setProperty("operationcount", Integer.toString(s.ycsbOperations()));
        p.setProperty("threadcount", Integer.toString(threads));
        try {
            YcsbRunner.PhaseResult load;
            YcsbRunner.PhaseResult run;
            double perCommit = Double.NaN;
            if (kind == KvStore.Kind.LATTICE) {
                String uri = "chronicle:" + dir.toAbsolutePath() + "?durability="
                        + s.ycsbDurability().chronicleOption();
                p.setProperty("db", LatticeYcsbClient.class.getName());
                p.setProperty(LatticeYcsbClient.PROVIDER_PROPERTY, uri);
                p.setProperty(LatticeYcsbClient.PARTITIONS_PROPERTY, Integer.toString(s.partitions()));
                dev.lattice.engine.Lattice lattice = LatticeYcsbClient.pin(uri, s.partitions());
                try {
                    load = YcsbRunner.phase(p, false);
                    dev.lattice.engine.LatticeStats before = lattice.stats();
                    run = YcsbRunner.phase(p, true);
                    perCommit = perCommit(before, lattice.stats());
                } finally {
                    LatticeYcsbClient.unpin(uri);
                }
            } else {
                p.setProperty("db", RocksYcsbClient.class.getName());
                p.setProperty(RocksYcsbClient.DIR_PROPERTY, dir.toString());
                p.setProperty(RocksYcsbClient.SYNC_PROPERTY, Boolean.toString(s.ycsbDurability().rocksSync()));
                RocksYcsbClient.pin(dir.toString(), s.ycsbDurability().rocksSync());
                try {
                    load = YcsbRunner.phase(p, false);
                    run = YcsbRunner.phase(p, true);
                } finally {
                    RocksYcsbClient.unpin(dir.toString());
                }
            }
            if (load.errors() + run.errors() > 0) {
                throw new IllegalStateException(kind.label() + " workload " + w + ": "
                        + (load.errors() + run.errors()) + " YCSB operations returned ERROR");
            }
            return new YcsbCase(kind, w, threads, run, perCommit, repeat);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(kind.label() + " workload " + w + " failed: " + e, e);
        } finally {
            RecoveryHarness.delete(dir);
        }
    }

    /** Median and range of a list of ratios. */
    private record Spread(double median, double min, double max) {
        static Spread of(List<Double> values) {
            List<Double> v = values.stream().filter(x -> !Double.isNaN(x)).sorted().toList();
            if (v.isEmpty()) {
                return new Spread(Double.NaN, Double.NaN, Double.NaN);
            }
            int n = v.size();
            double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
            return new Spread(median, v.get(0), v.get(n - 1));
        }

        String ratio() {
            return Double.isNaN(median) ? "n/a" : String.format(Locale.ROOT, "%.2fx", median);
        }

        String range() {
            return Double.isNaN(median) ? "" : String.format(Locale.ROOT, "%.2f-%.2f", min, max);
        }

        String plain(int decimals) {
            return MdTable.fixed(median, decimals);
        }
    }

    private static List<YcsbCase> ycsbOf(List<YcsbCase> all, KvStore.Kind k, String w, int th) {
        return all.stream().filter(c -> c.kind() == k && c.workload().equals(w) && c.threads() == th)
                .sorted(java.util.Comparator.comparingInt(YcsbCase::repeat)).toList();
    }

    /**
     * Puts of the warm-up that runs before the direct cases, per store (page cache, one thread, not recorded):
     * 100,000. Without it the first Lattice case (20,000 puts, about 0.1 s) ran its code interpreted and its heap
     * unsized, and the one-thread page-cache ratio read 0.33-0.46x where longer cases read about 0.9x
     * (docs/benchmarks.md, "one-thread page-cache puts with long cases").
     */
    static final int DIRECT_WARMUP_PUTS = 100_000;

    /** Runs {@link #DIRECT_WARMUP_PUTS} puts and as many gets on a scratch store of each kind; results discarded. */
    private static void warmUpDirect(Settings s, Consumer<String> progress) {
        for (KvStore.Kind k : KvStore.Kind.values()) {
            progress.accept("peer direct warm-up " + k.label());
            Path dir = s.workDir().resolve("direct-warmup-" + k.name().toLowerCase(Locale.ROOT));
            RecoveryHarness.delete(dir);
            try (KvStore store = KvStore.open(k, dir, Durability.PAGE_CACHE, s.partitions())) {
                DirectHarness.run(store, 1, DIRECT_WARMUP_PUTS, DIRECT_WARMUP_PUTS, s.valueBytes());
            } catch (Exception e) {
                throw new IllegalStateException("direct warm-up of " + k.label() + " failed", e);
            } finally {
                RecoveryHarness.delete(dir);
            }
        }
    }

    private static List<DirectCase> directOf(List<DirectCase> all, KvStore.Kind k, Durability d, String op, int th) {
        return all.stream().filter(c -> c.kind() == k && c.durability() == d && c.phase().operation().equals(op)
                && c.phase().threads() == th).sorted(java.util.Comparator.comparingInt(DirectCase::repeat)).toList();
    }

    private static <T> List<Double> pairs(List<T> l, List<T> r, java.util.function.ToDoubleFunction<T> f) {
        List<Double> out = new ArrayList<>();
        for (int i = 0; i < Math.min(l.size(), r.size()); i++) {
            double a = f.applyAsDouble(l.get(i));
            double b = f.applyAsDouble(r.get(i));
            // YCSB records whole microseconds: a sub-microsecond percentile reads 0 and has no ratio
            out.add(a > 0 && b > 0 ? a / b : Double.NaN);
        }
        return out;
    }

    private static <T> Spread each(List<T> l, java.util.function.ToDoubleFunction<T> f) {
        return Spread.of(l.stream().map(x -> f.applyAsDouble(x)).toList());
    }

    private static Map<String, String> render(Settings s, List<YcsbCase> ycsb, List<DirectCase> direct,
                                              List<RecoveryHarness.Result> recovery, double load0, double load1) {
        Map<String, String> parts = new LinkedHashMap<>();
        String machine = String.format(Locale.ROOT, "Machine: %s; load average %.1f at the start of the peer run, "
                + "%.1f at its end.", Machine.describe(), load0, load1);
        String pairs = String.format(Locale.ROOT, " Each case pair ran %d time(s), the two stores back to back in "
                + "alternating order; ratios are the median of the pairs, with their range.", s.repeats());
        StringBuilder md = new StringBuilder();
        if (!ycsb.isEmpty()) {
            md.append(machine).append(pairs).append("\n\n");
            md.append(String.format(Locale.ROOT, "**YCSB run phase** (%s records loaded, %s operations, durability "
                            + "%s, Lattice %d partitions). Throughput ratio > 1: Lattice faster; p99 ratio > 1: Lattice "
                            + "slower. CPU cores: process CPU time over wall time (2 = both cores).%n%n",
                    MdTable.count(s.ycsbRecords()), MdTable.count(s.ycsbOperations()), s.ycsbDurability().label(),
                    s.partitions()));
            MdTable t = new MdTable("workload", ">threads", ">throughput Lattice/RocksDB", ">range",
                    ">CPU cores Lattice / RocksDB", ">Lattice entries/commit", "operation", ">p99 Lattice/RocksDB",
                    ">range");
            for (String w : s.workloads()) {
                for (int th : s.threads()) {
                    List<YcsbCase> l = ycsbOf(ycsb, KvStore.Kind.LATTICE, w, th);
                    List<YcsbCase> r = ycsbOf(ycsb, KvStore.Kind.ROCKSDB, w, th);
                    Spread tp = Spread.of(pairs(l, r, c -> c.run().throughput()));
                    boolean first = true;
                    for (String op : l.get(0).run().ops().keySet()) {
                        if (!r.get(0).run().ops().containsKey(op)) {
                            continue;
                        }
                        Spread p99 = Spread.of(pairs(l, r, c -> c.run().ops().containsKey(op)
                                ? c.run().ops().get(op).p99Us() : Double.NaN));
                        t.row(first ? w.toUpperCase(Locale.ROOT) : "", first ? th : "", first ? tp.ratio() : "",
                                first ? tp.range() : "",
                                first ? each(l, c -> c.run().cpuCores()).plain(2) + " / "
                                        + each(r, c -> c.run().cpuCores()).plain(2) : "",
                                first ? each(l, YcsbCase::entriesPerCommit).plain(1) : "",
                                op, p99.ratio(), p99.range());
                        first = false;
                    }
                }
            }
            md.append(t.render());
            parts.put("ycsb", md.toString());
            md = new StringBuilder();
        }
        if (!direct.isEmpty()) {
            md.append(machine).append(pairs).append("\n\n");
            md.append(String.format(Locale.ROOT, "**Direct put/get** (%s-byte values; %s puts per case at page cache, "
                            + "%s at fsync, distinct keys; then %s gets of random written keys; each store warmed up "
                            + "first with %s unrecorded puts and gets). Ctx switches/op: "
                            + "voluntary context switches of all the process's threads per operation (a thread "
                            + "blocked and woken), from /proc.%n%n",
                    MdTable.count(s.valueBytes()), MdTable.count(s.directPuts()), MdTable.count(s.directFsyncPuts()),
                    MdTable.count(s.directGets()), MdTable.count(DIRECT_WARMUP_PUTS)));
            MdTable t = new MdTable("durability", "operation", ">threads", ">throughput Lattice/RocksDB", ">range",
                    ">p50 Lattice/RocksDB", ">p99 Lattice/RocksDB", ">CPU cores Lattice / RocksDB",
                    ">ctx switches/op Lattice / RocksDB", ">Lattice entries/commit");
            for (Durability d : s.durabilities()) {
                for (String op : List.of("put", "get")) {
                    for (int th : s.threads()) {
                        List<DirectCase> l = directOf(direct, KvStore.Kind.LATTICE, d, op, th);
                        List<DirectCase> r = directOf(direct, KvStore.Kind.ROCKSDB, d, op, th);
                        Spread tp = Spread.of(pairs(l, r, c -> c.phase().opsPerSecond()));
                        t.row(d.label(), op, th, tp.ratio(), tp.range(),
                                Spread.of(pairs(l, r, c -> c.phase().p50Us())).ratio(),
                                Spread.of(pairs(l, r, c -> c.phase().p99Us())).ratio(),
                                each(l, c -> c.phase().cpuCores()).plain(2) + " / "
                                        + each(r, c -> c.phase().cpuCores()).plain(2),
                                each(l, c -> c.phase().switchesPerOp()).plain(2) + " / "
                                        + each(r, c -> c.phase().switchesPerOp()).plain(2),
                                each(l, DirectCase::entriesPerCommit).plain(1));
                    }
                }
            }
            md.append(t.render());
            parts.put("direct", md.toString());
            md = new StringBuilder();
        }
        if (!recovery.isEmpty()) {
            md.append(machine).append("\n\n");
            md.append(String.format(Locale.ROOT, "**Open/recovery** after %s records of %s bytes (loaded in a child "
                    + "JVM in batches of 1,000 at page-cache durability; open timed once in this warm JVM; the "
                    + "milliseconds are this run's, on this busy machine).%n%n",
                    MdTable.count(recovery.get(0).records()), MdTable.count(s.valueBytes())));
            MdTable t = new MdTable("reopen", ">Lattice open ms", ">RocksDB open ms", ">Lattice/RocksDB",
                    ">Lattice on disk", ">RocksDB on disk", ">Lattice replayed entries", ">Lattice checkpoint read",
                    ">RocksDB WAL files", "all records back");
            for (String reopen : List.of("clean", "crash")) {
                RecoveryHarness.Result l = recovery.stream().filter(r -> r.kind() == KvStore.Kind.LATTICE
                        && r.reopen().equals(reopen)).findFirst().orElseThrow();
                RecoveryHarness.Result r = recovery.stream().filter(x -> x.kind() == KvStore.Kind.ROCKSDB
                        && x.reopen().equals(reopen)).findFirst().orElseThrow();
                t.row(reopen.equals("clean") ? "after a clean close" : "after SIGKILL", MdTable.fixed(l.openMs(), 0),
                        MdTable.fixed(r.openMs(), 0), MdTable.ratio(l.openMs(), r.openMs()), mib(l.diskBytes()),
                        mib(r.diskBytes()), MdTable.count(l.replayEntries()), mib(l.checkpointBytes()),
                        mib(r.walBytes()), l.verified() && r.verified() ? "yes" : "NO");
            }
            md.append(t.render());
            parts.put("recovery", md.toString());
        }
        return parts;
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%,.1f MiB", bytes / 1048576.0);
    }

    private static void charts(Settings s, List<YcsbCase> ycsb, List<DirectCase> direct,
                               List<RecoveryHarness.Result> recovery) {
        if (!ycsb.isEmpty()) {
            DefaultCategoryDataset d = Charts.dataset();
            for (String w : s.workloads()) {
                for (int th : s.threads()) {
                    List<YcsbCase> l = ycsbOf(ycsb, KvStore.Kind.LATTICE, w, th);
                    List<YcsbCase> r = ycsbOf(ycsb, KvStore.Kind.ROCKSDB, w, th);
                    d.addValue(Spread.of(pairs(l, r, c -> c.run().throughput())).median(),
                            "throughput Lattice/RocksDB", w.toUpperCase(Locale.ROOT) + ", " + th + " thr");
                }
            }
            Charts.ratioBars(s.imgDir().resolve("peer-ycsb-throughput.png"), "YCSB run phase, Lattice (Chronicle) / "
                    + "RocksDB throughput, " + s.ycsbDurability().label() + " (> 1: Lattice faster)",
                    "workload, client threads", "ratio (log scale)", d);
        }
        if (!direct.isEmpty()) {
            DefaultCategoryDataset d = Charts.dataset();
            for (Durability du : s.durabilities()) {
                for (String op : List.of("put", "get")) {
                    for (int th : s.threads()) {
                        List<DirectCase> l = directOf(direct, KvStore.Kind.LATTICE, du, op, th);
                        List<DirectCase> r = directOf(direct, KvStore.Kind.ROCKSDB, du, op, th);
                        String cat = op + " " + du.label() + ", " + th + " thr";
                        d.addValue(Spread.of(pairs(l, r, c -> c.phase().opsPerSecond())).median(),
                                "throughput Lattice/RocksDB", cat);
                        d.addValue(Spread.of(pairs(l, r, c -> c.phase().p99Us())).median(), "p99 Lattice/RocksDB",
                                cat);
                    }
                }
            }
            Charts.ratioBars(s.imgDir().resolve("peer-direct-throughput.png"), "Direct put/get, Lattice (Chronicle) / "
                    + "RocksDB", "operation, durability, client threads", "ratio (log scale)", d);
        }
        if (!recovery.isEmpty()) {
            DefaultCategoryDataset d = Charts.dataset();
            for (RecoveryHarness.Result r : recovery) {
                d.addValue(r.openMs(), r.kind().label(), r.reopen().equals("clean") ? "after clean close"
                        : "after SIGKILL");
            }
            Charts.bars(s.imgDir().resolve("peer-recovery.png"), "Open/recovery time after "
                    + MdTable.count(recovery.get(0).records()) + " records (this run)", "reopen", "ms", d, false);
        }
    }
}
