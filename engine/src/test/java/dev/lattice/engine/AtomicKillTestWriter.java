package dev.lattice.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Child process of {@link AtomicKillHarness} (used by {@link AtomicProcessKillTest} and, through the engine's
 * test-jar, the CLI module's {@code AtomicCrashTest}): streams atomic writes from {@value #THREADS} threads until it is
 * killed, and prints {@code ACK <id> <version> <logs> $} after each {@link AtomicWrite#commit()} returns.
 *
 * <p>Arguments: {@code <provider URI> <first write id> [option=value ...]} (options go to
 * {@link LatticeConfig.Builder#providerOptions}). It opens three trees ({@value #SINGLE}: 1 partition,
 * {@value #MULTI}: 8, {@value #CROSS}: 4), prints {@code READY}, then each thread takes the next write id {@code i}
 * from one shared counter and commits the write {@link #plan(long)} describes. Six kinds, by {@code i % 6}:
 * <ol start="0">
 *   <li>single-log: 4-8 keys {@code w<i>-k<j>-..} in {@value #SINGLE} (one log entry);</li>
 *   <li>multi-log within a tree: 8-16 keys {@code w<i>-k<j>-..} in {@value #MULTI} (almost always several logs);</li>
 *   <li>cross-tree: 3-6 keys in {@value #MULTI}, 3-7 in {@value #CROSS}, every other one also 1 in
 *       {@value #SINGLE};</li>
 *   <li>group write on {@code gs-0..15} in {@value #SINGLE} (one log);</li>
 *   <li>group write on {@code gm-0..15} in {@value #MULTI} (several logs);</li>
 *   <li>group write on {@code gx-0..7} in {@value #MULTI} and {@code gx-8..15} in {@value #CROSS} (two trees).</li>
 * </ol>
 * Keys {@code w<i>-...} belong to write {@code i} alone; a group write puts every key of its group except those
 * {@link #deletedInGroup(long, int)} names, which it deletes. Every value is {@code "<i>/<key>"}. A failed commit
 * prints {@code ERR <id> <exception>} and the thread goes on. Lines are whole ({@code $} ends each), so a line cut by
 * the kill is recognisable.
 */
public final class AtomicKillTestWriter {

    /** Writer threads. */
    static final int THREADS = 3;
    /** Tree with one partition: every write to it alone is one log entry. */
    static final String SINGLE = "single";
    /** Tree with {@value #MULTI_PARTITIONS} partitions. */
    static final String MULTI = "multi";
    /** Second tree of cross-tree writes, {@value #CROSS_PARTITIONS} partitions. */
    static final String CROSS = "cross";
    static final int MULTI_PARTITIONS = 8;
    static final int CROSS_PARTITIONS = 4;
    /** Write kinds, {@code id % KINDS}. */
    static final int KINDS = 6;
    /** Keys per group. */
    static final int GROUP_KEYS = 16;
    /** Key prefixes of the three groups (kinds 3, 4, 5). */
    static final String[] GROUP_PREFIX = {"gs-", "gm-", "gx-"};

    private AtomicKillTestWriter() {
    }

    /**
     * The group a write id overwrites.
     *
     * @param id the write id
     * @return 0..2 for a group write, -1 for a write of its own keys
     */
    static int group(long id) {
        int kind = (int) (id % KINDS);
        return kind >= 3 ? kind - 3 : -1;
    }

    /**
     * Whether group write {@code id} deletes key {@code j} of its group instead of putting it (3 or 4 of 16).
     *
     * @param id a group write id
     * @param j the key index, 0..15
     * @return true if deleted
     */
    static boolean deletedInGroup(long id, int j) {
        return ((id / KINDS) + j) % 5 == 0;
    }

    /**
     * The keys of a group, by tree.
     *
     * @param g the group, 0..2
     * @return tree name to keys, in order
     */
    static Map<String, List<String>> groupKeys(int g) {
        Map<String, List<String>> m = new LinkedHashMap<>();
        for (int j = 0; j < GROUP_KEYS; j++) {
            String tree = g == 0 ? SINGLE : g == 1 || j < GROUP_KEYS / 2 ? MULTI : CROSS;
            m.computeIfAbsent(tree, k -> new ArrayList<>()).add(GROUP_PREFIX[g] + j);
        }
        return m;
    }

    /**
     * The keys write {@code id} puts (for a group write: puts or deletes, see {@link #deletedInGroup}), by tree.
     *
     * @param id the write id, {@code >= 0}
     * @return tree name to keys, in order
     */
    static Map<String, List<String>> plan(long id) {
        int g = group(id);
        if (g >= 0) {
            return groupKeys(g);
        }
        Map<String, List<String>> m = new LinkedHashMap<>();
        int kind = (int) (id % KINDS);
        long n = id / KINDS;
        if (kind == 0) {
            own(m, SINGLE, id, 0, 4 + (int) (n % 5));
        } else if (kind == 1) {
            own(m, MULTI, id, 0, 8 + (int) (n % 9));
        } else {
            int a = 3 + (int) (n % 4);
            int b = 3 + (int) (n % 5);
            own(m, MULTI, id, 0, a);
            own(m, CROSS, id, a, b);
            if (n % 2 == 0) {
                own(m, SINGLE, id, a + b, 1);
            }
        }
        return m;
    }

    private static void own(Map<String, List<String>> m, String tree, long id, int from, int count) {
        List<String> keys = m.computeIfAbsent(tree, k -> new ArrayList<>());
        for (int j = from; j < from + count; j++) {
            // two letters after the index spread the keys over partitions (keys differing only in a last digit
            // tend to share a partition)
            keys.add("w" + id + "-k" + j + "-" + (char) ('a' + (j * 7) % 26) + (char) ('a' + (j * 11 + 3) % 26));
        }
    }

    /**
     * The value write {@code id} puts under {@code key}.
     *
     * @param id the write id
     * @param key the key
     * @return {@code "<id>/<key>"} in UTF-8
     */
    static byte[] value(long id, String key) {
        return (id + "/" + key).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Runs the writer until killed.
     *
     * @param args {@code <provider URI> <first write id> [option=value ...]}
     * @throws Exception if opening fails (the parent sees no {@code READY})
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            options.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        Lattice lattice = Lattice.open(LatticeConfig.builder().uri(args[0]).providerOptions(options)
                .checkpointEveryEntries(250).build());
        Map<String, Tree> trees = Map.of(SINGLE, lattice.tree(SINGLE, 1), MULTI, lattice.tree(MULTI, MULTI_PARTITIONS),
                CROSS, lattice.tree(CROSS, CROSS_PARTITIONS));
        AtomicLong next = new AtomicLong(Long.parseLong(args[1]));
        Object out = new Object();
        System.out.println("READY $");
        System.out.flush();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Thread th = new Thread(() -> {
                while (true) {
                    long id = next.getAndIncrement();
                    AtomicWrite w = lattice.atomic();
                    int g = group(id);
                    plan(id).forEach((tree, keys) -> {
                        for (String key : keys) {
                            int j = g < 0 ? -1 : Integer.parseInt(key.substring(GROUP_PREFIX[g].length()));
                            if (g >= 0 && deletedInGroup(id, j)) {
                                w.delete(trees.get(tree), key);
                            } else {
                                w.put(trees.get(tree), key, value(id, key));
                            }
                        }
                    });
                    String line;
                    try {
                        AtomicResult r = w.commit();
                        line = "ACK " + id + " " + r.version() + " " + r.logs() + " $";
                    } catch (RuntimeException e) {
                        line = "ERR " + id + " " + e.toString().replace('\n', ' ') + " $";
                    }
                    synchronized (out) {
                        System.out.println(line);
                        System.out.flush();
                    }
                }
            }, "atomic-writer-" + t);
            th.start();
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join();
        }
    }
}
