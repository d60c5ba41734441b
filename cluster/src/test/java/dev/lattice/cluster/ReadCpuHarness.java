package dev.lattice.cluster;

import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * Measures the CPU a point read through the cluster costs, summed over both nodes (not a test: run its
 * {@link #main} by hand, see docs/cluster.md "Point reads in batches"). Two nodes in this JVM on one embedded
 * PostgreSQL; THREADS closed-loop readers on node A read 100-byte values of keys whose partitions node B hosts
 * (remote) or node A hosts (local), in phases of SECONDS, alternating reads batched per log ({@link ReadBatcher}) and
 * sent alone, after a warm-up of each kind; per phase it prints reads per second and this process's CPU time (both
 * nodes, every thread) per read. No CPU quota: both nodes share this machine's cores.
 *
 * <p>Arguments: optional THREADS (default 32), SECONDS (default 10), ROUNDS (default 3), and a phase to run alone
 * ({@code remote-yes}, {@code remote-no}, {@code local-yes}, {@code local-no}: a line {@code MEASURE} marks its start,
 * for a profiler). Not thread-safe.
 */
public final class ReadCpuHarness {

    private static final int PARTITIONS = 8;

    private ReadCpuHarness() {
    }

    /**
     * @param args optional: threads, seconds per phase, rounds of (batched, alone) pairs
     * @throws Exception if a node fails
     */
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 32;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        String uri = TestCluster.freshPostgresUri();
        int seed = TestCluster.freePort();
        try (LatticeCluster a = LatticeCluster.start(TestCluster.node(uri, seed, seed, "").build());
             LatticeCluster b = LatticeCluster.start(TestCluster.node(uri, TestCluster.freePort(), seed, "").build())) {
            if (!a.awaitMembers(2, Duration.ofSeconds(60)) || !b.awaitMembers(2, Duration.ofSeconds(60))) {
                throw new IllegalStateException("cluster of 2 did not form in 60 s");
            }
            Tree viaA = a.tree("reads", TreeOptions.partitions(PARTITIONS));
            var meta = b.services().tree("reads");
            List<String> remote = new ArrayList<>();
            List<String> local = new ArrayList<>();
            byte[] value = new byte[100];
            for (int i = 0; i < 4_000; i++) {
                viaA.put("k-" + i, value);
            }
            Set<Integer> onB = meta.hostedPartitions();
            System.out.println("partitions hosted by A " + a.services().tree("reads").hostedPartitions() + ", by B "
                    + onB);
            for (int i = 0; i < 4_000; i++) {
                String k = "k-" + i;
                (onB.contains(meta.partitionOf(k)) ? remote : local).add(k);
            }
            if (remote.isEmpty() || local.isEmpty()) {
                throw new IllegalStateException("both nodes must host partitions: " + onB);
            }
            ReadBatcher batcher = a.reads();
            if (args.length > 3) { // one phase only, e.g. "remote-yes", for a profiler: warm-up, then a marker line
                boolean on = args[3].endsWith("-yes");
                List<String> keys = args[3].startsWith("remote") ? remote : local;
                batcher.enabled(on);
                phase(viaA, keys, threads, 20);
                System.out.println("MEASURE " + args[3] + " " + System.currentTimeMillis());
                long[] res = phase(viaA, keys, threads, seconds);
                System.out.printf("%s: %,.0f reads/s, %.1f us CPU per read%n", args[3], res[0] / (double) seconds,
                        res[1] / 1e3 / Math.max(1, res[0]));
                System.exit(0);
            }
            for (boolean on : new boolean[] {true, false}) {
                batcher.enabled(on);
                phase(viaA, remote, threads, 20);
                phase(viaA, local, threads, 10);
            }
            System.out.printf("%n%d reader threads on node A, %d s per phase, %d-byte values, %d partitions%n",
                    threads, seconds, value.length, PARTITIONS);
            System.out.println("| reads | round | batched | reads/s | CPU per read (both nodes) | reads per batch |");
            System.out.println("|---|---:|---|---:|---:|---:|");
            for (String kind : new String[] {"remote", "local"}) {
                for (int r = 1; r <= rounds; r++) {
                    for (boolean on : new boolean[] {true, false}) {
                        batcher.enabled(on);
                        ReadBatcher.Counts c0 = batcher.counts();
                        long[] res = phase(viaA, kind.equals("remote") ? remote : local, threads, seconds);
                        ReadBatcher.Counts c1 = batcher.counts();
                        long batches = c1.batches() - c0.batches();
                        System.out.printf("| %s | %d | %s | %,.0f | %.1f us | %s |%n", kind, r, on ? "yes" : "no",
                                res[0] / (double) seconds, res[1] / 1e3 / Math.max(1, res[0]),
                                batches == 0 ? "-" : String.format("%.1f (%,d batches, %,d of the reads)",
                                        (c1.batchedReads() - c0.batchedReads()) / (double) batches, batches,
                                        c1.batchedReads() - c0.batchedReads()));
                    }
                }
            }
        }
        System.exit(0);
    }

    /** @return reads done, then the process CPU time used meanwhile in ns */
    private static long[] phase(Tree t, List<String> keys, int threads, int seconds) throws InterruptedException {
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        LongAdder reads = new LongAdder();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long cpu0 = os.getProcessCpuTime();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread th = new Thread(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                while (System.nanoTime() < end) {
                    if (t.get(keys.get(rnd.nextInt(keys.size()))).isEmpty()) {
                        throw new IllegalStateException("a key written before is absent");
                    }
                    reads.increment();
                }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) {
            th.join();
        }
        return new long[] {reads.sum(), os.getProcessCpuTime() - cpu0};
    }
}
