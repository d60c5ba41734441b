package dev.lattice.bench.ycsb;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Properties;

/**
 * One YCSB core workload on Lattice (Chronicle, page cache) and RocksDB in turns, in one JVM, printing each run
 * phase's throughput and per-operation p50/p99/max/mean latency: a quick same-run pair for one case of the peer
 * table at a larger scale than run-all's small one.
 *
 * <p>Usage: {@code YcsbPairProbe WORKLOAD RECORDS OPERATIONS THREADS REPS [STORES]} with {@code WORKLOAD} one of
 * {@code a..f}, {@code STORES} a comma list of {@code lattice} and {@code rocksdb} (default both, in that order).
 * Each run uses a fresh directory under {@code java.io.tmpdir} (left behind for inspection).
 */
public final class YcsbPairProbe {

    private YcsbPairProbe() {
    }

    /**
     * Runs the pairs.
     *
     * @param args see the class comment
     * @throws NumberFormatException if a count is not an integer
     * @throws IllegalArgumentException if the workload or a store is unknown
     */
    public static void main(String[] args) {
        String workload = args[0];
        int records = Integer.parseInt(args[1]);
        int operations = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        int reps = Integer.parseInt(args[4]);
        String[] stores = (args.length > 5 ? args[5] : "lattice,rocksdb").split(",");
        for (int r = 0; r < reps; r++) {
            for (String store : stores) {
                Properties p = workload(workload);
                p.setProperty("recordcount", Integer.toString(records));
                p.setProperty("operationcount", Integer.toString(operations));
                p.setProperty("threadcount", Integer.toString(threads));
                Path dir = tempDir(store);
                switch (store) {
                    case "lattice" -> {
                        p.setProperty("db", LatticeYcsbClient.class.getName());
                        p.setProperty("lattice.provider", "chronicle:" + dir);
                    }
                    case "rocksdb" -> {
                        p.setProperty("db", dev.lattice.bench.peer.RocksYcsbClient.class.getName());
                        p.setProperty(dev.lattice.bench.peer.RocksYcsbClient.DIR_PROPERTY, dir.toString());
                    }
                    default -> throw new IllegalArgumentException("unknown store '" + store + "' (lattice, rocksdb)");
                }
                YcsbRunner.PhaseResult run = YcsbRunner.run(p, s -> { }).run();
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%d %-8s %,.0f ops/s", r, store,
                        run.throughput()));
                for (YcsbRunner.OpStats o : run.ops().values()) {
                    line.append(String.format(Locale.ROOT, "  %s p50 %.0f p99 %.0f max %.0f mean %.0f us",
                            o.operation(), o.p50Us(), o.p99Us(), o.maxUs(), o.averageUs()));
                }
                System.out.println(line);
            }
        }
        System.exit(0); // YCSB's and RocksDB's non-daemon threads
    }

    private static Properties workload(String letter) {
        if (!YcsbRunner.WORKLOADS.contains(letter)) {
            throw new IllegalArgumentException("unknown workload '" + letter + "' (" + YcsbRunner.WORKLOADS + ")");
        }
        Properties p = new Properties();
        try (InputStream in = YcsbRunner.class.getResourceAsStream("/workloads/workload" + letter)) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    private static Path tempDir(String store) {
        try {
            return Files.createTempDirectory("ycsb-pair-" + store);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
