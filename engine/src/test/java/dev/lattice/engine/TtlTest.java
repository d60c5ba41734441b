package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.Providers;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Values with a time-to-live, on an injected clock: reads, conditional writes, flush, compaction, replay, moves. */
class TtlTest {

    @TempDir
    Path dir;

    private static void assertLive(Tree t, TreeMap<String, String> live, int keySpace) {
        for (int i = 0; i < keySpace; i++) {
            String k = RangeDeleteTest.key(i);
            assertThat(t.get(k).map(EngineBasicsTest::s)).as("get %s", k)
                    .isEqualTo(java.util.Optional.ofNullable(live.get(k)));
            assertThat(t.exists(k)).as("exists %s", k).isEqualTo(live.containsKey(k));
        }
        RangeDeleteTest.verify(t, live, keySpace);
    }

    @Test
    void anExpiredValueIsAbsentForEveryRead() {
        ManualClock clock = new ManualClock();
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage(), LatticeConfig.builder().clock(clock))) {
            Tree t = l.tree("ttl");
            TreeMap<String, String> live = new TreeMap<>();
            for (int i = 0; i < 100; i++) {
                String k = RangeDeleteTest.key(i);
                if (i % 2 == 0) {
                    t.put(k, b("short" + i), Duration.ofSeconds(10));
                } else if (i % 3 == 0) {
                    t.put(k, b("long" + i), Duration.ofHours(1));
                    live.put(k, "long" + i);
                } else {
                    t.put(k, b("forever" + i));
                    live.put(k, "forever" + i);
                }
            }
            Versioned v = t.getVersioned(RangeDeleteTest.key(0)).orElseThrow();
            assertThat(v.expiresAt()).contains(Instant.ofEpochMilli(clock.millis() + 10_000));
            assertThat(t.getVersioned(RangeDeleteTest.key(1)).orElseThrow().expiresAt()).isEmpty();
            assertThat(t.count()).isEqualTo(100);
            clock.advance(9_999);
            assertThat(t.count()).as("not yet expired").isEqualTo(100);
            clock.advance(1);
            assertLive(t, live, 100);
            // conditional writes see an expired key as absent
            assertThat(t.putIfAbsent(RangeDeleteTest.key(0), b("again"))).isTrue();
            live.put(RangeDeleteTest.key(0), "again");
            assertThat(t.putIfVersion(RangeDeleteTest.key(2), b("v0"), 0)).isTrue();
            live.put(RangeDeleteTest.key(2), "v0");
            assertThat(t.delete(RangeDeleteTest.key(4))).as("an expired key is absent for delete").isFalse();
            // a later put without a ttl makes a key permanent
            t.put(RangeDeleteTest.key(3), b("permanent"));
            live.put(RangeDeleteTest.key(3), "permanent");
            clock.advance(Duration.ofHours(2).toMillis());
            live.entrySet().removeIf(e -> e.getValue().startsWith("long"));
            assertLive(t, live, 100);
        }
    }

    @Test
    void ttlIsValidatedAndCarriedByEveryWriteForm() throws Exception {
        ManualClock clock = new ManualClock();
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage(), LatticeConfig.builder().clock(clock))) {
            Tree t = l.tree("ttl");
            assertThatThrownBy(() -> t.put("a", b("x"), null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ttl");
            assertThatThrownBy(() -> t.put("a", b("x"), Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("positive");
            assertThatThrownBy(() -> t.put("a", b("x"), Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
            assertThatThrownBy(() -> t.putAsync("a", b("x"), Duration.ofSeconds(-5)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> t.putAll(Map.of("a", b("x")), Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> t.atomic().put("a", b("x"), null)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> t.put("a", new byte[t.maxValueBytes()], Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl");
            assertThat(t.count()).as("nothing was written").isZero();

            t.putAsync("async", b("1"), Duration.ofSeconds(1)).get();
            t.putAll(Map.of("all1", b("1"), "all2", b("2")), Duration.ofSeconds(2));
            t.putAllAsync(Map.of("all3", b("3")), Duration.ofSeconds(2)).get();
            t.putAllAtomic(Map.of("at1", b("1"), "at2", b("2")), Duration.ofSeconds(3));
            t.atomic().put("mix", b("m"), Duration.ofSeconds(3)).put("keep", b("k")).commit();
            Lattice lat = l;
            lat.atomic().put(t, "cross", b("c"), Duration.ofSeconds(4)).put(l.tree("other"), "o", b("o")).commit();
            t.put("sub-ms", b("s"), Duration.ofNanos(1)); // rounded up to 1 ms
            assertThat(t.getVersioned("sub-ms").orElseThrow().expiresAt())
                    .contains(Instant.ofEpochMilli(clock.millis() + 1));
            assertThat(t.count()).isEqualTo(10);
            clock.advance(1_000);
            assertThat(keys(t)).containsExactly("all1", "all2", "all3", "at1", "at2", "cross", "keep", "mix");
            clock.advance(1_000);
            assertThat(keys(t)).containsExactly("at1", "at2", "cross", "keep", "mix");
            clock.advance(1_000);
            assertThat(keys(t)).containsExactly("cross", "keep");
            clock.advance(1_000);
            assertThat(keys(t)).containsExactly("keep");
            assertThat(l.tree("other").get("o")).isPresent();
            assertThat(t.getAll(List.of("cross", "keep", "mix")).keySet()).containsExactly("keep");
        }
    }

    private static List<String> keys(Tree t) {
        try (ScanCursor c = t.scan(null, null, false)) {
            return EngineBasicsTest.keys(c);
        }
    }

    @Test
    void expiryHoldsThroughFlushCompactionAndReplay() {
        ManualClock clock = new ManualClock();
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = LsmTest.small(LatticeConfig.builder()).partitions(1).level0CompactionTrigger(2)
                .memtableBytes(4 << 20).clock(clock); // only the explicit flushes
        TreeMap<String, String> live = new TreeMap<>();
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            TreeImpl t = (TreeImpl) l.tree("gc");
            for (int i = 0; i < 600; i++) {
                String k = RangeDeleteTest.key(i);
                t.put(k, b("old" + i)); // older values below: expired values must keep hiding them
            }
            assertThat(t.flushNow(30_000)).isTrue();
            for (int i = 0; i < 600; i++) {
                String k = RangeDeleteTest.key(i);
                if (i < 400) {
                    t.put(k, b("ttl" + i), Duration.ofSeconds(i < 200 ? 5 : 50));
                    if (i >= 200) {
                        live.put(k, "ttl" + i);
                    }
                } else {
                    live.put(k, "old" + i);
                }
            }
            clock.advance(5_000); // the first 200 expire while still in the memtable
            assertLive(t, live, 600);
            // flush: expired values become tombstones (older values below); compaction into the bottom drops them
            assertThat(t.flushNow(30_000)).isTrue();
            assertLive(t, live, 600);
            PartitionState ps = t.pipelines()[0].state;
            assertThat(ps.layers.current().runs()).allSatisfy(h -> assertThat(h.ref.level()).isEqualTo(1));
            long entries = ps.layers.current().runs().stream().mapToLong(h -> h.ref.meta().entries()).sum();
            assertThat(entries).as("expired values and what they hid are gone from the bottom level").isEqualTo(400);
            // the rest expires in the runs: the next compaction reclaims it
            clock.advance(45_000);
            live.entrySet().removeIf(e -> e.getValue().startsWith("ttl"));
            assertLive(t, live, 600);
            // two level-0 runs over the whole key range: the compaction merges everything into the bottom level
            t.put(RangeDeleteTest.key(0), b("n0"));
            assertThat(t.flushNow(30_000)).isTrue();
            t.put(RangeDeleteTest.key(599), b("n599"));
            assertThat(t.flushNow(30_000)).isTrue();
            live.put(RangeDeleteTest.key(0), "n0");
            live.put(RangeDeleteTest.key(599), "n599");
            assertLive(t, live, 600);
            entries = ps.layers.current().runs().stream().mapToLong(h -> h.ref.meta().entries()).sum();
            assertThat(entries).as("storage of expired values reclaimed").isEqualTo(201);
        }
        // reopen replays the manifest and the tail; a value written after the last flush still expires
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree t = l.tree("gc");
            t.put("tail", b("t"), Duration.ofSeconds(1));
            live.put("tail", "t");
            assertThat(t.get("tail")).isPresent();
        }
        Lattice crashed = EngineBasicsTest.open(storage, cfg); // replays "tail" from the log; not closed
        assertThat(crashed.tree("gc").get("tail")).isPresent();
        clock.advance(1_000);
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree t = l.tree("gc");
            assertThat(t.get("tail")).isEmpty();
            live.remove("tail");
            for (Map.Entry<String, String> e : live.entrySet()) {
                assertThat(t.get(e.getKey()).map(EngineBasicsTest::s)).contains(e.getValue());
            }
            assertThat(t.count()).isEqualTo(live.size());
        }
    }

    @Test
    void chronicleKeepsExpiriesAcrossCloseReopenAndMoves() {
        ManualClock clock = new ManualClock();
        WalStorageProvider def = Providers.open("chronicle:" + dir.resolve("def"));
        WalStorageProvider other = Providers.open("chronicle:" + dir.resolve("other"));
        LatticeConfig.Builder cfg = LatticeConfig.builder().provider(def, true).partitions(2)
                .namedProvider("b", other, true).clock(clock);
        try (Lattice l = Lattice.open(cfg.build())) {
            TreeImpl t = (TreeImpl) l.tree("mv");
            for (int i = 0; i < 200; i++) {
                t.put(RangeDeleteTest.key(i), b("v" + i), Duration.ofSeconds(i < 100 ? 10 : 100));
            }
            assertThat(t.flushNow(30_000)).isTrue();
            t.put("tail", b("t"), Duration.ofSeconds(10));
            l.move("mv", Map.of(0, "b", 1, "b"), Duration.ofSeconds(30));
            assertThat(t.count()).isEqualTo(201);
            clock.advance(10_000);
            assertThat(t.count()).isEqualTo(100);
            assertThat(t.get("tail")).isEmpty();
        }
        try (Lattice l = Lattice.open(LatticeConfig.builder()
                .provider(Providers.open("chronicle:" + dir.resolve("def")), true)
                .namedProvider("b", Providers.open("chronicle:" + dir.resolve("other")), true).clock(clock).build())) {
            Tree t = l.tree("mv");
            assertThat(t.count()).isEqualTo(100);
            assertThat(s(t.get(RangeDeleteTest.key(150)).orElseThrow())).isEqualTo("v150");
            assertThat(t.getVersioned(RangeDeleteTest.key(150)).orElseThrow().expiresAt()).isPresent();
            clock.advance(90_000);
            assertThat(t.count()).isZero();
        }
    }

    @Test
    void withoutARunStoreTheCheckpointKeepsExpiries() {
        ManualClock clock = new ManualClock();
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = LatticeConfig.builder().partitions(1).clock(clock);
        try (Lattice l = Lattice.open(cfg.provider(new WithoutRunStore(new InMemoryWalStorageProvider(storage)), true)
                .build())) {
            Tree t = l.tree("nr");
            t.put("short", b("s"), Duration.ofSeconds(1));
            t.put("long", b("l"), Duration.ofSeconds(10));
            t.put("forever", b("f"));
        } // close writes a whole-partition checkpoint (format 4: it holds expiries)
        try (Lattice l = Lattice.open(cfg.provider(new WithoutRunStore(new InMemoryWalStorageProvider(storage)), true)
                .build())) {
            Tree t = l.tree("nr");
            assertThat(l.provider().checkpoints().latest(new LogId("nr", 0))).isPresent();
            assertThat(keys(t)).containsExactly("forever", "long", "short");
            clock.advance(1_000);
            assertThat(keys(t)).containsExactly("forever", "long");
            clock.advance(9_000);
            assertThat(keys(t)).containsExactly("forever");
        }
    }
}
