package dev.lattice.provider.chronicle;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run write that fails after chunk k of its file was written (through the store's {@code afterChunkWritten}
 * seam, on the real file system) leaves nothing readable, nothing listed as complete and no file behind, and a
 * retry of the same write succeeds byte-exact; a write whose process dies before the rename (a temporary file left
 * behind) is listed as incomplete, never readable, and removed by a delete of its id.
 */
class RunWriteFailureTest {

    private static final LogId LOG = new LogId("runfail", 1);
    private final Path dir = TestDirs.create("chronicle-run-failure");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open(String durability) {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir)
                .durability(ChronicleDurability.valueOf(durability)).build());
    }

    private static byte[] data() {
        byte[] b = new byte[5 * ChronicleRunStore.CHUNK_BYTES + 123];
        new Random(17).nextBytes(b);
        return b;
    }

    private Path runsDir() {
        return dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG))
                .resolve(ChronicleRunStore.RUNS_DIR);
    }

    private long filesIn(Path d) throws IOException {
        if (!Files.isDirectory(d)) {
            return 0;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
            long n = 0;
            for (Path ignored : ds) {
                n++;
            }
            return n;
        }
    }

    @ParameterizedTest(name = "failing after chunk {0}")
    @ValueSource(ints = {0, 1, 3, 5})
    void aWriteFailingAtChunkKLeavesNothingAndARetrySucceeds(int k) throws IOException {
        byte[] data = data();
        RunId id = new RunId("run-" + k);
        for (String durability : new String[]{"PROCESS", "FSYNC"}) {
            TestDirs.delete(dir);
            try (WalStorageProvider p = open(durability)) {
                Fence f = p.claim(LOG);
                ChronicleRunStore store = (ChronicleRunStore) p.runs();
                store.afterChunkWritten = chunk -> {
                    if (chunk == k) {
                        throw new UncheckedIOException(new IOException("injected failure after chunk " + chunk));
                    }
                };
                assertThatThrownBy(() -> p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length))
                        .as("the injected failure surfaces").hasMessageContaining("injected failure after chunk " + k);
                assertThatThrownBy(() -> p.runs().read(LOG, id, 0, new byte[1], 0, 1))
                        .isInstanceOf(RunNotFoundException.class);
                assertThat(p.runs().list(LOG)).as("nothing listed after the failed write").isEmpty();
                assertThat(filesIn(runsDir())).as("no temporary file left behind").isZero();

                store.afterChunkWritten = null;
                RunInfo info = p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
                assertThat(info.complete()).isTrue();
                assertThat(info.lengthBytes()).isEqualTo(data.length);
            }
            try (WalStorageProvider p = open(durability)) {
                byte[] back = new byte[data.length];
                int done = 0;
                while (done < back.length) {
                    int n = p.runs().read(LOG, id, done, back, done, back.length - done);
                    assertThat(n).isPositive();
                    done += n;
                }
                assertThat(Arrays.equals(back, data)).as("the retried run reads back byte-exact after a reopen")
                        .isTrue();
                assertThat(p.runs().list(LOG)).extracting(RunInfo::id).containsExactly(id);
            }
        }
    }

    @ParameterizedTest(name = "leftover of {0} bytes")
    @ValueSource(ints = {0, 10, 100_000})
    void aTemporaryLeftoverIsListedAsIncompleteAndNeverRead(int bytes) throws IOException {
        RunId id = new RunId("crashed");
        try (WalStorageProvider p = open("PROCESS")) {
            Fence f = p.claim(LOG);
            p.runs().write(LOG, f, new RunId("other"), new ByteArrayInputStream(new byte[7]), 7);
        }
        Files.write(runsDir().resolve("crashed" + ChronicleRunStore.SUFFIX + ".0b5e-dead" + SmallFiles.TMP_SUFFIX),
                new byte[bytes]);
        try (WalStorageProvider p = open("PROCESS")) {
            assertThat(p.runs().list(LOG)).extracting(RunInfo::id, RunInfo::complete)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(id, false),
                            org.assertj.core.groups.Tuple.tuple(new RunId("other"), true));
            assertThatThrownBy(() -> p.runs().read(LOG, id, 0, new byte[1], 0, 1))
                    .isInstanceOf(RunNotFoundException.class);
            p.runs().delete(LOG, p.claim(LOG), id);
            assertThat(p.runs().list(LOG)).as("delete of the id removes its leftover").extracting(RunInfo::id)
                    .containsExactly(new RunId("other"));
        }
    }
}
