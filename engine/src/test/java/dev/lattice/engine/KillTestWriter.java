package dev.lattice.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Child process of {@link ProcessKillTest}: writes to a tree on the Chronicle provider from several threads and
 * prints {@code ACK <thread> <i> <key>} after each write returns. Runs until killed.
 */
public final class KillTestWriter {

    static final int THREADS = 4;
    static final int KEYS_PER_THREAD = 40;

    private KillTestWriter() {
    }

    public static void main(String[] args) throws Exception {
        String dir = args[0];
        Lattice lattice = Lattice.open(LatticeConfig.builder().uri("chronicle:" + dir).partitions(4)
                .checkpointEveryEntries(300).build());
        Tree tree = lattice.tree("kill");
        Object out = new Object();
        System.out.println("READY");
        System.out.flush();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int id = t;
            long start = Long.parseLong(args[1 + t]);
            Thread th = new Thread(() -> {
                for (long i = start; ; i++) {
                    String key = "t" + id + "-k" + (i % KEYS_PER_THREAD);
                    byte[] value = (id + ":" + i).getBytes(StandardCharsets.UTF_8);
                    if (i % 10 == 9) {
                        tree.putAll(java.util.Map.of(key, value));
                    } else {
                        tree.put(key, value);
                    }
                    synchronized (out) {
                        System.out.println("ACK " + id + " " + i + " " + key);
                        System.out.flush();
                    }
                }
            });
            th.start();
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join();
        }
    }
}
