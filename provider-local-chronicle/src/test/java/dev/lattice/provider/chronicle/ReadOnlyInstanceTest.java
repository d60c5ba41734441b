package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.Providers;
import dev.lattice.spi.ReadOnlyProviderException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingConsumer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A read-only instance beside a writer instance in the same JVM, on the same directory (no lock between them):
 * commit groups of several frames are invisible until their last frame is written, cycles roll under a controlled
 * clock, trims (also beyond the tail) and the cycle files they delete, checkpoints, runs, a drop and a new log under
 * the same name; write calls are refused with {@link ReadOnlyProviderException}; a reader on a missing or closed
 * directory creates and changes nothing.
 */
class ReadOnlyInstanceTest {

    private static final LogId LOG = new LogId("ro", 3);
    private static final long HOUR = TimeUnit.HOURS.toMillis(1);
    private final Path dir = TestDirs.create("chronicle-ro");
    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-11-30T10:15:00Z"));

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private ChronicleWalStorageProvider writer() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).blockSize(1 << 20).clock(clock).build());
    }

    private ChronicleWalStorageProvider reader() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).clock(clock).readOnly(true).build());
    }

    private long cycleFiles() throws IOException {
        Path q = dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG))
                .resolve(LogStore.QUEUE_DIR);
        try (Stream<Path> s = Files.list(q)) {
            return s.filter(p -> p.toString().endsWith(".cq4")).count();
        }
    }

    private static List<byte[]> entries(long first, int n) {
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Payloads.of(first + i));
        }
        return out;
    }

    /** Reads all of the log on the reader and checks it is exactly {@code watermark+1 .. tail}. */
    private static void readsExactly(WalStorageProvider r, long watermark, long tail) {
        LogState s = r.state(LOG);
        assertThat(s.committedTail()).as("reader's tail").isEqualTo(tail);
        assertThat(s.trimWatermark()).as("reader's watermark").isEqualTo(watermark);
        List<Long> tails = new ArrayList<>();
        assertThat(ReadOnlyChecks.readAll(r, LOG, -1, watermark, 50, Payloads::of, tails)).isEqualTo(tail);
        assertThat(tails).containsOnly(tail);
    }

    @Test
    void followsAWriterInTheSameJvmAcrossGroupsCyclesTrimsCheckpointsRunsAndADrop() throws Exception {
        try (ChronicleWalStorageProvider r = reader(); ChronicleWalStorageProvider w = writer()) {
            // opened before the directory recorded its block size: same durability and features, default limits
            assertThat(r.describe().durability()).isEqualTo(w.describe().durability());
            assertThat(r.describe().features()).isEqualTo(w.describe().features());
            assertThat(r.state(LOG)).isEqualTo(LogState.EMPTY);
            Fence f = w.claim(LOG);
            assertThat(r.state(LOG).epoch()).isEqualTo(1);
            long next = 0;
            for (int i = 0; i < 5; i++) {
                w.append(LOG, f, EncodedBatch.of(next, entries(next, 7)));
                next += 7;
                readsExactly(r, -1, next - 1);
            }
            // a commit group of three frames: invisible to the reader until its last frame is written
            long max = w.describe().limits().maxBatchBytes();
            long tailBefore = next - 1;
            for (int k = 0; k < 3; k++) {
                EncodedBatch b = FollowWriterMain.batch(next, Integer.MAX_VALUE, max);
                w.stage(LOG, f, b);
                next = b.lastOffset() + 1;
            }
            // staged, not committed: not visible
            readsExactly(r, -1, tailBefore);
            List<Long> seenAfterFrame = new ArrayList<>();
            List<Integer> readAfterFrame = new ArrayList<>();
            w.inspect(LOG, s -> s.afterFrameWritten = () -> {
                seenAfterFrame.add(r.state(LOG).committedTail());
                readAfterFrame.add(r.read(LOG, tailBefore, 10, 1 << 20).entries().size());
            });
            w.commit(LOG, f, next - 1);
            w.inspect(LOG, s -> s.afterFrameWritten = null);
            assertThat(seenAfterFrame).as("reader's tail after each frame of the group")
                    .containsExactly(tailBefore, tailBefore, next - 1);
            assertThat(readAfterFrame).as("entries readable after each frame").startsWith(0, 0);
            assertThat(readAfterFrame.get(2)).isPositive();
            readsExactly(r, -1, next - 1);
            // new cycles (hourly, controlled clock), with an empty hour in between
            for (int hour = 0; hour < 3; hour++) {
                clock.advanceMillis(2 * HOUR);
                w.append(LOG, f, EncodedBatch.of(next, entries(next, 5)));
                next += 5;
                readsExactly(r, -1, next - 1);
            }
            assertThat(cycleFiles()).isEqualTo(4);
            // a trim that deletes the older cycle files, then one through the tail, then one beyond it
            long files = cycleFiles();
            w.trim(LOG, f, next - 3);
            assertThat(cycleFiles()).isLessThan(files);
            readsExactly(r, next - 3, next - 1);
            w.append(LOG, f, EncodedBatch.of(next, entries(next, 4)));
            next += 4;
            readsExactly(r, next - 7, next - 1);
            w.trim(LOG, f, next - 1);
            readsExactly(r, next - 1, next - 1);
            w.trim(LOG, f, next + 9);
            next += 10;
            readsExactly(r, next - 1, next - 1);
            clock.advanceMillis(HOUR);
            w.append(LOG, f, EncodedBatch.of(next, entries(next, 3)));
            next += 3;
            readsExactly(r, next - 4, next - 1);
            // checkpoints and runs are re-listed on every call
            assertThat(r.checkpoints().latest(LOG)).isEmpty();
            byte[] data = ChildMains.checkpointData(next - 1);
            w.checkpoints().publish(LOG, f, next - 1, 1, new ByteArrayInputStream(data));
            CheckpointInfo latest = r.checkpoints().latest(LOG).orElseThrow();
            assertThat(latest.throughOffset()).isEqualTo(next - 1);
            try (InputStream in = r.checkpoints().open(LOG, latest)) {
                assertThat(in.readAllBytes()).isEqualTo(data);
            }
            byte[] run = FollowWriterMain.runData("x1");
            w.runs().write(LOG, f, new RunId("x1"), new ByteArrayInputStream(run), run.length);
            assertThat(r.runs().list(LOG)).extracting(RunInfo::id).containsExactly(new RunId("x1"));
            byte[] got = new byte[run.length];
            int n = 0;
            while (n < run.length) {
                n += r.runs().read(LOG, new RunId("x1"), n, got, n, run.length - n);
            }
            assertThat(got).isEqualTo(run);
            assertThat(r.runs().limits()).isEqualTo(w.runs().limits());
            w.runs().delete(LOG, f, new RunId("x1"));
            assertThat(r.runs().list(LOG)).isEmpty();
            // a drop, and a new log under the same name (a new queue): the reader starts over
            w.drop(LOG, f);
            assertThat(r.state(LOG)).isEqualTo(LogState.EMPTY);
            assertThat(r.logs(LOG.tree())).isEmpty();
            Fence f2 = w.claim(LOG);
            w.append(LOG, f2, EncodedBatch.of(0, entries(0, 6)));
            readsExactly(r, -1, 5);
            assertThat(r.state(LOG).epoch()).isEqualTo(1);
            assertThat(r.checkpoints().latest(LOG)).isEmpty();
        }
    }

    @Test
    void writerOpensBesideAReaderAndAReaderBesideTheWriter() {
        try (WalStorageProvider r1 = reader(); ChronicleWalStorageProvider w = writer();
                WalStorageProvider r2 = Providers.openReadOnly("chronicle:" + dir)) {
            assertThat(catchThrowable(this::writer)).as("one writer only").isInstanceOf(DirectoryLockedException.class);
            Fence f = w.claim(LOG);
            w.append(LOG, f, EncodedBatch.of(0, entries(0, 3)));
            readsExactly(r1, -1, 2);
            readsExactly(r2, -1, 2);
            assertThat(r2).isInstanceOf(ChronicleWalStorageProvider.class);
            assertThat(((ChronicleWalStorageProvider) r2).config().readOnly()).isTrue();
            assertThat(r2.describe().durability()).isEqualTo(w.describe().durability());
            assertThat(r2.describe().features()).isEqualTo(w.describe().features());
            assertThat(r2.describe().limits()).as("the directory's block size").isEqualTo(w.describe().limits());
        }
    }

    @Test
    void everyWriteCallOnAReaderThrowsAndChangesNothing() throws Exception {
        Fence f;
        try (WalStorageProvider w = writer()) {
            f = w.claim(LOG);
            w.append(LOG, f, EncodedBatch.of(0, entries(0, 3)));
        }
        TreeMap<String, String> before = ReadOnlyChecks.snapshot(dir);
        EncodedBatch b = EncodedBatch.of(3, entries(3, 1));
        Map<String, ThrowingConsumer<WalStorageProvider>> calls = new LinkedHashMap<>();
        calls.put("claim", r -> r.claim(LOG));
        calls.put("stage", r -> r.stage(LOG, f, b));
        calls.put("commit", r -> r.commit(LOG, f, 3));
        calls.put("abort", r -> r.abort(LOG, f, StagedBatch.of(f, b)));
        calls.put("trim", r -> r.trim(LOG, f, 1));
        calls.put("reconcile", r -> r.reconcile(LOG, f));
        calls.put("repair", r -> r.repair(LOG, f));
        calls.put("drop", r -> r.drop(LOG, f));
        calls.put("checkpoints().publish", r -> r.checkpoints().publish(LOG, f, 2, 1,
                new ByteArrayInputStream(new byte[10])));
        calls.put("checkpoints().deleteBefore", r -> r.checkpoints().deleteBefore(LOG, 2));
        calls.put("runs().write", r -> r.runs().write(LOG, f, new RunId("a"), new ByteArrayInputStream(new byte[3]),
                3));
        calls.put("runs().delete", r -> r.runs().delete(LOG, f, new RunId("a")));
        try (WalStorageProvider r = new ChronicleProviderFactory().openReadOnly(URI.create("chronicle:" + dir),
                Map.of())) {
            for (Map.Entry<String, ThrowingConsumer<WalStorageProvider>> c : calls.entrySet()) {
                Throwable t = catchThrowable(() -> c.getValue().accept(r));
                assertThat(t).as(c.getKey()).isInstanceOf(ReadOnlyProviderException.class)
                        .hasMessageContaining(c.getKey()).hasMessageContaining("read-only")
                        .hasMessageContaining(LOG.toString());
                assertThat(((ReadOnlyProviderException) t).operation()).isEqualTo(c.getKey());
                assertThat(((ReadOnlyProviderException) t).log()).isEqualTo(LOG);
            }
            readsExactly(r, -1, 2);
        }
        assertThat(ReadOnlyChecks.snapshot(dir)).isEqualTo(before);
        try (WalStorageProvider w = writer()) {
            assertThat(w.state(LOG).committedTail()).isEqualTo(2);
        }
    }

    @Test
    void aReaderOnAMissingDirectoryCreatesNothingAndSeesTheWriterOnceItExists() {
        Path missing = dir.resolve("not-yet");
        try (WalStorageProvider r = ChronicleWalStorageProvider.open(ChronicleConfig.builder(missing)
                .readOnly(true).build())) {
            assertThat(r.state(LOG)).isEqualTo(LogState.EMPTY);
            assertThat(r.trees()).isEmpty();
            assertThat(r.read(LOG, -1, 10, 100).entries()).isEmpty();
            assertThat(r.checkpoints().latest(LOG)).isEmpty();
            assertThat(r.runs().list(LOG)).isEmpty();
            assertThat(missing).doesNotExist();
            try (WalStorageProvider w = ChronicleWalStorageProvider.open(ChronicleConfig.builder(missing).build())) {
                Fence f = w.claim(LOG);
                w.append(LOG, f, EncodedBatch.of(0, entries(0, 2)));
                assertThat(r.state(LOG).committedTail()).isEqualTo(1);
                assertThat(r.trees()).containsExactly(LOG.tree());
            }
        }
    }

    @Test
    void aReaderChangesNoFileOfAClosedDirectoryAndRefusesBadOptions() throws Exception {
        try (WalStorageProvider w = writer()) {
            Fence f = w.claim(LOG);
            long next = 0;
            for (int i = 0; i < 4; i++) {
                clock.advanceMillis(HOUR);
                w.append(LOG, f, EncodedBatch.of(next, entries(next, 9)));
                next += 9;
            }
            w.trim(LOG, f, 12);
            w.checkpoints().publish(LOG, f, 20, 1, new ByteArrayInputStream(ChildMains.checkpointData(20)));
        }
        TreeMap<String, String> before = ReadOnlyChecks.snapshot(dir);
        Thread.sleep(20); // a change in the same millisecond would not move an mtime on a coarse file system
        for (int round = 0; round < 3; round++) {
            try (WalStorageProvider r = Providers.openReadOnly("chronicle:" + dir)) {
                readsExactly(r, 12, 35);
                try (InputStream in = r.checkpoints().open(LOG, r.checkpoints().latest(LOG).orElseThrow())) {
                    assertThat(in.readAllBytes()).isEqualTo(ChildMains.checkpointData(20));
                }
                assertThat(r.logs(LOG.tree())).containsExactly(LOG);
                assertThat(ReadOnlyChecks.assertNothingOpenForWriting(dir)).isPositive();
            }
        }
        assertThat(ReadOnlyChecks.snapshot(dir)).isEqualTo(before);
        assertThatThrownBy(() -> Providers.openReadOnly("chronicle:" + dir + "?colour=blue"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("colour");
        assertThatThrownBy(() -> new ChronicleProviderFactory().openReadOnly(URI.create("postgres://h/db"), Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aClosedReaderRefusesCalls() {
        WalStorageProvider r = reader();
        r.close();
        r.close();
        assertThatThrownBy(() -> r.state(LOG)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> r.read(LOG, -1, 1, 1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> r.claim(LOG)).isInstanceOf(IllegalStateException.class);
    }
}
