package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import dev.lattice.provider.azure.tables.TablesCalls.TxFailure;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.RunConflictException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.support.VerifyingChunkStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.zip.CRC32C;

/**
 * Protocol part: the run store (ARCHITECTURE.md 4.9). A run is a partition {@code R|<tree>|<pppp>|<run id>} of chunk
 * rows (one {@link Layout#rowBytes()} chunk per row, binary properties of up to 64 KiB, each row with its CRC32C and
 * the write's random token), each written with its own single-entity insert (CREATE semantics), and a commit row
 * {@code Z} (length, CRC32C of the whole, row count, token) written last, alone: a run without its commit row is an
 * incomplete leftover that {@link #read} treats as absent. See docs/providers/azure-tables.md.
 *
 * <p>Memory: a run write holds one chunk row (at most 960 KiB of payload, read from the caller's stream straight
 * into the row's properties) and the SDK's request for it (~1.31 MB of JSON with base64, serialized about twice) at a
 * time, whatever the run's length. Entity-group transactions are not used for chunk rows: the SDK builds their
 * multipart bodies through several in-memory copies (about 10 bytes allocated per payload byte for 3-row
 * transactions, against 4 for single inserts; docs/benchmarks.md). Over all writes of the store, at most
 * {@code chunksInFlight} chunk rows are being read and sent at once (a write waits for a slot before it reads a chunk),
 * so the transient heap of run writes is bounded however many threads write runs.
 *
 * <p>Thread-safe: the chunk slots are the only shared state.
 *
 */
final class TablesRunStore implements RunStore {

    /** Largest run, bytes (inclusive): 64 MiB. */
    static final long MAX_RUN_BYTES = 64L << 20;
    /** Row key of a run's commit row. */
    static final String COMMIT_ROW = "Z";
    private static final int QUERY_TOP = TablesCalls.QUERY_TOP;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final TablesCalls calls;
    private final Layout layout;
    private final Runnable ensureOpen;
    private final RunLimits limits;
    /** Permits for chunk rows being read and sent, shared by every write of this store. */
    private final Semaphore chunkSlots;
    private final int chunkSlotCount;

    /**
     * @param calls the backend calls
     * @param layout how bytes are spread over properties and rows (a row is one chunk)
     * @param chunksInFlight most chunk rows read and sent at once over all writes of this store, at least 1
     * @param ensureOpen throws {@link IllegalStateException} when the provider is closed
     */
    TablesRunStore(TablesCalls calls, Layout layout, int chunksInFlight, Runnable ensureOpen) {
        if (chunksInFlight < 1) {
            throw new IllegalArgumentException("chunksInFlight must be at least 1, got " + chunksInFlight);
        }
        this.chunkSlots = new Semaphore(chunksInFlight);
        this.chunkSlotCount = chunksInFlight;
        this.calls = calls;
        this.layout = runLayout(layout);
        this.ensureOpen = ensureOpen;
        this.limits = new RunLimits(MAX_RUN_BYTES, this.layout.rowBytes(), 10_000);
    }

    /**
     * The layout of run chunk rows: the provider's, with fewer payload properties when a full row with the run's
     * longest keys and bookkeeping properties would exceed the service's 1 MiB entity limit (14 x 64 KiB = 896 KiB
     * per chunk for the default layout).
     *
     * @param layout the provider's layout
     * @return the layout chunk rows use
     */
    static Layout runLayout(Layout layout) {
        String pk = runPartition(new LogId("x".repeat(LogId.MAX_TREE_NAME_LENGTH), LogId.MAX_PARTITION),
                new RunId("r".repeat(RunId.MAX_LENGTH)));
        for (int p = layout.propertiesPerRow(); p > 1; p--) {
            Layout l = new Layout(layout.propertyBytes(), p);
            TableEntity sample = new TableEntity(pk, Keys.checkpointRow(999_999)).addProperty("X", 0)
                    .addProperty("T", "0".repeat(32)).addProperty("C", 0);
            Rows.putPayload(sample, new byte[l.rowBytes()], 0, l.rowBytes(), l);
            if (AzureTableLimits.entityBytes(sample.getPartitionKey(), sample.getRowKey(), sample.getProperties())
                    <= AzureTableLimits.MAX_ENTITY_BYTES - 1024) {
                return l;
            }
        }
        return new Layout(layout.propertyBytes(), 1);
    }

    /** The partition holding a run. */
    static String runPartition(LogId log, RunId id) {
        return runPartitionsLow(log) + id.value();
    }

    private static String runPartitionsLow(LogId log) {
        return "R" + Keys.logPartition(log).substring(1) + "|";
    }

    private static String runPartitionsHigh(LogId log) {
        return "R" + Keys.logPartition(log).substring(1) + "}";
    }

    /**
     * Point-reads the commit row (an existing run is only compared: the stream is read through one reused buffer),
     * deletes a crashed attempt's leftover chunk rows, inserts the chunk rows one by one (single-entity inserts, one
     * row in flight), then CREATE of the commit row in a one-action transaction. Requests: 1 point read + 1 query +
     * 1 insert per chunk row + 1. A failure before the commit row leaves an incomplete leftover (deleted best effort
     * at once, else by {@link #delete}); nothing is readable without the commit row.
     */
    @Override
    public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
        SpiChecks.runWrite(log, fence, id, data, length, limits);
        ensureOpen.run();
        String pk = runPartition(log, id);
        RunInfo existing = committed(log, id);
        String token = HexFormat.of().formatHex(randomBytes(16));
        CRC32C crc = new CRC32C();
        long total = 0;
        int rowIndex = 0;
        if (existing == null) {
            // A crashed write's leftover chunk rows (no commit row) would refuse the CREATEs below.
            calls.deletePartition(log, "clearing a leftover of run " + id, pk);
        }
        try {
            if (existing != null) {
                // only comparing: stream through one reused buffer
                byte[] scratch = new byte[(int) Math.min(layout.rowBytes(), Math.max(1, length))];
                while (total < length) {
                    int want = (int) Math.min(scratch.length, length - total);
                    readExactly(log, id, data, scratch, want, total, length);
                    crc.update(scratch, 0, want);
                    total += want;
                }
            } else {
                while (total < length) {
                    int len = (int) Math.min(layout.rowBytes(), length - total);
                    acquireSlot(log, id);
                    try {
                        TableEntity row = chunkRow(log, id, pk, rowIndex, token, data, len, total, length, crc);
                        Rows.checkEntity(row);
                        insertChunk(log, id, pk, token, row);
                    } finally {
                        chunkSlots.release();
                    }
                    rowIndex++;
                    total += len;
                }
            }
        } catch (IOException e) {
            discard(log, pk, existing);
            throw new WalStorageException(log, "reading the data of run " + id + " failed; nothing was stored", e);
        } catch (RuntimeException e) {
            discard(log, pk, existing);
            throw e;
        }
        RunInfo info = new RunInfo(id, length, (int) crc.getValue(), true);
        if (existing != null) {
            return same(log, existing, info);
        }
        TableEntity commit = new TableEntity(pk, COMMIT_ROW).addProperty("T", token).addProperty("N", length)
                .addProperty("K", info.crc32c()).addProperty("R", rowIndex);
        TxFailure f = calls.submit(log, "run commit", List.of(
                new TableTransactionAction(TableTransactionActionType.CREATE, commit)));
        if (f != null) {
            if (!f.isConflict()) {
                throw f.toException(log, "run commit");
            }
            RunInfo now = committed(log, id); // a concurrent or retried write of the same id committed first
            if (now == null) {
                throw f.toException(log, "run commit");
            }
            return same(log, now, info);
        }
        return info;
    }

    /**
     * Waits for one of the store's chunk slots (taken before the chunk's bytes are read, so a waiting write holds no
     * chunk).
     *
     * @throws ProviderUnavailableException if the thread is interrupted while waiting (the interrupt is kept)
     */
    private void acquireSlot(LogId log, RunId id) {
        try {
            chunkSlots.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ProviderUnavailableException(log, "run write of " + id + " was interrupted while waiting for one"
                    + " of the " + chunkSlotCount + " chunk slots (option runChunksInFlight)", e);
        }
    }

    /**
     * Reads the next chunk of the stream straight into the row's payload properties (one array per property, no
     * intermediate buffer) and adds the bookkeeping properties.
     */
    private TableEntity chunkRow(LogId log, RunId id, String pk, int rowIndex, String token, InputStream data,
                                 int len, long position, long length, CRC32C whole) throws IOException {
        TableEntity row = new TableEntity(pk, Keys.checkpointRow(rowIndex)).addProperty("X", rowIndex)
                .addProperty("T", token);
        CRC32C c = new CRC32C();
        int p = 0;
        for (int off = 0; off < len; off += layout.propertyBytes()) {
            byte[] part = new byte[Math.min(layout.propertyBytes(), len - off)];
            readExactly(log, id, data, part, part.length, position + off, length);
            c.update(part, 0, part.length);
            whole.update(part, 0, part.length);
            row.addProperty(Rows.payloadName(p++), part);
        }
        return row.addProperty("C", (int) c.getValue());
    }

    /**
     * Inserts one chunk row (a single-entity insert, CREATE semantics). A 409 {@code EntityAlreadyExists} is success
     * when the row there carries this write's token (the SDK retried an insert whose first attempt had landed);
     * otherwise the refusal is thrown.
     */
    private void insertChunk(LogId log, RunId id, String pk, String token, TableEntity row) {
        TxFailure f = calls.insert(log, "run write", row);
        if (f == null) {
            return;
        }
        if (f.is(TableErrorCode.ENTITY_ALREADY_EXISTS) && token.equals(chunkToken(log, id, pk, row.getRowKey()))) {
            return;
        }
        throw f.toException(log, "run write");
    }

    /** The token of a stored chunk row (one query selecting only it), or null when the row is not there. */
    private String chunkToken(LogId log, RunId id, String pk, String rowKey) {
        Object[] found = {null};
        calls.queryAll(log, "checking chunk row " + rowKey + " of run " + id, "PartitionKey eq " + Keys.quote(pk)
                + " and RowKey eq " + Keys.quote(rowKey), List.of("T"), 1, e -> {
                    found[0] = e.getProperty("T");
                    return false;
                });
        return found[0] instanceof String t ? t : null;
    }

    private static RunInfo same(LogId log, RunInfo stored, RunInfo written) {
        if (stored.lengthBytes() != written.lengthBytes() || stored.crc32c() != written.crc32c()) {
            throw new RunConflictException(log, written.id(), stored, written.lengthBytes());
        }
        return stored;
    }

    /** Deletes a failed write's chunk rows, best effort (never a committed run's). */
    private void discard(LogId log, String pk, RunInfo existing) {
        if (existing != null) {
            return;
        }
        try {
            calls.deletePartition(log, "discarding a failed run write", pk);
        } catch (WalStorageException ignored) {
            // an incomplete leftover: list reports it, delete removes it
        }
    }

    /** The committed run's record, or null when there is no commit row. */
    private RunInfo committed(LogId log, RunId id) {
        TableEntity row = commitRow(log, id);
        return row == null ? null : info(id, row);
    }

    private TableEntity commitRow(LogId log, RunId id) {
        try {
            return calls.table().get(runPartition(log, id), COMMIT_ROW);
        } catch (RuntimeException e) {
            throw TablesCalls.failure(log, "reading run " + id, e);
        }
    }

    private static RunInfo info(RunId id, TableEntity commit) {
        return new RunInfo(id, Rows.getLong(commit, "N"), Rows.getInt(commit, "K"), true);
    }

    /**
     * One point read of the commit row plus one range query over the chunk rows the range covers, each checked
     * against its CRC32C and the commit row's token.
     */
    @Override
    public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        SpiChecks.runRead(log, id, position, dst, off, len);
        ensureOpen.run();
        TableEntity commit = commitRow(log, id);
        if (commit == null) {
            throw new RunNotFoundException(log, id);
        }
        long length;
        int rowCount;
        String token;
        try {
            length = Rows.getLong(commit, "N");
            rowCount = Rows.getInt(commit, "R");
            token = (String) commit.getProperty("T");
        } catch (IllegalStateException e) {
            throw new CorruptLogException(log, -1, "run " + id + ": commit row: " + e.getMessage(), e);
        }
        if (len == 0) {
            return 0;
        }
        if (position >= length) {
            return -1;
        }
        int n = (int) Math.min(len, length - position);
        int chunk = layout.rowBytes();
        int firstRow = (int) (position / chunk);
        int lastRow = (int) ((position + n - 1) / chunk);
        if (lastRow >= rowCount) {
            throw new CorruptLogException(log, -1, "run " + id + " has " + rowCount + " chunk rows for "
                    + length + " bytes");
        }
        String pk = runPartition(log, id);
        Map<Integer, TableEntity> rows = new TreeMap<>();
        int want = lastRow - firstRow + 1;
        calls.queryAll(log, "reading run " + id, Keys.rowRange(pk, Keys.checkpointRow(firstRow),
                Keys.checkpointRow(lastRow + 1)), null, Math.min(QUERY_TOP, want), e -> {
                    rows.put(Rows.getInt(e, "X"), e);
                    return rows.size() < want;
                });
        int copied = 0;
        for (int r = firstRow; r <= lastRow; r++) {
            TableEntity row = rows.get(r);
            if (row == null) {
                throw new RunNotFoundException(log, id); // deleted meanwhile
            }
            if (!token.equals(row.getProperty("T"))) {
                throw new CorruptLogException(log, -1, "run " + id + ": chunk " + r + " belongs to another write");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream(chunk);
            try {
                Rows.appendPayload(row, out);
            } catch (IllegalStateException e) {
                throw new CorruptLogException(log, -1, "run " + id + ": chunk " + r + ": " + e.getMessage(), e);
            }
            byte[] bytes = VerifyingChunkStream.checkCrc32c(log, -1, "run " + id, r, out.toByteArray(),
                    Rows.getInt(row, "C"));
            long rowStart = (long) r * chunk;
            int from = (int) Math.max(0, position + copied - rowStart);
            int take = Math.min(bytes.length - from, n - copied);
            if (take <= 0) {
                throw new CorruptLogException(log, -1, "run " + id + ": chunk " + r + " is shorter than recorded");
            }
            System.arraycopy(bytes, from, dst, off + copied, take);
            copied += take;
        }
        return copied;
    }

    /** Deletes the commit row first (the run is then invisible), then every chunk row. Idempotent. */
    @Override
    public void delete(LogId log, Fence fence, RunId id) {
        SpiChecks.runDelete(log, fence, id);
        ensureOpen.run();
        String pk = runPartition(log, id);
        calls.deleteRows(log, "deleting run " + id, pk, List.of(COMMIT_ROW));
        calls.deletePartition(log, "deleting run " + id, pk);
    }

    /** Two queries over the log's run partitions: commit rows, and first chunk rows (for leftovers). */
    @Override
    public List<RunInfo> list(LogId log) {
        java.util.Objects.requireNonNull(log, "log");
        ensureOpen.run();
        String range = "PartitionKey ge " + Keys.quote(runPartitionsLow(log)) + " and PartitionKey lt "
                + Keys.quote(runPartitionsHigh(log));
        int prefix = runPartitionsLow(log).length();
        Map<String, RunInfo> out = new TreeMap<>();
        calls.queryAll(log, "listing runs", range + " and RowKey eq " + Keys.quote(COMMIT_ROW),
                List.of("PartitionKey", "N", "K"), QUERY_TOP, e -> {
                    RunId id = new RunId(e.getPartitionKey().substring(prefix));
                    out.put(id.value(), info(id, e));
                    return true;
                });
        calls.queryAll(log, "listing runs", range + " and RowKey eq " + Keys.quote(Keys.checkpointRow(0)),
                List.of("PartitionKey"), QUERY_TOP, e -> {
                    RunId id = new RunId(e.getPartitionKey().substring(prefix));
                    out.putIfAbsent(id.value(), new RunInfo(id, 0, 0, false));
                    return true;
                });
        List<RunInfo> list = new ArrayList<>(out.values());
        list.sort((a, b) -> a.id().compareTo(b.id()));
        return list;
    }

    /** Runs up to 64 MiB; a preferred read of one chunk row (960 KiB by default); about 10 ms per read. */
    @Override
    public RunLimits limits() {
        return limits;
    }

    /**
     * Reads exactly {@code want} bytes into {@code buf[0..want)}.
     *
     * @throws IllegalArgumentException if the stream ends first, naming the bytes read and the declared length
     */
    private static void readExactly(LogId log, RunId id, InputStream in, byte[] buf, int want, long position,
                                    long length) throws IOException {
        int n = 0;
        while (n < want) {
            int r = in.read(buf, n, want - n);
            if (r < 0) {
                throw new IllegalArgumentException("run " + id + " of " + log + ": the stream ended after "
                        + (position + n) + " of its declared " + length + " bytes");
            }
            n += r;
        }
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }
}
