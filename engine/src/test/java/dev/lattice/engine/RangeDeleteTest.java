package dev.lattice.engine;

import dev.lattice.engine.lsm.RangeTombstone;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import dev.lattice.spi.Providers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Range deletes: visibility, atomicity across partitions, snapshots, flush, compaction, replay, moves. */
class RangeDeleteTest {

    @TempDir
    Path dir;

    static String key(int i) {
        return String.format("k%04d", i);
    }

    /** Every read path agrees with the model: get, exists, getAll, scans both ways, bounded scans, count. */
    static void verify(Tree t, TreeMap<String, String> model, int keySpace) {
        List<String> all = new ArrayList<>();
        for (int i = 0; i < keySpace; i++) {
            String k = key(i);
            all.add(k);
            assertThat(t.get(k).map(EngineBasicsTest::s)).as("get %s", k).isEqualTo(java.util.Optional.ofNullable(
                    model.get(k)));
            assertThat(t.exists(k)).as("exists %s", k).isEqualTo(model.containsKey(k));
        }
        Map<String, byte[]> got = t.getAll(all);
        assertThat(got.keySet()).containsExactlyElementsOf(model.keySet());
        got.forEach((k, v) -> assertThat(s(v)).isEqualTo(model.get(k)));
        try (ScanCursor c = t.scan(null, null, false)) {
            assertThat(EngineBasicsTest.keys(c)).containsExactlyElementsOf(model.keySet());
        }
        try (ScanCursor c = t.scan(null, null, true)) {
            assertThat(EngineBasicsTest.keys(c)).containsExactlyElementsOf(model.descendingKeySet());
        }
        try (ScanCursor c = t.scan(key(50), key(150), false)) {
            assertThat(EngineBasicsTest.keys(c)).containsExactlyElementsOf(model.subMap(key(50), key(150)).keySet());
        }
        assertThat(t.count()).as("count").isEqualTo(model.size());
    }

    private static void fill(Tree t, TreeMap<String, String> model, int from, int to, String tag) {
        Map<String, byte[]> batch = new TreeMap<>();
        for (int i = from; i < to; i++) {
            batch.put(key(i), b(tag + i));
            model.put(key(i), tag + i);
        }
        t.putAll(batch);
    }

    private static void deleteRange(Tree t, TreeMap<String, String> model, int from, int to) {
        t.deleteRange(key(from), key(to));
        model.subMap(key(from), key(to)).clear();
    }

    @Test
    void deletesEveryKeyOfTheRangeAtOnceAndNothingElse() {
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage())) {
            Tree t = l.tree("rd");
            TreeMap<String, String> model = new TreeMap<>();
            fill(t, model, 0, 300, "v");
            long version = t.deleteRange(key(100), key(200));
            model.subMap(key(100), key(200)).clear();
            assertThat(version).isPositive();
            verify(t, model, 300);
            // keys written after the range delete are visible
            t.put(key(150), b("again"));
            model.put(key(150), "again");
            verify(t, model, 300);
            // a point delete, putIfAbsent and putIfVersion see covered keys as absent
            assertThat(t.putIfAbsent(key(120), b("pia"))).isTrue();
            model.put(key(120), "pia");
            assertThat(t.delete(key(130))).as("a covered key is absent for delete").isFalse();
            assertThat(t.putIfVersion(key(131), b("x"), 0)).isTrue();
            model.put(key(131), "x");
            verify(t, model, 300);
            // an empty range (no key in it) is fine too
            t.deleteRange("zz", "zzz");
            verify(t, model, 300);
        }
    }

    @Test
    void boundsAreValidated() {
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage())) {
            Tree t = l.tree("rd");
            assertThatThrownBy(() -> t.deleteRange(null, "b")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("null");
            assertThatThrownBy(() -> t.deleteRange("a", null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("null");
            assertThatThrownBy(() -> t.deleteRange("b", "b")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("fromInclusive < toExclusive");
            assertThatThrownBy(() -> t.deleteRange("c", "b")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("fromInclusive < toExclusive");
            assertThatThrownBy(() -> t.deleteRange("", "b")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
            String tooLong = "x".repeat(t.maxKeyBytes() + 1);
            assertThatThrownBy(() -> t.deleteRange("a", tooLong)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maxKeyBytes");
            assertThatThrownBy(() -> t.deleteRangeAsync("b", "a")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> t.atomic().deleteRange("a", "b").deleteRange("a", "b").commit())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deleted twice");
            assertThat(t.count()).isZero();
        }
    }

    @Test
    void atomicWritesCombineRangeDeletesWithPutsAndOtherTrees() throws Exception {
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage())) {
            Tree a = l.tree("a");
            Tree other = l.tree("other");
            TreeMap<String, String> model = new TreeMap<>();
            fill(a, model, 0, 100, "v");
            other.put("o", b("1"));
            // puts of the same write survive its range delete, whatever the order of the calls
            AtomicResult r = l.atomic().put(a, key(10), b("new")).deleteRange(a, key(0), key(50))
                    .put(a, key(20), b("new2")).delete(other, "o").commit();
            model.subMap(key(0), key(50)).clear();
            model.put(key(10), "new");
            model.put(key(20), "new2");
            assertThat(r.logs()).as("every partition of the tree plus the other tree's log")
                    .isEqualTo(a.partitions() + 1);
            verify(a, model, 100);
            assertThat(other.get("o")).isEmpty();
            // a failed precondition writes nothing, the range delete included
            assertThatThrownBy(() -> a.atomic().deleteRange(key(50), key(100)).expectVersion(key(60), 12345).commit())
                    .isInstanceOf(PreconditionFailedException.class);
            verify(a, model, 100);
            // async
            assertThat(a.deleteRangeAsync(key(90), key(95)).get()).isPositive();
            model.subMap(key(90), key(95)).clear();
            verify(a, model, 100);
        }
    }

    @Test
    void anOpenScanStillSeesWhatALaterRangeDeleteCovers() {
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage())) {
            Tree t = l.tree("snap");
            TreeMap<String, String> model = new TreeMap<>();
            fill(t, model, 0, 200, "v");
            TreeMap<String, String> before = new TreeMap<>(model);
            try (ScanCursor c = t.scan(null, null, false)) {
                deleteRange(t, model, 0, 200);
                assertThat(t.count()).isZero();
                assertThat(EngineBasicsTest.keys(c)).as("the scan's snapshot predates the range delete")
                        .containsExactlyElementsOf(before.keySet());
            }
            // a flush while a snapshot is open keeps the range delete above the flushed values
            TreeMap<String, String> m2 = new TreeMap<>();
            Tree u = l.tree("snap2", 1);
            fill(u, m2, 0, 200, "w");
            ScanCursor open = u.scan(null, null, false);
            deleteRange(u, m2, 20, 180);
            assertThat(((TreeImpl) u).flushNow(30_000)).isTrue(); // no run store in memory? then a snapshot
            verify(u, m2, 200);
            assertThat(EngineBasicsTest.keys(open)).hasSize(200);
            open.close();
            verify(u, m2, 200);
        }
    }

    /**
     * A range delete committed while a scan predates it, then a flush and a compaction: the range delete is durable
     * (the log is trimmed past it) and the scan still reads what it covers.
     */
    @Test
    void aRangeDeleteFlushedUnderAnOpenSnapshotIsDurable() {
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = LatticeConfig.builder().partitions(1).level0CompactionTrigger(2)
                .memtableBytes(4 << 20);
        TreeMap<String, String> model = new TreeMap<>();
        Lattice first = EngineBasicsTest.open(storage, cfg);
        TreeImpl t = (TreeImpl) first.tree("dur");
        fill(t, model, 0, 200, "v");
        assertThat(t.flushNow(30_000)).isTrue();
        ScanCursor open = t.scan(null, null, false);
        deleteRange(t, model, 20, 180);
        assertThat(t.flushNow(30_000)).isTrue(); // second level-0 run: a compaction while the snapshot is open
        verify(t, model, 200);
        assertThat(EngineBasicsTest.keys(open)).hasSize(200);
        open.close();
        t.put(key(100), b("a")); // a key the range delete covered, written again; the range folds now
        model.put(key(100), "a");
        // crash: the next process opens from the manifest (the log is trimmed past the range delete)
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree r = l.tree("dur");
            verify(r, model, 200);
            assertThat(r.get(key(100))).isPresent();
        }
    }

    private LatticeConfig.Builder smallChronicle() {
        return LsmTest.small(LatticeConfig.builder()).partitions(3).uri("chronicle:" + dir.resolve("data"));
    }

    @Test
    void rangeDeletesLiveThroughFlushesCompactionsAndReopens() {
        TreeMap<String, String> model = new TreeMap<>();
        Random r = new Random(11);
        int space = 2_000;
        for (int session = 0; session < 3; session++) {
            try (Lattice l = Lattice.open(smallChronicle().build())) {
                TreeImpl t = (TreeImpl) l.tree("lsm");
                verify(t, model, space);
                for (int round = 0; round < 4; round++) {
                    for (int i = 0; i < 800; i++) {
                        int k = r.nextInt(space);
                        String v = "s" + session + "r" + round + "-" + i + "x".repeat(r.nextInt(100));
                        t.put(key(k), b(v));
                        model.put(key(k), v);
                    }
                    int from = r.nextInt(space - 100);
                    deleteRange(t, model, from, from + 1 + r.nextInt(400));
                    if (round % 2 == 0) {
                        assertThat(t.flushNow(30_000)).isTrue();
                    }
                    verify(t, model, space);
                }
                assertThat(l.stats().compactions()).as("compactions ran").isPositive();
            }
        }
        try (Lattice l = Lattice.open(smallChronicle().build())) {
            verify(l.tree("lsm"), model, space);
        }
    }

    @Test
    void compactionDropsCoveredEntriesAndFinallyTheRangeDeleteItself() {
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = LsmTest.small(LatticeConfig.builder()).partitions(1).level0CompactionTrigger(2)
                .memtableBytes(4 << 20); // only the explicit flushes
        TreeMap<String, String> model = new TreeMap<>();
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            TreeImpl t = (TreeImpl) l.tree("gc");
            fill(t, model, 0, 1_000, "v");
            assertThat(t.flushNow(30_000)).isTrue();
            deleteRange(t, model, 100, 900);
            assertThat(runRanges(t)).isEmpty();
            assertThat(t.flushNow(30_000)).isTrue(); // second level-0 run: compaction into the bottom level
            verify(t, model, 1_000);
            PartitionState ps = t.pipelines()[0].state;
            assertThat(ps.layers.current().runs()).allSatisfy(h -> assertThat(h.ref.level()).isEqualTo(1));
            long entries = ps.layers.current().runs().stream().mapToLong(h -> h.ref.meta().entries()).sum();
            assertThat(entries).as("covered entries dropped").isEqualTo(200);
            assertThat(runRanges(t)).as("the range delete is dropped in the bottommost level").isEmpty();
        }
        // crash-like reopen (the first lattice is not closed here: its provider holds nothing more)
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            verify(l.tree("gc"), model, 1_000);
        }
    }

    @Test
    void aRangeDeleteAboveOlderRunsIsKeptUntilTheBottom() {
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = LsmTest.small(LatticeConfig.builder()).partitions(1).level0CompactionTrigger(4)
                .memtableBytes(4 << 20); // only the explicit flushes
        TreeMap<String, String> model = new TreeMap<>();
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            TreeImpl t = (TreeImpl) l.tree("keep");
            fill(t, model, 0, 500, "v");
            assertThat(t.flushNow(30_000)).isTrue();
            deleteRange(t, model, 0, 400);
            assertThat(t.flushNow(30_000)).isTrue();
            List<RangeTombstone> rs = runRanges(t);
            assertThat(rs).as("the flushed run holds the range delete").hasSize(1);
            assertThat(rs.get(0).from()).isEqualTo(key(0));
            assertThat(rs.get(0).to()).isEqualTo(key(400));
            verify(t, model, 500);
        }
        Lattice crashed = EngineBasicsTest.open(storage, cfg); // not closed: the next open fences it
        verify(crashed.tree("keep"), model, 500);
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree t = l.tree("keep");
            verify(t, model, 500);
            fill(t, model, 0, 10, "after");
            verify(t, model, 500);
        }
    }

    private static List<RangeTombstone> runRanges(TreeImpl t) {
        List<RangeTombstone> out = new ArrayList<>();
        for (LogPipeline p : t.pipelines()) {
            p.state.layers.current().runs().forEach(h -> out.addAll(h.ref.meta().ranges()));
        }
        return out;
    }

    @Test
    void replayRebuildsRangeDeletesWrittenAfterTheLastCheckpoint() {
        InMemoryStorage storage = new InMemoryStorage();
        TreeMap<String, String> model = new TreeMap<>();
        Lattice first = EngineBasicsTest.open(storage, LatticeConfig.builder().partitions(4));
        Tree t = first.tree("rp");
        fill(t, model, 0, 400, "v");
        deleteRange(t, model, 10, 390);
        fill(t, model, 100, 110, "w");
        verify(t, model, 400);
        // crash: no close, nothing checkpointed; the next open replays the log
        try (Lattice l = EngineBasicsTest.open(storage, LatticeConfig.builder().partitions(4))) {
            verify(l.tree("rp"), model, 400);
        }
        try (Lattice l = EngineBasicsTest.open(storage, LatticeConfig.builder().partitions(4))) {
            verify(l.tree("rp"), model, 400);
        }
    }

    @Test
    void aMovedLogKeepsItsRangeDeletes() {
        WalStorageProvider def = Providers.open("chronicle:" + dir.resolve("def"));
        WalStorageProvider other = Providers.open("chronicle:" + dir.resolve("other"));
        TreeMap<String, String> model = new TreeMap<>();
        LatticeConfig.Builder cfg = LatticeConfig.builder().provider(def, true).partitions(2)
                .namedProvider("b", other, true);
        try (Lattice l = Lattice.open(cfg.build())) {
            TreeImpl t = (TreeImpl) l.tree("mv");
            fill(t, model, 0, 300, "v");
            assertThat(t.flushNow(30_000)).isTrue();
            deleteRange(t, model, 50, 250);
            assertThat(t.flushNow(30_000)).isTrue();
            deleteRange(t, model, 0, 20); // in the memtable and the log tail at the move
            l.move("mv", Map.of(1, "b"), Duration.ofSeconds(30));
            verify(t, model, 300);
            fill(t, model, 60, 70, "after");
            verify(t, model, 300);
        }
        try (Lattice l = Lattice.open(LatticeConfig.builder()
                .provider(Providers.open("chronicle:" + dir.resolve("def")), true)
                .namedProvider("b", Providers.open("chronicle:" + dir.resolve("other")), true).build())) {
            assertThat(l.placements().get("mv").keys()).containsExactly("default", "b");
            verify(l.tree("mv"), model, 300);
        }
    }

    /** A read-only follower sees range deletes and expiries as the owner does, through the log and through runs. */
    @Test
    void aFollowerSeesRangeDeletesAndExpiries() {
        InMemoryStorage storage = new InMemoryStorage();
        ManualClock clock = new ManualClock();
        TreeMap<String, String> model = new TreeMap<>();
        LatticeConfig.Builder cfg = LsmTest.small(LatticeConfig.builder()).partitions(2).clock(clock)
                .followerPollInterval(Duration.ofMillis(10));
        try (Lattice owner = EngineBasicsTest.open(storage, cfg)) {
            TreeImpl t = (TreeImpl) owner.tree("fo");
            fill(t, model, 0, 300, "v");
            assertThat(t.flushNow(30_000)).isTrue();
            deleteRange(t, model, 100, 200);
            t.put(key(150), b("ttl"), Duration.ofSeconds(5));
            model.put(key(150), "ttl");
            try (LatticeFollower f = Lattice.openReadOnly(LatticeConfig.builder().clock(clock)
                    .followerPollInterval(Duration.ofMillis(10))
                    .provider(new InMemoryWalStorageProvider(storage), true).build())) {
                Tree ft = f.tree("fo");
                assertThat(f.awaitCaughtUp("fo", 10_000)).isTrue();
                verify(ft, model, 300);
                assertThat(t.flushNow(30_000)).isTrue(); // the range delete moves into a run
                deleteRange(t, model, 0, 10);
                assertThat(f.awaitCaughtUp("fo", 10_000)).isTrue();
                verify(ft, model, 300);
                clock.advance(5_000);
                model.remove(key(150));
                verify(ft, model, 300);
                verify(t, model, 300);
            }
        }
    }

    @Test
    void withoutARunStoreTheCheckpointAppliesTheRangeDelete() {
        InMemoryStorage storage = new InMemoryStorage();
        TreeMap<String, String> model = new TreeMap<>();
        try (Lattice l = Lattice.open(LatticeConfig.builder().partitions(2)
                .provider(new WithoutRunStore(new InMemoryWalStorageProvider(storage)), true).build())) {
            Tree t = l.tree("nr");
            fill(t, model, 0, 200, "v");
            deleteRange(t, model, 30, 170);
            verify(t, model, 200);
        } // close checkpoints every partition (whole-partition snapshots)
        try (Lattice l = Lattice.open(LatticeConfig.builder().partitions(2)
                .provider(new WithoutRunStore(new InMemoryWalStorageProvider(storage)), true).build())) {
            Tree t = l.tree("nr");
            verify(t, model, 200);
            assertThat(l.provider().checkpoints().latest(new LogId("nr", 0))).isPresent();
        }
    }
}
