package dev.lattice.engine;

import dev.lattice.engine.lsm.Manifest;
import dev.lattice.engine.lsm.ManifestCodec;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Partitions as LSM trees: memtable flushes into level-0 runs, leveled compaction, manifests as checkpoints, reads
 * and scans through every layer, opens that read the manifest and the log tail, orphan collection.
 */
class LsmTest {

    @TempDir
    Path dir;

    /** Small memtables and runs, so that a few thousand writes flush and compact many times. */
    static LatticeConfig.Builder small(LatticeConfig.Builder b) {
        return b.partitions(2).memtableBytes(64 << 10).targetRunBytes(64 << 10).level0CompactionTrigger(2)
                .levelSizeRatio(2).blockCacheBytes(256 << 10).checkpointEveryEntries(1_000_000);
    }

    private Lattice chronicle(LatticeConfig.Builder b) {
        return Lattice.open(small(b).uri("chronicle:" + dir.resolve("data")).build());
    }

    private static void verify(Tree t, TreeMap<String, String> model) {
        for (Map.Entry<String, String> e : model.entrySet()) {
            assertThat(t.get(e.getKey()).map(EngineBasicsTest::s)).as(e.getKey()).contains(e.getValue());
        }
        List<String> keys = new ArrayList<>();
        List<String> values = new ArrayList<>();
        try (ScanCursor c = t.scan(null, null, false)) {
            while (c.hasNext()) {
                TreeEntry e = c.next();
                keys.add(e.key());
                values.add(s(e.value()));
            }
        }
        assertThat(keys).containsExactlyElementsOf(model.keySet());
        assertThat(values).containsExactlyElementsOf(model.values());
        List<String> reversed = new ArrayList<>();
        try (ScanCursor c = t.scan(null, null, true)) {
            while (c.hasNext()) {
                reversed.add(c.next().key());
            }
        }
        assertThat(reversed).containsExactlyElementsOf(model.descendingKeySet());
        assertThat(t.count()).isEqualTo(model.size());
        // a bounded range through every layer
        String from = "k0100";
        String to = "k0300";
        List<String> range = new ArrayList<>();
        try (ScanCursor c = t.scan(from, to, false)) {
            while (c.hasNext()) {
                range.add(c.next().key());
            }
        }
        assertThat(range).containsExactlyElementsOf(model.subMap(from, to).keySet());
        List<String> rangeReversed = new ArrayList<>();
        try (ScanCursor c = t.scan(from, to, true)) {
            while (c.hasNext()) {
                rangeReversed.add(c.next().key());
            }
        }
        assertThat(rangeReversed).containsExactlyElementsOf(model.subMap(from, true, to, false).descendingKeySet());
    }

    private static void randomWrites(Tree t, TreeMap<String, String> model, Random r, int n, String tag) {
        for (int i = 0; i < n; i++) {
            String k = String.format("k%04d", r.nextInt(2_000));
            int op = r.nextInt(10);
            if (op < 7) {
                String v = tag + "-" + i + "-" + "x".repeat(r.nextInt(200));
                t.put(k, b(v));
                model.put(k, v);
            } else if (op < 9) {
                assertThat(t.delete(k)).as("delete " + k).isEqualTo(model.remove(k) != null);
            } else {
                String v = tag + "-pia-" + i;
                assertThat(t.putIfAbsent(k, b(v))).as("putIfAbsent " + k).isEqualTo(model.putIfAbsent(k, v) == null);
            }
        }
    }

    @Test
    void flushesAndCompactionsKeepEveryValueAcrossReopens() {
        TreeMap<String, String> model = new TreeMap<>();
        Random r = new Random(7);
        for (int session = 0; session < 3; session++) {
            try (Lattice l = chronicle(LatticeConfig.builder())) {
                Tree t = l.tree("lsm");
                verify(t, model);
                randomWrites(t, model, r, 6_000, "s" + session);
                verify(t, model);
                assertThat(((TreeImpl) t).flushNow(30_000)).isTrue();
                verify(t, model);
                LatticeStats st = l.stats();
                assertThat(st.flushes()).as("flushes").isGreaterThan(2);
                assertThat(st.compactions()).as("compactions").isGreaterThan(0);
            }
        }
        try (Lattice l = chronicle(LatticeConfig.builder())) {
            Tree t = l.tree("lsm");
            verify(t, model);
            Optional<CheckpointInfo> cp = l.provider().checkpoints().latest(new LogId("lsm", 0));
            assertThat(cp).isPresent();
            assertThat(cp.get().formatVersion()).as("the checkpoint is a manifest").isEqualTo(ManifestCodec.FORMAT);
            assertThat(l.stats().replayCheckpointBytes()).as("an open reads manifests, not the data")
                    .isLessThan(8 * 1024);
        }
    }

    /** Put, flush, delete, flush, compaction of only the newer runs: the old value never reappears. */
    @Test
    void aDeletedValueNeverReappears() {
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = small(LatticeConfig.builder()).partitions(1).level0CompactionTrigger(3);
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            TreeImpl t = (TreeImpl) l.tree("res");
            t.put("victim", b("old"));
            t.put("other", b("o"));
            assertThat(t.flushNow(10_000)).isTrue(); // L0: victim=old
            for (int round = 0; round < 6; round++) {
                if (round == 0) {
                    assertThat(t.delete("victim")).isTrue();
                }
                t.put("filler-" + round, b("f" + round));
                assertThat(t.flushNow(10_000)).isTrue();
                assertThat(t.get("victim")).as("after round " + round).isEmpty();
                try (ScanCursor c = t.scan(null, null, false)) {
                    while (c.hasNext()) {
                        assertThat(c.next().key()).isNotEqualTo("victim");
                    }
                }
            }
            assertThat(l.stats().compactions()).isGreaterThan(0);
        }
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree t = l.tree("res");
            assertThat(t.get("victim")).isEmpty();
            assertThat(t.get("other").map(EngineBasicsTest::s)).contains("o");
            assertThat(t.count()).isEqualTo(7);
        }
    }

    /** A scan that started before a flush and a compaction reads on through them, whole and in order. */
    @Test
    void aScanOutlivesTheRunsItStartedOn() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice l = EngineBasicsTest.open(storage, small(LatticeConfig.builder()).partitions(1))) {
            TreeImpl t = (TreeImpl) l.tree("scan");
            TreeMap<String, String> model = new TreeMap<>();
            for (int i = 0; i < 3_000; i++) {
                String k = String.format("k%05d", i);
                t.put(k, b("v" + i));
                model.put(k, "v" + i);
            }
            assertThat(t.flushNow(10_000)).isTrue();
            List<String> seen = new ArrayList<>();
            try (ScanCursor c = t.scan(null, null, false)) {
                for (int i = 0; i < 100; i++) {
                    seen.add(c.next().key());
                }
                for (int i = 0; i < 3_000; i++) { // overwrite everything: flushes and compactions replace the runs
                    t.put(String.format("k%05d", i), b("w" + i));
                }
                assertThat(t.flushNow(10_000)).isTrue();
                assertThat(l.stats().compactions()).isGreaterThan(0);
                while (c.hasNext()) {
                    seen.add(c.next().key());
                }
            }
            assertThat(seen).containsExactlyElementsOf(model.keySet());
            assertThat(t.get("k00007").map(EngineBasicsTest::s)).contains("w7");
        }
    }

    /**
     * Runs that no manifest names (a crash between a run write and the manifest publish) go at the next open, when
     * an earlier owner (a lower fence epoch in the run id) wrote them.
     */
    @Test
    void orphanRunsAreCollectedAtOpen() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = small(LatticeConfig.builder()).partitions(1);
        LogId log = new LogId("orph", 0);
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            TreeImpl t = (TreeImpl) l.tree("orph");
            for (int i = 0; i < 500; i++) {
                t.put("k" + i, b("v" + i));
            }
            assertThat(t.flushNow(10_000)).isTrue();
            WalStorageProvider p = l.provider();
            var fence = p.claim(new LogId("orph-scratch", 0)); // any fence: the memory run store checks nothing else
            byte[] junk = new byte[100];
            p.runs().write(log, new dev.lattice.spi.Fence(log, fence.epoch() + 1_000_000),
                    new RunId("e1-0-1"), new java.io.ByteArrayInputStream(junk), junk.length);
        }
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree t = l.tree("orph");
            assertThat(t.get("k7").map(EngineBasicsTest::s)).contains("v7");
            WalStorageProvider p = l.provider();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(p.runs().list(log)).extracting(i -> i.id().value()).doesNotContain("e1-0-1"));
            Manifest m;
            CheckpointInfo info = p.checkpoints().latest(log).orElseThrow();
            try (InputStream in = p.checkpoints().open(log, info)) {
                m = ManifestCodec.decode(log, info.throughOffset(), in.readAllBytes());
            }
            assertThat(p.runs().list(log)).extracting(i -> i.id())
                    .containsExactlyInAnyOrderElementsOf(m.runs().stream().map(Manifest.RunRef::id).toList());
        }
    }

    /** Atomic writes span flushes: a write prepared before a flush and resolved after it is whole. */
    @Test
    void atomicWritesAcrossFlushes() {
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = small(LatticeConfig.builder()).partitions(4);
        TreeMap<String, String> model = new TreeMap<>();
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            TreeImpl t = (TreeImpl) l.tree("atom");
            Tree other = l.tree("atom2");
            for (int i = 0; i < 300; i++) {
                Map<String, byte[]> batch = new TreeMap<>();
                for (int j = 0; j < 4; j++) {
                    String k = String.format("k%04d", (i * 7 + j * 13) % 1_000);
                    batch.put(k, b("a" + i));
                    model.put(k, "a" + i);
                }
                t.putAllAtomic(batch);
                l.atomic().put(t, "x" + i, b("c")).put(other, "x" + i, b("d")).commit();
                model.put("x" + i, "c");
                if (i % 50 == 0) {
                    assertThat(t.flushNow(10_000)).isTrue();
                }
            }
            verifyPoints(t, model);
        }
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            verifyPoints(l.tree("atom"), model);
            assertThat(l.tree("atom2").count()).isEqualTo(300);
        }
    }

    private static void verifyPoints(Tree t, TreeMap<String, String> model) {
        model.forEach((k, v) -> assertThat(t.get(k).map(EngineBasicsTest::s)).as(k).contains(v));
        assertThat(t.count()).isEqualTo(model.size());
    }

    /** A blocking putAll that finds the memory budget spent waits for flushes instead of failing. */
    @Test
    void aBlockingPutAllWaitsForFlushesWhenTheBudgetIsSpent() {
        InMemoryStorage storage = new InMemoryStorage();
        LatticeConfig.Builder cfg = small(LatticeConfig.builder()).memoryBudgetBytes(1L << 20)
                .memtableBytes(256 << 10);
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree t = l.tree("budget");
            byte[] v = new byte[1024];
            for (int round = 0; round < 20; round++) { // 20 x ~0.6 MB through a 1 MiB budget
                Map<String, byte[]> batch = new TreeMap<>();
                for (int i = 0; i < 500; i++) {
                    batch.put(String.format("k%02d-%04d", round, i), v);
                }
                t.putAll(batch);
            }
            assertThat(t.count()).isEqualTo(10_000);
            assertThat(l.liveDataBytes()).isLessThanOrEqualTo(1L << 20);
            assertThat(l.stats().flushes()).isGreaterThan(5);
        }
    }
}
