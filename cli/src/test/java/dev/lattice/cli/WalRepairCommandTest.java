package dev.lattice.cli;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code lattice wal repair} on a real Chronicle log with a flipped byte in its middle record: the check names the
 * damaged offset without changing anything, {@code --truncate} cuts the log there and lists the lost offsets, and
 * the log is intact afterwards. A provider without repair is refused with a usage error.
 */
class WalRepairCommandTest {

    /** Chronicle's frame magic ("LTF1"), the start of each of our frames inside a Chronicle document. */
    private static final int FRAME_MAGIC = 0x4C544631;

    @Test
    void checkThenTruncateADamagedChronicleLog(@TempDir Path dir) throws IOException {
        String uri = "chronicle:" + dir.toAbsolutePath();
        LogId log = new LogId("t", 0);
        try (WalStorageProvider p = Providers.open(java.net.URI.create(uri), Map.of())) {
            Fence f = p.claim(log);
            for (int k = 0; k < 3; k++) {
                List<byte[]> entries = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    entries.add(("entry-" + (10 * k + i) + "-" + "z".repeat(40)).getBytes(StandardCharsets.UTF_8));
                }
                p.append(log, f, EncodedBatch.of(10L * k, BatchId.random(), entries));
            }
        }
        Cli.Run intact = Cli.run("wal", "repair", "--provider", uri, "t", "0");
        assertThat(intact.code()).as(intact.toString()).isZero();
        assertThat(intact.out()).contains("intact: 30 entries");

        flipInSecondFrame(dir);
        Cli.Run check = Cli.run("wal", "repair", "--provider", uri, "t", "0");
        assertThat(check.code()).as(check.toString()).isEqualTo(ExitCodes.VERIFICATION_FAILED);
        assertThat(check.out()).contains("DAMAGED at offset 10").contains("--truncate");

        Cli.Run repair = Cli.run("wal", "repair", "--provider", uri, "t", "0", "--truncate");
        assertThat(repair.code()).as(repair.toString()).isZero();
        assertThat(repair.out()).contains("truncated at offset 10").contains("lost offsets 10..29 (20 entries)")
                .contains("committed tail 29 -> 9");

        Cli.Run after = Cli.run("wal", "repair", "--provider", uri, "t", "0");
        assertThat(after.code()).as(after.toString()).isZero();
        assertThat(after.out()).contains("intact: 10 entries");
    }

    @Test
    void aProviderWithoutRepairIsRefused() {
        String uri = Cli.freshMemoryUri();
        assertThat(Cli.run("put", "--provider", uri, "orders", "o-1", "x").code()).isZero();
        Cli.Run r = Cli.run("wal", "repair", "--provider", uri, "orders", "0", "--truncate");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("does not offer wal repair");
        Cli.Run missing = Cli.run("wal", "repair", "--provider", uri, "nosuch", "0");
        assertThat(missing.code()).as(missing.toString()).isEqualTo(ExitCodes.NOT_FOUND);
    }

    /** Flips a byte in the middle of the second of the three frames (its payload). */
    private static void flipInSecondFrame(Path dir) throws IOException {
        Path cycle;
        try (Stream<Path> files = Files.walk(dir)) {
            cycle = files.filter(p -> p.toString().endsWith(".cq4")).findFirst().orElseThrow();
        }
        byte[] all = Files.readAllBytes(cycle);
        List<Integer> frames = new ArrayList<>();
        for (int i = 0; i + 4 <= all.length; i += 4) {
            if (ByteBuffer.wrap(all, i, 4).getInt() == FRAME_MAGIC) {
                frames.add(i);
            }
        }
        assertThat(frames).hasSize(3);
        long pos = (frames.get(1) + frames.get(2)) / 2;
        try (FileChannel ch = FileChannel.open(cycle, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, pos);
            b.put(0, (byte) (b.get(0) ^ 0x5A));
            b.rewind();
            ch.write(b, pos);
        }
    }
}
