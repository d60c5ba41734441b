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
 * parsed.
 *
 * <p>Every damage it finds (a bad block or frame header, a checksum mismatch, an entry length that runs past its
 * frame, a frame whose first offset does not follow the previous one) is a {@link CorruptLogException} naming the
 * first offset it could not deliver and the segment position of the bad bytes: the parser is only fed committed
 * bytes, so nothing it finds is a torn tail. The intact frames before the damage are still delivered: {@link #feed}
 * returns them and throws the damage on its next call (or at once when no frame precedes it).
 *
 * <p>Not thread-safe (callers synchronise).
 */
final class BlockParser {

    private final LogId log;
    private long pos;
    private byte[] pending = new byte[0];
    private long blockPos = -1;
    private long blockRemaining;
    private int blocks;
    private long nextOffset;
    private boolean offsetKnown;
    private CorruptLogException failure;

    /**
     * @param log the log, for errors
     * @param startPos the segment position of the first byte that will be fed; must be a block boundary
     */
    BlockParser(LogId log, long startPos) {
        this(log, startPos, -1);
    }

    /**
     * @param log the log, for errors
     * @param startPos the segment position of the first byte that will be fed; must be a block boundary
     * @param firstOffset the offset the first frame must start at, or -1 when unknown (a start position moved by a
     *     trim lands on a frame that may begin at any offset up to the first retained one)
     */
    BlockParser(LogId log, long startPos, long firstOffset) {
        this.log = log;
        this.pos = startPos;
        this.nextOffset = firstOffset;
        this.offsetKnown = firstOffset >= 0;
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

    /** @return the first offset of the next frame, or -1 while no frame was parsed and none was expected */
    long nextOffset() {
        return offsetKnown ? nextOffset : -1;
    }

    /**
     * @return the segment position of the start of the block the parser is in: the last block boundary at or before
     *     {@link #position()} (where a damaged or unfinished block begins)
     */
    long cutPosition() {
        return blockRemaining > 0 ? blockPos : pos;
    }

    /** @return the damage found (the next {@link #feed} throws it), or null */
    CorruptLogException failure() {
        return failure;
    }

    /**
     * Feeds the next bytes.
     *
     * @param data bytes starting at {@link #position()}
     * @return the frames completed by them, each with its block's position; when damage follows them, the next
     *     call throws it
     * @throws CorruptLogException if damage was found before any frame of this call (or by an earlier call): a
     *     block or frame is malformed, fails its checksum or breaks the offset order; its offset is
     *     {@link #nextOffset()} (-1 when not known)
     */
    List<Frames.Frame> feed(byte[] data) {
        if (failure != null) {
            throw failure;
        }
        byte[] buf;
        if (pending.length == 0) {
            buf = data;
        } else {
            buf = Arrays.copyOf(pending, pending.length + data.length);
            System.arraycopy(data, 0, buf, pending.length, data.length);
        }
        List<Frames.Frame> out = new ArrayList<>();
        int i = 0;
        while (failure == null) {
            if (blockRemaining == 0) {
                if (buf.length - i < Frames.BLOCK_HEADER_BYTES) {
                    break;
                }
                ByteBuffer h = ByteBuffer.wrap(buf, i, Frames.BLOCK_HEADER_BYTES);
                int magic = h.getInt();
                int len = h.getInt();
                if (magic != Frames.BLOCK_MAGIC || len <= 0) {
                    failure = damage(pos + i, "bad block header (magic " + Integer.toHexString(magic) + ", length "
                            + len + ")", null);
                    break;
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
                failure = damage(pos + i, "bad frame header (length " + flen + ", its block has " + blockRemaining
                        + " bytes left)", null);
                break;
            }
            if (buf.length - i < flen) {
                break;
            }
            Frames.Frame f;
            try {
                f = Frames.parseFrame(log, buf, i, i + flen, blockPos);
            } catch (CorruptLogException e) {
                failure = damage(pos + i, detail(e), e);
                break;
            }
            if (offsetKnown && f.firstOffset() != nextOffset) {
                failure = damage(pos + i, "frame of batch " + f.id() + " starts at offset " + f.firstOffset()
                        + " where offset " + nextOffset + " was due", null);
                break;
            }
            nextOffset = f.lastOffset() + 1;
            offsetKnown = true;
            out.add(f);
            i += flen;
            blockRemaining -= flen;
        }
        pending = Arrays.copyOfRange(buf, i, buf.length);
        pos += i;
        if (failure != null && out.isEmpty()) {
            throw failure;
        }
        return out;
    }

    /** The message of a frame-level error without the log and offset prefixes the exception adds. */
    static String detail(CorruptLogException e) {
        return e.getMessage().replaceFirst("^log .*?: corrupt (data|record at offset -?\\d+): ", "");
    }

    private CorruptLogException damage(long segmentPos, String what, Throwable cause) {
        return new CorruptLogException(log, nextOffset(), "segment bytes at position " + segmentPos + ": " + what,
                cause);
    }
}
