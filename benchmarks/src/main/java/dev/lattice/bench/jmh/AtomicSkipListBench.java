package dev.lattice.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The baseline of {@link AtomicBench}: the same key sets put one by one into bare
 * {@code ConcurrentSkipListMap<String, byte[]>}s (one map, or half the keys into each of two), values copied as the
 * engine copies them. No log, no durability and <b>no atomicity</b>: a reader can see part of a set. What the map
 * work alone costs, so the ratio shows what the atomic write path adds.
 */
@State(Scope.Benchmark)
public class AtomicSkipListBench {

    /** Keys preloaded in each map. */
    @Param("100000")
    public int keys;

    /** Value size, bytes. */
    @Param("100")
    public int valueBytes;

    /** Keys per write, >= 2. */
    @Param({"2", "16", "64"})
    public int keysPerWrite;

    private ConcurrentSkipListMap<String, byte[]> mapA;
    private ConcurrentSkipListMap<String, byte[]> mapB;
    private Workload work;
    private List<String[]> sets;

    /** Creates the state (JMH calls this). */
    public AtomicSkipListBench() {
    }

    /**
     * Preloads both maps and draws the key sets ({@link AtomicBench}'s seeds, so the same sets).
     *
     * @throws IllegalArgumentException if {@code keysPerWrite} is below 2 or above {@code keys}
     */
    @Setup(Level.Trial)
    public void open() {
        if (keysPerWrite < 2) {
            throw new IllegalArgumentException("keysPerWrite must be >= 2, got " + keysPerWrite);
        }
        mapA = new ConcurrentSkipListMap<>();
        mapB = new ConcurrentSkipListMap<>();
        work = new Workload(keys, valueBytes);
        work.preload(mapA::putAll);
        work.preload(mapB::putAll);
        sets = work.distinctSets(keysPerWrite, AtomicBench.SETS, 42 + keysPerWrite);
    }

    /**
     * Puts {@code keysPerWrite} keys into one map.
     *
     * @param t the thread's random source
     * @return the last previous value
     */
    @Benchmark
    public byte[] oneTree(Workload.PerThread t) {
        byte[] last = null;
        for (String k : sets.get(Math.floorMod(t.next(), AtomicBench.SETS))) {
            last = mapA.put(k, work.value().clone());
        }
        return last;
    }

    /**
     * Puts the first half of {@code keysPerWrite} keys into one map and the second half into the other.
     *
     * @param t the thread's random source
     * @return the last previous value
     */
    @Benchmark
    public byte[] twoTrees(Workload.PerThread t) {
        String[] set = sets.get(Math.floorMod(t.next(), AtomicBench.SETS));
        int half = set.length / 2;
        byte[] last = null;
        for (int i = 0; i < set.length; i++) {
            last = (i < half ? mapA : mapB).put(set[i], work.value().clone());
        }
        return last;
    }
}
