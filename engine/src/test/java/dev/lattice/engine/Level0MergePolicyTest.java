package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When level 0 is merged into level 1 (CompactionPolicy.next): at the trigger while level 1 holds at most one output run,
 * later only once level 0 is as large as level 1 or holds {@code LEVEL0_MAX_RUNS_FACTOR} times the trigger; and the
 * statistics that split the bytes of runs written by flushes from those written by compactions.
 */
class Level0MergePolicyTest {

    private static final int TRIGGER = 2;

    private static LatticeConfig.Builder config(int trigger) {
        // level 1 may hold 10 memtables (640 KiB) before it is merged down: the data below stay in level 1
        return LatticeConfig.builder().partitions(1).memtableBytes(64 << 10).targetRunBytes(64 << 10)
                .level0CompactionTrigger(trigger).levelSizeRatio(10).checkpointEveryEntries(1_000_000)
                .idleMergeDelay(java.time.Duration.ZERO); // the regular rules only (IdleMergeTest covers idle merges)
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

    private static List<RunHandle> level(TreeImpl t, int level) {
        return t.pipelines()[0].state.layers.current().level(level);
    }

    private static long bytes(List<RunHandle> runs) {
        return runs.stream().mapToLong(r -> r.ref.lengthBytes()).sum();
    }

    @Test
    void smallLevel0RunsWaitUntilTheyAreManyOrAsLargeAsLevel1() {
        InMemoryStorage storage = new InMemoryStorage();
        TreeMap<String, String> model = new TreeMap<>();
        try (Lattice l = EngineBasicsTest.open(storage, config(TRIGGER))) {
            TreeImpl t = (TreeImpl) l.tree("policy");
            load(t, model, "k", 0, 1_500); // about 300 KiB: flushes of 64 KiB memtables, merges into level 1
            // tiny flushes until level 0 was merged (at the latest at 4 x the trigger runs)
            int tiny = 0;
            long compactions = l.stats().compactions();
            while (!level(t, 0).isEmpty() || l.stats().compactions() == compactions) {
                assertThat(tiny).as("level 0 merged within %d tiny flushes", 4 * TRIGGER).isLessThan(4 * TRIGGER);
                t.put("tiny" + tiny, EngineBasicsTest.b("t"));
                model.put("tiny" + tiny, "t");
                assertThat(t.flushNow(30_000)).isTrue();
                tiny++;
            }
            long l1 = bytes(level(t, 1));
            assertThat(l1).as("level 1 holds more than one output run").isGreaterThan(64 << 10);
            assertThat(level(t, 2)).as("level 1 is under its target").isEmpty();
            // now level 1 is much larger than level 0 will be: the trigger alone no longer merges
            long before = l.stats().compactions();
            int cap = CompactionPolicy.LEVEL0_MAX_RUNS_FACTOR * TRIGGER;
            for (int run = 1; run < cap; run++) {
                t.put("small" + run, EngineBasicsTest.b("s"));
                model.put("small" + run, "s");
                assertThat(t.flushNow(30_000)).isTrue();
                assertThat(level(t, 0)).as("level-0 runs after %d small flushes", run).hasSize(run);
                assertThat(bytes(level(t, 0))).isLessThan(l1);
            }
            assertThat(l.stats().compactions()).as("no merge below the run cap").isEqualTo(before);
            t.put("small" + cap, EngineBasicsTest.b("s"));
            model.put("small" + cap, "s");
            assertThat(t.flushNow(30_000)).isTrue();
            assertThat(level(t, 0)).as("merged at %d level-0 runs", cap).isEmpty();
            assertThat(l.stats().compactions()).isEqualTo(before + 1);
            model.forEach((k, v) -> assertThat(t.get(k).map(EngineBasicsTest::s)).as(k).contains(v));

            LatticeStats s = l.stats();
            System.out.printf("[level-0 policy] level 1 %d bytes, stats %s%n", l1, s);
            assertThat(s.flushBytesWritten()).isPositive();
            assertThat(s.compactionBytesWritten()).isPositive();
            assertThat(s.flushBytesWritten() + s.compactionBytesWritten()).isEqualTo(s.runBytesWritten());
            assertThat(s.runBytesWrittenByLevel().get(0)).isEqualTo(s.flushBytesWritten());
            assertThat(s.runBytesWrittenByLevel().stream().mapToLong(Long::longValue).sum())
                    .isEqualTo(s.runBytesWritten());
            assertThat(s.runBytesWrittenByLevel()).hasSize(2);
        }
    }

    @Test
    void aLevel0AsLargeAsLevel1IsMergedBeforeTheRunCap() {
        int trigger = 4; // run cap 16: far above the flushes that make level 0 as large as level 1
        TreeMap<String, String> model = new TreeMap<>();
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage(), config(trigger))) {
            TreeImpl t = (TreeImpl) l.tree("size");
            load(t, model, "a", 0, 1_500);
            int tiny = 0;
            // until level 0 was merged into level 1 and only level 1 holds data (the load's own flushes run in the
            // background, so right after it level 0 and level 1 may both still be empty)
            while (!level(t, 0).isEmpty() || level(t, 1).isEmpty()) {
                assertThat(tiny).isLessThan(CompactionPolicy.LEVEL0_MAX_RUNS_FACTOR * trigger);
                t.put("tiny" + tiny, EngineBasicsTest.b("t"));
                model.put("tiny" + tiny, "t");
                assertThat(t.flushNow(30_000)).isTrue();
                tiny++;
            }
            long l1 = bytes(level(t, 1));
            assertThat(l1).isGreaterThan(64 << 10);
            long flushes = l.stats().flushes();
            long compactions = l.stats().compactions();
            load(t, model, "b", 0, 2_000); // a third more than level 1 holds
            assertThat(t.flushNow(30_000)).isTrue();
            long flushed = l.stats().flushes() - flushes;
            System.out.printf("[level-0 policy] level 1 %d bytes, %d flushes, level 0 now %d runs%n", l1, flushed,
                    level(t, 0).size());
            assertThat(flushed).as("flushes of the second load").isLessThan(
                    CompactionPolicy.LEVEL0_MAX_RUNS_FACTOR * trigger);
            assertThat(l.stats().compactions()).as("merged once level 0 was as large as level 1")
                    .isGreaterThan(compactions);
            model.forEach((k, v) -> assertThat(t.get(k).map(EngineBasicsTest::s)).as(k).contains(v));
        }
    }
}
