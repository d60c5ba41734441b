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
}
