package dev.lattice.provider.postgres;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunConflictException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.support.VerifyingChunkStream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

import java.io.InputStream;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.IntConsumer;
import java.util.zip.CRC32C;

/**
 * Run store part of the protocol (see docs/providers/postgres.md, "Runs"): a run is {@value #CHUNK_BYTES}-byte
 * {@code lattice_run_chunk} rows (each with its CRC32C) and one {@code lattice_runs} header row (length, CRC32C of
 * the whole, chunk count), all inserted in one transaction, the header last: a reader sees the run whole or not at
 * all, and a failed write leaves nothing (no leftovers: {@link RunInfo#complete()} is always true). A ranged read is
 * one query selecting the header and only the chunks the range touches. The store does not check fences (the SPI
 * makes that optional; manifests are fenced).
 *
 * <p>Thread-safe.
 */
final class PostgresRunStore implements RunStore {

    /** Bytes per chunk row: 256 KiB (also the preferred read size). */
    static final int CHUNK_BYTES = 256 << 10;
    /** Largest run: 1 GiB. */
    static final long MAX_RUN_BYTES = 1L << 30;
    /** The declared limits: 1 GiB runs, 256 KiB reads, about 500 us per read on a nearby server. */
    static final RunLimits LIMITS = new RunLimits(MAX_RUN_BYTES, CHUNK_BYTES, 500);

    private static final RowMapper<RunInfo> INFO = (rs, ctx) -> new RunInfo(new RunId(rs.getString("run_id")),
            rs.getLong("length_bytes"), rs.getInt("crc"), true);

    private final PostgresCalls calls;
    private final String header;
    private final String insertChunk;
    private final String insertHeader;
    private final String readRange;
    private final String deleteRun;
    private final String listRuns;
    /** Test seam: called with the chunk index before each chunk row is inserted (a fault injected here aborts). */
    volatile IntConsumer beforeChunk = k -> { };

    /**
     * Creates the store.
     *
     * @param calls the provider's backend calls
     */
    PostgresRunStore(PostgresCalls calls) {
        this.calls = calls;
        String s = "\"" + calls.sql().schema + "\".";
        String key = " tree = :tree AND part = :part AND run_id = :id";
        header = "SELECT run_id, length_bytes, crc, chunk_count FROM " + s + "lattice_runs WHERE" + key;
        insertChunk = "INSERT INTO " + s + "lattice_run_chunk (tree, part, run_id, seq, crc, data)"
                + " VALUES (:tree, :part, :id, :seq, :crc, :data)";
        insertHeader = "INSERT INTO " + s + "lattice_runs (tree, part, run_id, length_bytes, crc, chunk_count)"
                + " VALUES (:tree, :part, :id, :length, :crc, :chunks)";
        readRange = "SELECT r.length_bytes, r.chunk_count, c.seq, c.crc, c.data FROM " + s + "lattice_runs r"
                + " LEFT JOIN " + s + "lattice_run_chunk c ON c.tree = r.tree AND c.part = r.part"
                + " AND c.run_id = r.run_id AND c.seq BETWEEN :lo AND :hi"
                + " WHERE r.tree = :tree AND r.part = :part AND r.run_id = :id ORDER BY c.seq";
        deleteRun = "WITH c AS (DELETE FROM " + s + "lattice_run_chunk WHERE" + key + ")"
                + " DELETE FROM " + s + "lattice_runs WHERE" + key;
        listRuns = "SELECT run_id, length_bytes, crc FROM " + s + "lattice_runs"
                + " WHERE tree = :tree AND part = :part ORDER BY run_id";
    }

    @Override
    public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
        SpiChecks.runWrite(log, fence, id, data, length, LIMITS);
        calls.checkOpen();
        Optional<RunInfo> existing = calls.readOnly(log, "reading run " + id, h -> findHeader(h, log, id));
        if (existing.isPresent()) {
            return sameOrConflict(log, id, existing.get(), data, length, new CRC32C(), 0);
        }
        CRC32C whole = new CRC32C();
        long[] consumed = new long[1];
        try {
            return calls.tx(log, "writing run " + id, h -> insert(h, log, id, data, length, whole, consumed));
        } catch (WalStorageException e) {
            if (!SqlFailures.UNIQUE_VIOLATION.equals(SqlFailures.sqlState(e))) {
                throw e;
            }
            // A concurrent write of the same id won: compare the rest of our bytes with what it stored.
            RunInfo won = calls.readOnly(log, "reading run " + id, h -> findHeader(h, log, id)).orElseThrow(() -> e);
            return sameOrConflict(log, id, won, data, length, whole, consumed[0]);
        }
    }

    private RunInfo insert(Handle h, LogId log, RunId id, InputStream data, long length, CRC32C whole,
            long[] consumed) {
        int chunks = (int) ((length + CHUNK_BYTES - 1) / CHUNK_BYTES);
        for (int k = 0; k < chunks; k++) {
            int n = (int) Math.min(CHUNK_BYTES, length - (long) k * CHUNK_BYTES);
            byte[] buf = new byte[n];
            SpiChecks.readRunBytes(log, id, data, buf, 0, n);
            whole.update(buf, 0, n);
            consumed[0] += n;
            CRC32C c = new CRC32C();
            c.update(buf, 0, n);
            beforeChunk.accept(k);
            h.createUpdate(insertChunk).bind("tree", log.tree()).bind("part", log.partition()).bind("id", id.value())
                    .bind("seq", k).bind("crc", (int) c.getValue()).bind("data", buf).execute();
        }
        int crc = (int) whole.getValue();
        h.createUpdate(insertHeader).bind("tree", log.tree()).bind("part", log.partition()).bind("id", id.value())
                .bind("length", length).bind("crc", crc).bind("chunks", chunks).execute();
        return new RunInfo(id, length, crc, true);
    }

    /**
     * A rewrite of a stored id: reads the rest of the caller's bytes (after {@code done} already summed into
     * {@code c}) to compare their length and CRC32C with the stored run.
     */
    private static RunInfo sameOrConflict(LogId log, RunId id, RunInfo found, InputStream data, long length,
            CRC32C c, long done) {
        if (found.lengthBytes() != length) {
            throw new RunConflictException(log, id, found, length);
        }
        byte[] buf = new byte[(int) Math.min(CHUNK_BYTES, Math.max(1, length))];
        while (done < length) {
            int n = (int) Math.min(buf.length, length - done);
            SpiChecks.readRunBytes(log, id, data, buf, 0, n);
            c.update(buf, 0, n);
            done += n;
        }
        if ((int) c.getValue() != found.crc32c()) {
            throw new RunConflictException(log, id, found, length);
        }
        return found;
    }

    private Optional<RunInfo> findHeader(Handle h, LogId log, RunId id) {
        return h.createQuery(header).bind("tree", log.tree()).bind("part", log.partition()).bind("id", id.value())
                .map(INFO).findOne();
    }

    @Override
    public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        SpiChecks.runRead(log, id, position, dst, off, len);
        calls.checkOpen();
        long p = Math.min(position, MAX_RUN_BYTES);
        int lo = (int) (p / CHUNK_BYTES);
        int hi = (int) ((p + Math.max(len, 1) - 1) / CHUNK_BYTES);
        record Row(long length, int chunks, Integer seq, int crc, byte[] data) {
        }
        List<Row> rows = calls.readOnly(log, "reading run " + id, h -> h.createQuery(readRange)
                .bind("tree", log.tree()).bind("part", log.partition()).bind("id", id.value())
                .bind("lo", lo).bind("hi", hi)
                .map((rs, ctx) -> new Row(rs.getLong("length_bytes"), rs.getInt("chunk_count"),
                        (Integer) rs.getObject("seq"), rs.getInt("crc"), rs.getBytes("data")))
                .list());
        if (rows.isEmpty()) {
            throw new RunNotFoundException(log, id);
        }
        long runLength = rows.get(0).length();
        if (len == 0) {
            return 0;
        }
        if (position >= runLength) {
            return -1;
        }
        int want = (int) Math.min(len, runLength - position);
        int lastSeq = (int) ((position + want - 1) / CHUNK_BYTES);
        String name = "run " + id;
        int copied = 0;
        int expectSeq = lo;
        for (Row r : rows) {
            if (r.seq() == null || r.seq() != expectSeq) {
                throw new CorruptLogException(log, -1, name + " has " + r.chunks() + " chunks but chunk "
                        + expectSeq + " is missing");
            }
            byte[] chunk = VerifyingChunkStream.checkCrc32c(log, -1, name, r.seq(), r.data(), r.crc());
            long chunkStart = (long) r.seq() * CHUNK_BYTES;
            int from = (int) Math.max(0, position + copied - chunkStart);
            int n = Math.min(chunk.length - from, want - copied);
            if (n <= 0 || (r.seq() < r.chunks() - 1 && chunk.length != CHUNK_BYTES)) {
                throw new CorruptLogException(log, -1, name + ": chunk " + r.seq() + " holds " + chunk.length
                        + " bytes, not what its run length " + runLength + " implies");
            }
            System.arraycopy(chunk, from, dst, off + copied, n);
            copied += n;
            expectSeq++;
            if (copied == want) {
                break;
            }
        }
        if (copied != want || expectSeq - 1 != lastSeq) {
            throw new CorruptLogException(log, -1, name + " of " + runLength + " bytes lost chunks in "
                    + lo + ".." + lastSeq);
        }
        return copied;
    }

    @Override
    public void delete(LogId log, Fence fence, RunId id) {
        SpiChecks.runDelete(log, fence, id);
        calls.checkOpen();
        calls.call(log, "deleting run " + id, h -> h.createUpdate(deleteRun).bind("tree", log.tree())
                .bind("part", log.partition()).bind("id", id.value()).execute());
    }

    @Override
    public List<RunInfo> list(LogId log) {
        Objects.requireNonNull(log, "log");
        calls.checkOpen();
        return calls.readOnly(log, "listing runs", h -> h.createQuery(listRuns).bind("tree", log.tree())
                .bind("part", log.partition()).map(INFO).list());
    }

    @Override
    public RunLimits limits() {
        return LIMITS;
    }
}
