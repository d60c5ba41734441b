package dev.lattice.provider.dynamodb;

import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The Lattice WAL provider on Amazon DynamoDB (and DynamoDB-compatible servers), built on single-item conditional
 * writes only: no transactions, so it runs on every compatible server. The table layout and the protocol of each
 * call are described in {@code docs/providers/dynamodb.md}; this class is a facade over one class per protocol part:
 * {@link Heads} (head item, fences), {@link Claims}, {@link Staging} (stage, abort), {@link Commits}, {@link Reads},
 * {@link Trims}, {@link Reconciler}, {@link DynamoDbCheckpointStore}, {@link DynamoDbRunStore}, with every request
 * going through {@link DynamoCalls}.
 *
 * <h2>Limits</h2>
 * {@link #LIMITS}: entries up to {@value BatchChunks#MAX_ENTRY_BYTES} bytes (one item minus 1 KiB of overhead),
 * batches up to 4 MiB and 100,000 entries, checkpoints up to 64 MiB.
 *
 * <h2>Failures</h2>
 * Throttling ({@code ProvisionedThroughputExceededException}, {@code RequestLimitExceeded}, {@code Throttling}), 5xx
 * responses, I/O errors and timeouts: {@link ProviderUnavailableException} after the SDK's own retries
 * ({@code maxAttempts}); a refused head condition: {@link FencedException} when the epoch moved; a conflicting
 * offset: {@link OffsetConflictException}; a chunk failing its CRC32C: {@link CorruptLogException}; anything else:
 * {@link WalStorageException}. Secrets never appear in messages.
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

    /** Head updates tried in a row before a call gives up with {@link ProviderUnavailableException}. */
    static final int MAX_CAS_ATTEMPTS = 16;

    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbWalStorageProvider.class);

    private final DynamoCalls calls;
    private final DynamoDbMetrics metrics;
    private final DynamoDbClient ownedClient;
    private final DynamoDbSettings settings;
    private final ProviderDescriptor descriptor;
    private final Heads heads;
    private final Claims claims;
    private final Staging staging;
    private final Commits commits;
    private final Reads reads;
    private final Trims trims;
    private final Reconciler reconciler;
    private final DynamoDbCheckpointStore checkpoints;
    private final DynamoDbRunStore runs;
    private final LogDrop drops;

    private DynamoDbWalStorageProvider(DynamoDbClient client, boolean owned, DynamoDbSettings settings) {
        this.settings = settings;
        this.metrics = new DynamoDbMetrics();
        this.calls = new DynamoCalls(client, settings.table(), metrics, settings.batchWriteDeadline());
        this.heads = new Heads(calls, new Layout(settings.keyPrefix()));
        this.ownedClient = owned ? client : null;
        this.descriptor = new ProviderDescriptor(NAME, "1", LIMITS, DurabilityLevel.REPLICATED,
                Set.of(ProviderFeature.CONCURRENT_STAGE, ProviderFeature.PHYSICAL_BYTES, ProviderFeature.PERSISTENT,
                        ProviderFeature.RUNS, ProviderFeature.DROP));
        this.claims = new Claims(heads);

        this.staging = new Staging(heads);
        this.commits = new Commits(heads, staging);
        this.reads = new Reads(heads);
        this.trims = new Trims(heads, staging);
        this.checkpoints = new DynamoDbCheckpointStore(heads);
        this.reconciler = new Reconciler(heads, checkpoints);
        this.runs = new DynamoDbRunStore(heads, metrics, settings.runChunkBytes(), settings.runCacheBytes());
        this.drops = new LogDrop(heads, runs);
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
        long start = System.nanoTime();
        try {
            TableSetup.ensureTable(p.calls, s);
        } catch (RuntimeException e) {
            if (ConnectFailures.isUnreachable(e)) {
                throw ConnectFailures.couldNotConnect("DynamoDB at " + (s.endpoint() != null ? s.endpoint()
                        : "region " + s.region()) + " (table '" + s.table() + "')",
                        (System.nanoTime() - start) / 1_000_000, "connectTimeout " + s.connectTimeout().toMillis()
                        + " ms, apiCallTimeout " + s.apiCallTimeout().toMillis() + " ms", e);
            }
            throw e;
        }
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
        return TableSetup.buildClient(s);
    }

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

    /** @return the key layout (tests read the table's items directly) */
    Layout layout() {
        return heads.layout();
    }

    @Override
    public Fence claim(LogId log) {
        return claims.claim(log);
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        return staging.stage(log, fence, batch);
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        commits.commit(log, fence, throughOffset);
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        staging.abort(log, fence, staged);
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        return reads.read(log, fromExclusive, maxEntries, maxBytes);
    }

    @Override
    public LogState state(LogId log) {
        return reads.state(log);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One conditional head update, then the deletes; a trim within the committed tail never competes with
     * commits (see {@link Trims} and docs/providers/dynamodb.md, Protocol: trim).
     */
    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        trims.trim(log, fence, throughInclusive);
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        return reconciler.reconcile(log, fence);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Deletes runs, checkpoint chunks, batch chunks, then the head, then the log's registration ({@link LogDrop},
     * docs/providers/dynamodb.md, Protocol: drop).
     */
    @Override
    public void drop(LogId log, Fence fence) {
        drops.drop(log, fence);
    }

    @Override
    public CheckpointStore checkpoints() {
        heads.ensureOpen();
        return checkpoints;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Runs are chunk items under the 400 KB item limit made visible by a header item written last
     * ({@link DynamoDbRunStore}, docs/providers/dynamodb.md, "Runs").
     */
    @Override
    public RunStore runs() {
        heads.ensureOpen();
        return runs;
    }

    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        heads.ensureOpen();
        Map<String, AttributeValue> item = calls.get(null, Layout.key(heads.layout().treeKey(tree), Layout.META_SK));
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
        heads.ensureOpen();
        Map<String, AttributeValue> item = calls.get(null, Layout.key(heads.layout().catalogKey(), Layout.META_SK));
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
        if (!heads.close()) {
            return;
        }
        runs.closeCache();
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
