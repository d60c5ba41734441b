package dev.lattice.cluster;

import com.typesafe.config.ConfigFactory;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * A child JVM of {@link ScaleOutHarness}: one cluster node that, once the file {@code lattice.test.go} exists, runs
 * {@code lattice.test.threads} threads of point writes through its own cluster tree for {@code lattice.test.seconds},
 * then as long of point reads, printing {@code WRITES n cpu} and {@code READS n cpu} (operations, and the CPU
 * nanoseconds the JVM used meanwhile) and, before the reads, {@code HOSTED n} (the partitions it hosts); each phase after {@code lattice.test.warmup} seconds of the same workload that
 * are not measured. Then it leaves.
 */
public final class ThroughputNode {

    private static final LongAdder FAILED = new LongAdder();

    private ThroughputNode() {
    }

    public static void main(String[] args) throws Exception {
        LatticeCluster node = LatticeCluster.start(LatticeClusterConfig.fromConfig(ConfigFactory.load()).build());
        int members = Integer.getInteger("lattice.test.members", 1);
        if (!node.awaitMembers(members, Duration.ofSeconds(120))) {
            System.out.println("NOT-UP");
            System.exit(2);
        }
        Tree tree = node.tree("scale", TreeOptions.partitions(12));
        for (int p = 0; p < 200; p++) {
            tree.put("warm-" + System.getProperty("lattice.test.node") + "-" + p, new byte[100]);
        }
        System.out.println("READY");
        Path go = Path.of(System.getProperty("lattice.test.go"));
        while (!Files.exists(go)) {
            Thread.sleep(20);
        }
        long seconds = Long.getLong("lattice.test.seconds", 10);
        long warmup = Long.getLong("lattice.test.warmup", 0);
        int threads = Integer.getInteger("lattice.test.threads", 8);
        run(tree, threads, warmup, true); // JIT compilation under a quota takes seconds: not measured
        System.out.println("WRITES " + measured(tree, threads, seconds, true));
        run(tree, threads, warmup, false);
        System.out.println("HOSTED " + node.services().hostedPartitions("scale").size());
        ReadBatcher.Counts before = node.reads().counts();
        System.out.println("READS " + measured(tree, threads, seconds, false));
        ReadBatcher.Counts after = node.reads().counts();
        System.out.println("BATCHES " + (after.batches() - before.batches()) + " batches carried "
                + (after.batchedReads() - before.batchedReads()) + " reads; failed ops " + FAILED.sum());
        System.out.flush();
        node.close();
        System.exit(0);
    }

    /** @return operations done, then the CPU time this process used meanwhile (all its threads), in ns */
    private static String measured(Tree tree, int threads, long seconds, boolean write) throws InterruptedException {
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long ops = run(tree, threads, seconds, write);
        return ops + " " + (os.getProcessCpuTime() - cpu0);
    }

    private static long run(Tree tree, int threads, long seconds, boolean write) throws InterruptedException {
        LongAdder ops = new LongAdder();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                byte[] value = new byte[100];
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                while (System.nanoTime() < end) {
                    String key = "key-" + rnd.nextInt(10_000);
                    try {
                        if (write) {
                            tree.put(key, value);
                        } else {
                            tree.get(key);
                        }
                        ops.increment();
                    } catch (RuntimeException e) {
                        FAILED.increment(); // counted as not done
                    }
                }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) {
            th.join();
        }
        return ops.sum();
    }
}
