package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A compaction reads its inputs without adding their blocks to the block cache (they are about to be deleted and
 * would push out the blocks gets need), while gets still fill it.
 */
class CompactionBlockCacheTest {

    private static double cachedBytes(Lattice l) {
        return l.meterRegistry().get("lattice.block.cache.bytes").gauge().value();
    }

    @Test
    void compactionInputsDoNotFillTheBlockCacheButGetsDo() {
        LatticeConfig.Builder config = LatticeConfig.builder().partitions(1).memtableBytes(64 << 10)
                .targetRunBytes(64 << 10).level0CompactionTrigger(2).levelSizeRatio(10).runBlockBytes(4096)
                .blockCacheBytes(16 << 20).checkpointEveryEntries(1_000_000);
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage(), config)) {
            TreeImpl t = (TreeImpl) l.tree("cache");
            for (int batch = 0; batch < 3_000; batch += 100) {
                Map<String, byte[]> m = new LinkedHashMap<>();
                for (int i = batch; i < batch + 100; i++) {
                    m.put(String.format("k%05d", i), EngineBasicsTest.b("v" + i + "-" + "x".repeat(200)));
                }
                t.putAll(m);
            }
            int flushes = 0;
            while (l.stats().compactions() < 2) {
                assertThat(flushes).as("two compactions within 40 more flushes").isLessThan(40);
                t.put("tiny" + flushes, EngineBasicsTest.b("t"));
                assertThat(t.flushNow(30_000)).isTrue();
                flushes++;
            }
            assertThat(l.stats().compactionBytesWritten()).isPositive();
            assertThat(cachedBytes(l)).as("block cache bytes after %d compactions and no get",
                    l.stats().compactions()).isZero();
            for (int i = 0; i < 3_000; i += 7) {
                assertThat(t.get(String.format("k%05d", i))).isPresent();
            }
            assertThat(cachedBytes(l)).as("block cache bytes after gets").isPositive();
        }
    }
}
