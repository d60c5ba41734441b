package dev.lattice.bench.jmh;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * Keys, values and batches shared by the engine and the baseline benchmarks, built once per trial so that an
 * operation measures the store, not key formatting. Immutable after construction; thread-safe.
 */
public final class Workload {

    private static final int BATCHES = 16;
    private static final int FOURS = 4096;

    private final String[] keys;
    private final byte[] value;
    private final List<Map<String, byte[]>> batches = new ArrayList<>();
    private final List<List<String>> fours = new ArrayList<>();

    /**
     * @param n keys
     * @param valueBytes value size
     */
    public Workload(int n, int valueBytes) {
        keys = new String[n];
        for (int i = 0; i < n; i++) {
            keys[i] = key10(i);
        }
        value = new byte[valueBytes];
        SplittableRandom r = new SplittableRandom(42);
        r.nextBytes(value);
        for (int b = 0; b < BATCHES; b++) {
            Map<String, byte[]> m = new LinkedHashMap<>();
            while (m.size() < Math.min(1000, n)) {
                m.put(keys[r.nextInt(n)], value);
            }
            batches.add(m);
        }
        for (int f = 0; f < FOURS; f++) {
            fours.add(List.of(keys[r.nextInt(n)], keys[r.nextInt(n)], keys[r.nextInt(n)], keys[r.nextInt(n)]));
        }
    }

    /** @return {@code String.format("key%010d", i)} for {@code i >= 0}, without the formatter's cost */
    static String key10(int i) {
        char[] c = {'k', 'e', 'y', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0'};
        for (int p = c.length - 1, v = i; v > 0; p--, v /= 10) {
            c[p] = (char) ('0' + v % 10);
        }
        return new String(c);
    }

    /**
     * Writes every key once, 1,000 at a time.
     *
     * @param sink a {@code putAll}
     */
    public void preload(Consumer<Map<String, byte[]>> sink) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (String k : keys) {
            m.put(k, value);
            if (m.size() == 1000) {
                sink.accept(m);
                m = new LinkedHashMap<>();
            }
        }
        if (!m.isEmpty()) {
            sink.accept(m);
        }
    }

    /**
     * @param r a random int
     * @return one of the keys
     */
    public String key(int r) {
        return keys[Math.floorMod(r, keys.length)];
    }

    /**
     * Draws {@code count} sets of {@code n} distinct keys, uniformly from the key space (so an atomic write's keys
     * spread over the tree's partitions as a user's random keys would).
     *
     * @param n keys per set, 1..the key count
     * @param count sets to draw
     * @param seed the random seed (the same seed gives the same sets)
     * @return the sets, each in draw order
     * @throws IllegalArgumentException if {@code n} is below 1 or above the key count
     */
    public List<String[]> distinctSets(int n, int count, long seed) {
        if (n < 1 || n > keys.length) {
            throw new IllegalArgumentException("keys per set must be 1.." + keys.length + ", got " + n);
        }
        SplittableRandom r = new SplittableRandom(seed);
        List<String[]> out = new ArrayList<>(count);
        for (int c = 0; c < count; c++) {
            java.util.LinkedHashSet<String> set = new java.util.LinkedHashSet<>();
            while (set.size() < n) {
                set.add(keys[r.nextInt(keys.length)]);
            }
            out.add(set.toArray(new String[0]));
        }
        return out;
    }

    /** @return the value (shared: callers that keep it must copy) */
    public byte[] value() {
        return value;
    }

    /**
     * @param r a random int
     * @return one of the prepared 1,000-key batches
     */
    public Map<String, byte[]> batch(int r) {
        return batches.get(Math.floorMod(r, BATCHES));
    }

    /**
     * @param r a random int
     * @return one of the prepared lists of 4 keys
     */
    public List<String> four(int r) {
        return fours.get(Math.floorMod(r, FOURS));
    }

    /** A per-thread random source (JMH state). */
    @State(Scope.Thread)
    public static class PerThread {
        private final SplittableRandom random = new SplittableRandom(Thread.currentThread().getId());

        /** Creates the state (JMH calls this). */
        public PerThread() {
        }

        /** @return the next random int */
        public int next() {
            return random.nextInt();
        }
    }
}
