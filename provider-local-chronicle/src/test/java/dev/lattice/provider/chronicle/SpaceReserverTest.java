package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reservation ahead of the write position ({@link SpaceReserver}) on a plain file: the writer's first
 * reservation is inline, later ones run on the background thread, which extends the reservation to the need plus a
 * chunk (never further), writes only at and above the old end (bytes below it are the frames' and stay as they
 * are), and does nothing once the reserver moved on.
 */
class SpaceReserverTest {

    private static final long CHUNK = SpaceReserver.CHUNK_BYTES;
    private static final long SLACK = SpaceReserver.SLACK_BYTES;

    private final Path dir = TestDirs.create("reserver-");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    @Test
    void theBackgroundExtendsTheReservationToTheNeedPlusAChunkAndLeavesTheFramesAlone() throws Exception {
        File f = dir.resolve("cycle.cq4").toFile();
        Files.write(f.toPath(), new byte[0]);
        try (SpaceReserver r = new SpaceReserver(new LogId("t", 0), dir)) {
            r.ensure(f, 0, 1000);
            assertThat(r.reservedEnd()).as("the first reservation, inline").isEqualTo(1000 + SLACK + CHUNK);

            // a frame written below the reservation's end, as Chronicle would through its mapping
            long frameAt = 1000;
            byte[] frame = marker(CHUNK / 2 + 5000);
            writeAt(f, frameAt, frame);
            long from = frameAt + frame.length;
            long need = from + 1000 + SLACK;
            assertThat(r.reservedEnd() - need).as("less than half a chunk is left").isLessThan(CHUNK / 2);
            r.ensure(f, from, 1000);
            awaitReservedEnd(r, need + CHUNK);
            assertThat(r.reservedEnd()).as("the background stops at the need plus a chunk").isEqualTo(need + CHUNK);
            assertThat(readAt(f, frameAt, frame.length)).as("the frame below the old end").isEqualTo(frame);
            assertThat(Files.size(f.toPath())).as("the file holds the reservation").isEqualTo(need + CHUNK);
            assertThat(r.reservedBytes()).isEqualTo(need + CHUNK);
        }
    }

    @Test
    void aReservationQueuedBeforeAFileSwitchWritesNothingIntoEitherFile() throws Exception {
        File a = dir.resolve("a.cq4").toFile();
        File b = dir.resolve("b.cq4").toFile();
        Files.write(a.toPath(), new byte[0]);
        Files.write(b.toPath(), new byte[0]);
        try (SpaceReserver r = new SpaceReserver(new LogId("t", 0), dir)) {
            r.ensure(a, 0, 1000);
            long from = r.reservedEnd() - SLACK - 1000 - 10; // leaves 10 bytes: a background reservation is queued
            r.ensure(a, from, 1000);
            r.ensure(b, 0, 1000); // the switch waits for a running one and voids a queued one
            long aSize = Files.size(a.toPath());
            Thread.sleep(200);
            assertThat(Files.size(a.toPath())).as("nothing more in the old file").isEqualTo(aSize);
            assertThat(aSize).as("the old file holds at most its need plus a chunk")
                    .isLessThanOrEqualTo(from + 1000 + SLACK + CHUNK);
            assertThat(r.reservedEnd()).as("the new file's first reservation, inline").isEqualTo(1000 + SLACK + CHUNK);
        }
    }

    private static void awaitReservedEnd(SpaceReserver r, long end) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (r.reservedEnd() < end && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(r.reservedEnd()).as("the background reservation within 10 s").isGreaterThanOrEqualTo(end);
    }

    private static byte[] marker(long n) {
        byte[] b = new byte[(int) n];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    private static void writeAt(File f, long pos, byte[] bytes) throws IOException {
        try (FileChannel c = FileChannel.open(f.toPath(), StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                c.write(b, pos + b.position());
            }
        }
    }

    private static byte[] readAt(File f, long pos, int n) throws IOException {
        try (FileChannel c = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(n);
            while (b.hasRemaining()) {
                if (c.read(b, pos + b.position()) < 0) {
                    break;
                }
            }
            return b.array();
        }
    }
}
