package dev.lattice.provider.postgres;

import dev.lattice.conformance.WalTestSupport;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two writers on one log, each a separate provider instance with its own connection pool (two processes): exactly
 * one wins, the other gets {@link FencedException}, and the log replays gap-free with every acknowledged batch.
 */
@ExtendWith(PostgresTestServer.class)
class TwoWritersTest {

    private static final long HANG_GUARD_SECONDS = 120;

    private String schema;
    private final List<WalStorageProvider> providers = new ArrayList<>();
    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        schema = PostgresTestServer.newSchema();
        pool = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void tearDown() throws Exception {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        for (WalStorageProvider p : providers) {
            p.close();
        }
        PostgresTestServer.dropSchema(schema);
    }

    private WalStorageProvider open() {
        PostgresTestServer.Server s = PostgresTestServer.server();
        WalStorageProvider p = PostgresWalStorageProvider.open(s.providerUri(schema), s.options());
        providers.add(p);
        return p;
    }

    /**
     * Twenty rounds, each on a fresh log: both writers claim at once, then both append a batch at offset 0 at once.
     * Exactly one append succeeds, the one of the higher epoch; the other is fenced; the log holds the winner's
     * batch only.
     */
    @Test
    void racingWritersExactlyOneWinsEachRound() throws Exception {
        WalStorageProvider a = open();
        WalStorageProvider b = open();
        for (int round = 0; round < 20; round++) {
            LogId log = new LogId("race", round);
            CyclicBarrier claimed = new CyclicBarrier(2);
            Future<Outcome> fa = pool.submit(() -> appendAfterBarrier(a, log, claimed, 1));
            Future<Outcome> fb = pool.submit(() -> appendAfterBarrier(b, log, claimed, 2));
            Outcome oa = fa.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            Outcome ob = fb.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            assertThat(oa.fence().epoch()).isNotEqualTo(ob.fence().epoch());
            Outcome winner = oa.fence().epoch() > ob.fence().epoch() ? oa : ob;
            Outcome loser = winner == oa ? ob : oa;
            assertThat(winner.failure()).as("round %d: the newer epoch's append", round).isNull();
            assertThat(loser.failure()).as("round %d: the older epoch's append", round)
                    .isInstanceOf(FencedException.class);
            assertThat(((FencedException) loser.failure()).staleEpoch()).isEqualTo(loser.fence().epoch());
            assertSameEntries(readAll(a, log), entriesOf(winner.batch()));
            assertSameEntries(readAll(b, log), entriesOf(winner.batch()));
            assertThat(a.state(log).committedTail()).isEqualTo(winner.batch().lastOffset());
        }
    }

    private record Outcome(Fence fence, EncodedBatch batch, Throwable failure) {
    }

    private static Outcome appendAfterBarrier(WalStorageProvider p, LogId log, CyclicBarrier barrier, long seed)
            throws Exception {
        Fence f = p.claim(log); // no reconcile: the other claim may already have fenced this one
        barrier.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
        EncodedBatch batch = WalTestSupport.batch(seed, 0, 5, 32);
        try {
            p.append(log, f, batch);
            return new Outcome(f, batch, null);
        } catch (RuntimeException e) {
            return new Outcome(f, batch, e);
        }
    }

    /**
     * Writer A appends continuously; writer B takes the log over mid-stream (claim, reconcile) and appends after
     * the tail it finds. A's first commit after B's claim is fenced and A stops; the log is every batch A had
     * acknowledged, then B's batches, dense and byte-exact, read from either instance and from a third one.
     */
    @Test
    void takeoverFencesTheOldWriterAndKeepsEveryAcknowledgedBatch() throws Exception {
        WalStorageProvider a = open();
        WalStorageProvider b = open();
        LogId log = new LogId("takeover", 0);
        Fence fa = a.claim(log);
        a.reconcile(log, fa);
        CountDownLatch aWrote = new CountDownLatch(20);
        Future<List<EncodedBatch>> writerA = pool.submit(() -> {
            List<EncodedBatch> acked = new ArrayList<>();
            long next = 0;
            for (int i = 0; ; i++) {
                EncodedBatch batch = WalTestSupport.batch(100 + i, next, 1 + i % 7, 40);
                try {
                    a.append(log, fa, batch);
                } catch (FencedException e) {
                    return acked;
                }
                acked.add(batch);
                next = batch.lastOffset() + 1;
                aWrote.countDown();
            }
        });
        assertThat(aWrote.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        Fence fb = b.claim(log);
        b.reconcile(log, fb);
        List<EncodedBatch> bBatches = new ArrayList<>();
        long next = b.state(log).nextOffset();
        for (int i = 0; i < 10; i++) {
            EncodedBatch batch = WalTestSupport.batch(900 + i, next, 3, 24);
            b.append(log, fb, batch);
            bBatches.add(batch);
            next = batch.lastOffset() + 1;
        }
        List<EncodedBatch> acked = writerA.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
        assertThat(acked.size()).isGreaterThanOrEqualTo(20);
        List<EncodedBatch> all = new ArrayList<>(acked);
        all.addAll(bBatches);
        List<LogEntry> expected = entriesOf(all);
        assertSameEntries(readAll(a, log), expected);
        assertSameEntries(readAll(b, log), expected);
        WalStorageProvider c = open();
        Fence fc = c.claim(log);
        c.reconcile(log, fc);
        assertSameEntries(readAll(c, log), expected);
        assertThat(c.state(log).committedTail()).isEqualTo(next - 1);
        assertThat(c.state(log).retainedEntries()).isEqualTo(expected.size());
    }
}
