package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.StagedBatch;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.checkPage;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrent stages, commits, reads and writes to many logs; the final state is exact. Stages of one log run in
 * parallel only in the {@link ProviderFeature#CONCURRENT_STAGE} variant (skipped, with the reason, for a provider
 * that does not declare it); the serialised variant runs for every provider.
 */
public abstract class ConcurrencyContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected ConcurrencyContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /**
     * Variant for providers that declare {@link ProviderFeature#CONCURRENT_STAGE}: several threads stage consecutive
     * batches of one log in parallel while the test commits them in order and a reader polls: every page the reader
     * sees ends at a commit point (a commit is atomic), and the final log is exact.
     */
    @Test
    void parallelStagesOfOneLogCommittedInOrder() throws Exception {
        assumeDeclared(ProviderFeature.CONCURRENT_STAGE, "its stages of one log are serialised, verified by"
                + " serialisedStagesOfOneLogCommittedInOrder");
        stagesOfOneLogCommittedInOrder(true);
    }

    /**
     * The same scenario with the stages serialised by the test (one at a time, in shuffled order, from several
     * threads, commits too): what every provider must support.
     */
    @Test
    void serialisedStagesOfOneLogCommittedInOrder() throws Exception {
        stagesOfOneLogCommittedInOrder(false);
    }

    private void stagesOfOneLogCommittedInOrder(boolean concurrent) throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        Object serial = new Object();
        int batches = 48;
        List<EncodedBatch> all = new ArrayList<>();
        long next = 0;
        for (int i = 0; i < batches; i++) {
            EncodedBatch b = batch(SEED + i, next, 1 + i % 5, 8 + i % 40);
            all.add(b);
            next = b.lastOffset() + 1;
        }
        List<LogEntry> expected = entriesOf(all);
        Set<Long> commitPoints = new HashSet<>();
        commitPoints.add(-1L);
        for (int i = 2; i < batches; i += 3) {
            commitPoints.add(all.get(i).lastOffset());
        }
        commitPoints.add(all.get(batches - 1).lastOffset());

        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < batches; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(SEED));
        ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> readerFailure = new AtomicReference<>();
        AtomicLong pagesSeen = new AtomicLong();
        try {
            CountDownLatch readerStarted = new CountDownLatch(1);
            Future<?> reader = pool.submit(() -> {
                try {
                    do {
                        ReadPage p = provider().read(log, -1, Integer.MAX_VALUE, Long.MAX_VALUE);
                        assertThat(commitPoints).as("a reader saw tail %d, not a commit point: a commit must be"
                                + " atomic", p.committedTail()).contains(p.committedTail());
                        checkPage(p, -1, Integer.MAX_VALUE, Long.MAX_VALUE);
                        assertEntries("a concurrent reader's page", p.entries(),
                                expected.subList(0, p.entries().size()));
                        pagesSeen.incrementAndGet();
                        readerStarted.countDown();
                    } while (!done.get());
                } catch (Throwable t) {
                    readerFailure.set(t);
                } finally {
                    readerStarted.countDown();
                }
            });
            assertThat(readerStarted.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the reader thread read its first page within %d s", HANG_GUARD_SECONDS).isTrue();
            List<Future<StagedBatch>> staged = new ArrayList<>(Collections.nCopies(batches,
                    (Future<StagedBatch>) null));
            for (int i : order) {
                EncodedBatch b = all.get(i);
                Callable<StagedBatch> task = concurrent ? () -> provider().stage(log, f, b)
                        : () -> {
                            synchronized (serial) {
                                return provider().stage(log, f, b);
                            }
                        };
                staged.set(i, pool.submit(task));
            }
            for (int i = 0; i < batches; i++) {
                StagedBatch r = await(staged.get(i));
                assertThat(r.firstOffset()).as("receipt of the stage of batch #%d: first offset", i)
                        .isEqualTo(all.get(i).firstOffset());
                if (commitPoints.contains(all.get(i).lastOffset())) {
                    long through = all.get(i).lastOffset();
                    if (concurrent) {
                        provider().commit(log, f, through);
                    } else {
                        synchronized (serial) {
                            provider().commit(log, f, through);
                        }
                    }
                    assertThat(provider().read(log, -1, 1, 1).committedTail())
                            .as("ReadPage.committedTail right after commit(%d)", through).isEqualTo(through);
                }
            }
            done.set(true);
            await(reader);
        } finally {
            done.set(true);
            pool.shutdownNow();
            assertThat(pool.awaitTermination(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the test's threads ended within %d s", HANG_GUARD_SECONDS).isTrue();
        }
        if (readerFailure.get() != null) {
            throw new AssertionError("the concurrent reader saw a broken page", readerFailure.get());
        }
        assertThat(pagesSeen.get()).as("pages the concurrent reader read").isPositive();
        long tail = next - 1;
        assertDurable(log, () -> assertLogHolds(provider(), log, expected, tail));
    }

    /** Several threads append to many logs at once; every log ends up exact. */
    @Test
    void manyLogsWrittenConcurrently() throws Exception {
        int logsPerThread = 2;
        int batchesPerLog = 20;
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<List<List<EncodedBatch>>>> results = new ArrayList<>();
        try {
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    List<List<EncodedBatch>> written = new ArrayList<>();
                    List<Fence> fences = new ArrayList<>();
                    long[] next = new long[logsPerThread];
                    for (int k = 0; k < logsPerThread; k++) {
                        fences.add(claimAndReconcile(provider(), log(thread * logsPerThread + k)));
                        written.add(new ArrayList<>());
                    }
                    for (int i = 0; i < batchesPerLog; i++) {
                        for (int k = 0; k < logsPerThread; k++) {
                            LogId log = log(thread * logsPerThread + k);
                            EncodedBatch b = batch(SEED * 7 + log.partition(), next[k], 1 + (i % 4), 16 + i);
                            provider().append(log, fences.get(k), b);
                            next[k] = b.lastOffset() + 1;
                            written.get(k).add(b);
                        }
                    }
                    return written;
                }));
            }
            for (int t = 0; t < THREADS; t++) {
                List<List<EncodedBatch>> written = await(results.get(t));
                for (int k = 0; k < logsPerThread; k++) {
                    LogId log = log(t * logsPerThread + k);
                    List<EncodedBatch> mine = written.get(k);
                    assertThat(mine).as("batches thread %d wrote to %s", t, log).hasSize(batchesPerLog);
                    assertLogHolds(provider(), log, entriesOf(mine), mine.get(mine.size() - 1).lastOffset());
                }
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the test's threads ended within %d s", HANG_GUARD_SECONDS).isTrue();
        }
        List<LogId> expectedLogs = new ArrayList<>();
        for (int p = 0; p < THREADS * logsPerThread; p++) {
            expectedLogs.add(log(p));
        }
        assertThat(provider().logs(TREE)).as("logs(%s) after 4 threads wrote 8 logs", TREE).isEqualTo(expectedLogs);
    }

    /** Concurrent claims on one log all get distinct epochs; the highest is the log's epoch. */
    @Test
    void concurrentClaimsGetDistinctEpochs() throws Exception {
        LogId log = log(0);
        int claims = 4 * THREADS;
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<Fence>> fs = new ArrayList<>();
        try {
            for (int i = 0; i < claims; i++) {
                fs.add(pool.submit(() -> provider().claim(log)));
            }
            Set<Long> epochs = new HashSet<>();
            long max = 0;
            for (Future<Fence> fut : fs) {
                long e = await(fut).epoch();
                assertThat(epochs.add(e)).as("epoch %d handed out twice", e).isTrue();
                max = Math.max(max, e);
            }
            assertThat(provider().state(log).epoch()).as("epoch after %d concurrent claims must be the highest",
                    claims).isEqualTo(max);
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the test's threads ended within %d s", HANG_GUARD_SECONDS).isTrue();
        }
    }
}
