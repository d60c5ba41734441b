package dev.lattice.provider.azure.blob;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The byte formats of the log: a <em>frame</em> holds one batch, a <em>block</em> (one append-block request) holds
 * one or more frames. All integers are big-endian.
 *
 * <pre>
 * block  = u32 BLOCK_MAGIC ("LBB1") | u32 frameBytes | frame...            (frameBytes = sum of the frame lengths)
 * frame  = u32 FRAME_MAGIC ("LBF1") | u32 frameLength | u64 epoch | u64 batchIdHigh | u64 batchIdLow
 *          | u64 firstOffset | u32 entryCount | (u32 length | payload) * entryCount | u32 crc32c
 * </pre>
 *
 * The CRC32C covers every byte of the frame before it. The manifest's inline tail is a plain concatenation of frames
 * (no block header). Stateless and thread-safe.
 */
final class Frames {

    /** "LBF1": starts every frame. */
    static final int FRAME_MAGIC = 0x4C424631;
    /** "LBB1": starts every append block. */
    static final int BLOCK_MAGIC = 0x4C424231;
    /** Bytes of a frame before its entries: magic, length, epoch, batch id, first offset, count. */
    static final int FRAME_HEADER_BYTES = 4 + 4 + 8 + 16 + 8 + 4;
    /** Bytes each entry adds besides its payload (its length prefix). */
    static final int PER_ENTRY_BYTES = 4;
    /** Bytes of the trailing checksum. */
    static final int CRC_BYTES = 4;
    /** Bytes of a block header. */
    static final int BLOCK_HEADER_BYTES = 8;

    private Frames() {
    }

    /**
     * The encoded length of a frame.
     *
     * @param entries number of entries
     * @param payloadBytes sum of the payload lengths, in bytes
     * @return the frame's length, in bytes
     */
    static long frameLength(int entries, long payloadBytes) {
        return FRAME_HEADER_BYTES + (long) PER_ENTRY_BYTES * entries + payloadBytes + CRC_BYTES;
    }

    /**
     * Encodes a frame. Copies the payloads.
     *
     * @param epoch the writer's epoch
     * @param id the batch id
     * @param firstOffset offset of the first entry
     * @param entries the payloads, at least one
     * @return the frame
     * @throws IllegalArgumentException if the frame would exceed 2 GiB
     */
    static Frame encode(long epoch, BatchId id, long firstOffset, List<byte[]> entries) {
        long payload = 0;
        for (byte[] e : entries) {
            payload += e.length;
        }
        long len = frameLength(entries.size(), payload);
        if (len > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("frame of " + len + " bytes is too large");
        }
        ByteBuffer b = ByteBuffer.allocate((int) len);
        b.putInt(FRAME_MAGIC).putInt((int) len).putLong(epoch).putLong(id.high()).putLong(id.low())
                .putLong(firstOffset).putInt(entries.size());
        for (byte[] e : entries) {
            b.putInt(e.length).put(e);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, (int) len - CRC_BYTES);
        b.putInt((int) crc.getValue());
        return new Frame(epoch, id, firstOffset, entries.size(), payload, b.array(), -1);
    }

    /**
     * Builds an append block from frames.
     *
     * @param frames the frames, in offset order
     * @return header plus the frames' bytes
     */
    static byte[] block(List<Frame> frames) {
        long len = 0;
        for (Frame f : frames) {
            len += f.bytes().length;
        }
        ByteBuffer b = ByteBuffer.allocate((int) (BLOCK_HEADER_BYTES + len));
        b.putInt(BLOCK_MAGIC).putInt((int) len);
        for (Frame f : frames) {
            b.put(f.bytes());
        }
        return b.array();
    }

    /**
     * Concatenates frames (the inline tail's form).
     *
     * @param frames the frames
     * @return their bytes, back to back
     */
    static byte[] concat(List<Frame> frames) {
        int len = 0;
        for (Frame f : frames) {
            len += f.bytes().length;
        }
        byte[] out = new byte[len];
        int pos = 0;
        for (Frame f : frames) {
            System.arraycopy(f.bytes(), 0, out, pos, f.bytes().length);
            pos += f.bytes().length;
        }
        return out;
    }

    /**
     * Parses a concatenation of frames (the inline tail).
     *
     * @param log the log, for errors
     * @param bytes the frames
     * @return the frames
     * @throws CorruptLogException if a frame is torn or fails its checksum
     */
    static List<Frame> parseConcatenated(LogId log, byte[] bytes) {
        List<Frame> out = new ArrayList<>();
        int pos = 0;
        while (pos < bytes.length) {
            Frame f = parseFrame(log, bytes, pos, bytes.length, -1);
            out.add(f);
            pos += f.bytes().length;
        }
        return out;
    }

    /**
     * Parses one frame at a position.
     *
     * @param log the log, for errors
     * @param buf the buffer
     * @param pos where the frame starts
     * @param limit end of the valid bytes (exclusive)
     * @param blockPos the position of the frame's block in its segment, or -1
     * @return the frame (its bytes copied out of {@code buf})
     * @throws CorruptLogException if the frame is torn, malformed or fails its checksum
     */
    static Frame parseFrame(LogId log, byte[] buf, int pos, int limit, long blockPos) {
        if (limit - pos < FRAME_HEADER_BYTES + CRC_BYTES) {
            throw new CorruptLogException(log, -1, "torn frame: " + (limit - pos)
                    + " bytes left, a frame header needs " + (FRAME_HEADER_BYTES + CRC_BYTES));
        }
        ByteBuffer b = ByteBuffer.wrap(buf, pos, limit - pos);
        int magic = b.getInt();
        int len = b.getInt();
        if (magic != FRAME_MAGIC || len < FRAME_HEADER_BYTES + CRC_BYTES || len > limit - pos) {
            throw new CorruptLogException(log, -1, "bad frame header (magic " + Integer.toHexString(magic)
                    + ", length " + len + ", " + (limit - pos) + " bytes available)");
        }
        long epoch = b.getLong();
        BatchId id = new BatchId(b.getLong(), b.getLong());
        long first = b.getLong();
        int count = b.getInt();
        CRC32C crc = new CRC32C();
        crc.update(buf, pos, len - CRC_BYTES);
        int stored = ByteBuffer.wrap(buf, pos + len - CRC_BYTES, CRC_BYTES).getInt();
        if (stored != (int) crc.getValue()) {
            throw new CorruptLogException(log, first, "frame of batch " + id
                    + " fails its CRC32C checksum");
        }
        if (count < 1 || first < 0) {
            throw new CorruptLogException(log, first, "frame has " + count + " entries");
        }
        long payload = 0;
        int p = pos + FRAME_HEADER_BYTES;
        int end = pos + len - CRC_BYTES;
        for (int i = 0; i < count; i++) {
            if (end - p < PER_ENTRY_BYTES) {
                throw new CorruptLogException(log, first + i, "entry length runs past its frame");
            }
            int el = ByteBuffer.wrap(buf, p, 4).getInt();
            if (el < 0 || el > end - p - PER_ENTRY_BYTES) {
                throw new CorruptLogException(log, first + i, "entry length " + el
                        + " runs past its frame");
            }
            payload += el;
            p += PER_ENTRY_BYTES + el;
        }
        if (p != end) {
            throw new CorruptLogException(log, first, "frame has " + (end - p) + " stray bytes");
        }
        return new Frame(epoch, id, first, count, payload, Arrays.copyOfRange(buf, pos, pos + len), blockPos);
    }

    /** Visits one entry of a frame. */
    @FunctionalInterface
    interface EntryVisitor {
        /**
         * @param offset the entry's offset
         * @param buf the frame's bytes (do not modify)
         * @param pos where the payload starts in {@code buf}
         * @param len the payload's length
         * @return false to stop
         */
        boolean accept(long offset, byte[] buf, int pos, int len);
    }

    /**
     * One encoded batch.
     *
     * @param epoch the epoch of the writer that stored it
     * @param id the batch id
     * @param firstOffset offset of the first entry
     * @param count number of entries
     * @param payloadBytes sum of the payload lengths, in bytes
     * @param bytes the encoded frame (owned by this record; never modified)
     * @param blockPos position of the block holding it in its segment, or -1 (inline, or not yet stored)
     */
    record Frame(long epoch, BatchId id, long firstOffset, int count, long payloadBytes, byte[] bytes,
                 long blockPos) {

        /** @return offset of the last entry */
        long lastOffset() {
            return firstOffset + count - 1;
        }

        /** @return this frame as stored in a block at {@code pos} */
        Frame at(long pos) {
            return new Frame(epoch, id, firstOffset, count, payloadBytes, bytes, pos);
        }

        /**
         * The entries' payloads, copied.
         *
         * @param fromOffset first offset wanted (inclusive), within the frame
         * @return the payloads from that offset to the end of the frame
         */
        List<byte[]> payloads(long fromOffset) {
            List<byte[]> out = new ArrayList<>(count);
            int p = FRAME_HEADER_BYTES;
            for (int i = 0; i < count; i++) {
                int el = ByteBuffer.wrap(bytes, p, 4).getInt();
                if (firstOffset + i >= fromOffset) {
                    out.add(Arrays.copyOfRange(bytes, p + 4, p + 4 + el));
                }
                p += 4 + el;
            }
            return out;
        }

        /**
         * Visits the entries from an offset on, without copying.
         *
         * @param fromOffset first offset to visit (inclusive)
         * @param v the visitor; returns false to stop
         * @return false if the visitor stopped early
         */
        boolean forEach(long fromOffset, EntryVisitor v) {
            int p = FRAME_HEADER_BYTES;
            for (int i = 0; i < count; i++) {
                int el = ByteBuffer.wrap(bytes, p, 4).getInt();
                if (firstOffset + i >= fromOffset && !v.accept(firstOffset + i, bytes, p + 4, el)) {
                    return false;
                }
                p += 4 + el;
            }
            return true;
        }

        /**
         * Payload bytes of the entries at or below an offset.
         *
         * @param throughInclusive the offset
         * @return their sum, in bytes
         */
        long payloadBytesThrough(long throughInclusive) {
            long sum = 0;
            int p = FRAME_HEADER_BYTES;
            for (int i = 0; i < count && firstOffset + i <= throughInclusive; i++) {
                int el = ByteBuffer.wrap(bytes, p, 4).getInt();
                sum += el;
                p += 4 + el;
            }
            return sum;
        }

        /**
         * The part of this frame above an offset, re-encoded as a frame of its own (same epoch and batch id).
         *
         * @param throughInclusive entries at or below this offset are left out; must be inside the frame
         * @return the remaining frame
         */
        Frame after(long throughInclusive) {
            return encode(epoch, id, throughInclusive + 1, payloads(throughInclusive + 1));
        }

        /** @return true when both frames store the same batch, byte for byte */
        boolean sameBytes(Frame o) {
            return Arrays.equals(bytes, o.bytes);
        }
    }
}
