package dev.lattice.bench.jmh;

import dev.lattice.engine.AtomicWrite;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import dev.lattice.spi.memory.InMemoryStorage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Atomic writes on the in-memory provider ({@code memory:}): two trees of {@code keys} keys each ({@code valueBytes}
 * bytes per value, 8 partitions, the default), and atomic writes of {@code keysPerWrite} distinct keys drawn
 * uniformly from the key space, so the keys spread over the partitions as a user's random keys would.
 * <ul>
 *   <li>{@link #oneTree}: {@code Tree.putAllAtomic} on one tree (with 8 partitions a write of 2 keys touches 1 or 2
 *       logs, one of 64 keys nearly always all 8);</li>
 *   <li>{@link #twoTrees}: {@code Lattice.atomic()} with the first half of the keys in one tree and the second half
 *       in the other, then {@code commit()}.</li>
 * </ul>
 * Every write overwrites existing keys and takes the engine's whole atomic path (one atomic log entry when its keys
 * fall in one log; otherwise key locks, a prepare entry per log and a decision entry); the caller returns once the
 * write is committed and visible. {@link AtomicSkipListBench} is the same
 * key sets put into bare {@code ConcurrentSkipListMap}s. Run by {@link JmhSuite}.
 */
@State(Scope.Benchmark)
public class AtomicBench {

    /** Sets of keys prepared per trial (each write picks one at random). */
    static final int SETS = 4096;

    /** Keys preloaded in each tree (and the key space of the writes). */
    @Param("100000")
    public int keys;

    /** Value size, bytes. */
    @Param("100")
    public int valueBytes;

    /** Keys per atomic write (both trees together for {@link #twoTrees}), >= 2. */
    @Param({"2", "16", "64"})
    public int keysPerWrite;

    private String storage;
    private Lattice lattice;
    private Tree treeA;
    private Tree treeB;
    private Workload work;
    private List<String[]> sets;
    private List<Map<String, byte[]>> maps;

    /** Creates the state (JMH calls this). */
    public AtomicBench() {
    }

    /**
     * Opens the lattice, preloads the trees the benchmark writes (the second one only for {@link #twoTrees}) and
     * draws the key sets.
     *
     * @param params the benchmark being set up
     * @throws IllegalArgumentException if {@code keysPerWrite} is below 2 or above {@code keys}
     */
    @Setup(Level.Trial)
    public void open(BenchmarkParams params) {
        if (keysPerWrite < 2) {
            throw new IllegalArgumentException("keysPerWrite must be >= 2 (half go to each tree), got " + keysPerWrite);
        }
        storage = "jmh-atomic-" + UUID.randomUUID();
        lattice = Lattice.open(LatticeConfig.builder().uri("memory:" + storage).build());
        treeA = lattice.tree("bench");
        treeB = lattice.tree("bench2");
        work = new Workload(keys, valueBytes);
        work.preload(treeA::putAll);
        if (params.getBenchmark().endsWith(".twoTrees")) {
            work.preload(treeB::putAll);
        }
        sets = work.distinctSets(keysPerWrite, SETS, 42 + keysPerWrite);
        maps = new ArrayList<>(SETS);
        for (String[] set : sets) {
            Map<String, byte[]> m = new LinkedHashMap<>();
            for (String k : set) {
                m.put(k, work.value());
            }
            maps.add(m);
        }
    }

    /** Closes the lattice and drops the in-memory storage. */
    @TearDown(Level.Trial)
    public void close() {
        lattice.close();
        InMemoryStorage.dropNamed(storage);
    }

    /**
     * One atomic write of {@code keysPerWrite} keys to one tree.
     *
     * @param t the thread's random source
     * @return the version written
     */
    @Benchmark
    public long oneTree(Workload.PerThread t) {
        return treeA.putAllAtomic(maps.get(Math.floorMod(t.next(), SETS)));
    }

    /**
     * One atomic write of {@code keysPerWrite} keys, half to each of two trees.
     *
     * @param t the thread's random source
     * @return the version written
     */
    @Benchmark
    public long twoTrees(Workload.PerThread t) {
        String[] set = sets.get(Math.floorMod(t.next(), SETS));
        int half = set.length / 2;
        byte[] v = work.value();
        AtomicWrite w = lattice.atomic();
        for (int i = 0; i < set.length; i++) {
            w.put(i < half ? treeA : treeB, set[i], v);
        }
        return w.commit().version();
    }
}
