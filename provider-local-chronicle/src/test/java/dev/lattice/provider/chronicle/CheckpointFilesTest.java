package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Checkpoint files on disk: published atomically through a temporary name (a crash leftover is ignored and cleaned
 * up), checked by header and data checksums (damage surfaces as {@link CorruptLogException}), the latest never
 * deleted, the size limit enforced without leaving anything behind.
 */
class CheckpointFilesTest {

    private static final LogId LOG = new LogId("snap", 0);
    private final Path dir = TestDirs.create("chronicle-ckpt");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open(String query) {
        return new ChronicleProviderFactory().open(URI.create("chronicle:" + dir + query), Map.of());
    }

    private Path checkpointDir() {
        return dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG)).resolve(LogStore.CHECKPOINT_DIR);
    }

    private long files() throws IOException {
        try (Stream<Path> s = Files.list(checkpointDir())) {
            return s.count();
        }
    }

    private static byte[] data(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * seed + 3);
        }
        return b;
    }

    private static byte[] readAll(WalStorageProvider p, CheckpointInfo info) throws IOException {
        try (InputStream in = p.checkpoints().open(LOG, info)) {
            return in.readAllBytes();
        }
    }

    @Test
    void publishedCheckpointsSurviveReopenAndTheLatestIsNeverDeleted() throws IOException {
        try (WalStorageProvider p = open("")) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 10));
            p.checkpoints().publish(LOG, f, -1, 1, new ByteArrayInputStream(new byte[0]));
            p.checkpoints().publish(LOG, f, 4, 1, new ByteArrayInputStream(data(70_000, 5)));
            CheckpointInfo nine = p.checkpoints().publish(LOG, f, 9, 2, new ByteArrayInputStream(data(100, 9)));
            assertThat(nine).isEqualTo(new CheckpointInfo(9, 2, 100, 1));
            p.checkpoints().publish(LOG, f, 9, 3, new ByteArrayInputStream(data(200, 10))); // replaces
            assertThat(files()).isEqualTo(3);
        }
        try (WalStorageProvider p = open("")) {
            CheckpointInfo latest = p.checkpoints().latest(LOG).orElseThrow();
            assertThat(latest).isEqualTo(new CheckpointInfo(9, 3, 200, 1));
            assertThat(readAll(p, latest)).isEqualTo(data(200, 10));
            assertThat(readAll(p, new CheckpointInfo(4, 1, 70_000, 1))).isEqualTo(data(70_000, 5));
            p.checkpoints().deleteBefore(LOG, Long.MAX_VALUE);
            assertThat(files()).isEqualTo(1);
            assertThat(p.checkpoints().latest(LOG)).contains(latest);
        }
    }

    @Test
    void leftoverOfACrashedPublishIsIgnoredAndRemoved() throws IOException {
        try (WalStorageProvider p = open("")) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 10));
            p.checkpoints().publish(LOG, f, 4, 1, new ByteArrayInputStream(data(50, 1)));
        }
        // what a crash between writing the temporary file and renaming it leaves behind
        Path tmp = checkpointDir().resolve("checkpoint-9.ckpt.crashed" + SmallFiles.TMP_SUFFIX);
        Files.write(tmp, data(30, 2));
        try (WalStorageProvider p = open("")) {
            assertThat(p.checkpoints().latest(LOG).orElseThrow().throughOffset()).isEqualTo(4);
            assertThat(tmp).doesNotExist();
        }
    }

    @Test
    void damagedCheckpointDataThrowsCorruptLogExceptionFromRead() throws IOException {
        try (WalStorageProvider p = open("")) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 10));
            p.checkpoints().publish(LOG, f, 7, 1, new ByteArrayInputStream(data(200_000, 7)));
        }
        Path file = CheckpointFiles.fileFor(checkpointDir(), 7);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[]{42}), CheckpointFiles.HEADER_BYTES + 150_000);
        }
        try (WalStorageProvider p = open("")) {
            CheckpointInfo info = p.checkpoints().latest(LOG).orElseThrow();
            try (InputStream in = p.checkpoints().open(LOG, info)) {
                assertThatThrownBy(in::read).isInstanceOf(CorruptLogException.class)
                        .hasMessageContaining("checkpoint through 7").hasMessageContaining("CRC32C");
            }
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[]{42}), 20); // the header
        }
        try (WalStorageProvider p = open("")) {
            assertThatThrownBy(() -> p.checkpoints().latest(LOG)).isInstanceOf(CorruptLogException.class)
                    .hasMessageContaining("damaged header");
        }
    }

    @Test
    void checkpointOverTheLimitPublishesNothing() throws IOException {
        try (WalStorageProvider p = open("?maxCheckpointBytes=1000")) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 10));
            p.checkpoints().publish(LOG, f, 3, 1, new ByteArrayInputStream(data(1000, 1)));
            assertThatThrownBy(() -> p.checkpoints().publish(LOG, f, 5, 1, new ByteArrayInputStream(data(1001, 1))))
                    .isInstanceOf(CheckpointTooLargeException.class).hasMessageContaining("1000");
            assertThat(p.checkpoints().latest(LOG).orElseThrow().throughOffset()).isEqualTo(3);
            assertThat(files()).isEqualTo(1);
        }
    }
}
