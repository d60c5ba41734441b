package dev.lattice.testkit;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Deterministic batches and streams for the decorator tests. (The conformance suite's WalTestSupport depends on
 * this module, so these tests cannot use it.) Stateless.
 */
final class TestData {

    private TestData() {
    }

    /**
     * @param seed payload seed
     * @param firstOffset offset of the first entry
     * @param count entries, {@code >= 1}
     * @param size bytes per payload
     * @return a batch whose id and payloads are functions of the arguments
     */
    static EncodedBatch batch(long seed, long firstOffset, int count, int size) {
        SplittableRandom r = new SplittableRandom(seed * 31 + firstOffset);
        List<byte[]> payloads = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            byte[] b = new byte[size];
            for (int k = 0; k < size; k++) {
                b[k] = (byte) r.nextInt(256);
            }
            payloads.add(b);
        }
        BatchId id = new BatchId(seed ^ (firstOffset << 20), ((long) count << 32) | size);
        return EncodedBatch.of(firstOffset, id, payloads);
    }

    /** @return every committed entry of the log, read in pages of 100 entries / 1 MiB */
    static List<LogEntry> readAll(WalStorageProvider p, LogId log) {
        List<LogEntry> out = new ArrayList<>();
        long from = -1;
        while (true) {
            ReadPage page = p.read(log, from, 100, 1 << 20);
            if (page.isEmpty()) {
                return out;
            }
            out.addAll(page.entries());
            from = page.entries().get(page.entries().size() - 1).offset();
        }
    }

    /** @return the stream's bytes; the stream is closed */
    static byte[] readFully(InputStream in) {
        try (InputStream s = in) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            s.transferTo(out);
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return a stream of {@code size} pseudo-random bytes, generated as read */
    static InputStream randomStream(long seed, long size) {
        return new InputStream() {
            private final SplittableRandom r = new SplittableRandom(seed);
            private long left = size;

            @Override
            public int read() {
                if (left <= 0) {
                    return -1;
                }
                left--;
                return r.nextInt(256);
            }
        };
    }
}
