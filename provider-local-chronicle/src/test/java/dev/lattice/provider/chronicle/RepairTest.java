package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.RepairReport;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@code repair}: truncates a damaged log at its first damaged offset, reports exactly the lost offsets, and leaves a
 * log that opens clean and takes appends at {@code tailAfter + 1}; entries below the damage keep their bytes.
 */
class RepairTest {

    private static final LogId LOG = new LogId("fix", 2);
    private final Path dir = TestDirs.create("chronicle-repair");
    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-11-30T10:15:00Z"));

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).clock(clock).blockSize(1 << 20).build());
    }

    private static byte[] value(long offset, int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) (offset * 7 + 1));
        b[0] = (byte) offset;
        return b;
    }

    private static EncodedBatch batch(long first, int n, int size) {
        List<byte[]> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add(value(first + i, size));
        }
        return EncodedBatch.of(first, BatchId.random(), entries);
    }

    private Path cycleFile() throws IOException {
        Path q = dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG))
                .resolve(LogStore.QUEUE_DIR);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(q, "*.cq4")) {
            for (Path p : ds) {
                return p;
            }
        }
        throw new AssertionError("no cycle file");
    }

    /** Flips a payload byte of the frame whose first offset is {@code first}. */
    private void damageFrameStartingAt(long first) throws IOException {
        Path f = cycleFile();
        byte[] all = Files.readAllBytes(f);
        for (int i = 0; i + Frames.FRAME_OVERHEAD <= all.length; i += 4) {
            if (ByteBuffer.wrap(all, i, 4).getInt() == Frames.MAGIC) {
                Frames.Header h = Frames.readHeader(Arrays.copyOfRange(all, i, i + Frames.FRAME_OVERHEAD));
                if (h != null && h.first() == first) {
                    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                        long at = i + h.frameLength() - 10L;
                        ch.write(ByteBuffer.wrap(new byte[]{(byte) (all[(int) at] ^ 0x5A)}), at);
                    }
                    return;
                }
            }
        }
        throw new AssertionError("no frame starting at " + first);
    }

    private static List<LogEntry> readAll(WalStorageProvider p) {
        List<LogEntry> out = new ArrayList<>();
        long from = -1;
        while (true) {
            List<LogEntry> page = p.read(LOG, from, 1000, Long.MAX_VALUE).entries();
            if (page.isEmpty()) {
                return out;
            }
            out.addAll(page);
            from = page.get(page.size() - 1).offset();
        }
    }

    @Test
    void repairTruncatesAtTheDamageReportsTheLostOffsetsAndTheLogGoesOn() throws IOException {
        try (WalStorageProvider p = open()) {
            assertThat(p.describe().features()).contains(ProviderFeature.REPAIR);
            Fence f = p.claim(LOG);
            for (int k = 0; k < 5; k++) {
                p.append(LOG, f, batch(10L * k, 10, 100));
            }
            p.checkpoints().publish(LOG, f, 15, 1, new ByteArrayInputStream(new byte[10]));
            p.checkpoints().publish(LOG, f, 35, 1, new ByteArrayInputStream(new byte[10]));
        }
        damageFrameStartingAt(20);
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            assertThat(catchThrowableOfType(CorruptLogException.class, () -> p.reconcile(LOG, f)).offset())
                    .isEqualTo(20);
            RepairReport r = p.repair(LOG, f);
            assertThat(r.log()).isEqualTo(LOG);
            assertThat(r.tailBefore()).isEqualTo(49);
            assertThat(r.tailAfter()).isEqualTo(19);
            assertThat(r.firstLostOffset()).isEqualTo(20);
            assertThat(r.lastLostOffset()).isEqualTo(49);
            assertThat(r.lostEntries()).isEqualTo(30);
            assertThat(r.detail()).contains("checkpoints through [35]").contains("queue.damaged-");
            assertThat(p.reconcile(LOG, f).committedTail()).isEqualTo(19);
            assertThat(p.checkpoints().latest(LOG).orElseThrow().throughOffset()).isEqualTo(15);
            p.append(LOG, f, batch(20, 5, 100));
            assertThat(p.repair(LOG, f).isClean()).isTrue();
        }
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            assertThat(p.reconcile(LOG, f).committedTail()).isEqualTo(24);
            List<LogEntry> all = readAll(p);
            assertThat(all).extracting(LogEntry::offset).hasSize(25).endsWith(24L);
            for (LogEntry e : all) {
                assertThat(e.payload()).isEqualTo(value(e.offset(), 100));
            }
        }
    }

    @Test
    void aCommitGroupCutByTheDamageEndsAtItsLastIntactFrame() throws IOException {
        long groupLast;
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, batch(0, 5, 100));
            // 1 MiB blocks: a 256 KiB document; three 200 KB batches committed together need three frames
            for (int k = 0; k < 3; k++) {
                p.stage(LOG, f, batch(5 + k, 1, 200_000));
            }
            p.commit(LOG, f, 7);
            p.append(LOG, f, batch(8, 2, 100));
            groupLast = p.state(LOG).committedTail();
        }
        assertThat(groupLast).isEqualTo(9);
        damageFrameStartingAt(6); // the middle frame of the three-frame group
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            RepairReport r = p.repair(LOG, f);
            assertThat(r.tailAfter()).isEqualTo(5);
            assertThat(r.firstLostOffset()).isEqualTo(6);
            assertThat(r.lastLostOffset()).isEqualTo(9);
            assertThat(r.detail()).contains("1 rewritten");
        }
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            assertThat(p.reconcile(LOG, f).committedTail()).as("the cut group's first frame stays committed")
                    .isEqualTo(5);
            assertThat(readAll(p).get(5).payload()).isEqualTo(value(5, 200_000));
            p.append(LOG, f, batch(6, 1, 100));
        }
        try (WalStorageProvider p = open()) {
            assertThat(readAll(p)).extracting(LogEntry::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
        }
    }

    @Test
    void repairOfAnUndamagedLogChangesNothingAndAStaleFenceIsRefused() {
        try (WalStorageProvider p = open()) {
            Fence old = p.claim(LOG);
            p.append(LOG, old, batch(0, 10, 50));
            Fence f = p.claim(LOG);
            assertThatThrownBy(() -> p.repair(LOG, old)).isInstanceOf(FencedException.class);
            RepairReport r = p.repair(LOG, f);
            assertThat(r.isClean()).isTrue();
            assertThat(r.tailAfter()).isEqualTo(9);
            assertThat(readAll(p)).hasSize(10);
        }
    }

    @Test
    void repairAfterATruncationSeenOnlyThroughChroniclesFileHeader() throws IOException {
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            for (int k = 0; k < 3; k++) {
                p.append(LOG, f, batch(10L * k, 10, 100));
            }
        }
        Files.delete(dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG))
                .resolve(LogStore.TAIL_FILE)); // as after a crash
        Path f = cycleFile();
        byte[] all = Files.readAllBytes(f);
        int second = -1;
        for (int i = 0, seen = 0; i + 4 <= all.length; i += 4) {
            if (ByteBuffer.wrap(all, i, 4).getInt() == Frames.MAGIC && ++seen == 2) {
                second = i;
                break;
            }
        }
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
            ch.truncate(second + 30);
        }
        try (WalStorageProvider p = open()) {
            Fence fence = p.claim(LOG);
            RepairReport r = p.repair(LOG, fence);
            assertThat(r.tailAfter()).isEqualTo(9);
            assertThat(r.firstLostOffset()).isEqualTo(10);
            p.append(LOG, fence, batch(10, 3, 100));
            assertThat(readAll(p)).extracting(LogEntry::offset).hasSize(13).endsWith(12L);
        }
    }
}
