package dev.lattice.engine.lsm;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The byte layout of a run, format version 4 (docs/wal-format.md "Run format"): data blocks, a key filter block
 * ({@link FilterBlock}), an index block and a meta block, each followed by its CRC32C, then a fixed
 * {@value #FOOTER_BYTES}-byte footer that locates them. Varints are unsigned LEB128. Stateless helpers; thread-safe.
 */
public final class RunFormat {

    /** First 8 bytes of the footer. */
    public static final long MAGIC = 0x4C41545252554E31L; // "LATRRUN1"
    /**
     * The format version this code writes (4: the index holds a short separator per block and no block positions,
     * which follow from the lengths; data, filter and meta blocks as in format 3).
     */
    public static final int VERSION = 4;
    /** Format version 3, still read: a blocked Bloom filter ({@link BlockedBloomFilter}), full keys in the index. */
    public static final int VERSION_3 = 3;
    /** Format version 2, still read: value expiry, range tombstones in the meta block, a standard Bloom filter. */
    public static final int VERSION_2 = 2;
    /** The first format version, still read (no expiring values, no range tombstones, a standard Bloom filter). */
    public static final int VERSION_1 = 1;
    /** Footer length in bytes: magic, version, three (position, length) pairs, CRC32C of the rest. */
    public static final int FOOTER_BYTES = 8 + 4 + 3 * (8 + 4) + 4;
    /** Bytes of the CRC32C that follows every block. */
    public static final int CRC_BYTES = 4;
    /** Entries between restart points inside a data block (full keys at restarts, shared prefixes between). */
    public static final int RESTART_INTERVAL = 16;
    /** Entry kind byte: a value. */
    static final byte KIND_PUT = 0;
    /** Entry kind byte: a tombstone. */
    static final byte KIND_DELETE = 1;
    /** Entry kind byte (format 2): a value with an expiry, {@code expiresAtMillis:varlong} before its length. */
    static final byte KIND_PUT_EXPIRING = 2;

    private RunFormat() {
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Whether a string is all ASCII, so that its UTF-8 bytes are its chars (then {@link #putAscii} encodes it
     * without an array of its own). Shared by the log entry encoder and the run writer.
     *
     * @param s the string
     * @return true when every char is below 0x80
     */
    public static boolean isAscii(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }

    /**
     * Writes an ASCII string's chars as bytes, which are its UTF-8 encoding.
     *
     * @param s a string for which {@link #isAscii} is true
     * @param dst the array to write into, with room for {@code s.length()} bytes from {@code at}
     * @param at the index of the first byte
     * @throws ArrayIndexOutOfBoundsException if {@code dst} is too short
     */
    public static void putAscii(String s, byte[] dst, int at) {
        for (int i = 0, n = s.length(); i < n; i++) {
            dst[at + i] = (byte) s.charAt(i);
        }
    }

    static void putVarLong(ByteSink out, long v) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    static long getVarLong(ByteBuffer in) {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            byte b = in.get();
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw new IllegalStateException("varint longer than 10 bytes");
    }

    static int getVarInt(ByteBuffer in) {
        long v = getVarLong(in);
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new IllegalStateException("varint " + v + " out of int range");
        }
        return (int) v;
    }

    /** A growable byte buffer the writer encodes into. Not thread-safe. */
    static final class ByteSink {
        private byte[] buf;
        private int size;

        ByteSink(int capacity) {
            buf = new byte[Math.max(16, capacity)];
        }

        void write(int b) {
            ensure(1);
            buf[size++] = (byte) b;
        }

        void write(byte[] b, int off, int len) {
            ensure(len);
            System.arraycopy(b, off, buf, size, len);
            size += len;
        }

        void writeInt(int v) {
            ensure(4);
            buf[size++] = (byte) (v >>> 24);
            buf[size++] = (byte) (v >>> 16);
            buf[size++] = (byte) (v >>> 8);
            buf[size++] = (byte) v;
        }

        void writeLong(long v) {
            writeInt((int) (v >>> 32));
            writeInt((int) v);
        }

        private void ensure(int n) {
            if (size + n > buf.length) {
                long want = Math.max((long) buf.length * 2, (long) size + n);
                if (want > Integer.MAX_VALUE - 8) {
                    throw new IllegalStateException("block larger than 2 GiB");
                }
                buf = java.util.Arrays.copyOf(buf, (int) want);
            }
        }

        int size() {
            return size;
        }

        byte[] array() {
            return buf;
        }

        void reset() {
            size = 0;
        }
    }

    /**
     * A short key {@code s} with {@code last <= s < next} in {@code String} order, for a format-4 index entry: the
     * prefix of {@code next} one character past the keys' common prefix, when both keys are ASCII (where UTF-8 byte
     * order is {@code String} order) and that prefix is shorter than {@code last} and is not {@code next} itself;
     * {@code last} otherwise.
     *
     * @param last the last key of a block
     * @param next the first key of the block after it, greater than or equal to {@code last}
     * @return the separator
     */
    static String separator(String last, String next) {
        if (!isAscii(last) || !isAscii(next)) {
            return last;
        }
        int n = Math.min(last.length(), next.length());
        int common = 0;
        while (common < n && last.charAt(common) == next.charAt(common)) {
            common++;
        }
        int len = common + 1;
        if (len >= next.length() || len >= last.length()) {
            return last; // the prefix would be next itself, or no shorter than last
        }
        return next.substring(0, len); // > last (it differs at common, where next is greater) and < next
    }
}
