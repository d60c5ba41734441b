package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.support.StagedRange;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** The rows' typed views: head, checkpoint pointer, committed batch (manifest), staged batch header. */
final class Records {
    private Records() {
    }

    /**
     * A published checkpoint: where its chunks are and what it is.
     *
     * @param generation random id naming the checkpoint's chunk partition
     * @param through covers offsets up to this one, inclusive, {@code >= -1}
     * @param format the engine's format version
     * @param size bytes
     * @param epoch epoch of the publishing fence
     * @param sha256 SHA-256 of the bytes
     * @param rows chunk rows
     */
    record CheckpointRef(String generation, long through, int format, long size, long epoch, byte[] sha256,
                         int rows) {
        CheckpointInfo info() {
            return new CheckpointInfo(through, format, size, epoch);
        }

        void writeTo(TableEntity e) {
            e.addProperty("CG", generation).addProperty("CT", through).addProperty("CF", format)
                    .addProperty("CS", size).addProperty("CE", epoch).addProperty("CH", sha256)
                    .addProperty("CN", rows);
        }

        static CheckpointRef readFrom(TableEntity e) {
            Object g = e.getProperty("CG");
            if (g == null) {
                return null;
            }
            return new CheckpointRef((String) g, Rows.getLong(e, "CT"), Rows.getInt(e, "CF"), Rows.getLong(e, "CS"),
                    Rows.getLong(e, "CE"), Rows.getBytes(e, "CH"), Rows.getInt(e, "CN"));
        }
    }

    /**
     * A log's head row: the single row every fenced change goes through, updated only with If-Match on its ETag.
     *
     * @param epoch the current epoch, {@code >= 1}
     * @param tail the committed tail, {@code >= -1}
     * @param watermark the trim watermark, {@code >= -1}
     * @param retainedBytes payload bytes of committed entries above the watermark
     * @param latest the latest checkpoint, or {@code null}
     * @param etag the ETag it was read with, {@code null} for a head not yet stored
     */
    record Head(long epoch, long tail, long watermark, long retainedBytes, CheckpointRef latest, String etag) {
        static final int VERSION = 1;

        Head withEpoch(long e) {
            return new Head(e, tail, watermark, retainedBytes, latest, etag);
        }

        Head withTail(long t, long bytes) {
            return new Head(epoch, t, watermark, bytes, latest, etag);
        }

        Head withTrim(long w, long t, long bytes) {
            return new Head(epoch, t, w, bytes, latest, etag);
        }

        Head withLatest(CheckpointRef ref) {
            return new Head(epoch, tail, watermark, retainedBytes, ref, etag);
        }

        TableEntity toEntity(String partitionKey) {
            // X = 0 lets one RowKey-range query fetch the head together with staged batch headers.
            TableEntity e = new TableEntity(partitionKey, Keys.HEAD).addProperty("V", VERSION).addProperty("X", 0)
                    .addProperty("E", epoch).addProperty("T", tail).addProperty("W", watermark)
                    .addProperty("R", retainedBytes);
            if (latest != null) {
                latest.writeTo(e);
            }
            if (etag != null) {
                e.addProperty("odata.etag", etag);
            }
            return e;
        }

        static Head fromEntity(TableEntity e) {
            int version = Rows.getInt(e, "V");
            if (version != VERSION) {
                throw new IllegalStateException("head row " + e.getPartitionKey() + " has layout version " + version
                        + "; this provider reads version " + VERSION);
            }
            return new Head(Rows.getLong(e, "E"), Rows.getLong(e, "T"), Rows.getLong(e, "W"), Rows.getLong(e, "R"),
                    CheckpointRef.readFrom(e), e.getETag());
        }
    }

    /**
     * A committed batch as listed in a manifest row.
     *
     * @param first first offset
     * @param last last offset
     * @param id batch id
     * @param epoch epoch it was staged under (part of its data rows' keys)
     * @param payloadBytes sum of its entries' lengths
     * @param rows number of data rows
     */
    record CommittedBatch(long first, long last, BatchId id, long epoch, long payloadBytes, int rows) {
        static final int ENCODED_BYTES = 8 + 8 + 16 + 8 + 8 + 4;

        String rowPrefix() {
            return Keys.dataBatchPrefix(first, id, epoch);
        }
    }

    /** Manifest group rows: one per commit, listing the batches that commit published. */
    static final class Manifest {
        /** Most batches one manifest row lists (52 bytes each: about 508 KiB, well inside one entity). */
        static final int MAX_BATCHES_PER_GROUP = 10_000;
        private static final int VERSION = 1;

        private Manifest() {
        }

        static TableEntity toEntity(String partitionKey, List<CommittedBatch> batches) {
            ByteBuffer buf = ByteBuffer.allocate(8 + batches.size() * CommittedBatch.ENCODED_BYTES);
            buf.putInt(VERSION).putInt(batches.size());
            for (CommittedBatch b : batches) {
                buf.putLong(b.first()).putLong(b.last()).putLong(b.id().high()).putLong(b.id().low())
                        .putLong(b.epoch()).putLong(b.payloadBytes()).putInt(b.rows());
            }
            byte[] bytes = buf.array();
            CommittedBatch lastBatch = batches.get(batches.size() - 1);
            TableEntity e = new TableEntity(partitionKey, Keys.manifest(lastBatch.last()))
                    .addProperty("F", batches.get(0).first()).addProperty("L", lastBatch.last());
            Rows.putPayload(e, bytes, 0, bytes.length, Layout.DEFAULT);
            return e;
        }

        static List<CommittedBatch> fromEntity(TableEntity e) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Rows.appendPayload(e, out);
            ByteBuffer buf = ByteBuffer.wrap(out.toByteArray());
            int version = buf.getInt();
            if (version != VERSION) {
                throw new IllegalStateException("manifest row " + e.getRowKey() + " has version " + version);
            }
            int n = buf.getInt();
            List<CommittedBatch> list = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                list.add(new CommittedBatch(buf.getLong(), buf.getLong(), new BatchId(buf.getLong(), buf.getLong()),
                        buf.getLong(), buf.getLong(), buf.getInt()));
            }
            return list;
        }
    }

    /**
     * The header of a staged batch: its first data row (row index 0), written in the stage's last transaction, so
     * its presence means every row of the batch landed.
     *
     * @param first first offset
     * @param last last offset
     * @param id batch id
     * @param epoch epoch it was staged under
     * @param rows number of data rows
     * @param payloadBytes sum of the entries' lengths
     * @param hash the batch's content hash
     */
    record StagedHeader(long first, long last, BatchId id, long epoch, int rows, long payloadBytes, byte[] hash)
            implements StagedRange {
        /** Properties a header query selects. */
        static final List<String> SELECT = List.of("RowKey", "F", "L", "E", "X", "N", "B", "H");

        static StagedHeader fromEntity(TableEntity e) {
            String rk = e.getRowKey();
            // D<19 digits>.<32 hex>.<19 digits>.<5 digits>
            BatchId id = BatchId.parse(rk.substring(21, 53));
            return new StagedHeader(Rows.getLong(e, "F"), Rows.getLong(e, "L"), id, Rows.getLong(e, "E"),
                    Rows.getInt(e, "N"), Rows.getLong(e, "B"), Rows.getBytes(e, "H"));
        }

        @Override
        public long firstOffset() {
            return first;
        }

        @Override
        public long lastOffset() {
            return last;
        }

        @Override
        public BatchId batchId() {
            return id;
        }

        CommittedBatch committed() {
            return new CommittedBatch(first, last, id, epoch, payloadBytes, rows);
        }

    }
}
