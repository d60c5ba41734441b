package dev.lattice.provider.azure.tables;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.testbackends.AzuriteExtension;
import dev.lattice.testbackends.AzuriteServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fencing with two provider instances (each with its own SDK client, like two processes) on one table.
 */
@ExtendWith(AzuriteExtension.class)
class TwoWritersTest {
    private static final LogId LOG = new LogId("fence", 3);

    private String table;
    private AzuriteTables.Opened a;
    private AzuriteTables.Opened b;

    @BeforeEach
    void openTwo() {
        table = AzuriteServer.uniqueTableName("two");
        a = AzuriteTables.open(table, Layout.DEFAULT);
        ServiceLimitCheckingGateway checked = new ServiceLimitCheckingGateway(new RecordingGateway(
                new SdkTableGateway(AzuriteTables.build(AzuriteServer.shared().connectionString()), table)));
        b = new AzuriteTables.Opened(new AzureTablesWalStorageProvider(checked, table, Layout.DEFAULT, true), null,
                checked);
    }

    @AfterEach
    void close() {
        a.provider().close();
        b.provider().close();
        assertThat(a.checked().violations()).isEmpty();
        assertThat(b.checked().violations()).isEmpty();
        AzuriteTables.drop(table);
    }

    /** The newer claim wins: the older writer's commit, trim, publish and later stages are fenced. */
    @Test
    void newerClaimFencesTheOlderInstance() {
        Fence fa = a.provider().claim(LOG);
        EncodedBatch first = batch(1, 0, 3, 100);
        a.provider().append(LOG, fa, first);
        EncodedBatch pending = batch(2, 3, 2, 100);
        a.provider().stage(LOG, fa, pending);

        Fence fb = b.provider().claim(LOG);
        assertThat(b.provider().reconcile(LOG, fb).rolledBackBatches()).as("A's staged batch").isEqualTo(1);
        assertThatThrownBy(() -> a.provider().commit(LOG, fa, 4)).isInstanceOf(FencedException.class)
                .satisfies(e -> assertThat(((FencedException) e).currentEpoch()).isEqualTo(fb.epoch()));
        assertThatThrownBy(() -> a.provider().stage(LOG, fa, batch(3, 3, 1, 10))).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> a.provider().trim(LOG, fa, 1)).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> a.provider().checkpoints().publish(LOG, fa, 2, 1,
                new java.io.ByteArrayInputStream(new byte[10]))).isInstanceOf(FencedException.class);

        EncodedBatch next = batch(4, 3, 2, 100);
        b.provider().append(LOG, fb, next);
        assertSameEntries(readAll(a.provider(), LOG), entriesOf(first, next));
        assertThat(a.provider().state(LOG).epoch()).isEqualTo(fb.epoch());
    }

    /**
     * Two instances race: each repeatedly claims, reconciles and appends after the tail it sees until it is fenced
     * or conflicts. Every append that returned is in the log exactly once, at its offsets; nothing else is.
     */
    @Test
    void racingWritersNeverLoseOrDuplicateAnAcknowledgedAppend() throws Exception {
        Map<Long, EncodedBatch> acknowledged = new ConcurrentSkipListMap<>();
        List<String> duplicates = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (AzuriteTables.Opened w : List.of(a, b)) {
                int seed = results.size() * 1000;
                results.add(pool.submit(() -> {
                    go.await();
                    int ok = 0;
                    for (int round = 0; round < 6; round++) {
                        Fence f = w.provider().claim(LOG);
                        try {
                            w.provider().reconcile(LOG, f);
                            for (int i = 0; i < 4; i++) {
                                long next = w.provider().state(LOG).nextOffset();
                                EncodedBatch bt = batch(seed + round * 10 + i, next, 1 + i, 40);
                                w.provider().append(LOG, f, bt);
                                if (acknowledged.put(bt.firstOffset(), bt) != null) {
                                    synchronized (duplicates) {
                                        duplicates.add("offset " + bt.firstOffset() + " acknowledged twice");
                                    }
                                }
                                ok++;
                            }
                        } catch (FencedException | OffsetConflictException lost) {
                            // the other writer took over: claim again
                        }
                    }
                    return ok;
                }));
            }
            go.countDown();
            int total = 0;
            for (Future<Integer> r : results) {
                total += r.get(300, TimeUnit.SECONDS);
            }
            assertThat(total).isPositive();
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(duplicates).isEmpty();
        List<LogEntry> expected = entriesOf(new ArrayList<>(acknowledged.values()));
        List<LogEntry> actual = readAll(a.provider(), LOG);
        assertSameEntries(actual, expected);
        long tail = a.provider().state(LOG).committedTail();
        assertThat(tail).isEqualTo(expected.isEmpty() ? -1 : expected.get(expected.size() - 1).offset());
    }

    /** A read through the other instance never sees a staged batch, and sees a commit as soon as it returns. */
    @Test
    void readsThroughTheOtherInstanceSeeCommitsOnly() {
        Fence fa = a.provider().claim(LOG);
        EncodedBatch one = batch(5, 0, 4, 64);
        a.provider().stage(LOG, fa, one);
        assertThat(b.provider().read(LOG, -1, 100, 1 << 20).isEmpty()).isTrue();
        assertThat(b.provider().state(LOG).committedTail()).isEqualTo(-1);
        a.provider().commit(LOG, fa, 3);
        assertSameEntries(readAll(b.provider(), LOG), entriesOf(one));
        assertThatThrownBy(() -> b.provider().commit(LOG, new Fence(LOG, fa.epoch() + 1), 3))
                .as("a fence nobody claimed").isInstanceOf(IllegalArgumentException.class);
    }
}
