package dev.lattice.bench;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import dev.lattice.spi.memory.InMemoryStorage;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * Bytes allocated per blocking put, counted by the JVM per thread ({@code com.sun.management.ThreadMXBean}), on the
 * workload of {@code EngineBench.put}: a {@code memory:} tree of 100,000 keys of 13 characters with 100-byte values,
 * 8 partitions, one writer thread, random keys (overwrites). After WARMUP puts it measures N puts and prints the time
 * per put, the bytes the writer's thread allocated per put, and the bytes all live threads allocated per put (the
 * background flushes and compactions included). Steadier than JMH's {@code gc.alloc.rate.norm}, whose per-iteration
 * figure jumps when an iteration happens to hold a flush. Not a benchmark: it prints one line and exits.
 */
public final class PutAllocProbe {

    private PutAllocProbe() {
    }

    /**
     * @param args {@code WARMUP N}: warm-up puts, then measured puts
     */
    public static void main(String[] args) {
        int warmup = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        int keys = 100_000;
        String storage = "alloc-" + UUID.randomUUID();
        try (Lattice lattice = Lattice.open(LatticeConfig.builder().uri("memory:" + storage).build())) {
            Tree tree = lattice.tree("bench");
            String[] ks = new String[keys];
            for (int i = 0; i < keys; i++) {
                ks[i] = String.format(Locale.ROOT, "key%010d", i);
            }
            byte[] value = new byte[100];
            new SplittableRandom(42).nextBytes(value);
            Map<String, byte[]> batch = new LinkedHashMap<>();
            for (String k : ks) {
                batch.put(k, value);
                if (batch.size() == 1000) {
                    tree.putAll(batch);
                    batch = new LinkedHashMap<>();
                }
            }
            SplittableRandom r = new SplittableRandom(7);
            for (int i = 0; i < warmup; i++) {
                tree.put(ks[r.nextInt(keys)], value);
            }
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long me = Thread.currentThread().getId();
            long all0 = sum(threads.getThreadAllocatedBytes(threads.getAllThreadIds()));
            long me0 = threads.getThreadAllocatedBytes(me);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                tree.put(ks[r.nextInt(keys)], value);
            }
            long elapsed = System.nanoTime() - t0;
            long me1 = threads.getThreadAllocatedBytes(me);
            long all1 = sum(threads.getThreadAllocatedBytes(threads.getAllThreadIds()));
            System.out.printf(Locale.ROOT, "puts %d  %.2f us/put  writer thread %.1f B/put  all threads %.1f B/put%n",
                    n, elapsed / 1e3 / n, (me1 - me0) / (double) n, (all1 - all0) / (double) n);
        } finally {
            InMemoryStorage.dropNamed(storage);
        }
    }

    private static long sum(long[] bytes) {
        long s = 0;
        for (long b : bytes) {
            if (b > 0) {
                s += b;
            }
        }
        return s;
    }
}
