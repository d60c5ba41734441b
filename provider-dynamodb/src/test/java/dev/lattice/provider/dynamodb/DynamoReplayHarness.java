package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.DynamoDbMetrics.Operation;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.testbackends.DynaliteServer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import static dev.lattice.conformance.WalTestSupport.batch;

/**
 * Provider-level coalesced-append and replay harness (not a test): for batches of 1, 100 and 1,000 entries of 100
 * bytes, appends N entries to one log (stage + commit per batch, one writer), then replays the log three times with
 * a fresh provider instance using the engine's default replay page (10,000 entries / 8 MiB), and prints items
 * written, requests and consumed capacity per entry (key), replay requests and replay time as a Markdown table.
 *
 * <p>Against a private dynalite started here (default), or a real endpoint with
 * {@code -Dlattice.dynamodb.endpoint=...} (see {@link DynamoTestBackend}). Usage:
 * {@code java -cp ... dev.lattice.provider.dynamodb.DynamoReplayHarness [entries=10000] [sizes=1,100,1000]}.
 * Timings are wall-clock on whatever machine runs it; they are for the docs, never asserted.
 */
public final class DynamoReplayHarness {

    private static final int ENTRY_BYTES = 100;
    private static final int REPLAY_PAGE_ENTRIES = 10_000;
    private static final long REPLAY_PAGE_BYTES = 8L << 20;

    private DynamoReplayHarness() {
    }

    /**
     * Runs the harness.
     *
     * @param args optional: total entries per run (default 10,000), comma-separated batch sizes (default 1,100,1000)
     */
    public static void main(String[] args) {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int[] sizes = args.length > 1 ? Arrays.stream(args[1].split(",")).mapToInt(Integer::parseInt).toArray()
                : new int[] {1, 100, 1000};
        System.out.println("backend: " + (DynamoTestBackend.real() ? DynamoTestBackend.endpoint()
                : "dynalite " + DynaliteServer.shared().endpoint()) + "; " + entries + " entries of " + ENTRY_BYTES
                + " bytes per run; java " + System.getProperty("java.version") + ", "
                + Runtime.getRuntime().availableProcessors() + " cores");
        System.out.println();
        System.out.println("| entries/batch | batches | items written | requests/key | write CU/key | append ms "
                + "| replay Query | replay GetItem | replay ms (median of 3) | replay entries/s |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (int size : sizes) {
            run(entries, size);
        }
    }

    private static void run(int entries, int size) {
        DynamoTestBackend.Storage storage = DynamoTestBackend.newStorage("harness-" + size);
        LogId log = new LogId("bench", 0);
        try {
            long appendNanos;
            DynamoDbMetrics.Snapshot w;
            int batches = (entries + size - 1) / size;
            try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(DynamoTestBackend.rawClient(),
                    storage.settings())) {
                Fence f = p.claim(log);
                p.reconcile(log, f);
                DynamoDbMetrics.Snapshot before = p.metrics();
                long t0 = System.nanoTime();
                long next = 0;
                for (int i = 0; i < batches; i++) {
                    int n = (int) Math.min(size, entries - next);
                    EncodedBatch b = batch(i, next, n, ENTRY_BYTES);
                    p.append(log, f, b);
                    next += n;
                }
                appendNanos = System.nanoTime() - t0;
                w = p.metrics().minus(before);
            }
            List<Long> replayNanos = new ArrayList<>();
            DynamoDbMetrics.Snapshot r = null;
            for (int rep = 0; rep < 3; rep++) {
                try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(DynamoTestBackend.rawClient(),
                        storage.settings())) {
                    DynamoDbMetrics.Snapshot before = p.metrics();
                    long t0 = System.nanoTime();
                    long from = -1;
                    long read = 0;
                    while (true) {
                        ReadPage page = p.read(log, from, REPLAY_PAGE_ENTRIES, REPLAY_PAGE_BYTES);
                        if (page.isEmpty()) {
                            break;
                        }
                        read += page.entries().size();
                        from = page.nextFromExclusive(from);
                    }
                    replayNanos.add(System.nanoTime() - t0);
                    r = p.metrics().minus(before);
                    if (read != entries) {
                        throw new IllegalStateException("replayed " + read + " entries, wrote " + entries);
                    }
                }
            }
            replayNanos.sort(null);
            double replayMs = replayNanos.get(1) / 1e6;
            double writeCu = w.capacityUnits().getOrDefault(Operation.PUT_ITEM, 0.0)
                    + w.capacityUnits().getOrDefault(Operation.UPDATE_ITEM, 0.0);
            System.out.println(String.format(Locale.ROOT, "| %d | %d | %d | %.3f | %.3f | %.0f | %d | %d | %.0f | %.0f |",
                    size, batches, w.itemsWritten(), (double) w.totalRequests() / entries, writeCu / entries,
                    appendNanos / 1e6, r.requests(Operation.QUERY), r.requests(Operation.GET_ITEM), replayMs,
                    entries / (replayMs / 1000)));
        } finally {
            storage.drop();
        }
    }
}
