package dev.lattice.engine;

import dev.lattice.spi.CorruptRunException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.FaultInjectingProvider.FaultRule;
import dev.lattice.testkit.SpiOperation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static dev.lattice.engine.EngineBasicsTest.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Faults in flushes and compactions (run writes, manifest publishes) and damaged runs. */
class LsmFaultTest {

    @TempDir
    Path dir;

    /** Failing run writes and manifest publishes are retried; no value is lost and no orphan stays. */
    @Test
    void failedRunWritesAndPublishesAreRetriedAndLeaveNothingBehind() {
        InMemoryStorage storage = new InMemoryStorage();
        FaultInjectingProvider faulty = new FaultInjectingProvider(new InMemoryWalStorageProvider(storage), 3);
        faulty.inject(FaultRule.failBefore(SpiOperation.RUN_WRITE).times(3));
        faulty.inject(FaultRule.failAfter(SpiOperation.RUN_WRITE).afterSkipping(2).times(2));
        faulty.inject(FaultRule.failBefore(SpiOperation.CHECKPOINT_PUBLISH).afterSkipping(1).times(2));
        LatticeConfig.Builder cfg = LsmTest.small(LatticeConfig.builder()).partitions(1);
        try (Lattice l = Lattice.open(cfg.provider(faulty, false).build())) {
            TreeImpl t = (TreeImpl) l.tree("f");
            for (int i = 0; i < 3_000; i++) {
                t.put(String.format("k%05d", i), b("v" + i));
            }
            assertThat(t.flushNow(30_000)).isTrue();
            for (int i = 0; i < 3_000; i += 7) {
                assertThat(t.get(String.format("k%05d", i)).map(EngineBasicsTest::s)).contains("v" + i);
            }
            assertThat(l.stats().flushes()).isGreaterThan(0);
        }
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree t = l.tree("f");
            assertThat(t.count()).isEqualTo(3_000);
            InMemoryWalStorageProvider p = new InMemoryWalStorageProvider(storage);
            LogId log = new LogId("f", 0);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() -> {
                dev.lattice.engine.lsm.Manifest m = manifest(p, log);
                assertThat(p.runs().list(log)).as("no orphan after the reopen").extracting(r -> r.id())
                        .containsExactlyInAnyOrderElementsOf(
                                m.runs().stream().map(dev.lattice.engine.lsm.Manifest.RunRef::id).toList());
            });
        }
    }

    /**
     * The disk-full case: every trim fails after its manifest was published (the trim file cannot be written). The
     * published manifest's runs must stay: a publish counts as done once the provider accepted it, whatever fails
     * after it. The reopen reads every value through that manifest.
     */
    @Test
    void aTrimThatFailsAfterThePublishKeepsThePublishedRuns() {
        InMemoryStorage storage = new InMemoryStorage();
        FaultInjectingProvider faulty = new FaultInjectingProvider(new InMemoryWalStorageProvider(storage), 3);
        faulty.inject(FaultRule.failBefore(SpiOperation.TRIM).times(1_000_000));
        LatticeConfig.Builder cfg = LsmTest.small(LatticeConfig.builder()).partitions(1);
        try (Lattice l = Lattice.open(cfg.provider(faulty, false).build())) {
            TreeImpl t = (TreeImpl) l.tree("t");
            for (int i = 0; i < 2_000; i++) {
                t.put(String.format("k%05d", i), b("v" + i));
            }
            assertThat(t.flushNow(30_000)).isTrue();
            assertThat(l.stats().flushes()).isGreaterThan(0);
        }
        try (Lattice l = EngineBasicsTest.open(storage, cfg)) {
            Tree t = l.tree("t");
            for (int i = 0; i < 2_000; i++) {
                assertThat(t.get(String.format("k%05d", i)).map(EngineBasicsTest::s)).contains("v" + i);
            }
            InMemoryWalStorageProvider p = new InMemoryWalStorageProvider(storage);
            LogId log = new LogId("t", 0);
            dev.lattice.engine.lsm.Manifest m = manifestUnchecked(p, log);
            assertThat(p.runs().list(log)).extracting(r -> r.id())
                    .containsAll(m.runs().stream().map(dev.lattice.engine.lsm.Manifest.RunRef::id).toList());
        }
    }

    private static dev.lattice.engine.lsm.Manifest manifestUnchecked(dev.lattice.spi.WalStorageProvider p, LogId log) {
        try {
            return manifest(p, log);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static dev.lattice.engine.lsm.Manifest manifest(dev.lattice.spi.WalStorageProvider p, LogId log)
            throws IOException {
        dev.lattice.spi.CheckpointInfo info = p.checkpoints().latest(log).orElseThrow();
        try (java.io.InputStream in = p.checkpoints().open(log, info)) {
            return dev.lattice.engine.lsm.ManifestCodec.decode(log, info.throughOffset(), in.readAllBytes());
        }
    }

    /** A damaged run block is a typed corruption error naming the log and the run, on every read that needs it. */
    @Test
    void aDamagedRunBlockIsACorruptRunException() throws IOException {
        String uri = "chronicle:" + dir.resolve("data");
        LatticeConfig.Builder cfg = LsmTest.small(LatticeConfig.builder()).partitions(1).blockCacheBytes(0);
        try (Lattice l = Lattice.open(cfg.uri(uri).build())) {
            TreeImpl t = (TreeImpl) l.tree("dmg");
            for (int i = 0; i < 500; i++) {
                t.put(String.format("k%05d", i), b("value-" + i));
            }
            assertThat(t.flushNow(10_000)).isTrue();
        }
        List<Path> runs;
        try (Stream<Path> s = Files.walk(dir.resolve("data"))) {
            runs = s.filter(f -> f.toString().endsWith(".run")).toList();
        }
        assertThat(runs).isNotEmpty();
        for (Path run : runs) {
            try (RandomAccessFile f = new RandomAccessFile(run.toFile(), "rw")) {
                f.seek(24 + 20); // inside the first data block (after the Chronicle run file header of 24 bytes)
                int v = f.read();
                f.seek(24 + 20);
                f.write(v ^ 0x5A);
            }
        }
        try (Lattice l = Lattice.open(cfg.uri(uri).build())) {
            Tree t = l.tree("dmg");
            assertThatThrownBy(() -> t.get("k00000")).isInstanceOf(CorruptRunException.class)
                    .hasMessageContaining("dmg/0").satisfies(e -> assertThat(((CorruptRunException) e).run())
                            .isNotNull());
            assertThatThrownBy(t::count).isInstanceOf(CorruptRunException.class);
        }
    }
}
