package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A full disk, for real: a 20 MiB tmpfs the test mounts (root; the test fails if it cannot mount). Concurrent writers
 * append 1 KB entries until the file system is full; every call must answer within {@link #CALL_BOUND_MS}, every
 * failure must be a {@link ProviderUnavailableException} saying the disk is full and naming the directory, no
 * {@link Error} may escape; after space is freed the same provider instance takes writes again; after a reopen
 * every acknowledged entry is there with its value (lost = 0). Checkpoint, epoch and trim records on a full disk fail
 * the same way and leave the previous record intact.
 */
class DiskFullTest {

    private static final int WRITERS = 4;
    private static final int ENTRY_BYTES = 1000;
    /** Upper bound for one provider call on a full disk, in ms. */
    private static final long CALL_BOUND_MS = 5_000;

    static byte[] value(int partition, long offset) {
        byte[] b = new byte[ENTRY_BYTES];
        long s = partition * 0x9E3779B97F4A7C15L ^ offset;
        for (int i = 0; i < b.length; i++) {
            s = s * 6364136223846793005L + 1442695040888963407L;
            b[i] = (byte) (s >>> 56);
        }
        return b;
    }

    private static EncodedBatch batch(int partition, long offset) {
        return EncodedBatch.of(offset, BatchId.random(), List.of(value(partition, offset)));
    }

    private static void fill(Path file, long bytes) throws IOException {
        byte[] chunk = new byte[64 * 1024];
        Arrays.fill(chunk, (byte) 7);
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long done = 0; done < bytes; done += chunk.length) {
                out.write(chunk);
            }
        }
    }

    /** Fills the rest of the file system with {@code file} (as much as it takes). */
    private static void fillUp(Path file) {
        byte[] chunk = new byte[4096];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                out.write(chunk);
            }
        } catch (IOException expected) {
            // ENOSPC
        }
    }

    private static void assertDiskFull(Throwable t, Path root) {
        assertThat(t).isInstanceOf(ProviderUnavailableException.class);
        assertThat(t.getMessage()).contains("disk is full").contains(root.toString());
    }

    /**
     * With {@code hourly} cycles every log writes one cycle file; with {@code test_secondly} a new cycle file every
     * second, so Chronicle also creates files (and writes their headers through the mapping) on the full disk.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "rollCycle {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"hourly", "test_secondly"})
    void concurrentWritersOnAFullTmpfsGetTypedErrorsLoseNothingAndResumeAfterSpaceIsFreed(String rollCycle)
            throws Exception {
        try (Tmpfs fs = Tmpfs.mount(20)) {
            Path root = fs.dir.resolve("wal");
            Path filler = fs.dir.resolve("filler");
            fill(filler, 4L << 20);
            Map<Integer, ConcurrentSkipListSet<Long>> acked = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<Throwable> wrong = new ConcurrentLinkedQueue<>();
            AtomicLong failures = new AtomicLong();
            AtomicLong slowest = new AtomicLong();
            WalStorageProvider wal = ChronicleWalStorageProvider.open(ChronicleConfig.builder(root)
                    .rollCycle(rollCycle).build());
            try {
                Fence[] fences = new Fence[WRITERS];
                for (int p = 0; p < WRITERS; p++) {
                    fences[p] = wal.claim(new LogId("full", p));
                    acked.put(p, new ConcurrentSkipListSet<>());
                }
                // Phase 1: write until every writer failed 5 times in a row.
                List<Thread> threads = new ArrayList<>();
                for (int p = 0; p < WRITERS; p++) {
                    int part = p;
                    threads.add(new Thread(() -> {
                        LogId log = new LogId("full", part);
                        long next = 0;
                        int failedInARow = 0;
                        while (failedInARow < 5 && next < 100_000) {
                            long t0 = System.nanoTime();
                            try {
                                wal.stage(log, fences[part], batch(part, next));
                                wal.commit(log, fences[part], next);
                                acked.get(part).add(next);
                                next++;
                                failedInARow = 0;
                            } catch (Throwable t) {
                                failures.incrementAndGet();
                                failedInARow++;
                                if (!(t instanceof ProviderUnavailableException)
                                        || !t.getMessage().contains("disk is full")) {
                                    wrong.add(t);
                                }
                                try {
                                    next = wal.reconcile(log, fences[part]).committedTail() + 1;
                                } catch (Throwable r) {
                                    wrong.add(r);
                                }
                            } finally {
                                slowest.accumulateAndGet((System.nanoTime() - t0) / 1_000_000, Math::max);
                            }
                        }
                    }, "writer-" + p));
                }
                threads.forEach(Thread::start);
                for (Thread t : threads) {
                    t.join(120_000);
                    assertThat(t.isAlive()).as("writer %s still running after 120 s", t.getName()).isFalse();
                }
                assertThat(wrong).as("every failure is a typed disk-full error").isEmpty();
                assertThat(failures.get()).as("the file system filled up").isGreaterThanOrEqualTo(5L * WRITERS);
                assertThat(slowest.get()).as("slowest call, ms").isLessThan(CALL_BOUND_MS);
                if (rollCycle.equals("test_secondly")) {
                    Thread.sleep(1_100); // the next commit starts a new cycle file, on the full disk
                }
                Throwable full = catchThrowable(() -> {
                    wal.stage(new LogId("full", 0), fences[0], batch(0, acked.get(0).last() + 1));
                    wal.commit(new LogId("full", 0), fences[0], acked.get(0).last() + 1);
                });
                assertDiskFull(full, root);

                // Phase 2: free space; the same instance takes writes again.
                Files.delete(filler);
                for (int p = 0; p < WRITERS; p++) {
                    LogId log = new LogId("full", p);
                    long next = wal.reconcile(log, fences[p]).committedTail() + 1;
                    for (int i = 0; i < 50; i++, next++) {
                        wal.stage(log, fences[p], batch(p, next));
                        wal.commit(log, fences[p], next);
                        acked.get(p).add(next);
                    }
                }
            } finally {
                wal.close();
            }

            // Phase 3: reopen, every acknowledged entry is there with its value.
            long checked = 0;
            long lost = 0;
            try (WalStorageProvider again = ChronicleWalStorageProvider.open(ChronicleConfig.builder(root)
                    .rollCycle(rollCycle).build())) {
                for (int p = 0; p < WRITERS; p++) {
                    LogId log = new LogId("full", p);
                    Map<Long, byte[]> found = new ConcurrentHashMap<>();
                    long from = -1;
                    while (true) {
                        ReadPage page = again.read(log, from, 10_000, 64L << 20);
                        if (page.entries().isEmpty()) {
                            break;
                        }
                        for (LogEntry e : page.entries()) {
                            found.put(e.offset(), e.payload());
                            from = e.offset();
                        }
                    }
                    for (long off : acked.get(p)) {
                        checked++;
                        byte[] v = found.get(off);
                        if (v == null || !Arrays.equals(v, value(p, off))) {
                            lost++;
                        }
                    }
                }
            }
            long cycleFiles;
            try (java.util.stream.Stream<Path> files = Files.walk(root)) {
                cycleFiles = files.filter(f -> f.toString().endsWith(".cq4")).count();
            }
            System.out.printf("disk-full (%s): %d writers, %d acknowledged entries checked, %d failed calls, "
                    + "slowest call %d ms, %d cycle files, lost %d%n", rollCycle, WRITERS, checked, failures.get(),
                    slowest.get(), cycleFiles, lost);
            if (rollCycle.equals("test_secondly")) {
                assertThat(cycleFiles).as("cycle files created along the way").isGreaterThan(WRITERS);
            }
            assertThat(lost).as("acknowledged entries lost").isZero();
            assertThat(checked).isGreaterThan(1000);
        }
    }

    @Test
    void epochTrimAndCheckpointWritesOnAFullDiskFailTypedAndKeepTheOldRecord() throws Exception {
        try (Tmpfs fs = Tmpfs.mount(20)) {
            Path root = fs.dir.resolve("wal");
            Path filler = fs.dir.resolve("filler");
            LogId log = new LogId("small", 0);
            WalStorageProvider wal = ChronicleWalStorageProvider.open(ChronicleConfig.builder(root).build());
            Fence fence;
            CheckpointInfo first;
            try {
                fence = wal.claim(log);
                for (long o = 0; o < 10; o++) {
                    wal.stage(log, fence, batch(0, o));
                    wal.commit(log, fence, o);
                }
                wal.trim(log, fence, 2);
                first = wal.checkpoints().publish(log, fence, 5, 1, new ByteArrayInputStream(new byte[100]));
                fillUp(filler);

                assertDiskFull(catchThrowable(() -> wal.claim(log)), root);
                assertDiskFull(catchThrowable(() -> wal.trim(log, fence, 4)), root);
                assertDiskFull(catchThrowable(() -> wal.checkpoints().publish(log, fence, 8, 1,
                        new ByteArrayInputStream(new byte[1 << 20]))), root);
                assertThat(wal.state(log).epoch()).isEqualTo(fence.epoch());
                assertThat(wal.state(log).lowestOffset()).isEqualTo(3);
                assertThat(wal.checkpoints().latest(log)).contains(first);

                Files.delete(filler);
                wal.trim(log, fence, 4);
            } finally {
                wal.close();
            }
            try (WalStorageProvider again = ChronicleWalStorageProvider.open(ChronicleConfig.builder(root).build())) {
                assertThat(again.state(log).epoch()).isEqualTo(fence.epoch());
                assertThat(again.state(log).lowestOffset()).isEqualTo(5);
                assertThat(again.state(log).committedTail()).isEqualTo(9);
                assertThat(again.checkpoints().latest(log)).contains(first);
                try (InputStream in = again.checkpoints().open(log, first)) {
                    assertThat(in.readAllBytes()).hasSize(100);
                }
                Fence next = again.claim(log);
                assertThat(next.epoch()).isEqualTo(fence.epoch() + 1);
            }
        }
    }
}
