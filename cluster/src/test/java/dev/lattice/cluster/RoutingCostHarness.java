package dev.lattice.cluster;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Measures what routing through the cluster costs (not a test: run its {@link #main} by hand, see docs/cluster.md,
 * "Figures"). Against one embedded PostgreSQL it measures, on one thread, the latency of {@code put} and {@code get}
 * (a) on the embedded engine ({@link Lattice#open}) and (b) through node A of a two-node cluster in this JVM for keys
 * whose partition node B hosts, and prints p50/p99 in microseconds and the ratio (b)/(a).
 *
 * <p>Arguments: optional op count per measurement (default 3,000); the warm-up is a third of it. Not thread-safe.
 */
public final class RoutingCostHarness {

    private static final int PARTITIONS = 8;
    private static final byte[] VALUE = new byte[100];

    private RoutingCostHarness() {
    }

    /**
     * @param args optional: ops per measurement
     * @throws Exception if a node or the engine fails
     */
    public static void main(String[] args) throws Exception {
        int ops = args.length > 0 ? Integer.parseInt(args[0]) : 3_000;
        int warm = Math.max(100, ops / 3);
        Arrays.fill(VALUE, (byte) 'x');

        long[][] embedded;
        try (Lattice lattice = Lattice.open(TestCluster.freshPostgresUri())) {
            Tree t = lattice.tree("bench", TreeOptions.partitions(PARTITIONS));
            List<String> keys = new ArrayList<>();
            for (int i = 0; keys.size() < ops + warm; i++) {
                keys.add("k-" + i);
            }
            embedded = measure(t, keys, warm, ops);
        }

        String uri = TestCluster.freshPostgresUri();
        int seed = TestCluster.freePort();
        long[][] routed;
        try (LatticeCluster a = LatticeCluster.start(TestCluster.node(uri, seed, seed, "").build());
             LatticeCluster b = LatticeCluster.start(TestCluster.node(uri, TestCluster.freePort(), seed, "").build())) {
            if (!a.awaitMembers(2, Duration.ofSeconds(60)) || !b.awaitMembers(2, Duration.ofSeconds(60))) {
                throw new IllegalStateException("cluster of 2 did not form in 60 s");
            }
            Tree viaA = a.tree("bench", TreeOptions.partitions(PARTITIONS));
            var metaB = b.services().tree("bench");
            // one write per partition makes sharding start every partition's entity
            Set<Integer> touched = new java.util.HashSet<>();
            for (int i = 0; touched.size() < PARTITIONS; i++) {
                String k = "w-" + i;
                if (touched.add(metaB.partitionOf(k))) {
                    viaA.put(k, VALUE);
                }
            }
            Set<Integer> onB = metaB.hostedPartitions();
            Set<Integer> onA = a.services().tree("bench").hostedPartitions();
            System.out.println("partitions hosted by A " + onA + ", by B " + onB);
            if (onB.isEmpty()) {
                throw new IllegalStateException("node B hosts no partition");
            }
            List<String> keys = new ArrayList<>();
            for (int i = 0; keys.size() < ops + warm; i++) {
                String k = "k-" + i;
                if (onB.contains(metaB.partitionOf(k))) {
                    keys.add(k);
                }
            }
            routed = measure(viaA, keys, warm, ops);
            if (!metaB.hostedPartitions().equals(onB)) {
                System.out.println("WARNING: B's partitions changed during the run: " + metaB.hostedPartitions());
            }
        }

        System.out.printf("%n%d ops per row after %d warm-up ops, 1 thread, %d-byte values, %d partitions%n",
                ops, warm, VALUE.length, PARTITIONS);
        System.out.printf("%-34s %10s %10s%n", "operation", "p50 us", "p99 us");
        row("put, embedded engine", embedded[0]);
        row("put, node A -> owner B", routed[0]);
        row("get, embedded engine", embedded[1]);
        row("get, node A -> owner B", routed[1]);
        System.out.printf("ratio put p50 %.1fx, p99 %.1fx; get p50 %.1fx, p99 %.1fx%n",
                ratio(routed[0], embedded[0], 0.50), ratio(routed[0], embedded[0], 0.99),
                ratio(routed[1], embedded[1], 0.50), ratio(routed[1], embedded[1], 0.99));
        System.exit(0);
    }

    /** @return {puts, gets} latencies in ns, sorted, of the last {@code ops} of each (after {@code warm}) */
    private static long[][] measure(Tree t, List<String> keys, int warm, int ops) {
        long[] puts = new long[ops];
        for (int i = 0; i < warm + ops; i++) {
            long s = System.nanoTime();
            t.put(keys.get(i), VALUE);
            long d = System.nanoTime() - s;
            if (i >= warm) {
                puts[i - warm] = d;
            }
        }
        long[] gets = new long[ops];
        for (int i = 0; i < warm + ops; i++) {
            String k = keys.get(i);
            long s = System.nanoTime();
            if (t.get(k).isEmpty()) {
                throw new IllegalStateException("lost " + k);
            }
            long d = System.nanoTime() - s;
            if (i >= warm) {
                gets[i - warm] = d;
            }
        }
        Arrays.sort(puts);
        Arrays.sort(gets);
        return new long[][] {puts, gets};
    }

    private static long pct(long[] sorted, double q) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)];
    }

    private static double ratio(long[] x, long[] base, double q) {
        return (double) pct(x, q) / pct(base, q);
    }

    private static void row(String name, long[] sorted) {
        System.out.printf("%-34s %10.0f %10.0f%n", name, pct(sorted, 0.50) / 1e3, pct(sorted, 0.99) / 1e3);
    }
}
