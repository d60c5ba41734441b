package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.Providers;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A read-only instance in this JVM follows a writer in a child JVM ({@link FollowWriterMain}: 1 MiB blocks, a new
 * cycle file every second, multi-frame commit groups, batches staged beyond the commit, trims deleting old cycle
 * files, checkpoints, runs). Polled every 50 ms, the reader shows a dense committed prefix with the exact payloads,
 * whose tail never goes back and is always the end of a commit (never inside a group, never staged entries), at
 * least what the writer had acknowledged before the poll; at the writer's hand-shakes ({@code HOLD}, with batches
 * staged; {@code MIDGROUP}, with a group's first frame on disk) its tail, watermark, latest checkpoint and runs are
 * exactly the writer's. The writer opens while a reader is open, a reader opens while the writer holds the lock,
 * and the reader never maps or opens a file for writing nor changes one.
 */
class ReadOnlyFollowerTest {

    private static final LogId LOG = FollowWriterMain.LOG;
    private final Path dir = TestDirs.create("chronicle-follow");
    private final Path stderr = Path.of("target", "follow-child-stderr.txt");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private static ChronicleWalStorageProvider reader(Path dir) {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).rollCycle("test_secondly")
                .readOnly(true).build());
    }

    /** What the reader is checked against, from the writer's lines consumed so far. */
    private static final class Seen {
        long minTail = -1;
        long minWatermark = -1;
        long minCheckpoint = -1;
        final Set<Long> boundaries = new HashSet<>(Set.of(-1L));
        final Set<Long> watermarks = new HashSet<>();
        int holds;
        int midGroups;
        int polls;
        int probed;
        long pollNanos;
        long stateNanos;
        String firstCycleFile;
        final Set<String> oldestCycleFiles = new TreeSet<>();
    }

    @Test
    void readerFollowsAWriterInAnotherProcess() throws Exception {
        ChronicleWalStorageProvider early = reader(dir); // open before the writer exists
        assertThat(early.state(LOG)).isEqualTo(LogState.EMPTY);
        Seen seen = new Seen();
        List<Long> tails = new ArrayList<>();
        long[] lastRead = {-1};
        WalStorageProvider late = null;
        try (ChildJvm child = ChildJvm.start(stderr, "follow-writer", dir.toString(), "5000", "80", "42")) {
            OutputStream stdin = child.process.getOutputStream();
            child.await("OPENED", 60); // the writer opened and locked while a reader was open
            Throwable second = catchThrowable(() -> ChronicleWalStorageProvider.open(
                    ChronicleConfig.builder(dir).build()));
            assertThat(second).as("the writer holds the lock").isInstanceOf(DirectoryLockedException.class);
            late = Providers.openReadOnly("chronicle:" + dir + "?rollCycle=test_secondly");
            boolean done = false;
            long doneTail = Long.MIN_VALUE;
            while (!done) {
                String line;
                while ((line = child.lines.poll()) != null) {
                    String[] w = line.split(" ");
                    switch (w[0]) {
                        case "COMMITTING" -> seen.boundaries.add(Long.parseLong(w[1]));
                        case "COMMITTED" -> seen.minTail = Math.max(seen.minTail, Long.parseLong(w[1]));
                        case "TRIMMED" -> {
                            seen.minWatermark = Long.parseLong(w[1]);
                            seen.watermarks.add(seen.minWatermark);
                        }
                        case "CHECKPOINT" -> seen.minCheckpoint = Long.parseLong(w[1]);
                        case "HOLD" -> {
                            exactAtHold(early, w, seen);
                            exactAtHold(late, w, seen);
                            seen.holds++;
                            go(stdin);
                        }
                        case "MIDGROUP" -> {
                            long tail = Long.parseLong(w[1]);
                            for (WalStorageProvider r : List.of(early, late)) {
                                assertThat(r.state(LOG).committedTail()).as("group through %s half written", w[2])
                                        .isEqualTo(tail);
                                assertThat(r.read(LOG, tail, 10, 1 << 20).entries()).isEmpty();
                            }
                            seen.midGroups++;
                            go(stdin);
                        }
                        case "DONE" -> {
                            done = true;
                            doneTail = Long.parseLong(w[1]);
                        }
                        case ChildJvm.EOF -> throw new AssertionError("writer ended: " + child.all);
                        default -> { }
                    }
                }
                long t0 = System.nanoTime();
                poll(early, seen, tails, lastRead);
                seen.pollNanos += System.nanoTime() - t0;
                long t1 = System.nanoTime();
                early.state(LOG);
                seen.stateNanos += System.nanoTime() - t1;
                seen.polls++;
                Thread.sleep(50);
            }
            poll(early, seen, tails, lastRead);
            assertThat(lastRead[0]).as("read to the end").isEqualTo(doneTail);
            assertThat(late.state(LOG).committedTail()).isEqualTo(doneTail);
            go(stdin);
            child.await("CLOSED", 60);
            assertThat(child.process.waitFor()).isZero();
        }
        System.out.println("follow: poll ms " + seen.pollNanos / 1_000_000 + " idle state us " + seen.stateNanos / 1000 + " polls " + seen.polls + " holds " + seen.holds + " mid " + seen.midGroups + " commits " + seen.boundaries.size() + " trims " + seen.watermarks + " cycles " + seen.oldestCycleFiles);
        // every tail a read reported was the end of a commit or a trim floor: never inside a group, never staged
        Set<Long> allowed = new HashSet<>(seen.boundaries);
        allowed.addAll(seen.watermarks);
        assertThat(new TreeSet<>(tails)).as("tails seen").isSubsetOf(allowed);
        assertThat(seen.holds).as("hand-shakes with staged batches").isGreaterThan(3);
        assertThat(seen.midGroups).as("hand-shakes inside a multi-frame group").isGreaterThan(0);
        assertThat(seen.watermarks).as("trims").isNotEmpty();
        assertThat(seen.probed).as("the /proc probe saw the reader's mappings and descriptors").isPositive();
        assertThat(seen.oldestCycleFiles.size()).as("the writer rolled cycles and deleted old ones while the "
                + "reader ran: oldest cycle files seen " + seen.oldestCycleFiles).isGreaterThan(1);
        // after the writer is gone: the readers change no file
        TreeMap<String, String> before = ReadOnlyChecks.snapshot(dir);
        for (WalStorageProvider r : List.of(early, late)) {
            LogState s = r.state(LOG);
            ReadOnlyChecks.readAll(r, LOG, -1, s.trimWatermark(), 100, Payloads::of, tails);
            checkCheckpoint(r, seen.minCheckpoint);
            for (RunInfo run : r.runs().list(LOG)) {
                checkRun(r, run.id().value());
            }
            assertThat(r.logs(LOG.tree())).containsExactly(LOG);
            assertThat(r.trees()).containsExactly(LOG.tree());
            r.close();
        }
        assertThat(ReadOnlyChecks.snapshot(dir)).as("files after the readers ran").isEqualTo(before);
    }

    private void poll(WalStorageProvider r, Seen seen, List<Long> tails, long[] lastRead) throws IOException {
        long minTail = seen.minTail;
        long minWatermark = seen.minWatermark;
        LogState s = r.state(LOG);
        tails.add(s.committedTail());
        assertThat(s.committedTail()).as("at least what the writer acknowledged").isGreaterThanOrEqualTo(minTail);
        assertThat(s.trimWatermark()).as("at least the acknowledged trim").isGreaterThanOrEqualTo(minWatermark);
        long before = tails.isEmpty() ? -1 : lastRead[0];
        lastRead[0] = ReadOnlyChecks.readAll(r, LOG, lastRead[0], s.trimWatermark(), 64, Payloads::of, tails);
        assertThat(lastRead[0]).as("tail never goes back").isGreaterThanOrEqualTo(Math.min(before,
                s.committedTail()));
        assertThat(lastRead[0]).isGreaterThanOrEqualTo(s.committedTail());
        if (seen.polls % 5 == 0) {
            checkCheckpoint(r, seen.minCheckpoint);
            seen.probed = Math.max(seen.probed, ReadOnlyChecks.assertNothingOpenForWriting(dir));
            Path q = dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(LOG))
                    .resolve(LogStore.QUEUE_DIR);
            try (Stream<Path> files = Files.list(q)) {
                files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cq4")).sorted().findFirst()
                        .ifPresent(seen.oldestCycleFiles::add);
            } catch (java.nio.file.NoSuchFileException ignored) {
                // not created yet
            }
        }
    }

    private static void exactAtHold(WalStorageProvider r, String[] w, Seen seen) {
        long tail = Long.parseLong(w[1]);
        long staged = Long.parseLong(w[2]);
        long watermark = Long.parseLong(w[3]);
        long checkpoint = Long.parseLong(w[4]);
        Set<String> runs = w[5].equals("-") ? Set.of() : Set.of(w[5].split(","));
        assertThat(staged).as("batches staged beyond the commit").isGreaterThan(tail);
        LogState s = r.state(LOG);
        assertThat(s.committedTail()).as("exactly the committed tail, not the staged one").isEqualTo(tail);
        assertThat(s.trimWatermark()).isEqualTo(watermark);
        assertThat(r.read(LOG, tail, 10, 1 << 20).entries()).as("nothing staged is readable").isEmpty();
        assertThat(r.read(LOG, tail, 10, 1 << 20).committedTail()).isEqualTo(tail);
        Optional<CheckpointInfo> latest = r.checkpoints().latest(LOG);
        assertThat(latest.map(CheckpointInfo::throughOffset).orElse(-1L)).isEqualTo(checkpoint);
        Set<String> listed = new HashSet<>();
        for (RunInfo run : r.runs().list(LOG)) {
            assertThat(run.complete()).isTrue();
            listed.add(run.id().value());
        }
        assertThat(listed).as("runs").isEqualTo(runs);
        for (String id : runs) {
            checkRun(r, id);
        }
        seen.minTail = Math.max(seen.minTail, tail);
    }

    private static void checkCheckpoint(WalStorageProvider r, long atLeast) {
        for (int attempt = 0; ; attempt++) {
            Optional<CheckpointInfo> latest = r.checkpoints().latest(LOG);
            if (atLeast < 0 && latest.isEmpty()) {
                return;
            }
            assertThat(latest).isPresent();
            assertThat(latest.get().throughOffset()).isGreaterThanOrEqualTo(atLeast);
            try (InputStream in = r.checkpoints().open(LOG, latest.get())) {
                assertThat(in.readAllBytes()).isEqualTo(ChildMains.checkpointData(latest.get().throughOffset()));
                return;
            } catch (WalStorageException | IOException e) {
                // replaced by a newer one and deleted between latest and open: look again
                assertThat(attempt).as("checkpoint read: " + e).isLessThan(5);
            }
        }
    }

    private static void checkRun(WalStorageProvider r, String id) {
        byte[] want = FollowWriterMain.runData(id);
        byte[] got = new byte[want.length];
        int n = 0;
        while (n < got.length) {
            int k = r.runs().read(LOG, new RunId(id), n, got, n, Math.min(65_536, got.length - n));
            assertThat(k).isPositive();
            n += k;
        }
        assertThat(got).isEqualTo(want);
        assertThat(r.runs().read(LOG, new RunId(id), want.length, got, 0, 1)).isEqualTo(-1);
    }

    private static void go(OutputStream stdin) throws IOException {
        stdin.write("GO\n".getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }
}
