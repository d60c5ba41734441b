package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The frame format: what one Chronicle document of a log holds. All numbers big-endian.
 *
 * <pre>
 * header (64 bytes)
 *    0 int  magic 0x4C544631 ("LTF1")
 *    4 int  frame length in bytes, header and trailer included
 *    8 int  batch count
 *   12 int  entry count
 *   16 long epoch of the writer's fence
 *   24 long first offset in the frame (inclusive)
 *   32 long last offset in the frame (inclusive)
 *   40 long first offset of the commit group (inclusive)
 *   48 long last offset of the commit group (inclusive)
 *   56 int  payload bytes in the frame
 *   60 int  CRC32C of bytes 0..59 (the header alone, so a damaged body still names its offsets)
 * body: per batch
 *      long batch id high, long batch id low, long first offset, int entry count,
 *      int[entry count] entry lengths, the entry payloads back to back
 * trailer
 *      int  CRC32C of every byte before it
 * </pre>
 *
 * A commit writes one commit group: the staged batches up to the commit's offset, packed into as few frames as the
 * document size allows (one, unless they exceed {@link ChronicleConfig#maxDocumentBytes()}). A group counts as
 * committed only when its last frame ({@code lastOffset == groupThrough}) is present. Stateless and thread-safe.
 */
final class Frames {

    /** Magic number at the start of every frame. */
    static final int MAGIC = 0x4C544631;
    /** Bytes of the fixed header. */
    static final int HEADER_BYTES = 64;
    /** Bytes of the trailer (the frame CRC). */
    static final int TRAILER_BYTES = 4;
    /** Fixed bytes per frame: header plus trailer. */
    static final int FRAME_OVERHEAD = HEADER_BYTES + TRAILER_BYTES;
    /** Fixed bytes per batch in a frame: id, first offset, entry count. */
    static final int BATCH_OVERHEAD = 28;
    /** Bytes per entry besides its payload: its length. */
    static final int ENTRY_OVERHEAD = 4;

    private Frames() {
    }

    /**
     * Encodes a batch as it appears in a frame body (its "fragment"); a staged batch is kept in this form.
     *
     * @param batch the batch
     * @return a new array of {@code BATCH_OVERHEAD + 4 * size + payloadBytes} bytes
     */
    static byte[] encodeBatch(EncodedBatch batch) {
        long len = BATCH_OVERHEAD + (long) ENTRY_OVERHEAD * batch.size() + batch.payloadBytes();
        if (len > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("batch too large to encode: " + len + " bytes");
        }
        ByteBuffer b = ByteBuffer.allocate((int) len);
        b.putLong(batch.batchId().high()).putLong(batch.batchId().low()).putLong(batch.firstOffset())
                .putInt(batch.size());
        for (byte[] e : batch.entries()) {
            b.putInt(e.length);
        }
        for (byte[] e : batch.entries()) {
            b.put(e);
        }
        return b.array();
    }

    /**
     * Builds a frame header.
     *
     * @return the 64 header bytes, its CRC included
     */
    static byte[] header(int frameLength, int batchCount, int entryCount, long epoch, long first, long last,
                         long groupFirst, long groupThrough, int payloadBytes) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES);
        b.putInt(MAGIC).putInt(frameLength).putInt(batchCount).putInt(entryCount).putLong(epoch).putLong(first)
                .putLong(last).putLong(groupFirst).putLong(groupThrough).putInt(payloadBytes);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, HEADER_BYTES - 4);
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /**
     * Assembles a whole frame in memory (the provider streams the same bytes into a Chronicle document instead;
     * tools and tests use this).
     *
     * @param epoch the writer's epoch
     * @param groupFirst first offset of the commit group
     * @param groupThrough last offset of the commit group
     * @param batches the batches of this frame, consecutive
     * @return the frame bytes
     */
    static byte[] assemble(long epoch, long groupFirst, long groupThrough, java.util.List<EncodedBatch> batches) {
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        int entries = 0;
        long payload = 0;
        for (EncodedBatch b : batches) {
            body.writeBytes(encodeBatch(b));
            entries += b.size();
            payload += b.payloadBytes();
        }
        int length = FRAME_OVERHEAD + body.size();
        byte[] out = new byte[length];
        System.arraycopy(header(length, batches.size(), entries, epoch, batches.get(0).firstOffset(),
                batches.get(batches.size() - 1).lastOffset(), groupFirst, groupThrough, (int) payload), 0, out, 0,
                HEADER_BYTES);
        System.arraycopy(body.toByteArray(), 0, out, HEADER_BYTES, body.size());
        CRC32C crc = new CRC32C();
        crc.update(out, 0, length - TRAILER_BYTES);
        ByteBuffer.wrap(out).putInt(length - TRAILER_BYTES, (int) crc.getValue());
        return out;
    }

    /**
     * A decoded frame header.
     *
     * @param frameLength total bytes of the frame
     * @param batchCount batches in the frame
     * @param entryCount entries in the frame
     * @param epoch the writer's epoch
     * @param first first offset (inclusive)
     * @param last last offset (inclusive)
     * @param groupFirst first offset of the commit group
     * @param groupThrough last offset of the commit group
     * @param payloadBytes payload bytes in the frame
     */
    record Header(int frameLength, int batchCount, int entryCount, long epoch, long first, long last,
                  long groupFirst, long groupThrough, int payloadBytes) {

        /** @return true when this frame ends its commit group */
        boolean endsGroup() {
            return last == groupThrough;
        }
    }

    /**
     * Reads a frame header, checking its magic, CRC and internal consistency.
     *
     * @param doc the document bytes
     * @return the header, or null when it is damaged (its offsets cannot be trusted)
     */
    static Header readHeader(byte[] doc) {
        return readHeader(doc, doc.length);
    }

    /**
     * Reads a frame header from the first {@code length} bytes of {@code doc} (a buffer that may be longer than the
     * document), checking its magic, CRC and internal consistency. Only the 64 header bytes are read.
     *
     * @param doc a buffer holding the document from position 0 (at least its header when {@code length} allows one)
     * @param length the document's length in bytes, at most {@code doc.length}
     * @return the header, or null when it is damaged (its offsets cannot be trusted) or the document is shorter than
     *     a frame's fixed bytes
     */
    static Header readHeader(byte[] doc, int length) {
        if (length < FRAME_OVERHEAD) {
            return null;
        }
        CRC32C crc = new CRC32C();
        crc.update(doc, 0, HEADER_BYTES - 4);
        if (getInt(doc, HEADER_BYTES - 4) != (int) crc.getValue() || getInt(doc, 0) != MAGIC) {
            return null;
        }
        Header h = new Header(getInt(doc, 4), getInt(doc, 8), getInt(doc, 12), getLong(doc, 16), getLong(doc, 24),
                getLong(doc, 32), getLong(doc, 40), getLong(doc, 48), getInt(doc, 56));
        boolean sane = h.first >= 0 && h.last >= h.first && h.entryCount == h.last - h.first + 1
                && h.batchCount >= 1 && h.groupFirst <= h.first && h.groupThrough >= h.last && h.payloadBytes >= 0
                && h.frameLength >= FRAME_OVERHEAD && h.epoch >= 1;
        return sane ? h : null;
    }

    /**
     * Checks a frame body: length, trailer CRC and structure (batch offsets contiguous, lengths adding up).
     *
     * @param doc the document bytes
     * @param h its header, as read by {@link #readHeader}
     * @return null when the body is intact, else what is wrong
     */
    static String checkBody(byte[] doc, Header h) {
        return checkBody(doc, doc.length, h);
    }

    /**
     * Checks the body of the document held in the first {@code length} bytes of {@code doc}: length, trailer CRC and
     * structure (batch offsets contiguous, lengths adding up). The checks are those of {@link #checkBody(byte[],
     * Header)}; bytes of {@code doc} after {@code length} are not read.
     *
     * @param doc a buffer holding the document from position 0
     * @param length the document's length in bytes, at most {@code doc.length}
     * @param h its header, as read by {@link #readHeader(byte[], int)}
     * @return null when the body is intact, else what is wrong
     */
    static String checkBody(byte[] doc, int length, Header h) {
        if (length != h.frameLength) {
            return "frame length " + length + " differs from its header's " + h.frameLength;
        }
        CRC32C crc = new CRC32C();
        crc.update(doc, 0, length - TRAILER_BYTES);
        if (getInt(doc, length - TRAILER_BYTES) != (int) crc.getValue()) {
            return "frame fails its CRC32C checksum";
        }
        int pos = HEADER_BYTES;
        int end = length - TRAILER_BYTES;
        long expected = h.first;
        long payload = 0;
        for (int i = 0; i < h.batchCount; i++) {
            if (pos + BATCH_OVERHEAD > end) {
                return "batch " + i + " runs past the frame end";
            }
            long first = getLong(doc, pos + 16);
            int count = getInt(doc, pos + 24);
            if (first != expected || count < 1) {
                return "batch " + i + " has first offset " + first + " and " + count + " entries, expected offset "
                        + expected;
            }
            pos += BATCH_OVERHEAD;
            if ((long) pos + (long) ENTRY_OVERHEAD * count > end) {
                return "batch " + i + " lengths run past the frame end";
            }
            long bytes = 0;
            for (int k = 0, at = pos; k < count; k++, at += ENTRY_OVERHEAD) {
                int len = getInt(doc, at);
                if (len < 0) {
                    return "negative entry length";
                }
                bytes += len;
            }
            pos += ENTRY_OVERHEAD * count;
            if (pos + bytes > end) {
                return "batch " + i + " payloads run past the frame end";
            }
            pos += (int) bytes;
            payload += bytes;
            expected += count;
        }
        if (pos != end || expected != h.last + 1 || payload != h.payloadBytes) {
            return "frame body does not add up to its header";
        }
        return null;
    }

    /**
     * A big-endian int of a frame (as {@link ByteBuffer} reads it), read straight from the array: the frame
     * checks run at every open, much of it before the JIT has compiled them, where a buffer's layers cost most.
     */
    static int getInt(byte[] b, int at) {
        return (b[at] << 24) | ((b[at + 1] & 0xFF) << 16) | ((b[at + 2] & 0xFF) << 8) | (b[at + 3] & 0xFF);
    }

    /** A big-endian long of a frame, as {@link #getInt}. */
    static long getLong(byte[] b, int at) {
        return ((long) getInt(b, at) << 32) | (getInt(b, at + 4) & 0xFFFFFFFFL);
    }

    /** Visits the entries of an intact frame. */
    interface EntryVisitor {
        /**
         * @param offset the entry's offset
         * @param doc the frame bytes
         * @param pos the payload's position in {@code doc}
         * @param len the payload's length in bytes
         * @return false to stop visiting
         */
        boolean entry(long offset, byte[] doc, int pos, int len);
    }

    /**
     * Visits the entries of a frame whose body passed {@link #checkBody}, in offset order.
     *
     * @param doc the frame bytes
     * @param h its header
     * @param visitor called per entry until it returns false
     */
    static void forEachEntry(byte[] doc, Header h, EntryVisitor visitor) {
        int pos = HEADER_BYTES;
        for (int i = 0; i < h.batchCount; i++) {
            long first = getLong(doc, pos + 16);
            int count = getInt(doc, pos + 24);
            int lengths = pos + BATCH_OVERHEAD;
            int payload = lengths + ENTRY_OVERHEAD * count;
            for (int k = 0; k < count; k++) {
                int len = getInt(doc, lengths + ENTRY_OVERHEAD * k);
                if (!visitor.entry(first + k, doc, payload, len)) {
                    return;
                }
                payload += len;
            }
            pos = payload;
        }
    }

    /**
     * Finds a batch of an intact frame by its first offset.
     *
     * @param doc the frame bytes
     * @param h its header
     * @param first the batch's first offset
     * @param last the batch's last offset
     * @return the batch's id when a batch with exactly these offsets is in the frame, else null
     */
    static BatchId findBatch(byte[] doc, Header h, long first, long last) {
        ByteBuffer b = ByteBuffer.wrap(doc);
        int pos = HEADER_BYTES;
        for (int i = 0; i < h.batchCount; i++) {
            long hi = b.getLong(pos);
            long lo = b.getLong(pos + 8);
            long f = b.getLong(pos + 16);
            int count = b.getInt(pos + 24);
            int lengths = pos + BATCH_OVERHEAD;
            long bytes = 0;
            for (int k = 0; k < count; k++) {
                bytes += b.getInt(lengths + ENTRY_OVERHEAD * k);
            }
            if (f == first && f + count - 1 == last) {
                return new BatchId(hi, lo);
            }
            pos = lengths + ENTRY_OVERHEAD * count + (int) bytes;
        }
        return null;
    }

    /**
     * A copy of an intact frame whose commit group ends earlier: the group's last offset set to {@code groupThrough}
     * and both checksums recomputed. Used by repair for the frames before the damage of a group the damage cut.
     *
     * @param doc the frame bytes (intact)
     * @param groupThrough the new last offset of the group, at or above the frame's last offset
     * @return the rewritten frame
     */
    static byte[] withGroupThrough(byte[] doc, long groupThrough) {
        byte[] out = doc.clone();
        ByteBuffer b = ByteBuffer.wrap(out);
        b.putLong(48, groupThrough);
        CRC32C crc = new CRC32C();
        crc.update(out, 0, HEADER_BYTES - 4);
        b.putInt(HEADER_BYTES - 4, (int) crc.getValue());
        crc.reset();
        crc.update(out, 0, out.length - TRAILER_BYTES);
        b.putInt(out.length - TRAILER_BYTES, (int) crc.getValue());
        return out;
    }

    /**
     * Sums the payload bytes of the entries of an intact frame at or below an offset.
     *
     * @param doc the frame bytes
     * @param h its header
     * @param throughInclusive the highest offset counted
     * @return the sum, in bytes
     */
    static long payloadBytesThrough(byte[] doc, Header h, long throughInclusive) {
        long[] sum = {0};
        forEachEntry(doc, h, (offset, d, pos, len) -> {
            if (offset > throughInclusive) {
                return false;
            }
            sum[0] += len;
            return true;
        });
        return sum[0];
    }
}
