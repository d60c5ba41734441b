package dev.lattice.engine;

import dev.lattice.testkit.CountingProvider;
import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.ForwardingProvider;
import dev.lattice.testkit.SpiOperation;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static dev.lattice.engine.EngineBasicsTest.b;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The write path on the caller's thread (issue 16): a blocking write to an idle log of a provider with local calls
 * stages, commits and applies on the writer's own thread; concurrent writers still share provider calls; a remote
 * provider's calls stay on the engine's pool (so the call deadline keeps answering callers).
 */
class CallerThreadWritePathTest {

    /** Records the threads that made stage and commit calls. */
    static class ThreadRecorder extends ForwardingProvider {
        final Set<Thread> threads = ConcurrentHashMap.newKeySet();

        ThreadRecorder(dev.lattice.spi.WalStorageProvider delegate) {
            super(delegate);
        }

        @Override
        public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
            threads.add(Thread.currentThread());
            return super.stage(log, fence, batch);
        }

        @Override
        public void commit(LogId log, Fence fence, long throughOffset) {
            if (throughOffset >= 0) {
                threads.add(Thread.currentThread());
            }
            super.commit(log, fence, throughOffset);
        }
    }

    @Test
    void aLoneBlockingWriteRunsOnTheCallersThread() {
        ThreadRecorder rec = new ThreadRecorder(new InMemoryWalStorageProvider(new InMemoryStorage()));
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(rec, true).partitions(2).build())) {
            Tree t = l.tree("c");
            t.put("warm", b("0"));
            rec.threads.clear();
            for (int i = 0; i < 100; i++) {
                t.put("k" + i, b("v" + i));
                t.delete("k" + i);
                t.putIfAbsent("p" + i, b("x"));
            }
            assertThat(rec.threads).containsExactly(Thread.currentThread());
            assertThat(t.get("p99")).isPresent();
            assertThat(t.get("k99")).isEmpty();
        }
    }

    @Test
    void concurrentWritersStillShareCommits() throws Exception {
        FaultInjectingProvider slow = new FaultInjectingProvider(new InMemoryWalStorageProvider(new InMemoryStorage()));
        slow.setLatency(Duration.ofMillis(2));
        CountingProvider counting = new CountingProvider(slow);
        int writers = 32;
        int perWriter = 40;
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(counting, true).partitions(1).build())) {
            Tree t = l.tree("s");
            t.put("warm", b("0"));
            var before = counting.snapshot();
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    int id = w;
                    fs.add(pool.submit(() -> {
                        for (int i = 0; i < perWriter; i++) {
                            t.put("w" + id + "-" + i, b("v"));
                        }
                    }));
                }
                for (Future<?> f : fs) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            var d = counting.snapshot().minus(before);
            double commitsPerKey = d.calls(SpiOperation.COMMIT) / (double) (writers * perWriter);
            double stagesPerKey = d.calls(SpiOperation.STAGE) / (double) (writers * perWriter);
            System.out.printf("[caller-thread] %d writers x %d puts, 2 ms provider latency: %.3f stages/key,"
                    + " %.3f commits/key%n", writers, perWriter, stagesPerKey, commitsPerKey);
            assertThat(commitsPerKey).isLessThan(0.25);
            assertThat(t.count()).isEqualTo(writers * perWriter + 1);
        }
    }

    @Test
    void aRemoteProvidersCallsStayOnTheEnginePool() {
        // the same in-memory storage, described without LOCAL_CALLS, as a remote provider would be
        ThreadRecorder rec = new ThreadRecorder(new InMemoryWalStorageProvider(new InMemoryStorage())) {
            @Override
            public dev.lattice.spi.ProviderDescriptor describe() {
                var d = super.describe();
                var features = java.util.EnumSet.copyOf(d.features());
                features.remove(dev.lattice.spi.ProviderFeature.LOCAL_CALLS);
                return new dev.lattice.spi.ProviderDescriptor(d.name(), d.version(), d.limits(), d.durability(),
                        features, d.replayCost());
            }
        };
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(rec, true).partitions(1).build())) {
            Tree t = l.tree("r");
            for (int i = 0; i < 20; i++) {
                t.put("k" + i, b("v"));
            }
            assertThat(rec.threads).isNotEmpty().doesNotContain(Thread.currentThread());
        }
    }

    /** An executor that records the threads that hand it tasks (the engine's I/O pool, counted). */
    static final class RecordingExecutor extends java.util.concurrent.ThreadPoolExecutor {
        final Set<Thread> submitters = ConcurrentHashMap.newKeySet();

        RecordingExecutor() {
            super(0, Integer.MAX_VALUE, 60, java.util.concurrent.TimeUnit.SECONDS,
                    new java.util.concurrent.SynchronousQueue<>());
        }

        @Override
        public void execute(Runnable command) {
            submitters.add(Thread.currentThread());
            super.execute(command);
        }
    }

    @Test
    void aPutOnAnIdleLogIsAppliedAndAnsweredWithoutAnyHandOff() {
        ThreadRecorder rec = new ThreadRecorder(new InMemoryWalStorageProvider(new InMemoryStorage()));
        RecordingExecutor pool = new RecordingExecutor();
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(rec, true).partitions(2).ioExecutor(pool)
                .build())) {
            Tree t = l.tree("idle");
            t.put("warm", b("0"));
            rec.threads.clear();
            pool.submitters.clear();
            Map<String, byte[]> many = new java.util.TreeMap<>();
            for (int i = 0; i < 100; i++) {
                assertThat(t.put("k" + i, b("v" + i))).isPositive();
                assertThat(t.get("k" + i)).as("applied before put returned").isPresent();
                many.put("m" + i, b("m"));
            }
            t.putAll(many);
            assertThat(t.get("m99")).isPresent();
            assertThat(rec.threads).as("stage and commit calls").containsExactly(Thread.currentThread());
            assertThat(pool.submitters).as("nothing was handed to the I/O pool by the writer").doesNotContain(
                    Thread.currentThread());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void manyBlockingWritersShareCommitsAndLeadOnTheirOwnThreads() throws Exception {
        FaultInjectingProvider slow = new FaultInjectingProvider(new InMemoryWalStorageProvider(new InMemoryStorage()));
        slow.setLatency(Duration.ofMillis(2));
        CountingProvider counting = new CountingProvider(slow);
        ThreadRecorder rec = new ThreadRecorder(counting);
        int writers = 64;
        int perWriter = 30;
        Set<Thread> writerThreads = ConcurrentHashMap.newKeySet();
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(rec, true).partitions(1).build())) {
            Tree t = l.tree("group");
            t.put("warm", b("0"));
            rec.threads.clear();
            var before = counting.snapshot();
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    int id = w;
                    fs.add(pool.submit(() -> {
                        writerThreads.add(Thread.currentThread());
                        for (int i = 0; i < perWriter; i++) {
                            t.put("g" + id + "-" + i, b("v"));
                        }
                    }));
                }
                for (Future<?> f : fs) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            var d = counting.snapshot().minus(before);
            double stagesPerKey = d.calls(SpiOperation.STAGE) / (double) (writers * perWriter);
            double commitsPerKey = d.calls(SpiOperation.COMMIT) / (double) (writers * perWriter);
            System.out.printf("[group-commit] %d writers x %d puts, 2 ms provider latency: %.3f stages/key,"
                    + " %.3f commits/key%n", writers, perWriter, stagesPerKey, commitsPerKey);
            assertThat(stagesPerKey).as("stage calls per key").isLessThan(0.1);
            assertThat(commitsPerKey).as("commit calls per key").isLessThan(0.1);
            assertThat(writerThreads).containsAll(rec.threads);
            assertThat(t.count()).isEqualTo(writers * perWriter + 1);
        }
    }

    /** A provider whose stage calls to the logs of tree {@code async} wait until released. */
    static final class GatedProvider extends ForwardingProvider {
        final java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);

        GatedProvider(dev.lattice.spi.WalStorageProvider delegate) {
            super(delegate);
        }

        @Override
        public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
            try {
                if (log.tree().equals("async")) {
                    gate.await();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return super.stage(log, fence, batch);
        }
    }

    @Test
    void asyncWritesWaitForRoomInTheirFutureAndFailFastWhenThatIsFullToo() throws Exception {
        GatedProvider gated = new GatedProvider(new InMemoryWalStorageProvider(new InMemoryStorage()));
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(gated, true).partitions(1)
                .maxQueuedEntriesPerLog(4).maxPendingBatches(1).maxBatchEntries(1)
                .admissionTimeout(Duration.ofSeconds(60)).build())) {
            Tree t = l.tree("async");
            List<java.util.concurrent.CompletableFuture<Long>> fs = new ArrayList<>();
            // 1 in flight (its stage waits at the gate) + 4 queued + 4 waiting for room: none of the calls blocks
            for (int i = 0; i < 9; i++) {
                fs.add(t.putAsync("a" + i, b("v")));
            }
            assertThat(fs).allSatisfy(f -> assertThat(f).isNotDone());
            assertThat(t.saturation()).isEqualTo(SaturationState.SATURATED);
            var refused = t.putAsync("refused", b("v"));
            assertThat(refused).isCompletedExceptionally();
            org.assertj.core.api.Assertions.assertThatThrownBy(refused::join)
                    .hasCauseInstanceOf(LatticeSaturatedException.class);
            gated.gate.countDown();
            for (var f : fs) {
                assertThat(f.get(30, java.util.concurrent.TimeUnit.SECONDS)).isPositive();
            }
            for (int i = 0; i < 9; i++) {
                assertThat(t.get("a" + i)).isPresent();
            }
            assertThat(t.get("refused")).isEmpty();
        }
    }
}
