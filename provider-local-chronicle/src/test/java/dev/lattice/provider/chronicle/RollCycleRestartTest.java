package dev.lattice.provider.chronicle;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cycle boundaries, crossed deterministically with a controlled clock (hourly cycles): writes spread over several
 * cycle files with an empty cycle between them, restarts in a later cycle without an end-of-file marker in the
 * last written one, reads in small pages across every boundary (never stuck, nothing skipped), and trims that
 * delete whole cycle files but keep the newest.
 */
class RollCycleRestartTest {

    private static final LogId LOG = new LogId("rolling", 1);
    private static final long HOUR = TimeUnit.HOURS.toMillis(1);
    private final Path dir = TestDirs.create("chronicle-roll");
    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-11-30T10:15:00Z"));

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).clock(clock).build());
    }

    private long cycleFiles() throws IOException {
        Path q = dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG)).resolve(LogStore.QUEUE_DIR);
        try (Stream<Path> s = Files.list(q)) {
            return s.filter(p -> p.toString().endsWith(".cq4")).count();
        }
    }

    /**
     * Reads everything above {@code from} (and above the trim watermark) in pages of {@code page} entries, checking
     * density and bytes.
     *
     * @return the last offset read
     */
    private static long readInPages(WalStorageProvider p, long from, int page) {
        long expect = Math.max(from, p.state(LOG).trimWatermark()) + 1;
        int guard = 0;
        while (true) {
            ReadPage r = p.read(LOG, from, page, Long.MAX_VALUE);
            if (r.isEmpty()) {
                assertThat(from).as("reader reached the tail").isEqualTo(r.committedTail());
                return expect - 1;
            }
            for (LogEntry e : r.entries()) {
                assertThat(e.offset()).isEqualTo(expect);
                assertThat(e.payload()).isEqualTo(Payloads.small(e.offset()));
                expect++;
            }
            from = r.nextFromExclusive(from);
            assertThat(++guard).as("reader makes progress").isLessThan(10_000);
        }
    }

    @Test
    void restartsAcrossCycleBoundariesNeverStickOrSkip() throws IOException {
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 10));   // 10:xx
            clock.advanceMillis(HOUR);
            p.append(LOG, f, Payloads.smallBatch(10, 10));  // 11:xx, rolls
        }
        assertThat(cycleFiles()).isEqualTo(2);
        clock.advanceMillis(2 * HOUR); // restart at 13:xx; 12:xx has no file, 11:xx was never rolled away from
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(19);
            assertThat(readInPages(p, -1, 3)).isEqualTo(19);
            Fence f = p.claim(LOG);
            p.reconcile(LOG, f);
            p.append(LOG, f, Payloads.smallBatch(20, 10));  // 13:xx
            assertThat(readInPages(p, 15, 4)).isEqualTo(29);
            assertThat(readInPages(p, -1, 7)).isEqualTo(29);
        }
        assertThat(cycleFiles()).isEqualTo(3);
        clock.advanceMillis(HOUR);
        try (WalStorageProvider p = open()) {
            assertThat(readInPages(p, -1, 1)).isEqualTo(29);
            Fence f = p.claim(LOG);
            p.reconcile(LOG, f);
            p.trim(LOG, f, 19); // everything of 10:xx and 11:xx
            assertThat(cycleFiles()).isEqualTo(1);
            assertThat(readInPages(p, -1, 4)).isEqualTo(29);
            assertThat(p.state(LOG).lowestOffset()).isEqualTo(20);
        }
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).lowestOffset()).isEqualTo(20);
            assertThat(p.state(LOG).committedTail()).isEqualTo(29);
            assertThat(readInPages(p, 5, 3)).isEqualTo(29);
            Fence f = p.claim(LOG);
            p.reconcile(LOG, f);
            p.trim(LOG, f, 29); // the whole log: the newest cycle file stays, the tail stays
            assertThat(cycleFiles()).isEqualTo(1);
        }
        clock.advanceMillis(HOUR);
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(29);
            assertThat(p.state(LOG).retainedEntries()).isZero();
            assertThat(p.read(LOG, -1, 10, Long.MAX_VALUE).isEmpty()).isTrue();
            Fence f = p.claim(LOG);
            p.reconcile(LOG, f);
            p.append(LOG, f, Payloads.smallBatch(30, 5)); // 15:xx, a new cycle
            p.trim(LOG, f, 29); // no-op: already trimmed there
            p.trim(LOG, f, 30); // now the 13:xx file holds nothing retained
            assertThat(cycleFiles()).isEqualTo(1);
            assertThat(readInPages(p, -1, 2)).isEqualTo(34);
        }
    }

    @Test
    void commitGroupSpanningCycleRollsIsReadWholeAndSurvivesTrimToItsMiddle() throws IOException {
        // A clock that moves 40 minutes each time Chronicle asks for the time while "stepping": every document of
        // the commit group goes to a later hour, so its three frames (1 MiB blocks: 200 KB per batch, one batch per
        // frame) land in different cycle files.
        long[] now = {Instant.parse("2026-11-30T10:15:00Z").toEpochMilli()};
        boolean[] stepping = {false};
        net.openhft.chronicle.core.time.TimeProvider steppingClock = () -> stepping[0] ? (now[0] += 40 * 60_000L)
                : now[0];
        ChronicleConfig config = ChronicleConfig.builder(dir).clock(steppingClock).blockSize(1 << 20).build();
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config)) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 5));
            for (int b = 0; b < 3; b++) {
                List<byte[]> entries = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    entries.add(Payloads.small(5 + b * 4L + i));
                    entries.set(i, java.util.Arrays.copyOf(entries.get(i), 50_000));
                }
                p.stage(LOG, f, dev.lattice.spi.EncodedBatch.of(5 + b * 4L, entries));
            }
            stepping[0] = true;
            p.commit(LOG, f, 16);
            stepping[0] = false;
            assertThat(((ChronicleWalStorageProvider) p).inspect(LOG, LogStore::indexedFrames)).isEqualTo(4);
        }
        assertThat(cycleFiles()).as("cycle files written").isGreaterThanOrEqualTo(3);
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config)) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(16);
            assertThat(p.read(LOG, 3, 100, Long.MAX_VALUE).entries()).extracting(LogEntry::offset)
                    .containsExactly(4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L);
            Fence f = p.claim(LOG);
            p.reconcile(LOG, f);
            p.trim(LOG, f, 12); // leaves only the group's last frame
            assertThat(cycleFiles()).isEqualTo(1);
        }
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config)) {
            // the scan starts in the middle of the commit group: its first frames are gone with their files
            assertThat(p.state(LOG).committedTail()).isEqualTo(16);
            assertThat(p.state(LOG).lowestOffset()).isEqualTo(13);
            ReadPage r = p.read(LOG, -1, 100, Long.MAX_VALUE);
            assertThat(r.entries()).extracting(LogEntry::offset).containsExactly(13L, 14L, 15L, 16L);
            assertThat(java.util.Arrays.copyOf(r.entries().get(0).payload(), Payloads.small(13).length))
                    .isEqualTo(Payloads.small(13));
        }
    }
}
