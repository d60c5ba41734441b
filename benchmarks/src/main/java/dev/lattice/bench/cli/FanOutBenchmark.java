package dev.lattice.bench.cli;

import dev.lattice.testkit.ThrottledProvider;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeShuttingDownException;
import dev.lattice.engine.PlacementPolicy;
import dev.lattice.engine.Tree;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The multi-account fan-out benchmark: one tree whose logs are placed round-robin over N accounts (in-memory
 * providers, each behind a {@link ThrottledProvider} modelling the account's ceiling), driven by closed-loop writers
 * for a fixed time. Reports sustained keys/s per N, the speedup over N = 1, and each account's utilisation of its
 * request and byte ceilings.
 */
final class FanOutBenchmark {

    enum Mode { POINT, BATCH }

    record Settings(List<Integer> accounts, int partitions, int writers, Duration duration, double requestsPerSecond,
                    double bytesPerSecond, int valueBytes, int batchKeys, List<Mode> modes) {
    }

    record Result(Mode mode, int accounts, long keys, double seconds, double keysPerSecond, double speedup,
                  double requestUtilisation, double byteUtilisation, double cpuLoad) {
    }

    private FanOutBenchmark() {
    }

    static List<Result> run(Settings s, java.util.function.Consumer<String> progress) throws Exception {
        List<Result> out = new ArrayList<>();
        for (Mode mode : s.modes()) {
            double base = 0;
            for (int n : s.accounts()) {
                progress.accept("fan-out: " + mode.name().toLowerCase() + " writes over " + n + " account(s)");
                Result r = runCase(s, mode, n, base);
                if (base == 0) {
                    base = r.keysPerSecond() / n; // the first (smallest) N is the baseline, per account
                    r = new Result(r.mode(), r.accounts(), r.keys(), r.seconds(), r.keysPerSecond(), n,
                            r.requestUtilisation(), r.byteUtilisation(), r.cpuLoad());
                }
                out.add(r);
            }
        }
        return out;
    }

    private static Result runCase(Settings s, Mode mode, int n, double basePerAccount) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<ThrottledProvider> accounts = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add("fanout-" + run + "-" + i);
            WalStorageProvider raw = Providers.open("memory:" + names.get(i));
            accounts.add(new ThrottledProvider(raw, s.requestsPerSecond(), s.bytesPerSecond()));
        }
        List<String> keys = new ArrayList<>();
        LatticeConfig.Builder cfg = LatticeConfig.builder().provider(accounts.get(0), true)
                .partitions(s.partitions()).admissionTimeout(Duration.ofMinutes(5));
        keys.add(PlacementPolicy.DEFAULT_KEY);
        for (int i = 1; i < n; i++) {
            cfg.namedProvider("acct-" + i, accounts.get(i), true);
            keys.add("acct-" + i);
        }
        cfg.placement(PlacementPolicy.roundRobin(keys.toArray(new String[0])));
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        LongAdder written = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        long startNanos;
        long endNanos;
        long[] req0 = new long[n];
        long[] bytes0 = new long[n];
        double load;
        ExecutorService pool = Executors.newFixedThreadPool(s.writers());
        try (Lattice lattice = Lattice.open(cfg.build())) {
            Tree tree = lattice.tree("fanout");
            byte[] value = new byte[s.valueBytes()];
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < s.writers(); w++) {
                int id = w;
                fs.add(pool.submit(() -> {
                    long i = 0;
                    try {
                        while (!stop.get()) {
                            if (mode == Mode.POINT) {
                                tree.put("w" + id + "-" + (i++ % 10_000), value);
                                written.increment();
                            } else {
                                Map<String, byte[]> batch = new HashMap<>();
                                for (int k = 0; k < s.batchKeys(); k++) {
                                    batch.put("w" + id + "-" + (i++ % 10_000), value);
                                }
                                tree.putAll(batch);
                                written.add(batch.size());
                            }
                        }
                    } catch (LatticeShuttingDownException ignored) {
                        // the measurement window is over
                    }
                    return null;
                }));
            }
            // warm-up: a quarter of the window, not counted
            Thread.sleep(s.duration().toMillis() / 4);
            for (int i = 0; i < n; i++) {
                req0[i] = accounts.get(i).requestCount();
                bytes0[i] = accounts.get(i).byteCount();
            }
            long keys0 = written.sum();
            startNanos = System.nanoTime();
            Thread.sleep(s.duration().toMillis());
            endNanos = System.nanoTime();
            long keys1 = written.sum();
            long[] req1 = new long[n];
            long[] bytes1 = new long[n];
            for (int i = 0; i < n; i++) {
                req1[i] = accounts.get(i).requestCount();
                bytes1[i] = accounts.get(i).byteCount();
            }
            load = os.getSystemLoadAverage();
            stop.set(true);
            for (Future<?> f : fs) {
                f.get(5, TimeUnit.MINUTES);
            }
            double secs = (endNanos - startNanos) / 1e9;
            double reqUtil = 0;
            double byteUtil = 0;
            for (int i = 0; i < n; i++) {
                reqUtil += (req1[i] - req0[i]) / secs / s.requestsPerSecond();
                byteUtil += (bytes1[i] - bytes0[i]) / secs / s.bytesPerSecond();
            }
            long measured = keys1 - keys0;
            double kps = measured / secs;
            double speedup = basePerAccount > 0 ? kps / basePerAccount : n;
            return new Result(mode, n, measured, secs, kps, speedup, Math.min(1.0, reqUtil / n), Math.min(1.0, byteUtil / n),
                    load);
        } finally {
            pool.shutdownNow();
            names.forEach(InMemoryStorage::dropNamed);
        }
    }
}
