package dev.lattice.provider.dynamodb;

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
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * Protocol part: runs (docs/providers/dynamodb.md, "Runs"). A run lives in a partition of its own,
 * {@code <log>/r/<id>}: chunk items of at most {@value #CHUNK_BYTES} bytes at sort key
 * {@code generation * 2^20 + index} (a random generation per write, so two writes never mix chunks), each with its
 * CRC32C, and a header item at sort key {@value #HEADER_SK} (length, CRC32C of the whole run, chunk count,
 * generation) written last with {@code attribute_not_exists}: the run is visible exactly when its header exists.
 * The log's run index item ({@code <log>/r}, sort key 0) holds the set of run ids, added before the first chunk, so
 * {@link #list} also finds the leftovers of failed writes (a missing header means incomplete).
 *
 * <p>Thread-safe; shares its provider's life cycle.
 */
final class DynamoDbRunStore implements RunStore {

    /** Data bytes per chunk item (one 400 KB item minus room for keys and attributes). */
    static final int CHUNK_BYTES = DynamoItemSize.MAX_ITEM_BYTES - 1024;
    /** Runs up to 64 MiB (as checkpoints), read a chunk per request, about 5 ms per request. */
    static final RunLimits LIMITS = new RunLimits(64L << 20, CHUNK_BYTES, 5_000);
    /** Sort key of a run's header item. */
    static final long HEADER_SK = 0;

    private static final String DATA = "d";
    private static final String LENGTH = "rl";
    private static final String CHUNKS = "rc";
    private static final String GENERATION = "rg";
    private static final String RUN_CRC = "rx";
    private static final String IDS = "ri";

    private final Heads heads;

    /** @param heads the head access shared by the protocol parts */
    DynamoDbRunStore(Heads heads) {
        this.heads = heads;
    }

    private static long sortKey(long generation, int index) {
        return (generation << Layout.CHECKPOINT_INDEX_BITS) | index;
    }

    private Map<String, AttributeValue> indexKey(LogId log) {
        return Layout.key(heads.layout().runIndexKey(log), Layout.META_SK);
    }

    /** A run's header: what {@link #read} needs. */
    private record Header(long length, int crc32c, int chunks, long generation) {
        RunInfo info(RunId id) {
            return new RunInfo(id, length, crc32c, true);
        }
    }

    private Header header(LogId log, String rpk) {
        Map<String, AttributeValue> item = heads.calls().get(log, Layout.key(rpk, HEADER_SK));
        if (item == null) {
            return null;
        }
        try {
            return new Header(Layout.num(item, LENGTH), (int) Layout.num(item, RUN_CRC),
                    (int) Layout.num(item, CHUNKS), Layout.num(item, GENERATION));
        } catch (RuntimeException e) {
            throw new CorruptLogException(log, -1, "run header " + rpk + " cannot be decoded: " + e.getMessage(), e);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Requests: a {@code GetItem} of the header, an {@code UpdateItem} of the run index, one {@code PutItem} per
     * chunk, the header's conditional {@code PutItem}. A failure deletes the chunks written (best effort; a
     * leftover is listed as incomplete and removed by {@link #delete}).
     */
    @Override
    public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
        SpiChecks.runWrite(log, fence, id, data, length, LIMITS);
        heads.ensureOpen();
        heads.currentHead(heads.slot(log), fence);
        String rpk = heads.layout().runKey(log, id);
        Header existing = header(log, rpk);
        if (existing != null) {
            int crc = crcOfStream(log, id, data, length);
            return sameOrConflict(log, id, existing, length, crc);
        }
        heads.calls().update(log, indexKey(log), "ADD #ri :id", null, Map.of("#ri", IDS),
                Map.of(":id", AttributeValue.fromSs(List.of(id.value()))), ReturnValue.NONE);
        long generation = ThreadLocalRandom.current().nextLong(1, 1L << 40);
        int chunks = (int) ((length + CHUNK_BYTES - 1) / CHUNK_BYTES);
        CRC32C whole = new CRC32C();
        int attempted = 0;
        Header h;
        try {
            byte[] buf = new byte[CHUNK_BYTES];
            for (int i = 0; i < chunks; i++) {
                int n = (int) Math.min(CHUNK_BYTES, length - (long) i * CHUNK_BYTES);
                readBytes(log, id, data, buf, n);
                byte[] bytes = Arrays.copyOf(buf, n);
                whole.update(bytes, 0, n);
                attempted = i + 1;
                putChunk(log, rpk, generation, i, bytes);
            }
            h = new Header(length, (int) whole.getValue(), chunks, generation);
        } catch (RuntimeException e) {
            discardChunks(log, rpk, generation, attempted, e);
            throw e;
        }
        boolean stored;
        try {
            stored = heads.calls().put(log, headerItem(rpk, h), "attribute_not_exists(#p)", Map.of("#p", Layout.PK),
                    null);
        } catch (RuntimeException e) {
            // The header may have landed: take it back (only ours, by generation) before the chunks go.
            try {
                heads.calls().delete(log, Layout.key(rpk, HEADER_SK), "#g = :g", Map.of("#g", GENERATION),
                        Map.of(":g", Layout.n(generation)));
                discardChunks(log, rpk, generation, attempted, e);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        if (stored) {
            return h.info(id);
        }
        // Another write of the same id won the header: ours is a duplicate or a conflict.
        discardChunks(log, rpk, generation, attempted, null);
        Header winner = header(log, rpk);
        if (winner == null) {
            throw new WalStorageException(log, "run " + id + ": its header was refused and is now gone "
                    + "(deleted meanwhile?); retry");
        }
        return sameOrConflict(log, id, winner, length, h.crc32c());
    }

    private static Map<String, AttributeValue> headerItem(String rpk, Header h) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Layout.PK, Layout.s(rpk));
        item.put(Layout.SK, Layout.n(HEADER_SK));
        item.put(LENGTH, Layout.n(h.length()));
        item.put(RUN_CRC, Layout.n(h.crc32c()));
        item.put(CHUNKS, Layout.n(h.chunks()));
        item.put(GENERATION, Layout.n(h.generation()));
        return item;
    }

    private static RunInfo sameOrConflict(LogId log, RunId id, Header found, long length, int crc) {
        if (found.length() != length || found.crc32c() != crc) {
            throw new RunConflictException(log, id, found.info(id), length);
        }
        return found.info(id);
    }

    private static void readBytes(LogId log, RunId id, InputStream data, byte[] buf, int n) {
        try {
            SpiChecks.readRunBytes(log, id, data, buf, 0, n);
        } catch (UncheckedIOException e) {
            throw new WalStorageException(log, "run " + id + ": reading its data failed; nothing was stored",
                    e.getCause());
        }
    }

    private static int crcOfStream(LogId log, RunId id, InputStream data, long length) {
        CRC32C c = new CRC32C();
        byte[] buf = new byte[64 << 10];
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(buf.length, length - done);
            readBytes(log, id, data, buf, n);
            c.update(buf, 0, n);
            done += n;
        }
        return (int) c.getValue();
    }

    private void putChunk(LogId log, String rpk, long generation, int index, byte[] bytes) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Layout.PK, Layout.s(rpk));
        item.put(Layout.SK, Layout.n(sortKey(generation, index)));
        item.put(DATA, Layout.b(bytes));
        CRC32C c = new CRC32C();
        c.update(bytes, 0, bytes.length);
        item.put(Layout.CRC, Layout.n((int) c.getValue()));
        heads.calls().put(log, item, null, null, null);
    }

    /** Best effort: deletes the chunks a failed or duplicate write left. */
    private void discardChunks(LogId log, String rpk, long generation, int attempted, RuntimeException failure) {
        try {
            List<Map<String, AttributeValue>> keys = new ArrayList<>();
            for (int i = 0; i < attempted; i++) {
                keys.add(Layout.key(rpk, sortKey(generation, i)));
            }
            heads.calls().batchDelete(log, keys);
        } catch (RuntimeException cleanup) {
            if (failure == null) {
                throw cleanup;
            }
            failure.addSuppressed(cleanup);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Requests: a {@code GetItem} of the header, then one strongly consistent {@code Query} over the chunks the
     * range spans (paged, about two chunks per 1 MB page).
     */
    @Override
    public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        SpiChecks.runRead(log, id, position, dst, off, len);
        heads.ensureOpen();
        String rpk = heads.layout().runKey(log, id);
        Header h = header(log, rpk);
        if (h == null) {
            throw new RunNotFoundException(log, id);
        }
        if (len == 0) {
            return 0;
        }
        if (position >= h.length()) {
            return -1;
        }
        int n = (int) Math.min(len, h.length() - position);
        int firstChunk = (int) (position / CHUNK_BYTES);
        int lastChunk = (int) ((position + n - 1) / CHUNK_BYTES);
        int expected = firstChunk;
        int done = 0;
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = heads.calls().query(log, Layout.rangeQuery(rpk, sortKey(h.generation(), firstChunk),
                    sortKey(h.generation(), lastChunk), start, false, 0));
            for (Map<String, AttributeValue> item : r.items()) {
                if (Layout.num(item, Layout.SK) != sortKey(h.generation(), expected)) {
                    throw lost(log, id, expected, h);
                }
                byte[] bytes = VerifyingChunkStream.checkCrc32c(log, -1, "run " + id, expected,
                        Layout.bin(item, DATA), (int) Layout.num(item, Layout.CRC));
                long chunkStart = (long) expected * CHUNK_BYTES;
                int from = (int) Math.max(0, position + done - chunkStart);
                int count = Math.min(bytes.length - from, n - done);
                if (count <= 0 || (expected < h.chunks() - 1 && bytes.length != CHUNK_BYTES)) {
                    throw new CorruptLogException(log, -1, "run " + id + ": chunk " + expected + " holds "
                            + bytes.length + " bytes, not what its header says");
                }
                System.arraycopy(bytes, from, dst, off + done, count);
                done += count;
                expected++;
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null && done < n);
        if (done < n) {
            throw lost(log, id, expected, h);
        }
        return n;
    }

    private static WalStorageException lost(LogId log, RunId id, int index, Header h) {
        return new WalStorageException(log, "run " + id + " lost chunk " + index + " of " + h.chunks()
                + " (deleted meanwhile?)");
    }

    /**
     * {@inheritDoc}
     *
     * <p>Deletes the header first (readers stop seeing the run), then every chunk of the run's partition, then its
     * id from the run index.
     */
    @Override
    public void delete(LogId log, Fence fence, RunId id) {
        SpiChecks.runDelete(log, fence, id);
        heads.ensureOpen();
        heads.currentHead(heads.slot(log), fence);
        String rpk = heads.layout().runKey(log, id);
        heads.calls().delete(log, Layout.key(rpk, HEADER_SK), null, null, null);
        heads.calls().deleteAllBetween(log, rpk, Long.MIN_VALUE, Long.MAX_VALUE);
        heads.calls().update(log, indexKey(log), "DELETE #ri :id", null, Map.of("#ri", IDS),
                Map.of(":id", AttributeValue.fromSs(List.of(id.value()))), ReturnValue.NONE);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Requests: a {@code GetItem} of the run index, then one per run (its header).
     */
    @Override
    public List<RunInfo> list(LogId log) {
        Objects.requireNonNull(log, "log");
        heads.ensureOpen();
        Map<String, AttributeValue> index = heads.calls().get(log, indexKey(log));
        List<RunInfo> out = new ArrayList<>();
        if (index == null || index.get(IDS) == null || !index.get(IDS).hasSs()) {
            return out;
        }
        for (String v : new TreeSet<>(index.get(IDS).ss())) {
            RunId id = new RunId(v);
            Header h = header(log, heads.layout().runKey(log, id));
            out.add(h == null ? new RunInfo(id, 0, 0, false) : h.info(id));
        }
        return out;
    }

    @Override
    public RunLimits limits() {
        return LIMITS;
    }
}
