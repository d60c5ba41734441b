package dev.lattice.bench.lsm;

import dev.lattice.bench.jmh.JmhSuite;

import java.util.ArrayList;
import java.util.List;

/**
 * Prints the JMH hot-path table ({@link JmhSuite}, the small-scale settings of {@code RunAll --only jmh}: 1 fork,
 * 2 x 500 ms warm-up, 4 x 500 ms measured, 1 and 2 threads, 100,000 keys of 100 bytes, {@code -prof gc}) to standard
 * output without touching the documentation, for comparisons across engine changes (not part of the product).
 */
public final class JmhTable {

    private JmhTable() {
    }

    /**
     * @param args ignored
     * @throws IllegalStateException if JMH fails
     */
    public static void main(String[] args) {
        JmhSuite.Settings s = new JmhSuite.Settings(1, 2, 500, 4, 500, List.of(1, 2),
                new ArrayList<>(JmhSuite.OPERATIONS.keySet()), List.of(), 100_000, true, null);
        JmhSuite.Report r = JmhSuite.run(s, System.out::println);
        System.out.println(r.markdown());
    }
}
