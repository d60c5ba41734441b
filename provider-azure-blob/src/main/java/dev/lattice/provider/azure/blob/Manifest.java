package dev.lattice.provider.azure.blob;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The manifest (head) blob of one log: the single source of truth for what is committed. Every change of the log
 * (claim, commit, trim, checkpoint publish, checkpoint delete) is one conditional upload of a new manifest under the
 * previous one's ETag, so it is atomic and fenced.
 *
 * <p>Binary form (big-endian): {@code "LBM1"}, u32 format version, u64 epoch, u64 generation, 16-byte write token,
 * then the {@link LogData}, the checkpoint list, and a CRC32C of everything before it.
 *
 * <p>Immutable and thread-safe.
 *
 * @param epoch the log's current epoch (the last claim), {@code >= 1}
 * @param generation incremented by every write; orders cached copies
 * @param tokenHigh upper half of the random token of the write that produced this manifest
 * @param tokenLow lower half of that token; a writer whose response was lost finds its own token to know it landed
 * @param data the committed log
 * @param checkpoints the retained checkpoints, ascending by through-offset; the last one is the latest
 */
record Manifest(long epoch, long generation, long tokenHigh, long tokenLow, LogData data,
                List<CheckpointRef> checkpoints) {

    private static final int MAGIC = 0x4C424D31; // "LBM1"
    private static final int VERSION = 1;
    private static final SecureRandom RANDOM = new SecureRandom();

    Manifest {
        Objects.requireNonNull(data, "data");
        checkpoints = List.copyOf(checkpoints);
    }

    /**
     * The manifest a first claim writes.
     *
     * @return epoch 1, empty log, no checkpoints
     */
    static Manifest first() {
        return new Manifest(1, 1, 0, 0, LogData.EMPTY, List.of());
    }

    /** @return the same content with the next generation and a fresh random write token */
    Manifest nextWrite() {
        return new Manifest(epoch, generation + 1, RANDOM.nextLong(), RANDOM.nextLong(), data, checkpoints);
    }

    /** @return true when {@code o} carries this manifest's write token */
    boolean sameWrite(Manifest o) {
        return o != null && o.tokenHigh == tokenHigh && o.tokenLow == tokenLow && o.generation == generation;
    }

    Manifest withEpoch(long e) {
        return new Manifest(e, generation, tokenHigh, tokenLow, data, checkpoints);
    }

    Manifest withData(LogData d) {
        return new Manifest(epoch, generation, tokenHigh, tokenLow, d, checkpoints);
    }

    Manifest withCheckpoints(List<CheckpointRef> c) {
        return new Manifest(epoch, generation, tokenHigh, tokenLow, data, c);
    }

    /** @return the latest checkpoint, or null */
    CheckpointRef latestCheckpoint() {
        return checkpoints.isEmpty() ? null : checkpoints.get(checkpoints.size() - 1);
    }

    /** @return bytes of all retained checkpoints */
    long checkpointBytes() {
        long sum = 0;
        for (CheckpointRef c : checkpoints) {
            sum += c.size();
        }
        return sum;
    }

    /**
     * Serialises the manifest.
     *
     * @return its bytes, checksum included
     */
    byte[] encode() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + data.inline().length);
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(MAGIC);
            out.writeInt(VERSION);
            out.writeLong(epoch);
            out.writeLong(generation);
            out.writeLong(tokenHigh);
            out.writeLong(tokenLow);
            out.writeLong(data.tail());
            out.writeLong(data.watermark());
            out.writeInt(data.segments().size());
            for (SegmentRef s : data.segments()) {
                writeName(out, s.name());
                out.writeLong(s.creatorEpoch());
                out.writeLong(s.firstOffset());
                out.writeLong(s.lastOffset());
                out.writeLong(s.startPos());
                out.writeLong(s.length());
                out.writeInt(s.blocks());
                out.writeLong(s.retainedPayloadBytes());
            }
            out.writeInt(data.inlineBatches());
            out.writeLong(data.inlinePayloadBytes());
            out.writeInt(data.inline().length);
            out.write(data.inline());
            out.writeInt(checkpoints.size());
            for (CheckpointRef c : checkpoints) {
                writeName(out, c.name());
                out.writeLong(c.through());
                out.writeInt(c.format());
                out.writeLong(c.size());
                out.writeLong(c.epoch());
                out.writeInt(c.crc32c());
                out.writeInt(c.blocks());
            }
            out.flush();
            CRC32C crc = new CRC32C();
            byte[] body = bytes.toByteArray();
            crc.update(body);
            out.writeInt((int) crc.getValue());
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Parses a manifest.
     *
     * @param log the log, for errors
     * @param bytes the blob's content
     * @return the manifest
     * @throws CorruptLogException if the bytes are not a valid manifest
     */
    static Manifest decode(LogId log, byte[] bytes) {
        if (bytes.length < 8) {
            throw new CorruptLogException(log, -1, "manifest blob has " + bytes.length + " bytes");
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        int stored = ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt();
        if (stored != (int) crc.getValue()) {
            throw new CorruptLogException(log, -1, "manifest blob fails its CRC32C checksum");
        }
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, 0, bytes.length - 4));
            if (in.readInt() != MAGIC) {
                throw new CorruptLogException(log, -1, "manifest blob has a bad magic number");
            }
            int version = in.readInt();
            if (version != VERSION) {
                throw new CorruptLogException(log, -1, "manifest format version " + version
                        + " is not supported (this provider reads version " + VERSION + ")");
            }
            long epoch = in.readLong();
            long generation = in.readLong();
            long th = in.readLong();
            long tl = in.readLong();
            long tail = in.readLong();
            long watermark = in.readLong();
            int n = in.readInt();
            List<SegmentRef> segs = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                segs.add(new SegmentRef(readName(in), in.readLong(), in.readLong(), in.readLong(), in.readLong(),
                        in.readLong(), in.readInt(), in.readLong()));
            }
            int inlineBatches = in.readInt();
            long inlinePayload = in.readLong();
            byte[] inline = new byte[in.readInt()];
            in.readFully(inline);
            int c = in.readInt();
            List<CheckpointRef> cps = new ArrayList<>(c);
            for (int i = 0; i < c; i++) {
                cps.add(new CheckpointRef(readName(in), in.readLong(), in.readInt(), in.readLong(), in.readLong(),
                        in.readInt(), in.readInt()));
            }
            if (in.available() != 0) {
                throw new CorruptLogException(log, -1, "manifest blob has " + in.available() + " stray bytes");
            }
            return new Manifest(epoch, generation, th, tl,
                    new LogData(tail, watermark, segs, inline, inlineBatches, inlinePayload), cps);
        } catch (IOException | RuntimeException e) {
            if (e instanceof CorruptLogException c) {
                throw c;
            }
            throw new CorruptLogException(log, -1, "manifest blob cannot be decoded", e);
        }
    }

    private static void writeName(DataOutputStream out, String name) throws IOException {
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        out.writeShort(b.length);
        out.write(b);
    }

    private static String readName(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readUnsignedShort()];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /**
     * The committed content of a log: tail, trim watermark, the append-blob segments and the inline tail.
     *
     * <p>Every offset in {@code (watermark, tail]} is in exactly one segment (within its committed length) or in the
     * inline tail; the segments come first, in offset order, then the inline frames. Segments may still hold frames
     * at or below the watermark (readers skip them).
     *
     * @param tail the committed tail, {@code -1} when nothing was committed
     * @param watermark the trim watermark, {@code -1} when never trimmed
     * @param segments the segments, in offset order; the last one is the one appends go to
     * @param inline committed frames not yet flushed to a segment (concatenated, no block header)
     * @param inlineBatches number of frames in {@code inline}
     * @param inlinePayloadBytes payload bytes in {@code inline}
     */
    record LogData(long tail, long watermark, List<SegmentRef> segments, byte[] inline, int inlineBatches,
                   long inlinePayloadBytes) {

        /** A log with nothing committed. */
        static final LogData EMPTY = new LogData(-1, -1, List.of(), new byte[0], 0, 0);

        LogData {
            segments = List.copyOf(segments);
            Objects.requireNonNull(inline, "inline");
        }

        /** @return payload bytes of the entries above the watermark */
        long retainedPayloadBytes() {
            long sum = inlinePayloadBytes;
            for (SegmentRef s : segments) {
                sum += s.retainedPayloadBytes();
            }
            return sum;
        }

        /** @return committed bytes of all segments */
        long segmentBytes() {
            long sum = 0;
            for (SegmentRef s : segments) {
                sum += s.length();
            }
            return sum;
        }

        /** @return the segment appends go to, or null */
        SegmentRef active() {
            return segments.isEmpty() ? null : segments.get(segments.size() - 1);
        }

        /**
         * @param log the log, for errors
         * @return the inline frames, parsed
         */
        List<Frames.Frame> inlineFrames(LogId log) {
            return Frames.parseConcatenated(log, inline);
        }

        /**
         * Checks, without any request, that the committed content the manifest describes is whole: the segments and
         * then the inline frames cover {@code (watermark, tail]} in order, with no gap and nothing missing at the
         * end, and every inline frame passes its checksum.
         *
         * @param log the log, for errors
         * @throws CorruptLogException naming the first offset that is not covered (or the first bad inline frame's)
         */
        void checkWhole(LogId log) {
            long covered = watermark;
            for (SegmentRef seg : segments) {
                if (seg.firstOffset() > covered + 1) {
                    throw new CorruptLogException(log, covered + 1, "committed offsets " + (covered + 1) + ".."
                            + (seg.firstOffset() - 1) + " are in no segment (next: " + seg.name() + ")");
                }
                covered = Math.max(covered, seg.lastOffset());
            }
            long next = covered + 1;
            int pos = 0;
            while (pos < inline.length) {
                Frames.Frame f;
                try {
                    f = Frames.parseFrame(log, inline, pos, inline.length, -1);
                } catch (CorruptLogException e) {
                    throw new CorruptLogException(log, next, "inline tail of the manifest, byte " + pos + ": "
                            + BlockParser.detail(e), e);
                }
                if (f.firstOffset() > next || (f.firstOffset() < next && pos > 0)) {
                    throw new CorruptLogException(log, next, "inline frame of batch " + f.id() + " starts at offset "
                            + f.firstOffset() + " where offset " + next + " was due");
                }
                next = Math.max(next, f.lastOffset() + 1);
                pos += f.bytes().length;
            }
            if (next <= tail) {
                throw new CorruptLogException(log, next, "committed offsets " + next + ".." + tail
                        + " are in no segment nor the inline tail");
            }
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof LogData d && d.tail == tail && d.watermark == watermark
                    && d.segments.equals(segments) && Arrays.equals(d.inline, inline)
                    && d.inlineBatches == inlineBatches && d.inlinePayloadBytes == inlinePayloadBytes;
        }

        @Override
        public int hashCode() {
            return Objects.hash(tail, watermark, segments, Arrays.hashCode(inline), inlineBatches);
        }

        @Override
        public String toString() {
            return "LogData[tail=" + tail + ", watermark=" + watermark + ", segments=" + segments + ", inline="
                    + inlineBatches + " batches/" + inline.length + " bytes]";
        }
    }

    /**
     * One append-blob segment as the manifest records it. Readers read {@code [startPos, length)} only.
     *
     * @param name the blob name
     * @param creatorEpoch the epoch of the writer that created it
     * @param firstOffset the first offset stored in it
     * @param lastOffset the last committed offset in it
     * @param startPos byte position of the first block readers need (blocks before it hold trimmed entries only)
     * @param length committed length, in bytes: nothing after it is ever read
     * @param blocks committed append blocks (the service allows 50,000 per append blob)
     * @param retainedPayloadBytes payload bytes of its entries above the trim watermark
     */
    record SegmentRef(String name, long creatorEpoch, long firstOffset, long lastOffset, long startPos, long length,
                      int blocks, long retainedPayloadBytes) {
    }

    /**
     * One checkpoint blob.
     *
     * @param name the blob name
     * @param through the checkpoint's through-offset
     * @param format the engine's format version
     * @param size length, in bytes
     * @param epoch the publishing fence's epoch
     * @param crc32c CRC32C of the whole stream
     * @param blocks blocks the blob was uploaded in
     */
    record CheckpointRef(String name, long through, int format, long size, long epoch, int crc32c, int blocks) {

        /** @return the SPI description */
        CheckpointInfo info() {
            return new CheckpointInfo(through, format, size, epoch);
        }
    }
}
