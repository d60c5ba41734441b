package dev.lattice.bench.lsm;

import dev.lattice.bench.jmh.Workload;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import dev.lattice.spi.memory.InMemoryStorage;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Point gets of an in-memory-sized tree (memory provider, {@link Workload}'s 100,000 keys of 100 bytes) against a
 * bare {@link ConcurrentSkipListMap} of the same keys, timed in alternating rounds on one thread of one JVM, so a
 * noisy machine slows both sides of each round's ratio alike. The map holds either the one value array every key
 * shares (as {@code SkipListBench} does: its nodes lie next to each other in memory) or a copy per key (as any store
 * keeps, the engine included). Prints each round's nanoseconds per get and the median engine/map ratio with its
 * quartiles. Compiled only against the public API and {@link Workload}, so {@code benchmarks/get-ratio.sh} can run it
 * on older engine commits too. Not part of the product.
 */
public final class GetRatioProbe {

    private static final int KEYS = 100_000;
    private static final int BATCH = 256;
    private static final int WARMUP_ROUNDS = 5;

    private GetRatioProbe() {
    }

    /**
     * @param args {@code rounds} (default 16), {@code ms} per side per round (default 250), {@code shared} or
     *     {@code copies} (default {@code copies}: the map's value arrays)
     * @throws NumberFormatException if a number does not parse
     * @throws IllegalArgumentException if the third argument is neither {@code shared} nor {@code copies}
     */
    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        long roundNanos = (args.length > 1 ? Long.parseLong(args[1]) : 250) * 1_000_000L;
        String values = args.length > 2 ? args[2] : "copies";
        if (!values.equals("shared") && !values.equals("copies")) {
            throw new IllegalArgumentException("values must be shared or copies, got " + values);
        }
        String storage = "get-ratio-" + UUID.randomUUID();
        try (Lattice lattice = Lattice.open(LatticeConfig.builder().uri("memory:" + storage).build())) {
            Tree tree = lattice.tree("bench");
            Workload work = new Workload(KEYS, 100);
            work.preload(tree::putAll);
            ConcurrentSkipListMap<String, byte[]> map = new ConcurrentSkipListMap<>();
            if (values.equals("copies")) {
                work.preload(m -> m.forEach((k, v) -> map.put(k, v.clone())));
            } else {
                work.preload(map::putAll);
            }
            SplittableRandom random = new SplittableRandom(7);
            long[] sink = new long[1];
            double[] ratios = new double[rounds];
            for (int i = -WARMUP_ROUNDS; i < rounds; i++) {
                double engine = nanosPerGet(roundNanos, () -> {
                    sink[0] += tree.get(work.key(random.nextInt())).map(v -> v.length).orElse(0);
                });
                double bare = nanosPerGet(roundNanos, () -> {
                    byte[] v = map.get(work.key(random.nextInt()));
                    sink[0] += v == null ? 0 : v.length;
                });
                if (i >= 0) {
                    ratios[i] = engine / bare;
                    System.out.printf("round %d: engine %.0f ns, map %.0f ns, ratio %.3f%n", i, engine, bare,
                            ratios[i]);
                }
            }
            Arrays.sort(ratios);
            System.out.printf("values %s: median engine/map %.3f (quartiles %.3f-%.3f), %d rounds (checksum %d)%n",
                    values, ratios[rounds / 2], ratios[rounds / 4], ratios[3 * rounds / 4], rounds, sink[0]);
        } finally {
            InMemoryStorage.dropNamed(storage);
        }
    }

    private static double nanosPerGet(long roundNanos, Runnable get) {
        long start = System.nanoTime();
        long n = 0;
        while (System.nanoTime() - start < roundNanos) {
            for (int j = 0; j < BATCH; j++) {
                get.run();
            }
            n += BATCH;
        }
        return (System.nanoTime() - start) / (double) n;
    }
}
