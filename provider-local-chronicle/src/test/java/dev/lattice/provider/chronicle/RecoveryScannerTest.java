package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RecoveryScanner} on its own, on a real queue: three commit groups of 10 entries (offsets 0..9, 10..19,
 * 20..29) written by the provider, then damaged or cut, then scanned directly (no provider) with a given trim
 * watermark and durably known tail. Checks what it accepts, what it marks corrupt and where the committed tail ends:
 * a cut last record is a torn tail unless the known tail covers it; damage before intact data is corruption.
 */
class RecoveryScannerTest {

    private static final LogId LOG = new LogId("scan", 1);
    private final Path dir = TestDirs.create("chronicle-recovery-scanner");
    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-11-30T10:15:00Z"));

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private ChronicleConfig config() {
        return ChronicleConfig.builder(dir).clock(clock).build();
    }

    private Path logDir() {
        return dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG));
    }

    private Path cycleFile() throws IOException {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(logDir().resolve(LogStore.QUEUE_DIR), "*.cq4")) {
            for (Path p : ds) {
                return p;
            }
        }
        throw new AssertionError("no cycle file");
    }

    private void writeThree() {
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config())) {
            Fence f = p.claim(LOG);
            for (int k = 0; k < 3; k++) {
                List<byte[]> entries = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    entries.add(("entry-" + (10 * k + i) + "-" + "z".repeat(30)).getBytes(StandardCharsets.UTF_8));
                }
                p.append(LOG, f, EncodedBatch.of(10L * k, BatchId.random(), entries));
            }
        }
    }

    /** @return per frame: its position in the cycle file and its length */
    private long[][] frames() throws IOException {
        byte[] all = Files.readAllBytes(cycleFile());
        List<long[]> out = new ArrayList<>();
        for (int i = 0; i + Frames.FRAME_OVERHEAD <= all.length; i += 4) {
            if (ByteBuffer.wrap(all, i, 4).getInt() == Frames.MAGIC) {
                byte[] h = new byte[Frames.FRAME_OVERHEAD];
                System.arraycopy(all, i, h, 0, h.length);
                Frames.Header header = Frames.readHeader(h);
                if (header != null) {
                    out.add(new long[]{i, header.frameLength()});
                }
            }
        }
        assertThat(out).hasSize(3);
        return out.toArray(new long[0][]);
    }

    private FrameScanner scan(long watermark, long knownTail) {
        try (LogQueue q = new LogQueue(LOG, config(), logDir(), logDir().resolve(LogStore.QUEUE_DIR))) {
            return RecoveryScanner.scan(LOG, q, watermark, knownTail, config().maxDocumentBytes());
        }
    }

    /** @return the scanner's accepted items as "first..last" or "first..last!" for a corrupt range */
    private static List<String> items(FrameScanner s) {
        return s.accepted.stream()
                .map(it -> it.first() + ".." + it.last() + (it.index() == FrameIndex.CORRUPT ? "!" : "")).toList();
    }

    @Test
    void anIntactQueueIsAcceptedWhole() {
        writeThree();
        FrameScanner s = scan(-1, 29);
        assertThat(items(s)).containsExactly("0..9", "10..19", "20..29");
        assertThat(s.next).isEqualTo(30);
        assertThat(s.leftovers).isZero();
    }

    @Test
    void framesAtOrBelowTheWatermarkAreSkipped() {
        writeThree();
        FrameScanner s = scan(19, 29);
        assertThat(items(s)).containsExactly("20..29");
        assertThat(s.next).isEqualTo(30);
    }

    @Test
    void aCutLastRecordIsATornTailWhenNothingRecordsItAsCommitted() throws IOException {
        writeThree();
        long[][] f = frames();
        try (FileChannel ch = FileChannel.open(cycleFile(), StandardOpenOption.WRITE)) {
            ch.truncate(f[2][0] + f[2][1] - 3);
        }
        FrameScanner s = scan(-1, 19);
        assertThat(items(s)).containsExactly("0..9", "10..19");
        assertThat(s.next).as("committed tail + 1").isEqualTo(20);
    }

    @Test
    void aCutLastRecordIsCorruptionWhenTheKnownTailCoversIt() throws IOException {
        writeThree();
        long[][] f = frames();
        try (FileChannel ch = FileChannel.open(cycleFile(), StandardOpenOption.WRITE)) {
            ch.truncate(f[2][0] + f[2][1] - 3);
        }
        FrameScanner s = scan(-1, 29);
        assertThat(items(s)).startsWith("0..9", "10..19").contains("20..29!");
        assertThat(s.next).isEqualTo(30);
    }

    @Test
    void aDamagedMiddleFrameBeforeIntactDataIsCorruptionEvenWithoutAKnownTail() throws IOException {
        writeThree();
        long[][] f = frames();
        long at = f[1][0] + Frames.HEADER_BYTES + Frames.BATCH_OVERHEAD + 4 * 10 + 5; // a payload byte
        try (FileChannel ch = FileChannel.open(cycleFile(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
            ch.write(b, at);
        }
        FrameScanner s = scan(-1, -1);
        assertThat(items(s)).containsExactly("0..9", "10..19!", "20..29");
        assertThat(s.next).isEqualTo(30);
    }
}
