package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A directory written by the provider before cycle files rolled by size ({@link CompatFixtureWriter}: hourly cycles,
 * a trim that deleted a cycle file, a checkpoint, a clean close, then a tail written without a close) opens with
 * every retained entry, its checkpoint and its trims (also read-only), takes appends that roll by size, trims its
 * old hourly files away, and opens again; its format record goes from version 1 to 2 at the writer's open.
 */
class CycleRollCompatTest {

    private final Path dir = TestDirs.create("chronicle-compat");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private static void unzip(String resource, Path to) throws IOException {
        try (InputStream raw = CycleRollCompatTest.class.getResourceAsStream(resource);
             ZipInputStream zip = new ZipInputStream(raw)) {
            ZipEntry e;
            while ((e = zip.getNextEntry()) != null) {
                Path out = to.resolve(e.getName()).normalize();
                if (!out.startsWith(to)) {
                    throw new IOException("zip entry outside the target: " + e.getName());
                }
                if (e.isDirectory()) {
                    Files.createDirectories(out);
                } else {
                    Files.createDirectories(out.getParent());
                    Files.copy(zip, out);
                }
            }
        }
    }

    private List<String> cycleFiles(LogId log) throws IOException {
        try (Stream<Path> s = Files.list(dir.resolve(ChronicleWalStorageProvider.LOGS_DIR)
                .resolve(LogStore.dirName(log)).resolve(LogStore.QUEUE_DIR))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cq4")).sorted().toList();
        }
    }

    /** Reads everything above the watermark and checks it; returns the last offset read. */
    private static long readAll(WalStorageProvider p, LogId log) {
        LogState s = p.state(log);
        long from = s.trimWatermark();
        long expect = from + 1;
        while (true) {
            ReadPage r = p.read(log, from, 97, Long.MAX_VALUE);
            if (r.isEmpty()) {
                assertThat(expect - 1).isEqualTo(s.committedTail());
                return expect - 1;
            }
            for (LogEntry e : r.entries()) {
                assertThat(e.offset()).isEqualTo(expect);
                assertThat(e.payload()).as("offset " + e.offset()).isEqualTo(CompatFixtureWriter.payload(e.offset()));
                expect++;
            }
            from = r.nextFromExclusive(from);
        }
    }

    /** @return the directory's format record: version, block size */
    private long[] formatRecord() {
        return SmallFiles.readRecord(null, dir.resolve(ChronicleWalStorageProvider.FORMAT_FILE), 0x4C434647, 2);
    }

    private WalStorageProvider open() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).rollBytes(64 << 10).build());
    }

    @Test
    void hourlyDirectoryOpensAndGoesOnWithSizeRolls() throws IOException {
        unzip("/compat/chronicle-format1-hourly.zip", dir);
        LogId main = CompatFixtureWriter.MAIN;
        LogId emptied = CompatFixtureWriter.EMPTIED;
        assertThat(cycleFiles(main)).containsExactly("20261130-11F.cq4", "20261130-13F.cq4", "20261130-14F.cq4");
        assertThat(formatRecord()).containsExactly(1L, 1L << 20);
        try (WalStorageProvider reader = ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).readOnly(true)
                .build())) {
            assertThat(readAll(reader, main)).as("a read-only instance reads version 1").isEqualTo(999);
        }
        assertThat(formatRecord()).as("a read-only instance changes nothing").containsExactly(1L, 1L << 20);
        try (WalStorageProvider p = open()) {
            assertThat(formatRecord()).as("a writer raises the format version before its first size roll, so "
                    + "the code before refuses the directory").containsExactly(2L, 1L << 20);
            LogState s = p.state(main);
            assertThat(s.trimWatermark()).isEqualTo(349);
            assertThat(s.lowestOffset()).isEqualTo(350);
            assertThat(s.committedTail()).as("the tail written after the clean close is found").isEqualTo(999);
            assertThat(readAll(p, main)).isEqualTo(999);
            CheckpointInfo c = p.checkpoints().latest(main).orElseThrow();
            assertThat(c.throughOffset()).isEqualTo(500);
            try (InputStream in = p.checkpoints().open(main, c)) {
                assertThat(in.readAllBytes()).isEqualTo(ChildMains.checkpointData(500));
            }
            assertThat(p.state(emptied).committedTail()).isEqualTo(49);
            assertThat(p.state(emptied).retainedEntries()).isZero();

            Fence f = p.claim(main);
            p.reconcile(main, f);
            for (long o = 1000; o < 3000; o += 50) {
                p.append(main, f, CompatFixtureWriter.batch(o, 50));
            }
            assertThat(readAll(p, main)).isEqualTo(2999);
            p.trim(main, f, 999);
            assertThat(cycleFiles(main)).as("the old hourly files are gone, the new ones rolled by size")
                    .noneMatch(n -> n.startsWith("20261130")).hasSizeGreaterThan(1);
            Fence g = p.claim(emptied);
            p.reconcile(emptied, g);
            p.append(emptied, g, CompatFixtureWriter.batch(50, 10));
            assertThat(readAll(p, emptied)).isEqualTo(59);
        }
        try (WalStorageProvider p = open()) {
            assertThat(p.state(main).lowestOffset()).isEqualTo(1000);
            assertThat(readAll(p, main)).isEqualTo(2999);
            assertThat(readAll(p, emptied)).isEqualTo(59);
            assertThat(p.checkpoints().latest(main).orElseThrow().throughOffset()).isEqualTo(500);
        }
    }
}
