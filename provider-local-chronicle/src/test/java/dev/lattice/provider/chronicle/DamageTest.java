package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

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
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Damage is corruption, not a torn tail. Three commits of 10 entries (records 0, 1, 2 holding offsets 0..9,
 * 10..19, 20..29); one byte flipped in each region of a record (each byte of Chronicle's 4-byte record header, our
 * frame header, a payload, our trailer), or the file truncated; then the log is reopened after a clean close (the
 * durable tail record says 29) or as after a crash (no record covers the last commit).
 *
 * <ul>
 *   <li>Damage in the middle record, either way: {@link CorruptLogException} at offset 10 from reconcile and read,
 *       the committed tail stays 29.</li>
 *   <li>Damage in the last record after a clean close: {@link CorruptLogException} at offset 20, tail 29.</li>
 *   <li>Damage in the last record after a crash: it is the last, unconfirmed write, a torn tail: discarded, tail 19,
 *       and the log takes appends at 20 again; except when Chronicle no longer returns the record its own file
 *       header names as complete (the flag byte of its record header): corruption at 20.</li>
 *   <li>Truncation in the middle record: corruption at 10 either way (after a crash, Chronicle's own file header
 *       still names the later record). Truncation inside the last record: corruption after a clean close, a torn
 *       tail after a crash.</li>
 * </ul>
 */
class DamageTest {

    private static final LogId LOG = new LogId("dmg", 1);
    private final Path dir = TestDirs.create("chronicle-damage");
    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-11-30T10:15:00Z"));

    /** Where in a record a byte is flipped: position relative to the frame's first byte. */
    enum Region {
        CHRONICLE_HEADER_BYTE_0, CHRONICLE_HEADER_BYTE_1, CHRONICLE_HEADER_BYTE_2, CHRONICLE_HEADER_BYTE_3,
        FRAME_HEADER, PAYLOAD, TRAILER;

        long at(long frameStart, int frameLength) {
            return switch (this) {
                case CHRONICLE_HEADER_BYTE_0 -> frameStart - 4;
                case CHRONICLE_HEADER_BYTE_1 -> frameStart - 3;
                case CHRONICLE_HEADER_BYTE_2 -> frameStart - 2;
                case CHRONICLE_HEADER_BYTE_3 -> frameStart - 1;
                case FRAME_HEADER -> frameStart + 30;
                case PAYLOAD -> frameStart + Frames.HEADER_BYTES + Frames.BATCH_OVERHEAD + 4 * 10 + 5;
                case TRAILER -> frameStart + frameLength - 2;
            };
        }
    }

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).clock(clock).build());
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Region r : Region.values()) {
            for (int record : new int[]{1, 2}) {
                for (boolean clean : new boolean[]{true, false}) {
                    out.add(Arguments.of(r, record, clean));
                }
            }
        }
        return out.stream();
    }

    private static EncodedBatch batch(long first) {
        List<byte[]> entries = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            entries.add(("entry-" + (first + i) + "-" + "y".repeat(30)).getBytes(StandardCharsets.UTF_8));
        }
        return EncodedBatch.of(first, BatchId.random(), entries);
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

    /** Writes records 0..2, closes; for a crash, removes the tail record the close wrote. */
    private void writeThree(boolean cleanClose) throws IOException {
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            for (int k = 0; k < 3; k++) {
                p.append(LOG, f, batch(10L * k));
            }
        }
        if (!cleanClose) {
            Files.delete(logDir().resolve(LogStore.TAIL_FILE));
        }
    }

    /** @return per record: its frame's position in the cycle file and its length */
    private long[][] records() throws IOException {
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

    private void flip(long position) throws IOException {
        try (FileChannel ch = FileChannel.open(cycleFile(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, position);
            b.put(0, (byte) (b.get(0) ^ 0x5A));
            b.rewind();
            ch.write(b, position);
        }
    }

    private void truncate(long length) throws IOException {
        try (FileChannel ch = FileChannel.open(cycleFile(), StandardOpenOption.WRITE)) {
            ch.truncate(length);
        }
    }

    private static List<Long> offsets(ReadPage page) {
        return page.entries().stream().map(LogEntry::offset).toList();
    }

    private void assertCorruptAt(long offset) {
        assertCorruptAt(offset, 29);
    }

    private void assertCorruptAt(long offset, long tail) {
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).as("the committed tail never goes back").isEqualTo(tail);
            Fence f = p.claim(LOG);
            CorruptLogException e = catchThrowableOfType(CorruptLogException.class, () -> p.reconcile(LOG, f));
            assertThat(e).as("reconcile reports the damage").isNotNull();
            assertThat(e.offset()).isEqualTo(offset);
            assertThat(e.log()).isEqualTo(LOG);
            assertThat(offsets(p.read(LOG, -1, 100, Long.MAX_VALUE))).as("entries before the damage")
                    .hasSize((int) offset).doesNotContain(offset);
            CorruptLogException r = catchThrowableOfType(CorruptLogException.class,
                    () -> p.read(LOG, offset - 1, 100, Long.MAX_VALUE));
            assertThat(r).as("read reports the damage").isNotNull();
            assertThat(r.offset()).isEqualTo(offset);
        }
    }

    private void assertTornTailDiscarded() {
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(19);
            Fence f = p.claim(LOG);
            assertThat(p.reconcile(LOG, f).committedTail()).isEqualTo(19);
            assertThat(offsets(p.read(LOG, -1, 100, Long.MAX_VALUE))).hasSize(20).endsWith(19L);
            p.append(LOG, f, batch(20));
        }
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(29);
            List<LogEntry> all = p.read(LOG, -1, 100, Long.MAX_VALUE).entries();
            assertThat(offsets(new ReadPage(all, 29))).hasSize(30).endsWith(29L);
            assertThat(new String(all.get(25).payload(), StandardCharsets.UTF_8)).startsWith("entry-25-");
        }
    }

    @ParameterizedTest(name = "{0} of record {1}, clean close {2}")
    @MethodSource("cases")
    void aFlippedByteIsCorruptionUnlessItIsTheUnconfirmedLastWrite(Region region, int record, boolean cleanClose)
            throws IOException {
        writeThree(cleanClose);
        long[][] recs = records();
        flip(region.at(recs[record][0], (int) recs[record][1]));
        if (record == 2 && !cleanClose && region == Region.CHRONICLE_HEADER_BYTE_3) {
            // The flip sets Chronicle's metadata bit: Chronicle no longer returns the record its own file header
            // names as the last complete one. A record header is stored in one 4-byte write when the record
            // completes, so this is damage, not a torn write; only offset 20 is known to have been committed.
            assertCorruptAt(20, 20);
        } else if (record == 2 && !cleanClose) {
            assertTornTailDiscarded();
        } else {
            assertCorruptAt(10L * record);
        }
    }

    @ParameterizedTest(name = "clean close {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void truncationInsideTheMiddleRecordIsCorruption(boolean cleanClose) throws IOException {
        writeThree(cleanClose);
        long[][] recs = records();
        truncate(recs[1][0] + 20);
        // after a crash only Chronicle's file header knows a record followed: offset 10 is known committed, how
        // many after it is not
        assertCorruptAt(10, cleanClose ? 29 : 10);
    }

    @ParameterizedTest(name = "clean close {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void truncationInsideTheLastRecordIsCorruptionAfterACleanCloseAndATornTailAfterACrash(boolean cleanClose)
            throws IOException {
        writeThree(cleanClose);
        long[][] recs = records();
        truncate(recs[2][0] + recs[2][1] - 3);
        if (cleanClose) {
            assertCorruptAt(20);
        } else {
            assertTornTailDiscarded();
        }
    }
}
