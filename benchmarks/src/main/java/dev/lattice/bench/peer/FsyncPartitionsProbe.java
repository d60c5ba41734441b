package dev.lattice.bench.peer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What bounds fsync puts under concurrency (issue 16): direct puts at fsync durability on RocksDB and on Lattice with
 * 8 partitions (8 Chronicle logs, so up to 8 fdatasyncs of different files per group of writers) and with 1
 * partition (one log: every concurrent writer joins one commit, as RocksDB's writers join one WAL sync). Rounds
 * alternate the three stores, so the ratios are from the same minutes.
 *
 * <p>Usage: {@code FsyncPartitionsProbe [threads=16,64] [puts=2000] [rounds=3] [durability=fsync|page-cache]}; prints
 * one line per store, thread count and round ({@code RESULT store threads round ops/s p50us p99us}), then the median
 * ratio against RocksDB. {@code page-cache} runs the same cases without fsync (issue 16's one-thread page-cache
 * target; use puts of 100,000 or more so a case lasts seconds, not the 0.1 s of the peer comparison's case).
 * Not thread-safe; a benchmark harness, not a test.
 */
public final class FsyncPartitionsProbe {

    private FsyncPartitionsProbe() {
    }

    /**
     * Runs the probe.
     *
     * @param args thread counts (comma-separated), puts per case, rounds, durability ({@code fsync}, the default, or
     *     {@code page-cache})
     * @throws UncheckedIOException if a scratch directory cannot be made
     * @throws IllegalArgumentException if the durability is neither {@code fsync} nor {@code page-cache}
     */
    public static void main(String[] args) {
        String[] threadList = (args.length > 0 ? args[0] : "16,64").split(",");
        int puts = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        String d = args.length > 3 ? args[3] : "fsync";
        if (!d.equals("fsync") && !d.equals("page-cache")) {
            throw new IllegalArgumentException("durability must be fsync or page-cache, not " + d);
        }
        Durability durability = d.equals("fsync") ? Durability.FSYNC : Durability.PAGE_CACHE;
        String[] stores = {"rocksdb", "lattice-8", "lattice-1"};
        for (String t : threadList) {
            int threads = Integer.parseInt(t.trim());
            double[][] ops = new double[stores.length][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < stores.length; k++) {
                    String s = stores[(k + r) % stores.length];
                    int idx = (k + r) % stores.length;
                    ops[idx][r] = runOne(s, threads, puts, r, durability);
                }
            }
            for (int k = 1; k < stores.length; k++) {
                double[] ratio = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    ratio[r] = ops[k][r] / ops[0][r];
                }
                java.util.Arrays.sort(ratio);
                System.out.printf("RATIO %s/rocksdb threads %d median %.2fx range %.2f-%.2f%n", stores[k], threads,
                        ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
            }
        }
    }

    private static double runOne(String store, int threads, int puts, int round, Durability durability) {
        Path dir;
        try {
            dir = Files.createTempDirectory("fsync-probe-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        KvStore.Kind kind = store.equals("rocksdb") ? KvStore.Kind.ROCKSDB : KvStore.Kind.LATTICE;
        int partitions = store.equals("lattice-1") ? 1 : 8;
        try (KvStore kv = KvStore.open(kind, dir, durability, partitions)) {
            List<DirectHarness.PhaseResult> r = DirectHarness.run(kv, threads, puts, 1, 1000);
            DirectHarness.PhaseResult put = r.get(0);
            System.out.printf("RESULT %s threads %d round %d %.0f ops/s p50 %.0f us p99 %.0f us%n", store, threads,
                    round, put.opsPerSecond(), put.p50Us(), put.p99Us());
            return put.opsPerSecond();
        } catch (Exception e) {
            throw new IllegalStateException(store + " failed", e);
        } finally {
            KvStoreDirs.delete(dir);
        }
    }
}
