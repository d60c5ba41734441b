package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
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
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Damage on disk: a torn last frame is discarded on reopen and reconcile (reported as a leftover) and the log goes
 * on; a damaged committed frame with data after it makes read throw {@link CorruptLogException} naming the log and
 * the offset, and is never skipped; a Chronicle document whose writer was killed before finishing it is invisible.
 */
class CorruptionTest {

    private static final LogId LOG = new LogId("orders", 3);
    private final Path dir = TestDirs.create("chronicle-corrupt");
    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-11-30T10:15:00Z"));

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).clock(clock).build());
    }

    private static EncodedBatch marked(long first, int n, String marker) {
        List<byte[]> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add((marker + "-" + (first + i) + "-" + "x".repeat(40)).getBytes(StandardCharsets.UTF_8));
        }
        return EncodedBatch.of(first, BatchId.random(), entries);
    }

    private Path queueDir() {
        return dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG)).resolve(LogStore.QUEUE_DIR);
    }

    /** Flips one byte at {@code delta} from the first occurrence of {@code marker} in the log's cycle files. */
    private void flip(String marker, int delta) throws IOException {
        byte[] m = marker.getBytes(StandardCharsets.UTF_8);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(queueDir(), "*.cq4")) {
            for (Path p : ds) {
                byte[] all = Files.readAllBytes(p);
                int at = indexOf(all, m);
                if (at >= 0) {
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                        ByteBuffer b = ByteBuffer.allocate(1);
                        ch.read(b, at + delta);
                        b.put(0, (byte) (b.get(0) ^ 0x5A));
                        b.rewind();
                        ch.write(b, at + delta);
                        ch.force(true);
                    }
                    return;
                }
            }
        }
        throw new AssertionError("marker " + marker + " not found in " + queueDir());
    }

    /** Position of the frame header before {@code marker}: the last frame magic in front of it. */
    private int headerOffsetBefore(String marker) throws IOException {
        byte[] m = marker.getBytes(StandardCharsets.UTF_8);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(queueDir(), "*.cq4")) {
            for (Path p : ds) {
                byte[] all = Files.readAllBytes(p);
                int at = indexOf(all, m);
                if (at >= 0) {
                    for (int i = at; i >= 0; i--) {
                        if (ByteBuffer.wrap(all, i, 4).getInt() == Frames.MAGIC) {
                            return i - at;
                        }
                    }
                }
            }
        }
        throw new AssertionError("no frame header before " + marker);
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int k = 0; k < needle.length; k++) {
                if (hay[i + k] != needle[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static List<Long> offsets(ReadPage page) {
        return page.entries().stream().map(LogEntry::offset).toList();
    }

    /** The log's durable tail record; deleting it after close leaves the files as a crash before close would. */
    private Path tailRecord() {
        return dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG))
                .resolve(LogStore.TAIL_FILE);
    }

    @Test
    void tornLastFrameIsDiscardedOnReconcileAndTheLogGoesOn() throws Exception {
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, marked(0, 10, "AAA"));
            p.append(LOG, f, marked(10, 10, "BBB"));
            p.append(LOG, f, marked(20, 10, "TORN"));
        }
        Files.delete(tailRecord()); // as after a crash: no record says 20..29 was committed
        flip("TORN-25", 3); // a payload byte of the last frame
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(19);
            Fence f = p.claim(LOG);
            ReconcileResult r = p.reconcile(LOG, f);
            assertThat(r.committedTail()).isEqualTo(19);
            assertThat(r.removedLeftovers()).isEqualTo(1);
            assertThat(offsets(p.read(LOG, -1, 100, Long.MAX_VALUE))).hasSize(20).endsWith(19L);
            p.append(LOG, f, marked(20, 5, "NEW"));
            assertThat(p.read(LOG, 19, 100, Long.MAX_VALUE).entries().get(0).payload())
                    .isEqualTo(marked(20, 1, "NEW").entries().get(0));
        }
        try (WalStorageProvider p = open()) {
            // the damaged frame now sits between committed ones, superseded by the rewrite: not corruption
            assertThat(p.state(LOG).committedTail()).isEqualTo(24);
            assertThat(offsets(p.read(LOG, -1, 100, Long.MAX_VALUE))).hasSize(25);
            Fence f = p.claim(LOG);
            assertThat(p.reconcile(LOG, f).removedLeftovers()).isEqualTo(1);
        }
    }

    @Test
    void damagedLastFrameAfterACleanCloseIsCorruptionNotATornTail() throws Exception {
        writeThreeBatches();
        flip("CCC-25", 3); // a payload byte of the last frame; the tail record says 29 was committed
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(29);
            Fence f = p.claim(LOG);
            CorruptLogException e = catchThrowableOfType(CorruptLogException.class, () -> p.reconcile(LOG, f));
            assertThat(e.offset()).isEqualTo(20);
            assertThat(e.log()).isEqualTo(LOG);
            assertThat(offsets(p.read(LOG, -1, 100, Long.MAX_VALUE))).hasSize(20).endsWith(19L);
            assertThat(catchThrowableOfType(CorruptLogException.class, () -> p.read(LOG, 19, 100, Long.MAX_VALUE))
                    .offset()).isEqualTo(20);
        }
    }

    @Test
    void damagedCommittedFrameMakesReadThrowWithLogAndOffset() throws Exception {
        writeThreeBatches();
        flip("BBB-13", 2);
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(29);
            Fence f = p.claim(LOG);
            CorruptLogException e = catchThrowableOfType(CorruptLogException.class, () -> p.reconcile(LOG, f));
            assertThat(e.offset()).as("reconcile reports the damage, never drops committed data").isEqualTo(10);
            assertThat(p.state(LOG).committedTail()).isEqualTo(29);
            assertCorruptBetween(p);
        }
    }

    @Test
    void damagedFrameHeaderMakesReadThrowForTheOffsetsItHeld() throws Exception {
        writeThreeBatches();
        flip("BBB-10", headerOffsetBefore("BBB-10") + 30); // inside the header's first-offset field
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(29);
            assertCorruptBetween(p);
        }
    }

    private void writeThreeBatches() {
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, marked(0, 10, "AAA"));
            p.append(LOG, f, marked(10, 10, "BBB"));
            p.append(LOG, f, marked(20, 10, "CCC"));
        }
    }

    private static void assertCorruptBetween(WalStorageProvider p) {
        // a page stops in front of the damage; the next read reports it
        assertThat(offsets(p.read(LOG, -1, 100, Long.MAX_VALUE))).hasSize(10).endsWith(9L);
        CorruptLogException e = catchThrowableOfType(CorruptLogException.class,
                () -> p.read(LOG, 9, 100, Long.MAX_VALUE));
        assertThat(e.offset()).isEqualTo(10);
        assertThat(e.log()).isEqualTo(LOG);
        assertThat(e.getMessage()).contains("orders/3").contains("offset 10");
        CorruptLogException inside = catchThrowableOfType(CorruptLogException.class,
                () -> p.read(LOG, 14, 1, Long.MAX_VALUE));
        assertThat(inside.offset()).isEqualTo(15);
        // what follows the damage is still readable, never silently joined to what precedes it
        assertThat(offsets(p.read(LOG, 19, 100, Long.MAX_VALUE))).hasSize(10).startsWith(20L);
    }

    @Test
    void documentOfAWriterKilledMidWriteIsInvisible() throws Exception {
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).build())) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 10));
        }
        try (ChildJvm child = ChildJvm.start(Path.of("target", "partial-doc-stderr.txt"), "partial-doc",
                queueDir().toString(), Long.toString(ChronicleConfig.DEFAULT_BLOCK_SIZE), "10", "5")) {
            child.await("PARTIAL", 60); // a complete, valid frame for 10..14 sits in an unfinished document
            child.kill();
        }
        List<byte[]> mine = List.of(Payloads.of(10), Payloads.of(11));
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).build())) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(9);
            Fence f = p.claim(LOG);
            assertThat(p.reconcile(LOG, f).committedTail()).isEqualTo(9);
            p.append(LOG, f, EncodedBatch.of(10, mine));
        }
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).build())) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(11);
            ReadPage page = p.read(LOG, 9, 100, Long.MAX_VALUE);
            assertThat(offsets(page)).containsExactly(10L, 11L);
            assertThat(page.entries().get(0).payload()).isEqualTo(mine.get(0));
            assertThat(page.entries().get(1).payload()).isEqualTo(mine.get(1));
        }
    }
}
