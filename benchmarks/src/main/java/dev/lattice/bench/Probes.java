package dev.lattice.bench;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeStats;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.spi.memory.InMemoryStorage;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Small single-purpose workloads to run under a profiler or {@code /usr/bin/time} when looking for what bounds a
 * benchmark result (the commands are in {@code docs/benchmarks.md}). Not a benchmark: it prints one line of
 * figures and exits.
 *
 * <ul>
 *   <li>{@code put URI N THREADS}: N puts of 100-byte values (distinct keys) from THREADS threads after 20,000
 *       warm-up puts; prints the time per put, the engine's entries per commit and the voluntary context switches
 *       of all the process's threads per put during the measured puts ({@code /proc/self/task}).</li>
 *   <li>{@code scan PARTITIONS N}: a {@code memory:} tree of 100,000 keys with PARTITIONS partitions, 20,000
 *       warm-up scans, then N scans of 100 keys from random starts; prints the time per scan.</li>
 * </ul>
 */
public final class Probes {

    private Probes() {
    }

    /**
     * @param args {@code put URI N THREADS} or {@code scan PARTITIONS N}
     * @throws Exception if a probe fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 4 && args[0].equals("put")) {
            put(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        } else if (args.length == 3 && args[0].equals("scan")) {
            scan(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        } else {
            System.err.println("usage: Probes put URI N THREADS | Probes scan PARTITIONS N");
            System.exit(2);
        }
    }

    private static void put(String uri, int n, int threads) throws InterruptedException {
        try (Lattice l = Lattice.open(LatticeConfig.builder().uri(uri).build())) {
            Tree t = l.tree("probe");
            byte[] v = new byte[100];
            for (int i = 0; i < 20_000; i++) {
                t.put("warm" + i, v);
            }
            LatticeStats s0 = l.stats();
            Map<String, Long> cs0 = dev.lattice.bench.report.ContextSwitches.perThread();
            java.util.concurrent.atomic.AtomicLong writerSwitches = new java.util.concurrent.atomic.AtomicLong();
            long t0 = System.nanoTime();
            Thread[] ts = new Thread[threads];
            for (int k = 0; k < threads; k++) {
                int first = k;
                ts[k] = new Thread(() -> {
                    long c0 = dev.lattice.bench.report.ContextSwitches.currentThread();
                    for (int i = first; i < n; i += threads) {
                        t.put("key" + i, v);
                    }
                    writerSwitches.addAndGet(dev.lattice.bench.report.ContextSwitches.currentThread() - c0);
                });
                ts[k].start();
            }
            for (Thread x : ts) {
                x.join();
            }
            long ns = System.nanoTime() - t0;
            long switches = dev.lattice.bench.report.ContextSwitches.delta(cs0,
                    dev.lattice.bench.report.ContextSwitches.perThread()) + writerSwitches.get();
            LatticeStats s1 = l.stats();
            System.out.printf(Locale.ROOT, "put: %d puts, %d threads, %.1f us wall per put per thread, "
                            + "%.2f entries per commit, %.4f voluntary context switches per put (all threads)%n", n,
                    threads, ns / 1e3 / n * threads,
                    (double) (s1.entriesCommitted() - s0.entriesCommitted()) / (s1.commitCalls() - s0.commitCalls()),
                    switches / (double) n);
        }
    }

    private static void scan(int partitions, int n) {
        String storage = "probe-scan-" + partitions;
        try (Lattice l = Lattice.open(LatticeConfig.builder().uri("memory:" + storage).partitions(partitions)
                .build())) {
            Tree t = l.tree("probe");
            Map<String, byte[]> m = new LinkedHashMap<>();
            for (int i = 0; i < 100_000; i++) {
                m.put(String.format(Locale.ROOT, "key%010d", i), new byte[100]);
                if (m.size() == 1000) {
                    t.putAll(m);
                    m = new LinkedHashMap<>();
                }
            }
            SplittableRandom r = new SplittableRandom(1);
            long sink = scans(t, r, 20_000);
            long t0 = System.nanoTime();
            sink += scans(t, r, n);
            double us = (System.nanoTime() - t0) / 1e3 / n;
            double runs = l.meterRegistry().find("lattice.runs").gauges().stream().mapToDouble(g -> g.value()).sum();
            System.out.printf(Locale.ROOT, "scan: %d partitions, %.2f us per scan of 100 keys, %d runs in all"
                    + " (checksum %d)%n", partitions, us, (long) runs, sink);
        } finally {
            InMemoryStorage.dropNamed(storage);
        }
    }

    private static long scans(Tree t, SplittableRandom r, int n) {
        long sink = 0;
        for (int w = 0; w < n; w++) {
            try (ScanCursor c = t.scan(String.format(Locale.ROOT, "key%010d", r.nextInt(100_000)), null, false)) {
                for (int i = 0; i < 100 && c.hasNext(); i++) {
                    sink += c.next().value().length;
                }
            }
        }
        return sink;
    }
}
