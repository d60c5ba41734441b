package dev.lattice.cluster.cli;

import dev.lattice.engine.Tree;
import dev.lattice.engine.WriteOutcomeUnknownException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The traffic of {@code lattice cluster demo}: one thread per partition of the demo tree, each writing fresh keys of
 * its partition through the cluster's routing tree (every key written once, so its value is known) and reading back
 * one it wrote before, with a short pause between rounds. It records when each partition's writes were acknowledged,
 * so the demo can tell how long a partition of a killed node paused and whether the others went on, and checks every
 * acknowledged write at the end. Thread-safe: {@link #start}, {@link #stop} and the getters may be called from any
 * thread.
 */
final class ClusterDemoWorkload {

    /** Pause between two rounds of one partition's thread, in milliseconds. */
    static final long PAUSE_MILLIS = 25;

    private final Tree tree;
    private final List<List<String>> keys;
    private final Map<String, String> acked = new ConcurrentHashMap<>();
    private final Map<String, String> unknown = new ConcurrentHashMap<>();
    /** Per partition: start and end times (ms, {@link System#currentTimeMillis}) of each acknowledged write. */
    private final List<List<long[]>> writes = new ArrayList<>();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong readFailures = new AtomicLong();
    private final AtomicLong writeFailures = new AtomicLong();
    private final List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean stopped;

    /**
     * @param tree the cluster's routing tree
     * @param keys per partition, the keys that fall in it (in the order they are written)
     */
    ClusterDemoWorkload(Tree tree, List<List<String>> keys) {
        this.tree = tree;
        this.keys = keys;
        for (int p = 0; p < keys.size(); p++) {
            writes.add(java.util.Collections.synchronizedList(new ArrayList<>()));
        }
    }

    /** Starts one thread per partition. */
    void start() {
        for (int p = 0; p < keys.size(); p++) {
            int partition = p;
            Thread t = new Thread(() -> run(partition), "cluster-demo-p" + p);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    private void run(int partition) {
        List<String> mine = keys.get(partition);
        List<String> written = new ArrayList<>();
        for (int i = 0; i < mine.size() && !stopped; i++) {
            String key = mine.get(i);
            String value = key + "=" + i;
            long start = System.currentTimeMillis();
            try {
                tree.put(key, value.getBytes(StandardCharsets.UTF_8));
                acked.put(key, value);
                writes.get(partition).add(new long[] {start, System.currentTimeMillis()});
                written.add(key);
            } catch (WriteOutcomeUnknownException e) {
                unknown.put(key, value);
            } catch (RuntimeException e) {
                // no owner answered within the operation timeout: the write may still have been applied
                writeFailures.incrementAndGet();
                unknown.put(key, value);
            }
            if (!written.isEmpty() && !stopped) {
                String k = written.get(ThreadLocalRandom.current().nextInt(written.size()));
                try {
                    Optional<byte[]> got = tree.get(k);
                    reads.incrementAndGet();
                    String v = got.map(b -> new String(b, StandardCharsets.UTF_8)).orElse(null);
                    if (!acked.get(k).equals(v)) {
                        violations.add("read of " + k + " returned " + v + ", expected " + acked.get(k));
                    }
                } catch (RuntimeException e) {
                    readFailures.incrementAndGet();
                }
            }
            sleep(PAUSE_MILLIS);
        }
    }

    /** Stops the threads and waits up to a minute for them (a call in flight finishes first). */
    void stop() {
        stopped = true;
        for (Thread t : threads) {
            try {
                t.join(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** @return the number of partitions (threads) */
    int partitions() {
        return keys.size();
    }

    /**
     * @param partition a partition
     * @param sinceMillis a time ({@link System#currentTimeMillis})
     * @return the end time of the first acknowledged write of the partition that started at or after
     *     {@code sinceMillis}, or -1
     */
    long firstAckStartedAfter(int partition, long sinceMillis) {
        synchronized (writes.get(partition)) {
            for (long[] w : writes.get(partition)) {
                if (w[0] >= sinceMillis) {
                    return w[1];
                }
            }
        }
        return -1;
    }

    /**
     * @param partition a partition
     * @param from start of the window, ms
     * @param to end of the window, ms
     * @return the longest time in {@code [from, to]} without an acknowledged write of the partition, in ms
     */
    long longestGap(int partition, long from, long to) {
        long last = from;
        long gap = 0;
        synchronized (writes.get(partition)) {
            for (long[] w : writes.get(partition)) {
                if (w[1] < from || w[1] > to) {
                    continue;
                }
                gap = Math.max(gap, w[1] - last);
                last = w[1];
            }
        }
        return Math.max(gap, to - last);
    }

    /**
     * @param from start of the window, ms
     * @param to end of the window, ms
     * @param partitions which partitions
     * @return acknowledged writes of those partitions that ended in the window
     */
    long acknowledged(long from, long to, java.util.Collection<Integer> partitions) {
        long n = 0;
        for (int p : partitions) {
            synchronized (writes.get(p)) {
                for (long[] w : writes.get(p)) {
                    if (w[1] >= from && w[1] <= to) {
                        n++;
                    }
                }
            }
        }
        return n;
    }

    /** @return acknowledged writes, key to value */
    Map<String, String> acked() {
        return acked;
    }

    /** @return writes of unknown outcome (timed out or failed), key to value */
    Map<String, String> unknown() {
        return unknown;
    }

    /** @return reads answered */
    long reads() {
        return reads.get();
    }

    /** @return reads that failed (no owner within the operation timeout) */
    long readFailures() {
        return readFailures.get();
    }

    /** @return writes that failed with an error other than an unknown outcome */
    long writeFailures() {
        return writeFailures.get();
    }

    /** @return reads that returned something other than the acknowledged value (should be none) */
    List<String> violations() {
        synchronized (violations) {
            return new ArrayList<>(violations);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
