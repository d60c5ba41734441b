package dev.lattice.engine;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/**
 * Child JVM of {@link LargerThanHeapTest}: loads a Chronicle tree with many times its heap in values, reads it back
 * (samples and a full count), reopens it and reads again, with default settings. Prints progress lines and last
 * {@code OK <values> load <ms> reopen <ms> peakHeap <bytes>} or {@code FAILED <exception>}.
 */
public final class LargerThanHeapProbe {

    private LargerThanHeapProbe() {
    }

    static byte[] value(int i, int size) {
        byte[] v = new byte[size];
        Arrays.fill(v, (byte) ('a' + i % 26));
        v[0] = (byte) i;
        v[1] = (byte) (i >>> 8);
        v[2] = (byte) (i >>> 16);
        return v;
    }

    /**
     * @param args the data directory, the number of values, the value size in bytes
     */
    public static void main(String[] args) {
        String uri = "chronicle:" + args[0];
        int n = Integer.parseInt(args[1]);
        int size = Integer.parseInt(args[2]);
        try {
            long t0 = System.nanoTime();
            try (Lattice l = Lattice.open(LatticeConfig.builder().uri(uri).partitions(4).build())) {
                Tree t = l.tree("big");
                Map<String, byte[]> batch = new HashMap<>();
                for (int i = 0; i < n; i++) {
                    batch.put(String.format("key-%09d", i), value(i, size));
                    if (batch.size() == 500) {
                        t.putAll(batch);
                        batch.clear();
                    }
                    if (i % 50_000 == 0) {
                        System.out.println("loaded " + i + " stats " + l.stats());
                    }
                }
                t.putAll(batch);
                check(t, n, size);
            }
            long load = (System.nanoTime() - t0) / 1_000_000;
            long t1 = System.nanoTime();
            try (Lattice l = Lattice.open(LatticeConfig.builder().uri(uri).build())) {
                check(l.tree("big"), n, size);
            }
            long reopen = (System.nanoTime() - t1) / 1_000_000;
            long peak = 0;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP) {
                    peak += pool.getPeakUsage().getUsed();
                }
            }
            System.out.println("OK " + n + " load " + load + " reopen " + reopen + " peakHeap " + peak);
        } catch (Throwable e) {
            System.out.println("FAILED " + e);
            e.printStackTrace(System.out);
        }
        System.out.flush();
        System.exit(0);
    }

    private static void check(Tree t, int n, int size) {
        Random r = new Random(n);
        for (int s = 0; s < 2_000; s++) {
            int i = r.nextInt(n);
            byte[] got = t.get(String.format("key-%09d", i)).orElseThrow(() -> new AssertionError("lost key " + i));
            if (!Arrays.equals(got, value(i, size))) {
                throw new AssertionError("wrong value of key " + i);
            }
        }
        if (t.get("key-absent").isPresent()) {
            throw new AssertionError("absent key found");
        }
        long count = t.count();
        if (count != n) {
            throw new AssertionError("count " + count + ", expected " + n);
        }
    }
}
