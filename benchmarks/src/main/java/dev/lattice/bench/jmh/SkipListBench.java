package dev.lattice.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The baseline: {@link EngineBench}'s operations on a bare {@code ConcurrentSkipListMap<String, byte[]>}, no log,
 * no durability, one map. The physical limit for reads of an in-memory sorted map; for writes it shows what the
 * log pipeline adds.
 */
@State(Scope.Benchmark)
public class SkipListBench {

    /** Keys preloaded. */
    @Param("100000")
    public int keys;

    /** Value size, bytes. */
    @Param("100")
    public int valueBytes;

    private ConcurrentSkipListMap<String, byte[]> map;
    private Workload work;

    /** Creates the state (JMH calls this). */
    public SkipListBench() {
    }

    /** Preloads the keys. */
    @Setup(Level.Trial)
    public void open() {
        map = new ConcurrentSkipListMap<>();
        work = new Workload(keys, valueBytes);
        work.preload(map::putAll);
    }

    /**
     * @param t the thread's random source
     * @return the value
     */
    @Benchmark
    public byte[] get(Workload.PerThread t) {
        return map.get(work.key(t.next()));
    }

    /**
     * @param t the thread's random source
     * @return the previous value
     */
    @Benchmark
    public byte[] put(Workload.PerThread t) {
        return map.put(work.key(t.next()), work.value().clone());
    }

    /**
     * @param t the thread's random source
     */
    @Benchmark
    public void putAll1000(Workload.PerThread t) {
        for (Map.Entry<String, byte[]> e : work.batch(t.next()).entrySet()) {
            map.put(e.getKey(), e.getValue().clone());
        }
    }

    /**
     * @param t the thread's random source
     * @return the values read
     */
    @Benchmark
    public Map<String, byte[]> getAll4(Workload.PerThread t) {
        Map<String, byte[]> out = new HashMap<>();
        for (String k : work.four(t.next())) {
            byte[] v = map.get(k);
            if (v != null) {
                out.put(k, v);
            }
        }
        return out;
    }

    /**
     * @param t the thread's random source
     * @param bh consumes the entries
     */
    @Benchmark
    public void scan100(Workload.PerThread t, Blackhole bh) {
        Iterator<Map.Entry<String, byte[]>> it = map.tailMap(work.key(t.next()), true).entrySet().iterator();
        for (int i = 0; i < 100 && it.hasNext(); i++) {
            bh.consume(it.next());
        }
    }
}
