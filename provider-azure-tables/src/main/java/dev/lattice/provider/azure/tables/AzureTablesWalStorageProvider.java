package dev.lattice.provider.azure.tables;

import com.azure.data.tables.TableServiceClient;
import dev.lattice.provider.azure.tables.Records.Head;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.ConnectFailures;
import dev.lattice.spi.support.SpiChecks;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A {@link WalStorageProvider} on one Azure Table Storage table (scheme {@code azure-tables}): each log is one
 * partition (head row, manifest rows, data rows), each checkpoint a partition of chunk rows. The layout and the
 * protocol (stage/commit/abort, conditional head updates, trim, reconcile, checkpoints) are described in
 * {@code docs/providers/azure-tables.md}; this class is the facade that checks arguments and hands each call to the
 * class owning that protocol part ({@link Appends}, {@link Reads}, {@link TrimAndReconcile},
 * {@link TablesCheckpointStore}, with {@link TablesCalls} making every request).
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

    private static final int QUERY_TOP = TablesCalls.QUERY_TOP;
    /**
     * Default bound on run chunk rows in flight at once over all run writes of one provider: 4, about 16 MB of
     * transient heap (a chunk row's 960 KiB plus the SDK's ~2.6 MB of request serialization each) however many
     * threads write runs; the engine's close flushes every partition at once.
     */
    public static final int DEFAULT_RUN_CHUNKS_IN_FLIGHT = 4;
    /** Largest accepted bound on run chunk rows in flight (inclusive). */
    public static final int MAX_RUN_CHUNKS_IN_FLIGHT = 64;

    private final TablesCalls calls;
    private final String tableName;
    private final ProviderDescriptor descriptor;
    private final Appends appends;
    private final Reads reads;
    private final TrimAndReconcile trimAndReconcile;
    private final CheckpointStore checkpoints;
    private final RunStore runs;
    private final TablesLogDrop drops;
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
        this(table, tableName, layout, createTable, DEFAULT_RUN_CHUNKS_IN_FLIGHT);
    }

    /**
     * Opens a provider over a gateway with a bound on run chunk rows in flight.
     *
     * @param table the gateway to the table
     * @param tableName the table's name, for messages
     * @param layout how payload bytes are spread over properties and rows
     * @param createTable whether to create the table when it does not exist
     * @param runChunksInFlight most run chunk rows read and sent at once over all run writes, 1 to
     *     {@value #MAX_RUN_CHUNKS_IN_FLIGHT}
     * @throws IllegalArgumentException if {@code runChunksInFlight} is out of range
     */
    AzureTablesWalStorageProvider(TableGateway table, String tableName, Layout layout, boolean createTable,
                                  int runChunksInFlight) {
        if (runChunksInFlight < 1 || runChunksInFlight > MAX_RUN_CHUNKS_IN_FLIGHT) {
            throw new IllegalArgumentException("runChunksInFlight must be in 1.." + MAX_RUN_CHUNKS_IN_FLIGHT
                    + ", got " + runChunksInFlight);
        }
        this.calls = new TablesCalls(table);
        this.tableName = Objects.requireNonNull(tableName, "tableName");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(layout, "layout");
        this.appends = new Appends(calls, layout);
        this.reads = new Reads(calls);
        this.trimAndReconcile = new TrimAndReconcile(calls, reads);
        this.checkpoints = new TablesCheckpointStore(calls, layout, this::ensureOpen);
        this.runs = new TablesRunStore(calls, layout, runChunksInFlight, this::ensureOpen);
        this.drops = new TablesLogDrop(calls);
        this.descriptor = new ProviderDescriptor(NAME, "1", LIMITS, DurabilityLevel.REPLICATED,
                Set.of(ProviderFeature.CONCURRENT_STAGE, ProviderFeature.PERSISTENT, ProviderFeature.RUNS,
                        ProviderFeature.DROP));
        if (createTable) {
            long start = System.nanoTime();
            try {
                table.createTableIfNotExists();
            } catch (RuntimeException e) {
                if (ConnectFailures.isUnreachable(e)) {
                    throw ConnectFailures.couldNotConnect("Azure Table Storage" + (table.endpoint() == null ? ""
                            : " at " + table.endpoint()) + " (creating table '" + tableName + "')",
                            (System.nanoTime() - start) / 1_000_000, null, e);
                }
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

    /** @return the table this provider works on */
    public String tableName() {
        return tableName;
    }

    /**
     * Name {@value #NAME}, version 1, {@link #LIMITS}, {@link DurabilityLevel#REPLICATED}, features
     * {@link ProviderFeature#CONCURRENT_STAGE}, {@link ProviderFeature#PERSISTENT}, {@link ProviderFeature#RUNS} and DROP
     * (physical bytes are not tracked: {@link LogState#physicalBytes()} is -1 for a log that exists).
     *
     * @return the descriptor, constant
     */
    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

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
        return appends.claim(log);
    }

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
        return appends.stage(log, fence, batch);
    }

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
        appends.commit(log, fence, throughOffset);
    }

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
        appends.abort(log, fence, staged);
    }

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
        return reads.read(log, fromExclusive, maxEntries, maxBytes);
    }

    /**
     * One point read of the head row; {@link LogState#physicalBytes()} is -1 (not tracked) for an existing log.
     *
     * @see WalStorageProvider#state(LogId)
     */
    @Override
    public LogState state(LogId log) {
        Objects.requireNonNull(log, "log");
        ensureOpen();
        Head head = calls.readHead(log);
        if (head == null) {
            return LogState.EMPTY;
        }
        long retained = head.tail() - head.watermark();
        return new LogState(head.watermark() + 1, head.tail(), head.watermark(), head.epoch(), retained,
                head.retainedBytes(), -1);
    }

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
        trimAndReconcile.trim(log, fence, throughInclusive);
    }

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
        return trimAndReconcile.reconcile(log, fence);
    }

    /**
     * Deletes the log's run partitions, checkpoint partitions and log rows, the head row last (see
     * {@link TablesLogDrop}), then forgets cached batches.
     *
     * @see WalStorageProvider#drop(LogId, Fence)
     */
    @Override
    public void drop(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        ensureOpen();
        try {
            drops.drop(log, fence);
        } finally {
            reads.clearCache();
        }
    }

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
     * Runs are partitions of chunk rows with a commit row written last (see {@link TablesRunStore}).
     *
     * @return the store (same instance every call)
     * @throws IllegalStateException when closed
     */
    @Override
    public RunStore runs() {
        ensureOpen();
        return runs;
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
        calls.queryAll(null, "logs", "PartitionKey ge " + Keys.quote(Keys.treeLow(tree)) + " and PartitionKey lt "
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
        calls.queryAll(null, "trees", "PartitionKey ge 'L|' and PartitionKey lt 'L}' and RowKey eq "
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
        reads.clearCache();
    }

    private void ensureOpen() {
        SpiChecks.open(closed, NAME);
    }

    /**
     * Maps a backend failure; see {@link TablesCalls#failure}.
     *
     * @param log the log, or null
     * @param what the operation, for the message
     * @param e the failure
     * @return the exception to throw
     */
    static WalStorageException failure(LogId log, String what, RuntimeException e) {
        return TablesCalls.failure(log, what, e);
    }
}
