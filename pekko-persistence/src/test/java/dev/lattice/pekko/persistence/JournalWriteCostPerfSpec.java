package dev.lattice.pekko.persistence;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.provider.azure.blob.AzureBlobWalStorageProvider;
import dev.lattice.provider.dynamodb.DynamoDbWalStorageProvider;
import dev.lattice.spi.LogId;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testkit.CountingProvider;
import dev.lattice.testkit.ForwardingProvider;
import dev.lattice.testkit.SpiOperation;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one journal write costs in provider calls and time, on the providers of the {@code JournalPerfSpec} runs (only
 * with {@code -Dlattice.pekko.perf}; prints lines starting {@code write-cost}). Drives {@link JournalStore} with the
 * plugin's defaults (journal tree of 1 partition, 1,000 keys / 256 KiB per Lattice write) in the two patterns the perf
 * spec produces: {@code persist()} (one one-event write at a time; {@code lattice.pekko.perf.cost.persists}, default
 * 500) and {@code persistAsync()} (10,000 one-event Pekko writes handed over at once). Checks the call pattern
 * exactly (one stage and one commit per persist; one per 999 events when pipelined), never a time.
 */
class JournalWriteCostPerfSpec {

    private static final int EVENT_BYTES = 150;
    private static final int PIPELINED = 10_000;

    /** Wall time per SPI operation of the calls that pass through it. Thread-safe. */
    private static final class TimingProvider extends ForwardingProvider {
        private final Map<SpiOperation, LongAdder> nanos = new EnumMap<>(SpiOperation.class);

        TimingProvider(WalStorageProvider delegate) {
            super(delegate);
            for (SpiOperation op : SpiOperation.values()) {
                nanos.put(op, new LongAdder());
            }
        }

        @Override
        protected <T> T intercept(SpiOperation op, LogId log, Supplier<T> call) {
            long t = System.nanoTime();
            try {
                return call.get();
            } finally {
                nanos.get(op).add(System.nanoTime() - t);
            }
        }

        long nanos(SpiOperation op) {
            return nanos.get(op).sum();
        }
    }

    /** Requests the provider itself counted (DynamoDB, Azure Blob), -1 where it keeps no such counter. */
    private static long providerRequests(WalStorageProvider p) {
        if (p instanceof DynamoDbWalStorageProvider d) {
            return d.metrics().totalRequests();
        }
        if (p instanceof AzureBlobWalStorageProvider b) {
            return b.stats().snapshot().requests();
        }
        return -1;
    }

    @ParameterizedTest
    @EnumSource(value = TestProviders.Kind.class, names = {"MEMORY", "AZURE_BLOB", "AZURE_TABLES", "DYNAMODB"})
    void callsAndTimePerWrite(TestProviders.Kind kind) {
        int persists = Integer.getInteger("lattice.pekko.perf.cost.persists", 500);
        TestProviders.Target t = TestProviders.fresh(kind, "cost");
        WalStorageProvider real = Providers.open(URI.create(t.uri()), t.options());
        CountingProvider counting = new CountingProvider(real);
        TimingProvider timing = new TimingProvider(counting);
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(timing, true).partitions(4)
                .ownershipCheckInterval(Duration.ofSeconds(1)).providerCallTimeout(Duration.ofSeconds(30)).build())) {
            JournalStore store = new JournalStore(l.tree("pekko-journal", 1), 500, 1000, 256 * 1024);
            byte[] event = new byte[EVENT_BYTES];

            Phase p = new Phase(counting, timing, real);
            for (long seq = 1; seq <= persists; seq++) {
                assertThat(store.write(List.of(new JournalStore.Batch("persist", new long[]{seq}, List.of(event)))))
                        .containsExactly(Optional.empty());
            }
            Result r = p.end();
            System.out.println("write-cost " + kind + " persist x" + persists + ": " + r.per(persists, "event"));
            assertThat(r.succeeded(SpiOperation.STAGE)).isEqualTo(persists);
            assertThat(r.succeeded(SpiOperation.COMMIT)).isEqualTo(persists);

            List<JournalStore.Batch> pipelined = new ArrayList<>(PIPELINED);
            for (long seq = 1; seq <= PIPELINED; seq++) {
                pipelined.add(new JournalStore.Batch("async", new long[]{seq}, List.of(event)));
            }
            p = new Phase(counting, timing, real);
            assertThat(store.write(pipelined)).hasSize(PIPELINED).allMatch(Optional::isEmpty);
            r = p.end();
            long writes = (PIPELINED + 998) / 999;
            System.out.println("write-cost " + kind + " persistAsync x" + PIPELINED + " (" + writes
                    + " Lattice writes of up to 999 events + highest key): " + r.per(PIPELINED, "event"));
            assertThat(r.succeeded(SpiOperation.STAGE)).isEqualTo(writes);
            assertThat(r.succeeded(SpiOperation.COMMIT)).isEqualTo(writes);
            assertThat(store.highest("async")).isEqualTo(PIPELINED);
        }
    }

    /** Counters at the start of a measured phase. */
    private record Phase(CountingProvider counting, TimingProvider timing, WalStorageProvider real,
                         CountingProvider.Counts calls, Map<SpiOperation, Long> nanos, long requests, long start) {
        Phase(CountingProvider counting, TimingProvider timing, WalStorageProvider real) {
            this(counting, timing, real, counting.snapshot(), nanosOf(timing), providerRequests(real), System.nanoTime());
        }

        private static Map<SpiOperation, Long> nanosOf(TimingProvider t) {
            Map<SpiOperation, Long> m = new EnumMap<>(SpiOperation.class);
            for (SpiOperation op : SpiOperation.values()) {
                m.put(op, t.nanos(op));
            }
            return m;
        }

        Result end() {
            long wall = System.nanoTime() - start;
            Map<SpiOperation, Long> n = nanosOf(timing);
            n.replaceAll((op, v) -> v - nanos.get(op));
            long req = providerRequests(real);
            return new Result(counting.snapshot().minus(calls), n, req < 0 ? -1 : req - requests, wall);
        }
    }

    /** What a phase cost. */
    private record Result(CountingProvider.Counts calls, Map<SpiOperation, Long> nanos, long requests, long wall) {
        long succeeded(SpiOperation op) {
            return calls.calls(op) - calls.failures(op);
        }

        String per(long units, String unit) {
            StringBuilder b = new StringBuilder(String.format("%.3f ms/%s wall", wall / 1e6 / units, unit));
            if (requests >= 0) {
                b.append(String.format(", %.3f provider requests/%s", (double) requests / units, unit));
            }
            for (SpiOperation op : SpiOperation.values()) {
                long c = calls.calls(op);
                if (c > 0) {
                    b.append(String.format("; %s %d calls (%d failed), %.2f ms avg, %.3f ms/%s", op, c,
                            calls.failures(op), nanos.get(op) / 1e6 / c, nanos.get(op) / 1e6 / units, unit));
                }
            }
            return b.toString();
        }
    }
}
