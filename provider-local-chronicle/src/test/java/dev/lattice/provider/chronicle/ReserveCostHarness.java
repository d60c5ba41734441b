package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;

import java.nio.file.Path;
import java.util.List;

/**
 * Measures what reserving file space before mapped writes costs ({@link SpaceReserver}): single-entry commits of
 * 1,000-byte entries on one log, per reservation mode, chunk size and whether the reservation runs ahead on the
 * background thread or only inline, on a directory given as argument (a disk directory and a tmpfs). Prints commits/s. Run: {@code java $FLAGS -cp $CP ...ReserveCostHarness DIR [commits]}.
 */
public final class ReserveCostHarness {

    private ReserveCostHarness() {
    }

    /**
     * @param args directory, optional commit count (default 200,000), optional repetitions (default 3)
     */
    public static void main(String[] args) {
        Path base = Path.of(args[0]);
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        int reps = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        Object[][] runs = {
            {SpaceReserver.Mode.NONE, 0L, false},
            {SpaceReserver.Mode.ZERO_WRITE, SpaceReserver.CHUNK_BYTES, true},
            {SpaceReserver.Mode.ZERO_WRITE, SpaceReserver.CHUNK_BYTES, false},
            {SpaceReserver.Mode.FALLOCATE, SpaceReserver.CHUNK_BYTES, true},
            {SpaceReserver.Mode.ZERO_WRITE, 1L << 20, false},
            {SpaceReserver.Mode.ZERO_WRITE, 0L, false},
        };
        byte[] entry = new byte[1000];
        // The durable tail record (temp file, fsync, rename, directory fsync) that a per-commit tail would cost.
        Path small = base.resolve("tail-record");
        try {
            java.nio.file.Files.createDirectories(small);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        for (int rep = 0; rep < 2; rep++) {
            int k = 300;
            long t0 = System.nanoTime();
            for (int i = 0; i < k; i++) {
                SmallFiles.writeRecord(null, small.resolve("tail"), 0x4C54414C, i);
            }
            System.out.printf("rep %d durable tail record: %.3f ms per write%n", rep,
                    (System.nanoTime() - t0) / 1e6 / k);
        }
        TestDirs.delete(small);
        for (int rep = -1; rep < reps; rep++) {
            for (Object[] r : runs) {
                SpaceReserver.mode = (SpaceReserver.Mode) r[0];
                SpaceReserver.chunkBytes = (Long) r[1];
                SpaceReserver.background = (Boolean) r[2];
                Path dir = base.resolve("reserve-" + rep + "-" + r[0] + "-" + r[1] + "-" + r[2]);
                LogId log = new LogId("cost", 0);
                try (WalStorageProvider wal = ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).build())) {
                    Fence f = wal.claim(log);
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        wal.stage(log, f, EncodedBatch.of(i, new BatchId(7, i), List.of(entry)));
                        wal.commit(log, f, i);
                    }
                    double s = (System.nanoTime() - t0) / 1e9;
                    if (rep >= 0) { // rep -1 is the warm-up
                        System.out.printf("rep %d mode %-10s chunk %8d %-10s: %,10.0f commits/s%n", rep, r[0], r[1],
                                (Boolean) r[2] ? "background" : "inline", n / s);
                    }
                }
                TestDirs.delete(dir);
            }
        }
        SpaceReserver.background = true;
    }
}
