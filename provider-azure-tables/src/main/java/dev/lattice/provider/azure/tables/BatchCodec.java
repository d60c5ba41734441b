package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.LogId;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Turns a batch into data rows and back, deterministically. The batch's entries are framed as
 * {@code varint(length) bytes} one after the other; that stream is cut into rows of {@link Layout#rowBytes()} and
 * each row into binary properties of {@link Layout#propertyBytes()}. Every row carries the batch's first and last
 * offset, epoch, row index and a SHA-256 content hash; row 0 (the header) also carries the row count and the payload
 * byte count. Stateless.
 */
final class BatchCodec {
    private static final byte[] DOMAIN = "lattice-azure-tables batch v1\0".getBytes(StandardCharsets.US_ASCII);

    private BatchCodec() {
    }

    /**
     * The rows of one staged batch.
     *
     * @param rows data rows, row index order (row 0 is the header)
     * @param hash the content hash stored on every row
     */
    record Encoded(List<TableEntity> rows, byte[] hash) {
    }

    /**
     * Encodes a batch into the rows a stage writes.
     *
     * @param partitionKey the log's partition
     * @param epoch the staging fence's epoch
     * @param batch the batch
     * @param layout how to split the stream
     * @return the rows and hash
     */
    static Encoded encode(String partitionKey, long epoch, EncodedBatch batch, Layout layout) {
        long streamLength = 0;
        for (byte[] e : batch.entries()) {
            streamLength += varintLength(e.length) + e.length;
        }
        if (streamLength > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("batch stream of " + streamLength + " bytes is too large");
        }
        byte[] stream = new byte[(int) streamLength];
        int pos = 0;
        for (byte[] e : batch.entries()) {
            pos = writeVarint(stream, pos, e.length);
            System.arraycopy(e, 0, stream, pos, e.length);
            pos += e.length;
        }
        byte[] hash = hash(batch, stream);
        int rowCount = layout.rowsFor(stream.length);
        List<TableEntity> rows = new ArrayList<>(rowCount);
        for (int r = 0; r < rowCount; r++) {
            TableEntity row = new TableEntity(partitionKey, Keys.dataRow(batch.firstOffset(), batch.batchId(), epoch, r))
                    .addProperty("F", batch.firstOffset()).addProperty("L", batch.lastOffset())
                    .addProperty("E", epoch).addProperty("X", r).addProperty("H", hash);
            if (r == 0) {
                row.addProperty("N", rowCount).addProperty("B", batch.payloadBytes());
            }
            int off = r * layout.rowBytes();
            Rows.putPayload(row, stream, off, Math.min(layout.rowBytes(), stream.length - off), layout);
            rows.add(row);
        }
        return new Encoded(rows, hash);
    }

    /**
     * Decodes a committed batch from its rows, checking row count, row order, content hash and framing.
     *
     * @param log the log, for errors
     * @param batch what the manifest says about the batch
     * @param rows the batch's rows, in row key order
     * @return the entries, in offset order
     * @throws CorruptLogException if a row is missing, the hash differs or the framing is broken
     */
    static List<byte[]> decode(LogId log, Records.CommittedBatch batch, List<TableEntity> rows) {
        if (rows.size() != batch.rows()) {
            throw new CorruptLogException(log, batch.first(), "batch " + batch.first() + ".." + batch.last()
                    + " (id " + batch.id() + ") has " + rows.size() + " data rows, the manifest says " + batch.rows());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] hash = null;
        for (int i = 0; i < rows.size(); i++) {
            TableEntity row = rows.get(i);
            try {
                if (Rows.getInt(row, "X") != i) {
                    throw new CorruptLogException(log, batch.first(), "row " + row.getRowKey() + " is out of order");
                }
                byte[] h = Rows.getBytes(row, "H");
                if (hash == null) {
                    hash = h;
                } else if (!Arrays.equals(hash, h)) {
                    throw new CorruptLogException(log, batch.first(), "rows of batch " + batch.first()
                            + " carry different content hashes");
                }
                Rows.appendPayload(row, out);
            } catch (IllegalStateException e) {
                throw new CorruptLogException(log, batch.first(), e.getMessage(), e);
            }
        }
        byte[] stream = out.toByteArray();
        List<byte[]> entries = new ArrayList<>((int) (batch.last() - batch.first() + 1));
        int pos = 0;
        try {
            while (pos < stream.length) {
                long len = 0;
                int shift = 0;
                while (true) {
                    byte b = stream[pos++];
                    len |= (long) (b & 0x7F) << shift;
                    if ((b & 0x80) == 0) {
                        break;
                    }
                    shift += 7;
                    if (shift > 28) {
                        throw new CorruptLogException(log, batch.first(), "bad entry length varint");
                    }
                }
                if (len > stream.length - pos) {
                    throw new CorruptLogException(log, batch.first(), "entry length " + len + " runs past the batch");
                }
                entries.add(Arrays.copyOfRange(stream, pos, pos + (int) len));
                pos += (int) len;
            }
        } catch (ArrayIndexOutOfBoundsException e) {
            throw new CorruptLogException(log, batch.first(), "truncated entry framing", e);
        }
        if (entries.size() != batch.last() - batch.first() + 1) {
            throw new CorruptLogException(log, batch.first(), "batch " + batch.first() + ".." + batch.last()
                    + " decodes to " + entries.size() + " entries");
        }
        EncodedBatch rebuilt = EncodedBatch.of(batch.first(), batch.id(), entries);
        if (hash == null || !Arrays.equals(hash, hash(rebuilt, stream))) {
            throw new CorruptLogException(log, batch.first(), "batch " + batch.first() + ".." + batch.last()
                    + " fails its SHA-256 content hash");
        }
        return entries;
    }

    /** @return SHA-256 over a domain tag, first and last offset, batch id and the framed stream */
    static byte[] hash(EncodedBatch batch, byte[] stream) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(DOMAIN);
            md.update(ByteBuffer.allocate(32).putLong(batch.firstOffset()).putLong(batch.lastOffset())
                    .putLong(batch.batchId().high()).putLong(batch.batchId().low()).array());
            md.update(stream);
            return md.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static int varintLength(int v) {
        int n = 1;
        while ((v & ~0x7F) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    private static int writeVarint(byte[] out, int pos, int v) {
        while ((v & ~0x7F) != 0) {
            out[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out[pos++] = (byte) v;
        return pos;
    }
}
