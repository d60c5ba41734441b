package dev.lattice.provider.azure.blob;

import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.common.policy.RequestRetryOptions;
import com.azure.storage.common.policy.RetryPolicyType;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import dev.lattice.testbackends.AzuriteServer;

import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;

/**
 * The replay harness for the scenario of the Orleans.Journaling report (dotnet/orleans issue 10253): N writes of
 * about 500 bytes through the engine, each awaited, by one writer or by many, then a cold reopen after a crash-like
 * stop (the writing lattice is never closed: a second provider instance opens the same container and its claims
 * fence the first) and after a clean close (which checkpoints). For each reopen it counts blocks read, requests and
 * bytes (from the provider's counters and from the HTTP pipeline), measures the wall time on the emulator, and puts
 * an estimate for the reported link (113 ms round trip, 5.7 ms per block, 100 Mbit/s) next to it.
 *
 * <p>Run it from the module folder with the test classpath ({@code ReplayBench [writes] [rttMillis]}); the exact
 * commands are in docs/providers/azure-blob.md. The test {@code EngineReplayTest} runs the same code with assertions
 * on block and request counts (never on time).
 */
public final class ReplayBench {

    /** Round trip of the reported link, in milliseconds. */
    static final double REPORTED_RTT_MS = 113;
    /** Service-side read pace per block on the reported account, in milliseconds. */
    static final double REPORTED_MS_PER_BLOCK = 5.7;
    /** Bandwidth of the reported link, in Mbit/s. */
    static final double REPORTED_MBIT = 100;

    private ReplayBench() {
    }

    /**
     * A scenario.
     *
     * @param writes writes in total
     * @param valueBytes bytes per value
     * @param writers concurrent writers (each awaits its own writes)
     * @param distinctKeys true: every write a new key (spread over the partitions); false: one key, rewritten
     * @param partitions partitions of the tree
     * @param rttMillis emulated round trip added to every request during the reopens (0 = none)
     * @param label name of the provider configuration, for the report
     * @param tune provider configuration
     */
    record Scenario(int writes, int valueBytes, int writers, boolean distinctKeys, int partitions, long rttMillis,
                    String label, UnaryOperator<AzureBlobConfig.Builder> tune) {
    }

    /**
     * What one cold reopen cost.
     *
     * @param name the reopen kind
     * @param millis wall time from opening the lattice to the tree being ready (emulator, no emulated latency)
     * @param emulatedMillis the same with the emulated round trip, or -1 when not measured
     * @param providerRequests requests the provider made (SDK calls)
     * @param httpRequests HTTP attempts seen by the pipeline
     * @param blocksRead blocks read (manifests, segment blocks, checkpoint blocks)
     * @param segmentBlocks segment blocks read
     * @param checkpointBlocks checkpoint blocks read
     * @param manifestReads manifest downloads
     * @param bytesDown bytes downloaded
     * @param catalogRequests requests of the catalog part (before the tree opened)
     * @param estimateMillis estimated time on the reported link (see {@link #estimate})
     */
    record Reopen(String name, long millis, long emulatedMillis, long providerRequests, long httpRequests,
                  long blocksRead, long segmentBlocks, long checkpointBlocks, long manifestReads, long bytesDown,
                  long catalogRequests, double estimateMillis) {
    }

    /**
     * The outcome of a scenario.
     *
     * @param scenario the scenario
     * @param writeMillis wall time of the writes
     * @param writeRequests provider requests of the writes (checkpoints included)
     * @param checkpointsDuringWrites checkpoints the engine published while writing
     * @param crash the crash-like reopen
     * @param clean the reopen after a clean close
     */
    record Result(Scenario scenario, long writeMillis, long writeRequests, long checkpointsDuringWrites,
                  Reopen crash, Reopen clean) {
    }

    /**
     * Runs a scenario on a fresh container.
     *
     * @param s the scenario
     * @return the figures
     * @throws Exception on any failure, including a data check after reopen
     */
    static Result run(Scenario s) throws Exception {
        RequestLedger ledger = AzuriteBlobs.serviceLedger();
        LinkEmulation link = new LinkEmulation(s.rttMillis());
        BlobServiceClient client = new BlobServiceClientBuilder().connectionString(AzuriteBlobs.connectionString())
                .addPolicy(ledger).addPolicy(link)
                .retryOptions(new RequestRetryOptions(RetryPolicyType.EXPONENTIAL, 3, Duration.ofSeconds(60),
                        Duration.ofMillis(50), Duration.ofSeconds(1), null))
                .buildClient();
        String container = AzuriteServer.uniqueContainerName("bench");
        AzureBlobConfig config = s.tune().apply(AzureBlobConfig.builder(container)).build();
        List<Lattice> toClose = new ArrayList<>();
        try {
            byte[] value = new byte[s.valueBytes()];
            Arrays.fill(value, (byte) 'v');
            // ---- writes
            // the writer has its own client: its traffic after the crash-like reopen (it is never closed: ownership
            // checks until it sees the fence, a flush it was running) is not the reopen's
            BlobServiceClient writerClient = new BlobServiceClientBuilder()
                    .connectionString(AzuriteBlobs.connectionString())
                    .retryOptions(new RequestRetryOptions(RetryPolicyType.EXPONENTIAL, 3, Duration.ofSeconds(60),
                            Duration.ofMillis(50), Duration.ofSeconds(1), null))
                    .buildClient();
            AzureBlobWalStorageProvider writer = AzureBlobWalStorageProvider.open(writerClient, config);
            Lattice l1 = Lattice.open(latticeConfig(writer, s));
            toClose.add(l1);
            Tree t1 = l1.tree("bench");
            long t0 = System.nanoTime();
            write(t1, s, value);
            long writeMillis = (System.nanoTime() - t0) / 1_000_000;
            long writeRequests = writer.stats().snapshot().requests();
            long checkpoints = l1.stats().checkpoints();

            // ---- crash-like reopen: l1 is never closed; the new instance's claims fence it
            Reopen crash = reopen("crash-like", client, config, s, ledger, link, toClose, value);
            // ---- clean close of the current owner, then reopen
            Lattice owner = toClose.get(toClose.size() - 1);
            owner.close();
            Reopen clean = reopen("clean-close", client, config, s, ledger, link, toClose, value);
            return new Result(s, writeMillis, writeRequests, checkpoints, crash, clean);
        } finally {
            for (Lattice l : toClose) {
                l.close();
            }
            client.getBlobContainerClient(container).deleteIfExists();
        }
    }

    private static LatticeConfig latticeConfig(AzureBlobWalStorageProvider p, Scenario s) {
        return LatticeConfig.builder().provider(p, true).partitions(s.partitions()).build();
    }

    private static String key(Scenario s, int i) {
        return s.distinctKeys() ? String.format("key-%06d", i) : "the-key";
    }

    private static void write(Tree t, Scenario s, byte[] value) throws Exception {
        if (s.writers() == 1) {
            for (int i = 0; i < s.writes(); i++) {
                t.put(key(s, i), value);
            }
            return;
        }
        ExecutorService pool = Executors.newFixedThreadPool(s.writers());
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < s.writers(); w++) {
                int writer = w;
                fs.add(pool.submit(() -> {
                    for (int i = writer; i < s.writes(); i += s.writers()) {
                        t.put(key(s, i), value);
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Opens a new provider instance and lattice, measures the open, checks the data; twice when emulating. */
    private static Reopen reopen(String name, BlobServiceClient client, AzureBlobConfig config, Scenario s,
                                 RequestLedger ledger, LinkEmulation link, List<Lattice> toClose, byte[] value) {
        Measured raw = measureOpen(client, config, s, ledger, toClose, value);
        long emulated = -1;
        if (s.rttMillis() > 0) {
            // the same reopen again (a new instance: it claims and replays the same data) with the emulated round trip
            link.enabled(true);
            try {
                emulated = measureOpen(client, config, s, ledger, toClose, value).millis;
            } finally {
                link.enabled(false);
            }
        }
        AzureBlobStats.Snapshot d = raw.total;
        long catalogRequests = raw.catalog.requests();
        double estimate = estimate(raw.catalog) + estimate(raw.tree) / Math.min(4, s.partitions());
        return new Reopen(name, raw.millis, emulated, d.requests(), raw.httpRequests, d.blocksRead(),
                d.segmentBlocksRead(), d.checkpointBlocksRead(), d.manifestReads(), d.bytesDownloaded(),
                catalogRequests, estimate);
    }

    /**
     * Estimated time of a sequence of requests on the reported link: one round trip per request, the service's
     * pace per block read, and the bytes at the link's bandwidth.
     *
     * @param d the counters of the sequence
     * @return milliseconds
     */
    static double estimate(AzureBlobStats.Snapshot d) {
        return d.requests() * REPORTED_RTT_MS + d.blocksRead() * REPORTED_MS_PER_BLOCK
                + d.bytesDownloaded() * 8.0 / (REPORTED_MBIT * 1_000_000) * 1000;
    }

    private record Measured(long millis, AzureBlobStats.Snapshot catalog, AzureBlobStats.Snapshot tree,
                            AzureBlobStats.Snapshot total, long httpRequests) {
    }

    /** Waits until no HTTP request was made for 3 s (at most 60 s), so the next open is measured alone. */
    private static void awaitQuiet(RequestLedger ledger) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        long last = ledger.requests.sum();
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline
                && System.nanoTime() - quietSince < java.util.concurrent.TimeUnit.SECONDS.toNanos(3)) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = ledger.requests.sum();
            if (now != last) {
                last = now;
                quietSince = System.nanoTime();
            }
        }
    }

    private static Measured measureOpen(BlobServiceClient client, AzureBlobConfig config, Scenario s,
                                        RequestLedger ledger, List<Lattice> toClose, byte[] value) {
        AzureBlobWalStorageProvider p = AzureBlobWalStorageProvider.open(client, config);
        awaitQuiet(ledger); // lattices opened before run their maintenance a moment after their open
        long http0 = ledger.requests.sum();
        AzureBlobStats.Snapshot s0 = p.stats().snapshot();
        long t0 = System.nanoTime();
        Lattice l = Lattice.open(latticeConfig(p, s));
        toClose.add(l);
        AzureBlobStats.Snapshot s1 = p.stats().snapshot();
        Tree t = l.tree("bench");
        long millis = (System.nanoTime() - t0) / 1_000_000;
        AzureBlobStats.Snapshot s2 = p.stats().snapshot();
        long http = ledger.requests.sum() - http0;
        long expectedKeys = s.distinctKeys() ? s.writes() : 1;
        if (t.count() != expectedKeys) {
            throw new AssertionError("after reopen the tree holds " + t.count() + " keys, expected " + expectedKeys);
        }
        Optional<byte[]> v = t.get(key(s, s.writes() - 1));
        if (v.isEmpty() || !Arrays.equals(v.get(), value)) {
            throw new AssertionError("after reopen the last key's value is wrong");
        }
        return new Measured(millis, s1.minus(s0), s2.minus(s1), s2.minus(s0), http);
    }

    /**
     * Formats a result as a Markdown table row set.
     *
     * @param r the result
     * @return the lines
     */
    static String format(Result r) {
        Scenario s = r.scenario();
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%s: %d writes x %d B, %d writer(s), %s keys, %d partitions: writes %d ms,"
                        + " %d requests, %d checkpoints during writes%n", s.label(), s.writes(), s.valueBytes(),
                s.writers(), s.distinctKeys() ? "distinct" : "one", s.partitions(), r.writeMillis(),
                r.writeRequests(), r.checkpointsDuringWrites()));
        b.append("| reopen | blocks read (manifest + segment + checkpoint) | requests (catalog) | HTTP | bytes down |"
                + " Azurite ms | Azurite + emulated RTT ms | estimate on the reported link ms |\n");
        for (Reopen o : List.of(r.crash(), r.clean())) {
            b.append(String.format(Locale.ROOT, "| %s | %d (%d + %d + %d) | %d (%d) | %d | %d | %d | %s | %.0f |%n",
                    o.name(), o.blocksRead(), o.manifestReads(), o.segmentBlocks(), o.checkpointBlocks(),
                    o.providerRequests(), o.catalogRequests(), o.httpRequests(), o.bytesDown(), o.millis(),
                    o.emulatedMillis() < 0 ? "-" : Long.toString(o.emulatedMillis()), o.estimateMillis()));
        }
        return b.toString();
    }

    /**
     * Runs the reported scenario: 1,000 writes of 500 bytes, one writer and 64 writers, default settings and the
     * inline tail off. Arguments: {@code [writes] [rttMillis]} (defaults 1000 and 113).
     *
     * @param args optional overrides
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int writes = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        long rtt = args.length > 1 ? Long.parseLong(args[1]) : 113;
        System.out.println("# azure-blob replay harness, " + LocalDate.now() + ", backend "
                + (AzuriteBlobs.realAccount() != null ? "real account" : "Azurite 3.37.0 (127.0.0.1)"));
        List<Scenario> scenarios = List.of(
                new Scenario(writes, 500, 1, true, 8, rtt, "default", b -> b),
                new Scenario(writes, 500, 64, true, 8, rtt, "default", b -> b),
                new Scenario(writes, 500, 1, false, 8, rtt, "default", b -> b),
                new Scenario(writes, 500, 1, true, 1, rtt, "default", b -> b),
                new Scenario(writes, 500, 1, true, 8, rtt, "inline tail off", b -> b.inlineTailBytes(0)),
                new Scenario(writes, 500, 64, true, 8, rtt, "inline tail off", b -> b.inlineTailBytes(0)));
        for (Scenario s : scenarios) {
            System.out.println(format(run(s)));
        }
        System.exit(0);
    }
}
