package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.BatchChunks.Chunk;
import dev.lattice.provider.dynamodb.BatchChunks.Stored;
import dev.lattice.provider.dynamodb.DynamoDbMetrics.Operation;
import dev.lattice.provider.dynamodb.LogSlot.Staged;
import dev.lattice.provider.dynamodb.LogSlot.State;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointStore;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Lattice WAL provider on Amazon DynamoDB (and DynamoDB-compatible servers), built on single-item conditional
 * writes only: no transactions, so it runs on every compatible server.
 *
 * <h2>Layout and protocol</h2>
 * One table, partition key {@code p} (string), sort key {@code s} (number); see {@link Layout}. Each log has a head
 * item (epoch, version, committed tail, trim watermark, counters, commit segments, checkpoint catalog) and chunk
 * items holding many entries each; a batch larger than one 400 KB item is split over several chunks (attribute names
 * counted, see {@link DynamoItemSize}).
 * <ul>
 *   <li>{@code claim}: one {@code UpdateItem} raising the head's epoch.</li>
 *   <li>{@code stage}: one conditional {@code PutItem} per chunk (the item must be absent or from an older epoch),
 *       above the tail where readers do not look; chunks carry the epoch and batch id, so a retried put of the same
 *       batch is recognised as success and a newer writer overwrites older leftovers.</li>
 *   <li>{@code commit(through)}: one conditional {@code UpdateItem} of the head (condition on epoch, tail and
 *       version) that moves the tail over every batch staged up to {@code through}: all-or-nothing however many
 *       items the batches span. The counters are added ({@code ADD}), never set.</li>
 *   <li>{@code read}: one {@code GetItem} of the head, then {@code Query} on the log's partition from the first
 *       wanted offset to the tail, strongly consistent, paged by {@code LastEvaluatedKey}, stopping at the bound; a
 *       chunk counts only if it continues the chain of committed batches and its epoch is the one that committed
 *       those offsets (head segments), so a stale writer's late leftovers are never read.</li>
 *   <li>{@code trim}: the head update (watermark, counters) first, then {@code BatchWriteItem} deletes; unprocessed
 *       items are resubmitted with backoff until done or the deadline. A trim within the tail conditions on the
 *       epoch and the watermark it planned from, not on the version or the tail, so it never competes with commits;
 *       a trim beyond the tail, which moves the tail, conditions on both like a commit.</li>
 *   <li>{@code reconcile}: deletes (conditionally) every item above the tail and finishes interrupted trims and
 *       checkpoint publishes.</li>
 *   <li>Checkpoints: chunk items in a partition of their own, published by one conditional head update of the
 *       catalog ({@link DynamoDbCheckpointStore}).</li>
 * </ul>
 *
 * <h2>Limits</h2>
 * {@link #LIMITS}: entries up to {@value BatchChunks#MAX_ENTRY_BYTES} bytes (one item minus 1 KiB of overhead),
 * batches up to 4 MiB and 100,000 entries, checkpoints up to 64 MiB.
 *
 * <h2>Failures</h2>
 * Throttling ({@code ProvisionedThroughputExceededException}, {@code RequestLimitExceeded}, {@code Throttling}), 5xx
 * responses, I/O errors and timeouts: {@link ProviderUnavailableException} after the SDK's own retries
 * ({@code maxAttempts}); a refused head condition: {@link FencedException} when the epoch moved; a chunk failing its
 * CRC32C: {@link CorruptLogException}; anything else: {@link WalStorageException}. Secrets never appear in messages.
 *
 * <h2>Fences</h2>
 * A fence is meant to be used on the instance that claimed it; another instance accepts it after reading the head
 * and the staged batches above the tail (one {@code Query}). Two instances must not write with the same fence at the
 * same time.
 *
 * <p>Thread-safe: calls on different logs run in parallel; on one log, stages run in parallel with each other
 * ({@link ProviderFeature#CONCURRENT_STAGE}) and commits are serialised.
 */
public final class DynamoDbWalStorageProvider implements WalStorageProvider {

    /** The provider's limits: see the class comment. */
    public static final ProviderLimits LIMITS =
            new ProviderLimits(BatchChunks.MAX_ENTRY_BYTES, 4L << 20, 100_000, 64L << 20);

    /** Provider name in {@link #describe()}. */
    public static final String NAME = "dynamodb";

    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbWalStorageProvider.class);
    private static final int MAX_CAS_ATTEMPTS = 16;

    private final DynamoCalls calls;
    private final Layout layout;
    private final DynamoDbMetrics metrics;
    private final DynamoDbClient ownedClient;
    private final DynamoDbSettings settings;
    private final ProviderDescriptor descriptor;
    private final ConcurrentHashMap<LogId, LogSlot> slots = new ConcurrentHashMap<>();
    private final DynamoDbCheckpointStore checkpoints;
    private volatile boolean closed;

    private DynamoDbWalStorageProvider(DynamoDbClient client, boolean owned, DynamoDbSettings settings) {
        this.settings = settings;
        this.metrics = new DynamoDbMetrics();
        this.calls = new DynamoCalls(client, settings.table(), metrics, settings.batchWriteDeadline());
        this.layout = new Layout(settings.keyPrefix());
        this.ownedClient = owned ? client : null;
        this.descriptor = new ProviderDescriptor(NAME, "1", LIMITS, DurabilityLevel.REPLICATED,
                Set.of(ProviderFeature.CONCURRENT_STAGE, ProviderFeature.PHYSICAL_BYTES, ProviderFeature.PERSISTENT));
        this.checkpoints = new DynamoDbCheckpointStore(this);
    }

    /**
     * Opens a provider from a URI and options ({@link DynamoDbSettings#fromUri}), with its own SDK client.
     *
     * @param uri {@code dynamodb://<table>?region=...}
     * @param options further options (may hold static credentials)
     * @return the open provider; {@link #close()} closes its client
     * @throws IllegalArgumentException if the URI or an option is malformed or unknown, or no region is found
     * @throws ProviderUnavailableException if DynamoDB cannot be reached
     * @throws WalStorageException if the table is missing (without {@code createTable}) or has another key schema
     */
    public static DynamoDbWalStorageProvider open(URI uri, Map<String, String> options) {
        return open(DynamoDbSettings.fromUri(uri, options));
    }

    /**
     * Opens a provider with its own SDK client (URL connection HTTP client).
     *
     * @param settings the settings
     * @return the open provider; {@link #close()} closes its client
     * @throws IllegalArgumentException if no region is set and the SDK default chain finds none
     * @throws ProviderUnavailableException if DynamoDB cannot be reached
     * @throws WalStorageException if the table is missing (without {@code createTable}) or has another key schema
     */
    public static DynamoDbWalStorageProvider open(DynamoDbSettings settings) {
        Objects.requireNonNull(settings, "settings");
        DynamoDbClient client = buildClient(settings);
        try {
            return openWith(client, true, settings);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * Opens a provider over a client the caller built (its region, endpoint and credentials are used; those of
     * {@code settings} are ignored). The provider never closes it.
     *
     * @param client the SDK client
     * @param settings table, key prefix, table creation and deadlines
     * @return the open provider
     * @throws ProviderUnavailableException if DynamoDB cannot be reached
     * @throws WalStorageException if the table is missing (without {@code createTable}) or has another key schema
     */
    public static DynamoDbWalStorageProvider open(DynamoDbClient client, DynamoDbSettings settings) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(settings, "settings");
        return openWith(client, false, settings);
    }

    private static DynamoDbWalStorageProvider openWith(DynamoDbClient client, boolean owned, DynamoDbSettings s) {
        DynamoDbWalStorageProvider p = new DynamoDbWalStorageProvider(client, owned, s);
        p.ensureTable();
        LOG.debug("opened DynamoDB provider on {}", s);
        return p;
    }

    /**
     * Builds the SDK client of {@link #open(DynamoDbSettings)}.
     *
     * @param s the settings
     * @return a new client; the caller closes it
     * @throws IllegalArgumentException if no region is set and the default chain finds none
     */
    static DynamoDbClient buildClient(DynamoDbSettings s) {
        Region region;
        if (s.region() != null) {
            region = Region.of(s.region());
        } else {
            try {
                region = DefaultAwsRegionProviderChain.builder().build().getRegion();
            } catch (SdkException e) {
                throw new IllegalArgumentException("option 'region' is required: the AWS SDK default region chain "
                        + "(AWS_REGION, profile, instance metadata) found none", e);
            }
        }
        DynamoDbClientBuilder b = DynamoDbClient.builder()
                .region(region)
                .httpClient(UrlConnectionHttpClient.builder().connectionTimeout(s.connectTimeout())
                        .socketTimeout(s.socketTimeout()).build())
                .overrideConfiguration(c -> c.apiCallTimeout(s.apiCallTimeout())
                        .apiCallAttemptTimeout(s.apiCallAttemptTimeout())
                        .retryStrategy(r -> r.maxAttempts(s.maxAttempts())));
        if (s.endpoint() != null) {
            b.endpointOverride(s.endpoint());
        }
        if (s.hasStaticCredentials()) {
            AwsCredentials creds = s.sessionToken() == null
                    ? AwsBasicCredentials.create(s.accessKeyId(), s.secretAccessKey())
                    : AwsSessionCredentials.create(s.accessKeyId(), s.secretAccessKey(), s.sessionToken());
            b.credentialsProvider(StaticCredentialsProvider.create(creds));
        } else {
            b.credentialsProvider(DefaultCredentialsProvider.builder().build());
        }
        return b.build();
    }

    private void ensureTable() {
        String table = settings.table();
        TableDescription t;
        try {
            t = calls.call(null, Operation.TABLE, () -> calls.client().describeTable(b -> b.tableName(table))).table();
        } catch (WalStorageException e) {
            if (!(e.getCause() instanceof ResourceNotFoundException)) {
                throw e;
            }
            if (!settings.createTable()) {
                throw new WalStorageException(null, "DynamoDB table '" + table + "' does not exist; create it with "
                        + "partition key p (S) and sort key s (N), or set option createTable=true", e.getCause());
            }
            t = createTable(table);
        }
        checkKeySchema(t);
    }

    private TableDescription createTable(String table) {
        try {
            calls.call(null, Operation.TABLE, () -> calls.client().createTable(b -> b.tableName(table)
                    .billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(
                            AttributeDefinition.builder().attributeName(Layout.PK)
                                    .attributeType(ScalarAttributeType.S).build(),
                            AttributeDefinition.builder().attributeName(Layout.SK)
                                    .attributeType(ScalarAttributeType.N).build())
                    .keySchema(KeySchemaElement.builder().attributeName(Layout.PK).keyType(KeyType.HASH).build(),
                            KeySchemaElement.builder().attributeName(Layout.SK).keyType(KeyType.RANGE).build())));
            LOG.info("created DynamoDB table {} (on-demand billing)", table);
        } catch (WalStorageException e) {
            if (!(e.getCause() instanceof ResourceInUseException)) {
                throw e;
            }
        }
        long deadline = System.nanoTime() + settings.tableActiveTimeout().toNanos();
        while (true) {
            TableDescription t = calls.call(null, Operation.TABLE,
                    () -> calls.client().describeTable(b -> b.tableName(table))).table();
            if (t.tableStatus() == TableStatus.ACTIVE) {
                return t;
            }
            if (System.nanoTime() > deadline) {
                throw new ProviderUnavailableException(null, "DynamoDB table '" + table + "' is not active after "
                        + settings.tableActiveTimeout().toSeconds() + " s (status " + t.tableStatus() + ")", null);
            }
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ProviderUnavailableException(null, "interrupted while waiting for table '" + table
                        + "' to become active", e);
            }
        }
    }

    private void checkKeySchema(TableDescription t) {
        Map<String, String> types = new HashMap<>();
        for (AttributeDefinition d : t.attributeDefinitions()) {
            types.put(d.attributeName(), d.attributeTypeAsString());
        }
        Map<String, String> keys = new HashMap<>();
        for (KeySchemaElement k : t.keySchema()) {
            keys.put(k.keyTypeAsString(), k.attributeName());
        }
        if (!Layout.PK.equals(keys.get("HASH")) || !Layout.SK.equals(keys.get("RANGE"))
                || !"S".equals(types.get(Layout.PK)) || !"N".equals(types.get(Layout.SK))) {
            throw new WalStorageException(null, "DynamoDB table '" + t.tableName() + "' has key schema " + keys
                    + " " + types + "; the provider needs partition key p (S) and sort key s (N)");
        }
    }

    // ------------------------------------------------------------------------------------------------------------

    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    /** @return the request counters of this instance */
    public DynamoDbMetrics.Snapshot metrics() {
        return metrics.snapshot();
    }

    /** @return the settings this provider was opened with (no secrets in their {@code toString}) */
    public DynamoDbSettings settings() {
        return settings;
    }

    void ensureOpen() {
        SpiChecks.open(closed, NAME);
    }

    DynamoCalls calls() {
        return calls;
    }

    Layout layout() {
        return layout;
    }

    LogSlot slot(LogId log) {
        return slots.computeIfAbsent(log, l -> new LogSlot(l, layout.logKey(l)));
    }

    static Map<String, AttributeValue> headKey(LogSlot slot) {
        return Layout.key(slot.pk, Layout.HEAD_SK);
    }

    /**
     * Reads the head strongly consistently and records it in the slot.
     *
     * @return the head, or null when the log was never claimed
     */
    Head readHead(LogSlot slot) {
        Map<String, AttributeValue> item = calls.get(slot.log, headKey(slot));
        if (item == null) {
            return null;
        }
        Head h = decodeHead(slot.log, item);
        synchronized (slot) {
            slot.install(h);
        }
        return h;
    }

    static Head decodeHead(LogId log, Map<String, AttributeValue> item) {
        try {
            return Head.from(item);
        } catch (RuntimeException e) {
            throw new CorruptLogException(log, -1, "head item cannot be decoded: " + e.getMessage(), e);
        }
    }

    /**
     * Checks a fence against a head.
     *
     * @throws FencedException if a newer epoch was claimed
     * @throws IllegalArgumentException if the fence's epoch was never claimed
     */
    static void checkFence(LogId log, Head h, Fence f) {
        if (h == null) {
            throw new IllegalArgumentException("fence " + f + " was never claimed: the log has no head item");
        }
        if (f.epoch() < h.epoch()) {
            throw new FencedException(log, f.epoch(), h.epoch());
        }
        if (f.epoch() > h.epoch()) {
            throw new IllegalArgumentException("fence " + f + " was never claimed on this table (the log's epoch is "
                    + h.epoch() + ")");
        }
    }

    /**
     * The head to work from for a fence: the known one when it is at least the fence's epoch (a newer one fences at
     * once), else a fresh read.
     */
    Head currentHead(LogSlot slot, Fence fence) {
        Head h;
        synchronized (slot) {
            h = slot.head;
        }
        if (h == null || h.epoch() < fence.epoch()) {
            h = readHead(slot);
        }
        checkFence(slot.log, h, fence);
        return h;
    }

    // ------------------------------------------------------------------------------------------------------------

    @Override
    public Fence claim(LogId log) {
        Objects.requireNonNull(log, "log");
        ensureOpen();
        LogSlot slot = slot(log);
        Map<String, String> names = Map.of("#e", Layout.EPOCH, "#v", Layout.VERSION, "#t", Layout.TAIL,
                "#w", Layout.WATERMARK);
        Map<String, AttributeValue> values = Map.of(":zero", Layout.n(0), ":one", Layout.n(1), ":m1", Layout.n(-1));
        Map<String, AttributeValue> item = calls.update(log, headKey(slot),
                "SET #e = if_not_exists(#e, :zero) + :one, #v = if_not_exists(#v, :zero) + :one, "
                        + "#t = if_not_exists(#t, :m1), #w = if_not_exists(#w, :m1)",
                null, names, values, ReturnValue.ALL_NEW);
        Head h = decodeHead(log, item);
        synchronized (slot) {
            slot.install(h);
            if (h.epoch() > slot.registryEpoch) {
                slot.registryEpoch = h.epoch();
                slot.staged.clear();
            }
        }
        if (!h.registered()) {
            register(log, slot);
        }
        return new Fence(log, h.epoch());
    }

    private void register(LogId log, LogSlot slot) {
        calls.update(log, Layout.key(layout.treeKey(log.tree()), Layout.META_SK), "ADD #ps :p", null,
                Map.of("#ps", Layout.PARTITIONS), Map.of(":p", AttributeValue.fromNs(List.of(
                        Integer.toString(log.partition())))), ReturnValue.NONE);
        calls.update(log, Layout.key(layout.catalogKey(), Layout.META_SK), "ADD #ts :t", null,
                Map.of("#ts", Layout.TREES), Map.of(":t", AttributeValue.fromSs(List.of(log.tree()))),
                ReturnValue.NONE);
        calls.update(log, headKey(slot), "SET #rg = :one", null, Map.of("#rg", Layout.REGISTERED),
                Map.of(":one", Layout.n(1)), ReturnValue.NONE);
    }

    // ------------------------------------------------------------------------------------------------------------

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        SpiChecks.stage(log, fence, batch, LIMITS);
        ensureOpen();
        LogSlot slot = slot(log);
        StagedBatch receipt = StagedBatch.of(fence, batch);
        Head h = currentHead(slot, fence);
        ensureRegistry(slot, fence, h);
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        List<Chunk> chunks = BatchChunks.plan(slot.pk, fence.epoch(), batch);
        Staged mine = null;
        List<Staged> takeOver = new ArrayList<>();
        boolean overCommitted;
        synchronized (slot) {
            Head cur = slot.head != null ? slot.head : h;
            checkFence(log, cur, fence);
            if (slot.registryEpoch != fence.epoch()) {
                throw new ProviderUnavailableException(log, "the staged-batch registry of epoch " + fence.epoch()
                        + " was reset concurrently; retry", null);
            }
            overCommitted = first <= cur.tail() || first <= cur.watermark();
            if (!overCommitted) {
                for (Staged s : slot.overlapping(first, last)) {
                    if (s.sameBatch(first, last, batch.batchId())) {
                        if (s.state == State.STAGED) {
                            return receipt;
                        }
                        if (s.state != State.DIRTY) {
                            throw new ProviderUnavailableException(log, "batch " + s + " is being staged or aborted "
                                    + "by another call; retry", null);
                        }
                        mine = s;
                    } else if (s.state == State.DIRTY) {
                        takeOver.add(s);
                    } else {
                        throw new OffsetConflictException(log, "batch " + first + ".." + last + " (id "
                                + batch.batchId() + ") overlaps staged batch " + s);
                    }
                }
                for (Staged s : takeOver) {
                    slot.staged.remove(s.first, s);
                    s.state = State.CLEANING;
                }
                if (mine == null) {
                    long[] keys = new long[chunks.size()];
                    long payload = 0;
                    long itemBytes = 0;
                    for (int i = 0; i < keys.length; i++) {
                        keys[i] = chunks.get(i).last();
                        payload += chunks.get(i).payloadBytes();
                        itemBytes += chunks.get(i).itemBytes();
                    }
                    mine = new Staged(first, last, batch.batchId(), fence.epoch(), batch.size(), payload, itemBytes,
                            keys, State.IN_FLIGHT);
                    slot.staged.put(first, mine);
                } else {
                    mine.state = State.IN_FLIGHT;
                }
            }
        }
        if (overCommitted) {
            verifyCommitted(slot, fence, batch, h);
            return receipt;
        }
        int cleaned = 0;
        try {
            for (Staged s : takeOver) {
                deleteStagedChunks(slot, s);
                cleaned++;
            }
            for (Chunk c : chunks) {
                putChunk(slot, fence, batch.batchId(), c);
            }
        } catch (RuntimeException e) {
            synchronized (slot) {
                if (slot.staged.get(first) == mine) {
                    if (cleaned < takeOver.size()) {
                        slot.staged.remove(first);
                        for (Staged s : takeOver.subList(cleaned, takeOver.size())) {
                            s.state = State.DIRTY;
                            slot.staged.put(s.first, s);
                        }
                    } else {
                        mine.state = State.DIRTY;
                    }
                }
            }
            throw e;
        }
        synchronized (slot) {
            if (slot.staged.get(first) == mine) {
                mine.state = State.STAGED;
            }
        }
        return receipt;
    }

    private void putChunk(LogSlot slot, Fence fence, BatchId id, Chunk c) {
        Map<String, String> names = Map.of("#p", Layout.PK, "#e", Layout.EPOCH);
        Map<String, AttributeValue> values = Map.of(":e", Layout.n(fence.epoch()));
        for (int attempt = 0; attempt < 3; attempt++) {
            if (calls.put(slot.log, c.item(), "attribute_not_exists(#p) OR #e < :e", names, values)) {
                return;
            }
            Map<String, AttributeValue> existing = calls.get(slot.log, Layout.key(slot.pk, c.last()));
            if (existing == null) {
                continue;
            }
            Stored st = BatchChunks.decode(slot.log, existing, false);
            if (st.epoch() == fence.epoch() && st.batchId().equals(id) && st.first() == c.first()
                    && st.index() == c.index()) {
                return;
            }
            if (st.epoch() > fence.epoch()) {
                throw new FencedException(slot.log, fence.epoch(), st.epoch());
            }
            throw new OffsetConflictException(slot.log, "offset " + c.last() + " holds a chunk of batch "
                    + st.batchFirst() + ".." + st.batchLast() + " (id " + st.batchId() + ") staged under epoch "
                    + st.epoch() + "; two writers use the same fence?");
        }
        throw new ProviderUnavailableException(slot.log, "chunk at offset " + c.last()
                + " kept changing under a conditional put; retry", null);
    }

    /** A batch at or below the tail: success when that very batch is committed there, else a conflict. */
    private void verifyCommitted(LogSlot slot, Fence fence, EncodedBatch batch, Head h) {
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        if (first <= h.watermark() || last > h.tail()) {
            throw new OffsetConflictException(slot.log, "batch " + first + ".." + last + " overlaps committed or "
                    + "trimmed offsets (committed tail " + h.tail() + ", trim watermark " + h.watermark() + ")");
        }
        long expected = first;
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(slot.log, rangeQuery(slot.pk, first, last, start, true, 0)
                    .projectionExpression(METADATA_PROJECTION).expressionAttributeNames(metadataNames()));
            for (Map<String, AttributeValue> item : r.items()) {
                Stored c = BatchChunks.decode(slot.log, item, false);
                if (c.epoch() != h.segments().epochAt(c.first()) || c.last() < expected
                        || (expected == first ? c.first() > expected : c.first() != expected)) {
                    continue;
                }
                if (!c.batchId().equals(batch.batchId()) || c.batchFirst() != first || c.batchLast() != last) {
                    throw new OffsetConflictException(slot.log, "batch " + first + ".." + last + " (id "
                            + batch.batchId() + ") overlaps committed batch " + c.batchFirst() + ".." + c.batchLast()
                            + " (id " + c.batchId() + ")");
                }
                expected = c.last() + 1;
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null && expected <= last);
        if (expected <= last) {
            throw new OffsetConflictException(slot.log, "batch " + first + ".." + last + " overlaps committed offsets "
                    + "that are not that batch (committed tail " + h.tail() + ")");
        }
    }

    /**
     * Makes the slot's registry speak for the fence's epoch: nothing to do after a claim on this instance; else
     * reads the batches staged above the tail under that epoch (one {@code Query} of metadata).
     */
    private void ensureRegistry(LogSlot slot, Fence fence, Head h) {
        synchronized (slot) {
            if (slot.registryEpoch == fence.epoch()) {
                return;
            }
        }
        Map<String, List<Stored>> groups = new LinkedHashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(slot.log, rangeQuery(slot.pk, h.tail() + 1, Long.MAX_VALUE, start, true, 0)
                    .projectionExpression(METADATA_PROJECTION).expressionAttributeNames(metadataNames()));
            for (Map<String, AttributeValue> item : r.items()) {
                Stored c = BatchChunks.decode(slot.log, item, false);
                if (c.epoch() == fence.epoch()) {
                    groups.computeIfAbsent(c.batchFirst() + "/" + c.batchLast() + "/" + c.batchId(),
                            k -> new ArrayList<>()).add(c);
                }
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        List<Staged> found = new ArrayList<>();
        for (List<Stored> g : groups.values()) {
            Stored any = g.get(0);
            long entries = 0;
            long payload = 0;
            long itemBytes = 0;
            long[] keys = new long[g.size()];
            Set<Integer> indexes = new HashSet<>();
            for (int i = 0; i < g.size(); i++) {
                Stored c = g.get(i);
                keys[i] = c.last();
                entries += c.last() - c.first() + 1;
                payload += c.bytesBetween(c.first(), c.last());
                itemBytes += c.itemBytes();
                indexes.add(c.index());
            }
            boolean complete = indexes.size() == any.count() && entries == any.batchLast() - any.batchFirst() + 1;
            found.add(new Staged(any.batchFirst(), any.batchLast(), any.batchId(), fence.epoch(), entries, payload,
                    itemBytes, keys, complete ? State.STAGED : State.DIRTY));
        }
        synchronized (slot) {
            if (slot.registryEpoch == fence.epoch()) {
                return;
            }
            if (slot.head != null && slot.head.epoch() > fence.epoch()) {
                throw new FencedException(slot.log, fence.epoch(), slot.head.epoch());
            }
            slot.registryEpoch = fence.epoch();
            slot.staged.clear();
            for (Staged s : found) {
                if (slot.overlapping(s.first, s.last).isEmpty()) {
                    slot.staged.put(s.first, s);
                }
            }
        }
    }

    /** Deletes a registry entry's chunks, each only while it still holds that batch under that epoch. */
    private void deleteStagedChunks(LogSlot slot, Staged s) {
        Map<String, String> names = Map.of("#b", Layout.BATCH_ID, "#e", Layout.EPOCH);
        Map<String, AttributeValue> values = Map.of(":b", Layout.b(s.id.toBytes()), ":e", Layout.n(s.epoch));
        for (long k : s.chunkKeys) {
            calls.delete(slot.log, Layout.key(slot.pk, k), "#b = :b AND #e = :e", names, values);
        }
    }

    // ------------------------------------------------------------------------------------------------------------

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        SpiChecks.commit(log, fence, throughOffset);
        ensureOpen();
        LogSlot slot = slot(log);
        Head h = currentHead(slot, fence);
        if (throughOffset <= h.tail()) {
            // A no-op, but the fence must still be current: check it against the stored head.
            Head fresh = readHead(slot);
            checkFence(log, fresh, fence);
            if (throughOffset <= fresh.tail()) {
                return;
            }
            h = fresh;
        }
        ensureRegistry(slot, fence, h);
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
            OffsetConflictException conflict;
            synchronized (slot) {
                Head cur = slot.head != null ? slot.head : h;
                checkFence(log, cur, fence);
                if (throughOffset <= cur.tail()) {
                    return;
                }
                List<Staged> chain = new ArrayList<>();
                conflict = commitChain(slot, fence, cur, throughOffset, chain);
                if (conflict == null && tryCommit(slot, fence, cur, throughOffset, chain)) {
                    return;
                }
                slot.head = null;
            }
            // The condition was refused, or the chain is incomplete: a stale fence is reported as such first.
            Head fresh = readHead(slot);
            checkFence(log, fresh, fence);
            if (throughOffset <= fresh.tail()) {
                return;
            }
            if (conflict != null) {
                throw conflict;
            }
        }
        throw new ProviderUnavailableException(log, "the head changed under " + MAX_CAS_ATTEMPTS
                + " commit attempts in a row; retry", null);
    }

    /**
     * Collects the staged batches from the tail + 1 through {@code through}; the caller holds the slot's lock.
     *
     * @return null when they are all staged under the fence's epoch and end exactly at {@code through}, else the
     *     conflict to report
     */
    private static OffsetConflictException commitChain(LogSlot slot, Fence fence, Head cur, long through,
                                                       List<Staged> chain) {
        long pos = cur.tail() + 1;
        while (pos <= through) {
            Staged s = slot.registryEpoch == fence.epoch() ? slot.staged.get(pos) : null;
            if (s == null || s.state != State.STAGED || s.epoch != fence.epoch()) {
                return new OffsetConflictException(slot.log, "cannot commit through " + through + ": offset " + pos
                        + " is not staged under epoch " + fence.epoch() + " (committed tail " + cur.tail() + ")");
            }
            if (s.last > through) {
                return new OffsetConflictException(slot.log, "cannot commit through " + through
                        + ": it falls inside staged batch " + s);
            }
            chain.add(s);
            pos = s.last + 1;
        }
        return null;
    }

    /**
     * The commit point: one conditional head update moving the tail over the chain; the caller holds the slot's
     * lock.
     *
     * @return true when it landed, false when the condition (epoch, version, tail) was refused
     */
    private boolean tryCommit(LogSlot slot, Fence fence, Head cur, long through, List<Staged> chain) {
        long entries = 0;
        long bytes = 0;
        long itemBytes = 0;
        for (Staged s : chain) {
            entries += s.entries;
            bytes += s.payloadBytes;
            itemBytes += s.itemBytes;
        }
        Segments segments = cur.segments().withCommit(cur.tail() + 1, fence.epoch());
        Head next = cur.committed(through, entries, bytes, itemBytes, segments);
        Map<String, String> names = new HashMap<>();
        names.put("#e", Layout.EPOCH);
        names.put("#v", Layout.VERSION);
        names.put("#t", Layout.TAIL);
        names.put("#n", Layout.RETAINED_ENTRIES);
        names.put("#r", Layout.RETAINED_BYTES);
        names.put("#y", Layout.CHUNK_BYTES);
        names.put("#cm", Layout.COMMITS);
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":e", Layout.n(fence.epoch()));
        values.put(":v", Layout.n(cur.version()));
        values.put(":ot", Layout.n(cur.tail()));
        values.put(":nv", Layout.n(next.version()));
        values.put(":t", Layout.n(next.tail()));
        values.put(":dn", Layout.n(entries));
        values.put(":dr", Layout.n(bytes));
        values.put(":dy", Layout.n(itemBytes));
        values.put(":one", Layout.n(1));
        String set = "SET #t = :t, #v = :nv";
        if (segments != cur.segments()) {
            // Only the first commit of an epoch writes the segments; a concurrent trim may prune them meanwhile,
            // and writing back the unpruned ones it pruned is harmless (they cover offsets below the watermark).
            names.put("#g", Layout.SEGMENTS);
            values.put(":g", Layout.b(segments.encode()));
            set += ", #g = :g";
        }
        Map<String, AttributeValue> done;
        try {
            // Counters by ADD: a trim subtracts from them without raising the version (it does not conflict).
            done = calls.update(slot.log, headKey(slot), set + " ADD #n :dn, #r :dr, #y :dy, #cm :one",
                    "#e = :e AND #v = :v AND #t = :ot", names, values, ReturnValue.NONE);
        } catch (RuntimeException e) {
            slot.head = null;
            throw e;
        }
        if (done == null) {
            return false;
        }
        slot.install(next);
        for (Staged s : chain) {
            slot.staged.remove(s.first, s);
        }
        return true;
    }

    // ------------------------------------------------------------------------------------------------------------

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        SpiChecks.abort(log, fence, staged);
        ensureOpen();
        LogSlot slot = slot(log);
        Head h = currentHead(slot, fence);
        Staged target = null;
        synchronized (slot) {
            if (slot.registryEpoch == fence.epoch()) {
                Staged s = slot.staged.get(staged.firstOffset());
                if (s != null && s.epoch == staged.epoch()
                        && s.sameBatch(staged.firstOffset(), staged.lastOffset(), staged.batchId())) {
                    if (s.state != State.STAGED && s.state != State.DIRTY) {
                        return;
                    }
                    s.state = State.CLEANING;
                    target = s;
                } else if (s != null || !slot.overlapping(staged.firstOffset(), staged.lastOffset()).isEmpty()) {
                    return;
                }
            }
        }
        if (target != null) {
            try {
                deleteStagedChunks(slot, target);
            } catch (RuntimeException e) {
                synchronized (slot) {
                    target.state = State.DIRTY;
                }
                throw e;
            }
            synchronized (slot) {
                slot.staged.remove(target.first, target);
            }
            return;
        }
        if (staged.firstOffset() <= h.tail()) {
            return;
        }
        // Not known here: delete whatever chunks of that batch and epoch lie in its range.
        Map<String, String> names = Map.of("#b", Layout.BATCH_ID, "#e", Layout.EPOCH);
        Map<String, AttributeValue> values = Map.of(":b", Layout.b(staged.batchId().toBytes()),
                ":e", Layout.n(staged.epoch()));
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(log, rangeQuery(slot.pk, staged.firstOffset(), staged.lastOffset(), start,
                    true, 0).projectionExpression("#p, #s, #e2, #b2")
                    .expressionAttributeNames(Map.of("#p", Layout.PK, "#s", Layout.SK, "#e2", Layout.EPOCH,
                            "#b2", Layout.BATCH_ID)));
            for (Map<String, AttributeValue> item : r.items()) {
                if (Layout.num(item, Layout.EPOCH) == staged.epoch()
                        && BatchId.fromBytes(Layout.bin(item, Layout.BATCH_ID)).equals(staged.batchId())) {
                    calls.delete(log, Layout.key(slot.pk, Layout.num(item, Layout.SK)), "#b = :b AND #e = :e",
                            names, values);
                }
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
    }

    // ------------------------------------------------------------------------------------------------------------

    /**
     * A {@code Query} of a log partition's sort keys {@code lo..hi}, ascending.
     *
     * @param callerNames when true the caller sets the expression attribute names (which must map {@code #p} and
     *     {@code #s}), usually with a projection
     * @param limit items per page, 0 for none (the 1 MB page cap applies)
     */
    static QueryRequest.Builder rangeQuery(String pk, long lo, long hi, Map<String, AttributeValue> start,
                                           boolean callerNames, int limit) {
        QueryRequest.Builder q = QueryRequest.builder()
                .keyConditionExpression("#p = :p AND #s BETWEEN :lo AND :hi")
                .expressionAttributeValues(Map.of(":p", Layout.s(pk), ":lo", Layout.n(lo), ":hi", Layout.n(hi)))
                .scanIndexForward(true);
        if (!callerNames) {
            q.expressionAttributeNames(Map.of("#p", Layout.PK, "#s", Layout.SK));
        }
        if (start != null) {
            q.exclusiveStartKey(start);
        }
        if (limit > 0) {
            q.limit(limit);
        }
        return q;
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        ensureOpen();
        String pk = layout.logKey(log);
        for (int attempt = 0; ; attempt++) {
            Map<String, AttributeValue> item = calls.get(log, Layout.key(pk, Layout.HEAD_SK));
            if (item == null) {
                return new ReadPage(List.of(), -1);
            }
            Head h = decodeHead(log, item);
            long bound = Math.max(fromExclusive, h.watermark());
            if (bound >= h.tail()) {
                return new ReadPage(List.of(), h.tail());
            }
            List<LogEntry> out = readRange(log, pk, h, bound + 1, maxEntries, maxBytes);
            if (out != null) {
                return new ReadPage(out, h.tail());
            }
            if (attempt >= 3) {
                throw new CorruptLogException(log, bound + 1, "committed chunks between offset " + (bound + 1)
                        + " and the tail " + h.tail() + " are missing");
            }
            // A chunk was missing: a concurrent trim may have deleted it; read the head again.
        }
    }

    /**
     * Reads committed entries from {@code start} (inclusive) up to the head's tail.
     *
     * @return the entries, or null when a committed chunk was missing
     */
    private List<LogEntry> readRange(LogId log, String pk, Head h, long start, int maxEntries, long maxBytes) {
        List<LogEntry> out = new ArrayList<>();
        long bytes = 0;
        long expected = start;
        Map<String, AttributeValue> startKey = null;
        int limit = queryLimit(maxEntries, maxBytes);
        while (true) {
            QueryResponse r = calls.query(log, rangeQuery(pk, start, h.tail(), startKey, false, limit));
            for (Map<String, AttributeValue> item : r.items()) {
                long k = Layout.num(item, Layout.CHUNK_FIRST);
                long s = Layout.num(item, Layout.SK);
                long e = Layout.num(item, Layout.EPOCH);
                if (e != h.segments().epochAt(k) || s < expected
                        || (expected == start ? k > expected : k != expected)) {
                    continue;
                }
                Stored c = BatchChunks.decode(log, item, true);
                int idx = (int) (expected - k);
                int pos = 0;
                for (int i = 0; i < idx; i++) {
                    pos += c.lengths()[i];
                }
                for (long o = expected; o <= s; o++, idx++) {
                    int len = c.lengths()[idx];
                    if (out.size() >= maxEntries || (!out.isEmpty() && bytes + len > maxBytes)) {
                        return out;
                    }
                    byte[] p = new byte[len];
                    System.arraycopy(c.data(), pos, p, 0, len);
                    pos += len;
                    out.add(new LogEntry(o, p));
                    bytes += len;
                }
                expected = s + 1;
                if (expected > h.tail()) {
                    return out;
                }
            }
            if (!r.hasLastEvaluatedKey() || r.lastEvaluatedKey().isEmpty()) {
                return null;
            }
            startKey = r.lastEvaluatedKey();
        }
    }

    /**
     * Items per {@code Query} page of a read: a page never needs more items than the caller's entry limit (an item
     * holds at least one entry) nor more than one item per allowed payload byte plus one; above 1,000 the 1 MB page
     * cap is the tighter bound and no limit is set.
     */
    static int queryLimit(int maxEntries, long maxBytes) {
        long limit = Math.min(maxEntries, maxBytes >= Integer.MAX_VALUE ? Integer.MAX_VALUE : maxBytes + 1);
        return limit >= 1000 ? 0 : (int) Math.max(2, limit);
    }

    @Override
    public LogState state(LogId log) {
        Objects.requireNonNull(log, "log");
        ensureOpen();
        LogSlot slot = slot(log);
        Head h = readHead(slot);
        return h == null ? LogState.EMPTY : h.toState();
    }

    // ------------------------------------------------------------------------------------------------------------

    /** What a trim removes, found before its head update. */
    private record TrimPlan(long entries, long payloadBytes, long itemBytes, List<Map<String, AttributeValue>> keys) {
    }

    /**
     * {@inheritDoc}
     *
     * <p>One conditional head update, then the deletes. A trim within the committed tail (the engine's case) sets
     * the watermark and subtracts the counters with {@code ADD}, conditioned only on what it depends on: the epoch,
     * the watermark it planned from, a tail at or above the new watermark and, when it prunes commit segments, the
     * segments it pruned. It never raises the version and never writes the tail, so commits, which condition on the
     * version and the tail, never refuse it nor are refused by it. A trim beyond the tail also moves the tail, so it
     * conditions on the version and the tail like a commit and raises the version: it and a concurrent commit under
     * the same fence are serialised, and the loser re-reads the head.
     */
    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        SpiChecks.trim(log, fence, throughInclusive);
        ensureOpen();
        LogSlot slot = slot(log);
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
            Head h = readHead(slot);
            checkFence(log, h, fence);
            if (throughInclusive <= h.watermark()) {
                return;
            }
            TrimPlan plan = planTrim(log, slot.pk, h, throughInclusive);
            if (plan == null) {
                if (attempt >= 3) {
                    throw new CorruptLogException(log, h.watermark() + 1, "committed chunks between the trim "
                            + "watermark " + h.watermark() + " and offset " + throughInclusive + " are missing");
                }
                continue;
            }
            boolean beyondTail = throughInclusive > h.tail();
            Segments segments = h.segments().prunedThrough(throughInclusive);
            Map<String, String> names = new HashMap<>();
            names.put("#e", Layout.EPOCH);
            names.put("#t", Layout.TAIL);
            names.put("#w", Layout.WATERMARK);
            names.put("#n", Layout.RETAINED_ENTRIES);
            names.put("#r", Layout.RETAINED_BYTES);
            names.put("#y", Layout.CHUNK_BYTES);
            names.put("#tm", Layout.TRIMS);
            Map<String, AttributeValue> values = new HashMap<>();
            values.put(":e", Layout.n(fence.epoch()));
            values.put(":ow", Layout.n(h.watermark()));
            values.put(":w", Layout.n(throughInclusive));
            values.put(":dn", Layout.n(-plan.entries()));
            values.put(":dr", Layout.n(-plan.payloadBytes()));
            values.put(":dy", Layout.n(-plan.itemBytes()));
            values.put(":one", Layout.n(1));
            StringBuilder set = new StringBuilder("SET #w = :w");
            StringBuilder condition = new StringBuilder("#e = :e AND #w = :ow");
            if (beyondTail) {
                names.put("#v", Layout.VERSION);
                values.put(":v", Layout.n(h.version()));
                values.put(":nv", Layout.n(h.version() + 1));
                values.put(":ot", Layout.n(h.tail()));
                set.append(", #t = :w, #v = :nv");
                condition.append(" AND #v = :v AND #t = :ot");
            } else {
                condition.append(" AND #t >= :w");
            }
            if (segments != h.segments()) {
                names.put("#g", Layout.SEGMENTS);
                values.put(":g", Layout.b(segments.encode()));
                values.put(":og", Layout.b(h.segments().encode()));
                set.append(", #g = :g");
                condition.append(" AND #g = :og");
            }
            String update = set + " ADD #n :dn, #r :dr, #y :dy, #tm :one";
            Head next = h.trimmed(throughInclusive, beyondTail, plan.entries(), plan.payloadBytes(), plan.itemBytes(),
                    segments);
            List<Staged> dropped = new ArrayList<>();
            synchronized (slot) {
                Map<String, AttributeValue> done;
                try {
                    done = calls.update(log, headKey(slot), update, condition.toString(), names, values,
                            ReturnValue.NONE);
                } catch (RuntimeException e) {
                    slot.head = null;
                    throw e;
                }
                if (done == null) {
                    continue;
                }
                if (slot.registryEpoch == fence.epoch()) {
                    for (Staged s : new ArrayList<>(slot.staged.headMap(throughInclusive, true).values())) {
                        slot.staged.remove(s.first, s);
                        dropped.add(s);
                    }
                }
                slot.install(next);
            }
            calls.batchDelete(log, plan.keys());
            for (Staged s : dropped) {
                deleteStagedChunks(slot, s);
            }
            return;
        }
        throw new ProviderUnavailableException(log, "the head changed under " + MAX_CAS_ATTEMPTS
                + " trim attempts in a row; retry", null);
    }

    private static Map<String, String> metadataNames() {
        Map<String, String> names = new HashMap<>();
        names.put("#p", Layout.PK);
        names.put("#s", Layout.SK);
        names.put("#k", Layout.CHUNK_FIRST);
        names.put("#e", Layout.EPOCH);
        names.put("#b", Layout.BATCH_ID);
        names.put("#f", Layout.BATCH_FIRST);
        names.put("#l", Layout.BATCH_LAST);
        names.put("#i", Layout.CHUNK_INDEX);
        names.put("#c", Layout.CHUNK_COUNT);
        names.put("#z", Layout.LENGTHS);
        names.put("#x", Layout.CRC);
        return names;
    }

    static final String METADATA_PROJECTION = "#p, #s, #k, #e, #b, #f, #l, #i, #c, #z, #x";

    /**
     * Finds what a trim through {@code through} drops: every item at or below it (to delete) and the committed
     * entries, payload bytes and item bytes leaving the counters.
     *
     * @return the plan, or null when a committed chunk was missing (a concurrent trim)
     */
    private TrimPlan planTrim(LogId log, String pk, Head h, long through) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        long countTo = Math.min(through, h.tail());
        long expected = h.watermark() + 1;
        long first = expected;
        long entries = 0;
        long bytes = 0;
        long itemBytes = 0;
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(log, rangeQuery(pk, 0, through, start, true, 0)
                    .projectionExpression(METADATA_PROJECTION).expressionAttributeNames(metadataNames()));
            for (Map<String, AttributeValue> item : r.items()) {
                keys.add(Layout.key(pk, Layout.num(item, Layout.SK)));
                if (expected > countTo) {
                    continue;
                }
                long k = Layout.num(item, Layout.CHUNK_FIRST);
                long s = Layout.num(item, Layout.SK);
                if (Layout.num(item, Layout.EPOCH) != h.segments().epochAt(k) || s < expected
                        || (expected == first ? k > expected : k != expected)) {
                    continue;
                }
                Stored c = BatchChunks.decode(log, item, false);
                entries += s - expected + 1;
                bytes += c.bytesBetween(expected, s);
                itemBytes += c.itemBytes();
                expected = s + 1;
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        if (expected <= countTo) {
            // The chunk holding offset `expected` straddles the new watermark: it stays, its leading entries go.
            Map<String, AttributeValue> s2 = null;
            boolean found = false;
            do {
                QueryResponse r = calls.query(log, rangeQuery(pk, through + 1, h.tail(), s2, true, 4)
                        .projectionExpression(METADATA_PROJECTION).expressionAttributeNames(metadataNames()));
                for (Map<String, AttributeValue> item : r.items()) {
                    long k = Layout.num(item, Layout.CHUNK_FIRST);
                    if (Layout.num(item, Layout.EPOCH) != h.segments().epochAt(k)
                            || (expected == first ? k > expected : k != expected)) {
                        continue;
                    }
                    Stored c = BatchChunks.decode(log, item, false);
                    entries += countTo - expected + 1;
                    bytes += c.bytesBetween(expected, countTo);
                    found = true;
                    break;
                }
                s2 = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
            } while (!found && s2 != null);
            if (!found) {
                return null;
            }
        }
        return new TrimPlan(entries, bytes, itemBytes, keys);
    }

    // ------------------------------------------------------------------------------------------------------------

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        ensureOpen();
        LogSlot slot = slot(log);
        Head h = readHead(slot);
        checkFence(log, h, fence);
        synchronized (slot) {
            if (slot.head != null && slot.head.epoch() > fence.epoch()) {
                throw new FencedException(log, fence.epoch(), slot.head.epoch());
            }
            slot.registryEpoch = fence.epoch();
            slot.staged.clear();
        }
        // Everything above the tail: staged batches of any epoch up to ours (newer writers' items stay).
        Set<String> batches = new HashSet<>();
        Map<String, String> delNames = Map.of("#e", Layout.EPOCH);
        Map<String, AttributeValue> delValues = Map.of(":e", Layout.n(fence.epoch()));
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(log, rangeQuery(slot.pk, h.tail() + 1, Long.MAX_VALUE, start, true, 0)
                    .projectionExpression("#p, #s, #e, #b")
                    .expressionAttributeNames(Map.of("#p", Layout.PK, "#s", Layout.SK, "#e", Layout.EPOCH,
                            "#b", Layout.BATCH_ID)));
            for (Map<String, AttributeValue> item : r.items()) {
                long e = Layout.num(item, Layout.EPOCH, Long.MAX_VALUE);
                if (e <= fence.epoch() && calls.delete(log, Layout.key(slot.pk, Layout.num(item, Layout.SK)),
                        "#e <= :e", delNames, delValues)) {
                    batches.add(e + "/" + BatchId.fromBytes(Layout.bin(item, Layout.BATCH_ID)));
                }
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        long leftovers = 0;
        if (h.watermark() >= 0) {
            leftovers += deleteAllBetween(log, slot.pk, 0, h.watermark());
        }
        leftovers += checkpoints.collectGarbage(log, slot, h);
        return new ReconcileResult(h.tail(), batches.size(), 0, leftovers);
    }

    /** Deletes every item of a partition with a sort key in {@code lo..hi}; returns how many. */
    long deleteAllBetween(LogId log, String pk, long lo, long hi) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = calls.query(log, rangeQuery(pk, lo, hi, start, true, 0)
                    .projectionExpression("#p, #s").expressionAttributeNames(Map.of("#p", Layout.PK,
                            "#s", Layout.SK)));
            for (Map<String, AttributeValue> item : r.items()) {
                keys.add(Layout.key(pk, Layout.num(item, Layout.SK)));
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        calls.batchDelete(log, keys);
        return keys.size();
    }

    // ------------------------------------------------------------------------------------------------------------

    @Override
    public CheckpointStore checkpoints() {
        ensureOpen();
        return checkpoints;
    }

    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        ensureOpen();
        Map<String, AttributeValue> item = calls.get(null, Layout.key(layout.treeKey(tree), Layout.META_SK));
        List<LogId> out = new ArrayList<>();
        if (item != null && item.get(Layout.PARTITIONS) != null && item.get(Layout.PARTITIONS).hasNs()) {
            TreeSet<Integer> partitions = new TreeSet<>();
            for (String n : item.get(Layout.PARTITIONS).ns()) {
                partitions.add(Integer.parseInt(n));
            }
            for (int p : partitions) {
                out.add(new LogId(tree, p));
            }
        }
        return out;
    }

    @Override
    public List<String> trees() {
        ensureOpen();
        Map<String, AttributeValue> item = calls.get(null, Layout.key(layout.catalogKey(), Layout.META_SK));
        if (item == null || item.get(Layout.TREES) == null || !item.get(Layout.TREES).hasSs()) {
            return List.of();
        }
        return new ArrayList<>(new TreeSet<>(item.get(Layout.TREES).ss()));
    }

    /**
     * Closes the provider; closes the SDK client only when the provider built it. Logs the request counters at
     * debug level. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        LOG.debug("closing DynamoDB provider on table {}: {}", settings.table(), metrics.snapshot());
        if (ownedClient != null) {
            ownedClient.close();
        }
    }

    @Override
    public String toString() {
        return "DynamoDbWalStorageProvider[" + settings + "]";
    }
}
