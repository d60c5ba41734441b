package dev.lattice.spi.support;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The bytes of a stored object (a checkpoint, a run) that a provider keeps as numbered chunks, fetched one chunk at a
 * time and checked: each chunk by the provider's {@link ChunkSource} (its own checksum layout), the total length
 * against the recorded size, and optionally a CRC32C of the whole. A mismatch is a {@link CorruptLogException}
 * naming the log, the offset and the object; bytes are delivered before the end-of-stream checks, so a reader must
 * consume to the end (as every checkpoint reader does) before it trusts what it read.
 *
 * <p>Not thread-safe (one reader, like any {@link InputStream}).
 */
public final class VerifyingChunkStream extends InputStream {

    /** Fetches one chunk. */
    @FunctionalInterface
    public interface ChunkSource {
        /**
         * Fetches and checks one chunk.
         *
         * @param index the chunk's index, from 0 to the chunk count minus one, asked in order
         * @return the chunk's bytes (may be empty only for an empty object)
         * @throws IOException when the backend fails or the chunk vanished (e.g. deleted meanwhile)
         * @throws CorruptLogException when the chunk fails its own check
         */
        byte[] chunk(int index) throws IOException;
    }

    private static final byte[] EMPTY = new byte[0];

    private final LogId log;
    private final long offset;
    private final String name;
    private final long expectedBytes;
    private final int chunkCount;
    private final Integer expectedCrc32c;
    private final ChunkSource source;
    private final CRC32C crc;
    private byte[] chunk = EMPTY;
    private int pos;
    private int next;
    private long delivered;
    private boolean closed;

    private VerifyingChunkStream(LogId log, long offset, String name, long expectedBytes, int chunkCount,
            Integer expectedCrc32c, ChunkSource source) {
        this.log = Objects.requireNonNull(log, "log");
        this.offset = offset;
        this.name = Objects.requireNonNull(name, "name");
        if (expectedBytes < 0 || chunkCount < 0) {
            throw new IllegalArgumentException("negative size " + expectedBytes + " or chunk count " + chunkCount);
        }
        this.expectedBytes = expectedBytes;
        this.chunkCount = chunkCount;
        this.expectedCrc32c = expectedCrc32c;
        this.source = Objects.requireNonNull(source, "source");
        this.crc = expectedCrc32c == null ? null : new CRC32C();
    }

    /**
     * A stream over a checkpoint's chunks that checks the total length against {@link CheckpointInfo#sizeBytes()}.
     *
     * @param log the log
     * @param info the checkpoint's record
     * @param chunkCount the number of chunks stored
     * @param source fetches each chunk
     * @return the stream
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code chunkCount} is negative
     */
    public static VerifyingChunkStream checkpoint(LogId log, CheckpointInfo info, int chunkCount, ChunkSource source) {
        return new VerifyingChunkStream(log, info.throughOffset(), "checkpoint through " + info.throughOffset(),
                info.sizeBytes(), chunkCount, null, source);
    }

    /**
     * A stream over an object's chunks that checks the total length and a CRC32C of the whole object at the end.
     *
     * @param log the log
     * @param offset the log offset the object belongs to (a checkpoint's through offset), for error messages
     * @param name what the object is, for error messages (e.g. {@code "checkpoint cp-000042"})
     * @param expectedBytes the object's recorded length in bytes
     * @param chunkCount the number of chunks stored
     * @param expectedCrc32c the recorded CRC32C of the whole object (as {@code (int) CRC32C.getValue()})
     * @param source fetches each chunk
     * @return the stream
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a size or count is negative
     */
    public static VerifyingChunkStream withCrc32c(LogId log, long offset, String name, long expectedBytes,
            int chunkCount, int expectedCrc32c, ChunkSource source) {
        return new VerifyingChunkStream(log, offset, name, expectedBytes, chunkCount, expectedCrc32c, source);
    }

    /**
     * Checks a chunk against the CRC32C its provider stored with it.
     *
     * @param log the log
     * @param offset the log offset the object belongs to
     * @param name what the object is
     * @param index the chunk's index
     * @param data the chunk's bytes
     * @param expectedCrc32c the stored CRC32C
     * @return {@code data}
     * @throws CorruptLogException when the checksum differs
     */
    public static byte[] checkCrc32c(LogId log, long offset, String name, int index, byte[] data, int expectedCrc32c) {
        CRC32C c = new CRC32C();
        c.update(data, 0, data.length);
        if ((int) c.getValue() != expectedCrc32c) {
            throw new CorruptLogException(log, offset, name + ": chunk " + index + " fails its CRC32C check");
        }
        return data;
    }

    @Override
    public int read() throws IOException {
        if (!ensure()) {
            return -1;
        }
        delivered++;
        return chunk[pos++] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        if (!ensure()) {
            return -1;
        }
        int n = Math.min(len, chunk.length - pos);
        System.arraycopy(chunk, pos, b, off, n);
        pos += n;
        delivered += n;
        return n;
    }

    @Override
    public int available() {
        return chunk.length - pos;
    }

    private boolean ensure() throws IOException {
        if (closed) {
            throw new IOException(name + " of " + log + ": stream is closed");
        }
        while (pos >= chunk.length) {
            if (next >= chunkCount) {
                finish();
                return false;
            }
            byte[] data = source.chunk(next);
            if (data == null) {
                throw new IOException(name + " of " + log + " lost chunk " + next + " of " + chunkCount
                        + " while being read (deleted meanwhile?)");
            }
            if (crc != null) {
                crc.update(data, 0, data.length);
            }
            if (delivered + data.length > expectedBytes) {
                throw new CorruptLogException(log, offset, name + " holds more than its recorded " + expectedBytes
                        + " bytes");
            }
            chunk = data;
            pos = 0;
            next++;
        }
        return true;
    }

    private void finish() {
        if (delivered != expectedBytes) {
            throw new CorruptLogException(log, offset, name + " holds " + delivered + " bytes, its record says "
                    + expectedBytes);
        }
        if (crc != null && (int) crc.getValue() != expectedCrc32c) {
            throw new CorruptLogException(log, offset, name + " fails its CRC32C checksum");
        }
    }

    @Override
    public void close() {
        closed = true;
        chunk = EMPTY;
    }
}
