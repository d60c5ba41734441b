package dev.lattice.engine;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * The child JVM of {@link FeedKillHarness}: writes to tree {@value #TREE} (and {@value #OTHER}) from two threads
 * until it is killed: puts, deletes, multi-partition atomic writes and atomic writes across both trees. Prints
 * {@code READY} once it has written. Arguments: provider URI, seed, then {@code key=value} provider options.
 */
public final class FeedKillTestWriter {

    /** The tree the feed is checked on. */
    public static final String TREE = "feed";
    /** The other tree of cross-tree atomic writes. */
    public static final String OTHER = "feedx";
    /** Partitions of {@link #TREE}. */
    public static final int PARTITIONS = 4;

    private FeedKillTestWriter() {
    }

    /**
     * @param args URI, seed, options
     * @throws Exception never on purpose: the process is killed
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            options.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        Lattice lattice = Lattice.open(LatticeConfig.builder().uri(args[0]).providerOptions(options)
                .checkpointEveryEntries(200).build());
        Tree t = lattice.tree(TREE, PARTITIONS);
        Tree other = lattice.tree(OTHER, 2);
        long seed = Long.parseLong(args[1]);
        Object ready = new Object();
        for (int th = 0; th < 2; th++) {
            long s = seed * 31 + th;
            Thread w = new Thread(() -> {
                Random r = new Random(s);
                boolean printed = false;
                for (int i = 0; ; i++) {
                    String k = "k" + r.nextInt(300);
                    byte[] v = ("v" + s + "-" + i).getBytes(StandardCharsets.UTF_8);
                    try {
                        switch (r.nextInt(6)) {
                            case 0, 1 -> t.put(k, v);
                            case 2 -> t.delete(k);
                            case 3, 4 -> {
                                Map<String, byte[]> m = new LinkedHashMap<>();
                                for (int j = 0, n = 2 + r.nextInt(3); j < n; j++) {
                                    m.put("k" + r.nextInt(300), v);
                                }
                                t.putAllAtomic(m);
                            }
                            default -> lattice.atomic().put(t, k, v).delete(other, "o" + r.nextInt(50))
                                    .put(other, "o" + r.nextInt(50) + "x", v).commit();
                        }
                    } catch (RuntimeException e) {
                        System.err.println("write failed: " + e);
                    }
                    if (!printed) {
                        printed = true;
                        synchronized (ready) {
                            System.out.println("READY");
                            System.out.flush();
                        }
                    }
                }
            });
            w.start();
        }
        Thread.sleep(Long.MAX_VALUE);
    }
}
