package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Read-only followers: a second provider instance on the same storage (as another process would have) follows what
 * the owner commits, through flushes, compactions, trims, moves and drops, never claims a log, refuses writes, and
 * never shows part of an atomic write.
 */
class FollowerTest {

    private static LatticeConfig.Builder small(LatticeConfig.Builder b) {
        return LsmTest.small(b).followerPollInterval(Duration.ofMillis(10));
    }

    private static LatticeFollower follower(InMemoryStorage storage, LatticeConfig.Builder b) {
        return Lattice.openReadOnly(b.provider(new InMemoryWalStorageProvider(storage), true).build());
    }

    private static long[] epochs(WalStorageProvider p, String tree, int partitions) {
        long[] out = new long[partitions];
        for (int i = 0; i < partitions; i++) {
            out[i] = p.state(new LogId(tree, i)).epoch();
        }
        return out;
    }

    private static void assertSame(Tree follower, TreeMap<String, String> model) {
        for (Map.Entry<String, String> e : model.entrySet()) {
            assertThat(follower.get(e.getKey()).map(EngineBasicsTest::s)).as(e.getKey()).contains(e.getValue());
        }
        List<String> keys = new ArrayList<>();
        try (ScanCursor c = follower.scan(null, null, false)) {
            while (c.hasNext()) {
                TreeEntry e = c.next();
                keys.add(e.key());
                assertThat(s(e.value())).as(e.key()).isEqualTo(model.get(e.key()));
            }
        }
        assertThat(keys).containsExactlyElementsOf(model.keySet());
        assertThat(follower.count()).isEqualTo(model.size());
    }

    @Test
    void followsWritesThroughFlushesCompactionsAndTrimsWithoutClaiming() {
        InMemoryStorage storage = new InMemoryStorage();
        TreeMap<String, String> model = new TreeMap<>();
        Random rnd = new Random(7);
        try (Lattice owner = EngineBasicsTest.open(storage, small(LatticeConfig.builder()))) {
            TreeImpl t = (TreeImpl) owner.tree("f");
            for (int i = 0; i < 300; i++) {
                t.put(key(i), b("v0-" + i));
                model.put(key(i), "v0-" + i);
            }
            assertThat(t.flushNow(10_000)).isTrue();
            long[] before = epochs(owner.provider(), "f", t.partitions());
            try (LatticeFollower f = follower(storage, small(LatticeConfig.builder()))) {
                Tree ft = f.tree("f");
                assertSame(ft, model);
                for (int round = 1; round <= 6; round++) {
                    for (int i = 0; i < 400; i++) {
                        int k = rnd.nextInt(800);
                        if (rnd.nextInt(5) == 0) {
                            t.delete(key(k));
                            model.remove(key(k));
                        } else {
                            String v = "v" + round + "-" + i + "-" + "x".repeat(rnd.nextInt(200));
                            t.put(key(k), b(v));
                            model.put(key(k), v);
                        }
                    }
                    if (round % 2 == 0) {
                        assertThat(t.flushNow(10_000)).isTrue(); // flush, trim, and compactions behind them
                    }
                    assertThat(f.awaitCaughtUp("f", 10_000)).isTrue();
                    assertSame(ft, model);
                    assertThat(f.lagEntries("f")).isZero();
                }
                assertThat(f.stalenessSeconds("f")).isLessThan(30);
                assertThat(f.meterRegistry().find("lattice.follower.staleness.seconds").gauges()).hasSize(2);
            }
            assertThat(epochs(owner.provider(), "f", t.partitions())).as("the follower never claims")
                    .containsExactly(before);
            t.put("after-follower", b("ok")); // the owner still writes
            assertThat(t.healthIssues()).isEmpty();
        }
    }

    @Test
    void everyWriteThroughAFollowerIsRefusedAndNothingIsCreated() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice owner = EngineBasicsTest.open(storage, LatticeConfig.builder())) {
            owner.tree("w").put("k", b("v"));
            try (LatticeFollower f = follower(storage, LatticeConfig.builder())) {
                Tree ft = f.tree("w");
                assertThat(ft.get("k").map(EngineBasicsTest::s)).contains("v");
                assertThatThrownBy(() -> ft.put("k", b("x"))).isInstanceOf(ReadOnlyException.class)
                        .hasMessageContaining("read-only follower").hasMessageContaining("'w'");
                assertThatThrownBy(() -> ft.delete("k")).isInstanceOf(ReadOnlyException.class);
                assertThatThrownBy(() -> ft.putAll(Map.of("a", b("1")))).isInstanceOf(ReadOnlyException.class);
                assertThatThrownBy(ft::atomic).isInstanceOf(ReadOnlyException.class);
                assertThatThrownBy(() -> ft.putAsync("k", b("x")).get(5, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(ReadOnlyException.class);
                assertThatThrownBy(() -> f.tree("nope")).isInstanceOf(NoSuchTreeException.class)
                        .hasMessageContaining("never creates");
                assertThat(f.exists("nope")).isFalse();
                assertThat(f.treeInfos()).extracting(TreeInfo::name).containsExactly("w");
            }
            assertThat(owner.exists("nope")).isFalse();
            assertThat(owner.tree("w").get("k").map(EngineBasicsTest::s)).contains("v");
        }
    }

    /** Pairs of keys on different partitions, always written together: a follower never sees one without the other. */
    @Test
    void anAtomicWriteIsNeverPartlyVisibleOnAFollower() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = small(LatticeConfig.builder()).partitions(4);
        try (Lattice owner = EngineBasicsTest.open(storage, cfg)) {
            TreeImpl t = (TreeImpl) owner.tree("a");
            List<String[]> pairs = new ArrayList<>();
            for (int i = 0; pairs.size() < 8; i++) {
                String x = "x" + i;
                String y = "y" + i;
                if (t.partitionOf(x) != t.partitionOf(y)) {
                    pairs.add(new String[] {x, y});
                }
            }
            for (String[] p : pairs) {
                t.putAllAtomic(Map.of(p[0], b("0"), p[1], b("0")));
            }
            try (LatticeFollower f = follower(storage, small(LatticeConfig.builder()).partitions(4))) {
                Tree ft = f.tree("a");
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong checks = new AtomicLong();
                ExecutorService readers = Executors.newFixedThreadPool(2);
                List<Future<?>> fs = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    fs.add(readers.submit(() -> {
                        while (!stop.get()) {
                            for (String[] p : pairs) {
                                Map<String, byte[]> got = ft.getAll(List.of(p[0], p[1]));
                                assertThat(got).hasSize(2);
                                assertThat(s(got.get(p[0]))).as("pair %s", p[0]).isEqualTo(s(got.get(p[1])));
                                checks.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                for (int i = 1; i <= 150; i++) {
                    String[] p = pairs.get(i % pairs.size());
                    t.putAllAtomic(Map.of(p[0], b(Integer.toString(i)), p[1], b(Integer.toString(i))));
                    if (i % 50 == 0) {
                        assertThat(t.flushNow(10_000)).isTrue();
                    }
                }
                assertThat(f.awaitCaughtUp("a", 10_000)).isTrue();
                await().atMost(Duration.ofSeconds(10)).until(() -> checks.get() > 200);
                stop.set(true);
                for (Future<?> x : fs) {
                    x.get(30, TimeUnit.SECONDS);
                }
                readers.shutdown();
                for (String[] p : pairs) {
                    assertThat(s(ft.get(p[0]).orElseThrow())).isEqualTo(s(t.get(p[0]).orElseThrow()));
                    assertThat(s(ft.get(p[1]).orElseThrow())).isEqualTo(s(t.get(p[1]).orElseThrow()));
                }
            }
        }
    }

    @Test
    void followsAMoveToAnotherProviderAndNoticesADrop() {
        InMemoryStorage main = new InMemoryStorage();
        InMemoryStorage other = new InMemoryStorage();
        try (Lattice owner = Lattice.open(LatticeConfig.builder().partitions(2)
                .provider(new InMemoryWalStorageProvider(main), true)
                .namedProvider("b", new InMemoryWalStorageProvider(other), true).build())) {
            Tree t = owner.tree("m");
            for (int i = 0; i < 50; i++) {
                t.put(key(i), b("before"));
            }
            try (LatticeFollower f = Lattice.openReadOnly(LatticeConfig.builder()
                    .followerPollInterval(Duration.ofMillis(10))
                    .provider(new InMemoryWalStorageProvider(main), true)
                    .namedProvider("b", new InMemoryWalStorageProvider(other), true).build())) {
                Tree ft = f.tree("m");
                assertThat(ft.count()).isEqualTo(50);
                owner.move("m", Map.of(1, "b"), Duration.ofSeconds(30));
                for (int i = 0; i < 50; i++) {
                    t.put(key(i), b("after"));
                }
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                    for (int i = 0; i < 50; i++) {
                        assertThat(ft.get(key(i)).map(EngineBasicsTest::s)).as(key(i)).contains("after");
                    }
                });
                owner.dropTree("m");
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                        assertThatThrownBy(() -> ft.get(key(1))).isInstanceOf(NoSuchTreeException.class));
            }
        }
    }

    private static String key(int i) {
        return String.format("k%04d", i);
    }
}
