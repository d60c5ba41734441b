package dev.lattice.provider.chronicle;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reading committed entries through a log's frame index (read part of the protocol, docs/providers/chronicle.md
 * "Two-phase append, commit groups, visibility"): one page of entries from the indexed frames, and one frame read
 * back by Chronicle index and checked. Shared by the writer's {@link LogStore} and the read-only
 * {@link ReadOnlyLog}. Stateless; the caller serialises calls on one tailer.
 */
final class FrameReads {

    /** Reads and checks frame {@code i} of the index, for {@link #read}. */
    interface FrameSource {
        /**
         * @param i the frame's position in the index
         * @param offset the offset the caller wants (for the error)
         * @param into the buffer to read the frame into (its previous frame is overwritten)
         * @return {@code into}, holding the frame, intact and matching the index, and its header
         * @throws CorruptLogException if the frame is missing, damaged or not the one the index expects
         */
        FrameBuffer frame(int i, long offset, FrameBuffer into);
    }

    /**
     * One frame copied out of the queue: its bytes at the start of {@link #bytes} (which may be longer),
     * {@link #length} and checked {@link #header}. A read call reuses one buffer for all the frames it reads (one
     * array instead of one per frame), and drops it when it returns, so no buffer outlives a call. Not thread-safe.
     */
    static final class FrameBuffer {
        private static final byte[] EMPTY = new byte[0];
        /** The frame's bytes from position 0; longer than {@link #length} when an earlier frame was larger. */
        byte[] bytes = EMPTY;
        /** The frame's length in bytes. */
        int length;
        /** The frame's header, checked. */
        Frames.Header header;

        /**
         * @param n bytes needed
         * @return {@link #bytes}, at least {@code n} long: an empty buffer grows to exactly {@code n}, a used one by
         *     at least half (frames of one log are of similar sizes)
         */
        byte[] ensure(int n) {
            if (bytes.length < n) {
                long grown = Math.max(n, bytes.length + (long) (bytes.length >> 1));
                bytes = new byte[bytes.length == 0 ? n : (int) Math.min(Integer.MAX_VALUE - 16, grown)];
            }
            return bytes;
        }
    }

    private FrameReads() {
    }

    /**
     * One page of committed entries after {@code fromExclusive}.
     *
     * @param id the log
     * @param frames the log's frame index
     * @param watermark the trim watermark, -1 when never trimmed
     * @param tail the committed tail
     * @param fromExclusive the offset to read after
     * @param maxEntries at most this many entries
     * @param maxBytes at most this many payload bytes (the first entry always comes)
     * @param source reads frame i
     * @return the page, with {@code tail} as its committed tail
     * @throws CorruptLogException if the first wanted frame is damaged or missing
     */
    static ReadPage read(LogId id, FrameIndex frames, long watermark, long tail, long fromExclusive, int maxEntries,
            long maxBytes, FrameSource source) {
        List<LogEntry> out = new ArrayList<>();
        if (fromExclusive >= tail || watermark >= tail || frames.size() == 0) {
            return new ReadPage(out, tail);
        }
        long start = Math.max(fromExclusive, watermark) + 1;
        int i = frames.find(start);
        if (i < 0) {
            throw new CorruptLogException(id, start, "no frame holds this committed offset (committed tail " + tail
                    + ")");
        }
        long[] bytes = {0};
        FrameBuffer buf = new FrameBuffer();
        long want = start;
        while (i < frames.size() && out.size() < maxEntries && want <= tail) {
            if (frames.chronicleIndex(i) == FrameIndex.CORRUPT) {
                if (out.isEmpty()) {
                    throw new CorruptLogException(id, want, "committed offsets " + frames.first(i) + ".."
                            + frames.last(i, tail) + " are in a frame that failed its checksum or is missing");
                }
                break;
            }
            FrameBuffer f;
            try {
                f = source.frame(i, want, buf);
            } catch (CorruptLogException e) {
                if (out.isEmpty()) {
                    throw e;
                }
                break;
            }
            byte[] doc = f.bytes;
            Frames.Header h = f.header;
            final long from = want;
            Frames.forEachEntry(doc, h, (offset, d, pos, len) -> {
                if (offset < from) {
                    return true;
                }
                if (out.size() >= maxEntries || (!out.isEmpty() && bytes[0] + len > maxBytes)) {
                    return false;
                }
                out.add(new LogEntry(offset, Arrays.copyOfRange(d, pos, pos + len)));
                bytes[0] += len;
                return true;
            });
            if (!out.isEmpty() && (out.size() >= maxEntries || out.get(out.size() - 1).offset() < h.last())) {
                break;
            }
            want = h.last() + 1;
            i++;
        }
        return new ReadPage(out, tail);
    }

    /**
     * Reads and checks the frame at a Chronicle index against what the frame index expects.
     *
     * @param id the log (for errors)
     * @param t a tailer of the log's queue (moved as needed)
     * @param index the Chronicle index
     * @param first the frame's expected first offset
     * @param last the frame's expected last offset
     * @param offset the offset the caller wants (for the error)
     * @return the frame bytes, intact and matching the expectation
     * @throws CorruptLogException if the frame is missing, damaged or not the expected one
     */
    static byte[] readFrame(LogId id, ExcerptTailer t, long index, long first, long last, long offset) {
        FrameBuffer f = readFrame(id, t, index, first, last, offset, new FrameBuffer());
        return f.bytes.length == f.length ? f.bytes : Arrays.copyOf(f.bytes, f.length);
    }

    /**
     * Reads and checks the frame at a Chronicle index against what the frame index expects, into a buffer (the
     * checks of {@link #readFrame(LogId, ExcerptTailer, long, long, long, long)}).
     *
     * @param into the buffer the frame is copied into
     * @return {@code into}, holding the frame and its header
     * @throws CorruptLogException if the frame is missing, damaged or not the expected one
     */
    static FrameBuffer readFrame(LogId id, ExcerptTailer t, long index, long first, long last, long offset,
            FrameBuffer into) {
        boolean present = false;
        long got = Long.MIN_VALUE;
        if (t.index() != index && !t.moveToIndex(index)) {
            throw new CorruptLogException(id, offset, "the frame at Chronicle index 0x" + Long.toHexString(index)
                    + " (offsets from " + first + ") is missing");
        }
        try (DocumentContext dc = t.readingDocument()) {
            if (dc.isPresent()) {
                present = true;
                got = dc.index();
                Bytes<?> b = dc.wire().bytes();
                int n = (int) b.readRemaining();
                b.read(into.ensure(n), 0, n);
                into.length = n;
            }
        }
        if (!present || got != index) {
            throw new CorruptLogException(id, offset, "the frame at Chronicle index 0x" + Long.toHexString(index)
                    + " (offsets from " + first + ") is missing");
        }
        Frames.Header h = Frames.readHeader(into.bytes, into.length);
        if (h == null || h.first() != first || h.last() != last) {
            throw new CorruptLogException(id, offset, "the frame of offsets " + first + ".." + last
                    + " has a damaged header");
        }
        String problem = Frames.checkBody(into.bytes, into.length, h);
        if (problem != null) {
            throw new CorruptLogException(id, offset, "the frame of offsets " + h.first() + ".." + h.last() + ": "
                    + problem);
        }
        into.header = h;
        return into;
    }
}
