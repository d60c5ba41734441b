package dev.lattice.provider.postgres;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The bytes of one batch row ({@code log_batch.frame}): every entry of a batch packed into one {@code bytea}.
 *
 * <pre>
 * frame   = version:u8 (=1) count:varint length:varint{count} payload{count} crc:u32 (big-endian)
 * crc     = CRC32C over the batch's first offset (8 bytes, big-endian) followed by every frame byte before crc
 * varint  = unsigned LEB128 (7 bits per byte, low bits first)
 * </pre>
 *
 * Covering the first offset makes a row that ends up at the wrong offset fail its check like a flipped bit does.
 * Overhead: 6 bytes per frame plus 1 to 3 bytes per entry (entries up to 2 MiB). Stateless and thread-safe.
 */
final class BatchFrame {

    /** Format version written in the first byte. */
    static final int VERSION = 1;
    /** Bytes a frame adds besides the per-entry length fields: version, CRC and at least one count byte. */
    static final int FIXED_OVERHEAD = 6;

    private BatchFrame() {
    }

    /**
     * Encodes entries into a new frame (the payloads are copied, never referenced).
     *
     * @param firstOffset offset of the first entry, covered by the CRC
     * @param entries the payloads, at least one
     * @return the frame
     */
    static byte[] encode(long firstOffset, List<byte[]> entries) {
        long payload = 0;
        int header = 1 + varintSize(entries.size());
        for (byte[] e : entries) {
            payload += e.length;
            header += varintSize(e.length);
        }
        long total = header + payload + 4;
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("frame of " + total + " bytes does not fit one array");
        }
        byte[] out = new byte[(int) total];
        int pos = 0;
        out[pos++] = (byte) VERSION;
        pos = putVarint(out, pos, entries.size());
        for (byte[] e : entries) {
            pos = putVarint(out, pos, e.length);
        }
        for (byte[] e : entries) {
            System.arraycopy(e, 0, out, pos, e.length);
            pos += e.length;
        }
        int crc = crc(firstOffset, out, pos);
        out[pos++] = (byte) (crc >>> 24);
        out[pos++] = (byte) (crc >>> 16);
        out[pos++] = (byte) (crc >>> 8);
        out[pos] = (byte) crc;
        return out;
    }

    /**
     * Decodes and checks a frame.
     *
     * @param log the log, for the exception
     * @param firstOffset the row's first offset (covered by the CRC)
     * @param expectedCount the row's {@code entry_count}
     * @param frame the stored bytes
     * @return the payloads, fresh arrays, entry {@code i} at offset {@code firstOffset + i}
     * @throws CorruptLogException if the CRC, the version, the count or a length does not match
     */
    static List<byte[]> decode(LogId log, long firstOffset, int expectedCount, byte[] frame) {
        if (frame == null || frame.length < FIXED_OVERHEAD) {
            throw new CorruptLogException(log, firstOffset, "batch frame of "
                    + (frame == null ? "no" : String.valueOf(frame.length)) + " bytes is too short");
        }
        int end = frame.length - 4;
        int stored = ((frame[end] & 0xFF) << 24) | ((frame[end + 1] & 0xFF) << 16) | ((frame[end + 2] & 0xFF) << 8)
                | (frame[end + 3] & 0xFF);
        if (stored != crc(firstOffset, frame, end)) {
            throw new CorruptLogException(log, firstOffset, "batch frame fails its CRC32C check");
        }
        if ((frame[0] & 0xFF) != VERSION) {
            throw new CorruptLogException(log, firstOffset, "unknown batch frame version " + (frame[0] & 0xFF));
        }
        int[] cursor = {1};
        long count = getVarint(log, firstOffset, frame, cursor, end);
        if (count != expectedCount) {
            throw new CorruptLogException(log, firstOffset, "batch frame holds " + count + " entries, the row says "
                    + expectedCount);
        }
        int[] lengths = new int[(int) count];
        long sum = 0;
        for (int i = 0; i < count; i++) {
            long len = getVarint(log, firstOffset, frame, cursor, end);
            if (len > Integer.MAX_VALUE) {
                throw new CorruptLogException(log, firstOffset, "entry length " + len + " out of range");
            }
            lengths[i] = (int) len;
            sum += len;
        }
        int pos = cursor[0];
        if (pos + sum != end) {
            throw new CorruptLogException(log, firstOffset, "entry lengths add up to " + sum + " bytes, the frame has "
                    + (end - pos));
        }
        List<byte[]> out = new ArrayList<>((int) count);
        for (int len : lengths) {
            byte[] e = new byte[len];
            System.arraycopy(frame, pos, e, 0, len);
            pos += len;
            out.add(e);
        }
        return out;
    }

    private static int crc(long firstOffset, byte[] data, int length) {
        CRC32C c = new CRC32C();
        for (int i = 7; i >= 0; i--) {
            c.update((int) (firstOffset >>> (8 * i)) & 0xFF);
        }
        c.update(data, 0, length);
        return (int) c.getValue();
    }

    static int varintSize(long v) {
        int n = 1;
        while ((v >>>= 7) != 0) {
            n++;
        }
        return n;
    }

    private static int putVarint(byte[] out, int pos, long v) {
        while ((v & ~0x7FL) != 0) {
            out[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out[pos++] = (byte) v;
        return pos;
    }

    private static long getVarint(LogId log, long firstOffset, byte[] in, int[] cursor, int end) {
        long v = 0;
        int shift = 0;
        int pos = cursor[0];
        while (true) {
            if (pos >= end || shift > 56) {
                throw new CorruptLogException(log, firstOffset, "truncated or oversized length field in batch frame");
            }
            int b = in[pos++] & 0xFF;
            v |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                break;
            }
            shift += 7;
        }
        cursor[0] = pos;
        return v;
    }

}
