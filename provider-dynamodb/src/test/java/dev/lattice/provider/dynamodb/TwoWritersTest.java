package dev.lattice.provider.dynamodb;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two writers (two provider instances, like two processes) on one log: the newer claim wins, the older writer gets
 * {@link FencedException} and nothing it wrote becomes visible or overwrites the winner's data, also when its stale
 * chunks land inside offsets the winner has already committed.
 */
class TwoWritersTest {

    private static final LogId LOG = new LogId("writers", 1);

    private final CheckingDynamoDbClient client = DynamoTestBackend.checkingClient();
    private DynamoTestBackend.Storage storage;
    private DynamoDbWalStorageProvider a;
    private DynamoDbWalStorageProvider b;

    @BeforeEach
    void open() {
        storage = DynamoTestBackend.newStorage("writers");
        a = DynamoDbWalStorageProvider.open(client, storage.settings());
        b = DynamoDbWalStorageProvider.open(client, storage.settings());
    }

    @AfterEach
    void close() {
        a.close();
        b.close();
        storage.drop();
    }

    private record Outcome(List<EncodedBatch> acknowledged, FencedException fenced, long epoch) {
    }

    private static Outcome write(DynamoDbWalStorageProvider p, CyclicBarrier claimed, long seed) throws Exception {
        Fence f = p.claim(LOG);
        claimed.await(60, TimeUnit.SECONDS);
        List<EncodedBatch> acked = new ArrayList<>();
        try {
            p.reconcile(LOG, f);
            for (int i = 0; i < 15; i++) {
                long next = p.state(LOG).nextOffset();
                EncodedBatch batch = batch(seed + i, next, 1 + i % 4, 64);
                try {
                    p.append(LOG, f, batch);
                    acked.add(batch);
                } catch (OffsetConflictException e) {
                    i--;                                     // the other writer moved the tail: retry at the new one
                }
            }
        } catch (FencedException e) {
            return new Outcome(acked, e, f.epoch());
        }
        return new Outcome(acked, null, f.epoch());
    }

    /**
     * Both writers claim, then both append as fast as they can: the later claim wins every append; the earlier one
     * is fenced on its first fenced call and none of its batches is visible.
     */
    @Test
    void racingWritersOneWinsTheLoserIsFencedAndNothingIsOverwritten() throws Exception {
        CyclicBarrier claimed = new CyclicBarrier(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Outcome> fa = pool.submit(() -> write(a, claimed, 1000));
            Future<Outcome> fb = pool.submit(() -> write(b, claimed, 2000));
            Outcome oa = fa.get(300, TimeUnit.SECONDS);
            Outcome ob = fb.get(300, TimeUnit.SECONDS);
            Outcome winner = oa.epoch() > ob.epoch() ? oa : ob;
            Outcome loser = winner == oa ? ob : oa;
            assertThat(winner.fenced()).isNull();
            assertThat(winner.acknowledged()).hasSize(15);
            assertThat(loser.fenced()).as("the older writer is fenced").isNotNull();
            assertThat(loser.fenced().staleEpoch()).isEqualTo(loser.epoch());
            assertThat(loser.acknowledged()).as("the older writer's appends after the newer claim").isEmpty();
            List<LogEntry> expected = entriesOf(winner.acknowledged());
            assertSameEntries(readAll(a, LOG), expected);
            assertSameEntries(readAll(b, LOG), expected);
            assertThat(a.state(LOG).epoch()).isEqualTo(winner.epoch());
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * A stalled writer that still believes the tail is 5 stages a batch whose chunk lands inside offsets the new
     * writer committed meanwhile (its chunk keys do not collide): reads on any instance return the winner's bytes,
     * the winner's trim counts exactly, and the stalled writer's commit is fenced.
     */
    @Test
    void staleChunksInsideCommittedOffsetsAreNeverRead() {
        Fence fa = a.claim(LOG);
        a.reconcile(LOG, fa);
        EncodedBatch base = batch(1, 0, 6, 40);                      // 0..5, committed by A
        a.append(LOG, fa, base);

        Fence fb = b.claim(LOG);
        b.reconcile(LOG, fb);
        EncodedBatch b1 = batch(2, 6, 5, 40);                        // 6..10: one chunk, sort key 10
        EncodedBatch b2 = batch(3, 11, 5, 40);                       // 11..15: sort key 15
        b.append(LOG, fb, b1);
        b.append(LOG, fb, b2);

        // A still thinks it is current with tail 5: its chunk 6..8 (sort key 8) lands between B's chunks.
        EncodedBatch stale = batch(4, 6, 3, 40);
        a.stage(LOG, fa, stale);
        EncodedBatch stale2 = batch(5, 12, 2, 40);                   // 12..13: sort key 13, inside B's 11..15
        a.stage(LOG, fa, stale2);
        assertThatThrownBy(() -> a.commit(LOG, fa, 8)).isInstanceOf(FencedException.class);

        List<LogEntry> expected = entriesOf(base, b1, b2);
        assertSameEntries(readAll(a, LOG), expected);
        assertSameEntries(readAll(b, LOG), expected);
        for (long from = 4; from <= 14; from++) {
            assertSameEntries(readAll(b, LOG, from, 2, 1_000), expected.subList((int) from + 1, expected.size()));
        }
        b.trim(LOG, fb, 12);
        LogState s = b.state(LOG);
        assertThat(s.retainedEntries()).isEqualTo(3);
        assertThat(s.retainedPayloadBytes()).isEqualTo(3 * 40);
        assertSameEntries(readAll(a, LOG), expected.subList(13, 16));
        try (DynamoDbWalStorageProvider fresh = DynamoDbWalStorageProvider.open(client, storage.settings())) {
            assertSameEntries(readAll(fresh, LOG), expected.subList(13, 16));
            Fence fc = fresh.claim(LOG);
            fresh.reconcile(LOG, fc);
            EncodedBatch c = batch(6, 16, 2, 40);
            fresh.append(LOG, fc, c);
            List<LogEntry> all = new ArrayList<>(expected.subList(13, 16));
            all.addAll(entriesOf(c));
            assertSameEntries(readAll(fresh, LOG), all);
        }
        assertThatThrownBy(() -> b.commit(LOG, fb, 15)).isInstanceOf(FencedException.class);
    }
}
