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
     */
    public record Settings(Path workDir, Path imgDir, List<String> workloads, List<Integer> threads, int ycsbRecords,
                           int ycsbOperations, Durability ycsbDurability, List<Durability> durabilities,
                           int directPuts, int directFsyncPuts, int directGets, int valueBytes, int recoveryRecords,
                           int partitions) {
    }

    /**
     * One YCSB case.
     *
     * @param kind the store
     * @param workload the workload letter
     * @param threads client threads
     * @param run the run phase's result
     */
    public record YcsbCase(KvStore.Kind kind, String workload, int threads, YcsbRunner.PhaseResult run) {
    }

    /**
     * One direct-harness case.
     *
     * @param kind the store
     * @param durability the durability
     * @param phase the figures
     */
    public record DirectCase(KvStore.Kind kind, Durability durability, DirectHarness.PhaseResult phase) {
    }

    /**
     * Everything measured.
     *
     * @param ycsb the YCSB cases
     * @param direct the direct-harness cases
     * @param recovery the recovery measurements
     * @param markdown the tables
     */
    public record Report(List<YcsbCase> ycsb, List<DirectCase> direct, List<RecoveryHarness.Result> recovery,
                         String markdown) {
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
        for (String w : s.workloads()) {
            for (int t : s.threads()) {
                // alternate which store goes first so slow drift in the machine's load hits both
                List<KvStore.Kind> order = (caseNo++ % 2 == 0) ? List.of(KvStore.Kind.LATTICE, KvStore.Kind.ROCKSDB)
                        : List.of(KvStore.Kind.ROCKSDB, KvStore.Kind.LATTICE);
                for (KvStore.Kind k : order) {
                    progress.accept("peer ycsb " + w + " " + k.label() + " threads " + t);
                    ycsb.add(new YcsbCase(k, w, t, ycsbCase(s, k, w, t)));
                }
            }
        }
        List<DirectCase> direct = new ArrayList<>();
        for (Durability d : s.durabilities()) {
            for (int t : s.threads()) {
                for (KvStore.Kind k : KvStore.Kind.values()) {
                    progress.accept("peer direct " + k.label() + " " + d.label() + " threads " + t);
                    Path dir = s.workDir().resolve("direct-" + k.name().toLowerCase(Locale.ROOT));
                    RecoveryHarness.delete(dir);
                    try (KvStore store = KvStore.open(k, dir, d, s.partitions())) {
                        int puts = d == Durability.FSYNC ? s.directFsyncPuts() : s.directPuts();
                        for (DirectHarness.PhaseResult p : DirectHarness.run(store, t, puts, s.directGets(),
                                s.valueBytes())) {
                            direct.add(new DirectCase(k, d, p));
                        }
                    } finally {
                        RecoveryHarness.delete(dir);
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
        String md = render(s, ycsb, direct, recovery, load0, load1);
        if (s.imgDir() != null) {
            charts(s, ycsb, direct, recovery);
        }
        return new Report(ycsb, direct, recovery, md);
    }

    private static YcsbRunner.PhaseResult ycsbCase(Settings s, KvStore.Kind kind, String w, int threads) {
        Path dir = s.workDir().resolve("ycsb-" + kind.name().toLowerCase(Locale.ROOT) + "-" + w + "-" + threads);
        RecoveryHarness.delete(dir);
        Properties p = YcsbRunner.workload(w);
        p.setProperty("recordcount", Integer.toString(s.ycsbRecords()));
        p.setProperty("operationcount", Integer.toString(s.ycsbOperations()));
        p.setProperty("threadcount", Integer.toString(threads));
        try {
            YcsbRunner.Result r;
            if (kind == KvStore.Kind.LATTICE) {
                String uri = "chronicle:" + dir.toAbsolutePath() + "?durability="
                        + s.ycsbDurability().chronicleOption();
                p.setProperty("db", LatticeYcsbClient.class.getName());
                p.setProperty(LatticeYcsbClient.PROVIDER_PROPERTY, uri);
                p.setProperty(LatticeYcsbClient.PARTITIONS_PROPERTY, Integer.toString(s.partitions()));
                LatticeYcsbClient.pin(uri, s.partitions());
                try {
                    r = YcsbRunner.run(p, m -> { });
                } finally {
                    LatticeYcsbClient.unpin(uri);
                }
            } else {
                p.setProperty("db", RocksYcsbClient.class.getName());
                p.setProperty(RocksYcsbClient.DIR_PROPERTY, dir.toString());
                p.setProperty(RocksYcsbClient.SYNC_PROPERTY, Boolean.toString(s.ycsbDurability().rocksSync()));
                RocksYcsbClient.pin(dir.toString(), s.ycsbDurability().rocksSync());
                try {
                    r = YcsbRunner.run(p, m -> { });
                } finally {
                    RocksYcsbClient.unpin(dir.toString());
                }
            }
            if (r.load().errors() + r.run().errors() > 0) {
                throw new IllegalStateException(kind.label() + " workload " + w + ": "
                        + (r.load().errors() + r.run().errors()) + " YCSB operations returned ERROR");
            }
            return r.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(kind.label() + " workload " + w + " failed: " + e, e);
        } finally {
            RecoveryHarness.delete(dir);
        }
    }

    private static String render(Settings s, List<YcsbCase> ycsb, List<DirectCase> direct,
                                 List<RecoveryHarness.Result> recovery, double load0, double load1) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "Machine: %s; load average %.1f at the start, %.1f at the end.%n%n",
                Machine.describe(), load0, load1));
        if (!ycsb.isEmpty()) {
            md.append(String.format(Locale.ROOT, "**YCSB** (%s records, %s operations, durability %s; Lattice %d "
                            + "partitions). Throughput ratio > 1: Lattice faster; p99 ratio > 1: Lattice slower.%n%n",
                    MdTable.count(s.ycsbRecords()), MdTable.count(s.ycsbOperations()), s.ycsbDurability().label(),
                    s.partitions()));
            MdTable t = new MdTable("workload", ">threads", ">Lattice ops/s", ">RocksDB ops/s",
                    ">throughput Lattice/RocksDB", "operation", ">Lattice p99 us", ">RocksDB p99 us",
                    ">p99 Lattice/RocksDB");
            Map<String, YcsbCase> byKey = new LinkedHashMap<>();
            for (YcsbCase c : ycsb) {
                byKey.put(c.kind() + "/" + c.workload() + "/" + c.threads(), c);
            }
            for (String w : s.workloads()) {
                for (int th : s.threads()) {
                    YcsbCase l = byKey.get(KvStore.Kind.LATTICE + "/" + w + "/" + th);
                    YcsbCase r = byKey.get(KvStore.Kind.ROCKSDB + "/" + w + "/" + th);
                    boolean first = true;
                    for (String op : l.run().ops().keySet()) {
                        YcsbRunner.OpStats lo = l.run().ops().get(op);
                        YcsbRunner.OpStats ro = r.run().ops().get(op);
                        if (ro == null) {
                            continue;
                        }
                        t.row(first ? w.toUpperCase(Locale.ROOT) : "", first ? th : "",
                                first ? MdTable.count(l.run().throughput()) : "",
                                first ? MdTable.count(r.run().throughput()) : "",
                                first ? MdTable.ratio(l.run().throughput(), r.run().throughput()) : "",
                                op, MdTable.count(lo.p99Us()), MdTable.count(ro.p99Us()),
                                MdTable.ratio(lo.p99Us(), ro.p99Us()));
                        first = false;
                    }
                }
            }
            md.append(t.render()).append('\n');
        }
        if (!direct.isEmpty()) {
            md.append(String.format(Locale.ROOT, "**Direct put/get** (%s-byte values; %s puts per case at page cache, "
                            + "%s at fsync; %s gets).%n%n", MdTable.count(s.valueBytes()),
                    MdTable.count(s.directPuts()), MdTable.count(s.directFsyncPuts()),
                    MdTable.count(s.directGets())));
            MdTable t = new MdTable("durability", "operation", ">threads", ">Lattice ops/s", ">RocksDB ops/s",
                    ">throughput Lattice/RocksDB", ">Lattice p50 us", ">RocksDB p50 us", ">Lattice p99 us",
                    ">RocksDB p99 us", ">p99 Lattice/RocksDB");
            for (Durability d : s.durabilities()) {
                for (String op : List.of("put", "get")) {
                    for (int th : s.threads()) {
                        DirectHarness.PhaseResult l = find(direct, KvStore.Kind.LATTICE, d, op, th);
                        DirectHarness.PhaseResult r = find(direct, KvStore.Kind.ROCKSDB, d, op, th);
                        t.row(d.label(), op, th, MdTable.count(l.opsPerSecond()), MdTable.count(r.opsPerSecond()),
                                MdTable.ratio(l.opsPerSecond(), r.opsPerSecond()), MdTable.fixed(l.p50Us(), 1),
                                MdTable.fixed(r.p50Us(), 1), MdTable.fixed(l.p99Us(), 1), MdTable.fixed(r.p99Us(), 1),
                                MdTable.ratio(l.p99Us(), r.p99Us()));
                    }
                }
            }
            md.append(t.render()).append('\n');
        }
        if (!recovery.isEmpty()) {
            md.append(String.format(Locale.ROOT, "**Open/recovery** after %s records of %s bytes (loaded in a child "
                    + "JVM in batches of 1,000 at page-cache durability; open timed in a warm JVM).%n%n",
                    MdTable.count(recovery.get(0).records()), MdTable.count(s.valueBytes())));
            MdTable t = new MdTable("reopen", ">Lattice open ms", ">RocksDB open ms", ">Lattice/RocksDB",
                    ">Lattice on disk", ">RocksDB on disk", "all records back");
            for (String reopen : List.of("clean", "crash")) {
                RecoveryHarness.Result l = recovery.stream().filter(r -> r.kind() == KvStore.Kind.LATTICE
                        && r.reopen().equals(reopen)).findFirst().orElseThrow();
                RecoveryHarness.Result r = recovery.stream().filter(x -> x.kind() == KvStore.Kind.ROCKSDB
                        && x.reopen().equals(reopen)).findFirst().orElseThrow();
                t.row(reopen.equals("clean") ? "after a clean close" : "after SIGKILL", MdTable.fixed(l.openMs(), 0),
                        MdTable.fixed(r.openMs(), 0), MdTable.ratio(l.openMs(), r.openMs()), mib(l.diskBytes()),
                        mib(r.diskBytes()), l.verified() && r.verified() ? "yes" : "NO");
            }
            md.append(t.render()).append('\n');
        }
        return md.toString();
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%,.1f MiB", bytes / 1048576.0);
    }

    private static DirectHarness.PhaseResult find(List<DirectCase> cases, KvStore.Kind k, Durability d, String op,
                                                  int threads) {
        return cases.stream().filter(c -> c.kind() == k && c.durability() == d && c.phase().operation().equals(op)
                && c.phase().threads() == threads).findFirst().orElseThrow().phase();
    }

    private static void charts(Settings s, List<YcsbCase> ycsb, List<DirectCase> direct,
                               List<RecoveryHarness.Result> recovery) {
        if (!ycsb.isEmpty()) {
            DefaultCategoryDataset d = Charts.dataset();
            for (YcsbCase c : ycsb) {
                d.addValue(c.run().throughput(), c.kind().label(),
                        c.workload().toUpperCase(Locale.ROOT) + ", " + c.threads() + " thr");
            }
            Charts.bars(s.imgDir().resolve("peer-ycsb-throughput.png"), "YCSB run phase: Lattice (Chronicle) vs "
                    + "RocksDB, durability " + s.ycsbDurability().label(), "workload, client threads", "ops/s", d,
                    false);
        }
        if (!direct.isEmpty()) {
            DefaultCategoryDataset d = Charts.dataset();
            for (DirectCase c : direct) {
                d.addValue(c.phase().opsPerSecond(), c.kind().label(), c.phase().operation() + " "
                        + c.durability().label() + ", " + c.phase().threads() + " thr");
            }
            Charts.bars(s.imgDir().resolve("peer-direct-throughput.png"), "Direct put/get: Lattice (Chronicle) vs "
                    + "RocksDB", "operation, durability, client threads", "ops/s (log scale)", d, true);
        }
        if (!recovery.isEmpty()) {
            DefaultCategoryDataset d = Charts.dataset();
            for (RecoveryHarness.Result r : recovery) {
                d.addValue(r.openMs(), r.kind().label(), r.reopen().equals("clean") ? "after clean close"
                        : "after SIGKILL");
            }
            Charts.bars(s.imgDir().resolve("peer-recovery.png"), "Open/recovery time after "
                    + MdTable.count(recovery.get(0).records()) + " records", "reopen", "ms", d, false);
        }
    }
}
