package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchTooLargeException;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.EntryTooLargeException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.Providers;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Discovery, URI and options, declared durability and limits, multi-frame commits, accounting, close. */
class ChronicleProviderTest {

    private static final LogId LOG = new LogId("orders", 3);
    private final Path dir = TestDirs.create("chronicle-provider");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open(String query) {
        return new ChronicleProviderFactory().open(URI.create("chronicle:" + dir + (query.isEmpty() ? "" : "?"
                + query)), Map.of());
    }

    private static List<byte[]> readAll(WalStorageProvider p, LogId log) {
        List<byte[]> out = new ArrayList<>();
        long from = p.state(log).trimWatermark();
        while (true) {
            ReadPage page = p.read(log, from, 1000, Long.MAX_VALUE);
            if (page.isEmpty()) {
                return out;
            }
            for (LogEntry e : page.entries()) {
                out.add(e.payload());
            }
            from = page.nextFromExclusive(from);
        }
    }

    @Test
    void discoveredBySchemeThroughServiceLoader() {
        assertThat(Providers.schemes()).contains("chronicle");
        try (WalStorageProvider p = Providers.open("chronicle:" + dir)) {
            assertThat(p).isInstanceOf(ChronicleWalStorageProvider.class);
            assertThat(p.describe().name()).isEqualTo("chronicle");
        }
        assertThat(Files.exists(dir.resolve(RootLock.LOCK_FILE))).isTrue();
    }

    @Test
    void uriFormsNameTheDirectory() {
        assertThat(ChronicleProviderFactory.directoryOf(URI.create("chronicle:./lattice-data")))
                .isEqualTo(Path.of("./lattice-data"));
        assertThat(ChronicleProviderFactory.directoryOf(URI.create("chronicle:/abs/path?durability=fsync")))
                .isEqualTo(Path.of("/abs/path"));
        assertThat(ChronicleProviderFactory.directoryOf(URI.create("chronicle:///abs/path")))
                .isEqualTo(Path.of("/abs/path"));
        assertThat(ChronicleProviderFactory.directoryOf(URI.create("chronicle:rel/a%20b?blockSize=1m")))
                .isEqualTo(Path.of("rel/a b"));
        assertThatThrownBy(() -> ChronicleProviderFactory.directoryOf(URI.create("chronicle://host/path")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("host");
        assertThatThrownBy(() -> new ChronicleProviderFactory().open(URI.create("postgres://x/y"), Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void unknownAndMalformedOptionsFailClearly() {
        assertThatThrownBy(() -> open("durabilty=fsync")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option(s) [durabilty]").hasMessageContaining("durability");
        assertThatThrownBy(() -> open("durability=sometimes")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("durability").hasMessageContaining("process").hasMessageContaining("fsync");
        assertThatThrownBy(() -> open("blockSize=3m")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blockSize").hasMessageContaining("power of two");
        assertThatThrownBy(() -> open("blockSize=lots")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blockSize");
        assertThatThrownBy(() -> open("rollCycle=yearly")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rollCycle").hasMessageContaining("hourly");
        assertThatThrownBy(() -> open("maxCheckpointBytes=0")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxCheckpointBytes");
        // a rejected option leaves the directory unlocked
        open("").close();
    }

    @Test
    void describeDeclaresTheActiveDurabilityMode() {
        try (WalStorageProvider p = open("")) {
            assertThat(p.describe().durability()).isEqualTo(DurabilityLevel.PROCESS_CRASH);
            assertThat(p.describe().features()).containsExactlyInAnyOrder(ProviderFeature.DEFERRED_STAGE,
                    ProviderFeature.PERSISTENT, ProviderFeature.PHYSICAL_BYTES, ProviderFeature.REPAIR,
                    ProviderFeature.LOCAL_CALLS, ProviderFeature.RUNS, ProviderFeature.DROP);
        }
        try (WalStorageProvider p = open("durability=process")) {
            assertThat(p.describe().durability()).isEqualTo(DurabilityLevel.PROCESS_CRASH);
        }
        try (WalStorageProvider p = open("durability=FSYNC")) {
            assertThat(p.describe().durability()).isEqualTo(DurabilityLevel.OS_CRASH);
        }
    }

    @Test
    void fsyncModeForcesTheQueueFileOnEveryCommitAndProcessModeNever() {
        for (String mode : List.of("fsync", "process")) {
            LogId log = new LogId("durability-" + mode, 0);
            try (WalStorageProvider p = open("durability=" + mode)) {
                Fence f = p.claim(log);
                for (int i = 0; i < 3; i++) {
                    p.append(log, f, Payloads.smallBatch(i * 4L, 4));
                }
                long forced = ((ChronicleWalStorageProvider) p).inspect(log, LogStore::forcedFiles);
                assertThat(forced).as(mode).isEqualTo(mode.equals("fsync") ? 3 : 0);
            }
        }
    }

    @Test
    void limitsDeriveFromTheBlockSize() {
        try (WalStorageProvider p = open("")) {
            assertThat(p.describe().limits()).isEqualTo(new ProviderLimits(4_128_672, 4_128_672, 16_384,
                    Long.MAX_VALUE));
        }
        TestDirs.delete(dir);
        try (WalStorageProvider p = open("blockSize=1m&maxCheckpointBytes=1000000")) {
            assertThat(p.describe().limits()).isEqualTo(new ProviderLimits(257_952, 257_952, 1_024, 1_000_000));
        }
    }

    @Test
    void aBatchAtEveryLimitFillsExactlyOneChronicleDocument() {
        try (WalStorageProvider p = open("blockSize=1m")) {
            ProviderLimits l = p.describe().limits();
            Fence f = p.claim(LOG);
            // maxEntriesPerBatch entries adding up to exactly maxBatchBytes: the frame is exactly blockSize / 4.
            List<byte[]> entries = new ArrayList<>();
            int each = (int) (l.maxBatchBytes() / l.maxEntriesPerBatch());
            long sum = 0;
            for (int i = 0; i < l.maxEntriesPerBatch() - 1; i++) {
                entries.add(filled(each, i));
                sum += each;
            }
            entries.add(filled((int) (l.maxBatchBytes() - sum), 7));
            p.append(LOG, f, EncodedBatch.of(0, entries));
            // one entry of exactly maxEntryBytes
            p.append(LOG, f, EncodedBatch.of(l.maxEntriesPerBatch(), List.of(filled(l.maxEntryBytes(), 9))));
            assertThat(p.state(LOG).committedTail()).isEqualTo(l.maxEntriesPerBatch());
            List<byte[]> back = readAll(p, LOG);
            assertThat(back).hasSize(l.maxEntriesPerBatch() + 1);
            assertThat(back.get(back.size() - 1)).isEqualTo(filled(l.maxEntryBytes(), 9));
            assertThat(back.get(back.size() - 2)).isEqualTo(entries.get(entries.size() - 1));
        }
    }

    @Test
    void oversizedEntriesAndBatchesAreRejectedBeforeAnyIo() {
        try (WalStorageProvider p = open("blockSize=1m")) {
            ProviderLimits l = p.describe().limits();
            Fence f = p.claim(LOG);
            Path queueDir = dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG))
                    .resolve(LogStore.QUEUE_DIR);
            assertThatThrownBy(() -> p.stage(LOG, f, EncodedBatch.of(0, List.of(new byte[l.maxEntryBytes() + 1]))))
                    .isInstanceOf(EntryTooLargeException.class).hasMessageContaining(Integer.toString(l.maxEntryBytes()));
            List<byte[]> many = new ArrayList<>();
            for (int i = 0; i <= l.maxEntriesPerBatch(); i++) {
                many.add(new byte[1]);
            }
            assertThatThrownBy(() -> p.stage(LOG, f, EncodedBatch.of(0, many)))
                    .isInstanceOf(BatchTooLargeException.class)
                    .hasMessageContaining(Integer.toString(l.maxEntriesPerBatch()));
            assertThatThrownBy(() -> p.stage(LOG, f, EncodedBatch.of(0, List.of(new byte[l.maxEntryBytes()],
                    new byte[1])))).isInstanceOf(BatchTooLargeException.class)
                    .hasMessageContaining(Long.toString(l.maxBatchBytes()));
            assertThat(queueDir).doesNotExist();
            assertThat(p.state(LOG).committedTail()).isEqualTo(-1);
        }
    }

    @Test
    void stagedBatchesTooBigForOneDocumentCommitAsOneGroupOfSeveralFrames() throws Exception {
        List<EncodedBatch> batches = new ArrayList<>();
        try (WalStorageProvider p = open("blockSize=1m")) {
            Fence f = p.claim(LOG);
            long next = 0;
            for (int b = 0; b < 3; b++) {
                List<byte[]> entries = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    entries.add(filled(40_000, (int) next + i));
                }
                EncodedBatch batch = EncodedBatch.of(next, entries);
                batches.add(batch);
                p.stage(LOG, f, batch);
                next = batch.lastOffset() + 1;
            }
            assertThat(p.state(LOG).committedTail()).isEqualTo(-1);
            p.commit(LOG, f, next - 1);
            ChronicleWalStorageProvider c = (ChronicleWalStorageProvider) p;
            assertThat(c.inspect(LOG, LogStore::indexedFrames)).as("frames written").isEqualTo(3);
            assertThat(readAll(p, LOG)).hasSize(15);
        }
        try (WalStorageProvider p = open("")) {
            List<byte[]> back = readAll(p, LOG);
            List<byte[]> expected = new ArrayList<>();
            batches.forEach(b -> expected.addAll(b.entries()));
            assertThat(back).hasSize(expected.size());
            for (int i = 0; i < back.size(); i++) {
                assertThat(back.get(i)).isEqualTo(expected.get(i));
            }
            assertThat(((ChronicleWalStorageProvider) p).config().blockSize()).isEqualTo(1 << 20);
        }
    }

    @Test
    void blockSizeIsRecordedInTheDirectoryAndCannotChange() {
        open("blockSize=1m").close();
        assertThatThrownBy(() -> open("blockSize=2m")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("created with block size 1048576");
        try (WalStorageProvider p = open("")) {
            assertThat(((ChronicleWalStorageProvider) p).config().blockSize()).isEqualTo(1 << 20);
            assertThat(p.describe().limits().maxEntryBytes()).isEqualTo(257_952);
        }
    }

    @Test
    void retainedBytesComeFromCountersAndSurviveTrimAndReopen() {
        long expected;
        try (WalStorageProvider p = open("")) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 10));
            p.append(LOG, f, Payloads.smallBatch(10, 10));
            long all = 0;
            for (int i = 0; i < 20; i++) {
                all += Payloads.small(i).length;
            }
            assertThat(p.state(LOG).retainedPayloadBytes()).isEqualTo(all);
            assertThat(p.state(LOG).physicalBytes()).isGreaterThan(all);
            p.trim(LOG, f, 14); // inside the second batch
            expected = 0;
            for (int i = 15; i < 20; i++) {
                expected += Payloads.small(i).length;
            }
            assertThat(p.state(LOG).retainedPayloadBytes()).isEqualTo(expected);
            assertThat(p.state(LOG).retainedEntries()).isEqualTo(5);
            p.checkpoints().publish(LOG, f, 19, 1, new ByteArrayInputStream(new byte[1000]));
            assertThat(p.state(LOG).physicalBytes()).isGreaterThan(1000 + expected);
        }
        try (WalStorageProvider p = open("")) {
            assertThat(p.state(LOG).retainedPayloadBytes()).isEqualTo(expected);
            assertThat(p.state(LOG).lowestOffset()).isEqualTo(15);
            assertThat(p.state(LOG).committedTail()).isEqualTo(19);
        }
    }

    @Test
    void logsAndTreesAreListedFromDisk() {
        try (WalStorageProvider p = open("")) {
            p.claim(new LogId("b.tree", 2));
            p.claim(new LogId("b.tree", 0));
            p.claim(new LogId("a", 4095));
            p.state(new LogId("never", 1)); // reading does not create a log
        }
        try (WalStorageProvider p = open("")) {
            assertThat(p.trees()).containsExactly("a", "b.tree");
            assertThat(p.logs("b.tree")).containsExactly(new LogId("b.tree", 0), new LogId("b.tree", 2));
            assertThat(p.logs("never")).isEmpty();
            assertThat(p.state(new LogId("b.tree", 2)).epoch()).isEqualTo(1);
        }
    }

    @Test
    void logDirectoryNamesKeepTreesThatDifferByCaseApart() {
        for (LogId id : List.of(new LogId("Iso", 0), new LogId("iso", 0), new LogId("a.B-c_D", 4095),
                new LogId("_x", 7), new LogId("iso.1", 12))) {
            assertThat(LogStore.parseDirName(LogStore.dirName(id))).isEqualTo(id);
        }
        assertThat(LogStore.dirName(new LogId("Iso", 1))).isEqualTo("~iso.0001");
        assertThat(LogStore.parseDirName("Iso.0001")).isNull();
        assertThat(LogStore.parseDirName("~1so.0001")).isNull();
        assertThat(LogStore.parseDirName("iso.1")).isNull();
        assertThat(LogStore.parseDirName("lattice.lock")).isNull();
        try (WalStorageProvider p = open("")) {
            p.claim(new LogId("Iso", 0));
            p.claim(new LogId("iso", 0));
            p.claim(new LogId("iso", 0));
        }
        try (WalStorageProvider p = open("")) {
            assertThat(p.trees()).containsExactly("Iso", "iso");
            assertThat(p.state(new LogId("Iso", 0)).epoch()).isEqualTo(1);
            assertThat(p.state(new LogId("iso", 0)).epoch()).isEqualTo(2);
        }
    }

    /** Mappings and open descriptors of files under the test directory (Linux /proc). */
    private long[] mappedAndOpen() throws java.io.IOException {
        String root = dir.toRealPath().toString();
        long maps = Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.contains(root)).count();
        long fds = 0;
        try (java.util.stream.Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) s::iterator) {
                try {
                    if (Files.readSymbolicLink(fd).toString().startsWith(root)) {
                        fds++;
                    }
                } catch (java.io.IOException gone) {
                    // closed while listing
                }
            }
        }
        return new long[]{maps, fds};
    }

    @Test
    void closeReleasesEverythingAndLaterCallsThrow() throws Exception {
        WalStorageProvider p = open("durability=fsync");
        Fence f = p.claim(LOG);
        p.append(LOG, f, Payloads.smallBatch(0, 3));
        long[] open = mappedAndOpen();
        assertThat(open[0]).as("mappings while open").isEqualTo(2);
        assertThat(open[1]).as("descriptors while open: lock, cycle file, metadata, space-reserve channel (also "
                + "forces in fsync mode)").isEqualTo(4);
        p.close();
        assertThat(mappedAndOpen()).as("mappings and descriptors after close").containsExactly(0, 0);
        p.close();
        assertThat(p.describe().name()).isEqualTo("chronicle");
        assertThatThrownBy(() -> p.read(LOG, -1, 10, 100)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> p.state(LOG)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> p.claim(LOG)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> p.append(LOG, f, Payloads.smallBatch(3, 1)))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> p.trees()).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> p.checkpoints().latest(LOG)).isInstanceOf(IllegalStateException.class);
        try (WalStorageProvider again = open("")) {
            assertThat(again.state(LOG).committedTail()).isEqualTo(2);
        }
    }

    private static byte[] filled(int len, int seed) {
        byte[] b = new byte[len];
        Arrays.fill(b, (byte) seed);
        if (len > 0) {
            b[0] = (byte) (seed >>> 8);
            b[len - 1] = (byte) (seed * 7);
        }
        return b;
    }
}
