package dev.lattice.cluster;

import com.typesafe.config.ConfigFactory;
import dev.lattice.engine.LatticeSaturatedException;
import dev.lattice.engine.OwnershipLostException;
import dev.lattice.engine.PartialTree;
import dev.lattice.engine.PartitionNotHostedException;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;
import dev.lattice.engine.Versioned;
import dev.lattice.engine.WriteFailedException;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A child JVM of {@link ClusterFaultTest}: one cluster node (settings from {@code -D} properties) that also runs a
 * workload through its own {@link LatticeCluster#tree} until the file {@code lattice.test.stop} exists, writing
 * every operation to its history file (flushed per line, so a SIGKILL loses at most the line being written). Point
 * writes carry unique values; "g" keys are written only by one-partition atomic writes, all three to one value.
 *
 * <p>History lines (tab-separated, times in microseconds since the epoch from {@link Instant#now()}):
 * {@code S id kind key partition start value} before a write; {@code E id outcome end version} after it (outcome
 * OK, NOTAPPLIED for a failed condition, FAIL for a definite failure, UNKNOWN); {@code R key partition start end
 * version value} for a successful read; {@code G start end v1 v2 v3} for a read of the atomic group;
 * {@code M v1 version1 v2 version2 v3 version3 start1 end1 start2 end2 start3 end3} for the wide group's keys read one
 * after the other; {@code X start end v1 v2 v3} for one getAll of the wide group, {@code Y start end v1 v2 v3} for one
 * scan of its key range.
 */
public final class WorkloadNode {

    static final String TREE = "chaos";
    static final int PARTITIONS = 8;
    static final int KEYS = 64;

    private WorkloadNode() {
    }

    public static void main(String[] args) throws Exception {
        LatticeCluster node = LatticeCluster.start(LatticeClusterConfig.fromConfig(ConfigFactory.load()).build());
        String name = System.getProperty("lattice.test.node");
        Path history = Path.of(System.getProperty("lattice.test.history"));
        Path stop = Path.of(System.getProperty("lattice.test.stop"));
        int threads = Integer.getInteger("lattice.test.threads", 3);
        if (!node.awaitMembers(Integer.getInteger("lattice.test.members", 1), Duration.ofSeconds(90))) {
            System.out.println("NOT-UP");
        }
        Tree tree = node.tree(TREE, TreeOptions.partitions(PARTITIONS));
        PartialTree meta = node.services().tree(TREE);
        List<String> group = PartitionKeys.samePartition(meta, 3).keys();
        List<String> wide = wideKeys(meta);
        System.out.println("UP " + name);
        try (BufferedWriter out = Files.newBufferedWriter(history, StandardCharsets.UTF_8)) {
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String prefix = name + "." + t;
                Thread th = new Thread(() -> run(tree, meta, group, wide, prefix, out, stop, node), "workload-" + t);
                th.start();
                ts.add(th);
            }
            for (Thread th : ts) {
                th.join();
            }
        }
        System.out.println("WORKLOAD-DONE " + name);
        while (!node.isClosed()) {
            Thread.sleep(100);
        }
        System.exit(node.wasDowned() ? 1 : 0);
    }

    /** @return three keys "w-..." in three different partitions (an atomic write over them spans nodes) */
    static List<String> wideKeys(PartialTree meta) {
        List<String> keys = new ArrayList<>();
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int i = 0; keys.size() < 3; i++) {
            String k = "w-" + i;
            if (seen.add(meta.partitionOf(k))) {
                keys.add(k);
            }
        }
        return keys;
    }

    private static void run(Tree tree, PartialTree meta, List<String> group, List<String> wide, String prefix,
                            BufferedWriter out, Path stop, LatticeCluster node) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long seq = 0;
        while (!Files.exists(stop) && !node.isClosed()) {
            seq++;
            String id = prefix + "." + seq;
            int dice = rnd.nextInt(100);
            String key = "k" + rnd.nextInt(KEYS);
            int p = meta.partitionOf(key);
            try {
                if (dice < 40) {
                    write(out, "S\t" + id + "\tput\t" + key + "\t" + p + "\t" + now() + "\t" + id);
                    String outcome;
                    long version = 0;
                    try {
                        version = tree.put(key, id.getBytes(StandardCharsets.UTF_8));
                        outcome = "OK";
                    } catch (RuntimeException e) {
                        outcome = classify(e);
                    }
                    write(out, "E\t" + id + "\t" + outcome + "\t" + now() + "\t" + version);
                } else if (dice < 55) {
                    Optional<Versioned> cur = tree.getVersioned(key);
                    long expected = cur.map(Versioned::version).orElse(0L);
                    write(out, "S\t" + id + "\tcas\t" + key + "\t" + p + "\t" + now() + "\t" + id);
                    String outcome;
                    try {
                        outcome = tree.putIfVersion(key, id.getBytes(StandardCharsets.UTF_8), expected) ? "OK"
                                : "NOTAPPLIED";
                    } catch (RuntimeException e) {
                        outcome = classify(e);
                    }
                    // the version of a successful conditional write is not returned: read it back
                    write(out, "E\t" + id + "\t" + outcome + "\t" + now() + "\t0");
                } else if (dice < 62) {
                    atomicWrite(tree, meta, "atomic", group, id, out);
                } else if (dice < 70) {
                    atomicWrite(tree, meta, "wide", wide, id, out);
                } else if (dice < 76) {
                    // the wide group's keys one after the other: a later read never goes back past an earlier one
                    StringBuilder line = new StringBuilder("M");
                    StringBuilder times = new StringBuilder();
                    for (String w : wide) {
                        long start = now();
                        Optional<Versioned> v = tree.getVersioned(w);
                        times.append('\t').append(start).append('\t').append(now());
                        line.append('\t').append(v.map(x -> new String(x.value(), StandardCharsets.UTF_8)).orElse("-"))
                                .append('\t').append(v.map(Versioned::version).orElse(0L));
                    }
                    write(out, line.append(times).toString());
                } else if (dice == 77) {
                    // the wide group's range scanned through every partition: one snapshot
                    long start = now();
                    Map<String, String> got = new java.util.TreeMap<>();
                    try (dev.lattice.engine.ScanCursor c = tree.scan("w-", "w-~", false)) {
                        c.forEachRemaining(e -> got.put(e.key(), new String(e.value(), StandardCharsets.UTF_8)));
                    }
                    long end = now();
                    StringBuilder line = new StringBuilder("Y\t" + start + "\t" + end);
                    for (String w : wide) {
                        line.append('\t').append(got.getOrDefault(w, "-"));
                    }
                    write(out, line.toString());
                } else if (dice < 78) {
                    // the wide group in one getAll over three partitions: one consistent view
                    long start = now();
                    Map<String, byte[]> got = tree.getAll(wide);
                    long end = now();
                    StringBuilder line = new StringBuilder("X\t" + start + "\t" + end);
                    for (String w : wide) {
                        byte[] v = got.get(w);
                        line.append('\t').append(v == null ? "-" : new String(v, StandardCharsets.UTF_8));
                    }
                    write(out, line.toString());
                } else if (dice < 80) {
                    long start = now();
                    Map<String, byte[]> got = tree.getAll(group);
                    long end = now();
                    StringBuilder line = new StringBuilder("G\t" + start + "\t" + end);
                    for (String g : group) {
                        byte[] v = got.get(g);
                        line.append('\t').append(v == null ? "-" : new String(v, StandardCharsets.UTF_8));
                    }
                    write(out, line.toString());
                } else {
                    long start = now();
                    Optional<Versioned> v = tree.getVersioned(key);
                    long end = now();
                    write(out, "R\t" + key + "\t" + p + "\t" + start + "\t" + end + "\t"
                            + v.map(Versioned::version).orElse(0L) + "\t"
                            + v.map(x -> new String(x.value(), StandardCharsets.UTF_8)).orElse("-"));
                }
            } catch (RuntimeException e) {
                // a read that failed says nothing; keep going
                pause();
            }
        }
    }

    /** One atomic write of {@code id} to every key of {@code keys}, with its S and E lines. */
    private static void atomicWrite(Tree tree, PartialTree meta, String kind, List<String> keys, String id,
                                    BufferedWriter out) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (String k : keys) {
            m.put(k, id.getBytes(StandardCharsets.UTF_8));
        }
        write(out, "S\t" + id + "\t" + kind + "\t" + keys.get(0) + "\t" + meta.partitionOf(keys.get(0)) + "\t"
                + now() + "\t" + id);
        String outcome;
        long version = 0;
        try {
            version = tree.putAllAtomic(m);
            outcome = "OK";
        } catch (RuntimeException e) {
            outcome = classify(e);
        }
        write(out, "E\t" + id + "\t" + outcome + "\t" + now() + "\t" + version);
    }

    /** FAIL only where the engine or the router says nothing was written; anything else may have landed. */
    static String classify(RuntimeException e) {
        if (e instanceof PartitionNotHostedException || e instanceof OwnershipLostException
                || e instanceof WriteFailedException || e instanceof LatticeSaturatedException
                || e instanceof IllegalArgumentException) {
            return "FAIL";
        }
        return "UNKNOWN";
    }

    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long now() {
        Instant i = Instant.now();
        return i.getEpochSecond() * 1_000_000L + i.getNano() / 1000;
    }

    private static void write(BufferedWriter out, String line) {
        try {
            synchronized (out) {
                out.write(line);
                out.newLine();
                out.flush();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
