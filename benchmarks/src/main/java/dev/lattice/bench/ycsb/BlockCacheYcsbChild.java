package dev.lattice.bench.ycsb;

import dev.lattice.bench.peer.RocksStore;
import dev.lattice.bench.peer.RocksYcsbClient;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeStats;
import dev.lattice.spi.Providers;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Statistic;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.rocksdb.Statistics;
import org.rocksdb.TickerType;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.BiConsumer;

/**
 * One step of {@link BlockCacheYcsb} in its own JVM (not part of the product): loads a store with YCSB's load phase,
 * or runs one YCSB workload against a loaded store, with a block cache of a given size, and reports what it measured.
 *
 * <p>Arguments are {@code key=value} pairs: {@code mode} ({@code load} or {@code run}), {@code store}
 * ({@code lattice}: Chronicle at {@code durability=process}; {@code rocksdb}: WAL on, {@code sync=false}),
 * {@code dir}, {@code records}, {@code threads}, {@code cacheBytes} (Lattice {@code blockCacheBytes}; RocksDB one
 * {@code LRUCache} in {@code BlockBasedTableConfig}), {@code bloomBits} (RocksDB's Bloom filter bits per key, 0 for
 * none; Lattice always writes 10 bits per key), and for {@code run}: {@code workload} (a letter), {@code warmup}
 * (operations run first and not reported) and {@code operations}; for {@code load}: {@code settleSeconds} (how long
 * background flushes and compactions must have been idle before the store is closed; at most 10 minutes of waiting).
 * Each measurement is printed as a line {@code M name value}; exit code 0, or 1 with the failure on standard error
 * (any YCSB {@code ERROR} return, or a read of a loaded key that is not found, is a failure).
 */
public final class BlockCacheYcsbChild {

    /** The YCSB table, and so the Lattice tree and RocksDB column family. */
    static final String TABLE = "usertable";

    private BlockCacheYcsbChild() {
    }

    /**
     * @param args {@code key=value} pairs, see the class comment
     */
    public static void main(String[] args) {
        try {
            Map<String, String> a = new LinkedHashMap<>();
            for (String s : args) {
                int eq = s.indexOf('=');
                if (eq < 1) {
                    throw new IllegalArgumentException("argument '" + s + "' is not key=value");
                }
                a.put(s.substring(0, eq), s.substring(eq + 1));
            }
            YcsbRunner.quietDbWrapperNotice(true);
            execute(a, (k, v) -> {
                System.out.println("M " + k + " " + v);
                System.out.flush();
            });
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    /**
     * Runs one step in this JVM.
     *
     * @param a the arguments (see the class comment)
     * @param out receives each measurement's name and value as it is taken
     * @throws Exception if the store fails, YCSB reports an error, or a loaded key is not found
     */
    static void execute(Map<String, String> a, BiConsumer<String, String> out) throws Exception {
        String mode = req(a, "mode");
        String store = req(a, "store");
        Path dir = Path.of(req(a, "dir")).toAbsolutePath();
        long cacheBytes = Long.parseLong(req(a, "cacheBytes"));
        int bloom = Integer.parseInt(a.getOrDefault("bloomBits", "10"));
        Properties props = mode.equals("load") ? YcsbRunner.workload("c")
                : YcsbRunner.workload(req(a, "workload"));
        props.setProperty("recordcount", req(a, "records"));
        props.setProperty("threadcount", req(a, "threads"));
        out.accept("maxHeapMiB", Long.toString(Runtime.getRuntime().maxMemory() >> 20));
        if (store.equals("lattice")) {
            lattice(mode, dir, cacheBytes, props, a, out);
        } else if (store.equals("rocksdb")) {
            rocks(mode, dir, cacheBytes, bloom, props, a, out);
        } else {
            throw new IllegalArgumentException("store must be lattice or rocksdb, got '" + store + "'");
        }
    }

    private static String req(Map<String, String> a, String key) {
        String v = a.get(key);
        if (v == null) {
            throw new IllegalArgumentException("missing argument " + key + "=...");
        }
        return v;
    }

    private static void lattice(String mode, Path dir, long cacheBytes, Properties props, Map<String, String> a,
                                BiConsumer<String, String> out) throws Exception {
        String location = "block-cache-ycsb:" + dir;
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        RunReadCounter[] counter = new RunReadCounter[1];
        long t0 = System.nanoTime();
        Lattice l = LatticeYcsbClient.pin(location, () -> {
            counter[0] = new RunReadCounter(Providers.open("chronicle:" + dir + "?durability=process"));
            return Lattice.open(LatticeConfig.builder().provider(counter[0], true).blockCacheBytes(cacheBytes)
                    .runBlockBytes(Integer.parseInt(a.getOrDefault("latticeBlockBytes", "0"))).meterRegistry(reg).build());
        });
        RunReadCounter c = counter[0];
        try {
            props.setProperty("db", LatticeYcsbClient.class.getName());
            props.setProperty(LatticeYcsbClient.PROVIDER_PROPERTY, location);
            l.tree(TABLE); // opens (replays) the tree before anything is timed
            out.accept("openMs", ms(t0));
            if (mode.equals("load")) {
                load(props, out);
                long s0 = System.nanoTime();
                long limit = settleLimitNanos(a);
                long last = -1;
                long stableSince = System.nanoTime();
                while (System.nanoTime() - s0 < 600_000_000_000L) {
                    LatticeStats s = l.stats();
                    long now = s.flushes() * 1_000_003L + s.compactions();
                    if (now != last) {
                        last = now;
                        stableSince = System.nanoTime();
                    } else if (System.nanoTime() - stableSince > limit) {
                        break;
                    }
                    Thread.sleep(500);
                }
                out.accept("settleMs", ms(s0));
                latticeStats(l, reg, c, "load.", out);
            } else {
                run(props, a, out, new Probe() {
                    long reads;
                    long data;
                    long opened;
                    long bytes;
                    double ratio;
                    long flushes;
                    long compactions;

                    @Override
                    public void before() {
                        reads = c.reads();
                        data = c.dataBlockReads();
                        opened = c.readersOpened();
                        bytes = c.bytes();
                        ratio = gauge(reg, "lattice.block.cache.hit.ratio");
                        LatticeStats s = l.stats();
                        flushes = s.flushes();
                        compactions = s.compactions();
                        out.accept("warm.blockCacheHitRatio", f4(ratio));
                        out.accept("warm.runReadersOpened", Long.toString(opened));
                    }

                    @Override
                    public void after(long gets) {
                        double r = gauge(reg, "lattice.block.cache.hit.ratio");
                        long dData = c.dataBlockReads() - data;
                        out.accept("runReads", Long.toString(c.reads() - reads));
                        out.accept("dataBlockReads", Long.toString(dData));
                        out.accept("runReadersOpened", Long.toString(c.readersOpened() - opened));
                        out.accept("runReadBytes", Long.toString(c.bytes() - bytes));
                        out.accept("gets", Long.toString(gets));
                        out.accept("runReadsPerGet", f4((double) (c.reads() - reads) / Math.max(1, gets)));
                        out.accept("dataBlockReadsPerGet", f4((double) dData / Math.max(1, gets)));
                        out.accept("blockCacheHitRatioJvm", f4(r));
                        // cache lookups so far = misses / (1 - hit ratio); misses = data block reads (each miss
                        // loads one block with one read); the phase's ratio is the difference of the two points
                        double n0 = lookups(data, ratio);
                        double n1 = lookups(c.dataBlockReads(), r);
                        if (!Double.isNaN(n0) && !Double.isNaN(n1) && n1 > n0) {
                            out.accept("blockLookups", String.format(Locale.ROOT, "%.0f", n1 - n0));
                            out.accept("blockLookupsPerGet", f4((n1 - n0) / Math.max(1, gets)));
                            out.accept("blockCacheHitRatio", f4(1 - dData / (n1 - n0)));
                        }
                        LatticeStats s = l.stats();
                        out.accept("flushes", Long.toString(s.flushes() - flushes));
                        out.accept("compactions", Long.toString(s.compactions() - compactions));
                        latticeStats(l, reg, c, "end.", out);
                    }
                });
            }
        } finally {
            LatticeYcsbClient.unpin(location);
        }
    }

    private static double lookups(long misses, double hitRatio) {
        if (hitRatio >= 1 || Double.isNaN(hitRatio)) {
            return misses == 0 ? 0 : Double.NaN;
        }
        return misses / (1 - hitRatio);
    }

    private static void latticeStats(Lattice l, SimpleMeterRegistry reg, RunReadCounter c, String prefix,
                                     BiConsumer<String, String> out) {
        LatticeStats s = l.stats();
        out.accept(prefix + "flushes", Long.toString(s.flushes()));
        out.accept(prefix + "compactions", Long.toString(s.compactions()));
        out.accept(prefix + "liveRuns", Long.toString((long) gaugeSum(reg, "lattice.runs")));
        out.accept(prefix + "liveRunBytes", Long.toString((long) gaugeSum(reg, "lattice.runs.bytes")));
        out.accept(prefix + "runResidentBytes", Long.toString((long) gaugeSum(reg, "lattice.runs.resident.bytes")));
        out.accept(prefix + "memtableBytes", Long.toString((long) gaugeSum(reg, "lattice.memtable.bytes")));
        out.accept(prefix + "blockCacheBytes", Long.toString((long) gauge(reg, "lattice.block.cache.bytes")));
        out.accept(prefix + "liveMemoryBytes", Long.toString((long) gauge(reg, "lattice.memory.live.bytes")));
        out.accept(prefix + "replayEntries", Long.toString(s.replayEntries()));
        out.accept(prefix + "runReads", Long.toString(c.reads()));
        out.accept(prefix + "heapUsedMiB", Long.toString(
                (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) >> 20));
    }

    private static double gauge(SimpleMeterRegistry reg, String name) {
        Gauge g = reg.find(name).gauge();
        return g == null ? Double.NaN : g.value();
    }

    private static double gaugeSum(SimpleMeterRegistry reg, String name) {
        double sum = 0;
        for (Meter m : reg.getMeters()) {
            if (m.getId().getName().equals(name)) {
                for (Measurement x : m.measure()) {
                    if (x.getStatistic() == Statistic.VALUE) {
                        sum += x.getValue();
                    }
                }
            }
        }
        return sum;
    }

    private static final TickerType[] TICKERS = {TickerType.BLOCK_CACHE_DATA_HIT, TickerType.BLOCK_CACHE_DATA_MISS,
        TickerType.BLOCK_CACHE_HIT, TickerType.BLOCK_CACHE_MISS, TickerType.BLOOM_FILTER_USEFUL,
        TickerType.MEMTABLE_HIT, TickerType.GET_HIT_L0, TickerType.GET_HIT_L1, TickerType.GET_HIT_L2_AND_UP,
        TickerType.BLOCK_CACHE_BYTES_READ};

    private static void rocks(String mode, Path dir, long cacheBytes, int bloom, Properties props,
                              Map<String, String> a, BiConsumer<String, String> out) throws Exception {
        String location = dir.toString();
        long t0 = System.nanoTime();
        RocksStore st = RocksYcsbClient.pin(location, () -> new RocksStore(dir, false, cacheBytes, bloom, true));
        try {
            props.setProperty("db", RocksYcsbClient.class.getName());
            props.setProperty(RocksYcsbClient.DIR_PROPERTY, location);
            st.table(TABLE);
            out.accept("openMs", ms(t0));
            Statistics stats = st.statistics();
            if (mode.equals("load")) {
                load(props, out);
                long s0 = System.nanoTime();
                long limit = settleLimitNanos(a);
                long stableSince = System.nanoTime();
                while (System.nanoTime() - s0 < 600_000_000_000L) {
                    boolean busy = !"0".equals(st.property(TABLE, "rocksdb.num-running-compactions"))
                            || !"0".equals(st.property(TABLE, "rocksdb.compaction-pending"))
                            || !"0".equals(st.property(TABLE, "rocksdb.num-running-flushes"));
                    if (busy) {
                        stableSince = System.nanoTime();
                    } else if (System.nanoTime() - stableSince > limit) {
                        break;
                    }
                    Thread.sleep(500);
                }
                out.accept("settleMs", ms(s0));
                out.accept("load.levelstats", st.property(TABLE, "rocksdb.levelstats").trim()
                        .replaceAll("\\s+", "_"));
            } else {
                run(props, a, out, new Probe() {
                    final long[] before = new long[TICKERS.length];

                    @Override
                    public void before() {
                        for (int i = 0; i < TICKERS.length; i++) {
                            before[i] = stats.getTickerCount(TICKERS[i]);
                        }
                    }

                    @Override
                    public void after(long gets) {
                        long[] d = new long[TICKERS.length];
                        for (int i = 0; i < TICKERS.length; i++) {
                            d[i] = stats.getTickerCount(TICKERS[i]) - before[i];
                            out.accept("rocks." + TICKERS[i].name(), Long.toString(d[i]));
                        }
                        out.accept("gets", Long.toString(gets));
                        out.accept("dataBlockReadsPerGet", f4((double) d[1] / Math.max(1, gets)));
                        out.accept("blockLookupsPerGet", f4((double) (d[0] + d[1]) / Math.max(1, gets)));
                        out.accept("blockCacheHitRatio", f4((double) d[0] / Math.max(1, d[0] + d[1])));
                        out.accept("end.blockCacheBytes", st.property("rocksdb.block-cache-usage"));
                        out.accept("end.levelstats", st.property(TABLE, "rocksdb.levelstats").trim()
                                .replaceAll("\\s+", "_"));
                    }
                });
            }
        } finally {
            RocksYcsbClient.unpin(location);
        }
    }

    private static long settleLimitNanos(Map<String, String> a) {
        return Long.parseLong(a.getOrDefault("settleSeconds", "10")) * 1_000_000_000L;
    }

    /** What a store measures around the reported phase. */
    private interface Probe {
        void before();

        void after(long gets);
    }

    private static void load(Properties props, BiConsumer<String, String> out) {
        long gc0 = gcCount();
        long gct0 = gcMillis();
        YcsbRunner.PhaseResult r = YcsbRunner.phase(props, false);
        check(r, "load");
        out.accept("load.throughput", f1(r.throughput()));
        out.accept("load.runtimeMs", Long.toString(r.runtimeMs()));
        out.accept("load.operations", Long.toString(r.operations()));
        out.accept("load.cpuCores", f2(r.cpuCores()));
        out.accept("load.gcCount", Long.toString(gcCount() - gc0));
        out.accept("load.gcMs", Long.toString(gcMillis() - gct0));
        YcsbRunner.OpStats ins = r.ops().get("INSERT");
        if (ins != null) {
            out.accept("load.INSERT.p50Us", f1(ins.p50Us()));
            out.accept("load.INSERT.p99Us", f1(ins.p99Us()));
        }
    }

    private static void run(Properties props, Map<String, String> a, BiConsumer<String, String> out, Probe probe) {
        long warm = Long.parseLong(a.getOrDefault("warmup", "0"));
        if (warm > 0) {
            Properties w = copy(props);
            w.setProperty("operationcount", Long.toString(warm));
            YcsbRunner.PhaseResult r = YcsbRunner.phase(w, true);
            check(r, "warm-up");
            out.accept("warm.throughput", f1(r.throughput()));
        }
        probe.before();
        props.setProperty("operationcount", req(a, "operations"));
        long gc0 = gcCount();
        long gct0 = gcMillis();
        YcsbRunner.PhaseResult r = YcsbRunner.phase(props, true);
        long gets = 0;
        for (YcsbRunner.OpStats s : r.ops().values()) {
            if (s.operation().equals("READ") || s.operation().equals("UPDATE")) {
                gets += s.operations(); // an update is a get, a merge and a put
            }
        }
        out.accept("gcCount", Long.toString(gcCount() - gc0));
        out.accept("gcMs", Long.toString(gcMillis() - gct0));
        probe.after(gets);
        check(r, "run");
        out.accept("throughput", f1(r.throughput()));
        out.accept("runtimeMs", Long.toString(r.runtimeMs()));
        out.accept("operations", Long.toString(r.operations()));
        out.accept("cpuCores", f2(r.cpuCores()));
        for (YcsbRunner.OpStats s : r.ops().values()) {
            out.accept(s.operation() + ".operations", Long.toString(s.operations()));
            out.accept(s.operation() + ".p50Us", f1(s.p50Us()));
            out.accept(s.operation() + ".p95Us", f1(s.p95Us()));
            out.accept(s.operation() + ".p99Us", f1(s.p99Us()));
            out.accept(s.operation() + ".avgUs", f1(s.averageUs()));
        }
    }

    private static void check(YcsbRunner.PhaseResult r, String phase) {
        if (r.notOk() > 0) {
            throw new IllegalStateException("YCSB " + phase + " phase: " + r.notOk() + " operations did not return OK ("
                    + r.errors() + " ERROR); every key of the load is read, so none may be missing");
        }
    }

    private static Properties copy(Properties p) {
        Properties c = new Properties();
        for (String k : p.stringPropertyNames()) {
            c.setProperty(k, p.getProperty(k));
        }
        return c;
    }

    private static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, b.getCollectionCount());
        }
        return n;
    }

    private static long gcMillis() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, b.getCollectionTime());
        }
        return n;
    }

    private static String ms(long t0) {
        return Long.toString((System.nanoTime() - t0) / 1_000_000);
    }

    private static String f1(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static String f2(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private static String f4(double v) {
        return String.format(Locale.ROOT, "%.4f", v);
    }
}
