package dev.lattice.engine;

import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static dev.lattice.engine.EngineBasicsTest.open;
import static org.assertj.core.api.Assertions.assertThat;

class ConcurrencyTest {

    static byte[] num(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }

    static long num(byte[] b) {
        return ByteBuffer.wrap(b).getLong();
    }

    /**
     * Writers each own a set of keys and write increasing counters; readers check that a key never goes backwards
     * (monotonic reads) and that a write is visible once acknowledged (read-your-writes, via the shared
     * acknowledged watermark); scans stay ordered while writes run; the final state and the reopened state are
     * exact.
     */
    @Test
    void concurrentWritersReadersAndScans() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        runConcurrentScenario(() -> open(storage, LatticeConfig.builder().partitions(4).checkpointEveryEntries(2_000)));
    }

    /** The scenario above on any backend: {@code opener} opens a lattice over the same storage each time. */
    static void runConcurrentScenario(java.util.function.Supplier<Lattice> opener) throws Exception {
        int writers = 8;
        int keysPerWriter = 20;
        int rounds = 150;
        ConcurrentHashMap<String, AtomicLong> acked = new ConcurrentHashMap<>();
        for (int w = 0; w < writers; w++) {
            for (int k = 0; k < keysPerWriter; k++) {
                acked.put("w" + w + "-k" + k, new AtomicLong(-1));
            }
        }
        ExecutorService pool = Executors.newFixedThreadPool(writers + 3);
        try (Lattice l = opener.get()) {
            Tree t = l.tree("cc");
            AtomicBoolean done = new AtomicBoolean();
            List<Future<?>> fs = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            for (int w = 0; w < writers; w++) {
                int id = w;
                fs.add(pool.submit(() -> {
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        for (int k = 0; k < keysPerWriter; k += 1 + (r % 3)) {
                            String key = "w" + id + "-k" + k;
                            t.put(key, num(r));
                            acked.get(key).set(r);
                            long seen = num(t.get(key).orElseThrow());
                            assertThat(seen).as("read-your-writes for " + key).isGreaterThanOrEqualTo(r);
                        }
                    }
                    return null;
                }));
            }
            for (int rd = 0; rd < 2; rd++) {
                fs.add(pool.submit(() -> {
                    start.await();
                    ConcurrentHashMap<String, Long> last = new ConcurrentHashMap<>();
                    while (!done.get()) {
                        for (String key : acked.keySet()) {
                            long floor = acked.get(key).get();
                            long seen = t.get(key).map(ConcurrencyTest::num).orElse(-1L);
                            assertThat(seen).as("acknowledged write visible: " + key).isGreaterThanOrEqualTo(floor);
                            Long prev = last.put(key, seen);
                            assertThat(seen).as("monotonic reads: " + key).isGreaterThanOrEqualTo(prev == null ? -1 : prev);
                        }
                    }
                    return null;
                }));
            }
            fs.add(pool.submit(() -> {
                start.await();
                while (!done.get()) {
                    String prev = null;
                    try (ScanCursor c = t.scan(null, null, false)) {
                        while (c.hasNext()) {
                            String k = c.next().key();
                            if (prev != null) {
                                assertThat(k).isGreaterThan(prev);
                            }
                            prev = k;
                        }
                    }
                }
                return null;
            }));
            start.countDown();
            for (int i = 0; i < writers; i++) {
                fs.get(i).get(2, TimeUnit.MINUTES);
            }
            done.set(true);
            for (Future<?> f : fs) {
                f.get(1, TimeUnit.MINUTES);
            }
            acked.forEach((k, v) -> {
                if (v.get() >= 0) {
                    assertThat(num(t.get(k).orElseThrow())).isEqualTo(v.get());
                }
            });
        } finally {
            pool.shutdownNow();
        }
        try (Lattice l = opener.get()) {
            Tree t = l.tree("cc");
            acked.forEach((k, v) -> {
                if (v.get() >= 0) {
                    assertThat(num(t.get(k).orElseThrow())).as(k).isEqualTo(v.get());
                } else {
                    assertThat(t.get(k)).isEmpty();
                }
            });
        }
    }

    /**
     * 64 closed-loop writers on one partition over a provider with 2 ms latency per call: writes arriving while a
     * batch is staged coalesce, so there are far fewer stage calls than keys. (The measured figure goes to
     * docs/benchmarks.md; this asserts the mechanism with margin, not a speed.)
     */
    @Test
    void concurrentWritesCoalesceIntoFewStageCalls() throws Exception {
        FaultInjectingProvider slow = new FaultInjectingProvider(new InMemoryWalStorageProvider(new InMemoryStorage()));
        slow.setLatency(Duration.ofMillis(2));
        int writers = 64;
        int perWriter = 40;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(slow, true).partitions(1).build())) {
            Tree t = l.tree("co");
            LatticeStats before = l.stats();
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int id = w;
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < perWriter; i++) {
                        t.put("w" + id + "-" + i, num(i));
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(2, TimeUnit.MINUTES);
            }
            LatticeStats after = l.stats();
            long keys = after.entriesCommitted() - before.entriesCommitted();
            long stages = after.stageCalls() - before.stageCalls();
            assertThat(keys).isEqualTo((long) writers * perWriter);
            assertThat((double) stages / keys).as("stage calls per key (%d stages for %d keys)", stages, keys)
                    .isLessThanOrEqualTo(0.1);
            assertThat(t.count()).isEqualTo(keys);
        } finally {
            pool.shutdownNow();
        }
    }
}
