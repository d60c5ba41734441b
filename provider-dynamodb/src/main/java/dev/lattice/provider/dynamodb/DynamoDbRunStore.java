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
 * {@code <log>/r/<id>}: chunk items of {@code runChunkBytes} bytes (the last may be shorter; at most
 * {@value #MAX_CHUNK_BYTES}) at sort key {@code generation * 2^20 + index} (a random generation per write, so two
 * writes never mix chunks), each with its CRC32C, and a header item at sort key {@value #HEADER_SK} (length, CRC32C
 * of the whole run, chunk count, generation, chunk size) written last with {@code attribute_not_exists}: the run is
 * visible exactly when its header exists. The log's run index item ({@code <log>/r}, sort key 0) holds the set of run
 * ids, added before the first chunk, so {@link #list} also finds the leftovers of failed writes (a missing header
 * means incomplete).
 *
 * <p>Reads go through a {@link RunCache} of headers and verified chunk payloads (docs/providers/dynamodb.md, "Run
 * read cache"), so a run read in blocks smaller than a chunk fetches each chunk once.
 *
 * <p>Thread-safe; shares its provider's life cycle.
 */
final class DynamoDbRunStore implements RunStore {

    /**
     * Most data bytes per chunk item (one 400 KB item minus room for keys and attributes), and the chunk size of
     * runs whose header names none (written before {@code runChunkBytes} existed).
     */
    static final int MAX_CHUNK_BYTES = DynamoItemSize.MAX_ITEM_BYTES - 1024;
    /** Largest run: 64 MiB (as checkpoints). */
    static final long MAX_RUN_BYTES = 64L << 20;
    /** Typical latency of one ranged read (a {@code Query} of a few chunks), in microseconds. */
    static final long READ_LATENCY_MICROS = 5_000;
    /** Chunk bytes a sequential read fetches per {@code Query} at least (read-ahead), when the cache holds them. */
    static final int READ_AHEAD_BYTES = MAX_CHUNK_BYTES;
    /** Most chunk items per {@code BatchWriteItem} of a run write (DynamoDB's limit). */
    static final int MAX_BATCH_CHUNKS = 25;
    /** Most chunk data bytes per {@code BatchWriteItem} of a run write: bounds the request held in memory. */
    static final int MAX_BATCH_BYTES = 1 << 20;
    /** Sort key of a run's header item. */
    static final long HEADER_SK = 0;

    private static final String DATA = "d";
    private static final String LENGTH = "rl";
    private static final String CHUNKS = "rc";
    private static final String GENERATION = "rg";
    private static final String RUN_CRC = "rx";
    private static final String IDS = "ri";
    private static final String CHUNK_SIZE = "rb";

    private final Heads heads;
    private final DynamoDbMetrics metrics;
    private final RunCache cache;
    private final int chunkBytes;
    private final RunLimits limits;
    private final int readAheadChunks;

    /**
     * @param heads the head access shared by the protocol parts
     * @param metrics the provider's counters
     * @param chunkBytes data bytes per chunk item of runs written, 1 to {@value #MAX_CHUNK_BYTES}
     * @param cacheBytes the run read cache's budget, 0 for none
     */
    DynamoDbRunStore(Heads heads, DynamoDbMetrics metrics, int chunkBytes, long cacheBytes) {
        if (chunkBytes < 1 || chunkBytes > MAX_CHUNK_BYTES) {
            throw new IllegalArgumentException("option 'runChunkBytes' must be in 1.." + MAX_CHUNK_BYTES + ", got "
                    + chunkBytes);
        }
        this.heads = heads;
        this.metrics = metrics;
        this.chunkBytes = chunkBytes;
        this.cache = new RunCache(cacheBytes);
        this.limits = new RunLimits(MAX_RUN_BYTES, chunkBytes, READ_LATENCY_MICROS);
        // read-ahead only when a quarter of the cache holds it, so that concurrent sequential readers keep theirs
        long ahead = Math.min(READ_AHEAD_BYTES, cacheBytes / 4);
        this.readAheadChunks = (int) Math.max(1, ahead / (chunkBytes + RunCache.ENTRY_OVERHEAD_BYTES));
    }

    /** @return the read cache (tests, drop) */
    RunCache cache() {
        return cache;
    }

    private static long sortKey(long generation, int index) {
        return (generation << Layout.CHECKPOINT_INDEX_BITS) | index;
    }

    private Map<String, AttributeValue> indexKey(LogId log) {
        return Layout.key(heads.layout().runIndexKey(log), Layout.META_SK);
    }

    /** Reads a header from the table (strongly consistent); null when absent. */
    private RunHeader header(LogId log, String rpk) {
        Map<String, AttributeValue> item = heads.calls().get(log, Layout.key(rpk, HEADER_SK));
        if (item == null) {
            return null;
        }
        RunHeader h;
        try {
            h = new RunHeader(Layout.num(item, LENGTH), (int) Layout.num(item, RUN_CRC),
                    (int) Layout.num(item, CHUNKS), Layout.num(item, GENERATION),
                    item.containsKey(CHUNK_SIZE) ? (int) Layout.num(item, CHUNK_SIZE) : MAX_CHUNK_BYTES);
        } catch (RuntimeException e) {
            throw new CorruptLogException(log, -1, "run header " + rpk + " cannot be decoded: " + e.getMessage(), e);
        }
        if (h.length() < 0 || h.chunkBytes() < 1 || h.chunkBytes() > MAX_CHUNK_BYTES
                || h.chunks() != (h.length() + h.chunkBytes() - 1) / h.chunkBytes()) {
            throw new CorruptLogException(log, -1, "run header " + rpk + " is inconsistent: length " + h.length()
                    + ", " + h.chunks() + " chunks of " + h.chunkBytes() + " bytes");
        }
        return h;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Requests: a {@code GetItem} of the header, an {@code UpdateItem} of the run index, one
     * {@code BatchWriteItem} per {@value #MAX_BATCH_CHUNKS} chunks or {@value #MAX_BATCH_BYTES} bytes of chunk data
     * (unprocessed items resubmitted until {@code batchWriteDeadline}), the header's conditional {@code PutItem}. A
     * failure deletes the chunks written (best effort; a leftover is listed as incomplete and removed by
     * {@link #delete}). The header stored is cached for reads.
     */
    @Override
    public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
        SpiChecks.runWrite(log, fence, id, data, length, limits);
        heads.ensureOpen();
        heads.currentHead(heads.slot(log), fence);
        String rpk = heads.layout().runKey(log, id);
        RunHeader existing = header(log, rpk);
        if (existing != null) {
            int crc = crcOfStream(log, id, data, length);
            return sameOrConflict(log, id, existing, length, crc);
        }
        heads.calls().update(log, indexKey(log), "ADD #ri :id", null, Map.of("#ri", IDS),
                Map.of(":id", AttributeValue.fromSs(List.of(id.value()))), ReturnValue.NONE);
        long generation = ThreadLocalRandom.current().nextLong(1, 1L << 40);
        int chunks = (int) ((length + chunkBytes - 1) / chunkBytes);
        CRC32C whole = new CRC32C();
        int attempted = 0;
        RunHeader h;
        try {
            byte[] buf = new byte[chunkBytes];
            List<Map<String, AttributeValue>> batch = new ArrayList<>();
            long batchBytes = 0;
            for (int i = 0; i < chunks; i++) {
                int n = (int) Math.min(chunkBytes, length - (long) i * chunkBytes);
                readBytes(log, id, data, buf, n);
                byte[] bytes = Arrays.copyOf(buf, n);
                whole.update(bytes, 0, n);
                batch.add(chunkItem(rpk, generation, i, bytes));
                batchBytes += n;
                if (i == chunks - 1 || batch.size() == MAX_BATCH_CHUNKS || batchBytes + chunkBytes > MAX_BATCH_BYTES) {
                    attempted = i + 1;
                    heads.calls().batchPut(log, batch);
                    batch = new ArrayList<>();
                    batchBytes = 0;
                }
            }
            h = new RunHeader(length, (int) whole.getValue(), chunks, generation, chunkBytes);
        } catch (RuntimeException e) {
            discardChunks(log, rpk, generation, attempted, e);
            throw e;
        }
        RunCache.RunKey key = new RunCache.RunKey(log, id);
        long stamp = cache.stamp(key);
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
            cache.putHeader(key, h, stamp);
            return h.info(id);
        }
        // Another write of the same id won the header: ours is a duplicate or a conflict.
        discardChunks(log, rpk, generation, attempted, null);
        RunHeader winner = header(log, rpk);
        if (winner == null) {
            throw new WalStorageException(log, "run " + id + ": its header was refused and is now gone "
                    + "(deleted meanwhile?); retry");
        }
        return sameOrConflict(log, id, winner, length, h.crc32c());
    }

    private static Map<String, AttributeValue> headerItem(String rpk, RunHeader h) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Layout.PK, Layout.s(rpk));
        item.put(Layout.SK, Layout.n(HEADER_SK));
        item.put(LENGTH, Layout.n(h.length()));
        item.put(RUN_CRC, Layout.n(h.crc32c()));
        item.put(CHUNKS, Layout.n(h.chunks()));
        item.put(GENERATION, Layout.n(h.generation()));
        item.put(CHUNK_SIZE, Layout.n(h.chunkBytes()));
        return item;
    }

    private static RunInfo sameOrConflict(LogId log, RunId id, RunHeader found, long length, int crc) {
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

    private static Map<String, AttributeValue> chunkItem(String rpk, long generation, int index, byte[] bytes) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Layout.PK, Layout.s(rpk));
        item.put(Layout.SK, Layout.n(sortKey(generation, index)));
        item.put(DATA, Layout.b(bytes));
        CRC32C c = new CRC32C();
        c.update(bytes, 0, bytes.length);
        item.put(Layout.CRC, Layout.n((int) c.getValue()));
        return item;
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
     * <p>Requests: a {@code GetItem} of the header unless the read cache holds it, then, unless the cache holds every
     * chunk the range spans, one strongly consistent {@code Query} from the first chunk missing to the last (paged,
     * 1 MB per page), extended to {@value #READ_AHEAD_BYTES} bytes of chunks when the read continues where the
     * previous fetch of this run ended (read-ahead of a sequential read). Every chunk fetched is checked (sort key,
     * CRC32C, length) and then cached. When a chunk is missing although the header came from the cache (the run was
     * deleted, or deleted and written again, by another provider instance), the header is forgotten and read again
     * once: the run is then not found, or read from its current chunks.
     */
    @Override
    public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        SpiChecks.runRead(log, id, position, dst, off, len);
        heads.ensureOpen();
        String rpk = heads.layout().runKey(log, id);
        RunCache.RunKey key = new RunCache.RunKey(log, id);
        for (int attempt = 0; ; attempt++) {
            long stamp = cache.stamp(key);
            RunCache.CachedRun run = attempt == 0 ? cache.header(key) : null;
            boolean cachedHeader = run != null;
            if (cachedHeader) {
                metrics.runHeaderCacheHit();
            } else {
                RunHeader fresh = header(log, rpk);
                if (fresh == null) {
                    throw new RunNotFoundException(log, id);
                }
                run = cache.putHeader(key, fresh, stamp);
            }
            RunHeader h = run.header;
            if (len == 0) {
                return 0;
            }
            if (position >= h.length()) {
                return -1;
            }
            int n = (int) Math.min(len, h.length() - position);
            int missing = copy(log, id, rpk, key, run, stamp, position, n, dst, off);
            if (missing < 0) {
                return n;
            }
            if (!cachedHeader) {
                throw lost(log, id, missing, h);
            }
            cache.invalidate(key);
        }
    }

    /**
     * Copies bytes {@code [position, position + n)} of a run into {@code dst}, from the cache and one fetch.
     *
     * @return -1 when done, or the index of a chunk the table does not hold (nothing is copied then)
     */
    private int copy(LogId log, RunId id, String rpk, RunCache.RunKey key, RunCache.CachedRun run, long stamp,
                     long position, int n, byte[] dst, int off) {
        RunHeader h = run.header;
        int cb = h.chunkBytes();
        int first = (int) (position / cb);
        int last = (int) ((position + n - 1) / cb);
        byte[][] parts = new byte[last - first + 1][];
        int lo = -1;
        int hi = -1;
        for (int i = first; i <= last; i++) {
            parts[i - first] = cache.chunk(key, h.generation(), i);
            if (parts[i - first] == null) {
                lo = lo < 0 ? i : lo;
                hi = i;
            }
        }
        for (int i = first; i <= last; i++) {
            if (parts[i - first] != null && (lo < 0 || i < lo || i > hi)) {
                metrics.runChunkCacheHit();
            }
        }
        if (lo >= 0) {
            int to = hi;
            if (cache.enabled() && run.nextChunk() == lo) {
                to = Math.min(h.chunks() - 1, Math.max(hi, lo + readAheadChunks - 1));
            }
            int missing = fetch(log, id, rpk, key, h, stamp, lo, to, first, parts);
            if (missing >= 0) {
                return missing;
            }
            run.fetchedUpTo(to + 1);
        }
        int done = 0;
        for (int i = first; i <= last; i++) {
            byte[] c = parts[i - first];
            int from = (int) Math.max(0, position + done - (long) i * cb);
            int count = Math.min(c.length - from, n - done);
            System.arraycopy(c, from, dst, off + done, count);
            done += count;
        }
        return -1;
    }

    /**
     * Fetches chunks {@code lo..to} with one paged {@code Query}, checks and caches each, and puts those within
     * {@code first .. first + parts.length - 1} into {@code parts}.
     *
     * @return -1, or the index of the first chunk the table does not hold
     * @throws CorruptLogException if a chunk fails its CRC32C or its length is not what the header says
     */
    private int fetch(LogId log, RunId id, String rpk, RunCache.RunKey key, RunHeader h, long stamp, int lo, int to,
                      int first, byte[][] parts) {
        int expected = lo;
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = heads.calls().query(log, Layout.rangeQuery(rpk, sortKey(h.generation(), lo),
                    sortKey(h.generation(), to), start, false, 0));
            for (Map<String, AttributeValue> item : r.items()) {
                if (Layout.num(item, Layout.SK) != sortKey(h.generation(), expected)) {
                    return expected;
                }
                byte[] bytes = VerifyingChunkStream.checkCrc32c(log, -1, "run " + id, expected,
                        Layout.bin(item, DATA), (int) Layout.num(item, Layout.CRC));
                if (bytes.length != h.bytesOfChunk(expected)) {
                    throw new CorruptLogException(log, -1, "run " + id + ": chunk " + expected + " holds "
                            + bytes.length + " bytes, its header says " + h.bytesOfChunk(expected));
                }
                metrics.runChunkFetched(bytes.length);
                cache.putChunk(key, h.generation(), expected, bytes, stamp);
                if (expected >= first && expected - first < parts.length) {
                    parts[expected - first] = bytes;
                }
                expected++;
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null && expected <= to);
        return expected <= to ? expected : -1;
    }

    private static WalStorageException lost(LogId log, RunId id, int index, RunHeader h) {
        return new WalStorageException(log, "run " + id + " lost chunk " + index + " of " + h.chunks()
                + " (deleted meanwhile?)");
    }

    /**
     * {@inheritDoc}
     *
     * <p>Deletes the header first (readers stop seeing the run), then every chunk of the run's partition, then its
     * id from the run index. The run leaves the read cache right after its header's delete (also when that delete
     * fails), and nothing fetched before can be cached again, so a read after {@code delete} returns finds no
     * header and throws {@link RunNotFoundException}.
     */
    @Override
    public void delete(LogId log, Fence fence, RunId id) {
        SpiChecks.runDelete(log, fence, id);
        heads.ensureOpen();
        heads.currentHead(heads.slot(log), fence);
        String rpk = heads.layout().runKey(log, id);
        try {
            heads.calls().delete(log, Layout.key(rpk, HEADER_SK), null, null, null);
        } finally {
            cache.invalidate(new RunCache.RunKey(log, id));
        }
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
            RunHeader h = header(log, heads.layout().runKey(log, id));
            out.add(h == null ? new RunInfo(id, 0, 0, false) : h.info(id));
        }
        return out;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Runs up to {@value #MAX_RUN_BYTES} bytes; the preferred read size is this instance's {@code runChunkBytes}
     * (one chunk item costs one request); about {@value #READ_LATENCY_MICROS} microseconds per read request.
     */
    @Override
    public RunLimits limits() {
        return limits;
    }

    /**
     * Forgets every cached run of a log (after {@code drop}), so a log created again under the same name never
     * reads the dropped runs' headers or chunks.
     *
     * @param log the log
     */
    void forget(LogId log) {
        cache.invalidateLog(log);
    }

    /** Empties the read cache (the provider closed). */
    void closeCache() {
        cache.clear();
    }
}
