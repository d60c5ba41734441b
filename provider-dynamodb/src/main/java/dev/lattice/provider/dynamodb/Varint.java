package dev.lattice.provider.dynamodb;

import java.io.ByteArrayOutputStream;

/**
 * Unsigned LEB128 variable-length integers (7 bits per byte, low bits first), the compact number form of this
 * provider's binary attributes. Stateless and thread-safe.
 */
final class Varint {

    private Varint() {
    }

    /**
     * @param v a value, {@code >= 0}
     * @return how many bytes {@link #write} uses for it (1 to 9 for non-negative longs)
     */
    static int size(long v) {
        int n = 1;
        while ((v >>>= 7) != 0) {
            n++;
        }
        return n;
    }

    /**
     * Appends a value.
     *
     * @param out the buffer
     * @param v the value, {@code >= 0}
     * @throws IllegalArgumentException if {@code v < 0}
     */
    static void write(ByteArrayOutputStream out, long v) {
        if (v < 0) {
            throw new IllegalArgumentException("varints hold non-negative values, got " + v);
        }
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    /** A read position over a byte array. Not thread-safe. */
    static final class Reader {
        private final byte[] data;
        private int pos;

        Reader(byte[] data) {
            this.data = data;
        }

        /**
         * @return the next value
         * @throws IllegalArgumentException if the bytes end inside a value or it is longer than 9 bytes
         */
        long next() {
            long v = 0;
            for (int shift = 0; shift < 63; shift += 7) {
                if (pos >= data.length) {
                    throw new IllegalArgumentException("varint cut off at byte " + pos);
                }
                int b = data[pos++] & 0xFF;
                v |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    return v;
                }
            }
            throw new IllegalArgumentException("varint longer than 9 bytes at byte " + pos);
        }

        /** @return whether bytes remain */
        boolean hasMore() {
            return pos < data.length;
        }
    }
}
