package dev.lattice.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The floor of a scan over hash-placed partitions: {@link EngineBench#scan100}'s work on {@code partitions} bare
 * {@code ConcurrentSkipListMap}s, each key in the map a hash of it picks (as a tree's placement does), merged in key
 * order by a tournament of losers (one key comparison per tree level and entry, nothing allocated per entry). No log,
 * no snapshot, no versions: what any engine that places keys by hash pays at least, beside
 * {@link SkipListBench#scan100} on one map.
 */
@State(Scope.Benchmark)
public class PartitionedSkipListBench {

    /** Keys preloaded. */
    @Param("100000")
    public int keys;

    /** Value size, bytes. */
    @Param("100")
    public int valueBytes;

    /** Maps the keys are spread over. */
    @Param("8")
    public int partitions;

    private ConcurrentSkipListMap<String, byte[]>[] maps;
    private Workload work;

    /** Creates the state (JMH calls this). */
    public PartitionedSkipListBench() {
    }

    /** Preloads the keys, each into the map its hash picks. */
    @Setup(Level.Trial)
    @SuppressWarnings("unchecked")
    public void open() {
        maps = new ConcurrentSkipListMap[partitions];
        for (int p = 0; p < partitions; p++) {
            maps[p] = new ConcurrentSkipListMap<>();
        }
        work = new Workload(keys, valueBytes);
        work.preload(batch -> batch.forEach((k, v) -> maps[partitionOf(k)].put(k, v)));
    }

    private int partitionOf(String key) {
        return Math.floorMod(key.hashCode() * 0x9E3779B1, partitions);
    }

    /**
     * Reads 100 consecutive keys from a random start: one seek per map, then the merge.
     *
     * @param t the thread's random source
     * @param bh consumes the entries
     */
    @Benchmark
    public void scan100(Workload.PerThread t, Blackhole bh) {
        String from = work.key(t.next());
        int k = partitions;
        @SuppressWarnings("unchecked")
        Iterator<Map.Entry<String, byte[]>>[] its = new Iterator[k];
        @SuppressWarnings("unchecked")
        Map.Entry<String, byte[]>[] heads = new Map.Entry[k];
        for (int p = 0; p < k; p++) {
            its[p] = maps[p].tailMap(from, true).entrySet().iterator();
            heads[p] = its[p].hasNext() ? its[p].next() : null;
        }
        int[] losers = new int[k];
        losers[0] = play(1, losers, heads);
        for (int i = 0; i < 100; i++) {
            int w = losers[0];
            if (heads[w] == null) {
                return;
            }
            bh.consume(heads[w]);
            heads[w] = its[w].hasNext() ? its[w].next() : null;
            for (int node = (w + k) >>> 1; node > 0; node >>>= 1) {
                int other = losers[node];
                if (before(heads, other, w)) {
                    losers[node] = w;
                    w = other;
                }
            }
            losers[0] = w;
        }
    }

    /**
     * A scan's set-up alone: one seek per map and the first key of the merge (the smallest head).
     *
     * @param t the thread's random source
     * @param bh consumes the first entry
     */
    @Benchmark
    public void scan1(Workload.PerThread t, Blackhole bh) {
        String from = work.key(t.next());
        Map.Entry<String, byte[]> first = null;
        for (ConcurrentSkipListMap<String, byte[]> m : maps) {
            Iterator<Map.Entry<String, byte[]>> it = m.tailMap(from, true).entrySet().iterator();
            if (it.hasNext()) {
                Map.Entry<String, byte[]> e = it.next();
                if (first == null || e.getKey().compareTo(first.getKey()) < 0) {
                    first = e;
                }
            }
        }
        bh.consume(first);
    }

    /** The first tournament below {@code node}: stores the losers, returns the winner. */
    private int play(int node, int[] losers, Map.Entry<String, byte[]>[] heads) {
        int k = heads.length;
        if (node >= k) {
            return node - k;
        }
        int a = play(2 * node, losers, heads);
        int b = play(2 * node + 1, losers, heads);
        if (before(heads, b, a)) {
            losers[node] = a;
            return b;
        }
        losers[node] = b;
        return a;
    }

    /** @return true when map {@code a}'s head comes before map {@code b}'s (a finished map comes last) */
    private static boolean before(Map.Entry<String, byte[]>[] heads, int a, int b) {
        if (heads[a] == null) {
            return false;
        }
        if (heads[b] == null) {
            return true;
        }
        int c = heads[a].getKey().compareTo(heads[b].getKey());
        return c != 0 ? c < 0 : a < b;
    }
}
