package dev.lattice.bench.jmh;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.spi.memory.InMemoryStorage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The engine's hot path on the in-memory provider ({@code memory:}): a tree of {@code keys} keys with
 * {@code valueBytes}-byte values, {@code partitions} partitions (8, the default, unless told otherwise). Every write
 * goes through the whole write path (encode, admission, coalescing, stage and commit on the in-memory log, apply);
 * reads are served from the partitions' memtables and runs.
 * Run by {@link JmhSuite}; {@link SkipListBench} is the same operations on a bare {@code ConcurrentSkipListMap}.
 */
@State(Scope.Benchmark)
public class EngineBench {

    /** Keys preloaded (and the key space of every operation). */
    @Param("100000")
    public int keys;

    /** Value size, bytes. */
    @Param("100")
    public int valueBytes;

    /** Partitions of the tree (the default is 8; {@code -p partitions=1} shows the merge's share of a scan). */
    @Param("8")
    public int partitions;

    /**
     * True for a tree sized to stay in its memtables (an in-memory-sized tree: {@code memtableBytes} 256 MiB and no
     * checkpoint by entry count, so nothing flushes); false for the engine's defaults (with one partition, 100,000
     * keys flush to runs twice).
     */
    @Param("false")
    public boolean memtableHoldsTree;

    private String storage;
    private Lattice lattice;
    private Tree tree;
    private Workload work;

    /** Creates the state (JMH calls this). */
    public EngineBench() {
    }

    /** Opens the lattice and preloads the keys. */
    @Setup(Level.Trial)
    public void open() {
        storage = "jmh-" + UUID.randomUUID();
        LatticeConfig.Builder config = LatticeConfig.builder().uri("memory:" + storage).partitions(partitions);
        if (memtableHoldsTree) {
            config.memtableBytes(256L << 20).checkpointEveryEntries(Long.MAX_VALUE);
        }
        lattice = Lattice.open(config.build());
        tree = lattice.tree("bench");
        work = new Workload(keys, valueBytes);
        work.preload(tree::putAll);
    }

    /** Closes the lattice and drops the in-memory storage. */
    @TearDown(Level.Trial)
    public void close() {
        lattice.close();
        InMemoryStorage.dropNamed(storage);
    }

    /**
     * @param t the thread's random source
     * @return the value read
     */
    @Benchmark
    public Optional<byte[]> get(Workload.PerThread t) {
        return tree.get(work.key(t.next()));
    }

    /**
     * @param t the thread's random source
     * @return the version written
     */
    @Benchmark
    public long put(Workload.PerThread t) {
        return tree.put(work.key(t.next()), work.value());
    }

    /**
     * Writes 1,000 keys (batched per partition, not atomic).
     *
     * @param t the thread's random source
     */
    @Benchmark
    public void putAll1000(Workload.PerThread t) {
        tree.putAll(work.batch(t.next()));
    }

    /**
     * @param t the thread's random source
     * @return the values read
     */
    @Benchmark
    public Map<String, byte[]> getAll4(Workload.PerThread t) {
        return tree.getAll(work.four(t.next()));
    }

    /**
     * Reads 100 consecutive keys from a random start.
     *
     * @param t the thread's random source
     * @param bh consumes the entries
     */
    @Benchmark
    public void scan100(Workload.PerThread t, Blackhole bh) {
        try (ScanCursor c = tree.scan(work.key(t.next()), null, false)) {
            for (int i = 0; i < 100 && c.hasNext(); i++) {
                bh.consume(c.next());
            }
        }
    }

    /**
     * A scan's set-up alone: opens a scan at a random key and reads its first entry (the snapshot, one seek per
     * partition, the merge's first tournament), then closes it.
     *
     * @param t the thread's random source
     * @param bh consumes the entry
     */
    @Benchmark
    public void scan1(Workload.PerThread t, Blackhole bh) {
        try (ScanCursor c = tree.scan(work.key(t.next()), null, false)) {
            if (c.hasNext()) {
                bh.consume(c.next());
            }
        }
    }
}
