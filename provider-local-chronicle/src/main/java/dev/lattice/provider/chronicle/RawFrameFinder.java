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

    private RawFrameFinder() {
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
