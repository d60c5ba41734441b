package dev.lattice.provider.chronicle;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;

import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The writer {@code TrimSpaceTest} kills ({@code space-writer <dir> <uri-options> <retainBytes>}): appends batches
 * of {@link Payloads#of} to log {@link #LOG} forever and trims after about every 1 MiB so that about
 * {@code retainBytes} of payload stay above the watermark, as the engine trims after each flush. Prints
 * {@code C last bytes} after each commit returned (bytes: payload appended so far) and {@code T w} after each trim
 * returned.
 */
final class SpaceWriterMain {

    /** The log written. */
    static final LogId LOG = new LogId("space", 0);
    /** Largest batch written, in payload bytes (below the limit of 1 MiB blocks). */
    static final int BATCH_BYTES = 128 << 10;

    private SpaceWriterMain() {
    }

    /**
     * The next batch from {@code first}: entries of {@link Payloads#of} up to {@link #BATCH_BYTES}.
     *
     * @param first the first offset
     * @return the batch
     */
    static EncodedBatch batch(long first) {
        List<byte[]> entries = new ArrayList<>();
        long bytes = 0;
        while (true) {
            byte[] e = Payloads.of(first + entries.size());
            if (!entries.isEmpty() && bytes + e.length > BATCH_BYTES) {
                return EncodedBatch.of(first, entries);
            }
            entries.add(e);
            bytes += e.length;
        }
    }

    /**
     * Appends and trims one log: remembers the offsets and bytes of the retained batches and trims the oldest away
     * once more than {@code retainBytes} (plus 1 MiB) are retained. Not thread-safe.
     */
    static final class Writer {
        private final WalStorageProvider p;
        private final Fence f;
        private final long retainBytes;
        private final ArrayDeque<long[]> retained = new ArrayDeque<>(); // {last offset, payload bytes}
        private long retainedBytes;
        private long next;

        /**
         * @param p the provider
         * @param f the fence
         * @param retainBytes payload bytes to keep above the watermark
         */
        Writer(WalStorageProvider p, Fence f, long retainBytes) {
            this.p = p;
            this.f = f;
            this.retainBytes = retainBytes;
            this.next = p.state(LOG).committedTail() + 1;
        }

        /**
         * @param totalBytes stop after this many payload bytes ({@link Long#MAX_VALUE}: never)
         * @param out where progress lines go, or null
         * @return the payload bytes appended
         */
        long write(long totalBytes, PrintStream out) {
            long total = 0;
            while (total < totalBytes) {
                EncodedBatch b = batch(next);
                p.append(LOG, f, b);
                next = b.lastOffset() + 1;
                total += b.payloadBytes();
                retained.add(new long[]{b.lastOffset(), b.payloadBytes()});
                retainedBytes += b.payloadBytes();
                if (out != null) {
                    out.println("C " + b.lastOffset() + " " + total);
                }
                if (retainedBytes > retainBytes + (1 << 20)) {
                    long w = -1;
                    while (retainedBytes > retainBytes) {
                        long[] r = retained.removeFirst();
                        w = r[0];
                        retainedBytes -= r[1];
                    }
                    p.trim(LOG, f, w);
                    if (out != null) {
                        out.println("T " + w);
                    }
                }
            }
            return total;
        }
    }

    /**
     * Entry point from {@link ChildMains}.
     *
     * @param out stdout
     * @param dir the provider directory
     * @param options URI options
     * @param retainBytes payload bytes to keep above the watermark
     */
    static void run(PrintStream out, Path dir, String options, long retainBytes) {
        WalStorageProvider p = new ChronicleProviderFactory().open(URI.create("chronicle:" + dir + "?" + options),
                Map.of());
        Fence f = p.claim(LOG);
        p.reconcile(LOG, f);
        out.println("READY " + (p.state(LOG).committedTail() + 1));
        new Writer(p, f, retainBytes).write(Long.MAX_VALUE, out);
    }
}
