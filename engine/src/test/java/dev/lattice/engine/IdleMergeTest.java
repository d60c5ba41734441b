package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The idle merge of level 0 (CompactionPolicy.idle, idleMergeDelay): a partition that stopped changing merges its
 * level-0 runs (its memtable stays), into level 1 while level 1 is small, else into one sorted run; deletes and
 * range deletes over older runs survive it; a trickle of writes does not rewrite level 0 again.
 */
class IdleMergeTest {

    private static final Duration DELAY = Duration.ofMillis(300);

    private static LatticeConfig.Builder config() {
        return LatticeConfig.builder().partitions(1).memtableBytes(64 << 10).targetRunBytes(64 << 10)
                .level0CompactionTrigger(4).levelSizeRatio(10).checkpointEveryEntries(1_000_000)
                .idleMergeDelay(DELAY).ownershipCheckInterval(Duration.ofMillis(100));
    }

    /**
     * Key {@code i}: spread over the key space (a multiplicative hash first), so every flush's run spans the keys of
     * the partition and overlaps the others, as with real keys; sequential keys would make key-disjoint runs, which
     * count as one sorted run.
     */
    static String key(String prefix, int i) {
        return String.format("%s%08x-%05d", prefix, i * 0x9E3779B1, i);
    }

    /** Writes keys {@code prefix from..to-1} with values of about 210 bytes (flushes of 64 KiB memtables). */
    private static void load(Tree t, TreeMap<String, String> model, String prefix, int from, int to) {
        for (int batch = from; batch < to; batch += 100) {
            Map<String, byte[]> m = new LinkedHashMap<>();
            for (int i = batch; i < Math.min(to, batch + 100); i++) {
                String k = key(prefix, i);
                String v = "v" + i + "-" + "x".repeat(200);
                m.put(k, EngineBasicsTest.b(v));
                model.put(k, v);
            }
            t.putAll(m);
        }
    }

    /** Loads batches of 100 keys until level 0 holds two runs (below the trigger), with something in the memtable. */
    private static void loadTwoLevel0Runs(TreeImpl t, TreeMap<String, String> model) throws InterruptedException {
        int next = 0;
        while (level(t, 0).size() < 2 || t.pipelines()[0].memtableBytes() == 0) {
            assertThat(next).as("two level-0 runs within 5,000 keys").isLessThan(5_000);
            load(t, model, "k", next, next + 100);
            next += 100;
            Thread.sleep(20); // let the background flush publish its run
        }
        assertThat(level(t, 0)).hasSizeLessThan(4);
    }

    private static List<RunHandle> level(TreeImpl t, int level) {
        return t.pipelines()[0].state.layers.current().level(level);
    }

    /** What the failure message of {@link #await} shows: the test's tree, when set. */
    private static final java.util.concurrent.atomic.AtomicReference<TreeImpl> TREE = new java.util.concurrent.atomic.AtomicReference<>();
    private static final java.util.function.Supplier<String> state = () -> {
        TreeImpl t = TREE.get();
        if (t == null) {
            return "";
        }
        StringBuilder b = new StringBuilder("memtable ").append(t.pipelines()[0].memtableBytes()).append(" bytes; runs");
        for (RunHandle r : t.pipelines()[0].state.layers.current().runs()) {
            b.append(" L").append(r.ref.level()).append(' ').append(r.ref.lengthBytes()).append(" [")
                    .append(r.ref.meta().firstKey()).append("..").append(r.ref.meta().lastKey()).append(']');
        }
        return b.toString();
    };

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for: %s (%s)", what, state.get()).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private static void assertModel(Tree t, TreeMap<String, String> model, Set<String> deleted) {
        model.forEach((k, v) -> assertThat(t.get(k).map(EngineBasicsTest::s)).as(k).contains(v));
        deleted.forEach(k -> assertThat(t.get(k)).as("deleted %s", k).isEmpty());
        assertThat(t.count()).isEqualTo(model.size());
    }

    @Test
    void anIdlePartitionWithASmallLevel1MergesLevel0IntoLevel1() throws Exception {
        TreeMap<String, String> model = new TreeMap<>();
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage(), config())) {
            TreeImpl t = (TreeImpl) l.tree("idle1");
            loadTwoLevel0Runs(t, model);
            await("level 0 merged into level 1", () -> level(t, 0).isEmpty() && !level(t, 1).isEmpty());
            assertThat(t.pipelines()[0].memtableBytes()).as("the memtable is not flushed for it").isPositive();
            assertModel(t, model, Set.of());
        }
    }

    @Test
    void anIdlePartitionWithALargeLevel1MergesLevel0IntoOneRunAndKeepsItsDeletes() throws Exception {
        TreeMap<String, String> model = new TreeMap<>();
        Set<String> deleted = new HashSet<>();
        InMemoryStorage storage = new InMemoryStorage();
        // first everything in level 1, by the regular rules (trigger 2, no idle merge): tiny flushes until level 0
        // was merged, at the latest at the run cap of 4 x 2 runs
        try (Lattice l = EngineBasicsTest.open(storage, config().level0CompactionTrigger(2)
                .idleMergeDelay(Duration.ZERO))) {
            TreeImpl t = (TreeImpl) l.tree("idle2");
            load(t, model, "a", 0, 1_500);
            for (int tiny = 0; !level(t, 0).isEmpty() || t.pipelines()[0].memtableBytes() > 0; tiny++) {
                assertThat(tiny).as("level 0 merged within 8 tiny flushes").isLessThan(9);
                t.put("a-tiny" + tiny, EngineBasicsTest.b("t"));
                model.put("a-tiny" + tiny, "t");
                assertThat(t.flushNow(30_000)).isTrue();
            }
        }
        // a longer delay here: no idle period may fall between the three hand-made runs below, on a loaded machine
        Duration delay = Duration.ofMillis(1_500);
        try (Lattice l = EngineBasicsTest.open(storage, config().idleMergeDelay(delay))) {
            TreeImpl t = (TreeImpl) l.tree("idle2");
            TREE.set(t);
            assertThat(level(t, 0)).isEmpty();
            Set<RunHandle> level1 = new HashSet<>(level(t, 1));
            long l1Bytes = CompactionPolicy.bytes(level(t, 1));
            assertThat(l1Bytes).isGreaterThan(256 << 10);
            for (int i = 0; i < 1_500; i += 7) { // tombstones above values of level 1
                String k = key("a", i);
                assertThat(t.delete(k)).isTrue();
                model.remove(k);
                deleted.add(k);
            }
            assertThat(t.deleteRange("a5", "a6")).isPositive(); // about a sixteenth of the keys
            model.subMap("a5", "a6").keySet().forEach(deleted::add);
            model.subMap("a5", "a6").clear();
            assertThat(t.flushNow(30_000)).isTrue(); // the deletes: a level-0 run of their own
            long compactions = l.stats().compactions();
            // then three runs of ~35 KB, each flushed by hand (the memtable's own flushes would make their sizes
            // depend on timing): level 0 still smaller than level 1
            for (int run = 0; run < 3; run++) {
                load(t, model, "b", run * 150, run * 150 + 150);
                assertThat(t.flushNow(30_000)).isTrue();
            }
            // one sorted run, plus the run of its own that holds the range delete (its bounds span that range)
            await("level 0 merged", () -> CompactionPolicy.sortedRunBytes(level(t, 0)).length <= 2
                    && l.stats().compactions() > compactions);
            List<RunHandle> merged0 = level(t, 0);
            LatticeStats st = l.stats();
            assertThat(st.runBytesWrittenByLevel().get(0)).as("the idle merge wrote level 0 as a compaction, not a flush")
                    .isGreaterThan(st.flushBytesWritten());
            assertThat(st.flushBytesWritten() + st.compactionBytesWritten()).isEqualTo(st.runBytesWritten());
            assertThat(merged0.size()).as("the merge's output split like any other").isGreaterThan(2);
            RunHandle rangesRun = merged0.get(merged0.size() - 1);
            assertThat(rangesRun.ref.meta().entries()).as("the range delete in a run of its own").isZero();
            assertThat(rangesRun.ref.meta().ranges()).hasSize(1);
            assertThat(CompactionPolicy.sortedRunBytes(merged0.subList(0, merged0.size() - 1))).hasSize(1);
            for (RunHandle r : merged0) { // a run being written is held in the heap: bounded by targetRunBytes
                assertThat(r.ref.lengthBytes()).isLessThan(2 * (64 << 10));
            }
            assertThat(new HashSet<>(level(t, 1))).as("level 1 untouched by the idle merge").isEqualTo(level1);
            assertThat(CompactionPolicy.bytes(level(t, 0))).isLessThan(l1Bytes);
            assertModel(t, model, deleted);

            long merged = l.stats().compactions();
            t.put("trickle", EngineBasicsTest.b("t"));
            model.put("trickle", "t");
            Thread.sleep(3 * delay.toMillis() + 500); // idle again, with a memtable far smaller than level 0
            assertThat(l.stats().compactions()).as("a trickle does not rewrite level 0").isEqualTo(merged);
            assertThat(level(t, 0)).isEqualTo(merged0);
            assertModel(t, model, deleted);
        }
        try (Lattice l = EngineBasicsTest.open(storage, config())) { // and after a reopen
            assertModel(l.tree("idle2"), model, deleted);
        }
    }

    @Test
    void zeroTurnsItOffAndBadDelaysAreRefused() throws Exception {
        TreeMap<String, String> model = new TreeMap<>();
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage(), config().idleMergeDelay(Duration.ZERO))) {
            TreeImpl t = (TreeImpl) l.tree("off");
            loadTwoLevel0Runs(t, model);
            int runs = level(t, 0).size();
            Thread.sleep(3 * DELAY.toMillis() + 500);
            assertThat(level(t, 0)).as("no idle merge when off").hasSize(runs);
            assertThat(t.pipelines()[0].memtableBytes()).isPositive();
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LatticeConfig.builder()
                .idleMergeDelay(Duration.ofMillis(50))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("idleMergeDelay");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LatticeConfig.builder()
                .idleMergeDelay(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
    }
}
