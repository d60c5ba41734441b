package dev.lattice.bench.jmh;

import dev.lattice.engine.lsm.BlockedBloomFilter;
import dev.lattice.engine.lsm.BloomFilter;
import dev.lattice.engine.lsm.KeyFilter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * One run's key filter probed in isolation: {@code mightContain} on a filter of {@code filterBytes} bytes at 10 bits
 * per key, the standard Bloom filter of run formats 1-2 against the blocked filter of format 3, for keys in random
 * order that are absent (most probes of a get: the runs that do not hold the key) or present. A filter of several
 * MiB does not fit the CPU's caches, so the cost is mostly the cache misses per probe: up to {@code k} = 7 for the
 * standard filter (an absent key stops at its first clear bit, after about 2), one block for the blocked one.
 * Not part of {@link JmhSuite}; run on its own: {@code java -cp ... org.openjdk.jmh.Main BloomProbeBench}. Quote
 * results as a ratio of the same run (the score is nanoseconds per probe).
 */
@State(Scope.Benchmark)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BloomProbeBench {

    /** Probes per benchmark invocation (a batch, so the loop's own cost is spread). */
    static final int BATCH = 1024;
    /** Distinct probe keys per trial, cycled through in batches. */
    static final int PROBES = 1 << 20;

    /** Filter size in bytes (keys = filterBytes * 8 / 10). */
    @Param("4194304")
    public int filterBytes;

    /** Which filter: {@code standard} (formats 1-2) or {@code blocked} (format 3). */
    @Param({"standard", "blocked"})
    public String kind;

    private KeyFilter filter;
    private long[] absent;
    private long[] present;
    private int next;

    /** Builds the filter from hashes of generated keys, and the probe keys. */
    @Setup
    public void setup() {
        int keys = (int) (filterBytes * 8L / 10);
        long[] hashes = new long[keys];
        for (int i = 0; i < keys; i++) {
            hashes[i] = BloomFilter.hash("user" + String.format("%010d", i));
        }
        filter = kind.equals("blocked") ? BlockedBloomFilter.build(hashes, keys, 10)
                : BloomFilter.build(hashes, keys, 10);
        SplittableRandom r = new SplittableRandom(42);
        absent = new long[PROBES];
        present = new long[PROBES];
        for (int i = 0; i < PROBES; i++) {
            absent[i] = BloomFilter.hash("absent" + String.format("%010d", i));
            present[i] = hashes[r.nextInt(keys)];
        }
    }

    private int probe(long[] keys) {
        int start = next;
        next = (next + BATCH) & (PROBES - 1);
        int yes = 0;
        for (int i = start; i < start + BATCH; i++) {
            yes += filter.mightContain(keys[i]) ? 1 : 0;
        }
        return yes;
    }

    /**
     * Probes of absent keys.
     *
     * @return how many the filter passed (false positives), so the probes are not optimised away
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int absentKeys() {
        return probe(absent);
    }

    /**
     * Probes of present keys.
     *
     * @return how many the filter passed (all), so the probes are not optimised away
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int presentKeys() {
        return probe(present);
    }
}
