package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import dev.lattice.testkit.CountingProvider;
import dev.lattice.testkit.SpiOperation;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 17's target for Bloom filters: a get of an absent key whose partition holds several runs covering its key
 * range reads the run store at most 0.05 times on average (counted through the testkit's counting decorator on the
 * real in-memory provider: a count, not a speed). The absent keys fall between present ones, so no run is skipped
 * by its key range; only the filters can spare the reads.
 */
class AbsentKeyReadCostTest {

    private static final int KEYS = 40_000;

    private static String key(int i) {
        return String.format("k-%08d", i);
    }

    private static LatticeConfig.Builder config(LatticeConfig.Builder b) {
        return b.partitions(4).memtableBytes(256 << 10).targetRunBytes(256 << 10).level0CompactionTrigger(4)
                .levelSizeRatio(4).blockCacheBytes(1 << 20).checkpointEveryEntries(1_000_000);
    }

    @Test
    void aGetOfAnAbsentKeyRarelyReadsTheRunStore() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice l = Lattice.open(config(LatticeConfig.builder())
                .provider(new InMemoryWalStorageProvider(storage), true).build())) {
            Tree t = l.tree("t");
            for (int batch = 0; batch < KEYS; batch += 1_000) {
                Map<String, byte[]> m = new LinkedHashMap<>();
                for (int i = batch; i < batch + 1_000; i++) {
                    m.put(key(2 * i), new byte[100]); // even numbers present, odd ones absent
                }
                t.putAll(m);
            }
            assertThat(((TreeImpl) t).flushNow(60_000)).isTrue();
        }
        CountingProvider counting = new CountingProvider(new InMemoryWalStorageProvider(storage));
        try (Lattice l = Lattice.open(config(LatticeConfig.builder()).provider(counting, true).build())) {
            Tree t = l.tree("t");
            int runs = 0;
            for (LogPipeline lp : ((TreeImpl) t).everyPipeline("the test")) {
                runs += lp.state.layers.current().runs().size();
            }
            assertThat(runs).as("runs to look through").isGreaterThanOrEqualTo(8);
            // open every run's reader (its index and filter load on first use), as any use of the tree does
            for (int i = 0; i < KEYS; i += 97) {
                assertThat(t.get(key(2 * i))).isPresent();
            }
            CountingProvider.Counts before = counting.snapshot();
            int gets = 20_000;
            for (int i = 0; i < gets; i++) {
                assertThat(t.get(key(2 * ((i * 7919) % KEYS) + 1))).isEmpty();
            }
            long reads = counting.snapshot().minus(before).calls(SpiOperation.RUN_READ);
            double perGet = reads / (double) gets;
            System.out.printf("[absent-key gets] %d runs, %d gets of absent keys, %d run-store reads: %.4f per get%n",
                    runs, gets, reads, perGet);
            assertThat(perGet).as("run-store reads per get of an absent key").isLessThanOrEqualTo(0.05);
        }
    }
}
