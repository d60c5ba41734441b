package dev.lattice.engine;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The engine on Chronicle when the disk fills up and when a log is damaged:
 * <ul>
 *   <li>a 20 MiB tmpfs the test mounts (root, as in CI; the test fails if it cannot mount): 4 writer threads put 1 KB
 *       values until puts fail; every put answers within {@link #PUT_BOUND_MS}, failures are typed engine errors
 *       caused by the provider's disk-full {@link ProviderUnavailableException}; after the filler file is deleted the
 *       same Lattice takes puts again; after a reopen every acknowledged put is there with its value (lost = 0);</li>
 *   <li>one flipped byte in a middle record of a log: opening the tree fails with {@link CorruptLogException} in the
 *       cause chain (before: the tree opened with half its entries).</li>
 * </ul>
 */
class ChronicleReliabilityTest {

    private static final int WRITERS = 4;
    /** Upper bound for one put on a full disk, in ms (the engine's retries with backoff included). */
    private static final long PUT_BOUND_MS = 20_000;

    @TempDir
    Path tmp;

    private static void run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("'" + String.join(" ", cmd) + "' failed (disk-full tests mount a tmpfs "
                    + "and need root): " + out);
        }
    }

    private static byte[] value(String key) {
        byte[] b = new byte[1000];
        long s = key.hashCode() * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < b.length; i++) {
            s = s * 6364136223846793005L + 1442695040888963407L;
            b[i] = (byte) (s >>> 56);
        }
        return b;
    }

    private static boolean causedByDiskFull(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof ProviderUnavailableException && c.getMessage().contains("disk is full")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void fullDiskFailsPutsTypedWithinBoundsAndLosesNoAcknowledgedPut() throws Exception {
        Path mount = tmp.resolve("fs");
        Files.createDirectories(mount);
        run("mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", mount.toString());
        try {
            Path filler = mount.resolve("filler");
            byte[] chunk = new byte[64 << 10];
            try (OutputStream out = Files.newOutputStream(filler)) {
                for (int i = 0; i < 64; i++) {
                    out.write(chunk); // 4 MiB to free later
                }
            }
            LatticeConfig cfg = LatticeConfig.builder().uri("chronicle:" + mount.resolve("data")).partitions(4)
                    .maxRetries(2).retryBackoff(Duration.ofMillis(10)).build();
            Map<String, byte[]> acked = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            AtomicLong slowest = new AtomicLong();
            try (Lattice l = Lattice.open(cfg)) {
                Tree t = l.tree("full");
                List<Thread> threads = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    int writer = w;
                    threads.add(new Thread(() -> {
                        int failedInARow = 0;
                        for (int i = 0; failedInARow < 5 && i < 100_000; i++) {
                            String key = "w" + writer + "-" + i;
                            long t0 = System.nanoTime();
                            try {
                                t.put(key, value(key));
                                acked.put(key, value(key));
                                failedInARow = 0;
                            } catch (Throwable e) {
                                failures.add(e);
                                failedInARow++;
                            } finally {
                                slowest.accumulateAndGet((System.nanoTime() - t0) / 1_000_000, Math::max);
                            }
                        }
                    }, "put-" + w));
                }
                threads.forEach(Thread::start);
                for (Thread th : threads) {
                    th.join(240_000);
                    assertThat(th.isAlive()).as("writer %s hangs", th.getName()).isFalse();
                }
                assertThat(failures).as("the disk filled up").isNotEmpty();
                assertThat(failures).as("failures are typed engine errors")
                        .allSatisfy(e -> assertThat(e).isInstanceOf(LatticeException.class));
                assertThat(failures.stream().anyMatch(ChronicleReliabilityTest::causedByDiskFull))
                        .as("a failure names the full disk").isTrue();
                assertThat(slowest.get()).as("slowest put, ms").isLessThan(PUT_BOUND_MS);

                Files.delete(filler);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                for (int w = 0; w < WRITERS; w++) {
                    for (int i = 0; i < 20; i++) {
                        String key = "after" + w + "-" + i;
                        while (true) {
                            try {
                                t.put(key, value(key));
                                acked.put(key, value(key));
                                break;
                            } catch (LatticeException e) {
                                assertThat(System.nanoTime()).as("puts work again after space is freed: " + e)
                                        .isLessThan(deadline);
                                Thread.sleep(50);
                            }
                        }
                    }
                }
            }
            long lost = 0;
            try (Lattice l = Lattice.open(cfg)) {
                Tree t = l.tree("full");
                for (Map.Entry<String, byte[]> e : acked.entrySet()) {
                    if (!t.get(e.getKey()).map(v -> Arrays.equals(v, e.getValue())).orElse(false)) {
                        lost++;
                    }
                }
            }
            System.out.printf("engine disk-full: %d writers, %d acknowledged puts checked, %d failed puts, slowest "
                    + "put %d ms, lost %d%n", WRITERS, acked.size(), failures.size(), slowest.get(), lost);
            assertThat(lost).as("acknowledged puts lost").isZero();
            assertThat(acked.size()).isGreaterThan(1000);
        } finally {
            try {
                run("umount", mount.toString());
            } catch (IllegalStateException busy) {
                run("umount", "-l", mount.toString());
            }
        }
    }

    @Test
    void openingATreeWithADamagedMiddleRecordFailsWithCorruptLogException() throws Exception {
        Path data = tmp.resolve("data");
        // maxCheckpointBytes=1: every checkpoint (also the one at close) is refused, so the log keeps all 200
        // entries and the damaged record is one that replay needs
        LatticeConfig cfg = LatticeConfig.builder().uri("chronicle:" + data + "?maxCheckpointBytes=1").partitions(1)
                .checkpointEveryEntries(1_000_000).build();
        try (Lattice l = Lattice.open(cfg)) {
            Tree t = l.tree("dmg");
            for (int i = 0; i < 200; i++) {
                t.put("k" + i, value("k" + i));
            }
            assertThat(t.count()).isEqualTo(200);
        }
        try (dev.lattice.spi.WalStorageProvider wp = dev.lattice.spi.Providers.open("chronicle:" + data)) {
            assertThat(wp.state(new LogId("dmg", 0)).trimWatermark()).as("nothing trimmed").isEqualTo(-1);
        }
        Path queue;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(data.resolve("logs"), "dmg.*")) {
            queue = ds.iterator().next().resolve("queue");
        }
        Path cycle;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(queue, "*.cq4")) {
            cycle = ds.iterator().next();
        }
        byte[] all = Files.readAllBytes(cycle);
        List<Integer> frames = new ArrayList<>();
        for (int i = 0; i + 4 <= all.length; i += 4) {
            if (ByteBuffer.wrap(all, i, 4).getInt() == 0x4C544631) { // the frame magic "LTF1"
                frames.add(i);
            }
        }
        assertThat(frames.size()).isGreaterThan(10);
        int middle = frames.get(frames.size() / 2);
        try (FileChannel ch = FileChannel.open(cycle, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[]{(byte) (all[middle - 1] ^ 0x5A)}), middle - 1L); // Chronicle's header
        }
        Throwable failure = catchThrowable(() -> {
            try (Lattice l = Lattice.open(cfg)) {
                l.tree("dmg").count();
            }
        });
        assertThat(failure).as("opening the damaged tree fails").isNotNull();
        boolean corrupt = false;
        for (Throwable c = failure; c != null; c = c.getCause()) {
            if (c instanceof CorruptLogException e && e.log() != null && e.log().equals(new LogId("dmg", 0))) {
                corrupt = true;
            }
        }
        assertThat(corrupt).as("CorruptLogException for dmg/0 in the cause chain of " + failure).isTrue();
    }
}
