package dev.lattice.provider.postgres;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.VerifyingChunkStream;
import org.jdbi.v3.core.mapper.RowMapper;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * Checkpoints in PostgreSQL: the stream is cut into {@value #CHUNK_BYTES}-byte {@code checkpoint_chunk} rows
 * (each with its CRC32C) under a {@code checkpoint} row, all written in one transaction whose last step is the
 * publish point: a conditional update of the log's head ({@code checkpoint_id}), fenced by epoch and bounded by the
 * committed tail and the previous checkpoint. A failure anywhere (stream, size limit, fence, connection) rolls the
 * whole transaction back, so readers see the previous checkpoint or the new one, never a part.
 *
 * Readers get a {@link VerifyingChunkStream} that fetches one chunk row per query and checks each chunk's CRC32C
 * and the total size. See docs/providers/postgres.md, "Checkpoints".
 *
 * <p>Thread-safe; shares its provider's life cycle.
 */
final class PostgresCheckpointStore implements CheckpointStore {

    /** Bytes per chunk row: 1 MiB. */
    static final int CHUNK_BYTES = 1 << 20;

    private static final RowMapper<Stored> STORED = (rs, ctx) -> new Stored(rs.getLong("checkpoint_id"),
            new CheckpointInfo(rs.getLong("through_offset"), rs.getInt("format_version"), rs.getLong("size_bytes"),
                    rs.getLong("epoch")), rs.getInt("chunk_count"));

    /** A stored checkpoint: its id, description and number of chunks. */
    record Stored(long id, CheckpointInfo info, int chunks) {
    }

    private final PostgresCalls provider;

    /**
     * Creates the store.
     *
     * @param provider the provider's backend calls
     */
    PostgresCheckpointStore(PostgresCalls provider) {
        this.provider = provider;
    }

    @Override
    public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion, InputStream data) {
        SpiChecks.publish(log, fence, throughOffset, formatVersion, data);
        provider.checkOpen();
        Sql sql = provider.sql();
        long limit = provider.settings().maxCheckpointBytes;
        return provider.tx(log, "checkpoint publish", h -> {
            record Pre(Head head, Long latest) {
            }
            Optional<Pre> pre = h.createQuery(sql.checkpointPrecheck).bind("tree", log.tree())
                    .bind("part", log.partition())
                    .map((rs, ctx) -> new Pre(new Head(rs.getLong("log_id"), rs.getLong("epoch"), rs.getLong("tail"),
                            -1), (Long) rs.getObject("latest")))
                    .findOne();
            Head head = Head.checkFence(log, fence, pre.map(Pre::head));
            checkBounds(log, throughOffset, head.tail(), pre.get().latest());

            long id = h.createQuery(sql.nextCheckpointId).mapTo(Long.class).one();
            byte[] buf = new byte[CHUNK_BYTES];
            long size = 0;
            int seq = 0;
            while (true) {
                int n = fill(log, data, buf);
                if (n == 0) {
                    break;
                }
                size += n;
                if (size > limit) {
                    throw new CheckpointTooLargeException(log, limit);
                }
                CRC32C crc = new CRC32C();
                crc.update(buf, 0, n);
                h.createUpdate(sql.insertChunk).bind("id", id).bind("seq", seq++).bind("crc", (int) crc.getValue())
                        .bind("data", Arrays.copyOf(buf, n)).execute();
                if (n < buf.length) {
                    break;
                }
            }
            boolean published = h.createQuery(sql.publishHead).bind("id", id).bind("size", size)
                    .bind("logId", head.logId()).bind("epoch", fence.epoch()).bind("through", throughOffset)
                    .mapTo(Long.class).findOne().isPresent();
            if (!published) {
                // Something moved while the chunks were written: re-check under the row lock for the exact reason.
                Optional<Pre> now = h.createQuery(sql.checkpointPrecheck + " FOR UPDATE OF h")
                        .bind("tree", log.tree()).bind("part", log.partition())
                        .map((rs, ctx) -> new Pre(new Head(rs.getLong("log_id"), rs.getLong("epoch"),
                                rs.getLong("tail"), -1), (Long) rs.getObject("latest")))
                        .findOne();
                Head current = Head.checkFence(log, fence, now.map(Pre::head));
                checkBounds(log, throughOffset, current.tail(), now.get().latest());
                throw new WalStorageException(log, "checkpoint publish through " + throughOffset
                        + " did not apply although fence and bounds hold");
            }
            List<long[]> replaced = h.createQuery(sql.deleteSameThrough).bind("logId", head.logId())
                    .bind("through", throughOffset)
                    .map((rs, ctx) -> new long[] {rs.getLong("checkpoint_id"), rs.getLong("size_bytes")}).list();
            dropChunks(h, sql, head.logId(), replaced);
            h.createUpdate(sql.insertCheckpoint).bind("id", id).bind("logId", head.logId())
                    .bind("through", throughOffset).bind("format", formatVersion).bind("size", size)
                    .bind("epoch", fence.epoch()).bind("chunks", seq).execute();
            return new CheckpointInfo(throughOffset, formatVersion, size, fence.epoch());
        });
    }

    private static void checkBounds(LogId log, long through, long tail, Long latest) {
        if (through > tail) {
            throw new OffsetConflictException(log, "checkpoint through " + through + " is above the committed tail "
                    + tail);
        }
        if (latest != null && through < latest) {
            throw new OffsetConflictException(log, "checkpoint through " + through
                    + " is below the latest checkpoint's " + latest);
        }
    }

    /** Reads until the buffer is full or the stream ends; returns the bytes read. */
    private static int fill(LogId log, InputStream data, byte[] buf) {
        int n = 0;
        try {
            while (n < buf.length) {
                int r = data.read(buf, n, buf.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
        } catch (IOException e) {
            throw new WalStorageException(log, "reading the checkpoint stream failed; nothing was published", e);
        }
        return n;
    }

    private static void dropChunks(org.jdbi.v3.core.Handle h, Sql sql, long logId, List<long[]> deleted) {
        if (deleted.isEmpty()) {
            return;
        }
        Long[] ids = new Long[deleted.size()];
        long bytes = 0;
        for (int i = 0; i < ids.length; i++) {
            ids[i] = deleted.get(i)[0];
            bytes += deleted.get(i)[1];
        }
        h.createUpdate(sql.deleteChunks).bind("ids", PostgresCalls.array("bigint", ids)).execute();
        h.createUpdate(sql.subtractCheckpointBytes).bind("size", bytes).bind("logId", logId).execute();
    }

    @Override
    public Optional<CheckpointInfo> latest(LogId log) {
        Objects.requireNonNull(log, "log");
        provider.checkOpen();
        return provider.readOnly(log, "reading the latest checkpoint", h -> h.createQuery(provider.sql().latestCheckpoint)
                .bind("tree", log.tree()).bind("part", log.partition()).map(STORED).findOne()).map(Stored::info);
    }

    @Override
    public InputStream open(LogId log, CheckpointInfo info) {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(info, "info");
        provider.checkOpen();
        Optional<Stored> stored = provider.readOnly(log, "opening a checkpoint", h -> h.createQuery(
                        provider.sql().findCheckpoint).bind("tree", log.tree()).bind("part", log.partition())
                .bind("through", info.throughOffset()).map(STORED).findOne());
        if (stored.isEmpty() || !stored.get().info().equals(info)) {
            throw new WalStorageException(log, "checkpoint through " + info.throughOffset() + " (epoch " + info.epoch()
                    + ") no longer exists");
        }
        Stored st = stored.get();
        String name = "checkpoint through " + info.throughOffset();
        record Chunk(int crc, byte[] data) {
        }
        return VerifyingChunkStream.checkpoint(log, st.info(), st.chunks(), seq -> {
            provider.checkOpen();
            Optional<Chunk> c = provider.readOnly(log, "reading a checkpoint chunk", h -> h.createQuery(
                            provider.sql().readChunk).bind("id", st.id()).bind("seq", seq)
                    .map((rs, ctx) -> new Chunk(rs.getInt("crc"), rs.getBytes("data"))).findOne());
            return c.map(k -> VerifyingChunkStream.checkCrc32c(log, info.throughOffset(), name, seq, k.data(),
                    k.crc())).orElse(null);
        });
    }

    @Override
    public void deleteBefore(LogId log, long throughOffsetExclusive) {
        Objects.requireNonNull(log, "log");
        provider.checkOpen();
        Sql sql = provider.sql();
        provider.tx(log, "deleting checkpoints", h -> {
            Optional<long[]> head = h.createQuery(sql.headCheckpointForUpdate).bind("tree", log.tree())
                    .bind("part", log.partition())
                    .map((rs, ctx) -> {
                        Object keep = rs.getObject("checkpoint_id");
                        return new long[] {rs.getLong("log_id"), keep == null ? -1 : ((Number) keep).longValue()};
                    })
                    .findOne();
            if (head.isEmpty()) {
                return null;
            }
            List<long[]> deleted = h.createQuery(sql.deleteBefore).bind("logId", head.get()[0])
                    .bind("before", throughOffsetExclusive).bind("keep", head.get()[1])
                    .map((rs, ctx) -> new long[] {rs.getLong("checkpoint_id"), rs.getLong("size_bytes")}).list();
            dropChunks(h, sql, head.get()[0], deleted);
            return null;
        });
    }
}
