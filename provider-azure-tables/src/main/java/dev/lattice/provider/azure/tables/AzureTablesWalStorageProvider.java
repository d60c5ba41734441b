package dev.lattice.provider.azure.tables;

import com.azure.core.exception.HttpResponseException;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableServiceException;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import com.azure.data.tables.models.TableTransactionFailedException;
import dev.lattice.provider.azure.tables.Records.CheckpointRef;
import dev.lattice.provider.azure.tables.Records.CommittedBatch;
import dev.lattice.provider.azure.tables.Records.Head;
import dev.lattice.provider.azure.tables.Records.Manifest;
import dev.lattice.provider.azure.tables.Records.StagedHeader;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;

/**
 * A {@link WalStorageProvider} on one Azure Table Storage table (scheme {@code azure-tables}).
 *
 * <h2>Layout</h2>
 * Each log owns one partition {@code L|<tree>|<partition>} holding its head row {@code H} (epoch, committed tail,
 * trim watermark, retained payload bytes, latest checkpoint), manifest rows {@code M<last offset>} (one per commit,
 * listing the batches it published), checkpoint index rows {@code K<through + 1>} and data rows
 * {@code D<first offset>.<batch id>.<epoch>.<row>}. A batch's entries are framed, cut into binary properties of up
 * to 64 KiB, 15 per row; see {@link BatchCodec}. Checkpoint bytes live in their own partitions
 * {@code C|<tree>|<partition>|<generation>}.
 *
 * <h2>Protocol</h2>
 * <ul>
 *   <li>{@code stage} writes the batch's data rows with CREATE in as many entity-group transactions as the service
 *       limits require (at most 100 entities and 4 MiB each, one partition), the transaction holding row 0 (the
 *       header) last: a header means the whole batch landed. Readers never look at data rows that no manifest row
 *       names.</li>
 *   <li>{@code commit(through)} submits one transaction: UPDATE of the head row with If-Match on its ETag (new
 *       tail, counters) plus CREATE of one manifest row listing every staged batch up to {@code through}. So any
 *       number of staged batches, each possibly staged in many transactions, become visible at once.</li>
 *   <li>Every fenced change (claim, commit, trim, checkpoint publish) is a conditional update of the head row; a
 *       412 makes the provider re-read the head: a newer epoch means {@link FencedException}, its own change
 *       already there (a retried request that had landed) means success, anything else is retried.</li>
 *   <li>A retried stage whose first attempt landed meets 409 EntityAlreadyExists: rows with the same content hash
 *       count as written, rows with another hash are an {@link OffsetConflictException}.</li>
 *   <li>{@code reconcile} deletes every data row above the tail staged under the fence's epoch or an older one
 *       (headers first), finishes an interrupted trim and deletes unpublished checkpoint chunks of older
 *       epochs.</li>
 * </ul>
 *
 * <p>The service's limits are enforced by the provider itself before each request ({@link Rows#pack},
 * {@link Rows#checkEntity}); the emulator used in tests is more lenient.
 *
 * <p>Durability: {@link DurabilityLevel#REPLICATED} (a committed batch is acknowledged by the service). Thread-safe;
 * all state is in the table apart from a bounded cache of decoded committed batches (immutable once committed).
 */
public final class AzureTablesWalStorageProvider implements WalStorageProvider {

    /** Provider name in {@link #describe()}. */
    public static final String NAME = "azure-tables";
    /** Largest entry, bytes (inclusive): 4 MiB. */
    public static final int MAX_ENTRY_BYTES = 4 << 20;
    /** Largest batch payload, bytes (inclusive): 8 MiB, staged in up to 3 transactions of 3 rows. */
    public static final long MAX_BATCH_BYTES = 8L << 20;
    /** Most entries per batch (inclusive). */
    public static final int MAX_ENTRIES_PER_BATCH = 100_000;
    /** Largest checkpoint, bytes (inclusive): 1 GiB. */
    public static final long MAX_CHECKPOINT_BYTES = 1L << 30;
    /** The limits {@link #describe()} declares. */
    public static final ProviderLimits LIMITS =
            new ProviderLimits(MAX_ENTRY_BYTES, MAX_BATCH_BYTES, MAX_ENTRIES_PER_BATCH, MAX_CHECKPOINT_BYTES);

    /** How often a conditional head update is retried after losing a race against the same writer. */
    private static final int MAX_HEAD_RACES = 200;
    /** A read page stops planning batches once this many payload bytes are planned (after the first batch). */
    private static final long PAGE_PLAN_BYTES = 16L << 20;
    private static final int QUERY_TOP = 1000;
    private static final Set<String> TRANSIENT_CODES = Set.of("ServerBusy", "OperationTimedOut", "InternalError",
            "TableBeingDeleted", "Timeout");
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Properties of the head row and of staged batch headers, for the combined query. */
    private static final List<String> HEAD_AND_HEADER_SELECT = List.of("PartitionKey", "RowKey", "V", "E", "T", "W", "R", "CG", "CT",
            "CF", "CS", "CE", "CH", "CN", "F", "L", "X", "N", "B", "H");

    private final TableGateway table;
    private final String tableName;
    private final Layout layout;
    private final int checkpointRowsPerTransaction;
    private final ProviderDescriptor descriptor;
    private final CheckpointStore checkpoints = new Checkpoints();
    private final BatchCache cache = new BatchCache(32L << 20);
    /** Highest committed tail this instance has seen per log partition (tails never decrease). */
    private final java.util.concurrent.ConcurrentHashMap<String, Long> tailHints =
            new java.util.concurrent.ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * Opens a provider over a table, with a service client the caller built (credentials, endpoint, HTTP and retry
     * settings are the caller's). The table is created when it does not exist.
     *
     * @param service the service client
     * @param tableName the table: 3 to 63 ASCII letters and digits, starting with a letter
     * @return the open provider
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the table name breaks the service's naming rule
     * @throws ProviderUnavailableException if the service cannot be reached
     * @throws WalStorageException if the table cannot be created (e.g. not authorised)
     */
    public static AzureTablesWalStorageProvider open(TableServiceClient service, String tableName) {
        Objects.requireNonNull(service, "service");
        validateTableName(tableName);
        return new AzureTablesWalStorageProvider(new SdkTableGateway(service, tableName), tableName, Layout.DEFAULT,
                true);
    }

    /**
     * Opens a provider over a gateway (tests wrap the SDK gateway to enforce limits, count or inject failures).
     *
     * @param table the gateway to the table
     * @param tableName the table's name, for messages
     * @param layout how payload bytes are spread over properties and rows
     * @param createTable whether to create the table when it does not exist
     */
    AzureTablesWalStorageProvider(TableGateway table, String tableName, Layout layout, boolean createTable) {
        this.table = Objects.requireNonNull(table, "table");
        this.tableName = Objects.requireNonNull(tableName, "tableName");
        this.layout = Objects.requireNonNull(layout, "layout");
        this.checkpointRowsPerTransaction = rowsPerTransaction(layout);
        this.descriptor = new ProviderDescriptor(NAME, "1", LIMITS, DurabilityLevel.REPLICATED,
                Set.of(ProviderFeature.CONCURRENT_STAGE, ProviderFeature.PERSISTENT));
        if (createTable) {
            try {
                table.createTableIfNotExists();
            } catch (RuntimeException e) {
                throw failure(null, "creating table '" + tableName + "'", e);
            }
        }
    }

    /**
     * Checks a table name against the service's rule.
     *
     * @param tableName the name
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException if it is not 3 to 63 ASCII letters and digits starting with a letter, or is
     *     the reserved name {@code tables}
     */
    static void validateTableName(String tableName) {
        Objects.requireNonNull(tableName, "tableName");
        if (!tableName.matches("[A-Za-z][A-Za-z0-9]{2,62}") || tableName.equalsIgnoreCase("tables")) {
            throw new IllegalArgumentException("table name '" + tableName + "' must be 3 to 63 ASCII letters and"
                    + " digits starting with a letter (Azure Table naming rule), and not 'tables'");
        }
    }

    /** How many full rows fit one transaction under the service's limits (3 for the default layout). */
    private static int rowsPerTransaction(Layout layout) {
        TableEntity sample = new TableEntity(Keys.checkpointPartition(new LogId("x".repeat(LogId.MAX_TREE_NAME_LENGTH),
                LogId.MAX_PARTITION), "0".repeat(32)), Keys.checkpointRow(0)).addProperty("X", 0)
                .addProperty("E", Long.MAX_VALUE);
        Rows.putPayload(sample, new byte[layout.rowBytes()], 0, layout.rowBytes(), layout);
        Rows.checkEntity(sample);
        long perRow = AzureTableLimits.actionRequestBytes(sample.getPartitionKey(), sample.getRowKey(),
                sample.getProperties());
        long budget = AzureTableLimits.MAX_TRANSACTION_PAYLOAD_BYTES - AzureTableLimits.TRANSACTION_OVERHEAD_BYTES;
        return (int) Math.max(1, Math.min(AzureTableLimits.MAX_TRANSACTION_ACTIONS, budget / perRow));
    }

    /** @return the table this provider works on */
    public String tableName() {
        return tableName;
    }

    /**
     * Name {@value #NAME}, version 1, {@link #LIMITS}, {@link DurabilityLevel#REPLICATED}, features
     * {@link ProviderFeature#CONCURRENT_STAGE} and {@link ProviderFeature#PERSISTENT} (physical bytes are not
     * tracked: {@link LogState#physicalBytes()} is -1 for a log that exists).
     *
     * @return the descriptor, constant
     */
    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    // ---------------------------------------------------------------------------------------------------- claim

    /**
     * Raises the epoch in the head row: CREATE of the head (epoch 1) or UPDATE with If-Match; a lost race re-reads
     * and tries again with a short random back-off. Requests: 1 read + 1 transaction when uncontended.
     *
     * @see WalStorageProvider#claim(LogId)
     */
    @Override
    public Fence claim(LogId log) {
        Objects.requireNonNull(log, "log");
        ensureOpen();
        String pk = Keys.logPartition(log);
        for (int attempt = 1; ; attempt++) {
            Head head = readHead(log);
            TableTransactionAction action;
            long epoch;
            if (head == null) {
                epoch = 1;
                action = new TableTransactionAction(TableTransactionActionType.CREATE,
                        new Head(1, -1, -1, 0, null, null).toEntity(pk));
            } else {
                epoch = head.epoch() + 1;
                action = new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE,
                        head.withEpoch(epoch).toEntity(pk), true);
            }
            TxFailure f = submit(log, "claim", List.of(action));
            if (f == null) {
                return new Fence(log, epoch);
            }
            if (!f.isConflict()) {
                throw f.toException(log, "claim");
            }
            backOff(log, "claim", attempt, f);
        }
    }

    // ---------------------------------------------------------------------------------------------------- stage

    /**
     * Writes the batch's data rows (CREATE), in as many transactions as the service limits need, the header's
     * transaction last. Requests: 1 query (head and staged headers) + 1 transaction per 3 full rows (about 2.8 MiB
     * of payload) or per 100 rows. Fenced at once when the head shows a newer epoch.
     *
     * @see WalStorageProvider#stage(LogId, Fence, EncodedBatch)
     */
    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        SpiChecks.stage(log, fence, batch, LIMITS);
        ensureOpen();
        StagedBatch receipt = StagedBatch.of(fence, batch);
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        HeadAndStaged hs = readHeadAndStaged(log, last);
        Head head = hs.head();
        checkFence(log, head, fence);
        if (first <= head.tail()) {
            CommittedBatch c = first > head.watermark() ? findCommitted(log, first) : null;
            if (c != null && c.first() == first && c.last() == last && c.id().equals(batch.batchId())) {
                return receipt; // a retry of a batch that was committed meanwhile
            }
            throw new OffsetConflictException(log, "batch " + first + ".." + last + " (id " + batch.batchId()
                    + ") overlaps committed offsets (committed tail " + head.tail() + ", trim watermark "
                    + head.watermark() + ")");
        }
        String pk = Keys.logPartition(log);
        BatchCodec.Encoded encoded = BatchCodec.encode(pk, fence.epoch(), batch, layout);
        for (StagedHeader s : hs.staged()) {
            if (s.epoch() != fence.epoch() || !s.overlaps(first, last)) {
                continue; // older epochs' leftovers give way
            }
            if (s.first() == first && s.last() == last && s.id().equals(batch.batchId())) {
                if (Arrays.equals(s.hash(), encoded.hash())) {
                    return receipt; // already staged whole
                }
                throw new OffsetConflictException(log, "batch " + first + ".." + last + " (id " + batch.batchId()
                        + ") was staged before with other content under the same id");
            }
            throw new OffsetConflictException(log, "batch " + first + ".." + last + " (id " + batch.batchId()
                    + ") overlaps staged batch " + s.first() + ".." + s.last() + " (id " + s.id() + ")");
        }
        List<List<TableTransactionAction>> txns = Rows.pack(encoded.rows(), TableTransactionActionType.CREATE);
        // Row 0 (the header) is in the first transaction; it goes last, so a header means a complete batch.
        for (int i = 1; i < txns.size(); i++) {
            submitStageTransaction(log, txns.get(i), encoded.hash(), Keys.dataBatchPrefix(first, batch.batchId(),
                    fence.epoch()));
        }
        submitStageTransaction(log, txns.get(0), encoded.hash(), Keys.dataBatchPrefix(first, batch.batchId(),
                fence.epoch()));
        return receipt;
    }

    /**
     * Submits one stage transaction. On 409 EntityAlreadyExists (a retry whose earlier attempt landed, wholly or in
     * part) rows already stored with the same content hash count as written and the rest is submitted again; a row
     * stored with another hash is a conflict.
     */
    private void submitStageTransaction(LogId log, List<TableTransactionAction> actions, byte[] hash, String prefix) {
        List<TableTransactionAction> pending = actions;
        for (int round = 1; ; round++) {
            TxFailure f = submit(log, "stage", pending);
            if (f == null) {
                return;
            }
            if (!f.is(TableErrorCode.ENTITY_ALREADY_EXISTS)) {
                throw f.toException(log, "stage");
            }
            Map<String, byte[]> stored = new HashMap<>();
            queryAll(log, "stage", Keys.rowRange(Keys.logPartition(log), prefix, prefix + "~"),
                    List.of("RowKey", "H"), QUERY_TOP, e -> {
                        stored.put(e.getRowKey(), Rows.getBytes(e, "H"));
                        return true;
                    });
            List<TableTransactionAction> rest = new ArrayList<>();
            for (TableTransactionAction a : pending) {
                byte[] h = stored.get(a.getEntity().getRowKey());
                if (h == null) {
                    rest.add(a);
                } else if (!Arrays.equals(h, hash)) {
                    throw new OffsetConflictException(log, "row " + a.getEntity().getRowKey()
                            + " exists with other content: the same batch id and offsets were staged with other"
                            + " entries");
                }
            }
            if (rest.isEmpty()) {
                return;
            }
            if (rest.size() == pending.size() || round >= 5) {
                throw new ProviderUnavailableException(log, "stage: transaction keeps failing with "
                        + "EntityAlreadyExists although the rows are missing", f.cause());
            }
            pending = rest;
        }
    }

    // ---------------------------------------------------------------------------------------------------- commit

    /**
     * Publishes every staged batch up to {@code throughOffset} with one transaction: the head's conditional
     * UPDATE plus one manifest row (more than 10,000 batches take one
     * such transaction per group, in order). Requests: 1 query + 1 transaction.
     *
     * @see WalStorageProvider#commit(LogId, Fence, long)
     */
    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        SpiChecks.commit(log, fence, throughOffset);
        ensureOpen();
        String pk = Keys.logPartition(log);
        for (int attempt = 1; ; attempt++) {
            HeadAndStaged hs = readHeadAndStaged(log, throughOffset);
            Head head = hs.head();
            checkFence(log, head, fence);
            if (throughOffset <= head.tail()) {
                return;
            }
            Map<Long, StagedHeader> byFirst = new HashMap<>();
            for (StagedHeader s : hs.staged()) {
                if (s.epoch() == fence.epoch()) {
                    StagedHeader other = byFirst.putIfAbsent(s.first(), s);
                    if (other != null) {
                        throw new OffsetConflictException(log, "two batches are staged at offset " + s.first()
                                + " under epoch " + fence.epoch() + " (ids " + other.id() + ", " + s.id() + ")");
                    }
                }
            }
            List<CommittedBatch> chain = new ArrayList<>();
            for (long pos = head.tail() + 1; pos <= throughOffset; ) {
                StagedHeader s = byFirst.get(pos);
                if (s == null) {
                    throw new OffsetConflictException(log, "cannot commit through " + throughOffset + ": offset " + pos
                            + " is not staged under epoch " + fence.epoch());
                }
                if (s.last() > throughOffset) {
                    throw new OffsetConflictException(log, "cannot commit through " + throughOffset
                            + ": it falls inside staged batch " + s.first() + ".." + s.last());
                }
                chain.add(s.committed());
                pos = s.last() + 1;
            }
            boolean raced = false;
            for (int from = 0; from < chain.size() && !raced; from += Manifest.MAX_BATCHES_PER_GROUP) {
                int to = Math.min(chain.size(), from + Manifest.MAX_BATCHES_PER_GROUP);
                List<CommittedBatch> group = chain.subList(from, to);
                long groupLast = group.get(group.size() - 1).last();
                long bytes = 0;
                for (CommittedBatch b : group) {
                    bytes += b.payloadBytes();
                }
                TableEntity manifest = Manifest.toEntity(pk, group);
                Rows.checkEntity(manifest);
                TxFailure f = submit(log, "commit", List.of(
                        new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE,
                                head.withTail(groupLast, head.retainedBytes() + bytes).toEntity(pk), true),
                        new TableTransactionAction(TableTransactionActionType.CREATE, manifest)));
                if (f == null && to == chain.size()) {
                    return;
                }
                if (f != null && !f.isConflict()) {
                    throw f.toException(log, "commit");
                }
                // More groups to go, or a conflict: look at the head again.
                Head now = readHead(log);
                if (now.epoch() != fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), now.epoch(), f == null ? null : f.cause());
                }
                if (now.tail() != groupLast) {
                    if (now.tail() >= throughOffset) {
                        return; // a retried request had landed (the tail only moves through this writer)
                    }
                    raced = true; // the head moved under us (the same writer's trim or publish): start over
                    if (attempt >= MAX_HEAD_RACES) {
                        throw new ProviderUnavailableException(log, "commit lost " + attempt
                                + " races for the head row", f == null ? null : f.cause());
                    }
                }
                head = now; // f != null with the tail at groupLast: a retried request had landed
            }
            if (!raced) {
                return;
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------- abort

    /**
     * Deletes the batch's data rows (header first) when it is still staged under the receipt's epoch, which must
     * be the fence's.
     *
     * @see WalStorageProvider#abort(LogId, Fence, StagedBatch)
     */
    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        SpiChecks.abort(log, fence, staged);
        ensureOpen();
        Head head = readHead(log);
        checkFence(log, head, fence);
        if (staged.epoch() != fence.epoch() || staged.firstOffset() <= head.tail()) {
            return; // another epoch's batch, or committed / trimmed meanwhile
        }
        String pk = Keys.logPartition(log);
        String prefix = Keys.dataBatchPrefix(staged.firstOffset(), staged.batchId(), staged.epoch());
        List<String> headers = new ArrayList<>();
        List<String> others = new ArrayList<>();
        boolean[] otherRange = {false};
        queryAll(log, "abort", Keys.rowRange(pk, prefix, prefix + "~"), List.of("RowKey", "L", "X"), QUERY_TOP, e -> {
            if (Rows.getLong(e, "L") != staged.lastOffset()) {
                otherRange[0] = true;
            }
            (Rows.getInt(e, "X") == 0 ? headers : others).add(e.getRowKey());
            return true;
        });
        if (otherRange[0]) {
            return; // the same id was staged with another range: not this receipt's batch
        }
        headers.addAll(others);
        deleteRows(log, "abort", pk, headers);
    }

    // ---------------------------------------------------------------------------------------------------- read

    /**
     * Reads the head, the manifest rows from {@code fromExclusive} on, and the data rows of the batches needed,
     * with one range query (decoded batches are cached, so small pages do not re-read them). A page plans at most
     * 16 MiB of batches beyond the first. Requests for a page: 1 read + manifest and data query pages.
     *
     * @see WalStorageProvider#read(LogId, long, int, long)
     */
    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        ensureOpen();
        for (int attempt = 1; ; attempt++) {
            Head head = readHead(log);
            if (head == null) {
                return new ReadPage(List.of(), -1);
            }
            try {
                return readPage(log, head, fromExclusive, maxEntries, maxBytes);
            } catch (RowsMissing e) {
                // A trim may have deleted rows after the head was read: retry if the watermark moved.
                Head now = readHead(log);
                if (now.watermark() == head.watermark() || attempt >= 5) {
                    throw new CorruptLogException(log, e.offset, e.what);
                }
            }
        }
    }

    private ReadPage readPage(LogId log, Head head, long fromExclusive, int maxEntries, long maxBytes) {
        long tail = head.tail();
        if (fromExclusive >= tail) {
            return new ReadPage(List.of(), tail);
        }
        long start = Math.max(fromExclusive, head.watermark()) + 1;
        if (start > tail) {
            return new ReadPage(List.of(), tail);
        }
        String pk = Keys.logPartition(log);
        List<CommittedBatch> plan = new ArrayList<>();
        long[] planned = {0, 0}; // entries, bytes
        queryAll(log, "read", Keys.rowRange(pk, Keys.manifest(start), Keys.MANIFEST_END), null, 16, QUERY_TOP, e -> {
            for (CommittedBatch b : Manifest.fromEntity(e)) {
                if (b.last() < start) {
                    continue;
                }
                if (b.first() > tail) {
                    return false;
                }
                plan.add(b);
                planned[0] += b.last() - Math.max(b.first(), start) + 1;
                planned[1] += b.payloadBytes();
                if (planned[0] >= maxEntries || planned[1] >= maxBytes || planned[1] >= PAGE_PLAN_BYTES) {
                    return false;
                }
            }
            return true;
        });
        if (plan.isEmpty() || plan.get(0).first() > start) {
            throw new RowsMissing(start, "no manifest row lists committed offset " + start + " (committed tail "
                    + tail + ")");
        }
        Map<CommittedBatch, List<byte[]>> data = loadBatches(log, plan);
        List<LogEntry> out = new ArrayList<>();
        long bytes = 0;
        outer:
        for (CommittedBatch b : plan) {
            List<byte[]> entries = data.get(b);
            for (long off = Math.max(b.first(), start); off <= b.last() && off <= tail; off++) {
                byte[] p = entries.get((int) (off - b.first()));
                if (out.size() >= maxEntries || (!out.isEmpty() && bytes + p.length > maxBytes)) {
                    break outer;
                }
                out.add(new LogEntry(off, p.clone()));
                bytes += p.length;
            }
        }
        return new ReadPage(out, tail);
    }

    /** Loads and decodes committed batches (from the cache where possible) with one range query. */
    private Map<CommittedBatch, List<byte[]>> loadBatches(LogId log, List<CommittedBatch> batches) {
        String pk = Keys.logPartition(log);
        Map<CommittedBatch, List<byte[]>> out = new HashMap<>();
        Map<String, CommittedBatch> missing = new LinkedHashMap<>();
        long rowsNeeded = 0;
        for (CommittedBatch b : batches) {
            List<byte[]> cached = cache.get(pk, b);
            if (cached != null) {
                out.put(b, cached);
            } else {
                missing.put(b.rowPrefix(), b);
                rowsNeeded += b.rows();
            }
        }
        if (missing.isEmpty()) {
            return out;
        }
        List<CommittedBatch> list = new ArrayList<>(missing.values());
        Map<String, List<TableEntity>> rows = new HashMap<>();
        long needed = rowsNeeded;
        long[] got = {0};
        queryAll(log, "read", Keys.rowRange(pk, Keys.dataFrom(list.get(0).first()),
                Keys.dataThrough(list.get(list.size() - 1).first())), null,
                (int) Math.max(1, Math.min(QUERY_TOP, needed)), e -> {
                    String rk = e.getRowKey();
                    String prefix = rk.substring(0, rk.lastIndexOf('.') + 1);
                    if (missing.containsKey(prefix)) {
                        rows.computeIfAbsent(prefix, k -> new ArrayList<>()).add(e);
                        got[0]++;
                    }
                    return got[0] < needed;
                });
        for (Map.Entry<String, CommittedBatch> m : missing.entrySet()) {
            CommittedBatch b = m.getValue();
            List<TableEntity> batchRows = rows.getOrDefault(m.getKey(), List.of());
            if (batchRows.size() != b.rows()) {
                throw new RowsMissing(b.first(), "committed batch " + b.first() + ".." + b.last() + " (id " + b.id()
                        + ") has " + batchRows.size() + " of its " + b.rows() + " data rows");
            }
            List<byte[]> entries = BatchCodec.decode(log, b, batchRows);
            cache.put(pk, b, entries);
            out.put(b, entries);
        }
        return out;
    }

    /** Thrown inside a read when committed rows are gone (a concurrent trim, or corruption). */
    private static final class RowsMissing extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final long offset;
        private final String what;

        RowsMissing(long offset, String what) {
            super(what, null, false, false);
            this.offset = offset;
            this.what = what;
        }
    }

    // ---------------------------------------------------------------------------------------------------- state

    /**
     * One point read of the head row; {@link LogState#physicalBytes()} is -1 (not tracked) for an existing log.
     *
     * @see WalStorageProvider#state(LogId)
     */
    @Override
    public LogState state(LogId log) {
        Objects.requireNonNull(log, "log");
        ensureOpen();
        Head head = readHead(log);
        if (head == null) {
            return LogState.EMPTY;
        }
        long retained = head.tail() - head.watermark();
        return new LogState(head.watermark() + 1, head.tail(), head.watermark(), head.epoch(), retained,
                head.retainedBytes(), -1);
    }

    // ---------------------------------------------------------------------------------------------------- trim

    /**
     * Writes the new watermark (and the retained byte count, which needs the batch that straddles it) to the head
     * with If-Match first, then deletes manifest and data rows at or below it.
     *
     * @see WalStorageProvider#trim(LogId, Fence, long)
     */
    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        SpiChecks.trim(log, fence, throughInclusive);
        ensureOpen();
        String pk = Keys.logPartition(log);
        Head done = null;
        for (int attempt = 1; done == null; attempt++) {
            Head head = readHead(log);
            checkFence(log, head, fence);
            if (throughInclusive <= head.watermark()) {
                return;
            }
            long removed = committedBytes(log, head.watermark() + 1, Math.min(throughInclusive, head.tail()));
            Head next = head.withTrim(throughInclusive, Math.max(head.tail(), throughInclusive),
                    head.retainedBytes() - removed);
            TxFailure f = submit(log, "trim", List.of(new TableTransactionAction(
                    TableTransactionActionType.UPDATE_REPLACE, next.toEntity(pk), true)));
            if (f == null) {
                done = next;
            } else if (!f.isConflict()) {
                throw f.toException(log, "trim");
            } else {
                Head now = readHead(log);
                if (now.epoch() != fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), now.epoch(), f.cause());
                }
                if (now.watermark() >= throughInclusive) {
                    done = now; // a retried request had landed
                } else {
                    backOff(log, "trim", attempt, f);
                }
            }
        }
        cleanupBelowWatermark(log, done);
    }

    /** Payload bytes of the committed entries in {@code from..through} (inclusive; empty when from > through). */
    private long committedBytes(LogId log, long from, long through) {
        if (from > through) {
            return 0;
        }
        String pk = Keys.logPartition(log);
        List<CommittedBatch> partial = new ArrayList<>();
        long[] sum = {0};
        queryAll(log, "trim", Keys.rowRange(pk, Keys.manifest(from), Keys.MANIFEST_END), null, 16, QUERY_TOP, e -> {
            for (CommittedBatch b : Manifest.fromEntity(e)) {
                if (b.last() < from) {
                    continue;
                }
                if (b.first() > through) {
                    return false;
                }
                if (b.first() >= from && b.last() <= through) {
                    sum[0] += b.payloadBytes();
                } else {
                    partial.add(b);
                }
            }
            return true;
        });
        if (!partial.isEmpty()) {
            Map<CommittedBatch, List<byte[]>> data = loadBatches(log, partial);
            for (CommittedBatch b : partial) {
                List<byte[]> entries = data.get(b);
                for (long off = Math.max(from, b.first()); off <= Math.min(through, b.last()); off++) {
                    sum[0] += entries.get((int) (off - b.first())).length;
                }
            }
        }
        return sum[0];
    }

    /**
     * Deletes manifest and data rows at or below the watermark, except the rows of the committed batch that
     * straddles it. Idempotent; finishes an interrupted trim.
     *
     * @return rows deleted
     */
    private long cleanupBelowWatermark(LogId log, Head head) {
        long w = head.watermark();
        if (w < 0) {
            return 0;
        }
        String pk = Keys.logPartition(log);
        String keep = null;
        if (w < head.tail()) {
            CommittedBatch straddling = findCommitted(log, w + 1);
            if (straddling != null && straddling.first() <= w) {
                keep = straddling.rowPrefix();
            }
        }
        String kept = keep;
        List<String> headers = new ArrayList<>();
        List<String> others = new ArrayList<>();
        queryAll(log, "trim", Keys.rowRange(pk, Keys.DATA, Keys.dataThrough(w)), List.of("RowKey", "X"), QUERY_TOP,
                e -> {
                    if (kept == null || !e.getRowKey().startsWith(kept)) {
                        (Rows.getInt(e, "X") == 0 ? headers : others).add(e.getRowKey());
                    }
                    return true;
                });
        queryAll(log, "trim", Keys.rowRange(pk, Keys.MANIFEST, Keys.manifestThrough(w)), List.of("RowKey"),
                QUERY_TOP, e -> others.add(e.getRowKey()));
        headers.addAll(others);
        deleteRows(log, "trim", pk, headers);
        return headers.size();
    }

    // ---------------------------------------------------------------------------------------------------- reconcile

    /**
     * Rolls back: deletes every data row above the tail staged under this or an older epoch (headers first),
     * finishes an interrupted trim, and deletes checkpoint chunks no head or index row references that older
     * epochs wrote. Never rolls forward.
     *
     * @see WalStorageProvider#reconcile(LogId, Fence)
     */
    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        ensureOpen();
        Head head = readHead(log);
        checkFence(log, head, fence);
        String pk = Keys.logPartition(log);
        List<String> headers = new ArrayList<>();
        List<String> others = new ArrayList<>();
        Set<String> headed = new HashSet<>();
        Map<String, Integer> rowsByBatch = new HashMap<>();
        queryAll(log, "reconcile", Keys.rowRange(pk, Keys.dataFrom(head.tail() + 1), Keys.DATA_END),
                List.of("RowKey", "E", "X"), QUERY_TOP, e -> {
                    if (Rows.getLong(e, "E") <= fence.epoch()) {
                        String rk = e.getRowKey();
                        String prefix = rk.substring(0, rk.lastIndexOf('.') + 1);
                        if (Rows.getInt(e, "X") == 0) {
                            headers.add(rk);
                            headed.add(prefix);
                        } else {
                            others.add(rk);
                            rowsByBatch.merge(prefix, 1, Integer::sum);
                        }
                    }
                    return true;
                });
        long leftovers = 0;
        for (Map.Entry<String, Integer> b : rowsByBatch.entrySet()) {
            if (!headed.contains(b.getKey())) {
                leftovers += b.getValue(); // rows of a stage that never finished
            }
        }
        int rolledBack = headers.size();
        headers.addAll(others);
        deleteRows(log, "reconcile", pk, headers);
        leftovers += cleanupBelowWatermark(log, head);
        leftovers += sweepCheckpoints(log, head, fence.epoch());
        return new ReconcileResult(head.tail(), rolledBack, 0, leftovers);
    }

    /** Deletes chunk partitions of checkpoints that were never published (or were replaced) by older epochs. */
    private long sweepCheckpoints(LogId log, Head head, long epoch) {
        String pk = Keys.logPartition(log);
        Set<String> referenced = new HashSet<>();
        if (head.latest() != null) {
            referenced.add(head.latest().generation());
        }
        queryAll(log, "reconcile", Keys.rowRange(pk, Keys.CHECKPOINT_INDEX, Keys.CHECKPOINT_INDEX_END),
                List.of("CG"), QUERY_TOP, e -> referenced.add((String) e.getProperty("CG")));
        List<String> orphans = new ArrayList<>();
        queryAll(log, "reconcile", "PartitionKey ge " + Keys.quote(Keys.checkpointPartitionsLow(log))
                        + " and PartitionKey lt " + Keys.quote(Keys.checkpointPartitionsHigh(log))
                        + " and RowKey eq " + Keys.quote(Keys.checkpointRow(0)),
                List.of("PartitionKey", "E"), QUERY_TOP, e -> {
                    String cpk = e.getPartitionKey();
                    String generation = cpk.substring(cpk.lastIndexOf('|') + 1);
                    if (!referenced.contains(generation) && Rows.getLong(e, "E") < epoch) {
                        orphans.add(cpk);
                    }
                    return true;
                });
        long deleted = 0;
        for (String cpk : orphans) {
            deleted += deletePartition(log, "reconcile", cpk);
        }
        return deleted;
    }

    // ---------------------------------------------------------------------------------------------------- listings

    /**
     * Checkpoints are chunk rows in their own partition, published by one conditional head update (plus an index
     * row), so a reader sees the old or the new one; a replaced one's chunks are deleted after the flip.
     *
     * @return the store (same instance every call)
     * @throws IllegalStateException when closed
     */
    @Override
    public CheckpointStore checkpoints() {
        ensureOpen();
        return checkpoints;
    }

    /**
     * Lists the head rows of the tree's log partitions (one query over a PartitionKey range).
     *
     * @see WalStorageProvider#logs(String)
     */
    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        ensureOpen();
        List<LogId> out = new ArrayList<>();
        queryAll(null, "logs", "PartitionKey ge " + Keys.quote(Keys.treeLow(tree)) + " and PartitionKey lt "
                + Keys.quote(Keys.treeHigh(tree)) + " and RowKey eq " + Keys.quote(Keys.HEAD),
                List.of("PartitionKey"), QUERY_TOP, e -> {
                    LogId id = Keys.parseLogPartition(e.getPartitionKey());
                    if (id != null && id.tree().equals(tree)) {
                        out.add(id);
                    }
                    return true;
                });
        out.sort(Comparator.naturalOrder());
        return out;
    }

    /**
     * Lists every head row (a query over all log partitions; pages may come back empty with a continuation token).
     *
     * @see WalStorageProvider#trees()
     */
    @Override
    public List<String> trees() {
        ensureOpen();
        Set<String> out = new TreeSet<>();
        queryAll(null, "trees", "PartitionKey ge 'L|' and PartitionKey lt 'L}' and RowKey eq "
                + Keys.quote(Keys.HEAD), List.of("PartitionKey"), QUERY_TOP, e -> {
                    LogId id = Keys.parseLogPartition(e.getPartitionKey());
                    if (id != null) {
                        out.add(id.tree());
                    }
                    return true;
                });
        return new ArrayList<>(out);
    }

    /** Leaves every row in the table (staged batches are for {@link #reconcile}); the SDK holds no resources. */
    @Override
    public void close() {
        closed = true;
        cache.clear();
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    private void ensureOpen() {
        SpiChecks.open(closed, NAME);
    }

    private Head readHead(LogId log) {
        TableEntity e;
        try {
            e = table.get(Keys.logPartition(log), Keys.HEAD);
        } catch (RuntimeException ex) {
            throw failure(log, "reading the head row", ex);
        }
        return e == null ? null : parseHead(log, e);
    }

    private Head parseHead(LogId log, TableEntity e) {
        Head head;
        try {
            head = Head.fromEntity(e);
        } catch (IllegalStateException ex) {
            throw new CorruptLogException(log, -1, "head row: " + ex.getMessage(), ex);
        }
        tailHints.merge(Keys.logPartition(log), head.tail(), Math::max);
        return head;
    }

    /**
     * The head and the headers of batches staged (under any epoch) above the tail with first offsets up to
     * {@code through}. When this instance has seen the log's tail before, both come from one query: the head row
     * plus the data-row headers from that earlier tail on (the tail never decreases, so nothing is missed; rows
     * between the earlier and the current tail are dropped here). Otherwise two requests.
     */
    private HeadAndStaged readHeadAndStaged(LogId log, long through) {
        String pk = Keys.logPartition(log);
        Long hint = tailHints.get(pk);
        if (hint == null || hint + 1 > through) {
            Head head = readHead(log);
            return new HeadAndStaged(head, head == null || head.tail() >= through ? List.of()
                    : stagedHeaders(log, head.tail() + 1, through));
        }
        // One RowKey range (no 'or' on keys, which the service would run as a partition scan): data rows from
        // the earlier tail up to the head row 'H'; X eq 0 keeps batch headers and the head (which carries X = 0).
        String filter = Keys.rowRange(pk, Keys.dataFrom(hint + 1), Keys.HEAD_END) + " and X eq 0";
        TableEntity[] headRow = {null};
        List<TableEntity> headers = new ArrayList<>();
        queryAll(log, "reading the head and staged batches", filter, HEAD_AND_HEADER_SELECT, QUERY_TOP, e -> {
            if (e.getRowKey().equals(Keys.HEAD)) {
                headRow[0] = e;
            } else {
                headers.add(e);
            }
            return true;
        });
        if (headRow[0] == null) {
            Head head = readHead(log); // a head without X (or none): the two-request way
            return new HeadAndStaged(head, head == null || head.tail() >= through ? List.of()
                    : stagedHeaders(log, head.tail() + 1, through));
        }
        Head head = parseHead(log, headRow[0]);
        List<StagedHeader> staged = new ArrayList<>();
        for (TableEntity e : headers) {
            StagedHeader s = StagedHeader.fromEntity(e);
            if (s.first() > head.tail() && s.first() <= through) {
                staged.add(s);
            }
        }
        return new HeadAndStaged(head, staged);
    }

    /**
     * A head row and staged batch headers read together.
     *
     * @param head the head, or null when the log has none
     * @param staged headers of batches staged above the head's tail
     */
    private record HeadAndStaged(Head head, List<StagedHeader> staged) {
    }

    private static void checkFence(LogId log, Head head, Fence fence) {
        long current = head == null ? 0 : head.epoch();
        if (fence.epoch() > current) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this table (the log's epoch"
                    + " is " + current + ")");
        }
        if (fence.epoch() < current) {
            throw new FencedException(log, fence.epoch(), current);
        }
    }

    /** Headers of batches staged (under any epoch) with first offsets in {@code from..through}. */
    private List<StagedHeader> stagedHeaders(LogId log, long from, long through) {
        List<StagedHeader> out = new ArrayList<>();
        queryAll(log, "reading staged batches", Keys.rowRange(Keys.logPartition(log), Keys.dataFrom(from),
                Keys.dataThrough(through)) + " and X eq 0", StagedHeader.SELECT, QUERY_TOP, e -> {
                    out.add(StagedHeader.fromEntity(e));
                    return true;
                });
        return out;
    }

    /** The committed batch holding {@code offset} (above the watermark), from the manifest, or null. */
    private CommittedBatch findCommitted(LogId log, long offset) {
        CommittedBatch[] found = {null};
        queryAll(log, "reading the manifest", Keys.rowRange(Keys.logPartition(log), Keys.manifest(offset),
                Keys.MANIFEST_END), null, 1, e -> {
                    for (CommittedBatch b : Manifest.fromEntity(e)) {
                        if (b.first() <= offset && offset <= b.last()) {
                            found[0] = b;
                        }
                    }
                    return false;
                });
        return found[0];
    }

    /**
     * Runs a query to its end, following continuation tokens (also past pages that come back empty with a token).
     *
     * @param visitor called per entity; returns false to stop early
     */
    private void queryAll(LogId log, String what, String filter, List<String> select, int top,
                          Predicate<TableEntity> visitor) {
        queryAll(log, what, filter, select, top, top, visitor);
    }

    /**
     * Like {@link #queryAll(LogId, String, String, List, int, Predicate)}, with a page size that starts at
     * {@code firstTop} and grows fourfold per page up to {@code maxTop}: few rows when the caller stops early, few
     * requests when it does not.
     */
    private void queryAll(LogId log, String what, String filter, List<String> select, int firstTop, int maxTop,
                          Predicate<TableEntity> visitor) {
        String token = null;
        int top = firstTop;
        do {
            TableGateway.QueryPage page;
            try {
                page = table.query(filter, select, top, token);
            } catch (RuntimeException e) {
                throw failure(log, what, e);
            }
            for (TableEntity e : page.entities()) {
                if (!visitor.test(e)) {
                    return;
                }
            }
            token = page.continuationToken();
            top = (int) Math.min(maxTop, top * 4L);
        } while (token != null);
    }

    /** Deletes rows of one partition, in order, 100 per transaction; rows already gone are skipped. */
    private void deleteRows(LogId log, String what, String pk, List<String> rowKeys) {
        for (int from = 0; from < rowKeys.size(); from += AzureTableLimits.MAX_TRANSACTION_ACTIONS) {
            List<TableTransactionAction> actions = new ArrayList<>();
            for (String rk : rowKeys.subList(from, Math.min(rowKeys.size(),
                    from + AzureTableLimits.MAX_TRANSACTION_ACTIONS))) {
                actions.add(new TableTransactionAction(TableTransactionActionType.DELETE, new TableEntity(pk, rk)));
            }
            while (!actions.isEmpty()) {
                TxFailure f = submit(log, what, actions);
                if (f == null) {
                    break;
                }
                if (!(f.is(TableErrorCode.RESOURCE_NOT_FOUND) || f.is(TableErrorCode.ENTITY_NOT_FOUND))
                        || f.index() == null || f.index() < 0 || f.index() >= actions.size()) {
                    throw f.toException(log, what);
                }
                actions.remove((int) f.index()); // deleted meanwhile: drop it and submit the rest again
            }
        }
    }

    /** Deletes every row of a partition; returns how many. */
    private long deletePartition(LogId log, String what, String pk) {
        List<String> rks = new ArrayList<>();
        queryAll(log, what, "PartitionKey eq " + Keys.quote(pk), List.of("RowKey"), QUERY_TOP,
                e -> rks.add(e.getRowKey()));
        deleteRows(log, what, pk, rks);
        return rks.size();
    }

    /**
     * Submits a transaction.
     *
     * @return null on success, or the failed action and its error code
     * @throws WalStorageException (or {@link ProviderUnavailableException}) for failures other than a failed action
     */
    private TxFailure submit(LogId log, String what, List<TableTransactionAction> actions) {
        try {
            table.submit(actions);
            return null;
        } catch (TableTransactionFailedException e) {
            String code = errorCode(e);
            if (code != null && TRANSIENT_CODES.contains(code)) {
                throw new ProviderUnavailableException(log, what + " failed transiently (" + code + ")", e);
            }
            return new TxFailure(e.getFailedTransactionActionIndex(), code, e);
        } catch (RuntimeException e) {
            throw failure(log, what, e);
        }
    }

    private void backOff(LogId log, String what, int attempt, TxFailure f) {
        if (attempt >= MAX_HEAD_RACES) {
            throw new ProviderUnavailableException(log, what + " lost " + attempt + " races for the head row",
                    f.cause());
        }
        try {
            Thread.sleep(ThreadLocalRandom.current().nextInt(1 + Math.min(50, 1 << Math.min(attempt, 6))));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ProviderUnavailableException(log, what + " was interrupted", e);
        }
    }

    private static String errorCode(HttpResponseException e) {
        if (e instanceof TableServiceException t && t.getValue() != null && t.getValue().getErrorCode() != null) {
            return t.getValue().getErrorCode().toString();
        }
        return null;
    }

    /**
     * Maps a backend failure: timeouts, throttling (408, 429, 5xx, ServerBusy, OperationTimedOut) and I/O errors are
     * {@link ProviderUnavailableException}; other HTTP errors are {@link WalStorageException}. The message names the
     * operation, the status and the service's error code; never a credential.
     */
    static WalStorageException failure(LogId log, String what, RuntimeException e) {
        if (e instanceof WalStorageException w) {
            return w;
        }
        if (e instanceof HttpResponseException h) {
            int status = h.getResponse() == null ? -1 : h.getResponse().getStatusCode();
            String code = errorCode(h);
            String detail = " (HTTP " + (status < 0 ? "?" : status) + (code == null ? "" : ", " + code) + ")";
            if (status == 408 || status == 429 || status >= 500 || (code != null && TRANSIENT_CODES.contains(code))) {
                return new ProviderUnavailableException(log, what + " failed transiently" + detail, e);
            }
            return new WalStorageException(log, what + " failed" + detail, e);
        }
        if (e instanceof IllegalArgumentException || e instanceof IllegalStateException
                || e instanceof NullPointerException || e instanceof UnsupportedOperationException) {
            return new WalStorageException(log, what + " failed: " + e.getClass().getSimpleName(), e);
        }
        return new ProviderUnavailableException(log, what + " failed (no response: "
                + e.getClass().getSimpleName() + "); the outcome is unknown", e);
    }

    /**
     * A failed action of a transaction (nothing of the transaction was applied).
     *
     * @param index the failing action's index, or null when unknown
     * @param code the service's error code, or null
     * @param cause the SDK exception
     */
    private record TxFailure(Integer index, String code, TableTransactionFailedException cause) {
        boolean is(TableErrorCode c) {
            return c.toString().equals(code);
        }

        /** 412 on an If-Match, or 409 on a CREATE: another request changed the row first. */
        boolean isConflict() {
            return is(TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED) || is(TableErrorCode.ENTITY_ALREADY_EXISTS);
        }

        WalStorageException toException(LogId log, String what) {
            return new WalStorageException(log, what + " failed: action " + index + " of the transaction was refused ("
                    + code + ")", cause);
        }
    }

    // ---------------------------------------------------------------------------------------------------- checkpoints

    /** The checkpoint store: chunk rows in a partition per checkpoint, published by one conditional head update. */
    private final class Checkpoints implements CheckpointStore {

        @Override
        public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion,
                                      InputStream data) {
            SpiChecks.publish(log, fence, throughOffset, formatVersion, data);
            ensureOpen();
            Head head = readHead(log);
            checkFence(log, head, fence);
            checkCheckpointOffsets(log, head, throughOffset);
            String generation = HexFormat.of().formatHex(randomBytes(16));
            String cpk = Keys.checkpointPartition(log, generation);
            MessageDigest sha = sha256();
            byte[] buf = new byte[checkpointRowsPerTransaction * layout.rowBytes()];
            long total = 0;
            int rowIndex = 0;
            try {
                while (true) {
                    int n = readFully(data, buf);
                    if (total + n > MAX_CHECKPOINT_BYTES) {
                        throw new CheckpointTooLargeException(log, MAX_CHECKPOINT_BYTES);
                    }
                    if (n > 0) {
                        sha.update(buf, 0, n);
                        List<TableEntity> rows = new ArrayList<>();
                        for (int off = 0; off < n; off += layout.rowBytes()) {
                            TableEntity row = new TableEntity(cpk, Keys.checkpointRow(rowIndex)).addProperty("X",
                                    rowIndex).addProperty("E", fence.epoch());
                            Rows.putPayload(row, buf, off, Math.min(layout.rowBytes(), n - off), layout);
                            rows.add(row);
                            rowIndex++;
                        }
                        for (List<TableTransactionAction> txn : Rows.pack(rows, TableTransactionActionType.CREATE)) {
                            TxFailure f = submit(log, "checkpoint publish", txn);
                            if (f != null) {
                                throw f.toException(log, "checkpoint publish");
                            }
                        }
                        total += n;
                    }
                    if (n < buf.length) {
                        break;
                    }
                }
            } catch (IOException e) {
                discard(log, cpk);
                throw new WalStorageException(log, "reading the checkpoint stream failed; nothing was published", e);
            } catch (RuntimeException e) {
                discard(log, cpk);
                throw e;
            }
            CheckpointRef ref = new CheckpointRef(generation, throughOffset, formatVersion, total, fence.epoch(),
                    sha.digest(), rowIndex);
            String pk = Keys.logPartition(log);
            CheckpointRef replaced = null;
            for (int attempt = 1; ; attempt++) {
                Head now = readHead(log);
                try {
                    checkFence(log, now, fence);
                    checkCheckpointOffsets(log, now, throughOffset);
                } catch (RuntimeException e) {
                    discard(log, cpk);
                    throw e;
                }
                TableEntity index = new TableEntity(pk, Keys.checkpointIndex(throughOffset));
                ref.writeTo(index);
                TxFailure f = submit(log, "checkpoint publish", List.of(
                        new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE,
                                now.withLatest(ref).toEntity(pk), true),
                        new TableTransactionAction(TableTransactionActionType.UPSERT_REPLACE, index)));
                if (f == null) {
                    replaced = now.latest();
                    break;
                }
                if (!f.isConflict()) {
                    throw f.toException(log, "checkpoint publish");
                }
                Head after = readHead(log);
                if (after.latest() != null && after.latest().generation().equals(generation)) {
                    replaced = now.latest(); // a retried request had landed
                    break;
                }
                if (after.epoch() != fence.epoch()) {
                    discard(log, cpk);
                    throw new FencedException(log, fence.epoch(), after.epoch(), f.cause());
                }
                backOff(log, "checkpoint publish", attempt, f);
            }
            if (replaced != null && replaced.through() == throughOffset) {
                discard(log, Keys.checkpointPartition(log, replaced.generation()));
            }
            return ref.info();
        }

        private void checkCheckpointOffsets(LogId log, Head head, long through) {
            if (through > head.tail()) {
                throw new OffsetConflictException(log, "checkpoint through " + through
                        + " is above the committed tail " + head.tail());
            }
            if (head.latest() != null && through < head.latest().through()) {
                throw new OffsetConflictException(log, "checkpoint through " + through
                        + " is below the latest checkpoint's " + head.latest().through());
            }
        }

        /** Deletes a checkpoint's chunk partition, best effort (reconcile sweeps what is left). */
        private void discard(LogId log, String cpk) {
            try {
                deletePartition(log, "discarding checkpoint chunks", cpk);
            } catch (WalStorageException ignored) {
                // left for reconcile's sweep
            }
        }

        @Override
        public Optional<CheckpointInfo> latest(LogId log) {
            Objects.requireNonNull(log, "log");
            ensureOpen();
            Head head = readHead(log);
            return head == null || head.latest() == null ? Optional.empty() : Optional.of(head.latest().info());
        }

        @Override
        public InputStream open(LogId log, CheckpointInfo info) {
            Objects.requireNonNull(log, "log");
            Objects.requireNonNull(info, "info");
            AzureTablesWalStorageProvider.this.ensureOpen();
            TableEntity row;
            try {
                row = table.get(Keys.logPartition(log), Keys.checkpointIndex(info.throughOffset()));
            } catch (RuntimeException e) {
                throw failure(log, "opening checkpoint " + info.throughOffset(), e);
            }
            CheckpointRef ref = row == null ? null : CheckpointRef.readFrom(row);
            if (ref == null || !ref.info().equals(info)) {
                throw new WalStorageException(log, "checkpoint through " + info.throughOffset()
                        + " no longer exists (deleted or replaced)");
            }
            return new CheckpointStream(log, ref);
        }

        @Override
        public void deleteBefore(LogId log, long throughOffsetExclusive) {
            Objects.requireNonNull(log, "log");
            AzureTablesWalStorageProvider.this.ensureOpen();
            Head head = readHead(log);
            if (head == null || head.latest() == null) {
                return;
            }
            long keepFrom = Math.min(throughOffsetExclusive, head.latest().through());
            if (keepFrom <= -1) {
                return;
            }
            String pk = Keys.logPartition(log);
            List<CheckpointRef> doomed = new ArrayList<>();
            queryAll(log, "deleting checkpoints", Keys.rowRange(pk, Keys.CHECKPOINT_INDEX,
                    Keys.checkpointIndex(keepFrom)), null, QUERY_TOP, e -> {
                        CheckpointRef ref = CheckpointRef.readFrom(e);
                        if (ref != null && !ref.generation().equals(head.latest().generation())) {
                            doomed.add(ref);
                        }
                        return true;
                    });
            for (CheckpointRef ref : doomed) {
                deleteRows(log, "deleting checkpoints", pk, List.of(Keys.checkpointIndex(ref.through())));
                deletePartition(log, "deleting checkpoints", Keys.checkpointPartition(log, ref.generation()));
            }
        }
    }

    /** Streams a checkpoint's chunk rows a few at a time and checks length and SHA-256 at the end. */
    private final class CheckpointStream extends InputStream {
        private final LogId log;
        private final CheckpointRef ref;
        private final String cpk;
        private final MessageDigest sha = sha256();
        private byte[] chunk = new byte[0];
        private int pos;
        private int nextRow;
        private long served;
        private boolean verified;
        private boolean closedStream;

        CheckpointStream(LogId log, CheckpointRef ref) {
            this.log = log;
            this.ref = ref;
            this.cpk = Keys.checkpointPartition(log, ref.generation());
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (closedStream) {
                throw new IOException("checkpoint stream is closed");
            }
            if (len == 0) {
                return 0;
            }
            while (pos == chunk.length) {
                if (nextRow >= ref.rows()) {
                    verify();
                    return -1;
                }
                fetch();
            }
            int n = Math.min(len, chunk.length - pos);
            System.arraycopy(chunk, pos, b, off, n);
            pos += n;
            return n;
        }

        private void fetch() {
            int want = Math.min(checkpointRowsPerTransaction, ref.rows() - nextRow);
            List<TableEntity> rows = new ArrayList<>();
            queryAll(log, "reading checkpoint " + ref.through(), Keys.rowRange(cpk, Keys.checkpointRow(nextRow),
                    Keys.checkpointRow(nextRow + want)), null, want, e -> {
                        rows.add(e);
                        return rows.size() < want;
                    });
            if (rows.size() != want) {
                throw new WalStorageException(log, "checkpoint through " + ref.through() + " lost chunk rows "
                        + nextRow + ".." + (nextRow + want - 1) + " (deleted meanwhile?)");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (TableEntity row : rows) {
                try {
                    if (Rows.getInt(row, "X") != nextRow) {
                        throw new CorruptLogException(log, ref.through(), "checkpoint chunk rows out of order");
                    }
                    Rows.appendPayload(row, out);
                } catch (IllegalStateException e) {
                    throw new CorruptLogException(log, ref.through(), e.getMessage(), e);
                }
                nextRow++;
            }
            chunk = out.toByteArray();
            pos = 0;
            served += chunk.length;
            sha.update(chunk);
        }

        private void verify() {
            if (verified) {
                return;
            }
            if (served != ref.size() || !Arrays.equals(sha.digest(), ref.sha256())) {
                throw new CorruptLogException(log, ref.through(), "checkpoint through " + ref.through() + " read "
                        + served + " bytes that fail its length (" + ref.size() + ") or SHA-256 check");
            }
            verified = true;
        }

        @Override
        public void close() {
            closedStream = true;
        }
    }

    // ---------------------------------------------------------------------------------------------------- small utils

    private static int readFully(InputStream in, byte[] buf) throws IOException {
        int n = 0;
        while (n < buf.length) {
            int r = in.read(buf, n, buf.length - n);
            if (r < 0) {
                break;
            }
            n += r;
        }
        return n;
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** Decoded committed batches (immutable), least recently used evicted past a byte budget. Thread-safe. */
    private static final class BatchCache {
        private final long maxBytes;
        private final LinkedHashMap<String, List<byte[]>> map = new LinkedHashMap<>(16, 0.75f, true);
        private final Map<String, Long> sizes = new TreeMap<>();
        private long bytes;

        BatchCache(long maxBytes) {
            this.maxBytes = maxBytes;
        }

        private static String key(String pk, CommittedBatch b) {
            return pk + "/" + b.rowPrefix();
        }

        synchronized List<byte[]> get(String pk, CommittedBatch b) {
            return map.get(key(pk, b));
        }

        synchronized void put(String pk, CommittedBatch b, List<byte[]> entries) {
            long size = 0;
            for (byte[] e : entries) {
                size += e.length + 16;
            }
            if (size > maxBytes / 4) {
                return;
            }
            String k = key(pk, b);
            if (map.put(k, entries) == null) {
                sizes.put(k, size);
                bytes += size;
            }
            var it = map.entrySet().iterator();
            while (bytes > maxBytes && it.hasNext()) {
                String old = it.next().getKey();
                it.remove();
                bytes -= sizes.remove(old);
            }
        }

        synchronized void clear() {
            map.clear();
            sizes.clear();
            bytes = 0;
        }
    }
}
