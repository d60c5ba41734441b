package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;

import java.util.ArrayList;
import java.util.List;

/** Payloads derived from their offset, so a reader can verify any entry without a record of what was written. */
final class Payloads {

    private Payloads() {
    }

    private static long mix(long x) {
        x += 0x9E3779B97F4A7C15L;
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }

    /**
     * The payload of an offset: mostly 1..600 bytes, every 20th or so 20,000..40,000 bytes.
     *
     * @param offset the offset
     * @return the payload
     */
    static byte[] of(long offset) {
        long m = mix(offset);
        int len = Math.floorMod(m, 20) == 0 ? 20_000 + (int) Math.floorMod(m >>> 8, 20_000L)
                : 1 + (int) Math.floorMod(m >>> 8, 600L);
        return fill(offset, len);
    }

    /**
     * A small payload of an offset, 1..100 bytes.
     *
     * @param offset the offset
     * @return the payload
     */
    static byte[] small(long offset) {
        return fill(offset, 1 + (int) Math.floorMod(mix(offset) >>> 8, 100L));
    }

    private static byte[] fill(long offset, int len) {
        byte[] b = new byte[len];
        long s = mix(offset ^ 0x5DEECE66DL);
        for (int i = 0; i < len; i++) {
            if ((i & 7) == 0) {
                s = mix(s);
            }
            b[i] = (byte) (s >>> ((i & 7) * 8));
        }
        return b;
    }

    /**
     * A batch of small derived payloads.
     *
     * @param first first offset
     * @param n entries
     * @return the batch, with a batch id derived from {@code first}
     */
    static EncodedBatch smallBatch(long first, int n) {
        List<byte[]> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add(small(first + i));
        }
        return EncodedBatch.of(first, new BatchId(first, n), entries);
    }
}
