package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LatticeConfig.Builder#runBlockBytes}: runs flushed with a small block size hold proportionally more data
 * blocks than with the default (the in-memory store's preferred read size, 64 KiB), read back the same, and runs
 * written with one block size stay readable after a reopen with another (the size is a property of each run).
 */
class RunBlockBytesTest {

    private static final int KEYS = 8_000;

    private static LatticeConfig.Builder config(InMemoryStorage storage, int blockBytes) {
        return LatticeConfig.builder().provider(new InMemoryWalStorageProvider(storage), true).partitions(2)
                .memtableBytes(4 << 20).checkpointEveryEntries(1_000_000).runBlockBytes(blockBytes);
    }

    private static long blocksAfterLoad(InMemoryStorage storage, int blockBytes) {
        try (Lattice l = Lattice.open(config(storage, blockBytes).build())) {
            Tree t = l.tree("t");
            Map<String, byte[]> m = new LinkedHashMap<>();
            for (int i = 0; i < KEYS; i++) {
                m.put(String.format("k-%06d", i), new byte[100]);
            }
            t.putAll(m);
            assertThat(((TreeImpl) t).flushNow(60_000)).isTrue();
            long blocks = 0;
            for (LogPipeline lp : ((TreeImpl) t).everyPipeline("the test")) {
                for (RunHandle r : lp.state.layers.current().runs()) {
                    blocks += r.ref.meta().blocks();
                }
            }
            return blocks;
        }
    }

    @Test
    void smallBlocksMakeMoreBlocksAndReadBackTheSame() {
        InMemoryStorage small = new InMemoryStorage();
        InMemoryStorage dflt = new InMemoryStorage();
        long smallBlocks = blocksAfterLoad(small, 4096);
        long defaultBlocks = blocksAfterLoad(dflt, 0);
        // about 940 KB of entries: at least 200 blocks of 4 KiB, at most a few dozen of 64 KiB
        assertThat(smallBlocks).as("blocks with runBlockBytes 4096").isGreaterThanOrEqualTo(200);
        assertThat(defaultBlocks).as("blocks with the default (64 KiB)").isLessThanOrEqualTo(40);
        // reopen the 4 KiB runs with the default setting: every key reads back, and a scan sees them in order
        try (Lattice l = Lattice.open(config(small, 0).build())) {
            Tree t = l.tree("t");
            for (int i = 0; i < KEYS; i += 7) {
                assertThat(t.get(String.format("k-%06d", i))).isPresent();
            }
            assertThat(t.count()).isEqualTo(KEYS);
        }
    }

    @Test
    void aBlockSizeOutsideItsBoundsIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> LatticeConfig.builder().runBlockBytes(512))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("runBlockBytes")
                .hasMessageContaining("512");
        assertThatThrownBy(() -> LatticeConfig.builder().runBlockBytes(2 << 20))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("runBlockBytes");
        LatticeConfig.builder().runBlockBytes(0).runBlockBytes(1024).runBlockBytes(1 << 20);
    }
}
