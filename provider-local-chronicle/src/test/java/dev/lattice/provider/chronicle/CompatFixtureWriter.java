package dev.lattice.provider.chronicle;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.core.time.SetTimeProvider;

import java.io.ByteArrayInputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Writes the fixture {@code CycleRollCompatTest} opens: a directory written by the provider before cycle files
 * rolled by size (wall-clock hourly cycles only), 1 MiB blocks, with a controlled clock. Log {@code compat.0000}:
 * offsets 0..299 in the 10:xx cycle, 300..599 at 11:xx, 600..899 at 13:xx, trimmed through 349 (the 10:xx file is
 * deleted), a checkpoint through 500, a clean close; then 900..999 at 14:xx and a halt without a close (no tail
 * record for them, as after a crash). Log {@code compat.0001}: 0..49, trimmed through 49 (empty, tail 49). Payloads
 * derive from the offset ({@link Payloads#small}, every 25th {@link Payloads#of}). Run once by hand with the old
 * code and zipped ({@code cd DIR && zip -r chronicle-format1-hourly.zip .}); kept to document how the fixture was
 * made: {@code java -cp ... dev.lattice.provider.chronicle.CompatFixtureWriter DIR}.
 */
public final class CompatFixtureWriter {

    static final LogId MAIN = new LogId("compat", 0);
    static final LogId EMPTIED = new LogId("compat", 1);
    static final String START = "2026-11-30T10:15:00Z";

    private CompatFixtureWriter() {
    }

    /**
     * The payload of an offset in the fixture.
     *
     * @param offset the offset
     * @return the bytes
     */
    static byte[] payload(long offset) {
        return offset % 25 == 0 ? Payloads.of(offset) : Payloads.small(offset);
    }

    static EncodedBatch batch(long first, int n) {
        List<byte[]> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add(payload(first + i));
        }
        return EncodedBatch.of(first, entries);
    }

    /**
     * Writes the fixture and halts the JVM.
     *
     * @param args the output directory
     */
    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        long hour = TimeUnit.HOURS.toMillis(1);
        SetTimeProvider clock = new SetTimeProvider(Instant.parse(START));
        ChronicleConfig config = ChronicleConfig.builder(dir).blockSize(1 << 20).clock(clock).build();
        try (WalStorageProvider p = ChronicleWalStorageProvider.open(config)) {
            Fence f = p.claim(MAIN);
            for (int c = 0; c < 3; c++) {
                for (long o = c * 300L; o < c * 300L + 300; o += 30) {
                    p.append(MAIN, f, batch(o, 30));
                }
                clock.advanceMillis(c == 1 ? 2 * hour : hour);
            }
            p.trim(MAIN, f, 349);
            p.checkpoints().publish(MAIN, f, 500, 1, new ByteArrayInputStream(ChildMains.checkpointData(500)));
            Fence g = p.claim(EMPTIED);
            p.append(EMPTIED, g, batch(0, 50));
            p.trim(EMPTIED, g, 49);
        }
        WalStorageProvider p = ChronicleWalStorageProvider.open(config);
        Fence f = p.claim(MAIN);
        p.reconcile(MAIN, f);
        for (long o = 900; o < 1000; o += 20) {
            p.append(MAIN, f, batch(o, 20));
        }
        System.out.println("WRITTEN " + dir);
        Runtime.getRuntime().halt(0);
    }
}
