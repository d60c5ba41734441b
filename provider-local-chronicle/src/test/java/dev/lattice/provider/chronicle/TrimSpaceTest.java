package dev.lattice.provider.chronicle;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Space on disk after trims (issue 17): a log written and trimmed as the engine does (a bounded retained tail, trims
 * after every flush) keeps on disk the retained tail plus about one cycle file, not everything written in the current
 * roll cycle. Bytes are allocated bytes ({@code du}); the bound is {@link #bound}. Everything above the watermark
 * reads back exactly after a reopen and after a SIGKILL of the writer.
 */
class TrimSpaceTest {

    private static final long ROLL = 1L << 20;
    private static final long RETAIN = 4L << 20;
    private static final long TOTAL = 48L << 20;
    private final Path dir = TestDirs.create("chronicle-space");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private Path queueDir() {
        return dir.resolve(ChronicleWalStorageProvider.LOGS_DIR).resolve(LogStore.dirName(SpaceWriterMain.LOG))
                .resolve(LogStore.QUEUE_DIR);
    }

    /** @return the bytes allocated under a directory, as {@code du -s -B1} counts them */
    static long du(Path p) throws IOException, InterruptedException {
        Process pr = new ProcessBuilder("du", "-s", "-B1", p.toString()).redirectErrorStream(true).start();
        String out = new String(pr.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(pr.waitFor()).as("du: " + out).isZero();
        return Long.parseLong(out.split("\\s+")[0]);
    }

    private Set<String> cycleFiles() throws IOException {
        try (Stream<Path> s = Files.list(queueDir())) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cq4"))
                    .collect(java.util.stream.Collectors.toCollection(TreeSet::new));
        }
    }

    /**
     * What the queue directory may take after a trim: the retained frames (the log's physical bytes, which count
     * the whole frame holding the watermark), one cycle file's worth of trimmed frames ({@code rollBytes} plus one
     * frame of at most a quarter of the 1 MiB block), and per cycle file 512 KiB for Chronicle's header and index
     * arrays and the space reserved ahead of the write position (256 KiB), plus 256 KiB for {@code metadata.cq4t}.
     */
    private static long bound(LogState s, int files) {
        return s.physicalBytes() + ROLL + (1L << 18) + files * (512L << 10) + (256L << 10);
    }

    private void assertWithinBound(WalStorageProvider p, String when) throws IOException, InterruptedException {
        LogState s = p.state(SpaceWriterMain.LOG);
        int files = cycleFiles().size();
        assertThat(du(queueDir())).as(when + ": bytes on disk of the queue (" + files + " cycle files, state " + s
                + ")").isLessThanOrEqualTo(bound(s, files));
    }

    /** Reads every entry above the watermark, checking density and bytes; returns the last offset read. */
    private static long readAll(WalStorageProvider p) {
        LogState s = p.state(SpaceWriterMain.LOG);
        long from = s.trimWatermark();
        long expect = from + 1;
        while (true) {
            ReadPage r = p.read(SpaceWriterMain.LOG, from, 1000, 8L << 20);
            if (r.isEmpty()) {
                assertThat(expect - 1).as("read up to the tail").isEqualTo(s.committedTail());
                return expect - 1;
            }
            for (LogEntry e : r.entries()) {
                assertThat(e.offset()).isEqualTo(expect);
                assertThat(e.payload()).as("offset " + e.offset()).isEqualTo(Payloads.of(e.offset()));
                expect++;
            }
            from = r.nextFromExclusive(from);
        }
    }

    private ChronicleConfig config(long rollBytes) {
        // a clock that never moves: only size rolls start new cycle files
        return ChronicleConfig.builder(dir).blockSize(1 << 20).rollBytes(rollBytes)
                .clock(new SetTimeProvider(Instant.parse("2026-12-02T10:15:00Z"))).build();
    }

    @Test
    void trimmedBytesOfTheCurrentCycleComeBackAndTheTailReadsBackAfterReopen() throws Exception {
        Set<String> seen = new TreeSet<>();
        long written = 0;
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config(ROLL))) {
            SpaceWriterMain.Writer w = new SpaceWriterMain.Writer(p, p.claim(SpaceWriterMain.LOG), RETAIN);
            while (written < TOTAL) {
                written += w.write(2L << 20, null);
                seen.addAll(cycleFiles());
                assertWithinBound(p, "after " + written + " bytes");
            }
            assertThat(p.state(SpaceWriterMain.LOG).trimWatermark()).isPositive();
            readAll(p);
        }
        assertThat(seen).as("cycle files rolled by size, the old ones deleted").hasSizeGreaterThan(30);
        assertThat(cycleFiles().size()).isLessThan(10);
        long tail;
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config(ROLL))) {
            assertWithinBound(p, "after reopen");
            tail = readAll(p);
            Fence f = p.claim(SpaceWriterMain.LOG);
            p.reconcile(SpaceWriterMain.LOG, f);
            // a reopened log continues in the newest cycle file (ahead of the clock) and goes on rolling
            written += new SpaceWriterMain.Writer(p, f, RETAIN).write(8L << 20, null);
            assertWithinBound(p, "after writing on after the reopen");
            assertThat(p.state(SpaceWriterMain.LOG).trimWatermark()).isGreaterThan(tail);
            try (WalStorageProvider reader = ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir)
                    .readOnly(true).build())) {
                assertThat(readAll(reader)).as("a read-only instance on the wall clock reads it all")
                        .isEqualTo(p.state(SpaceWriterMain.LOG).committedTail());
            }
            tail = readAll(p);
        }
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config(ROLL))) {
            assertThat(readAll(p)).isEqualTo(tail);
        }
        assertThat(written).isGreaterThanOrEqualTo(TOTAL);
    }

    @Test
    void withoutSizeRollsTheCurrentCycleKeepsWhatWasTrimmed() throws Exception {
        // the control: the same writes with rolls by time only (the behaviour before) exceed the bound
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config(Long.MAX_VALUE))) {
            new SpaceWriterMain.Writer(p, p.claim(SpaceWriterMain.LOG), RETAIN).write(24L << 20, null);
            LogState s = p.state(SpaceWriterMain.LOG);
            assertThat(cycleFiles()).hasSize(1);
            assertThat(du(queueDir())).isGreaterThan(bound(s, 1) + (8L << 20));
            readAll(p);
        }
    }

    @Test
    void afterSigkillEverythingAboveTheTrimReadsBackAndTheBoundHolds() throws Exception {
        long lastCommit = -1;
        long lastTrim = -1;
        Path err = Files.createTempFile("space-writer", ".err");
        try (ChildJvm child = ChildJvm.start(err, "space-writer", dir.toString(), "blockSize=1m&rollBytes=1m",
                Long.toString(RETAIN))) {
            child.await("READY", 60);
            long bytes = 0;
            while (bytes < TOTAL) {
                String l = child.await("", 120);
                String[] w = l.split(" ");
                if (w[0].equals("C")) {
                    lastCommit = Long.parseLong(w[1]);
                    bytes = Long.parseLong(w[2]);
                } else if (w[0].equals("T")) {
                    lastTrim = Long.parseLong(w[1]);
                }
            }
            child.kill();
            for (String l : child.all) {
                String[] w = l.split(" ");
                if (w[0].equals("C")) {
                    lastCommit = Math.max(lastCommit, Long.parseLong(w[1]));
                } else if (w[0].equals("T")) {
                    lastTrim = Math.max(lastTrim, Long.parseLong(w[1]));
                }
            }
        } finally {
            Files.deleteIfExists(err);
        }
        assertThat(lastTrim).isPositive();
        ChronicleConfig config = ChronicleConfig.builder(dir).blockSize(1 << 20).rollBytes(ROLL).build();
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config)) {
            LogState s = p.state(SpaceWriterMain.LOG);
            assertThat(s.committedTail()).as("acknowledged commits").isGreaterThanOrEqualTo(lastCommit);
            assertThat(s.trimWatermark()).as("acknowledged trims").isGreaterThanOrEqualTo(lastTrim);
            Fence f = p.claim(SpaceWriterMain.LOG);
            p.reconcile(SpaceWriterMain.LOG, f);
            assertWithinBound(p, "after the kill and reconcile");
            long tail = readAll(p);
            assertThat(tail).isGreaterThanOrEqualTo(lastCommit);
            new SpaceWriterMain.Writer(p, f, RETAIN).write(8L << 20, null);
            assertWithinBound(p, "after writing on");
            readAll(p);
        }
    }
}
