package dev.lattice.provider.postgres;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The bytes of one published checkpoint, fetched one chunk row at a time (one query per 1 MiB, no connection held
 * between reads). Each chunk is checked against its CRC32C and the total against the recorded size; a mismatch
 * throws {@link CorruptLogException}. A chunk that vanished (the checkpoint was deleted meanwhile) throws
 * {@link IOException}.
 *
 * <p>Not thread-safe (one reader).
 */
final class CheckpointStream extends InputStream {

    private final PostgresWalStorageProvider provider;
    private final LogId log;
    private final PostgresCheckpointStore.Stored stored;
    private byte[] chunk = new byte[0];
    private int pos;
    private int nextSeq;
    private long delivered;
    private boolean closed;

    CheckpointStream(PostgresWalStorageProvider provider, LogId log, PostgresCheckpointStore.Stored stored) {
        this.provider = provider;
        this.log = log;
        this.stored = stored;
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

    /** Loads the next chunk when the current one is used up; false at the end of the checkpoint. */
    private boolean ensure() throws IOException {
        if (closed) {
            throw new IOException("checkpoint stream is closed");
        }
        while (pos >= chunk.length) {
            if (nextSeq >= stored.chunks()) {
                if (delivered != stored.info().sizeBytes()) {
                    throw new CorruptLogException(log, stored.info().throughOffset(), "checkpoint has "
                            + delivered + " bytes, its record says " + stored.info().sizeBytes());
                }
                return false;
            }
            provider.checkOpen();
            int seq = nextSeq;
            Optional<byte[][]> row = provider.readOnly(log, "reading a checkpoint chunk", h -> h.createQuery(
                            provider.sql().readChunk).bind("id", stored.id()).bind("seq", seq)
                    .map((rs, ctx) -> new byte[][] {intBytes(rs.getInt("crc")), rs.getBytes("data")}).findOne());
            if (row.isEmpty()) {
                throw new IOException("checkpoint through " + stored.info().throughOffset() + " of " + log
                        + " was deleted while being read (chunk " + seq + " is gone)");
            }
            byte[] data = row.get()[1];
            CRC32C crc = new CRC32C();
            crc.update(data, 0, data.length);
            if ((int) crc.getValue() != toInt(row.get()[0])) {
                throw new CorruptLogException(log, stored.info().throughOffset(), "checkpoint chunk " + seq
                        + " fails its CRC32C check");
            }
            chunk = data;
            pos = 0;
            nextSeq++;
        }
        return true;
    }

    private static byte[] intBytes(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    private static int toInt(byte[] b) {
        return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
    }

    @Override
    public void close() {
        closed = true;
        chunk = new byte[0];
    }
}
