package dev.lattice.provider.chronicle;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Measures commit throughput of the two durability modes (not a test; prints numbers): one thread, one log,
 * 100-byte entries, with 1 entry per commit, 100 entries per commit, and 10 staged batches of 10 entries per
 * commit (a group commit). Run it as described in docs/providers/chronicle.md; {@code quick} as first argument
 * runs a tenth of the work (e.g. under strace).
 */
public final class DurabilityHarness {

    private DurabilityHarness() {
    }

    /**
     * Entry point.
     *
     * @param args optional {@code quick}
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int scale = args.length > 0 && args[0].equals("quick") ? 10 : 1;
        System.out.printf("%-8s %-28s %10s %12s %12s %10s%n", "mode", "shape", "commits", "commits/s", "entries/s",
                "MB/s");
        for (ChronicleDurability mode : ChronicleDurability.values()) {
            int commits = (mode == ChronicleDurability.FSYNC ? 5_000 : 200_000) / scale;
            run(mode, "1 entry per commit", commits, 1, 1);
            run(mode, "100 entries per commit", commits / 10, 1, 100);
            run(mode, "10 batches x 10 per commit", commits / 10, 10, 10);
        }
    }

    private static void run(ChronicleDurability mode, String shape, int commits, int batchesPerCommit,
                            int entriesPerBatch) throws Exception {
        Path dir = Files.createTempDirectory("chronicle-durability");
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).durability(mode)
                .build())) {
            LogId log = new LogId("bench", 0);
            Fence f = p.claim(log);
            byte[] payload = new byte[100];
            long next = 0;
            long start = 0;
            int warmup = Math.max(1, commits / 10);
            for (int c = -warmup; c < commits; c++) {
                if (c == 0) {
                    start = System.nanoTime();
                }
                for (int b = 0; b < batchesPerCommit; b++) {
                    List<byte[]> entries = new ArrayList<>(entriesPerBatch);
                    for (int e = 0; e < entriesPerBatch; e++) {
                        entries.add(payload);
                    }
                    EncodedBatch batch = EncodedBatch.of(next, entries);
                    p.stage(log, f, batch);
                    next = batch.lastOffset() + 1;
                }
                p.commit(log, f, next - 1);
            }
            double secs = (System.nanoTime() - start) / 1e9;
            long entries = (long) commits * batchesPerCommit * entriesPerBatch;
            System.out.printf("%-8s %-28s %10d %12.0f %12.0f %10.1f%n", mode.name().toLowerCase(), shape, commits,
                    commits / secs, entries / secs, entries * 100 / secs / 1e6);
        } finally {
            TestDirs.delete(dir);
        }
    }
}
