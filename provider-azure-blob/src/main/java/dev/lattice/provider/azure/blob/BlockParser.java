package dev.lattice.provider.azure.blob;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Parses the bytes of an append-blob segment (a sequence of blocks, see {@link Frames}) incrementally, as they are
 * downloaded in ranges: frames that straddle two downloads are kept until the rest arrives. Counts the blocks it
 * parsed. Not thread-safe (callers synchronise).
 */
final class BlockParser {

    private final LogId log;
    private long pos;
    private byte[] pending = new byte[0];
    private long blockPos = -1;
    private long blockRemaining;
    private int blocks;

    /**
     * @param log the log, for errors
     * @param startPos the segment position of the first byte that will be fed; must be a block boundary
     */
    BlockParser(LogId log, long startPos) {
        this.log = log;
        this.pos = startPos;
    }

    /** @return the segment position of the next byte to feed */
    long position() {
        return pos + pending.length;
    }

    /** @return true when everything fed so far ended exactly at a block boundary */
    boolean atBoundary() {
        return pending.length == 0 && blockRemaining == 0;
    }

    /** @return blocks whose header was parsed so far */
    int blocks() {
        return blocks;
    }

    /**
     * Feeds the next bytes.
     *
     * @param data bytes starting at {@link #position()}
     * @return the frames completed by them, each with its block's position
     * @throws CorruptLogException if a block or frame is malformed or fails its checksum
     */
    List<Frames.Frame> feed(byte[] data) {
        byte[] buf;
        if (pending.length == 0) {
            buf = data;
        } else {
            buf = Arrays.copyOf(pending, pending.length + data.length);
            System.arraycopy(data, 0, buf, pending.length, data.length);
        }
        List<Frames.Frame> out = new ArrayList<>();
        int i = 0;
        while (true) {
            if (blockRemaining == 0) {
                if (buf.length - i < Frames.BLOCK_HEADER_BYTES) {
                    break;
                }
                ByteBuffer h = ByteBuffer.wrap(buf, i, Frames.BLOCK_HEADER_BYTES);
                int magic = h.getInt();
                int len = h.getInt();
                if (magic != Frames.BLOCK_MAGIC || len <= 0) {
                    throw new CorruptLogException(log, -1, "bad block header at segment position " + (pos + i)
                            + " (magic " + Integer.toHexString(magic) + ", length " + len + ")");
                }
                blockPos = pos + i;
                blockRemaining = len;
                blocks++;
                i += Frames.BLOCK_HEADER_BYTES;
                continue;
            }
            if (buf.length - i < 8) {
                break;
            }
            int flen = ByteBuffer.wrap(buf, i + 4, 4).getInt();
            if (flen <= 0 || flen > blockRemaining) {
                throw new CorruptLogException(log, -1, "frame at segment position " + (pos + i) + " has length "
                        + flen + ", its block has " + blockRemaining + " bytes left");
            }
            if (buf.length - i < flen) {
                break;
            }
            out.add(Frames.parseFrame(log, buf, i, i + flen, blockPos));
            i += flen;
            blockRemaining -= flen;
        }
        pending = Arrays.copyOfRange(buf, i, buf.length);
        pos += i;
        return out;
    }
}
