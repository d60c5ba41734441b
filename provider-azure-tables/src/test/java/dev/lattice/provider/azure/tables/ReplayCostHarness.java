package dev.lattice.provider.azure.tables;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.testbackends.AzuriteServer;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Measurement harness (not a test): appends coalesced batches to one log on Azurite, reopens cold and replays it
 * with the engine's replay page (10,000 entries / 8 MiB), and prints table-level costs per key written (entities,
 * transactions, requests) and of the replay (requests, wall time). Request counts carry over to the real service
 * (billed per request); Azurite's latency does not.
 *
 * <p>Run: {@code java -cp <test classpath> dev.lattice.provider.azure.tables.ReplayCostHarness [entryBytes]}
 * (see docs/providers/azure-tables.md for the exact command).
 */
public final class ReplayCostHarness {
    private ReplayCostHarness() {
    }

    /**
     * @param args optional: entry payload bytes (default 142, what the engine's put of a 100-byte value encodes to)
     */
    public static void main(String[] args) {
        int entryBytes = args.length > 0 ? Integer.parseInt(args[0]) : 142;
        int[][] cases = {{1, 2_000}, {8, 8_000}, {64, 32_000}, {512, 64_000}, {4096, 64_000}};
        System.out.println("ReplayCostHarness " + LocalDate.now() + ": entry " + entryBytes + " B, Azurite "
                + AzuriteServer.shared().tableEndpoint() + ", JVM " + Runtime.version());
        System.out.println("| keys/batch | keys | transactions/key | entities/key | requests/key (write) |"
                + " replay requests | replay entities | replay ms |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (int[] c : cases) {
            run(c[0], c[1], entryBytes);
        }
        System.exit(0);
    }

    private static void run(int perBatch, int keys, int entryBytes) {
        String table = AzuriteServer.uniqueTableName("bench");
        LogId log = new LogId("bench", 0);
        AzuriteTables.Opened w = AzuriteTables.open(table, Layout.DEFAULT);
        Random rnd = new Random(perBatch);
        Fence f = w.provider().claim(log);
        w.provider().reconcile(log, f);
        long tx0 = w.recording().transactions.get();
        long en0 = w.recording().transactionEntities.get();
        long rq0 = w.recording().requests();
        long next = 0;
        while (next < keys) {
            List<byte[]> entries = new ArrayList<>(perBatch);
            for (int i = 0; i < perBatch && next + i < keys; i++) {
                byte[] p = new byte[entryBytes];
                rnd.nextBytes(p);
                entries.add(p);
            }
            EncodedBatch b = EncodedBatch.of(next, BatchId.random(), entries);
            w.provider().append(log, f, b);
            next = b.lastOffset() + 1;
        }
        double tx = (w.recording().transactions.get() - tx0) / (double) keys;
        double en = (w.recording().transactionEntities.get() - en0) / (double) keys;
        double rq = (w.recording().requests() - rq0) / (double) keys;
        w.provider().close();

        AzuriteTables.Opened r = AzuriteTables.open(table, Layout.DEFAULT);
        long before = r.recording().requests();
        long t0 = System.nanoTime();
        long from = -1;
        long read = 0;
        while (true) {
            ReadPage p = r.provider().read(log, from, 10_000, 8L << 20);
            if (p.isEmpty()) {
                break;
            }
            read += p.entries().size();
            from = p.nextFromExclusive(from);
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        long replayRequests = r.recording().requests() - before;
        r.provider().close();
        AzuriteTables.drop(table);
        if (read != keys) {
            throw new AssertionError("replay read " + read + " entries, wrote " + keys);
        }
        System.out.printf("| %,d | %,d | %.4f | %.4f | %.4f | %,d | %,d | %,.0f |%n", perBatch, keys, tx, en, rq,
                replayRequests, read, ms);
    }
}
