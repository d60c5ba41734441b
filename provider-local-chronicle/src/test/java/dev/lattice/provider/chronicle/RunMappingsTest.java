package dev.lattice.provider.chronicle;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The mappings the run store keeps of run files ({@link RunMappings}) on the real file system: a deleted or dropped
 * run's file is unmapped at once (no mapping left on it, checked in {@code /proc/self/maps}, and no descriptor, in
 * {@code /proc/self/fd}) and never read again; reads stay byte-exact while mappings are evicted (more runs than
 * {@link RunMappings#MAX_OPEN}) and released under them.
 */
class RunMappingsTest {

    private static final LogId LOG = new LogId("runchannels", 2);
    private final Path dir = TestDirs.create("chronicle-run-channels");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).build());
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** @return descriptors of this process open on files under {@code d} */
    private static long descriptorsUnder(Path d) throws IOException {
        long n = 0;
        Path real = d.toRealPath();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : ds) {
                try {
                    if (Files.readSymbolicLink(fd).startsWith(real)) {
                        n++;
                    }
                } catch (IOException closedMeanwhile) {
                    // the directory stream's own descriptor, or one closed while listing
                }
            }
        }
        return n;
    }

    /** @return distinct files under {@code d} that this process has mapped */
    private static long mappedFilesUnder(Path d) throws IOException {
        String real = d.toRealPath().toString() + "/";
        return Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .map(line -> line.indexOf('/') < 0 ? "" : line.substring(line.indexOf('/')))
                .map(file -> file.endsWith(" (deleted)") ? file.substring(0, file.length() - 10) : file)
                .filter(file -> file.startsWith(real))
                .distinct()
                .count();
    }

    /** @return mapped files plus open descriptors under {@code d} */
    private static long heldUnder(Path d) throws IOException {
        return mappedFilesUnder(d) + descriptorsUnder(d);
    }

    private Path runsDir() {
        return dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG))
                .resolve(ChronicleRunStore.RUNS_DIR);
    }

    @Test
    void aDeletedRunsMappingIsReleasedAndTheRunIsNotReadAgain() throws IOException {
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            byte[] data = bytes(200_000, 1);
            RunId id = new RunId("r1");
            p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
            byte[] got = new byte[1000];
            assertThat(p.runs().read(LOG, id, 5000, got, 0, got.length)).isEqualTo(1000);
            assertThat(got).isEqualTo(Arrays.copyOfRange(data, 5000, 6000));
            assertThat(mappedFilesUnder(runsDir())).as("the mapping kept after a read").isEqualTo(1);
            assertThat(descriptorsUnder(runsDir())).as("descriptors kept beside the mapping").isZero();

            p.runs().delete(LOG, f, id);
            assertThat(heldUnder(runsDir())).as("mappings and descriptors on the runs directory after the delete")
                    .isZero();
            assertThatThrownBy(() -> p.runs().read(LOG, id, 0, got, 0, 10)).isInstanceOf(RunNotFoundException.class);

            p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
            assertThat(p.runs().read(LOG, id, 199_990, got, 0, 100)).isEqualTo(10);
            assertThat(Arrays.copyOf(got, 10)).isEqualTo(Arrays.copyOfRange(data, 199_990, 200_000));
        }
    }

    @Test
    void aMappingReleasedDuringAReadIsUnmappedWhenTheReadEnds() throws IOException {
        assertThat(Unmapper.AVAILABLE).as("invokeCleaner found on this JDK").isTrue();
        Files.createDirectories(runsDir());
        Path file = runsDir().resolve("direct.run");
        byte[] data = bytes(3 * 4096 + 7, 5);
        Files.write(file, data);
        RunMappings mappings = new RunMappings(f -> file);
        RunMappings.RunFile name = new RunMappings.RunFile(LOG, new RunId("direct"));
        RunMappings.Mapped m = mappings.acquire(name);
        assertThat(m.fileBytes()).isEqualTo(data.length);
        mappings.close(name); // released while the read is in progress
        assertThat(m.released()).isTrue();
        assertThat(m.acquire()).as("a released mapping admits no new read").isFalse();
        assertThat(mappedFilesUnder(runsDir())).as("still mapped for the read in progress").isEqualTo(1);
        byte[] got = new byte[100];
        m.copy(data.length - 100, got, 0, 100);
        assertThat(got).isEqualTo(Arrays.copyOfRange(data, data.length - 100, data.length));
        m.release();
        assertThat(mappedFilesUnder(runsDir())).as("unmapped when the last read ended").isZero();
        RunMappings.Mapped again = mappings.acquire(name);
        assertThat(again).as("a later read maps the file again").isNotSameAs(m);
        again.release();
        mappings.close();
        assertThat(mappedFilesUnder(runsDir())).isZero();
    }

    @Test
    void droppingTheLogAndClosingTheProviderReleaseItsMappings() throws IOException {
        Path logDir = dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG));
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            for (int i = 0; i < 3; i++) {
                byte[] data = bytes(10_000, i);
                p.runs().write(LOG, f, new RunId("d" + i), new ByteArrayInputStream(data), data.length);
                p.runs().read(LOG, new RunId("d" + i), 0, new byte[10], 0, 10);
            }
            assertThat(mappedFilesUnder(runsDir())).isEqualTo(3);
            p.drop(LOG, f);
            assertThat(Files.exists(logDir)).isFalse();
            Fence f2 = p.claim(LOG);
            byte[] data = bytes(10_000, 9);
            p.runs().write(LOG, f2, new RunId("after"), new ByteArrayInputStream(data), data.length);
            p.runs().read(LOG, new RunId("after"), 0, new byte[10], 0, 10);
            assertThat(heldUnder(runsDir())).as("only the new log's run is held after the drop").isEqualTo(1);
        }
        assertThat(mappedFilesUnder(dir)).as("mappings under the provider's directory after close").isZero();
        assertThat(descriptorsUnder(dir)).as("descriptors under the provider's directory after close").isZero();
    }

    @Test
    void readsStayByteExactWhileMappingsAreEvictedAndReleasedUnderThem() throws Exception {
        int runs = RunMappings.MAX_OPEN + 88;
        int size = 8192;
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            List<byte[]> data = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                byte[] b = bytes(size, 100 + i);
                data.add(b);
                p.runs().write(LOG, f, new RunId("e" + i), new ByteArrayInputStream(b), b.length);
            }
            ChronicleRunStore store = (ChronicleRunStore) p.runs();
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(5);
            try {
                List<Future<Integer>> readers = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int seed = t;
                    readers.add(pool.submit(() -> {
                        Random r = new Random(seed);
                        byte[] got = new byte[512];
                        int reads = 0;
                        for (; reads < 20_000; reads++) {
                            int run = r.nextInt(runs);
                            int pos = r.nextInt(size);
                            int n = p.runs().read(LOG, new RunId("e" + run), pos, got, 0, got.length);
                            int expected = Math.min(got.length, size - pos);
                            if (n != expected || !Arrays.equals(got, 0, n, data.get(run), pos, pos + n)) {
                                throw new AssertionError("run e" + run + " at " + pos + ": " + n + " bytes, wrong");
                            }
                        }
                        return reads;
                    }));
                }
                Future<Integer> closer = pool.submit(() -> {
                    int closes = 0;
                    while (!stop.get()) {
                        store.closeMappings();
                        closes++;
                        Thread.sleep(1);
                    }
                    return closes;
                });
                for (Future<Integer> reader : readers) {
                    assertThat(reader.get(120, TimeUnit.SECONDS)).isEqualTo(20_000);
                }
                stop.set(true);
                assertThat(closer.get(10, TimeUnit.SECONDS)).isPositive();
            } finally {
                stop.set(true);
                pool.shutdownNow();
            }
            assertThat(mappedFilesUnder(runsDir())).as("mappings are bounded")
                    .isLessThanOrEqualTo(RunMappings.MAX_OPEN);
            assertThat(descriptorsUnder(runsDir())).as("no descriptor is kept beside a mapping").isZero();
        }
    }
}
