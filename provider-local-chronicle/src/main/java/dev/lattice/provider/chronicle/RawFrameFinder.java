package dev.lattice.provider.chronicle;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Looks for intact frame headers in the raw bytes of a cycle file, past the point where Chronicle stopped returning
 * documents. Chronicle stops at a damaged record header (a flipped length or flag bit makes it see the end, or skip
 * a record as metadata), so "nothing readable after this" is not proof that nothing was written after it: an intact
 * header of a later commit group found here proves that the damaged record was committed (the writer moves its tail
 * only after a whole group is written), so the damage is corruption, not a torn tail.
 *
 * <p>A frame header is recognised by its magic at a 4-byte aligned position (Chronicle aligns documents to 4 bytes)
 * and its own CRC32C over 60 bytes, so chance matches are not a practical concern. The search stops at the end of the
 * file or after a run of zero bytes longer than any document ({@code maxDocumentBytes} + 2 MiB): past Chronicle's
 * write position a file holds only zeros (reserved space) and holes. Stateless and thread-safe.
 */
final class RawFrameFinder {

    private static final int CHUNK = 1 << 20;
    /** Chronicle record header bits (a little-endian int in front of every record). */
    private static final int NOT_COMPLETE = 0x80000000;
    private static final int META_DATA = 0x40000000;
    private static final int LENGTH_MASK = 0x3FFFFFFF;

    private RawFrameFinder() {
    }

    /**
     * The position of the first data record at or after a record boundary, stepping over Chronicle's complete
     * metadata records (index arrays) there. Used to tell whether the record Chronicle names as its last complete
     * one lies beyond the first record after the last intact frame (then a record after a damaged one was complete:
     * corruption), or is that first record itself (the last write, which may be torn).
     *
     * @param file the cycle file
     * @param boundary a record boundary: the end of an intact record, rounded up to 4 bytes
     * @return the position of that data record's header (or of the first zero header)
     * @throws IOException if the file cannot be read
     */
    static long firstDataRecordAt(Path file, long boundary) throws IOException {
        long pos = boundary;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (int steps = 0; steps < 64; steps++) {
                b.clear();
                if (ch.read(b, pos) < 4) {
                    return pos;
                }
                int h = b.getInt(0);
                if (h == 0 || (h & NOT_COMPLETE) != 0 || (h & META_DATA) == 0) {
                    return pos;
                }
                pos = (pos + 4 + (h & LENGTH_MASK) + 3) & ~3L;
            }
        }
        return pos;
    }

    /**
     * Whether a complete data record header (not metadata, not in progress, not zero) is at a position.
     *
     * @param file the cycle file
     * @param pos the position
     * @return true when the 4 bytes there read as a complete data record header
     * @throws IOException if the file cannot be read
     */
    static boolean isDataRecordHeader(Path file, long pos) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            if (ch.read(b, pos) < 4) {
                return false;
            }
            int h = b.getInt(0);
            return h != 0 && (h & NOT_COMPLETE) == 0 && (h & META_DATA) == 0;
        }
    }

    /**
     * Finds intact frame headers from a position to the end of the written part of a file.
     *
     * @param file the cycle file
     * @param from the position to start at, in bytes (rounded down to a multiple of 4)
     * @param maxDocumentBytes the largest document a frame can be, in bytes (bounds the zero run that ends the search)
     * @return the headers found, in file order; empty when the file is missing
     * @throws IOException if the file cannot be read
     */
    static List<Frames.Header> find(Path file, long from, long maxDocumentBytes) throws IOException {
        List<Frames.Header> out = new ArrayList<>();
        long zeroLimit = maxDocumentBytes + (2L << 20);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            long pos = from & ~3L;
            byte[] carry = new byte[0];
            long zeroRun = 0;
            ByteBuffer buf = ByteBuffer.allocate(CHUNK);
            while (pos < size && zeroRun < zeroLimit) {
                buf.clear();
                int n = ch.read(buf, pos);
                if (n <= 0) {
                    break;
                }
                // carry (the last bytes of the previous chunk) + this chunk, so a header across the boundary is seen
                byte[] data = new byte[carry.length + n];
                System.arraycopy(carry, 0, data, 0, carry.length);
                System.arraycopy(buf.array(), 0, data, carry.length, n);
                ByteBuffer d = ByteBuffer.wrap(data);
                int limit = data.length - Frames.FRAME_OVERHEAD;
                int i = 0;
                for (; i + 4 <= data.length && i <= limit; i += 4) {
                    int v = d.getInt(i);
                    if (v == 0) {
                        zeroRun += 4;
                        if (zeroRun >= zeroLimit) {
                            break;
                        }
                        continue;
                    }
                    zeroRun = 0;
                    if (v == Frames.MAGIC) {
                        byte[] h = new byte[Frames.FRAME_OVERHEAD];
                        System.arraycopy(data, i, h, 0, h.length);
                        Frames.Header header = Frames.readHeader(h);
                        if (header != null) {
                            out.add(header);
                        }
                    }
                }
                // keep the unexamined tail for the next round
                int keep = data.length - i;
                carry = new byte[Math.max(0, keep)];
                System.arraycopy(data, i, carry, 0, carry.length);
                pos += n;
            }
        } catch (NoSuchFileException e) {
            return out;
        }
        return out;
    }
}
